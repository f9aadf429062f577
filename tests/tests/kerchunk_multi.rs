//! Issue 34: `ncdump-rs --kerchunk IN1 IN2 ... INn` writes one reference set showing the
//! inputs as one dataset joined along the record dimension (kerchunk's
//! `MultiZarrToZarr(concat_dims=[DIM])`), as JSON or in fsspec's Parquet layout.
//!
//! - xarray through the references (JSON and Parquet) reads what `xr.open_mfdataset(files,
//!   combine="nested", concat_dim=DIM)` reads, value for value: three netCDF-4 files with a
//!   chunked deflated variable and a fixed-size one, three classic files with record
//!   variables, and two files whose time units differ, whose joined time values are the
//!   ones `nccopy-rs IN1 IN2 OUT` writes (rebased to the first file's units). Skipped with a
//!   SKIP line when the Python clients are missing.
//! - Without Python: the keys and URLs of the joined references; refusals (variables that do
//!   not match, a chunk along the join that would straddle two files) exit 1 naming the file
//!   and the variable, with nothing on standard output and no directory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::fs;
use std::path::Path;

/// A netCDF-4 file of `n` records from `first`: `temp` chunked (1, 2, 3) and deflated,
/// `flat` fixed-size.
fn nc4_cdl(n: usize, first: usize, units: &str, time_chunk: usize) -> String {
    let times: Vec<String> = (first..first + n).map(|t| t.to_string()).collect();
    let temp: Vec<String> = (0..n * 12).map(|k| (first * 100 + k).to_string()).collect();
    format!(
        r#"netcdf m4 {{
dimensions:
	time = UNLIMITED ;
	y = 3 ;
	x = 4 ;
variables:
	double time(time) ;
		time:units = "{units}" ;
	float temp(time, y, x) ;
		temp:_FillValue = -999.f ;
		temp:_ChunkSizes = {time_chunk}, 2, 3 ;
		temp:_DeflateLevel = 4 ;
	int flat(y, x) ;
data:
 time = {} ;
 temp = {} ;
 flat = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
}}
"#,
        times.join(", "),
        temp.join(", ")
    )
}

/// A classic file of `n` records from `first`: record variables `t(time, x)` and `b(time)`,
/// fixed `s(x)`.
fn classic_cdl(n: usize, first: usize) -> String {
    let times: Vec<String> = (first..first + n).map(|t| (t * 6).to_string()).collect();
    let t: Vec<String> = (0..n * 3)
        .map(|k| format!("{}.5", first * 10 + k))
        .collect();
    let b: Vec<String> = (first..first + n)
        .map(|k| (k as i32 - 3).to_string())
        .collect();
    format!(
        r#"netcdf m3 {{
dimensions:
	time = UNLIMITED ;
	x = 3 ;
variables:
	double time(time) ;
		time:units = "hours since 2001-01-01" ;
	float t(time, x) ;
	byte b(time) ;
	short s(x) ;
data:
 time = {} ;
 t = {} ;
 b = {} ;
 s = -1, 0, 32767 ;
}}
"#,
        times.join(", "),
        t.join(", "),
        b.join(", ")
    )
}

/// Write `cdl` as `name.nc` in `dir` (`kind`: ncgen-rs's -k).
fn make(dir: &Path, name: &str, kind: &str, cdl: &str) -> String {
    fs::write(dir.join(format!("{name}.cdl")), cdl).unwrap();
    let nc = format!("{name}.nc");
    run_ok(
        "ncgen-rs",
        &["-k", kind, "-o", &nc, &format!("{name}.cdl")],
        dir,
    );
    nc
}

/// The JSON references and the Parquet directory `out` of `files` joined.
fn references(dir: &Path, files: &[&str], out: &str) -> serde_json::Value {
    let mut args = vec!["--kerchunk"];
    args.extend_from_slice(files);
    let json = run_ok("ncdump-rs", &args, dir);
    fs::write(dir.join(format!("{out}.json")), &json.stdout).unwrap();
    let mut args = vec![
        "--kerchunk",
        "--kerchunk-format",
        "parquet",
        "--kerchunk-record-size",
        "4",
        "--kerchunk-out",
    ];
    let parq = format!("{out}.parq");
    args.push(&parq);
    args.extend_from_slice(files);
    let p = run_ok("ncdump-rs", &args, dir);
    assert!(p.stdout.is_empty() && p.stderr.is_empty(), "{p:?}");
    serde_json::from_slice(&json.stdout).unwrap()
}

fn abs(dir: &Path, f: &str) -> String {
    fs::canonicalize(dir.join(f))
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

const CLIENTS: &str = "import xarray, zarr, fsspec, dask, fastparquet, netCDF4
assert int(zarr.__version__.split('.')[0]) >= 3";

/// For each case: xarray through the JSON and the Parquet references against
/// `open_mfdataset` of the files (times decoded), then the raw values against nccopy-rs's
/// join (times as numbers). Prints the variables compared.
const CHECK: &str = r#"
import json, sys
import numpy as np, xarray as xr

def refs(fo, decode):
    return xr.open_dataset("reference://", engine="zarr", decode_times=decode, backend_kwargs={
        "consolidated": False, "storage_options": {"fo": fo, "remote_protocol": "file"}})

def same(name, a, b):
    for v in b.variables:
        x, y = a[v].values, b[v].values
        assert x.shape == y.shape and a[v].dims == b[v].dims, (name, v, x.shape, y.shape)
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), (name, v, x, y)
        else:
            assert (x == y).all(), (name, v, x, y)
    assert sorted(a.variables) == sorted(b.variables), (name, list(a.variables), list(b.variables))

compared = []
for name, files, dim in json.loads(sys.argv[1]):
    with xr.open_mfdataset(files, combine="nested", concat_dim=dim, data_vars="minimal",
                           coords="minimal", compat="override") as mf:
        mf = mf.load()
        for kind in ["json", "parq"]:
            r = refs(f"{name}.{kind}", True)
            same(f"{name}.{kind}", r, mf)
            xr.testing.assert_equal(r, mf)
            r.close()
            compared += [f"{name}.{kind}/{v}" for v in mf.variables]
    with xr.open_dataset(f"{name}.joined.nc", decode_times=False) as j:
        for kind in ["json", "parq"]:
            r = refs(f"{name}.{kind}", False)
            same(f"{name}.{kind} raw", r, j)
            assert r["time"].attrs["units"] == j["time"].attrs["units"], (name, r["time"].attrs)
            r.close()
            compared += [f"{name}.{kind}.raw/{v}" for v in j.variables]
print(json.dumps(compared))
"#;

#[test]
fn xarray_reads_the_joined_references_as_open_mfdataset_reads_the_files() {
    let dir = tempdir("kerchunk-multi");
    // netCDF-4: 2, 3 and 1 records, temp chunked (1, 2, 3) and deflated
    let n4: Vec<String> = [(2, 0), (3, 2), (1, 5)]
        .iter()
        .enumerate()
        .map(|(i, &(n, first))| {
            let cdl = nc4_cdl(n, first, "days since 2000-01-01", 1);
            make(&dir, &format!("a{i}"), "nc4", &cdl)
        })
        .collect();
    // classic: 3, 2 and 4 records
    let n3: Vec<String> = [(3, 0), (2, 3), (4, 5)]
        .iter()
        .enumerate()
        .map(|(i, &(n, first))| make(&dir, &format!("c{i}"), "nc3", &classic_cdl(n, first)))
        .collect();
    // time units that differ: the second file's days count from 2001-01-01
    let u0 = make(
        &dir,
        "u0",
        "nc4",
        &nc4_cdl(2, 0, "days since 2000-01-01", 1),
    );
    let u1 = make(
        &dir,
        "u1",
        "nc4",
        &nc4_cdl(2, 0, "days since 2001-01-01", 1),
    );
    let cases: Vec<(&str, Vec<String>)> = vec![("n4", n4), ("n3", n3), ("units", vec![u0, u1])];
    for (name, files) in &cases {
        let f: Vec<&str> = files.iter().map(String::as_str).collect();
        let refs = references(&dir, &f, name);
        // our own join, for the raw (rebased) values
        let mut args = f.clone();
        let joined = format!("{name}.joined.nc");
        args.push(&joined);
        run_ok("nccopy-rs", &args, &dir);
        let r = &refs["refs"];
        match *name {
            "n4" => {
                // 6 records of 2 x 2 chunks; the third file's record is chunk 5
                let z: serde_json::Value =
                    serde_json::from_str(r["temp/.zarray"].as_str().unwrap()).unwrap();
                assert_eq!(z["shape"], serde_json::json!([6, 3, 4]));
                assert_eq!(z["chunks"], serde_json::json!([1, 2, 3]));
                assert_eq!(r["temp/0.0.0"][0], abs(&dir, "a0.nc"));
                assert_eq!(r["temp/2.1.1"][0], abs(&dir, "a1.nc"));
                assert_eq!(r["temp/5.1.1"][0], abs(&dir, "a2.nc"));
                assert!(r.get("temp/6.0.0").is_none());
                // the fixed variable is the first file's; the coordinate inline
                assert_eq!(r["flat/0.0"][0], abs(&dir, "a0.nc"));
                assert!(r["time/0"].as_str().unwrap().starts_with("base64:"));
            }
            "n3" => {
                // one reference per record, 9 records
                assert_eq!(r["t/0.0"][0], abs(&dir, "c0.nc"));
                assert_eq!(r["t/4.0"][0], abs(&dir, "c1.nc"));
                assert_eq!(r["b/8"][0], abs(&dir, "c2.nc"));
                assert!(r.get("t/9.0").is_none());
            }
            _ => {
                // rebased to the first file's units: 366 days later (2000 is a leap year)
                let cdl = run_ok("ncdump-rs", &["-v", "time", &joined], &dir);
                let text = String::from_utf8_lossy(&cdl.stdout);
                assert!(text.contains("time = 0, 1, 366, 367 ;"), "{text}");
                let attrs: serde_json::Value =
                    serde_json::from_str(r["time/.zattrs"].as_str().unwrap()).unwrap();
                assert_eq!(attrs["units"], "days since 2000-01-01");
            }
        }
    }
    let spec: Vec<(String, Vec<String>, &str)> = cases
        .iter()
        .map(|(n, f)| (n.to_string(), f.clone(), "time"))
        .collect();
    let arg = serde_json::to_string(&spec).unwrap();
    let script = format!("import sys\nsys.argv = ['check', {arg:?}]\n{CHECK}");
    let Some(out) = python_script(
        &dir,
        CLIENTS,
        "xarray, zarr 3, fsspec, dask, fastparquet, netCDF4",
        &script,
    ) else {
        return;
    };
    let compared: Vec<String> = serde_json::from_slice(&out).unwrap();
    for v in [
        "n4.json/temp",
        "n4.parq/temp",
        "n4.json/flat",
        "n4.parq/time",
        "n3.json/t",
        "n3.parq/b",
        "n3.json/s",
        "units.json.raw/time",
        "units.parq.raw/time",
        "units.parq/temp",
    ] {
        assert!(
            compared.iter().any(|c| c == v),
            "{v} not compared: {compared:?}"
        );
    }
}

/// `ncdump-rs --kerchunk` of `files` as JSON and as Parquet into `bad.parq`: both refused
/// with exit 1, nothing written; returns stderr.
fn refused(dir: &Path, files: &[&str]) -> String {
    let mut args = vec!["--kerchunk"];
    args.extend_from_slice(files);
    let out = run("ncdump-rs", &args, dir);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let json_err = String::from_utf8_lossy(&out.stderr).to_string();
    let mut args = vec![
        "--kerchunk",
        "--kerchunk-format",
        "parquet",
        "--kerchunk-out",
        "bad.parq",
    ];
    args.extend_from_slice(files);
    let out = run("ncdump-rs", &args, dir);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!dir.join("bad.parq").exists());
    let leftovers: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.contains("bad.parq"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    json_err
}

#[test]
fn refusals_name_the_file_and_the_variable_and_write_nothing() {
    let dir = tempdir("kerchunk-multi-refused");
    let a = make(&dir, "a", "nc4", &nc4_cdl(2, 0, "days since 2000-01-01", 2));
    // a variable the first file does not have
    let extra = nc4_cdl(2, 2, "days since 2000-01-01", 2)
        .replace("\tint flat(y, x) ;", "\tint flat(y, x) ;\n\tint other ;");
    let b = make(&dir, "b", "nc4", &extra);
    let err = refused(&dir, &[&a, &b]);
    assert!(err.contains("b.nc") && err.contains("other"), "{err}");

    // chunks of 2 records: a file of 3 would leave a chunk straddling it and the next
    let c = make(&dir, "c", "nc4", &nc4_cdl(3, 2, "days since 2000-01-01", 2));
    let d = make(&dir, "d", "nc4", &nc4_cdl(2, 5, "days since 2000-01-01", 2));
    let err = refused(&dir, &[&a, &c, &d]);
    assert!(
        err.contains("c.nc") && err.contains("\"/temp\"") && err.contains("length 2"),
        "{err}"
    );
    // a file of 3 records last is fine: its last chunk is the join's last
    let d2 = make(
        &dir,
        "d2",
        "nc4",
        &nc4_cdl(2, 2, "days since 2000-01-01", 2),
    );
    let c2 = make(
        &dir,
        "c2",
        "nc4",
        &nc4_cdl(3, 4, "days since 2000-01-01", 2),
    );
    let ok = run_ok("ncdump-rs", &["--kerchunk", &a, &d2, &c2], &dir);
    let refs: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(refs["refs"]["temp/3.1.1"][0], abs(&dir, "c2.nc"));
    assert_eq!(refs["refs"]["temp/1.0.0"][0], abs(&dir, "d2.nc"));

    // more than one file is only for --kerchunk
    let out = run("ncdump-rs", &[&a, &d], &dir);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kerchunk"));
}
