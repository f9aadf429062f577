//! Shuffle, HDF5 filter 2: working parameter 0 is the element size (HDF5's `set_local` fills
//! it from the type; `_Filter` shows `2,4` for floats). Byte `j` of element `i` goes to
//! `j * n + i`; trailing bytes that do not make a whole element are copied unchanged.

use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

const ID: u32 = 2;
const NAME: &str = "shuffle";

pub(crate) fn working(visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
    match visible {
        [] | [0] => vec![u32::try_from(ctx.type_size).unwrap_or(u32::MAX)],
        v => v.to_vec(),
    }
}

pub(crate) struct Shuffle {
    size: usize,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let size = match params.first() {
        Some(&s) if s > 0 => s as usize,
        _ => ctx.type_size,
    };
    Ok(Box::new(Shuffle { size }))
}

/// HDF5's shuffle of `src` with elements of `size` bytes.
pub fn shuffle_bytes(src: &[u8], size: usize, out: &mut Vec<u8>) {
    transpose(src, size, out, false);
}

/// The inverse of [`shuffle_bytes`].
pub fn unshuffle_bytes(src: &[u8], size: usize, out: &mut Vec<u8>) {
    transpose(src, size, out, true);
}

/// Elements moved per step of the specialised loops: whole 32-byte lanes of every plane.
const BLOCK: usize = 32;

/// Shuffle (`reverse == false`) or unshuffle `src` into `out`. The planes are `n` bytes each;
/// bytes after the last whole element are copied unchanged.
fn transpose(src: &[u8], size: usize, out: &mut Vec<u8>, reverse: bool) {
    out.clear();
    let n = if size > 1 { src.len() / size } else { 0 };
    if n <= 1 {
        out.extend_from_slice(src);
        return;
    }
    out.resize(src.len(), 0);
    let body = n * size;
    let (head, tail) = out.split_at_mut(body);
    tail.copy_from_slice(&src[body..]);
    let src = &src[..body];
    match (size, reverse) {
        (2, false) => shuffle_fixed::<2>(src, head),
        (4, false) => shuffle_fixed::<4>(src, head),
        (8, false) => shuffle_fixed::<8>(src, head),
        (2, true) => unshuffle_fixed::<2>(src, head),
        (4, true) => unshuffle4(src, head),
        (8, true) => unshuffle_fixed::<8>(src, head),
        (_, false) => {
            for (j, plane) in head.chunks_exact_mut(n).enumerate() {
                for (o, e) in plane.iter_mut().zip(src.chunks_exact(size)) {
                    *o = e[j];
                }
            }
        }
        (_, true) => {
            for (j, plane) in src.chunks_exact(n).enumerate() {
                for (e, b) in head.chunks_exact_mut(size).zip(plane) {
                    e[j] = *b;
                }
            }
        }
    }
}

/// Interleaved elements of `S` bytes (`src`) to `S` planes (`dst`), both `n * S` bytes. Whole
/// blocks go through fixed-size arrays, which the compiler turns into vector shuffles.
fn shuffle_fixed<const S: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / S;
    let whole = n - n % BLOCK;
    let (elems, _) = src.as_chunks::<S>();
    let (blocks, _) = elems[..whole].as_chunks::<BLOCK>();
    for (b, block) in blocks.iter().enumerate() {
        let i = b * BLOCK;
        let mut lanes = [[0u8; BLOCK]; S];
        for k in 0..BLOCK {
            for j in 0..S {
                lanes[j][k] = block[k][j];
            }
        }
        for (j, lane) in lanes.iter().enumerate() {
            dst[j * n + i..j * n + i + BLOCK].copy_from_slice(lane);
        }
    }
    for i in whole..n {
        for j in 0..S {
            dst[j * n + i] = src[i * S + j];
        }
    }
}

/// Unshuffle of 4-byte elements (float, int): the commonest case, with SSE2 on x86-64.
fn unshuffle4(src: &[u8], dst: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        let n = src.len() / 4;
        let whole = simd::unshuffle4_sse2(src, dst);
        for i in whole..n {
            for j in 0..4 {
                dst[i * 4 + j] = src[j * n + i];
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    unshuffle_fixed::<4>(src, dst);
}

#[cfg(target_arch = "x86_64")]
mod simd {
    #![allow(unsafe_code)]
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_storeu_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi8,
        _mm_unpacklo_epi16, _mm_unpacklo_epi8,
    };

    /// The 4-plane unshuffle of the largest multiple of 16 elements, 16 elements per step by
    /// two rounds of byte and word unpacks; returns how many elements it did (the caller does
    /// the rest).
    pub(super) fn unshuffle4_sse2(src: &[u8], dst: &mut [u8]) -> usize {
        let n = src.len() / 4;
        if dst.len() < 4 * n {
            return 0;
        }
        let whole = n - n % 16;
        let (p0, rest) = src.split_at(n);
        let (p1, rest) = rest.split_at(n);
        let (p2, p3) = rest.split_at(n);
        for i in (0..whole).step_by(16) {
            // SAFETY: SSE2 is part of x86-64. Every load reads 16 bytes at `i` of a plane of
            // `n >= whole >= i + 16` bytes; the four stores write 64 bytes at `4 * i` of `dst`,
            // which holds at least `4 * n >= 4 * (i + 16)` bytes (checked above). Unaligned loads and
            // stores have no alignment requirement.
            unsafe {
                let a = _mm_loadu_si128(p0.as_ptr().add(i).cast::<__m128i>());
                let b = _mm_loadu_si128(p1.as_ptr().add(i).cast::<__m128i>());
                let c = _mm_loadu_si128(p2.as_ptr().add(i).cast::<__m128i>());
                let d = _mm_loadu_si128(p3[..n].as_ptr().add(i).cast::<__m128i>());
                let ab_lo = _mm_unpacklo_epi8(a, b);
                let ab_hi = _mm_unpackhi_epi8(a, b);
                let cd_lo = _mm_unpacklo_epi8(c, d);
                let cd_hi = _mm_unpackhi_epi8(c, d);
                let out = dst.as_mut_ptr().add(4 * i).cast::<__m128i>();
                _mm_storeu_si128(out, _mm_unpacklo_epi16(ab_lo, cd_lo));
                _mm_storeu_si128(out.add(1), _mm_unpackhi_epi16(ab_lo, cd_lo));
                _mm_storeu_si128(out.add(2), _mm_unpacklo_epi16(ab_hi, cd_hi));
                _mm_storeu_si128(out.add(3), _mm_unpackhi_epi16(ab_hi, cd_hi));
            }
        }
        whole
    }
}

/// `S` planes (`src`) back to interleaved elements of `S` bytes (`dst`).
fn unshuffle_fixed<const S: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / S;
    let whole = n - n % BLOCK;
    let (elems, _) = dst.as_chunks_mut::<S>();
    let (blocks, _) = elems[..whole].as_chunks_mut::<BLOCK>();
    for (b, block) in blocks.iter_mut().enumerate() {
        let i = b * BLOCK;
        let mut lanes = [[0u8; BLOCK]; S];
        for (j, lane) in lanes.iter_mut().enumerate() {
            lane.copy_from_slice(&src[j * n + i..j * n + i + BLOCK]);
        }
        for k in 0..BLOCK {
            for j in 0..S {
                block[k][j] = lanes[j][k];
            }
        }
    }
    for i in whole..n {
        for j in 0..S {
            dst[i * S + j] = src[j * n + i];
        }
    }
}

impl Filter for Shuffle {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        shuffle_bytes(chunk, self.size, out);
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        unshuffle_bytes(chunk, self.size, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{shuffle_bytes, unshuffle_bytes};

    /// The definition: byte `j` of element `i` goes to `j * n + i`, the tail stays.
    fn naive(src: &[u8], size: usize) -> Vec<u8> {
        let mut out = src.to_vec();
        let n = src.len() / size.max(1);
        if size > 1 && n > 1 {
            for j in 0..size {
                for i in 0..n {
                    out[j * n + i] = src[i * size + j];
                }
            }
        }
        out
    }

    #[test]
    fn specialised_loops_match_the_definition() {
        let mut seed = 0x9E37_79B9_u32;
        for size in 1..=9 {
            for len in [
                0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130, 257, 1000,
            ] {
                let src: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 17;
                        seed ^= seed << 5;
                        seed as u8
                    })
                    .collect();
                let mut out = Vec::new();
                shuffle_bytes(&src, size, &mut out);
                assert_eq!(out, naive(&src, size), "shuffle size {size} len {len}");
                let mut back = Vec::new();
                unshuffle_bytes(&out, size, &mut back);
                assert_eq!(back, src, "unshuffle size {size} len {len}");
            }
        }
    }
}
