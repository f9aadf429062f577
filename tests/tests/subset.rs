//! Subsets by index and by coordinate value (issue 33, `--dimension`, NCO's `ncks -d`):
//! nccopy-rs's output dumps as NCO 5.1.4's `ncks -d` output does (netCDF-C's ncdump on both,
//! less the history attributes ncks adds), for a netCDF-4 input (chunked and compressed, so
//! that a stride reads across chunks), a classic one and one with groups, including wrapped
//! longitude ranges and several ranges of one dimension; ncdump-rs prints what `ncks --cdl`
//! prints; a Zarr v3 output holds the same values, and every input format (netCDF-4,
//! classic, NCZarr, Zarr v3) gives the same subset; errors exit 2 (the option) or 1 (the
//! data), name the dimension and write nothing. The inputs are written once per run.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

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
    lon:units = \"degrees_east\" ;
  double lev(lev) ;
  float temp(time, lat, lon) ;
    temp:units = \"K\" ;
    temp:_ChunkSizes = 2, 2, 2 ;
    temp:_DeflateLevel = 1 ;
    temp:_Shuffle = \"true\" ;
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
    // whole 2x2x2 chunks inside the cut: copied as they are stored (the view's raw_chunk)
    &["time,2,5"],
    &["time,2,5", "lat,0,1"],
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
    // a longitude range across 0 (lon has units of degrees_east): MIN to the end, then the
    // start to MAX, the lon values in that order; a stride runs on across the wrap; an index
    // range wraps as well
    &["lon,250.,80."],
    &["lon,250.,80.,2"],
    &["lon,3,1"],
    &["time,1,4,2", "lon,250.,80."],
    // several ranges of one dimension (ncks's multislabs): their union, in increasing order
    &["lon,3,4", "lon,0,1"],
    &["lat,0", "lat,2,", "time,4", "time,1,2"],
    &["lon,250.,10.", "lon,1,2"],
];

/// A netCDF-4 file with groups: `lat` in the root and in `/g` (different lengths and
/// coordinates), `/g/h` using `/g/lat`, and `x` in `/g` and `/k`.
const GROUPS_CDL: &str = "netcdf g {
dimensions:
  lat = 4 ;
variables:
  float lat(lat) ;
  int r(lat) ;
data:
  lat = -30, -10, 10, 30 ;
  r = 1, 2, 3, 4 ;
group: g {
  dimensions:
    lat = 3 ;
    x = 5 ;
  variables:
    float lat(lat) ;
    int a(lat, x) ;
    int b(x) ;
  data:
    lat = 0, 20, 40 ;
    a = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 ;
    b = 0, 1, 2, 3, 4 ;
  group: h {
    variables:
      int c(lat) ;
    data:
      c = 7, 8, 9 ;
  }
}
group: k {
  dimensions:
    x = 2 ;
  variables:
    int d(x) ;
  data:
    d = 5, 6 ;
}
}
";

/// The group cases: a plain name cuts the dimension of that name in every group, each by
/// its own coordinates.
const GROUP_CASES: &[&[&str]] = &[
    &["lat,1,2"],
    &["lat,5.,25."],
    &["x,1,,2"],
    &["lat,0", "x,1"],
];

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The inputs, written once by our ncgen: `t4.nc` (netCDF-4, temp chunked 2x2x2 with deflate
/// and shuffle), `t3.nc` (classic), `g4.nc` (netCDF-4 with groups); their absolute paths are
/// `input(NAME)`.
fn inputs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempdir("subset-inputs");
        std::fs::write(dir.join("t4.cdl"), CDL).unwrap();
        let classic: String = CDL
            .lines()
            .filter(|l| !l.contains("temp:_"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(dir.join("t3.cdl"), classic).unwrap();
        std::fs::write(dir.join("g4.cdl"), GROUPS_CDL).unwrap();
        for (kind, name) in [("nc4", "t4"), ("nc3", "t3"), ("nc4", "g4")] {
            let cdl = format!("{name}.cdl");
            let nc = format!("{name}.nc");
            let o = run("ncgen-rs", &["-k", kind, "-o", &nc, &cdl], &dir);
            assert!(o.status.success(), "{}", err(&o));
        }
        dir
    })
}

/// The absolute path of input `name` (see [`inputs`]).
fn input(name: &str) -> String {
    inputs().join(name).to_string_lossy().into_owned()
}

/// netCDF-C's ncdump of `file` without its first line (`netcdf NAME {`) and the global
/// attributes ncks adds.
fn dump(dir: &Path, file: &str) -> String {
    let o = common::reference_ok("ncdump", &[file], dir);
    let text = String::from_utf8_lossy(&o.stdout);
    let kept: Vec<&str> = (text.lines().skip(1))
        .filter(|l| {
            !(l.contains(":history") || l.contains(":NCO") || l.contains("history_of_appended"))
        })
        .collect();
    // a global attributes heading left with no attribute goes too, with its blank line
    let mut out: Vec<&str> = Vec::new();
    for (i, l) in kept.iter().enumerate() {
        if *l == "// global attributes:" && !kept.get(i + 1).is_some_and(|n| n.starts_with("\t\t:"))
        {
            if out.last() == Some(&"") {
                out.pop();
            }
            continue;
        }
        out.push(l);
    }
    out.iter().map(|l| format!("{l}\n")).collect()
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

/// The facts of a CDL text that ncdump-rs and `ncks --cdl` both print, whatever their
/// layout: per group, each dimension's line and each variable's data (whitespace removed),
/// sorted (ncks sorts variables by name and indents by group; attributes are left out, as
/// ncks prints their types and adds its own).
fn cdl_facts(text: &str) -> Vec<String> {
    let mut facts = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    let mut section = "";
    let mut statement = String::new();
    for line in text.lines().skip(1) {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("group: ") {
            groups.push(name.trim_end_matches(" {").to_string());
            continue;
        }
        if t.starts_with('}') {
            groups.pop();
            continue;
        }
        if matches!(t, "dimensions:" | "variables:" | "data:" | "types:") {
            section = t;
            continue;
        }
        let here = format!("/{}", groups.join("/"));
        match section {
            "dimensions:" if !t.is_empty() => facts.push(format!("{here} dim {t}")),
            "data:" if !t.is_empty() => {
                statement.extend(t.split_whitespace());
                if statement.ends_with(';') {
                    facts.push(format!("{here} data {statement}"));
                    statement.clear();
                }
            }
            _ => {}
        }
    }
    facts.sort();
    facts
}

/// One case: nccopy-rs's output dumps as ncks's does; with `cdl`, ncdump-rs --dimension
/// prints what `ncks --cdl -d` prints (dimension lengths and data). Outputs go to `dir`.
fn ncks_case(dir: &Path, input: &str, specs: &[&str], cdl: bool) {
    let mut args = dimension_args(specs);
    args.extend([input.to_string(), "ours.nc".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run("nccopy-rs", &args, dir);
    assert!(o.status.success(), "{input} {specs:?}: {}", err(&o));
    let mut nco: Vec<&str> = vec!["-O", "--no_abc"];
    for s in specs {
        nco.extend(["-d", s]);
    }
    nco.extend([input, "nco.nc"]);
    common::reference_ok("ncks", &nco, dir);
    let (ours, theirs) = (dump(dir, "ours.nc"), dump(dir, "nco.nc"));
    if let Some(d) = common::diff(theirs.as_bytes(), ours.as_bytes()) {
        panic!("{input} {specs:?}: nccopy-rs differs from ncks:\n{d}");
    }
    if !cdl {
        return;
    }
    let mut args = dimension_args(specs);
    args.push(input.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run("ncdump-rs", &args, dir);
    assert!(
        o.status.success(),
        "ncdump-rs {input} {specs:?}: {}",
        err(&o)
    );
    let printed = cdl_facts(&String::from_utf8_lossy(&o.stdout));
    let mut nco: Vec<&str> = vec!["--cdl"];
    for s in specs {
        nco.extend(["-d", s]);
    }
    nco.push(input);
    let o = common::reference_ok("ncks", &nco, dir);
    let want = cdl_facts(&String::from_utf8_lossy(&o.stdout));
    assert!(
        !want.is_empty(),
        "{input} {specs:?}: ncks --cdl printed nothing"
    );
    if let Some(d) = common::diff(want.join("\n").as_bytes(), printed.join("\n").as_bytes()) {
        panic!("{input} {specs:?}: ncdump-rs --dimension differs from ncks --cdl:\n{d}");
    }
}

#[test]
fn nccopy_and_ncdump_match_ncks_on_netcdf4_classic_and_groups() {
    if missing_references(&["ncks", "ncdump"]) {
        return;
    }
    let dir = tempdir("subset-ncks");
    // every case on each input; ncdump-rs against ncks --cdl on the netCDF-4 ones
    let mut jobs: Vec<(String, &[&str], bool)> = Vec::new();
    for (name, cdl) in [("t4.nc", true), ("t3.nc", false)] {
        jobs.extend(CASES.iter().map(|c| (input(name), *c, cdl)));
    }
    jobs.extend(GROUP_CASES.iter().map(|c| (input("g4.nc"), *c, true)));
    // four at a time (each case runs four or six processes)
    std::thread::scope(|scope| {
        for (n, part) in jobs.chunks(jobs.len().div_ceil(4)).enumerate() {
            let out = dir.join(format!("w{n}"));
            std::fs::create_dir_all(&out).unwrap();
            scope.spawn(move || {
                for (input, specs, cdl) in part {
                    ncks_case(&out, input, specs, *cdl);
                }
            });
        }
    });
    // the record dimension stays unlimited
    let o = run(
        "nccopy-rs",
        &["--dimension", "time,1,2", &input("t3.nc"), "ours.nc"],
        &dir,
    );
    assert!(o.status.success(), "{}", err(&o));
    let ours = dump(&dir, "ours.nc");
    assert!(
        ours.contains("time = UNLIMITED ; // (2 currently)"),
        "{ours}"
    );
}

#[test]
fn a_dimension_named_by_its_path_is_cut_in_its_group_only() {
    let dir = tempdir("subset-path");
    let o = run(
        "ncdump-rs",
        &["--dimension", "/g/lat,1,2", &input("g4.nc")],
        &dir,
    );
    assert!(o.status.success(), "{}", err(&o));
    let want = "netcdf g4 {
dimensions:
\tlat = 4 ;
variables:
\tfloat lat(lat) ;
\tint r(lat) ;
data:

 lat = -30, -10, 10, 30 ;

 r = 1, 2, 3, 4 ;

group: g {
  dimensions:
  \tlat = 2 ;
  \tx = 5 ;
  variables:
  \tfloat lat(lat) ;
  \tint a(lat, x) ;
  \tint b(x) ;
  data:

   lat = 20, 40 ;

   a =
  5, 6, 7, 8, 9,
  10, 11, 12, 13, 14 ;

   b = 0, 1, 2, 3, 4 ;

  group: h {
    variables:
    \tint c(lat) ;
    data:

     c = 8, 9 ;
    } // group h
  } // group g

group: k {
  dimensions:
  \tx = 2 ;
  variables:
  \tint d(x) ;
  data:

   d = 5, 6 ;
  } // group k
}
";
    let got = String::from_utf8_lossy(&o.stdout);
    if let Some(d) = common::diff(want.as_bytes(), got.as_bytes()) {
        panic!("ncdump-rs --dimension /g/lat,1,2:\n{d}");
    }
    // one group's dimension too short: the error names it, as ncks refuses the whole run
    let o = run(
        "ncdump-rs",
        &["--dimension", "lat,3", &input("g4.nc")],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("--dimension /g/lat: index 3 is past the end (the dimension has 3 elements, indices 0 to 2)"),
        "{}",
        err(&o)
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn zarr_v3_output_and_ncdump_rs_show_the_same_values() {
    if missing_references(&["ncdump"]) {
        return;
    }
    let dir = tempdir("subset-zarr");
    let specs = ["time,1,5,2", "lat,-15.,15.", "lon,,,2"];
    let mut args = dimension_args(&specs);
    args.extend([input("t4.nc"), "ours.nc".to_string()]);
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
    for name in ["t4.nc", "t3.nc"] {
        let mut args = dimension_args(&specs);
        args[0] = "--dmn".to_string();
        args.push(input(name));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run("ncdump-rs", &a, &dir);
        assert!(o.status.success(), "{}", err(&o));
        let printed = data_section(&String::from_utf8_lossy(&o.stdout));
        if let Some(d) = common::diff(want.as_bytes(), printed.as_bytes()) {
            panic!("ncdump-rs --dimension on {name} differs:\n{d}");
        }
    }
}

#[test]
fn every_input_format_gives_the_same_subset() {
    let dir = tempdir("subset-formats");
    // the compressed netCDF-4 input copied to classic, NCZarr and Zarr v3
    let nczarr = format!("file://{}/t.nczarr#mode=nczarr,file", dir.display());
    let zarr3 = format!("file://{}/t.zarr#mode=zarr,v3,file", dir.display());
    let t4 = input("t4.nc");
    for (kind, out) in [("classic", "t.nc"), ("nc4", &nczarr), ("nc4", &zarr3)] {
        let o = run("nccopy-rs", &["-k", kind, &t4, out], &dir);
        assert!(o.status.success(), "{out}: {}", err(&o));
    }
    let cases: &[&[&str]] = &[
        &["lon,250.,80.", "time,1,5,2"],
        &["lat,-15.,15.", "lev,1,2"],
        &["lon,3,4", "lon,0,1", "lat,1,,2"],
        &["time,-1", "lon,100."],
    ];
    for specs in cases {
        let mut all: Vec<(String, Vec<String>)> = Vec::new();
        for source in [t4.as_str(), "t.nc", &nczarr, &zarr3] {
            let mut args = dimension_args(specs);
            args.push(source.to_string());
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run("ncdump-rs", &a, &dir);
            assert!(o.status.success(), "{source} {specs:?}: {}", err(&o));
            // the values, per variable (a Zarr store lists its variables by name)
            let facts = cdl_facts(&String::from_utf8_lossy(&o.stdout));
            all.push((
                source.to_string(),
                facts.into_iter().filter(|f| f.contains(" data ")).collect(),
            ));
        }
        assert_eq!(all[0].1.len(), 8, "{specs:?}: {:?}", all[0].1);
        for (source, facts) in &all[1..] {
            if let Some(d) =
                common::diff(all[0].1.join("\n").as_bytes(), facts.join("\n").as_bytes())
            {
                panic!("{specs:?}: {source} differs from the netCDF-4 input:\n{d}");
            }
        }
    }
    // one in full: lon across 0, every other record
    let o = run(
        "ncdump-rs",
        &[
            "--dimension",
            "lon,250.,80.",
            "--dimension",
            "time,1,5,2",
            "-v",
            "temp",
            &zarr3,
        ],
        &dir,
    );
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.ends_with(
            " temp =\n  24, 20, 21,\n  29, 25, 26,\n  34, 30, 31,\n  39, 35, 36,\n  64, 60, 61,\n  69, 65, 66,\n  74, 70, 71,\n  79, 75, 76,\n  104, 100, 101,\n  109, 105, 106,\n  114, 110, 111,\n  119, 115, 116 ;\n}\n"
        ),
        "{t}"
    );
}

#[test]
fn json_of_a_subset() {
    let dir = tempdir("subset-json");
    let o = run(
        "ncdump-rs",
        &[
            "-j",
            "--dimension",
            "time,1,5,2",
            "--dimension",
            "lon,250.,80.",
            "--dimension",
            "lat,1",
            "-v",
            "temp,lon",
            &input("t4.nc"),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", err(&o));
    let want = r#"{
  "dimensions": {
    "time": 3,
    "lat": 1,
    "lon": 3,
    "lev": 3,
    "n": 2
  },
  "unlimited": ["time"],
  "variables": {
    "time": {
      "shape": ["time"],
      "type": "double"
    },
    "lat": {
      "shape": ["lat"],
      "type": "float"
    },
    "lon": {
      "shape": ["lon"],
      "type": "float",
      "attributes": {
        "units": "degrees_east"
      },
      "data": [288.0, 0.0, 72.0]
    },
    "lev": {
      "shape": ["lev"],
      "type": "double"
    },
    "temp": {
      "shape": ["time", "lat", "lon"],
      "type": "float",
      "attributes": {
        "units": "K"
      },
      "data": [[[29.0, 25.0, 26.0]], [[69.0, 65.0, 66.0]], [[109.0, 105.0, 106.0]]]
    },
    "p": {
      "shape": ["lev", "lat"],
      "type": "int"
    },
    "other": {
      "shape": ["n"],
      "type": "short"
    },
    "scalar": {
      "type": "int"
    }
  },
  "attributes": {
    "title": "subset test"
  }
}
"#;
    let got = String::from_utf8_lossy(&o.stdout);
    if let Some(d) = common::diff(want.as_bytes(), got.as_bytes()) {
        panic!("ncdump-rs -j --dimension:\n{d}");
    }
    // --kerchunk shows the subset: lat,1 starts inside temp's chunks of 2, so temp's values
    // go inline; the cut coordinate is inline, one element (-10 as little-endian f32)
    let o = run(
        "ncdump-rs",
        &["--kerchunk", "--dimension", "lat,1", &input("t4.nc")],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refs = &doc["refs"];
    let zarray = |k: &str| -> serde_json::Value {
        serde_json::from_str(refs[format!("{k}/.zarray")].as_str().unwrap()).unwrap()
    };
    assert_eq!(zarray("lat")["shape"], serde_json::json!([1]));
    assert_eq!(refs["lat/0"], "base64:AAAgwQ==");
    assert_eq!(zarray("temp")["shape"], serde_json::json!([6, 1, 5]));
    assert!(refs["temp/0.0.0"].as_str().unwrap().starts_with("base64:"));
    // lon is not cut: a reference to the file
    assert!(refs["lon/0"].is_array(), "{}", refs["lon/0"]);
}

#[test]
fn errors_exit_with_their_code_name_the_dimension_and_write_nothing() {
    let dir = tempdir("subset-errors");
    let t3 = input("t3.nc");
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
            "--dimension /lat: MIN 2 is greater than MAX 1, and only a longitude wraps (a coordinate variable with units of degrees east, such as \"degrees_east\"): give MIN <= MAX",
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
            let mut args = vec!["--dimension", spec, &t3];
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
