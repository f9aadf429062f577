//! numcodecs `LZ4(acceleration)`: the uncompressed size as 4 bytes little-endian, then one
//! LZ4 block (`LZ4_compress_fast`). This is NOT the framing of HDF5's lz4 filter (32004, in
//! `lz4.rs`: 8-byte big-endian size, block size, sized blocks), so the two are kept apart:
//! a Zarr `{"id": "lz4"}` codec always means this one (see [`crate::codec_json`]).
//!
//! Encoding uses `lz4_flex`, which has no acceleration setting: any acceleration writes the
//! same valid LZ4 block (numcodecs' acceleration only trades ratio for speed).

use super::corrupt;
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;
const NAME: &str = "lz4 (numcodecs)";

/// The numcodecs `lz4` codec.
pub(crate) struct NumcodecsLz4 {
    limit: usize,
}

impl NumcodecsLz4 {
    /// A codec whose decoded chunks may not exceed `limit` bytes.
    pub(crate) fn new(limit: usize) -> NumcodecsLz4 {
        NumcodecsLz4 { limit }
    }
}

impl Filter for NumcodecsLz4 {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let n = u32::try_from(chunk.len()).map_err(|_| {
            corrupt(
                ID,
                NAME,
                format!(
                    "a chunk of {} bytes does not fit numcodecs' 4-byte size header",
                    chunk.len()
                ),
            )
        })?;
        out.clear();
        out.reserve(4 + lz4_flex::block::get_maximum_output_size(chunk.len()));
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&lz4_flex::block::compress(chunk));
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let (head, block) = match chunk {
            [a, b, c, d, rest @ ..] => ([*a, *b, *c, *d], rest),
            _ => {
                return Err(FilterError::Truncated {
                    id: ID,
                    name: NAME,
                    needed: 4,
                    at: 0,
                    len: chunk.len(),
                })
            }
        };
        let claimed = u32::from_le_bytes(head);
        // checked against the chunk size before anything is allocated
        let n = usize::try_from(claimed)
            .ok()
            .filter(|&n| n <= self.limit)
            .ok_or(FilterError::TooLarge {
                id: ID,
                name: NAME,
                claimed: u64::from(claimed),
                limit: self.limit,
            })?;
        // an LZ4 block expands at most 255 times (plus a few bytes)
        if n > block.len().saturating_mul(255).saturating_add(64) {
            return Err(corrupt(
                ID,
                NAME,
                format!(
                    "a block of {} bytes cannot hold the {n} bytes its header claims",
                    block.len()
                ),
            ));
        }
        out.clear();
        out.resize(n, 0);
        let got = lz4_flex::block::decompress_into(block, out)
            .map_err(|e| corrupt(ID, NAME, format!("LZ4 block: {e}")))?;
        if got != n {
            return Err(FilterError::Length {
                id: ID,
                name: NAME,
                expected: n,
                got,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;
    use crate::codecs::test_hex::hex;

    /// 64 little-endian int32 values `(i % 7) * 100 - 250`.
    fn data() -> Vec<u8> {
        (0..64i32)
            .flat_map(|i| ((i % 7) * 100 - 250).to_le_bytes())
            .collect()
    }

    /// `numcodecs.LZ4(1).encode(data())` (numcodecs 0.15.2).
    const NUMCODECS: &str =
        "00010000ff0d06ffffff6affffffceffffff3200000096000000fa0000005e0100001c00cc500006ffffff";
    /// `numcodecs.LZ4(1).encode(b"")`.
    const NUMCODECS_EMPTY: &str = "0000000000";

    #[test]
    fn byte_exact_with_numcodecs() {
        let c = NumcodecsLz4::new(1 << 20);
        let mut out = Vec::new();
        c.decode(&hex(NUMCODECS), &mut out).unwrap();
        assert_eq!(out, data());
        c.decode(&hex(NUMCODECS_EMPTY), &mut out).unwrap();
        assert!(out.is_empty());
        // lz4_flex ends a block differently from liblz4 (both valid LZ4): the header and the
        // empty block are the same, the data round-trip (numcodecs reads ours: interop tests)
        c.encode(&[], &mut out).unwrap();
        assert_eq!(out, hex(NUMCODECS_EMPTY));
        c.encode(&data(), &mut out).unwrap();
        assert_eq!(out[..4], hex(NUMCODECS)[..4]);
        let mut back = Vec::new();
        c.decode(&out, &mut back).unwrap();
        assert_eq!(back, data());
    }

    #[test]
    fn round_trip() {
        let c = NumcodecsLz4::new(1 << 20);
        let noise: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for d in [data(), vec![0u8; 70_000], noise, vec![1]] {
            let mut enc = Vec::new();
            c.encode(&d, &mut enc).unwrap();
            assert_eq!(enc[..4], (d.len() as u32).to_le_bytes());
            let mut back = Vec::new();
            c.decode(&enc, &mut back).unwrap();
            assert_eq!(back, d);
        }
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let c = NumcodecsLz4::new(256);
        let good = hex(NUMCODECS);
        let mut out = Vec::new();
        // a header claiming 4 GiB - 1: refused before any allocation
        let mut huge = good.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        match c.decode(&huge, &mut out) {
            Err(FilterError::TooLarge {
                claimed: 4_294_967_295,
                limit: 256,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        // within the limit but more than the block can hold
        let roomy = NumcodecsLz4::new(1 << 30);
        let mut big = hex(NUMCODECS_EMPTY);
        big[..4].copy_from_slice(&(100_000u32).to_le_bytes());
        assert!(matches!(
            roomy.decode(&big, &mut out),
            Err(FilterError::Corrupt { .. })
        ));
        // header says more (or less) than the block holds
        let mut more = good.clone();
        more[..4].copy_from_slice(&257u32.to_le_bytes());
        assert!(c.decode(&more, &mut out).is_err());
        let mut less = good.clone();
        less[..4].copy_from_slice(&255u32.to_le_bytes());
        assert!(c.decode(&less, &mut out).is_err());
        // short header, truncated block
        assert!(matches!(
            c.decode(&good[..3], &mut out),
            Err(FilterError::Truncated { .. })
        ));
        assert!(c.decode(&good[..good.len() - 3], &mut out).is_err());
        // every truncation and byte flip: an error or the data, never a panic
        for i in 0..good.len() {
            let _ = c.decode(&good[..i], &mut out);
            let mut f = good.clone();
            f[i] ^= 0x5a;
            let _ = c.decode(&f, &mut out);
        }
    }
}
