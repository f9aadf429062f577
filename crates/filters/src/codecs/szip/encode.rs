//! The CCSDS 121.0 adaptive entropy coder behind szip encoding, written from the
//! recommendation (Lossless Data Compression, blue book): the preprocessor (unit-delay
//! predictor and prediction-error mapper) and the per-block choice among the zero-block,
//! second-extension, split-sample (`k` = 0 is the fundamental sequence) and no-compression
//! options.
//!
//! One reference sample interval (RSI) of `rsi` blocks of `j` samples of `n` bits is coded
//! at a time, all RSIs in one continuous bitstream (no byte alignment between them, as
//! libaec's szip layer writes them); the last byte is padded with 0 bits. Each block takes
//! the option with the fewest bits; the second extension is only used when every pair sum
//! is at most 12 (libaec's decoder tables stop there; larger sums are never the cheapest).

/// Zero-block run code meaning "the rest of this segment (or RSI)".
const ROS: u64 = 4;
/// Blocks per zero-block segment.
const SEGMENT: usize = 64;
/// Largest pair sum coded with the second extension.
const SE_MAX_SUM: u32 = 12;

pub(super) use crate::bits::BitWriter;

/// The coder for one configuration: `n` bits per sample, blocks of `j` samples, `rsi` blocks
/// per reference sample interval, the predictor on or off.
pub(super) struct Coder {
    n: u32,
    j: usize,
    rsi: usize,
    nn: bool,
    id_len: u32,
    kmax: u32,
    xmax: u32,
}

/// The option chosen for one block.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Choice {
    SecondExt,
    Split(u32),
    Uncompressed,
}

impl Coder {
    /// A coder; `n` is 1 to 32, `j` even and at least 2, `rsi` at least 1 (the caller checks).
    /// `allow_k13` off limits 16-bit samples to k <= 12, as szip's option mask asks.
    pub(super) fn new(n: u32, j: usize, rsi: usize, nn: bool, allow_k13: bool) -> Coder {
        let id_len = if n > 16 {
            5
        } else if n > 8 {
            4
        } else {
            3
        };
        let mut kmax = ((1u32 << id_len) - 3).min(n.saturating_sub(1));
        if !allow_k13 && id_len == 4 {
            kmax = kmax.min(12);
        }
        let xmax = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        Coder {
            n,
            j,
            rsi,
            nn,
            id_len,
            kmax,
            xmax,
        }
    }

    /// Samples in one RSI.
    pub(super) fn rsi_samples(&self) -> usize {
        self.rsi * self.j
    }

    /// Code one RSI of `x` (`rsi * j` samples, each at most `2^n - 1`) into `w`. `d` is
    /// scratch space.
    pub(super) fn encode_rsi(&self, x: &[u32], d: &mut Vec<u32>, w: &mut BitWriter) {
        // preprocessing: mapped prediction errors, the reference sample's slot set to 0
        d.clear();
        if self.nn {
            d.push(0);
            for p in x.windows(2) {
                d.push(self.map(p[1], p[0]));
            }
        } else {
            d.extend(x.iter().map(|&v| v & self.xmax));
        }
        let reference = x.first().copied().unwrap_or(0) & self.xmax;
        let mut b = 0;
        let nblocks = self.rsi.min(d.len() / self.j);
        while b < nblocks {
            let refb = self.nn && b == 0;
            let block = &d[b * self.j..(b + 1) * self.j];
            if block.iter().all(|&v| v == 0) {
                // a run of zero blocks, up to the end of the segment or RSI
                let seg_end = ((b / SEGMENT + 1) * SEGMENT).min(nblocks);
                let mut e = b + 1;
                while e < seg_end && d[e * self.j..(e + 1) * self.j].iter().all(|&v| v == 0) {
                    e += 1;
                }
                let count = (e - b) as u64;
                w.put(0, self.id_len + 1);
                if refb {
                    w.put(reference, self.n);
                }
                let code = if e == seg_end && count > ROS {
                    ROS
                } else if count > ROS {
                    count
                } else {
                    count - 1
                };
                w.fs(code as u32);
                b = e;
                continue;
            }
            self.encode_block(block, refb, reference, w);
            b += 1;
        }
    }

    /// Map `x` against the prediction `pred` to a non-negative error (CCSDS 121.0, 4.3).
    #[inline]
    fn map(&self, x: u32, pred: u32) -> u32 {
        let (x, pred) = (x & self.xmax, pred & self.xmax);
        let theta = pred.min(self.xmax - pred);
        if x >= pred {
            let delta = x - pred;
            if delta <= theta {
                2 * delta
            } else {
                theta + delta
            }
        } else {
            let delta = pred - x;
            if delta <= theta {
                2 * delta - 1
            } else {
                theta + delta
            }
        }
    }

    /// The cheapest option for a block that is not all zeros.
    fn choose(&self, block: &[u32], start: usize) -> Choice {
        let j = block.len() as u64;
        let coded = &block[start..];
        let m = coded.len() as u64;
        // no compression codes the reference sample too: j raw samples
        let mut best = (j * u64::from(self.n), Choice::Uncompressed);
        let ref_bits = if start == 1 { u64::from(self.n) } else { 0 };
        let sum: u64 = coded.iter().map(|&v| u64::from(v)).sum();
        for k in 0..=self.kmax {
            let fs_bits = if k == 0 {
                sum
            } else {
                coded.iter().map(|&v| u64::from(v >> k)).sum()
            };
            let bits = ref_bits + fs_bits + m * u64::from(k + 1);
            if bits < best.0 {
                best = (bits, Choice::Split(k));
            }
            // the fundamental-sequence part only shrinks with k by at most half: stop once
            // it is below the count of samples
            if fs_bits < m {
                break;
            }
        }
        // second extension: pairs (d0, d1), the reference slot counted as 0
        if sum <= u64::from(SE_MAX_SUM) * j {
            let mut bits = ref_bits + 1;
            let mut ok = true;
            for p in block.chunks_exact(2) {
                let s = p[0] + p[1];
                if s > SE_MAX_SUM {
                    ok = false;
                    break;
                }
                bits += u64::from(s * (s + 1) / 2 + p[1] + 1);
            }
            if ok && bits < best.0 {
                best = (bits, Choice::SecondExt);
            }
        }
        best.1
    }

    fn encode_block(&self, block: &[u32], refb: bool, reference: u32, w: &mut BitWriter) {
        let start = usize::from(refb);
        match self.choose(block, start) {
            Choice::Uncompressed => {
                w.put((1u32 << self.id_len) - 1, self.id_len);
                if refb {
                    w.put(reference, self.n);
                }
                for &v in &block[start..] {
                    w.put(v, self.n);
                }
            }
            Choice::SecondExt => {
                w.put(0, self.id_len);
                w.put(1, 1);
                if refb {
                    w.put(reference, self.n);
                }
                for (i, p) in block.chunks_exact(2).enumerate() {
                    // the reference slot is 0 in `block`, so the first pair codes (0, d1)
                    let (a, b) = if i == 0 && refb {
                        (0, p[1])
                    } else {
                        (p[0], p[1])
                    };
                    let s = a + b;
                    w.fs(s * (s + 1) / 2 + b);
                }
            }
            Choice::Split(k) => {
                w.put(k + 1, self.id_len);
                if refb {
                    w.put(reference, self.n);
                }
                for &v in &block[start..] {
                    w.fs(v >> k);
                }
                if k > 0 {
                    for &v in &block[start..] {
                        w.put(v, k);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift).
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }

    fn roundtrip(x: &[u32], n: u32, j: usize, rsi: usize, nn: bool) -> usize {
        let c = Coder::new(n, j, rsi, nn, true);
        let per = c.rsi_samples();
        assert_eq!(x.len() % per, 0);
        let mut w = BitWriter::with_capacity(0);
        let mut d = Vec::new();
        for r in x.chunks(per) {
            c.encode_rsi(r, &mut d, &mut w);
        }
        let bytes = w.finish();
        let got = super::super::decode_samples(&bytes, n as usize, j, rsi, nn, x.len())
            .unwrap_or_else(|| panic!("n {n} j {j} rsi {rsi} nn {nn}: decoder failed"));
        let want: Vec<u64> = x.iter().map(|&v| u64::from(v)).collect();
        assert_eq!(got[..x.len()], want[..], "n {n} j {j} rsi {rsi} nn {nn}");
        bytes.len()
    }

    #[test]
    fn every_sample_width_round_trips() {
        let mut r = rng(11);
        for n in 1..=32u32 {
            let xmax = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
            for (j, rsi) in [(8, 1), (16, 3), (32, 2), (2, 5), (64, 70)] {
                let len = j * rsi * 2;
                for kind in 0..5 {
                    let x: Vec<u32> = (0..len)
                        .map(|i| match kind {
                            0 => (r() as u32) & xmax,
                            1 => 0,
                            2 => xmax,
                            3 => ((i as u32 / 3) + (r() as u32 & 3)) & xmax,
                            _ => {
                                if i % 97 == 5 {
                                    xmax
                                } else {
                                    (r() as u32 & 1) & xmax
                                }
                            }
                        })
                        .collect();
                    for nn in [false, true] {
                        roundtrip(&x, n, j, rsi, nn);
                    }
                }
            }
        }
    }

    #[test]
    fn options_are_the_expected_ones() {
        // all zeros: zero blocks only, one ROS run per segment: ID(3)+1 bit + FS(4) = 9 bits
        // for each of 2 segments (70 blocks: 64 + 6)
        let x = vec![0u32; 8 * 70];
        assert_eq!(roundtrip(&x, 8, 8, 70, false), 3);
        // a constant with the predictor: reference then zero blocks
        let x = vec![200u32; 8 * 3];
        let c = Coder::new(8, 8, 3, true, true);
        let mut w = BitWriter::with_capacity(0);
        c.encode_rsi(&x, &mut Vec::new(), &mut w);
        // ID 000, 0, reference 11001000, ROS? no: 3 blocks < 5, so FS(2) = 001
        assert_eq!(w.finish(), [0b0000_1100, 0b1000_0010]);
        // noise: no compression is picked (ID 111 and the raw bytes)
        let c = Coder::new(8, 8, 1, false, true);
        let x = [0xff, 0x00, 0xff, 0x00, 0xff, 0x00, 0xff, 0x00];
        assert_eq!(c.choose(&x, 0), Choice::Uncompressed);
        // small values: second extension; values near 2^k: split k
        assert_eq!(c.choose(&[0, 1, 0, 0, 1, 0, 0, 0], 0), Choice::SecondExt);
        assert_eq!(c.choose(&[5, 6, 4, 7, 5, 6, 4, 7], 0), Choice::Split(2));
        assert_eq!(c.choose(&[1, 2, 1, 2, 1, 1, 2, 1], 0), Choice::Split(0));
        // the mapping of CCSDS 121.0 4.3
        let c = Coder::new(8, 8, 1, true, true);
        assert_eq!(c.map(10, 10), 0);
        assert_eq!(c.map(11, 10), 2);
        assert_eq!(c.map(9, 10), 1);
        assert_eq!(c.map(250, 10), 250);
        assert_eq!(c.map(0, 250), 255);
        // k is limited by the option id: 3-bit ids allow k <= 5
        assert_eq!(Coder::new(8, 8, 1, false, true).kmax, 5);
        assert_eq!(Coder::new(16, 8, 1, false, true).kmax, 13);
        assert_eq!(Coder::new(16, 8, 1, false, false).kmax, 12);
        assert_eq!(Coder::new(32, 8, 1, false, true).kmax, 29);
    }

    #[test]
    fn long_fundamental_sequences() {
        // 16-bit samples where split k=0 would need huge FS codes: still valid
        let mut w = BitWriter::with_capacity(0);
        w.fs(100);
        w.put(0b101, 3);
        let b = w.finish();
        assert_eq!(b.len(), 13);
        assert!(b[..12].iter().all(|&x| x == 0));
        assert_eq!(b[12], 0b0000_1101);
    }
}
