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
//! - A classic file with a single record variable is referenced in chunks of several records,
//!   and a join of such files in chunks of a number of records dividing every file's count;
//!   xarray reads them as it reads the files.
//! - Three files on the local S3 server (moto, shared by this binary's tests), named one by
//!   one and by a wildcard: references to the objects, read by xarray over s3fs as
//!   `open_mfdataset` reads local copies.
//! - Without Python: the keys and URLs of the joined references; refusals (variables that do
//!   not match, a chunk along the join that would straddle two files, a filter chain that
//!   differs found while the references stream) exit 1 naming the file and the variable,
//!   with nothing on standard output and no directory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod servers;
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

/// A classic file of `n` records from `first` with a single record variable `v(time, x)`
/// (its records lie back to back) and a fixed `s(x)`.
fn single_record_cdl(n: usize, first: usize) -> String {
    let v: Vec<String> = (first * 3..(first + n) * 3)
        .map(|k| format!("{k}.25"))
        .collect();
    format!(
        "netcdf one {{\ndimensions:\n\ttime = UNLIMITED ;\n\tx = 3 ;\nvariables:\n\tfloat v(time, x) ;\n\t\tv:units = \"K\" ;\n\tshort s(x) ;\ndata:\n v = {} ;\n s = 7, 8, 9 ;\n}}\n",
        v.join(", ")
    )
}

/// Compares xarray through the JSON references (`argv[1]`: [[refs, [files]], ...]) with
/// `open_mfdataset` of the files (one file: `open_dataset`); prints the cases compared.
const SAME_AS_FILES: &str = r#"
import json, sys
import numpy as np, xarray as xr
done = []
for refs, files in json.loads(sys.argv[1]):
    r = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs, "remote_protocol": "file"}})
    if len(files) == 1:
        f = xr.open_dataset(files[0])
    else:
        f = xr.open_mfdataset(files, combine="nested", concat_dim="time", data_vars="minimal",
                              coords="minimal", compat="override")
    f = f.load()
    xr.testing.assert_identical(r, f)
    for v in f.variables:
        assert np.array_equal(r[v].values, f[v].values), (refs, v)
    done.append([refs, sorted(f.variables), f["v"].shape[0]])
print(json.dumps(done))
"#;

#[test]
fn records_back_to_back_are_referenced_several_to_a_chunk() {
    let dir = tempdir("kerchunk-records");
    let chunk_refs = |refs: &serde_json::Value, var: &str| -> Vec<(String, Vec<u64>)> {
        let mut out: Vec<(String, Vec<u64>)> = refs["refs"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{var}/")) && !k.contains("/."))
            .map(|(k, r)| {
                let r = r.as_array().unwrap();
                let file = r[0].as_str().unwrap().rsplit('/').next().unwrap();
                (
                    format!("{k} {file}"),
                    vec![r[1].as_u64().unwrap(), r[2].as_u64().unwrap()],
                )
            })
            .collect();
        out.sort();
        out
    };
    let zarray = |refs: &serde_json::Value, var: &str| -> serde_json::Value {
        serde_json::from_str(refs["refs"][format!("{var}/.zarray")].as_str().unwrap()).unwrap()
    };
    // one file of 1000 records: one reference for all of them (12 000 bytes < 8 MiB)
    let big = make(&dir, "big", "nc3", &single_record_cdl(1000, 0));
    let out = run_ok("ncdump-rs", &["--kerchunk", &big], &dir);
    let one: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    fs::write(dir.join("big.json"), &out.stdout).unwrap();
    assert_eq!(zarray(&one, "v")["chunks"], serde_json::json!([1000, 3]));
    let v = chunk_refs(&one, "v");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].0, "v/0.0 big.nc");
    assert_eq!(v[0].1[1], 12_000);

    // a join of 6, 4 and 8 records: 2 records per chunk (the largest number dividing every
    // file's count), 9 references for 18 records, each chunk in its own file
    let files: Vec<String> = [(6, 0), (4, 6), (8, 10)]
        .iter()
        .enumerate()
        .map(|(i, &(n, first))| make(&dir, &format!("r{i}"), "nc3", &single_record_cdl(n, first)))
        .collect();
    let f: Vec<&str> = files.iter().map(String::as_str).collect();
    let mut args = vec!["--kerchunk"];
    args.extend_from_slice(&f);
    let out = run_ok("ncdump-rs", &args, &dir);
    fs::write(dir.join("joined.json"), &out.stdout).unwrap();
    let joined: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let z = zarray(&joined, "v");
    assert_eq!(z["shape"], serde_json::json!([18, 3]));
    assert_eq!(z["chunks"], serde_json::json!([2, 3]));
    // each file's v starts at the same byte (same header); 2 records are 24 bytes
    let begin = chunk_refs(&joined, "v")[0].1[0];
    let mut want = Vec::new();
    for (i, (file, first)) in [("r0.nc", 0), ("r1.nc", 3), ("r2.nc", 5)]
        .iter()
        .enumerate()
    {
        let n = [3, 2, 4][i];
        for k in 0..n {
            want.push((
                format!("v/{}.0 {file}", first + k),
                vec![begin + 24 * k as u64, 24],
            ));
        }
    }
    want.sort();
    assert_eq!(chunk_refs(&joined, "v"), want);
    // the fixed variable is the first file's, whole
    assert_eq!(chunk_refs(&joined, "s").len(), 1);

    // three files of 5: 5 records per chunk, one reference per file
    let fives: Vec<String> = (0..3)
        .map(|i| make(&dir, &format!("f{i}"), "nc3", &single_record_cdl(5, 5 * i)))
        .collect();
    let f5: Vec<&str> = fives.iter().map(String::as_str).collect();
    let mut args = vec!["--kerchunk"];
    args.extend_from_slice(&f5);
    let out = run_ok("ncdump-rs", &args, &dir);
    fs::write(dir.join("fives.json"), &out.stdout).unwrap();
    let fv: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(zarray(&fv, "v")["chunks"], serde_json::json!([5, 3]));
    let names: Vec<String> = chunk_refs(&fv, "v").into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, ["v/0.0 f0.nc", "v/1.0 f1.nc", "v/2.0 f2.nc"]);

    let cases = serde_json::json!([
        ["big.json", [big]],
        ["joined.json", files],
        ["fives.json", fives],
    ]);
    let script = format!(
        "import sys\nsys.argv = ['check', {:?}]\n{SAME_AS_FILES}",
        cases.to_string()
    );
    let Some(out) = python_script(&dir, CLIENTS, "xarray, zarr 3, fsspec, dask", &script) else {
        return;
    };
    let done: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        done,
        serde_json::json!([
            ["big.json", ["s", "v"], 1000],
            ["joined.json", ["s", "v"], 18],
            ["fives.json", ["s", "v"], 15],
        ])
    );
}

#[test]
fn a_refusal_found_while_streaming_writes_nothing_to_stdout() {
    let dir = tempdir("kerchunk-late");
    // two files of 1000 records, temp in 4000 chunks each (about 600 KiB of references,
    // many output blocks), then a third whose temp is shuffled as well as deflated: a filter
    // chain only its placement shows, found after the first two files' chunks were written
    let a = make(
        &dir,
        "a",
        "nc4",
        &nc4_cdl(1000, 0, "days since 2000-01-01", 1),
    );
    let b = make(
        &dir,
        "b",
        "nc4",
        &nc4_cdl(1000, 1000, "days since 2000-01-01", 1),
    );
    let shuffled = nc4_cdl(2, 2000, "days since 2000-01-01", 1).replace(
        "temp:_DeflateLevel = 4 ;",
        "temp:_DeflateLevel = 4 ;\n\t\ttemp:_Shuffle = \"true\" ;",
    );
    let c = make(&dir, "c", "nc4", &shuffled);
    let out = run("ncdump-rs", &["--kerchunk", &a, &b, &c], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{} bytes on stdout",
        out.stdout.len()
    );
    assert!(
        err.starts_with("ncdump: writing kerchunk references: ")
            && err.contains("c.nc")
            && err.contains("\"/temp\"")
            && err.contains("shuffle"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // the first two alone: the whole reference set, the last chunk included
    let ok = run_ok("ncdump-rs", &["--kerchunk", &a, &b], &dir);
    assert!(ok.stdout.len() > 1 << 19, "{} bytes", ok.stdout.len());
    let refs: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(refs["refs"]["temp/1999.1.1"][0], abs(&dir, "b.nc"));
    assert!(refs["refs"].get("temp/2000.0.0").is_none());
}

#[test]
fn references_of_files_on_object_storage_read_as_open_mfdataset_reads_local_copies() {
    let Some(m) = servers::moto() else {
        return;
    };
    m.bucket("kmulti");
    let dir = tempdir("kerchunk-s3");
    let local: Vec<String> = [(2, 0), (3, 2), (1, 5)]
        .iter()
        .enumerate()
        .map(|(i, &(n, first))| {
            let cdl = nc4_cdl(n, first, "days since 2000-01-01", 1);
            make(&dir, &format!("s{i}"), "nc4", &cdl)
        })
        .collect();
    // the objects hold the local files' bytes
    for f in &local {
        m.put_public(
            "kmulti",
            &format!("run/{f}"),
            &fs::read(dir.join(f)).unwrap(),
        );
    }
    let s3 = |args: &[&str]| -> std::process::Output {
        m.command("ncdump-rs", &dir).args(args).output().unwrap()
    };
    let urls: Vec<String> = local
        .iter()
        .map(|f| format!("s3://kmulti/run/{f}"))
        .collect();
    let mut args = vec!["--kerchunk"];
    args.extend(urls.iter().map(String::as_str));
    let named = s3(&args);
    assert!(
        named.status.success(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    assert!(
        named.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    let wild = s3(&["--kerchunk", "s3://kmulti/run/s*.nc"]);
    assert!(
        wild.status.success(),
        "{}",
        String::from_utf8_lossy(&wild.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&wild.stdout),
        String::from_utf8_lossy(&named.stdout),
        "the wildcard stands for the three objects in name order"
    );
    let refs: serde_json::Value = serde_json::from_slice(&named.stdout).unwrap();
    let r = &refs["refs"];
    assert_eq!(r["temp/0.0.0"][0], "s3://kmulti/run/s0.nc");
    assert_eq!(r["temp/4.1.1"][0], "s3://kmulti/run/s1.nc");
    assert_eq!(r["temp/5.0.0"][0], "s3://kmulti/run/s2.nc");
    assert!(r.get("temp/6.0.0").is_none());
    assert_eq!(r["flat/0.0"][0], "s3://kmulti/run/s0.nc");
    // the same files referenced locally: the same ranges, the local paths instead
    let mut args = vec!["--kerchunk"];
    args.extend(local.iter().map(String::as_str));
    let here = run_ok("ncdump-rs", &args, &dir);
    let mut same = String::from_utf8_lossy(&named.stdout).to_string();
    for f in &local {
        same = same.replace(&format!("s3://kmulti/run/{f}"), &abs(&dir, f));
    }
    assert_eq!(same, String::from_utf8_lossy(&here.stdout));
    fs::write(dir.join("s3.json"), &named.stdout).unwrap();
    // a wildcard that matches nothing is an error naming it, with nothing on stdout
    let none = s3(&["--kerchunk", "s3://kmulti/run/none*.nc"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&none.stderr)
            .contains("s3://kmulti/run/none*.nc: no object matches the wildcard"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );

    let ep = m.endpoint();
    let script = format!(
        r#"
import json
import numpy as np, xarray as xr
so = {{"fo": "s3.json", "remote_protocol": "s3", "asynchronous": True,
      "remote_options": {{"key": "testing", "secret": "x", "asynchronous": True,
                          "client_kwargs": {{"endpoint_url": "{ep}"}}}}}}
r = xr.open_dataset("reference://", engine="zarr", backend_kwargs={{"consolidated": False, "storage_options": so}})
with xr.open_mfdataset({local:?}, combine="nested", concat_dim="time", data_vars="minimal",
                       coords="minimal", compat="override") as mf:
    mf = mf.load()
    xr.testing.assert_identical(r.load(), mf)
    for v in mf.variables:
        assert np.array_equal(r[v].values, mf[v].values, equal_nan=True), v
    print(json.dumps([sorted(mf.variables), float(r["temp"].sum()), mf["temp"].shape[0]]))
"#
    );
    let Some(out) = python_script(
        &dir,
        "import xarray, zarr, fsspec, s3fs, dask",
        "xarray, zarr 3, fsspec, s3fs, dask",
        &script,
    ) else {
        return;
    };
    // temp: file k's values are first * 100 + 0 .. n * 12 (the fill never written)
    let sum: f64 = [(2u32, 0u32), (3, 2), (1, 5)]
        .iter()
        .map(|&(n, first)| (0..n * 12).map(|k| f64::from(first * 100 + k)).sum::<f64>())
        .sum();
    let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(got, serde_json::json!([["flat", "temp", "time"], sum, 6]));
}
