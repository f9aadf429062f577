//! Deflate, HDF5 filter 1 (`H5Z_FILTER_DEFLATE`): one parameter, the zlib level 0-9; the chunk
//! is a zlib stream (RFC 1950 header, deflate data, Adler-32), as zlib's `compress2` writes.

use super::{bad_params, read_limited};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};
use std::io::Write;

const ID: u32 = 1;
const NAME: &str = "deflate";

pub(crate) struct Deflate {
    level: u32,
    limit: usize,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let level = match params {
        [] => 6,
        [l, ..] if *l <= 9 => *l,
        _ => return Err(bad_params(ID, NAME, params, "the level must be 0 to 9")),
    };
    Ok(Box::new(Deflate {
        level,
        limit: ctx.max_decoded,
    }))
}

impl Filter for Deflate {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        let mut e = flate2::write::ZlibEncoder::new(
            std::mem::take(out),
            flate2::Compression::new(self.level),
        );
        e.write_all(chunk)
            .map_err(|err| super::corrupt(ID, NAME, err))?;
        *out = e.finish().map_err(|err| super::corrupt(ID, NAME, err))?;
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        read_limited(
            flate2::read::ZlibDecoder::new(chunk),
            out,
            self.limit,
            ID,
            NAME,
        )
    }
}
