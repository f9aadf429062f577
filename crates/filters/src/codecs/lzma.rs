//! numcodecs `lzma` (Zarr only, no HDF5 filter id): the chunk compressed by Python's `lzma`
//! module, by default in the `.xz` container (`format` 1, `FORMAT_XZ`); `format` 2
//! (`FORMAT_ALONE`, the legacy `.lzma` header) is read too. `format` 3 (raw, with a custom
//! filter chain) is refused when the codec is built. Parameters `check`, `preset`, `filters`
//! matter only when compressing: we compress with the xz container's defaults of lzma-rs.
//! Decoded output is capped at the context's `max_decoded`. Spec: numcodecs documentation,
//! "LZMA"; the .xz file format specification (tukaani.org).

use super::corrupt;
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};
use std::io;

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;
const NAME: &str = "lzma";

/// The numcodecs `lzma` codec.
pub(crate) struct Lzma {
    /// true: `.xz` container; false: legacy `.lzma` (FORMAT_ALONE).
    xz: bool,
    max_decoded: usize,
}

impl Lzma {
    /// The codec for numcodecs' `format` (1 xz, 2 alone); the error says why another is refused.
    pub(crate) fn new(format: i64, max_decoded: usize) -> Result<Lzma, String> {
        match format {
            1 => Ok(Lzma {
                xz: true,
                max_decoded,
            }),
            2 => Ok(Lzma {
                xz: false,
                max_decoded,
            }),
            f => Err(format!(
                "format {f} is not supported (1, the .xz container, and 2, legacy .lzma, are)"
            )),
        }
    }
}

/// A writer that refuses to grow past `limit` bytes.
struct Capped<'a> {
    out: &'a mut Vec<u8>,
    limit: usize,
    /// Set when a write would have passed the limit.
    hit: bool,
}

impl io::Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.out.len().saturating_add(buf.len()) > self.limit {
            self.hit = true;
            return Err(io::Error::other("decoded size limit"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Filter for Lzma {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        let mut input = chunk;
        let r = if self.xz {
            lzma_rs::xz_compress(&mut input, out)
        } else {
            lzma_rs::lzma_compress(&mut input, out)
        };
        r.map_err(|e| corrupt(ID, NAME, format!("compressing: {e}")))
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        let mut input = chunk;
        let mut w = Capped {
            out,
            limit: self.max_decoded,
            hit: false,
        };
        let r = if self.xz {
            lzma_rs::xz_decompress(&mut input, &mut w)
        } else {
            lzma_rs::lzma_decompress(&mut input, &mut w)
        };
        r.map_err(|e| {
            if w.hit {
                FilterError::TooLarge {
                    id: ID,
                    name: NAME,
                    claimed: self.max_decoded as u64 + 1,
                    limit: self.max_decoded,
                }
            } else {
                corrupt(ID, NAME, format!("not an lzma stream: {e}"))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    #[test]
    fn round_trip_limit_and_corrupt_input() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        for format in [1, 2] {
            let c = Lzma::new(format, 1 << 20).unwrap();
            let mut enc = Vec::new();
            c.encode(&data, &mut enc).unwrap();
            let mut dec = Vec::new();
            c.decode(&enc, &mut dec).unwrap();
            assert_eq!(dec, data, "format {format}");
            // decoded output over the cap is an error, not an allocation
            let small = Lzma::new(format, 100).unwrap();
            let e = small.decode(&enc, &mut Vec::new()).unwrap_err().to_string();
            assert!(e.contains("100"), "{e}");
            assert!(c.decode(b"not lzma at all", &mut Vec::new()).is_err());
            assert!(c.decode(&enc[..enc.len() / 2], &mut Vec::new()).is_err());
        }
        assert!(Lzma::new(3, 1).is_err());
    }
}
