//! A small Parquet file writer: what fsspec's Parquet references need, nothing more.
//!
//! One row group; each column is `INT64` (required) or `BYTE_ARRAY` (optional, UTF-8 text or
//! bytes), in data pages of version 1 with PLAIN values and definition levels (for optional
//! columns) in the RLE/bit-packed hybrid encoding (RLE runs only), uncompressed or zstd; no
//! dictionary, no statistics but each column's null count (without it fastparquet, fsspec's
//! default engine, reads an int64 column as nullable, and fsspec gets float offsets). The
//! footer is the `FileMetaData` struct in Thrift's compact
//! protocol. Spec: Apache Parquet "File Format" and `parquet.thrift` (format 2.x); Apache
//! Thrift "Compact Protocol".
//!
//! Layout: `PAR1`, then each column chunk (its pages, each a `PageHeader` then the page body),
//! then `FileMetaData`, its length (4 bytes, little-endian) and `PAR1` again.

/// Page compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Stored as is.
    Uncompressed,
    /// zstd at this level (pyarrow and fastparquet read it; fsspec writes it).
    Zstd(i32),
}

impl Compression {
    /// Parquet's `CompressionCodec` value.
    fn codec(self) -> i32 {
        match self {
            Compression::Uncompressed => 0,
            Compression::Zstd(_) => 6,
        }
    }
}

/// A column's values, one per row.
#[derive(Debug)]
pub enum ColumnValues<'a> {
    /// `INT64`, required.
    Int64(&'a [i64]),
    /// `BYTE_ARRAY`, optional (a `None` is a null); `utf8`: annotated as UTF-8 text (`STRING`).
    Bytes {
        /// The values.
        values: &'a [Option<&'a [u8]>],
        /// Text (the `STRING` logical type) rather than bytes.
        utf8: bool,
    },
}

impl ColumnValues<'_> {
    fn len(&self) -> usize {
        match self {
            ColumnValues::Int64(v) => v.len(),
            ColumnValues::Bytes { values, .. } => values.len(),
        }
    }
}

/// A named column.
#[derive(Debug)]
pub struct Column<'a> {
    /// The column's name.
    pub name: &'a str,
    /// Its values.
    pub values: ColumnValues<'a>,
}

/// Why a file cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParquetError {
    /// Columns of different lengths.
    RaggedColumns,
    /// One value larger than a page can hold (2 GiB).
    ValueTooLarge {
        /// The column.
        column: String,
        /// The value's size in bytes.
        len: usize,
    },
    /// The compressor failed.
    Compress(String),
}

impl std::fmt::Display for ParquetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParquetError::RaggedColumns => write!(f, "Parquet columns of different lengths"),
            ParquetError::ValueTooLarge { column, len } => write!(
                f,
                "a value of {len} bytes in Parquet column \"{column}\" is larger than a page \
                 holds (2 GiB)"
            ),
            ParquetError::Compress(e) => write!(f, "compressing a Parquet page: {e}"),
        }
    }
}

/// Bytes of page body (before compression) after which a new page is started.
const PAGE_TARGET: usize = 1 << 20;

/// Largest page body a page header can state (`i32`), with room for the levels.
const PAGE_MAX: usize = (i32::MAX as usize) - (1 << 16);

/// Parquet's `Type` values.
const TYPE_INT64: i32 = 2;
const TYPE_BYTE_ARRAY: i32 = 6;

/// Parquet's `Encoding` values.
const ENC_PLAIN: i32 = 0;
const ENC_RLE: i32 = 3;

/// The file of `columns` (all of one length): one row group.
///
/// # Errors
/// Columns of different lengths, a value larger than a page, a compressor failure.
pub fn write_file(
    columns: &[Column<'_>],
    compression: Compression,
    created_by: &str,
) -> Result<Vec<u8>, ParquetError> {
    let rows = columns.first().map_or(0, |c| c.values.len());
    if columns.iter().any(|c| c.values.len() != rows) {
        return Err(ParquetError::RaggedColumns);
    }
    let mut out = b"PAR1".to_vec();
    let mut chunks = Vec::with_capacity(columns.len());
    for c in columns {
        let start = out.len();
        let mut uncompressed = 0usize;
        for page in pages(c)? {
            let body_len = page.body.len();
            let body = match compression {
                Compression::Uncompressed => page.body,
                Compression::Zstd(level) => zstd::bulk::compress(&page.body, level)
                    .map_err(|e| ParquetError::Compress(e.to_string()))?,
            };
            let header = page_header(page.rows, body_len, body.len());
            uncompressed += header.len() + body_len;
            out.extend_from_slice(&header);
            out.extend_from_slice(&body);
        }
        chunks.push(ChunkMeta {
            offset: start,
            compressed: out.len() - start,
            uncompressed,
        });
    }
    let meta = file_metadata(columns, &chunks, rows, compression, created_by);
    out.extend_from_slice(&meta);
    // the footer is far below 4 GiB: a few hundred bytes per column
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    out.extend_from_slice(b"PAR1");
    Ok(out)
}

/// Where a column chunk landed.
struct ChunkMeta {
    offset: usize,
    compressed: usize,
    uncompressed: usize,
}

/// One data page before compression.
struct Page {
    rows: usize,
    body: Vec<u8>,
}

/// The pages of a column: rows gathered until a page body reaches [`PAGE_TARGET`].
fn pages(c: &Column<'_>) -> Result<Vec<Page>, ParquetError> {
    let mut out = Vec::new();
    match &c.values {
        ColumnValues::Int64(v) => {
            for part in v.chunks(PAGE_TARGET / 8) {
                let mut body = Vec::with_capacity(part.len() * 8);
                for x in part {
                    body.extend_from_slice(&x.to_le_bytes());
                }
                out.push(Page {
                    rows: part.len(),
                    body,
                });
            }
        }
        ColumnValues::Bytes { values, .. } => {
            let mut from = 0;
            let mut size = 0usize;
            for (i, v) in values.iter().enumerate() {
                let len = v.map_or(0, |b| b.len() + 4);
                if len > PAGE_MAX {
                    return Err(ParquetError::ValueTooLarge {
                        column: c.name.to_string(),
                        len: len - 4,
                    });
                }
                if i > from && (size >= PAGE_TARGET || size + len > PAGE_MAX) {
                    out.push(bytes_page(&values[from..i]));
                    from = i;
                    size = 0;
                }
                size += len;
            }
            if from < values.len() {
                out.push(bytes_page(&values[from..]));
            }
        }
    }
    Ok(out)
}

/// A page of optional byte arrays: definition levels (length-prefixed), then the values
/// present, each a 4-byte length and its bytes.
fn bytes_page(values: &[Option<&[u8]>]) -> Page {
    let levels = rle_levels(values.iter().map(|v| u8::from(v.is_some())));
    let total: usize = values.iter().flatten().map(|b| b.len() + 4).sum();
    let mut body = Vec::with_capacity(4 + levels.len() + total);
    // levels of one page are a few bytes per row run: far below 4 GiB
    body.extend_from_slice(&(levels.len() as u32).to_le_bytes());
    body.extend_from_slice(&levels);
    for b in values.iter().flatten() {
        body.extend_from_slice(&(b.len() as u32).to_le_bytes());
        body.extend_from_slice(b);
    }
    Page {
        rows: values.len(),
        body,
    }
}

/// Levels of bit width 1 in the RLE/bit-packed hybrid encoding, as RLE runs only: each run
/// is a ULEB128 header `count << 1` and its value in one byte.
fn rle_levels(levels: impl Iterator<Item = u8>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut run: Option<(u8, u64)> = None;
    let flush = |out: &mut Vec<u8>, (value, count): (u8, u64)| {
        uleb(out, count << 1);
        out.push(value);
    };
    for l in levels {
        run = match run {
            Some((v, n)) if v == l => Some((v, n + 1)),
            Some(r) => {
                flush(&mut out, r);
                Some((l, 1))
            }
            None => Some((l, 1)),
        };
    }
    if let Some(r) = run {
        flush(&mut out, r);
    }
    out
}

/// A `PageHeader` of a version 1 data page.
fn page_header(rows: usize, uncompressed: usize, compressed: usize) -> Vec<u8> {
    let mut t = Compact::default();
    t.i32(1, 0); // type: DATA_PAGE
    t.i32(2, to_i32(uncompressed));
    t.i32(3, to_i32(compressed));
    t.begin_struct(5); // data_page_header
    t.i32(1, to_i32(rows)); // num_values, nulls included
    t.i32(2, ENC_PLAIN);
    t.i32(3, ENC_RLE); // definition levels
    t.i32(4, ENC_RLE); // repetition levels (none: no nesting)
    t.end_struct();
    t.stop()
}

/// Sizes checked against [`PAGE_MAX`] (pages) or small by construction (row counts of one
/// file); saturate rather than wrap should a caller pass more.
fn to_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The `FileMetaData` footer.
fn file_metadata(
    columns: &[Column<'_>],
    chunks: &[ChunkMeta],
    rows: usize,
    compression: Compression,
    created_by: &str,
) -> Vec<u8> {
    let mut t = Compact::default();
    t.i32(1, 1); // version
                 // schema: the root, then one leaf per column
    t.begin_list(2, CT_STRUCT, columns.len() + 1);
    t.begin_elem();
    t.binary(4, b"schema");
    t.i32(5, to_i32(columns.len()));
    t.end_struct();
    for c in columns {
        t.begin_elem();
        match c.values {
            ColumnValues::Int64(_) => {
                t.i32(1, TYPE_INT64);
                t.i32(3, 0); // REQUIRED
                t.binary(4, c.name.as_bytes());
            }
            ColumnValues::Bytes { utf8, .. } => {
                t.i32(1, TYPE_BYTE_ARRAY);
                t.i32(3, 1); // OPTIONAL
                t.binary(4, c.name.as_bytes());
                if utf8 {
                    t.i32(6, 0); // converted_type UTF8
                    t.begin_struct(10); // logicalType
                    t.begin_struct(1); // STRING
                    t.end_struct();
                    t.end_struct();
                }
            }
        }
        t.end_struct();
    }
    t.i64(3, to_i64(rows));
    // one row group
    let total_uncompressed: usize = chunks.iter().map(|c| c.uncompressed).sum();
    let total_compressed: usize = chunks.iter().map(|c| c.compressed).sum();
    t.begin_list(4, CT_STRUCT, 1);
    t.begin_elem();
    t.begin_list(1, CT_STRUCT, columns.len());
    for (c, m) in columns.iter().zip(chunks) {
        t.begin_elem(); // ColumnChunk
        t.i64(2, to_i64(m.offset)); // file_offset
        t.begin_struct(3); // meta_data
        let ty = match c.values {
            ColumnValues::Int64(_) => TYPE_INT64,
            ColumnValues::Bytes { .. } => TYPE_BYTE_ARRAY,
        };
        t.i32(1, ty);
        t.begin_list(2, CT_I32, 2);
        t.elem_i32(ENC_PLAIN);
        t.elem_i32(ENC_RLE);
        t.begin_list(3, CT_BINARY, 1);
        t.elem_binary(c.name.as_bytes());
        t.i32(4, compression.codec());
        t.i64(5, to_i64(rows));
        t.i64(6, to_i64(m.uncompressed));
        t.i64(7, to_i64(m.compressed));
        t.i64(9, to_i64(m.offset)); // data_page_offset
        let nulls = match c.values {
            ColumnValues::Int64(_) => 0,
            ColumnValues::Bytes { values, .. } => values.iter().filter(|v| v.is_none()).count(),
        };
        t.begin_struct(12); // statistics
        t.i64(3, to_i64(nulls)); // null_count
        t.end_struct();
        t.end_struct();
        t.end_struct();
    }
    t.i64(2, to_i64(total_uncompressed));
    t.i64(3, to_i64(rows));
    if let Some(first) = chunks.first() {
        t.i64(5, to_i64(first.offset));
    }
    t.i64(6, to_i64(total_compressed));
    t.end_struct();
    t.binary(6, created_by.as_bytes());
    t.stop()
}

/// Thrift compact protocol type codes.
const CT_I32: u8 = 5;
const CT_I64: u8 = 6;
const CT_BINARY: u8 = 8;
const CT_LIST: u8 = 9;
const CT_STRUCT: u8 = 12;

/// A struct being encoded in Thrift's compact protocol: field headers carry the delta from
/// the previous field id of the same struct, so nested structs keep their own.
#[derive(Default)]
struct Compact {
    buf: Vec<u8>,
    last: i16,
    outer: Vec<i16>,
}

impl Compact {
    fn field(&mut self, id: i16, ty: u8) {
        let delta = id - self.last;
        if (1..=15).contains(&delta) {
            // delta in 1..=15 fits the high nibble
            self.buf.push(((delta as u8) << 4) | ty);
        } else {
            self.buf.push(ty);
            uleb(&mut self.buf, zigzag(i64::from(id)));
        }
        self.last = id;
    }

    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, CT_I32);
        uleb(&mut self.buf, zigzag(i64::from(v)));
    }

    fn i64(&mut self, id: i16, v: i64) {
        self.field(id, CT_I64);
        uleb(&mut self.buf, zigzag(v));
    }

    fn binary(&mut self, id: i16, b: &[u8]) {
        self.field(id, CT_BINARY);
        self.elem_binary(b);
    }

    fn begin_struct(&mut self, id: i16) {
        self.field(id, CT_STRUCT);
        self.begin_elem();
    }

    /// A struct that is an element of a list (no field header).
    fn begin_elem(&mut self) {
        self.outer.push(self.last);
        self.last = 0;
    }

    fn end_struct(&mut self) {
        self.buf.push(0);
        self.last = self.outer.pop().unwrap_or(0);
    }

    fn begin_list(&mut self, id: i16, elem: u8, n: usize) {
        self.field(id, CT_LIST);
        if n < 15 {
            // n < 15 fits the high nibble
            self.buf.push(((n as u8) << 4) | elem);
        } else {
            self.buf.push(0xf0 | elem);
            uleb(&mut self.buf, n as u64);
        }
    }

    fn elem_i32(&mut self, v: i32) {
        uleb(&mut self.buf, zigzag(i64::from(v)));
    }

    fn elem_binary(&mut self, b: &[u8]) {
        uleb(&mut self.buf, b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// The outermost struct's end: its bytes.
    fn stop(mut self) -> Vec<u8> {
        self.buf.push(0);
        self.buf
    }
}

/// Unsigned LEB128 (Thrift's varint, Parquet's RLE run headers).
fn uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// A reader of what the writer writes, enough to check it: Thrift compact values as a
    /// tree, and pages decoded back to values.
    #[derive(Debug, Clone, PartialEq)]
    enum T {
        I(i64),
        B(Vec<u8>),
        L(Vec<T>),
        S(Vec<(i16, T)>),
    }

    impl T {
        fn get(&self, id: i16) -> &T {
            let T::S(f) = self else {
                panic!("not a struct")
            };
            &f.iter().find(|(i, _)| *i == id).expect("field").1
        }
        fn int(&self) -> i64 {
            let T::I(i) = self else { panic!("not an int") };
            *i
        }
        fn list(&self) -> &[T] {
            let T::L(l) = self else { panic!("not a list") };
            l
        }
        fn bytes(&self) -> &[u8] {
            let T::B(b) = self else { panic!("not binary") };
            b
        }
    }

    fn read_uleb(b: &[u8], at: &mut usize) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let x = b[*at];
            *at += 1;
            v |= u64::from(x & 0x7f) << shift;
            if x & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }

    fn unzigzag(v: u64) -> i64 {
        ((v >> 1) as i64) ^ -((v & 1) as i64)
    }

    fn read_value(b: &[u8], at: &mut usize, ty: u8) -> T {
        match ty {
            CT_I32 | CT_I64 => T::I(unzigzag(read_uleb(b, at))),
            CT_BINARY => {
                let n = read_uleb(b, at) as usize;
                *at += n;
                T::B(b[*at - n..*at].to_vec())
            }
            CT_LIST => {
                let h = b[*at];
                *at += 1;
                let n = if h >> 4 == 15 {
                    read_uleb(b, at) as usize
                } else {
                    (h >> 4) as usize
                };
                T::L((0..n).map(|_| read_value(b, at, h & 15)).collect())
            }
            CT_STRUCT => read_struct(b, at),
            t => panic!("type {t}"),
        }
    }

    fn read_struct(b: &[u8], at: &mut usize) -> T {
        let mut fields = Vec::new();
        let mut last = 0i16;
        loop {
            let h = b[*at];
            *at += 1;
            if h == 0 {
                return T::S(fields);
            }
            let id = if h >> 4 == 0 {
                unzigzag(read_uleb(b, at)) as i16
            } else {
                last + i16::from(h >> 4)
            };
            last = id;
            fields.push((id, read_value(b, at, h & 15)));
        }
    }

    #[test]
    fn thrift_compact_bytes_are_the_protocols() {
        let mut t = Compact::default();
        t.i32(1, 1); // delta 1, i32: 0x15, zigzag(1) = 2
        t.i64(3, -1); // delta 2, i64: 0x26, zigzag(-1) = 1
        t.binary(20, b"ab"); // delta 17: long form, zigzag(20) = 40
        t.begin_struct(21);
        t.i32(1, 300); // zigzag 600 = 0xd8 0x04
        t.end_struct();
        t.begin_list(22, CT_I32, 2);
        t.elem_i32(0);
        t.elem_i32(3);
        t.begin_list(23, CT_BINARY, 16);
        for _ in 0..16 {
            t.elem_binary(b"");
        }
        let b = t.stop();
        let mut want = vec![
            0x15, 2, 0x26, 1, 0x08, 40, 2, b'a', b'b', 0x1c, 0x15, 0xd8, 0x04, 0, 0x19, 0x25, 0, 6,
            0x19, 0xf8, 16,
        ];
        want.extend([0u8; 16]);
        want.push(0);
        assert_eq!(b, want);
    }

    #[test]
    fn levels_are_rle_runs() {
        assert_eq!(rle_levels([1, 1, 1, 0, 1].into_iter()), [6, 1, 2, 0, 2, 1]);
        // a run of 200 needs a two-byte header: 400 = 0x90 0x03
        assert_eq!(rle_levels(std::iter::repeat_n(0, 200)), [0x90, 0x03, 0]);
        assert!(rle_levels(std::iter::empty()).is_empty());
    }

    /// A column's values as read back (`None`: null; an int64 as its 8 bytes).
    type Values = Vec<Option<Vec<u8>>>;

    /// Decode the file: footer, each column's values back, and each column's page count.
    fn decode(file: &[u8]) -> (T, Vec<Values>, Vec<usize>) {
        assert_eq!(&file[..4], b"PAR1");
        assert_eq!(&file[file.len() - 4..], b"PAR1");
        let n = file.len();
        let len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
        let mut at = n - 8 - len;
        let meta = read_struct(file, &mut at);
        assert_eq!(at, n - 8, "footer length");
        let rows = meta.get(3).int() as usize;
        let rg = &meta.get(4).list()[0];
        let mut cols = Vec::new();
        let mut pages = Vec::new();
        for cc in rg.get(1).list() {
            let mut npages = 0;
            let md = cc.get(3);
            let codec = md.get(4).int();
            let mut at = md.get(9).int() as usize;
            let end = at + md.get(7).int() as usize;
            let ty = md.get(1).int() as i32;
            let mut vals = Vec::new();
            while at < end {
                let ph = read_struct(file, &mut at);
                npages += 1;
                let clen = ph.get(3).int() as usize;
                let ulen = ph.get(2).int() as usize;
                let raw = &file[at..at + clen];
                at += clen;
                let body = if codec == 6 {
                    zstd::bulk::decompress(raw, ulen).unwrap()
                } else {
                    raw.to_vec()
                };
                assert_eq!(body.len(), ulen);
                let count = ph.get(5).get(1).int() as usize;
                if ty == TYPE_INT64 {
                    for c in body.chunks(8) {
                        vals.push(Some(c.to_vec()));
                    }
                } else {
                    let ll = u32::from_le_bytes(body[..4].try_into().unwrap()) as usize;
                    let mut levels = Vec::new();
                    let mut p = 4;
                    while p < 4 + ll {
                        let h = read_uleb(&body, &mut p);
                        assert_eq!(h & 1, 0, "RLE runs only");
                        levels.extend(std::iter::repeat_n(body[p], (h >> 1) as usize));
                        p += 1;
                    }
                    assert_eq!(levels.len(), count);
                    for l in levels {
                        if l == 1 {
                            let k = u32::from_le_bytes(body[p..p + 4].try_into().unwrap());
                            p += 4;
                            vals.push(Some(body[p..p + k as usize].to_vec()));
                            p += k as usize;
                        } else {
                            vals.push(None);
                        }
                    }
                    assert_eq!(p, body.len());
                }
            }
            assert_eq!(vals.len(), rows);
            cols.push(vals);
            pages.push(npages);
        }
        (meta, cols, pages)
    }

    #[test]
    fn a_file_decodes_to_its_columns() {
        let paths: Vec<Option<&[u8]>> = vec![Some(b"/d/a.nc"), None, Some(b"/d/b.nc")];
        let raws: Vec<Option<&[u8]>> = vec![None, Some(b"\x00\x01"), None];
        let offsets = [10i64, 0, 1 << 40];
        let sizes = [5i64, 0, 7];
        for compression in [Compression::Uncompressed, Compression::Zstd(3)] {
            let cols = [
                Column {
                    name: "path",
                    values: ColumnValues::Bytes {
                        values: &paths,
                        utf8: true,
                    },
                },
                Column {
                    name: "offset",
                    values: ColumnValues::Int64(&offsets),
                },
                Column {
                    name: "size",
                    values: ColumnValues::Int64(&sizes),
                },
                Column {
                    name: "raw",
                    values: ColumnValues::Bytes {
                        values: &raws,
                        utf8: false,
                    },
                },
            ];
            let file = write_file(&cols, compression, "test").unwrap();
            let (meta, got, _) = decode(&file);
            assert_eq!(meta.get(1).int(), 1);
            assert_eq!(meta.get(3).int(), 3);
            assert_eq!(meta.get(6).bytes(), b"test");
            let schema = meta.get(2).list();
            assert_eq!(schema.len(), 5);
            assert_eq!(schema[0].get(5).int(), 4);
            assert_eq!(schema[1].get(4).bytes(), b"path");
            assert_eq!(schema[1].get(3).int(), 1, "path is optional");
            assert_eq!(schema[1].get(6).int(), 0, "path is UTF-8");
            assert_eq!(schema[2].get(1).int(), i64::from(TYPE_INT64));
            assert_eq!(schema[2].get(3).int(), 0, "offset is required");
            let T::S(raw_fields) = &schema[4] else {
                panic!()
            };
            assert!(raw_fields.iter().all(|(id, _)| *id != 6), "raw is bytes");
            let want_paths: Vec<Option<Vec<u8>>> =
                paths.iter().map(|p| p.map(<[u8]>::to_vec)).collect();
            assert_eq!(got[0], want_paths);
            let ints: Vec<i64> = got[1]
                .iter()
                .map(|b| i64::from_le_bytes(b.clone().unwrap().try_into().unwrap()))
                .collect();
            assert_eq!(ints, offsets);
            assert_eq!(got[3][1].as_deref(), Some(&b"\x00\x01"[..]));
            let chunks = meta.get(4).list()[0].get(1).list();
            let codec = chunks[0].get(3).get(4).int();
            assert_eq!(codec, i64::from(compression.codec()));
            let nulls: Vec<i64> = chunks
                .iter()
                .map(|c| c.get(3).get(12).get(3).int())
                .collect();
            assert_eq!(nulls, [1, 0, 0, 2]);
        }
    }

    #[test]
    fn large_columns_span_pages_and_ragged_columns_are_refused() {
        let big = vec![7u8; PAGE_TARGET / 2 + 1];
        let vals: Vec<Option<&[u8]>> = vec![Some(&big), None, Some(&big), Some(&big), None];
        let cols = [Column {
            name: "raw",
            values: ColumnValues::Bytes {
                values: &vals,
                utf8: false,
            },
        }];
        let file = write_file(&cols, Compression::Uncompressed, "t").unwrap();
        let (_, got, pages) = decode(&file);
        assert_eq!(got[0].len(), 5);
        assert_eq!(got[0][2].as_deref(), Some(big.as_slice()));
        assert!(got[0][4].is_none());
        // a page is closed once past PAGE_TARGET: the first two values, then the rest
        assert_eq!(pages, [2]);
        let ints = [1i64];
        let ragged = [
            cols[0].clone_ref(),
            Column {
                name: "offset",
                values: ColumnValues::Int64(&ints),
            },
        ];
        assert_eq!(
            write_file(&ragged, Compression::Uncompressed, "t"),
            Err(ParquetError::RaggedColumns)
        );
    }

    impl Column<'_> {
        fn clone_ref(&self) -> Column<'_> {
            Column {
                name: self.name,
                values: match &self.values {
                    ColumnValues::Int64(v) => ColumnValues::Int64(v),
                    ColumnValues::Bytes { values, utf8 } => ColumnValues::Bytes {
                        values,
                        utf8: *utf8,
                    },
                },
            }
        }
    }
}
