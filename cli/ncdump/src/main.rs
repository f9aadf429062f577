//! ncdump-rs: netCDF dataset → CDL text, with netCDF-C ncdump's options.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

mod options;

/// Print a netCDF dataset as CDL (options as netCDF-C's ncdump).
#[derive(Parser, Debug)]
#[command(name = "ncdump", disable_help_flag = true, disable_version_flag = true)]
pub(crate) struct Args {
    /// Coordinate variable data and header information.
    #[arg(short = 'c')]
    pub coords: bool,
    /// Header information only, no data.
    #[arg(short = 'h')]
    pub header: bool,
    /// Data for these variables only (comma-separated; group paths allowed).
    #[arg(short = 'v', value_name = "var1,...", action = clap::ArgAction::Append)]
    pub vars: Vec<String>,
    /// Brief annotations for C or Fortran indices in data.
    #[arg(short = 'b', value_name = "c|f")]
    pub brief: Option<String>,
    /// Full annotations for C or Fortran indices in data.
    #[arg(short = 'f', value_name = "c|f")]
    pub full: Option<String>,
    /// Line length maximum in data section (default 80).
    #[arg(short = 'l', value_name = "len")]
    pub line_len: Option<String>,
    /// Name for the dataset (default derived from the file name).
    #[arg(short = 'n', value_name = "name")]
    pub name: Option<String>,
    /// Display floating-point values with less precision: float digits[,double digits].
    #[arg(short = 'p', value_name = "n[,n]")]
    pub precision: Option<String>,
    /// Output the kind of netCDF file.
    #[arg(short = 'k')]
    pub kind: bool,
    /// Output the extended kind (format and mode flags).
    #[arg(short = 'K')]
    pub kind_ext: bool,
    /// Output special (virtual) attributes.
    #[arg(short = 's')]
    pub special: bool,
    /// Output time data as date-time strings.
    #[arg(short = 't')]
    pub time: bool,
    /// Output time data as date-time strings with ISO-8601 'T' separator.
    #[arg(short = 'i')]
    pub iso_time: bool,
    /// Data and metadata for these groups only.
    #[arg(short = 'g', value_name = "grp1,...", action = clap::ArgAction::Append)]
    pub groups: Vec<String>,
    /// Client-side caching for DAP URLs (accepted, no effect).
    #[arg(short = 'w')]
    pub cache: bool,
    /// Output XML (NcML) instead of CDL.
    #[arg(short = 'x')]
    pub ncml: bool,
    /// Output _Filter and _Codecs instead of _Fletcher32, _Shuffle and _DeflateLevel (with -s).
    #[arg(short = 'F')]
    pub filters: bool,
    /// -Xp: never print _NCProperties; -Xm: read the file into memory first (no effect here).
    #[arg(short = 'X', value_name = "p|m", action = clap::ArgAction::Append)]
    pub extra: Vec<String>,
    /// Log level (accepted, no effect).
    #[arg(short = 'L', value_name = "n")]
    pub log_level: Option<String>,
    /// The dataset: a file path (format recognised by content).
    pub file: Option<PathBuf>,
}

const USAGE: &str = "ncdump [-c|-h] [-v ...] [[-b|-f] [c|f]] [-l len] [-n name] [-p n[,n]] [-k] [-x] [-s] [-t|-i] [-g ...] [-w] [-F] [-Ln] file
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

fn main() -> ExitCode {
    nc_dispatch::tune_allocator();
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ncdump: {}", e.kind());
            eprint!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    let Some(file) = args.file.clone() else {
        // netCDF-C prints the usage and exits 0 when no file is given.
        eprint!("{USAGE}");
        return ExitCode::SUCCESS;
    };
    match run(&args, &file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("ncdump: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The dataset name ncdump derives from a path: the last component without its last extension.
fn name_from_path(path: &Path) -> String {
    let s = path.to_string_lossy();
    let s = s.split('#').next().unwrap_or("");
    let s = s.strip_prefix("file://").unwrap_or(s);
    let s = s.trim_end_matches('/');
    let base = s.rsplit('/').next().unwrap_or(s);
    match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_string(),
        _ => base.to_string(),
    }
}

fn run(args: &Args, file: &Path) -> anyhow::Result<()> {
    let opened = nc_dispatch::open(file)?;
    for w in opened.warnings() {
        eprintln!("ncdump: warning: {}: {w}", file.display());
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if args.kind {
        let f = opened
            .dataset()
            .format
            .map(|f| f.kind_name())
            .unwrap_or("unknown");
        writeln!(out, "{f}")?;
        out.flush()?;
        return Ok(());
    }
    if args.kind_ext {
        writeln!(out, "{}", opened.extended_kind())?;
        out.flush()?;
        return Ok(());
    }
    if args.ncml {
        nc_cdl::print::print_ncml(opened.dataset(), &file.to_string_lossy(), &mut out)
            .context("writing NcML")?;
        out.flush()?;
        return Ok(());
    }
    let mut opts = options::dump_options(args)?;
    if opts.name.is_none() {
        opts.name = Some(name_from_path(file));
    }
    nc_cdl::print(opened.dataset(), opened.source(), &opts, &mut out).context("writing CDL")?;
    out.flush()?;
    Ok(())
}
