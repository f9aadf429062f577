//! The command line of ncgen-rs: netCDF-C ncgen's options (`getopt` string
//! `134567bcdD:fhHk:l:M:no:Pv:xL:N:B:W:` in ncgen/main.c of 4.9.0), plus `--version`, `-V`,
//! `--threads` and `--force`.

use std::path::PathBuf;

use clap::{ArgAction, Parser};

const FORMAT: &str = "Output format";
const OUTPUT: &str = "Output language and file";
const CONTENT: &str = "What is written";
const DEBUG: &str = "Debugging";
const INFO: &str = "Information";
const EXTRA: &str = "ncgen-rs extensions";

/// Generate a netCDF file, or a C program that creates it, from a CDL description
/// (options as netCDF-C's ncgen).
#[derive(Parser, Debug)]
#[command(
    name = "ncgen-rs",
    disable_help_flag = true,
    disable_version_flag = true,
    after_help = "With no -b, -o, -l, -k or format flag, ncgen-rs only checks the CDL. \
                  Use - as the file name to read standard input."
)]
pub struct Args {
    /// Same as -k classic (old form of -3).
    #[arg(short = '1', help_heading = FORMAT)]
    pub k1: bool,
    /// Same as -k classic.
    #[arg(short = '3', help_heading = FORMAT)]
    pub k3: bool,
    /// Same as -k netCDF-4.
    #[arg(short = '4', help_heading = FORMAT)]
    pub k4: bool,
    /// Same as -k cdf5 (64-bit data).
    #[arg(short = '5', help_heading = FORMAT)]
    pub k5: bool,
    /// Same as -k '64-bit offset'.
    #[arg(short = '6', help_heading = FORMAT)]
    pub k6: bool,
    /// Same as -k 'netCDF-4 classic model'.
    #[arg(short = '7', help_heading = FORMAT)]
    pub k7: bool,
    /// Format: classic, '64-bit offset', cdf5, netCDF-4, 'netCDF-4 classic model', nc3..nc7, 1..5 (-v is an old alias).
    #[arg(
        short = 'k',
        short_alias = 'v',
        value_name = "kind",
        help_heading = FORMAT
    )]
    pub kind: Option<String>,

    /// Create a (binary) netCDF file (named after the CDL file unless -o).
    #[arg(short = 'b', help_heading = OUTPUT)]
    pub binary: bool,
    /// Generate C source code on standard output (old form of -l c).
    #[arg(short = 'c', help_heading = OUTPUT)]
    pub c_code: bool,
    /// Generate Fortran 77 source code (old form of -l f77; not supported).
    #[arg(short = 'f', help_heading = OUTPUT)]
    pub fortran: bool,
    /// Output language: b (netCDF file) or c (C program on standard output); f77, java: not supported.
    #[arg(short = 'l', value_name = "b|c|f77|java", help_heading = OUTPUT)]
    pub lang: Option<String>,
    /// Name of the netCDF file to write (with -l c: the file the program creates).
    #[arg(short = 'o', value_name = "outfile", help_heading = OUTPUT)]
    pub out: Option<PathBuf>,
    /// Like -b, with the old '.cdf' extension for the default file name.
    #[arg(short = 'n', help_heading = OUTPUT)]
    pub cdf_ext: bool,
    /// Name of the main function of generated code (default main).
    #[arg(short = 'M', value_name = "name", help_heading = OUTPUT)]
    pub main_name: Option<String>,
    /// Create the file in memory, then write it (no effect: ncgen-rs always writes a temporary file and renames it).
    #[arg(short = 'P', help_heading = OUTPUT)]
    pub diskless: bool,

    /// Output the header only; ignore the data section.
    #[arg(short = 'H', help_heading = CONTENT)]
    pub header_only: bool,
    /// Dataset name to use instead of the one in the CDL.
    #[arg(short = 'N', value_name = "datasetname", help_heading = CONTENT)]
    pub name: Option<String>,
    /// Do not write fill values into unwritten data ("no fill" mode).
    #[arg(short = 'x', help_heading = CONTENT)]
    pub no_fill: bool,
    /// Generated code writes a variable of at most this many elements with one nc_put_var (default 1024).
    #[arg(short = 'W', value_name = "maxwholevarsize", help_heading = CONTENT)]
    pub whole_var_size: Option<String>,
    /// Ignored, kept for compatibility (as netCDF-C's ncgen does).
    #[arg(short = 'B', value_name = "n", help_heading = CONTENT)]
    pub buffer: Option<String>,

    /// Debug output (same as -D 1; ncgen-rs has none: ignored with a warning).
    #[arg(short = 'd', help_heading = DEBUG)]
    pub debug: bool,
    /// Debug level (ncgen-rs has no debug output: ignored with a warning).
    #[arg(short = 'D', value_name = "debuglevel", help_heading = DEBUG)]
    pub debug_level: Option<String>,
    /// netCDF library log level (ncgen-rs has no library log: ignored with a warning).
    #[arg(short = 'L', value_name = "loglevel", help_heading = DEBUG)]
    pub log_level: Option<String>,

    /// Print this help and exit.
    #[arg(short = 'h', long = "help", action = ArgAction::Help, help_heading = INFO)]
    pub help: Option<bool>,
    /// Print the version, formats, codecs and plugin path, and exit.
    #[arg(short = 'V', long = "version", help_heading = INFO)]
    pub version: bool,

    /// Worker threads (default: NCRS_THREADS, else one per core).
    #[arg(long = "threads", value_name = "N", help_heading = EXTRA)]
    pub threads: Option<String>,
    /// Replace an existing output file even when it is read-only (never a directory).
    #[arg(long = "force", help_heading = EXTRA)]
    pub force: bool,

    /// The CDL file (- for standard input).
    #[arg(value_name = "file")]
    pub input: Option<PathBuf>,
}

/// The full clap command of ncgen-rs (for the binary, the man page and shell completions).
pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}
