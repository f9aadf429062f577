//! bzip2, HDF5 filter 307 (registered "BZIP2"): one optional parameter, the block size
//! 1-9 (x100k, default 9); the chunk is one bzip2 stream, as `BZ2_bzBuffToBuffCompress` writes.

use super::{bad_params, read_limited};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};
use std::io::Write;

const ID: u32 = 307;
const NAME: &str = "bzip2";

pub(crate) struct Bzip2 {
    level: u32,
    limit: usize,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let level = match params {
        [] => 9,
        [l, ..] if (1..=9).contains(l) => *l,
        _ => {
            return Err(bad_params(
                ID,
                NAME,
                params,
                "the block size must be 1 to 9",
            ))
        }
    };
    Ok(Box::new(Bzip2 {
        level,
        limit: ctx.max_decoded,
    }))
}

impl Filter for Bzip2 {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        let mut e =
            bzip2::write::BzEncoder::new(std::mem::take(out), bzip2::Compression::new(self.level));
        e.write_all(chunk)
            .map_err(|err| super::corrupt(ID, NAME, err))?;
        *out = e.finish().map_err(|err| super::corrupt(ID, NAME, err))?;
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        // HDF5's filter decodes one stream (no concatenated streams).
        read_limited(
            bzip2::read::BzDecoder::new(chunk),
            out,
            self.limit,
            ID,
            NAME,
        )
    }
}
