//! nccopy-rs: copy a netCDF dataset, optionally converting its format (netCDF-C nccopy's options).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;
use nc_dataset::Format;

/// Copy a netCDF dataset (options as netCDF-C's nccopy).
#[derive(Parser, Debug)]
#[command(name = "nccopy", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// Output format kind (classic, '64-bit offset', cdf5, netCDF-4, 'netCDF-4 classic model', or a number).
    #[arg(short = 'k', value_name = "kind")]
    kind: Option<String>,
    /// Classic output.
    #[arg(short = '3')]
    k3: bool,
    /// netCDF-4 output.
    #[arg(short = '4')]
    k4: bool,
    /// CDF-5 output.
    #[arg(short = '5')]
    k5: bool,
    /// 64-bit offset output.
    #[arg(short = '6')]
    k6: bool,
    /// netCDF-4 classic model output.
    #[arg(short = '7')]
    k7: bool,
    /// Deflate level for the output (0 = none, 9 = max).
    #[arg(short = 'd', value_name = "n")]
    deflate: Option<u32>,
    /// Add shuffle to deflation.
    #[arg(short = 's')]
    shuffle: bool,
    /// Chunking spec.
    #[arg(short = 'c', value_name = "chunkspec", action = clap::ArgAction::Append)]
    chunk: Vec<String>,
    /// Convert unlimited dimensions to fixed size.
    #[arg(short = 'u')]
    fix_unlimited: bool,
    /// Write the whole output from memory on close (accepted; no effect).
    #[arg(short = 'w')]
    diskless_write: bool,
    /// Include data only for these variables (definitions of all are kept).
    #[arg(short = 'v', value_name = "var1,...", action = clap::ArgAction::Append)]
    data_vars: Vec<String>,
    /// Include definitions and data only for these variables.
    #[arg(short = 'V', value_name = "var1,...", action = clap::ArgAction::Append)]
    only_vars: Vec<String>,
    /// Include data only for variables in these groups.
    #[arg(short = 'g', value_name = "grp1,...", action = clap::ArgAction::Append)]
    data_groups: Vec<String>,
    /// Include definitions and data only for variables in these groups.
    #[arg(short = 'G', value_name = "grp1,...", action = clap::ArgAction::Append)]
    only_groups: Vec<String>,
    /// Copy buffer size in bytes (K, M, G suffixes).
    #[arg(short = 'm', value_name = "n")]
    buffer: Option<String>,
    /// Chunk cache size in bytes.
    #[arg(short = 'h', value_name = "n")]
    cache_size: Option<String>,
    /// Chunk cache element count.
    #[arg(short = 'e', value_name = "n")]
    cache_elems: Option<String>,
    /// Read the whole input into memory first (accepted; no effect).
    #[arg(short = 'r')]
    read_whole: bool,
    /// Filter spec for output variables (repeatable).
    #[arg(short = 'F', value_name = "filterspec", action = clap::ArgAction::Append)]
    filters: Vec<String>,
    /// Log level (accepted; no effect).
    #[arg(short = 'L', value_name = "n")]
    log_level: Option<String>,
    /// Minimum chunk size in bytes.
    #[arg(short = 'M', value_name = "n")]
    min_chunk: Option<String>,
    /// Silence warnings.
    #[arg(short = 'q')]
    quiet: bool,
    /// Input dataset.
    infile: Option<PathBuf>,
    /// Output dataset.
    outfile: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("nccopy: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nccopy: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn split_list(v: &[String]) -> Option<Vec<String>> {
    if v.is_empty() {
        return None;
    }
    Some(
        v.iter()
            .flat_map(|s| s.split(','))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

fn run(args: Args) -> anyhow::Result<()> {
    let (Some(infile), Some(outfile)) = (args.infile.clone(), args.outfile.clone()) else {
        bail!("usage: nccopy [-k kind] [-[3|4|5|6|7]] [-d n] [-s] [-c chunkspec] [-u] [-w] [-[v|V] varlist] [-[g|G] grplist] [-m n] [-h n] [-e n] [-r] [-F filterspec] [-Ln] [-Mn] infile outfile");
    };
    let shortcuts = [
        (args.k3, Format::Classic),
        (args.k4, Format::Netcdf4),
        (args.k5, Format::Cdf5),
        (args.k6, Format::Offset64),
        (args.k7, Format::Netcdf4Classic),
    ];
    let format =
        nc_dispatch::asked_format(args.kind.as_deref(), &shortcuts).map_err(anyhow::Error::msg)?;
    if !args.data_groups.is_empty() || !args.only_groups.is_empty() {
        bail!("-g/-G (group selection) is not supported yet");
    }
    if let (Ok(a), Ok(b)) = (
        std::fs::canonicalize(&infile),
        std::fs::canonicalize(&outfile),
    ) {
        if a == b {
            bail!(
                "{}: output is the input file; refusing to overwrite it",
                outfile.display()
            );
        }
    }
    let input = nc_dispatch::open(&infile).context("cannot open input")?;
    let opts = nc_dispatch::CopyOptions {
        format,
        fix_unlimited: args.fix_unlimited,
        data_vars: split_list(&args.data_vars),
        only_vars: split_list(&args.only_vars),
        filters: args.filters.clone(),
        deflate: args.deflate,
        shuffle: args.shuffle,
        chunks: args.chunk.clone(),
    };
    let report = nc_dispatch::copy(&input, &outfile, &opts).context("cannot write output")?;
    if !args.quiet {
        for w in &report.warnings {
            eprintln!("nccopy: warning: {w}");
        }
    }
    Ok(())
}
