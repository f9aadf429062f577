//! Decoding a chunk through its filter pipeline.
//!
//! [`ChunkDecoder`] is the seam between this reader and a filter engine: the reader hands it the
//! filters that were applied to a chunk (in pipeline, i.e. write, order) and the stored bytes; the
//! decoder undoes them in reverse order. [`BuiltinDecoder`] covers the filters netCDF-C itself
//! writes without plugins: deflate (1), shuffle (2) and fletcher32 (3), and HDF5's own
//! nbit (5) and scaleoffset (6), decoded by `hdf5-reader` (parameters as HDF5's `set_local`
//! stored them in the pipeline message).

use std::io::Read;

use nc_dataset::{FilterSpec, FILTER_DEFLATE, FILTER_FLETCHER32, FILTER_SHUFFLE};

/// Undoes a chunk's filter pipeline.
pub trait ChunkDecoder: Send + Sync {
    /// True if every filter id in `filters` can be decoded.
    fn supports(&self, id: u32) -> bool;

    /// Decode one chunk. `filters` are in pipeline (write) order and are undone last to first;
    /// `type_size` is the size of one element, `chunk_shape` the chunk's extent.
    ///
    /// # Errors
    /// A message saying which filter failed and why.
    fn decode(
        &self,
        filters: &[FilterSpec],
        type_size: usize,
        chunk_shape: &[u64],
        data: Vec<u8>,
    ) -> Result<Vec<u8>, String>;
}

/// The well-known name of an HDF5 filter id (for messages).
pub fn filter_name(id: u32) -> &'static str {
    match id {
        1 => "deflate",
        2 => "shuffle",
        3 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32004 => "lz4",
        32008 => "bitshuffle",
        32013 => "zfp",
        32015 => "zstd",
        32017 => "sz",
        _ => "unknown",
    }
}

/// HDF5's nbit filter id.
const FILTER_NBIT: u32 = 5;
/// HDF5's scale-offset filter id.
const FILTER_SCALEOFFSET: u32 = 6;

/// Deflate, shuffle, fletcher32, nbit and scaleoffset, decoded in pure Rust.
#[derive(Debug, Default, Clone, Copy)]
pub struct BuiltinDecoder;

impl ChunkDecoder for BuiltinDecoder {
    fn supports(&self, id: u32) -> bool {
        matches!(
            id,
            FILTER_DEFLATE | FILTER_SHUFFLE | FILTER_FLETCHER32 | FILTER_NBIT | FILTER_SCALEOFFSET
        )
    }

    fn decode(
        &self,
        filters: &[FilterSpec],
        type_size: usize,
        chunk_shape: &[u64],
        data: Vec<u8>,
    ) -> Result<Vec<u8>, String> {
        // a decoded chunk is its logical size plus what inner filters add (fletcher32: 4
        // bytes); bound every inflation by twice that plus slack, so a zip bomb cannot run away
        let logical = chunk_shape
            .iter()
            .try_fold(type_size as u64, |a, &b| a.checked_mul(b))
            .ok_or("chunk size overflows")?;
        let limit = logical.saturating_mul(2).saturating_add(4096);
        let mut data = data;
        for f in filters.iter().rev() {
            data = match f.id {
                FILTER_DEFLATE => inflate(&data, limit)?,
                FILTER_SHUFFLE => {
                    let size = f.params.first().map_or(type_size, |&s| s as usize);
                    unshuffle(&data, size)
                }
                FILTER_FLETCHER32 => check_fletcher32(data)?,
                FILTER_NBIT => hdf5_reader::filters::nbit::decompress_with_limit(
                    &data,
                    &f.params,
                    usize::try_from(limit).map_err(|_| "chunk size overflows")?,
                )
                .map_err(|e| format!("nbit (filter 5): {e}"))?,
                FILTER_SCALEOFFSET => hdf5_reader::filters::scaleoffset::decompress_with_limit(
                    &data,
                    &f.params,
                    usize::try_from(limit).map_err(|_| "chunk size overflows")?,
                )
                .map_err(|e| format!("scaleoffset (filter 6): {e}"))?,
                other => {
                    return Err(format!(
                        "filter {other} ({}) is not built in",
                        filter_name(other)
                    ))
                }
            };
        }
        Ok(data)
    }
}

/// zlib-inflate `data`, refusing output beyond `limit` bytes (+1 to detect overflow).
fn inflate(data: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(usize::try_from(limit.min(1 << 26)).unwrap_or(0));
    let mut z = flate2::read::ZlibDecoder::new(data).take(limit.saturating_add(1));
    z.read_to_end(&mut out)
        .map_err(|e| format!("deflate (filter 1): {e}"))?;
    if out.len() as u64 > limit {
        return Err(format!(
            "deflate (filter 1): inflates past {limit} bytes, far more than the chunk holds (corrupt chunk?)"
        ));
    }
    Ok(out)
}

/// Undo the HDF5 byte shuffle: byte j of every element was stored in plane j.
fn unshuffle(data: &[u8], size: usize) -> Vec<u8> {
    if size <= 1 || data.len() < size {
        return data.to_vec();
    }
    let n = data.len() / size;
    let mut out = vec![0u8; data.len()];
    for j in 0..size {
        let plane = &data[j * n..(j + 1) * n];
        for (i, &b) in plane.iter().enumerate() {
            out[i * size + j] = b;
        }
    }
    // a tail that does not fill a whole element is stored as is
    out[n * size..].copy_from_slice(&data[n * size..]);
    out
}

/// Verify and strip the trailing fletcher32 checksum.
fn check_fletcher32(mut data: Vec<u8>) -> Result<Vec<u8>, String> {
    if data.len() < 4 {
        return Err("fletcher32 (filter 3): chunk shorter than its checksum".to_string());
    }
    let at = data.len() - 4;
    let stored = u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    let computed = hdf5_reader::checksum::fletcher32(&data[..at]);
    // HDF5 before 1.6.3 stored the checksum with its 16-bit halves swapped on little-endian hosts
    if stored != computed && stored != computed.rotate_left(16) {
        return Err(format!(
            "fletcher32 (filter 3): checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (corrupt chunk)"
        ));
    }
    data.truncate(at);
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn spec(id: u32, params: &[u32]) -> FilterSpec {
        FilterSpec {
            id,
            params: params.to_vec(),
        }
    }

    #[test]
    fn shuffle_deflate_fletcher_round_trip() {
        let values: Vec<u8> = (0u32..100).flat_map(|v| (v * 1000).to_le_bytes()).collect();
        // shuffle
        let n = values.len() / 4;
        let mut shuffled = vec![0u8; values.len()];
        for i in 0..n {
            for j in 0..4 {
                shuffled[j * n + i] = values[i * 4 + j];
            }
        }
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(5));
        enc.write_all(&shuffled).unwrap();
        let mut stored = enc.finish().unwrap();
        let sum = hdf5_reader::checksum::fletcher32(&stored);
        stored.extend_from_slice(&sum.to_le_bytes());
        let chain = [spec(2, &[4]), spec(1, &[5]), spec(3, &[])];
        let out = BuiltinDecoder
            .decode(&chain, 4, &[100], stored.clone())
            .unwrap();
        assert_eq!(out, values);
        // corrupt one byte: fletcher32 catches it
        let mut bad = stored;
        bad[3] ^= 0xff;
        let err = BuiltinDecoder.decode(&chain, 4, &[100], bad).unwrap_err();
        assert!(err.contains("checksum mismatch"), "{err}");
    }

    #[test]
    fn inflate_is_bounded_by_chunk_size() {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(9));
        enc.write_all(&vec![0u8; 1 << 20]).unwrap();
        // 16 one-byte elements: at most 2 * 16 + 4096 bytes may come out
        let bomb = enc.finish().unwrap();
        let err = BuiltinDecoder
            .decode(&[spec(1, &[9])], 1, &[16], bomb)
            .unwrap_err();
        assert!(err.contains("inflates past"), "{err}");
    }

    #[test]
    fn unknown_filter_is_refused() {
        assert!(!BuiltinDecoder.supports(307));
        let err = BuiltinDecoder
            .decode(&[spec(307, &[9])], 1, &[1], vec![1])
            .unwrap_err();
        assert_eq!(err, "filter 307 (bzip2) is not built in");
    }
}
