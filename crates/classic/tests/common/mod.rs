//! Test helpers: a small dataset builder, a CDL writer for the reference tool, and runners.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use nc_dataset::Slab;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use nc_classic::{write_to, ClassicFile, WriteOptions};
use nc_dataset::{
    AtomicType, Attribute, DataSource, Dataset, DimId, Format, InMemory, NcType, Values, VarId,
    ROOT,
};

/// Builds a root-group dataset by names.
pub struct B {
    pub ds: Dataset,
}

impl B {
    pub fn new() -> B {
        B {
            ds: Dataset::new("t"),
        }
    }
    pub fn dim(mut self, name: &str, len: u64) -> B {
        self.ds.add_dim(ROOT, name, len, false);
        self
    }
    pub fn unlim(mut self, name: &str, numrecs: u64) -> B {
        self.ds.add_dim(ROOT, name, numrecs, true);
        self
    }
    pub fn var(mut self, name: &str, ty: AtomicType, dims: &[&str]) -> B {
        let ids: Vec<DimId> = dims
            .iter()
            .map(|d| self.ds.find_dim(ROOT, d).expect("dim"))
            .collect();
        self.ds.add_var(ROOT, name, NcType::Atomic(ty), ids);
        self
    }
    /// Attribute on `var` ("" = global).
    pub fn att(mut self, var: &str, name: &str, values: Values) -> B {
        let a = Attribute::new(name, values);
        if var.is_empty() {
            self.ds.groups[0].atts.push(a);
        } else {
            let v = self.ds.find_var(ROOT, var).expect("var");
            self.ds.var_mut(v).atts.push(a);
        }
        self
    }
    pub fn data(mut self, var: &str, values: Values) -> B {
        let v = self.ds.find_var(ROOT, var).expect("var");
        self.ds.var_mut(v).data = Some(values);
        self
    }
    pub fn build(self) -> Dataset {
        self.ds
    }
}

fn cdl_name(s: &str) -> String {
    let mut o = String::new();
    for (i, ch) in s.chars().enumerate() {
        let plain =
            ch.is_alphanumeric() || ch == '_' || (i > 0 && "-.+@".contains(ch)) || !ch.is_ascii();
        if !plain {
            o.push('\\');
        }
        o.push(ch);
    }
    o
}

fn cdl_text(b: &[u8]) -> String {
    let mut o = String::from("\"");
    let s = String::from_utf8_lossy(b);
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn cdl_float(x: f64) -> String {
    let s = format!("{x:?}");
    s
}

/// The values as a CDL list with type suffixes.
pub fn cdl_values(v: &Values) -> String {
    let j = |xs: Vec<String>| xs.join(", ");
    match v {
        Values::Char(b) if b.as_slice() == [0] => "\"\"".into(),
        Values::Char(b) => cdl_text(b),
        Values::Byte(x) => j(x.iter().map(|a| format!("{a}b")).collect()),
        Values::Short(x) => j(x.iter().map(|a| format!("{a}s")).collect()),
        Values::Int(x) => j(x.iter().map(|a| format!("{a}")).collect()),
        Values::Float(x) => j(x
            .iter()
            .map(|a| format!("{}f", cdl_float(f64::from(*a))))
            .collect()),
        Values::Double(x) => j(x.iter().map(|a| cdl_float(*a)).collect()),
        Values::UByte(x) => j(x.iter().map(|a| format!("{a}ub")).collect()),
        Values::UShort(x) => j(x.iter().map(|a| format!("{a}us")).collect()),
        Values::UInt(x) => j(x.iter().map(|a| format!("{a}u")).collect()),
        Values::Int64(x) => j(x.iter().map(|a| format!("{a}ll")).collect()),
        Values::UInt64(x) => j(x.iter().map(|a| format!("{a}ull")).collect()),
        other => panic!("no CDL for {other:?}"),
    }
}

/// CDL text for a root-group dataset (enough for the reference `ncgen`).
pub fn to_cdl(ds: &Dataset) -> String {
    let mut o = String::from("netcdf t {\n");
    if !ds.dims.is_empty() {
        o.push_str("dimensions:\n");
        for d in &ds.dims {
            if d.unlimited {
                writeln!(o, "  {} = UNLIMITED ;", cdl_name(&d.name)).unwrap();
            } else {
                writeln!(o, "  {} = {} ;", cdl_name(&d.name), d.len).unwrap();
            }
        }
    }
    if !ds.vars.is_empty() {
        o.push_str("variables:\n");
        for v in &ds.vars {
            let dims: Vec<String> = v.dims.iter().map(|d| cdl_name(&ds.dim(*d).name)).collect();
            let shape = if dims.is_empty() {
                String::new()
            } else {
                format!("({})", dims.join(", "))
            };
            writeln!(
                o,
                "  {} {}{} ;",
                ds.type_name(v.ty),
                cdl_name(&v.name),
                shape
            )
            .unwrap();
            for a in &v.atts {
                writeln!(
                    o,
                    "    {}:{} = {} ;",
                    cdl_name(&v.name),
                    cdl_name(&a.name),
                    cdl_values(&a.values)
                )
                .unwrap();
            }
            if v.storage.no_fill == Some(true) {
                writeln!(o, "    {}:_NoFill = \"true\" ;", cdl_name(&v.name)).unwrap();
            }
        }
    }
    if !ds.groups[0].atts.is_empty() {
        o.push_str("\n// global attributes:\n");
        for a in &ds.groups[0].atts {
            writeln!(o, "  :{} = {} ;", cdl_name(&a.name), cdl_values(&a.values)).unwrap();
        }
    }
    let with_data: Vec<&nc_dataset::Variable> =
        ds.vars.iter().filter(|v| v.data.is_some()).collect();
    if !with_data.is_empty() {
        o.push_str("data:\n");
        for v in with_data {
            writeln!(
                o,
                "  {} = {} ;",
                cdl_name(&v.name),
                cdl_values(v.data.as_ref().unwrap())
            )
            .unwrap();
        }
    }
    o.push_str("}\n");
    o
}

pub fn have_ncgen() -> bool {
    Path::new("/usr/bin/ncgen").exists()
}

pub fn kind_arg(f: Format) -> &'static str {
    match f {
        Format::Classic => "classic",
        Format::Offset64 => "64-bit offset",
        Format::Cdf5 => "cdf5",
        _ => panic!("not classic"),
    }
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nc-classic-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run the reference ncgen on `cdl`; returns the file bytes.
pub fn ncgen(dir: &Path, cdl: &str, f: Format, nofill: bool) -> Vec<u8> {
    let cdl_path = dir.join("t.cdl");
    let out = dir.join("ref.nc");
    std::fs::write(&cdl_path, cdl).unwrap();
    let mut cmd = Command::new("/usr/bin/ncgen");
    cmd.arg("-b").arg("-k").arg(kind_arg(f)).arg("-o").arg(&out);
    if nofill {
        cmd.arg("-x");
    }
    let r = cmd.arg(&cdl_path).output().unwrap();
    assert!(
        r.status.success(),
        "ncgen failed: {}\n{cdl}",
        String::from_utf8_lossy(&r.stderr)
    );
    std::fs::read(&out).unwrap()
}

/// Our bytes for `ds`.
pub fn ours(ds: &Dataset, opts: &WriteOptions) -> Vec<u8> {
    let mut out = Vec::new();
    write_to(&mut out, ds, &InMemory, opts).unwrap_or_else(|e| panic!("write failed: {e}"));
    out
}

/// First differing offset, for messages.
pub fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

/// Write `ds` with us and with ncgen (from its CDL) and require identical bytes; then read ours
/// back and compare the dataset and all data.
pub fn check_identical(name: &str, ds: &Dataset, f: Format, nofill: bool) {
    let opts = WriteOptions {
        format: f,
        fill: !nofill,
        only_given_data: true,
    };
    let mine = ours(ds, &opts);
    if have_ncgen() {
        let dir = scratch(&format!("{name}-{}", f.kind_name().replace(' ', "_")));
        let cdl = to_cdl(ds);
        let reference = ncgen(&dir, &cdl, f, nofill);
        if mine != reference {
            std::fs::write(dir.join("ours.nc"), &mine).unwrap();
            panic!(
                "{name} ({}): bytes differ from ncgen at offset {:?} (ours {} bytes, ncgen {} bytes); files in {}\n{cdl}",
                f.kind_name(),
                first_diff(&mine, &reference),
                mine.len(),
                reference.len(),
                dir.display()
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("skipping ncgen comparison: /usr/bin/ncgen not installed");
    }
    round_trip(ds, &mine, f, !nofill);
}

/// Read `bytes` back and compare with `ds` (names NFC, data through InMemory when filled).
pub fn round_trip(ds: &Dataset, bytes: &[u8], f: Format, compare_data: bool) {
    use unicode_normalization::UnicodeNormalization;
    let file = ClassicFile::from_bytes(bytes.to_vec()).unwrap_or_else(|e| panic!("read back: {e}"));
    let back = file.dataset();
    assert_eq!(back.format, Some(f));
    assert_eq!(back.dims.len(), ds.dims.len());
    for (a, b) in ds.dims.iter().zip(&back.dims) {
        assert_eq!(a.name.nfc().collect::<String>(), b.name);
        assert_eq!((a.len, a.unlimited), (b.len, b.unlimited));
    }
    let norm_atts = |atts: &[Attribute]| -> Vec<Attribute> {
        atts.iter()
            .map(|a| Attribute {
                name: a.name.nfc().collect(),
                ..a.clone()
            })
            .collect()
    };
    assert_eq!(back.groups[0].atts, norm_atts(&ds.groups[0].atts));
    assert_eq!(back.vars.len(), ds.vars.len());
    for (i, (a, b)) in ds.vars.iter().zip(&back.vars).enumerate() {
        assert_eq!(a.name.nfc().collect::<String>(), b.name);
        assert_eq!(a.ty, b.ty);
        assert_eq!(a.dims, b.dims);
        assert_eq!(b.atts, norm_atts(&a.atts));
        assert_eq!(b.data, None);
        {
            let fill = compare_data;
            let shape = ds.shape(VarId(i));
            let start = vec![0; shape.len()];
            let record = ds.is_record_var(VarId(i));
            let unwritten =
                a.data.is_none() && (!fill || (!record && a.storage.no_fill == Some(true)));
            let want = if unwritten {
                let n: u64 = shape.iter().product();
                zeros(a.ty.as_atomic().unwrap(), n as usize)
            } else {
                InMemory
                    .read(ds, VarId(i), Slab::new(&start, &shape))
                    .unwrap()
            };
            let got = file
                .read(back, VarId(i), Slab::new(&start, &shape))
                .unwrap();
            assert_eq!(got, want, "data of {}", a.name);
        }
    }
}

/// `n` zero values of type `t` (what unwritten data reads as).
pub fn zeros(t: AtomicType, n: usize) -> Values {
    match t {
        AtomicType::Byte => Values::Byte(vec![0; n]),
        AtomicType::Char => Values::Char(vec![0; n]),
        AtomicType::Short => Values::Short(vec![0; n]),
        AtomicType::Int => Values::Int(vec![0; n]),
        AtomicType::Float => Values::Float(vec![0.0; n]),
        AtomicType::Double => Values::Double(vec![0.0; n]),
        AtomicType::UByte => Values::UByte(vec![0; n]),
        AtomicType::UShort => Values::UShort(vec![0; n]),
        AtomicType::UInt => Values::UInt(vec![0; n]),
        AtomicType::Int64 => Values::Int64(vec![0; n]),
        AtomicType::UInt64 => Values::UInt64(vec![0; n]),
        AtomicType::String => panic!("no strings"),
    }
}
