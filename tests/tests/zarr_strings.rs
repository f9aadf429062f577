//! Issue 14: string and object arrays zarr-python writes in Zarr v2 stores. numcodecs'
//! `categorize` (strings stored as label indexes) is decoded; a NumPy `<U1` array (UCS-4,
//! which we read as char, one byte per element, as netCDF-C 4.9.0 writes `<U1`) whose
//! characters a byte cannot hold is an error naming the variable, never a cut byte; a store
//! that is one array, not a group, is an error, never an empty dataset; `vlen-bytes` object
//! arrays read as strings, other object arrays are left out with a warning. Inputs are
//! written by zarr-python 3 at test time (skipped with a SKIP line without it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

/// Run a zarr-python script in `dir`; false (with a SKIP line) without zarr-python 3.
fn zarr_python(dir: &Path, script: &str) -> bool {
    python_script(
        dir,
        "import zarr, numcodecs; assert int(zarr.__version__.split('.')[0]) >= 3",
        "zarr-python 3 and numcodecs",
        script,
    )
    .is_some()
}

fn url(dir: &Path, store: &str) -> String {
    format!("file://{}#mode=zarr,file", dir.join(store).display())
}

#[test]
fn categorize_is_decoded() {
    let d = tempdir("zarr-categorize");
    if !zarr_python(
        &d,
        r#"
import zarr, numpy as np
from numcodecs import Categorize, Zlib
g = zarr.open_group('cat.zarr', mode='w', zarr_format=2)
z = g.create_array('cat', shape=(5,), dtype='<U2', compressors=None,
                   filters=[Categorize(labels=['a', 'bé', '€'], dtype='<U2')])
z[:] = np.array(['a', 'bé', 'a', '€', 'zz'])
z.attrs['_ARRAY_DIMENSIONS'] = ['n']
z = g.create_array('cat1', shape=(4,), dtype='<U1', compressors=Zlib(1),
                   filters=[Categorize(labels=['a', 'b', 'c'], dtype='<U1', astype='<u2')])
z[:] = np.array(['a', 'b', 'a', 'c'])
z.attrs['_ARRAY_DIMENSIONS'] = ['m']
"#,
    ) {
        return;
    }
    let o = run("ncdump-rs", &[&url(&d, "cat.zarr")], &d);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    // 'zz' is no label: stored as 0, read back as the empty string, the fill value
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "netcdf cat {\ndimensions:\n\tn = 5 ;\n\tm = 4 ;\nvariables:\n\tstring cat(n) ;\n\
         \tchar cat1(m) ;\ndata:\n\n cat = \"a\", \"bé\", \"a\", \"€\", _ ;\n\n cat1 = \"abac\" ;\n}\n"
    );
    // a copy to Zarr stores the strings without categorize (read only), and says so;
    // zarr-python reads the same strings (UTF-8 bytes, `|Sn`) and chars (`|S1`; in NCZarr
    // char is `>S1` as netCDF-C writes it, which zarr-python 3 does not read)
    let out = format!("file://{}#mode=zarr,file", d.join("copy.zarr").display());
    let o = run("nccopy-rs", &[&url(&d, "cat.zarr"), &out], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "nccopy: warning: /cat: Zarr codec categorize is decoded on reading only; the output \
         stores the strings without it\nnccopy: warning: /cat1: Zarr codec categorize is decoded \
         on reading only; the output stores the strings without it\n"
    );
    let o = Command::new("python3")
        .args([
            "-c",
            "import zarr; g = zarr.open_group('copy.zarr', mode='r', zarr_format=2); \
             print([x.decode() for x in g['cat'][:]], g['cat'].filters, \
             b''.join(g['cat1'][:]).decode(), g['cat1'].filters)",
        ])
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "['a', 'bé', 'a', '€', ''] () abac ()\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn wide_characters_in_u1_are_errors_and_a_single_array_store_reads() {
    let d = tempdir("zarr-u1");
    if !zarr_python(
        &d,
        r#"
import zarr, numpy as np
g = zarr.open_group('u1.zarr', mode='w', zarr_format=2)
z = g.create_array('ok', shape=(3,), dtype='<U1', compressors=None)
z[:] = np.array(['a', 'é', 'c'])
z = g.create_array('wide', shape=(2,), dtype='<U1', compressors=None)
z[:] = np.array(['a', '€'])
z = zarr.create_array('one.zarr', shape=(2,), dtype='<i4', zarr_format=2)
z[:] = [1, 2]
"#,
    ) {
        return;
    }
    let o = run("ncdump-rs", &["-v", "ok", &url(&d, "u1.zarr")], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // U+00E9 is the byte 0xE9 in a char, which ncdump prints as an octal escape
    assert!(
        o.stdout.ends_with(b"data:\n\n ok = \"a\\351c\" ;\n}\n"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run("ncdump-rs", &["-v", "wide", &url(&d, "u1.zarr")], &d);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "ncdump: writing CDL: reading data of variable \"wide\": variable \"/wide\": chunk \
         \"wide/0\": holds the character U+20AC, which a char (one byte, dtype \"<U1\") cannot \
         hold; read it with zarr-python\n"
    );
    // a store that is one array is its root variable, named as the dataset (issue 31)
    let o = run("ncdump-rs", &[&url(&d, "one.zarr")], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "netcdf one {\ndimensions:\n\t_zdim_2 = 2 ;\nvariables:\n\tint one(_zdim_2) ;\ndata:\n\n one = 1, 2 ;\n}\n"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Object arrays: `vlen-bytes` (zarr-python 3's variable-length bytes) reads as strings, as
/// `vlen-utf8` does; an object encoding netCDF has no type for (`json2`) leaves that array out
/// with a warning naming it, and the rest of the store still reads (it made the whole store
/// unreadable).
#[test]
fn object_arrays_read_or_are_left_out_by_name() {
    let d = tempdir("zarr-object");
    if !zarr_python(
        &d,
        r#"
import zarr, numpy as np, json
from zarr.core.dtype import VariableLengthBytes
g = zarr.open_group('o.zarr', mode='w', zarr_format=2)
z = g.create_array('vb', shape=(3,), dtype=VariableLengthBytes(), compressors=None)
z[:] = np.array([b'ab', b'', 'aé'.encode()], dtype=object)
z = g.create_array('s', shape=(2,), dtype=str, compressors=None)
z[:] = np.array(['x', 'yy'], dtype=object)
# json2 object arrays are zarr-python 2's; the metadata is what it wrote
z = g.create_array('j', shape=(2,), dtype='i4', compressors=None)
m = json.load(open('o.zarr/j/.zarray'))
m['dtype'] = '|O'
m['filters'] = [{'id': 'json2', 'encoding': 'utf-8', 'allow_nan': True, 'check_circular': True,
                 'ensure_ascii': True, 'separators': [',', ':'], 'skipkeys': False,
                 'sort_keys': True, 'indent': None}]
json.dump(m, open('o.zarr/j/.zarray', 'w'))
"#,
    ) {
        return;
    }
    let u = url(&d, "o.zarr");
    let o = run("ncdump-rs", &[&u], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "netcdf o {\ndimensions:\n\t_zdim_2 = 2 ;\n\t_zdim_3 = 3 ;\nvariables:\n\tstring s(_zdim_2) ;\n\
         \tstring vb(_zdim_3) ;\ndata:\n\n s = \"x\", \"yy\" ;\n\n vb = \"ab\", _, \"aé\" ;\n}\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "ncdump: warning: {u}: array \"/j\" left out: an object array (dtype \"|O\") encoded \
             with \"json2\" holds values netCDF has no type for (strings are read with \
             \"vlen-utf8\" or \"vlen-bytes\")\n"
        )
    );
    std::fs::remove_dir_all(&d).unwrap();
}
