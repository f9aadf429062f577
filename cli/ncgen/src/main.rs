//! ncgen-rs: CDL text → netCDF dataset (or a C program that creates it), with netCDF-C
//! ncgen's options.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context};
use clap::Parser;
use nc_cdl::CdlData;
use nc_dataset::Format;
use nc_runtime::exit;
use ncgen_rs::gen_c::{self, COptions};
use ncgen_rs::Args;

/// A failure and the exit code it gets (see `nc_runtime::exit`).
struct Fail {
    code: u8,
    err: anyhow::Error,
}

fn usage(msg: impl std::fmt::Display) -> Fail {
    Fail {
        code: exit::USAGE,
        err: anyhow!("{msg}\nUsage: ncgen-rs [OPTIONS] [file] (ncgen-rs --help lists the options)"),
    }
}

/// Tag an error with an exit code.
trait Code<T> {
    fn code(self, code: u8) -> Result<T, Fail>;
}

impl<T> Code<T> for anyhow::Result<T> {
    fn code(self, code: u8) -> Result<T, Fail> {
        self.map_err(|err| Fail { code, err })
    }
}

fn main() -> ExitCode {
    nc_runtime::tune_allocator();
    // Ctrl-C / SIGTERM: remove the temporary output, leave the destination untouched
    if let Err(e) = nc_runtime::install_interrupt_handler("ncgen") {
        eprintln!("ncgen: warning: cannot install the interrupt handler ({e}); an interrupted run may leave a temporary file");
    }
    // clap exits with 2 on a bad command line, naming the option, and 0 for -h / --help
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail { code, err }) => {
            // a write failing because an interrupt removed its temporary output: the
            // handler thread prints the message and exits with 128 + the signal
            nc_runtime::wait_if_interrupted();
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("ncgen: {}", nc_runtime::error_text(err.as_ref()));
            ExitCode::from(code)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// What ncgen is asked to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Binary,
    C,
}

/// The output language from -b, -n, -c, -f and -l; `None` when none is named. netCDF-C's
/// ncgen refuses two language options; so do we, when they disagree.
fn language(args: &Args) -> Result<Option<Language>, Fail> {
    let mut named: Vec<(String, Language)> = Vec::new();
    if args.binary {
        named.push(("-b".into(), Language::Binary));
    }
    if args.cdf_ext {
        named.push(("-n".into(), Language::Binary));
    }
    if args.c_code {
        eprintln!("-c is deprecated: please use -lc");
        named.push(("-c".into(), Language::C));
    }
    if args.fortran {
        eprintln!("-f is deprecated: please use -lf77");
        return Err(refuse_language("-f", "Fortran 77"));
    }
    if let Some(l) = &args.lang {
        let lang = match l.as_str() {
            "b" => Language::Binary,
            "c" | "C" => Language::C,
            "f77" | "fortran77" | "Fortran77" => {
                return Err(refuse_language(&format!("-l {l}"), "Fortran 77"))
            }
            "j" | "java" => return Err(refuse_language(&format!("-l {l}"), "Java")),
            other => {
                return Err(usage(format!(
                    "-l {other}: unknown output language; use b (netCDF file) or c (C program)"
                )))
            }
        };
        named.push((format!("-l {l}"), lang));
    }
    if let Some((first, lang)) = named.first() {
        if let Some((other, _)) = named.iter().find(|(_, l)| l != lang) {
            return Err(usage(format!(
                "{first} and {other}: please specify only one language"
            )));
        }
        return Ok(Some(*lang));
    }
    Ok(None)
}

fn refuse_language(option: &str, what: &str) -> Fail {
    Fail {
        code: exit::USAGE,
        err: anyhow!(
            "{option}: generating {what} code is not supported by ncgen-rs; supported are -l b \
             (a netCDF file) and -l c (a C program)"
        ),
    }
}

fn asked_format(args: &Args) -> Result<Option<Format>, Fail> {
    let shortcuts = [
        (args.k1, Format::Classic),
        (args.k3, Format::Classic),
        (args.k4, Format::Netcdf4),
        (args.k5, Format::Cdf5),
        (args.k6, Format::Offset64),
        (args.k7, Format::Netcdf4Classic),
    ];
    nc_dispatch::asked_format(args.kind.as_deref(), &shortcuts).map_err(usage)
}

/// A whole number option value (`-W`), as netCDF-C reads it but refusing what is not a number.
fn whole_number(option: &str, text: &str) -> Result<u64, Fail> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| usage(format!("{option} {text:?}: expected a whole number")))
}

fn run(mut args: Args) -> Result<(), Fail> {
    nc_runtime::set_threads(args.threads.as_deref()).map_err(usage)?;
    if args.version {
        print!("{}", nc_runtime::version_text("ncgen-rs"));
        return Ok(());
    }
    let asked = asked_format(&args)?;
    let lang = language(&args)?;
    let whole_var_size = match &args.whole_var_size {
        Some(w) => whole_number("-W", w)?,
        None => 1024,
    };
    for (set, option, what) in [
        (args.debug, "-d", "debug output"),
        (args.debug_level.is_some(), "-D", "debug output"),
        (args.log_level.is_some(), "-L", "netCDF library log"),
    ] {
        if set {
            eprintln!("ncgen: warning: {option}: ncgen-rs has no {what}; option ignored");
        }
    }
    // netCDF-C's ncgen writes a file when asked for one by -b, -o, -n, -l b or a format flag;
    // with none of them it only checks the CDL.
    let lang = match lang {
        Some(l) => Some(l),
        None if args.out.is_some() || asked.is_some() => Some(Language::Binary),
        None => None,
    };

    let mut opts = nc_cdl::ParseOptions {
        format: asked,
        ..nc_cdl::ParseOptions::default()
    };
    // bytes of parsed values kept in memory before the rest waits in a temporary file
    if let Some(b) = std::env::var_os("NCGEN_RS_MEMORY_BUDGET") {
        opts.memory_budget = whole_number("NCGEN_RS_MEMORY_BUDGET", &b.to_string_lossy())?;
    }
    // A C program needs every value in memory; a netCDF output takes large variables' values
    // from a temporary file, so a data section larger than memory is written in bounded memory.
    let parse = |src: &mut dyn std::io::Read, name: &str| {
        if lang == Some(Language::C) {
            nc_cdl::parse::parse_cdl_reader(src, name, &opts).map(|ds| (ds, CdlData::default()))
        } else {
            nc_cdl::parse_cdl_reader_spilling(src, name, &opts)
        }
    };
    let (mut ds, data) = match args.input.take() {
        Some(p) if p.as_os_str() != "-" => {
            args.input = Some(p.clone());
            let name = p.display().to_string();
            let mut f = std::fs::File::open(&p)
                .map_err(|e| nc_cdl::CdlError::Io {
                    file: name.clone(),
                    msg: e.to_string(),
                })
                .context("cannot read CDL")
                .code(exit::INPUT)?;
            parse(&mut f, &name)
                .context("cannot read CDL")
                .code(exit::INPUT)?
        }
        named => {
            args.input = named;
            let stdin = std::io::stdin();
            if args.input.is_none() && stdin.is_terminal() {
                return Err(usage(
                    "no input file: name a CDL file, or - to read standard input",
                ));
            }
            let mut r = stdin.lock();
            let empty = r
                .fill_buf()
                .context("reading CDL from standard input")
                .code(exit::INPUT)?
                .is_empty();
            if args.input.is_none() && empty {
                return Err(usage(
                    "no input file and nothing on standard input: name a CDL file, or pipe CDL in",
                ));
            }
            parse(&mut r, "<stdin>")
                .context("cannot read CDL")
                .code(exit::INPUT)?
        }
    };
    if let Some(n) = &args.name {
        ds.name = n.clone();
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
        return Err(anyhow!("{why}")).code(exit::INPUT);
    }
    let Some(lang) = lang else {
        // No output asked for: ncgen only checks the CDL.
        return Ok(());
    };
    let out = match &args.out {
        Some(o) => o.clone(),
        None => default_output(args.input.as_deref(), &ds.name, args.cdf_ext),
    };
    if args.header_only {
        header_only(&mut ds);
    }
    match lang {
        Language::C => {
            let copts = COptions {
                path: out.to_string_lossy().into_owned(),
                format,
                no_fill: args.no_fill,
                header_only: args.header_only,
                main_name: args.main_name.clone().unwrap_or_else(|| "main".into()),
                whole_var_size,
            };
            let text = gen_c::generate(&ds, &copts).map_err(|e| match e {
                gen_c::GenCError::BadMainName(_) => usage(e),
                e => Fail {
                    code: exit::OUTPUT,
                    err: e.into(),
                },
            })?;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .context("writing the C program")
                .code(exit::OUTPUT)
        }
        Language::Binary => write_binary(&ds, &data, &args, &out, format),
    }
}

/// `-H`: keep the definitions, drop the data section. As netCDF-C's ncgen writes no data
/// then, unlimited dimensions have no records.
fn header_only(ds: &mut nc_dataset::Dataset) {
    for v in &mut ds.vars {
        v.data = None;
        v.data_elsewhere = None;
    }
    for d in &mut ds.dims {
        if d.unlimited {
            d.len = 0;
        }
    }
}

fn write_binary(
    ds: &nc_dataset::Dataset,
    data: &CdlData,
    args: &Args,
    out: &Path,
    format: Format,
) -> Result<(), Fail> {
    let copts = nc_dispatch::CreateOptions {
        format,
        fill: !args.no_fill,
        only_given_data: true,
        force: args.force,
    };
    // the output name is parsed once, here, when it is about to be written
    nc_dispatch::Location::parse(&out.to_string_lossy())
        .map_err(anyhow::Error::new)
        .and_then(|loc| Ok(nc_dispatch::create(&loc, ds, data, &copts)?))
        .context("cannot write output")
        .code(exit::OUTPUT)
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
