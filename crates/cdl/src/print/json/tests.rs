//! JSON printer tests: datasets from CDL text (through the parser of this crate), printed and
//! compared in full; every output is also parsed back with serde_json.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use nc_dataset::{InMemory, NcString, Values};

use super::*;
use crate::parse::{parse_cdl, ParseOptions};

fn ds(cdl: &str) -> Dataset {
    parse_cdl(cdl, "t.cdl", &ParseOptions::default()).unwrap()
}

fn json_with(ds: &Dataset, opts: &DumpOptions, slab: u64) -> String {
    let mut out = Vec::new();
    print_json_slabbed(ds, &InMemory, opts, &mut out, slab).unwrap();
    let text = String::from_utf8(out).unwrap();
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap_or_else(|e| panic!("not valid JSON ({e}):\n{text}"));
    text
}

fn json(ds: &Dataset) -> String {
    json_with(ds, &DumpOptions::default(), SLAB_BYTES)
}

/// The value of `"data"` of the root group's variable `name` (the `"data": ...` line after it).
fn data_of(text: &str, name: &str) -> String {
    let at = text
        .find(&format!("\n    \"{name}\": {{\n"))
        .unwrap_or_else(|| panic!("no variable {name} in\n{text}"));
    let rest = &text[at..];
    let d = rest.find("\n      \"data\": ").unwrap();
    rest[d + 15..].lines().next().unwrap().to_string()
}

#[test]
fn atomic_types_exact() {
    let d = ds(r#"netcdf a {
dimensions:
	n = 3 ;
variables:
	byte b(n) ;
	short s(n) ;
	int i(n) ;
	int64 l(n) ;
	uint64 ul(n) ;
	ubyte ub(n) ;
	ushort us(n) ;
	uint ui(n) ;
	float f(n) ;
	double d(n) ;
	double sc ;
data:
 b = -128, 0, 127 ;
 s = -32768, 1, 32767 ;
 i = -2147483648, 2, 2147483647 ;
 l = -9223372036854775808, 9007199254740993, 9223372036854775807 ;
 ul = 0, 18446744073709551615, 18446744073709551614 ;
 ub = 0, 1, 255 ;
 us = 0, 1, 65535 ;
 ui = 0, 1, 4294967295 ;
 f = 0.1, 1e30, -0. ;
 d = 0.1, 1e300, 5 ;
 sc = 2.5 ;
}"#);
    let t = json(&d);
    assert_eq!(data_of(&t, "b"), "[-128, 0, 127]");
    assert_eq!(data_of(&t, "s"), "[-32768, 1, 32767]");
    assert_eq!(data_of(&t, "i"), "[-2147483648, 2, 2147483647]");
    assert_eq!(
        data_of(&t, "l"),
        "[-9223372036854775808, 9007199254740993, 9223372036854775807]"
    );
    assert_eq!(
        data_of(&t, "ul"),
        "[0, 18446744073709551615, 18446744073709551614]"
    );
    assert_eq!(data_of(&t, "ub"), "[0, 1, 255]");
    assert_eq!(data_of(&t, "us"), "[0, 1, 65535]");
    assert_eq!(data_of(&t, "ui"), "[0, 1, 4294967295]");
    // shortest text that reads back as the same f32, always with a '.' or an exponent
    assert_eq!(data_of(&t, "f"), "[0.1, 1e+30, -0.0]");
    assert_eq!(data_of(&t, "d"), "[0.1, 1e+300, 5.0]");
    assert_eq!(data_of(&t, "sc"), "2.5");
    // each f32 text parses to the same f32
    for (x, s) in [
        (0.1f32, "0.1"),
        (1e30, "1e+30"),
        (16_777_217.0, "16777216.0"),
    ] {
        let mut o = Vec::new();
        value::push_f32(&mut o, x).unwrap();
        assert_eq!(String::from_utf8(o).unwrap(), s);
        assert_eq!(s.parse::<f64>().unwrap() as f32, x);
    }
}

#[test]
fn nan_and_infinities_are_strings() {
    let mut d =
        ds("netcdf n {\ndimensions:\n\tn = 6 ;\nvariables:\n\tfloat f(n) ;\n\tdouble d(n) ;\n}");
    let f = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7fc0_0001),
        1.0,
    ];
    let g = [
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7ff0_0000_0000_0001),
        1.0,
    ];
    d.vars[0].data = Some(Values::Float(f.to_vec()));
    d.vars[1].data = Some(Values::Double(g.to_vec()));
    d.vars[1]
        .atts
        .push(Attribute::new("r", Values::Double(vec![f64::NAN, 2.0])));
    d.vars[1]
        .atts
        .push(Attribute::new("ok", Values::Double(vec![2.0])));
    let t = json(&d);
    assert_eq!(
        data_of(&t, "f"),
        r#"["NaN", "-NaN", "Infinity", "-Infinity", "NaN(0x7fc00001)", 1.0]"#
    );
    assert_eq!(
        data_of(&t, "d"),
        r#"["NaN", "-NaN", "Infinity", "-Infinity", "NaN(0x7ff0000000000001)", 1.0]"#
    );
    // a double attribute with a NaN carries its type; a finite one is bare
    assert!(
        t.contains(r#""r": {"type": "double", "data": ["NaN", 2.0]}"#),
        "{t}"
    );
    assert!(t.contains(r#""ok": 2.0"#), "{t}");
}

#[test]
fn attributes_bare_only_where_json_tells_the_type() {
    let d = ds(r#"netcdf a {
variables:
	int v ;
		v:c = "K" ;
		v:i = 1, 2 ;
		v:i1 = 7 ;
		v:d = 1., 2.5 ;
		v:f = 1.f ;
		v:s = 1s ;
		v:b = -1b ;
		v:ub = 255UB ;
		v:us = 1US, 2US ;
		v:ui = 4294967295U ;
		v:l = -9223372036854775807LL ;
		v:ul = 18446744073709551615ULL ;
		string v:st = "x", "y" ;
		string v:st1 = "z" ;
		v:e = "" ;
data:
 v = 1 ;
}"#);
    let t = json(&d);
    let want = r#"      "attributes": {
        "c": "K",
        "i": [1, 2],
        "i1": 7,
        "d": [1.0, 2.5],
        "f": {"type": "float", "data": 1.0},
        "s": {"type": "short", "data": 1},
        "b": {"type": "byte", "data": -1},
        "ub": {"type": "ubyte", "data": 255},
        "us": {"type": "ushort", "data": [1, 2]},
        "ui": {"type": "uint", "data": 4294967295},
        "l": {"type": "int64", "data": -9223372036854775807},
        "ul": {"type": "uint64", "data": 18446744073709551615},
        "st": {"type": "string", "data": ["x", "y"]},
        "st1": {"type": "string", "data": "z"},
        "e": ""
      },"#;
    assert!(t.contains(want), "{t}");
}

#[test]
fn bytes_that_are_not_utf8_are_hex() {
    let mut d = ds(
        "netcdf u {\ndimensions:\n\tn = 2 ;\n\tl = 4 ;\nvariables:\n\tchar c(n, l) ;\n\tstring s(n) ;\n}",
    );
    d.vars[0].data = Some(Values::Char(b"ab\0\0\xe9t\0x".to_vec()));
    d.vars[1].data = Some(Values::String(vec![
        Some(NcString::from_bytes(b"x\xffy".to_vec())),
        None,
    ]));
    d.vars[0]
        .atts
        .push(Attribute::new("a", Values::Char(b"caf\xe9\0".to_vec())));
    d.vars[0]
        .atts
        .push(Attribute::new("z", Values::Char(b"K\0".to_vec())));
    d.vars[0]
        .atts
        .push(Attribute::new("m", Values::Char(b"a\0b\0\0".to_vec())));
    let t = json(&d);
    // trailing NULs of a row are padding (the dimension length restores them); interior ones stay
    assert_eq!(data_of(&t, "c"), r#"["ab", {"hex": "e9740078"}]"#);
    assert_eq!(data_of(&t, "s"), r#"[{"hex": "78ff79"}, null]"#);
    // attributes without their trailing NULs (C terminators, as every reader shows them)
    assert!(
        t.contains(r#""a": {"type": "char", "data": {"hex": "636166e9"}}"#),
        "{t}"
    );
    assert!(t.contains(r#""z": "K","#), "{t}");
    assert!(t.contains(r#""m": "a\u0000b""#), "{t}");
}

const USER_TYPES: &str = r#"netcdf u {
types:
  ubyte enum color {red = 0, green = 1, blue = 2} ;
  opaque(3) blob ;
  int(*) ints ;
  char(*) chars ;
  compound inner {
    short a ;
    char name(4) ;
  }; // inner
  compound rec {
    int id ;
    float xy(2) ;
    inner in ;
    color c ;
    ints seq ;
  }; // rec
dimensions:
	n = 2 ;
variables:
	color e(n) ;
		color e:_FillValue = blue ;
	blob o(n) ;
	ints v(n) ;
	chars cv ;
	rec r(n) ;
		rec r:att = {1, {2.5, -1}, {3, {"ab"}}, green, {4, 5}} ;

// global attributes:
		color :ga = red, green ;
data:
 e = red, green ;
 o = 0XA0B1C2, 0X000102 ;
 v = {1, 2, 3}, {} ;
 cv = {"hé"} ;
 r = {1, {2.5, -1}, {3, {"ab"}}, green, {4, 5}},
     {2, {0, 1e30}, {-3, {"abcd"}}, blue, {}} ;
}"#;

#[test]
fn user_defined_types() {
    let d = ds(USER_TYPES);
    let t = json(&d);
    let want_types = r#"{
  "types": {
    "color": {
      "class": "enum",
      "base": "ubyte",
      "members": {
        "red": 0,
        "green": 1,
        "blue": 2
      }
    },
    "blob": {
      "class": "opaque",
      "size": 3
    },
    "ints": {
      "class": "vlen",
      "base": "int"
    },
    "chars": {
      "class": "vlen",
      "base": "char"
    },
    "inner": {
      "class": "compound",
      "size": 6,
      "fields": {
        "a": {"type": "short", "offset": 0},
        "name": {"type": "char", "shape": [4], "offset": 2}
      }
    },
    "rec": {
      "class": "compound",
      "size": 40,
      "fields": {
        "id": {"type": "int", "offset": 0},
        "xy": {"type": "float", "shape": [2], "offset": 4},
        "in": {"type": "inner", "offset": 12},
        "c": {"type": "color", "offset": 18},
        "seq": {"type": "ints", "offset": 24}
      }
    }
  },"#;
    assert!(t.starts_with(want_types), "{t}");
    assert_eq!(data_of(&t, "e"), r#"["red", "green"]"#);
    assert!(
        t.contains(r#""_FillValue": {"type": "color", "data": ["blue"]}"#),
        "{t}"
    );
    assert_eq!(data_of(&t, "o"), r#"["a0b1c2", "000102"]"#);
    assert_eq!(data_of(&t, "v"), "[[1, 2, 3], []]");
    assert_eq!(data_of(&t, "cv"), r#""hé""#);
    assert_eq!(
        data_of(&t, "r"),
        r#"[{"id": 1, "xy": [2.5, -1.0], "in": {"a": 3, "name": "ab"}, "c": "green", "seq": [4, 5]}, {"id": 2, "xy": [0.0, 1e+30], "in": {"a": -3, "name": "abcd"}, "c": "blue", "seq": []}]"#
    );
    assert!(
        t.contains(r#""att": {"type": "rec", "data": [{"id": 1, "xy": [2.5, -1.0], "in": {"a": 3, "name": "ab"}, "c": "green", "seq": [4, 5]}]}"#),
        "{t}"
    );
    assert!(
        t.contains(r#""ga": {"type": "color", "data": ["red", "green"]}"#),
        "{t}"
    );
}

#[test]
fn enum_value_without_member_is_its_number() {
    let mut d = ds("netcdf e {\ntypes:\n  byte enum t {a = 1} ;\ndimensions:\n\tn = 2 ;\nvariables:\n\tt v(n) ;\n}");
    d.vars[0].data = Some(Values::Byte(vec![1, -7]));
    assert_eq!(data_of(&json(&d), "v"), r#"["a", -7]"#);
}

#[test]
fn shapes_nest_and_empty_shapes_stay_valid() {
    let d = ds(r#"netcdf s {
dimensions:
	t = UNLIMITED ;
	x = 2 ;
	y = 3 ;
	z = 0 ;
variables:
	int a(x, y) ;
	int r(t, x) ;
	int e(x, z) ;
	char c(x, z) ;
	char c1(y) ;
	char c0 ;
	int m(x, y, x) ;
data:
 a = 1, 2, 3, 4, 5, 6 ;
 c1 = "ab" ;
 c0 = "q" ;
 m = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
}"#);
    let t = json(&d);
    assert_eq!(data_of(&t, "a"), "[[1, 2, 3], [4, 5, 6]]");
    assert_eq!(data_of(&t, "r"), "[]");
    assert_eq!(data_of(&t, "e"), "[[], []]");
    // strings of length 0
    assert_eq!(data_of(&t, "c"), r#"["", ""]"#);
    assert_eq!(data_of(&t, "c1"), r#""ab""#);
    assert_eq!(data_of(&t, "c0"), r#""q""#);
    assert_eq!(
        data_of(&t, "m"),
        "[[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]]"
    );
    // a dimension of length 0 in CDL is unlimited
    assert!(t.contains("  \"unlimited\": [\"t\", \"z\"],\n"), "{t}");
    assert!(t.contains("\"t\": 0,"), "{t}");
}

#[test]
fn groups_and_names_out_of_scope() {
    let d = ds(r#"netcdf g {
types:
  opaque(2) op ;
dimensions:
	x = 2 ;
variables:
	int v\ w(x) ;
group: a {
  types:
    opaque(4) op ;
  dimensions:
  	x = 1 ;
  variables:
  	int u(x) ;
  	int uw(/x) ;
  	op o ;
  	/op p ;
  group: b {
    variables:
    	int q(x) ;
  } // group b
} // group a
}"#);
    let t = json(&d);
    assert!(t.contains(r#""v w": {"#), "{t}");
    assert!(t.contains(r#""shape": ["/x"],"#), "{t}");
    assert!(t.contains(r#""type": "/op""#), "{t}");
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(v["groups"]["a"]["variables"]["o"]["type"], "op");
    assert_eq!(v["groups"]["a"]["variables"]["u"]["shape"][0], "x");
    assert_eq!(
        v["groups"]["a"]["groups"]["b"]["variables"]["q"]["shape"][0],
        "x"
    );
    assert_eq!(v["groups"]["a"]["dimensions"]["x"], 1);
}

#[test]
fn selection_as_for_cdl() {
    let d = ds(r#"netcdf s {
dimensions:
	x = 2 ;
variables:
	int x(x) ;
	int v(x) ;
data:
 x = 1, 2 ;
 v = 3, 4 ;

group: g {
  variables:
  	int w(x) ;
  data:
   w = 5, 6 ;
  } // group g
}"#);
    let has_data = |o: &DumpOptions| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&json_with(&d, o, SLAB_BYTES)).unwrap();
        let mut names = Vec::new();
        for (n, var) in v["variables"].as_object().unwrap() {
            if var.get("data").is_some() {
                names.push(n.clone());
            }
        }
        for (n, var) in v["groups"]["g"]["variables"].as_object().unwrap() {
            if var.get("data").is_some() {
                names.push(format!("g/{n}"));
            }
        }
        names.sort();
        names
    };
    let o = |f: fn(&mut DumpOptions)| {
        let mut o = DumpOptions::default();
        f(&mut o);
        o
    };
    assert_eq!(has_data(&o(|_| {})), ["g/w", "v", "x"]);
    assert!(has_data(&o(|o| o.header_only = true)).is_empty());
    assert_eq!(has_data(&o(|o| o.coords_only = true)), ["x"]);
    assert_eq!(has_data(&o(|o| o.vars = vec!["w".into()])), ["g/w"]);
    assert_eq!(has_data(&o(|o| o.vars = vec!["/v".into()])), ["v"]);
    assert_eq!(has_data(&o(|o| o.groups = vec!["g".into()])), ["g/w"]);
    let mut out = Vec::new();
    let e = print_json(
        &d,
        &InMemory,
        &o(|o| o.vars = vec!["nope".into()]),
        &mut out,
    );
    assert!(matches!(e, Err(PrintError::NoSuchVariable { .. })), "{e:?}");
    assert!(out.is_empty(), "nothing written before a selection error");
}

#[test]
fn special_attributes_under_s() {
    let mut d = ds(r#"netcdf s {
dimensions:
	x = 4 ;
variables:
	float v(x) ;
		v:_ChunkSizes = 2 ;
		v:_Filter = "shuffle|zstd,5" ;
		v:_DeflateLevel = 1 ;
}"#);
    d.format = Some(nc_dataset::Format::Netcdf4);
    d.info.nc_properties = Some("version=2,x".into());
    d.vars[0]
        .atts
        .push(Attribute::text("_Endianness", "big (a real attribute)"));
    let mut o = DumpOptions {
        special: true,
        ..DumpOptions::default()
    };
    let t = json_with(&d, &o, SLAB_BYTES);
    let want = r#"      "attributes": {
        "_Endianness": "big (a real attribute)",
        "_Storage": "chunked",
        "_ChunkSizes": 2,
        "_Shuffle": "true",
        "_DeflateLevel": 1,
        "_Filter": "32015,5"
      },"#;
    assert!(t.contains(want), "{t}");
    assert!(t.contains(r#""_NCProperties": "version=2,x","#), "{t}");
    assert!(t.contains(r#""_Format": "netCDF-4""#), "{t}");
    o.all_filters = true;
    o.no_nc_properties = true;
    let t = json_with(&d, &o, SLAB_BYTES);
    assert!(t.contains(r#""_Filter": "2,4|1,1|32015,5""#), "{t}");
    assert!(!t.contains("_NCProperties"), "{t}");
}

#[test]
fn small_slabs_write_the_same() {
    let mut d = ds(USER_TYPES);
    let extra = ds(r#"netcdf m {
dimensions:
	t = 3 ;
	x = 5 ;
	l = 3 ;
variables:
	double a(t, x, x) ;
	char c(t, x, l) ;
	float s ;
data:
 s = 1 ;
}"#);
    // a 3-D double and a char variable with some data
    let base = d.vars.len();
    for (k, v) in extra.vars.iter().enumerate() {
        let dims = v
            .dims
            .iter()
            .map(|&dd| {
                let dim = extra.dim(dd);
                d.find_dim(ROOT, &dim.name)
                    .unwrap_or_else(|| d.add_dim(ROOT, dim.name.clone(), dim.len, false))
            })
            .collect();
        let id = d.add_var(ROOT, v.name.clone(), v.ty, dims);
        assert_eq!(id.0, base + k);
    }
    d.vars[base].data = Some(Values::Double((0..75).map(f64::from).collect()));
    d.vars[base + 1].data = Some(Values::Char(
        (0..45u8)
            .map(|i| if i % 4 == 0 { 0 } else { b'a' + i % 26 })
            .collect(),
    ));
    let whole = json(&d);
    for slab in [1u64, 3, 7, 40, 100] {
        assert_eq!(
            json_with(&d, &DumpOptions::default(), slab),
            whole,
            "slab {slab}"
        );
    }
}

#[test]
fn large_slabs_formatted_in_parallel_keep_order() {
    let n = 3 * PAR_CHUNK + 17;
    let mut d = ds(&format!(
        "netcdf p {{\ndimensions:\n\tr = 2 ;\n\tn = {n} ;\nvariables:\n\tint v(r, n) ;\n}}"
    ));
    d.vars[0].data = Some(Values::Int((0..2 * n as i32).collect()));
    let t = json(&d);
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    let rows = v["variables"]["v"]["data"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (r, row) in rows.iter().enumerate() {
        let row = row.as_array().unwrap();
        assert_eq!(row.len(), n);
        for (k, x) in row.iter().enumerate() {
            assert_eq!(x.as_i64().unwrap(), (r * n + k) as i64);
        }
    }
}

#[test]
fn names_are_escaped() {
    let mut d = Dataset::new("q");
    let x = d.add_dim(ROOT, "a\"b\\c\nd", 1, false);
    let v = d.add_var(ROOT, "\u{1}", NcType::Atomic(AtomicType::Int), vec![x]);
    d.var_mut(v)
        .atts
        .push(Attribute::text("t\t", "\"q\"\u{7f}"));
    let t = json(&d);
    assert!(t.contains(r#""a\"b\\c\nd": 1"#), "{t}");
    assert!(t.contains(r#""\u0001": {"#), "{t}");
    assert!(t.contains("\"t\\t\": \"\\\"q\\\"\u{7f}\""), "{t}");
}

#[test]
fn empty_shapes_past_two_to_the_64_are_an_error_not_a_panic() {
    let mut d = Dataset::new("e");
    let big = d.add_dim(ROOT, "big", 1 << 40, false);
    let zero = d.add_dim(ROOT, "zero", 0, false);
    d.add_var(
        ROOT,
        "c",
        NcType::Atomic(AtomicType::Char),
        vec![big, big, zero],
    );
    let mut out = Vec::new();
    let e = print_json(&d, &InMemory, &DumpOptions::default(), &mut out);
    assert!(
        matches!(&e, Err(PrintError::TooLarge { var }) if var == "/c"),
        "{e:?}"
    );
    let mut d = Dataset::new("e");
    let big = d.add_dim(ROOT, "big", 1 << 40, false);
    let zero = d.add_dim(ROOT, "zero", 0, false);
    d.add_var(
        ROOT,
        "i",
        NcType::Atomic(AtomicType::Int),
        vec![big, big, zero],
    );
    let e = print_json(&d, &InMemory, &DumpOptions::default(), &mut out);
    assert!(matches!(&e, Err(PrintError::TooLarge { .. })), "{e:?}");
    // header only: nothing to lay out, so it prints
    let o = DumpOptions {
        header_only: true,
        ..DumpOptions::default()
    };
    assert!(json_with(&d, &o, SLAB_BYTES).contains("\"big\": 1099511627776"));
}
