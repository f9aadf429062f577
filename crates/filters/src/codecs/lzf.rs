//! LZF, HDF5 filter 32000 (registered by h5py, which ships it: `compression="lzf"`). The chunk
//! is one LZF block with no header. Parameters, as h5py's filter fills them in: filter
//! version (4), LZF library version (0x0105) and the chunk's size in bytes (0 or missing:
//! unknown).
//!
//! The block is a sequence of items, each starting with a control byte `c`:
//! - `c < 32`: `c + 1` literal bytes follow;
//! - otherwise a copy of earlier output: length `(c >> 5) + 2`, or when `c >> 5` is 7 one more
//!   byte is added to the length; then one byte `o`; the copy starts `((c & 31) << 8) + o + 1`
//!   bytes back (at most 8192) and may overlap what it writes.
//!
//! The encoder here is a greedy one over a hash of three-byte prefixes; its output is a valid
//! LZF block whatever the input (incompressible data grows by one byte in 32).

use super::{bad_params, corrupt};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

const ID: u32 = 32000;
const NAME: &str = "lzf";
/// h5py's filter version and the LZF library version, the first two parameters it stores.
const FILTER_VERSION: u32 = 4;
const LZF_VERSION: u32 = 0x0105;

const MAX_LITERAL: usize = 32;
const MAX_OFFSET: usize = 1 << 13;
const MAX_MATCH: usize = 7 + 255 + 2;
const HASH_BITS: u32 = 14;

pub(crate) struct Lzf {
    /// Decoded size limit: the chunk size when known, else the context's bound.
    limit: usize,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    if params.len() > 3 {
        return Err(bad_params(
            ID,
            NAME,
            params,
            "at most 3 parameters (filter version, LZF version, chunk bytes)",
        ));
    }
    let limit = match params.get(2) {
        Some(&n) if n > 0 => (n as usize).min(ctx.max_decoded),
        _ => ctx.max_decoded,
    };
    Ok(Box::new(Lzf { limit }))
}

/// The parameters h5py stores: versions, then the chunk's size in bytes when known.
pub(crate) fn working(_visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
    let bytes = ctx
        .chunk_bytes()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    vec![FILTER_VERSION, LZF_VERSION, bytes]
}

impl Filter for Lzf {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        compress(chunk, out);
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        decompress(chunk, out, self.limit)
    }
}

fn decompress(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), FilterError> {
    out.clear();
    let mut ip = 0usize;
    let over = |n: usize| corrupt(ID, NAME, format!("decodes to more than {n} bytes"));
    while ip < input.len() {
        let c = usize::from(input[ip]);
        ip += 1;
        if c < MAX_LITERAL {
            let n = c + 1;
            let lit = input.get(ip..ip + n).ok_or_else(|| {
                corrupt(
                    ID,
                    NAME,
                    format!(
                        "a literal run of {n} bytes at byte {} runs past the end",
                        ip - 1
                    ),
                )
            })?;
            if out.len() + n > limit {
                return Err(over(limit));
            }
            out.extend_from_slice(lit);
            ip += n;
        } else {
            let at = ip - 1;
            let mut len = c >> 5;
            let truncated = || corrupt(ID, NAME, format!("a back reference at byte {at} is cut"));
            if len == 7 {
                len += usize::from(*input.get(ip).ok_or_else(truncated)?);
                ip += 1;
            }
            let o = usize::from(*input.get(ip).ok_or_else(truncated)?);
            ip += 1;
            let back = ((c & 0x1f) << 8) + o + 1;
            let len = len + 2;
            if back > out.len() {
                return Err(corrupt(
                    ID,
                    NAME,
                    format!(
                        "a back reference at byte {at} points {back} bytes back, before the start"
                    ),
                ));
            }
            if out.len() + len > limit {
                return Err(over(limit));
            }
            let from = out.len() - back;
            for k in 0..len {
                let b = out[from + k];
                out.push(b);
            }
        }
    }
    Ok(())
}

fn hash(b: &[u8]) -> usize {
    let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

fn flush_literals(input: &[u8], start: usize, end: usize, out: &mut Vec<u8>) {
    let mut s = start;
    while s < end {
        let n = (end - s).min(MAX_LITERAL);
        out.push((n - 1) as u8);
        out.extend_from_slice(&input[s..s + n]);
        s += n;
    }
}

fn compress(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(input.len() + input.len() / MAX_LITERAL + 1);
    let n = input.len();
    // position + 1 of the last place each hash was seen (0: never)
    let mut table = vec![0usize; 1 << HASH_BITS];
    let mut lit_start = 0usize;
    let mut i = 0usize;
    while i + 2 < n {
        let h = hash(&input[i..i + 3]);
        let cand = table[h];
        table[h] = i + 1;
        if cand > 0 {
            let c = cand - 1;
            let back = i - c;
            if back <= MAX_OFFSET && input[c..c + 3] == input[i..i + 3] {
                let max = MAX_MATCH.min(n - i);
                let mut len = 3;
                while len < max && input[c + len] == input[i + len] {
                    len += 1;
                }
                flush_literals(input, lit_start, i, out);
                let off = back - 1;
                let l = len - 2;
                if l < 7 {
                    out.push(((l << 5) | (off >> 8)) as u8);
                } else {
                    out.push(((7 << 5) | (off >> 8)) as u8);
                    out.push((l - 7) as u8);
                }
                out.push((off & 0xff) as u8);
                // remember the positions inside the match too (better later matches)
                for k in i + 1..(i + len).min(n.saturating_sub(2)) {
                    table[hash(&input[k..k + 3])] = k + 1;
                }
                i += len;
                lit_start = i;
                continue;
            }
        }
        i += 1;
    }
    flush_literals(input, lit_start, n, out);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    fn round_trip(data: &[u8]) -> usize {
        let mut enc = Vec::new();
        compress(data, &mut enc);
        let mut dec = Vec::new();
        decompress(&enc, &mut dec, data.len()).unwrap();
        assert_eq!(dec, data);
        enc.len()
    }

    #[test]
    fn blocks_round_trip() {
        assert_eq!(round_trip(b""), 0);
        round_trip(b"a");
        round_trip(b"ab");
        round_trip(b"abcabcabcabcabcabc");
        // long runs: overlapping copies and lengths past 9 (the extra length byte)
        let zeros = vec![0u8; 100_000];
        // 264 bytes per 3-byte copy at most
        assert!(round_trip(&zeros) <= 100_000usize.div_ceil(264) * 3 + 4);
        let mut x = 0x1234_5678u32;
        let noise: Vec<u8> = (0..70_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        // incompressible: at most one control byte per 32 literals
        let n = round_trip(&noise);
        assert!(n > 69_000 && n <= 70_000 + 70_000usize.div_ceil(32), "{n}");
        let ramp: Vec<u8> = (0..50_000u32).flat_map(|k| (k / 7).to_le_bytes()).collect();
        assert!(round_trip(&ramp) < ramp.len() / 3);
    }

    #[test]
    fn known_block_decodes() {
        // "abc" literal, then a copy of 6 bytes from 3 back: "abcabcabc"
        let block = [2, b'a', b'b', b'c', (4 << 5), 2];
        let mut out = Vec::new();
        decompress(&block, &mut out, 100).unwrap();
        assert_eq!(out, b"abcabcabc");
    }

    #[test]
    fn corrupt_blocks_are_errors() {
        let mut out = Vec::new();
        let e = decompress(&[5, b'a'], &mut out, 100)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("literal run of 6 bytes at byte 0 runs past the end"),
            "{e}"
        );
        let e = decompress(&[0, b'a', 0x20, 5], &mut out, 100)
            .unwrap_err()
            .to_string();
        assert!(e.contains("points 6 bytes back, before the start"), "{e}");
        let e = decompress(&[0, b'a', 0xe0], &mut out, 100)
            .unwrap_err()
            .to_string();
        assert!(e.contains("back reference at byte 2 is cut"), "{e}");
        // never past the limit
        let e = decompress(&[0, b'a', 0xe0, 255, 0], &mut out, 100)
            .unwrap_err()
            .to_string();
        assert!(e.contains("decodes to more than 100 bytes"), "{e}");
    }
}
