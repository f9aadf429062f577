//! Interop with zarr-python 3 (Zarr v2 stores, `zarr_format=2`) / numcodecs for the Zarr-only codecs `gzip`, `lz4` (numcodecs'
//! framing) and `delta` (skipped when not installed): we read every value of stores
//! zarr-python writes with them, zarr-python reads the stores we write with them, and a
//! Zarr → Zarr copy keeps them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::{AtomicType, Dataset, FilterSpec, Values, ROOT};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Every array of a store as zarr-python reads it: name → (dtype, shape, the values as
/// little-endian bytes in hex). Bytes, not JSON numbers, so that floats compare exactly.
const DUMP: &str = r#"
import zarr, json, sys
g = zarr.open_group(sys.argv[1], mode='r', zarr_format=2)
out = {}
def walk(grp, prefix):
    for k in sorted(grp.array_keys()):
        a = grp[k][...]
        le = a.astype(a.dtype.newbyteorder('<'))
        out[prefix + k] = [a.dtype.str, list(a.shape), le.tobytes().hex()]
    for k in sorted(grp.group_keys()):
        walk(grp[k], prefix + k + '/')
walk(g, '')
print(json.dumps(out))
"#;

fn dump_with_python(store: &Path) -> Value {
    let o = Command::new("python3")
        .args(["-c", DUMP])
        .arg(store)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "zarr-python cannot read {}: {}",
        store.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Values as little-endian bytes (what NumPy's `astype('<..').tobytes()` gives).
fn le_bytes(v: &Values) -> Vec<u8> {
    match v {
        Values::Byte(x) => x.iter().map(|&b| b as u8).collect(),
        Values::UByte(x) | Values::Char(x) => x.clone(),
        Values::Short(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::UShort(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::Int(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::UInt(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::Int64(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::UInt64(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::Float(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        Values::Double(x) => x.iter().flat_map(|n| n.to_le_bytes()).collect(),
        other => panic!("not numeric: {other:?}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Every array of `python_view` read through nc_zarr (whole, and as a hyperslab crossing
/// chunk edges) equals zarr-python's values, byte for byte.
fn assert_same_values(loc: &str, python_view: &Value) {
    let f = open(loc);
    let ds = f.dataset();
    let arrays = python_view.as_object().unwrap();
    assert!(!arrays.is_empty());
    for (name, a) in arrays {
        let mut g = ROOT;
        let mut parts: Vec<&str> = name.split('/').collect();
        let vname = parts.pop().unwrap();
        for p in parts {
            g = ds.find_group(g, p).unwrap_or_else(|| panic!("group {p}"));
        }
        let v = ds
            .find_var(g, vname)
            .unwrap_or_else(|| panic!("{name} missing"));
        let shape: Vec<u64> = a[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        let start = vec![0; shape.len()];
        let got = f
            .read_var(v, &start, &shape)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            hex(&le_bytes(&got)),
            a[2].as_str().unwrap(),
            "{name} ({})",
            a[0]
        );
        // an interior hyperslab: drop the first and last index of each dimension
        if shape.iter().all(|&n| n > 2) {
            let s: Vec<u64> = shape.iter().map(|_| 1).collect();
            let c: Vec<u64> = shape.iter().map(|&n| n - 2).collect();
            let part = le_bytes(&f.read_var(v, &s, &c).unwrap());
            let all = le_bytes(&got);
            let es = all.len() / shape.iter().product::<u64>() as usize;
            // the expected slab, picked from the whole array
            let mut want = Vec::new();
            let n: usize = c.iter().product::<u64>() as usize;
            for lin in 0..n {
                let mut rem = lin;
                let mut off = 0usize;
                let mut stride = 1usize;
                for d in (0..shape.len()).rev() {
                    let i = rem % c[d] as usize + 1;
                    rem /= c[d] as usize;
                    off += i * stride;
                    stride *= shape[d] as usize;
                }
                want.extend_from_slice(&all[off * es..(off + 1) * es]);
            }
            assert_eq!(part, want, "{name} slab");
        }
    }
}

const WRITE_PY: &str = r#"
import zarr, numpy as np, numcodecs as nc
root = zarr.open_group('py.zarr', mode='w', zarr_format=2)
def mk(name, data, chunks, comp, filt, **kw):
    z = root.create_array(name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          compressors=comp, filters=filt, **kw)
    z[...] = data
    z.attrs['_ARRAY_DIMENSIONS'] = [f'{name}_d{i}' for i in range(data.ndim)]
    return z
i4 = (np.arange(77, dtype='<i4').reshape(7, 11) * 37 % 101) - 50
mk('gzip_i4', i4, (4, 4), nc.GZip(5), None)
mk('gzip_u1', (np.arange(300) % 256).astype('|u1'), (128,), nc.GZip(1), None)
f8 = np.sin(np.arange(9, dtype='<f8')) * 1e3
mk('lz4_f8', f8, (4,), nc.LZ4(1), None)
mk('lz4_i2_be', (np.arange(30).reshape(5, 6) * 1000 - 7000).astype('>i2'), (2, 4), nc.LZ4(1), None)
mk('lz4_i8_big_chunk', np.arange(5000, dtype='<i8') // 3, (4096,), nc.LZ4(1), None)
mk('delta_zlib_i4', i4, (4, 4), nc.Zlib(1), [nc.Delta('<i4')])
mk('delta_f8', np.cumsum(np.arange(13, dtype='<f8') * 0.1) + 1e5, (5,), None, [nc.Delta('<f8')])
mk('delta_f4_lz4', (np.arange(24, dtype='<f4').reshape(4, 6) / 7), (3, 4), nc.LZ4(1), [nc.Delta('<f4')])
mk('delta_u2_gzip', (np.arange(40) * 1700 % 65536).astype('<u2'), (16,), nc.GZip(9), [nc.Delta('<u2')])
mk('delta_i8_be', (np.arange(20, dtype='>i8') * -123456789012), (6,), nc.Zstd(1), [nc.Delta('>i8')])
mk('delta_i1', (np.arange(50) * 7 % 256 - 128).astype('|i1'), (8,), None, [nc.Delta('|i1')])
mk('delta_shuffle_gzip', np.arange(60, dtype='<i4').reshape(6, 10) * 3, (4, 4), nc.GZip(3),
   [nc.Delta('<i4'), nc.Shuffle(elementsize=4)])
mk('slash_gzip', np.arange(105, dtype='<f4').reshape(3, 5, 7) * 0.5, (2, 2, 3), nc.GZip(5), None,
   chunk_key_encoding={'name': 'v2', 'separator': '/'})
mk('slash_delta', np.arange(48, dtype='<i4').reshape(4, 12) ** 2, (3, 5), nc.LZ4(1), [nc.Delta('<i4')],
   chunk_key_encoding={'name': 'v2', 'separator': '/'})
z = root.create_array('partial_gzip', shape=(6, 10), chunks=(4, 4), dtype='<i2', fill_value=-5,
                      compressors=nc.GZip(5))
z[0:2, 0:3] = 9
z.attrs['_ARRAY_DIMENSIONS'] = ['p0', 'p1']
sub = root.create_group('sub')
w = sub.create_array('w', shape=(5,), chunks=(2,), dtype='<f8', compressors=nc.LZ4(1),
                     filters=[nc.Delta('<f8')])
w[...] = np.arange(5, dtype='<f8') / 3
w.attrs['_ARRAY_DIMENSIONS'] = ['w0']
"#;

#[test]
fn we_read_numcodecs_gzip_lz4_delta() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("codecs-from-py");
    python(WRITE_PY, &d);
    let store = d.join("py.zarr");
    let theirs = dump_with_python(&store);
    assert_eq!(theirs.as_object().unwrap().len(), 16);
    let loc = format!("file://{}#mode=zarr,file", store.display());
    assert_same_values(&loc, &theirs);

    // ncdump -s: _Codecs keeps the JSON as stored (zarr-python 3 writes each codec's keys in
    // its own order, "id" first; zarr-python 2 sorted them), _Filter shows only
    // codecs with an HDF5 id
    let cdl = dump(&loc, true, true, None);
    let line = |var: &str, att: &str| {
        let prefix = format!("{var}:{att} = ");
        cdl.lines()
            .map(str::trim)
            .find(|l| l.starts_with(&prefix))
            .map(|l| l[prefix.len()..].trim_end_matches(" ;").to_string())
    };
    assert_eq!(
        line("gzip_i4", "_Codecs").as_deref(),
        Some(r#""[{\"id\": \"gzip\",\"level\": 5}]""#)
    );
    assert_eq!(line("gzip_i4", "_Filter"), None);
    assert_eq!(
        line("lz4_f8", "_Codecs").as_deref(),
        Some(r#""[{\"id\": \"lz4\",\"acceleration\": 1}]""#)
    );
    assert_eq!(line("lz4_f8", "_Filter"), None);
    assert_eq!(
        line("delta_zlib_i4", "_Codecs").as_deref(),
        Some(
            r#""[{\"id\": \"delta\",\"dtype\": \"<i4\",\"astype\": \"<i4\"},{\"id\": \"zlib\",\"level\": 1}]""#
        )
    );
    // the zlib of the chain is deflate: netCDF-C's ncdump shows it as _DeflateLevel
    assert_eq!(line("delta_zlib_i4", "_DeflateLevel").as_deref(), Some("1"));
    assert_eq!(line("delta_zlib_i4", "_Filter"), None);
    assert_eq!(
        line("delta_i8_be", "_Filter").as_deref(),
        Some("\"32015,1\"")
    );
    assert_eq!(
        line("delta_shuffle_gzip", "_Shuffle").as_deref(),
        Some("\"true\"")
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unsupported_delta_astype_is_a_clear_error() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("codecs-astype");
    python(
        r#"
import zarr, numpy as np, numcodecs as nc
g = zarr.open_group('a.zarr', mode='w', zarr_format=2)
z = g.create_array('a', shape=(8,), chunks=(4,), dtype='<i8',
                   filters=[nc.Delta('<i8', astype='<i2')], compressors=None)
z[...] = np.arange(8)
"#,
        &d,
    );
    let loc = format!("file://{}#mode=zarr,file", d.join("a.zarr").display());
    // metadata reads; data access names the codec and what is refused
    let f = open(&loc);
    let v = f.dataset().find_var(ROOT, "a").unwrap();
    let e = f.read_var(v, &[0], &[8]).unwrap_err().to_string();
    assert!(
        e.contains(r#"astype "<i2" differs from dtype "<i8""#) && e.contains("delta"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

fn dataset(codecs: Option<&str>, filters: Vec<FilterSpec>) -> Dataset {
    let mut ds = Dataset::new("codecs");
    let x = ds.add_dim(ROOT, "x", 7, false);
    let y = ds.add_dim(ROOT, "y", 10, false);
    let i = ds.add_var(ROOT, "i", AtomicType::Int.into(), vec![x, y]);
    ds.var_mut(i).data = Some(Values::Int((0..70).map(|k| k * k * 7 - 1000).collect()));
    ds.var_mut(i).storage.chunk_sizes = Some(vec![4, 4]);
    let f = ds.add_var(ROOT, "f", AtomicType::Double.into(), vec![x]);
    ds.var_mut(f).data = Some(Values::Double(vec![0.5, -1.25, 3.0, 1e300, -0.0, 2.0, 0.1]));
    ds.var_mut(f).storage.chunk_sizes = Some(vec![3]);
    let s = ds.add_var(ROOT, "s", AtomicType::Short.into(), vec![y]);
    ds.var_mut(s).data = Some(Values::Short((0..10).map(|k| k * 300 - 1500).collect()));
    ds.var_mut(s).storage.endianness = Some(nc_dataset::Endianness::Big);
    ds.var_mut(s).storage.chunk_sizes = Some(vec![3]);
    for v in [i, f, s] {
        let st = &mut ds.var_mut(v).storage;
        st.codecs = codecs.map(str::to_string);
        st.filters = filters.clone();
    }
    ds
}

/// (name, `_Codecs`, HDF5 chain, expected compressor, expected filters)
type Case = (
    &'static str,
    Option<&'static str>,
    Vec<FilterSpec>,
    Value,
    Value,
);

#[test]
fn zarr_python_reads_our_gzip_lz4_delta() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("codecs-to-py");
    let zlib = |l: u32| FilterSpec {
        id: 1,
        params: vec![l],
    };
    // (name, _Codecs, HDF5 chain, the compressor and filters expected in .zarray of "i")
    let cases: Vec<Case> = vec![
        (
            "gzip",
            Some(r#"[{"id": "gzip","level": 6}]"#),
            vec![],
            json!({"id": "gzip", "level": 6}),
            Value::Null,
        ),
        (
            "lz4",
            Some(r#"[{"id": "lz4","acceleration": 1}]"#),
            vec![],
            json!({"id": "lz4", "acceleration": 1}),
            Value::Null,
        ),
        (
            // the HDF5 lz4 filter is written as numcodecs' lz4, in numcodecs' framing
            "hdf5_lz4",
            None,
            vec![FilterSpec {
                id: 32004,
                params: vec![],
            }],
            json!({"id": "lz4", "acceleration": 1}),
            Value::Null,
        ),
        (
            "delta_zlib",
            Some(r#"[{"id": "delta","dtype": "<i4","astype": "<i4"},{"id": "zlib","level": 1}]"#),
            vec![zlib(1)],
            json!({"id": "zlib", "level": 1}),
            json!([{"id": "delta", "dtype": "<i4", "astype": "<i4"}]),
        ),
        (
            // _Codecs no longer describing the chain (nccopy -F would clear it): ignored
            "stale",
            Some(r#"[{"id": "gzip","level": 6}]"#),
            vec![zlib(2)],
            json!({"id": "zlib", "level": 2}),
            Value::Null,
        ),
    ];
    for (name, codecs, chain, comp, filters) in cases {
        let mut ds = dataset(codecs, chain);
        // delta's dtype must be each variable's own
        if name == "delta_zlib" {
            let fv = ds.find_var(ROOT, "f").unwrap();
            ds.var_mut(fv).storage.codecs = Some(
                r#"[{"id": "delta","dtype": "<f8","astype": "<f8"},{"id": "zlib","level": 1}]"#
                    .into(),
            );
            let sv = ds.find_var(ROOT, "s").unwrap();
            ds.var_mut(sv).storage.codecs = Some(
                r#"[{"id": "delta","dtype": ">i2","astype": ">i2"},{"id": "zlib","level": 1}]"#
                    .into(),
            );
        }
        for mode in ["zarr", "nczarr"] {
            let store = d.join(format!("{name}-{mode}.zarr"));
            let loc = format!("file://{}#mode={mode},file", store.display());
            write(&ds, &loc, &Default::default());
            let za: Value =
                serde_json::from_slice(&std::fs::read(store.join("i/.zarray")).unwrap()).unwrap();
            assert_eq!(za["compressor"], comp, "{name} {mode}");
            assert_eq!(za["filters"], filters, "{name} {mode}");
            let theirs = dump_with_python(&store);
            let f = open(&loc);
            for v in ["i", "f", "s"] {
                let want = le_bytes(ds.var(ds.find_var(ROOT, v).unwrap()).data.as_ref().unwrap());
                let mut want = hex(&want);
                if v == "f" && name == "delta_zlib" {
                    // float deltas do not invert exactly: 1e300 then -0.0 is stored as -1e300
                    // and summed back to +0.0, by numcodecs as by us
                    want = want.replace("0000000000000080", "0000000000000000");
                }
                assert_eq!(theirs[v][2].as_str().unwrap(), want, "{name} {mode} {v}");
            }
            // and we read back what we wrote
            assert_same_values(&loc, &theirs);
            drop(f);
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn zarr_to_zarr_copy_keeps_the_codecs() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("codecs-copy");
    python(WRITE_PY, &d);
    let src_loc = format!("file://{}#mode=zarr,file", d.join("py.zarr").display());
    let src = open(&src_loc);
    for mode in ["zarr", "nczarr"] {
        let out = d.join(format!("copy-{mode}.zarr"));
        let out_loc = format!("file://{}#mode={mode},file", out.display());
        common::write_at(&out_loc, src.dataset(), &src, &Default::default()).unwrap();
        // the same codec JSON in every .zarray
        for name in [
            "gzip_i4",
            "lz4_f8",
            "delta_zlib_i4",
            "delta_f8",
            "delta_shuffle_gzip",
            "slash_delta",
            "sub/w",
        ] {
            let a: Value = serde_json::from_slice(
                &std::fs::read(d.join("py.zarr").join(name).join(".zarray")).unwrap(),
            )
            .unwrap();
            let b: Value =
                serde_json::from_slice(&std::fs::read(out.join(name).join(".zarray")).unwrap())
                    .unwrap();
            assert_eq!(a["compressor"], b["compressor"], "{mode} {name}");
            assert_eq!(a["filters"], b["filters"], "{mode} {name}");
        }
        // zarr-python reads the copy with the same values
        let (a, b) = (dump_with_python(&out), dump_with_python(&d.join("py.zarr")));
        assert_eq!(a.as_object().unwrap().len(), b.as_object().unwrap().len());
        for (name, want) in b.as_object().unwrap() {
            let got = &a[name];
            assert_eq!(got[0], want[0], "{mode} {name}: dtype");
            assert_eq!(got[1], want[1], "{mode} {name}: shape");
            // float deltas do not invert exactly, so re-encoding what was read may move the
            // last bits (numcodecs would do the same); all other arrays copy exactly
            let float_delta = name.starts_with("delta_f") || name == "sub/w";
            assert!(
                float_delta || got[2] == want[2],
                "{mode} {name}: values differ"
            );
        }
        // whatever was stored, we read what zarr-python reads
        assert_same_values(&out_loc, &a);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// numcodecs' element-conversion filters zarr-python ships (astype, quantize, bitround,
/// fixedscaleoffset, packbits), alone and before a compressor, and the lzma compressor
/// (.xz and legacy .lzma formats): we read the values
/// zarr-python reads, byte for byte, and copy them to NCZarr with the same values.
#[test]
fn we_read_numcodecs_conversion_filters() {
    if !have_zarr() {
        return;
    }
    let d = tmpdir("codecs-convert");
    python(
        r#"
import zarr, numpy as np, numcodecs as nc
rng = np.random.default_rng(14)
root = zarr.open_group('conv.zarr', mode='w', zarr_format=2)
def mk(name, data, chunks, comp, filt):
    z = root.create_array(name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          compressors=comp, filters=filt)
    z[...] = data
    z.attrs['_ARRAY_DIMENSIONS'] = [f'{name}_d{i}' for i in range(data.ndim)]
f8 = rng.normal(1000, 50, size=(7, 9))
mk('astype_f8_f4', f8, (4, 4), None, [nc.AsType(encode_dtype='<f4', decode_dtype='<f8')])
mk('astype_i8_i2_zlib', rng.integers(-300, 300, size=20).astype('<i8'), (6,), nc.Zlib(1),
   [nc.AsType(encode_dtype='<i2', decode_dtype='<i8')])
mk('quantize_f8', f8, (4, 4), nc.Zstd(1), [nc.Quantize(digits=3, dtype='<f8')])
mk('quantize_f8_f4', f8, (3, 5), None, [nc.Quantize(digits=2, dtype='<f8', astype='<f4')])
mk('bitround_f4', f8.astype('<f4'), (4, 4), nc.Zlib(5), [nc.BitRound(keepbits=6)])
mk('fso_u1', rng.uniform(1000, 1025, size=(5, 8)), (2, 3), nc.Zlib(1),
   [nc.FixedScaleOffset(offset=1000, scale=10, dtype='<f8', astype='|u1')])
mk('fso_i2_f4', rng.uniform(-5, 5, size=30).astype('<f4'), (7,), None,
   [nc.FixedScaleOffset(offset=0, scale=1000, dtype='<f4', astype='<i2')])
mk('packbits', rng.integers(0, 2, size=(5, 7)).astype(bool), (3, 3), nc.Zlib(1), [nc.PackBits()])
mk('lzma_i4', rng.integers(-1000, 1000, size=(6, 11)).astype('<i4'), (4, 4), nc.LZMA(), None)
mk('lzma_alone_f8', f8, (5, 5), nc.LZMA(format=2, preset=1), [nc.Shuffle(elementsize=8)])
"#,
        &d,
    );
    let store = d.join("conv.zarr");
    let theirs = dump_with_python(&store);
    assert_eq!(theirs.as_object().unwrap().len(), 10);
    let loc = format!("file://{}#mode=zarr,file", store.display());
    assert_same_values(&loc, &theirs);
    // a copy to NCZarr keeps the values (the conversion filters are re-encoded exactly:
    // the values read are already rounded)
    let src = open(&loc);
    let out = d.join("copy.file");
    let out_loc = format!("file://{}#mode=nczarr,file", out.display());
    common::write_at(&out_loc, src.dataset(), &src, &Default::default()).unwrap();
    assert_same_values(&out_loc, &theirs);
    // and zarr-python reads the copy (our lzma and conversion encoders) with the same values
    let again = dump_with_python(&out);
    for (name, want) in theirs.as_object().unwrap() {
        // bool (|b1) has no netCDF type: it reads, and so is copied, as ubyte (|u1)
        if name != "packbits" {
            assert_eq!(again[name][0], want[0], "copy {name}: dtype");
        }
        assert_eq!(again[name][1], want[1], "copy {name}: shape");
        assert_eq!(again[name][2], want[2], "copy {name}: values");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Hostile chunks of the Zarr-only codecs (no Python needed): errors naming the variable,
/// no allocation from a size header beyond the chunk size.
#[test]
fn hostile_zarr_only_chunks_are_errors() {
    let d = tmpdir("codecs-hostile");
    let store = d.join("h.zarr");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join(".zgroup"), r#"{"zarr_format": 2}"#).unwrap();
    let arr = |name: &str, comp: &str, filters: &str, chunk: &[u8]| {
        let a = store.join(name);
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(
            a.join(".zarray"),
            format!(
                r#"{{"zarr_format": 2, "shape": [8], "chunks": [8], "dtype": "<i4", "fill_value": 0,
                    "order": "C", "compressor": {comp}, "filters": {filters}}}"#
            ),
        )
        .unwrap();
        std::fs::write(a.join("0"), chunk).unwrap();
    };
    // numcodecs lz4 claiming 4 GiB - 1 from a 10-byte chunk
    let mut lz4 = u32::MAX.to_le_bytes().to_vec();
    lz4.extend_from_slice(&[0x10, 0x41, 0, 0, 0, 0]);
    arr(
        "lz4_huge",
        r#"{"id": "lz4", "acceleration": 1}"#,
        "null",
        &lz4,
    );
    // a gzip member of 1 MB of zeros for a 32-byte chunk
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(9));
    std::io::Write::write_all(&mut gz, &vec![0u8; 1 << 20]).unwrap();
    arr(
        "gzip_bomb",
        r#"{"id": "gzip", "level": 9}"#,
        "null",
        &gz.finish().unwrap(),
    );
    arr(
        "gzip_garbage",
        r#"{"id": "gzip", "level": 1}"#,
        "null",
        b"not gzip at all, 32 bytes long!!",
    );
    // delta over 30 bytes: not whole int32 elements
    arr(
        "delta_partial",
        "null",
        r#"[{"id": "delta", "dtype": "<i4", "astype": "<i4"}]"#,
        &[1u8; 30],
    );
    arr(
        "delta_bad_dtype",
        "null",
        r#"[{"id": "delta", "dtype": "<M8[s]"}]"#,
        &[1u8; 32],
    );
    let f = open(&format!("file://{}#mode=zarr,file", store.display()));
    let ds = f.dataset();
    for (name, want) in [
        (
            "lz4_huge",
            "claims 4294967295 decoded bytes, more than the limit 1056",
        ),
        ("gzip_bomb", "more than the limit 1056"),
        ("gzip_garbage", "not a gzip member"),
        (
            "delta_partial",
            "30 bytes are not a whole number of 4-byte elements",
        ),
        ("delta_bad_dtype", r#"dtype "<M8[s]" is not supported"#),
    ] {
        let v = ds.find_var(ROOT, name).unwrap();
        let e = f.read_var(v, &[0], &[8]).unwrap_err().to_string();
        assert!(e.contains(want) && e.contains(name), "{name}: {e}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
