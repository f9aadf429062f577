//! nccopy-rs's command line: netCDF-C 4.9.0 nccopy's options (`getopt` string
//! `k:3467d:sum:c:h:e:rwxg:G:v:V:F:L:M:`, plus `-5` and `-q`), then our long options.
//!
//! The help headings follow the order of the OPTIONS section of nccopy's man page: format,
//! compression and chunking, subsetting, performance.

use std::path::PathBuf;

use clap::{ArgAction, Parser};

const FORMAT: &str = "Output format";
const STORAGE: &str = "Compression and chunking";
const SUBSET: &str = "Subsetting";
const PERFORMANCE: &str = "Performance (accepted as hints)";
const JOIN: &str = "Joining files (more than one infile)";
const OTHER: &str = "Other";

/// The synopsis, as nccopy's man page writes it.
pub const USAGE: &str = "nccopy-rs [-k kind] [-[3|4|5|6|7]] [-d n] [-s] [-c chunkspec] [-u] [-w] [-[v|V] varlist] [-[g|G] grplist] [--dimension dim,min[,max[,stride]]] [-m n] [-h n] [-e n] [-r] [-x] [-F filterspec] [-Ln] [-Mn] [-q] [--explain] [--force] [--threads N] [--part init|I/N|finish] [--join-dim dim] infile [infile...] outfile";

/// Copy a netCDF dataset, optionally converting its format, compression and chunking
/// (netCDF-C nccopy's options).
#[derive(Parser, Debug, Default)]
#[command(
    name = "nccopy-rs",
    bin_name = "nccopy-rs",
    override_usage = USAGE,
    disable_help_flag = true,
    disable_version_flag = true,
    after_help = "More than one infile: the inputs are joined along their record (unlimited) dimension, in the order given, as NCO's ncrcat joins them, and copied as one dataset with every option; an object-storage infile may end in a wildcard (s3://bucket/run/*.nc: listed, sorted by name). infile and outfile are files or NCZarr/Zarr stores (file://PATH#mode=nczarr,file, or #mode=zarr, zip), local or on object storage: s3://bucket/key, gs://, az://, http(s):// (input only); a store there with #mode=nczarr or #mode=zarr (docs/guide.md). NC_IO_STATS=1 prints the remote requests and bytes."
)]
pub struct Args {
    /// Output format: classic, '64-bit offset', cdf5, netCDF-4, 'netCDF-4 classic model' (or nc3, nc6, nc5, nc4, nc7, 1-5).
    #[arg(short = 'k', value_name = "kind", help_heading = FORMAT)]
    pub kind: Option<String>,
    /// Classic output (same as -k classic).
    #[arg(short = '3', help_heading = FORMAT)]
    pub k3: bool,
    /// netCDF-4 output (same as -k netCDF-4).
    #[arg(short = '4', help_heading = FORMAT)]
    pub k4: bool,
    /// CDF-5 output (same as -k cdf5).
    #[arg(short = '5', help_heading = FORMAT)]
    pub k5: bool,
    /// 64-bit offset output (same as -k '64-bit offset').
    #[arg(short = '6', help_heading = FORMAT)]
    pub k6: bool,
    /// netCDF-4 classic model output (same as -k 'netCDF-4 classic model').
    #[arg(short = '7', help_heading = FORMAT)]
    pub k7: bool,
    /// Convert unlimited dimensions to fixed-size dimensions in the output.
    #[arg(short = 'u', help_heading = FORMAT)]
    pub fix_unlimited: bool,

    /// Deflation level for the output variables (0 = none, 9 = most).
    #[arg(short = 'd', value_name = "n", value_parser = clap::value_parser!(u32).range(0..=9), help_heading = STORAGE)]
    pub deflate: Option<u32>,
    /// Add shuffle to deflation.
    #[arg(short = 's', help_heading = STORAGE)]
    pub shuffle: bool,
    /// Chunking: dim/N,... (per dimension), var:N1,N2,..., var:contiguous, var:compact, var: or / (repeatable).
    #[arg(short = 'c', value_name = "chunkspec", action = ArgAction::Append, help_heading = STORAGE)]
    pub chunk: Vec<String>,
    /// Zarr v3 output: shard the variables, `auto` (shards of about 128 MiB of whole chunks) or var:N1,N2,... (shard lengths, multiples of the chunk lengths; repeatable).
    #[arg(long = "shard", value_name = "shardspec", action = ArgAction::Append, help_heading = STORAGE)]
    pub shard: Vec<String>,
    /// Filter for output variables: var1|var2,id,params or none (repeatable).
    #[arg(short = 'F', value_name = "filterspec", action = ArgAction::Append, help_heading = STORAGE)]
    pub filters: Vec<String>,
    /// Quantize float/double variables: var1|var2,algorithm,n or *,algorithm,n; algorithm BitGroom or GranularBitRound (n significant digits) or BitRound (n significant bits), as netCDF-C's _Quantize* attributes (repeatable).
    #[arg(short = 'Q', value_name = "quantizespec", action = ArgAction::Append, help_heading = STORAGE)]
    pub quantize: Vec<String>,
    /// Minimum chunk size in bytes: smaller fixed-size variables stay contiguous under -c dim/N.
    #[arg(short = 'M', value_name = "n", help_heading = STORAGE)]
    pub min_chunk: Option<String>,

    /// Copy data only for these variables; definitions of all are kept.
    #[arg(short = 'v', value_name = "var1,...", action = ArgAction::Append, help_heading = SUBSET)]
    pub data_vars: Vec<String>,
    /// Copy definitions and data only for these variables.
    #[arg(short = 'V', value_name = "var1,...", action = ArgAction::Append, help_heading = SUBSET)]
    pub only_vars: Vec<String>,
    /// Copy data only for variables in these groups; all definitions are kept.
    #[arg(short = 'g', value_name = "grp1,...", action = ArgAction::Append, help_heading = SUBSET)]
    pub data_groups: Vec<String>,
    /// Copy definitions and data only for these groups.
    #[arg(short = 'G', value_name = "grp1,...", action = ArgAction::Append, help_heading = SUBSET)]
    pub only_groups: Vec<String>,

    /// Subset a dimension as NCO's ncks -d, spec dim,min[,max[,stride]]: integers are 0-based indices (negative from the end), values with a decimal point coordinate values (the nearest one alone); empty MIN or MAX is open (repeatable: several ranges of one dimension keep their union; MIN > MAX wraps a longitude).
    #[arg(long = "dimension", visible_alias = "dmn", value_name = "spec", action = ArgAction::Append, allow_hyphen_values = true, help_heading = SUBSET)]
    pub dimension: Vec<String>,

    /// Join the inputs along this dimension (in every group) instead of the record dimension; every other dimension, variable and type must agree.
    #[arg(long = "join-dim", value_name = "dim", help_heading = JOIN)]
    pub join_dim: Option<String>,

    /// Copy buffer size in bytes (K, M, G, T, P suffixes: powers of 1000).
    #[arg(short = 'm', value_name = "n", allow_hyphen_values = true, help_heading = PERFORMANCE)]
    pub buffer: Option<String>,
    /// Chunk cache size in bytes (K, M, G, T, P suffixes).
    #[arg(short = 'h', value_name = "n", allow_hyphen_values = true, help_heading = PERFORMANCE)]
    pub cache_size: Option<String>,
    /// Number of elements the chunk cache holds (K, M, G, T, P suffixes).
    #[arg(short = 'e', value_name = "n", allow_hyphen_values = true, help_heading = PERFORMANCE)]
    pub cache_elems: Option<String>,
    /// Read the whole input into memory first (no effect: the input is read as needed).
    #[arg(short = 'r', help_heading = PERFORMANCE)]
    pub read_whole: bool,
    /// Write the output from memory on close (no effect: it is written beside the destination, then renamed).
    #[arg(short = 'w', help_heading = PERFORMANCE)]
    pub diskless_write: bool,
    /// Per-variable chunk caches, nccopy's undocumented experiment (no effect).
    #[arg(short = 'x', help_heading = PERFORMANCE)]
    pub compute_chunk_caches: bool,
    /// Worker threads (default: one per core, or NCRS_THREADS).
    #[arg(long = "threads", value_name = "N", help_heading = PERFORMANCE)]
    pub threads: Option<String>,

    /// netCDF-C log level (no effect: accepted for scripts).
    #[arg(short = 'L', value_name = "n", help_heading = OTHER)]
    pub log_level: Option<String>,
    /// Do not print warnings.
    #[arg(short = 'q', help_heading = OTHER)]
    pub quiet: bool,
    /// Print, per output variable, the -F rule that fired, the filters, chunks and layout, then a remote input's requests and bytes; copy nothing (outfile optional).
    #[arg(long = "explain", help_heading = OTHER)]
    pub explain: bool,
    /// Replace an existing output file even when it is read-only (never a directory that is not a store).
    #[arg(long = "force", help_heading = OTHER)]
    pub force: bool,
    /// Write a Zarr/NCZarr store (directory or object storage) by parts, one step per call, same options in every call: `init`, then `I/N` for I = 0 to N-1 (0-based; in any order, in parallel, each rerunnable), then `finish` (docs/scale-out.md).
    #[arg(long = "part", value_name = "init|I/N|finish", help_heading = OTHER)]
    pub part: Option<String>,
    /// Print this help.
    #[arg(long = "help", action = ArgAction::Help, help_heading = OTHER)]
    pub help: Option<bool>,
    /// Print the version, the formats and the built-in codecs.
    #[arg(long = "version", help_heading = OTHER)]
    pub version: bool,

    /// The input datasets (files or stores; more than one are joined), the output dataset last.
    #[arg(value_name = "file", num_args = 0..)]
    pub files: Vec<PathBuf>,
}
