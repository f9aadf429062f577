//! The [`Filter`] trait (one configured filter applied to one chunk), its [`FilterContext`]
//! (what HDF5's `set_local` and NCZarr's `modify_parameters` learn from the variable), and
//! [`FilterFactory`], which makes configured filters from a spec's parameters.

use crate::error::FilterError;

/// An HDF5 filter id (1 = deflate, 2 = shuffle, 3 = fletcher32, 4 = szip, 307 = bzip2, ...).
pub type FilterId = u32;

/// Default bound on the size of one decoded chunk (1 GiB), see [`FilterContext::max_decoded`].
pub const DEFAULT_MAX_DECODED: usize = 1 << 30;

/// What a filter knows of the variable: element size and chunk shape. These turn "visible"
/// parameters (what `_Filter` shows) into "working" ones (shuffle's element size, blosc's
/// type size and chunk size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterContext {
    /// Size in bytes of one element of the variable's type (>= 1).
    pub type_size: usize,
    /// Chunk shape in elements (empty when unknown).
    pub chunk_shape: Vec<u64>,
    /// Largest decoded size any filter of the chain may produce; larger claims in a chunk's
    /// framing are errors instead of allocations.
    pub max_decoded: usize,
}

impl FilterContext {
    /// A context for a variable with elements of `type_size` bytes and this chunk shape.
    pub fn new(type_size: usize, chunk_shape: &[u64]) -> FilterContext {
        FilterContext {
            type_size: type_size.max(1),
            chunk_shape: chunk_shape.to_vec(),
            max_decoded: DEFAULT_MAX_DECODED,
        }
    }

    /// The context of variable `v` of `ds`: its type's size and its `_ChunkSizes` (empty when
    /// not set).
    pub fn for_variable(ds: &nc_dataset::Dataset, v: nc_dataset::VarId) -> FilterContext {
        let var = ds.var(v);
        FilterContext::new(
            ds.type_size(var.ty),
            var.storage.chunk_sizes.as_deref().unwrap_or(&[]),
        )
    }

    /// Bytes in one full chunk, if the shape is known and the product fits `usize`.
    pub fn chunk_bytes(&self) -> Option<usize> {
        if self.chunk_shape.is_empty() {
            return None;
        }
        let n = self
            .chunk_shape
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))?
            .checked_mul(self.type_size as u64)?;
        usize::try_from(n).ok()
    }
}

impl Default for FilterContext {
    fn default() -> Self {
        FilterContext::new(1, &[])
    }
}

/// One configured filter: encodes and decodes single chunks.
pub trait Filter: Send + Sync {
    /// HDF5 numeric id, e.g. 1 = deflate.
    fn id(&self) -> FilterId;
    /// Short name (`deflate`, `bzip2`, or the name a plugin gives).
    fn name(&self) -> &str;
    /// Encode `chunk`, replacing the contents of `out`.
    ///
    /// # Errors
    /// When the codec fails.
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError>;
    /// Decode `chunk`, replacing the contents of `out`. Checks every length and checksum;
    /// never panics on corrupt input.
    ///
    /// # Errors
    /// When the chunk is corrupt or truncated, or the codec fails.
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError>;
    /// Told once, when a [`crate::Pipeline`] is assembled, the ids of the filters that encode
    /// before this one (in application order). A codec whose settings depend on what its
    /// input looks like uses it: deflate picks its libdeflate level differently after a byte
    /// shuffle. The default ignores it.
    fn after(&mut self, earlier: &[FilterId]) {
        let _ = earlier;
    }
}

/// Where a filter implementation comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterSource {
    /// Compiled into this crate.
    Builtin,
    /// An HDF5 filter plugin library.
    Plugin(std::path::PathBuf),
    /// Registered by the caller.
    Custom,
}

/// Makes configured [`Filter`]s for one filter id.
pub trait FilterFactory: Send + Sync {
    /// HDF5 numeric id.
    fn id(&self) -> FilterId;
    /// Short name.
    fn name(&self) -> &str;
    /// Zarr (numcodecs) codec ids this filter answers to (`"zlib"`, `"bz2"`...).
    fn codec_ids(&self) -> &[&str] {
        &[]
    }
    /// Where the implementation comes from.
    fn source(&self) -> FilterSource {
        FilterSource::Custom
    }
    /// The working parameters for the visible ones (HDF5 `set_local`): e.g. shuffle's element
    /// size, blosc's type size and chunk size. The default returns the visible ones unchanged.
    fn working_params(&self, visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
        let _ = ctx;
        visible.to_vec()
    }
    /// A configured filter for these (working) parameters.
    ///
    /// # Errors
    /// [`FilterError::BadParams`] when the parameters cannot work.
    fn build(&self, params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError>;
}
