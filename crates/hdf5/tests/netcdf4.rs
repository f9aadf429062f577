//! Files written by netCDF-C's `ncgen -k nc4 / nc7`: the dataset model and the data we read
//! must be what `ncdump -s` shows for them.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{ncgen, tmp_dir};
use nc_dataset::Slab;
use nc_dataset::{
    AtomicType, CompoundField, DataSource, Dataset, Endianness, EnumMember, FilterSpec, Format,
    GroupId, Layout, NcType, TypeId, UserTypeKind, Values, VarId,
};
use nc_hdf5::{Hdf5Error, Nc4File};

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

fn enhanced(test: &str) -> Option<Nc4File> {
    let dir = tmp_dir(test);
    let path = ncgen(&dir, "enhanced", "nc4", include_str!("data/enhanced.cdl"))?;
    Some(Nc4File::open(&path).expect("open"))
}

#[test]
fn enhanced_model_metadata() {
    let Some(f) = enhanced("enhanced-metadata") else {
        return;
    };
    let ds = f.dataset();
    assert_eq!(ds.name, "enhanced");
    assert_eq!(ds.format, Some(Format::Netcdf4));
    assert_eq!(ds.info.superblock_version, Some(2));
    assert_eq!(ds.info.is_netcdf4, Some(true));
    assert!(
        ds.info
            .nc_properties
            .as_deref()
            .is_some_and(|p| p.starts_with("version=2,netcdf=4.9.0,hdf5=")),
        "{:?}",
        ds.info.nc_properties
    );

    // user types, in definition order, nested compound resolved to its type
    let kinds: Vec<(&str, &UserTypeKind)> = ds
        .types
        .iter()
        .map(|t| (t.name.as_str(), &t.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (
                "cloud_t",
                &UserTypeKind::Enum {
                    base: AtomicType::UByte,
                    members: vec![
                        EnumMember {
                            name: "Clear".into(),
                            value: 0
                        },
                        EnumMember {
                            name: "Cumulus".into(),
                            value: 4
                        },
                        EnumMember {
                            name: "Missing".into(),
                            value: 255
                        },
                    ],
                }
            ),
            ("op_t", &UserTypeKind::Opaque { size: 3 }),
            (
                "vl_t",
                &UserTypeKind::Vlen {
                    base: NcType::Atomic(AtomicType::Int)
                }
            ),
            (
                "pt_t",
                &UserTypeKind::Compound {
                    size: 14,
                    fields: vec![
                        CompoundField {
                            name: "x".into(),
                            ty: AtomicType::Float.into(),
                            dims: vec![],
                            offset: 0
                        },
                        CompoundField {
                            name: "y".into(),
                            ty: AtomicType::Short.into(),
                            dims: vec![2],
                            offset: 4
                        },
                        CompoundField {
                            name: "name".into(),
                            ty: AtomicType::Char.into(),
                            dims: vec![3],
                            offset: 8
                        },
                    ],
                }
            ),
            (
                "nest_t",
                &UserTypeKind::Compound {
                    size: 20,
                    fields: vec![
                        CompoundField {
                            name: "p".into(),
                            ty: NcType::User(TypeId(3)),
                            dims: vec![],
                            offset: 0
                        },
                        CompoundField {
                            name: "k".into(),
                            ty: AtomicType::Int.into(),
                            dims: vec![],
                            offset: 16
                        },
                    ],
                }
            ),
        ]
    );

    // dimensions: unlimited with its current length, group dimension in its group
    let dims: Vec<(&str, u64, bool, GroupId)> = ds
        .dims
        .iter()
        .map(|d| (d.name.as_str(), d.len, d.unlimited, d.group))
        .collect();
    assert_eq!(
        dims,
        vec![
            ("time", 2, true, GroupId(0)),
            ("x", 3, false, GroupId(0)),
            ("y", 2, false, GroupId(1))
        ]
    );
    let g = ds.find_group(GroupId(0), "g").expect("group g");
    let h = ds.find_group(g, "h").expect("group h");
    assert_eq!(ds.group_path(h), "/g/h");

    // variables in creation order with their types and shapes
    let root: Vec<(String, String, Vec<u64>)> = ds.groups[0]
        .vars
        .iter()
        .map(|&v| {
            (
                ds.var(v).name.clone(),
                ds.type_name(ds.var(v).ty).to_string(),
                ds.shape(v),
            )
        })
        .collect();
    let want: Vec<(String, String, Vec<u64>)> = [
        ("time", "double", vec![2]),
        ("temp", "float", vec![2, 3]),
        ("cl", "cloud_t", vec![3]),
        ("o", "op_t", vec![3]),
        ("v", "vl_t", vec![3]),
        ("p", "pt_t", vec![]),
        ("n", "nest_t", vec![3]),
        ("s", "string", vec![3]),
        ("c", "char", vec![3]),
        ("big", "int64", vec![3]),
        ("nf", "ushort", vec![3]),
    ]
    .into_iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c))
    .collect();
    assert_eq!(root, want);

    // attributes: hidden ones gone, _FillValue kept as netCDF keeps it
    let temp = ds.var(var(ds, GroupId(0), "temp"));
    assert_eq!(temp.atts.len(), 1);
    assert_eq!(temp.atts[0].name, "_FillValue");
    assert_eq!(temp.atts[0].values, Values::Float(vec![-1.0]));
    let time = ds.var(var(ds, GroupId(0), "time"));
    assert_eq!(time.atts.len(), 1);
    assert_eq!(time.atts[0].values, Values::Char(b"days".to_vec()));
    let globals: Vec<(&str, &Values)> = ds.groups[0]
        .atts
        .iter()
        .map(|a| (a.name.as_str(), &a.values))
        .collect();
    assert_eq!(
        globals,
        vec![
            ("title", &Values::Char(b"enhanced test".to_vec())),
            (
                "sa",
                &Values::String(vec![Some("a".into()), Some("bc".into())])
            ),
            ("ca", &Values::UByte(vec![4])),
        ]
    );
    assert_eq!(ds.groups[0].atts[2].ty, NcType::User(TypeId(0)));
    let gv = ds.var(var(ds, g, "gv"));
    assert_eq!(gv.atts[0].values, Values::Short(vec![1]));
    assert_eq!(ds.shape(var(ds, g, "gv")), vec![2, 3]);
}

#[test]
fn enhanced_model_storage() {
    let Some(f) = enhanced("enhanced-storage") else {
        return;
    };
    let ds = f.dataset();
    let st = |n: &str| ds.var(var(ds, GroupId(0), n)).storage.clone();
    let temp = st("temp");
    assert_eq!(temp.layout, Some(Layout::Chunked));
    assert_eq!(temp.chunk_sizes, Some(vec![2, 3]));
    // pipeline order as stored: fletcher32, shuffle (HDF5 adds the element size), deflate
    assert_eq!(
        temp.filters,
        vec![
            FilterSpec {
                id: 3,
                params: vec![]
            },
            FilterSpec {
                id: 2,
                params: vec![4]
            },
            FilterSpec {
                id: 1,
                params: vec![2]
            },
        ]
    );
    assert_eq!(temp.endianness, Some(Endianness::Big));
    assert_eq!(temp.no_fill, None);
    let time = st("time");
    assert_eq!(
        (time.layout, time.chunk_sizes.clone()),
        (Some(Layout::Chunked), Some(vec![512]))
    );
    assert_eq!(time.endianness, Some(Endianness::Little));
    assert_eq!(st("big").layout, Some(Layout::Compact));
    assert_eq!(st("cl").layout, Some(Layout::Contiguous));
    // only wide atomic types have an endianness, as ncdump -s shows
    assert_eq!(st("cl").endianness, None);
    assert_eq!(st("s").endianness, None);
    assert_eq!(st("c").endianness, None);
    assert_eq!(st("nf").no_fill, Some(true));
    assert_eq!(st("nf").endianness, Some(Endianness::Little));
}

#[test]
fn enhanced_model_data() {
    let Some(f) = enhanced("enhanced-data") else {
        return;
    };
    let ds = f.dataset();
    let r = |n: &str| all(&f, var(ds, GroupId(0), n));
    assert_eq!(r("time"), Values::Double(vec![1.0, 2.0]));
    assert_eq!(
        r("temp"),
        Values::Float(vec![1.0, 2.0, 3.0, 4.0, -1.0, 6.0])
    );
    assert_eq!(r("cl"), Values::UByte(vec![0, 4, 255]));
    assert_eq!(
        r("o"),
        Values::Opaque {
            size: 3,
            bytes: (1..=9).collect()
        }
    );
    assert_eq!(
        r("v"),
        Values::Vlen(vec![
            Values::Int(vec![1]),
            Values::Int(vec![2, 3]),
            Values::Int(vec![])
        ])
    );
    assert_eq!(
        r("p"),
        Values::Compound(vec![vec![
            Values::Float(vec![1.5]),
            Values::Short(vec![7, 8]),
            Values::Char(b"ab\0".to_vec())
        ]])
    );
    // the first element of the nested compound (netCDF-C's ncgen writes the others wrongly,
    // and ncdump shows the same bytes we read)
    let Values::Compound(n) = r("n") else {
        panic!("nest_t data is not compound")
    };
    assert_eq!(
        n[0],
        vec![
            Values::Compound(vec![vec![
                Values::Float(vec![1.0]),
                Values::Short(vec![1, 2]),
                Values::Char(b"x\0\0".to_vec())
            ]]),
            Values::Int(vec![1073741824]),
        ]
    );
    assert_eq!(
        r("s"),
        Values::String(vec![
            Some("one".into()),
            Some("".into()),
            Some("three".into())
        ])
    );
    assert_eq!(r("c"), Values::Char(b"abc".to_vec()));
    assert_eq!(r("big"), Values::Int64(vec![-1, 0, 9_000_000_000]));
    let g = ds.find_group(GroupId(0), "g").expect("g");
    let h = ds.find_group(g, "h").expect("h");
    assert_eq!(
        all(&f, var(ds, g, "gv")),
        Values::Int(vec![1, 2, 3, 4, 5, 6])
    );
    assert_eq!(all(&f, var(ds, h, "hv")), Values::UByte(vec![200, 201]));

    // hyperslabs of a chunked, filtered, big-endian variable
    let temp = var(ds, GroupId(0), "temp");
    assert_eq!(
        f.read(ds, temp, Slab::new(&[1, 1], &[1, 2])).expect("slab"),
        Values::Float(vec![-1.0, 6.0])
    );
    assert_eq!(
        f.read(ds, temp, Slab::new(&[0, 2], &[2, 1])).expect("slab"),
        Values::Float(vec![3.0, 6.0])
    );
    assert_eq!(
        f.read(ds, temp, Slab::new(&[0, 0], &[0, 3]))
            .expect("empty"),
        Values::Float(vec![])
    );
    let err = f
        .read(ds, temp, Slab::new(&[1, 2], &[1, 2]))
        .expect_err("past the end");
    assert_eq!(
        err.to_string(),
        "variable \"temp\": hyperslab 2+2 exceeds dimension length 3"
    );
}

#[test]
fn classic_model_and_record_fill() {
    let dir = tmp_dir("classic");
    let cdl = "netcdf cm {\n\
        dimensions:\n  t = UNLIMITED ;\n  n = 2 ;\n\
        variables:\n  int a(t, n) ;\n    a:_FillValue = 99 ;\n  short b(t) ;\n  float n(n) ;\n\
        :history = \"made\" ;\n\
        data:\n  a = 1, 2, 3, 4, 5, 6 ;\n  b = 7 ;\n  n = 0.5, 1.5 ;\n}\n";
    let Some(path) = ncgen(&dir, "cm", "nc7", cdl) else {
        return;
    };
    let f = Nc4File::open(&path).expect("open");
    let ds = f.dataset();
    assert_eq!(ds.format, Some(Format::Netcdf4Classic));
    // _nc3_strict and _NCProperties are not attributes
    let names: Vec<&str> = ds.groups[0].atts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec!["history"]);
    assert_eq!(
        ds.dims[0].len, 3,
        "unlimited length is the longest record variable"
    );
    // b has one record written; the other two read as short's default fill
    assert_eq!(
        all(&f, var(ds, GroupId(0), "b")),
        Values::Short(vec![7, -32767, -32767])
    );
    assert_eq!(
        all(&f, var(ds, GroupId(0), "a")),
        Values::Int(vec![1, 2, 3, 4, 5, 6])
    );
    // n is a coordinate variable: its dimension is itself
    let n = var(ds, GroupId(0), "n");
    assert_eq!(ds.dim(ds.var(n).dims[0]).name, "n");
    assert_eq!(all(&f, n), Values::Float(vec![0.5, 1.5]));
}

#[test]
fn dimension_order_and_non_coordinate_names() {
    // coordinate variables defined in another order than their dimensions (_Netcdf4Dimid), a
    // variable named like a dimension but not its coordinate (_nc4_non_coord_), and a 2-D
    // coordinate variable (_Netcdf4Coordinates)
    let dir = tmp_dir("dimorder");
    let cdl = "netcdf d {\n\
        dimensions:\n  a = 2 ;\n  b = 3 ;\n  c = 4 ;\n\
        variables:\n  int c(c) ;\n  int b(b) ;\n  float a(b, c) ;\n  int v(a, b) ;\n}\n";
    let Some(path) = ncgen(&dir, "d", "nc4", cdl) else {
        return;
    };
    let f = Nc4File::open(&path).expect("open");
    let ds = f.dataset();
    let dims: Vec<&str> = ds.dims.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(dims, vec!["a", "b", "c"]);
    let vars: Vec<(String, Vec<String>)> = ds.groups[0]
        .vars
        .iter()
        .map(|&v| {
            let var = ds.var(v);
            (
                var.name.clone(),
                var.dims.iter().map(|d| ds.dim(*d).name.clone()).collect(),
            )
        })
        .collect();
    let want: Vec<(String, Vec<String>)> = [
        ("c", vec!["c"]),
        ("b", vec!["b"]),
        ("a", vec!["b", "c"]),
        ("v", vec!["a", "b"]),
    ]
    .into_iter()
    .map(|(n, d)| (n.to_string(), d.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(vars, want);
    assert!(
        ds.vars.iter().all(|v| v.atts.is_empty()),
        "hidden attributes leaked"
    );
}

#[test]
fn missing_filter_is_named() {
    if !std::path::Path::new(common::PLUGINS)
        .join("libh5bz2.so")
        .exists()
    {
        eprintln!("SKIPPED: bzip2 HDF5 plugin not installed");
        return;
    }
    let dir = tmp_dir("bzip2");
    let cdl = "netcdf bz {\ndimensions:\n  n = 4 ;\nvariables:\n  int z(n) ;\n    z:_Filter = \"307,9\" ;\n  int ok(n) ;\ndata:\n  z = 1, 2, 3, 4 ;\n  ok = 5, 6, 7, 8 ;\n}\n";
    let Some(path) = ncgen(&dir, "bz", "nc4", cdl) else {
        return;
    };
    // a decoder with no codecs stands for a reader without the bzip2 plugin
    let none = std::sync::Arc::new(nc_filters::ChunkDecoder::with_registry(
        nc_filters::Registry::empty(),
    ));
    let f = Nc4File::open_with(&path, none).expect("metadata needs no plugin");
    let ds = f.dataset();
    let z = var(ds, GroupId(0), "z");
    assert_eq!(
        ds.var(z).storage.filters,
        vec![FilterSpec {
            id: 307,
            params: vec![9]
        }]
    );
    let err = f
        .read(ds, z, Slab::new(&[0], &[4]))
        .expect_err("no bzip2 decoder");
    let e = err.downcast_ref::<Hdf5Error>().expect("an Hdf5Error");
    assert!(
        matches!(e, Hdf5Error::MissingFilter { id: 307, .. }),
        "{e:?}"
    );
    let searched: Vec<String> = nc_filters::plugin::default_plugin_dirs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        e.to_string(),
        format!(
            "variable \"z\" needs filter 307 (bzip2), not available: no built-in codec and no \
             plugin in {}; add its plugin directory to HDF5_PLUGIN_PATH",
            searched.join(":")
        )
    );
    assert_eq!(
        all(&f, var(ds, GroupId(0), "ok")),
        Values::Int(vec![5, 6, 7, 8])
    );
}

#[test]
fn attributes_of_committed_types() {
    // netCDF-C 4.0-era files store user-typed attributes with a shared (committed) datatype,
    // which hdf5-reader refuses; our own header walk decodes them
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/cases/nc_test4/ref_tst_compounds.nc"
    ));
    if !path.exists() {
        eprintln!("SKIPPED: conformance corpus not present");
        return;
    }
    let f = Nc4File::open(path).expect("open");
    let ds = f.dataset();
    let obs = var(ds, GroupId(0), "obs");
    let fill = vec![
        Values::Byte(vec![-99]),
        Values::Short(vec![-99]),
        Values::Int(vec![-99]),
        Values::Float(vec![-99.0]),
        Values::Double(vec![-99.0]),
    ];
    assert_eq!(ds.var(obs).atts[0].name, "_FillValue");
    assert_eq!(ds.var(obs).atts[0].ty, NcType::User(TypeId(0)));
    assert_eq!(
        ds.var(obs).atts[0].values,
        Values::Compound(vec![fill.clone()])
    );
    let Values::Compound(data) = all(&f, obs) else {
        panic!("compound data")
    };
    assert_eq!(data.len(), 3);
    assert_eq!(
        data[1], fill,
        "the unwritten element reads as the fill value"
    );
    assert_eq!(
        data[2],
        vec![
            Values::Byte(vec![20]),
            Values::Short(vec![6]),
            Values::Int(vec![3]),
            Values::Float(vec![0.75]),
            Values::Double(vec![5000.01]),
        ]
    );
}
