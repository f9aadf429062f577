//! End-to-end, issue 14: what the tools do with h5py files netCDF cannot show whole. ncdump-rs
//! names every left-out object on stderr and still exits 0; nccopy-rs copies data stored
//! with HDF5's read-only filters (scaleoffset, nbit) without them, with a warning.
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

/// Integers of widths netCDF has no type for (PyTables' 128-bit ones; 3-, 5- and 9-byte ones
/// the HDF5 API makes) are shown as netCDF-C shows them: widened to the native integer of at
/// least that width (the 64-bit one for wider ones), values clamped as HDF5 converts them.
/// ncdump 4.9.0 is the judge of the text of the file and of our netCDF-4 copy; the Zarr copy
/// and the kerchunk references hold the same values.
#[test]
fn wide_and_odd_width_integers_show_and_copy_as_in_netcdf_c() {
    let dir = tempdir("h5-wide-ints");
    let script = r#"
import h5py, numpy as np
def put(obj, name, base, size, order, signed, vals, dataset, chunked=False):
    t = base.copy(); t.set_size(size); t.set_precision(size * 8)
    raw = np.frombuffer(b''.join(int(v).to_bytes(size, order, signed=signed) for v in vals), dtype='V%d' % size)
    if not dataset:
        a = h5py.h5a.create(obj.id, name.encode(), t, h5py.h5s.create_simple((len(vals),)))
        a.write(raw, mtype=t)
        return
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    space = h5py.h5s.create_simple((len(vals),))
    if chunked:
        dcpl.set_chunk((4,)); dcpl.set_deflate(4)
        space = h5py.h5s.create_simple((len(vals) + 3,), (h5py.h5s.UNLIMITED,))
    d = h5py.h5d.create(obj.id, name.encode(), t, space, dcpl=dcpl)
    fs = d.get_space(); fs.select_hyperslab((0,), (len(vals),))
    d.write(h5py.h5s.create_simple((len(vals),)), fs, raw, mtype=t)
I64, U64, I32 = h5py.h5t.STD_I64LE, h5py.h5t.STD_U64LE, h5py.h5t.STD_I32LE
with h5py.File('wide.h5', 'w') as f:
    x = f.create_dataset('x', data=np.arange(3, dtype='i4'))
    put(x, 'i128', I64, 16, 'little', True, [1, -2, 2**100, -2**100], False)
    put(f, 'u128', U64, 16, 'little', False, [3, 2**70, 0], False)
    put(f, 'i24', I32, 3, 'little', True, [1, -2, 2**22, -5], False)
    put(f, 'u40', h5py.h5t.STD_U64BE, 5, 'big', False, [1, 2**39], False)
    put(f, 'd128', I64, 16, 'little', True, [1, -2, 2**100, -7, 5, 6], True, chunked=True)
    put(f, 'b128', h5py.h5t.STD_I64BE, 16, 'big', True, [-1, 2**64, 4], True)
    put(f, 'd24', h5py.h5t.STD_I32BE, 3, 'big', True, [1, -2, 2**22, -8388608], True, chunked=True)
    put(f, 'u72', U64, 9, 'little', False, [1, 2**65, 7], True)
"#;
    if !h5py(&dir, script) {
        return;
    }
    let ours = run_ok("ncdump-rs", &["wide.h5"], &dir);
    let text = String::from_utf8(ours.stdout).unwrap();
    assert!(
        ours.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    for want in [
        "\tint64 d128(phony_dim_1) ;",
        "\tint d24(phony_dim_2) ;",
        "\tuint64 u72(phony_dim_0) ;",
        "\t\tx:i128 = 1LL, -2LL, 9223372036854775807LL, -9223372036854775808LL ;",
        "\t\t:u128 = 3ULL, 18446744073709551615ULL, 0ULL ;",
        "\t\t:i24 = 1, -2, 4194304, -5 ;",
        "\t\t:u40 = 1ULL, 549755813888ULL ;",
        " d128 = 1, -2, 9223372036854775807, -7, 5, 6, 0, 0, 0 ;",
        " b128 = -1, 9223372036854775807, 4 ;",
        " d24 = 1, -2, 4194304, -8388608, 0, 0, 0 ;",
        " u72 = 1, 18446744073709551615, 7 ;",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    if missing_references(&["ncdump"]) {
        return;
    }
    let reference = |file: &str| {
        let out = Command::new("ncdump")
            .arg(file)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(text, reference("wide.h5"));
    // the copies hold the widened values: netCDF-4 judged by 4.9.0, NCZarr by ncdump-rs
    run_ok("nccopy-rs", &["wide.h5", "wide.nc"], &dir);
    assert_eq!(reference("wide.nc"), text);
    let store = format!(
        "file://{}#mode=nczarr,file",
        dir.join("wide.zarr").display()
    );
    run_ok("nccopy-rs", &["wide.h5", &store], &dir);
    let zarr = run_ok("ncdump-rs", &[&store], &dir);
    assert_eq!(String::from_utf8(zarr.stdout).unwrap(), text);
}

#[test]
fn nccopy_copies_scaleoffset_and_nbit_data_without_them() {
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
    assert!(
        stderr.contains("scaleoffset") && stderr.contains("nbit"),
        "{stderr}"
    );
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
