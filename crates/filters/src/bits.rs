//! An MSB-first bit writer: the bitstreams of szip's encoder and of HDF5's nbit and
//! scaleoffset filters (nc-hdf5).

/// Bits written most significant first, each byte filled from its highest bit.
pub struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl BitWriter {
    /// A writer whose output has room for `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> BitWriter {
        BitWriter {
            out: Vec::with_capacity(bytes),
            acc: 0,
            nbits: 0,
        }
    }

    /// Append the low `n` bits of `v` (`n` <= 32).
    #[inline]
    pub fn put(&mut self, v: u32, n: u32) {
        if n == 0 {
            return;
        }
        let v = u64::from(v) & ((1u64 << n) - 1);
        self.acc = (self.acc << n) | v;
        self.nbits += n;
        while self.nbits >= 8 {
            self.nbits -= 8;
            self.out.push((self.acc >> self.nbits) as u8);
        }
        self.acc &= (1u64 << self.nbits) - 1;
    }

    /// Append `count` zero bits.
    pub fn zeros(&mut self, mut count: u64) {
        while count > 0 {
            let n = count.min(32) as u32;
            self.put(0, n);
            count -= u64::from(n);
        }
    }

    /// Fundamental sequence code of `m`: `m` zeros, then a one.
    #[inline]
    pub fn fs(&mut self, m: u32) {
        if m < 32 {
            self.put(1, m + 1);
        } else {
            self.zeros(u64::from(m));
            self.put(1, 1);
        }
    }

    /// Append the low `n` bits of `v` (`n` <= 64).
    pub fn put_u64(&mut self, v: u64, n: u32) {
        if n > 32 {
            self.put((v >> 32) as u32, n - 32);
            self.put(v as u32, 32);
        } else {
            self.put(v as u32, n);
        }
    }

    /// True when the bits written fill whole bytes.
    pub fn is_byte_aligned(&self) -> bool {
        self.nbits == 0
    }

    /// The bytes written, the last one padded with 0 bits.
    pub fn finish(mut self) -> Vec<u8> {
        if self.nbits > 0 {
            let b = (self.acc << (8 - self.nbits)) as u8;
            self.out.push(b);
        }
        self.out
    }
}
