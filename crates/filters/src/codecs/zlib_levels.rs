//! Deflate encoding of every zlib and gzip stream nc-filters writes (HDF5 filter 1, the Zarr
//! `zlib` and `gzip` codecs, blosc's zlib): libdeflate, at the level that writes what zlib
//! writes at the level asked for.
//!
//! Users, like netCDF-C, h5py and numcodecs (which all call zlib), name a *zlib* level, and
//! expect zlib's compression ratio from it. libdeflate compresses two to six times faster than
//! zlib at the same output size, but its levels do not mean zlib's: after HDF5's byte shuffle
//! its level 1 writes what zlib level 1 writes on the benchmark corpus, while on unshuffled
//! floats it writes 4.5% more and its level 5 is needed. So each zlib level maps to the
//! libdeflate level whose total output, measured on the corpus's chunks, is within 0.5% of
//! zlib's, at most 0.5% larger than zlib's on the quantized corpus, and closest to zlib's on a
//! smooth periodic field without being larger where one is (the lowest libdeflate levels miss
//! long-distance repeats that zlib's higher levels find: 40% more bytes there); one table for
//! input that went through a byte shuffle and one for input that did not. The measurements
//! and what they do not promise (single variables differ by a few percent either way) are in
//! docs/benchmarks.md, "Deflate at zlib's ratio".
//!
//! The output is a standard zlib (RFC 1950) or gzip (RFC 1952) stream: any zlib inflates it.

use std::cell::RefCell;

use libdeflater::{CompressionLvl, Compressor};

/// The libdeflate level for zlib level 0-9 when the input went through a byte shuffle.
const AFTER_SHUFFLE: [u8; 10] = [0, 1, 1, 4, 4, 4, 6, 6, 7, 7];
/// The libdeflate level for zlib level 0-9 otherwise.
const PLAIN: [u8; 10] = [0, 5, 5, 5, 5, 5, 7, 7, 8, 8];
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

    /// A smooth field that repeats every 360 values (one latitude row), float32: 250 +
    /// 0.25 * row + 0.1 * column + a hash of the index in the fourth decimal, computed in f32
    /// in that order (bit for bit numpy's float32 arithmetic).
    fn periodic_field() -> Vec<u8> {
        (0..180u64 * 360)
            .flat_map(|i| {
                let h = (i * 2_654_435_761) % 1000;
                let v = 250f32
                    + (i / 360) as f32 * 0.25f32
                    + (i % 360) as f32 * 0.1f32
                    + h as f32 * 1e-4f32;
                v.to_le_bytes()
            })
            .collect()
    }

    /// Sizes against stock zlib on the periodic field, where libdeflate's lowest levels miss
    /// the row-to-row repeats that zlib's higher levels find. The zlib sizes are Python's
    /// `zlib.compress(data, level)` with Debian's zlib 1.2.13 (as netCDF-C 4.9.0 uses).
    #[test]
    fn periodic_field_against_zlib() {
        let data = periodic_field();
        let mut shuffled = Vec::new();
        crate::codecs::shuffle_bytes(&data, 4, &mut shuffled);
        let zlib_shuffled = [13821, 13396, 12932, 14949, 10508, 8413, 8411, 8044, 8049];
        let zlib_plain = [
            194902, 194817, 198344, 205115, 205115, 205115, 205115, 205115, 205115,
        ];
        // (level, shuffled, most bytes allowed as a fraction of zlib's): the level-1 and
        // level-2 tables cannot reach zlib here without leaving its size on the corpus
        for (level, sh, most) in [
            (1, true, 1.04),
            (2, true, 1.07),
            (3, true, 1.0),
            (5, true, 1.0),
            (6, true, 1.02),
            (9, true, 1.0),
            (1, false, 1.065),
            (5, false, 1.01),
            (9, false, 1.01),
        ] {
            let (input, zlib) = if sh {
                (&shuffled, zlib_shuffled[level as usize - 1])
            } else {
                (&data, zlib_plain[level as usize - 1])
            };
            let mut enc = Vec::new();
            compress(input, level, sh, Framing::Zlib, &mut enc).unwrap();
            let ratio = enc.len() as f64 / f64::from(zlib);
            assert!(
                ratio <= most,
                "level {level} shuffled {sh}: {} bytes, zlib {zlib} ({ratio:.3} > {most})",
                enc.len()
            );
        }
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
