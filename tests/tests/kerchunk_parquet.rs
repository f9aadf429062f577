//! Issue 34: `ncdump-rs --kerchunk --kerchunk-format parquet --kerchunk-out DIR` writes the
//! references in fsspec's Parquet layout (`.zmetadata` and `VAR/refs.K.parq`, as
//! `fsspec.implementations.reference.LazyReferenceMapper` reads them).
//!
//! - xarray over fsspec's ReferenceFileSystem on the directory (fastparquet, fsspec's default
//!   engine) reads what xarray reads from the file itself, value for value: a netCDF-4 file
//!   (chunked and deflated, contiguous, compact — inlined —, strings — inlined —, a scalar)
//!   and a classic file with record variables, each over several record files (a record size
//!   of 4); and the Parquet references equal the JSON references key for key, read with both
//!   fastparquet and pyarrow (skipped with a SKIP line when the Python clients are missing).
//! - Without Python: a destination that cannot be written or must not be replaced is an
//!   output error (exit 3) that leaves nothing behind; a variable that cannot be referenced is
//!   the input's (exit 1) with nothing written; option errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::fs;
use std::path::Path;

const NC4_CDL: &str = r#"netcdf k4 {
dimensions:
	time = UNLIMITED ;
	y = 4 ;
	x = 6 ;
	n = 3 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
	float temp(time, y, x) ;
		temp:_FillValue = -999.f ;
		temp:units = "K" ;
		temp:_ChunkSizes = 1, 2, 3 ;
		temp:_DeflateLevel = 4 ;
		temp:_Shuffle = "true" ;
	int flat(y, x) ;
		flat:_Storage = "contiguous" ;
	short small(n) ;
		small:_Storage = "compact" ;
	string names(n) ;
	int scalar ;

// global attributes:
		:title = "parquet references" ;
data:

 time = 0, 1, 2, 3, 4, 5 ;

 temp = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38,
    39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57,
    58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76,
    77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
    96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126,
    127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141,
    142, 143 ;

 flat = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    21, 22, 23, 24 ;

 small = -1, 0, 32767 ;

 names = "a", "", "wxyz ✓" ;

 scalar = 7 ;
}
"#;

const CLASSIC_CDL: &str = r#"netcdf k3 {
dimensions:
	time = UNLIMITED ;
	x = 3 ;
	len = 4 ;
variables:
	double time(time) ;
		time:units = "hours since 2001-01-01" ;
	float t(time, x) ;
		t:_FillValue = -999.f ;
	char name(x, len) ;
	short s(x) ;
	byte b(time) ;
data:

 time = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 ;

 t = 280, 281.5, _, 283, 284, 285, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;

 name = "ab", "", "wxyz" ;

 s = -1, 0, 32767 ;

 b = -128, 127, 0, 1, 2, 3, 4, 5, 6, 7 ;
}
"#;

/// Make `k4.nc` and `k3.nc` in `dir`, and their JSON and Parquet references.
fn inputs_and_references(dir: &Path) {
    fs::write(dir.join("k4.cdl"), NC4_CDL).unwrap();
    fs::write(dir.join("k3.cdl"), CLASSIC_CDL).unwrap();
    run_ok("ncgen-rs", &["-4", "-o", "k4.nc", "k4.cdl"], dir);
    run_ok("ncgen-rs", &["-k", "nc3", "-o", "k3.nc", "k3.cdl"], dir);
    for name in ["k4", "k3"] {
        let nc = format!("{name}.nc");
        let out = run_ok("ncdump-rs", &["--kerchunk", &nc], dir);
        fs::write(dir.join(format!("{name}.json")), &out.stdout).unwrap();
        let out = run_ok(
            "ncdump-rs",
            &[
                "--kerchunk",
                "--kerchunk-format",
                "parquet",
                "--kerchunk-record-size",
                "4",
                "--kerchunk-out",
                &format!("{name}.parq"),
                &nc,
            ],
            dir,
        );
        assert!(out.stdout.is_empty(), "nothing on standard output");
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

const CLIENTS: &str = "import xarray, zarr, fsspec, pandas, pyarrow, fastparquet, netCDF4, scipy
from fsspec.implementations.reference import LazyReferenceMapper
assert int(zarr.__version__.split('.')[0]) >= 3";

/// For each input: xarray through the Parquet references against xarray on the file, value
/// for value; the Parquet references (fastparquet and pyarrow) against the JSON ones, key for
/// key, over every chunk of the grid (missing on both sides or equal). Prints one JSON report.
const CHECK: &str = r#"
import base64, json, math, itertools
import numpy as np, xarray as xr, fsspec
from fsspec.implementations.reference import LazyReferenceMapper

report = {"compared": [], "keys": 0, "missing": 0, "records": {}}
for name in ["k4", "k3"]:
    ref = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False,
        "storage_options": {"fo": f"{name}.parq", "remote_protocol": "file"}})
    with xr.open_dataset(f"{name}.nc") as nc:
        assert sorted(ref.variables) == sorted(nc.variables), (name, list(ref.variables), list(nc.variables))
        for v in nc.variables:
            a, b = ref[v].values, nc[v].values
            assert a.shape == b.shape and ref[v].dims == nc[v].dims, (name, v)
            if a.dtype.kind in "fc":
                assert np.array_equal(a, b, equal_nan=True), (name, v, a, b)
            else:
                assert (a == b).all(), (name, v, a, b)
            report["compared"].append(f"{name}/{v}")
    ref.close()
    refs = json.load(open(f"{name}.json"))["refs"]
    zmeta = json.load(open(f"{name}.parq/.zmetadata"))
    report["records"][name] = zmeta["record_size"]
    for engine in ["fastparquet", "pyarrow"]:
        lazy = LazyReferenceMapper(f"{name}.parq", engine=engine)
        for key, want in refs.items():
            if key.rsplit("/", 1)[-1].startswith(".z"):
                if key != ".zmetadata":
                    got = json.loads(lazy[key])
                    assert json.dumps(got) == json.dumps(json.loads(want)), (key, got, want)
        arrays = [k[:-len("/.zarray")] for k in refs if k.endswith("/.zarray")]
        for a in arrays:
            z = json.loads(refs[f"{a}/.zarray"])
            grid = [math.ceil(s / c) for s, c in zip(z["shape"], z["chunks"])]
            for idx in itertools.product(*[range(g) for g in grid]):
                key = f"{a}/" + (".".join(map(str, idx)) if idx else "0")
                want = refs.get(key)
                try:
                    got = lazy[key]
                except KeyError:
                    got = None
                if isinstance(got, list) and not isinstance(got[0], str):
                    got = None  # a null path read back as NaN
                if want is None:
                    assert got is None, (engine, key, got)
                    report["missing"] += 1
                elif isinstance(want, str):
                    assert want.startswith("base64:")
                    assert bytes(got) == base64.b64decode(want[7:]), (engine, key)
                else:
                    assert [got[0], int(got[1]), int(got[2])] == want, (engine, key, got, want)
                report["keys"] += 1
print(json.dumps(report))
"#;

#[test]
fn xarray_reads_the_parquet_references_as_the_file_and_they_equal_the_json_ones() {
    let dir = tempdir("kerchunk-parquet");
    inputs_and_references(&dir);
    // the layout: .zmetadata, one directory per array, record files of 4 references
    let zm: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("k4.parq/.zmetadata")).unwrap()).unwrap();
    assert_eq!(zm["record_size"], 4);
    assert_eq!(
        zm["metadata"]["temp/.zarray"]["chunks"],
        serde_json::json!([1, 2, 3])
    );
    // temp: 6 x 2 x 2 = 24 chunks, 6 record files; k3's t: 10 records, 3 files
    for k in 0..6 {
        assert!(
            dir.join(format!("k4.parq/temp/refs.{k}.parq")).is_file(),
            "{k}"
        );
    }
    assert!(!dir.join("k4.parq/temp/refs.6.parq").exists());
    assert!(dir.join("k3.parq/t/refs.2.parq").is_file());
    assert!(!dir.join("k3.parq/t/refs.3.parq").exists());
    let Some(out) = python_script(
        &dir,
        CLIENTS,
        "xarray, zarr 3, fsspec, pandas, pyarrow, fastparquet, netCDF4, scipy",
        CHECK,
    ) else {
        return;
    };
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let compared: Vec<&str> = report["compared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for v in [
        "k4/temp",
        "k4/flat",
        "k4/small",
        "k4/names",
        "k4/scalar",
        "k4/time",
        "k3/t",
        "k3/b",
        "k3/name",
        "k3/s",
    ] {
        assert!(compared.contains(&v), "{v} not compared: {compared:?}");
    }
    // at least temp's 24 chunks and k3's 10 records of t, b and time, with both engines
    assert!(
        report["keys"].as_u64().unwrap() >= 2 * (24 + 30),
        "{report}"
    );
    assert_eq!(report["records"]["k3"], 4);
}

#[test]
fn a_destination_that_cannot_be_written_is_an_output_error_leaving_nothing() {
    let dir = tempdir("kerchunk-parquet-bad");
    fs::write(dir.join("k3.cdl"), CLASSIC_CDL).unwrap();
    run_ok("ncgen-rs", &["-k", "nc3", "-o", "k3.nc", "k3.cdl"], &dir);
    let parquet = |out: &str| {
        run(
            "ncdump-rs",
            &[
                "--kerchunk",
                "--kerchunk-format",
                "parquet",
                "--kerchunk-out",
                out,
                "k3.nc",
            ],
            &dir,
        )
    };
    let listing = |d: &Path| {
        let mut names: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing(&dir);

    // below a plain file: no directory can be made there
    fs::write(dir.join("plain"), b"x").unwrap();
    let out = parquet("plain/refs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.starts_with("ncdump: writing Parquet references to plain/refs: ")
            && err.contains("Not a directory"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    // a directory that is not an earlier output is not replaced
    fs::create_dir(dir.join("keep")).unwrap();
    fs::write(dir.join("keep/notes.txt"), b"mine").unwrap();
    let out = parquet("keep");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("keep: exists and is a directory that is not a Zarr store"),
        "{err}"
    );
    assert_eq!(listing(&dir.join("keep")), ["notes.txt"]);

    // nothing else was left: no temporary directory beside them
    let mut want = before.clone();
    want.extend(["keep".to_string(), "plain".to_string()]);
    want.sort();
    assert_eq!(listing(&dir), want);

    // an earlier output is replaced whole
    let out = parquet("refs");
    assert_eq!(out.status.code(), Some(0));
    fs::write(dir.join("refs/t/refs.9.parq"), b"stale").unwrap();
    let out = run(
        "ncdump-rs",
        &[
            "--kerchunk",
            "-v",
            "s",
            "--kerchunk-format",
            "parquet",
            "--kerchunk-out",
            "refs",
            "k3.nc",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(listing(&dir.join("refs")), [".zmetadata", "s"]);

    // options: parquet needs a directory; the record size is checked; JSON goes to stdout
    for (args, msg) in [
        (
            &["--kerchunk", "--kerchunk-format", "parquet", "k3.nc"][..],
            "name it with --kerchunk-out DIR",
        ),
        (
            &[
                "--kerchunk",
                "--kerchunk-format",
                "parquet",
                "--kerchunk-out",
                "r2",
                "--kerchunk-record-size",
                "0",
                "k3.nc",
            ],
            "--kerchunk-record-size 0: give a number",
        ),
        (
            &["--kerchunk", "--kerchunk-out", "r2", "k3.nc"],
            "JSON references go to standard output",
        ),
        (
            &["--kerchunk", "--kerchunk-format", "csv", "k3.nc"],
            "isn't valid for an argument: --kerchunk-format <json|parquet>",
        ),
        (&["--kerchunk-format", "parquet", "k3.nc"], ""),
    ] {
        let out = run("ncdump-rs", args, &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(!dir.join("r2").exists());
    }
}

#[test]
fn a_variable_that_cannot_be_referenced_writes_no_directory() {
    let dir = tempdir("kerchunk-parquet-refuse");
    let cdl = "netcdf bad {\ndimensions:\n\tn = 6 ;\nvariables:\n\tint ok(n) ;\n\tint packed(n) ;\n\t\tpacked:_Filter = \"32004\" ;\n\t\tpacked:_ChunkSizes = 3 ;\ndata:\n ok = 1, 2, 3, 4, 5, 6 ;\n packed = 1, 2, 3, 4, 5, 6 ;\n}\n";
    fs::write(dir.join("bad.cdl"), cdl).unwrap();
    run_ok("ncgen-rs", &["-4", "-o", "bad.nc", "bad.cdl"], &dir);
    let out = run(
        "ncdump-rs",
        &[
            "--kerchunk",
            "--kerchunk-format",
            "parquet",
            "--kerchunk-out",
            "refs",
            "bad.nc",
        ],
        &dir,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("variable \"/packed\" cannot be referenced as Zarr chunks: its filter 32004"),
        "{err}"
    );
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("refs"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
