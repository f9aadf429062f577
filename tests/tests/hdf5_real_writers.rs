//! End-to-end, issue 14: what the tools do with h5py files netCDF cannot show whole. ncdump-rs
//! names every left-out object on stderr and still exits 0; nccopy-rs copies data stored
//! with HDF5's own filters (scaleoffset, nbit) keeping them (issue 31; byte for byte in
//! `nbit_scaleoffset.rs`).
//! Inputs are written by h5py at test time (skipped with a SKIP line without it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

/// Run an h5py script in `dir`; false (with a SKIP line) without python3 + h5py.
fn h5py(dir: &Path, script: &str) -> bool {
    python_script(dir, "import h5py, numpy", "h5py", script).is_some()
}

#[test]
fn ncdump_names_what_it_leaves_out() {
    let dir = tempdir("h5-leftout");
    let script = r#"
import h5py, numpy as np
with h5py.File('left.h5', 'w') as f:
    f['data'] = np.arange(3, dtype='i4')
    f.create_dataset('objref', (1,), dtype=h5py.ref_dtype)
    f['dangling'] = h5py.SoftLink('/nowhere')
    f['ext'] = h5py.ExternalLink('other.h5', '/x')
"#;
    if !h5py(&dir, script) {
        return;
    }
    let out = run("ncdump-rs", &["left.h5"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(" data = 0, 1, 2 ;"));
    for name in ["\"/objref\"", "\"/dangling\"", "\"/ext\""] {
        assert!(
            stderr.contains(name) && stderr.contains("ncdump: warning: left.h5: "),
            "{name} not named: {stderr}"
        );
    }
}

#[test]
fn nccopy_copies_scaleoffset_and_nbit_data_with_them() {
    let dir = tempdir("h5-so-copy");
    let script = r#"
import h5py, numpy as np
np.random.seed(3)
with h5py.File('so.h5', 'w') as f:
    f.create_dataset('si', data=np.random.randint(-500, 500, size=(20,)).astype('i4'), chunks=(8,), scaleoffset=0)
    f.create_dataset('sf', data=np.round(np.random.uniform(-10, 10, size=(12,)), 2).astype('f4'), chunks=(5,), scaleoffset=2)
    t = h5py.h5t.STD_I16LE.copy(); t.set_precision(12)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE); dcpl.set_chunk((4,)); dcpl.set_filter(5, 0, ())
    h5py.h5d.create(f.id, b'n16', t, h5py.h5s.create_simple((10,)), dcpl).write(
        h5py.h5s.ALL, h5py.h5s.ALL, np.random.randint(-2000, 2000, size=(10,)).astype('i2'))
"#;
    if !h5py(&dir, script) {
        return;
    }
    let out = run("nccopy-rs", &["so.h5", "copy.nc"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let header = run("ncdump-rs", &["-hs", "copy.nc"], &dir);
    let header = String::from_utf8_lossy(&header.stdout);
    for filter in [
        "si:_Filter = \"6,2,0,8,0,4,1,0,1,0,",
        "sf:_Filter = \"6,0,2,5,1,4,0,0,1,0,",
        "n16:_Filter = \"5,8,1,4,1,2,0,16,0\"",
    ] {
        assert!(header.contains(filter), "{filter} not in {header}");
    }
    let data = |file: &str| {
        let out = run("ncdump-rs", &["-n", "x", file], &dir);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text[text.find("data:").unwrap()..].to_string()
    };
    assert_eq!(data("so.h5"), data("copy.nc"));
    if have_reference("ncdump") {
        let reference = Command::new("ncdump")
            .args(["-n", "x", "so.h5"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&reference.stdout).into_owned();
        assert_eq!(data("so.h5"), text[text.find("data:").unwrap()..]);
    } else {
        eprintln!("SKIP: ncdump not installed, comparison with netCDF-C skipped");
    }
}
