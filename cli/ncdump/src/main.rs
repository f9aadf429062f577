//! ncdump-rs: netCDF dataset → CDL text, with netCDF-C ncdump's options.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Parser;
use nc_cdl::print::PrintError;
use nc_runtime::{exit, Failure};
use ncdump_rs::options::{dimension_specs, dump_options, BadOption};
use ncdump_rs::{Args, USAGE};

fn main() -> ExitCode {
    nc_runtime::tune_allocator();
    // ncdump run bare prints its usage and returns peacefully
    if std::env::args_os().len() <= 1 {
        eprint!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.kind() == ErrorKind::DisplayHelp => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage_error(&clap_message(&e)),
    };
    if let Err(msg) = nc_runtime::set_threads(args.threads.as_deref()) {
        return usage_error(&msg);
    }
    if args.version {
        print!("{}", nc_runtime::version_text("ncdump-rs"));
        return ExitCode::SUCCESS;
    }
    let Some(file) = args.file.clone() else {
        eprint!("{USAGE}");
        return ExitCode::from(exit::USAGE);
    };
    // options are checked before the file is opened, as ncdump checks them while parsing
    let opts = match dump_options(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ncdump: {}", nc_runtime::error_text(e.as_ref()));
            return ExitCode::from(exit::USAGE);
        }
    };
    let mut out = Tracked {
        inner: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
        failed: None,
    };
    let result = run(&args, opts, &file, &mut out);
    nc_runtime::report_io("ncdump");
    // what was printed before a failure still goes out, as ncdump's does
    let flushed = out.flush();
    match out.failed {
        Some(std::io::ErrorKind::BrokenPipe) => ExitCode::SUCCESS,
        Some(_) => {
            match (result, flushed) {
                (Err(e), _) => eprintln!("ncdump: {}", nc_runtime::error_text(e.as_ref())),
                (Ok(()), Err(e)) => eprintln!("ncdump: writing output: {e}"),
                (Ok(()), Ok(())) => eprintln!("ncdump: writing output failed"),
            }
            ExitCode::from(exit::OUTPUT)
        }
        None => match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ncdump: {}", nc_runtime::error_text(e.as_ref()));
                if e.chain().any(|c| c.is::<BadOption>()) {
                    ExitCode::from(exit::USAGE)
                } else if let Some(f) = e.chain().find_map(|c| c.downcast_ref::<Failure>()) {
                    ExitCode::from(f.exit_code())
                } else {
                    ExitCode::from(exit::INPUT)
                }
            }
        },
    }
}

/// Where `--kerchunk` writes: `None` for JSON on standard output, else the Parquet
/// directory and its layout.
fn kerchunk_output(args: &Args) -> anyhow::Result<Option<(String, nc_dispatch::ParquetLayout)>> {
    let parquet = args.kerchunk_format.as_deref() == Some("parquet");
    let usage = |m: &str| anyhow::Error::new(Failure::usage(m.to_string()));
    if !parquet {
        if args.kerchunk_out.is_some() || args.kerchunk_record_size.is_some() {
            return Err(usage(
                "--kerchunk-out and --kerchunk-record-size are for --kerchunk-format parquet; \
                 JSON references go to standard output (redirect it to a file)",
            ));
        }
        return Ok(None);
    }
    let Some(dir) = args.kerchunk_out.clone() else {
        return Err(usage(
            "--kerchunk-format parquet writes a directory: name it with --kerchunk-out DIR",
        ));
    };
    let mut layout = nc_dispatch::ParquetLayout::default();
    if let Some(n) = &args.kerchunk_record_size {
        layout.record_size = n
            .parse()
            .ok()
            .filter(|&n| (1..=nc_dispatch::MAX_RECORD_SIZE).contains(&n))
            .ok_or_else(|| {
                usage(&format!(
                    "--kerchunk-record-size {n}: give a number of references per file from 1 \
                     to {}",
                    nc_dispatch::MAX_RECORD_SIZE
                ))
            })?;
    }
    Ok(Some((dir, layout)))
}

/// A usage error: the message, then ncdump's usage text, and the usage exit code.
fn usage_error(msg: &str) -> ExitCode {
    eprintln!("ncdump: {msg}");
    eprint!("{USAGE}");
    ExitCode::from(exit::USAGE)
}

/// clap's error in getopt's words where ncdump's getopt has them (naming the option).
fn clap_message(e: &clap::Error) -> String {
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // "-l <len>" -> "l"
    let letter = arg
        .strip_prefix('-')
        .filter(|s| !s.starts_with('-'))
        .and_then(|s| s.chars().next());
    match (e.kind(), letter) {
        (ErrorKind::UnknownArgument, Some(c)) => format!("invalid option -- '{c}'"),
        (ErrorKind::UnknownArgument, None) => format!("unrecognized option '{arg}'"),
        (ErrorKind::InvalidValue, Some(c)) if arg.contains('<') => {
            format!("option requires an argument -- '{c}'")
        }
        _ => {
            let text = e.kind().as_str().map_or_else(
                || e.to_string(),
                |k| {
                    if arg.is_empty() {
                        k.to_string()
                    } else {
                        format!("{k}: {arg}")
                    }
                },
            );
            text.lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string()
        }
    }
}

/// `--kerchunk IN1 IN2 ...`: one reference set of the files joined as one dataset
/// (nc-multi's join, as nccopy-rs joins them).
fn joined_references(
    args: &Args,
    opts: &nc_cdl::DumpOptions,
    first: nc_dispatch::Location,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    // object-storage wildcards (s3://bucket/run/*.nc) stand for the objects they match
    let given = args.file.as_ref().map(|f| f.to_string_lossy().into_owned());
    let mut names: Vec<String> = vec![given.unwrap_or_else(|| first.text().to_string())];
    names.extend(args.more.iter().map(|f| f.to_string_lossy().into_owned()));
    let locs = if names.iter().any(|n| nc_multi::is_wildcard(n)) {
        nc_multi::expand(&names).context("listing the inputs")?
    } else {
        let mut locs = vec![first];
        for f in &names[1..] {
            locs.push(nc_dispatch::Location::parse(f)?);
        }
        locs
    };
    let jopts = nc_multi::JoinOptions {
        dim: args.join_dim.clone(),
        whole_chunks: true,
        // the references ask each input for its chunks: nothing to keep
        keep_chunk_index: false,
        ..nc_multi::JoinOptions::default()
    };
    let join = nc_multi::Join::open(&locs, &jopts).context("joining the inputs")?;
    for w in join.warnings() {
        eprintln!("ncdump: warning: {w}");
    }
    let req = nc_dispatch::ReferenceRequest {
        url: None,
        vars: opts.vars.clone(),
    };
    let (ds, src) = (join.dataset(), join.source());
    let warnings = match kerchunk_output(args)? {
        None => all_or_nothing(out, |w| {
            nc_dispatch::write_joined_references(ds, src, &join, &req, w)
                .context("writing kerchunk references")
        })?,
        Some((dir, layout)) => {
            let dest = nc_dispatch::Location::parse(&dir).map_err(Failure::usage)?;
            if let Err(e) = nc_runtime::install_interrupt_handler("ncdump") {
                eprintln!("ncdump: warning: cannot install the interrupt handler ({e}); an interrupted run may leave a temporary directory");
            }
            nc_dispatch::write_joined_references_parquet(ds, src, &join, &req, &layout, &dest)
                .with_context(|| format!("writing Parquet references to {dir}"))?
        }
    };
    for w in warnings {
        eprintln!("ncdump: warning: {w}");
    }
    Ok(())
}

/// What `write` writes, given to `out` only when it succeeds: a join's references stream
/// input by input, and a later input can still be refused (its chunks, type or filters
/// differ from the first's) after earlier ones were written. They go to an unnamed
/// temporary file (gone with the process, however it ends), copied to `out` at the end, so
/// memory stays one buffer whatever the size.
fn all_or_nothing<T>(
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    use std::io::{Seek, SeekFrom};
    let held = |e: std::io::Error| {
        anyhow::Error::new(Failure::output(e))
            .context("holding the references in a temporary file (TMPDIR)")
    };
    let mut tmp = tempfile::tempfile().map_err(held)?;
    let mut buf = std::io::BufWriter::with_capacity(1 << 16, &mut tmp);
    let got = write(&mut buf)?;
    buf.flush().map_err(held)?;
    drop(buf);
    tmp.seek(SeekFrom::Start(0)).map_err(held)?;
    // a failure here is stdout's: `out` (Tracked) records it for the exit code
    std::io::copy(&mut tmp, out)?;
    Ok(got)
}

/// stdout, remembering the first write failure so that it is told apart from input errors.
struct Tracked<W: Write> {
    inner: W,
    failed: Option<std::io::ErrorKind>,
}

impl<W: Write> Write for Tracked<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| {
            self.failed.get_or_insert(e.kind());
        })
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| {
            self.failed.get_or_insert(e.kind());
        })
    }
}

fn run(
    args: &Args,
    mut opts: nc_cdl::DumpOptions,
    file: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    // the name is parsed once, here; everything below takes the location
    let mut loc = nc_dispatch::Location::parse(&file.to_string_lossy())?;
    // -w: netCDF-C's `[cache]` client parameter on a URL (whole variables kept; one request)
    if args.cache {
        loc = loc.with_param("cache")?;
    }
    let specs = dimension_specs(args)?;
    let wildcard = nc_multi::is_wildcard(&file.to_string_lossy());
    if args.kerchunk && (!args.more.is_empty() || args.join_dim.is_some() || wildcard) {
        return joined_references(args, &opts, loc, out);
    }
    // a subset reads a small part: a remote input is fetched in small pieces (nccopy's too)
    if !specs.is_empty() {
        loc = loc.with_access(nc_dispatch::Access::Sparse);
    }
    let opened = nc_dispatch::open(&loc)?;
    for w in opened.warnings() {
        eprintln!("ncdump: warning: {}: {w}", file.display());
    }
    // --dimension: everything below prints the view as it would the dataset
    let view = if specs.is_empty() {
        None
    } else {
        let v = nc_dataset::subset::subset(opened.dataset(), opened.source(), &specs)
            .with_context(|| file.display().to_string())?;
        Some(v)
    };
    let (ds, src): (&nc_dataset::Dataset, &dyn nc_dataset::DataSource) = match &view {
        Some((d, s)) => (d, s),
        None => (opened.dataset(), opened.source()),
    };
    if args.kerchunk {
        let req = nc_dispatch::ReferenceRequest {
            url: args.kerchunk_url.clone(),
            vars: opts.vars.clone(),
        };
        let warnings = match kerchunk_output(args)? {
            None => nc_dispatch::write_view_references(&opened, ds, src, &loc, &req, out)
                .context("writing kerchunk references")?,
            Some((dir, layout)) => {
                let dest = nc_dispatch::Location::parse(&dir).map_err(Failure::usage)?;
                // SIGINT or SIGTERM while the directory is written removes its temporary
                if let Err(e) = nc_runtime::install_interrupt_handler("ncdump") {
                    eprintln!("ncdump: warning: cannot install the interrupt handler ({e}); an interrupted run may leave a temporary directory");
                }
                nc_dispatch::write_view_references_parquet(
                    &opened, ds, src, &loc, &req, &layout, &dest,
                )
                .with_context(|| format!("writing Parquet references to {dir}"))?
            }
        };
        for w in warnings {
            eprintln!("ncdump: warning: {}: {w}", file.display());
        }
        return Ok(());
    }
    if args.kind {
        let f = opened
            .dataset()
            .format
            .map(|f| f.kind_name())
            .unwrap_or("unknown");
        writeln!(out, "{f}")?;
        return Ok(());
    }
    if args.kind_ext {
        writeln!(out, "{}", opened.extended_kind())?;
        return Ok(());
    }
    if args.ncml {
        if ds.format == Some(nc_dataset::Format::Netcdf4) {
            anyhow::bail!("NcML output (-x) currently only permitted for netCDF classic model");
        }
        nc_cdl::print::print_ncml(ds, &file.to_string_lossy(), out).context("writing NcML")?;
        return Ok(());
    }
    if args.json {
        nc_cdl::print::print_json(ds, src, &opts, out).map_err(|e| match e {
            e @ (PrintError::NoSuchVariable { .. } | PrintError::NoSuchGroup { .. }) => {
                anyhow::Error::new(e)
            }
            e => anyhow::Error::new(e).context("writing JSON"),
        })?;
        return Ok(());
    }
    if opts.name.is_none() {
        opts.name = Some(loc.dataset_name());
    }
    nc_cdl::print(ds, src, &opts, out).map_err(|e| match e {
        // ncdump's own words for a -v or -g name that matches nothing
        e @ (PrintError::NoSuchVariable { .. } | PrintError::NoSuchGroup { .. }) => {
            anyhow::Error::new(e)
        }
        e => anyhow::Error::new(e).context("writing CDL"),
    })?;
    Ok(())
}
