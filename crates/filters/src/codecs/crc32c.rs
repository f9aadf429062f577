//! CRC-32C (Castagnoli) checksum codec: Zarr v3's `crc32c` and numcodecs' `crc32c`
//! (`location="end"`, its default). Encoding appends the checksum of the chunk as 4
//! little-endian bytes; decoding verifies and strips them. No HDF5 filter has this framing
//! (fletcher32, filter 3, is another checksum), so it is a Zarr-only codec.

use super::corrupt;
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;
const NAME: &str = "crc32c";

/// The reflected Castagnoli polynomial (iSCSI, RFC 3720 appendix B.4).
const POLY: u32 = 0x82F6_3B78;

/// The 256-entry table of the byte-at-a-time algorithm, built at compile time.
const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The CRC-32C of `data` (initial value and final xor 0xFFFFFFFF).
pub fn crc32c(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// The `crc32c` codec.
pub(crate) struct Crc32c;

impl Filter for Crc32c {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        out.reserve(chunk.len() + 4);
        out.extend_from_slice(chunk);
        out.extend_from_slice(&crc32c(chunk).to_le_bytes());
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let Some(body_len) = chunk.len().checked_sub(4) else {
            return Err(corrupt(
                ID,
                NAME,
                format!("{} bytes, shorter than the 4-byte checksum", chunk.len()),
            ));
        };
        let (body, sum) = chunk.split_at(body_len);
        let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
        let computed = crc32c(body);
        if stored != computed {
            return Err(corrupt(
                ID,
                NAME,
                format!("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        out.clear();
        out.extend_from_slice(body);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    #[test]
    fn known_values() {
        // RFC 3720 B.4 test vectors and the classic check value
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
        let inc: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c(&inc), 0x46DD_794E);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn round_trip_and_corruption() {
        let mut enc = Vec::new();
        Crc32c.encode(b"hello zarr", &mut enc).unwrap();
        assert_eq!(enc.len(), 14);
        assert_eq!(&enc[10..], &crc32c(b"hello zarr").to_le_bytes());
        let mut dec = Vec::new();
        Crc32c.decode(&enc, &mut dec).unwrap();
        assert_eq!(dec, b"hello zarr");
        enc[3] ^= 1;
        let e = Crc32c.decode(&enc, &mut dec).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        assert!(Crc32c.decode(b"abc", &mut dec).is_err());
    }
}
