//! End-to-end, issue 14 ("write what every reader opens"): every netCDF `string` datatype we
//! write into a netCDF-4 file is the one libhdf5 writes (a variable-length string over an 8-bit
//! unsigned integer, null-terminated, UTF-8), wherever it appears: string variables (scalar,
//! 1-D, with and without `_FillValue`, in a group), string attributes (in the object header and
//! in dense storage), a compound with a string member, a vlen of strings.
//!
//! Inputs: `testdata/cdl/nc4/strings.cdl` (atomic strings) and `strings_user.cdl` (strings in
//! user-defined types). Each netCDF-4 file — ncgen-rs's, nccopy-rs's copy of netCDF-C's file,
//! nccopy-rs's copy of an NCZarr store — must: hold libhdf5's encoding and none of our stand-in
//! (always checked); show no `unknown_one_character_type` in `h5dump -H`; dump the same with
//! netCDF-C 4.9.0's ncdump as with ncdump-rs; and read in h5py (every value, fill value and
//! attribute) exactly as netCDF-C's own file of the same CDL reads. (A classic file has no
//! strings, so a copy from classic has nothing to check here.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

/// The 20 bytes libhdf5 (1.10.8, under netCDF-C 4.9.0) writes for a netCDF string datatype:
/// class 9 version 1, type string, padding null-terminated, character set UTF-8, size 16; base
/// class 0 version 1, little-endian unsigned, size 1, offset 0, precision 8.
const LIBHDF5_STRING: [u8; 20] = [
    0x19, 0x01, 0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x08, 0x00,
];
/// The end of our writer's stand-in for it (a 1-byte integer base with bit offset "CN" and
/// precision "ST"), which must never survive into a file.
const STANDIN_TAIL: [u8; 8] = [0x01, 0x00, 0x00, 0x00, 0x43, 0x4e, 0x53, 0x54];

/// h5py's view of a file: every group's and dataset's attributes (the netCDF-4 bookkeeping
/// ones left out), every dataset's values, and the fill value of those holding strings (nccopy
/// writes the numeric ones "no fill", as netCDF-C's does), bytes decoded; the dimension scales
/// of dimensions without a variable are left out.
const H5PY_VIEW: &str = r#"
import h5py, json, sys, numpy as np
SKIP = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid",
        "_Netcdf4Coordinates", "_NCProperties"}
def plain(x):
    if isinstance(x, bytes): return x.decode()
    if isinstance(x, np.ndarray): return [plain(y) for y in x]
    if isinstance(x, (list, tuple)): return [plain(y) for y in x]
    if isinstance(x, np.void): return [plain(y) for y in x.tolist()]
    if isinstance(x, np.generic): return x.item()
    return x
def attrs(o):
    return {k: plain(o.attrs[k]) for k in sorted(o.attrs) if k not in SKIP}
out = {}
def visit(name, o):
    if isinstance(o, h5py.Dataset):
        if "This is a netCDF dimension" in str(o.attrs.get("NAME")):
            return
        out[name] = {"values": plain(o[()]), "attrs": attrs(o)}
        if o.dtype.kind in "OV":
            out[name]["fill"] = plain(o.fillvalue)
    elif isinstance(o, h5py.Group):
        out[name + "/"] = attrs(o)
for path in sys.argv[1:]:
    out = {}
    f = h5py.File(path, "r")
    out["/"] = attrs(f)
    f.visititems(visit)
    print(json.dumps(out, sort_keys=True))
"#;

fn cdl(name: &str) -> String {
    testdata(&format!("cdl/nc4/{name}.cdl"))
        .to_str()
        .unwrap()
        .to_string()
}

fn ok(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The file's bytes hold libhdf5's string datatype and no stand-in.
fn check_bytes(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    let count = |pat: &[u8]| bytes.windows(pat.len()).filter(|w| *w == pat).count();
    assert!(
        count(&LIBHDF5_STRING) > 0,
        "{}: no string datatype encoded as libhdf5 encodes it",
        file.display()
    );
    assert_eq!(
        count(&STANDIN_TAIL),
        0,
        "{}: a string datatype stand-in was left in the file",
        file.display()
    );
}

/// `h5dump -H` reads the file and knows every string's character type.
fn check_h5dump(dir: &Path, file: &str) {
    let out = Command::new("h5dump")
        .args(["-H", file])
        .current_dir(dir)
        .output()
        .unwrap();
    ok(&out, &format!("h5dump -H {file}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("unknown_one_character_type"),
        "h5dump -H {file}:\n{text}"
    );
    assert!(text.contains("CTYPE H5T_C_S1"), "h5dump -H {file}:\n{text}");
}

/// netCDF-C's ncdump and ncdump-rs print `file` the same.
fn check_dumps(dir: &Path, file: &str) {
    let theirs = Command::new("ncdump")
        .args(["-n", "x", file])
        .current_dir(dir)
        .output()
        .unwrap();
    ok(&theirs, &format!("ncdump {file}"));
    let ours = run("ncdump-rs", &["-n", "x", file], dir);
    ok(&ours, &format!("ncdump-rs {file}"));
    if let Some(d) = diff(&theirs.stdout, &ours.stdout) {
        panic!("{file}: netCDF-C's ncdump and ncdump-rs differ: {d}");
    }
}

/// h5py reads `file` (values, fill values, attributes) as it reads netCDF-C's `reference`;
/// false (after a SKIP line) without h5py.
fn check_h5py(dir: &Path, file: &str, reference: &str) -> bool {
    let script = format!("import sys; sys.argv = ['view', {file:?}, {reference:?}]\n{H5PY_VIEW}");
    let Some(out) = python_script(dir, "import h5py, numpy", "h5py", &script) else {
        return false;
    };
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    let (got, want) = (lines.next().unwrap(), lines.next().unwrap());
    assert_eq!(
        got, want,
        "h5py reads {file} (left) unlike {reference} (right)"
    );
    true
}

/// Every check on our netCDF-4 `file` in `dir`, netCDF-C's file of the same content being
/// `reference`.
fn check_all(dir: &Path, file: &str, reference: &str) {
    check_bytes(&dir.join(file));
    if missing_references(&["ncdump", "h5dump"]) {
        return;
    }
    check_h5dump(dir, file);
    check_dumps(dir, file);
    check_h5py(dir, file, reference);
}

/// netCDF-C's ncgen writes `ref.nc` from `cdl` in `dir`; false (after a SKIP line) without it.
fn netcdf_c_file(dir: &Path, cdl: &str) -> bool {
    if missing_references(&["ncgen"]) {
        return false;
    }
    let st = Command::new("ncgen")
        .args(["-k", "nc4", "-o", "ref.nc", cdl])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "netCDF-C's ncgen failed on {cdl}");
    true
}

#[test]
fn ncgen_writes_libhdf5_string_datatypes() {
    for name in ["strings", "strings_user"] {
        let dir = tempdir(&format!("strtype-ncgen-{name}"));
        let out = run("ncgen-rs", &["-4", "-o", "ours.nc", &cdl(name)], &dir);
        ok(&out, "ncgen-rs");
        if netcdf_c_file(&dir, &cdl(name)) {
            check_all(&dir, "ours.nc", "ref.nc");
        } else {
            check_bytes(&dir.join("ours.nc"));
        }
    }
}

#[test]
fn nccopy_of_netcdf_c_files_writes_libhdf5_string_datatypes() {
    for name in ["strings", "strings_user"] {
        let dir = tempdir(&format!("strtype-copy-{name}"));
        if !netcdf_c_file(&dir, &cdl(name)) {
            return;
        }
        let out = run("nccopy-rs", &["ref.nc", "copy.nc"], &dir);
        ok(&out, "nccopy-rs");
        check_all(&dir, "copy.nc", "ref.nc");
    }
}

#[test]
fn nccopy_from_nczarr_writes_libhdf5_string_datatypes() {
    let dir = tempdir("strtype-nczarr");
    let url = format!("file://{}#mode=nczarr,file", dir.join("s.zarr").display());
    let out = run("ncgen-rs", &["-4", "-o", &url, &cdl("strings")], &dir);
    ok(&out, "ncgen-rs to NCZarr");
    let out = run("nccopy-rs", &["-k", "nc4", &url, "copy.nc"], &dir);
    ok(&out, "nccopy-rs from NCZarr");
    if netcdf_c_file(&dir, &cdl("strings")) {
        check_all(&dir, "copy.nc", "ref.nc");
    } else {
        check_bytes(&dir.join("copy.nc"));
    }
}

/// The checks can fail: h5py's view tells a changed value apart, and the byte check finds a
/// stand-in.
#[test]
fn checks_see_a_difference() {
    let dir = tempdir("strtype-neg");
    let f = dir.join("bad.bin");
    let mut bytes = LIBHDF5_STRING.to_vec();
    bytes.extend_from_slice(&STANDIN_TAIL);
    std::fs::write(&f, &bytes).unwrap();
    assert!(std::panic::catch_unwind(|| check_bytes(&f)).is_err());
    std::fs::write(&f, &LIBHDF5_STRING[..19]).unwrap();
    assert!(std::panic::catch_unwind(|| check_bytes(&f)).is_err());
    if !netcdf_c_file(&dir, &cdl("strings")) {
        return;
    }
    let other = dir.join("other.cdl");
    let text = std::fs::read_to_string(cdl("strings")).unwrap();
    std::fs::write(&other, text.replace("\"ccc\"", "\"cccc\"")).unwrap();
    let out = run(
        "ncgen-rs",
        &["-4", "-o", "other.nc", other.to_str().unwrap()],
        &dir,
    );
    ok(&out, "ncgen-rs");
    let d = dir.clone();
    let r = std::panic::catch_unwind(move || check_h5py(&d, "other.nc", "ref.nc"));
    if r.as_ref().is_ok_and(|&ran| !ran) {
        return;
    }
    assert!(r.is_err(), "h5py's view did not see a changed string");
}

/// Enough string attributes on one variable that dense storage grows past the root's direct
/// blocks into child indirect blocks (beyond 512 KiB of attribute heap): each one is rewritten
/// in its direct block, whose size the heap pass must find. (Read with netCDF-C and h5py:
/// ncdump-rs's reader does not follow such heaps yet, not even in netCDF-C's own files.)
#[test]
fn thousands_of_string_attributes() {
    let dir = tempdir("strtype-many");
    let n = 12000;
    let mut cdl = String::from("netcdf many {\nvariables:\n  int v ;\n");
    for i in 0..n {
        cdl.push_str(&format!("    string v:s{i} = \"value {i}\" ;\n"));
    }
    cdl.push_str("data:\n  v = 1 ;\n}\n");
    std::fs::write(dir.join("many.cdl"), cdl).unwrap();
    let out = run("ncgen-rs", &["-4", "-o", "many.nc", "many.cdl"], &dir);
    ok(&out, "ncgen-rs");
    check_bytes(&dir.join("many.nc"));
    if missing_references(&["ncdump"]) {
        return;
    }
    let out = Command::new("ncdump")
        .args(["-h", "many.nc"])
        .current_dir(&dir)
        .output()
        .unwrap();
    ok(&out, "ncdump -h");
    let text = String::from_utf8_lossy(&out.stdout);
    let last = format!("string v:s{} = \"value {}\" ;", n - 1, n - 1);
    assert!(text.contains(&last), "{last} missing");
    let script = "import h5py\na = h5py.File('many.nc', 'r')['v'].attrs\n\
                  print(len(a), a['s0'][0], a['s11999'][0])";
    if let Some(out) = python_script(&dir, "import h5py", "h5py", script) {
        assert_eq!(
            String::from_utf8_lossy(&out).trim(),
            "12000 value 0 value 11999"
        );
    }
}
