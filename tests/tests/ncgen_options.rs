//! End-to-end: ncgen-rs's command line (issue 15): help, version, threads, usage errors and
//! the options netCDF-C's ncgen has (`-H`, `-W`, `-B`, `-v`, `-l`, `-c`, `-f`, `-d`, ...),
//! with exact stdout, stderr and exit codes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const USAGE_LINE: &str = "Usage: ncgen-rs [OPTIONS] [file] (ncgen-rs --help lists the options)\n";

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A work directory holding `simple_xy.cdl` and `unlimtest1.cdl`.
fn workdir(tag: &str) -> std::path::PathBuf {
    let d = tempdir(tag);
    fs::copy(testdata("cdl/simple_xy.cdl"), d.join("simple_xy.cdl")).unwrap();
    fs::copy(
        testdata("cdl/classic/unlimtest1.cdl"),
        d.join("unlimtest1.cdl"),
    )
    .unwrap();
    d
}

fn dump(dir: &Path, args: &[&str]) -> String {
    let o = run("ncdump-rs", args, dir);
    assert!(o.status.success(), "ncdump-rs {args:?}: {}", err(&o));
    out(&o)
}

#[test]
fn help_lists_every_option_in_groups() {
    let d = tempdir("ncgen-help");
    let o = run("ncgen-rs", &["--help"], &d);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(err(&o), "");
    let path = testdata("expected/ncgen/help.txt");
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &o.stdout).unwrap();
    }
    let want = fs::read(&path).unwrap();
    if let Some(d) = diff(&want, &o.stdout) {
        panic!("--help differs from {}: {d}", path.display());
    }
    // -h is help too, as in netCDF-C's ncgen
    let h = run("ncgen-rs", &["-h"], &d);
    assert_eq!(h.status.code(), Some(0));
    assert_eq!(h.stdout, o.stdout);
    let text = out(&o);
    for opt in [
        "-1",
        "-3",
        "-4",
        "-5",
        "-6",
        "-7",
        "-k <kind>",
        "-b",
        "-c",
        "-f",
        "-l <b|c|f77|java>",
        "-o <outfile>",
        "-n",
        "-M <name>",
        "-P",
        "-H",
        "-N <datasetname>",
        "-x",
        "-W <maxwholevarsize>",
        "-B <n>",
        "-d",
        "-D <debuglevel>",
        "-L <loglevel>",
        "-h, --help",
        "-V, --version",
        "--threads <N>",
        "--force",
    ] {
        assert!(
            text.contains(&format!("  {opt} ")),
            "{opt} missing:\n{text}"
        );
    }
    for heading in [
        "Output format:",
        "Output language and file:",
        "What is written:",
        "Debugging:",
        "Information:",
    ] {
        assert!(text.contains(&format!("\n{heading}\n")), "{heading}");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn version_and_capital_v_print_the_version_text() {
    let d = tempdir("ncgen-version");
    for flag in ["--version", "-V"] {
        let o = run("ncgen-rs", &[flag], &d);
        assert_eq!(o.status.code(), Some(0), "{flag}");
        assert_eq!(err(&o), "");
        let text = out(&o);
        assert_eq!(
            text.lines().next().unwrap(),
            format!(
                "ncgen-rs {} (netCDF-C 4.9 compatible command line)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(text.contains("\nformats:\n"), "{text}");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn threads_option_and_environment() {
    let d = tempdir("ncgen-threads");
    let o = run("ncgen-rs", &["--threads", "2", "--version"], &d);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out(&o).contains("worker threads: 2 (--threads N or NCRS_THREADS to change)"),
        "{}",
        out(&o)
    );
    let o = run("ncgen-rs", &["--threads", "0", "-V"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "ncgen: --threads \"0\": the worker-thread count must be a whole number from 1 to \
             1024\n{USAGE_LINE}"
        )
    );
    let o = Command::new(bin("ncgen-rs"))
        .arg("-V")
        .env("NCRS_THREADS", "many")
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "ncgen: NCRS_THREADS \"many\": the worker-thread count must be a whole number from \
             1 to 1024\n{USAGE_LINE}"
        )
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors_exit_2_and_name_the_problem() {
    let d = workdir("ncgen-usage");
    // options but no input file (standard input empty): exit 2, not a CDL syntax error
    let o = run("ncgen-rs", &["-b"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "ncgen: no input file and nothing on standard input: name a CDL file, or pipe CDL \
             in\n{USAGE_LINE}"
        )
    );
    // an unknown option is named
    let o = run("ncgen-rs", &["-Q", "simple_xy.cdl"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("error: unexpected argument '-Q' found\n"),
        "{}",
        err(&o)
    );
    // a value option without its value
    let o = run("ncgen-rs", &["simple_xy.cdl", "-o"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("error: a value is required for '-o <outfile>' but none was supplied"),
        "{}",
        err(&o)
    );
    // an unknown format kind
    let o = run("ncgen-rs", &["-k", "nc9", "simple_xy.cdl"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("ncgen: -k nc9: unknown format kind"),
        "{}",
        err(&o)
    );
    // two languages
    let o = run("ncgen-rs", &["-b", "-l", "c", "simple_xy.cdl"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!("ncgen: -b and -l c: please specify only one language\n{USAGE_LINE}")
    );
    // -W takes a number
    let o = run("ncgen-rs", &["-W", "lots", "simple_xy.cdl"], &d);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!("ncgen: -W \"lots\": expected a whole number\n{USAGE_LINE}")
    );
    // nothing was written by any of these
    assert!(!d.join("simple_xy.nc").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn capital_h_writes_the_header_only() {
    let d = workdir("ncgen-header");
    let o = run("ncgen-rs", &["-H", "-o", "h.nc", "simple_xy.cdl"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!((out(&o), err(&o)), (String::new(), String::new()));
    let rows = "  _, _, _, _, _, _, _, _, _, _, _, _,\n".repeat(5);
    assert_eq!(
        dump(&d, &["h.nc"]),
        format!(
            "netcdf h {{\ndimensions:\n\tx = 6 ;\n\ty = 12 ;\nvariables:\n\tint data(x, y) ;\n\
             data:\n\n data =\n{rows}  _, _, _, _, _, _, _, _, _, _, _, _ ;\n}}\n"
        )
    );
    // a record variable gets no records, as netCDF-C's ncgen -H
    let o = run("ncgen-rs", &["-H", "-o", "u.nc", "unlimtest1.cdl"], &d);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let ours = dump(&d, &["u.nc"]);
    assert!(ours.contains("UNLIMITED ; // (0 currently)"), "{ours}");
    if !missing_references(&["ncgen", "ncdump"]) {
        for cdl in ["simple_xy.cdl", "unlimtest1.cdl"] {
            let r = Command::new("ncgen")
                .args(["-H", "-o", "ref.nc", cdl])
                .current_dir(&d)
                .output()
                .unwrap();
            assert!(r.status.success());
            let o = run("ncgen-rs", &["-H", "-o", "ours.nc", cdl], &d);
            assert!(o.status.success());
            let dump_ref = |f: &str| {
                let o = Command::new("ncdump")
                    .arg(f)
                    .current_dir(&d)
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert_eq!(dump_ref("ours.nc"), dump_ref("ref.nc"), "{cdl}");
        }
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn capital_w_and_b_take_their_values() {
    let d = workdir("ncgen-wb");
    for args in [
        vec!["-W", "5", "-o", "w.nc", "simple_xy.cdl"],
        vec!["-W5", "-o", "w.nc", "simple_xy.cdl"],
        vec!["-B", "3", "-o", "w.nc", "simple_xy.cdl"],
        vec!["-P", "-o", "w.nc", "simple_xy.cdl"],
    ] {
        let o = run("ncgen-rs", &args, &d);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        assert_eq!(err(&o), "", "{args:?}");
        assert!(
            dump(&d, &["w.nc"]).contains(" data =\n  0, 1, 2,"),
            "{args:?}"
        );
        fs::remove_file(d.join("w.nc")).unwrap();
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn lower_v_is_the_old_spelling_of_k() {
    let d = workdir("ncgen-v");
    for (kind, want) in [
        ("2", "64-bit offset"),
        ("64-bit offset", "64-bit offset"),
        ("nc7", "netCDF-4 classic model"),
        ("1", "classic"),
    ] {
        let o = run("ncgen-rs", &["-v", kind, "-o", "v.nc", "simple_xy.cdl"], &d);
        assert_eq!(o.status.code(), Some(0), "-v {kind}: {}", err(&o));
        assert_eq!(dump(&d, &["-k", "v.nc"]), format!("{want}\n"), "-v {kind}");
        fs::remove_file(d.join("v.nc")).unwrap();
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fortran_and_java_are_refused_naming_what_is_supported() {
    let d = workdir("ncgen-lang");
    let refusal = |opt: &str, what: &str| {
        format!(
            "ncgen: {opt}: generating {what} code is not supported by ncgen-rs; supported are \
             -l b (a netCDF file) and -l c (a C program)\n"
        )
    };
    for (args, want) in [
        (vec!["-l", "f77"], refusal("-l f77", "Fortran 77")),
        (
            vec!["-l", "fortran77"],
            refusal("-l fortran77", "Fortran 77"),
        ),
        (vec!["-l", "java"], refusal("-l java", "Java")),
        (vec!["-l", "j"], refusal("-l j", "Java")),
        (
            vec!["-f"],
            format!(
                "-f is deprecated: please use -lf77\n{}",
                refusal("-f", "Fortran 77")
            ),
        ),
        (
            vec!["-l", "cobol"],
            format!(
                "ncgen: -l cobol: unknown output language; use b (netCDF file) or c (C \
                 program)\n{USAGE_LINE}"
            ),
        ),
    ] {
        let mut a = args.clone();
        a.push("simple_xy.cdl");
        let o = run("ncgen-rs", &a, &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(err(&o), want, "{args:?}");
        assert_eq!(out(&o), "", "{args:?}");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn debug_options_are_ignored_with_a_warning() {
    let d = workdir("ncgen-debug");
    for (args, warning) in [
        (
            vec!["-d"],
            "ncgen: warning: -d: ncgen-rs has no debug output; option ignored\n",
        ),
        (
            vec!["-D", "2"],
            "ncgen: warning: -D: ncgen-rs has no debug output; option ignored\n",
        ),
        (
            vec!["-L", "3"],
            "ncgen: warning: -L: ncgen-rs has no netCDF library log; option ignored\n",
        ),
    ] {
        let mut a = args.clone();
        a.extend(["-o", "d.nc", "simple_xy.cdl"]);
        let o = run("ncgen-rs", &a, &d);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(err(&o), warning, "{args:?}");
        assert!(d.join("d.nc").exists());
        fs::remove_file(d.join("d.nc")).unwrap();
    }
    // -M only names generated code's function: a binary output ignores it, as netCDF-C does
    let o = run("ncgen-rs", &["-M", "f", "-o", "d.nc", "simple_xy.cdl"], &d);
    assert_eq!((o.status.code(), err(&o)), (Some(0), String::new()));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn exit_codes_tell_input_from_output_failures() {
    let d = workdir("ncgen-codes");
    fs::write(d.join("bad.cdl"), "netcdf bad { dimensions: x = ; }\n").unwrap();
    let o = run("ncgen-rs", &["-o", "bad.nc", "bad.cdl"], &d);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let o = run("ncgen-rs", &["-o", "missing-dir/x.nc", "simple_xy.cdl"], &d);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    assert!(
        err(&o).starts_with("ncgen: cannot write output: "),
        "{}",
        err(&o)
    );
    fs::remove_dir_all(&d).unwrap();
}
