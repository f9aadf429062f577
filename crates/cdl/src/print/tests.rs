//! Printer tests: datasets built by hand, equal to the CDL files in `testdata/expected/print/`,
//! printed with the option sets that `gen.sh` there used with the reference ncgen/ncdump 4.9.0;
//! the outputs must match byte for byte.
#![allow(clippy::approx_constant)] // fixture values as the CDL spells them

use nc_dataset::Slab;
use nc_dataset::{
    AtomicType as A, CompoundField, DimId, EnumMember, FilterSpec, Format, GroupId, InMemory,
    Layout, NcType, QuantizeMode, TypeId, UserTypeKind, Values as V, VarId, ROOT,
};

use super::*;

struct B {
    ds: Dataset,
}

/// `Some(x)` as a `String` (file info) or an `NcString` (string values).
fn s<T: From<&'static str>>(x: &'static str) -> Option<T> {
    Some(T::from(x))
}

impl B {
    fn new(name: &str, fmt: Format) -> B {
        let mut ds = Dataset::new(name);
        ds.format = Some(fmt);
        if !fmt.is_classic_file() {
            ds.info.nc_properties = s("version=2,netcdf=4.9.0,hdf5=1.10.8");
            ds.info.superblock_version = Some(2);
            ds.info.is_netcdf4 = Some(fmt == Format::Netcdf4);
        }
        B { ds }
    }
    fn dim(&mut self, g: GroupId, name: &str, len: u64) -> DimId {
        self.ds.add_dim(g, name, len, false)
    }
    fn unlim(&mut self, g: GroupId, name: &str, len: u64) -> DimId {
        self.ds.add_dim(g, name, len, true)
    }
    fn var(
        &mut self,
        g: GroupId,
        name: &str,
        ty: impl Into<NcType>,
        dims: &[DimId],
        data: Option<V>,
    ) -> VarId {
        let v = self.ds.add_var(g, name, ty.into(), dims.to_vec());
        self.ds.var_mut(v).data = data;
        v
    }
    fn att(&mut self, v: VarId, name: &str, vals: V) {
        self.ds.var_mut(v).atts.push(Attribute::new(name, vals));
    }
    fn text(&mut self, v: VarId, name: &str, t: &[u8]) {
        self.att(v, name, V::Char(t.to_vec()));
    }
    fn uatt(&mut self, v: VarId, name: &str, ty: TypeId, vals: V) {
        self.ds.var_mut(v).atts.push(Attribute {
            name: name.into(),
            ty: NcType::User(ty),
            values: vals,
        });
    }
    fn gatt(&mut self, g: GroupId, name: &str, vals: V) {
        self.ds.group_mut(g).atts.push(Attribute::new(name, vals));
    }
}

use nc_dataset::Attribute;

fn members(names: &[(&str, i128)]) -> Vec<EnumMember> {
    names
        .iter()
        .map(|(n, v)| EnumMember {
            name: n.to_string(),
            value: *v,
        })
        .collect()
}

fn floats(v: &[f32]) -> V {
    V::Float(v.to_vec())
}

fn types_nc4() -> Dataset {
    let mut b = B::new("types_nc4", Format::Netcdf4);
    let enum_t = b.ds.add_type(
        ROOT,
        "enum_t",
        UserTypeKind::Enum {
            base: A::UByte,
            members: members(&[
                ("Clear", 0),
                ("Cumulonimbus", 1),
                ("Stratus", 2),
                ("Stratocumulus", 3),
                ("Cumulus", 4),
                ("Altostratus", 5),
                ("Nimbostratus", 6),
                ("Altocumulus", 7),
                ("Cirrostratus", 8),
                ("Cirrocumulus", 9),
                ("Cirrus", 10),
                ("Missing", 255),
            ]),
        },
    );
    let opaque_t =
        b.ds.add_type(ROOT, "opaque_t", UserTypeKind::Opaque { size: 3 });
    let vlen_t = b.ds.add_type(
        ROOT,
        "vlen_t",
        UserTypeKind::Vlen {
            base: A::Int.into(),
        },
    );
    let cmpd_t = b.ds.add_type(
        ROOT,
        "cmpd_t",
        UserTypeKind::Compound {
            size: 32,
            fields: vec![
                CompoundField {
                    name: "f1".into(),
                    ty: A::String.into(),
                    dims: vec![],
                    offset: 0,
                },
                CompoundField {
                    name: "f2".into(),
                    ty: A::Float.into(),
                    dims: vec![2, 3],
                    offset: 8,
                },
            ],
        },
    );
    let dim = b.dim(ROOT, "dim", 5);
    let t = b.unlim(ROOT, "t", 3);
    let v = b.var(ROOT, "v", A::Int, &[dim], Some(V::Int(vec![1, 2, 3, 4, 5])));
    b.att(v, "att", V::Int(vec![1]));
    b.text(v, "c", b"a\nb\tc\"d\\e\x01f\x7fg'h");
    b.att(
        v,
        "f",
        floats(&[
            1.5,
            0.1,
            1e30,
            f32::NAN,
            f32::NEG_INFINITY,
            f32::INFINITY,
            0.0,
            -0.0,
            100.0,
            1e-5,
            123456789.0,
        ]),
    );
    b.att(
        v,
        "d",
        V::Double(vec![
            1.5,
            0.1,
            1e300,
            f64::NAN,
            f64::NEG_INFINITY,
            3.14159265358979,
            1.0,
            1e15,
            1e16,
        ]),
    );
    b.att(v, "by", V::Byte(vec![1, -2]));
    b.att(v, "sh", V::Short(vec![1]));
    b.att(v, "ub", V::UByte(vec![1, 255]));
    b.att(v, "us", V::UShort(vec![1]));
    b.att(v, "ui", V::UInt(vec![1]));
    b.att(v, "i64", V::Int64(vec![1, -5]));
    b.att(v, "u64", V::UInt64(vec![1, u64::MAX]));
    b.att(v, "s", V::String(vec![s("x"), s("y\n")]));
    b.uatt(v, "e", enum_t, V::UByte(vec![0, 255]));
    b.uatt(
        v,
        "o",
        opaque_t,
        V::Opaque {
            size: 3,
            bytes: vec![0xaa, 0xbb, 0xcc],
        },
    );
    b.uatt(
        v,
        "vl",
        vlen_t,
        V::Vlen(vec![V::Int(vec![1, 2]), V::Int(vec![3])]),
    );
    b.uatt(
        v,
        "cm",
        cmpd_t,
        V::Compound(vec![vec![
            V::String(vec![s("s")]),
            floats(&[1., 2., 3., 4., 5., 6.]),
        ]]),
    );
    b.var(
        ROOT,
        "e",
        NcType::User(enum_t),
        &[t],
        Some(V::UByte(vec![0, 2, 10])),
    );
    b.var(
        ROOT,
        "o",
        NcType::User(opaque_t),
        &[t],
        Some(V::Opaque {
            size: 3,
            bytes: vec![1, 2, 3, 0, 0, 0, 255, 255, 255],
        }),
    );
    b.var(
        ROOT,
        "vl",
        NcType::User(vlen_t),
        &[t],
        Some(V::Vlen(vec![
            V::Int(vec![1, 2, 3]),
            V::Int(vec![]),
            V::Int(vec![4]),
        ])),
    );
    b.var(
        ROOT,
        "cm",
        NcType::User(cmpd_t),
        &[t],
        Some(V::Compound(vec![
            vec![V::String(vec![s("a")]), floats(&[1., 2., 3., 4., 5., 6.])],
            vec![V::String(vec![s("")]), floats(&[0.; 6])],
            vec![
                V::String(vec![s("b")]),
                floats(&[1.5, 2., 3., 4., 5., 6e30]),
            ],
        ])),
    );
    b.var(
        ROOT,
        "s",
        A::String,
        &[t],
        Some(V::String(vec![s("hello"), s("wor\"ld\n"), s("")])),
    );
    b.var(
        ROOT,
        "ch",
        A::Char,
        &[t, dim],
        Some(V::Char(b"abcdefg\0\0\0\0\0\0\0\0".to_vec())),
    );
    let mut f: Vec<f32> = (1..=11).map(|x| x as f32).collect();
    f.extend_from_slice(&[
        nc_dataset::FILL_FLOAT,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ]);
    b.var(ROOT, "f", A::Float, &[t, dim], Some(V::Float(f)));
    let dd = b.var(
        ROOT,
        "dd",
        A::Double,
        &[t],
        Some(V::Double(vec![-1.0, 0.1, 1e-300])),
    );
    b.att(dd, "_FillValue", V::Double(vec![-1.0]));
    b.var(
        ROOT,
        "i8",
        A::Int64,
        &[t],
        Some(V::Int64(vec![
            -9223372036854775807,
            i64::MAX,
            nc_dataset::FILL_INT64,
        ])),
    );
    b.var(
        ROOT,
        "u8",
        A::UInt64,
        &[t],
        Some(V::UInt64(vec![u64::MAX, 0, nc_dataset::FILL_UINT64])),
    );
    b.var(ROOT, "ub", A::UByte, &[t], Some(V::UByte(vec![255, 0, 1])));
    b.var(
        ROOT,
        "us",
        A::UShort,
        &[t],
        Some(V::UShort(vec![65535, 0, 1])),
    );
    b.var(
        ROOT,
        "ui",
        A::UInt,
        &[t],
        Some(V::UInt(vec![u32::MAX, 0, 1])),
    );
    b.gatt(ROOT, "title", V::Char(b"x\ny".to_vec()));
    b.gatt(ROOT, "s", V::String(vec![s("a")]));
    b.gatt(ROOT, "i64", V::Int64(vec![5]));

    let g1 = b.ds.add_group(ROOT, "g1");
    let e2 = b.ds.add_type(
        g1,
        "e2",
        UserTypeKind::Enum {
            base: A::Int,
            members: members(&[("A", 1), ("B", 2)]),
        },
    );
    let d = b.dim(g1, "d", 2);
    let n = b.dim(g1, "n", 30);
    let x = b.var(g1, "x", NcType::User(e2), &[d], Some(V::Int(vec![1, 2])));
    b.text(x, "a", b"q");
    let mut y = vec![1; 30];
    y.extend(vec![2; 30]);
    b.var(g1, "y", A::Int, &[d, n], Some(V::Int(y)));
    b.gatt(g1, "ga", V::Int(vec![1]));
    let g2 = b.ds.add_group(g1, "g2");
    b.var(g2, "y", A::Int, &[], Some(V::Int(vec![7])));
    b.var(g2, "z", A::Float, &[n], None);
    b.ds
}

fn classic() -> Dataset {
    let mut b = B::new("classic", Format::Classic);
    let d = b.dim(ROOT, "d", 3);
    let n = b.dim(ROOT, "n", 60);
    let m = b.dim(ROOT, "m", 2);
    let k = b.dim(ROOT, "k", 26);
    let sd = b.dim(ROOT, "s", 6);
    let t = b.unlim(ROOT, "t", 11);
    let v = b.var(ROOT, "v", A::Int, &[d], Some(V::Int(vec![1, -1, 3])));
    b.att(v, "b", V::Byte(vec![1, -128]));
    b.att(v, "sh", V::Short(vec![1, -32768]));
    b.att(v, "in", V::Int(vec![1, i32::MIN]));
    b.att(
        v,
        "fl",
        floats(&[
            1.,
            0.,
            -0.,
            100.,
            1e7,
            1e-5,
            1.234568e8,
            0.3,
            3.402823e38,
            f32::from_bits(1),
        ]),
    );
    b.att(
        v,
        "db",
        V::Double(vec![
            1.,
            0.,
            100.,
            1e15,
            1e16,
            1e-5,
            0.1,
            0.3,
            3.14159265358979,
            1e308,
            4.94065645841247e-324,
        ]),
    );
    b.text(v, "ch", b"line1\nline2\nline3");
    b.text(v, "ch2", b"line1\n");
    b.text(v, "ch3", b"");
    b.text(v, "ch5", b"\n\n");
    b.text(
        v,
        "esc",
        b"\x0e\x1f\x7f\x80\xc8\xff'?\x08\x0c\r\x0b\x07\"\\",
    );
    b.att(v, "_FillValue", V::Int(vec![-1]));
    b.var(
        ROOT,
        "dd",
        A::Double,
        &[d],
        Some(V::Double(vec![0.1, std::f64::consts::PI, 1e300])),
    );
    let ff = b.var(
        ROOT,
        "ff",
        A::Float,
        &[d],
        Some(floats(&[0.1, f32::NAN, 1e30])),
    );
    b.att(ff, "_FillValue", floats(&[f32::NAN]));
    b.var(
        ROOT,
        "bb",
        A::Byte,
        &[d],
        Some(V::Byte(vec![-128, 127, -127])),
    );
    b.var(
        ROOT,
        "ss",
        A::Short,
        &[d],
        Some(V::Short(vec![-32767, 0, 32767])),
    );
    let s5 = b.var(ROOT, "s5", A::Short, &[d], Some(V::Short(vec![5, 4, 5])));
    b.att(s5, "_FillValue", V::Short(vec![5]));
    b.var(ROOT, "c", A::Char, &[], Some(V::Char(b"x".to_vec())));
    b.var(ROOT, "c2", A::Char, &[d], Some(V::Char(b"a\tb".to_vec())));
    b.var(
        ROOT,
        "c3",
        A::Char,
        &[m, sd],
        Some(V::Char(b"a\nb\0\0\0ccc\0d\0".to_vec())),
    );
    b.var(
        ROOT,
        "c4",
        A::Char,
        &[t, sd],
        Some(V::Char(b"ab\0\0\0\0cd\0\0\0\0\0\0\0\0\0\0g".to_vec())),
    );
    b.var(
        ROOT,
        "c5",
        A::Char,
        &[t],
        Some(V::Char(b"hello\nworld".to_vec())),
    );
    let mut a: Vec<i32> = (1000..1040).collect();
    a.extend(vec![1; 19]);
    a.push(10000);
    b.var(ROOT, "a", A::Int, &[n], Some(V::Int(a)));
    let mut bv = vec![1; 52];
    bv[25] = 1000;
    b.var(ROOT, "b", A::Int, &[m, k], Some(V::Int(bv)));
    b.var(ROOT, "e", A::Int, &[d], Some(V::Int(vec![1, 22, 333])));
    b.var(ROOT, "sc", A::Int, &[], Some(V::Int(vec![-5])));
    b.var(
        ROOT,
        "x",
        A::Float,
        &[t],
        Some(floats(&[1.5, 2.5, 1e-10, -3.25e20])),
    );
    b.var(
        ROOT,
        "t",
        A::Double,
        &[t],
        Some(V::Double(vec![0., 1.5, 2., 3.])),
    );
    b.var(
        ROOT,
        "rec",
        A::Float,
        &[t, d],
        Some(floats(&(1..=12).map(|x| x as f32).collect::<Vec<_>>())),
    );
    b.gatt(ROOT, "history", V::Char(b"text string\n\t123".to_vec()));
    b.gatt(ROOT, "title", V::Char(b"classic \"test\"".to_vec()));
    b.ds
}

fn special() -> Dataset {
    let mut b = B::new("special", Format::Netcdf4);
    let x = b.dim(ROOT, "x", 4);
    let t = b.unlim(ROOT, "t", 2);
    b.var(ROOT, "a", A::Int, &[x], Some(V::Int(vec![1, 2, 3, 4])));
    let bv = b.var(
        ROOT,
        "b",
        A::Float,
        &[t, x],
        Some(floats(&[1., 2., 3., 4., 5., 6., 7., 8.])),
    );
    b.text(bv, "units", b"m");
    {
        let st = &mut b.ds.var_mut(bv).storage;
        st.layout = Some(Layout::Chunked);
        st.chunk_sizes = Some(vec![2, 4]);
        st.filters = vec![
            FilterSpec {
                id: 3,
                params: vec![],
            },
            FilterSpec {
                id: 2,
                params: vec![4],
            },
            FilterSpec {
                id: 1,
                params: vec![5],
            },
        ];
        st.endianness = Some(nc_dataset::Endianness::Big);
    }
    let c = b.var(
        ROOT,
        "c",
        A::Double,
        &[x],
        Some(V::Double(vec![1., 2., 3., 4.])),
    );
    b.ds.var_mut(c).storage.layout = Some(Layout::Compact);
    b.ds.var_mut(c).storage.no_fill = Some(true);
    b.var(ROOT, "d", A::Int, &[], None);
    b.var(
        ROOT,
        "e",
        A::String,
        &[x],
        Some(V::String(vec![s("a"), s(""), s("c"), s("d")])),
    );
    let q = b.var(
        ROOT,
        "q",
        A::Float,
        &[x],
        Some(floats(&[1.2345, 2.5, 3., 4.])),
    );
    b.ds.var_mut(q).storage.quantize = Some((QuantizeMode::BitGroom, 3));
    let h = b.var(ROOT, "h", A::Float, &[x], None);
    {
        let st = &mut b.ds.var_mut(h).storage;
        st.chunk_sizes = Some(vec![4]);
        st.filters = vec![
            FilterSpec {
                id: 307,
                params: vec![9],
            },
            FilterSpec {
                id: 1,
                params: vec![5],
            },
        ];
    }
    b.var(ROOT, "ch", A::Char, &[x], None);
    b.var(ROOT, "ub", A::UByte, &[x], None);
    b.var(ROOT, "by", A::Byte, &[x], None);
    b.var(ROOT, "sh", A::Short, &[x], None);
    let k = b.var(ROOT, "k", A::Float, &[x], None);
    {
        let st = &mut b.ds.var_mut(k).storage;
        st.chunk_sizes = Some(vec![2]);
        st.filters = vec![
            FilterSpec {
                id: 3,
                params: vec![],
            },
            FilterSpec {
                id: 307,
                params: vec![9],
            },
        ];
    }
    b.gatt(ROOT, "title", V::Char(b"t".to_vec()));
    b.ds
}

fn times() -> Dataset {
    let mut b = B::new("times", Format::Classic);
    let n = b.dim(ROOT, "n", 8);
    let t = b.var(
        ROOT,
        "t",
        A::Double,
        &[n],
        Some(V::Double(vec![0., 1., 1.5, 12.25, 24., -1., 1e6, 0.0001])),
    );
    b.text(t, "units", b"hours since 2000-01-01 00:00:00");
    let sv = b.var(
        ROOT,
        "s",
        A::Double,
        &[n],
        Some(V::Double(vec![
            0., 1., 59.5, 3600., 86399., 0.001, 1.25, 1e9,
        ])),
    );
    b.text(sv, "units", b"seconds since 2000-01-01");
    let m = b.var(
        ROOT,
        "m",
        A::Float,
        &[n],
        Some(floats(&[0., 1., 1.5, 60., 1440., 30., 0.5, 90.])),
    );
    b.text(m, "units", b"minutes since 1970-01-01T06:00:00Z");
    let d = b.var(
        ROOT,
        "d",
        A::Int,
        &[n],
        Some(V::Int(vec![0, 1, 3, 4, 5, 10, 14, 15])),
    );
    b.text(d, "units", b"days since 1582-10-01");
    b.text(d, "calendar", b"gregorian");
    let y = b.var(
        ROOT,
        "y",
        A::Double,
        &[n],
        Some(V::Double(vec![0., 1., 0.5, 2., 3., 4., 5., 6.])),
    );
    b.text(y, "units", b"years since 2000-01-01");
    let bad = b.var(
        ROOT,
        "bad",
        A::Double,
        &[n],
        Some(V::Double((1..=8).map(f64::from).collect())),
    );
    b.text(bad, "units", b"m/s");
    let tb = b.var(
        ROOT,
        "tb",
        A::Double,
        &[n],
        Some(V::Double(vec![0., -1., 1., 2., 3., 4., 5., 6.])),
    );
    b.text(tb, "units", b"days since 2000-01-01");
    b.att(tb, "_FillValue", V::Double(vec![-1.]));
    let t3 = b.var(ROOT, "t3", A::Int, &[n], Some(V::Int((0..8).collect())));
    b.text(t3, "units", b"days since 1804-1-1");
    b.text(t3, "calendar", b"gregorian");
    b.att(t3, "time1", V::Int(vec![1]));
    b.att(t3, "time2", V::Int(vec![5, 6]));
    b.att(t3, "time3", floats(&[7.125, 8.75]));
    b.att(t3, "time4", V::Double(vec![58.5, 59.5, 60.5]));
    b.att(t3, "time5", V::Int((100..=120).collect()));
    b.att(t3, "time6", V::Double(vec![7.125, 8.75, 9.5]));
    b.att(t3, "time7", V::Double(vec![0.5, 1.5, 2.5, 3.5, 4.5]));
    b.ds
}

fn nc4classic() -> Dataset {
    let mut b = B::new("nc4classic", Format::Netcdf4Classic);
    let x = b.dim(ROOT, "x", 2);
    let xv = b.var(ROOT, "x", A::Float, &[x], Some(floats(&[10.5, 20.25])));
    b.text(xv, "units", b"degrees_east");
    b.text(xv, "note", b"two\nlines");
    b.var(ROOT, "v", A::Int, &[x], Some(V::Int(vec![7, 8])));
    b.gatt(ROOT, "history", V::Char(b"made\nby hand\n".to_vec()));
    b.ds
}

fn rules_nc4() -> Dataset {
    let mut b = B::new("rules_nc4", Format::Netcdf4);
    let e1 = b.ds.add_type(
        ROOT,
        "e1",
        UserTypeKind::Enum {
            base: A::Byte,
            members: members(&[("pass", 0), ("fail", 1), ("undefined", 2)]),
        },
    );
    let field = |name: &str, ty: A, dims: Vec<usize>| CompoundField {
        name: name.into(),
        ty: ty.into(),
        dims,
        offset: 0,
    };
    let cc_t = b.ds.add_type(
        ROOT,
        "cc_t",
        UserTypeKind::Compound {
            size: 16,
            fields: vec![
                field("name", A::Char, vec![4]),
                field("v", A::Short, vec![3]),
                field("n", A::Int, vec![]),
            ],
        },
    );
    let f1 = b.dim(ROOT, "F1", 2);
    let f2 = b.dim(ROOT, "F2", 3);
    let one = b.dim(ROOT, "one", 1);
    let u0 = b.unlim(ROOT, "U0", 1);
    let u2 = b.unlim(ROOT, "U2", 3);
    let u3 = b.unlim(ROOT, "U3", 5);
    b.var(
        ROOT,
        "fu",
        A::Int,
        &[f1, u2],
        Some(V::Int((1..=6).collect())),
    );
    b.var(
        ROOT,
        "ufuu",
        A::Int,
        &[u0, f1, u2, u3],
        Some(V::Int((1..=30).collect())),
    );
    b.var(ROOT, "v1", A::Int, &[f1, one], Some(V::Int(vec![1, 2])));
    b.var(
        ROOT,
        "c1",
        A::Char,
        &[f1, one],
        Some(V::Char(b"xy".to_vec())),
    );
    b.var(
        ROOT,
        "hi",
        A::Char,
        &[f2],
        Some(V::Char(vec![0o316, 0o232, 0o377])),
    );
    b.var(
        ROOT,
        "test1",
        NcType::User(e1),
        &[f2],
        Some(V::Byte(vec![0, 1, 2])),
    );
    let cc = b.var(
        ROOT,
        "cc",
        NcType::User(cc_t),
        &[],
        Some(V::Compound(vec![vec![
            V::Char(b"abcd".to_vec()),
            V::Short(vec![1, 2, 3]),
            V::Int(vec![4]),
        ]])),
    );
    b.uatt(
        cc,
        "_FillValue",
        cc_t,
        V::Compound(vec![vec![
            V::Char(b"?\0\0\0".to_vec()),
            V::Short(vec![-1, -2, -3]),
            V::Int(vec![-99]),
        ]]),
    );
    let data = b.var(ROOT, "data", A::Int, &[], Some(V::Int(vec![177])));
    b.att(data, "_FillValue", V::Int(vec![0]));
    b.text(data, "nul", b"ab\0\0");
    b.ds
}

/// The DumpOptions for an ncdump argument string (the subset the fixtures use).
fn parse_opts(args: &str) -> DumpOptions {
    let mut o = DumpOptions::default();
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut i = 0;
    let idx = |w: &str| {
        if w == "f" {
            IndexStyle::Fortran
        } else {
            IndexStyle::C
        }
    };
    while i < words.len() {
        match words[i] {
            "-h" => o.header_only = true,
            "-c" => o.coords_only = true,
            "-s" => o.special = true,
            "-F" => o.all_filters = true,
            "-t" => o.time = TimeMode::Iso,
            "-i" => o.time = TimeMode::IsoT,
            "-Xp" => o.no_nc_properties = true,
            "-v" | "-g" | "-b" | "-f" | "-l" | "-p" | "-n" => {
                let a = words[i + 1];
                match words[i] {
                    "-v" => o.vars = a.split(',').map(String::from).collect(),
                    "-g" => o.groups = a.split(',').map(String::from).collect(),
                    "-b" => o.annotate = Annotation::Brief(idx(a)),
                    "-f" => o.annotate = Annotation::Full(idx(a)),
                    "-l" => o.max_line_len = a.parse().unwrap(),
                    "-p" => {
                        let (f, d) = a.split_once(',').unwrap_or((a, ""));
                        o.float_digits = f.parse().ok();
                        o.double_digits = d.parse().ok();
                    }
                    _ => o.name = Some(a.to_string()),
                }
                i += 1;
            }
            w => panic!("fixture option {w} not mapped"),
        }
        i += 1;
    }
    o
}

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/expected/print")
}

fn dump(ds: &Dataset, opts: &DumpOptions) -> String {
    let mut out = Vec::new();
    print(ds, &InMemory, opts, &mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

fn first_diff(want: &str, got: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}:\n want: {w:?}\n  got: {g:?}", i + 1);
        }
    }
    format!(
        "lengths differ: want {} lines, got {}",
        want.lines().count(),
        got.lines().count()
    )
}

/// Compare every `NAME.*.out` fixture of a dataset; returns the number compared.
fn check_all(name: &str, ds: &Dataset) -> usize {
    let dir = fixture_dir();
    let mut n = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let f = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = f.strip_prefix(&format!("{name}.")) else {
            continue;
        };
        let Some(tag) = rest.strip_suffix(".out") else {
            continue;
        };
        let args = if tag == "default" {
            String::new()
        } else {
            tag.replace('_', " ").replace('+', ",").replace('%', "/")
        };
        let want = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
        let got = dump(ds, &parse_opts(&args));
        n += 1;
        if want != got {
            failures.push(format!("{f} (ncdump {args}): {}", first_diff(&want, &got)));
        }
    }
    assert!(n > 0, "no fixtures for {name}");
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    n
}

#[test]
fn fixtures_types_nc4() {
    check_all("types_nc4", &types_nc4());
}

#[test]
fn fixtures_classic() {
    check_all("classic", &classic());
}

#[test]
fn fixtures_special() {
    check_all("special", &special());
}

#[test]
fn fixtures_times() {
    check_all("times", &times());
}

#[test]
fn fixtures_nc4classic() {
    check_all("nc4classic", &nc4classic());
}

#[test]
fn fixtures_rules_nc4() {
    check_all("rules_nc4", &rules_nc4());
}

#[test]
fn unknown_variable_is_an_error() {
    let opts = DumpOptions {
        vars: vec!["nope".into()],
        ..DumpOptions::default()
    };
    let err = print(&classic(), &InMemory, &opts, &mut Vec::new()).unwrap_err();
    assert_eq!(err.to_string(), "nope: No such variable");
}

/// `ncdump -v tas` of a 64 MiB float variable; run with
/// `cargo test --release -p nc-cdl -- --ignored --nocapture dump_speed`. With `BENCH_F32` set to
/// a raw little-endian float32 file of 259x180x360 values (the `tas` of a netCDF file `bench.nc`),
/// dumps those and writes the text to `BENCH_OUT`, to diff with `ncdump -v tas bench.nc`.
#[test]
#[ignore = "timing"]
fn dump_speed() {
    let (name, shape, data) = match std::env::var("BENCH_F32") {
        Ok(path) => {
            let raw = std::fs::read(path).unwrap();
            let data: Vec<f32> = raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            ("bench", [259u64, 180, 360], data)
        }
        Err(_) => {
            let mut x: u32 = 12345;
            let data = (0..16 * 512 * 2048)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    200.0 + (x % 1_200_000) as f32 / 10_000.0
                })
                .collect();
            ("big", [16, 512, 2048], data)
        }
    };
    let n = data.len();
    let mut b = B::new(name, Format::Netcdf4);
    let t = b.unlim(ROOT, "time", shape[0]);
    let la = b.dim(ROOT, "lat", shape[1]);
    let lo = b.dim(ROOT, "lon", shape[2]);
    let tas = b.var(ROOT, "tas", A::Float, &[t, la, lo], Some(V::Float(data)));
    b.text(tas, "units", b"K");
    let opts = DumpOptions {
        vars: vec!["tas".into()],
        ..DumpOptions::default()
    };
    let mut out: Box<dyn std::io::Write> = match std::env::var("BENCH_OUT") {
        Ok(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p).unwrap())),
        Err(_) => Box::new(std::io::sink()),
    };
    let start = std::time::Instant::now();
    print(&b.ds, &InMemory, &opts, &mut out).unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "dumped {n} values in {secs:.3} s ({:.1} Mvalues/s)",
        n as f64 / secs / 1e6
    );
}

/// A data source that records the largest read.
struct Counting {
    max: std::sync::atomic::AtomicU64,
}

impl nc_dataset::DataSource for Counting {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<V, nc_dataset::DataError> {
        let Slab { start, count } = slab;

        let n: u64 = count.iter().product();
        self.max.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
        InMemory.read(ds, var, Slab::new(start, count))
    }
}

#[test]
fn small_slabs_print_the_same() {
    for (ds, opts) in [
        (classic(), ""),
        (classic(), "-b c"),
        (classic(), "-f f"),
        (types_nc4(), ""),
        (rules_nc4(), "-b c"),
        (times(), "-t"),
    ] {
        let o = parse_opts(opts);
        let whole = dump(&ds, &o);
        for slab in [1u64, 8, 24, 100] {
            let src = Counting {
                max: std::sync::atomic::AtomicU64::new(0),
            };
            let mut out = Vec::new();
            print_slabbed(&ds, &src, &o, &mut out, slab).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out),
                whole,
                "{} {opts} slab {slab}",
                ds.name
            );
            // reads stay within the budget, except that a char string is never split
            let max = src.max.load(std::sync::atomic::Ordering::Relaxed);
            assert!(
                max <= slab.max(60),
                "{} read {max} values with slab {slab}",
                ds.name
            );
        }
    }
}

#[test]
fn bad_source_data_is_an_error_not_a_panic() {
    let mut ds = classic();
    // wrong element count
    let v = ds.find_var(ROOT, "e").unwrap();
    ds.var_mut(v).data = Some(V::Char(b"xyz".to_vec()));
    let err = print(&ds, &InMemory, &DumpOptions::default(), &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("variable \"e\""), "{err}");
    // wrong type but right count prints without panicking
    let mut ds = types_nc4();
    let v = ds.find_var(ROOT, "cm").unwrap();
    ds.var_mut(v).data = Some(V::Int(vec![1, 2, 3]));
    let v = ds.find_var(ROOT, "o").unwrap();
    ds.var_mut(v).data = Some(V::Opaque {
        size: 3,
        bytes: vec![1; 9],
    });
    print(&ds, &InMemory, &DumpOptions::default(), &mut Vec::new()).unwrap();
}

/// Cross-check with the CDL parser: every CDL of the conformance corpus's `ncdump/cdl` is parsed
/// with [`crate::parse_cdl`], made into a file with the reference `ncgen` and dumped with the
/// reference `ncdump`; our print of the parsed dataset must match. Depends on the parser, so it
/// is not a unit test of the printer alone: run with `--ignored corpus_round_trip`.
#[test]
#[ignore = "needs the CDL parser, the conformance corpus and the reference tools"]
fn corpus_round_trip() {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/cases/ncdump/cdl"
    ));
    if !std::path::Path::new("/usr/bin/ncgen").exists() || !dir.exists() {
        println!("skipped: reference tools or corpus not found");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("nc-cdl-print-xcheck-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cdl"))
        .collect();
    files.sort();
    let (mut pass, mut diffs) = (0, Vec::new());
    for p in files {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let Ok(mut ds) = crate::parse_cdl(&text, &stem, &crate::ParseOptions::default()) else {
            continue;
        };
        let enhanced = ds.needs_enhanced_model();
        let fmt = ds.format.unwrap_or(if enhanced {
            Format::Netcdf4
        } else {
            Format::Classic
        });
        ds.format = Some(fmt);
        let kind = match fmt {
            Format::Classic => "classic",
            Format::Offset64 => "64-bit offset",
            Format::Cdf5 => "cdf5",
            Format::Netcdf4 => "nc4",
            Format::Netcdf4Classic => "nc7",
        };
        let nc = tmp.join(format!("{stem}.nc"));
        let made = std::process::Command::new("ncgen")
            .args(["-b", "-k", kind, "-o"])
            .arg(&nc)
            .arg(&p)
            .status()
            .is_ok_and(|s| s.success());
        // skip the multi-GiB "big" inputs and what ncgen refuses
        if !made || std::fs::metadata(&nc).map_or(true, |m| m.len() > 64 << 20) {
            continue;
        }
        let want = std::process::Command::new("ncdump")
            .arg("-n")
            .arg(&ds.name)
            .arg(&nc)
            .output()
            .unwrap()
            .stdout;
        let mut got = Vec::new();
        match print(&ds, &InMemory, &DumpOptions::default(), &mut got) {
            Ok(()) if got == want => pass += 1,
            Ok(()) => diffs.push(format!(
                "{stem}: {}",
                first_diff(
                    &String::from_utf8_lossy(&want),
                    &String::from_utf8_lossy(&got)
                )
            )),
            Err(e) => diffs.push(format!("{stem}: {e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!("{pass} identical");
    assert!(
        diffs.is_empty(),
        "{} differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// ncdump prints a type of the current group or an ancestor bare, even when the current group
/// has a type of the same name; a type of any other group with its path (ref_typescope).
#[test]
fn type_names_are_bare_in_scope_and_qualified_elsewhere() {
    let mut b = B::new("scope", Format::Netcdf4);
    let g = b.ds.add_group(ROOT, "g");
    let h = b.ds.add_group(g, "h");
    let j = b.ds.add_group(ROOT, "j");
    let outer = b.ds.add_type(g, "op_t", UserTypeKind::Opaque { size: 4 });
    b.ds.add_type(h, "op_t", UserTypeKind::Opaque { size: 4 });
    b.var(h, "v", NcType::User(outer), &[], None);
    b.var(j, "w", NcType::User(outer), &[], None);
    let text = dump(&b.ds, &parse_opts("-h"));
    assert!(text.contains("\top_t v ;"), "{text}");
    assert!(text.contains("\t/g/op_t w ;"), "{text}");
}
