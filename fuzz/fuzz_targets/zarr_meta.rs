//! Fuzz the Zarr / NCZarr metadata parser and chunk reader: arbitrary `.zgroup`, `.zattrs`,
//! `.zarray` (and NCZarr) objects and chunks in an in-memory store must open or give an
//! error, and reading and printing what opened must not panic, hang or allocate unboundedly.
//!
//! Input: byte 0 = flags (bit 0 pure Zarr, bit 1 xarray dimensions, bit 2 read and print the
//! data, bit 3 the Zarr v3 seed: `zarr.json` objects, a sharded variable, shard indexes); the rest, split at 0xFF bytes (never in UTF-8 JSON), gives pieces whose first byte
//! picks a key of a valid seed store (or a few extra keys) and whose remaining bytes replace
//! that object (an empty remainder deletes it). An empty input opens the seed store.
//! The seed is an NCZarr store written by nc-zarr with groups, dimensions, attributes, a
//! string and a char variable, and the codecs zlib, shuffle, gzip, lz4 and delta.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nc_dataset::{AtomicType, Attribute, Dataset, FilterSpec, InMemory, Values, ROOT};
use nc_zarr::{write_into, MemStore, Store, ZarrFile};
use std::sync::OnceLock;

/// Keys not in the seed store that the reader may look for.
const EXTRA_KEYS: [&str; 8] = [
    ".nczarr",
    ".nczgroup",
    "v/.nczarray",
    "v/.nczattr",
    "zz/.zarray",
    "zz/.zattrs",
    "zz/zarr.json",
    ".zgroup",
];

/// Largest dataset (bytes of all variables) that is read and printed.
const MAX_DATA: u64 = 1 << 20;

fn seed(v3: bool) -> &'static Vec<(String, Vec<u8>)> {
    static SEED: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    static SEED3: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    (if v3 { &SEED3 } else { &SEED }).get_or_init(|| {
        let mut ds = Dataset::new("fuzz");
        let x = ds.add_dim(ROOT, "x", 7, false);
        let y = ds.add_dim(ROOT, "y", 4, false);
        let g = ds.add_group(ROOT, "g");
        let z = ds.add_dim(g, "z", 3, false);
        let codecs = |v: &mut nc_dataset::Variable, text: &str, chain: Vec<FilterSpec>| {
            v.storage.codecs = Some(text.to_string());
            v.storage.filters = chain;
        };
        let v = ds.add_var(ROOT, "v", AtomicType::Int.into(), vec![x, y]);
        ds.var_mut(v).data = Some(Values::Int((0..28).map(|k| k * 3 - 20).collect()));
        ds.var_mut(v).storage.chunk_sizes = Some(vec![3, 3]);
        // a Zarr v3 store shards it (2 x 1 shards of 2 x 2 inner chunks)
        ds.var_mut(v).storage.shard_sizes = Some(vec![6, 6]);
        codecs(
            ds.var_mut(v),
            r#"[{"id": "delta","dtype": "<i4","astype": "<i4"},{"id": "shuffle","elementsize": 4},{"id": "zlib","level": 1}]"#,
            vec![
                FilterSpec { id: 2, params: vec![] },
                FilterSpec { id: 1, params: vec![1] },
            ],
        );
        ds.var_mut(v)
            .atts
            .push(Attribute::new("scale", Values::Float(vec![0.5, 2.0])));
        let f = ds.add_var(ROOT, "f", AtomicType::Double.into(), vec![x]);
        ds.var_mut(f).data = Some(Values::Double((0..7).map(|k| f64::from(k) / 3.0).collect()));
        ds.var_mut(f).storage.chunk_sizes = Some(vec![4]);
        codecs(ds.var_mut(f), r#"[{"id": "lz4","acceleration": 1}]"#, vec![]);
        let s = ds.add_var(ROOT, "s", AtomicType::Short.into(), vec![y]);
        ds.var_mut(s).data = Some(Values::Short(vec![1, -2, 3, -4]));
        ds.var_mut(s).storage.endianness = Some(nc_dataset::Endianness::Big);
        codecs(ds.var_mut(s), r#"[{"id": "gzip","level": 5}]"#, vec![]);
        let w = ds.add_var(g, "w", AtomicType::String.into(), vec![z]);
        ds.var_mut(w).data = Some(Values::String(vec![Some("a".into()), None, Some("ccc".into())]));
        let c = ds.add_var(g, "c", AtomicType::Char.into(), vec![z, x]);
        ds.var_mut(c).data = Some(Values::Char(b"abcdefghijklmnopqrstu".to_vec()));
        ds.groups[0]
            .atts
            .push(Attribute::text("title", "{\"a\": [1, 2]}"));
        let store = MemStore::new();
        let mut out = Vec::new();
        let opts = nc_zarr::ZarrWriteOptions {
            v3,
            ..Default::default()
        };
        if !v3 {
            ds.var_mut(v).storage.shard_sizes = None;
        }
        if write_into(&store, &ds, &InMemory, v3, true, &opts).is_ok() {
            for k in store.list("").unwrap_or_default() {
                if let Ok(Some(b)) = store.get(&k) {
                    out.push((k, b));
                }
            }
        }
        out
    })
}

fuzz_target!(|data: &[u8]| {
    let (flags, rest) = match data.split_first() {
        Some((f, r)) => (*f, r),
        None => (0, &[][..]),
    };
    let seed = seed(flags & 8 != 0);
    let mut objects: Vec<(String, Option<Vec<u8>>)> = seed
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .chain(EXTRA_KEYS.iter().map(|k| (k.to_string(), None)))
        .collect();
    if !rest.is_empty() {
        for piece in rest.split(|&b| b == 0xff) {
            let Some((slot, body)) = piece.split_first() else {
                continue;
            };
            let i = usize::from(*slot) % objects.len();
            objects[i].1 = (!body.is_empty()).then(|| body.to_vec());
        }
    }
    let store = MemStore::new();
    for (k, v) in &objects {
        if let Some(v) = v {
            let _ = store.put(k, v);
        }
    }
    let pure = flags & 1 != 0;
    let xarray = flags & 2 != 0;
    let Ok(f) = ZarrFile::from_store(Box::new(store), "fuzz", pure, xarray) else {
        return;
    };
    let ds = f.dataset();
    // bounded data: every variable's bytes, checked
    let total = ds.data_bytes();
    let opts = nc_cdl::DumpOptions {
        header_only: flags & 4 == 0 || total.is_none_or(|t| t > MAX_DATA),
        special: true,
        ..Default::default()
    };
    let _ = nc_cdl::print(ds, &f, &opts, &mut std::io::sink());
});
