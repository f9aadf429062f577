//! The chunked framing of a DAP4 data response (DAP4 Volume 1, "The Chunked Response"): each
//! chunk starts with a 4-byte header, a flags byte (1 = last chunk, 2 = error chunk, 4 = the
//! data is little-endian, 8 = no checksums — netCDF-C 4.9.0's reading, see below) and a 24-bit
//! big-endian byte count. The first chunk is the DMR; the data chunks that follow are joined.
//!
//! netCDF-C 4.9.0 (`d4chunk.c`) takes the byte order and the checksum flag from the *first*
//! (DMR) chunk's header only, drops the DMR's last byte (the newline of its CRLF ending) and
//! any NUL bytes in it, and ignores bytes after the last chunk.

/// Header flag: this is the last chunk.
pub(crate) const LAST_CHUNK: u8 = 1;
/// Header flag: this chunk holds an error message instead of data.
pub(crate) const ERROR_CHUNK: u8 = 2;
/// Header flag: the data is little-endian.
pub(crate) const LITTLE_ENDIAN_CHUNK: u8 = 4;
/// Header flag (netCDF-C's reading of bit 3 of the first header): no checksums follow the
/// variables.
pub(crate) const NO_CHECKSUM_CHUNK: u8 = 8;

/// A de-chunked response.
#[derive(Debug, PartialEq)]
pub(crate) struct Dechunked {
    /// The DMR text (without its last byte and without NULs).
    pub dmr: Vec<u8>,
    /// The data chunks joined.
    pub data: Vec<u8>,
    /// The first header says the data is little-endian.
    pub little_endian: bool,
    /// The first header says each top-level variable is followed by its CRC-32.
    pub checksums: bool,
}

/// How de-chunking failed.
#[derive(Debug, PartialEq)]
pub(crate) enum ChunkError {
    /// The bytes end inside a chunk header or chunk body.
    Truncated {
        /// chunk number (0 = the DMR)
        chunk: usize,
        /// byte offset of its header
        at: usize,
        /// bytes the header announces (4 for a header itself)
        wanted: usize,
        /// bytes left
        left: usize,
    },
    /// The DMR chunk is empty.
    EmptyDmr,
    /// The DMR chunk is flagged as the last: the response has no data part.
    NoData,
    /// An error chunk: its text.
    ErrorChunk(Vec<u8>),
}

impl std::fmt::Display for ChunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkError::Truncated {
                chunk,
                at,
                wanted,
                left,
            } => write!(
                f,
                "chunk {chunk} (header at byte {at}) needs {wanted} bytes but only {left} are left (truncated response?)"
            ),
            ChunkError::EmptyDmr => write!(f, "the first chunk (the DMR) is empty"),
            ChunkError::NoData => write!(
                f,
                "the DMR chunk is flagged as the last chunk: the response has no data part"
            ),
            ChunkError::ErrorChunk(text) => {
                write!(f, "error chunk: {}", String::from_utf8_lossy(text).trim())
            }
        }
    }
}

fn header(bytes: &[u8], at: usize, chunk: usize) -> Result<(u8, usize), ChunkError> {
    let h = bytes
        .get(at..at.saturating_add(4))
        .ok_or(ChunkError::Truncated {
            chunk,
            at,
            wanted: 4,
            left: bytes.len().saturating_sub(at),
        })?;
    let flags = h[0] & (LAST_CHUNK | ERROR_CHUNK | LITTLE_ENDIAN_CHUNK | NO_CHECKSUM_CHUNK);
    let count = (usize::from(h[1]) << 16) | (usize::from(h[2]) << 8) | usize::from(h[3]);
    Ok((flags, count))
}

fn body(bytes: &[u8], at: usize, count: usize, chunk: usize) -> Result<&[u8], ChunkError> {
    let start = at + 4;
    bytes
        .get(start..start.saturating_add(count))
        .ok_or(ChunkError::Truncated {
            chunk,
            at,
            wanted: count,
            left: bytes.len().saturating_sub(start),
        })
}

/// Split a chunked response into its DMR and its data.
pub(crate) fn dechunk(bytes: &[u8]) -> Result<Dechunked, ChunkError> {
    let (flags, count) = header(bytes, 0, 0)?;
    if count == 0 {
        return Err(ChunkError::EmptyDmr);
    }
    let dmr_bytes = body(bytes, 0, count, 0)?;
    if flags & ERROR_CHUNK != 0 {
        return Err(ChunkError::ErrorChunk(dmr_bytes.to_vec()));
    }
    // netCDF-C overwrites the DMR's last byte with its terminating NUL, then drops NULs
    let dmr: Vec<u8> = dmr_bytes[..count - 1]
        .iter()
        .copied()
        .filter(|&b| b != 0)
        .collect();
    if flags & LAST_CHUNK != 0 {
        return Err(ChunkError::NoData);
    }
    let little_endian = flags & LITTLE_ENDIAN_CHUNK != 0;
    let checksums = flags & NO_CHECKSUM_CHUNK == 0;
    let mut data = Vec::new();
    let mut at = 4 + count;
    let mut n = 1;
    loop {
        let (flags, count) = header(bytes, at, n)?;
        let b = body(bytes, at, count, n)?;
        if flags & ERROR_CHUNK != 0 {
            return Err(ChunkError::ErrorChunk(b.to_vec()));
        }
        data.extend_from_slice(b);
        at += 4 + count;
        n += 1;
        if flags & LAST_CHUNK != 0 {
            break;
        }
    }
    Ok(Dechunked {
        dmr,
        data,
        little_endian,
        checksums,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A chunk: header (flags, 24-bit big-endian count) and body.
    pub(crate) fn chunk(flags: u8, body: &[u8]) -> Vec<u8> {
        let n = body.len();
        let mut v = vec![flags, (n >> 16) as u8, (n >> 8) as u8, n as u8];
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn dmr_then_data_chunks_are_joined() {
        let mut r = chunk(LITTLE_ENDIAN_CHUNK, b"<Dataset/>\r\n");
        r.extend(chunk(0, &[1, 2]));
        r.extend(chunk(LAST_CHUNK, &[3]));
        r.push(0x0a); // ignored, as netCDF-C does
        let d = dechunk(&r).unwrap();
        assert_eq!(d.dmr, b"<Dataset/>\r");
        assert_eq!(d.data, [1, 2, 3]);
        assert!(d.little_endian);
        assert!(d.checksums);
    }

    #[test]
    fn flags_of_the_first_header_rule() {
        let mut r = chunk(NO_CHECKSUM_CHUNK, b"<Dataset/>\n");
        r.extend(chunk(LAST_CHUNK | LITTLE_ENDIAN_CHUNK, &[]));
        let d = dechunk(&r).unwrap();
        assert!(!d.little_endian);
        assert!(!d.checksums);
        assert!(d.data.is_empty());
    }

    #[test]
    fn truncated_and_error_chunks() {
        assert!(matches!(
            dechunk(&[4, 0]),
            Err(ChunkError::Truncated { chunk: 0, .. })
        ));
        let r = chunk(4, b"<Dataset/>\n");
        assert!(matches!(
            dechunk(&r[..8]),
            Err(ChunkError::Truncated {
                chunk: 0,
                wanted: 11,
                left: 4,
                ..
            })
        ));
        // data part missing
        assert!(matches!(
            dechunk(&r),
            Err(ChunkError::Truncated {
                chunk: 1,
                wanted: 4,
                left: 0,
                ..
            })
        ));
        let mut r2 = r.clone();
        r2.extend(chunk(LAST_CHUNK, &[1, 2, 3]));
        assert!(matches!(
            dechunk(&r2[..r2.len() - 1]),
            Err(ChunkError::Truncated {
                chunk: 1,
                wanted: 3,
                left: 2,
                ..
            })
        ));
        let mut r3 = r.clone();
        r3.extend(chunk(ERROR_CHUNK | LAST_CHUNK, b"<Error/>"));
        assert_eq!(
            dechunk(&r3),
            Err(ChunkError::ErrorChunk(b"<Error/>".to_vec()))
        );
        assert_eq!(dechunk(&chunk(0, b"")), Err(ChunkError::EmptyDmr));
        assert_eq!(
            dechunk(&chunk(LAST_CHUNK, b"<Dataset/>\n")),
            Err(ChunkError::NoData)
        );
    }
}
