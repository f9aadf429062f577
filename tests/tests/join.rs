//! Record joins (issue 34, `nccopy-rs IN1 IN2 ... OUT`, NCO's `ncrcat`): netCDF-C's ncdump of
//! our join equals its dump of NCO 5.1.4's `ncrcat` output (less the `history`, `NCO` and
//! `cell_methods = "REC: mean"` attributes ncrcat adds) for 2, 3 and 50 inputs — classic and
//! netCDF-4, a deflated variable, differing time units, fixed-size variables, a group —;
//! mismatches are refused as ncrcat refuses them (exit 1, nothing written) with a message
//! naming the file and the variable; a Zarr v3 join (whole and by `--part`) is read back by
//! zarr-python; 2,000 inputs join under `ulimit -n 256`; object-storage wildcards are listed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod servers;

use std::path::Path;
use std::process::{Command, Output};

use common::{bin, missing_references, run, tempdir};

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `name.nc` from CDL text, by our ncgen (`kind` as ncgen's `-k`).
fn ncgen(dir: &Path, name: &str, kind: &str, cdl: &str) {
    let cdl_file = format!("{name}.cdl");
    std::fs::write(dir.join(&cdl_file), cdl).unwrap();
    let o = run(
        "ncgen-rs",
        &["-k", kind, "-o", &format!("{name}.nc"), &cdl_file],
        dir,
    );
    assert!(o.status.success(), "{name}: {}", err(&o));
}

/// A classic input: two records from day `first` in `units`, fixed-size variables the same
/// in every file.
fn classic_cdl(first: i32, units: &str) -> String {
    format!(
        "netcdf c {{
dimensions:
  time = UNLIMITED ;
  x = 3 ;
  n = 4 ;
variables:
  double time(time) ;
    time:units = \"{units}\" ;
  float temp(time, x) ;
    temp:units = \"K\" ;
  int count(time) ;
  char label(time, n) ;
  float height(x) ;
  short flag ;
  :title = \"join test\" ;
data:
  time = {first}, {} ;
  temp = {first}.5, 1, 2, 3, 4, {first} ;
  count = {}, {} ;
  label = \"a{first}\", \"b{first}\" ;
  height = 10, 20, 30 ;
  flag = 7 ;
}}
",
        first + 1,
        first * 10,
        first * 10 + 1
    )
}

/// A netCDF-4 input: a deflated, chunked record variable and a group whose variable runs
/// along the root's record dimension; records from `first` by `step`.
fn nc4_cdl(first: i32, step: i32, units: &str) -> String {
    format!(
        "netcdf g {{
dimensions:
  time = UNLIMITED ;
  x = 2 ;
variables:
  int time(time) ;
    time:units = \"{units}\" ;
  float v(time, x) ;
    v:_Storage = \"chunked\" ;
    v:_ChunkSizes = 1, 2 ;
    v:_DeflateLevel = 4 ;
  int64 big(x) ;
  :title = \"nc4 join\" ;
data:
  time = {first}, {}, {} ;
  v = 1, 2, 3, 4, 5, {first} ;
  big = 1, 2 ;
group: sub {{
  dimensions:
    y = 3 ;
  variables:
    ushort w(time, y) ;
    double f(y) ;
  data:
    w = 1, 2, 3, 4, 5, 6, 7, 8, {first} ;
    f = 0.5, 1.5, 2.5 ;
  }}
}}
",
        first + step,
        first + 2 * step
    )
}

/// netCDF-C's ncdump of `file` without its first line and the attributes ncrcat adds
/// (`history`, `NCO`, and the `cell_methods = "time: mean"` NCO 5.1.4's ncrcat puts on every
/// record variable: docs/compat.md).
fn dump(dir: &Path, file: &str) -> String {
    let o = common::reference_ok("ncdump", &[file], dir);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .skip(1)
        .filter(|l| {
            !(l.contains(":history")
                || l.contains(":NCO")
                || l.contains("history_of_appended")
                || l.contains("nco_openmp_thread_number")
                || l.contains(":cell_methods = \"time: mean\""))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Join `inputs` with nccopy-rs (extra options first) and with ncrcat; the dumps must agree.
fn same_as_ncrcat(dir: &Path, inputs: &[String], opts: &[&str]) -> String {
    let mut args: Vec<&str> = opts.to_vec();
    args.extend(inputs.iter().map(String::as_str));
    args.push("ours.nc");
    let o = run("nccopy-rs", &args, dir);
    assert!(o.status.success(), "{inputs:?}: {}", err(&o));
    let mut nco: Vec<&str> = vec!["-O"];
    nco.extend(inputs.iter().map(String::as_str));
    nco.push("nco.nc");
    common::reference_ok("ncrcat", &nco, dir);
    let (ours, theirs) = (dump(dir, "ours.nc"), dump(dir, "nco.nc"));
    if let Some(d) = common::diff(theirs.as_bytes(), ours.as_bytes()) {
        panic!("{inputs:?}: nccopy-rs differs from ncrcat:\n{d}\nours:\n{ours}");
    }
    ours
}

#[test]
fn joins_equal_ncrcat_for_2_3_and_50_inputs() {
    if missing_references(&["ncrcat", "ncdump"]) {
        return;
    }
    let dir = tempdir("join-ncrcat");
    // two classic files, the second in other units (rebased to the first's)
    ncgen(&dir, "c0", "nc3", &classic_cdl(0, "days since 2000-01-01"));
    ncgen(
        &dir,
        "c1",
        "nc3",
        &classic_cdl(1, "hours since 2000-01-02 12:00"),
    );
    let two = same_as_ncrcat(&dir, &["c0.nc".into(), "c1.nc".into()], &[]);
    // hours 1 and 2 since 2000-01-02 12:00, in days since 2000-01-01
    assert!(
        two.contains(" time = 0, 1, 1.54166666666667, 1.58333333333333 ;"),
        "{two}"
    );
    assert!(two.contains("time = UNLIMITED ; // (4 currently)"), "{two}");

    // three netCDF-4 files with a deflated variable and a group; int times, the last file's
    // in minutes since another time
    ncgen(&dir, "g0", "nc4", &nc4_cdl(0, 1, "hours since 2000-01-01"));
    ncgen(&dir, "g1", "nc4", &nc4_cdl(3, 1, "hours since 2000-01-01"));
    ncgen(
        &dir,
        "g2",
        "nc4",
        &nc4_cdl(60, 60, "minutes since 2000-01-01 06:00"),
    );
    let inputs: Vec<String> = ["g0.nc", "g1.nc", "g2.nc"].map(String::from).to_vec();
    let three = same_as_ncrcat(&dir, &inputs, &[]);
    assert!(
        three.contains(" time = 0, 1, 2, 3, 4, 5, 7, 8, 9 ;"),
        "{three}"
    );
    // the same join with copy options: netCDF-4 classic model, deflate everything
    same_as_ncrcat(&dir, &inputs, &["-d", "1", "-s"]);

    // fifty classic files of two records each
    let names: Vec<String> = (0..50)
        .map(|i| {
            let name = format!("m{i:02}");
            ncgen(
                &dir,
                &name,
                "nc3",
                &classic_cdl(2 * i, "days since 2000-01-01"),
            );
            format!("{name}.nc")
        })
        .collect();
    let fifty = same_as_ncrcat(&dir, &names, &[]);
    assert!(
        fifty.contains("time = UNLIMITED ; // (100 currently)"),
        "{fifty}"
    );
}

/// A mismatch ncrcat refuses (a variable missing from the second file) is refused here too,
/// with exit 1, a message naming the file and the variable, and no output.
#[test]
fn mismatches_are_refused_before_anything_is_written() {
    if missing_references(&["ncrcat"]) {
        return;
    }
    let dir = tempdir("join-mismatch");
    ncgen(&dir, "a", "nc3", &classic_cdl(0, "days since 2000-01-01"));
    let without = classic_cdl(2, "days since 2000-01-01")
        .replace("  int count(time) ;\n", "")
        .replace("  count = 20, 21 ;\n", "");
    ncgen(&dir, "b", "nc3", &without);
    let nco = Command::new("ncrcat")
        .args(["-O", "a.nc", "b.nc", "nco.nc"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(nco.status.code(), Some(1), "ncrcat accepted it");
    assert!(!dir.join("nco.nc").exists());
    let o = run("nccopy-rs", &["a.nc", "b.nc", "out.nc"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(
        err(&o),
        "nccopy: cannot open input: b.nc: variable \"/count\" of a.nc is missing: joined files must have the same variables\n"
    );
    assert!(!dir.join("out.nc").exists());

    // a fixed dimension of another length: ncrcat refuses, so do we
    ncgen(
        &dir,
        "c",
        "nc3",
        &classic_cdl(2, "days since 2000-01-01")
            .replace("x = 3", "x = 2")
            .replace("temp = 2.5, 1, 2, 3, 4, 2", "temp = 2.5, 1, 2, 3")
            .replace("height = 10, 20, 30", "height = 10, 20"),
    );
    let o = run("nccopy-rs", &["a.nc", "c.nc", "out.nc"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(
        err(&o),
        "nccopy: cannot open input: c.nc: dimension \"/x\" has length 2, but 3 in a.nc: only the join dimension may differ\n"
    );
    assert!(!dir.join("out.nc").exists());

    // records out of order (ncrcat only warns; a join that goes back in time is a mistake)
    ncgen(&dir, "d", "nc3", &classic_cdl(2, "days since 2000-01-01"));
    let o = run("nccopy-rs", &["d.nc", "a.nc", "out.nc"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).starts_with("nccopy: cannot open input: a.nc: variable \"/time\": the joined coordinate is not monotonic at index 2 of the join (3 then 0)"),
        "{}",
        err(&o)
    );
    assert!(!dir.join("out.nc").exists());

    // variables the first lacks: the first of them by path is named
    ncgen(
        &dir,
        "e",
        "nc3",
        &classic_cdl(2, "days since 2000-01-01").replace(
            "  short flag ;\n",
            "  short flag ;\n  int zz ;\n  int aa ;\n",
        ),
    );
    let o = run("nccopy-rs", &["a.nc", "e.nc", "out.nc"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(
        err(&o),
        "nccopy: cannot open input: e.nc: variable \"/aa\" is not in a.nc: joined files must have the same variables\n"
    );
    assert!(!dir.join("out.nc").exists());

    // a missing input names the file
    let o = run("nccopy-rs", &["a.nc", "nope.nc", "out.nc"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).starts_with("nccopy: cannot open input: nope.nc"),
        "{}",
        err(&o)
    );
    assert!(!dir.join("out.nc").exists());
}

/// The inputs of the Zarr tests: three classic files.
fn three_classic(dir: &Path) -> Vec<String> {
    (0..3)
        .map(|i| {
            let name = format!("z{i}");
            ncgen(
                dir,
                &name,
                "nc3",
                &classic_cdl(2 * i, "days since 2000-01-01"),
            );
            format!("{name}.nc")
        })
        .collect()
}

const ZARR_PROBE: &str = "import zarr; assert int(zarr.__version__.split('.')[0]) >= 3";

/// zarr-python's view of a store: each array's shape and values.
fn zarr_values(dir: &Path, store: &str) -> Option<String> {
    let script = format!(
        "import zarr\n\
g = zarr.open_group('{store}', mode='r')\n\
for name in ['time', 'temp', 'count', 'height']: a = g[name]; print(name, a.shape, a[...].ravel().tolist())\n"
    );
    common::python_script(dir, ZARR_PROBE, "zarr 3", &script)
        .map(|o| String::from_utf8_lossy(&o).into_owned())
}

#[test]
fn a_join_to_zarr_v3_whole_and_by_parts_reads_back_in_zarr_python() {
    let dir = tempdir("join-zarr");
    let mut args = three_classic(&dir);
    let whole = format!("file://{}/whole.zarr#mode=zarr,v3,file", dir.display());
    args.push(whole);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run("nccopy-rs", &a, &dir);
    assert!(o.status.success(), "{}", err(&o));
    let parts = format!("file://{}/parts.zarr#mode=zarr,v3,file", dir.display());
    *args.last_mut().unwrap() = parts;
    for step in ["init", "0/2", "1/2", "finish"] {
        let mut a: Vec<&str> = vec!["--part", step];
        a.extend(args.iter().map(String::as_str));
        let o = run("nccopy-rs", &a, &dir);
        assert!(o.status.success(), "--part {step}: {}", err(&o));
    }
    let Some(got) = zarr_values(&dir, "whole.zarr") else {
        return;
    };
    let want = "time (6,) [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]\n\
temp (6, 3) [0.5, 1.0, 2.0, 3.0, 4.0, 0.0, 2.5, 1.0, 2.0, 3.0, 4.0, 2.0, 4.5, 1.0, 2.0, 3.0, 4.0, 4.0]\n\
count (6,) [0, 1, 20, 21, 40, 41]\n\
height (3,) [10.0, 20.0, 30.0]\n";
    assert_eq!(got, want);
    assert_eq!(zarr_values(&dir, "parts.zarr").unwrap(), want);
}

/// The bytes of a classic file with one record of `double time` and `int v`, made from one
/// ncgen'd in `dir`: `time` and `v` are the record's values.
fn one_record_files(dir: &Path) -> impl Fn(f64, i32) -> Vec<u8> {
    ncgen(
        dir,
        "base",
        "nc3",
        "netcdf b { dimensions: time = UNLIMITED ; variables: double time(time) ; int v(time) ; data: time = 0 ; v = 0 ; }",
    );
    let base = std::fs::read(dir.join("base.nc")).unwrap();
    move |time, v| {
        // the one record: time (8 bytes, big-endian) then v (4 bytes)
        let mut b = base.clone();
        let at = b.len() - 12;
        b[at..at + 8].copy_from_slice(&time.to_be_bytes());
        b[at + 8..].copy_from_slice(&v.to_be_bytes());
        b
    }
}

/// 2,000 one-record classic inputs join with at most 256 open descriptors: the inputs are
/// one file written by ncgen-rs with its last record's bytes changed (time and value).
#[test]
fn two_thousand_inputs_join_under_256_descriptors() {
    let dir = tempdir("join-many");
    let record = one_record_files(&dir);
    let n: i32 = 2000;
    let mut names = Vec::new();
    for i in 0..n {
        let name = format!("in{i:04}.nc");
        std::fs::write(dir.join(&name), record(f64::from(i), i * 3)).unwrap();
        names.push(name);
    }
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" \"$@\"")
        .arg(bin("nccopy-rs"))
        .args(&names)
        .arg("out.nc")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let o = run("ncdump-rs", &["-v", "v", "out.nc"], &dir);
    assert!(o.status.success(), "{}", err(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let data = &text[text.find(" v =").unwrap() + 4..];
    let got: Vec<i32> = data
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter_map(|t| t.parse().ok())
        .collect();
    assert_eq!(got, (0..n).map(|i| i * 3).collect::<Vec<i32>>());
    assert!(
        text.contains("time = UNLIMITED ; // (2000 currently)"),
        "{text}"
    );
}

/// Inputs are opened, and their coordinates read, a batch ahead of the checks on other
/// threads; the error reported is still the first bad input's in the order given: a coordinate
/// going back at input 120 of 200 before an unreadable input 170 and a missing one at 190;
/// then, each fixed in turn, the next.
#[test]
fn the_first_bad_input_in_order_is_the_one_reported() {
    let dir = tempdir("join-order");
    let record = one_record_files(&dir);
    let file = |i: i32, time: f64| record(time, i);
    let names: Vec<String> = (0..200).map(|i| format!("in{i:04}.nc")).collect();
    for (i, name) in (0..).zip(&names) {
        let time = if i == 120 { 5.0 } else { f64::from(i) };
        let mut b = file(i, time);
        if i == 170 {
            b.truncate(b.len() - 12); // the header declares a record the file does not hold
        }
        if i != 190 {
            std::fs::write(dir.join(name), b).unwrap();
        }
    }
    let join = || {
        let mut args: Vec<&str> = names.iter().map(String::as_str).collect();
        args.push("out.nc");
        let o = run("nccopy-rs", &args, &dir);
        assert_eq!(o.status.code(), Some(1), "{}", err(&o));
        assert!(!dir.join("out.nc").exists());
        err(&o)
    };
    let e = join();
    assert!(
        e.starts_with(
            "nccopy: cannot open input: in0120.nc: variable \"/time\": the joined coordinate is not monotonic at index 120 of the join (119 then 5)"
        ),
        "{e}"
    );
    std::fs::write(dir.join("in0120.nc"), file(120, 120.0)).unwrap();
    // (the reader's words once, not again as the join error's cause)
    assert_eq!(
        join(),
        "nccopy: cannot open input: in0170.nc: variable \"/time\": variable \"time\": data up to byte 124 is needed but the file has 116 bytes (truncated copy?)\n"
    );
    std::fs::write(dir.join("in0170.nc"), file(170, 170.0)).unwrap();
    let e = join();
    assert!(e.starts_with("nccopy: cannot open input: in0190.nc"), "{e}");
    std::fs::write(dir.join("in0190.nc"), file(190, 190.0)).unwrap();
    let mut args: Vec<&str> = names.iter().map(String::as_str).collect();
    args.push("out.nc");
    let o = run("nccopy-rs", &args, &dir);
    assert!(o.status.success(), "{}", err(&o));
}

/// `s3://bucket/prefix/*.nc` lists the prefix and joins the matches in name order, as the
/// same files joined locally; a wildcard that matches nothing is an error naming it.
#[test]
fn an_object_storage_wildcard_joins_its_matches_in_name_order() {
    let Some(m) = servers::moto() else {
        return;
    };
    m.bucket("join");
    let dir = tempdir("join-s3");
    let local = three_classic(&dir);
    let s3 =
        |args: &[&str]| -> Output { m.command("nccopy-rs", &dir).args(args).output().unwrap() };
    // uploaded in reverse, so the listing's order is the one that counts
    for name in local.iter().rev() {
        let o = s3(&[name, &format!("s3://join/run/{name}")]);
        assert!(o.status.success(), "{}", err(&o));
    }
    let o = s3(&["s3://join/run/z*.nc", "remote.nc"]);
    assert!(o.status.success(), "{}", err(&o));
    let mut args: Vec<&str> = local.iter().map(String::as_str).collect();
    args.push("local.nc");
    let o = run("nccopy-rs", &args, &dir);
    assert!(o.status.success(), "{}", err(&o));
    let dump = |f: &str| run("ncdump-rs", &[f], &dir).stdout;
    let (r, l) = (dump("remote.nc"), dump("local.nc"));
    let strip = |b: Vec<u8>| {
        String::from_utf8_lossy(&b)
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(r), strip(l));

    let o = s3(&["s3://join/run/none*.nc", "empty.nc"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(
        err(&o),
        "nccopy: cannot open input: s3://join/run/none*.nc: no object matches the wildcard; check the bucket and the prefix (nccopy-rs lists the prefix before the first wildcard and sorts the names)\n"
    );
    assert!(!dir.join("empty.nc").exists());
}

#[test]
fn explain_names_each_inputs_records_and_rebase() {
    let dir = tempdir("join_explain");
    ncgen(&dir, "a", "nc3", &classic_cdl(0, "days since 2000-01-01"));
    ncgen(&dir, "b", "nc3", &classic_cdl(1, "hours since 2000-01-03"));
    ncgen(&dir, "c", "nc3", &classic_cdl(5, "days since 2000-01-01"));
    let o = run(
        "nccopy-rs",
        &["--explain", "a.nc", "b.nc", "c.nc", "out.nc"],
        &dir,
    );
    assert!(o.status.success(), "{}", err(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    // b's hours since 2000-01-03 are days since 2000-01-01 times 1/24 plus 2
    assert_eq!(
        lines[..4],
        [
            "join along /time: 6 in all, from 3 inputs; coordinate values rebased to the first input's units",
            "  a.nc: /time 0-1",
            &format!("  b.nc: /time 2-3 (values * {} + 2)", 1.0 / 24.0),
            "  c.nc: /time 4-5",
        ],
        "{text}"
    );
    // then the copy's table, one line per variable, and nothing written
    assert!(
        lines[4..].iter().any(|l| l.starts_with("/temp: ")),
        "{text}"
    );
    assert!(!dir.join("out.nc").exists());
}
