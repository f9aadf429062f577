//! Issue 18.3: `ncdump-rs --kerchunk` writes a kerchunk reference file (virtual Zarr) for a
//! classic or netCDF-4/HDF5 file.
//!
//! - `tests/kerchunk/check.py` writes small equivalents of the benchmark corpus, files that
//!   exercise every case of the references (netCDF4-python and h5py) and the interop corpus,
//!   runs `ncdump-rs --kerchunk` on each, and reads every variable through xarray over
//!   fsspec's ReferenceFileSystem against netCDF4-python reading the file: the report must
//!   show no difference, the refusals expected here and nothing else (skipped with a SKIP line
//!   when the Python clients are missing).
//! - Without Python: refusals (a filter numcodecs cannot undo, names the variable and the
//!   cure, and writes nothing), option errors, and a classic file's reference file against
//!   `testdata/expected/kerchunk/classic.json` (`UPDATE_EXPECTED=1` rewrites it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::fs;

const CLIENTS: &str = "import netCDF4, h5py, hdf5plugin, xarray, zarr, fsspec, numcodecs
assert int(zarr.__version__.split('.')[0]) >= 3";

/// Refused variables: (file, variable, what the reason says).
const REFUSED: &[(&str, &str, &str)] = &[
    ("h5py_types.h5", "/vlen_int", "variable-length data"),
    (
        "h5py_real_writers.h5",
        "/vlen_fixed",
        "variable-length data",
    ),
    (
        "h5py_filters.h5",
        "/lz4",
        "filter 32004 (lz4) cannot be referenced",
    ),
    ("h5py_filters.h5", "/nbit", "filter 5 cannot be referenced"),
    (
        "h5py_filters.h5",
        "/scaleoffset_float",
        "filter 6 cannot be referenced",
    ),
    (
        "h5py_filters.h5",
        "/scaleoffset_int",
        "filter 6 cannot be referenced",
    ),
    ("h5py_lzf.h5", "/lzf", "filter 32000 cannot be referenced"),
    (
        "h5py_lzf.h5",
        "/lzf_shuffle",
        "filter 32000 cannot be referenced",
    ),
    ("nc4_types.nc", "/ragged", "variable-length data"),
    ("nc4_types.nc", "/cmpd", "padding bytes before field \"b\""),
    (
        "nc4_compress.nc",
        "/d_zlib_shuffle_f32",
        "not whole 8-byte elements",
    ),
    (
        "nc4_compress.nc",
        "/i_szip",
        "filter 4 (szip) cannot be referenced",
    ),
    (
        "nc4_compress.nc",
        "/d_szip",
        "filter 4 (szip) cannot be referenced",
    ),
    (
        "nc4_nested.nc",
        "/obs",
        "field \"r\" that is an array or a compound",
    ),
    ("k_nc4.nc", "/fletcher_f8", "not whole 8-byte elements"),
    ("k_nc4.nc", "/flat", "padding bytes before field \"b\""),
    (
        "k_nc4.nc",
        "/with_array",
        "field \"c\" that is an array or a compound",
    ),
    ("k_nc4.nc", "/ragged", "variable-length data"),
    ("k_nc4.nc", "/szip", "filter 4 (szip) cannot be referenced"),
    (
        "k_h5py.h5",
        "/bitshuffle",
        "filter 32008 cannot be referenced",
    ),
    (
        "k_h5py.h5",
        "/lz4",
        "filter 32004 (lz4) cannot be referenced",
    ),
    ("k_h5py.h5", "/scaleoffset", "filter 6 cannot be referenced"),
];

fn strings(v: &serde_json::Value) -> Vec<Vec<String>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn xarray_through_the_references_reads_what_netcdf4_python_reads() {
    let dir = tempdir("kerchunk-check");
    let script = root().join("tests/kerchunk/check.py");
    let tool = bin("ncdump-rs");
    let probe = std::process::Command::new("python3")
        .args(["-c", CLIENTS])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "SKIP: python3 with netCDF4, h5py, hdf5plugin, xarray, zarr 3, fsspec not installed"
        );
        return;
    }
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(&tool)
        .arg(dir.join("work"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failures = strings(&report["failures"]);
    assert!(
        failures.is_empty(),
        "differences:\n{}",
        failures
            .iter()
            .map(|f| f.join(" | "))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // every refusal expected, with its reason, and no other
    let refused = strings(&report["refused"]);
    for (file, var, why) in REFUSED {
        let hit = refused.iter().find(|r| r[0] == *file && r[1] == *var);
        let hit = hit.unwrap_or_else(|| panic!("{file} {var} was not refused: {refused:?}"));
        assert!(hit[2].contains(why), "{file} {var}: {}", hit[2]);
    }
    for r in &refused {
        assert!(
            REFUSED.iter().any(|(f, v, _)| r[0] == *f && r[1] == *v),
            "unexpected refusal: {r:?}"
        );
    }
    // what the clients could not read themselves: netCDF4-python cannot open this file, and
    // netCDF-C reads the fixed-string fields of h5py's compounds wrongly and types the 12-bit
    // integer as short (h5py agrees with us: compat.md)
    assert_eq!(
        strings(&report["unopenable"])
            .iter()
            .map(|r| r[0].as_str())
            .collect::<Vec<_>>(),
        ["h5py_unshown.h5"]
    );
    assert!(strings(&report["unreadable"]).is_empty());
    let agrees = strings(&report["h5py_agrees"]);
    let mut agrees: Vec<(&str, &str)> = agrees
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    agrees.sort_unstable();
    assert_eq!(
        agrees,
        [
            ("h5py_real_writers.h5", "/int12"),
            ("h5py_real_writers.h5", "/records"),
            ("h5py_types.h5", "/compound")
        ]
    );
    // bytes in other files: external raw storage and an external link's target
    let others: Vec<(String, String)> = strings(&report["other_files"])
        .into_iter()
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect();
    assert!(others.contains(&("h5py_external.h5".into(), "h5py_external.bin".into())));
    assert!(others.contains(&("k_extlink.h5".into(), "k_linked.h5".into())));
    let compared = report["compared"].as_u64().unwrap();
    let decoded = report["decoded"].as_u64().unwrap();
    assert!(compared >= 300, "only {compared} variables compared");
    assert!(decoded >= 80, "only {decoded} variables compared decoded");
    eprintln!(
        "kerchunk: {} files, {compared} variables equal, {decoded} decoded equal, {} refused",
        report["files"].as_array().unwrap().len(),
        refused.len()
    );
}

const CLASSIC_CDL: &str = r#"netcdf refs {
dimensions:
	time = UNLIMITED ;
	x = 3 ;
	len = 4 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
	float t(time, x) ;
		t:_FillValue = -999.f ;
		t:valid_range = 0.f, 400.f ;
	char name(x, len) ;
	short s(x) ;
	int scalar ;
	byte b(time) ;

// global attributes:
		:title = "kerchunk \"refs\" ✓" ;
		:nan = NaNf ;
data:

 time = 0, 0.5 ;

 t = 280, 281.5, _, 283, 284, 285 ;

 name = "ab", "", "wxyz" ;

 s = -1, 0, 32767 ;

 scalar = 7 ;

 b = -128, 127 ;
}
"#;

#[test]
fn classic_references_match_the_snapshot() {
    let dir = tempdir("kerchunk-classic");
    fs::write(dir.join("refs.cdl"), CLASSIC_CDL).unwrap();
    run_ok(
        "ncgen-rs",
        &["-k", "nc3", "-o", "refs.nc", "refs.cdl"],
        &dir,
    );
    let out = run_ok(
        "ncdump-rs",
        &[
            "--kerchunk",
            "--kerchunk-url",
            "s3://bucket/refs.nc",
            "refs.nc",
        ],
        &dir,
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let refs = doc["refs"].as_object().unwrap();
    // records: one chunk per record at begin + r * recsize, big-endian, the URL as given
    let r0 = refs["t/0.0"].as_array().unwrap();
    let r1 = refs["t/1.0"].as_array().unwrap();
    assert_eq!(r0[0], "s3://bucket/refs.nc");
    assert_eq!(r0[2], 12);
    let recsize = r1[1].as_u64().unwrap() - r0[1].as_u64().unwrap();
    assert_eq!(recsize, 8 + 12 + 4, "time + t + b (padded) per record");
    let zarray: serde_json::Value =
        serde_json::from_str(refs["t/.zarray"].as_str().unwrap()).unwrap();
    assert_eq!(zarray["dtype"], ">f4");
    assert_eq!(zarray["chunks"], serde_json::json!([1, 3]));
    assert_eq!(zarray["fill_value"], -999.0);
    let path = testdata("expected/kerchunk/classic.json");
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &out.stdout).unwrap();
    }
    let want = fs::read(&path).unwrap();
    if let Some(d) = diff(&want, &out.stdout) {
        panic!(
            "ncdump-rs --kerchunk refs.nc: {d}\n--- got:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // the default URL is the input's absolute path
    let out = run("ncdump-rs", &["--kerchunk", "-v", "s", "refs.nc"], &dir);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let abs = fs::canonicalize(dir.join("refs.nc")).unwrap();
    assert_eq!(doc["refs"]["s/0"][0], abs.to_str().unwrap());
    assert!(
        doc["refs"].get("t/.zarray").is_none(),
        "-v s selects s only"
    );
}

#[test]
fn refusals_name_the_variable_and_write_nothing() {
    let dir = tempdir("kerchunk-refuse");
    let cdl = "netcdf bad {\ndimensions:\n\tn = 6 ;\nvariables:\n\tint ok(n) ;\n\tint packed(n) ;\n\t\tpacked:_Filter = \"32004\" ;\n\t\tpacked:_ChunkSizes = 3 ;\ndata:\n ok = 1, 2, 3, 4, 5, 6 ;\n packed = 1, 2, 3, 4, 5, 6 ;\n}\n";
    fs::write(dir.join("bad.cdl"), cdl).unwrap();
    run_ok("ncgen-rs", &["-4", "-o", "bad.nc", "bad.cdl"], &dir);
    let out = run("ncdump-rs", &["--kerchunk", "bad.nc"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty(), "nothing is written before a refusal");
    assert!(
        err.starts_with("ncdump: writing kerchunk references: variable \"/packed\" cannot be referenced as Zarr chunks: its filter 32004 (lz4) cannot be referenced: HDF5's lz4 framing is not numcodecs' lz4; rewrite it with filters numcodecs decodes (e.g. nccopy-rs -F 'packed,zstd,3' in.nc out.nc, then reference out.nc), or leave it out by naming the other variables with -v"),
        "{err}"
    );
    // the cure works: the other variable alone
    let out = run_ok("ncdump-rs", &["--kerchunk", "-v", "ok", "bad.nc"], &dir);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["refs"].get("ok/0").is_some() && doc["refs"].get("packed/0").is_none());
    // so does the other: recompress with a filter numcodecs has
    run_ok(
        "nccopy-rs",
        &["-F", "packed,zstd,3", "bad.nc", "good.nc"],
        &dir,
    );
    let out = run_ok("ncdump-rs", &["--kerchunk", "good.nc"], &dir);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let z: serde_json::Value =
        serde_json::from_str(doc["refs"]["packed/.zarray"].as_str().unwrap()).unwrap();
    assert_eq!(
        z["filters"],
        serde_json::json!([{"id": "zstd", "level": 3}])
    );

    // a name that is no variable
    let out = run("ncdump-rs", &["--kerchunk", "-v", "nosuch", "bad.nc"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ncdump: writing kerchunk references: nosuch: No such variable\n"
    );
    // options that make no sense with it are usage errors
    for args in [
        &["--kerchunk", "-h", "bad.nc"][..],
        &["--kerchunk", "-x", "bad.nc"],
        &["--kerchunk-url", "x", "bad.nc"],
    ] {
        let out = run("ncdump-rs", args, &dir);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // a Zarr store is Zarr already
    run_ok(
        "nccopy-rs",
        &["bad.nc", "file://bad.zarr#mode=zarr,file"],
        &dir,
    );
    let out = run("ncdump-rs", &["--kerchunk", "-v", "ok", "bad.zarr"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("it is Zarr already"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A netCDF-4 file: `v(time, y, x)` (6, 4, 5) chunked (2, 2, 3), deflated and shuffled,
/// with coordinates `time`, `y`, `x`, and an uncut `w(y)`.
const SUBSET_NC4: &str = r#"netcdf sub4 {
dimensions:
	time = UNLIMITED ;
	y = 4 ;
	x = 5 ;
variables:
	double time(time) ;
		time:units = "hours since 2000-01-01" ;
	float y(y) ;
	float x(x) ;
	float v(time, y, x) ;
		v:_FillValue = -1.f ;
		v:_ChunkSizes = 2, 2, 3 ;
		v:_DeflateLevel = 4 ;
		v:_Shuffle = "true" ;
	int w(y) ;
data:
 time = 0, 6, 12, 18, 24, 30 ;
 y = 10, 20, 30, 40 ;
 x = 1, 2, 3, 4, 5 ;
 v = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
  20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
  40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
  80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
  100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119 ;
 w = 7, 8, 9, 10 ;
}
"#;

/// A classic file: record variables `time` and `t(time, x)` (5 records, x = 4), fixed
/// `s(x)`.
const SUBSET_NC3: &str = r#"netcdf sub3 {
dimensions:
	time = UNLIMITED ;
	x = 4 ;
variables:
	double time(time) ;
	float x(x) ;
	float t(time, x) ;
	short s(x) ;
data:
 time = 0, 1, 2, 3, 4 ;
 x = 0.5, 1.5, 2.5, 3.5 ;
 t = 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33, 40, 41, 42, 43 ;
 s = -1, -2, -3, -4 ;
}
"#;

/// `xarray` through each case's references equals `xr.open_dataset(file).isel(...)`;
/// prints, per case, the variables compared and their shapes.
const SUBSET_CHECK: &str = r#"
import json, sys
import numpy as np, xarray as xr
out = []
for refs, nc, isel in json.loads(sys.argv[1]):
    r = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs, "remote_protocol": "file"}}).load()
    f = xr.open_dataset(nc).isel({k: slice(*v) for k, v in isel.items()}).load()
    xr.testing.assert_equal(r, f)
    for v in f.variables:
        assert r[v].dims == f[v].dims, (refs, v)
        assert np.array_equal(r[v].values, f[v].values), (refs, v, r[v].values, f[v].values)
    out.append([refs, {v: list(f[v].shape) for v in sorted(f.variables)}])
print(json.dumps(out))
"#;

#[test]
fn a_subset_is_referenced_by_the_chunks_it_keeps_or_carried_inline() {
    let dir = tempdir("kerchunk-subset");
    fs::write(dir.join("sub4.cdl"), SUBSET_NC4).unwrap();
    fs::write(dir.join("sub3.cdl"), SUBSET_NC3).unwrap();
    run_ok(
        "ncgen-rs",
        &["-k", "nc4", "-o", "sub4.nc", "sub4.cdl"],
        &dir,
    );
    run_ok(
        "ncgen-rs",
        &["-k", "nc3", "-o", "sub3.nc", "sub3.cdl"],
        &dir,
    );
    let refs = |args: &[&str], out: &str| -> serde_json::Map<String, serde_json::Value> {
        let mut a = vec!["--kerchunk"];
        a.extend_from_slice(args);
        let o = run_ok("ncdump-rs", &a, &dir);
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        fs::write(dir.join(out), &o.stdout).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["refs"].as_object().unwrap().clone()
    };
    let zarray = |r: &serde_json::Map<String, serde_json::Value>, k: &str| -> serde_json::Value {
        serde_json::from_str(r[&format!("{k}/.zarray")].as_str().unwrap()).unwrap()
    };
    let inline = |v: &serde_json::Value| v.as_str().is_some_and(|s| s.starts_with("base64:"));
    let whole4 = refs(&["sub4.nc"], "whole4.json");
    let whole3 = refs(&["sub3.nc"], "whole3.json");

    // aligned: time from 2 (chunks of 2), x from 3 (chunks of 3): the input's chunks,
    // renumbered; the last x chunk reaches past the subset's 2 columns
    let a4 = refs(
        &["--dimension", "time,2,5", "--dimension", "x,3,4", "sub4.nc"],
        "a4.json",
    );
    let z = zarray(&a4, "v");
    assert_eq!(z["shape"], serde_json::json!([4, 4, 2]));
    assert_eq!(z["chunks"], serde_json::json!([2, 2, 3]));
    assert_eq!(z["filters"], zarray(&whole4, "v")["filters"]);
    for (view, input) in [("0.0.0", "1.0.1"), ("1.1.0", "2.1.1"), ("0.1.0", "1.1.1")] {
        assert_eq!(
            a4[&format!("v/{view}")],
            whole4[&format!("v/{input}")],
            "v/{view}"
        );
    }
    let keys: Vec<&String> = a4
        .keys()
        .filter(|k| k.starts_with("v/") && !k.contains("/."))
        .collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
    // coordinates of cut dimensions inline; others and uncut variables as without a subset
    assert!(inline(&a4["time/0"]) && inline(&a4["x/0"]));
    assert_eq!(a4["y/0"], whole4["y/0"]);
    assert_eq!(a4["w/0"], whole4["w/0"]);

    // unaligned: time 1..4 every 2nd, y from 1 (inside the first chunk): values inline,
    // deflated and shuffled as the input's
    let u4 = refs(
        &[
            "--dimension",
            "time,1,4,2",
            "--dimension",
            "y,1,2",
            "sub4.nc",
        ],
        "u4.json",
    );
    let z = zarray(&u4, "v");
    assert_eq!(z["shape"], serde_json::json!([2, 2, 5]));
    assert_eq!(z["chunks"], serde_json::json!([2, 2, 3]));
    assert_eq!(z["filters"], zarray(&whole4, "v")["filters"]);
    assert!(inline(&u4["v/0.0.0"]) && inline(&u4["v/0.0.1"]));
    assert!(u4.get("v/1.0.0").is_none());

    // classic: records 2..3 (one record per chunk here: two record variables) and x from 0
    let a3 = refs(
        &["--dimension", "time,2,3", "--dimension", "x,0,1", "sub3.nc"],
        "a3.json",
    );
    assert_eq!(a3["t/0.0"], whole3["t/2.0"]);
    assert_eq!(a3["t/1.0"], whole3["t/3.0"]);
    assert!(a3.get("t/2.0").is_none());
    assert_eq!(zarray(&a3, "t")["chunks"], serde_json::json!([1, 4]));
    assert_eq!(a3["s/0"], whole3["s/0"], "x from 0: the whole chunk");
    // x from 1: inline, big-endian as stored
    let u3 = refs(&["--dimension", "x,1,2", "sub3.nc"], "u3.json");
    assert!(inline(&u3["t/0.0"]) && inline(&u3["s/0"]));
    assert_eq!(zarray(&u3, "s")["dtype"], ">i2");
    let s = u3["s/0"]
        .as_str()
        .unwrap()
        .trim_start_matches("base64:")
        .to_string();
    assert_eq!(s, "//7//Q==", "-2, -3 big-endian");
    assert_eq!(u3["time/0"], whole3["time/0"], "time is not cut");

    // the same subsets in fsspec's Parquet layout
    for (args, out) in [
        (
            &["--dimension", "time,2,5", "--dimension", "x,3,4", "sub4.nc"][..],
            "a4.parq",
        ),
        (&["--dimension", "x,1,2", "sub3.nc"][..], "u3.parq"),
    ] {
        let mut a = vec![
            "--kerchunk",
            "--kerchunk-format",
            "parquet",
            "--kerchunk-out",
            out,
        ];
        a.extend_from_slice(args);
        let o = run_ok("ncdump-rs", &a, &dir);
        assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{o:?}");
        assert!(dir.join(out).join(".zmetadata").exists());
    }

    // several inputs are refused, in words
    let o = run(
        "ncdump-rs",
        &["--kerchunk", "--dimension", "x,0,1", "sub3.nc", "sub3.nc"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "ncdump: --dimension with --kerchunk takes one file: references of a subset of several files joined are not made; make references of the join, or of each file's subset\n"
    );

    let cases = serde_json::json!([
        ["a4.json", "sub4.nc", {"time": [2, 6], "x": [3, 5]}],
        ["u4.json", "sub4.nc", {"time": [1, 5, 2], "y": [1, 3]}],
        ["a3.json", "sub3.nc", {"time": [2, 4], "x": [0, 2]}],
        ["u3.json", "sub3.nc", {"x": [1, 3]}],
        ["a4.parq", "sub4.nc", {"time": [2, 6], "x": [3, 5]}],
        ["u3.parq", "sub3.nc", {"x": [1, 3]}],
    ]);
    let script = format!(
        "import sys\nsys.argv = ['check', {:?}]\n{SUBSET_CHECK}",
        cases.to_string()
    );
    let probe = format!("{CLIENTS}\nimport fastparquet");
    let Some(out) = python_script(
        &dir,
        &probe,
        "xarray, zarr 3, fsspec, fastparquet, netCDF4",
        &script,
    ) else {
        return;
    };
    let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        got,
        serde_json::json!([
            ["a4.json", {"time": [4], "v": [4, 4, 2], "w": [4], "x": [2], "y": [4]}],
            ["u4.json", {"time": [2], "v": [2, 2, 5], "w": [2], "x": [5], "y": [2]}],
            ["a3.json", {"s": [2], "t": [2, 2], "time": [2], "x": [2]}],
            ["u3.json", {"s": [2], "t": [5, 2], "time": [5], "x": [2]}],
            ["a4.parq", {"time": [4], "v": [4, 4, 2], "w": [4], "x": [2], "y": [4]}],
            ["u3.parq", {"s": [2], "t": [5, 2], "time": [5], "x": [2]}],
        ])
    );
}
