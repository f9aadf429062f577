//! Malformed and hostile stores give clear errors with bounded memory; metadata spellings
//! of every netCDF-C version are read; strings follow the fixed-length rules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::{AtomicType, Attribute, Dataset, InMemory, Values, ROOT};
use nc_zarr::{NczarrLayout, ZarrWriteOptions};
use std::fs;
use std::path::Path;

fn put(root: &Path, key: &str, text: &str) {
    let p = root.join(key);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn open_err(root: &Path, mode: &str) -> String {
    open_at(&format!("file://{}#mode={mode},file", root.display()))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "opened".into())
}

const ZARRAY: &str = r#"{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0, "order": "C", "compressor": null, "filters": null}"#;

#[test]
fn malformed_metadata_errors_name_the_object() {
    let d = tmpdir("badmeta");
    let s = d.join("s.zarr");
    put(&s, ".zgroup", r#"{"zarr_format": 2}"#);
    put(&s, "v/.zarray", r#"{"zarr_format": 2, "shape": [4"#);
    let e = open_err(&s, "zarr");
    assert!(e.starts_with("v/.zarray: invalid JSON"), "{e}");

    put(&s, "v/.zarray", &ZARRAY.replace("<i4", "<c16"));
    let e = open_err(&s, "zarr");
    assert!(
        e.contains("dtype \"<c16\" is not supported: complex"),
        "{e}"
    );

    put(&s, "v/.zarray", &ZARRAY.replace("[2]", "[2, 2]"));
    let e = open_err(&s, "zarr");
    assert!(e.contains("chunks has 2 entries but shape has 1"), "{e}");

    put(&s, "v/.zarray", &ZARRAY.replace("[2]", "[0]"));
    assert!(open_err(&s, "zarr").contains("chunk length is 0"));

    put(&s, "v/.zarray", &ZARRAY.replace("[2]", "[4000000000]"));
    assert!(open_err(&s, "zarr").contains("exceed 4 GiB"));

    put(&s, "v/.zarray", &ZARRAY.replace("\"C\"", "\"K\""));
    assert!(open_err(&s, "zarr").contains("order"));

    put(
        &s,
        "v/.zarray",
        &ZARRAY.replace("\"zarr_format\": 2", "\"zarr_format\": 3"),
    );
    assert!(open_err(&s, "zarr").contains("zarr_format 3 is not 2"));

    put(
        &s,
        ".zgroup",
        r#"{"zarr_format": 2, "_nczarr_superblock": {"version": "2.0.0"}, "_nczarr_group": {"dims": {}, "vars": ["../../etc"], "groups": []}}"#,
    );
    let e = open_err(&s, "nczarr");
    assert!(e.contains("not allowed"), "{e}");

    put(
        &s,
        ".zgroup",
        r#"{"zarr_format": 2, "_nczarr_superblock": {"version": "2.0.0"}, "_nczarr_group": {"dims": {"x": 3}, "vars": ["v"], "groups": []}}"#,
    );
    put(
        &s,
        "v/.zarray",
        &ZARRAY.replace(
            "\"filters\": null",
            "\"filters\": null, \"_nczarr_array\": {\"dimrefs\": [\"/x\"]}",
        ),
    );
    let e = open_err(&s, "nczarr");
    assert!(
        e.contains("shape 4 disagrees with dimension \"x\" of length 3"),
        "{e}"
    );

    let empty = d.join("empty");
    fs::create_dir_all(&empty).unwrap();
    assert!(open_err(&empty, "nczarr").contains("not a Zarr store"));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn chunk_problems_are_errors_not_garbage() {
    let d = tmpdir("badchunk");
    let s = d.join("s.zarr");
    put(&s, ".zgroup", r#"{"zarr_format": 2}"#);
    put(&s, "v/.zarray", ZARRAY);
    fs::write(s.join("v/0"), [1u8, 0, 0, 0, 2, 0, 0, 0]).unwrap();
    fs::write(s.join("v/1"), [1u8, 2, 3]).unwrap(); // short chunk
    let f = open(&format!("file://{}#mode=zarr,file", s.display()));
    assert_eq!(
        f.read_var(nc_dataset::VarId(0), &[0], &[2]).unwrap(),
        Values::Int(vec![1, 2])
    );
    let e = f
        .read_var(nc_dataset::VarId(0), &[0], &[4])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("chunk \"v/1\": decodes to 3 bytes, expected 8"),
        "{e}"
    );
    let e = f
        .read_var(nc_dataset::VarId(0), &[3], &[2])
        .unwrap_err()
        .to_string();
    assert!(e.contains("exceeds dimension length 4"), "{e}");

    // a zlib chunk inflating far past its chunk size (zip-bomb style)
    put(
        &s,
        "z/.zarray",
        &ZARRAY.replace(
            "\"compressor\": null",
            "\"compressor\": {\"id\": \"zlib\", \"level\": 1}",
        ),
    );
    let mut bomb = Vec::new();
    {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(&mut bomb, flate2::Compression::best());
        e.write_all(&vec![0u8; 64 << 20]).unwrap();
        e.finish().unwrap();
    }
    fs::write(s.join("z/0"), &bomb).unwrap();
    let f = open(&format!("file://{}#mode=zarr,file", s.display()));
    let z = f.dataset().find_var(ROOT, "z").unwrap();
    let e = f.read_var(z, &[0], &[2]).unwrap_err().to_string();
    assert!(e.contains("variable \"/z\""), "{e}");
    assert!(e.contains("more than the limit 1032"), "{e}");

    // an unknown codec: metadata readable, data access names the codec
    put(
        &s,
        "u/.zarray",
        &ZARRAY.replace(
            "\"compressor\": null",
            "\"compressor\": {\"id\": \"gzip2000\", \"level\": 1}",
        ),
    );
    let f = open(&format!("file://{}#mode=zarr,file", s.display()));
    let u = f.dataset().find_var(ROOT, "u").unwrap();
    assert_eq!(
        f.dataset().var(u).storage.codecs.as_deref(),
        Some(r#"[{"id": "gzip2000","level": 1}]"#)
    );
    let e = f.read_var(u, &[0], &[2]).unwrap_err().to_string();
    assert!(
        e.contains("needs codec {\"id\": \"gzip2000\",\"level\": 1}"),
        "{e}"
    );
    assert!(e.contains("plugin directories searched"), "{e}");
    fs::remove_dir_all(&d).unwrap();
}

fn small() -> Dataset {
    let mut ds = Dataset::new("small");
    let x = ds.add_dim(ROOT, "x", 5, false);
    let v = ds.add_var(ROOT, "v", AtomicType::Int.into(), vec![x]);
    ds.var_mut(v).data = Some(Values::Int(vec![1, 2, 3, 4, 5]));
    ds.var_mut(v).atts.push(Attribute::text("units", "m"));
    ds.var_mut(v).storage.chunk_sizes = Some(vec![2]);
    let g = ds.add_group(ROOT, "g");
    let y = ds.add_dim(g, "y", 2, false);
    let w = ds.add_var(g, "w", AtomicType::Double.into(), vec![y, x]);
    ds.var_mut(w).data = Some(Values::Double((0..10).map(f64::from).collect()));
    ds.groups[g.0]
        .atts
        .push(Attribute::new("n", Values::Short(vec![3, 4])));
    let sc = ds.add_var(ROOT, "sc", AtomicType::Float.into(), vec![]);
    ds.var_mut(sc).data = Some(Values::Float(vec![2.5]));
    ds
}

#[test]
fn every_metadata_spelling_reads_the_same() {
    let d = tmpdir("spellings");
    let ds = small();
    let want = print(&ds, &InMemory, false, false, Some("small"));
    // netCDF-C 4.9.0 (upper case) and the documented lower-case layout
    for layout in [
        NczarrLayout::NetcdfC490,
        NczarrLayout::Documented,
        NczarrLayout::NetcdfC410,
    ] {
        let loc = format!("file://{}/{layout:?}.file#mode=nczarr,file", d.display());
        let opts = ZarrWriteOptions {
            layout,
            ..Default::default()
        };
        write(&ds, &loc, &opts);
        assert_same(
            &dump(&loc, false, false, Some("small")),
            &want,
            false,
            &format!("{layout:?}"),
        );
    }
    let up = fs::read_to_string(d.join("NetcdfC490.file/.zgroup")).unwrap();
    assert!(
        up.contains("_NCZARR_SUPERBLOCK") && up.contains("_NCZARR_GROUP"),
        "{up}"
    );
    let low = fs::read_to_string(d.join("Documented.file/.zgroup")).unwrap();
    assert!(
        low.contains("_nczarr_superblock") && low.contains("_nczarr_group"),
        "{low}"
    );

    // netCDF-C 4.10: the NCZarr keys moved into .zattrs
    let src = d.join("Documented.file");
    let moved = d.join("v410.file");
    copy_dir(&src, &moved);
    for key in [
        ".zgroup",
        "g/.zgroup",
        "v/.zarray",
        "g/w/.zarray",
        "sc/.zarray",
    ] {
        let zpath = moved.join(key);
        let apath = zpath.with_file_name(".zattrs");
        let mut z: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&fs::read(&zpath).unwrap()).unwrap();
        let mut a: serde_json::Map<String, serde_json::Value> = fs::read(&apath)
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap())
            .unwrap_or_default();
        for k in ["_nczarr_superblock", "_nczarr_group", "_nczarr_array"] {
            if let Some(v) = z.remove(k) {
                a.insert(k.to_string(), v);
            }
        }
        fs::write(&zpath, serde_json::to_vec(&z).unwrap()).unwrap();
        fs::write(&apath, serde_json::to_vec(&a).unwrap()).unwrap();
    }
    let loc = format!("file://{}#mode=nczarr,file", moved.display());
    assert_same(
        &dump(&loc, false, false, Some("small")),
        &want,
        false,
        "4.10 layout",
    );
    fs::remove_dir_all(&d).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn stored_layout_details() {
    let d = tmpdir("layout");
    let mut ds = small();
    let v = ds.find_var(ROOT, "v").unwrap();
    ds.var_mut(v).storage.filters = vec![filter(2, &[]), filter(1, &[4])];
    let loc = format!("file://{}/s.file#mode=nczarr,file", d.display());
    let opts = ZarrWriteOptions {
        dimension_separator: '/',
        layout: NczarrLayout::NetcdfC490,
        ..Default::default()
    };
    write(&ds, &loc, &opts);
    let r = |k: &str| fs::read_to_string(d.join("s.file").join(k)).unwrap();
    assert_eq!(
        r("v/.zarray"),
        r#"{"zarr_format":2,"shape":[5],"dtype":"<i4","chunks":[2],"fill_value":-2147483647,"order":"C","compressor":{"id":"zlib","level":4},"filters":[{"id":"shuffle","elementsize":4}],"dimension_separator":"/","_NCZARR_ARRAY":{"dimrefs":["/x"],"storage":"chunked"}}"#
    );
    assert_eq!(
        r("v/.zattrs"),
        r#"{"units":"m","_ARRAY_DIMENSIONS":["x"],"_NCZARR_ATTR":{"types":{"units":"<U1"}}}"#
    );
    assert_eq!(
        r("sc/.zarray"),
        r#"{"zarr_format":2,"shape":[],"dtype":"<f4","chunks":[],"fill_value":9.96921e+36,"order":"C","compressor":null,"filters":null,"dimension_separator":"/","_NCZARR_ARRAY":{"dimrefs":[],"storage":"scalar"}}"#
    );
    assert_eq!(
        r(".zgroup"),
        r#"{"zarr_format":2,"_NCZARR_SUPERBLOCK":{"version":"2.0.0"},"_NCZARR_GROUP":{"dims":{"x":5},"vars":["v","sc"],"groups":["g"]}}"#
    );
    assert_eq!(
        r("g/.zattrs"),
        r#"{"n":[3,4],"_NCZARR_ATTR":{"types":{"n":"<i2"}}}"#
    );
    // a subgroup variable gets no _ARRAY_DIMENSIONS (and no .zattrs without attributes)
    assert!(!d.join("s.file/g/w/.zattrs").exists());
    // '/' separated chunk keys
    assert!(d.join("s.file/g/w/0/0").is_file());
    assert!(d.join("s.file/v/2").is_file());
    let f = open(&loc);
    let v = f.dataset().find_var(ROOT, "v").unwrap();
    assert_eq!(
        f.read_var(v, &[1], &[4]).unwrap(),
        Values::Int(vec![2, 3, 4, 5])
    );
    assert_eq!(
        f.dataset().var(v).storage.codecs.as_deref(),
        Some(r#"[{"id": "shuffle","elementsize": 4},{"id": "zlib","level": 4}]"#)
    );
    assert_eq!(
        f.dataset().var(v).storage.filters,
        vec![filter(2, &[4]), filter(1, &[4])]
    );
    let sc = f.dataset().find_var(ROOT, "sc").unwrap();
    assert!(f.dataset().var(sc).dims.is_empty());
    assert_eq!(f.read_var(sc, &[], &[]).unwrap(), Values::Float(vec![2.5]));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn strings_follow_the_fixed_length_rules() {
    let d = tmpdir("strings");
    let mut ds = Dataset::new("str");
    let x = ds.add_dim(ROOT, "x", 3, false);
    let s = ds.add_var(ROOT, "s", AtomicType::String.into(), vec![x]);
    ds.var_mut(s).data = Some(Values::String(vec![
        Some("one".into()),
        Some("two".into()),
        Some("three".into()),
    ]));
    let c = ds.add_var(ROOT, "c", AtomicType::Char.into(), vec![x]);
    ds.var_mut(c).data = Some(Values::Char(b"ab".to_vec()));
    ds.groups[0].atts.push(Attribute {
        name: "names".into(),
        ty: AtomicType::String.into(),
        values: Values::String(vec![Some("a".into()), Some("bcd".into())]),
    });
    let loc = format!("file://{}/s.file#mode=nczarr,file", d.display());
    write(&ds, &loc, &Default::default());
    let za: serde_json::Value =
        serde_json::from_slice(&fs::read(d.join("s.file/s/.zarray")).unwrap()).unwrap();
    assert_eq!(za["dtype"], "|S128");
    let f = open(&loc);
    assert_eq!(
        f.read_var(s, &[0], &[3]).unwrap(),
        ds.vars[0].data.clone().unwrap()
    );
    assert_eq!(
        f.read_var(c, &[0], &[3]).unwrap(),
        Values::Char(b"ab\0".to_vec())
    );
    assert_eq!(f.dataset().groups[0].atts, ds.groups[0].atts);

    // _nczarr_maxstrlen: a too-long string is an error naming the cure, not a truncation
    ds.var_mut(s)
        .atts
        .push(Attribute::new("_nczarr_maxstrlen", Values::Int(vec![4])));
    let e = write_at(&loc, &ds, &InMemory, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("string of 5 bytes at element 2 is longer than the maximum string length 4"),
        "{e}"
    );
    ds.var_mut(s).atts[0].values = Values::Int(vec![5]);
    write(&ds, &loc, &Default::default());
    let za: serde_json::Value =
        serde_json::from_slice(&fs::read(d.join("s.file/s/.zarray")).unwrap()).unwrap();
    assert_eq!(za["dtype"], "|S5");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn user_types_are_refused() {
    let d = tmpdir("usertypes");
    let mut ds = Dataset::new("u");
    let t = ds.add_type(ROOT, "op", nc_dataset::UserTypeKind::Opaque { size: 4 });
    ds.add_var(ROOT, "o", nc_dataset::NcType::User(t), vec![]);
    let l = format!("file://{}/u.file#mode=nczarr,file", d.display());
    let e = write_at(&l, &ds, &InMemory, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("variable \"/o\" cannot be stored in Zarr"),
        "{e}"
    );
    fs::remove_dir_all(&d).unwrap();
}

/// Issue 31: a Zarr array lists the regions its chunks cover from its keys
/// (`DataSource::stored_regions`), so a copy visits only those: keys with `.` and `/`
/// separators (v2) and v3 default keys, a key past the array's end ignored, and nothing listed
/// when the stored fill is not the variable's netCDF fill (missing chunks would not read as
/// the output's fill).
#[test]
fn stored_regions_come_from_the_chunk_keys() {
    use nc_dataset::{DataSource, Region, VarId};
    let d = tmpdir("stored-regions");
    let arr = |sep: &str, fill: &str| {
        format!(
            r#"{{"zarr_format": 2, "shape": [1099511627776, 10], "chunks": [1000, 4], "dtype": "<i4", "fill_value": {fill}, "order": "C", "compressor": null, "filters": null, "dimension_separator": "{sep}"}}"#
        )
    };
    let attrs = r#"{"_ARRAY_DIMENSIONS": ["n", "m"], "_FillValue": 5}"#;
    let region = |s: [u64; 2], c: [u64; 2]| Region {
        start: s.to_vec(),
        count: c.to_vec(),
    };
    let chunk = vec![0u8; 1000 * 4 * 4];
    // chunk objects at `keys` of array `v`
    let write_chunks = |s: &Path, keys: &[String]| {
        for key in keys {
            let p = s.join("v").join(key);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, &chunk).unwrap();
        }
    };
    // the store's stored regions of `v`, in order of their start
    let listed = |s: &Path| -> Option<Vec<Region>> {
        let f = open_at(&format!("file://{}#mode=zarr,file", s.display())).unwrap();
        let mut got = f.stored_regions(f.dataset(), VarId(0))?;
        got.sort_by(|a, b| a.start.cmp(&b.start));
        Some(got)
    };
    for (name, sep) in [("dot", "."), ("slash", "/")] {
        let s = d.join(format!("{name}.zarr"));
        put(&s, ".zgroup", r#"{"zarr_format": 2}"#);
        put(&s, "v/.zarray", &arr(sep, "5"));
        put(&s, "v/.zattrs", attrs);
        let keys = ["0{}0", "7{}2", "1099511627{}1", "99999999999{}0"];
        write_chunks(&s, &keys.map(|k| k.replace("{}", sep)));
        assert_eq!(
            listed(&s).expect("listed"),
            vec![
                region([0, 0], [1000, 4]),
                region([7000, 8], [1000, 2]),
                region([1099511627000, 4], [776, 4]),
            ],
            "{name}"
        );
        // a stored fill that is not the netCDF fill: not listed
        put(&s, "v/.zarray", &arr(sep, "0"));
        assert_eq!(listed(&s), None, "{name}");
    }
    // Zarr v3, default chunk keys
    let s = d.join("v3.zarr");
    put(
        &s,
        "zarr.json",
        r#"{"zarr_format": 3, "node_type": "group"}"#,
    );
    put(
        &s,
        "v/zarr.json",
        r#"{"zarr_format": 3, "node_type": "array", "shape": [1099511627776, 10], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1000, 4]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 5, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {"_FillValue": 5}, "dimension_names": ["n", "m"]}"#,
    );
    write_chunks(&s, &["c/0/0".to_string(), "c/3/1".to_string()]);
    assert_eq!(
        listed(&s).expect("listed"),
        vec![region([0, 0], [1000, 4]), region([3000, 4], [1000, 4])]
    );
    fs::remove_dir_all(&d).unwrap();
}
