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
//! | lz4 | `{"id":"lz4","acceleration":A}` | `32004` |
//!
//! Numbers written as JSON strings (older NCZarr) are accepted on read. Unknown codecs are
//! kept verbatim ([`ZarrCodec::spec`] is `None`) so metadata can still show them.
//!
//! Note: numcodecs' own `lz4` chunks carry a 4-byte little-endian size and one LZ4 block,
//! not the HDF5 lz4 filter's framing that filter 32004 uses, so they do not interoperate.

use crate::filter::FilterContext;
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
}

/// The HDF5 id of a standard numcodecs codec id (`"zlib"` → 1).
pub fn hdf5_id_for_codec(codec: &str) -> Option<u32> {
    Some(match codec {
        "zlib" | "deflate" => 1,
        "shuffle" => 2,
        "fletcher32" => 3,
        "szip" => 4,
        "bz2" | "bzip2" => 307,
        "blosc" => 32001,
        "lz4" => 32004,
        "zstd" => 32015,
        _ => return None,
    })
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
        "lz4" => spec(32004, vec![]),
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

/// The numcodecs JSON for an HDF5 filter (working or visible parameters).
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
        4 => json!({"id": "szip", "mask": at(0, 32), "pixels-per-block": at(1, 32)}),
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

/// Parse codec JSON text (one object, or an array of them as `_Codecs` shows).
///
/// # Errors
/// [`CodecJsonError::Syntax`] for invalid JSON.
pub fn parse_codecs(text: &str) -> Result<Vec<Value>, CodecJsonError> {
    let v: Value = serde_json::from_str(text).map_err(|e| CodecJsonError::Syntax {
        text: text.to_string(),
        msg: e.to_string(),
    })?;
    Ok(match v {
        Value::Array(a) => a,
        v => vec![v],
    })
}
