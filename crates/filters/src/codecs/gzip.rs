//! numcodecs `GZip(level)`: the whole chunk as one gzip member (RFC 1952), as Python's
//! `gzip.GzipFile` writes it. No HDF5 filter has this framing (HDF5's deflate, filter 1, is a
//! zlib stream), so the codec exists for Zarr stores only (see [`crate::codec_json`]).
//!
//! Decoding accepts several concatenated members (as `GzipFile` does) and checks each
//! member's CRC-32 and length; encoding writes one member with modification time 0.

use super::zlib_levels::{self, Framing};
use super::{corrupt, read_limited};
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;
const NAME: &str = "gzip";

/// The numcodecs `gzip` codec.
pub(crate) struct GZip {
    level: u32,
    limit: usize,
    /// A byte shuffle runs before this codec (see [`Filter::after`]).
    shuffled: bool,
}

impl GZip {
    /// A gzip codec at `level` (0-9) whose decoded chunks may not exceed `limit` bytes.
    pub(crate) fn new(level: u32, limit: usize) -> GZip {
        GZip {
            level: level.min(9),
            limit,
            shuffled: false,
        }
    }
}

impl Filter for GZip {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn after(&mut self, earlier: &[FilterId]) {
        self.shuffled = earlier.contains(&super::SHUFFLE_ID);
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        // libdeflate writes modification time 0, as numcodecs does
        zlib_levels::compress(chunk, self.level, self.shuffled, Framing::Gzip, out)
            .map_err(|err| corrupt(ID, NAME, err))
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        if chunk.len() < 18 || chunk[..2] != [0x1f, 0x8b] {
            return Err(corrupt(
                ID,
                NAME,
                format!(
                    "not a gzip member ({} bytes, expected the magic bytes 1f 8b and at least 18 bytes)",
                    chunk.len()
                ),
            ));
        }
        read_limited(
            flate2::read::MultiGzDecoder::new(chunk),
            out,
            self.limit,
            ID,
            NAME,
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;
    use crate::codecs::test_hex::hex;

    /// 64 little-endian int32 values `(i % 7) * 100 - 250`.
    pub(crate) fn data() -> Vec<u8> {
        (0..64i32)
            .flat_map(|i| ((i % 7) * 100 - 250).to_le_bytes())
            .collect()
    }

    /// `numcodecs.GZip(5).encode(data())` (numcodecs 0.15.2, Python 3.11 zlib).
    const NUMCODECS: &str = "1f8b08003fa5016b00ff63fbffff7f16109f0362230606866940fc0b88e3181918d846801c004a9f43b900010000";

    #[test]
    fn decodes_numcodecs_bytes() {
        let g = GZip::new(5, 1 << 20);
        let mut out = Vec::new();
        g.decode(&hex(NUMCODECS), &mut out).unwrap();
        assert_eq!(out, data());
    }

    #[test]
    fn round_trip_and_fixed_header() {
        for level in [0, 1, 5, 9] {
            let g = GZip::new(level, 1 << 20);
            for d in [data(), Vec::new(), vec![7u8; 100_000]] {
                let mut enc = Vec::new();
                g.encode(&d, &mut enc).unwrap();
                // gzip magic, deflate, no flags, mtime 0
                assert_eq!(enc[..8], [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
                // trailer: CRC-32 then the length mod 2^32, little-endian
                let n = enc.len();
                assert_eq!(enc[n - 4..], (d.len() as u32).to_le_bytes());
                let mut back = Vec::new();
                g.decode(&enc, &mut back).unwrap();
                assert_eq!(back, d);
            }
        }
    }

    #[test]
    fn two_members_decode_as_one_stream() {
        let g = GZip::new(1, 1 << 20);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        g.encode(b"abc", &mut a).unwrap();
        g.encode(b"defg", &mut b).unwrap();
        a.extend_from_slice(&b);
        let mut out = Vec::new();
        g.decode(&a, &mut out).unwrap();
        assert_eq!(out, b"abcdefg");
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let g = GZip::new(5, 256);
        let good = hex(NUMCODECS);
        let mut out = Vec::new();
        // bad magic, truncations, a flipped CRC byte, a flipped data byte
        let mut bad_magic = good.clone();
        bad_magic[0] = 0x1e;
        let mut bad_crc = good.clone();
        let n = bad_crc.len();
        bad_crc[n - 6] ^= 0x55;
        let mut bad_len = good.clone();
        bad_len[n - 1] ^= 1;
        for (what, c) in [
            ("magic", bad_magic),
            ("crc", bad_crc),
            ("length", bad_len),
            ("truncated", good[..good.len() - 5].to_vec()),
            ("header only", good[..10].to_vec()),
            ("empty", Vec::new()),
        ] {
            let e = g.decode(&c, &mut out);
            assert!(e.is_err(), "{what}: {e:?}");
        }
        // more than the limit: 100 000 zero bytes compress to ~100 bytes
        let big = GZip::new(9, 1 << 20);
        let mut enc = Vec::new();
        big.encode(&vec![0u8; 100_000], &mut enc).unwrap();
        match g.decode(&enc, &mut out) {
            Err(FilterError::TooLarge { limit: 256, .. }) => {}
            other => panic!("{other:?}"),
        }
        // every single-byte truncation and flip: error or the right data, never a panic
        for i in 0..good.len() {
            let _ = g.decode(&good[..i], &mut out);
            let mut f = good.clone();
            f[i] ^= 0xa5;
            if g.decode(&f, &mut out).is_ok() {
                assert_eq!(out, data(), "flip at {i}");
            }
        }
    }
}
