//! The command line: netCDF-C 4.9 ncdump's single-letter options, plus `--help`, `--version`
//! (`-V`) and `--threads`. `-h` keeps its netCDF meaning (header only), so clap's own help and
//! version flags are replaced by long-only ones.

use std::path::PathBuf;

use clap::{ArgAction, Parser};

const SHOW: &str = "What to show";
const LAYOUT: &str = "How data is written";
const ACCESS: &str = "Access and diagnostics";
const TOOL: &str = "This tool";
const REFS: &str = "Virtual Zarr (kerchunk references)";

/// Print a netCDF dataset as CDL text (or NcML with -x, JSON with -j), as netCDF-C's ncdump does.
#[derive(Parser, Debug)]
#[command(
    name = "ncdump-rs",
    bin_name = "ncdump-rs",
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true,
    after_help = "FILE is a file or a store, local or on object storage (s3://bucket/key, gs://, \
                  az://, http(s)://; docs/guide.md). NC_IO_STATS=1 prints the remote requests \
                  and bytes on stderr.\n\nExit status: 0 success, 1 the input cannot be read, \
                  2 a usage error, 3 the output cannot be written."
)]
pub struct Args {
    /// Header and the data of coordinate variables only
    #[arg(short = 'c', help_heading = SHOW)]
    pub coords: bool,
    /// Header only, no data
    #[arg(short = 'h', help_heading = SHOW)]
    pub header: bool,
    /// Data of these variables only (group paths allowed; when repeated, the last one wins)
    #[arg(short = 'v', value_name = "var1,...", action = ArgAction::Append, help_heading = SHOW)]
    pub vars: Vec<String>,
    /// Data and metadata of these groups only (when repeated, the last one wins)
    #[arg(short = 'g', value_name = "grp1,...", action = ArgAction::Append, help_heading = SHOW)]
    pub groups: Vec<String>,
    /// Show a subset of a dimension as NCO's ncks -d, spec dim,min[,max[,stride]]: integers are 0-based indices (negative from the end), values with a decimal point coordinate values (the nearest one alone); empty MIN or MAX is open (repeatable: several ranges of one dimension keep their union; MIN > MAX wraps a longitude)
    #[arg(long = "dimension", visible_alias = "dmn", value_name = "spec", action = ArgAction::Append, allow_hyphen_values = true, help_heading = SHOW)]
    pub dimension: Vec<String>,
    /// Print the kind of netCDF file only (classic, 64-bit offset, netCDF-4, ...)
    #[arg(short = 'k', help_heading = SHOW)]
    pub kind: bool,
    /// Print the extended kind only (format and mode flags)
    #[arg(short = 'K', help_heading = SHOW)]
    pub kind_ext: bool,
    /// Also print special (virtual) attributes: _Format, _Storage, _ChunkSizes, ...
    #[arg(short = 's', help_heading = SHOW)]
    pub special: bool,
    /// With -s: _Filter and _Codecs instead of _Fletcher32, _Shuffle and _DeflateLevel
    #[arg(short = 'F', help_heading = SHOW)]
    pub filters: bool,
    /// Output NcML (XML) instead of CDL (classic data model only)
    #[arg(short = 'x', help_heading = SHOW)]
    pub ncml: bool,
    /// Output JSON instead of CDL: every type, exact values (schema: docs/json.md)
    #[arg(short = 'j', long = "json", help_heading = SHOW)]
    pub json: bool,
    /// -Xp: never print _NCProperties; -XF: print the type of every _FillValue; -Xm: accepted
    #[arg(short = 'X', value_name = "p|F|m", action = ArgAction::Append, help_heading = SHOW)]
    pub extra: Vec<String>,
    /// Print a kerchunk reference file (JSON) instead of CDL: Zarr v2 metadata and the byte
    /// range of every chunk, so that fsspec/xarray read the file as Zarr in place (-v selects
    /// variables; with --dimension, the subset: the input's chunks where it starts on a chunk
    /// boundary with stride 1, else the subset's values inline, its coordinates inline)
    #[arg(
        long = "kerchunk",
        help_heading = REFS,
        conflicts_with_all = [
            "coords", "header", "groups", "kind", "kind_ext", "special", "filters", "ncml",
            "extra", "brief", "full", "line_len", "name", "precision", "sigdigs", "time",
            "iso_time", "json",
        ]
    )]
    pub kerchunk: bool,
    /// With --kerchunk: the URL the references point at (default: the input's absolute path,
    /// or its URL as given)
    #[arg(long = "kerchunk-url", value_name = "URL", requires = "kerchunk", help_heading = REFS)]
    pub kerchunk_url: Option<String>,
    /// With --kerchunk and more than one file: join the files along this dimension (in every
    /// group) instead of the record dimension, as nccopy-rs --join-dim does
    #[arg(long = "join-dim", value_name = "dim", requires = "kerchunk", help_heading = REFS)]
    pub join_dim: Option<String>,
    /// With --kerchunk: json (one file on standard output, the default) or parquet (fsspec's
    /// Parquet reference layout: the directory --kerchunk-out with .zmetadata and
    /// VAR/refs.K.parq files, for millions of references)
    #[arg(
        long = "kerchunk-format",
        value_name = "json|parquet",
        requires = "kerchunk",
        value_parser = ["json", "parquet"],
        help_heading = REFS
    )]
    pub kerchunk_format: Option<String>,
    /// With --kerchunk-format parquet: the directory (or object-storage prefix) to write,
    /// under a temporary name renamed into place when complete
    #[arg(long = "kerchunk-out", value_name = "DIR", requires = "kerchunk", help_heading = REFS)]
    pub kerchunk_out: Option<String>,
    /// With --kerchunk-format parquet: references per Parquet file (default 10000, as fsspec)
    #[arg(
        long = "kerchunk-record-size",
        value_name = "N",
        requires = "kerchunk",
        help_heading = REFS
    )]
    pub kerchunk_record_size: Option<String>,
    /// Brief index annotations in the data, C (0-based) or Fortran (1-based) order
    #[arg(short = 'b', value_name = "c|f", help_heading = LAYOUT)]
    pub brief: Option<String>,
    /// Full index annotations after every value, C or Fortran order
    #[arg(short = 'f', value_name = "c|f", help_heading = LAYOUT)]
    pub full: Option<String>,
    /// Maximum line length in the data section (default 80, at least 10)
    #[arg(short = 'l', value_name = "len", help_heading = LAYOUT)]
    pub line_len: Option<String>,
    /// Name printed after "netcdf" (default: the file name without its extension)
    #[arg(short = 'n', value_name = "name", help_heading = LAYOUT)]
    pub name: Option<String>,
    /// Significant digits of float values, then of double values (defaults 7 and 15)
    #[arg(short = 'p', value_name = "fdig[,ddig]", help_heading = LAYOUT)]
    pub precision: Option<String>,
    /// Deprecated spelling of -p
    #[arg(short = 'd', value_name = "fdig[,ddig]", help_heading = LAYOUT)]
    pub sigdigs: Option<String>,
    /// Time data of CF time variables as date-time strings
    #[arg(short = 't', help_heading = LAYOUT)]
    pub time: bool,
    /// As -t, with an ISO-8601 'T' between date and time
    #[arg(short = 'i', help_heading = LAYOUT)]
    pub iso_time: bool,
    /// Client-side caching of variables for DAP URLs (netCDF-C's [cache]: one request for all)
    #[arg(short = 'w', help_heading = ACCESS)]
    pub cache: bool,
    /// netCDF-C log level (accepted, no effect)
    #[arg(short = 'L', value_name = "n", help_heading = ACCESS)]
    pub log_level: Option<String>,
    /// Print this help
    #[arg(long = "help", action = ArgAction::Help, help_heading = TOOL)]
    pub help: Option<bool>,
    /// Print the version, formats, codecs and plugin path
    #[arg(short = 'V', long = "version", help_heading = TOOL)]
    pub version: bool,
    /// Worker threads (default: one per core, or NCRS_THREADS)
    #[arg(long = "threads", value_name = "N", help_heading = TOOL)]
    pub threads: Option<String>,
    /// The dataset: a file path, format recognised by content
    pub file: Option<PathBuf>,
    /// With --kerchunk: more files, referenced with the first as one dataset joined along
    /// the record dimension (kerchunk's MultiZarrToZarr), in the order given
    #[arg(value_name = "more", help_heading = REFS)]
    pub more: Vec<PathBuf>,
}

/// ncdump 4.9.0's usage text, printed to stderr on a usage error (as ncdump prints it).
pub const USAGE: &str = "ncdump [-c|-h] [-v ...] [[-b|-f] [c|f]] [-l len] [-n name] [-p n[,n]] [-k] [-x] [-s] [-t|-i] [-g ...] [-w] [-F] [-Ln] file
  [-c]             Coordinate variable data and header information
  [-h]             Header information only, no data
  [-v var1[,...]]  Data for variable(s) <var1>,... only
  [-b [c|f]]       Brief annotations for C or Fortran indices in data
  [-f [c|f]]       Full annotations for C or Fortran indices in data
  [-l len]         Line length maximum in data section (default 80)
  [-n name]        Name for netCDF (default derived from file name)
  [-p n[,n]]       Display floating-point values with less precision
  [-k]             Output kind of netCDF file
  [-s]             Output special (virtual) attributes
  [-t]             Output time data as date-time strings
  [-i]             Output time data as date-time strings with ISO-8601 'T' separator
  [-g grp1[,...]]  Data and metadata for group(s) <grp1>,... only
  [-w]             With client-side caching of variables for DAP URLs
  [-x]             Output XML (NcML) instead of CDL
  [-F]             Output _Filter and _Codecs instead of _Fletcher32, _Shuffle, and _Deflate
  [-Xp]            Unconditionally suppress output of the properties attribute
  [-Ln]            Set log level to n (>= 0); ignore if logging not enabled.
  file             Name of netCDF file (or URL if DAP access enabled)
";
