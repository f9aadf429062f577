//! Byte-identical comparisons with netCDF-C 4.9.0's `ncgen -b -k classic|64-bit offset|cdf5`
//! (skipped when /usr/bin/ncgen is absent), each followed by a read-back round trip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{check_identical, B};
use nc_dataset::AtomicType::{self, *};
use nc_dataset::{Dataset, Format, Values};

const ALL3: [Format; 3] = [Format::Classic, Format::Offset64, Format::Cdf5];

fn all_kinds(name: &str, ds: &Dataset) {
    for f in ALL3 {
        check_identical(name, ds, f, false);
    }
}

fn all_kinds_both_fill(name: &str, ds: &Dataset) {
    for f in ALL3 {
        check_identical(name, ds, f, false);
        check_identical(&format!("{name}-nofill"), ds, f, true);
    }
}

fn classic_values(t: AtomicType, n: usize) -> Values {
    match t {
        Byte => Values::Byte((0..n).map(|i| i as i8 - 3).collect()),
        Char => Values::Char((0..n).map(|i| b'a' + (i % 26) as u8).collect()),
        Short => Values::Short((0..n).map(|i| i as i16 * 300 - 7).collect()),
        Int => Values::Int((0..n).map(|i| i as i32 * 100_000 - 5).collect()),
        Float => Values::Float((0..n).map(|i| i as f32 * 0.5 - 1.25).collect()),
        Double => Values::Double((0..n).map(|i| i as f64 * 0.25 + 1e10).collect()),
        UByte => Values::UByte((0..n).map(|i| (i * 7) as u8).collect()),
        UShort => Values::UShort((0..n).map(|i| (i * 1000) as u16).collect()),
        UInt => Values::UInt((0..n).map(|i| i as u32 * 3_000_000).collect()),
        Int64 => Values::Int64((0..n).map(|i| i as i64 * 10_000_000_000 - 1).collect()),
        UInt64 => Values::UInt64((0..n).map(|i| i as u64 * 10_000_000_000_000).collect()),
        String => panic!("no strings in classic files"),
    }
}

const CLASSIC: [AtomicType; 6] = [Byte, Char, Short, Int, Float, Double];
/// CDF-5 types ncgen 4.9.0 writes correctly for variables (int64 variables it writes as int).
const CDF5_VAR_OK: [AtomicType; 4] = [UByte, UShort, UInt, UInt64];

#[test]
fn empty_dataset() {
    all_kinds("empty", &B::new().build());
}

#[test]
fn dimensions_only() {
    let ds = B::new()
        .dim("x", 3)
        .dim("yy", 1)
        .unlim("t", 0)
        .dim("long_name_5", 12345)
        .build();
    all_kinds("dims-only", &ds);
}

#[test]
fn global_attributes_of_all_classic_types() {
    let mut b = B::new();
    for (i, t) in CLASSIC.iter().enumerate() {
        for n in [1usize, 2, 3, 5] {
            b = b.att("", &format!("a{i}_{n}"), classic_values(*t, n));
        }
    }
    let ds = b.att("", "empty_text", Values::Char(vec![0])).build();
    all_kinds("gatts", &ds);
}

#[test]
fn cdf5_attributes_of_all_types() {
    let mut b = B::new().var("v", Int, &[]);
    for (i, t) in CLASSIC
        .iter()
        .chain(&[UByte, UShort, UInt, Int64, UInt64])
        .enumerate()
    {
        b = b.att("", &format!("g{i}"), classic_values(*t, 3));
        b = b.att("v", &format!("a{i}"), classic_values(*t, 1 + i % 4));
    }
    check_identical("cdf5-atts", &b.build(), Format::Cdf5, false);
}

#[test]
fn scalars_of_each_classic_type() {
    let mut b = B::new();
    for t in CLASSIC {
        b = b.var(&format!("s_{}", t.cdl_name()), t, &[]);
    }
    // some with data, some without (fill)
    let ds = b
        .data("s_short", Values::Short(vec![7]))
        .data("s_double", Values::Double(vec![-2.5]))
        .data("s_char", Values::Char(b"z".to_vec()))
        .build();
    all_kinds_both_fill("scalars", &ds);
}

#[test]
fn cdf5_scalars_and_arrays() {
    let mut b = B::new().dim("n", 3).dim("m", 5);
    for t in CDF5_VAR_OK {
        b = b.var(&format!("s_{}", t.cdl_name()), t, &[]);
        b = b.var(&format!("a_{}", t.cdl_name()), t, &["n"]);
        b = b.var(&format!("m_{}", t.cdl_name()), t, &["m", "n"]);
    }
    for t in CDF5_VAR_OK {
        b = b.data(&format!("a_{}", t.cdl_name()), classic_values(t, 3));
        b = b.data(&format!("m_{}", t.cdl_name()), classic_values(t, 15));
    }
    let ds = b.build();
    check_identical("cdf5-types", &ds, Format::Cdf5, false);
    check_identical("cdf5-types-nofill", &ds, Format::Cdf5, true);
}

#[test]
fn cdf5_record_variables() {
    let mut b = B::new().unlim("t", 3).dim("n", 3);
    for t in CDF5_VAR_OK {
        b = b.var(&format!("r_{}", t.cdl_name()), t, &["t", "n"]);
    }
    b = b.var("ub", UByte, &["t"]);
    for t in CDF5_VAR_OK {
        b = b.data(&format!("r_{}", t.cdl_name()), classic_values(t, 9));
    }
    check_identical("cdf5-recs", &b.build(), Format::Cdf5, false);
    let single = B::new()
        .unlim("t", 5)
        .var("u", UShort, &["t"])
        .data("u", classic_values(UShort, 5))
        .build();
    check_identical("cdf5-single-ushort", &single, Format::Cdf5, false);
}

#[test]
fn odd_length_fixed_arrays_pad_with_fill() {
    for n in [1u64, 2, 3, 5, 7] {
        let mut b = B::new().dim("n", n);
        for t in CLASSIC {
            b = b.var(&format!("v_{}", t.cdl_name()), t, &["n"]);
        }
        for t in CLASSIC {
            b = b.data(
                &format!("v_{}", t.cdl_name()),
                classic_values(t, n as usize),
            );
        }
        all_kinds_both_fill(&format!("odd-{n}"), &b.build());
    }
}

#[test]
fn partial_data_and_custom_fill_values() {
    let ds = B::new()
        .dim("n", 7)
        .var("a", Short, &["n"])
        .att("a", "units", Values::Char(b"m".to_vec()))
        .att("a", "_FillValue", Values::Short(vec![7]))
        .var("b", Byte, &["n"])
        .att("b", "_FillValue", Values::Byte(vec![-1]))
        .var("c", Double, &["n"])
        .att("c", "_FillValue", Values::Double(vec![-999.0]))
        .att("c", "valid_max", Values::Double(vec![100.0]))
        .data("a", Values::Short(vec![1, 2, 3]))
        .data("b", Values::Byte(vec![4]))
        .build();
    all_kinds_both_fill("fillvalues", &ds);
}

#[test]
fn multi_dimensional() {
    let ds = B::new()
        .dim("x", 3)
        .dim("y", 5)
        .dim("z", 2)
        .var("a", Int, &["x", "y", "z"])
        .var("b", Byte, &["y", "x"])
        .var("c", Float, &["z", "x"])
        .data("a", classic_values(Int, 30))
        .data("b", classic_values(Byte, 15))
        .data("c", classic_values(Float, 6))
        .build();
    all_kinds("multidim", &ds);
}

#[test]
fn record_variables_zero_records() {
    let ds = B::new()
        .unlim("t", 0)
        .dim("n", 3)
        .var("fixed", Short, &["n"])
        .var("r1", Int, &["t"])
        .var("r2", Byte, &["t", "n"])
        .build();
    all_kinds_both_fill("recs-0", &ds);
}

#[test]
fn single_record_variable_byte_short_char_is_not_padded() {
    for t in [Byte, Short, Char, Int, Double] {
        for numrecs in [1u64, 2, 3, 5] {
            let ds = B::new()
                .unlim("t", numrecs)
                .var("r", t, &["t"])
                .data("r", classic_values(t, numrecs as usize))
                .build();
            all_kinds(&format!("single-rec-{}-{numrecs}", t.cdl_name()), &ds);
            let ds2 = B::new()
                .unlim("t", numrecs)
                .dim("n", 3)
                .var("fixed", Byte, &["n"])
                .var("r", t, &["t", "n"])
                .data("r", classic_values(t, 3 * numrecs as usize))
                .build();
            all_kinds(&format!("single-rec-3-{}-{numrecs}", t.cdl_name()), &ds2);
        }
    }
}

#[test]
fn several_record_variables() {
    let ds = B::new()
        .dim("n", 3)
        .unlim("time", 4)
        .dim("m", 2)
        .var("time", Double, &["time"])
        .var("b", Byte, &["time"])
        .var("s", Short, &["time", "n"])
        .var("fixed", Char, &["n"])
        .var("c", Char, &["time", "m"])
        .var("f", Float, &["time", "m", "n"])
        .data("time", classic_values(Double, 4))
        .data("b", classic_values(Byte, 3))
        .data("s", classic_values(Short, 12))
        .data("fixed", Values::Char(b"ab".to_vec()))
        .data("f", classic_values(Float, 24))
        .build();
    all_kinds_both_fill("recs", &ds);
}

#[test]
fn per_variable_nofill() {
    let mut ds = B::new()
        .dim("n", 3)
        .unlim("t", 2)
        .var("a", Short, &["n"])
        .var("b", Short, &["t"])
        .var("c", Short, &["t"])
        .var("e", Byte, &["n"])
        .data("a", Values::Short(vec![5, 6]))
        .data("c", Values::Short(vec![1, 2]))
        .build();
    ds.vars[0].storage.no_fill = Some(true);
    ds.vars[1].storage.no_fill = Some(true);
    ds.vars[3].storage.no_fill = Some(true);
    // fill mode only: in -x mode everything is unfilled anyway
    for f in ALL3 {
        check_identical("var-nofill", &ds, f, false);
    }
}

#[test]
fn names_odd_lengths_and_utf8_nfc() {
    // "é" decomposed (e + U+0301) must be stored composed (U+00E9), as netCDF-C does
    let decomposed = "caf\u{65}\u{301}";
    let ds = B::new()
        .dim("a", 1)
        .dim("ab", 2)
        .dim("abc", 3)
        .dim("abcd", 4)
        .dim("abcde", 5)
        .dim("Ωmega", 2)
        .var(decomposed, Int, &["abc"])
        .att(decomposed, "ünits", Values::Char("m²".as_bytes().to_vec()))
        .var("x-1.y+z@w", Byte, &["abcde", "a"])
        .var("日本語", Short, &["Ωmega"])
        .att("", "général", Values::Int(vec![1]))
        .build();
    all_kinds("names", &ds);
    let mine = common::ours(
        &ds,
        &nc_classic::WriteOptions {
            format: Format::Classic,
            ..Default::default()
        },
    );
    let file = nc_classic::ClassicFile::from_bytes(mine).unwrap();
    assert_eq!(file.dataset().vars[0].name, "caf\u{e9}");
}

#[test]
fn many_attributes_and_variables() {
    let mut b = B::new().dim("n", 2).unlim("t", 2);
    for i in 0..40 {
        let t = CLASSIC[i % 6];
        let name = format!("v{}", "x".repeat(i % 9));
        let name = format!("{name}{i}");
        if i % 3 == 0 {
            b = b.var(&name, t, &["t", "n"]);
        } else {
            b = b.var(&name, t, &["n"]);
        }
        for k in 0..(i % 5) {
            b = b.att(
                &name,
                &format!("att{k}"),
                classic_values(CLASSIC[k % 6], k + 1),
            );
        }
    }
    b = b.data("v0", classic_values(Byte, 4));
    all_kinds("many", &b.build());
}

#[test]
fn big_fixed_variable_streams_in_slabs() {
    // 40 MB of doubles: larger than one write slab; ncgen fills it
    let ds = B::new()
        .dim("n", 5_000_000)
        .var("big", Double, &["n"])
        .var("after", Short, &[])
        .data("after", Values::Short(vec![3]))
        .build();
    check_identical("bigfixed", &ds, Format::Offset64, false);
}

#[test]
fn big_records_stream_in_slabs() {
    // 4.8 MB per record: larger than one write slab
    let ds = B::new()
        .unlim("t", 2)
        .dim("n", 600_000)
        .var("r", Double, &["t", "n"])
        .var("s", Byte, &["t"])
        .data("s", Values::Byte(vec![1, 2]))
        .build();
    check_identical("bigrec", &ds, Format::Classic, false);
}

#[test]
fn many_small_records_batch() {
    let n = 100_000usize;
    let ds = B::new()
        .unlim("t", n as u64)
        .var("time", Int, &["t"])
        .var("b", Byte, &["t"])
        .data("time", Values::Int((0..n as i32).collect()))
        .data("b", Values::Byte((0..n).map(|i| i as i8).collect()))
        .build();
    check_identical("manyrecs", &ds, Format::Classic, false);
}

#[test]
fn headers_larger_than_netcdf_c_io_chunk() {
    // netCDF-C writes a header over 8192 bytes in 8192-byte chunks: the file is at least the
    // header rounded up to 8192
    for natts in [300usize, 330, 340, 400, 800, 1500] {
        let mut b = B::new().dim("d", 3).var("v", Int, &["d"]);
        for i in 0..natts {
            b = b.att("v", &format!("att{i}"), Values::Int(vec![i as i32]));
        }
        let small = b.data("v", Values::Int(vec![1, 2, 3])).build();
        all_kinds_both_fill(&format!("bighdr-{natts}"), &small);
        let mut big_data = small.clone();
        let n = big_data.dims[0].len;
        big_data.dims[0].len = 5000;
        big_data.vars[0].data = Some(Values::Int((0..5000).collect()));
        assert_eq!(n, 3);
        all_kinds(&format!("bighdr-data-{natts}"), &big_data);
    }
}
