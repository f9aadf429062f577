//! Where a variable's stored bytes are: the chunk-location model that readers of files with
//! byte-addressable data (classic, netCDF-4/HDF5) fill in through
//! [`crate::DataSource::placement`], and that a writer of references (virtual Zarr, kerchunk)
//! turns into pointers at those bytes instead of a copy of them.
//!
//! The model says only what a reference needs: the chunk shape, the element layout with its
//! byte order, the filter chain every referenced chunk went through, what an unwritten element
//! reads as, and per stored chunk its byte range. It knows no output format; the mapping to
//! Zarr dtypes and codecs is the writer's.

use std::path::PathBuf;

use crate::FilterSpec;

/// Where a variable's values are stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// In chunks of one file, each a byte range (or a chunk to be re-encoded, see
    /// [`ChunkBytes::Decoded`]).
    Chunks(ChunkMap),
    /// Not in byte ranges of their own: inside a header (HDF5 compact storage), assembled from
    /// other datasets (virtual datasets), spread over several external files, packed in fewer
    /// bits than their type, or references into a heap (variable-length data). The values can
    /// only be read through [`crate::DataSource::read`]; `why` says which, for messages.
    Elsewhere {
        /// What keeps the bytes from being referenced, e.g. "compact storage (inside the
        /// object header)".
        why: String,
    },
}

/// A chunked (or one-chunk) layout of stored elements.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkMap {
    /// How one stored element is laid out.
    pub elem: StoredType,
    /// Chunk shape in elements, one length (at least 1) per dimension; the whole variable for
    /// unchunked storage; empty for a scalar. Edge chunks are stored whole (padded).
    pub chunk: Vec<u64>,
    /// Filters every [`ChunkBytes::Range`] chunk went through, in the order they were applied
    /// (HDF5 filter ids and stored parameters).
    pub filters: Vec<FilterSpec>,
    /// What an element of a chunk that is not listed reads as, as stored bytes (one element);
    /// `None`: zero bytes.
    pub fill: Option<Vec<u8>>,
    /// The file holding the bytes when it is not the dataset's own (an HDF5 external link's
    /// target, an external raw data file); `None`: the dataset's own file.
    pub file: Option<PathBuf>,
    /// The stored chunks. A chunk not among them was never written: every element reads as
    /// [`ChunkMap::fill`].
    pub chunks: StoredChunks,
}

/// The stored chunks of a [`ChunkMap`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredChunks {
    /// Listed one by one, in row-major order of their grid index.
    List(Vec<StoredChunk>),
    /// `count` chunks along the first dimension (grid index `[i, 0, 0, ...]`: the chunk spans
    /// the other dimensions whole), chunk `i` being `len` bytes at `offset + i * stride`, with
    /// no filters: the records of a classic record variable, without a list as long as the
    /// file has records.
    Strided {
        /// Byte offset of chunk 0.
        offset: u64,
        /// Bytes from one chunk to the next.
        stride: u64,
        /// Bytes of each chunk.
        len: u64,
        /// Number of chunks.
        count: u64,
    },
}

impl StoredChunks {
    /// Number of stored chunks.
    pub fn len(&self) -> u64 {
        match self {
            StoredChunks::List(l) => l.len() as u64,
            StoredChunks::Strided { count, .. } => *count,
        }
    }

    /// True when no chunk is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One stored chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredChunk {
    /// Grid index: the chunk's first element along each dimension divided by
    /// [`ChunkMap::chunk`] (empty for a scalar).
    pub index: Vec<u64>,
    /// Where its bytes are.
    pub bytes: ChunkBytes,
}

/// The bytes of one stored chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkBytes {
    /// `len` bytes at byte `offset` from the start of the file, with [`ChunkMap::filters`]
    /// applied.
    Range {
        /// Offset from the start of the file (an HDF5 user block included).
        offset: u64,
        /// Stored (filtered) length.
        len: u64,
    },
    /// Stored, but not as the other chunks are (HDF5 skipped some of its filters, or part of it
    /// lies beyond the stored extent of a dimension that grew since and must read as fill): a
    /// reference must carry its values, read through [`crate::DataSource`] and encoded with
    /// [`ChunkMap::filters`].
    Decoded,
}

/// The layout of one stored element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredType {
    /// A two's complement or unsigned integer of `size` bytes (1, 2, 4 or 8).
    Int {
        /// Bytes.
        size: usize,
        /// Signed.
        signed: bool,
        /// Stored most significant byte first.
        big_endian: bool,
    },
    /// An IEEE 754 float of `size` bytes (2, 4 or 8).
    Float {
        /// Bytes.
        size: usize,
        /// Stored most significant byte first.
        big_endian: bool,
    },
    /// `size` bytes of text, NUL padded (netCDF char is one byte).
    Text {
        /// Bytes.
        size: usize,
    },
    /// `size` uninterpreted bytes (an opaque type).
    Opaque {
        /// Bytes.
        size: usize,
    },
    /// Fields at byte offsets inside an element of `size` bytes.
    Compound {
        /// Bytes of one element, padding included.
        size: usize,
        /// Fields in definition order.
        fields: Vec<StoredField>,
    },
}

/// One field of a [`StoredType::Compound`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredField {
    /// Field name.
    pub name: String,
    /// Byte offset inside the element.
    pub offset: usize,
    /// Array dimensions of the field (empty for a scalar field).
    pub dims: Vec<usize>,
    /// One element of the field.
    pub ty: StoredType,
}

impl StoredType {
    /// Bytes of one element.
    pub fn size(&self) -> usize {
        match self {
            StoredType::Int { size, .. }
            | StoredType::Float { size, .. }
            | StoredType::Text { size }
            | StoredType::Opaque { size }
            | StoredType::Compound { size, .. } => *size,
        }
    }
}

/// The size, in bytes, a chunk of whole records aims at when records lie back to back (a
/// classic file's single record variable): a few MiB, so a reference file has one entry per
/// chunk instead of one per record, and a reader fetches little more than it asks for.
pub const RECORD_CHUNK_BYTES: u64 = 8 << 20;

impl ChunkMap {
    /// For records (chunks along the first dimension, [`StoredChunks::Strided`]) that lie
    /// back to back, so that any whole number of them is one byte range: the bytes of one
    /// record and the number of records. `None` for a listed map, or records with a gap
    /// between them (a classic file with several record variables interleaves them).
    pub fn back_to_back_records(&self) -> Option<(u64, u64)> {
        let StoredChunks::Strided {
            stride, len, count, ..
        } = self.chunks
        else {
            return None;
        };
        let per = *self.chunk.first()?;
        if per == 0 || !len.is_multiple_of(per) || (count > 1 && stride != len) {
            return None;
        }
        Some((len / per, count.checked_mul(per)?))
    }

    /// The same records in chunks of `per` records: the map itself when its chunks already
    /// hold `per`, else, for records back to back ([`ChunkMap::back_to_back_records`]) whose
    /// count `per` divides, chunks of `per` records (a Zarr grid is regular, so every chunk
    /// is whole). `None` when the records cannot be grouped so.
    pub fn with_records_per_chunk(&self, per: u64) -> Option<ChunkMap> {
        if self.chunk.first() == Some(&per) {
            return Some(self.clone());
        }
        let StoredChunks::Strided { offset, .. } = self.chunks else {
            return None;
        };
        let (rec, records) = self.back_to_back_records()?;
        if per == 0 || !records.is_multiple_of(per) {
            return None;
        }
        let len = rec.checked_mul(per)?;
        let mut chunk = self.chunk.clone();
        chunk[0] = per;
        Some(ChunkMap {
            chunk,
            chunks: StoredChunks::Strided {
                offset,
                stride: len,
                len,
                count: records / per,
            },
            ..self.clone()
        })
    }
}

/// The records per chunk for `records` records of `rec` bytes each lying back to back: the
/// largest divisor of `records` whose chunk stays within [`RECORD_CHUNK_BYTES`] (1 when
/// even one record is larger, or there are none). A divisor, because a Zarr chunk grid is
/// regular and an edge chunk is stored whole: a last chunk of fewer records would reach
/// past the variable's bytes.
pub fn records_per_chunk(rec: u64, records: u64) -> u64 {
    if rec == 0 || records == 0 {
        return 1;
    }
    let most = (RECORD_CHUNK_BYTES / rec).clamp(1, records);
    (1..=most)
        .rev()
        .find(|k| records.is_multiple_of(*k))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn strided(per: u64, offset: u64, stride: u64, len: u64, count: u64) -> ChunkMap {
        ChunkMap {
            elem: StoredType::Float {
                size: 4,
                big_endian: true,
            },
            chunk: vec![per, 3],
            filters: Vec::new(),
            fill: None,
            file: None,
            chunks: StoredChunks::Strided {
                offset,
                stride,
                len,
                count,
            },
        }
    }

    #[test]
    fn records_back_to_back_regroup_into_any_divisor_of_their_count() {
        // 12 records of 12 bytes at 100, in 2 chunks of 6
        let m = strided(6, 100, 72, 72, 2);
        assert_eq!(m.back_to_back_records(), Some((12, 12)));
        let four = m.with_records_per_chunk(4).unwrap();
        assert_eq!(four.chunk, vec![4, 3]);
        assert_eq!(
            four.chunks,
            StoredChunks::Strided {
                offset: 100,
                stride: 48,
                len: 48,
                count: 3
            }
        );
        let one = m.with_records_per_chunk(1).unwrap();
        assert_eq!(
            one.chunks,
            StoredChunks::Strided {
                offset: 100,
                stride: 12,
                len: 12,
                count: 12
            }
        );
        assert_eq!(m.with_records_per_chunk(6).unwrap(), m);
        // 5 does not divide 12: the last chunk would reach past the records
        assert_eq!(m.with_records_per_chunk(5), None);
        assert_eq!(m.with_records_per_chunk(0), None);
    }

    #[test]
    fn interleaved_records_keep_one_per_chunk() {
        // a record of 12 bytes every 20 (another record variable between)
        let m = strided(1, 100, 20, 12, 5);
        assert_eq!(m.back_to_back_records(), None);
        assert_eq!(m.with_records_per_chunk(5), None);
        assert_eq!(m.with_records_per_chunk(1).unwrap(), m);
        // one record: nothing between records
        assert_eq!(
            strided(1, 100, 20, 12, 1).back_to_back_records(),
            Some((12, 1))
        );
    }

    #[test]
    fn records_per_chunk_is_the_largest_divisor_within_the_target() {
        assert_eq!(records_per_chunk(24, 12), 12);
        // 1 MiB records: at most 8 per chunk; 8 divides 24
        assert_eq!(records_per_chunk(1 << 20, 24), 8);
        // 7 does not divide 21 under the 8 allowed: 7 does
        assert_eq!(records_per_chunk(1 << 20, 21), 7);
        // a prime count above the target: one record per chunk
        assert_eq!(records_per_chunk(1 << 20, 13), 1);
        assert_eq!(records_per_chunk(RECORD_CHUNK_BYTES + 1, 4), 1);
        assert_eq!(records_per_chunk(8, 0), 1);
        assert_eq!(records_per_chunk(0, 10), 1);
    }
}
