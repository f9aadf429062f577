//! Global heap collections (spec III.E): `GCOL`, version 1, the collection's size, its objects
//! (index, reference count, size, data padded to 8 bytes) and the free space object (index 0)
//! covering the rest. Variable-length strings and sequences, and the dimension lists, point
//! into them by collection address and object index.
//!
//! A collection is filled in memory and written once, whole, at an address reserved for its
//! size before any of its objects was referenced.

use super::Put;

/// Smallest collection libhdf5 makes (and reads without complaint).
pub(crate) const MIN_SIZE: u64 = 4096;
/// Collection header: signature, version, reserved, size.
const HEADER: u64 = 16;
/// Object header: index, reference count, reserved, size.
const OBJECT_HEADER: u64 = 16;
/// Most objects in one collection (indices are 16-bit, 0 is the free space).
const MAX_OBJECTS: usize = u16::MAX as usize;

/// Bytes an object of `len` data bytes takes in a collection.
pub(crate) fn object_len(len: usize) -> u64 {
    OBJECT_HEADER + (len as u64).next_multiple_of(8)
}

/// Size of a collection holding nothing but one object of `len` bytes, or the minimum.
pub(crate) fn size_for(len: usize) -> u64 {
    (HEADER + object_len(len) + OBJECT_HEADER).max(MIN_SIZE)
}

/// A collection being filled.
#[derive(Debug)]
pub(crate) struct Collection {
    size: u64,
    /// Objects encoded so far (after the collection header).
    body: Vec<u8>,
    count: usize,
}

impl Collection {
    /// An empty collection of `size` bytes (at least [`MIN_SIZE`]).
    pub fn new(size: u64) -> Collection {
        Collection {
            size: size.max(MIN_SIZE),
            body: Vec::new(),
            count: 0,
        }
    }

    #[cfg(test)]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes used so far, collection header included.
    pub fn used(&self) -> u64 {
        HEADER + self.body.len() as u64
    }

    /// True if an object of `len` bytes fits, leaving either nothing or room for the free
    /// space object's header.
    pub fn fits(&self, len: usize) -> bool {
        let used = HEADER + self.body.len() as u64 + object_len(len);
        self.count < MAX_OBJECTS && (used == self.size || used + OBJECT_HEADER <= self.size)
    }

    /// Add an object (the caller checked [`Collection::fits`]); its index.
    pub fn push(&mut self, data: &[u8]) -> u32 {
        self.count += 1;
        let index = self.count as u16;
        self.body.u16(index);
        self.body.u16(0); // reference count: libhdf5 keeps 0 for vlen data
        self.body.u32(0);
        self.body.u64(data.len() as u64);
        self.body.extend_from_slice(data);
        let padded = self.body.len().next_multiple_of(8);
        self.body.resize(padded, 0);
        u32::from(index)
    }

    /// The encoded collection, exactly [`Collection::size`] bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.size as usize);
        b.extend_from_slice(b"GCOL");
        b.u8(1);
        b.extend_from_slice(&[0, 0, 0]);
        b.u64(self.size);
        b.extend_from_slice(&self.body);
        let free = self.size - b.len() as u64;
        if free >= OBJECT_HEADER {
            b.u16(0);
            b.u16(0);
            b.u32(0);
            b.u64(free);
        }
        b.resize(self.size as usize, 0);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_numbered_padded_and_followed_by_free_space() {
        let mut c = Collection::new(0);
        assert_eq!(c.size(), MIN_SIZE);
        assert!(c.fits(3));
        assert_eq!(c.push(b"abc"), 1);
        assert_eq!(c.push(b""), 2);
        let b = c.encode();
        assert_eq!(b.len() as u64, MIN_SIZE);
        assert_eq!(&b[..8], b"GCOL\x01\0\0\0");
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), MIN_SIZE);
        assert_eq!(&b[16..18], &[1, 0]);
        assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 3);
        assert_eq!(&b[32..40], b"abc\0\0\0\0\0");
        assert_eq!(&b[40..42], &[2, 0]);
        // the free space object: index 0, the rest of the collection
        assert_eq!(&b[56..58], &[0, 0]);
        assert_eq!(
            u64::from_le_bytes(b[64..72].try_into().unwrap()),
            MIN_SIZE - 56
        );
    }

    #[test]
    fn a_big_object_gets_a_collection_of_its_size() {
        let n = 10_000;
        let mut c = Collection::new(size_for(n));
        assert!(c.fits(n));
        c.push(&vec![7; n]);
        assert!(!c.fits(1) || c.size() >= HEADER + object_len(n) + object_len(1));
        assert_eq!(c.encode().len() as u64, c.size());
    }
}
