//! End-to-end, issue 31: HDF5's nbit (5) and scaleoffset (6) filters on write. ncgen-rs and
//! nccopy-rs store them as libhdf5 does: the parameters its `set_local` computes and the same
//! chunk bytes, compared through h5py (`get_filter`, `read_direct_chunk`) with files h5py
//! (libhdf5 2.0) and netCDF-C's ncgen (4.9.0, libhdf5 1.10) wrote; netCDF-C's ncdump reads
//! what we write. Skipped, with a SKIP line, without python3 + h5py (and, for the netCDF-C
//! comparisons, without ncgen / ncdump).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;

/// Run an h5py script in `dir`; its stdout, or `None` (with a SKIP line) without h5py.
fn h5py(dir: &Path, script: &str) -> Option<String> {
    python_script(dir, "import h5py, numpy", "h5py", script)
        .map(|o| String::from_utf8_lossy(&o).into_owned())
}

/// A Python function printing, per chunked dataset of each file, its filters' ids and
/// parameters and its raw chunks, so that two files' listings can be compared.
const LIST: &str = r#"
import h5py, numpy as np, itertools, sys
def listing(fn, names=None):
    out = {}
    with h5py.File(fn, 'r') as f:
        for n in (names or [k for k in f if isinstance(f[k], h5py.Dataset)]):
            d = f[n]
            if d.chunks is None:
                continue
            pl = d.id.get_create_plist()
            filters = [(pl.get_filter(i)[0], list(pl.get_filter(i)[2])) for i in range(pl.get_nfilters())]
            grid = [range(0, s, c) for s, c in zip(d.shape, d.chunks)]
            chunks = []
            for off in itertools.product(*grid):
                try:
                    mask, raw = d.id.read_direct_chunk(off)
                    chunks.append((off, mask, raw.hex()))
                except Exception:
                    chunks.append((off, None, None))
            out[n] = (filters, chunks, d[...].tolist())
    return out
def compare(a, b, names, what):
    bad = []
    for n in names:
        fa, ca, va = a[n]
        fb, cb, vb = b[n]
        if fa != fb:
            bad.append(f'{n}: filters {fa} != {fb}')
        for x, y in zip(ca, cb):
            if x != y:
                bad.append(f'{n}: chunk {x} != {y}')
        if va != vb:
            bad.append(f'{n}: values differ')
    if bad:
        sys.exit(what + '\n' + '\n'.join(bad))
"#;

/// The h5py file: every integer size, signed and unsigned, floats by decimal scaling, nbit on
/// full and reduced precision, chunks with partial edges, zeros (the default fill value,
/// which scaleoffset codes as all ones).
const H5PY_INPUT: &str = r#"
import h5py, numpy as np
rng = np.random.default_rng(31)
with h5py.File('in.h5', 'w') as f:
    for t, lo, hi in (('i1', -100, 100), ('u1', 0, 250), ('i2', -3000, 2000), ('u2', 100, 60000),
                      ('i4', -70000, 5), ('u4', 0, 2**31), ('i8', -2**40, 2**40), ('u8', 0, 2**50)):
        v = rng.integers(lo, hi, size=(7, 9)).astype(t)
        v[0, :3] = 0
        f.create_dataset('so_' + t, data=v, chunks=(3, 4), scaleoffset=0)
    f.create_dataset('so_const', data=np.full((10,), 42, 'i4'), chunks=(4,), scaleoffset=0)
    f.create_dataset('so_allzero', data=np.zeros((10,), 'i2'), chunks=(4,), scaleoffset=0)
    f.create_dataset('so_bits', data=rng.integers(-900, 900, size=(11,)).astype('i2'), chunks=(4,), scaleoffset=11)
    f.create_dataset('so_full', data=np.array([-32768, 32767, 0, 5], 'i2'), chunks=(3,), scaleoffset=0)
    f.create_dataset('so_be', data=rng.integers(-500, 500, size=(10,)).astype('>i4'), chunks=(4,), scaleoffset=0)
    v = np.round(rng.uniform(-50, 50, size=(6, 7)), 2).astype('f4'); v[1, 1] = 0
    f.create_dataset('so_f4', data=v, chunks=(4, 3), scaleoffset=2)
    v = np.round(rng.uniform(-5, 5, size=(13,)), 4); v[3] = 0
    f.create_dataset('so_f8', data=v, chunks=(5,), scaleoffset=4)
    f.create_dataset('so_f8_big', data=np.array([1e300, -1e300, 1.5, 2.5]), chunks=(4,), scaleoffset=1)
    for t in ('i1', 'u2', 'i4', 'f8'):
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE); dcpl.set_chunk((4,)); dcpl.set_filter(5, 0, ())
        d = h5py.h5d.create(f.id, ('nb_' + t).encode(), h5py.h5t.py_create(np.dtype(t)), h5py.h5s.create_simple((10,)), dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(10).astype(t) * 3 - 7 if t != 'u2' else np.arange(10).astype(t) * 300)
    t = h5py.h5t.STD_I32LE.copy(); t.set_precision(12); t.set_offset(4)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE); dcpl.set_chunk((4,)); dcpl.set_filter(5, 0, ())
    d = h5py.h5d.create(f.id, b'nb_prec', t, h5py.h5s.create_simple((10,)), dcpl)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(-5, 5, dtype='i4') * 100)
"#;

/// The datasets whose copies must match h5py's byte for byte (all but the reduced-precision
/// one, whose copy is a full-precision `int`: netCDF-C's is a `short`, see docs/compat.md).
const SAME: &str = "['so_i1','so_u1','so_i2','so_u2','so_i4','so_u4','so_i8','so_u8','so_const',\
'so_allzero','so_bits','so_full','so_be','so_f4','so_f8','so_f8_big','nb_i1','nb_u2','nb_i4','nb_f8']";

#[test]
fn copies_and_regenerations_store_what_libhdf5_stores() {
    let dir = tempdir("nbit-so-h5py");
    if h5py(&dir, H5PY_INPUT).is_none() {
        return;
    }
    // nccopy-rs keeps the filters (and the chunk shapes)
    run_ok("nccopy-rs", &["in.h5", "copy.nc"], &dir);
    // ncgen-rs of ncdump-rs's CDL encodes every chunk itself: _Filter gives the filter and
    // scaleoffset's scale type and factor, _NoFill the fill value libhdf5 stores (zero)
    let cdl = run_ok("ncdump-rs", &["-s", "-p", "9,17", "in.h5"], &dir);
    std::fs::write(dir.join("in.cdl"), &cdl.stdout).unwrap();
    run_ok("ncgen-rs", &["-k", "nc4", "-o", "gen.nc", "in.cdl"], &dir);
    let script = format!(
        "{LIST}\nsame = {SAME}\na = listing('in.h5')\n\
         compare(a, listing('copy.nc', same), same, 'nccopy-rs')\n\
         compare(a, listing('gen.nc', same), same, 'ncgen-rs')\n\
         for fn in ('copy.nc', 'gen.nc'):\n\
         \x20   flt, chunks, vals = listing(fn, ['nb_prec'])['nb_prec']\n\
         \x20   assert flt == [(5, [8, 1, 4, 1, 4, 0, 32, 0])], (fn, flt)\n\
         \x20   assert vals == list(range(-500, 500, 100)), (fn, vals)\n\
         \x20   assert h5py.File(fn)['nb_prec'].dtype == np.dtype('<i4')\n"
    );
    h5py(&dir, &script).unwrap();
    // netCDF-C reads both as it reads h5py's file
    if !have_reference("ncdump") {
        eprintln!("SKIP: netCDF-C's ncdump not installed");
        return;
    }
    let data = |file: &str| {
        let out = reference_ok("ncdump", &["-n", "x", "-p", "9,17", file], &dir);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text[text.find("data:").unwrap()..].to_string()
    };
    let want = data("in.h5");
    for file in ["copy.nc", "gen.nc"] {
        let got = data(file);
        assert!(
            got == want,
            "{file}:\n{}",
            diff(want.as_bytes(), got.as_bytes()).unwrap_or_default()
        );
    }
}

/// 40 random scaleoffset datasets (integer sizes, signs, ranges from all-equal to 2^40, given
/// bit counts; floats to 0-4 digits at magnitudes 1 to 10^6; a fill value taken from the data
/// or none; big-endian): h5py writes them, and the same values written as CDL (exact
/// literals) go through ncgen-rs; every chunk must be libhdf5's. `SEED` picks the data.
const RANDOM: &str = r#"
import h5py, numpy as np, sys
rng = np.random.default_rng(SEED)
names=[]
cdl_t = {'i1':'byte','u1':'ubyte','i2':'short','u2':'ushort','i4':'int','u4':'uint','i8':'int64','u8':'uint64','f4':'float','f8':'double'}
suffix = {'i1':'b','u1':'ub','i2':'s','u2':'us','i4':'','u4':'u','i8':'ll','u8':'ull','f4':'f','f8':''}
def lit(x, t):
    if t[0] == 'f':
        r = repr(float(x))
        if 'e' not in r and '.' not in r and 'inf' not in r and 'nan' not in r: r += '.'
        return r + suffix[t]
    return str(int(x)) + suffix[t]
dims=[]; vars_=[]; data=[]
with h5py.File('in.h5','w') as f:
    for k in range(40):
        t = str(rng.choice(['i1','u1','i2','u2','i4','u4','i8','u8','f4','f8']))
        n = int(rng.integers(1, 30)); c = int(rng.integers(1, n+1))
        kind = rng.integers(0, 4)
        if t[0] in 'iu':
            info = np.iinfo(t)
            lo = int(rng.integers(info.min, info.max//2 + 1)); span = int(rng.choice([0, 1, 2, 7, 100, 3000, 2**20, 2**40]))
            hi = min(info.max, lo + span)
            v = rng.integers(lo, hi, size=n, endpoint=True).astype(t)
            if kind == 0: v[:] = v[0]
            if kind == 1: v[rng.integers(0, n)] = 0
            user = (2, 0 if rng.random() < 0.8 else int(rng.integers(1, info.bits)))
        else:
            d = int(rng.integers(0, 5))
            scale = float(rng.choice([1, 10, 1000, 1e6]))
            v = np.round(rng.uniform(-scale, scale, size=n), d).astype(t)
            if kind == 0: v[:] = v[0]
            if kind == 1: v[rng.integers(0, n)] = 0
            user = (0, d)
        fill = v[int(rng.integers(0, n))] if rng.random() < 0.4 else None
        big = rng.random() < 0.2 and t[1] != '1'  # numpy has no byte order for 1-byte types
        name = f'd{k}_{t}'
        dt = np.dtype(t).newbyteorder('>') if big else np.dtype(t)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE); dcpl.set_chunk((c,)); dcpl.set_filter(6, 0, user)
        if fill is not None: dcpl.set_fill_value(np.array(fill, dtype=dt))
        ds = h5py.h5d.create(f.id, name.encode(), h5py.h5t.py_create(dt), h5py.h5s.create_simple((n,)), dcpl)
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(v.astype(dt)))
        names.append(name)
        dims.append(f'  n{k} = {n} ;')
        a = [f'  {cdl_t[t]} {name}(n{k}) ;', f'    {name}:_ChunkSizes = {c} ;', f'    {name}:_Filter = "6,{user[0]},{user[1]}" ;']
        a.append(f'    {name}:_FillValue = {lit(fill, t)} ;' if fill is not None else f'    {name}:_NoFill = "true" ;')
        if big: a.append(f'    {name}:_Endianness = "big" ;')
        vars_ += a
        data.append(f'  {name} = ' + ', '.join(lit(x, t) for x in v) + ' ;')
open('in.cdl','w').write('netcdf g {\ndimensions:\n' + '\n'.join(dims) + '\nvariables:\n' + '\n'.join(vars_) + '\ndata:\n' + '\n'.join(data) + '\n}\n')
print(repr(names))"#;

#[test]
fn random_scaleoffset_chunks_are_libhdf5s() {
    let dir = tempdir("nbit-so-random");
    for seed in [31, 2024] {
        let Some(names) = h5py(&dir, &RANDOM.replace("SEED", &seed.to_string())) else {
            return;
        };
        run_ok("ncgen-rs", &["-k", "nc4", "-o", "gen.nc", "in.cdl"], &dir);
        let script = format!(
            "{LIST}\nsame = {}\ncompare(listing('in.h5'), listing('gen.nc', same), same, 'seed {seed}')\n",
            names.trim()
        );
        h5py(&dir, &script).unwrap();
    }
}

/// CDL with nbit and scaleoffset as netCDF-C takes them (`_Filter = "5"`, `"6,<scale type>,
/// <scale factor>"`), fill values in the data and in edge chunks.
const CDL: &str = r#"netcdf f {
dimensions:
  n = 10 ;
  m = 3 ;
variables:
  int a(n) ;
    a:_Filter = "5" ;
    a:_ChunkSizes = 4 ;
  ubyte u(n) ;
    u:_Filter = "5" ;
    u:_ChunkSizes = 4 ;
  float b(n, m) ;
    b:_Filter = "6,0,2" ;
    b:_ChunkSizes = 4, 2 ;
  double d(n) ;
    d:_Filter = "6,0,3" ;
    d:_ChunkSizes = 3 ;
    d:_FillValue = -1. ;
  short s(n) ;
    s:_Filter = "6,2,0" ;
    s:_ChunkSizes = 4 ;
  uint ui(n) ;
    ui:_Filter = "6,2,0" ;
    ui:_ChunkSizes = 6 ;
  int64 i8(n) ;
    i8:_Filter = "6,2,0" ;
    i8:_ChunkSizes = 4 ;
    i8:_Endianness = "big" ;
  byte c(n) ;
    c:_Filter = "6,2,5" ;
    c:_ChunkSizes = 4 ;
  short z(n) ;
    z:_Filter = "6,2,0" ;
    z:_ChunkSizes = 4 ;
    z:_FillValue = 3s ;
data:
  a = -5, -4, -3, -2, -1, 0, 1, 2, 3, 4 ;
  u = 1, 2, 3, 4, 5, 6, 7, 8, 9, 200 ;
  b = 1.5, 2.25, 3, _, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, -21.25,
      22, 23, 24, 25, 26, 27, 28, 29, 30 ;
  d = 1.234, -7.5, _, 0.001, 1e5, 2, 2, 2, 2, _ ;
  s = 1, 2, 3, 4, 5, 6, 7, 8, 9, _ ;
  ui = 4000000000, 1, 2, 3, 4, 5, 6, 7, 8, 9 ;
  i8 = -5000000000, 7, 7, 7, 7, 7, 7, 7, 7, 7 ;
  c = -10, -9, 0, 1, 2, 3, 4, 5, 6, 7 ;
  z = 3, 3, 3, 3, 3, 3, 3, 3, 3, 3 ;
}
"#;

#[test]
fn ncgen_stores_what_netcdf_c_stores() {
    let dir = tempdir("nbit-so-ncgen");
    std::fs::write(dir.join("f.cdl"), CDL).unwrap();
    run_ok("ncgen-rs", &["-k", "nc4", "-o", "ours.nc", "f.cdl"], &dir);
    if missing_references(&["ncgen", "ncdump"]) {
        return;
    }
    reference_ok("ncgen", &["-k", "nc4", "-o", "theirs.nc", "f.cdl"], &dir);
    let script = format!(
        "{LIST}\nnames = ['a', 'u', 'b', 'd', 's', 'ui', 'i8', 'c', 'z']\n\
         compare(listing('theirs.nc'), listing('ours.nc'), names, 'ncgen-rs')\n"
    );
    if h5py(&dir, &script).is_none() {
        return;
    }
    // the same header and data for netCDF-C's ncdump, and _Filter shown alike by ncdump-rs
    let dump = |tool: &str, args: &[&str]| {
        let out = if tool == "ncdump" {
            reference_ok("ncdump", args, &dir)
        } else {
            run_ok(tool, args, &dir)
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.contains("_NCProperties"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let theirs = dump("ncdump", &["-s", "-n", "f", "theirs.nc"]);
    let ours = dump("ncdump", &["-s", "-n", "f", "ours.nc"]);
    assert!(
        theirs == ours,
        "{}",
        diff(theirs.as_bytes(), ours.as_bytes()).unwrap_or_default()
    );
    let filters = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(":_Filter"))
            .map(str::to_string)
            .collect()
    };
    let rs = dump("ncdump-rs", &["-hs", "ours.nc"]);
    assert_eq!(filters(&rs), filters(&ours));
    assert_eq!(filters(&rs).len(), 9, "{rs}");
}

#[test]
fn what_cannot_take_them_is_refused_by_name() {
    // netCDF-C refuses it too ("NetCDF: HDF error": libhdf5's can_apply says no)
    let dir = tempdir("nbit-so-refused");
    let cdl = "netcdf r {\ndimensions:\n  n = 4 ;\nvariables:\n  char t(n) ;\n    \
               t:_Filter = \"6,2,0\" ;\ndata:\n  t = \"abcd\" ;\n}\n";
    std::fs::write(dir.join("r.cdl"), cdl).unwrap();
    let out = run("ncgen-rs", &["-k", "nc4", "-o", "r.nc", "r.cdl"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("variable /t") && stderr.contains("scaleoffset applies to integer"),
        "{stderr}"
    );
}
