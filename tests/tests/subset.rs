//! Subsets by index and by coordinate value (issue 33, `--dimension`, NCO's `ncks -d`):
//! nccopy-rs's output dumps as NCO 5.1.4's `ncks -d` output does (netCDF-C's ncdump on both,
//! less the history attributes ncks adds), for a netCDF-4 input (chunked, so that a stride
//! reads across chunks) and a classic one; a Zarr v3 output holds the same values;
//! ncdump-rs prints the same data; errors exit 2 (the option) or 1 (the data), name the
//! dimension and write nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Output;

use common::{missing_references, run, tempdir};

const CDL: &str = "netcdf t {
dimensions:
  time = UNLIMITED ;
  lat = 4 ;
  lon = 5 ;
  lev = 3 ;
  n = 2 ;
variables:
  double time(time) ;
  float lat(lat) ;
  float lon(lon) ;
  double lev(lev) ;
  float temp(time, lat, lon) ;
    temp:units = \"K\" ;
    temp:_ChunkSizes = 2, 2, 2 ;
  int p(lev, lat) ;
  short other(n) ;
  int scalar ;

  :title = \"subset test\" ;
data:
  time = 0, 1.5, 3, 4.5, 6, 7.5 ;
  lat = -30, -10, 10, 30 ;
  lon = 0, 72, 144, 216, 288 ;
  lev = 1000, 500, 100 ;
  temp = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
   20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
   40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
   60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
   80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
   100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115,
   116, 117, 118, 119 ;
  p = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
  other = 7, 8 ;
  scalar = 42 ;
}
";

/// Every case: the `-d` specs (ncks's spelling; nccopy-rs gets each as `--dimension`).
const CASES: &[&[&str]] = &[
    // index ranges, open ends, a negative index, strides
    &["lat,1,2"],
    &["lat,1,"],
    &["lat,,1"],
    &["time,-1"],
    &["time,2"],
    &["time,1,4,2"],
    &["time,,,3"],
    // coordinate ranges: ascending (lat), descending (lev); the nearest single value
    &["lat,-15.,15."],
    &["lev,200.,600."],
    &["lev,750."],
    &["lat,20."],
    &["lon,1e2,3e2"],
    // several dimensions at once, strides across the 2x2x2 chunks
    &["time,1,5,2", "lon,0,4,3"],
    &["time,,,3", "lat,1,", "lon,1,4,2"],
    &["lat,-15.,15.", "lev,1"],
];

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `t4.nc` (netCDF-4, temp chunked 2x2x2) and `t3.nc` (classic) written by our ncgen.
fn inputs(dir: &Path) {
    std::fs::write(dir.join("t4.cdl"), CDL).unwrap();
    let classic: String = CDL
        .lines()
        .filter(|l| !l.contains("_ChunkSizes"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("t3.cdl"), classic).unwrap();
    for (kind, name) in [("nc4", "t4"), ("nc3", "t3")] {
        let cdl = format!("{name}.cdl");
        let nc = format!("{name}.nc");
        let o = run("ncgen-rs", &["-k", kind, "-o", &nc, &cdl], dir);
        assert!(o.status.success(), "{}", err(&o));
    }
}

/// netCDF-C's ncdump of `file` without its first line (`netcdf NAME {`) and the global
/// attributes ncks adds.
fn dump(dir: &Path, file: &str) -> String {
    let o = common::reference_ok("ncdump", &[file], dir);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .skip(1)
        .filter(|l| {
            !(l.contains(":history") || l.contains(":NCO") || l.contains("history_of_appended"))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The data section of a dump (from `data:` on).
fn data_section(text: &str) -> String {
    text.find("\ndata:")
        .map_or_else(String::new, |i| text[i..].to_string())
}

/// A data section's variables (blocks between blank lines), sorted by name.
fn by_variable(data: &str) -> String {
    let mut blocks: Vec<&str> = (data.trim_end().trim_end_matches('}'))
        .split("\n\n")
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .collect();
    blocks.sort_unstable();
    blocks.join("\n\n")
}

/// nccopy-rs's arguments for the specs: `--dimension SPEC` each.
fn dimension_args(specs: &[&str]) -> Vec<String> {
    specs
        .iter()
        .flat_map(|s| ["--dimension".to_string(), (*s).to_string()])
        .collect()
}

#[test]
fn nccopy_matches_ncks_on_netcdf4_and_classic() {
    if missing_references(&["ncks", "ncdump"]) {
        return;
    }
    let dir = tempdir("subset-ncks");
    inputs(&dir);
    for input in ["t4.nc", "t3.nc"] {
        for specs in CASES {
            let mut args = dimension_args(specs);
            args.extend([input.to_string(), "ours.nc".to_string()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run("nccopy-rs", &args, &dir);
            assert!(o.status.success(), "{input} {specs:?}: {}", err(&o));
            let mut nco: Vec<&str> = vec!["-O", "--no_abc"];
            for s in specs.iter() {
                nco.extend(["-d", s]);
            }
            nco.extend([input, "nco.nc"]);
            common::reference_ok("ncks", &nco, &dir);
            let (ours, theirs) = (dump(&dir, "ours.nc"), dump(&dir, "nco.nc"));
            if let Some(d) = common::diff(theirs.as_bytes(), ours.as_bytes()) {
                panic!("{input} {specs:?}: nccopy-rs differs from ncks:\n{d}");
            }
            // the record dimension stays unlimited
            assert!(
                ours.contains("time = UNLIMITED ;"),
                "{input} {specs:?}:\n{ours}"
            );
        }
    }
}

#[test]
fn zarr_v3_output_and_ncdump_rs_show_the_same_values() {
    if missing_references(&["ncdump"]) {
        return;
    }
    let dir = tempdir("subset-zarr");
    inputs(&dir);
    let specs = ["time,1,5,2", "lat,-15.,15.", "lon,,,2"];
    let mut args = dimension_args(&specs);
    args.extend(["t4.nc".to_string(), "ours.nc".to_string()]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run("nccopy-rs", &a, &dir);
    assert!(o.status.success(), "{}", err(&o));
    let want = data_section(&dump(&dir, "ours.nc"));
    assert!(want.contains("time = 1.5, 4.5, 7.5 ;"), "{want}");

    let store = format!("file://{}/out.zarr#mode=zarr,v3,file", dir.display());
    args.pop();
    args.push(store.clone());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run("nccopy-rs", &a, &dir);
    assert!(o.status.success(), "{}", err(&o));
    let o = run("ncdump-rs", &[&store], &dir);
    assert!(o.status.success(), "{}", err(&o));
    // a Zarr store lists its variables by name: compare each variable's values
    let zarr = by_variable(&data_section(&String::from_utf8_lossy(&o.stdout)));
    if let Some(d) = common::diff(by_variable(&want).as_bytes(), zarr.as_bytes()) {
        panic!("the Zarr v3 copy differs:\n{d}");
    }
    // zarr-python reads the store: the subset's shapes and record values
    let py = "import sys, zarr\n\
g = zarr.open_group(sys.argv[1], mode='r')\n\
assert g.metadata.zarr_format == 3\n\
print(g['time'][:].tolist(), g['lat'].shape, g['lon'].shape)\n";
    match std::process::Command::new("python3")
        .args(["-c", py, &dir.join("out.zarr").to_string_lossy()])
        .output()
    {
        Ok(o) if o.status.success() => {
            let got = String::from_utf8_lossy(&o.stdout);
            assert_eq!(got, "[1.5, 4.5, 7.5] (2,) (3,)\n", "zarr-python");
        }
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'zarr'") => {
            eprintln!("SKIP: zarr-python is not installed");
        }
        Ok(o) => panic!("zarr-python: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("SKIP: python3: {e}"),
    }

    // ncdump-rs --dimension prints what ncdump prints of the copy, whatever the input format
    for input in ["t4.nc", "t3.nc"] {
        let mut args = dimension_args(&specs);
        args[0] = "--dmn".to_string();
        args.push(input.to_string());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run("ncdump-rs", &a, &dir);
        assert!(o.status.success(), "{}", err(&o));
        let printed = data_section(&String::from_utf8_lossy(&o.stdout));
        if let Some(d) = common::diff(want.as_bytes(), printed.as_bytes()) {
            panic!("ncdump-rs --dimension on {input} differs:\n{d}");
        }
    }
}

#[test]
fn errors_exit_with_their_code_name_the_dimension_and_write_nothing() {
    let dir = tempdir("subset-errors");
    inputs(&dir);
    let cases: &[(&str, u8, &str)] = &[
        (
            "lat,1,2,0",
            2,
            "--dimension \"lat,1,2,0\": stride \"0\" is not a positive integer (1 takes every index)",
        ),
        (
            "lat,1,2,-1",
            2,
            "--dimension \"lat,1,2,-1\": stride \"-1\" is not a positive integer",
        ),
        (
            "lat",
            2,
            "--dimension \"lat\": no \",\" after the dimension name; expected DIM,MIN[,MAX[,STRIDE]]",
        ),
        (
            "lat,0,1.",
            2,
            "--dimension \"lat,0,1.\": MIN and MAX must both be indices (integers) or both coordinate values",
        ),
        (
            "foo,1",
            1,
            "--dimension foo: no such dimension (ncdump -h lists the dimensions)",
        ),
        (
            "lat,9",
            1,
            "--dimension /lat: index 9 is past the end (the dimension has 4 elements, indices 0 to 3): give a smaller index",
        ),
        (
            "lat,2,1",
            1,
            "--dimension /lat: MIN 2 is greater than MAX 1; wrapped ranges (such as longitudes across 0) are not yet supported",
        ),
        (
            "lat,10.,-10.",
            1,
            "--dimension /lat: MIN 10 is greater than MAX -10",
        ),
        (
            "lat,11.,12.",
            1,
            "--dimension /lat: no coordinate lies in [11, 12] (the coordinates run from -30 to 30): widen the range",
        ),
        (
            "n,0.",
            1,
            "--dimension /n: a coordinate value needs a coordinate variable (a 1-D variable named \"n\" along it), and there is none: give indices (integers) instead",
        ),
    ];
    for (spec, code, msg) in cases {
        for tool in ["nccopy-rs", "ncdump-rs"] {
            let mut args = vec!["--dimension", spec, "t3.nc"];
            if tool == "nccopy-rs" {
                args.push("bad.nc");
            }
            let o = run(tool, &args, &dir);
            assert_eq!(
                o.status.code(),
                Some(i32::from(*code)),
                "{tool} {spec}: {}",
                err(&o)
            );
            assert!(err(&o).contains(msg), "{tool} {spec}: {}", err(&o));
            assert!(o.stdout.is_empty(), "{tool} {spec}: printed something");
            assert!(
                !dir.join("bad.nc").exists(),
                "{tool} {spec}: wrote an output"
            );
        }
    }
    // a coordinate that is not monotonic cannot take a value range
    let cdl = "netcdf m {\ndimensions:\n  x = 3 ;\nvariables:\n  float x(x) ;\ndata:\n  x = 1, 3, 2 ;\n}\n";
    std::fs::write(dir.join("m.cdl"), cdl).unwrap();
    let o = run("ncgen-rs", &["-o", "m.nc", "m.cdl"], &dir);
    assert!(o.status.success(), "{}", err(&o));
    let o = run(
        "nccopy-rs",
        &["--dimension", "x,1.,2.", "m.nc", "bad.nc"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains(
            "--dimension /x: the coordinate values are not monotonic (at index 2), so a value range has no meaning"
        ),
        "{}",
        err(&o)
    );
    assert!(!dir.join("bad.nc").exists());
}
