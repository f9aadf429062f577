//! Plain HDF5 files written by h5py: superblock 0 and 3, every chunk index (v1 B-tree, fixed
//! array, extensible array, v2 B-tree, single chunk, implicit via no filter), compact and
//! contiguous layouts, compact and dense attributes, creation-order tracking, phony dimensions
//! named and numbered as netCDF-C does, dimension scales made by h5py.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{python, tmp_dir};
use nc_dataset::Slab;
use nc_dataset::{
    AtomicType, DataSource, Dataset, Endianness, FilterSpec, GroupId, Layout, NcType, Values, VarId,
};
use nc_hdf5::Nc4File;

const SCRIPT: &str = r#"
import h5py, numpy as np
with h5py.File('sb0.h5', 'w', libver='earliest') as f:
    f['a'] = np.arange(12, dtype='i4').reshape(3, 4)
    f.create_dataset('b', data=np.arange(5, dtype='f8'), chunks=(2,), compression='gzip', shuffle=True)
    f['c'] = np.arange(16, dtype='i2').reshape(4, 4)
    f.attrs['title'] = 'hello'
    f.attrs['nums'] = np.array([1, 2, 3], dtype='i4')
    g = f.create_group('g1')
    g['d'] = np.arange(3, dtype='u1')
    g.attrs['x'] = 1.5
with h5py.File('sb3.h5', 'w', libver='latest') as f:
    f.create_dataset('fixed', data=np.arange(100, dtype='i4').reshape(10, 10), chunks=(3, 4), compression='gzip')
    f.create_dataset('ext', data=np.arange(10, dtype='f4'), chunks=(4,), maxshape=(None,))
    f.create_dataset('bt2', data=np.arange(36, dtype='i8').reshape(6, 6), chunks=(4, 4), maxshape=(None, None), fletcher32=True)
    f.create_dataset('single', data=np.arange(6, dtype='u2').reshape(2, 3), chunks=(2, 3), compression='gzip')
    sp = h5py.h5s.create_simple((4,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    h5py.h5d.create(f.id, b'compact', h5py.h5t.STD_I8LE, sp, dcpl).write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(4, dtype='i1'))
    f.create_dataset('strs', data=np.array(['ab', 'cde', ''], dtype=h5py.string_dtype()))
    f.create_dataset('be', data=np.arange(3, dtype='>i4'))
    f.create_dataset('scalar', data=np.float64(3.25))
    f.create_dataset('holes', shape=(10,), chunks=(2,), dtype='i4', fillvalue=7)
    f['holes'][0:2] = [1, 2]
    f.create_dataset('vl', data=np.array([np.arange(2, dtype='i4'), np.arange(3, dtype='i4')], dtype=object), dtype=h5py.vlen_dtype('i4'))
    for i in range(20):
        f.attrs['att%02d' % i] = i
with h5py.File('track.h5', 'w', libver='latest', track_order=True) as f:
    f['z'] = np.arange(2, dtype='i4')
    f['a'] = np.arange(3, dtype='i4')
    for i in range(12):
        f.attrs['z%02d' % (11 - i)] = i
for sb, libver in (('ub0.h5', 'earliest'), ('ub3.h5', 'latest')):
    with h5py.File(sb, 'w', libver=libver, userblock_size=1024) as f:
        f.create_dataset('chunked', data=np.arange(60, dtype='f4').reshape(6, 10), chunks=(2, 5))
        f.create_dataset('zipped', data=np.arange(60, dtype='i2').reshape(6, 10), chunks=(3, 5), compression='gzip')
        f['contig'] = np.arange(7, dtype='f8')
with h5py.File('scales.h5', 'w') as f:
    f['x'] = np.arange(4, dtype='f4')
    f['x'].make_scale('x')
    f['t'] = np.arange(3, dtype='f4')
    f['t'].make_scale('t')
    f['v'] = np.arange(12, dtype='f4').reshape(3, 4)
    f['v'].dims[0].attach_scale(f['t'])
    f['v'].dims[1].attach_scale(f['x'])
"#;

fn files(test: &str) -> Option<common::TmpDir> {
    let dir = tmp_dir(test);
    python(&dir, SCRIPT).then_some(dir)
}

fn var(ds: &Dataset, g: GroupId, name: &str) -> VarId {
    ds.find_var(g, name)
        .unwrap_or_else(|| panic!("no variable {name}"))
}

fn all(f: &Nc4File, v: VarId) -> Values {
    let ds = f.dataset();
    let shape = ds.shape(v);
    f.read(ds, v, Slab::new(&vec![0; shape.len()], &shape))
        .expect("read")
}

fn dim_names(ds: &Dataset, v: VarId) -> Vec<String> {
    ds.var(v)
        .dims
        .iter()
        .map(|d| ds.dim(*d).name.clone())
        .collect()
}

#[test]
fn superblock0_phony_dimensions_and_attributes() {
    let Some(dir) = files("h5py-sb0") else { return };
    let f = Nc4File::open(dir.join("sb0.h5")).expect("open");
    let ds = f.dataset();
    assert_eq!(ds.info.superblock_version, Some(0));
    assert_eq!(ds.info.is_netcdf4, Some(false));
    assert_eq!(ds.info.nc_properties, None);
    // netCDF-C makes the child group's phony dimensions first, and never gives one variable
    // the same phony dimension twice
    let dims: Vec<(String, u64, GroupId)> = ds
        .dims
        .iter()
        .map(|d| (d.name.clone(), d.len, d.group))
        .collect();
    let want: Vec<(String, u64, GroupId)> = [
        ("phony_dim_0", 3, GroupId(1)),
        ("phony_dim_1", 3, GroupId(0)),
        ("phony_dim_2", 4, GroupId(0)),
        ("phony_dim_3", 5, GroupId(0)),
        ("phony_dim_4", 4, GroupId(0)),
    ]
    .into_iter()
    .map(|(n, l, g)| (n.to_string(), l, g))
    .collect();
    assert_eq!(dims, want);
    let c = var(ds, GroupId(0), "c");
    assert_eq!(dim_names(ds, c), vec!["phony_dim_2", "phony_dim_4"]);
    let globals: Vec<(&str, NcType, &Values)> = ds.groups[0]
        .atts
        .iter()
        .map(|a| (a.name.as_str(), a.ty, &a.values))
        .collect();
    // compact attributes in header order, as ncdump lists them
    assert_eq!(
        globals,
        vec![
            (
                "title",
                AtomicType::String.into(),
                &Values::String(vec![Some("hello".into())])
            ),
            ("nums", AtomicType::Int.into(), &Values::Int(vec![1, 2, 3])),
        ]
    );
    let b = var(ds, GroupId(0), "b");
    assert_eq!(
        ds.var(b).storage.filters,
        vec![
            FilterSpec {
                id: 2,
                params: vec![8]
            },
            FilterSpec {
                id: 1,
                params: vec![4]
            }
        ]
    );
    assert_eq!(all(&f, b), Values::Double(vec![0.0, 1.0, 2.0, 3.0, 4.0]));
    assert_eq!(all(&f, c), Values::Short((0..16).collect()));
    assert_eq!(
        f.read(ds, c, Slab::new(&[1, 1], &[2, 2])).expect("slab"),
        Values::Short(vec![5, 6, 9, 10])
    );
    let g1 = ds.find_group(GroupId(0), "g1").expect("g1");
    assert_eq!(all(&f, var(ds, g1, "d")), Values::UByte(vec![0, 1, 2]));
}

#[test]
fn superblock3_chunk_indexes_and_layouts() {
    let Some(dir) = files("h5py-sb3") else { return };
    let f = Nc4File::open(dir.join("sb3.h5")).expect("open");
    let ds = f.dataset();
    assert_eq!(ds.info.superblock_version, Some(3));
    let v = |n: &str| var(ds, GroupId(0), n);
    // fixed array index, deflate, edge chunks
    assert_eq!(all(&f, v("fixed")), Values::Int((0..100).collect()));
    assert_eq!(
        f.read(ds, v("fixed"), Slab::new(&[8, 7], &[2, 3]))
            .expect("slab"),
        Values::Int(vec![87, 88, 89, 97, 98, 99])
    );
    // extensible array index (one unlimited dimension)
    assert_eq!(
        all(&f, v("ext")),
        Values::Float((0..10).map(|x| x as f32).collect())
    );
    assert!(ds.dim(ds.var(v("ext")).dims[0]).unlimited);
    // v2 B-tree index (two unlimited dimensions), fletcher32 verified
    assert_eq!(all(&f, v("bt2")), Values::Int64((0..36).collect()));
    assert_eq!(
        ds.var(v("bt2")).storage.filters,
        vec![FilterSpec {
            id: 3,
            params: vec![]
        }]
    );
    // single-chunk index
    assert_eq!(all(&f, v("single")), Values::UShort((0..6).collect()));
    // compact layout
    assert_eq!(ds.var(v("compact")).storage.layout, Some(Layout::Compact));
    assert_eq!(all(&f, v("compact")), Values::Byte(vec![0, 1, 2, 3]));
    // vlen strings, big-endian, scalar
    assert_eq!(
        all(&f, v("strs")),
        Values::String(vec![Some("ab".into()), Some("cde".into()), Some("".into())])
    );
    assert_eq!(ds.var(v("be")).storage.endianness, Some(Endianness::Big));
    assert_eq!(all(&f, v("be")), Values::Int(vec![0, 1, 2]));
    assert_eq!(all(&f, v("scalar")), Values::Double(vec![3.25]));
    // unwritten chunks read as the HDF5 fill value; a user fill value means "fill" is on
    assert_eq!(
        all(&f, v("holes")),
        Values::Int(vec![1, 2, 7, 7, 7, 7, 7, 7, 7, 7])
    );
    assert_eq!(ds.var(v("holes")).storage.no_fill, None);
    assert_eq!(ds.var(v("scalar")).storage.no_fill, Some(true));
    // an uncommitted vlen type gets a type of its own, as netCDF-C 4.10 names it (4.9.0
    // leaves the dataset out)
    let vl = v("vl");
    match ds.var(vl).ty {
        NcType::User(t) => assert_eq!(ds.types[t.0].name, "_AnonymousVlen1"),
        other => panic!("vl is {other:?}"),
    }
    // 20 attributes: dense storage without creation-order tracking, in the name index's
    // (hash) order, as ncdump 4.9.0 lists them
    let names: Vec<String> = ds.groups[0].atts.iter().map(|a| a.name.clone()).collect();
    let want: Vec<String> = [
        14, 9, 4, 3, 15, 16, 19, 0, 18, 6, 8, 5, 13, 2, 11, 17, 12, 7, 10, 1,
    ]
    .iter()
    .map(|i| format!("att{i:02}"))
    .collect();
    assert_eq!(names, want);
}

/// A user block moves every HDF5 address by its size: raw data (chunks, compressed chunks and
/// contiguous data, read straight from the file) comes from the superblock's base address on.
#[test]
fn user_block_shifts_raw_data() {
    let Some(dir) = files("h5py-userblock") else {
        return;
    };
    for name in ["ub0.h5", "ub3.h5"] {
        let f = Nc4File::open(dir.join(name)).expect(name);
        let ds = f.dataset();
        let v = |n: &str| var(ds, GroupId(0), n);
        assert_eq!(
            all(&f, v("chunked")),
            Values::Float((0..60).map(|x| x as f32).collect()),
            "{name}"
        );
        assert_eq!(
            f.read(ds, v("chunked"), Slab::new(&[2, 5], &[2, 5]))
                .expect("one chunk"),
            Values::Float(vec![25., 26., 27., 28., 29., 35., 36., 37., 38., 39.]),
            "{name}"
        );
        assert_eq!(
            all(&f, v("zipped")),
            Values::Short((0..60).collect()),
            "{name}"
        );
        assert_eq!(
            all(&f, v("contig")),
            Values::Double((0..7).map(f64::from).collect()),
            "{name}"
        );
    }
}

#[test]
fn creation_order_tracking() {
    let Some(dir) = files("h5py-track") else {
        return;
    };
    let f = Nc4File::open(dir.join("track.h5")).expect("open");
    let ds = f.dataset();
    let vars: Vec<&str> = ds.groups[0]
        .vars
        .iter()
        .map(|&v| ds.var(v).name.as_str())
        .collect();
    assert_eq!(vars, vec!["z", "a"]);
    let names: Vec<String> = ds.groups[0].atts.iter().map(|a| a.name.clone()).collect();
    let want: Vec<String> = (0..12).map(|i| format!("z{:02}", 11 - i)).collect();
    assert_eq!(names, want);
}

#[test]
fn h5py_dimension_scales() {
    let Some(dir) = files("h5py-scales") else {
        return;
    };
    let f = Nc4File::open(dir.join("scales.h5")).expect("open");
    let ds = f.dataset();
    assert_eq!(ds.info.is_netcdf4, Some(true));
    let dims: Vec<&str> = ds.dims.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(dims, vec!["t", "x"]);
    let v = var(ds, GroupId(0), "v");
    assert_eq!(dim_names(ds, v), vec!["t", "x"]);
    assert!(ds.var(v).atts.is_empty(), "DIMENSION_LIST must be hidden");
    assert!(
        ds.var(var(ds, GroupId(0), "x")).atts.is_empty(),
        "CLASS/NAME/REFERENCE_LIST must be hidden"
    );
    assert_eq!(
        f.read(ds, v, Slab::new(&[2, 0], &[1, 4])).expect("row"),
        Values::Float(vec![8.0, 9.0, 10.0, 11.0])
    );
}
