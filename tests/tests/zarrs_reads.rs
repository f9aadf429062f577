//! Issue 16: the `zarrs` crate (the Rust Zarr implementation, a dev-dependency) reads the Zarr
//! v3 stores `nccopy-rs` and `ncgen-rs` write — sharded (partial edge shards, inner chunks
//! never written) and not, every numeric type netCDF has and strings, zstd, gzip (deflate),
//! `numcodecs.shuffle`, `numcodecs.fletcher32`, directory and zip stores — with the values the
//! CDL source gives. Needs no Python: it runs everywhere `cargo test` does.
//!
//! `char` variables are left out: we write them as zarr-python writes `S1`
//! (`null_terminated_bytes`, a zarr-python extension data type), which zarrs 0.23 does not know.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;
use std::sync::Arc;
use zarrs::array::Array;
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::{ReadableStorageTraits, StoreKey};

const T: usize = 7;
const Y: usize = 13;
const X: usize = 10;

/// The values of each variable, in C order, as CDL literals and as the Rust values zarrs must
/// give back.
struct Data {
    temp: Vec<f32>,
    dbl: Vec<f64>,
    b: Vec<i8>,
    ub: Vec<u8>,
    s: Vec<i16>,
    us: Vec<u16>,
    i: Vec<i32>,
    ui: Vec<u32>,
    l: Vec<i64>,
    ul: Vec<u64>,
    names: Vec<String>,
    /// `partial`: the first 23 values given, the rest fill (-7)
    partial: Vec<i32>,
}

fn data() -> Data {
    Data {
        temp: (0..T * Y * X).map(|k| k as f32 * 0.25 - 100.0).collect(),
        dbl: (0..Y * X)
            .map(|k| (k as f64 - 60.0) * 1.5e-3 + 1e10)
            .collect(),
        b: (0..X as i64).map(|k| (k * 25 - 120) as i8).collect(),
        ub: (0..X as i64).map(|k| (255 - k * 20) as u8).collect(),
        s: (0..Y as i64).map(|k| (k * 5000 - 32000) as i16).collect(),
        us: (0..Y as i64).map(|k| (65535 - k * 4000) as u16).collect(),
        i: (0..T as i64)
            .map(|k| (k * 700_000_000 - 2_100_000_000) as i32)
            .collect(),
        ui: (0..T as i64)
            .map(|k| (i64::from(u32::MAX) - k * 600_000_000) as u32)
            .collect(),
        l: (0..Y * X)
            .map(|k| (k as i64 - 65) * 70_000_000_000_000_007)
            .collect(),
        ul: (0..X).map(|k| u64::MAX - (k as u64) * 3).collect(),
        names: (0..Y)
            .map(|k| format!("name {k} é{}", "x".repeat(k)))
            .collect(),
        partial: (0..Y * X)
            .map(|k| if k < 23 { k as i32 * 3 } else { -7 })
            .collect(),
    }
}

fn list<V: ToString>(v: &[V]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The CDL: `shards` adds `_ShardSizes` (for ncgen-rs writing v3 directly).
fn cdl(d: &Data, shards: bool) -> String {
    let sh = |v: &str, s: &str| {
        if shards {
            format!("    {v}:_ShardSizes = {s} ;\n")
        } else {
            String::new()
        }
    };
    let floats = |v: &[f32]| list(&v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>());
    let doubles = |v: &[f64]| list(&v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>());
    let ints = |v: &[i64]| list(&v.iter().map(|x| format!("{x}LL")).collect::<Vec<_>>());
    let uints = |v: &[u64]| list(&v.iter().map(|x| format!("{x}ULL")).collect::<Vec<_>>());
    let strs = |v: &[String]| list(&v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>());
    format!(
        "netcdf z {{
dimensions:
  t = {T} ;
  y = {Y} ;
  x = {X} ;
variables:
  float temp(t, y, x) ;
    temp:_ChunkSizes = 2, 5, 4 ;
{}    temp:_Filter = \"32015,3\" ;
    temp:units = \"K\" ;
  double dbl(y, x) ;
    dbl:_ChunkSizes = 5, 5 ;
{}    dbl:_DeflateLevel = 4 ;
    dbl:_Shuffle = \"true\" ;
  byte b(x) ;
  ubyte ub(x) ;
    ub:_ChunkSizes = 3 ;
  short s(y) ;
    s:_DeflateLevel = 1 ;
  ushort us(y) ;
    us:_Fletcher32 = \"true\" ;
  int i(t) ;
  uint ui(t) ;
  int64 l(y, x) ;
    l:_ChunkSizes = 4, 3 ;
{}    l:_Filter = \"32015,1\" ;
  uint64 ul(x) ;
  string names(y) ;
    names:_ChunkSizes = 4 ;
{}  int partial(y, x) ;
    partial:_FillValue = -7 ;
    partial:_ChunkSizes = 2, 2 ;
{}    partial:_DeflateLevel = 2 ;
data:
  temp = {} ;
  dbl = {} ;
  b = {} ;
  ub = {} ;
  s = {} ;
  us = {} ;
  i = {} ;
  ui = {} ;
  l = {} ;
  ul = {} ;
  names = {} ;
  partial = {} ;
}}
",
        sh("temp", "4, 10, 8"),
        sh("dbl", "10, 10"),
        sh("l", "8, 9"),
        sh("names", "8"),
        sh("partial", "8, 4"),
        floats(&d.temp),
        doubles(&d.dbl),
        list(&d.b),
        list(&d.ub),
        list(&d.s),
        list(&d.us),
        list(&d.i),
        list(&d.ui),
        ints(&d.l),
        uints(&d.ul),
        strs(&d.names),
        list(&d.partial[..23]),
    )
}

/// Open array `name` of the store and return all its elements.
fn get<T: zarrs::array::ElementOwned, S: ReadableStorageTraits + ?Sized + 'static>(
    store: &Arc<S>,
    name: &str,
) -> Vec<T> {
    let a = Array::open(store.clone(), &format!("/{name}"))
        .unwrap_or_else(|e| panic!("zarrs cannot open /{name}: {e}"));
    a.retrieve_array_subset::<Vec<T>>(&a.subset_all())
        .unwrap_or_else(|e| panic!("zarrs cannot read /{name}: {e}"))
}

/// Every variable of the store read by zarrs equals the source values; `sharded`: the
/// metadata says the shards we asked for.
fn check<S: ReadableStorageTraits + ?Sized + 'static>(
    what: &str,
    store: &Arc<S>,
    d: &Data,
    shards: Option<&[(&str, &[u64])]>,
) {
    assert_eq!(get::<f32, _>(store, "temp"), d.temp, "{what} temp");
    assert_eq!(get::<f64, _>(store, "dbl"), d.dbl, "{what} dbl");
    assert_eq!(get::<i8, _>(store, "b"), d.b, "{what} b");
    assert_eq!(get::<u8, _>(store, "ub"), d.ub, "{what} ub");
    assert_eq!(get::<i16, _>(store, "s"), d.s, "{what} s");
    assert_eq!(get::<u16, _>(store, "us"), d.us, "{what} us");
    assert_eq!(get::<i32, _>(store, "i"), d.i, "{what} i");
    assert_eq!(get::<u32, _>(store, "ui"), d.ui, "{what} ui");
    assert_eq!(get::<i64, _>(store, "l"), d.l, "{what} l");
    assert_eq!(get::<u64, _>(store, "ul"), d.ul, "{what} ul");
    assert_eq!(get::<String, _>(store, "names"), d.names, "{what} names");
    assert_eq!(get::<i32, _>(store, "partial"), d.partial, "{what} partial");
    for (name, want) in shards.unwrap_or_default() {
        let a = Array::open(store.clone(), &format!("/{name}")).unwrap();
        // a sharded array's chunk grid is its shard grid; the inner chunks are the shard's
        assert_eq!(
            a.chunk_grid_shape(),
            a.shape()
                .iter()
                .zip(*want)
                .map(|(n, s)| n.div_ceil(*s))
                .collect::<Vec<_>>(),
            "{what} {name}: shard grid"
        );
        let json = serde_json::to_string(&a.metadata()).unwrap();
        assert!(json.contains("sharding_indexed"), "{what} {name}: {json}");
    }
}

#[test]
fn zarrs_reads_our_v3_stores() {
    let dir = tempdir("zarrs-reads");
    let d = data();
    std::fs::write(dir.join("z.cdl"), cdl(&d, false)).unwrap();
    std::fs::write(dir.join("zs.cdl"), cdl(&d, true)).unwrap();
    let url = |p: &str, kind: &str| format!("file://{}#mode=zarr,v3,{kind}", dir.join(p).display());
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    ok(run("ncgen-rs", &["-4", "-o", "in.nc", "z.cdl"], &dir));
    // nccopy-rs: netCDF-4 -> v3 unsharded, and sharded (default shards of every chunked
    // variable, and given shards with partial edges)
    ok(run(
        "nccopy-rs",
        &["in.nc", &url("plain.zarr", "file")],
        &dir,
    ));
    ok(run(
        "nccopy-rs",
        &[
            "--shard",
            "auto",
            "--shard",
            "temp:4,10,8",
            "--shard",
            "partial:8,4",
            "in.nc",
            &url("sharded.zarr", "file"),
        ],
        &dir,
    ));
    // ncgen-rs writes v3 with _ShardSizes, to a directory and to a zip
    ok(run(
        "ncgen-rs",
        &["-o", &url("gen.zarr", "file"), "zs.cdl"],
        &dir,
    ));
    ok(run(
        "ncgen-rs",
        &["-o", &url("gen.zip", "zip"), "zs.cdl"],
        &dir,
    ));

    let fs = |p: &str| Arc::new(FilesystemStore::new(dir.join(p)).unwrap());
    check("nccopy-rs v3", &fs("plain.zarr"), &d, None);
    check(
        "nccopy-rs v3 --shard",
        &fs("sharded.zarr"),
        &d,
        Some(&[
            ("temp", &[4, 10, 8]),
            ("partial", &[8, 4]),
            ("dbl", &[13, 10]),
        ]),
    );
    let given: &[(&str, &[u64])] = &[
        ("temp", &[4, 10, 8]),
        ("dbl", &[10, 10]),
        ("l", &[8, 9]),
        ("names", &[8]),
        ("partial", &[8, 4]),
    ];
    check("ncgen-rs v3", &fs("gen.zarr"), &d, Some(given));
    let zip = Arc::new(
        zarrs_zip::ZipStorageAdapter::new(fs(""), StoreKey::new("gen.zip").unwrap())
            .unwrap_or_else(|e| panic!("zarrs cannot open gen.zip: {e}")),
    );
    check("ncgen-rs v3 zip", &zip, &d, Some(given));
    // the partial variable's shards past its data hold no inner chunk: the inner chunks
    // never written are absent, and zarrs gives their fill
    assert!(!Path::new(&dir.join("gen.zarr/partial/c/1/2")).exists());
    assert!(Path::new(&dir.join("gen.zarr/partial/c/0/0")).exists());
}
