//! The checksum HDF5 stores in its version-2 metadata: Bob Jenkins' lookup3 `hashlittle` with
//! an initial value of 0 (HDF5 File Format Specification v3, II.C "Checksums"; the algorithm is
//! public domain, described at <http://burtleburtle.net/bob/c/lookup3.c>).
//!
//! Written here rather than taken from the decoder so that our own checks do not depend on the
//! code they check.

/// lookup3 `hashlittle(data, len, 0)`: the checksum of a structure's bytes, from its
/// signature up to (not including) the stored checksum.
pub(crate) fn lookup3(data: &[u8]) -> u32 {
    // the length enters the seed modulo 2^32, as in the reference (a 32-bit length)
    let seed = 0xdead_beef_u32.wrapping_add(data.len() as u32);
    let (mut a, mut b, mut c) = (seed, seed, seed);
    let word = |w: &[u8]| {
        let mut b4 = [0u8; 4];
        b4[..w.len()].copy_from_slice(w);
        u32::from_le_bytes(b4)
    };
    let mut rest = data;
    // every full 12-byte block but the last goes through `mix`; the last 1 to 12 bytes
    // (zero-padded) go through `final`
    while rest.len() > 12 {
        let (block, tail) = rest.split_at(12);
        a = a.wrapping_add(word(&block[0..4]));
        b = b.wrapping_add(word(&block[4..8]));
        c = c.wrapping_add(word(&block[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = tail;
    }
    if rest.is_empty() {
        return c;
    }
    let part = |from: usize| {
        let end = (from + 4).min(rest.len());
        rest.get(from..end).map_or(0, word)
    };
    a = a.wrapping_add(part(0));
    b = b.wrapping_add(part(4));
    c = c.wrapping_add(part(8));
    finish(&mut a, &mut b, &mut c);
    c
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
}

#[cfg(test)]
mod tests {
    use super::lookup3;

    #[test]
    fn reference_values() {
        // from the self-test of lookup3.c (hashlittle with initval 0)
        assert_eq!(lookup3(b""), 0xdead_beef);
        assert_eq!(lookup3(b"Four score and seven years ago"), 0x1777_0551);
    }

    #[test]
    fn agrees_with_the_decoder_on_every_tail_length() {
        // every length from 0 to 64 covers each tail length several times, with and without
        // full blocks before it
        let bytes: Vec<u8> = (0..64u32)
            .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 24) as u8)
            .collect();
        for n in 0..=bytes.len() {
            assert_eq!(
                lookup3(&bytes[..n]),
                hdf5_reader::checksum::jenkins_lookup3(&bytes[..n]),
                "length {n}"
            );
        }
    }
}
