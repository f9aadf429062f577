//! Interop with zarr-python 3 (Zarr v2 stores, `zarr_format=2`) / numcodecs (skipped when not installed): they read what we
//! write, with each codec, and we read what they write.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::{AtomicType, Dataset, FilterSpec, Values, ROOT};

fn dataset(filters: Vec<FilterSpec>) -> Dataset {
    let mut ds = Dataset::new("interop");
    let x = ds.add_dim(ROOT, "x", 6, false);
    let y = ds.add_dim(ROOT, "y", 10, false);
    let i = ds.add_var(ROOT, "i", AtomicType::Int.into(), vec![x, y]);
    ds.var_mut(i).data = Some(Values::Int((0..60).map(|k| k * 7 - 100).collect()));
    ds.var_mut(i).storage.chunk_sizes = Some(vec![4, 4]);
    ds.var_mut(i).storage.filters = filters.clone();
    let f = ds.add_var(ROOT, "f", AtomicType::Double.into(), vec![x]);
    ds.var_mut(f).data = Some(Values::Double(vec![0.5, -1.25, 3.0, 1e300, -0.0, 2.0]));
    ds.var_mut(f).storage.filters = filters;
    let s = ds.add_var(ROOT, "s", AtomicType::Short.into(), vec![y]);
    ds.var_mut(s).data = Some(Values::Short((0..10).collect()));
    ds.var_mut(s).storage.endianness = Some(nc_dataset::Endianness::Big);
    ds.var_mut(s).storage.chunk_sizes = Some(vec![3]);
    ds
}

const READ_ALL: &str = "import zarr, json, sys
g = zarr.open_group(sys.argv[1] if len(sys.argv) > 1 else STORE, mode='r', zarr_format=2)
print(json.dumps({k: g[k][...].tolist() for k in sorted(g.array_keys())}))";

#[test]
fn zarr_python_reads_our_pure_zarr_stores() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("zarrpy");
    let chains: Vec<(&str, Vec<FilterSpec>)> = vec![
        ("none", vec![]),
        ("zlib", vec![filter(1, &[5])]),
        ("shuffle_zlib", vec![filter(2, &[]), filter(1, &[1])]),
        ("bz2", vec![filter(307, &[9])]),
        ("zstd", vec![filter(32015, &[3])]),
        ("blosc", vec![filter(32001, &[0, 0, 0, 0, 5, 1, 1])]),
        ("fletcher32_zlib", vec![filter(3, &[]), filter(1, &[2])]),
    ];
    for (name, chain) in chains {
        let ds = dataset(chain);
        for mode in ["zarr", "nczarr"] {
            let store = d.join(format!("{name}-{mode}.zarr"));
            write(
                &ds,
                &format!("file://{}#mode={mode},file", store.display()),
                &Default::default(),
            );
            let script = READ_ALL.replace("STORE", &format!("{:?}", store.display().to_string()));
            let got: serde_json::Value = serde_json::from_str(&python(&script, &d)).unwrap();
            let want = serde_json::json!({
                "f": [0.5, -1.25, 3.0, 1e300, -0.0, 2.0],
                "i": (0..60).map(|k| k * 7 - 100).collect::<Vec<i32>>().chunks(10).map(|r| r.to_vec()).collect::<Vec<_>>(),
                "s": (0..10).collect::<Vec<i32>>(),
            });
            assert_eq!(got, want, "{name} {mode}");
        }
    }
    // the .zarray carries JSON numbers and the real shuffle element size
    let za: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("shuffle_zlib-zarr.zarr/i/.zarray")).unwrap())
            .unwrap();
    assert_eq!(
        za["compressor"],
        serde_json::json!({"id": "zlib", "level": 1})
    );
    assert_eq!(
        za["filters"],
        serde_json::json!([{"id": "shuffle", "elementsize": 4}])
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn we_read_zarr_python_stores() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("fromzarrpy");
    let script = r#"
import zarr, numpy as np, numcodecs as nc
root = zarr.open_group('py.zarr', mode='w', zarr_format=2)
a = np.arange(60, dtype='<i4').reshape(6, 10) - 7
for name, comp, filt in [
    ('zlib', nc.Zlib(level=3), None),
    ('bz2', nc.BZ2(level=5), None),
    ('zstd', nc.Zstd(level=2), None),
    ('blosc_lz4', nc.Blosc(cname='lz4', clevel=5, shuffle=nc.Blosc.SHUFFLE), None),
    ('blosc_zstd_bit', nc.Blosc(cname='zstd', clevel=3, shuffle=nc.Blosc.BITSHUFFLE), None),
    ('shuffle_zlib', nc.Zlib(level=1), [nc.Shuffle(elementsize=4)]),
    ('fletcher', None, [nc.Fletcher32()]),
    ('raw', None, None),
]:
    z = root.create_array(name, shape=a.shape, chunks=(4, 4), dtype='<i4', compressors=comp, filters=filt)
    z[...] = a
    z.attrs['_ARRAY_DIMENSIONS'] = ['x', 'y']
z = root.create_array('big', shape=(6, 10), chunks=(4, 4), dtype='>i8', compressors=None)
z[...] = a
z.attrs['_ARRAY_DIMENSIONS'] = ['x', 'y']
z = root.create_array('slash', shape=(6, 10), chunks=(4, 4), dtype='<i4',
                      chunk_key_encoding={'name': 'v2', 'separator': '/'})
z[...] = a
z.attrs['_ARRAY_DIMENSIONS'] = ['x', 'y']
z = root.create_array('fortran', shape=(6, 10), chunks=(4, 4), dtype='<f8', order='F', compressors=None)
z[...] = a
z.attrs['_ARRAY_DIMENSIONS'] = ['x', 'y']
z = root.create_array('partial', shape=(6, 10), chunks=(4, 4), dtype='<i2', fill_value=-5)
z[0:2, 0:3] = 9
z.attrs['_ARRAY_DIMENSIONS'] = ['x', 'y']
z.attrs['title'] = 'partial'
z.attrs['scale'] = 0.5
s = root.create_array('text', shape=(3,), dtype='|S5', compressors=None)
s[...] = np.array([b'ab', b'hello', b''])
c = root.create_array('chars', shape=(4,), dtype='|S1', compressors=None)
c[...] = np.array([b'w', b'x', b'y', b'z'])
u = root.create_array('uni', shape=(2,), dtype='<U3', compressors=None)
u[...] = np.array(['abc', 'd'])
sub = root.create_group('sub')
w = sub.create_array('w', shape=(5,), chunks=(2,), dtype='<f4')
w[...] = np.arange(5, dtype='<f4') / 4
"#;
    python(script, &d);
    let f = open(&format!(
        "file://{}#mode=zarr,file",
        d.join("py.zarr").display()
    ));
    let ds = f.dataset();
    let v = |n: &str| ds.find_var(ROOT, n).unwrap_or_else(|| panic!("{n}"));
    let a: Vec<i32> = (0..60).map(|k| k - 7).collect();
    for name in [
        "zlib",
        "bz2",
        "zstd",
        "blosc_lz4",
        "blosc_zstd_bit",
        "shuffle_zlib",
        "fletcher",
        "raw",
        "slash",
    ] {
        assert_eq!(
            f.read_var(v(name), &[0, 0], &[6, 10]).unwrap(),
            Values::Int(a.clone()),
            "{name}"
        );
        assert_eq!(
            f.read_var(v(name), &[2, 3], &[3, 5]).unwrap(),
            Values::Int(
                (2..5)
                    .flat_map(|r| (3..8).map(move |c| r * 10 + c - 7))
                    .collect()
            ),
            "{name} slab"
        );
    }
    assert_eq!(
        f.read_var(v("big"), &[0, 0], &[6, 10]).unwrap(),
        Values::Int64(a.iter().map(|&x| i64::from(x)).collect())
    );
    assert_eq!(
        ds.var(v("big")).storage.endianness,
        Some(nc_dataset::Endianness::Big)
    );
    assert_eq!(
        f.read_var(v("fortran"), &[0, 0], &[6, 10]).unwrap(),
        Values::Double(a.iter().map(|&x| f64::from(x)).collect())
    );
    let mut part = vec![-5i16; 60];
    for r in 0..2 {
        for c in 0..3 {
            part[r * 10 + c] = 9;
        }
    }
    assert_eq!(
        f.read_var(v("partial"), &[0, 0], &[6, 10]).unwrap(),
        Values::Short(part)
    );
    let p = ds.var(v("partial"));
    assert_eq!(
        p.att("title").unwrap().values,
        Values::Char(b"partial".to_vec())
    );
    assert_eq!(p.att("scale").unwrap().values, Values::Double(vec![0.5]));
    assert_eq!(
        f.read_var(v("text"), &[0], &[3]).unwrap(),
        Values::String(vec![
            Some("ab".into()),
            Some("hello".into()),
            Some("".into())
        ])
    );
    assert_eq!(
        f.read_var(v("chars"), &[0], &[4]).unwrap(),
        Values::Char(b"wxyz".to_vec())
    );
    assert_eq!(
        f.read_var(v("uni"), &[0], &[2]).unwrap(),
        Values::String(vec![Some("abc".into()), Some("d".into())])
    );
    let sub = ds.find_group(ROOT, "sub").unwrap();
    let w = ds.find_var(sub, "w").unwrap();
    assert_eq!(
        f.read_var(w, &[0], &[5]).unwrap(),
        Values::Float(vec![0.0, 0.25, 0.5, 0.75, 1.0])
    );
    // without _ARRAY_DIMENSIONS in the subgroup: netCDF-C's _zdim_N names in the root
    assert_eq!(ds.dim(ds.var(w).dims[0]).name, "_zdim_5");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Rough throughput check (run with `--ignored --nocapture`): 32 MB of doubles, zlib 1,
/// written and read back.
#[test]
#[ignore]
fn throughput() {
    let d = tmpdir("tput");
    let mut ds = Dataset::new("t");
    let x = ds.add_dim(ROOT, "x", 2000, false);
    let y = ds.add_dim(ROOT, "y", 2000, false);
    let v = ds.add_var(ROOT, "v", AtomicType::Double.into(), vec![x, y]);
    ds.var_mut(v).data = Some(Values::Double(
        (0..4_000_000).map(|i| (i % 1000) as f64 * 0.5).collect(),
    ));
    ds.var_mut(v).storage.chunk_sizes = Some(vec![250, 250]);
    ds.var_mut(v).storage.filters = vec![filter(2, &[]), filter(1, &[1])];
    let loc = format!("file://{}/t.file#mode=nczarr,file", d.display());
    let t = std::time::Instant::now();
    write(&ds, &loc, &Default::default());
    let w = t.elapsed();
    let t = std::time::Instant::now();
    let f = open(&loc);
    let back = f.read_var(v, &[0, 0], &[2000, 2000]).unwrap();
    let r = t.elapsed();
    assert_eq!(Some(&back), ds.vars[0].data.as_ref());
    eprintln!("write {w:?}, read {r:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// netCDF4-python (its bundled netCDF-C 4.10 and codec plugins) reads our filtered NCZarr
/// stores written in the 4.10 layout; we read the stores it writes.
#[test]
fn netcdf4_python_both_ways() {
    if !have_netcdf4_410() {
        return;
    }
    let d = tmpdir("nc4py");
    let mut ds = dataset(vec![filter(2, &[]), filter(1, &[5])]);
    let y = ds.find_dim(ROOT, "y").unwrap();
    let x = ds.find_dim(ROOT, "x").unwrap();
    for (name, chain) in [
        ("bz", vec![filter(307, &[9])]),
        ("zs", vec![filter(32015, &[3])]),
        ("bl", vec![filter(32001, &[0, 0, 0, 0, 5, 1, 1])]),
    ] {
        let v = ds.add_var(ROOT, name, AtomicType::Int.into(), vec![x, y]);
        ds.var_mut(v).data = Some(Values::Int((0..60).collect()));
        ds.var_mut(v).storage.chunk_sizes = Some(vec![3, 5]);
        ds.var_mut(v).storage.filters = chain;
    }
    let c = ds.add_var(ROOT, "c", AtomicType::Char.into(), vec![y]);
    ds.var_mut(c).data = Some(Values::Char(b"hello".to_vec()));
    let sc = ds.add_var(ROOT, "sc", AtomicType::Double.into(), vec![]);
    ds.var_mut(sc).data = Some(Values::Double(vec![2.5]));
    ds.groups[0]
        .atts
        .push(nc_dataset::Attribute::text("title", "t"));
    let store = d.join("ours.file");
    let opts = nc_zarr::ZarrWriteOptions {
        layout: nc_zarr::NczarrLayout::NetcdfC410,
        ..Default::default()
    };
    write(
        &ds,
        &format!("file://{}#mode=nczarr,file", store.display()),
        &opts,
    );
    let script = format!(
        "import netCDF4, json
d = netCDF4.Dataset('file://{}#mode=nczarr,file')
out = {{k: (v[...].tobytes().decode() if k == 'c' else v[...].tolist()) for k, v in d.variables.items()}}
out['title'] = d.title
out['filters'] = {{k: sorted(x for x, on in v.filters().items() if on and x != 'complevel') for k, v in d.variables.items()}}
print(json.dumps(out))",
        store.display()
    );
    let got: serde_json::Value = serde_json::from_str(&python(&script, &d)).unwrap();
    let rows = |k: i32, off: i32| -> Vec<Vec<i32>> {
        (0..6)
            .map(|r| (0..10).map(|c| (r * 10 + c) * k + off).collect())
            .collect()
    };
    assert_eq!(got["i"], serde_json::json!(rows(7, -100)));
    for n in ["bz", "zs", "bl"] {
        assert_eq!(got[n], serde_json::json!(rows(1, 0)), "{n}");
    }
    assert_eq!(
        got["f"],
        serde_json::json!([0.5, -1.25, 3.0, 1e300, -0.0, 2.0])
    );
    assert_eq!(got["s"], serde_json::json!((0..10).collect::<Vec<i32>>()));
    assert_eq!(
        got["c"],
        serde_json::json!("hello\u{0}\u{0}\u{0}\u{0}\u{0}")
    );
    assert_eq!(got["sc"], serde_json::json!(2.5));
    assert_eq!(got["title"], serde_json::json!("t"));
    assert_eq!(got["filters"]["i"], serde_json::json!(["shuffle", "zlib"]));
    assert_eq!(got["filters"]["bz"], serde_json::json!(["bzip2"]));
    assert_eq!(got["filters"]["zs"], serde_json::json!(["zstd"]));

    // and what netCDF4-python writes, we read
    let script = "import netCDF4, numpy as np
d = netCDF4.Dataset('file://theirs.file#mode=nczarr,file', 'w')
d.createDimension('x', 3); d.createDimension('y', 4)
v = d.createVariable('v', 'i4', ('x','y'), compression='zlib', complevel=5, shuffle=True, chunksizes=(2,2))
v[:] = np.arange(12).reshape(3,4)
v.units = 'm'
c = d.createVariable('c', 'S1', ('y',))
c[:] = np.array([b'a', b'b', b'c', b'd'])
s = d.createVariable('sc', 'f8')
s[...] = 2.5
g = d.createGroup('g'); g.createDimension('z', 2)
w = g.createVariable('w', 'f4', ('z','x'))
w[:] = 1
d.title = 'hi'
d.close()";
    python(script, &d);
    let f = open(&format!(
        "file://{}#mode=nczarr,file",
        d.join("theirs.file").display()
    ));
    let ds = f.dataset();
    let want = "netcdf theirs {
dimensions:
	x = 3 ;
	y = 4 ;
variables:
	int v(x, y) ;
		v:units = \"m\" ;
	char c(y) ;
	double sc ;

// global attributes:
		:title = \"hi\" ;
data:

 v =
  0, 1, 2, 3,
  4, 5, 6, 7,
  8, 9, 10, 11 ;

 c = \"abcd\" ;

 sc = 2.5 ;

group: g {
  dimensions:
  	z = 2 ;
  variables:
  	float w(z, x) ;
  data:

   w =
  1, 1, 1,
  1, 1, 1 ;
  } // group g
}
";
    assert_same(
        &print(ds, &f, false, false, None),
        want,
        false,
        "netCDF4-python store",
    );
    let v = ds.find_var(ROOT, "v").unwrap();
    assert_eq!(
        nc_filters::format_spec_list(&ds.var(v).storage.filters),
        "2,4|1,5"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// String variables as xarray writes them (`dtype "|O"` with the `vlen-utf8` filter) read as
/// netCDF strings with the values zarr-python returns, beside the store's other variables;
/// copied to NCZarr and read back they are the same.
#[test]
fn xarray_string_variables_read_as_strings() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("xr-strings");
    let script = r#"
import xarray as xr, numpy as np, zarr, json
rng = np.random.default_rng(14)
words = np.array(['', 'a', 'hello', 'ünïcödé', 'x' * 40, 'tab\tand "quote"'], dtype=object)
s = words[rng.integers(0, len(words), size=(5, 7))]
ds = xr.Dataset({'s': (('x', 'y'), s), 'n': (('x',), np.arange(5, dtype='<i4') * 3),
                 'c': (('y',), words[rng.integers(0, len(words), size=7)])})
ds.to_zarr('xs.zarr', zarr_format=2, consolidated=False,
           encoding={'s': {'chunks': (2, 3)}, 'c': {'chunks': (4,)}})
g = zarr.open_group('xs.zarr', mode='r', zarr_format=2)
print(json.dumps({k: g[k][...].tolist() for k in sorted(g.array_keys())}))
"#;
    let want: serde_json::Value = serde_json::from_str(&python(script, &d)).unwrap();
    let za: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("xs.zarr/s/.zarray")).unwrap()).unwrap();
    assert_eq!(za["dtype"], "|O");
    assert_eq!(za["filters"][0]["id"], "vlen-utf8");
    let strings = |v: &Values| -> serde_json::Value {
        match v {
            Values::String(x) => serde_json::json!(x
                .iter()
                .map(|s| s.as_ref().map_or("", |s| s.as_str().expect("UTF-8")))
                .collect::<Vec<_>>()),
            other => panic!("not strings: {other:?}"),
        }
    };
    let flat = |v: &serde_json::Value| -> serde_json::Value {
        match v.as_array() {
            Some(rows) if rows.iter().all(serde_json::Value::is_array) => serde_json::Value::Array(
                rows.iter()
                    .flat_map(|r| r.as_array().unwrap().clone())
                    .collect(),
            ),
            _ => v.clone(),
        }
    };
    let loc = format!("file://{}#mode=zarr,file", d.join("xs.zarr").display());
    let copy = format!("file://{}#mode=nczarr,file", d.join("copy.file").display());
    for (n, l) in [("source", &loc), ("copy", &copy)] {
        if n == "copy" {
            let src = open(&loc);
            common::write_at(&copy, src.dataset(), &src, &Default::default()).unwrap();
        }
        let f = open(l);
        let ds = f.dataset();
        let s = ds.find_var(ROOT, "s").unwrap();
        assert_eq!(ds.var(s).ty, AtomicType::String.into(), "{n}");
        assert_eq!(
            strings(&f.read_var(s, &[0, 0], &[5, 7]).unwrap()),
            flat(&want["s"]),
            "{n} s"
        );
        // a hyperslab across chunk edges
        let part = f.read_var(s, &[1, 2], &[3, 4]).unwrap();
        let all = flat(&want["s"]);
        let slab: Vec<serde_json::Value> = (1..4)
            .flat_map(|r| (2..6).map(move |c| (r, c)))
            .map(|(r, c)| all[r * 7 + c].clone())
            .collect();
        assert_eq!(strings(&part), serde_json::Value::Array(slab), "{n} slab");
        let c = ds.find_var(ROOT, "c").unwrap();
        assert_eq!(
            strings(&f.read_var(c, &[0], &[7]).unwrap()),
            want["c"],
            "{n} c"
        );
        let nv = ds.find_var(ROOT, "n").unwrap();
        assert_eq!(
            f.read_var(nv, &[0], &[5]).unwrap(),
            Values::Int((0..5).map(|k| k * 3).collect()),
            "{n} n"
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}
