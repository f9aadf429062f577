//! fsspec's Parquet reference layout, the one `fsspec.implementations.reference.
//! LazyReferenceMapper` reads (and kerchunk's `refs_to_dataframe` writes):
//!
//! - `.zmetadata`: `{"zarr_consolidated_format": 1, "metadata": {KEY: OBJECT, ...},
//!   "record_size": N}`, every `.zgroup`, `.zattrs` and `.zarray` as a JSON object (fsspec
//!   reads `metadata` and `record_size`; the first member makes the same text a Zarr v2
//!   consolidated metadata object as well);
//! - per array with chunks, `PREFIX/refs.K.parq`: the references of the chunks whose linear
//!   index in the chunk grid (C order) is `K * N` to `K * N + N - 1`, one row each, columns
//!   `path` (UTF-8, null for a chunk inline or never written), `offset`, `size` (int64, 0
//!   when there is no range) and `raw` (bytes of an inline chunk, else null). A chunk never
//!   written is a row of nulls; a record file with no chunk at all is not written (fsspec
//!   reads a missing file as missing chunks), and the last one stops at the last chunk of
//!   the grid.
//!
//! A record file is built in memory and stored whole ([`crate::Store::put`]), so memory is one
//! record's references (and inline bytes), whatever the number of chunks.

use super::parquet::{write_file, Column, ColumnValues, Compression};
use super::{ChunkRef, ReferenceSink};
use crate::consolidated::{ConsolidatedV2, V2_KEY};
use crate::error::ZarrError;
use crate::Store;

/// How the Parquet references are laid out.
#[derive(Debug, Clone)]
pub struct ParquetLayout {
    /// References per record file (fsspec's and kerchunk's default: 10,000).
    pub record_size: u64,
    /// zstd-compress the pages (as fsspec writes them); `false`: uncompressed.
    pub compress: bool,
}

impl Default for ParquetLayout {
    fn default() -> Self {
        ParquetLayout {
            record_size: 10_000,
            compress: true,
        }
    }
}

/// Largest `record_size` taken: a record's rows are held in memory.
pub const MAX_RECORD_SIZE: u64 = 1 << 24;

/// One row of a record file.
enum Row {
    Missing,
    Range { url: usize, offset: i64, len: i64 },
    Raw(Vec<u8>),
}

/// The array whose references are being gathered.
struct ArrayRows {
    prefix: String,
    grid: Vec<u64>,
    /// Chunks in the grid.
    total: u64,
    /// The record file being filled.
    record: u64,
    /// Its rows so far (row `i` is chunk `record * record_size + i`).
    rows: Vec<Row>,
    /// The distinct URLs of its rows.
    urls: Vec<String>,
}

/// The Parquet sink.
pub(crate) struct ParquetSink<'a> {
    store: &'a dyn Store,
    record_size: u64,
    compression: Compression,
    cons: Option<ConsolidatedV2>,
    array: Option<ArrayRows>,
}

fn out_err(msg: String) -> ZarrError {
    ZarrError::Output {
        source: std::io::Error::other(msg),
    }
}

/// A store's failure is the output's.
fn store_err(e: nc_store::StoreError) -> ZarrError {
    ZarrError::Output {
        source: std::io::Error::other(e),
    }
}

impl<'a> ParquetSink<'a> {
    /// # Errors
    /// A record size of 0 or above [`MAX_RECORD_SIZE`].
    pub(crate) fn new(store: &'a dyn Store, layout: &ParquetLayout) -> Result<Self, ZarrError> {
        if layout.record_size == 0 || layout.record_size > MAX_RECORD_SIZE {
            return Err(out_err(format!(
                "a record size of {} references per Parquet file: give 1 to {MAX_RECORD_SIZE}",
                layout.record_size
            )));
        }
        Ok(ParquetSink {
            store,
            record_size: layout.record_size,
            compression: if layout.compress {
                Compression::Zstd(3)
            } else {
                Compression::Uncompressed
            },
            cons: Some(ConsolidatedV2::new()),
            array: None,
        })
    }

    /// Write the record file being filled (padded with missing rows to its last chunk), unless
    /// it holds no chunk.
    fn flush_record(&mut self) -> Result<(), ZarrError> {
        let Some(a) = &mut self.array else {
            return Ok(());
        };
        let rows = std::mem::take(&mut a.rows);
        let urls = std::mem::take(&mut a.urls);
        if rows.iter().all(|r| matches!(r, Row::Missing)) {
            return Ok(());
        }
        let first = a.record * self.record_size;
        let len = self.record_size.min(a.total - first) as usize;
        let mut path: Vec<Option<&[u8]>> = Vec::with_capacity(len);
        let mut offset = Vec::with_capacity(len);
        let mut size = Vec::with_capacity(len);
        let mut raw: Vec<Option<&[u8]>> = Vec::with_capacity(len);
        for i in 0..len {
            match rows.get(i).unwrap_or(&Row::Missing) {
                Row::Missing => {
                    path.push(None);
                    offset.push(0);
                    size.push(0);
                    raw.push(None);
                }
                Row::Range {
                    url,
                    offset: o,
                    len,
                } => {
                    path.push(urls.get(*url).map(String::as_bytes));
                    offset.push(*o);
                    size.push(*len);
                    raw.push(None);
                }
                Row::Raw(b) => {
                    path.push(None);
                    offset.push(0);
                    size.push(0);
                    raw.push(Some(b));
                }
            }
        }
        let columns = [
            Column {
                name: "path",
                values: ColumnValues::Bytes {
                    values: &path,
                    utf8: true,
                },
            },
            Column {
                name: "offset",
                values: ColumnValues::Int64(&offset),
            },
            Column {
                name: "size",
                values: ColumnValues::Int64(&size),
            },
            Column {
                name: "raw",
                values: ColumnValues::Bytes {
                    values: &raw,
                    utf8: false,
                },
            },
        ];
        let created_by = concat!("nc-zarr ", env!("CARGO_PKG_VERSION"));
        let file = write_file(&columns, self.compression, created_by)
            .map_err(|e| out_err(format!("{}: {e}", a.prefix)))?;
        let key = format!("{}/refs.{}.parq", a.prefix, a.record);
        self.store.put(&key, &file).map_err(store_err)
    }
}

impl ReferenceSink for ParquetSink<'_> {
    fn metadata(&mut self, key: &str, text: &str) -> Result<(), ZarrError> {
        match &mut self.cons {
            Some(c) => c.add(key, text),
            None => Err(out_err(format!("metadata {key} given after the end"))),
        }
    }

    fn begin_array(&mut self, prefix: &str, grid: &[u64]) -> Result<(), ZarrError> {
        self.end_array()?;
        let total = grid
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .ok_or_else(|| out_err(format!("{prefix}: more chunks than 2^64")))?;
        self.array = Some(ArrayRows {
            prefix: prefix.to_string(),
            grid: grid.to_vec(),
            total,
            record: 0,
            rows: Vec::new(),
            urls: Vec::new(),
        });
        Ok(())
    }

    fn chunk(&mut self, idx: &[u64], r: ChunkRef<'_>) -> Result<(), ZarrError> {
        let rs = self.record_size;
        let Some(a) = &mut self.array else {
            return Err(out_err(format!("chunk {idx:?} given outside an array")));
        };
        // the linear index in C order, as fsspec's `ravel_multi_index` computes it
        let mut lin = 0u64;
        let fits = idx.len() == a.grid.len() && idx.iter().zip(&a.grid).all(|(&i, &n)| i < n);
        if !fits {
            return Err(out_err(format!(
                "{}: chunk {idx:?} is outside its grid {:?}",
                a.prefix, a.grid
            )));
        }
        for (&i, &n) in idx.iter().zip(&a.grid) {
            lin = lin * n + i;
        }
        let (record, row) = (lin / rs, (lin % rs) as usize);
        let behind = record < a.record || (record == a.record && row < a.rows.len());
        if behind {
            return Err(out_err(format!(
                "{}: chunk {idx:?} given after a later one (references go in C order)",
                a.prefix
            )));
        }
        if record != a.record {
            self.flush_record()?;
        }
        let Some(a) = &mut self.array else {
            return Ok(());
        };
        a.record = record;
        while a.rows.len() < row {
            a.rows.push(Row::Missing);
        }
        let to_i64 = |n: u64, what: &str| {
            i64::try_from(n).map_err(|_| out_err(format!("{}: {what} {n} beyond 2^63", a.prefix)))
        };
        let entry = match r {
            ChunkRef::Range { url, offset, len } => {
                let u = match a.urls.iter().position(|u| u == url) {
                    Some(u) => u,
                    None => {
                        a.urls.push(url.to_string());
                        a.urls.len() - 1
                    }
                };
                Row::Range {
                    url: u,
                    offset: to_i64(offset, "offset")?,
                    len: to_i64(len, "length")?,
                }
            }
            ChunkRef::Inline(b) => Row::Raw(b.to_vec()),
        };
        a.rows.push(entry);
        Ok(())
    }

    fn end_array(&mut self) -> Result<(), ZarrError> {
        self.flush_record()?;
        self.array = None;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ZarrError> {
        self.end_array()?;
        let Some(c) = self.cons.take() else {
            return Ok(());
        };
        let text = c.finish_with(&format!("\"record_size\":{}", self.record_size));
        self.store.put(V2_KEY, text.as_bytes()).map_err(store_err)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::MemStore;

    fn layout(record_size: u64) -> ParquetLayout {
        ParquetLayout {
            record_size,
            compress: false,
        }
    }

    #[test]
    fn records_hold_rows_in_grid_order_with_gaps_as_nulls() {
        let store = MemStore::new();
        let mut s = ParquetSink::new(&store, &layout(3)).unwrap();
        s.metadata(".zgroup", "{\"zarr_format\":2}").unwrap();
        s.begin_array("g/v", &[2, 4]).unwrap();
        let r = |offset| ChunkRef::Range {
            url: "/d/a.nc",
            offset,
            len: 4,
        };
        s.chunk(&[0, 1], r(10)).unwrap();
        s.chunk(&[0, 2], ChunkRef::Inline(b"xy")).unwrap();
        // chunks 3, 4, 5 never written: no refs.1.parq; chunk 7 ends refs.2 early
        s.chunk(&[1, 3], r(70)).unwrap();
        let e = s.chunk(&[1, 2], r(60)).unwrap_err().to_string();
        assert!(e.contains("given after a later one"), "{e}");
        s.end_array().unwrap();
        s.finish().unwrap();
        let mut keys = store.list("").unwrap();
        keys.sort();
        assert_eq!(keys, [".zmetadata", "g/v/refs.0.parq", "g/v/refs.2.parq"]);
        let zm: serde_json::Value =
            serde_json::from_slice(&store.get(".zmetadata").unwrap().unwrap()).unwrap();
        assert_eq!(zm["record_size"], 3);
        assert_eq!(zm["zarr_consolidated_format"], 1);
        assert_eq!(zm["metadata"][".zgroup"]["zarr_format"], 2);
        let f0 = store.get("g/v/refs.0.parq").unwrap().unwrap();
        // rows: null, range, raw; the path column holds the one URL once
        assert_eq!(f0.windows(7).filter(|w| *w == b"/d/a.nc").count(), 1);
        assert_eq!(f0.windows(2).filter(|w| *w == b"xy").count(), 1);
        let f2 = store.get("g/v/refs.2.parq").unwrap().unwrap();
        // chunk 6 missing, chunk 7 the last of the grid: two rows (num_rows in the footer)
        let n = f2.len();
        let footer_len = u32::from_le_bytes(f2[n - 8..n - 4].try_into().unwrap()) as usize;
        let footer = &f2[n - 8 - footer_len..n - 8];
        // num_rows (field 3, i64) = 2, zigzag 4, after the schema list
        assert!(footer.windows(2).any(|w| w == [0x16, 4]), "{footer:?}");
    }

    #[test]
    fn scalars_and_bad_indices() {
        let store = MemStore::new();
        let mut s = ParquetSink::new(&store, &layout(10)).unwrap();
        s.begin_array("s", &[]).unwrap();
        s.chunk(&[], ChunkRef::Inline(b"\x01")).unwrap();
        let e = s
            .chunk(&[0], ChunkRef::Inline(b""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside its grid"), "{e}");
        s.finish().unwrap();
        assert!(store.get("s/refs.0.parq").unwrap().is_some());
        assert!(ParquetSink::new(&store, &layout(0)).is_err());
    }
}
