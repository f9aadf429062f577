//! Malformed and unusual input: every failure is a clear error, never a panic or a huge
//! allocation. Inputs are made by our writer and then edited at known header positions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::B;
use nc_classic::{parse_header, write_to, ClassicError, ClassicFile, WriteOptions};
use nc_dataset::AtomicType::{Int, Short};
use nc_dataset::Slab;
use nc_dataset::{DataSource, Dataset, Format, InMemory, Values, VarId};

fn bytes_of(ds: &Dataset, format: Format) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = WriteOptions {
        format,
        ..Default::default()
    };
    write_to(&mut out, ds, &InMemory, &opts).unwrap();
    out
}

fn err_text(bytes: &[u8]) -> String {
    match parse_header(bytes) {
        Ok(_) => "no error".into(),
        Err(e) => e.to_string(),
    }
}

/// Replace 4 bytes at `at` with big-endian `v`.
fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// A small file: dims x=3, t=unlimited (2 records); var "a" short(x), var "r" int(t, x).
fn sample() -> Dataset {
    B::new()
        .dim("x", 3)
        .unlim("t", 2)
        .var("a", Short, &["x"])
        .att("a", "units", Values::Char(b"m".to_vec()))
        .var("r", Int, &["t", "x"])
        .data("a", Values::Short(vec![1, 2, 3]))
        .data("r", Values::Int(vec![1, 2, 3, 4, 5, 6]))
        .build()
}

// Header offsets of sample() in CDF-1:
// 0 magic, 4 numrecs, 8 NC_DIMENSION, 12 ndims=2, 16 "x"(len 4 + 4), 24 len 3,
// 28 "t"(8), 36 len 0, 40 gatt ABSENT (8), 48 NC_VARIABLE, 52 nvars=2,
// 56 name "a" (8), 64 ndims=1, 68 dimid 0, 72 NC_ATTRIBUTE, 76 natts=1, 80 "units" (4+8),
// 92 type char, 96 nelems 1, 100 "m" padded, 104 type short, 108 vsize 8, 112 begin,
// 116 name "r" (8), 124 ndims 2, 128 dimid 1, 132 dimid 0, 136 ABSENT (8), 144 type int,
// 148 vsize 12, 152 begin, 156 end of header.

#[test]
fn sample_offsets_are_as_documented() {
    let b = bytes_of(&sample(), Format::Classic);
    let (_, h) = parse_header(&b).unwrap();
    assert_eq!(h.header_size, 156);
    assert_eq!(h.vars[0].begin, 156);
    assert_eq!(h.vars[1].begin, 164);
    assert_eq!(h.recsize, 12);
    assert_eq!(h.numrecs, 2);
    assert_eq!(b.len(), 164 + 24);
    assert_eq!(&b[100..101], b"m");
}

#[test]
fn bad_magic() {
    assert_eq!(
        err_text(b"HDF\x01\0\0\0\0"),
        "not a classic netCDF file: first bytes are [48, 44, 46, 01], expected \"CDF\" then 1, 2 or 5"
    );
    assert_eq!(
        err_text(b"CDF\x03\0\0\0\0"),
        "not a classic netCDF file: first bytes are [43, 44, 46, 03], expected \"CDF\" then 1, 2 or 5"
    );
    assert_eq!(
        err_text(b""),
        "not a classic netCDF file: first bytes are [], expected \"CDF\" then 1, 2 or 5"
    );
    assert_eq!(
        err_text(b"CD"),
        "not a classic netCDF file: first bytes are [43, 44], expected \"CDF\" then 1, 2 or 5"
    );
}

#[test]
fn every_truncation_of_the_header_is_an_error() {
    for f in [Format::Classic, Format::Offset64, Format::Cdf5] {
        let b = bytes_of(&sample(), f);
        let (_, h) = parse_header(&b).unwrap();
        for n in 0..h.header_size as usize {
            let r = parse_header(&b[..n]);
            assert!(r.is_err(), "{f:?}: prefix {n} parsed");
        }
    }
    let b = bytes_of(&sample(), Format::Classic);
    assert_eq!(
        err_text(&b[..150]),
        "header ends early while reading vsize: needed 4 bytes at byte 148, the file has 150 bytes (truncated copy?)"
    );
}

#[test]
fn absurd_counts_are_refused() {
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 12, 0x7fff_ffff);
    assert_eq!(
        err_text(&b),
        "header says 2147483647 dimensions (elements from byte 16), needing at least 17179869176 bytes, but only 172 remain (corrupt header?)"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 96, 0xffff_fff0);
    assert!(err_text(&b).starts_with("header says 4294967280 attribute values"));
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 16, 0xffff_fff0);
    assert!(err_text(&b).starts_with("header says 4294967280 name bytes"));
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 124, 0x4000_0000);
    assert!(err_text(&b).starts_with("header says 1073741824 dimension ids"));
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 52, 0x1000_0000);
    assert!(err_text(&b).starts_with("header says 268435456 variables"));
}

#[test]
fn cdf5_absurd_64_bit_counts() {
    let mut b = bytes_of(&sample(), Format::Cdf5);
    // CDF-5: magic 4, numrecs 8, tag 4, ndims 8 at byte 16
    b[16..24].copy_from_slice(&u64::MAX.to_be_bytes());
    assert!(err_text(&b).starts_with("header says 18446744073709551615 dimensions"));
}

#[test]
fn non_utf8_and_empty_names() {
    let mut b = bytes_of(&sample(), Format::Classic);
    b[20] = 0xff; // the name "x"
    assert_eq!(err_text(&b), "name at byte 16 is invalid: it is not UTF-8");
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 16, 0);
    // empty name, then the padding bytes are read as the length
    assert_eq!(err_text(&b), "name at byte 16 is invalid: it is empty");
}

#[test]
fn bad_tags_absent_lists_and_types() {
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 8, 0x0B);
    assert_eq!(
        err_text(&b),
        "bad dimension list tag 0x0000000b at byte 8: expected 0xa or 0 (ABSENT)"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 44, 1);
    assert_eq!(
        err_text(&b),
        "attribute list at byte 40 is marked ABSENT but has count 1"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 104, 7);
    assert_eq!(
        err_text(&b),
        "variable \"a\": type code 7 at byte 104 is not valid in CDF-1"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 92, 0);
    assert_eq!(
        err_text(&b),
        "variable attribute \"units\": type code 0 at byte 92 is not valid in CDF-1"
    );
}

#[test]
fn bad_dimension_ids_and_unlimited_rules() {
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 68, 2);
    assert_eq!(
        err_text(&b),
        "variable \"a\": dimension id 2 does not exist (the file has 2 dimensions)"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 128, 0);
    put_u32(&mut b, 132, 1);
    assert_eq!(
        err_text(&b),
        "variable \"r\": the unlimited dimension must be the first dimension"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 24, 0);
    assert_eq!(
        err_text(&b),
        "dimensions \"x\" and \"t\" are both unlimited; classic files allow one unlimited dimension (use netCDF-4)"
    );
}

#[test]
fn overlapping_begins() {
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 112, 100);
    assert_eq!(
        err_text(&b),
        "variable \"a\": data at byte 100 overlaps the header (which ends at byte 156); corrupt header?"
    );
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 152, 160);
    assert_eq!(
        err_text(&b),
        "variable \"r\": data at byte 160 overlaps variable \"a\" (which ends at byte 164); corrupt header?"
    );
}

#[test]
fn data_past_end_of_file() {
    let b = bytes_of(&sample(), Format::Classic);
    let f = ClassicFile::from_bytes(b[..180].to_vec()).unwrap();
    let ds = f.dataset().clone();
    assert_eq!(
        f.read(&ds, VarId(0), Slab::new(&[0], &[3])).unwrap(),
        Values::Short(vec![1, 2, 3])
    );
    assert_eq!(
        f.read(&ds, VarId(1), Slab::new(&[0, 0], &[1, 3])).unwrap(),
        Values::Int(vec![1, 2, 3])
    );
    let e = f.read_slab(VarId(1), &[1, 0], &[1, 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "variable \"r\": data up to byte 188 is needed but the file has 180 bytes (truncated copy?)"
    );
}

#[test]
fn hyperslab_checks() {
    let f = ClassicFile::from_bytes(bytes_of(&sample(), Format::Classic)).unwrap();
    let e = f.read_slab(VarId(1), &[1, 1], &[2, 1]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "variable \"r\": hyperslab start [1, 1] count [2, 1] is outside its shape [2, 3]"
    );
    assert!(matches!(
        f.read_slab(VarId(7), &[], &[]),
        Err(ClassicError::NoSuchVar(7))
    ));
    assert_eq!(
        f.read_slab(VarId(1), &[0, 1], &[2, 2]).unwrap(),
        Values::Int(vec![2, 3, 5, 6])
    );
    assert_eq!(
        f.read_slab(VarId(1), &[0, 0], &[0, 3]).unwrap(),
        Values::Int(vec![])
    );
}

#[test]
fn streaming_numrecs_is_computed_from_the_file_length() {
    let mut b = bytes_of(&sample(), Format::Classic);
    put_u32(&mut b, 4, 0xffff_ffff);
    // a partial third record does not count
    b.extend_from_slice(&[0, 0, 0, 9, 0]);
    let f = ClassicFile::from_bytes(b).unwrap();
    assert!(f.header().streaming);
    assert_eq!(f.header().numrecs, 2);
    assert_eq!(f.dataset().dims[1].len, 2);
    assert_eq!(
        f.read_slab(VarId(1), &[0, 0], &[2, 3]).unwrap(),
        Values::Int(vec![1, 2, 3, 4, 5, 6])
    );
}

#[test]
fn absent_lists_read_as_empty() {
    let ds = B::new().build();
    let b = bytes_of(&ds, Format::Classic);
    let (back, h) = parse_header(&b).unwrap();
    assert_eq!(h.header_size, 32);
    assert!(back.dims.is_empty() && back.vars.is_empty() && back.groups[0].atts.is_empty());
    // NC_DIMENSION with zero elements is also accepted
    let mut b2 = b[..32].to_vec();
    put_u32(&mut b2, 8, 0x0A);
    assert!(parse_header(&b2).is_ok());
}

/// Every single-byte change of the header gives Ok or an error, never a panic.
#[test]
fn header_byte_mutations_never_panic() {
    for f in [Format::Classic, Format::Offset64, Format::Cdf5] {
        let b = bytes_of(&sample(), f);
        let (_, h) = parse_header(&b).unwrap();
        for i in 0..h.header_size as usize {
            for v in [0u8, 1, 0x7f, 0x80, 0xff, b[i].wrapping_add(1)] {
                let mut m = b.clone();
                m[i] = v;
                if let Ok(file) = ClassicFile::from_bytes(m) {
                    let ds = file.dataset().clone();
                    for (k, _) in ds.vars.iter().enumerate() {
                        let shape = file.header().vars[k].shape.clone();
                        let total: Option<u64> =
                            shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
                        if total.is_some_and(|t| t < 1 << 20) {
                            let _ =
                                file.read(&ds, VarId(k), Slab::new(&vec![0; shape.len()], &shape));
                        }
                    }
                }
            }
        }
    }
}
