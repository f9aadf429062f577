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

/// nccopy-rs copies `input` to netCDF-4 `copy` in `dir`; ncdump-rs and, when installed,
/// netCDF-C's ncdump show the copy as `want`. The copy's output is returned.
fn copy_dumps_as(dir: &Path, input: &str, copy: &str, want: &str) -> std::process::Output {
    let out = run_ok("nccopy-rs", &[input, copy], dir);
    let ours = run_ok("ncdump-rs", &[copy], dir);
    assert_eq!(String::from_utf8(ours.stdout).unwrap(), want);
    if !missing_references(&["ncdump"]) {
        let theirs = reference_ok("ncdump", &[copy], dir);
        assert_eq!(String::from_utf8(theirs.stdout).unwrap(), want);
    }
    out
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
    let reference =
        |file: &str| String::from_utf8(reference_ok("ncdump", &[file], &dir).stdout).unwrap();
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

/// Compound types with members netCDF cannot type (h5py's bool and complex members, an
/// uncommitted nested compound): the type keeps the members it can hold, each member left out
/// is named in a warning, and attributes and data hold the members the type declares, so
/// nccopy-rs writes them (it failed on the values not fitting the type). netCDF-C 4.9.0
/// cannot open the input ("NetCDF: HDF error"); it, netCDF4-python and h5py judge the copy.
#[test]
fn compound_members_netcdf_cannot_type_are_left_out_and_the_rest_copied() {
    let dir = tempdir("h5-compound-members");
    let script = r#"
import h5py, numpy as np
with h5py.File('members.h5', 'w') as f:
    f['WB'] = np.dtype([('flag', '?'), ('n', 'i2')])
    f['NZ'] = np.dtype([('p', [('x', 'i4'), ('y', 'i4')]), ('q', 'f4')])
    f['CZ'] = np.dtype([('z', 'c16'), ('k', 'u1')])
    x = f.create_dataset('x', data=np.arange(3, dtype='i4'))
    x.attrs.create('wb', np.array((True, 7), dtype=f['WB'].dtype), dtype=f['WB'])
    x.attrs.create('nz', np.array([((1, 2), 3.5), ((3, 4), -1)], dtype=f['NZ'].dtype), dtype=f['NZ'])
    x.attrs.create('cz', np.array((1 + 1j, 2), dtype=f['CZ'].dtype), dtype=f['CZ'])
    f.create_dataset('wbd', data=np.array([(True, 7), (False, 8)], dtype=f['WB'].dtype), dtype=f['WB'], chunks=(1,), compression='gzip')
    f.create_dataset('anon', data=np.array([(True, 1.5, 1 + 2j), (False, 2.5, 0j)], dtype=[('ok', '?'), ('v', 'f8'), ('c', 'c8')]))
"#;
    if !h5py(&dir, script) {
        return;
    }
    let want = "netcdf members {
types:
  compound CZ {
    ubyte k ;
  }; // CZ
  compound NZ {
    float q ;
  }; // NZ
  compound WB {
    short n ;
  }; // WB
  compound _AnonymousCompound1 {
    double v ;
  }; // _AnonymousCompound1
dimensions:
\tphony_dim_0 = 2 ;
\tphony_dim_1 = 3 ;
variables:
\t_AnonymousCompound1 anon(phony_dim_0) ;
\tWB wbd(phony_dim_0) ;
\tint x(phony_dim_1) ;
\t\tWB x:wb = {7} ;
\t\tNZ x:nz = {3.5}, {-1} ;
\t\tCZ x:cz = {2} ;
data:

 anon = {1.5}, {2.5} ;

 wbd = {7}, {8} ;

 x = 0, 1, 2 ;
}
";
    let out = run_ok("ncdump-rs", &["members.h5"], &dir);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    let stderr = String::from_utf8(out.stderr).unwrap();
    for (ty, member, class) in [
        ("_AnonymousCompound1", "ok", "enum"),
        ("_AnonymousCompound1", "c", "compound"),
        ("CZ", "z", "compound"),
        ("NZ", "p", "compound"),
        ("WB", "flag", "enum"),
    ] {
        let line = format!(
            "ncdump: warning: members.h5: type \"{ty}\": member \"{member}\" left out: netCDF \
             has no type for its HDF5 datatype (an uncommitted {class}"
        );
        assert!(stderr.contains(&line), "{line}\nnot in\n{stderr}");
    }
    let copy = copy_dumps_as(&dir, "members.h5", "members.nc", want);
    assert!(
        String::from_utf8_lossy(&copy.stderr).contains("type \"WB\": member \"flag\" left out"),
        "{}",
        String::from_utf8_lossy(&copy.stderr)
    );
    let check = r#"
import h5py, netCDF4
with h5py.File('members.nc') as f:
    assert f['x'].attrs['wb']['n'].tolist() == [7], f['x'].attrs['wb']
    assert f['x'].attrs['nz']['q'].tolist() == [3.5, -1.0]
    assert f['wbd']['n'].tolist() == [7, 8]
    assert f['anon']['v'].tolist() == [1.5, 2.5]
d = netCDF4.Dataset('members.nc')
assert int(d['x'].getncattr('cz')['k']) == 2
assert d['wbd'][:]['n'].tolist() == [7, 8]
print('ok')
"#;
    if let Some(out) = python_script(&dir, "import h5py, netCDF4", "h5py and netCDF4", check) {
        assert_eq!(String::from_utf8_lossy(&out).trim(), "ok");
    }
}

/// Chunked, compressed datasets of compounds with enum, char-array, nested-compound and
/// bitfield members, and a chunked vlen of fixed-length strings (h5py `vlen_dtype('S3')`):
/// read (the bitfield member left out with a warning, the vlen as a vlen of strings) and
/// copied into netCDF-4 ("chunked data of this type is not written yet" / "the values do not
/// match their type" before). 4.9.0 cannot open the input ("NetCDF: HDF error"); it and h5py
/// judge the copy.
#[test]
fn chunked_compounds_and_vlens_of_fixed_strings_copy() {
    let dir = tempdir("h5-chunked-compounds");
    let script = r#"
import h5py, numpy as np
with h5py.File('cc.h5', 'w') as f:
    f['Color'] = h5py.enum_dtype({'R': 0, 'G': 1}, basetype='u1')
    f['Inner'] = np.dtype([('x', 'i2'), ('y', 'i2')])
    dt = np.dtype([('c', f['Color'].dtype), ('tag', 'S4'), ('in', f['Inner'].dtype), ('v', 'f4')])
    f['Rec'] = dt
    f.create_dataset('rec', data=np.array([(0, b'ab', (1, 2), 1.5), (1, b'cdef', (3, 4), 2.5), (1, b'', (5, 6), 3.5)], dtype=dt), dtype=f['Rec'], chunks=(2,), compression='gzip')
    ct = h5py.h5t.create(h5py.h5t.COMPOUND, 3)
    ct.insert(b'bits', 0, h5py.h5t.STD_B8LE)
    ct.insert(b'n', 1, h5py.h5t.STD_I16LE)
    ct.commit(f.id, b'BitRec')
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((2,))
    d = h5py.h5d.create(f.id, b'bitrec', ct, h5py.h5s.create_simple((3,)), dcpl=dcpl)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([(1, 10), (2, 20), (3, 30)], dtype=[('bits', 'u1'), ('n', '<i2')]), mtype=ct)
    x = f.create_dataset('vls', (2,), dtype=h5py.vlen_dtype(np.dtype('S3')), chunks=(1,))
    x[0] = np.array([b'ab', b'cde'], dtype='S3')
    x[1] = np.array([b'z'], dtype='S3')
"#;
    if !h5py(&dir, script) {
        return;
    }
    let want = "netcdf cc {
types:
  compound BitRec {
    short n ;
  }; // BitRec
  ubyte enum Color {G = 1, R = 0} ;
  compound Inner {
    short x ;
    short y ;
  }; // Inner
  compound Rec {
    Color c ;
    char tag(4) ;
    Inner in ;
    float v ;
  }; // Rec
  string(*) _AnonymousVlen1 ;
dimensions:
\tphony_dim_0 = 3 ;
\tphony_dim_1 = 2 ;
variables:
\tBitRec bitrec(phony_dim_0) ;
\tRec rec(phony_dim_0) ;
\t_AnonymousVlen1 vls(phony_dim_1) ;
data:

 bitrec = {10}, {20}, {30} ;

 rec = {R, {\"ab\"}, {1, 2}, 1.5}, {G, {\"cdef\"}, {3, 4}, 2.5}, 
    {G, {\"\"}, {5, 6}, 3.5} ;

 vls = {\"ab\", \"cde\"}, {\"z\"} ;
}
";
    let out = run_ok("ncdump-rs", &["cc.h5"], &dir);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("type \"BitRec\": member \"bits\" left out"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    copy_dumps_as(&dir, "cc.h5", "cc.nc", want);
    let check = r#"
import h5py
with h5py.File('cc.nc') as f:
    assert [list(map(bytes, r)) for r in f['vls'][:]] == [[b'ab', b'cde'], [b'z']], f['vls'][:]
    assert f['rec']['v'].tolist() == [1.5, 2.5, 3.5]
    assert f['bitrec']['n'].tolist() == [10, 20, 30]
print('ok')
"#;
    if let Some(out) = python_script(&dir, "import h5py", "h5py", check) {
        assert_eq!(String::from_utf8_lossy(&out).trim(), "ok");
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
