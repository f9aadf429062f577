//! HDF5 on-disk structures, laid out as the File Format Specification (version 3) lays them
//! out: one module per structure, each encoding its structure for the one-pass writer
//! (`crate::write`), and, where hdf5-reader's parsers fall short, reading it
//! (`object_header::read`, `fractal_heap::read`; `verify` checks the checksums of the blocks
//! hdf5-reader reads without verifying). Every encoder takes plain values (sizes, addresses, already encoded
//! messages) and returns the structure's bytes with its checksum; none does I/O or knows
//! netCDF.
//!
//! | module | structure | spec |
//! |---|---|---|
//! | [`superblock`] | superblock version 2 | II.A |
//! | [`object_header`] | version 2 object header (`OHDR`) | IV.A.1.b |
//! | [`message`] | header messages: dataspace, fill value, layout, filter pipeline, attribute, attribute info, link, link info, group info | IV.A.2 |
//! | [`datatype`] | datatype message | IV.A.2.d |
//! | [`global_heap`] | global heap collection (`GCOL`) | III.E |
//! | [`fractal_heap`] | fractal heap of managed objects (`FRHP`, `FHDB`, `FHIB`) | III.G |
//! | [`btree2`] | version 2 B-tree (`BTHD`, `BTIN`, `BTLF`) | III.A.2 |
//! | [`btree1`] | version 1 B-tree of raw data chunks (`TREE`, node type 1) | III.A.1 |
//! | [`dense`] | dense link and attribute storage: a fractal heap and its name and creation-order indexes | IV.A.2.c, IV.A.2.v |
//! | [`checksum`] | the lookup3 checksum of version-2 metadata, both sides | II.C |
//! | [`verify`] | checksums of extensible and fixed array blocks and fractal heap indirect blocks, on reading | III.G-I |
//!
//! Encoders take plain values and do no I/O; the read walks take the opened file.
//!
//! All files we write use 8-byte addresses and 8-byte lengths.

pub(crate) mod btree1;
pub(crate) mod btree2;
pub(crate) mod checksum;
pub(crate) mod datatype;
pub(crate) mod dense;
pub(crate) mod fractal_heap;
pub(crate) mod global_heap;
pub(crate) mod message;
pub(crate) mod object_header;
pub(crate) mod superblock;
pub(crate) mod verify;

/// The undefined address (all bits set; spec II.A "Undefined Address").
pub(crate) const UNDEF: u64 = u64::MAX;

/// Bytes of an address ("size of offsets") and of a length in the files we write.
pub(crate) const ADDR: usize = 8;

/// Little-endian appends to a byte buffer: the one way encoders put numbers.
pub(crate) trait Put {
    fn u8(&mut self, x: u8);
    fn u16(&mut self, x: u16);
    fn u32(&mut self, x: u32);
    fn u64(&mut self, x: u64);
    /// The low `width` bytes of `x` (1 to 8), little-endian.
    fn uint(&mut self, x: u64, width: usize);
    /// The lookup3 checksum of everything in the buffer from `from`, appended.
    fn checksum_from(&mut self, from: usize);
}

impl Put for Vec<u8> {
    fn u8(&mut self, x: u8) {
        self.push(x);
    }
    fn u16(&mut self, x: u16) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn u32(&mut self, x: u32) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn u64(&mut self, x: u64) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn uint(&mut self, x: u64, width: usize) {
        self.extend_from_slice(&x.to_le_bytes()[..width.min(8)]);
    }
    fn checksum_from(&mut self, from: usize) {
        let sum = checksum::lookup3(&self[from..]);
        self.u32(sum);
    }
}

/// Test support: the end of laid-out blocks (address, bytes), checking that none overlaps
/// another.
#[cfg(test)]
pub(crate) fn disjoint_end(blocks: &[(u64, Vec<u8>)]) -> u64 {
    let mut spans: Vec<(u64, u64)> = blocks
        .iter()
        .map(|(a, b)| (*a, *a + b.len() as u64))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        assert!(w[0].1 <= w[1].0, "blocks overlap: {w:?}");
    }
    spans.last().map_or(0, |s| s.1)
}

/// Bytes needed to hold the unsigned value `x` (at least 1).
pub(crate) fn bytes_for(x: u64) -> usize {
    (((64 - x.leading_zeros()) as usize).div_ceil(8)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn little_endian_puts_and_widths() {
        let mut b = Vec::new();
        b.u8(1);
        b.u16(0x0302);
        b.uint(0x0706_0504, 3);
        assert_eq!(b, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!((bytes_for(0), bytes_for(255), bytes_for(256)), (1, 1, 2));
        assert_eq!(bytes_for(u64::MAX), 8);
    }
}
