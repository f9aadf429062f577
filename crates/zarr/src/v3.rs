//! Zarr version 3 reading (Zarr core specification 3.x, and the extensions zarr-python 3
//! writes): `zarr.json` groups and arrays (consolidated metadata used when the root has it),
//! `dimension_names` as shared dimensions, the data types netCDF can hold, `fill_value` in
//! every JSON form the specification allows, both chunk key encodings, and the codec chain
//! (`transpose`, `bytes`, `vlen-utf8`/`vlen-bytes`, `sharding_indexed` — nested, and with
//! codecs on the whole shard — and the bytes-to-bytes codecs `gzip`, `zstd`, `blosc`, `crc32c`
//! and `numcodecs.*`).
//!
//! The result is the same [`Dataset`] and [`VarInfo`] table the version 2 reader makes, so the
//! chunk assembly of `read.rs` serves both; a v3 array carries a [`V3Layout`] saying how its
//! chunk keys are spelled, how its chunks are transposed and how its shards are indexed. The
//! bytes-to-bytes codecs are given to the filter engine as the numcodecs codecs of the same
//! format (a v3 `gzip` is numcodecs' `gzip`, and so on).

use crate::attrs;
use crate::dtype::{Dtype, Endian, Kind};
use crate::error::ZarrError;
use crate::json::{self, as_f64};
use crate::meta::{
    as_obj, base64_decode, encode_one, fill_attribute, get_json, is_bookkeeping, join, layout,
    u64_list, VarInfo,
};
use crate::modes::Opening;
use crate::store::Store;
use nc_dataset::{
    default_fill, AtomicType, Dataset, DimId, FileInfo, Format, GroupId, NcType, Storage, Values,
    ROOT,
};
use nc_filters::codec_json::{codec_to_hdf5, ZarrCodec};
use nc_filters::FilterContext;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Deepest group nesting accepted.
const MAX_DEPTH: usize = 256;
/// Most inner chunks in one shard (the index is 16 bytes per inner chunk).
const MAX_INNER_CHUNKS: u64 = 1 << 26;

/// How a v3 array's chunks are found and laid out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct V3Layout {
    /// Chunk key encoding `default` (`c/1/2`; `c` alone for a 0-d array) or `v2` (`1.2`).
    pub default_keys: bool,
    /// The array is 0-dimensional (its one chunk is `c`, or `0` under `v2` keys).
    pub scalar: bool,
    /// The `transpose` order of the (inner) chunks; `None` when there is none or it is the
    /// identity.
    pub transpose: Option<Vec<usize>>,
    /// The shard layout of a sharded array: the chunk grid is then the shard grid, and
    /// [`VarInfo::chunks`] holds the inner chunk shape.
    pub shard: Option<Shard>,
}

/// `sharding_indexed`: shard shape, the form of its index, the codecs on the whole shard, and
/// the next level when its inner chunks are shards themselves (nested sharding).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shard {
    pub shape: Vec<u64>,
    /// Index at the start of the shard (`index_location: "start"`), else at its end.
    pub index_at_start: bool,
    /// Index entries stored big-endian.
    pub index_big: bool,
    /// The index is followed by its CRC-32C.
    pub index_crc: bool,
    /// Bytes-to-bytes codecs after `sharding_indexed` (application order): they encode the
    /// whole shard, which is then read whole and decoded before its index is read.
    pub codecs: Vec<ZarrCodec>,
    /// Most bytes the shard can hold before `codecs` (its index and every inner chunk at the
    /// largest size its codecs can encode it to), from the metadata alone: a stored or
    /// decoded shard claiming more is an error, never an allocation.
    pub max_bytes: u64,
    /// Nested sharding: the inner chunks are shards of this form (its `shape` is the inner
    /// chunk shape of this level).
    pub inner: Option<Box<Shard>>,
}

impl Shard {
    /// Inner chunks along each dimension of a shard whose innermost chunks are `leaf`: the
    /// chunks of the next level when nested, else `leaf`.
    pub fn per_shard(&self, leaf: &[u64]) -> Vec<u64> {
        let inner = self.inner_shape(leaf);
        self.shape.iter().zip(inner).map(|(s, c)| s / c).collect()
    }

    /// The shape of this level's inner chunks (`leaf`, the innermost chunk shape, when not
    /// nested).
    pub fn inner_shape<'a>(&'a self, leaf: &'a [u64]) -> &'a [u64] {
        self.inner.as_deref().map_or(leaf, |s| s.shape.as_slice())
    }

    /// Bytes of the index (entries and checksum).
    pub fn index_len(&self, leaf: &[u64]) -> u64 {
        let n: u64 = self.per_shard(leaf).iter().product();
        16 * n + if self.index_crc { 4 } else { 0 }
    }

    /// Most bytes the shard can be stored in: [`Shard::max_bytes`] through its codecs.
    pub fn max_stored(&self) -> u64 {
        expand(self.max_bytes, self.codecs.len(), 0)
    }
}

/// Deepest nesting of `sharding_indexed` codecs accepted.
const MAX_SHARD_LEVELS: usize = 8;

/// The largest size `n` bytes can be encoded to by `bytes_codecs` bytes-to-bytes codecs after
/// `element_codecs` numcodecs element codecs: compressors can grow incompressible data by a
/// little (the formats' worst cases are below 1/16 and a few hundred bytes of framing),
/// checksums add 4 bytes, and an element codec can widen the elements (`astype` from one to
/// eight bytes at most). Saturates at [`crate::store::MAX_OBJECT_SIZE`], the largest object.
fn expand(n: u64, bytes_codecs: usize, element_codecs: usize) -> u64 {
    let mut m = n;
    for _ in 0..element_codecs {
        m = m.saturating_mul(8).saturating_add(4096);
    }
    for _ in 0..bytes_codecs {
        m = m.saturating_add(m / 16).saturating_add(4096);
    }
    m.min(crate::store::MAX_OBJECT_SIZE)
}

/// True when the store's root is Zarr version 3 (a `zarr.json` and no `.zgroup`).
pub(crate) fn is_v3(store: &dyn Store) -> Result<bool, ZarrError> {
    Ok(store.get(".zgroup")?.is_none() && store.size("zarr.json")?.is_some())
}

/// What the loader produces: the dataset, one [`VarInfo`] per variable, and warnings.
pub(crate) type Loaded = (Dataset, Vec<VarInfo>, Vec<String>);

/// Read the whole metadata tree of a v3 store.
pub(crate) fn load(store: &dyn Store, loc: &Opening<'_>) -> Result<Loaded, ZarrError> {
    let root =
        get_json(store, "zarr.json")?.ok_or_else(|| ZarrError::meta("zarr.json", "missing"))?;
    check_node(&root, "zarr.json")?;
    // a store that is one array (zarr-python's `zarr.save(path, a)`): netCDF's root is a
    // group, so the array is the root group's one variable, named as the dataset is
    let root_array = node_type(&root, "zarr.json")? == "array";
    // every node below the root, by path: the consolidated metadata when the root has it
    // (zarr-python writes it inline), else each `zarr.json` the store lists
    let mut nodes: BTreeMap<String, Option<Value>> = BTreeMap::new();
    let consolidated = root
        .get("consolidated_metadata")
        .filter(|c| !c.is_null())
        .and_then(|c| c.get("metadata"))
        .and_then(Value::as_object);
    match consolidated {
        Some(meta) => {
            for (path, m) in meta {
                crate::store::check_key(path)?;
                nodes.insert(path.clone(), Some(m.clone()));
            }
        }
        None => {
            for k in store.list("")? {
                if let Some(path) = k.strip_suffix("/zarr.json") {
                    nodes.insert(path.to_string(), None);
                }
            }
        }
    }
    let mut ds = Dataset::new(loc.name);
    ds.format = Some(Format::Netcdf4);
    ds.info = FileInfo {
        nc_properties: None,
        superblock_version: Some(0),
        is_netcdf4: Some(true),
    };
    let mut l = V3Loader {
        store,
        nodes,
        ds,
        vars: Vec::new(),
        warnings: Vec::new(),
    };
    if root_array {
        l.load_array("", ROOT, loc.name, &root)?;
    } else {
        l.load_group("", ROOT, &root, 0)?;
    }
    Ok((l.ds, l.vars, l.warnings))
}

fn check_node(v: &Value, key: &str) -> Result<(), ZarrError> {
    as_obj(key, v)?;
    match v.get("zarr_format").and_then(Value::as_u64) {
        Some(3) => Ok(()),
        _ => Err(ZarrError::meta(
            key,
            format!(
                "zarr_format is {}, not 3",
                v.get("zarr_format")
                    .map_or("missing".to_string(), json::compact)
            ),
        )),
    }
}

fn node_type<'v>(v: &'v Value, key: &str) -> Result<&'v str, ZarrError> {
    match v.get("node_type").and_then(Value::as_str) {
        Some(t @ ("group" | "array")) => Ok(t),
        other => Err(ZarrError::meta(
            key,
            format!(
                "node_type is {}, neither \"group\" nor \"array\"",
                other.map_or("missing".to_string(), |t| format!("{t:?}"))
            ),
        )),
    }
}

struct V3Loader<'a> {
    store: &'a dyn Store,
    nodes: BTreeMap<String, Option<Value>>,
    ds: Dataset,
    vars: Vec<VarInfo>,
    warnings: Vec<String>,
}

/// A codec of a v3 chain: its name and configuration (`{}` when it has none).
fn codec_parts<'v>(c: &'v Value, key: &str) -> Result<(&'v str, Map<String, Value>), ZarrError> {
    match c {
        Value::String(name) => Ok((name, Map::new())),
        Value::Object(o) => {
            let name = o.get("name").and_then(Value::as_str).ok_or_else(|| {
                ZarrError::meta(key, format!("codec {} has no \"name\"", json::compact(c)))
            })?;
            let config = match o.get("configuration") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(m)) => m.clone(),
                Some(other) => {
                    return Err(ZarrError::meta(
                        key,
                        format!(
                            "codec \"{name}\": configuration {} is not an object",
                            json::compact(other)
                        ),
                    ))
                }
            };
            Ok((name, config))
        }
        other => Err(ZarrError::meta(
            key,
            format!(
                "codec {} is neither a name nor an object",
                json::compact(other)
            ),
        )),
    }
}

/// A codec chain taken apart.
#[derive(Debug, Default)]
struct Chain {
    transpose: Option<Vec<usize>>,
    /// `bytes` endian (`None`: not said, one-byte types).
    endian: Option<Endian>,
    /// `vlen-utf8` / `vlen-bytes` serialise the elements.
    vlen: bool,
    /// `sharding_indexed`: index form, inner chunk shape and inner chain.
    shard: Option<(Shard, Vec<u64>, Box<Chain>)>,
    /// Array-to-array numcodecs codecs (before the array-to-bytes codec), as numcodecs JSON,
    /// in application order.
    element: Vec<Value>,
    /// Bytes-to-bytes codecs (after the array-to-bytes codec), as numcodecs JSON, in
    /// application order.
    bytes: Vec<Value>,
}

impl Chain {
    /// The numcodecs chain of a chain's chunks, as the filter engine applies it: element
    /// codecs, then bytes codecs.
    fn filters(&self) -> Vec<Value> {
        self.element.iter().chain(&self.bytes).cloned().collect()
    }
}

/// Take apart `codecs` of an array of rank `rank`; `key` names the metadata for messages;
/// `depth` is the number of `sharding_indexed` codecs around this chain.
fn parse_chain(codecs: &[Value], rank: usize, key: &str, depth: usize) -> Result<Chain, ZarrError> {
    let mut chain = Chain::default();
    // 0: array→array, 1: array→bytes seen, then bytes→bytes
    let mut phase = 0;
    for c in codecs {
        let (name, config) = codec_parts(c, key)?;
        let bad = |what: String| ZarrError::meta(key, format!("codec \"{name}\": {what}"));
        match name {
            "transpose" => {
                if phase != 0 {
                    return Err(bad("comes after the array is serialised".into()));
                }
                if !chain.element.is_empty() {
                    return Err(bad(
                        "a transpose after a numcodecs element codec is not supported; put \
                         the transpose first"
                            .into(),
                    ));
                }
                let order: Vec<usize> = match config.get("order") {
                    Some(Value::String(s)) if s == "C" => (0..rank).collect(),
                    Some(Value::String(s)) if s == "F" => (0..rank).rev().collect(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|x| x.as_u64().map(|n| n as usize))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| bad("\"order\" is not a list of integers".into()))?,
                    _ => return Err(bad("no \"order\"".into())),
                };
                let mut seen = vec![false; rank];
                for &o in &order {
                    if o >= rank || std::mem::replace(&mut seen[o], true) {
                        return Err(bad(format!(
                            "order {order:?} is not a permutation of 0..{rank}"
                        )));
                    }
                }
                if order.len() != rank {
                    return Err(bad(format!(
                        "order {order:?} is not a permutation of 0..{rank}"
                    )));
                }
                // two transposes are one: the second permutes the axes of the first's result
                let order = match chain.transpose.take() {
                    Some(first) => order.iter().map(|&k| first[k]).collect(),
                    None => order,
                };
                if order.iter().enumerate().any(|(i, &o)| i != o) {
                    chain.transpose = Some(order);
                }
            }
            "bytes" | "vlen-utf8" | "vlen-bytes" | "sharding_indexed" => {
                if phase != 0 {
                    return Err(bad("a second array-to-bytes codec".into()));
                }
                phase = 1;
                match name {
                    "bytes" => {
                        chain.endian = match config.get("endian").and_then(Value::as_str) {
                            None => None,
                            Some("little") => Some(Endian::Little),
                            Some("big") => Some(Endian::Big),
                            Some(e) => {
                                return Err(bad(format!("endian {e:?} is neither little nor big")))
                            }
                        }
                    }
                    "sharding_indexed" => {
                        if depth >= MAX_SHARD_LEVELS {
                            return Err(bad(format!(
                                "sharding nested more than {MAX_SHARD_LEVELS} levels deep"
                            )));
                        }
                        chain.shard = Some(parse_shard(&config, rank, key, depth)?);
                    }
                    _ => chain.vlen = true,
                }
            }
            _ => {
                let Some(j) = nc_filters::codec_json::numcodecs_of_v3(name, &config) else {
                    return Err(ZarrError::meta(
                        key,
                        format!(
                            "unknown codec \"{name}\" ({}); the codecs read are transpose, \
                             bytes, vlen-utf8, vlen-bytes, sharding_indexed, gzip, zstd, blosc, \
                             crc32c and numcodecs.*",
                            json::compact(c)
                        ),
                    ));
                };
                let id = j.get("id").and_then(Value::as_str).unwrap_or("");
                if matches!(id, "pcodec" | "zfpy") {
                    return Err(bad(
                        "numcodecs' array-to-bytes codecs (pcodec, zfpy) are not read; \
                         rewrite the array with the bytes codec and a compressor"
                            .into(),
                    ));
                }
                // array-to-array numcodecs codecs (delta, fixedscaleoffset...) run on the
                // elements before they are serialised: the filter engine sees them as
                // filters before the compressor, as in Zarr v2
                match (nc_filters::codec_json::is_element_codec(id), phase) {
                    (true, 0) => chain.element.push(j),
                    (false, 1) => chain.bytes.push(j),
                    (true, _) => {
                        return Err(bad(
                            "an array-to-array codec after the array-to-bytes codec".into(),
                        ))
                    }
                    (false, _) => {
                        return Err(bad(
                            "a bytes-to-bytes codec before the array-to-bytes codec".into(),
                        ))
                    }
                }
            }
        }
    }
    if phase == 0 {
        return Err(ZarrError::meta(
            key,
            "the codecs have no array-to-bytes codec (bytes, vlen-utf8 or sharding_indexed)",
        ));
    }
    Ok(chain)
}

fn parse_shard(
    config: &Map<String, Value>,
    rank: usize,
    key: &str,
    depth: usize,
) -> Result<(Shard, Vec<u64>, Box<Chain>), ZarrError> {
    let bad = |what: String| ZarrError::meta(key, format!("codec \"sharding_indexed\": {what}"));
    let inner = u64_list(
        key,
        "sharding_indexed chunk_shape",
        config.get("chunk_shape"),
    )?;
    if inner.len() != rank || inner.contains(&0) {
        return Err(bad(format!(
            "chunk_shape {inner:?} is not {rank} positive lengths"
        )));
    }
    let codecs = config
        .get("codecs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"codecs\" list".into()))?;
    let inner_chain = parse_chain(codecs, rank, key, depth + 1)?;
    let index_codecs = config
        .get("index_codecs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"index_codecs\" list".into()))?;
    let mut index_big = false;
    let mut index_crc = false;
    for (i, c) in index_codecs.iter().enumerate() {
        let (name, cfg) = codec_parts(c, key)?;
        match (i, name) {
            (0, "bytes") => {
                index_big = match cfg.get("endian").and_then(Value::as_str) {
                    None | Some("little") => false,
                    Some("big") => true,
                    Some(e) => return Err(bad(format!("index endian {e:?}"))),
                }
            }
            (1, "crc32c") => index_crc = true,
            _ => {
                return Err(bad(format!(
                    "index codecs {} are not supported (bytes, optionally followed by crc32c)",
                    json::compact(&Value::Array(index_codecs.clone()))
                )))
            }
        }
    }
    if index_codecs.is_empty() {
        return Err(bad("index_codecs is empty".into()));
    }
    let index_at_start = match config.get("index_location").and_then(Value::as_str) {
        None | Some("end") => false,
        Some("start") => true,
        Some(o) => {
            return Err(bad(format!(
                "index_location {o:?} is neither start nor end"
            )))
        }
    };
    Ok((
        Shard {
            shape: Vec::new(),
            index_at_start,
            index_big,
            index_crc,
            codecs: Vec::new(),
            max_bytes: 0,
            inner: None,
        },
        inner,
        Box::new(inner_chain),
    ))
}

/// The element type of a v3 `data_type`, or why netCDF cannot hold it.
fn data_type(v: &Value) -> Result<Dtype, String> {
    use AtomicType as A;
    let num = |t| Kind::Num(t);
    let (name, config) = match v {
        Value::String(s) => (s.as_str(), None),
        Value::Object(o) => (
            o.get("name").and_then(Value::as_str).unwrap_or(""),
            o.get("configuration"),
        ),
        _ => ("", None),
    };
    let length = || {
        config
            .and_then(|c| c.get("length_bytes"))
            .and_then(Value::as_u64)
            .filter(|&n| (1..=1 << 20).contains(&n))
            .map(|n| n as usize)
            .ok_or_else(|| format!("{name} without a length_bytes of 1 to 1048576"))
    };
    let kind = match name {
        "bool" | "uint8" => num(A::UByte),
        "int8" => num(A::Byte),
        "int16" => num(A::Short),
        "int32" => num(A::Int),
        "int64" => num(A::Int64),
        "uint16" => num(A::UShort),
        "uint32" => num(A::UInt),
        "uint64" => num(A::UInt64),
        "float32" => num(A::Float),
        "float64" => num(A::Double),
        "string" | "variable_length_bytes" | "bytes" => Kind::VlenUtf8,
        "null_terminated_bytes" | "fixed_length_bytes" => match length()? {
            1 => Kind::Char,
            n => Kind::Bytes(n),
        },
        "fixed_length_utf32" => {
            let n = length()?;
            if n % 4 != 0 {
                return Err(format!("{name} of {n} bytes, not a multiple of 4"));
            }
            match n / 4 {
                1 => Kind::Char,
                k => Kind::Unicode(k),
            }
        }
        "float16" => Kind::Half,
        "complex64" | "complex128" => return Err("complex numbers have no netCDF type".into()),
        n if n.starts_with("numpy.datetime64") || n.starts_with("numpy.timedelta64") => {
            return Err("datetime/timedelta have no netCDF type".into())
        }
        "raw_bytes" => return Err("raw bytes (NumPy void) have no netCDF type".into()),
        "structured" => {
            return Err("structured (NumPy record) types are not read as netCDF compounds".into())
        }
        "" => return Err(format!("{} is not a data type", json::compact(v))),
        other => return Err(format!("unknown data type \"{other}\"")),
    };
    Ok(Dtype {
        kind,
        endian: Endian::NotApplicable,
    })
}

/// Bit pattern of a hexadecimal fill (`"0x7fc00000"`).
fn hex_bits(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

/// The fill value of a v3 array as one netCDF value (`None`: the JSON is not a fill of this
/// type).
fn fill_value(v: &Value, d: &Dtype, utf32: bool) -> Option<Values> {
    match d.kind {
        Kind::Num(t @ (AtomicType::Float | AtomicType::Double)) => {
            let x = match v {
                Value::String(s) if hex_bits(s).is_some() => {
                    let bits = hex_bits(s)?;
                    if t == AtomicType::Float {
                        f64::from(f32::from_bits(u32::try_from(bits).ok()?))
                    } else {
                        f64::from_bits(bits)
                    }
                }
                other => as_f64(other)?,
            };
            Some(if t == AtomicType::Float {
                Values::Float(vec![x as f32])
            } else {
                Values::Double(vec![x])
            })
        }
        // a half fill, exactly as the half it is (netCDF reads a half array as float)
        Kind::Half => {
            let x = match v {
                Value::String(s) if hex_bits(s).is_some() => {
                    crate::convert::f16_to_f32(u16::try_from(hex_bits(s)?).ok()?)
                }
                other => {
                    crate::convert::f16_to_f32(crate::convert::f32_to_f16(as_f64(other)? as f32))
                }
            };
            Some(Values::Float(vec![x]))
        }
        Kind::Num(t) => match v {
            Value::String(s) if hex_bits(s).is_some() => {
                let bits = hex_bits(s)?;
                let mut one = bits.to_le_bytes()[..t.size()].to_vec();
                one.resize(t.size(), 0);
                Some(crate::convert::decode(
                    &one,
                    &Dtype {
                        kind: d.kind,
                        endian: Endian::Little,
                    },
                ))
            }
            other => attrs::numbers(other, t).filter(|x| x.len() == 1),
        },
        // bytes fill values are base64 (zarr-python 3: b"x" is "eA=="); a one-character
        // fixed_length_utf32 fill is the character itself, which a char holds up to U+00FF
        Kind::Char => {
            let b = match v {
                Value::String(s) if utf32 => match s.chars().next() {
                    None => 0,
                    Some(c) if s.chars().count() == 1 => u8::try_from(u32::from(c)).ok()?,
                    Some(_) => return None,
                },
                Value::String(s) => base64_decode(s)?.first().copied().unwrap_or(0),
                Value::Number(n) => n.as_u64().and_then(|n| u8::try_from(n).ok())?,
                _ => return None,
            };
            Some(Values::Char(vec![b]))
        }
        Kind::Bytes(_) => {
            let mut b = base64_decode(v.as_str()?)?;
            if let Some(end) = b.iter().position(|&c| c == 0) {
                b.truncate(end);
            }
            Some(Values::String(vec![Some(b.as_slice().into())]))
        }
        Kind::Unicode(_) => Some(Values::String(vec![Some(v.as_str()?.into())])),
        Kind::VlenUtf8 => None,
    }
}

/// Inverse of a `transpose` with `order` on a chunk of C-order `shape`: the encoded chunk is
/// the C-order array of shape `shape[order[k]]`; return the chunk in C order of `shape`.
pub(crate) fn untranspose(data: &[u8], shape: &[u64], order: &[usize], es: usize) -> Vec<u8> {
    let rank = shape.len();
    let tshape: Vec<usize> = order.iter().map(|&o| shape[o] as usize).collect();
    // strides (elements) of the transposed array
    let mut ts = vec![1usize; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        ts[k] = ts[k + 1] * tshape[k + 1];
    }
    // stride in the transposed array of each original dimension
    let mut src_stride = vec![0usize; rank];
    for (k, &o) in order.iter().enumerate() {
        src_stride[o] = ts[k];
    }
    let n = data.len() / es;
    let mut out = vec![0u8; data.len()];
    let mut pos = vec![0usize; rank];
    for c in 0..n {
        let s: usize = (0..rank).map(|i| pos[i] * src_stride[i]).sum();
        out[c * es..(c + 1) * es].copy_from_slice(&data[s * es..(s + 1) * es]);
        for d in (0..rank).rev() {
            pos[d] += 1;
            if pos[d] < shape[d] as usize {
                break;
            }
            pos[d] = 0;
        }
    }
    out
}

impl V3Loader<'_> {
    fn node(&self, path: &str) -> Result<Value, ZarrError> {
        let key = join(path, "zarr.json");
        match self.nodes.get(path) {
            Some(Some(v)) => Ok(v.clone()),
            _ => get_json(self.store, &key)?
                .ok_or_else(|| ZarrError::meta(&key, "listed but missing")),
        }
    }

    /// The direct children of group `prefix`, by name.
    fn children(&self, prefix: &str) -> Vec<String> {
        let start = if prefix.is_empty() {
            String::new()
        } else {
            format!("{prefix}/")
        };
        self.nodes
            .range(start.clone()..)
            .take_while(|(k, _)| k.starts_with(&start))
            .filter_map(|(k, _)| {
                let rest = &k[start.len()..];
                (!rest.is_empty() && !rest.contains('/')).then(|| rest.to_string())
            })
            .collect()
    }

    fn attributes(
        &mut self,
        meta: &Value,
        key: &str,
        fill_type: Option<AtomicType>,
        root: bool,
    ) -> Result<Vec<nc_dataset::Attribute>, ZarrError> {
        let Some(a) = meta.get("attributes").filter(|a| !a.is_null()) else {
            return Ok(Vec::new());
        };
        let obj = a
            .as_object()
            .ok_or_else(|| ZarrError::meta(key, "\"attributes\" is not an object"))?;
        let mut out = Vec::new();
        for (name, v) in obj {
            if is_bookkeeping(name, v, root, &mut self.ds.info) {
                continue;
            }
            let ty = (name == "_FillValue").then_some(fill_type).flatten();
            // xarray writes a float `_FillValue` of a v3 array as the base64 of a little-endian
            // double
            if let (Some(t @ (AtomicType::Float | AtomicType::Double)), Value::String(text)) =
                (ty, v)
            {
                if let Some(b) = base64_decode(text).filter(|b| b.len() == 8) {
                    let x = f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                    let values = if t == AtomicType::Float {
                        Values::Float(vec![x as f32])
                    } else {
                        Values::Double(vec![x])
                    };
                    out.push(nc_dataset::Attribute {
                        name: name.clone(),
                        ty: NcType::Atomic(t),
                        values,
                    });
                    continue;
                }
            }
            out.push(attrs::from_json(name, v, ty));
        }
        Ok(out)
    }

    fn load_group(
        &mut self,
        prefix: &str,
        gid: GroupId,
        meta: &Value,
        depth: usize,
    ) -> Result<(), ZarrError> {
        let key = join(prefix, "zarr.json");
        if depth > MAX_DEPTH {
            return Err(ZarrError::meta(
                &key,
                format!("groups nested deeper than {MAX_DEPTH}"),
            ));
        }
        let atts = self.attributes(meta, &key, None, gid == ROOT)?;
        self.ds.group_mut(gid).atts = atts;
        let mut groups = Vec::new();
        for name in self.children(prefix) {
            let path = join(prefix, &name);
            let ckey = join(&path, "zarr.json");
            let m = self.node(&path)?;
            check_node(&m, &ckey)?;
            match node_type(&m, &ckey)? {
                "array" => self.load_array(&path, gid, &name, &m)?,
                _ => groups.push((name, path, m)),
            }
        }
        for (name, path, m) in groups {
            let child = self.ds.add_group(gid, name);
            self.load_group(&path, child, &m, depth + 1)?;
        }
        Ok(())
    }

    /// The dimension `name` of length `len` for an array of group `gid`: the one of that name
    /// seen from `gid` (its own or an ancestor's) when the lengths agree, else a new one in
    /// `gid`. Two lengths for one name in one group is an error.
    fn dim(&mut self, gid: GroupId, name: &str, len: u64, key: &str) -> Result<DimId, ZarrError> {
        let mut g = Some(gid);
        while let Some(gg) = g {
            if let Some(d) = self.ds.find_dim(gg, name) {
                let have = self.ds.dim(d).len;
                if have == len {
                    return Ok(d);
                }
                if gg == gid {
                    return Err(ZarrError::meta(
                        key,
                        format!(
                            "dimension \"{name}\" has length {len} here but {have} in another \
                             array of the same group"
                        ),
                    ));
                }
                break;
            }
            g = self.ds.group(gg).parent;
        }
        Ok(self.ds.add_dim(gid, name.to_string(), len, false))
    }

    fn load_array(
        &mut self,
        path: &str,
        gid: GroupId,
        name: &str,
        meta: &Value,
    ) -> Result<(), ZarrError> {
        let key = join(path, "zarr.json");
        let obj = as_obj(&key, meta)?;
        let shape = u64_list(&key, "shape", obj.get("shape"))?;
        let rank = shape.len();
        let mut dtype = match data_type(obj.get("data_type").unwrap_or(&Value::Null)) {
            Ok(d) => d,
            Err(why) => {
                self.warnings.push(format!(
                    "array \"/{path}\" left out: data type {} ({why})",
                    json::compact(obj.get("data_type").unwrap_or(&Value::Null))
                ));
                return Ok(());
            }
        };
        // chunk grid
        let grid = obj
            .get("chunk_grid")
            .ok_or_else(|| ZarrError::meta(&key, "no \"chunk_grid\""))?;
        let (gname, gconf) = codec_parts(grid, &key)?;
        if gname != "regular" {
            return Err(ZarrError::meta(
                &key,
                format!("chunk grid \"{gname}\" is not supported (only \"regular\")"),
            ));
        }
        let outer = u64_list(&key, "chunk_shape", gconf.get("chunk_shape"))?;
        if outer.len() != rank || outer.contains(&0) {
            return Err(ZarrError::meta(
                &key,
                format!("chunk_shape {outer:?} is not {rank} positive lengths"),
            ));
        }
        // chunk keys
        let (default_keys, sep) = match obj.get("chunk_key_encoding") {
            None => (true, '/'),
            Some(e) => {
                let (ename, econf) = codec_parts(e, &key)?;
                let sep = econf.get("separator").and_then(Value::as_str);
                match (ename, sep) {
                    ("default", None | Some("/")) => (true, '/'),
                    ("default", Some(".")) => (true, '.'),
                    ("v2", None | Some(".")) => (false, '.'),
                    ("v2", Some("/")) => (false, '/'),
                    _ => {
                        return Err(ZarrError::meta(
                            &key,
                            format!(
                                "chunk key encoding {} is not supported (default or v2, \
                                 separator \"/\" or \".\")",
                                json::compact(e)
                            ),
                        ))
                    }
                }
            }
        };
        if let Some(t) = obj.get("storage_transformers").and_then(Value::as_array) {
            if !t.is_empty() {
                return Err(ZarrError::meta(
                    &key,
                    "storage transformers are not supported",
                ));
            }
        }
        // codecs
        let codecs = obj
            .get("codecs")
            .and_then(Value::as_array)
            .ok_or_else(|| ZarrError::meta(&key, "\"codecs\" is missing or not a list"))?;
        let chain = parse_chain(codecs, rank, &key, 0)?;
        // the shard levels, outermost first, each with its chunk shape; the innermost chain
        // and chunk shape are what the filter engine and the chunk assembly see
        let mut levels: Vec<(Shard, Vec<Value>)> = Vec::new();
        let mut leaf = chain;
        let mut inner = outer.clone();
        while let Some((mut shard, chunk, inner_chain)) = leaf.shard.take() {
            if leaf.transpose.is_some() || !leaf.element.is_empty() {
                return Err(ZarrError::meta(
                    &key,
                    "array-to-array codecs before sharding_indexed (a transpose, numcodecs \
                     element codecs) are not supported (zarr-python 3.1 does not read them \
                     back either); put them inside the shard's codecs",
                ));
            }
            for (s, c) in inner.iter().zip(&chunk) {
                if s % c != 0 {
                    return Err(ZarrError::meta(
                        &key,
                        format!(
                            "shard shape {inner:?} is not a whole number of inner chunks \
                             {chunk:?}"
                        ),
                    ));
                }
            }
            let per: u64 = inner.iter().zip(&chunk).map(|(s, c)| s / c).product();
            if per > MAX_INNER_CHUNKS {
                return Err(ZarrError::meta(
                    &key,
                    format!("more than {MAX_INNER_CHUNKS} inner chunks in one shard"),
                ));
            }
            shard.shape = std::mem::replace(&mut inner, chunk);
            levels.push((shard, std::mem::take(&mut leaf.bytes)));
            leaf = *inner_chain;
        }
        if let Some(e) = leaf.endian {
            if dtype.size() > 1 || matches!(dtype.kind, Kind::Unicode(_)) {
                dtype.endian = e;
            }
        } else if dtype.kind == Kind::VlenUtf8 && !leaf.vlen {
            return Err(ZarrError::meta(
                &key,
                "a string array needs the vlen-utf8 (or vlen-bytes) codec",
            ));
        } else if dtype.size() > 1 && !matches!(dtype.kind, Kind::Bytes(_)) && !leaf.vlen {
            // `bytes` without `endian` for a multi-byte type: the specification requires it
            return Err(ZarrError::meta(
                &key,
                "the bytes codec gives no endian for a multi-byte data type",
            ));
        }
        if leaf.vlen && dtype.kind != Kind::VlenUtf8 {
            return Err(ZarrError::meta(
                &key,
                "vlen-utf8 / vlen-bytes serialise string arrays only",
            ));
        }
        if dtype.endian == Endian::Big && !leaf.element.is_empty() {
            return Err(ZarrError::meta(
                &key,
                "numcodecs array codecs on big-endian data are not supported",
            ));
        }
        // inner chunk size must be addressable
        let chunk_bytes = inner
            .iter()
            .try_fold(dtype.size() as u64, |a, &c| a.checked_mul(c))
            .filter(|&n| n <= crate::store::MAX_OBJECT_SIZE)
            .ok_or_else(|| ZarrError::meta(&key, "one chunk would exceed 4 GiB"))?;
        let ctx = FilterContext::new(dtype.size(), &inner);
        let zarr_codecs = |list: &[Value], ctx: &FilterContext| {
            list.iter()
                .map(|j| {
                    let spec = codec_to_hdf5(j, ctx)
                        .map_err(|e| ZarrError::meta(&key, format!("variable \"/{path}\": {e}")))?;
                    Ok(ZarrCodec {
                        json: j.clone(),
                        spec,
                    })
                })
                .collect::<Result<Vec<_>, ZarrError>>()
        };
        let zcodecs = zarr_codecs(&leaf.filters(), &ctx)?;
        // the shard levels, innermost first, each bounded by what its inner chunks can hold
        // (strings have no size the metadata bounds: the whole-object limit bounds them)
        let mut most = if dtype.kind == Kind::VlenUtf8 {
            crate::store::MAX_OBJECT_SIZE
        } else {
            expand(chunk_bytes, leaf.bytes.len(), leaf.element.len())
        };
        let mut shard: Option<Shard> = None;
        for (mut level, bytes) in levels.into_iter().rev() {
            level.inner = shard.take().map(Box::new);
            let n: u64 = level.per_shard(&inner).iter().product();
            level.max_bytes = n
                .saturating_mul(most)
                .saturating_add(level.index_len(&inner))
                .min(crate::store::MAX_OBJECT_SIZE);
            level.codecs = zarr_codecs(&bytes, &FilterContext::new(1, &[]))?;
            most = level.max_stored();
            shard = Some(level);
        }

        // dimensions
        let names: Vec<Option<String>> = match obj.get("dimension_names") {
            None | Some(Value::Null) => vec![None; rank],
            Some(Value::Array(a)) if a.len() == rank => a
                .iter()
                .map(|x| x.as_str().filter(|s| !s.is_empty()).map(str::to_string))
                .collect(),
            Some(other) => {
                return Err(ZarrError::meta(
                    &key,
                    format!(
                        "dimension_names {} is not a list of {rank} names",
                        json::compact(other)
                    ),
                ))
            }
        };
        let mut dims = Vec::with_capacity(rank);
        for (n, &len) in names.iter().zip(&shape) {
            let d = match n {
                Some(n) => {
                    if n.contains(['/', '\0']) {
                        return Err(ZarrError::meta(
                            &key,
                            format!("dimension name {n:?} is not a netCDF name"),
                        ));
                    }
                    self.dim(gid, n, len, &key)?
                }
                None => self.dim(ROOT, &format!("_zdim_{len}"), len, &key)?,
            };
            dims.push(d);
        }
        let t = dtype.atomic();
        let vid = self
            .ds
            .add_var(gid, name.to_string(), NcType::Atomic(t), dims);
        let atts = self.attributes(meta, &key, Some(t), false)?;

        // fill value
        let fv = obj.get("fill_value").unwrap_or(&Value::Null);
        let fill_attr = fill_attribute(&atts);
        let utf32 = obj
            .get("data_type")
            .and_then(|t| t.get("name").or(Some(t)))
            .and_then(Value::as_str)
            == Some("fixed_length_utf32");
        let parsed = fill_value(fv, &dtype, utf32);
        if parsed.is_none() && !fv.is_null() && dtype.kind != Kind::VlenUtf8 {
            return Err(ZarrError::meta(
                &key,
                format!(
                    "fill_value {} is not a value of the array's data type",
                    json::compact(fv)
                ),
            ));
        }
        let fill_vals = parsed
            .clone()
            .or_else(|| fill_attr.clone())
            .unwrap_or_else(|| default_fill(t));
        let fill = encode_one(&fill_vals, &dtype);
        // the array's fill value, kept in the storage settings when the variable has no
        // _FillValue and it is not netCDF's default (as the v2 reader does for pure Zarr)
        let stored_fill = (fill_attr.is_none()
            && matches!(dtype.kind, Kind::Num(_) | Kind::Half)
            && fill != encode_one(&default_fill(t), &dtype))
        .then_some(parsed)
        .flatten();

        let scalar = rank == 0;
        let var = self.ds.var_mut(vid);
        var.atts = atts;
        var.storage = Storage {
            layout: Some(layout(scalar)),
            chunk_sizes: (!scalar).then(|| inner.clone()),
            shard_sizes: shard.as_ref().map(|s| s.shape.clone()),
            // a v3 gzip is deflate in gzip framing: deflate (filter 1) is what it becomes in a
            // netCDF-4 copy, and what a v3 copy turns back into gzip
            filters: zcodecs
                .iter()
                .filter_map(|c| {
                    c.spec.clone().or_else(|| {
                        (c.json.get("id").and_then(Value::as_str) == Some("gzip")).then(|| {
                            let level = c.json.get("level").and_then(Value::as_u64).unwrap_or(1);
                            nc_dataset::FilterSpec {
                                id: 1,
                                params: vec![level.min(9) as u32],
                            }
                        })
                    })
                })
                .collect(),
            codecs: Some(json::compact(&Value::Array(codecs.clone()))),
            endianness: dtype.endianness(),
            no_fill: None,
            quantize: None,
            fill_value: stored_fill,
        };
        let vpath = crate::meta::var_path(&self.ds, gid, name);
        crate::meta::push_var(
            &mut self.vars,
            vid,
            &key,
            VarInfo {
                key: path.to_string(),
                path: vpath,
                dtype,
                shape: if scalar { vec![1] } else { shape },
                chunks: if scalar { vec![1] } else { inner },
                fill,
                fortran: false,
                sep,
                codecs: zcodecs,
                v3: Some(Box::new(V3Layout {
                    default_keys,
                    scalar,
                    transpose: leaf.transpose,
                    shard,
                })),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;
    use serde_json::json;

    #[test]
    fn transpose_back_to_c_order() {
        // a 2x3 array [[0,1,2],[3,4,5]] stored transposed (order [1,0]) is its 3x2 transpose
        let stored: Vec<u8> = vec![0, 3, 1, 4, 2, 5];
        assert_eq!(
            untranspose(&stored, &[2, 3], &[1, 0], 1),
            vec![0, 1, 2, 3, 4, 5]
        );
        // rank 3, order [2,0,1]: transposed shape (4,2,3)
        let shape = [2u64, 3, 4];
        let mut stored = vec![0u8; 24];
        for a in 0..2 {
            for b in 0..3 {
                for c in 0..4 {
                    // transposed index (c, a, b)
                    stored[c * 6 + a * 3 + b] = (a * 12 + b * 4 + c) as u8;
                }
            }
        }
        let back = untranspose(&stored, &shape, &[2, 0, 1], 1);
        assert_eq!(back, (0..24).collect::<Vec<u8>>());
    }

    #[test]
    fn data_types_and_fills() {
        let d = |v: Value| data_type(&v).map(|d| (d.kind, d.size()));
        assert_eq!(d(json!("bool")), Ok((Kind::Num(AtomicType::UByte), 1)));
        assert_eq!(d(json!("int16")), Ok((Kind::Num(AtomicType::Short), 2)));
        assert_eq!(d(json!("string")), Ok((Kind::VlenUtf8, 8)));
        assert_eq!(
            d(json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}})),
            Ok((Kind::Bytes(3), 3))
        );
        assert_eq!(
            d(json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}})),
            Ok((Kind::Char, 1))
        );
        assert!(d(json!("complex64")).is_err());
        assert!(d(json!("nope")).is_err());
        let f32d = data_type(&json!("float32")).unwrap();
        let f = |v: Value| fill_value(&v, &f32d, false);
        assert!(matches!(f(json!("NaN")), Some(Values::Float(x)) if x[0].is_nan()));
        assert_eq!(
            f(json!("-Infinity")),
            Some(Values::Float(vec![f32::NEG_INFINITY]))
        );
        assert_eq!(f(json!("0x3fc00000")), Some(Values::Float(vec![1.5])));
        assert_eq!(f(json!(2.5)), Some(Values::Float(vec![2.5])));
        let i2 = data_type(&json!("int16")).unwrap();
        assert_eq!(
            fill_value(&json!(-7), &i2, false),
            Some(Values::Short(vec![-7]))
        );
        assert_eq!(
            fill_value(&json!("0xfffe"), &i2, false),
            Some(Values::Short(vec![-2]))
        );
        let b = data_type(&json!("bool")).unwrap();
        assert_eq!(
            fill_value(&json!(true), &b, false),
            Some(Values::UByte(vec![1]))
        );
        // float16 reads as float, its fill the half it is
        let h = data_type(&json!("float16")).unwrap();
        assert_eq!(
            (h.kind, h.size(), h.atomic()),
            (Kind::Half, 2, AtomicType::Float)
        );
        assert_eq!(
            fill_value(&json!("0x3e00"), &h, false),
            Some(Values::Float(vec![1.5]))
        );
        assert_eq!(
            fill_value(&json!(0.1), &h, false),
            Some(Values::Float(vec![0.099975586]))
        );
        assert!(
            matches!(fill_value(&json!("NaN"), &h, false), Some(Values::Float(x)) if x[0].is_nan())
        );
        // one-character strings: bytes fills are base64, UTF-32 fills the character itself
        let c = Dtype {
            kind: Kind::Char,
            endian: Endian::NotApplicable,
        };
        assert_eq!(
            fill_value(&json!("eA=="), &c, false),
            Some(Values::Char(b"x".to_vec()))
        );
        assert_eq!(
            fill_value(&json!("z"), &c, true),
            Some(Values::Char(b"z".to_vec()))
        );
        assert_eq!(
            fill_value(&json!(""), &c, true),
            Some(Values::Char(vec![0]))
        );
        assert_eq!(fill_value(&json!("\u{3b1}"), &c, true), None);
        assert_eq!(fill_value(&json!("ab"), &c, true), None);
    }

    #[test]
    fn chains() {
        let c = parse_chain(
            &[
                json!({"name": "transpose", "configuration": {"order": [1, 0]}}),
                json!({"name": "bytes", "configuration": {"endian": "big"}}),
                json!({"name": "gzip", "configuration": {"level": 5}}),
                json!({"name": "crc32c"}),
            ],
            2,
            "k",
            0,
        )
        .unwrap();
        assert_eq!(c.transpose, Some(vec![1, 0]));
        assert_eq!(c.endian, Some(Endian::Big));
        assert_eq!(
            c.filters(),
            vec![json!({"id": "gzip", "level": 5}), json!({"id": "crc32c"})]
        );
        // two transposes are one: [2,0,1] then [1,2,0] is the identity
        let t = |o: Value| json!({"name": "transpose", "configuration": {"order": o}});
        let c = parse_chain(
            &[t(json!([2, 0, 1])), t(json!([1, 2, 0])), json!("bytes")],
            3,
            "k",
            0,
        )
        .unwrap();
        assert_eq!(c.transpose, None);
        let c = parse_chain(
            &[t(json!([1, 0, 2])), t(json!([0, 2, 1])), json!("bytes")],
            3,
            "k",
            0,
        )
        .unwrap();
        // B = A transposed [1,0,2]; C = B transposed [0,2,1]: C's axes are A's 1, 2, 0
        assert_eq!(c.transpose, Some(vec![1, 2, 0]));
        // nested sharding with codecs on the whole shards
        let sh = |chunk: Value, codecs: Value| {
            json!({"name": "sharding_indexed", "configuration": {
                "chunk_shape": chunk, "codecs": codecs,
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}]}})
        };
        let c = parse_chain(
            &[
                sh(
                    json!([4, 6]),
                    json!([sh(json!([2, 3]), json!(["bytes", {"name": "zstd"}])), {"name": "gzip"}]),
                ),
                json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}),
            ],
            2,
            "k",
            0,
        )
        .unwrap();
        assert_eq!(c.bytes, vec![json!({"id": "zlib", "level": 1})]);
        let (s0, chunk0, inner) = c.shard.unwrap();
        assert!(s0.index_crc && !s0.index_at_start);
        assert_eq!(chunk0, vec![4, 6]);
        assert_eq!(inner.bytes, vec![json!({"id": "gzip"})]);
        let (_, chunk1, leaf) = inner.shard.unwrap();
        assert_eq!(chunk1, vec![2, 3]);
        assert_eq!(leaf.bytes, vec![json!({"id": "zstd"})]);
        let deep = (0..=MAX_SHARD_LEVELS).fold(json!(["bytes"]), |inner, _| {
            json!([sh(json!([1, 1]), inner)])
        });
        let e = parse_chain(deep.as_array().unwrap(), 2, "k", 0).unwrap_err();
        assert!(e.to_string().contains("nested more than 8"), "{e}");
        for bad in [
            vec![json!({"name": "gzip"})],
            vec![json!({"name": "gzip"}), json!("bytes")],
            vec![json!("bytes"), json!("bytes")],
            vec![
                json!({"name": "transpose", "configuration": {"order": [0, 0]}}),
                json!("bytes"),
            ],
            vec![json!("bytes"), json!({"name": "mystery"})],
            vec![
                json!("bytes"),
                json!({"name": "numcodecs.delta", "configuration": {}}),
            ],
            vec![json!({"name": "numcodecs.pcodec", "configuration": {}})],
            vec![
                json!({"name": "numcodecs.delta", "configuration": {}}),
                t(json!([1, 0])),
                json!("bytes"),
            ],
        ] {
            assert!(parse_chain(&bad, 2, "k", 0).is_err(), "{bad:?}");
        }
    }
}
