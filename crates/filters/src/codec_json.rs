//! numcodecs JSON (Zarr v2 `compressor` / `filters`) ↔ HDF5 filter id + parameters, for the
//! standard codecs (NCZarr filter proposal; numcodecs codec ids):
//!
//! | codec | JSON | HDF5 |
//! |---|---|---|
//! | zlib | `{"id":"zlib","level":L}` | `1,L` |
//! | shuffle | `{"id":"shuffle","elementsize":N}` (the real element size, never 0) | `2,N` |
//! | fletcher32 | `{"id":"fletcher32"}` | `3` |
//! | szip | `{"id":"szip","mask":M,"pixels-per-block":P}` | `4,M,P` |
//! | bz2 | `{"id":"bz2","level":L}` | `307,L` |
//! | zstd | `{"id":"zstd","level":L}` | `32015,L` |
//! | blosc | `{"id":"blosc","cname":C,"clevel":L,"shuffle":S,"blocksize":B}` | `32001,2,2,T,N,L,S,C` |
//!
//! Numbers written as JSON strings (older NCZarr) are accepted on read. Unknown codecs are
//! kept verbatim ([`ZarrCodec::spec`] is `None`) so metadata can still show them.
//!
//! **Zarr-only codecs**: numcodecs codecs whose chunk format no HDF5 filter has. They have no
//! HDF5 id (so `_Filter` never shows them; `_Codecs` keeps their JSON) and are built directly
//! from their JSON by [`zarr_only_filter`] (errors report them as filter 0):
//!
//! | codec | JSON | chunk |
//! |---|---|---|
//! | gzip | `{"id":"gzip","level":L}` | one gzip member (RFC 1952) |
//! | lz4 | `{"id":"lz4","acceleration":A}` | 4-byte little-endian size + one LZ4 block |
//! | delta | `{"id":"delta","dtype":"<i4","astype":"<i4"}` | differences of consecutive elements |
//! | crc32c | `{"id":"crc32c"}` (Zarr v3: `{"name":"crc32c"}`) | the chunk, then its CRC-32C as 4 little-endian bytes |
//! | lzma, astype, quantize, bitround, fixedscaleoffset, packbits | see `codecs::numcast`, `codecs::lzma` | |
//! | categorize | `{"id":"categorize","labels":["a","b"],"dtype":"<U1","astype":"\|u1"}` | 1-based label index per string |
//!
//! numcodecs' `lz4` framing differs from the HDF5 lz4 filter's (32004: 8-byte big-endian
//! size, block size, sized blocks), so a Zarr `lz4` codec is never filter 32004. Writing a
//! chain holding filter 32004 to Zarr emits numcodecs' `lz4` ([`hdf5_to_codec`]), whose chunks
//! are then in numcodecs' framing (the writer builds its pipeline from the JSON).

use crate::filter::{Filter, FilterContext};
use nc_dataset::FilterSpec;
use serde_json::{json, Map, Value};

/// Bad or unsupported codec JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecJsonError {
    /// Not valid JSON text.
    #[error("codec JSON {text:?} is not valid JSON: {msg}")]
    Syntax {
        /// The text.
        text: String,
        /// The parser's message.
        msg: String,
    },
    /// Not an object with a string `"id"`.
    #[error("codec JSON {json} is not an object with a string \"id\"")]
    NoId {
        /// The JSON.
        json: String,
    },
    /// A field with a wrong value.
    #[error("codec \"{codec}\": field \"{field}\" = {value} is not {expected}")]
    BadField {
        /// Codec id.
        codec: String,
        /// Field name.
        field: String,
        /// The value found.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// An HDF5 filter id with no standard codec.
    #[error("filter {id} has no standard Zarr codec")]
    NoCodec {
        /// Filter id.
        id: u32,
    },
    /// A Zarr-only codec configuration we cannot apply (e.g. delta with another `astype`).
    #[error("codec {json}: {why}")]
    Unsupported {
        /// The codec JSON.
        json: String,
        /// What is not supported.
        why: String,
    },
}

/// blosc compressor names in HDF5 blosc filter code order.
const BLOSC_CNAMES: [&str; 6] = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];

fn field_i64(
    obj: &Map<String, Value>,
    codec: &str,
    field: &str,
) -> Result<Option<i64>, CodecJsonError> {
    let Some(v) = obj.get(field) else {
        return Ok(None);
    };
    let n = match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        Value::Null => return Ok(None),
        _ => None,
    };
    n.map(Some).ok_or_else(|| CodecJsonError::BadField {
        codec: codec.into(),
        field: field.into(),
        value: v.to_string(),
        expected: "an integer",
    })
}

fn ranged(
    v: Option<i64>,
    default: i64,
    lo: i64,
    hi: i64,
    codec: &str,
    field: &str,
) -> Result<u32, CodecJsonError> {
    let x = v.unwrap_or(default);
    if x < lo || x > hi {
        return Err(CodecJsonError::BadField {
            codec: codec.into(),
            field: field.into(),
            value: x.to_string(),
            expected: "in range",
        });
    }
    Ok(x as i32 as u32)
}

/// The HDF5 filter for one codec JSON object, or `None` for a codec we do not know.
///
/// # Errors
/// [`CodecJsonError`] for a malformed object or field.
pub fn codec_to_hdf5(
    codec: &Value,
    ctx: &FilterContext,
) -> Result<Option<FilterSpec>, CodecJsonError> {
    let obj = codec.as_object().ok_or_else(|| CodecJsonError::NoId {
        json: codec.to_string(),
    })?;
    let id = obj
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| CodecJsonError::NoId {
            json: codec.to_string(),
        })?;
    let f = |name: &str| field_i64(obj, id, name);
    let spec = |fid: u32, params: Vec<u32>| Ok(Some(FilterSpec { id: fid, params }));
    match id {
        "zlib" | "deflate" => spec(1, vec![ranged(f("level")?, 1, 0, 9, id, "level")?]),
        "shuffle" => {
            let size = f("elementsize")?
                .filter(|&n| n > 0)
                .unwrap_or(ctx.type_size as i64);
            spec(2, vec![ranged(Some(size), 1, 1, 255, id, "elementsize")?])
        }
        "fletcher32" => spec(3, vec![]),
        "szip" => {
            let mask = ranged(f("mask")?, 32, 0, i64::from(u32::MAX), id, "mask")?;
            let ppb = match f("pixels-per-block")? {
                Some(v) => Some(v),
                None => f("pixels_per_block")?,
            };
            spec(
                4,
                vec![mask, ranged(ppb, 32, 2, 32, id, "pixels-per-block")?],
            )
        }
        "bz2" | "bzip2" => spec(307, vec![ranged(f("level")?, 9, 1, 9, id, "level")?]),
        "zstd" => spec(
            32015,
            vec![ranged(f("level")?, 1, -131072, 22, id, "level")?],
        ),
        "blosc" => {
            let cname = match obj.get("cname") {
                None | Some(Value::Null) => "lz4".to_string(),
                Some(Value::String(s)) => s.clone(),
                Some(v) => {
                    return Err(CodecJsonError::BadField {
                        codec: id.into(),
                        field: "cname".into(),
                        value: v.to_string(),
                        expected: "a compressor name",
                    })
                }
            };
            let code = BLOSC_CNAMES
                .iter()
                .position(|c| *c == cname)
                .ok_or_else(|| CodecJsonError::BadField {
                    codec: id.into(),
                    field: "cname".into(),
                    value: format!("{cname:?}"),
                    expected: "one of blosclz, lz4, lz4hc, snappy, zlib, zstd",
                })?;
            let clevel = ranged(f("clevel")?, 5, 0, 9, id, "clevel")?;
            // numcodecs: -1 = auto (byte shuffle, bit shuffle for 1-byte types)
            let shuffle = match ranged(f("shuffle")?, 1, -1, 2, id, "shuffle")? as i32 {
                -1 if ctx.type_size == 1 => 2,
                -1 => 1,
                s => s as u32,
            };
            let mut p = crate::codecs::working_for(32001, &[], ctx);
            p.extend([clevel, shuffle, code as u32]);
            spec(32001, p)
        }
        _ => Ok(None),
    }
}

/// The numcodecs JSON for an HDF5 filter (working or visible parameters). Filter 32004 (HDF5
/// lz4) becomes numcodecs' `lz4`, a Zarr-only codec with its own chunk framing.
///
/// # Errors
/// [`CodecJsonError::NoCodec`] for ids without a standard codec.
pub fn hdf5_to_codec(spec: &FilterSpec, ctx: &FilterContext) -> Result<Value, CodecJsonError> {
    let p = &spec.params;
    let at = |i: usize, d: u32| p.get(i).copied().unwrap_or(d);
    Ok(match spec.id {
        1 => json!({"id": "zlib", "level": at(0, 1)}),
        2 => {
            let size = match at(0, 0) {
                0 => ctx.type_size as u32,
                s => s,
            };
            json!({"id": "shuffle", "elementsize": size})
        }
        3 => json!({"id": "fletcher32"}),
        // the user's coding choice only (EC 4 / NN 32), not the working bits HDF5 adds
        4 => json!({"id": "szip", "mask": at(0, 32) & (4 | 32), "pixels-per-block": at(1, 32)}),
        307 => json!({"id": "bz2", "level": at(0, 9)}),
        32015 => json!({"id": "zstd", "level": at(0, 1) as i32}),
        32004 => json!({"id": "lz4", "acceleration": 1}),
        32001 => {
            let code = at(6, 0) as usize;
            json!({
                "id": "blosc",
                "cname": BLOSC_CNAMES.get(code).copied().unwrap_or("lz4"),
                "clevel": at(4, 5),
                "shuffle": at(5, 1),
                "blocksize": 0,
            })
        }
        id => return Err(CodecJsonError::NoCodec { id }),
    })
}

/// One codec of a Zarr chain: its JSON, and the HDF5 filter when it is a known codec.
#[derive(Debug, Clone, PartialEq)]
pub struct ZarrCodec {
    /// The JSON as read (kept verbatim for `_Codecs`).
    pub json: Value,
    /// The HDF5 equivalent, `None` for an unknown codec (data access will fail).
    pub spec: Option<FilterSpec>,
}

/// Zarr's split of a chain: the last filter is the `compressor`, the others the `filters`
/// in order.
pub fn split_chain(chain: &[FilterSpec]) -> (Option<&FilterSpec>, &[FilterSpec]) {
    match chain.split_last() {
        Some((last, rest)) => (Some(last), rest),
        None => (None, chain),
    }
}

/// `(compressor, filters)` JSON for a chain (application order).
///
/// # Errors
/// [`CodecJsonError::NoCodec`] for a filter with no standard codec.
pub fn chain_to_zarr(
    chain: &[FilterSpec],
    ctx: &FilterContext,
) -> Result<(Value, Value), CodecJsonError> {
    let (comp, filters) = split_chain(chain);
    let comp = match comp {
        Some(c) => hdf5_to_codec(c, ctx)?,
        None => Value::Null,
    };
    let filters: Vec<Value> = filters
        .iter()
        .map(|f| hdf5_to_codec(f, ctx))
        .collect::<Result<_, _>>()?;
    let filters = if filters.is_empty() {
        Value::Null
    } else {
        Value::Array(filters)
    };
    Ok((comp, filters))
}

/// The chain (application order: filters, then compressor) of Zarr `compressor` and
/// `filters` values (each may be JSON null).
///
/// # Errors
/// [`CodecJsonError`] for a malformed codec object.
pub fn zarr_to_chain(
    compressor: &Value,
    filters: &Value,
    ctx: &FilterContext,
) -> Result<Vec<ZarrCodec>, CodecJsonError> {
    let mut out = Vec::new();
    let mut push = |v: &Value| -> Result<(), CodecJsonError> {
        out.push(ZarrCodec {
            json: v.clone(),
            spec: codec_to_hdf5(v, ctx)?,
        });
        Ok(())
    };
    match filters {
        Value::Null => {}
        Value::Array(a) => {
            for v in a {
                push(v)?;
            }
        }
        v => push(v)?,
    }
    if !compressor.is_null() {
        push(compressor)?;
    }
    Ok(out)
}

/// Parse codec JSON text (one object, or an array of them as `_Codecs` shows), in numcodecs
/// form: the codecs of a Zarr v3 list (`{"name": ..., "configuration": ...}`, as `ncdump -s`
/// of a v3 store shows them) are turned into numcodecs objects by [`v3_as_numcodecs`].
///
/// # Errors
/// [`CodecJsonError::Syntax`] for invalid JSON, [`CodecJsonError::Unsupported`] for a v3
/// codec with no numcodecs form.
pub fn parse_codecs(text: &str) -> Result<Vec<Value>, CodecJsonError> {
    let v: Value = serde_json::from_str(text).map_err(|e| CodecJsonError::Syntax {
        text: text.to_string(),
        msg: e.to_string(),
    })?;
    let list = match v {
        Value::Array(a) => a,
        v => vec![v],
    };
    let mut out = Vec::with_capacity(list.len());
    v3_as_numcodecs(list, &mut out, 0)?;
    Ok(out)
}

/// Append the numcodecs form of the codecs of `list` to `out`: numcodecs objects (with an
/// `"id"`) as they are; Zarr v3 codecs (with a `"name"`) mapped by [`numcodecs_of_v3`], a v3
/// `gzip` as deflate (`zlib`: the same compression in other framing, as the v3 reader's
/// `_Filter` shows it and the v3 writer turns back into `gzip`), the serialising codecs
/// (`bytes`, `vlen-utf8`, `vlen-bytes`, `transpose`: the element order and byte order, which
/// `_Endianness` and the netCDF layout carry) left out, and a `sharding_indexed` replaced by
/// its inner codecs, at every level of a nested sharding (`_ChunkSizes` and `_ShardSizes`
/// carry its shapes). Codecs after a `sharding_indexed` encode whole shards: they are part of
/// the shard layout, as the shard shape is, and left out with it (the chunks' filters are
/// those inside the shard).
fn v3_as_numcodecs(
    list: Vec<Value>,
    out: &mut Vec<Value>,
    depth: usize,
) -> Result<(), CodecJsonError> {
    let mut sharded = false;
    for c in list {
        if sharded {
            continue;
        }
        let name = match (c.get("id"), c.get("name").and_then(Value::as_str)) {
            (None, Some(n)) => n.to_string(),
            _ => {
                out.push(c);
                continue;
            }
        };
        let config = c
            .get("configuration")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let unsupported = |why: &str| CodecJsonError::Unsupported {
            json: c.to_string(),
            why: why.into(),
        };
        match name.as_str() {
            "bytes" | "vlen-utf8" | "vlen-bytes" | "transpose" => {}
            "sharding_indexed" if depth < 8 => {
                let inner = config
                    .get("codecs")
                    .and_then(Value::as_array)
                    .cloned()
                    .ok_or_else(|| unsupported("sharding_indexed without a \"codecs\" list"))?;
                v3_as_numcodecs(inner, out, depth + 1)?;
                sharded = true;
            }
            "sharding_indexed" => return Err(unsupported("sharding nested more than 8 deep")),
            "gzip" => out.push(json!({
                "id": "zlib",
                "level": config.get("level").cloned().unwrap_or(json!(1)),
            })),
            _ => out.push(numcodecs_of_v3(&name, &config).ok_or_else(|| {
                unsupported(
                    "not a Zarr v3 codec with a numcodecs form (bytes, transpose, vlen-utf8, \
                     sharding_indexed, gzip, zstd, blosc, crc32c, numcodecs.*)",
                )
            })?),
        }
    }
    Ok(())
}

/// The numcodecs JSON of a Zarr v3 bytes-to-bytes or `numcodecs.*` codec, exactly (a v3
/// `gzip` is numcodecs' `gzip`, a v3 `blosc`'s shuffle name its number), or `None` for a name
/// that has none.
pub fn numcodecs_of_v3(name: &str, config: &Map<String, Value>) -> Option<Value> {
    let mut obj = Map::new();
    match name {
        "gzip" | "zstd" | "crc32c" => {
            obj.insert("id".into(), Value::String(name.into()));
            if let Some(level) = config.get("level") {
                obj.insert("level".into(), level.clone());
            }
        }
        "blosc" => {
            obj.insert("id".into(), "blosc".into());
            for k in ["cname", "clevel", "blocksize"] {
                if let Some(v) = config.get(k) {
                    obj.insert(k.into(), v.clone());
                }
            }
            let shuffle = match config.get("shuffle") {
                Some(Value::String(s)) => match s.as_str() {
                    "noshuffle" => 0.into(),
                    "shuffle" => 1.into(),
                    "bitshuffle" => 2.into(),
                    other => Value::String(other.into()),
                },
                Some(v) => v.clone(),
                None => 0.into(),
            };
            obj.insert("shuffle".into(), shuffle);
        }
        _ => {
            let id = name.strip_prefix("numcodecs.")?;
            obj.insert("id".into(), Value::String(id.into()));
            for (k, v) in config {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    Some(Value::Object(obj))
}

/// numcodecs codecs that work on the array's elements, not its bytes: Zarr v2 `filters`
/// (never a `compressor`), Zarr v3 array-to-array codecs (before `bytes`).
pub const ELEMENT_CODECS: [&str; 7] = [
    "delta",
    "astype",
    "quantize",
    "bitround",
    "fixedscaleoffset",
    "packbits",
    "categorize",
];

/// numcodecs ids of the Zarr-only codecs (no HDF5 filter id; see the module documentation):
/// the element codecs and these bytes-to-bytes ones.
const ZARR_ONLY_BYTES_CODECS: [&str; 7] = [
    "gzip",
    "crc32c",
    "lz4",
    "lzma",
    "crc32",
    "adler32",
    "jenkins_lookup3",
];

/// True when numcodecs id `id` is one of the [`ELEMENT_CODECS`].
pub fn is_element_codec(id: &str) -> bool {
    ELEMENT_CODECS.contains(&id)
}

/// The ids of the Zarr-only codecs in a `_Codecs` text (a JSON array of codec objects, in
/// numcodecs or Zarr v3 form), in order; empty when there are none or the text is not such
/// an array.
pub fn zarr_only_ids(codecs: &str) -> Vec<String> {
    parse_codecs(codecs)
        .unwrap_or_default()
        .iter()
        .filter(|c| is_zarr_only(c))
        .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// True when `codec` is an object whose `"id"` names a Zarr-only codec.
pub fn is_zarr_only(codec: &Value) -> bool {
    codec
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| ZARR_ONLY_BYTES_CODECS.contains(&id) || is_element_codec(id))
}

fn string_field<'a>(
    obj: &'a Map<String, Value>,
    codec: &str,
    field: &str,
) -> Result<Option<&'a str>, CodecJsonError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(CodecJsonError::BadField {
            codec: codec.into(),
            field: field.into(),
            value: v.to_string(),
            expected: "a NumPy type string such as \"<i4\"",
        }),
    }
}

/// The configured filter of a Zarr-only codec (`gzip`, `lz4`, `delta`), `Ok(None)` for any
/// other codec. Decoded chunks are bounded by `ctx.max_decoded`.
///
/// # Errors
/// [`CodecJsonError::BadField`] for a malformed field, [`CodecJsonError::Unsupported`] for a
/// configuration we cannot apply (a delta `dtype` that is not an integer or float type, an
/// `astype` other than the `dtype`).
pub fn zarr_only_filter(
    codec: &Value,
    ctx: &FilterContext,
) -> Result<Option<Box<dyn Filter>>, CodecJsonError> {
    let Some(obj) = codec.as_object() else {
        return Ok(None);
    };
    let Some(id) = obj.get("id").and_then(Value::as_str) else {
        return Ok(None);
    };
    let f = |name: &str| field_i64(obj, id, name);
    Ok(Some(match id {
        "gzip" => {
            let level = ranged(f("level")?, 1, 0, 9, id, "level")?;
            Box::new(crate::codecs::GZip::new(level, ctx.max_decoded))
        }
        "lz4" => {
            // acceleration only trades ratio for speed: any integer is accepted
            f("acceleration")?;
            Box::new(crate::codecs::NumcodecsLz4::new(ctx.max_decoded))
        }
        "delta" => {
            let dtype =
                string_field(obj, id, "dtype")?.ok_or_else(|| CodecJsonError::Unsupported {
                    json: codec.to_string(),
                    why: "no \"dtype\" (a NumPy type string such as \"<i4\")".into(),
                })?;
            let astype = string_field(obj, id, "astype")?.unwrap_or(dtype);
            let d = crate::codecs::Delta::new(dtype, astype).map_err(|why| {
                CodecJsonError::Unsupported {
                    json: codec.to_string(),
                    why,
                }
            })?;
            Box::new(d)
        }
        "astype" | "quantize" | "bitround" | "fixedscaleoffset" => {
            let bad = |why: String| CodecJsonError::Unsupported {
                json: codec.to_string(),
                why,
            };
            let need = |name: &str| -> Result<&str, CodecJsonError> {
                string_field(obj, id, name)?.ok_or_else(|| {
                    bad(format!(
                        "no \"{name}\" (a NumPy type string such as \"<f8\")"
                    ))
                })
            };
            // (name, decoded type, stored type, linear map)
            let (name, decoded, stored, linear) = match id {
                "astype" => ("astype", need("decode_dtype")?, need("encode_dtype")?, None),
                "quantize" => {
                    let d = need("dtype")?;
                    (
                        "quantize",
                        d,
                        string_field(obj, id, "astype")?.unwrap_or(d),
                        None,
                    )
                }
                "bitround" => {
                    // lossy on encode only: the stored elements are the array's own
                    f("keepbits")?;
                    let t = if ctx.type_size == 4 { "<f4" } else { "<f8" };
                    ("bitround", t, t, None)
                }
                _ => {
                    let d = need("dtype")?;
                    let num = |k: &str| {
                        obj.get(k)
                            .and_then(Value::as_f64)
                            .ok_or_else(|| bad(format!("no number \"{k}\"")))
                    };
                    let lin = Some((num("scale")?, num("offset")?));
                    let a = string_field(obj, id, "astype")?.unwrap_or(d);
                    ("fixedscaleoffset", d, a, lin)
                }
            };
            Box::new(crate::codecs::Cast::new(name, decoded, stored, linear).map_err(bad)?)
        }
        "packbits" => Box::new(crate::codecs::PackBits),
        "crc32c" | "crc32" | "adler32" => {
            // numcodecs' checksums go first by default, but CRC32C's (Zarr v3's is always at
            // the end)
            use crate::codecs::{Checksum32, Sum};
            let at_start = match obj.get("location").and_then(Value::as_str) {
                None => id != "crc32c",
                Some("start") => true,
                Some("end") => false,
                Some(other) => {
                    return Err(CodecJsonError::Unsupported {
                        json: codec.to_string(),
                        why: format!("checksum location {other:?} (\"start\" or \"end\")"),
                    })
                }
            };
            match (id, at_start) {
                ("crc32c", at_start) => Box::new(Checksum32::new(Sum::Crc32c, at_start)),
                ("crc32", _) => Box::new(Checksum32::new(Sum::Crc32, at_start)),
                _ => Box::new(Checksum32::new(Sum::Adler32, at_start)),
            }
        }
        "jenkins_lookup3" => {
            let init = f("initval")?.unwrap_or(0);
            let init = u32::try_from(init).map_err(|_| CodecJsonError::Unsupported {
                json: codec.to_string(),
                why: format!("initval {init} is not a 32-bit unsigned integer"),
            })?;
            if obj.get("prefix").is_some_and(|p| !p.is_null()) {
                return Err(CodecJsonError::Unsupported {
                    json: codec.to_string(),
                    why: "a prefix is not supported".into(),
                });
            }
            Box::new(crate::codecs::Checksum32::new(
                crate::codecs::Sum::Lookup3(init),
                false,
            ))
        }
        "categorize" => {
            let bad = |why: String| CodecJsonError::Unsupported {
                json: codec.to_string(),
                why,
            };
            let labels = obj
                .get("labels")
                .and_then(Value::as_array)
                .and_then(|l| {
                    l.iter()
                        .map(|x| x.as_str().map(str::to_string))
                        .collect::<Option<Vec<String>>>()
                })
                .ok_or_else(|| bad("no \"labels\" (a list of strings)".into()))?;
            let dtype = string_field(obj, id, "dtype")?
                .ok_or_else(|| bad("no \"dtype\" (such as \"<U1\")".into()))?;
            let astype = string_field(obj, id, "astype")?.unwrap_or("|u1");
            Box::new(crate::codecs::Categorize::new(&labels, dtype, astype).map_err(bad)?)
        }
        "lzma" => {
            // numcodecs' default format is 1 (.xz)
            let format = obj.get("format").and_then(Value::as_i64).unwrap_or(1);
            Box::new(
                crate::codecs::Lzma::new(format, ctx.max_decoded).map_err(|why| {
                    CodecJsonError::Unsupported {
                        json: codec.to_string(),
                        why,
                    }
                })?,
            )
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod zarr_only_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    #[test]
    fn v3_codec_lists_in_numcodecs_form() {
        // what ncdump-rs -s shows of a sharded v3 array with crc32c: its filters, in order
        let text = r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],
            "codecs":[{"name":"transpose","configuration":{"order":[0]}},
                      {"name":"bytes","configuration":{"endian":"little"}},
                      {"name":"gzip","configuration":{"level":5}},{"name":"crc32c"}],
            "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
            "index_location":"end"}}]"#;
        assert_eq!(
            parse_codecs(text).unwrap(),
            vec![json!({"id": "zlib", "level": 5}), json!({"id": "crc32c"})]
        );
        assert_eq!(zarr_only_ids(text), vec!["crc32c"]);
        let list = r#"[{"name":"numcodecs.delta","configuration":{"dtype":"<i4"}},
            {"name":"bytes","configuration":{"endian":"little"}},
            {"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"bitshuffle",
             "typesize":8,"blocksize":0}},
            {"name":"zstd","configuration":{"level":3,"checksum":false}}, {"id":"zlib","level":1}]"#;
        assert_eq!(
            parse_codecs(list).unwrap(),
            vec![
                json!({"id": "delta", "dtype": "<i4"}),
                json!({"id": "blosc", "cname": "lz4", "clevel": 5, "blocksize": 0, "shuffle": 2}),
                json!({"id": "zstd", "level": 3}),
                json!({"id": "zlib", "level": 1}),
            ]
        );
        // nested sharding: the innermost chunks' codecs; codecs on whole shards are layout
        let nested = r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[4],
            "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],
                "codecs":[{"name":"bytes"},{"name":"zstd","configuration":{"level":1}}]}},
                {"name":"gzip","configuration":{"level":2}}]}},
            {"name":"crc32c"}]"#;
        assert_eq!(
            parse_codecs(nested).unwrap(),
            vec![json!({"id": "zstd", "level": 1})]
        );
        let deep = (0..9).fold(r#"{"name":"bytes"}"#.to_string(), |inner, _| {
            format!(r#"{{"name":"sharding_indexed","configuration":{{"codecs":[{inner}]}}}}"#)
        });
        for bad in [
            r#"[{"name":"sharding_indexed","configuration":{}}]"#,
            &format!("[{deep}]"),
            r#"[{"name":"rot13"}]"#,
        ] {
            let e = parse_codecs(bad).unwrap_err();
            assert!(
                matches!(e, CodecJsonError::Unsupported { .. }),
                "{bad}: {e}"
            );
        }
        assert!(is_element_codec("categorize") && !is_element_codec("gzip"));
        assert!(is_zarr_only(&json!({"id": "lzma"})) && !is_zarr_only(&json!({"id": "zstd"})));
    }
    use crate::known::hdf5_id_for_codec;
    use serde_json::json;

    fn ctx() -> FilterContext {
        let mut c = FilterContext::new(4, &[16]);
        c.max_decoded = 64;
        c
    }

    fn build(v: Value) -> Box<dyn Filter> {
        zarr_only_filter(&v, &ctx()).unwrap().unwrap()
    }

    #[test]
    fn zarr_only_codecs_have_no_hdf5_id() {
        for v in [
            json!({"id": "gzip", "level": 5}),
            json!({"id": "lz4", "acceleration": 1}),
            json!({"id": "delta", "dtype": "<i4", "astype": "<i4"}),
        ] {
            assert!(is_zarr_only(&v), "{v}");
            assert_eq!(codec_to_hdf5(&v, &ctx()).unwrap(), None, "{v}");
            let chain = zarr_to_chain(&v, &Value::Null, &ctx()).unwrap();
            assert_eq!(chain[0].spec, None);
            assert_eq!(chain[0].json, v);
        }
        assert_eq!(hdf5_id_for_codec("lz4"), None);
        assert!(!is_zarr_only(&json!({"id": "zlib", "level": 1})));
        assert!(!is_zarr_only(&json!("gzip")));
        assert!(zarr_only_filter(&json!({"id": "zlib", "level": 1}), &ctx())
            .unwrap()
            .is_none());
        assert!(zarr_only_filter(&json!([1]), &ctx()).unwrap().is_none());
    }

    #[test]
    fn built_filters_round_trip_within_the_limit() {
        let data: Vec<u8> = (0..64u8).collect();
        for v in [
            json!({"id": "gzip", "level": 5}),
            json!({"id": "gzip"}),
            json!({"id": "gzip", "level": "9"}),
            json!({"id": "lz4", "acceleration": 1}),
            json!({"id": "lz4"}),
            json!({"id": "delta", "dtype": "<i4", "astype": "<i4"}),
            json!({"id": "delta", "dtype": ">f8"}),
            json!({"id": "delta", "dtype": "|u1", "astype": "|u1"}),
        ] {
            let f = build(v.clone());
            assert_eq!(f.id(), 0, "{v}");
            let (mut e, mut d) = (Vec::new(), Vec::new());
            f.encode(&data, &mut e).unwrap();
            f.decode(&e, &mut d).unwrap();
            assert_eq!(d, data, "{v}");
        }
        // the limit of the context bounds decoding (65 bytes > 64)
        for v in [json!({"id": "gzip"}), json!({"id": "lz4"})] {
            let f = build(v.clone());
            let mut e = Vec::new();
            f.encode(&[0u8; 65], &mut e).unwrap();
            assert!(
                matches!(
                    f.decode(&e, &mut Vec::new()),
                    Err(crate::FilterError::TooLarge { .. })
                ),
                "{v}"
            );
        }
    }

    #[test]
    fn bad_configurations_are_errors() {
        let err = |v: Value| zarr_only_filter(&v, &ctx()).err().unwrap();
        assert!(matches!(
            err(json!({"id": "gzip", "level": 10})),
            CodecJsonError::BadField { .. }
        ));
        assert!(matches!(
            err(json!({"id": "gzip", "level": "x"})),
            CodecJsonError::BadField { .. }
        ));
        assert!(matches!(
            err(json!({"id": "lz4", "acceleration": [1]})),
            CodecJsonError::BadField { .. }
        ));
        assert!(matches!(
            err(json!({"id": "delta"})),
            CodecJsonError::Unsupported { .. }
        ));
        assert!(matches!(
            err(json!({"id": "delta", "dtype": 4})),
            CodecJsonError::BadField { .. }
        ));
        let e = err(json!({"id": "delta", "dtype": "<i8", "astype": "<i2"})).to_string();
        assert!(e.starts_with(r#"codec {"#), "{e}");
        assert!(
            e.ends_with(r#"}: astype "<i2" differs from dtype "<i8": only astype equal to dtype (byte order aside) is supported"#),
            "{e}"
        );
        assert!(err(json!({"id": "delta", "dtype": "<M8[ns]"}))
            .to_string()
            .contains("not supported"));
    }

    #[test]
    fn hdf5_lz4_is_written_as_numcodecs_lz4() {
        let spec = FilterSpec {
            id: 32004,
            params: vec![],
        };
        let j = hdf5_to_codec(&spec, &ctx()).unwrap();
        assert_eq!(j, json!({"id": "lz4", "acceleration": 1}));
        assert!(is_zarr_only(&j));
    }
}
