//! What a copy is asked ([`CopyOptions`], nccopy's options) and what it reports besides
//! the data ([`CopyReport`]).

use nc_dataset::Format;

use crate::ProgressFn;

/// What to copy and how (nccopy's options, as far as this backend set supports them).
#[derive(Debug, Clone, Default)]
pub struct CopyOptions {
    /// Output format; `None` = same as the input.
    pub format: Option<Format>,
    /// `-u`: make unlimited dimensions fixed.
    pub fix_unlimited: bool,
    /// `-v`: copy data only for these variables (names or full paths); all definitions are kept.
    pub data_vars: Option<Vec<String>>,
    /// `-V`: copy definitions and data only for these variables.
    pub only_vars: Option<Vec<String>>,
    /// `-g`: copy data only for variables in these groups (full paths such as `/g/h`, `/` for
    /// the root, or plain names matching every group so named); all definitions are kept.
    pub data_groups: Option<Vec<String>>,
    /// `-G`: copy only these groups (same names as `data_groups`), with the root group's
    /// definitions always; a listed group's parent must be listed too (or be the root).
    pub only_groups: Option<Vec<String>>,
    /// `--dimension` subsets (NCO's `ncks -d`): the copy reads the input through
    /// [`nc_dataset::subset::subset`]'s view, each named dimension shrunk to its selection.
    pub dimensions: Vec<nc_dataset::subset::DimSpec>,
    /// `-F` options in command-line order.
    pub filters: Vec<String>,
    /// `-d n`: deflate level.
    pub deflate: Option<u32>,
    /// `-s`: shuffle with deflate.
    pub shuffle: bool,
    /// `-c` chunking specs (`dim/N,…`, `var:N1,N2`, `var:` contiguous, `/` contiguous for all).
    pub chunks: Vec<String>,
    /// `--shard` specs for a Zarr v3 output: `auto` (every chunked variable, shards of about
    /// 128 MiB) or `var:N1,N2,…` (shard lengths, whole chunks).
    pub shards: Vec<String>,
    /// `-Q` specs: quantize float and double variables (`VAR,ALGORITHM,N`, `*` for all; see
    /// `quantize::apply_specs`).
    pub quantize: Vec<String>,
    /// `-M n`: non-record variables smaller than this many bytes stay contiguous when `-c`
    /// chunks by dimension (`None`: nccopy's default, 8192).
    pub min_chunk_bytes: Option<u64>,
    /// `-m n`: copy buffer size in bytes. Accepted as a hint: the writers read their input in
    /// slabs of their own fixed size (about 4 MiB classic, 2^20 elements netCDF-4).
    pub buffer_size: Option<u64>,
    /// `-h n`: chunk cache size in bytes. Accepted as a hint: the readers keep no chunk cache.
    pub cache_size: Option<u64>,
    /// `-e n`: chunk cache element count. Accepted as a hint, as `cache_size`.
    pub cache_elems: Option<u64>,
    /// Called as data is read for the output (from several threads at once).
    pub progress: Option<ProgressFn>,
    /// Replace an existing output file the user may not write (`--force`).
    pub force: bool,
    /// `--part`: write the output store by parts, this call doing one step (init, one part,
    /// finish; see [`nc_dispatch::FanoutStep`]). Only for NCZarr / Zarr directory and object-storage
    /// outputs.
    pub part: Option<nc_dispatch::FanoutStep>,
}
/// What a copy did besides copying: the per-variable filter decisions and warnings.
#[derive(Debug, Clone, Default)]
pub struct CopyReport {
    /// Warnings for the user (unfilterable variables, options matching nothing, dropped settings).
    pub warnings: Vec<String>,
    /// One line per output variable: the -F rule row that fired, the filter chain, the chunk
    /// shape and the storage layout (see [`explain`]).
    pub explain: Vec<String>,
    /// With [`CopyOptions::part`]: why the step wrote nothing (it had been done already).
    pub unchanged: Option<String>,
}
