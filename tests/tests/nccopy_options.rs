//! nccopy-rs's command line (issue 15): the help text, version, usage errors and exit codes,
//! the per-variable `-c` forms and their checks, `-x`, `-u` to NCZarr, `#mode=` words, Zarr
//! directories without `#mode=`, and remote URLs. Outputs are read back with our ncdump and,
//! when installed, netCDF-C 4.9.0's.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{bin, have_reference, run, tempdir};

const CDL: &str = "netcdf in {
dimensions:
  time = UNLIMITED ; lat = 3 ; lon = 4 ;
variables:
  float t(time, lat, lon) ;
  int lat(lat) ;
  double small(lon) ;
data:
  t = 1,2,3,4,5,6,7,8,9,10,11,12, 13,14,15,16,17,18,19,20,21,22,23,24 ;
  lat = 1,2,3 ;
  small = 1,2,3,4 ;
}
";

/// `in.nc` (classic, a record dimension) written by our ncgen in a fresh directory.
fn input(tag: &str) -> (PathBuf, PathBuf) {
    let dir = tempdir(tag);
    std::fs::write(dir.join("in.cdl"), CDL).unwrap();
    let o = run("ncgen-rs", &["-o", "in.nc", "in.cdl"], &dir);
    assert!(o.status.success(), "{}", err(&o));
    let nc = dir.join("in.nc");
    (dir, nc)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn nccopy(args: &[&str], dir: &Path) -> Output {
    run("nccopy-rs", args, dir)
}

/// `ncdump -hs` of `path`, by ours and by netCDF-C's when installed.
fn dumps_hs(path: &str, dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    let o = run("ncdump-rs", &["-hs", path], dir);
    assert!(o.status.success(), "ncdump-rs -hs {path}: {}", err(&o));
    v.push(out(&o));
    if have_reference("ncdump") {
        let o = std::process::Command::new("ncdump")
            .args(["-hs", path])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "ncdump -hs {path}: {}", err(&o));
        v.push(out(&o));
    }
    v
}

fn assert_fails(o: &Output, code: i32, stderr: &str) {
    assert_eq!(err(o), stderr);
    assert_eq!(o.status.code(), Some(code), "{stderr}");
}

#[test]
fn help_text_is_the_snapshot() {
    let dir = tempdir("help");
    let o = nccopy(&["--help"], &dir);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(err(&o), "");
    let path = common::testdata("expected/nccopy-rs/help.txt");
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &o.stdout).unwrap();
    }
    let expected = std::fs::read(&path).unwrap();
    if let Some(d) = common::diff(&expected, &o.stdout) {
        panic!("--help differs from {}: {d}", path.display());
    }
    // every option one line, -h and -V keep their nccopy meanings
    let text = out(&o);
    assert!(text.contains("\n  -h <n>  "), "{text}");
    assert!(text.contains("\n  -V <var1,...>  "), "{text}");
}

#[test]
fn version_prints_the_shared_text() {
    let dir = tempdir("version");
    let o = nccopy(&["--version"], &dir);
    assert_eq!(o.status.code(), Some(0));
    let first = out(&o).lines().next().unwrap_or("").to_string();
    assert_eq!(
        first,
        format!(
            "nccopy-rs {} (netCDF-C 4.9 compatible command line)",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn no_arguments_prints_the_usage_and_exits_2() {
    let dir = tempdir("noargs");
    let o = nccopy(&[], &dir);
    assert_fails(
        &o,
        2,
        &format!(
            "usage: {}\nRun 'nccopy-rs --help' for the options.\n",
            usage()
        ),
    );
    assert_eq!(out(&o), "");
}

fn usage() -> &'static str {
    "nccopy-rs [-k kind] [-[3|4|5|6|7]] [-d n] [-s] [-c chunkspec] [-u] [-w] [-[v|V] varlist] [-[g|G] grplist] [--dimension dim,min[,max[,stride]]] [-m n] [-h n] [-e n] [-r] [-x] [-F filterspec] [-Ln] [-Mn] [-q] [--explain] [--force] [--threads N] [--part init|I/N|finish] [--join-dim dim] infile [infile...] outfile"
}

#[test]
fn usage_errors_name_the_option_and_exit_2() {
    let (dir, _) = input("usage");
    for opt in ["--bogus", "-X"] {
        let o = nccopy(&[opt, "in.nc", "o.nc"], &dir);
        assert_eq!(o.status.code(), Some(2), "{opt}");
        let e = err(&o);
        assert!(
            e.starts_with(&format!("nccopy: unexpected argument '{opt}' found\n")),
            "{e}"
        );
    }
    let o = nccopy(&["in.nc"], &dir);
    assert_fails(
        &o,
        2,
        &format!(
            "nccopy: one input file and one output file required\nusage: {}\n",
            usage()
        ),
    );
    let o = nccopy(&["-k", "nc9", "in.nc", "o.nc"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    // a deflation level out of 0..=9 is refused before anything is read (4.9.0: "invalid
    // deflation level: 10")
    let o = nccopy(&["-d", "10", "in.nc", "o.nc"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(
        err(&o).starts_with("nccopy: invalid value '10' for '-d <n>': 10 is not in 0..=9\n"),
        "{}",
        err(&o)
    );
    let o = nccopy(&["--threads", "0", "in.nc", "o.nc"], &dir);
    assert_fails(
        &o,
        2,
        "nccopy: --threads \"0\": the worker-thread count must be a whole number from 1 to 1024\n",
    );
    assert!(!dir.join("o.nc").exists());
}

#[test]
fn threads_and_x_are_accepted() {
    let (dir, _) = input("threads");
    for args in [
        &["--threads", "2", "in.nc", "o.nc"][..],
        &["-x", "in.nc", "o.nc"],
        &["-x", "-w", "-r", "-L", "1", "in.nc", "o.nc"],
    ] {
        let o = nccopy(args, &dir);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        let a = run("ncdump-rs", &["in.nc"], &dir);
        let b = run("ncdump-rs", &["o.nc"], &dir);
        // the dataset name line differs (in / o)
        let body = |o: &Output| out(o).lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(body(&a), body(&b), "{args:?}");
    }
}

#[test]
fn chunkspec_compact_and_contiguous() {
    let (dir, _) = input("compact");
    for (spec, want) in [
        ("small:compact", "small:_Storage = \"compact\" ;"),
        ("small:contiguous", "small:_Storage = \"contiguous\" ;"),
        ("small:", "small:_Storage = \"contiguous\" ;"),
        ("lat:COMPACT", "lat:_Storage = \"compact\" ;"),
    ] {
        let _ = std::fs::remove_file(dir.join("o.nc"));
        let o = nccopy(&["-c", spec, "in.nc", "o.nc"], &dir);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", err(&o));
        for d in dumps_hs("o.nc", &dir) {
            assert!(d.contains(want), "-c {spec}: want {want} in\n{d}");
            assert!(d.contains(":_Format = \"netCDF-4 classic model\" ;"), "{d}");
        }
    }
    // the data is the input's
    let o = run("ncdump-rs", &["-v", "small", "o.nc"], &dir);
    assert!(out(&o).contains(" small = 1, 2, 3, 4 ;"), "{}", out(&o));
}

#[test]
fn chunkspec_names_and_sizes_are_checked() {
    let (dir, _) = input("cspec");
    let cases = [
        ("nosuch:4", "nccopy: -c nosuch:4: no variable \"nosuch\" in the input\n"),
        ("nosuch/2", "nccopy: -c nosuch/2: no dimension \"nosuch\" in the input\n"),
        ("latt/5", "nccopy: -c latt/5: no dimension \"latt\" in the input\n"),
        (
            "lat/0",
            "nccopy: -c lat/0: dimension \"lat\": a chunk size must be at least 1 (\"lat/\" is its full length)\n",
        ),
        ("lon/x", "nccopy: -c lon/x: dimension \"lon\": \"x\" is not a chunk size\n"),
        (
            "lon/2,latt/1",
            "nccopy: -c lon/2,latt/1: no dimension \"latt\" in the input\n",
        ),
        (
            "small:5",
            "nccopy: -c small:5: chunk size 5 along dimension 0 (\"lon\") of variable \"/small\" is larger than its length 4\n",
        ),
        (
            "small:2,2",
            "nccopy: -c small:2,2: 2 sizes given for variable \"/small\" of rank 1\n",
        ),
        ("small:0", "nccopy: -c small:0: a chunk size must be at least 1\n"),
        (
            "small:big",
            "nccopy: -c small:big: expected var:N1,N2,... (whole numbers), var:contiguous, var:compact or var:\n",
        ),
        (
            "t:compact",
            "nccopy: -c t:compact: variable \"/t\" has an unlimited dimension; compact storage is for fixed-size variables (use -u to fix the dimension)\n",
        ),
    ];
    for (spec, want) in cases {
        let o = nccopy(&["-c", spec, "in.nc", "o.nc"], &dir);
        assert_fails(&o, 2, want);
        assert!(!dir.join("o.nc").exists(), "{spec}");
    }
    // netCDF-C 4.9.0 refuses each of these too (with no name)
    if have_reference("nccopy") {
        for (spec, _) in cases {
            let o = std::process::Command::new("nccopy")
                .args(["-c", spec, "in.nc", "ref.nc"])
                .current_dir(&dir)
                .output()
                .unwrap();
            // 4.9.0 accepts small:0 (as contiguous) and t:compact (ignored): ours is stricter
            if !matches!(spec, "small:0" | "t:compact") {
                assert!(!o.status.success(), "nccopy 4.9.0 accepted -c {spec}");
            }
        }
    }
}

#[test]
fn fix_unlimited_into_an_nczarr_store() {
    let (dir, _) = input("u-nczarr");
    let store = dir.join("o.zarr");
    let url = format!("file://{}#mode=nczarr,file", store.display());
    let o = nccopy(&["-u", "in.nc", &url], &dir);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = run("ncdump-rs", &["-v", "t", &url], &dir);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("\ttime = 2 ;\n"), "{text}");
    assert!(!text.contains("UNLIMITED"), "{text}");
    assert!(text.contains("  13, 14, 15, 16,\n"), "{text}");
    if have_reference("ncdump") {
        let o = std::process::Command::new("ncdump")
            .args(["-v", "t", &url])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", err(&o));
        let r = out(&o);
        assert!(
            r.contains("\ttime = 2 ;\n") && r.contains("  13, 14, 15, 16,\n"),
            "{r}"
        );
    }
}

const KNOWN: &str = "nczarr, zarr, xarray, noxarray, file, zip, s3, bytes, dap2, dap4, netcdf-3, classic, netcdf-4, enhanced, udf0, udf1, v3, anon";

#[test]
fn unknown_mode_words_are_named_in_all_three_tools() {
    let (dir, _) = input("modes");
    let good = format!("file://{}#mode=nczarr,file", dir.join("s.zarr").display());
    assert!(nccopy(&["in.nc", &good], &dir).status.success());
    let bad_in = format!("file://{}#mode=nczarr,bogus", dir.join("s.zarr").display());
    let word = |loc: &str, w: &str| {
        format!("{loc:?}: unknown mode word \"{w}\" in #mode= (known: {KNOWN})")
    };
    let o = nccopy(&[&bad_in, "o.nc"], &dir);
    assert_fails(
        &o,
        1,
        &format!("nccopy: cannot open input: {}\n", word(&bad_in, "bogus")),
    );
    let bad_out = format!("file://{}#mode=zarr,fiel", dir.join("t.zarr").display());
    let o = nccopy(&["in.nc", &bad_out], &dir);
    assert_fails(
        &o,
        3,
        &format!("nccopy: cannot write output: {}\n", word(&bad_out, "fiel")),
    );
    assert!(!dir.join("t.zarr").exists());
    let o = run("ncdump-rs", &["-h", &bad_in], &dir);
    assert_eq!(err(&o), format!("ncdump: {}\n", word(&bad_in, "bogus")));
    assert!(!o.status.success());
    let o = run("ncgen-rs", &["-o", &bad_out, "in.cdl"], &dir);
    assert_eq!(
        err(&o),
        format!("ncgen: cannot write output: {}\n", word(&bad_out, "fiel"))
    );
    assert!(!o.status.success());
}

#[test]
fn zarr_directories_open_without_mode() {
    let (dir, _) = input("zdir");
    for (name, mode) in [("nc.zarr", "nczarr"), ("pure.zarr", "zarr")] {
        let url = format!("file://{}#mode={mode},file", dir.join(name).display());
        let o = nccopy(&["in.nc", &url], &dir);
        assert!(o.status.success(), "{}", err(&o));
        // a plain path to the directory, in ncdump and nccopy
        let o = run("ncdump-rs", &["-v", "lat", name], &dir);
        assert!(o.status.success(), "{name}: {}", err(&o));
        assert!(out(&o).contains(" lat = 1, 2, 3 ;"), "{}", out(&o));
        let copy = format!("{name}.nc");
        let o = nccopy(&[name, &copy], &dir);
        assert!(o.status.success(), "{name}: {}", err(&o));
        let o = run("ncdump-rs", &["-v", "small", &copy], &dir);
        assert!(out(&o).contains(" small = 1, 2, 3, 4 ;"), "{}", out(&o));
    }
    // a Zarr v3 directory opens by its plain path too
    std::fs::create_dir_all(dir.join("v3.zarr")).unwrap();
    std::fs::write(
        dir.join("v3.zarr/zarr.json"),
        "{\"zarr_format\": 3, \"node_type\": \"group\", \"attributes\": {\"t\": \"x\"}}",
    )
    .unwrap();
    let o = nccopy(&["v3.zarr", "o.nc"], &dir);
    assert!(o.status.success(), "{}", err(&o));
    let o = run("ncdump-rs", &["o.nc"], &dir);
    assert_eq!(
        out(&o),
        "netcdf o {\n\n// global attributes:\n\t\t:t = \"x\" ;\n}\n"
    );
}

#[test]
fn exit_codes_tell_input_usage_and_output_apart() {
    let (dir, _) = input("exits");
    // input: missing file
    let o = nccopy(&["missing.nc", "o.nc"], &dir);
    assert_fails(
        &o,
        1,
        "nccopy: cannot open input: missing.nc: No such file or directory (os error 2)\n",
    );
    // usage: a -v name the input lacks
    let o = nccopy(&["-v", "nope", "in.nc", "o.nc"], &dir);
    assert_fails(
        &o,
        2,
        "nccopy: variable \"nope\" given to -v/-V is not in the input\n",
    );
    // output: a directory that is not a store is never replaced
    std::fs::create_dir_all(dir.join("adir")).unwrap();
    let o = nccopy(&["in.nc", "adir"], &dir);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    assert!(
        err(&o).starts_with("nccopy: cannot write output: "),
        "{}",
        err(&o)
    );
    // output: the input itself
    let o = nccopy(&["in.nc", "in.nc"], &dir);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    assert!(bin("nccopy-rs").exists());
}
