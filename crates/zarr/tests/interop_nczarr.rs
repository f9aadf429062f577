//! Interop of our NCZarr stores with the real readers (each test skips with a SKIP line when
//! its client is missing):
//! - netCDF4-python (its bundled netCDF-C 4.10) reads the default layout with the same
//!   dimensions (unlimited kept), attributes, types and values as the CDL says;
//! - netCDF-C 4.9.0's `ncdump` reads the `layout=4.9` stores as our ncdump does, and as the
//!   CDL says where 4.9.0 can represent the data model;
//! - zarr-python 3 (`zarr_format=2`) opens every array and reads the same values;
//! - we read the stores netCDF4-python writes as it reads them.
//!
//! One Python process per test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::Slab;
use nc_dataset::{DataSource, Dataset, GroupId, InMemory, NcType, Values, VarId};
use nc_zarr::{NczarrLayout, ZarrWriteOptions};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::Command;

/// The measurement set: name and CDL.
const CDLS: &[(&str, &str)] = &[
    (
        "fixed",
        "netcdf fixed {
dimensions:
	x = 3 ;
	y = 4 ;
variables:
	int v(x, y) ;
		v:units = \"m\" ;
	double d(x) ;
data:

 v =
  1, 2, 3, 4,
  5, 6, 7, 8,
  9, 10, 11, 12 ;

 d = 0.5, 1.5, -2.25 ;
}
",
    ),
    (
        "unlim1",
        "netcdf unlim1 {
dimensions:
	t = UNLIMITED ; // (3 currently)
	x = 2 ;
variables:
	int v(t, x) ;
	float tt(t) ;
		tt:_ChunkSizes = 1024 ;
data:

 v =
  1, 2,
  3, 4,
  5, 6 ;

 tt = 0.5, 1, 1.5 ;
}
",
    ),
    (
        "unlim2",
        "netcdf unlim2 {
dimensions:
	t = UNLIMITED ; // (2 currently)
	u = UNLIMITED ; // (3 currently)
variables:
	short v(t, u) ;
data:

 v =
  {1, 2, 3},
  {4, 5, 6} ;
}
",
    ),
    (
        "unlim0",
        "netcdf unlim0 {
dimensions:
	t = UNLIMITED ; // (0 currently)
	x = 2 ;
variables:
	int v(t, x) ;
	int w(x) ;
data:

 w = 7, 8 ;
}
",
    ),
    (
        "scalar",
        "netcdf scalar {
variables:
	double s ;
		s:units = \"K\" ;
	int i ;
data:

 s = 2.5 ;

 i = -3 ;
}
",
    ),
    (
        "charvar",
        "netcdf charvar {
dimensions:
	n = 3 ;
	len = 5 ;
variables:
	char c(n, len) ;
	char c1(len) ;
data:

 c =
  \"hello\",
  \"ab\",
  \"xyz\" ;

 c1 = \"abcde\" ;
}
",
    ),
    (
        "stringvar",
        "netcdf stringvar {
dimensions:
	n = 3 ;
variables:
	string s(n) ;
	string s0 ;
data:

 s = \"alpha\", \"\", \"gamma delta\" ;

 s0 = \"only\" ;
}
",
    ),
    (
        "attrs",
        "netcdf attrs {
dimensions:
	x = 2 ;
variables:
	int v(x) ;
		v:long_name = \"a variable\" ;
		string v:sattr = \"one\", \"two\" ;
		string v:s1 = \"single\" ;
		v:b = 1b, -2b ;
		v:ub = 200UB ;
		v:sh = -300s ;
		v:us = 60000US ;
		v:i = 70000 ;
		v:ui = 4000000000U ;
		v:i64 = -5000000000LL ;
		v:u64 = 10000000000ULL ;
		v:f = 1.5f, 2.25f ;
		v:d = 3.125 ;
		v:empty = \"\" ;

// global attributes:
		:title = \"global title\" ;
		string :gs = \"g1\", \"g2\" ;
		string :gs1 = \"one string\" ;
		:gi = 1, 2, 3 ;
data:

 v = 1, 2 ;
}
",
    ),
    (
        "groups",
        "netcdf groups {
dimensions:
	x = 2 ;
variables:
	int v(x) ;
data:

 v = 1, 2 ;

group: g1 {
  dimensions:
  	y = 3 ;
  variables:
  	float w(x, y) ;
  		w:a = \"in g1\" ;
  data:

   w =
  1, 2, 3,
  4, 5, 6 ;

  group: g2 {
    dimensions:
    	z = 2 ;
    variables:
    	int u(z, y) ;
    data:

     u =
  1, 2, 3,
  4, 5, 6 ;
    } // group g2
  } // group g1
}
",
    ),
    (
        "nodata",
        "netcdf nodata {
dimensions:
	x = 4 ;
variables:
	float f(x) ;
	int i(x) ;
	double d(x) ;
		d:_FillValue = -99. ;
	int w(x) ;
data:

 w = 1, _, 3, _ ;
}
",
    ),
    (
        "fill",
        "netcdf fill {
dimensions:
	x = 4 ;
variables:
	int i(x) ;
		i:_FillValue = -1 ;
	float f(x) ;
		f:_FillValue = 1.e+20f ;
	short s(x) ;
		s:missing_value = 9s ;
data:

 i = 1, _, 3, 4 ;

 f = _, 2, _, 4 ;

 s = 1, 2, 3, 4 ;
}
",
    ),
    (
        "filters",
        "netcdf filters {
dimensions:
	x = 4 ;
	y = 6 ;
variables:
	int d(x, y) ;
		d:_ChunkSizes = 2, 3 ;
		d:_DeflateLevel = 5 ;
		d:_Shuffle = \"true\" ;
data:

 d =
  1, 2, 3, 4, 5, 6,
  7, 8, 9, 10, 11, 12,
  13, 14, 15, 16, 17, 18,
  19, 20, 21, 22, 23, 24 ;
}
",
    ),
    (
        "unlimchunk",
        "netcdf unlimchunk {
dimensions:
	t = UNLIMITED ; // (5 currently)
	x = 3 ;
variables:
	int v(t, x) ;
		v:_ChunkSizes = 2, 3 ;
	char c(t, x) ;
data:

 v =
  1, 2, 3,
  4, 5, 6,
  7, 8, 9,
  10, 11, 12,
  13, 14, 15 ;

 c = \"abc\", \"def\", \"ghi\", \"jkl\", \"mno\" ;
}
",
    ),
];

fn dataset(dir: &Path, name: &str, text: &str) -> Dataset {
    let p = dir.join(format!("{name}.cdl"));
    std::fs::write(&p, text).unwrap();
    cdl(&p)
}

fn layout_opts(layout: NczarrLayout) -> ZarrWriteOptions {
    ZarrWriteOptions {
        layout,
        ..Default::default()
    }
}

/// Write every CDL of the set into `dir` (`<name>.file`); the datasets.
fn write_all(dir: &Path, opts: &ZarrWriteOptions) -> Vec<(String, Dataset)> {
    CDLS.iter()
        .map(|(name, text)| {
            let ds = dataset(dir, name, text);
            let loc = format!("file://{}/{name}.file#mode=nczarr,file", dir.display());
            write(&ds, &loc, opts);
            (name.to_string(), ds)
        })
        .collect()
}

fn have_zarr3() -> bool {
    python_has(
        "import zarr; assert int(zarr.__version__.split('.')[0]) >= 3",
        "zarr-python 3",
    )
}

fn have_ncdump_490() -> bool {
    let ok = Command::new("/usr/bin/ncdump")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stderr).contains("library version 4.9.0"));
    if !ok {
        eprintln!("SKIP: netCDF-C 4.9.0's /usr/bin/ncdump is not installed");
    }
    ok
}

/// netCDF4-python's view of stores: per store, per group path, dims (length, unlimited),
/// attributes (kind, values), variables (type, dims, flat values; masking off).
const NC4_VIEW: &str = r#"
import netCDF4, json, sys
import numpy as np
def vals(x):
    out = []
    for e in np.asarray(x).ravel().tolist():
        if isinstance(e, bytes): e = e.decode('latin1')
        out.append(e)
    return out
def att(a):
    if isinstance(a, str): return ['text', [a]]
    if isinstance(a, list): return ['text', a]
    a = np.asarray(a)
    return [str(a.dtype), vals(a)]
def vtype(v):
    if v.dtype == str: return 'string'
    if v.dtype == np.dtype('S1'): return 'char'
    return str(v.dtype)
def grp(g, path, out):
    vs = {}
    for k, v in g.variables.items():
        v.set_auto_maskandscale(False)
        vs[k] = [vtype(v), list(v.dimensions), vals(v[...])]
    out[path] = {
        'dims': {k: [len(d), d.isunlimited()] for k, d in g.dimensions.items()},
        'attrs': {k: att(g.getncattr(k)) for k in g.ncattrs() if not k.startswith('_') or k == '_FillValue'},
        'vars': vs,
        'var_attrs': {k: {a: att(v.getncattr(a)) for a in v.ncattrs() if not a.startswith('_') or a == '_FillValue'} for k, v in g.variables.items()},
    }
    for k, s in g.groups.items():
        grp(s, path.rstrip('/') + '/' + k, out)
res = {}
for url in sys.argv[1:]:
    try:
        d = netCDF4.Dataset(url)
        out = {}
        grp(d, '/', out)
        d.close()
        res[url] = out
    except Exception as e:
        res[url] = 'ERROR ' + repr(e)
print(json.dumps(res))
"#;

fn run_python(script: &str, args: &[String], dir: &Path) -> Value {
    serde_json::from_str(&python_args(script, args, dir)).unwrap()
}

fn numpy_name(t: nc_dataset::AtomicType) -> &'static str {
    use nc_dataset::AtomicType as A;
    match t {
        A::Byte => "int8",
        A::UByte => "uint8",
        A::Short => "int16",
        A::UShort => "uint16",
        A::Int => "int32",
        A::UInt => "uint32",
        A::Int64 => "int64",
        A::UInt64 => "uint64",
        A::Float => "float32",
        A::Double => "float64",
        A::Char => "char",
        A::String => "string",
    }
}

/// Values as netCDF4-python lists them (char one string per element).
fn flat(v: &Values) -> Vec<Value> {
    match v {
        Values::Char(b) => b
            .iter()
            .map(|&c| {
                Value::String(if c == 0 {
                    String::new()
                } else {
                    char::from(c).to_string()
                })
            })
            .collect(),
        Values::String(s) => s
            .iter()
            .map(|x| Value::String(x.as_ref().map_or("", utf8).to_string()))
            .collect(),
        Values::Float(x) => x.iter().map(|&f| json!(f64::from(f))).collect(),
        Values::Double(x) => x.iter().map(|&f| json!(f)).collect(),
        Values::UInt64(x) => x.iter().map(|&n| json!(n)).collect(),
        other => (0..other.len())
            .map(|i| json!(i64::try_from(other.get_i128(i).unwrap()).unwrap()))
            .collect(),
    }
}

/// The text of a string this test compares with Python's view (all its strings are UTF-8).
fn utf8(s: &nc_dataset::NcString) -> &str {
    s.as_str()
        .unwrap_or_else(|| panic!("string {s:?} of this test is not UTF-8"))
}

fn att_view(a: &nc_dataset::Attribute) -> Value {
    match &a.values {
        // the text ends at its first NUL (as netCDF-C stores char attributes)
        Values::Char(b) => {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            json!(["text", [String::from_utf8_lossy(&b[..end])]])
        }
        Values::String(s) => json!([
            "text",
            s.iter()
                .map(|x| x.as_ref().map_or("", utf8))
                .collect::<Vec<_>>()
        ]),
        v => json!([numpy_name(a.ty.as_atomic().unwrap()), flat(v)]),
    }
}

fn shown(name: &str) -> bool {
    !name.starts_with('_') || name == "_FillValue"
}

/// The view netCDF4-python should give of a store holding `ds`.
fn expected_view(ds: &Dataset) -> Value {
    let mut out = Map::new();
    for (i, g) in ds.groups.iter().enumerate() {
        let path = ds.group_path(GroupId(i));
        let path = if path.len() > 1 {
            path.trim_end_matches('/').to_string()
        } else {
            path
        };
        let dims: Map<String, Value> = g
            .dims
            .iter()
            .map(|d| {
                let d = ds.dim(*d);
                (d.name.clone(), json!([d.len, d.unlimited]))
            })
            .collect();
        let attrs: Map<String, Value> = g
            .atts
            .iter()
            .filter(|a| shown(&a.name))
            .map(|a| (a.name.clone(), att_view(a)))
            .collect();
        let mut vars = Map::new();
        let mut var_attrs = Map::new();
        for v in &g.vars {
            let var = ds.var(*v);
            let shape = ds.shape(*v);
            let vals = InMemory
                .read(ds, *v, Slab::new(&vec![0; shape.len()], &shape))
                .unwrap();
            let t = match var.ty {
                NcType::Atomic(t) => numpy_name(t),
                NcType::User(_) => panic!("no user types here"),
            };
            let dnames: Vec<&str> = var.dims.iter().map(|d| ds.dim(*d).name.as_str()).collect();
            vars.insert(var.name.clone(), json!([t, dnames, flat(&vals)]));
            let a: Map<String, Value> = var
                .atts
                .iter()
                .filter(|a| shown(&a.name))
                .map(|a| (a.name.clone(), att_view(a)))
                .collect();
            var_attrs.insert(var.name.clone(), Value::Object(a));
        }
        out.insert(
            path,
            json!({"dims": dims, "attrs": attrs, "vars": vars, "var_attrs": var_attrs}),
        );
    }
    Value::Object(out)
}

/// The first difference between two JSON values, as a path.
fn first_diff(want: &Value, got: &Value, path: &str) -> Option<String> {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().chain(b.keys()) {
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_diff(x, y, &format!("{path}/{k}")) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some(format!("{path}/{k}: want {x:?}, got {y:?}")),
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_diff(x, y, &format!("{path}[{i}]"))),
        // serde_json reads floats to within an ulp or two (no `float_roundtrip`)
        (Value::Number(a), Value::Number(b))
            if (a.is_f64() || b.is_f64())
                && a.as_f64().zip(b.as_f64()).is_some_and(|(x, y)| {
                    x == y || ((x - y) / x.abs().max(y.abs())).abs() < 1e-15
                }) =>
        {
            None
        }
        _ if want == got => None,
        _ => Some(format!("{path}: want {want}, got {got}")),
    }
}

/// netCDF4-python (netCDF-C 4.10) reads every store of the default layout with the CDL's
/// dimensions (unlimited ones kept, also of length 0), attributes, types and values.
#[test]
fn netcdf4_python_reads_the_default_layout() {
    if !have_netcdf4_410() {
        return;
    }
    let d = tmpdir("nczarr-nc4py");
    let written = write_all(&d, &ZarrWriteOptions::default());
    let urls: Vec<String> = written
        .iter()
        .map(|(n, _)| format!("file://{}/{n}.file#mode=nczarr,file", d.display()))
        .collect();
    let got = run_python(NC4_VIEW, &urls, &d);
    let mut bad = Vec::new();
    for ((name, ds), url) in written.iter().zip(&urls) {
        let want = expected_view(ds);
        if let Some(diff) = first_diff(&want, &got[url], "") {
            bad.push(format!("{name}: {diff}"));
        }
    }
    assert!(
        bad.is_empty(),
        "netCDF4-python differs:\n{}",
        bad.join("\n")
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Run netCDF-C 4.9.0's ncdump; its stdout, or the failure.
fn ncdump_490(args: &[&str]) -> Result<String, String> {
    let o = Command::new("/usr/bin/ncdump").args(args).output().unwrap();
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!(
            "{:?} {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// netCDF-C 4.9.0's ncdump reads our `layout=4.9` stores as our ncdump does, and as the CDL
/// says where 4.9.0 can represent it (it has no unlimited dimensions, no strings, cannot read
/// scalars' values nor 0-length dimensions, and has no NCZarr codecs installed here).
#[test]
fn ncdump_490_reads_the_49_layout() {
    if !have_ncdump_490() {
        return;
    }
    let d = tmpdir("nczarr-ncdump49");
    let written = write_all(&d, &layout_opts(NczarrLayout::NetcdfC490));
    let mut bad = Vec::new();
    for (name, ds) in &written {
        let loc = format!("file://{}/{name}.file#mode=nczarr,file", d.display());
        let ours = dump(&loc, false, false, None);
        let header = dump(&loc, true, false, None);
        let cdl_dump = print(ds, &InMemory, false, false, None);
        match name.as_str() {
            // exactly the CDL
            "fixed" | "charvar" | "fill" | "groups" | "nodata" => match ncdump_490(&[&loc]) {
                Ok(t) if t == ours && t == cdl_dump => {}
                Ok(t) => bad.push(format!(
                    "{name}: 4.9.0:\n{t}\nours:\n{ours}\nCDL:\n{cdl_dump}"
                )),
                Err(e) => bad.push(format!("{name}: 4.9.0 fails: {e}")),
            },
            // unlimited dimensions come out fixed, string attributes as char: as ours
            "unlim1" | "unlim2" | "unlimchunk" | "attrs" => match ncdump_490(&[&loc]) {
                Ok(t) if t == ours => {}
                Ok(t) => bad.push(format!("{name}: 4.9.0:\n{t}\nours:\n{ours}")),
                Err(e) => bad.push(format!("{name}: 4.9.0 fails: {e}")),
            },
            // the header only (4.9.0 crashes reading a scalar's value, on its own stores too)
            "scalar" => match ncdump_490(&["-h", &loc]) {
                Ok(t) if t == header => {}
                Ok(t) => bad.push(format!("{name} -h: 4.9.0:\n{t}\nours:\n{header}")),
                Err(e) => bad.push(format!("{name} -h: 4.9.0 fails: {e}")),
            },
            // 0-length dimensions, strings, codecs: not readable by this 4.9.0
            _ => {}
        }
    }
    // what 4.9.0 shows of the unlimited and string-attribute stores
    let loc = format!("file://{}/unlim1.file#mode=nczarr,file", d.display());
    assert!(dump(&loc, true, false, None).contains("\tt = 3 ;"));
    let loc = format!("file://{}/attrs.file#mode=nczarr,file", d.display());
    let a = dump(&loc, true, false, None);
    assert!(a.contains("\t\tv:sattr = \"one, two\" ;"), "{a}");
    assert!(a.contains("\t\t:gs1 = \"one string\" ;"), "{a}");
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// zarr-python 3 (`zarr_format=2`) opens every array of our stores and reads the CDL's values:
/// numbers in both layouts, char as `|S1` in pure Zarr. (It refuses `>S1`, the char dtype
/// netCDF-C 4.10 needs, as it refuses every byte order on one-byte types, and 4.9.0's `<U1`
/// holds one byte per element: those char arrays are left out.)
#[test]
fn zarr_python_reads_every_array() {
    if !have_zarr3() {
        return;
    }
    let d = tmpdir("nczarr-zarrpy");
    let mut stores = Vec::new();
    for (tag, opts, mode) in [
        ("410", layout_opts(NczarrLayout::NetcdfC410), "nczarr"),
        ("49", layout_opts(NczarrLayout::NetcdfC490), "nczarr"),
        ("pure", ZarrWriteOptions::default(), "zarr"),
    ] {
        for (name, text) in CDLS {
            let ds = dataset(&d, name, text);
            let path = d.join(format!("{name}-{tag}.file"));
            write(
                &ds,
                &format!("file://{}#mode={mode},file", path.display()),
                &opts,
            );
            stores.push((tag, name.to_string(), path, ds));
        }
    }
    // arrays by name: zarr-python cannot list a group that holds a `>S1` array
    let script = r#"
import zarr, json, sys
import numpy as np
res = {}
for p, keys in json.loads(sys.argv[1]).items():
    out = {}
    try:
        g = zarr.open_group(p, mode='r', zarr_format=2)
        for k in keys:
            try:
                v = np.asarray(g[k][...]).ravel().tolist()
                out[k] = [e.decode('latin1') if isinstance(e, bytes) else e for e in v]
            except Exception as e:
                out[k] = 'ERROR ' + repr(e)[:200]
    except Exception as e:
        out = 'ERROR ' + repr(e)[:200]
    res[p] = out
print(json.dumps(res))
"#;
    let key = |ds: &Dataset, v: VarId| {
        let var = ds.var(v);
        let gp = ds.group_path(var.group);
        let gp = gp.trim_matches('/');
        if gp.is_empty() {
            var.name.clone()
        } else {
            format!("{gp}/{}", var.name)
        }
    };
    let wanted: Map<String, Value> = stores
        .iter()
        .map(|(_, _, p, ds)| {
            let keys: Vec<String> = (0..ds.vars.len()).map(|v| key(ds, VarId(v))).collect();
            (p.display().to_string(), json!(keys))
        })
        .collect();
    let got = run_python(script, &[Value::Object(wanted).to_string()], &d);
    let mut bad = Vec::new();
    let mut checked = 0;
    for (tag, name, path, ds) in &stores {
        let view = &got[path.display().to_string()];
        for v in (0..ds.vars.len()).map(VarId) {
            let var = ds.var(v);
            let is_char = var.ty == nc_dataset::AtomicType::Char.into();
            if is_char && *tag != "pure" {
                continue;
            }
            let key = key(ds, v);
            let shape = ds.shape(v);
            let vals = InMemory
                .read(ds, v, Slab::new(&vec![0; shape.len()], &shape))
                .unwrap();
            let want = flat(&vals);
            if let Some(diff) = first_diff(&Value::Array(want), &view[&key], "") {
                bad.push(format!("{name} [{tag}] {key}: {diff}"));
            }
            checked += 1;
        }
    }
    assert!(bad.is_empty(), "zarr-python differs:\n{}", bad.join("\n"));
    assert!(checked > 50, "only {checked} arrays checked");
    std::fs::remove_dir_all(&d).unwrap();
}

/// netCDF4-python writes stores (unlimited dimensions, one of them empty, a variable shorter
/// than its unlimited dimension, scalars, char and string variables, string attributes, a
/// variable never written, groups); our ncdump shows what netCDF4-python reads.
#[test]
fn we_read_netcdf4_python_stores() {
    if !have_netcdf4_410() {
        return;
    }
    let d = tmpdir("nczarr-fromnc4py");
    let script = r#"
import netCDF4, numpy as np
d = netCDF4.Dataset('file://py.file#mode=nczarr,file', 'w')
d.createDimension('t', None); d.createDimension('e', None); d.createDimension('x', 2)
a = d.createVariable('a', 'i4', ('t', 'x'))
a[0:3, :] = np.arange(6).reshape(3, 2)
b = d.createVariable('b', 'i2', ('t',))
b[0:2] = [7, 8]
em = d.createVariable('em', 'f8', ('e', 'x'))
f = d.createVariable('f', 'f4', ('x',))
dn = d.createVariable('dn', 'f8', ('x',))
c = d.createVariable('c', 'S1', ('t', 'x'))
c[0:3, :] = np.array([[b'a', b'b'], [b'c', b'd'], [b'e', b'f']])
s = d.createVariable('s', str, ('x',))
s[0] = 'hello'; s[1] = 'wo rld'
sc = d.createVariable('sc', 'f8')
sc[...] = 2.5
d.setncattr_string('tags', ['p', 'q'])
d.title = 'py'
a.units = 'm'
a.valid_range = np.array([0, 10], dtype='i4')
g = d.createGroup('g'); g.createDimension('z', 2)
w = g.createVariable('w', 'u1', ('z', 't'))
w[:, 0:3] = 9
d.close()
"#;
    run_python(&format!("{script}\nprint('{{}}')"), &[], &d);
    let loc = format!("file://{}/py.file#mode=nczarr,file", d.display());
    let want = "netcdf py {
dimensions:
	t = UNLIMITED ; // (3 currently)
	e = UNLIMITED ; // (0 currently)
	x = 2 ;
variables:
	int a(t, x) ;
		a:units = \"m\" ;
		a:valid_range = 0, 10 ;
	short b(t) ;
	double em(e, x) ;
	float f(x) ;
	double dn(x) ;
	char c(t, x) ;
	string s(x) ;
	double sc ;

// global attributes:
		string :tags = \"p\", \"q\" ;
		:title = \"py\" ;
data:

 a =
  0, 1,
  2, 3,
  4, 5 ;

 b = 7, 8, _ ;

 f = _, _ ;

 dn = _, _ ;

 c =
  \"ab\",
  \"cd\",
  \"ef\" ;

 s = \"hello\", \"wo rld\" ;

 sc = 2.5 ;

group: g {
  dimensions:
  	z = 2 ;
  variables:
  	ubyte w(z, t) ;
  data:

   w =
  {9, 9, 9},
  {9, 9, 9} ;
  } // group g
}
";
    let got = dump(&loc, false, false, None);
    assert_same(&got, want, false, "netCDF4-python store");
    // and through nccopy's path: the unlimited dimensions survive a copy to our default layout
    let f = open(&loc);
    let copy = format!("file://{}/copy.file#mode=nczarr,file", d.display());
    common::write_at(&copy, f.dataset(), &f, &ZarrWriteOptions::default()).unwrap();
    let again = dump(&copy, false, false, None).replacen("netcdf copy", "netcdf py", 1);
    assert_same(&again, want, false, "copy of the netCDF4-python store");
    std::fs::remove_dir_all(&d).unwrap();
}
