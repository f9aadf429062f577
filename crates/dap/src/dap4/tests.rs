//! Decoding hand-built responses: values, byte orders, checksums, netCDF-C's structure and
//! opaque quirks, and refusals of truncated, corrupt or hostile inputs.

use nc_dataset::{AtomicType, NcString, NcType, UserTypeKind, Values};

use super::chunk::{LAST_CHUNK, LITTLE_ENDIAN_CHUNK, NO_CHECKSUM_CHUNK};
use super::crc32;
use super::{open_response, open_response_with, Dap4Options};
use crate::{DapData, DapError};

/// Builds a response: the DMR chunk, then each variable's bytes (and its CRC-32 unless the
/// first header says there are none) in one last data chunk.
struct Response {
    flags: u8,
    dmr: String,
    data: Vec<u8>,
}

impl Response {
    fn new(flags: u8, body: &str) -> Response {
        Response {
            flags,
            dmr: format!("<?xml version=\"1.0\"?>\n<Dataset name=\"t\" dapVersion=\"4.0\" dmrVersion=\"1.0\">{body}</Dataset>"),
            data: Vec::new(),
        }
    }

    fn var(mut self, bytes: &[u8]) -> Response {
        self.data.extend_from_slice(bytes);
        if self.flags & NO_CHECKSUM_CHUNK == 0 {
            let c = crc32(bytes);
            let b = if self.flags & LITTLE_ENDIAN_CHUNK != 0 {
                c.to_le_bytes()
            } else {
                c.to_be_bytes()
            };
            self.data.extend_from_slice(&b);
        }
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut dmr = self.dmr.clone().into_bytes();
        dmr.extend_from_slice(b"\r\n");
        let mut out = super::chunk::tests::chunk(self.flags, &dmr);
        out.extend(super::chunk::tests::chunk(LAST_CHUNK, &self.data));
        out
    }
}

fn le_count(n: u64) -> [u8; 8] {
    n.to_le_bytes()
}

fn values_of(ds: &nc_dataset::Dataset, data: &DapData, name: &str) -> Values {
    let v = ds
        .all_vars()
        .into_iter()
        .find(|&v| ds.var(v).name == name)
        .unwrap();
    data.values
        .iter()
        .find(|(id, _)| *id == v)
        .map(|(_, x)| x.clone())
        .unwrap()
}

#[test]
fn big_endian_atomics_without_checksums() {
    let mut d = Vec::new();
    d.extend_from_slice(&[0x01, 0x02, 0xff, 0xfe]); // v16 = 258, -2
    d.extend_from_slice(&1.5f64.to_be_bytes());
    let r = Response::new(
        NO_CHECKSUM_CHUNK,
        r#"<Dimension name="d" size="2"/><Int16 name="v16"><Dim name="/d"/></Int16><Float64 name="x"/><String name="s"/>"#,
    )
    .var(&d)
    .var(&[0, 0, 0, 0, 0, 0, 0, 2, b'h', b'i']);
    let (ds, data, warnings) = open_response(&r.bytes(), "file:///x/t.nc").unwrap();
    assert!(warnings.is_empty());
    assert_eq!(ds.name, "t");
    assert_eq!(values_of(&ds, &data, "v16"), Values::Short(vec![258, -2]));
    assert_eq!(values_of(&ds, &data, "x"), Values::Double(vec![1.5]));
    assert_eq!(
        values_of(&ds, &data, "s"),
        Values::String(vec![Some(NcString::from("hi"))])
    );
}

#[test]
fn checksums_are_verified_and_name_the_variable() {
    let good = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Group name="g"><Int32 name="a"/></Group>"#,
    )
    .var(&7i32.to_le_bytes());
    let (ds, data, _) = open_response(&good.bytes(), "u").unwrap();
    assert_eq!(values_of(&ds, &data, "a"), Values::Int(vec![7]));
    let mut bad = good.bytes();
    let n = bad.len();
    bad[n - 5] ^= 1; // the value's last byte
    match open_response(&bad, "u") {
        Err(DapError::Checksum { variable, url }) => {
            assert_eq!(variable, "/g/a");
            assert_eq!(url, "u");
        }
        other => panic!("{other:?}"),
    }
    // checksummode=ignore
    let opts = Dap4Options {
        verify_checksums: false,
        ..Dap4Options::default()
    };
    let (ds, data, _) = open_response_with(&bad, "u", &opts).unwrap();
    assert_eq!(values_of(&ds, &data, "a"), Values::Int(vec![7 ^ (1 << 24)]));
    // a _DAP4_Checksum_CRC32 attribute that disagrees with the data
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Int32 name="a"><Attribute name="_DAP4_Checksum_CRC32" type="UInt32"><Value value="12"/></Attribute></Int32>"#,
    )
    .var(&7i32.to_le_bytes());
    assert!(matches!(
        open_response(&r.bytes(), "u"),
        Err(DapError::Checksum { .. })
    ));
}

#[test]
fn structures_read_one_element_of_an_array_field_as_netcdf_c_does() {
    // Structure s { Int32 a[2]; Int16 b; }: netCDF-C fills a[0] from the data, leaves a[1]
    // zero, and reads b from the bytes right after a[0]
    let mut d = Vec::new();
    d.extend_from_slice(&10i32.to_le_bytes());
    d.extend_from_slice(&11i32.to_le_bytes());
    d.extend_from_slice(&12i16.to_le_bytes());
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Structure name="s"><Int32 name="a"><Dim size="2"/></Int32><Int16 name="b"/></Structure>"#,
    )
    .var(&d);
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    assert_eq!(
        values_of(&ds, &data, "s"),
        Values::Compound(vec![vec![
            Values::Int(vec![10, 0]),
            Values::Short(vec![11])
        ]])
    );
    let NcType::User(t) = ds.var(ds.all_vars()[0]).ty else {
        panic!()
    };
    assert_eq!(ds.user_type(t).name, "s_t");
    match &ds.user_type(t).kind {
        UserTypeKind::Compound { fields, .. } => {
            assert_eq!(fields[0].dims, [2]);
            assert_eq!(fields[1].ty, NcType::Atomic(AtomicType::Short));
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn sequences_are_vlens_of_compounds() {
    let mut d = le_count(2).to_vec();
    for (i, s) in [(1i32, 2i16), (3, 4)] {
        d.extend_from_slice(&i.to_le_bytes());
        d.extend_from_slice(&s.to_le_bytes());
    }
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Sequence name="q"><Int32 name="i"/><Int16 name="h"/></Sequence>"#,
    )
    .var(&d);
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    let names: Vec<&str> = ds.types.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["q_base_t", "q_t"]);
    assert_eq!(
        values_of(&ds, &data, "q"),
        Values::Vlen(vec![Values::Compound(vec![
            vec![Values::Int(vec![1]), Values::Short(vec![2])],
            vec![Values::Int(vec![3]), Values::Short(vec![4])],
        ])])
    );
}

#[test]
fn opaques_take_the_one_fixed_size() {
    let mut d = le_count(2).to_vec();
    d.extend_from_slice(&[0xab, 0xcd]);
    d.extend_from_slice(&le_count(17));
    d.extend_from_slice(&[7; 17]);
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Opaque name="o" _edu.ucar.opaque.size="2"><Dim size="2"/></Opaque>"#,
    )
    .var(&d);
    let (ds, data, warnings) = open_response(&r.bytes(), "u").unwrap();
    assert_eq!(ds.types[0].name, "opaque16_t");
    let mut want = vec![0u8; 32];
    want[..2].copy_from_slice(&[0xab, 0xcd]);
    want[16..].copy_from_slice(&[7; 16]);
    assert_eq!(
        values_of(&ds, &data, "o"),
        Values::Opaque {
            size: 16,
            bytes: want
        }
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("2 opaque value(s)"), "{warnings:?}");
}

#[test]
fn attributes_enums_and_fill_value_mismatch() {
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Enumeration name="e" basetype="UInt8"><EnumConst name="a" value="1"/><EnumConst name="b" value="258"/></Enumeration>
<Enum name="v" enum="/e"><Attribute name="_FillValue" type="/e"><Value value="b"/></Attribute></Enum>
<UInt32 name="u"><Attribute name="_FillValue" type="Int16"><Value value="17"/></Attribute><Attribute name="_edu.ucar.x" type="Int8" value="1"/></UInt32>
<Attribute name="c" type="Char"><Value>xy</Value><Value value="z"/></Attribute>
<Attribute name="s" type="String"><Value>a&amp;b\c</Value></Attribute>
<Attribute name="_DAP4_Little_Endian" type="UInt8" value="1"/>"#,
    )
    .var(&[2])
    .var(&5u32.to_le_bytes());
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    let e = &ds.types[0];
    match &e.kind {
        UserTypeKind::Enum { base, members } => {
            assert_eq!(*base, AtomicType::UByte);
            assert_eq!(members[1].value, 2); // 258 as a ubyte
        }
        k => panic!("{k:?}"),
    }
    let vars = ds.all_vars();
    let v = ds.var(vars[0]);
    assert_eq!(v.atts[0].values, Values::UByte(vec![2]));
    assert!(matches!(v.atts[0].ty, NcType::User(_)));
    let u = ds.var(vars[1]);
    assert_eq!(u.atts.len(), 1);
    assert_eq!(u.atts[0].values, Values::UInt(vec![17]));
    let g = &ds.group(nc_dataset::ROOT).atts;
    assert_eq!(g.len(), 2);
    assert_eq!(g[0].values, Values::Char(b"xz".to_vec()));
    // netCDF-C entity-escapes the decoded text again and drops backslashes
    assert_eq!(
        g[1].values,
        Values::String(vec![Some(NcString::from("a&amp;bc"))])
    );
    assert_eq!(values_of(&ds, &data, "u"), Values::UInt(vec![5]));
}

#[test]
fn a_bare_dmr_gives_metadata_only() {
    let dmr = br#"<?xml version="1.0"?><Dataset name="d"><Int32 name="a"/></Dataset>"#;
    let (ds, data, warnings) = open_response(dmr, "file:///p/d.dmr").unwrap();
    assert_eq!(ds.vars.len(), 1);
    assert!(data.values.is_empty());
    assert_eq!(warnings.len(), 1);
}

#[test]
fn server_errors_are_reported() {
    let mut r = super::chunk::tests::chunk(LITTLE_ENDIAN_CHUNK, b"<Dataset name=\"x\"/>\n");
    r.extend(super::chunk::tests::chunk(
        LAST_CHUNK | 2,
        br#"<Error httpcode="404"><Message>no such variable</Message></Error>"#,
    ));
    match open_response(&r, "u") {
        Err(DapError::Server { code, message, .. }) => {
            assert_eq!(code, "404");
            assert_eq!(message, "no such variable");
        }
        other => panic!("{other:?}"),
    }
    let e = br#"<?xml version="1.0"?><Error><Message>bad</Message></Error>"#;
    assert!(matches!(
        open_response(e, "u"),
        Err(DapError::Server { .. })
    ));
}

#[test]
fn hostile_counts_and_sizes_are_refused_before_allocating() {
    for (body, bytes) in [
        // a string claiming 2^60 bytes
        (r#"<String name="s"/>"#, le_count(1 << 60).to_vec()),
        // a sequence claiming 2^62 records
        (
            r#"<Sequence name="q"><Int32 name="i"/></Sequence>"#,
            le_count(1 << 62).to_vec(),
        ),
        // a dimension of 2^40 elements with 8 bytes of data
        (
            r#"<Int64 name="x"><Dim size="1099511627776"/></Int64>"#,
            vec![0; 8],
        ),
        // dimensions whose product overflows
        (
            r#"<Int8 name="x"><Dim size="4294967296"/><Dim size="4294967296"/></Int8>"#,
            vec![0; 8],
        ),
        // an empty structure repeated 2^40 times
        (
            r#"<Structure name="z"><Dim size="1099511627776"/></Structure>"#,
            vec![],
        ),
    ] {
        let r = Response::new(LITTLE_ENDIAN_CHUNK, body).var(&bytes);
        match open_response(&r.bytes(), "u") {
            Err(DapError::Malformed { url, what }) => {
                assert_eq!(url, "u");
                assert!(what.contains("variable"), "{what}");
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn truncated_and_corrupted_responses_never_panic() {
    let mut d = le_count(2).to_vec();
    d.extend_from_slice(&[1, 0, 0, 0, 2, 0]);
    d.extend_from_slice(&[3, 0, 0, 0, 4, 0]);
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Dimension name="d" size="2"/><Sequence name="q"><Int32 name="i"/><Int16 name="h"/><Dim name="/d"/></Sequence><String name="s"><Dim size="1"/></String><Structure name="t"><Opaque name="o"/><Float32 name="f"><Dim size="3"/></Float32></Structure>"#,
    )
    .var(&[d.clone(), le_count(0).to_vec()].concat())
    .var(&[le_count(3).to_vec(), b"abc".to_vec()].concat())
    .var(&[le_count(1).to_vec(), vec![9], vec![0; 12]].concat());
    let full = r.bytes();
    open_response(&full, "u").unwrap();
    for n in 0..full.len() {
        let e = open_response(&full[..n], "u");
        assert!(e.is_err(), "truncated to {n} bytes: {e:?}");
    }
    for i in 0..full.len() {
        for x in [0x01u8, 0x80, 0xff] {
            let mut c = full.clone();
            c[i] ^= x;
            let _ = open_response(&c, "u");
            let _ = open_response_with(
                &c,
                "u",
                &Dap4Options {
                    verify_checksums: false,
                    ..Dap4Options::default()
                },
            );
        }
    }
}

#[test]
fn many_variables_are_read_in_linear_time() {
    let n = 20_000;
    let mut body = String::from(r#"<Dimension name="d" size="1"/>"#);
    for i in 0..n {
        body.push_str(&format!(r#"<Int8 name="v{i}"><Dim name="/d"/></Int8>"#));
    }
    let mut r = Response::new(NO_CHECKSUM_CHUNK, &body);
    r.data = vec![5; n];
    let t = std::time::Instant::now();
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    assert_eq!(ds.vars.len(), n);
    assert_eq!(data.values.len(), n);
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

#[test]
fn structure_array_elements_start_where_the_data_puts_them() {
    // netCDF-C 4.9.0 prints s = {{1, 0}, 2}, {{4, 0}, 5}, {{7, 0}, 8}
    let d: Vec<u8> = (1i16..=9).flat_map(i16::to_le_bytes).collect();
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Structure name="s"><Int16 name="a"><Dim size="2"/></Int16><Int16 name="b"/><Dim size="3"/></Structure>"#,
    )
    .var(&d);
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    let rec = |a: i16, b: i16| vec![Values::Short(vec![a, 0]), Values::Short(vec![b])];
    assert_eq!(
        values_of(&ds, &data, "s"),
        Values::Compound(vec![rec(1, 2), rec(4, 5), rec(7, 8)])
    );
}

#[test]
fn a_long_opaque_leaves_its_tail_to_the_next_field() {
    // netCDF-C 4.9.0 prints s = {1, 0X000102..0F, 4368}: b is read from the opaque's bytes 16, 17
    let mut d = 1i32.to_le_bytes().to_vec();
    d.extend_from_slice(&le_count(18));
    d.extend((0u8..18).collect::<Vec<_>>());
    d.extend_from_slice(&5i16.to_le_bytes());
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Structure name="s"><Int32 name="i"/><Opaque name="o"/><Int16 name="b"/></Structure>"#,
    )
    .var(&d);
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    assert_eq!(
        values_of(&ds, &data, "s"),
        Values::Compound(vec![vec![
            Values::Int(vec![1]),
            Values::Opaque {
                size: 16,
                bytes: (0u8..16).collect()
            },
            Values::Short(vec![0x1110]),
        ]])
    );
}

#[test]
fn empty_dimensions_are_unlimited_and_enum_group_attributes_refused() {
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Int8 name="z"><Dim size="0"/></Int8>"#,
    )
    .var(&[]);
    let (ds, data, _) = open_response(&r.bytes(), "u").unwrap();
    assert_eq!(ds.dims[0].name, "_Anonymous0");
    assert!(ds.dims[0].unlimited);
    assert_eq!(values_of(&ds, &data, "z"), Values::Byte(vec![]));
    let r = Response::new(
        LITTLE_ENDIAN_CHUNK,
        r#"<Enumeration name="e" basetype="Int8"><EnumConst name="a" value="1"/></Enumeration><Attribute name="ge" type="/e" value="a"/>"#,
    );
    match open_response(&r.bytes(), "u") {
        Err(DapError::Malformed { what, .. }) => assert!(what.contains("ge"), "{what}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn crc32_known_values() {
    assert_eq!(crc32(b""), 0);
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    // one 0xff byte: the checksum test_atomic_types.nc.dap carries for vu8
    assert_eq!(crc32(&[0xff]), 0xFF00_0000);
}
