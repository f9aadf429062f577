//! Zarr version 3 writing: the pieces `write.rs` uses when the location says `v3` — data type
//! names, `fill_value` JSON, the codec chain (a netCDF filter chain mapped to v3 codecs, in a
//! `sharding_indexed` codec when the variable has `_ShardSizes`), `vlen-utf8` chunks for
//! strings, and shard assembly.
//!
//! Filters map as zarr-python 3 names them: deflate → `gzip` (same compression, gzip
//! framing: v3 has no zlib codec), zstd → `zstd`, blosc → `blosc`, shuffle →
//! `numcodecs.shuffle`, bzip2 → `numcodecs.bz2`, lz4 → `numcodecs.lz4`, the Zarr-only
//! numcodecs codecs → `numcodecs.<id>` (before `bytes` when they work on elements), fletcher32
//! → `numcodecs.fletcher32` (numcodecs' is HDF5's checksum; crc32c, another checksum, is never
//! put in its place unasked). szip has no codec zarr-python reads: refused with the cure.

use crate::error::ZarrError;
use nc_dataset::{AtomicType, NcString, Values};
use serde_json::{json, Map, Value};

/// The v3 `data_type` of a netCDF atomic type.
pub(crate) fn data_type(t: AtomicType) -> Value {
    match t {
        AtomicType::Byte => json!("int8"),
        AtomicType::UByte => json!("uint8"),
        AtomicType::Short => json!("int16"),
        AtomicType::UShort => json!("uint16"),
        AtomicType::Int => json!("int32"),
        AtomicType::UInt => json!("uint32"),
        AtomicType::Int64 => json!("int64"),
        AtomicType::UInt64 => json!("uint64"),
        AtomicType::Float => json!("float32"),
        AtomicType::Double => json!("float64"),
        AtomicType::Char => {
            json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 1}})
        }
        AtomicType::String => json!("string"),
    }
}

/// Standard base64 (RFC 4648, padded), as zarr-python 3 writes a bytes `fill_value`.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The v3 `fill_value` of a char fill: the byte in base64, `""` for NUL.
pub(crate) fn char_fill(fill: &Values) -> Value {
    match fill {
        Values::Char(b) if b.first().is_some_and(|&c| c != 0) => Value::String(base64(&b[..1])),
        _ => Value::String(String::new()),
    }
}

/// A variable's codecs, split for v3: numcodecs JSON of the filter engine's pipeline (in
/// application order) and the v3 codec list with `bytes` in its place.
pub(crate) struct V3Codecs {
    /// numcodecs JSON the pipeline is built from (deflate already turned into `gzip`).
    pub pipeline: Vec<Value>,
    /// v3 codecs: array-to-array, `bytes` (or `vlen-utf8`), bytes-to-bytes.
    pub codecs: Vec<Value>,
}

/// Map `chain` (numcodecs JSON in application order, as the v2 writer makes it) to v3.
/// `big`: elements stored big-endian; `esize`: element size; `vlen`: strings (`vlen-utf8`).
///
/// # Errors
/// A codec with no v3 form (szip), or an element codec after a bytes codec.
pub(crate) fn map_chain(
    chain: &[Value],
    big: bool,
    esize: usize,
    vlen: bool,
    var: &str,
) -> Result<V3Codecs, ZarrError> {
    let refuse = |why: String| ZarrError::NotRepresentable {
        what: format!("the filters of variable \"{var}\" in Zarr v3"),
        why,
    };
    let mut array_codecs = Vec::new();
    let mut bytes_codecs = Vec::new();
    let mut pipeline = Vec::with_capacity(chain.len());
    for c in chain {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        let conf = |skip: &[&str]| -> Map<String, Value> {
            c.as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(k, _)| k.as_str() != "id" && !skip.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (v3, engine) = match id {
            "zlib" | "gzip" => {
                let level = c.get("level").cloned().unwrap_or(json!(1));
                (
                    json!({"name": "gzip", "configuration": {"level": level}}),
                    json!({"id": "gzip", "level": level}),
                )
            }
            "zstd" => {
                let level = c.get("level").cloned().unwrap_or(json!(0));
                (
                    json!({"name": "zstd", "configuration": {"level": level, "checksum": false}}),
                    c.clone(),
                )
            }
            "blosc" => {
                let shuffle = match c.get("shuffle").and_then(Value::as_i64) {
                    Some(1) => "shuffle",
                    Some(2) => "bitshuffle",
                    _ => "noshuffle",
                };
                let mut cfg = Map::new();
                cfg.insert(
                    "cname".into(),
                    c.get("cname").cloned().unwrap_or(json!("lz4")),
                );
                cfg.insert(
                    "clevel".into(),
                    c.get("clevel").cloned().unwrap_or(json!(5)),
                );
                cfg.insert("shuffle".into(), json!(shuffle));
                cfg.insert("typesize".into(), json!(esize));
                cfg.insert(
                    "blocksize".into(),
                    c.get("blocksize").cloned().unwrap_or(json!(0)),
                );
                (json!({"name": "blosc", "configuration": cfg}), c.clone())
            }
            "crc32c" => (json!({"name": "crc32c"}), c.clone()),
            "szip" => {
                return Err(refuse(
                    "szip has no Zarr codec that zarr-python reads; remove it from the filters"
                        .into(),
                ))
            }
            "" => {
                return Err(refuse(format!(
                    "codec {} has no id",
                    crate::json::compact(c)
                )))
            }
            other => (
                json!({"name": format!("numcodecs.{other}"), "configuration": conf(&[])}),
                c.clone(),
            ),
        };
        if nc_filters::codec_json::is_element_codec(id) {
            if !bytes_codecs.is_empty() {
                return Err(refuse(format!(
                    "the element codec \"{id}\" comes after a compressor, which Zarr v3 cannot \
                     express (element codecs come before the bytes codec)"
                )));
            }
            if big {
                return Err(refuse(format!(
                    "the element codec \"{id}\" on big-endian data is not supported"
                )));
            }
            array_codecs.push(v3);
        } else {
            bytes_codecs.push(v3);
        }
        pipeline.push(engine);
    }
    let serializer = if vlen {
        json!({"name": "vlen-utf8", "configuration": {}})
    } else if esize > 1 {
        json!({"name": "bytes", "configuration": {"endian": if big { "big" } else { "little" }}})
    } else {
        json!({"name": "bytes"})
    };
    let mut codecs = array_codecs;
    codecs.push(serializer);
    codecs.extend(bytes_codecs);
    Ok(V3Codecs { pipeline, codecs })
}

/// The codecs of a sharded array: one `sharding_indexed` holding `inner` (its index at the
/// end, little-endian, with its CRC-32C, as zarr-python 3 writes it).
pub(crate) fn sharding(inner_chunks: &[u64], inner: Vec<Value>) -> Vec<Value> {
    vec![json!({
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": inner_chunks,
            "codecs": inner,
            "index_codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "crc32c"}
            ],
            "index_location": "end"
        }
    })]
}

/// The index of a shard being written: (offset, length) of each inner chunk in C order, as
/// little-endian u64s, `u64::MAX` twice for an empty one (read as fill).
pub(crate) struct ShardIndex {
    index: Vec<u8>,
    offset: u64,
}

impl ShardIndex {
    /// An index for `n` inner chunks.
    pub fn new(n: usize) -> ShardIndex {
        ShardIndex {
            index: Vec::with_capacity(16 * n + 4),
            offset: 0,
        }
    }

    /// The next inner chunk: `len` bytes, following the previous ones, or empty (`None`).
    pub fn push(&mut self, len: Option<u64>) {
        let (offset, len) = match len {
            Some(n) => {
                let at = self.offset;
                self.offset += n;
                (at, n)
            }
            None => (u64::MAX, u64::MAX),
        };
        self.index.extend_from_slice(&offset.to_le_bytes());
        self.index.extend_from_slice(&len.to_le_bytes());
    }

    /// The index followed by its CRC-32C: the shard's last bytes.
    pub fn finish(mut self) -> Vec<u8> {
        let sum = nc_filters::crc32c(&self.index);
        self.index.extend_from_slice(&sum.to_le_bytes());
        self.index
    }
}

/// One shard: the encoded inner chunks (`None`: empty, read as fill) in C order, then the
/// index of (offset, length) pairs and its CRC-32C. `None` when every inner chunk is empty.
#[cfg(test)]
pub(crate) fn assemble_shard(chunks: Vec<Option<Vec<u8>>>) -> Option<Vec<u8>> {
    if chunks.iter().all(Option::is_none) {
        return None;
    }
    let mut out = Vec::new();
    let mut index = ShardIndex::new(chunks.len());
    for c in chunks {
        index.push(c.as_ref().map(|b| b.len() as u64));
        out.extend(c.unwrap_or_default());
    }
    out.extend(index.finish());
    Some(out)
}

/// A chunk of strings in numcodecs' `vlen-utf8` form: the count, then each string's length
/// and bytes (little-endian u32s).
///
/// # Errors
/// A string that is not UTF-8, or longer than 4 GiB.
pub(crate) fn vlen_utf8(strings: &[Option<&NcString>], var: &str) -> Result<Vec<u8>, ZarrError> {
    let total: usize = strings.iter().flatten().map(|s| s.len()).sum();
    let mut out = Vec::with_capacity(4 + 4 * strings.len() + total);
    let n = u32::try_from(strings.len()).map_err(|_| ZarrError::NotRepresentable {
        what: format!("a chunk of variable \"{var}\""),
        why: "more than 2^32 strings in one chunk".into(),
    })?;
    out.extend_from_slice(&n.to_le_bytes());
    for s in strings {
        let b = s.map_or(&[][..], |s| s.as_bytes());
        if std::str::from_utf8(b).is_err() {
            return Err(ZarrError::NotUtf8 {
                what: format!("a string of variable \"{var}\" (Zarr v3 strings are UTF-8)"),
                value: NcString::from(b),
            });
        }
        let len = u32::try_from(b.len()).map_err(|_| ZarrError::NotRepresentable {
            what: format!("a string of variable \"{var}\""),
            why: "longer than 4 GiB".into(),
        })?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// The default shard shape for inner chunks `inner` of an array of `shape` with `esize`-byte
/// elements: whole inner chunks, grown from the last dimension to the first (the fastest
/// varying first, so a shard holds contiguous rows) until about [`SHARD_TARGET`] bytes
/// (uncompressed) or the whole array.
pub(crate) fn default_shard(shape: &[u64], inner: &[u64], esize: u64) -> Vec<u64> {
    let mut per: Vec<u64> = vec![1; inner.len()];
    let chunk_bytes = inner.iter().product::<u64>().max(1) * esize.max(1);
    let mut bytes = chunk_bytes;
    for d in (0..inner.len()).rev() {
        let most = shape[d].div_ceil(inner[d]).max(1);
        let room = (SHARD_TARGET / bytes).max(1);
        per[d] = most.min(room);
        bytes = bytes.saturating_mul(per[d]);
        if per[d] < most {
            break;
        }
    }
    per.iter().zip(inner).map(|(p, c)| p * c).collect()
}

/// What a default shard aims at (uncompressed bytes): inside the 64-256 MiB that object
/// stores serve well once compressed.
pub(crate) const SHARD_TARGET: u64 = 128 << 20;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    #[test]
    fn base64_as_python() {
        // base64.b64encode(b'x'), b'ab', b'abc', b''
        assert_eq!(base64(b"x"), "eA==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b""), "");
    }

    #[test]
    fn chains_map_to_v3() {
        let c = map_chain(
            &[
                json!({"id": "shuffle", "elementsize": 4}),
                json!({"id": "zlib", "level": 5}),
            ],
            false,
            4,
            false,
            "/v",
        )
        .unwrap();
        assert_eq!(
            c.codecs,
            vec![
                json!({"name": "bytes", "configuration": {"endian": "little"}}),
                json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}),
                json!({"name": "gzip", "configuration": {"level": 5}}),
            ]
        );
        assert_eq!(c.pipeline[1], json!({"id": "gzip", "level": 5}));
        let d = map_chain(
            &[
                json!({"id": "delta", "dtype": "<i4"}),
                json!({"id": "zstd", "level": 3}),
            ],
            false,
            4,
            false,
            "/v",
        )
        .unwrap();
        assert_eq!(d.codecs[0]["name"], "numcodecs.delta");
        assert_eq!(d.codecs[1]["name"], "bytes");
        let f = map_chain(&[json!({"id": "fletcher32"})], false, 4, false, "/v").unwrap();
        assert_eq!(
            f.codecs[1],
            json!({"name": "numcodecs.fletcher32", "configuration": {}})
        );
        let e = map_chain(&[json!({"id": "szip", "mask": 4})], false, 4, false, "/v")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("szip has no Zarr codec"), "{e}");
        assert!(map_chain(
            &[
                json!({"id": "zstd", "level": 1}),
                json!({"id": "delta", "dtype": "<i4"})
            ],
            false,
            4,
            false,
            "/v"
        )
        .is_err());
    }

    #[test]
    fn v3_names_are_the_filter_tables() {
        // every filter with a Zarr codec is written under the v3 name its table row gives,
        // and one with none (szip) is refused
        for k in nc_filters::known::FILTERS {
            let Some(id) = k.numcodecs.id() else {
                continue;
            };
            let got = map_chain(&[json!({ "id": id })], false, 4, false, "/v");
            match (k.zarr3, got) {
                (Some(name), Ok(c)) => assert_eq!(c.codecs.last().unwrap()["name"], name, "{id}"),
                (None, Err(_)) => {}
                (want, got) => panic!(
                    "{id}: table says {want:?}, writer gives {:?}",
                    got.map(|c| c.codecs)
                ),
            }
        }
    }

    #[test]
    fn shards_and_strings() {
        let s = assemble_shard(vec![Some(vec![1, 2]), None, Some(vec![3])]).unwrap();
        assert_eq!(&s[..3], &[1, 2, 3]);
        let index = &s[3..3 + 48];
        assert_eq!(
            &index[..16],
            &[0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(&index[16..32], &[0xFF; 16]);
        assert_eq!(index[32], 2);
        assert_eq!(&s[51..], &nc_filters::crc32c(index).to_le_bytes());
        assert_eq!(assemble_shard(vec![None, None]), None);
        let a = NcString::from("é");
        assert_eq!(
            vlen_utf8(&[Some(&a), None], "/s").unwrap(),
            vec![2, 0, 0, 0, 2, 0, 0, 0, 0xC3, 0xA9, 0, 0, 0, 0]
        );
        assert!(vlen_utf8(&[Some(&NcString::from(&[0xFFu8][..]))], "/s").is_err());
        // 1000x1000 f8 in 100x100 chunks: 80 KB each; a shard takes whole rows of chunks
        assert_eq!(
            default_shard(&[1000, 1000], &[100, 100], 8),
            vec![1000, 1000]
        );
        assert_eq!(
            default_shard(&[100_000, 1000], &[100, 1000], 8),
            vec![16700, 1000]
        );
    }
}
