//! End-to-end: netCDF-4 data and attributes that live in HDF5's global heap (issue 4): strings
//! of rank 0, 1 and 2 with NIL and "", a vlen variable on an unlimited dimension, a compound
//! holding a string, and vlen / enum / compound / string attribute arrays on objects with more
//! than 8 attributes (so the attributes are in dense storage, a fractal heap).
//!
//! `testdata/expected/nc4/heap.cdl` is netCDF-C 4.9.0's `ncdump` of its own ncgen's file for
//! `testdata/cdl/nc4/heap.cdl`. Always: ncgen-rs then ncdump-rs gives exactly that text. With the
//! references installed: netCDF-C's ncdump of our file gives it too, h5dump reads every object
//! of it, h5py gets the same values, and nccopy-rs of netCDF-C's file keeps its layout (same
//! stored bytes per variable).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

fn expected() -> Vec<u8> {
    std::fs::read(testdata("expected/nc4/heap.cdl")).unwrap()
}

/// ncgen-rs writes `heap.nc` in `dir`.
fn ours(dir: &Path) {
    let cdl = testdata("cdl/nc4/heap.cdl");
    let out = run(
        "ncgen-rs",
        &["-k", "nc4", "-o", "heap.nc", cdl.to_str().unwrap()],
        dir,
    );
    assert!(
        out.status.success(),
        "ncgen-rs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ncgen-rs writes `ours.nc` and netCDF-C's ncgen `ref.nc` from `cdl`, in `dir`.
fn ncgen_both(dir: &Path, cdl: &str) {
    let out = run("ncgen-rs", &["-k", "nc4", "-o", "ours.nc", cdl], dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st = Command::new("ncgen")
        .args(["-k", "nc4", "-o", "ref.nc", cdl])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success());
}

/// `tool -s -n name file` in `dir` (netCDF-C's `ncdump` or ours), `_NCProperties` left out.
fn dump_s(dir: &Path, tool: &str, name: &str, file: &str) -> String {
    let args = ["-s", "-n", name, file];
    let out = if tool == "ncdump" {
        Command::new("ncdump")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
    } else {
        run(tool, &args, dir)
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.contains("_NCProperties"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// netCDF-C's ncdump and ncdump-rs both show `ours.nc` as `want` (the dump of `ref.nc`).
fn both_dumpers_agree(dir: &Path, name: &str, want: &str) {
    for (tool, what) in [("ncdump", "netCDF-C's ncdump"), ("ncdump-rs", "ncdump-rs")] {
        if let Some(d) = diff(
            want.as_bytes(),
            dump_s(dir, tool, name, "ours.nc").as_bytes(),
        ) {
            panic!("{what} -s of our file differs from netCDF-C's dump of its own: {d}");
        }
    }
}

#[test]
fn ncdump_rs_shows_what_netcdf_c_wrote() {
    let dir = tempdir("heap-ours");
    ours(&dir);
    let out = run("ncdump-rs", &["heap.nc"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(d) = diff(&expected(), &out.stdout) {
        panic!("ncdump-rs of our file differs from netCDF-C's dump of its own file: {d}");
    }
}

#[test]
fn netcdf_c_and_hdf5_read_our_heap_data() {
    if missing_references(&["ncdump", "h5dump"]) {
        return;
    }
    let dir = tempdir("heap-ref");
    ours(&dir);
    let out = Command::new("ncdump")
        .arg("heap.nc")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(d) = diff(&expected(), &out.stdout) {
        panic!("netCDF-C's ncdump of our file differs: {d}");
    }
    // h5dump reads every dataset and attribute (the global heap, the patched messages)
    let out = Command::new("h5dump")
        .arg("heap.nc")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "h5dump failed on our file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // the fill value of a string variable is "" in the heap, as netCDF-C writes it
    let fill = Command::new("h5dump")
        .args(["-p", "-H", "-d", "s2", "heap.nc"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let fill = String::from_utf8_lossy(&fill.stdout);
    assert!(fill.contains("VALUE  \"\""), "{fill}");
    for want in [
        "\"scalar string\"",
        "(0,0): \"a\", \"bb\", NULL,",
        "(0): (1, 2, 3), (4), ()",
        "\"one\"",
    ] {
        assert!(text.contains(want), "h5dump output lacks {want:?}:\n{text}");
    }
}

#[test]
fn h5py_reads_our_heap_data() {
    let probe = Command::new("python3").args(["-c", "import h5py"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: h5py not installed");
        return;
    }
    let dir = tempdir("heap-h5py");
    ours(&dir);
    let script = r#"
import h5py, json
f = h5py.File("heap.nc", "r")
v = f["v"]
out = {
  "sc": f["sc"][()].decode(),
  "s2": [[x.decode() for x in row] for row in f["s2"][...]],
  "r": [list(map(int, x)) for x in f["r"][...]],
  "c": [[int(a), b.decode()] for a, b in f["c"][...]],
  "vl": [list(map(int, x)) for x in v.attrs["vl"]],
  "en": list(map(int, v.attrs["en"])),
  "cs": [[int(a), b.decode()] for a, b in v.attrs["cs"]],
  "gvl": [list(map(int, x)) for x in f.attrs["gvl"]],
  "gen": list(map(int, f.attrs["gen"])),
  "nattrs": len(v.attrs),
}
print(json.dumps(out))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = serde_json::json!({
        "sc": "scalar string",
        // NIL and "" both read as "" in h5py; the fill rows are empty strings too
        "s2": [["a", "bb", ""], ["", "ccc", "dddd"], ["", "", ""], ["", "", ""]],
        "r": [[1], [2, 3], [], [4, 5, 6]],
        "c": [[1, "x"], [2, ""], [3, "zzz"]],
        "vl": [[1, 2, 3], [4], []],
        "en": [1, 2, 1],
        "cs": [[1, "one"], [2, ""]],
        "gvl": [[7, 8]],
        "gen": [2, 1],
        // 14 of the CDL's plus DIMENSION_LIST
        "nattrs": 15,
    });
    assert_eq!(got, want);
}

/// `h5ls -v` storage line of a dataset: logical and allocated bytes.
fn storage(file: &Path, var: &str) -> String {
    let out = Command::new("h5ls")
        .arg("-v")
        .arg(format!("{}/{var}", file.display()))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.trim_start().starts_with("Storage:"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn nccopy_keeps_netcdf_c_heap_data_and_layout() {
    if missing_references(&["ncgen", "ncdump", "h5ls"]) {
        return;
    }
    let dir = tempdir("heap-copy");
    let cdl = testdata("cdl/nc4/heap.cdl");
    let st = Command::new("ncgen")
        .args(["-k", "nc4", "-o", "heap.nc", cdl.to_str().unwrap()])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(st.success());
    let out = run("nccopy-rs", &["heap.nc", "copy.nc"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = |f: &str| {
        Command::new("ncdump")
            .args(["-n", "heap", f])
            .current_dir(&dir)
            .output()
            .unwrap()
            .stdout
    };
    if let Some(d) = diff(&dump("heap.nc"), &dump("copy.nc")) {
        panic!("netCDF-C's ncdump of the copy differs: {d}");
    }
    // the compound holding a string keeps its stored size (24 bytes a value, not more)
    for var in ["c", "r", "s2", "sc"] {
        assert_eq!(
            storage(&dir.join("copy.nc"), var),
            storage(&dir.join("heap.nc"), var),
            "stored size of {var}"
        );
    }
}

/// An attribute message over 4 KiB in dense attribute storage is a "huge" object of the
/// attribute heap, stored outside any checksummed block: netCDF-C reads our file as its own.
#[test]
fn huge_attributes_in_dense_storage() {
    if missing_references(&["ncgen", "ncdump"]) {
        return;
    }
    let dir = tempdir("heap-huge");
    let mut cdl = String::from(
        "netcdf huge {\ntypes:\n  int(*) vi_t ;\n  byte enum e_t {A = 1, B = 2} ;\n\
         variables:\n  int v ;\n",
    );
    for k in 0..10 {
        cdl.push_str(&format!("    v:a{k} = {k} ;\n"));
    }
    let vl: Vec<String> = (0..1000).map(|i| format!("{{{i}, {}}}", -i)).collect();
    cdl.push_str(&format!("    vi_t v:vl = {} ;\n", vl.join(", ")));
    let en: Vec<&str> = (0..5000)
        .map(|i| if i % 3 == 0 { "B" } else { "A" })
        .collect();
    cdl.push_str(&format!("    e_t v:en = {} ;\n", en.join(", ")));
    cdl.push_str("  int w ;\n");
    cdl.push_str(&format!("    e_t w:en = {} ;\n", en.join(", ")));
    cdl.push_str("data:\n  v = 1 ;\n  w = 2 ;\n}\n");
    std::fs::write(dir.join("huge.cdl"), cdl).unwrap();
    ncgen_both(&dir, "huge.cdl");
    let dump = |f: &str| {
        let out = Command::new("ncdump")
            .args(["-n", "huge", f])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    if let Some(d) = diff(&dump("ref.nc"), &dump("ours.nc")) {
        panic!("netCDF-C's ncdump of our file differs from its own: {d}");
    }
}

/// Compact variables of heap references (their references live in the object header):
/// netCDF-C's `ncdump -s` of our file equals its dump of its own, storage included.
#[test]
fn compact_heap_variables_match_netcdf_c() {
    if missing_references(&["ncgen", "ncdump"]) {
        return;
    }
    let dir = tempdir("heap-compact");
    let cdl = testdata("cdl/nc4/compact.cdl");
    ncgen_both(&dir, cdl.to_str().unwrap());
    let want = dump_s(&dir, "ncdump", "compact", "ref.nc");
    assert!(want.contains("t:_Storage = \"compact\""), "{want}");
    both_dumpers_agree(&dir, "compact", &want);
}

/// netCDF-C refuses filters on variable-length data; so do we, naming the variable.
#[test]
fn filters_on_strings_are_refused() {
    let dir = tempdir("heap-filter");
    std::fs::write(
        dir.join("f.cdl"),
        "netcdf f {\ndimensions: n = 2 ;\nvariables:\n  string s(n) ;\n    s:_DeflateLevel = 2 ;\n\
         data:\n  s = \"a\", \"b\" ;\n}\n",
    )
    .unwrap();
    let out = run("ncgen-rs", &["-k", "nc4", "-o", "f.nc", "f.cdl"], &dir);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("variable s") && err.contains("variable-length data"),
        "{err}"
    );
    assert!(!dir.join("f.nc").exists(), "no output file is left");
}

/// An input string variable with a filter (h5py allows one) is copied unfiltered with a
/// warning, not refused: netCDF-4 cannot filter variable-length data.
#[test]
fn nccopy_drops_input_filters_of_strings_with_a_warning() {
    let dir = tempdir("heap-h5str");
    let script = "import h5py, numpy as np\n\
        f = h5py.File('in.h5', 'w')\n\
        f.create_dataset('s', data=np.array(['a', 'bb', 'ccc'], dtype=object), \
        dtype=h5py.string_dtype(), compression='gzip', chunks=(2,))\n\
        f.close()\n";
    let made = Command::new("python3")
        .args(["-c", script])
        .current_dir(&dir)
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: h5py not installed");
        return;
    }
    let out = run("nccopy-rs", &["in.h5", "out.nc"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "nccopy: warning: variable /s: filters cannot apply to a string variable; left unfiltered\n"
    );
    let out = run("ncdump-rs", &["-s", "out.nc"], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" s = \"a\", \"bb\", \"ccc\" ;"), "{text}");
    assert!(
        !text.contains("_Filter") && !text.contains("_DeflateLevel"),
        "{text}"
    );
}

/// Heap-typed variables that the CDL gives no data: contiguous and compact storage gets the
/// fill values written, unlimited ones stay empty; ncdump -s of ours
/// equals netCDF-C's of its own file, by both dumpers. (A vlen variable without data is left
/// out: 4.9.0's ncdump prints its fill values, not `_`; see docs/compat.md.)
#[test]
fn heap_variables_without_data_read_as_fill() {
    if missing_references(&["ncgen", "ncdump"]) {
        return;
    }
    let dir = tempdir("heap-nodata");
    std::fs::write(
        dir.join("nd.cdl"),
        "netcdf nd {\ntypes:\n int(*) vi_t ;\ndimensions: n = 2 ; u = UNLIMITED ;\n\
         variables:\n string s(n) ;\n string sc ;\n string t(n) ;\n  t:_Storage = \"compact\" ;\n\
         string w(u) ;\n string f(n) ;\n\
         f:_FillValue = \"fv\" ;\n int i(u) ;\ndata:\n i = 1, 2 ;\n}\n",
    )
    .unwrap();
    ncgen_both(&dir, "nd.cdl");
    let want = dump_s(&dir, "ncdump", "nd", "ref.nc");
    assert!(
        want.contains(" s = _, _ ;") && want.contains(" f = _, _ ;"),
        "{want}"
    );
    both_dumpers_agree(&dir, "nd", &want);
}

/// User-defined types keep the order the CDL declares them (not name order): `ncdump -s` of a
/// netCDF4-python file with enum, compound (one nesting another), vlen and group types, given
/// to ncgen-rs, gives a file whose `ncdump -s` is the same text, by netCDF-C's ncdump and ours.
#[test]
fn user_types_keep_their_declaration_order_through_ncgen() {
    if missing_references(&["ncdump"]) {
        return;
    }
    let dir = tempdir("udt-order");
    let script = r#"
import netCDF4, numpy as np
d = netCDF4.Dataset('py.nc', 'w')
d.createDimension('n', 2)
et = d.createEnumType(np.int16, 'zeta_enum', {'Z': 0, 'Y': 5})
d.createCompoundType(np.dtype([('p', 'i2'), ('q', 'i2')]), 'mid_cmp')
vt = d.createVLType(np.float32, 'alpha_vlen')
ct = d.createCompoundType(np.dtype([('a', 'i4'), ('inner', [('p', 'i2'), ('q', 'i2')])]), 'beta_cmp')
g = d.createGroup('sub')
g.createVLType(np.int8, 'z_vl')
g.createEnumType(np.uint8, 'a_en', {'one': 1})
v = d.createVariable('v', vt, ('n',))
v[0] = np.array([1, 2], 'f4')
v[1] = np.array([3], 'f4')
d.createVariable('e', et, ('n',))[:] = [0, 5]
d.createVariable('c', ct, ('n',))[:] = np.array([(1, (2, 3)), (4, (5, 6))], dtype=ct.dtype)
d.close()
"#;
    if python_script(&dir, "import netCDF4", "netCDF4", script).is_none() {
        return;
    }
    let want = dump_s(&dir, "ncdump", "udt", "py.nc");
    assert!(
        want.contains("types:\n  short enum zeta_enum {Z = 0, Y = 5} ;\n  compound mid_cmp {"),
        "{want}"
    );
    std::fs::write(dir.join("udt.cdl"), &want).unwrap();
    let out = run("ncgen-rs", &["-k", "nc4", "-o", "ours.nc", "udt.cdl"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    both_dumpers_agree(&dir, "udt", &want);
}
