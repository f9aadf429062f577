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
    out.clear();
    out.extend_from_slice(src);
    let n = if size > 1 { src.len() / size } else { 0 };
    if n <= 1 {
        return;
    }
    for j in 0..size {
        for i in 0..n {
            out[j * n + i] = src[i * size + j];
        }
    }
}

/// The inverse of [`shuffle_bytes`].
pub fn unshuffle_bytes(src: &[u8], size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(src);
    let n = if size > 1 { src.len() / size } else { 0 };
    if n <= 1 {
        return;
    }
    for j in 0..size {
        for i in 0..n {
            out[i * size + j] = src[j * n + i];
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
