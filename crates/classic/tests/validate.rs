//! Writer validation (what netCDF-C refuses for classic files) and reader hyperslabs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::B;
use nc_classic::{write_file, write_to, ClassicFile, WriteOptions};
use nc_dataset::AtomicType::{Byte, Char, Double, Int, Int64, Short, UByte};
use nc_dataset::Slab;
use nc_dataset::{
    AtomicType, DataSource, Dataset, FilterSpec, Format, InMemory, Layout, NcType, UserTypeKind,
    Values, VarId, ROOT,
};

fn err(ds: &Dataset, format: Format) -> String {
    let opts = WriteOptions {
        format,
        ..Default::default()
    };
    let mut out = Vec::new();
    match write_to(&mut out, ds, &InMemory, &opts) {
        Ok(()) => "no error".into(),
        Err(e) => {
            assert!(
                out.is_empty(),
                "nothing is written before a validation error"
            );
            e.to_string()
        }
    }
}

#[test]
fn cdf5_types_only_in_cdf5() {
    let ds = B::new().var("u", UByte, &[]).build();
    assert_eq!(
        err(&ds, Format::Classic),
        "variable \"u\" has type ubyte, which the classic format cannot store (use the cdf5 or netCDF-4 format)"
    );
    assert_eq!(err(&ds, Format::Cdf5), "no error");
    let ds = B::new()
        .var("v", Int, &[])
        .att("v", "big", Values::Int64(vec![1]))
        .build();
    assert_eq!(
        err(&ds, Format::Offset64),
        "attribute \"v:big\" has type int64, which the 64-bit offset format cannot store (use the cdf5 or netCDF-4 format)"
    );
    let ds = B::new()
        .att("", "s", Values::String(vec![Some("x".into())]))
        .build();
    assert_eq!(
        err(&ds, Format::Cdf5),
        "attribute \":s\" has type string, which the cdf5 format cannot store (use the netCDF-4 format)"
    );
}

#[test]
fn enhanced_model_is_refused() {
    let mut ds = B::new().build();
    ds.add_group(ROOT, "sub");
    assert_eq!(
        err(&ds, Format::Cdf5),
        "group \"sub\": groups needs the netCDF-4 format; classic files cannot store it"
    );
    let mut ds = B::new().build();
    let t = ds.add_type(ROOT, "op", UserTypeKind::Opaque { size: 4 });
    ds.add_var(ROOT, "o", NcType::User(t), vec![]);
    assert_eq!(
        err(&ds, Format::Cdf5),
        "variable \"o\": user-defined type op needs the netCDF-4 format; classic files cannot store it"
    );
    let ds = B::new().unlim("a", 0).unlim("b", 0).build();
    assert_eq!(
        err(&ds, Format::Classic),
        "dimensions \"a\" and \"b\" are both unlimited; classic files allow one unlimited dimension (use netCDF-4)"
    );
    let ds = B::new()
        .dim("x", 2)
        .unlim("t", 0)
        .var("v", Int, &["x", "t"])
        .build();
    assert_eq!(
        err(&ds, Format::Classic),
        "variable \"v\": the unlimited dimension must be the first dimension"
    );
}

#[test]
fn netcdf4_storage_settings_are_refused() {
    let base = B::new().dim("x", 2).var("v", Int, &["x"]).build();
    let mut ds = base.clone();
    ds.vars[0].storage.chunk_sizes = Some(vec![2]);
    assert_eq!(
        err(&ds, Format::Classic),
        "variable \"v\": _ChunkSizes needs the netCDF-4 format; classic files cannot store it"
    );
    let mut ds = base.clone();
    ds.vars[0].storage.filters = vec![FilterSpec {
        id: 1,
        params: vec![5],
    }];
    assert!(err(&ds, Format::Classic).contains("_DeflateLevel needs the netCDF-4 format"));
    let mut ds = base.clone();
    ds.vars[0].storage.layout = Some(Layout::Contiguous);
    assert!(err(&ds, Format::Classic).contains("_Storage needs the netCDF-4 format"));
    let mut ds = base.clone();
    ds.vars[0].storage.no_fill = Some(true);
    assert_eq!(err(&ds, Format::Classic), "no error");
}

#[test]
fn fill_value_must_match() {
    let ds = B::new()
        .var("v", Short, &[])
        .att("v", "_FillValue", Values::Int(vec![1]))
        .build();
    assert_eq!(
        err(&ds, Format::Classic),
        "variable \"v\": _FillValue has type int, but the variable has type short"
    );
    let ds = B::new()
        .var("v", Short, &[])
        .att("v", "_FillValue", Values::Short(vec![1, 2]))
        .build();
    assert_eq!(
        err(&ds, Format::Classic),
        "variable \"v\": _FillValue has 2 values; it needs exactly one"
    );
}

#[test]
fn dimension_limits() {
    let ds = B::new().dim("d", 2_147_483_645).build();
    assert_eq!(
        err(&ds, Format::Classic),
        "dimension \"d\": length 2147483645 is too large for the classic format (at most 2147483644)"
    );
    assert_eq!(err(&ds, Format::Offset64), "no error");
    let ds = B::new().dim("d", 4_294_967_293).build();
    assert!(err(&ds, Format::Offset64).contains("at most 4294967292"));
    assert_eq!(err(&ds, Format::Cdf5), "no error");
    let ds = B::new().dim("z", 0).build();
    assert_eq!(
        err(&ds, Format::Classic),
        "dimension \"z\" has length 0 but is not unlimited; classic files cannot store that"
    );
}

#[test]
fn cdf1_offsets_past_2_gib() {
    // two variables of 2^31 - 4 bytes: the second would begin past 2^31 - 1
    let ds = B::new()
        .dim("d", 2_147_483_644)
        .var("a", Byte, &["d"])
        .var("b", Byte, &["d"])
        .build();
    assert_eq!(
        err(&ds, Format::Classic),
        "variable \"b\": its data would begin at byte 2147483760, past the 2^31 - 1 offset limit of CDF-1 (use the 64-bit offset or cdf5 format)"
    );
}

#[test]
fn invalid_names_and_mismatched_values() {
    let ds = B::new().dim("a/b", 1).build();
    assert_eq!(
        err(&ds, Format::Classic),
        "dimension: name \"a/b\" is invalid: names cannot contain '/'"
    );
    let mut ds = B::new().build();
    ds.groups[0].atts.push(nc_dataset::Attribute {
        name: "x".into(),
        ty: NcType::Atomic(Int),
        values: Values::Short(vec![1]),
    });
    assert_eq!(
        err(&ds, Format::Classic),
        "attribute \":x\": values do not match the declared type int"
    );
}

#[test]
fn int64_variables_are_written_as_int64_in_cdf5() {
    // ncgen 4.9.0 writes int64 variables as int in cdf5 files; we keep the type
    let ds = B::new()
        .dim("n", 2)
        .var("i", Int64, &["n"])
        .data("i", Values::Int64(vec![i64::MAX, -5]))
        .build();
    let mut out = Vec::new();
    let opts = WriteOptions {
        format: Format::Cdf5,
        ..Default::default()
    };
    write_to(&mut out, &ds, &InMemory, &opts).unwrap();
    let f = ClassicFile::from_bytes(out).unwrap();
    assert_eq!(f.dataset().vars[0].ty, NcType::Atomic(Int64));
    assert_eq!(
        f.read_slab(VarId(0), &[0], &[2]).unwrap(),
        Values::Int64(vec![i64::MAX, -5])
    );
}

#[test]
fn empty_char_attribute_without_nul() {
    let ds = B::new().att("", "e", Values::Char(vec![])).build();
    let mut out = Vec::new();
    write_to(&mut out, &ds, &InMemory, &WriteOptions::default()).unwrap();
    let f = ClassicFile::from_bytes(out).unwrap();
    assert_eq!(f.dataset().groups[0].atts[0].values, Values::Char(vec![]));
    assert_eq!(f.header().header_size, 4 + 4 + 8 + 8 + (4 + 4) + 4 + 4 + 8);
}

fn values(t: AtomicType, n: usize) -> Values {
    match t {
        Short => Values::Short((0..n).map(|i| i as i16).collect()),
        Byte => Values::Byte((0..n).map(|i| i as i8).collect()),
        Char => Values::Char((0..n).map(|i| i as u8).collect()),
        Double => Values::Double((0..n).map(|i| i as f64).collect()),
        _ => Values::Int((0..n).map(|i| i as i32).collect()),
    }
}

/// Every hyperslab of small variables (fixed and record, single and several record
/// variables) reads what the in-memory source gives.
#[test]
fn all_hyperslabs_match_in_memory() {
    let several = B::new()
        .dim("x", 3)
        .unlim("t", 4)
        .dim("y", 2)
        .var("f", Short, &["x", "y"])
        .var("r", Byte, &["t", "x", "y"])
        .var("q", Double, &["t"])
        .var("c", Char, &["t", "y"])
        .data("f", values(Short, 6))
        .data("r", values(Byte, 24))
        .data("q", values(Double, 4))
        .data("c", values(Char, 8))
        .build();
    let single = B::new()
        .dim("x", 3)
        .unlim("t", 5)
        .var("r", Short, &["t", "x"])
        .data("r", values(Short, 15))
        .build();
    for ds in [several, single] {
        for f in [Format::Classic, Format::Cdf5] {
            let mut out = Vec::new();
            let opts = WriteOptions {
                format: f,
                ..Default::default()
            };
            write_to(&mut out, &ds, &InMemory, &opts).unwrap();
            let file = ClassicFile::from_bytes(out).unwrap();
            for v in 0..ds.vars.len() {
                let shape = ds.shape(VarId(v));
                let mut slabs = vec![(vec![], vec![])];
                for &n in &shape {
                    let mut next = Vec::new();
                    for (s, c) in &slabs {
                        for st in 0..=n {
                            for ct in 0..=(n - st) {
                                let mut s2: Vec<u64> = s.clone();
                                let mut c2: Vec<u64> = c.clone();
                                s2.push(st);
                                c2.push(ct);
                                next.push((s2, c2));
                            }
                        }
                    }
                    slabs = next;
                }
                for (s, c) in slabs {
                    let want = InMemory.read(&ds, VarId(v), Slab::new(&s, &c)).unwrap();
                    let got = file
                        .read(file.dataset(), VarId(v), Slab::new(&s, &c))
                        .unwrap();
                    assert_eq!(got, want, "var {v} start {s:?} count {c:?}");
                }
            }
        }
    }
}

#[test]
fn write_file_then_open() {
    let ds = B::new()
        .dim("x", 3)
        .unlim("t", 2)
        .var("a", Int, &["t", "x"])
        .data("a", values(Int, 6))
        .build();
    let dir = common::scratch("wf");
    let p = dir.join("a.nc");
    let opts = WriteOptions {
        format: Format::Offset64,
        ..Default::default()
    };
    write_file(&p, &ds, &InMemory, &opts).unwrap();
    let f = ClassicFile::open(&p).unwrap();
    assert_eq!(f.header().format, Format::Offset64);
    assert_eq!(
        f.read_slab(VarId(0), &[1, 0], &[1, 3]).unwrap(),
        Values::Int(vec![3, 4, 5])
    );
    let mut d = f.into_dataset();
    d.name = "t".into();
    assert_eq!(d.dims, ds.dims);
    let e = ClassicFile::open(&dir.join("missing.nc")).unwrap_err();
    assert!(e.to_string().starts_with("cannot open the file"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_reads_headers_longer_than_the_first_prefix() {
    // about 100 KB of header: more than the first 64 KiB read
    let mut b = B::new().dim("x", 2).var("v", Int, &["x"]);
    for i in 0..4000 {
        b = b.att("v", &format!("attribute_number_{i}"), Values::Int(vec![i]));
    }
    let ds = b.data("v", Values::Int(vec![7, 8])).build();
    let dir = common::scratch("longhdr");
    let p = dir.join("h.nc");
    write_file(&p, &ds, &InMemory, &WriteOptions::default()).unwrap();
    let f = ClassicFile::open(&p).unwrap();
    assert!(f.header().header_size > 64 * 1024);
    assert_eq!(f.dataset().vars[0].atts.len(), 4000);
    assert_eq!(
        f.read_slab(VarId(0), &[0], &[2]).unwrap(),
        Values::Int(vec![7, 8])
    );
    let small = nc_classic::Limits {
        max_header_bytes: 70_000,
    };
    let e = ClassicFile::open_with(&p, &small).unwrap_err();
    assert_eq!(
        e.to_string(),
        "header needs more than 70000 bytes; raise Limits::max_header_bytes if the file is genuine"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_reports_absurd_counts_against_the_whole_file() {
    let ds = B::new().dim("x", 2).var("v", Int, &["x"]).build();
    let mut bytes = Vec::new();
    write_to(&mut bytes, &ds, &InMemory, &WriteOptions::default()).unwrap();
    // a 200 KB file whose dimension count is absurd
    bytes[12..16].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    bytes.resize(200_000, 0);
    let dir = common::scratch("absurd");
    let p = dir.join("a.nc");
    std::fs::write(&p, &bytes).unwrap();
    let e = ClassicFile::open(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        "header says 2147418112 dimensions (elements from byte 16), needing at least 17179344896 bytes, but only 199984 remain (corrupt header?)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn data_source_finds_variables_of_a_subset_by_name() {
    let ds = B::new()
        .dim("x", 2)
        .var("a", Int, &["x"])
        .var("b", Short, &["x"])
        .data("a", values(Int, 2))
        .data("b", Values::Short(vec![5, 6]))
        .build();
    let mut out = Vec::new();
    write_to(&mut out, &ds, &InMemory, &WriteOptions::default()).unwrap();
    let f = ClassicFile::from_bytes(out).unwrap();
    // a copy holding only "b", as `nccopy -V b` would build
    let sub = B::new().dim("x", 2).var("b", Short, &["x"]).build();
    assert_eq!(
        f.read(&sub, VarId(0), Slab::new(&[0], &[2])).unwrap(),
        Values::Short(vec![5, 6])
    );
    let mut copy = Vec::new();
    write_to(&mut copy, &sub, &f, &WriteOptions::default()).unwrap();
    let g = ClassicFile::from_bytes(copy).unwrap();
    assert_eq!(
        g.read_slab(VarId(0), &[0], &[2]).unwrap(),
        Values::Short(vec![5, 6])
    );
}
