//! CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): the checksum a DAP4 server appends
//! to each top-level variable's data (DAP4 Volume 1, "Checksums"; netCDF-C uses zlib's crc32).

/// The table of the byte-at-a-time algorithm, built at compile time.
const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// CRC-32 of `bytes` (initial value 0, as zlib's `crc32(0, buf, len)`).
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c = TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::crc32;

    #[test]
    fn known_values() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // one 0xff byte: the checksum test_atomic_types.nc.dap carries for vu8
        assert_eq!(crc32(&[0xff]), 0xFF00_0000);
    }
}
