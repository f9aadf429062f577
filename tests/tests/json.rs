//! End-to-end, issue 18 part 2: `ncdump-rs -j` (docs/json.md).
//!
//! - values equal the Python clients' for every type: files written at test time with
//!   netCDF4-python (netCDF-4, classic, CDF-5), h5py (bytes that are not UTF-8, attributes of
//!   user-defined types) and zarr-python (a Zarr v3 store), checked by `tests/json/check.py`,
//!   which also validates every output against `docs/ncdump-json.schema.json` with jsonschema
//!   (skipped with a SKIP line without those packages);
//! - the schema file is what `tests/json/make_schema.py` writes;
//! - `-h`, `-c`, `-v`, `-g` choose the variables with data as for CDL; options that only
//!   shape CDL text are usage errors with `-j`;
//! - every file under `testdata/` that ncdump-rs dumps (and every CDL input there, through
//!   ncgen-rs) gives JSON that parses, with and without `-s`;
//! - a 64 MiB variable streams through in bounded memory (peak RSS read from /proc).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn ok(o: &std::process::Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: exit {:?}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json_dir() -> PathBuf {
    root().join("tests/json")
}

fn schema() -> PathBuf {
    root().join("docs/ncdump-json.schema.json")
}

/// User-defined types in attributes, which netCDF4-python cannot write (and reads only in
/// part), and an opaque variable (netCDF4-python has no opaque types): written by ncgen-rs,
/// compared with h5py.
const USER_ATTS: &str = r#"netcdf uatt {
types:
  ubyte enum color {red = 0, green = 1, blue = 2} ;
  opaque(3) blob ;
  int(*) ints ;
  compound rec {
    int id ;
    float xy(2) ;
    char name(3) ;
  }; // rec
dimensions:
	n = 2 ;
variables:
	blob ov(n) ;
	rec rv(n) ;
	ints vv(n) ;
	color ev(n) ;
	int v ;
		color v:e = red, blue ;
		blob v:o = 0XA0B1C2 ;
		ints v:vl = {1, 2}, {3} ;
		rec v:r = {1, {2.5, -1}, {"ab"}}, {2, {0, 1}, {"xyz"}} ;
		string v:s = "x", "y" ;
data:
 ov = 0X000102, 0XFFFEFD ;
 rv = {7, {1.5, -2}, {"abc"}}, {-8, {0, 1e30}, {"z"}} ;
 vv = {1, 2, 3}, {} ;
 ev = blue, green ;
 v = 1 ;
}
"#;

#[test]
fn values_equal_the_python_clients() {
    let dir = tempdir("json-clients");
    let probe = "import netCDF4, h5py, zarr, jsonschema, numpy\nassert int(zarr.__version__.split('.')[0]) >= 3";
    let make = std::fs::read_to_string(json_dir().join("make_files.py")).unwrap();
    if python_script(&dir, probe, "netCDF4, h5py, zarr 3, jsonschema", &make).is_none() {
        return;
    }
    std::fs::write(dir.join("uatt.cdl"), USER_ATTS).unwrap();
    ok(
        &run(
            "ncgen-rs",
            &["-k", "nc4", "-o", "uatt.nc", "uatt.cdl"],
            &dir,
        ),
        "ncgen-rs uatt.cdl",
    );
    let out = Command::new("python3")
        .arg(json_dir().join("check.py"))
        .arg(bin("ncdump-rs"))
        .arg(schema())
        .args([
            "all.nc",
            "classic.nc",
            "cdf5.nc",
            "nonutf8.h5",
            "store.zarr",
            "h5:uatt.nc",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    ok(&out, "tests/json/check.py");
    // every value of every file was compared: the counts are fixed by make_files.py
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "all.nc: 201 values\n\
         classic.nc: 18 values\n\
         cdf5.nc: 24 values\n\
         nonutf8.h5: 5 values\n\
         store.zarr: 12 values\n\
         uatt.nc: 40 values\n"
    );
}

#[test]
fn schema_file_is_generated() {
    let Ok(out) = Command::new("python3")
        .arg(json_dir().join("make_schema.py"))
        .output()
    else {
        eprintln!("SKIP: python3 not installed");
        return;
    };
    ok(&out, "make_schema.py");
    let committed = std::fs::read(schema()).unwrap();
    if let Some(d) = diff(&committed, &out.stdout) {
        panic!(
            "docs/ncdump-json.schema.json is not make_schema.py's output (run: python3 \
             tests/json/make_schema.py > docs/ncdump-json.schema.json): {d}"
        );
    }
}

const SELECT_CDL: &str = r#"netcdf sel {
dimensions:
	x = 2 ;
	t = UNLIMITED ;
variables:
	int x(x) ;
	float v(t, x) ;
		v:units = "K" ;
data:
 x = 1, 2 ;
 v = 1, 2, 3, 4 ;

group: g {
  variables:
  	double w(x) ;
  data:
   w = 0.5, 1.5 ;
  } // group g
}
"#;

/// The variables of `/` and `/g` that have `"data"`, as `name` and `g/name`, sorted.
fn with_data(doc: &serde_json::Value) -> Vec<String> {
    let mut names = Vec::new();
    for (prefix, vars) in [
        ("", &doc["variables"]),
        ("g/", &doc["groups"]["g"]["variables"]),
    ] {
        for (n, v) in vars.as_object().unwrap() {
            if v.get("data").is_some() {
                names.push(format!("{prefix}{n}"));
            }
        }
    }
    names.sort();
    names
}

fn dump_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let o = run("ncdump-rs", args, dir);
    ok(&o, &format!("ncdump-rs {args:?}"));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "ncdump-rs {args:?}: not JSON ({e}):\n{}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

#[test]
fn selection_options_as_for_cdl() {
    let dir = tempdir("json-select");
    std::fs::write(dir.join("sel.cdl"), SELECT_CDL).unwrap();
    ok(
        &run("ncgen-rs", &["-k", "nc4", "-o", "sel.nc", "sel.cdl"], &dir),
        "ncgen-rs",
    );
    let all = dump_json(&dir, &["-j", "sel.nc"]);
    assert_eq!(with_data(&all), ["g/w", "v", "x"]);
    assert_eq!(
        all["variables"]["v"]["data"],
        serde_json::json!([[1.0, 2.0], [3.0, 4.0]])
    );
    assert_eq!(all["dimensions"], serde_json::json!({"x": 2, "t": 2}));
    assert_eq!(all["unlimited"], serde_json::json!(["t"]));
    assert_eq!(
        all["groups"]["g"]["variables"]["w"]["data"],
        serde_json::json!([0.5, 1.5])
    );
    // the long spelling is the same option
    assert_eq!(dump_json(&dir, &["--json", "sel.nc"]), all);
    // -h: all metadata, no data
    let h = dump_json(&dir, &["-j", "-h", "sel.nc"]);
    assert!(with_data(&h).is_empty());
    assert_eq!(h["variables"]["v"]["attributes"]["units"], "K");
    for (opts, want) in [
        (&["-c"][..], &["x"][..]),
        (&["-v", "v"], &["v"]),
        (&["-v", "/g/w,x"], &["g/w", "x"]),
        (&["-g", "g"], &["g/w"]),
        (&["-c", "-v", "v"], &["v"]),
        (&["-h", "-v", "v"], &[]),
    ] {
        let mut a = vec!["-j"];
        a.extend_from_slice(opts);
        a.push("sel.nc");
        assert_eq!(dump_json(&dir, &a).pipe(with_data), want, "{opts:?}");
        // the same variables as the CDL data sections show
        let mut c = opts.to_vec();
        c.push("sel.nc");
        assert_eq!(cdl_data_vars(&dir, &c), want, "CDL {opts:?}");
    }
    // -s: the virtual attributes, as CDL shows them
    let s = dump_json(&dir, &["-j", "-s", "sel.nc"]);
    assert_eq!(s["variables"]["v"]["attributes"]["_Storage"], "chunked");
    assert_eq!(s["attributes"]["_Format"], "netCDF-4");
    // a name that matches nothing: ncdump's message and status, nothing on stdout
    let o = run("ncdump-rs", &["-j", "-v", "nope", "sel.nc"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "ncdump: nope: No such variable\n"
    );
    assert!(o.stdout.is_empty());
    // options that only shape CDL text are usage errors, not silently ignored
    for args in [
        &["-j", "-x"][..],
        &["-j", "-b", "c"],
        &["-j", "-f", "f"],
        &["-j", "-l", "40"],
        &["-j", "-p", "3"],
        &["-j", "-t"],
        &["-j", "-n", "name"],
        &["-j", "-XF"],
    ] {
        let mut a = args.to_vec();
        a.push("sel.nc");
        let o = run("ncdump-rs", &a, &dir);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("has no meaning with -j"), "{a:?}: {err}");
        assert!(o.stdout.is_empty(), "{a:?}");
    }
}

/// The variables whose values a CDL dump shows (`name = ...` lines of its data sections), as
/// `name` and `g/name`, sorted.
fn cdl_data_vars(dir: &Path, args: &[&str]) -> Vec<String> {
    let o = run("ncdump-rs", args, dir);
    ok(&o, &format!("ncdump-rs {args:?}"));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut group = String::new();
    let mut in_data = false;
    let mut names = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(g) = t.strip_prefix("group: ") {
            group = format!("{}/", g.trim_end_matches(" {"));
            in_data = false;
        } else if t == "data:" {
            in_data = true;
        } else if t.starts_with('}') {
            in_data = false;
        } else if in_data {
            if let Some((name, _)) = t.split_once(" =") {
                names.push(format!("{group}{name}"));
            }
        }
    }
    names.sort();
    names
}

trait Pipe: Sized {
    fn pipe<R>(self, f: impl FnOnce(&Self) -> R) -> R {
        f(&self)
    }
}
impl Pipe for serde_json::Value {}

/// Every `.nc` file under `testdata/`, and every CDL input under `testdata/cdl/` made into a
/// netCDF-4 file by ncgen-rs (those it accepts), that `ncdump-rs` dumps as CDL gives JSON that
/// parses, with and without `-s`; with jsonschema installed, each also validates.
#[test]
fn every_testdata_file_gives_valid_json() {
    let dir = tempdir("json-corpus");
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut cdls: Vec<PathBuf> = Vec::new();
    walk(
        &root().join("testdata"),
        &mut |p| match p.extension().and_then(|e| e.to_str()) {
            Some("nc") => inputs.push(p.to_path_buf()),
            Some("cdl") if p.starts_with(root().join("testdata/cdl")) => cdls.push(p.to_path_buf()),
            _ => {}
        },
    );
    inputs.sort();
    cdls.sort();
    for (k, cdl) in cdls.iter().enumerate() {
        let out = dir.join(format!("cdl{k}.nc"));
        let o = Command::new(bin("ncgen-rs"))
            .args(["-k", "nc4", "-o"])
            .arg(&out)
            .arg(cdl)
            .output()
            .unwrap();
        if o.status.success() {
            inputs.push(out);
        }
    }
    let mut dumped = 0;
    let mut saved = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        let cdl = Command::new(bin("ncdump-rs")).arg(input).output().unwrap();
        if !cdl.status.success() {
            continue;
        }
        dumped += 1;
        for (tag, opts) in [("", &[][..]), ("s", &["-s"][..])] {
            let o = Command::new(bin("ncdump-rs"))
                .arg("-j")
                .args(opts)
                .arg(input)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{}: CDL dumps, ncdump-rs -j {opts:?} fails: {}",
                input.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&o.stdout) {
                panic!("{}: -j {opts:?} is not JSON: {e}", input.display());
            }
            let path = dir.join(format!("out{k}{tag}.json"));
            std::fs::write(&path, &o.stdout).unwrap();
            saved.push(path);
        }
    }
    // the corpus is what it claims to be: the classic fixtures and the CDL inputs
    assert!(dumped >= 280, "only {dumped} inputs dumped");
    let probe = "import jsonschema";
    let script = format!(
        "import json, jsonschema, sys\n\
         v = jsonschema.Draft202012Validator(json.load(open({schema:?})))\n\
         n = 0\n\
         for p in open('list.txt').read().split('\\n'):\n\
         \x20   if not p: continue\n\
         \x20   e = next(iter(v.iter_errors(json.load(open(p)))), None)\n\
         \x20   if e is not None: sys.exit(f'{{p}}: {{e.message}} at {{list(e.absolute_path)}}')\n\
         \x20   n += 1\n\
         print(n)\n",
        schema = schema().to_string_lossy()
    );
    let list: Vec<String> = saved
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    std::fs::write(dir.join("list.txt"), list.join("\n")).unwrap();
    if let Some(out) = python_script(&dir, probe, "jsonschema", &script) {
        assert_eq!(
            String::from_utf8_lossy(&out).trim(),
            saved.len().to_string()
        );
    }
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            walk(&p, f);
        } else {
            f(&p);
        }
    }
}

/// A 64 MiB float variable (16 Mi values, about 218 MB of JSON) streams through: the output is
/// complete and exact, and the peak RSS stays far below the variable's size.
#[test]
fn large_variable_streams_in_bounded_memory() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("SKIP: no /proc to read the peak RSS from");
        return;
    }
    let dir = tempdir("json-big");
    let n: u64 = 16 << 20;
    std::fs::write(
        dir.join("big.cdl"),
        format!(
            "netcdf big {{\ndimensions:\n n = {n} ;\nvariables:\n float v(n) ;\n  v:_ChunkSizes = 1048576 ;\n}}\n"
        ),
    )
    .unwrap();
    ok(
        &run("ncgen-rs", &["-4", "-o", "big.nc", "big.cdl"], &dir),
        "ncgen-rs big.cdl",
    );
    let header = run("ncdump-rs", &["-j", "-h", "big.nc"], &dir);
    ok(&header, "ncdump-rs -j -h");
    let mut child = Command::new(bin("ncdump-rs"))
        .args(["-j", "big.nc"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        // keep the start and end, count the rest
        let mut head = Vec::new();
        let mut tail: Vec<u8> = Vec::new();
        let mut total = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let k = std::io::Read::read(&mut stdout, &mut buf).unwrap();
            if k == 0 {
                break;
            }
            if head.len() < 4096 {
                head.extend_from_slice(&buf[..k.min(4096 - head.len())]);
            }
            tail.extend_from_slice(&buf[..k]);
            if tail.len() > 1 << 17 {
                tail.drain(..tail.len() - 4096);
            }
            total += k;
        }
        (head, tail, total)
    });
    // VmHWM is the peak so far: the last reading before the process exits is its peak
    let mut peak_kb = 0u64;
    loop {
        if let Some(kb) = common::vm_hwm_kb(pid) {
            peak_kb = peak_kb.max(kb);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    let (head, tail, total) = reader.join().unwrap();
    // exact size: the header with `"data": [...]` of n fill values added
    let one = "9.96921e+36";
    let data_len = n as usize * one.len() + (n as usize - 1) * 2 + 2;
    let mut want_head = header.stdout.clone();
    let end = b"\n    }\n  }\n}\n";
    assert!(want_head.ends_with(end));
    want_head.truncate(want_head.len() - end.len());
    want_head.extend_from_slice(b",\n      \"data\": [9.96921e+36, ");
    assert!(
        head.starts_with(&want_head),
        "{}",
        String::from_utf8_lossy(&head)
    );
    assert!(tail.ends_with(b", 9.96921e+36]\n    }\n  }\n}\n"));
    assert_eq!(
        total,
        header.stdout.len() + ",\n      \"data\": ".len() + data_len
    );
    assert!(peak_kb > 0, "no VmHWM read");
    // the variable is 64 MiB and its text 218 MB; slabs of 4 MiB keep the peak near 40 MB
    assert!(
        peak_kb < 80 * 1024,
        "peak RSS {peak_kb} kB: the variable was not streamed"
    );
    eprintln!("ncdump-rs -j of a 64 MiB variable: {total} bytes, peak RSS {peak_kb} kB");
}
