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
