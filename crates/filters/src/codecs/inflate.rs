//! libdeflate's zlib decoder called on a buffer's spare capacity: a chunk whose decoded size
//! is known is inflated in one call into memory that is not zeroed first. libdeflater's safe
//! call takes an initialised slice, and zeroing each chunk's buffer before inflating into it
//! was 3.5 % of the CPU of copies that inflate (a box subset, a netCDF-4 to classic copy).
#![allow(unsafe_code)]

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_result_LIBDEFLATE_SUCCESS, libdeflate_zlib_decompress,
};

/// One thread's libdeflate decompressor (a decompressor is not shared between threads).
struct Decompressor(*mut libdeflate_decompressor);

impl Drop for Decompressor {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from libdeflate_alloc_decompressor, is freed once (here)
            // and used by no one after: the thread that owns it is ending.
            unsafe { libdeflate_free_decompressor(self.0) }
        }
    }
}

thread_local! {
    // SAFETY: libdeflate_alloc_decompressor takes no argument and returns a new decompressor
    // or null (out of memory), which `zlib_into` checks.
    static DECOMPRESSOR: Decompressor = Decompressor(unsafe { libdeflate_alloc_decompressor() });
}

/// Inflate the zlib stream `chunk` into `out` (replacing its contents) when it decodes to at
/// most `n` bytes: false, and `out` empty, when it does not, is not a sound zlib stream, or no
/// decompressor could be made.
pub(crate) fn zlib_into(chunk: &[u8], n: usize, out: &mut Vec<u8>) -> bool {
    out.clear();
    out.reserve_exact(n);
    DECOMPRESSOR.with(|d| {
        if d.0.is_null() {
            return false;
        }
        let mut got = 0usize;
        // SAFETY: `d.0` is this thread's live decompressor (only this thread uses it, and
        // not re-entrantly); the input is `chunk.len()` readable bytes; the output is the
        // buffer's spare capacity, at least `n` bytes (reserved above) that libdeflate may
        // write and read back (its own output only); `got` is a valid place for the size.
        let r = unsafe {
            libdeflate_zlib_decompress(
                d.0,
                chunk.as_ptr().cast(),
                chunk.len(),
                out.as_mut_ptr().cast(),
                n,
                &mut got,
            )
        };
        if r != libdeflate_result_LIBDEFLATE_SUCCESS || got > n {
            return false;
        }
        // SAFETY: on success libdeflate wrote the `got` decoded bytes from the start of the
        // buffer, and `got <= n <= capacity`.
        unsafe { out.set_len(got) };
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::default());
        let mut out = vec![0u8; c.zlib_compress_bound(data.len())];
        let k = c.zlib_compress(data, &mut out).unwrap();
        out.truncate(k);
        out
    }

    #[test]
    fn inflates_whole_streams_and_refuses_bad_or_larger_ones() {
        let data: Vec<u8> = (0..300_000u32)
            .map(|i| ((i % 251) ^ (i / 977)) as u8)
            .collect();
        let z = zlib(&data);
        // a buffer with old contents and another capacity: replaced by exactly the data
        let mut out = vec![7u8; 1000];
        assert!(zlib_into(&z, data.len(), &mut out));
        assert_eq!(out, data);
        // room for more than the stream holds: its own length
        assert!(zlib_into(&z, data.len() + 4096, &mut out));
        assert_eq!(out, data);
        // room for less, a truncated stream, a corrupt one, an empty one: refused, emptied
        for bad in [&z[..z.len() / 2], &z[2..], &[][..]] {
            let mut o = vec![1u8; 10];
            assert!(!zlib_into(bad, data.len(), &mut o));
            assert!(o.is_empty());
        }
        let mut o = Vec::new();
        assert!(!zlib_into(&z, data.len() - 1, &mut o));
        let mut flipped = z.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x55; // the Adler-32
        assert!(!zlib_into(&flipped, data.len(), &mut o));
        // every thread has its own decompressor
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (z, data) = (z.clone(), data.clone());
                std::thread::spawn(move || {
                    let mut o = Vec::new();
                    for _ in 0..20 {
                        assert!(zlib_into(&z, data.len(), &mut o));
                        assert!(o == data);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}
