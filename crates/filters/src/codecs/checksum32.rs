//! numcodecs' 32-bit checksum codecs without an HDF5 filter: `crc32` (zlib's CRC-32),
//! `adler32` and `jenkins_lookup3` (Bob Jenkins' lookup3 hash, as HDF5 computes its metadata
//! checksums), and `crc32c` (Zarr v3's `crc32c`: checksum at the end; numcodecs allows it
//! first too). Zarr v3 stores carry them as
//! `numcodecs.crc32`, `numcodecs.adler32`, `numcodecs.jenkins_lookup3`. Encoding adds the
//! checksum of the chunk as 4 little-endian bytes, before the chunk (`location: "start"`,
//! numcodecs' default for crc32 and adler32) or after it (`"end"`; lookup3 always); decoding
//! verifies and strips them. Spec: numcodecs `checksum32.py` documentation.

use super::corrupt;
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;

/// Which checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sum {
    /// zlib's CRC-32 (IEEE 802.3, reflected).
    Crc32,
    /// zlib's Adler-32.
    Adler32,
    /// CRC-32C (Castagnoli).
    Crc32c,
    /// lookup3's `hashlittle` with this initial value.
    Lookup3(u32),
}

/// A checksum codec: the sum and where it is stored.
pub(crate) struct Checksum32 {
    sum: Sum,
    at_start: bool,
}

impl Checksum32 {
    pub(crate) fn new(sum: Sum, at_start: bool) -> Checksum32 {
        Checksum32 { sum, at_start }
    }

    fn sum_name(&self) -> &'static str {
        match self.sum {
            Sum::Crc32 => "crc32",
            Sum::Adler32 => "adler32",
            Sum::Crc32c => "crc32c",
            Sum::Lookup3(_) => "jenkins_lookup3",
        }
    }

    fn of(&self, data: &[u8]) -> u32 {
        match self.sum {
            Sum::Crc32 => {
                let mut c = flate2::Crc::new();
                c.update(data);
                c.sum()
            }
            Sum::Adler32 => adler32(data),
            Sum::Crc32c => super::crc32c(data),
            Sum::Lookup3(init) => lookup3(data, init),
        }
    }
}

/// Adler-32 of `data` (RFC 1950).
pub(crate) fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    // 5552 bytes is the most that can be summed before `b` might overflow a u32
    let (mut a, mut b) = (1u32, 0u32);
    for block in data.chunks(5552) {
        for &x in block {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// Bob Jenkins' lookup3 `hashlittle` of `data` with initial value `init` (the function HDF5
/// names `H5_checksum_lookup3`).
pub(crate) fn lookup3(data: &[u8], init: u32) -> u32 {
    let word = |b: &[u8]| -> u32 {
        b.iter()
            .enumerate()
            .fold(0u32, |w, (i, &x)| w.wrapping_add(u32::from(x) << (8 * i)))
    };
    let start = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(init);
    let (mut a, mut b, mut c) = (start, start, start);
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        // mix
        a = a.wrapping_sub(c) ^ c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    // the last 1 to 12 bytes, zero-padded
    let mut tail = [0u8; 12];
    tail[..rest.len()].copy_from_slice(rest);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    // final
    c = (c ^ b).wrapping_sub(b.rotate_left(14));
    a = (a ^ c).wrapping_sub(c.rotate_left(11));
    b = (b ^ a).wrapping_sub(a.rotate_left(25));
    c = (c ^ b).wrapping_sub(b.rotate_left(16));
    a = (a ^ c).wrapping_sub(c.rotate_left(4));
    b = (b ^ a).wrapping_sub(a.rotate_left(14));
    (c ^ b).wrapping_sub(b.rotate_left(24))
}

/// `chunk` with the 4 little-endian bytes of `sum` before it (`at_start`) or after it, in `out`.
pub(crate) fn with_sum(chunk: &[u8], sum: u32, at_start: bool, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(chunk.len() + 4);
    if at_start {
        out.extend_from_slice(&sum.to_le_bytes());
        out.extend_from_slice(chunk);
    } else {
        out.extend_from_slice(chunk);
        out.extend_from_slice(&sum.to_le_bytes());
    }
}

/// A chunk's body and the little-endian checksum stored before it (`at_start`) or after it;
/// `None` when the chunk is shorter than the checksum.
pub(crate) fn split_sum(chunk: &[u8], at_start: bool) -> Option<(&[u8], u32)> {
    let split = if at_start {
        4
    } else {
        chunk.len().checked_sub(4)?
    };
    let (a, b) = chunk.get(..split).zip(chunk.get(split..))?;
    let (body, sum) = if at_start { (b, a) } else { (a, b) };
    Some((body, u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]])))
}

impl Filter for Checksum32 {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        self.sum_name()
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        with_sum(chunk, self.of(chunk), self.at_start, out);
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let name = self.sum_name();
        let Some((body, stored)) = split_sum(chunk, self.at_start) else {
            return Err(corrupt(
                ID,
                name,
                format!("{} bytes, shorter than the 4-byte checksum", chunk.len()),
            ));
        };
        let computed = self.of(body);
        if stored != computed {
            return Err(corrupt(
                ID,
                name,
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
        // the check values of the algorithms, and numcodecs' outputs (zlib.crc32,
        // zlib.adler32, numcodecs.jenkins.jenkins_lookup3)
        let c = |s| Checksum32::new(s, false);
        assert_eq!(c(Sum::Crc32).of(b"123456789"), 0xCBF4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(&vec![0xFFu8; 100_000]), 0x149A_302C);
        assert_eq!(lookup3(b"", 0), 0xdead_beef);
        assert_eq!(lookup3(b"", 0xdead_beef), 0xbd5b_7dde);
        assert_eq!(lookup3(b"Four score and seven years ago", 0), 0x17770551);
        assert_eq!(lookup3(b"Four score and seven years ago", 1), 0xcd628161);
        assert_eq!(lookup3(b"123456789012", 0), 0xb578_f5b0);
        assert_eq!(lookup3(b"1234567890123", 0), 0xde86_d9f5);
    }

    #[test]
    fn round_trip_at_either_end() {
        for (sum, start) in [
            (Sum::Crc32, true),
            (Sum::Adler32, true),
            (Sum::Crc32c, true),
            (Sum::Lookup3(0), false),
        ] {
            let f = Checksum32::new(sum, start);
            let mut enc = Vec::new();
            f.encode(b"hello zarr", &mut enc).unwrap();
            assert_eq!(enc.len(), 14);
            let at = if start { 0..4 } else { 10..14 };
            assert_eq!(enc[at], f.of(b"hello zarr").to_le_bytes());
            let mut dec = Vec::new();
            f.decode(&enc, &mut dec).unwrap();
            assert_eq!(dec, b"hello zarr");
            enc[5] ^= 1;
            let e = f.decode(&enc, &mut dec).unwrap_err().to_string();
            assert!(e.contains("checksum mismatch"), "{e}");
            assert!(f.decode(b"abc", &mut dec).is_err());
        }
    }
}
