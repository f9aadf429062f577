//! ncgen-rs: CDL text → netCDF dataset, with netCDF-C ncgen's options.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;
use nc_dataset::{Format, InMemory};

/// Generate a netCDF file from a CDL description (options as netCDF-C's ncgen).
#[derive(Parser, Debug)]
#[command(name = "ncgen", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// Create a (binary) netCDF file.
    #[arg(short = 'b')]
    binary: bool,
    /// Generate C code (not supported).
    #[arg(short = 'c')]
    c_code: bool,
    /// Generate Fortran 77 code (not supported).
    #[arg(short = 'f')]
    fortran: bool,
    /// Output format kind: classic, 64-bit offset, cdf5, netCDF-4, netCDF-4 classic model, or a number.
    #[arg(short = 'k', alias = "v", value_name = "kind")]
    kind: Option<String>,
    /// Same as -k classic.
    #[arg(short = '3')]
    k3: bool,
    /// Same as -k netCDF-4.
    #[arg(short = '4')]
    k4: bool,
    /// Same as -k cdf5.
    #[arg(short = '5')]
    k5: bool,
    /// Same as -k '64-bit offset'.
    #[arg(short = '6')]
    k6: bool,
    /// Same as -k 'netCDF-4 classic model'.
    #[arg(short = '7')]
    k7: bool,
    /// Same as -k classic (old form).
    #[arg(short = '1')]
    k1: bool,
    /// Output language: b (binary) only; c, f77 and java are not supported.
    #[arg(short = 'l', value_name = "language")]
    lang: Option<String>,
    /// Output file name.
    #[arg(short = 'o', value_name = "outfile")]
    out: Option<PathBuf>,
    /// Do not write fill values ("no fill" mode).
    #[arg(short = 'x')]
    no_fill: bool,
    /// Dataset name to use instead of the one in the CDL.
    #[arg(short = 'N', value_name = "datasetname")]
    name: Option<String>,
    /// Like -b, with the obsolete `.cdf` extension for the default output name.
    #[arg(short = 'n')]
    cdf_ext: bool,
    /// Print help.
    #[arg(short = 'h', short_alias = 'H', action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// Debug output (accepted, ignored).
    #[arg(short = 'd')]
    debug: bool,
    /// Debug level (accepted, ignored).
    #[arg(short = 'D', value_name = "debuglevel")]
    debug_level: Option<String>,
    /// Log level (accepted, ignored).
    #[arg(short = 'L', value_name = "loglevel")]
    log_level: Option<String>,
    /// Main program name for generated code (accepted, ignored).
    #[arg(short = 'M', value_name = "name")]
    main_name: Option<String>,
    /// Diskless mode (accepted, ignored).
    #[arg(short = 'P')]
    diskless: bool,
    /// Whole-variable upload for generated code (accepted, ignored).
    #[arg(short = 'W')]
    whole: bool,
    /// Replace an existing output file even when it is read-only (never a directory).
    #[arg(long = "force")]
    force: bool,
    /// The CDL file (standard input if absent).
    input: Option<PathBuf>,
}

fn main() -> ExitCode {
    nc_dispatch::tune_allocator();
    // Ctrl-C / SIGTERM: remove the temporary output, leave the destination untouched
    if let Err(e) = nc_dispatch::install_interrupt_handler("ncgen") {
        eprintln!("ncgen: warning: cannot install the interrupt handler ({e}); an interrupted run may leave a temporary file");
    }
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // a write failing because an interrupt removed its temporary output: the
            // handler thread prints the message and exits with 128 + the signal
            nc_dispatch::wait_if_interrupted();
            eprintln!("ncgen: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn asked_format(args: &Args) -> anyhow::Result<Option<Format>> {
    let shortcuts = [
        (args.k1, Format::Classic),
        (args.k3, Format::Classic),
        (args.k4, Format::Netcdf4),
        (args.k5, Format::Cdf5),
        (args.k6, Format::Offset64),
        (args.k7, Format::Netcdf4Classic),
    ];
    nc_dispatch::asked_format(args.kind.as_deref(), &shortcuts).map_err(anyhow::Error::msg)
}

fn run(args: Args) -> anyhow::Result<()> {
    let asked = asked_format(&args)?;
    // netCDF-C's ncgen writes a file when asked for one by -b, -o, -n, -l b or a format flag.
    let mut binary = args.binary || args.out.is_some() || args.cdf_ext || asked.is_some();
    if let Some(l) = &args.lang {
        match l.as_str() {
            "b" | "binary" => binary = true,
            "c" | "C" | "f77" | "fortran77" | "j" | "java" => bail!(
                "-l {l}: generating source code is not supported by ncgen-rs; use -b to write a netCDF file"
            ),
            other => bail!("-l {other}: unknown output language; use -l b"),
        }
    }
    if args.c_code || args.fortran {
        bail!("generating C or Fortran code is not supported by ncgen-rs; use -b to write a netCDF file");
    }

    let opts = nc_cdl::ParseOptions {
        format: asked,
        ..nc_cdl::ParseOptions::default()
    };
    let mut ds = match &args.input {
        Some(p) if p.as_os_str() != "-" => {
            nc_cdl::parse_cdl_file(p, &opts).context("cannot read CDL")?
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading CDL from standard input")?;
            nc_cdl::parse_cdl(&text, "<stdin>", &opts).context("cannot read CDL")?
        }
    };
    if let Some(n) = &args.name {
        ds.name = n.clone();
    }
    // never drop a special attribute silently: quantization is not written yet
    if let Some(v) = ds.vars.iter().find(|v| v.storage.quantize.is_some()) {
        if let Some((mode, n)) = v.storage.quantize {
            bail!(
                "variable {}: {} = {n}: quantization is not implemented yet, and the attribute \
                 would otherwise be dropped; remove it (or quantize with netCDF-C's ncgen or \
                 netCDF4-python)",
                v.name,
                mode.attribute_name()
            );
        }
    }
    // As in netCDF-C, a filter forces chunked storage, whatever _Storage said.
    for v in &mut ds.vars {
        if !v.storage.filters.is_empty() && v.storage.layout == Some(nc_dataset::Layout::Contiguous)
        {
            v.storage.layout = Some(nc_dataset::Layout::Chunked);
        }
    }
    let format = nc_dispatch::choose_format(&ds, asked);
    if let Some(why) = nc_dispatch::model_conflict(&ds, format) {
        bail!("{why}");
    }
    if !binary {
        // No output asked for: ncgen only checks the CDL.
        return Ok(());
    }
    let out = match &args.out {
        Some(o) => o.clone(),
        None => default_output(args.input.as_deref(), &ds.name, args.cdf_ext),
    };
    let copts = nc_dispatch::CreateOptions {
        format,
        fill: !args.no_fill,
        only_given_data: true,
        force: args.force,
    };
    nc_dispatch::create(&out, &ds, &InMemory, &copts).context("cannot write output")?;
    Ok(())
}

/// The basename of the CDL file with its suffix replaced by `.nc` (or `.cdf` with -n); the
/// dataset name when reading standard input.
fn default_output(input: Option<&Path>, ds_name: &str, cdf: bool) -> PathBuf {
    let ext = if cdf { "cdf" } else { "nc" };
    let stem = input
        .filter(|p| p.as_os_str() != "-")
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| ds_name.to_string());
    PathBuf::from(format!("{stem}.{ext}"))
}
