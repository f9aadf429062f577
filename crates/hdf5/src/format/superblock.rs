//! Superblock version 2 (spec II.A, "Superblock Format Version 2 and 3"): 8-byte addresses and
//! lengths, no extension, the root group's object header address, the end-of-file address,
//! and a checksum. Version 2 is what libhdf5 writes with the library version bounds netCDF-C
//! 4.9.0 sets (low bound 1.8).

use super::{Put, UNDEF};

/// HDF5's file signature.
pub(crate) const SIGNATURE: [u8; 8] = [0x89, b'H', b'D', b'F', b'\r', b'\n', 0x1a, b'\n'];

/// Bytes of a version 2 superblock with 8-byte addresses.
pub(crate) const LEN: u64 = 48;

/// The superblock of a file whose root group's header is at `root` and which ends at `eof`.
pub(crate) fn encode(root: u64, eof: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(LEN as usize);
    b.extend_from_slice(&SIGNATURE);
    b.u8(2); // version
    b.u8(8); // size of offsets
    b.u8(8); // size of lengths
    b.u8(0); // file consistency flags: closed cleanly
    b.u64(0); // base address
    b.u64(UNDEF); // superblock extension address
    b.u64(eof);
    b.u64(root);
    b.checksum_from(0);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_2_layout_and_checksum() {
        let b = encode(48, 4096);
        assert_eq!(b.len() as u64, LEN);
        assert_eq!(&b[..8], &SIGNATURE);
        assert_eq!(&b[8..12], &[2, 8, 8, 0]);
        assert_eq!(u64::from_le_bytes(b[28..36].try_into().unwrap()), 4096);
        assert_eq!(u64::from_le_bytes(b[36..44].try_into().unwrap()), 48);
        let sum = u32::from_le_bytes(b[44..48].try_into().unwrap());
        assert_eq!(sum, crate::format::checksum::lookup3(&b[..44]));
    }
}
