//! Deflate encoding of every zlib and gzip stream nc-filters writes (HDF5 filter 1, the Zarr
//! `zlib` and `gzip` codecs, blosc's zlib): libdeflate, at the level that writes what zlib
//! writes at the level asked for.
//!
//! Users, like netCDF-C, h5py and numcodecs (which all call zlib), name a *zlib* level, and
//! expect zlib's compression ratio from it. libdeflate compresses two to six times faster than
//! zlib at the same output size, but its levels do not mean zlib's: after HDF5's byte shuffle
//! its level 1 writes what zlib level 1 writes on the benchmark corpus, while on unshuffled
//! floats it writes 4.5% more and its level 5 is needed. So each zlib level maps to the
//! lowest libdeflate level whose total output, measured on the corpus's chunks, is within
//! 0.5% of zlib's (and at most 0.5% larger than zlib's on the quantized corpus), one table for
//! input that went through a byte shuffle and one for input that did not. The measurements
//! and what they do not promise (single variables differ by a few percent either way) are in
//! docs/benchmarks.md, "Deflate at zlib's ratio".
//!
//! The output is a standard zlib (RFC 1950) or gzip (RFC 1952) stream: any zlib inflates it.

use std::cell::RefCell;

use libdeflater::{CompressionLvl, Compressor};

/// The libdeflate level for zlib level 0-9 when the input went through a byte shuffle.
const AFTER_SHUFFLE: [u8; 10] = [0, 1, 1, 2, 2, 2, 5, 5, 5, 5];
/// The libdeflate level for zlib level 0-9 otherwise.
const PLAIN: [u8; 10] = [0, 5, 5, 5, 5, 5, 7, 7, 9, 9];
/// libdeflate's levels are 0-12.
const LEVELS: usize = 13;

/// The container around the deflate data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// RFC 1950: 2-byte header, Adler-32 trailer (what zlib's `compress2` writes).
    Zlib,
    /// RFC 1952: 10-byte header with modification time 0, CRC-32 and length trailer.
    Gzip,
}

/// The libdeflate level that writes zlib level `zlib_level`'s output size (levels above 9 are
/// taken as 9).
pub(crate) fn libdeflate_level(zlib_level: u32, shuffled: bool) -> u8 {
    let table = if shuffled { &AFTER_SHUFFLE } else { &PLAIN };
    table[zlib_level.min(9) as usize]
}

/// Compress `data` as zlib would at `zlib_level` into `out` (replacing its contents).
/// `shuffled`: the data went through a byte shuffle (HDF5 filter 2, blosc's shuffle).
///
/// # Errors
/// Only if libdeflate finds its output bound too small, which its documentation rules out.
pub(crate) fn compress(
    data: &[u8],
    zlib_level: u32,
    shuffled: bool,
    framing: Framing,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    // one compressor per thread and level: allocating one (hash tables of up to a few hundred
    // KiB) costs more than compressing a small chunk
    thread_local! {
        static COMPRESSORS: RefCell<[Option<Compressor>; LEVELS]> =
            const { RefCell::new([const { None }; LEVELS]) };
    }
    let level = libdeflate_level(zlib_level, shuffled);
    COMPRESSORS.with(|cell| {
        let mut all = cell.borrow_mut();
        let slot = &mut all[usize::from(level)];
        let c = match slot {
            Some(c) => c,
            None => {
                let lvl = CompressionLvl::new(i32::from(level))
                    .map_err(|e| format!("libdeflate level {level}: {e:?}"))?;
                slot.insert(Compressor::new(lvl))
            }
        };
        let bound = match framing {
            Framing::Zlib => c.zlib_compress_bound(data.len()),
            Framing::Gzip => c.gzip_compress_bound(data.len()),
        };
        out.clear();
        out.resize(bound, 0);
        let n = match framing {
            Framing::Zlib => c.zlib_compress(data, out),
            Framing::Gzip => c.gzip_compress(data, out),
        }
        .map_err(|e| e.to_string())?;
        out.truncate(n);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;
    use std::io::Read;

    /// Floats of a smooth field with noise in the low bits, little-endian.
    fn field(n: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_u32;
        (0..n)
            .flat_map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let v = 280.0 + (i as f32 * 0.01).sin() * 20.0 + (x % 1000) as f32 * 1e-4;
                v.to_le_bytes()
            })
            .collect()
    }

    #[test]
    fn zlib_streams_inflate_with_zlib_at_every_level() {
        let data = field(20_000);
        let mut shuffled = Vec::new();
        crate::codecs::shuffle_bytes(&data, 4, &mut shuffled);
        for level in 0..=9 {
            for (input, sh) in [(&data, false), (&shuffled, true)] {
                let mut enc = Vec::new();
                compress(input, level, sh, Framing::Zlib, &mut enc).unwrap();
                // zlib header: deflate, 32 KiB window, header checksum
                assert_eq!(enc[0], 0x78, "level {level}");
                assert_eq!(u16::from_be_bytes([enc[0], enc[1]]) % 31, 0);
                let mut back = Vec::new();
                flate2::read::ZlibDecoder::new(&enc[..])
                    .read_to_end(&mut back)
                    .unwrap();
                assert_eq!(&back, input, "level {level} shuffled {sh}");
                if level > 0 {
                    assert!(enc.len() < input.len(), "level {level} did not compress");
                }
            }
        }
    }

    #[test]
    fn gzip_members_inflate_with_zlib() {
        let data = field(5_000);
        for level in [0, 1, 6, 9] {
            let mut enc = Vec::new();
            compress(&data, level, false, Framing::Gzip, &mut enc).unwrap();
            assert_eq!(enc[..4], [0x1f, 0x8b, 8, 0]);
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(&enc[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, data);
        }
    }

    #[test]
    fn level_tables() {
        // level 0 stores, higher zlib levels never map to lower libdeflate levels
        assert_eq!(libdeflate_level(0, true), 0);
        assert_eq!(libdeflate_level(0, false), 0);
        for t in [AFTER_SHUFFLE, PLAIN] {
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
            assert!(t.iter().all(|&l| usize::from(l) < LEVELS));
        }
        assert_eq!(libdeflate_level(1, true), 1);
        assert_eq!(libdeflate_level(12, false), libdeflate_level(9, false));
    }

    #[test]
    fn empty_input() {
        for framing in [Framing::Zlib, Framing::Gzip] {
            let mut enc = vec![1, 2, 3];
            compress(&[], 1, false, framing, &mut enc).unwrap();
            let mut back = Vec::new();
            match framing {
                Framing::Zlib => flate2::read::ZlibDecoder::new(&enc[..])
                    .read_to_end(&mut back)
                    .unwrap(),
                Framing::Gzip => flate2::read::GzDecoder::new(&enc[..])
                    .read_to_end(&mut back)
                    .unwrap(),
            };
            assert!(back.is_empty());
        }
    }
}
