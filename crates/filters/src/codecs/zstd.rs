//! Zstandard, HDF5 filter 32015: one optional parameter, the level (a signed value stored as
//! u32; default 3 here); the chunk is one zstd frame with its content size, as `ZSTD_compress`
//! writes.

use std::cell::RefCell;

use super::read_limited;
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

const ID: u32 = 32015;
const NAME: &str = "zstd";

pub(crate) struct Zstd {
    level: i32,
    limit: usize,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let level = match params {
        [] => 3,
        [l, ..] => (*l as i32).clamp(-131072, 22),
    };
    Ok(Box::new(Zstd {
        level,
        limit: ctx.max_decoded,
    }))
}

impl Filter for Zstd {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        // one compression context per thread and level: creating one costs more than a
        // small chunk's compression
        thread_local! {
            static CCTX: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
                const { RefCell::new(None) };
        }
        CCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.as_ref().is_none_or(|(l, _)| *l != self.level) {
                let c = zstd::bulk::Compressor::new(self.level)
                    .map_err(|e| super::corrupt(ID, NAME, e))?;
                *slot = Some((self.level, c));
            }
            let Some((_, c)) = slot.as_mut() else {
                return Err(super::corrupt(ID, NAME, "no compression context"));
            };
            out.clear();
            out.reserve(zstd::zstd_safe::compress_bound(chunk.len()));
            c.compress_to_buffer(chunk, out)
                .map_err(|e| super::corrupt(ID, NAME, e))?;
            Ok(())
        })
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        // one frame with its content size (what ZSTD_compress writes): decode in one call
        if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(chunk) {
            if size > self.limit as u64 {
                return Err(FilterError::TooLarge {
                    id: ID,
                    name: NAME,
                    claimed: size,
                    limit: self.limit,
                });
            }
            // zstd expands at most ~32000x per input byte, never trust the header alone
            if size <= (chunk.len() as u64).saturating_mul(32768) {
                if let Ok(v) = zstd::bulk::decompress(chunk, size as usize) {
                    if v.len() as u64 == size {
                        *out = v;
                        return Ok(());
                    }
                }
            }
        }
        let d = zstd::stream::read::Decoder::with_buffer(chunk)
            .map_err(|e| super::corrupt(ID, NAME, e))?;
        read_limited(d.single_frame(), out, self.limit, ID, NAME)
    }
}
