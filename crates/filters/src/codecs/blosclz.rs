//! BloscLZ decoder (blosc's default internal codec, an LZ77 format derived from FastLZ
//! level 2). Written from the format description: a first control byte whose low 5 bits
//! are a literal run length - 1; then control bytes where values < 32 start a literal run
//! of `ctrl + 1` bytes and values >= 32 a match of length `(ctrl >> 5) + 2` (7 means more
//! length bytes follow, each added, until one is not 255), at distance
//! `((ctrl & 31) << 8) + next + 1`, or `16-bit + 8191 + 1` when that byte is 255 and the
//! high bits are all ones.

const MAX_DISTANCE: usize = 8191;

/// Decode `input` into `out`, which must be exactly filled. Returns None on corrupt input.
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut ip = 0usize;
    let mut op = 0usize;
    let first = *input.first()?;
    let mut ctrl = usize::from(first & 31);
    ip += 1;
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let mut ofs = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    let code = *input.get(ip)?;
                    ip += 1;
                    len += usize::from(code);
                    if code != 255 {
                        break;
                    }
                }
            }
            let code = usize::from(*input.get(ip)?);
            ip += 1;
            len += 3;
            let mut dist = ofs + code + 1;
            if code == 255 && ofs == (31 << 8) {
                let hi = usize::from(*input.get(ip)?);
                let lo = usize::from(*input.get(ip + 1)?);
                ip += 2;
                ofs = (hi << 8) + lo;
                dist = ofs + MAX_DISTANCE + 1;
            }
            if op.checked_add(len)? > out.len() || dist > op {
                return None;
            }
            let start = op - dist;
            if dist == 1 {
                let b = out[start];
                out[op..op + len].fill(b);
            } else if dist >= len {
                out.copy_within(start..start + len, op);
            } else {
                for k in 0..len {
                    out[op + k] = out[start + k];
                }
            }
            op += len;
        } else {
            let run = ctrl + 1;
            if op.checked_add(run)? > out.len() || ip.checked_add(run)? > input.len() {
                return None;
            }
            out[op..op + run].copy_from_slice(&input[ip..ip + run]);
            op += run;
            ip += run;
        }
        if ip >= input.len() {
            break;
        }
        ctrl = usize::from(input[ip]);
        ip += 1;
    }
    Some(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_then_run() {
        // literal run of 3 "abc", then a match of length 5 at distance 1 (repeat 'c'),
        // then literal "z"
        // match ctrl: len field (5-2)=3 -> (3 << 5) | 0, code = 0 -> dist 1
        let input = [2u8, b'a', b'b', b'c', 3 << 5, 0, 0, b'z'];
        let mut out = [0u8; 9];
        assert_eq!(decompress(&input, &mut out), Some(9));
        assert_eq!(&out, b"abccccccz");
    }

    #[test]
    fn corrupt_distance_rejected() {
        let input = [0u8, b'a', 3 << 5, 5];
        let mut out = [0u8; 16];
        assert_eq!(decompress(&input, &mut out), None);
    }
}
