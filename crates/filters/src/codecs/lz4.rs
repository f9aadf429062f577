//! LZ4, HDF5 filter 32004: one optional parameter, the block size in bytes (default 1 GiB,
//! capped at the chunk size). Framing of the HDF5 lz4 filter: the original size as 8 bytes
//! big-endian, the block size as 4 bytes big-endian, then per block a 4-byte big-endian
//! compressed size and the LZ4 block; a block whose compressed size equals its original size
//! is stored uncompressed.

use super::{bad_params, corrupt, Cursor};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

const ID: u32 = 32004;
const NAME: &str = "lz4";
const DEFAULT_BLOCK: usize = 1 << 30;

pub(crate) struct Lz4 {
    block: usize,
    limit: usize,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let block = match params {
        [] | [0, ..] => DEFAULT_BLOCK,
        [b, ..] if (*b as usize) <= DEFAULT_BLOCK * 2 => *b as usize,
        _ => return Err(bad_params(ID, NAME, params, "block size above 2 GiB")),
    };
    Ok(Box::new(Lz4 {
        block,
        limit: ctx.max_decoded,
    }))
}

impl Filter for Lz4 {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        let block = self.block.min(chunk.len()).max(1);
        let block32 = u32::try_from(block).map_err(|_| corrupt(ID, NAME, "block too large"))?;
        out.extend_from_slice(&(chunk.len() as u64).to_be_bytes());
        out.extend_from_slice(&block32.to_be_bytes());
        for piece in chunk.chunks(block) {
            // Compress straight into the output after a size slot. A compressed size equal to
            // the block's marks a block stored as it is, so only that case (and an empty
            // result) is stored raw; a block that grows under lz4 stays compressed (HDF5's lz4
            // filter decodes every other size as lz4), which saves copying incompressible data.
            let slot = out.len();
            let bound = lz4_flex::block::get_maximum_output_size(piece.len());
            out.resize(slot + 4 + bound, 0);
            let n = lz4_flex::block::compress_into(piece, &mut out[slot + 4..])
                .map_err(|e| corrupt(ID, NAME, e))?;
            if n == 0 || n == piece.len() {
                out.truncate(slot);
                out.extend_from_slice(&(piece.len() as u32).to_be_bytes());
                out.extend_from_slice(piece);
            } else {
                let n32 = u32::try_from(n).map_err(|_| corrupt(ID, NAME, "block too large"))?;
                out.truncate(slot + 4 + n);
                out[slot..slot + 4].copy_from_slice(&n32.to_be_bytes());
            }
        }
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let mut cur = Cursor::new(chunk, ID, NAME);
        let orig = cur.u64_be()?;
        let block = cur.u32_be()? as usize;
        let orig_us = usize::try_from(orig)
            .ok()
            .filter(|&o| o <= self.limit)
            .ok_or(FilterError::TooLarge {
                id: ID,
                name: NAME,
                claimed: orig,
                limit: self.limit,
            })?;
        if block == 0 && orig_us > 0 {
            return Err(corrupt(ID, NAME, "block size 0"));
        }
        out.clear();
        // never reserve from the header alone: lz4 expands at most ~255x
        out.reserve(orig_us.min(chunk.len().saturating_mul(256)));
        while out.len() < orig_us {
            let want = block.min(orig_us - out.len());
            let at = cur.pos();
            let csize = cur.u32_be()? as usize;
            let data = cur.take(csize)?;
            if csize == want {
                out.extend_from_slice(data);
            } else {
                // an LZ4 block expands at most 255 times (+ a few bytes)
                if want > csize.saturating_mul(255).saturating_add(64) {
                    return Err(corrupt(
                        ID,
                        NAME,
                        format!("block at byte {at}: {csize} bytes cannot hold {want}"),
                    ));
                }
                let start = out.len();
                out.resize(start + want, 0);
                let n = lz4_flex::block::decompress_into(data, &mut out[start..])
                    .map_err(|e| corrupt(ID, NAME, format!("block at byte {at}: {e}")))?;
                if n != want {
                    return Err(FilterError::Length {
                        id: ID,
                        name: NAME,
                        expected: want,
                        got: n,
                    });
                }
            }
        }
        if cur.remaining() != 0 {
            return Err(corrupt(
                ID,
                NAME,
                format!("{} bytes after the last block", cur.remaining()),
            ));
        }
        Ok(())
    }
}
