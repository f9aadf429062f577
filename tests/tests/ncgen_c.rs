//! End-to-end: `ncgen-rs -l c` writes a C program that, compiled against netCDF-C and run,
//! creates a file whose `ncdump -s` equals that of `ncgen-rs -b`'s file (less
//! `_NCProperties`, which names the writing library). Skips, saying so, without a C compiler
//! or netCDF-C's header and library.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// True when `gcc` can build and link a program against netCDF-C here.
fn have_c_toolchain(dir: &Path) -> bool {
    let src = dir.join("probe.c");
    fs::write(
        &src,
        "#include <netcdf.h>\nint main(void) { return nc_inq_libvers() == 0; }\n",
    )
    .unwrap();
    let ok = Command::new("gcc")
        .arg(&src)
        .args(["-lnetcdf", "-o"])
        .arg(dir.join("probe"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: gcc with netcdf.h and libnetcdf (apt-get install gcc libnetcdf-dev) not available");
    }
    ok
}

/// `ncdump -s` (or `ncdump FLAGS` when `flags` are given) of `file` without the
/// `_NCProperties` line: netCDF-C's ncdump when installed, else ours.
fn dump(dir: &Path, file: &str, flags: &[&str]) -> String {
    let mut args = if flags.is_empty() {
        vec!["-s"]
    } else {
        flags.to_vec()
    };
    args.push(file);
    let o = if have_reference("ncdump") {
        Command::new("ncdump")
            .args(&args)
            .current_dir(dir)
            .output()
            .unwrap()
    } else {
        run("ncdump-rs", &args, dir)
    };
    assert!(
        o.status.success(),
        "ncdump {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .skip(1) // `netcdf NAME {`: the file names differ
        .filter(|l| !l.contains(":_NCProperties = "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// How a round trip ended when it did not fail.
enum Ended {
    Same,
    /// The program could not run here: netCDF-C has no plugin for a filter the CDL names.
    NoPlugin(String),
}

/// Generate, compile and run the C program for `cdl` with `opts`; compare `ncdump -s` (or
/// `ncdump FLAGS`) with `-b`'s. Returns an error text instead of panicking so that one run reports
/// every failure.
fn round_trip(
    dir: &Path,
    cdl: &Path,
    opts: &[&str],
    flags: &[&str],
    tag: &str,
) -> Result<Ended, String> {
    let cdl = cdl.to_str().unwrap();
    let bin_nc = format!("{tag}-b.nc");
    let c_nc = format!("{tag}-c.nc");
    let mut args: Vec<&str> = opts.to_vec();
    args.extend(["-b", "-o", &bin_nc, cdl]);
    let o = run("ncgen-rs", &args, dir);
    if !o.status.success() {
        return Err(format!(
            "ncgen-rs -b: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let mut args: Vec<&str> = opts.to_vec();
    args.extend(["-l", "c", "-o", &c_nc, cdl]);
    let o = run("ncgen-rs", &args, dir);
    if !o.status.success() || !o.stderr.is_empty() {
        return Err(format!(
            "ncgen-rs -l c: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let src = dir.join(format!("{tag}.c"));
    fs::write(&src, &o.stdout).unwrap();
    let exe = dir.join(tag);
    let cc = Command::new("gcc")
        .arg(&src)
        .args(["-Wall", "-Werror", "-lnetcdf", "-o"])
        .arg(&exe)
        .output()
        .unwrap();
    if !cc.status.success() {
        return Err(format!(
            "gcc {}: {}",
            src.display(),
            String::from_utf8_lossy(&cc.stderr)
        ));
    }
    let ran = Command::new(&exe).current_dir(dir).output().unwrap();
    let ran_err = String::from_utf8_lossy(&ran.stderr).into_owned();
    if ran_err.contains("NetCDF: Filter error: undefined filter encountered") {
        return Ok(Ended::NoPlugin(ran_err));
    }
    if !ran.status.success() {
        return Err(format!(
            "running {}: {}",
            exe.display(),
            String::from_utf8_lossy(&ran.stderr)
        ));
    }
    let (want, got) = (dump(dir, &bin_nc, flags), dump(dir, &c_nc, flags));
    match diff(want.as_bytes(), got.as_bytes()) {
        None => Ok(Ended::Same),
        Some(d) => Err(format!("ncdump -s of -b vs -l c output: {d}")),
    }
}

/// Every CDL file under `testdata/cdl/` that `ncgen-rs -b` accepts.
fn corpus() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![testdata("cdl")];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cdl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn generated_c_programs_recreate_the_dataset() {
    let dir = tempdir("ncgen-c");
    if !have_c_toolchain(&dir) {
        return;
    }
    let mut failures = Vec::new();
    let mut passed = 0;
    for (k, cdl) in corpus().iter().enumerate() {
        // CDL that ncgen-rs -b refuses (the bad-input fixtures) has nothing to compare with
        let probe = run(
            "ncgen-rs",
            &["-b", "-o", "probe.nc", cdl.to_str().unwrap()],
            &dir,
        );
        if !probe.status.success() {
            continue;
        }
        let tag = format!("t{k}");
        match round_trip(&dir, cdl, &[], &[], &tag) {
            Ok(Ended::Same) => passed += 1,
            Ok(Ended::NoPlugin(e)) => {
                eprintln!(
                    "SKIP: {}: netCDF-C lacks a filter plugin: {e}",
                    cdl.display()
                )
            }
            Err(e) => failures.push(format!("{}: {e}", cdl.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        passed + failures.len(),
        failures.join("\n")
    );
    assert!(passed > 50, "only {passed} CDL files round-tripped");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn options_header_only_no_fill_formats_and_main_name() {
    let dir = tempdir("ncgen-c-opts");
    if !have_c_toolchain(&dir) {
        return;
    }
    let all = testdata("cdl/nc4/gen_c_all.cdl");
    let unlim = testdata("cdl/classic/unlimtest1.cdl");
    // with -H, gen_c_all's enum variable without data holds a fill that is no member, which
    // ncdump cannot print: compare headers there. netCDF-C 4.9.0's ncdump -s fails on CDF-5
    // ("Attempting netcdf-4 operation on netcdf-3 file"): plain ncdump there (-l 80 is the
    // default line length).
    let cases: Vec<(&Path, Vec<&str>, Vec<&str>)> = vec![
        (&all, vec!["-H"], vec!["-s", "-h"]),
        (&all, vec!["-x"], vec![]),
        (&all, vec!["-W", "0"], vec![]),
        (&unlim, vec!["-H"], vec![]),
        (&unlim, vec!["-x"], vec![]),
        (&unlim, vec!["-k", "64-bit offset"], vec![]),
        (&unlim, vec!["-5"], vec!["-l", "80"]),
        (&unlim, vec!["-7"], vec![]),
        (&unlim, vec!["-4"], vec![]),
    ];
    let mut failures = Vec::new();
    for (k, (cdl, opts, flags)) in cases.iter().enumerate() {
        match round_trip(&dir, cdl, opts, flags, &format!("o{k}")) {
            Ok(Ended::Same) => {}
            Ok(Ended::NoPlugin(e)) => eprintln!("SKIP: {opts:?}: {e}"),
            Err(e) => failures.push(format!("{} {opts:?}: {e}", cdl.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // -M names the function; -o names the file the program creates, the code goes to stdout
    let o = run(
        "ncgen-rs",
        &[
            "-l",
            "c",
            "-M",
            "make_it",
            "-o",
            "named.nc",
            unlim.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = String::from_utf8_lossy(&o.stdout);
    assert!(c.contains("\nint\nmake_it(void)\n{\n"), "{c}");
    assert!(
        c.contains("CHECK(nc_create(\"named.nc\", NC_CLOBBER, &ncid));"),
        "{c}"
    );
    assert!(
        !dir.join("named.nc").exists(),
        "-l c writes no netCDF file itself"
    );
    // without -o: the CDL file's name with .nc, as netCDF-C's ncgen -lc
    let o = run("ncgen-rs", &["-c", unlim.to_str().unwrap()], &dir);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "-c is deprecated: please use -lc\n"
    );
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("CHECK(nc_create(\"unlimtest1.nc\", NC_CLOBBER, &ncid));"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_main_name_that_is_not_c_is_refused() {
    let dir = tempdir("ncgen-c-refuse");
    let cdl = testdata("cdl/classic/unlimtest1.cdl");
    let o = run(
        "ncgen-rs",
        &["-l", "c", "-M", "1st", cdl.to_str().unwrap()],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "ncgen: -M \"1st\": the main function name must be a C identifier (letters, digits, _)\n\
         Usage: ncgen-rs [OPTIONS] [file] (ncgen-rs --help lists the options)\n"
    );
    assert!(o.stdout.is_empty(), "no partial program on stdout");
    fs::remove_dir_all(&dir).unwrap();
}
