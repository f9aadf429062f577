//! CRC-32C (Castagnoli), the checksum of Zarr v3's `crc32c` codec and numcodecs' `crc32c`
//! (`location="end"`, its default): the codec is `Checksum32` with `Sum::Crc32c`. No HDF5
//! filter has this framing (fletcher32, filter 3, is another checksum), so it is a Zarr-only
//! codec.

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;
    use crate::codecs::{Checksum32, Sum};
    use crate::filter::Filter;

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
        let codec = Checksum32::new(Sum::Crc32c, false);
        let mut enc = Vec::new();
        codec.encode(b"hello zarr", &mut enc).unwrap();
        assert_eq!(enc.len(), 14);
        assert_eq!(&enc[10..], &crc32c(b"hello zarr").to_le_bytes());
        let mut dec = Vec::new();
        codec.decode(&enc, &mut dec).unwrap();
        assert_eq!(dec, b"hello zarr");
        enc[3] ^= 1;
        let e = codec.decode(&enc, &mut dec).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        assert!(codec.decode(b"abc", &mut dec).is_err());
    }
}
