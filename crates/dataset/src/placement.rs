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
