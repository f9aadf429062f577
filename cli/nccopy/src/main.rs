//! nccopy-rs: copy a netCDF dataset, optionally converting its format (netCDF-C nccopy's options).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use nc_dataset::Format;

use nc_runtime::{exit, Failure};
use nccopy_rs::args::{Args, USAGE};

fn main() -> ExitCode {
    nc_runtime::tune_allocator();
    if let Err(e) = nc_runtime::install_interrupt_handler("nccopy") {
        eprintln!("nccopy: warning: cannot install the interrupt handler ({e}); an interrupted copy may leave a temporary file");
    }
    if std::env::args_os().len() <= 1 {
        eprintln!("usage: {USAGE}\nRun 'nccopy-rs --help' for the options.");
        return ExitCode::from(exit::USAGE);
    }
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => return clap_error(&e),
    };
    if args.version {
        print!("{}", nc_runtime::version_text("nccopy-rs"));
        return ExitCode::from(exit::OK);
    }
    if let Err(e) = nc_runtime::set_threads(args.threads.as_deref()) {
        eprintln!("nccopy: {e}");
        return ExitCode::from(exit::USAGE);
    }
    let result = run(args);
    nc_runtime::report_io("nccopy");
    match result {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            // a write failing because an interrupt removed its temporary output: the
            // handler thread prints the message and exits with 128 + the signal
            nc_runtime::wait_if_interrupted();
            eprintln!("nccopy: {}", nc_runtime::error_text(e.as_ref()));
            let code = e
                .downcast_ref::<Failure>()
                .map_or(exit::INPUT, Failure::exit_code);
            ExitCode::from(code)
        }
    }
}

/// `--help` on stdout (exit 0); any other command-line error on stderr, naming the option
/// (exit 2).
fn clap_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        print!("{e}");
        return ExitCode::from(exit::OK);
    }
    let text = e.to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    eprint!("nccopy: {text}");
    ExitCode::from(exit::USAGE)
}

/// A command-line error (exit 2) with its message.
fn usage(msg: impl Into<String>) -> anyhow::Error {
    Failure::usage(msg.into()).into()
}

/// The last occurrence of a list option (as nccopy, a repeated `-v`/`-V`/`-g`/`-G` replaces
/// the earlier one), split at commas.
fn split_list(v: &[String]) -> Option<Vec<String>> {
    let last = v.last()?;
    Some(
        last.split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Parse a `-m`/`-h`/`-e` value: a decimal number (fraction and exponent allowed) with an
/// optional suffix K, M, G, T or P (powers of 1000, either case, optionally followed by `B`).
fn parse_size(opt: &str, text: &str) -> Result<u64, String> {
    let bad = |why: &str| {
        format!("-{opt} {text:?}: {why}; expected a number with an optional K, M, G, T or P suffix (powers of 1000), such as 5000000 or 5M")
    };
    let t = text.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let num_len = {
        let b = t.as_bytes();
        let mut i = 0;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if i > 0 && i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            let mut j = i + 1;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                j += 1;
            }
            let digits = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > digits {
                i = j;
            }
        }
        i
    };
    let (num, suffix) = t.split_at(num_len);
    if num.is_empty() {
        return Err(bad(if text.trim().starts_with('-') {
            "a size cannot be negative"
        } else {
            "no number"
        }));
    }
    let x: f64 = num.parse().map_err(|_| bad("not a number"))?;
    let mult = match suffix.to_ascii_uppercase().as_str() {
        "" => 1e0,
        "K" | "KB" => 1e3,
        "M" | "MB" => 1e6,
        "G" | "GB" => 1e9,
        "T" | "TB" => 1e12,
        "P" | "PB" => 1e15,
        _ => return Err(bad(&format!("unknown suffix {suffix:?}"))),
    };
    let v = x * mult;
    if !v.is_finite() || v >= u64::MAX as f64 {
        return Err(bad("too large"));
    }
    Ok(v as u64)
}

/// Parse a `--part` value: `init`, `finish` (or `finish/N`), or `I/N` with 0 <= I < N.
fn parse_part(text: &str) -> Result<nc_dispatch::FanoutStep, String> {
    let t = text.trim();
    let bad = |why: &str| {
        format!(
            "--part {text:?}: {why}; expected init, I/N (part I of N, 0-based: 0 to N-1) or \
             finish (docs/scale-out.md)"
        )
    };
    let count = |n: &str| match n.trim().parse::<u64>() {
        Ok(0) => Err(bad("the part count N must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(bad(&format!("{n:?} is not a part count"))),
    };
    match t {
        "init" => return Ok(nc_dispatch::FanoutStep::Init),
        "finish" => return Ok(nc_dispatch::FanoutStep::Finish { count: None }),
        _ => {}
    }
    let Some((i, n)) = t.split_once('/') else {
        return Err(bad("no \"/\""));
    };
    if i.trim() == "finish" {
        return Ok(nc_dispatch::FanoutStep::Finish {
            count: Some(count(n)?),
        });
    }
    let count = count(n)?;
    let index = i
        .trim()
        .parse::<u64>()
        .map_err(|_| bad(&format!("{i:?} is not a part number")))?;
    if index >= count {
        return Err(bad(&format!(
            "parts are numbered 0 to {} (0-based, as JOB_COMPLETION_INDEX; with Slurm use \
             --array=0-{})",
            count - 1,
            count - 1
        )));
    }
    Ok(nc_dispatch::FanoutStep::Part { index, count })
}

fn size_opt(opt: &str, text: Option<&str>) -> anyhow::Result<Option<u64>> {
    text.map(|t| parse_size(opt, t)).transpose().map_err(usage)
}

/// A progress bar on stderr when it is a terminal, shown once the copy has taken a second.
fn progress_bar() -> Option<nc_copy::ProgressFn> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    use std::io::IsTerminal;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] [{wide_bar}] {bytes}/{total_bytes} {msg} {binary_bytes_per_sec} ETA {eta}",
    )
    .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    // shown from a timer, so a copy that is slow between reads still gets its bar after 1 s
    // (NCCOPY_PROGRESS_DELAY_MS changes the delay, for tests)
    let delay = std::env::var("NCCOPY_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis);
    let finished = Arc::new(Mutex::new(false));
    if delay.is_zero() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        let bar = bar.clone();
        let finished = Arc::clone(&finished);
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            let done = finished.lock().unwrap_or_else(|e| e.into_inner());
            if !*done {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(Duration::from_millis(200));
            }
        });
    }
    Some(nc_copy::ProgressFn(Arc::new(
        move |e: nc_copy::ProgressEvent| {
            if e.finished {
                let mut done = finished.lock().unwrap_or_else(|e| e.into_inner());
                *done = true;
                bar.finish_and_clear();
                return;
            }
            bar.set_length(e.bytes_total);
            bar.set_position(e.bytes_done);
            bar.set_message(format!("vars {}/{}", e.vars_done, e.vars_total));
        },
    )))
}

/// What is copied: one opened input, or the view of several joined (nc-multi).
enum Input {
    One(Box<nc_dispatch::Opened>),
    Joined(Box<nc_multi::Join>),
}

impl Input {
    fn dataset(&self) -> &nc_dataset::Dataset {
        match self {
            Input::One(o) => o.dataset(),
            Input::Joined(j) => j.dataset(),
        }
    }

    fn source(&self) -> &dyn nc_dataset::DataSource {
        match self {
            Input::One(o) => o.source(),
            Input::Joined(j) => j.source(),
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let missing = || {
        usage(format!(
            "one input file and one output file required\nusage: {USAGE}"
        ))
    };
    let (infiles, outfile) = match (args.files.split_last(), args.explain) {
        (Some((only, [])), true) => (std::slice::from_ref(only), PathBuf::from("-")),
        (Some((_, [])), false) | (None, _) => return Err(missing()),
        (Some((out, ins)), _) => (ins, out.clone()),
    };
    let names: Vec<String> = infiles
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let join = names.len() > 1
        || args.join_dim.is_some()
        || names.iter().any(|n| nc_multi::is_wildcard(n));
    let infile = infiles.first().cloned().unwrap_or_default();
    let shown_input = if join {
        format!(
            "{} (joined with {} more)",
            infile.display(),
            names.len() - 1
        )
    } else {
        infile.display().to_string()
    };
    let shortcuts = [
        (args.k3, Format::Classic),
        (args.k4, Format::Netcdf4),
        (args.k5, Format::Cdf5),
        (args.k6, Format::Offset64),
        (args.k7, Format::Netcdf4Classic),
    ];
    let format = nc_dispatch::asked_format(args.kind.as_deref(), &shortcuts).map_err(usage)?;
    let buffer_size = size_opt("m", args.buffer.as_deref())?;
    let cache_size = size_opt("h", args.cache_size.as_deref())?;
    let cache_elems = size_opt("e", args.cache_elems.as_deref())?;
    let min_chunk_bytes = size_opt("M", args.min_chunk.as_deref())?;
    let part = args
        .part
        .as_deref()
        .map(parse_part)
        .transpose()
        .map_err(usage)?;
    let dimensions = args
        .dimension
        .iter()
        .map(|t| nc_dataset::subset::DimSpec::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::usage)?;
    // names are parsed once, here; an output name's error waits for the output to be written
    // (an input error comes first, as the files are opened in that order)
    let mut in_locs = if join {
        nc_multi::expand(&names)
            .map_err(Failure::input)
            .context("cannot open input")?
    } else {
        vec![nc_dispatch::Location::parse(&names[0])
            .map_err(Failure::input)
            .context("cannot open input")?]
    };
    // a subset reads the header and the chunks it touches: a remote input is fetched in
    // small pieces, without read-ahead
    if !dimensions.is_empty() {
        in_locs = in_locs
            .into_iter()
            .map(|l| l.with_access(nc_dispatch::Access::Sparse))
            .collect();
    }
    let out_loc = nc_dispatch::Location::parse(&outfile.to_string_lossy());
    let same = out_loc
        .as_ref()
        .is_ok_and(|o| nc_dispatch::output_is_an_input(&in_locs, o));
    if !args.explain && same {
        return Err(Failure::output(format!(
            "{}: output is the input dataset (the same file or store, maybe through a link); \
             refusing to overwrite it: write to another name, then rename",
            outfile.display()
        ))
        .into());
    }
    let input = if join {
        let opts = nc_multi::JoinOptions {
            dim: args.join_dim.clone(),
            ..Default::default()
        };
        let j = nc_multi::Join::open(&in_locs, &opts)
            .map_err(Failure::input)
            .context("cannot open input")?;
        if !args.quiet {
            for w in j.warnings() {
                eprintln!("nccopy: warning: {w}");
            }
        }
        Input::Joined(Box::new(j))
    } else {
        let o = nc_dispatch::open(&in_locs[0])
            .map_err(Failure::input)
            .context("cannot open input")?;
        if !args.quiet {
            for w in o.warnings() {
                eprintln!("nccopy: warning: {}: {w}", infile.display());
            }
        }
        Input::One(Box::new(o))
    };
    let mut opts = nc_copy::CopyOptions {
        format,
        fix_unlimited: args.fix_unlimited,
        data_vars: split_list(&args.data_vars),
        only_vars: split_list(&args.only_vars),
        data_groups: split_list(&args.data_groups),
        only_groups: split_list(&args.only_groups),
        dimensions,
        filters: args.filters.clone(),
        deflate: args.deflate,
        shuffle: args.shuffle,
        chunks: args.chunk.clone(),
        shards: args.shard.clone(),
        quantize: args.quantize.clone(),
        buffer_size,
        cache_size,
        cache_elems,
        min_chunk_bytes,
        force: args.force,
        part,
        ..Default::default()
    };
    // the output name's error, as writing it would give it (after the input's)
    let out_loc = out_loc.map_err(|e| {
        anyhow::Error::new(Failure::output(nc_dispatch::DispatchError::Store(e)))
            .context("cannot write output")
    })?;
    if args.explain {
        let report = nc_copy::explain_view(input.dataset(), input.source(), &out_loc, &opts)?;
        print_warnings(&args, &report);
        let mut out = std::io::stdout().lock();
        if let Input::Joined(j) = &input {
            for line in j.describe() {
                writeln!(out, "{line}").context("writing the explanation")?;
            }
        }
        for line in &report.explain {
            writeln!(out, "{line}").context("writing the explanation")?;
        }
        // what reading the metadata cost, when the input is remote
        if let Some(line) = nc_runtime::remote_io_line() {
            writeln!(out, "{line}").context("writing the explanation")?;
        }
        return Ok(());
    }
    // a part's bar would count the whole copy's bytes: none for --part
    if part.is_none() {
        opts.progress = progress_bar();
    }
    let result = nc_copy::copy_view(input.dataset(), input.source(), &out_loc, &opts);
    if let (Err(_), Some(p)) = (&result, &opts.progress) {
        // clear a bar left on screen before the error is printed
        (p.0)(nc_copy::ProgressEvent {
            bytes_done: 0,
            bytes_total: 0,
            vars_done: 0,
            vars_total: 0,
            finished: true,
        });
    }
    let report = result.map_err(|f| {
        let doing = match f.side() {
            nc_runtime::Side::Input => format!("cannot read input: {shown_input}"),
            nc_runtime::Side::Usage => return anyhow::Error::new(f),
            nc_runtime::Side::Output => "cannot write output".to_string(),
        };
        anyhow::Error::new(f).context(doing)
    })?;
    print_warnings(&args, &report);
    if let (Some(why), false) = (&report.unchanged, args.quiet) {
        eprintln!("nccopy: {}: {why}", outfile.display());
    }
    Ok(())
}

fn print_warnings(args: &Args, report: &nc_copy::CopyReport) {
    if !args.quiet {
        for w in &report.warnings {
            eprintln!("nccopy: warning: {w}");
        }
    }
}
