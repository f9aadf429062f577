//! Built-in codecs, bit-compatible with the HDF5 filters of the same id.

pub(crate) mod blosc;
mod blosclz;
pub(crate) mod bzip2;
mod checksum32;
mod crc32c;
pub(crate) mod deflate;
mod delta;
pub(crate) mod fletcher32;
mod gzip;
mod inflate;
pub(crate) mod lz4;
pub(crate) mod lzf;
mod lzma;
pub(crate) mod lzo;
mod numcast;
mod numcodecs_lz4;
pub(crate) mod shuffle;
pub(crate) mod szip;
mod zlib_levels;
pub(crate) mod zstd;

pub use blosc::{BLOSC_MAX_OVERHEAD, BLOSC_VERSION_FORMAT};
pub use crc32c::crc32c;
pub use fletcher32::fletcher32;
pub use shuffle::{shuffle_bytes, unshuffle_bytes};
// numcodecs codecs without an HDF5 filter id (Zarr only, built by crate::codec_json)
pub(crate) use checksum32::{split_sum, with_sum, Checksum32, Sum};
pub(crate) use delta::Delta;
pub(crate) use gzip::GZip;
pub(crate) use lzma::Lzma;
pub(crate) use numcast::{Cast, Categorize, PackBits};
pub(crate) use numcodecs_lz4::NumcodecsLz4;

use crate::error::FilterError;
use crate::filter::{Filter, FilterContext, FilterFactory, FilterId, FilterSource};
use crate::known::{Codec, KnownFilter, Numcodecs, FILTERS};
use std::io::Read;
use std::sync::Arc;

/// HDF5's byte shuffle (filter 2): codecs after it see byte planes (see [`Filter::after`]).
const SHUFFLE_ID: FilterId = 2;

pub(crate) type BuildFn = fn(&[u32], &FilterContext) -> Result<Box<dyn Filter>, FilterError>;
pub(crate) type WorkingFn = fn(&[u32], &FilterContext) -> Vec<u32>;

/// The working parameters of a codec that has no `set_local`: the visible ones.
pub(crate) fn same(v: &[u32], _: &FilterContext) -> Vec<u32> {
    v.to_vec()
}

/// A built-in codec's factory: its row of the filter table.
struct Builtin(&'static KnownFilter, Codec);

impl FilterFactory for Builtin {
    fn id(&self) -> FilterId {
        self.0.id
    }
    fn name(&self) -> &str {
        self.0.name
    }
    fn codec_ids(&self) -> &[&str] {
        codec_ids(self.0)
    }
    fn source(&self) -> FilterSource {
        FilterSource::Builtin
    }
    fn working_params(&self, visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
        (self.1.working)(visible, ctx)
    }
    fn build(&self, params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
        (self.1.build)(params, ctx)
    }
}

/// The Zarr codec ids a built-in answers to (its numcodecs id, whatever its framing).
fn codec_ids(k: &'static KnownFilter) -> &'static [&'static str] {
    match &k.numcodecs {
        Numcodecs::Same(c) | Numcodecs::Nczarr(c) | Numcodecs::Reframed(c) => {
            std::slice::from_ref(c)
        }
        Numcodecs::None => &[],
    }
}

/// The table's rows that have a built-in codec, with it.
fn builtin_rows() -> impl Iterator<Item = (&'static KnownFilter, Codec)> {
    FILTERS.iter().filter_map(|k| k.codec.map(|c| (k, c)))
}

/// The factories of all built-in codecs.
pub(crate) fn builtins() -> Vec<Arc<dyn FilterFactory>> {
    builtin_rows()
        .map(|(k, c)| Arc::new(Builtin(k, c)) as Arc<dyn FilterFactory>)
        .collect()
}

/// Bounds-checked reads over an encoded chunk; errors name the offset.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    id: FilterId,
    name: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], id: FilterId, name: &'static str) -> Cursor<'a> {
        Cursor {
            buf,
            pos: 0,
            id,
            name,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], FilterError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(FilterError::Truncated {
                id: self.id,
                name: self.name,
                needed: n,
                at: self.pos,
                len: self.buf.len(),
            })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn u32_be(&mut self) -> Result<u32, FilterError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64_be(&mut self) -> Result<u64, FilterError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
}

pub(crate) fn corrupt(
    id: FilterId,
    name: &'static str,
    what: impl std::fmt::Display,
) -> FilterError {
    FilterError::Corrupt {
        id,
        name,
        what: what.to_string(),
    }
}

/// Read a whole decompressing stream into `out`, failing past `limit` bytes.
pub(crate) fn read_limited(
    mut r: impl Read,
    out: &mut Vec<u8>,
    limit: usize,
    id: FilterId,
    name: &'static str,
) -> Result<(), FilterError> {
    out.clear();
    let cap = (limit as u64).saturating_add(1);
    let n = (&mut r)
        .take(cap)
        .read_to_end(out)
        .map_err(|e| corrupt(id, name, e))?;
    if n > limit {
        return Err(FilterError::TooLarge {
            id,
            name,
            claimed: n as u64,
            limit,
        });
    }
    Ok(())
}

pub(crate) fn bad_params(
    id: FilterId,
    name: &str,
    params: &[u32],
    reason: impl Into<String>,
) -> FilterError {
    FilterError::BadParams {
        id,
        name: name.to_string(),
        params: params.to_vec(),
        reason: reason.into(),
    }
}

/// The working parameters the built-in codec of `id` would use (for plugins, whose
/// `set_local` needs HDF5 itself and cannot be called): shuffle's element size, blosc's type
/// and chunk sizes, szip's extra values; other ids unchanged.
pub(crate) fn working_for(id: FilterId, visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
    match crate::known::known(id).and_then(|k| k.codec) {
        Some(c) => (c.working)(visible, ctx),
        None => visible.to_vec(),
    }
}

/// Test vectors written as hex (numcodecs' bytes in the codec tests).
#[cfg(test)]
mod test_hex {
    #![allow(clippy::unwrap_used)] // test code

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}

include!(concat!(env!("OUT_DIR"), "/codec_versions.rs"));

/// The version of a codec crate in this build ("?" when unknown).
fn crate_version(name: &str) -> &'static str {
    CODEC_CRATES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("?", |(_, v)| v)
}

/// One built-in codec as `--version` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinCodec {
    /// HDF5 filter id.
    pub id: FilterId,
    /// netCDF-C's name for the filter.
    pub name: &'static str,
    /// The numcodecs codec ids it also serves in Zarr stores.
    pub codec_ids: &'static [&'static str],
    /// What implements it, with versions (e.g. "zlib-rs 0.6.8 via flate2 1.1.11").
    pub implementation: String,
}

/// Every built-in codec, by id, with what implements it.
pub fn builtin_codecs() -> Vec<BuiltinCodec> {
    let v = crate_version;
    builtin_rows()
        .map(|(f, _)| {
            let implementation = match f.id {
                1 => format!(
                    "libdeflate (bundled, libdeflater {}) encodes, zlib-rs {} via flate2 {} decodes",
                    v("libdeflater"),
                    v("zlib-rs"),
                    v("flate2")
                ),
                307 => format!(
                    "libbzip2 {} (bundled, bzip2 crate {})",
                    v("bzip2-sys").split('+').nth(1).unwrap_or("?"),
                    v("bzip2")
                ),
                32015 => format!(
                    "libzstd {} (bundled, zstd crate {})",
                    v("zstd-sys").split("+zstd.").nth(1).unwrap_or("?"),
                    v("zstd")
                ),
                32004 => format!("lz4_flex {}", v("lz4_flex")),
                32001 => format!(
                    "built in (blosclz, lz4 via lz4_flex {}, zlib, zstd {})",
                    v("lz4_flex"),
                    v("zstd-sys").split("+zstd.").nth(1).unwrap_or("?")
                ),
                305 => "built in (decode only)".to_string(),
                _ => "built in".to_string(),
            };
            BuiltinCodec {
                id: f.id,
                name: f.name,
                codec_ids: codec_ids(f),
                implementation,
            }
        })
        .collect()
}
