//! Deflate, HDF5 filter 1 (`H5Z_FILTER_DEFLATE`): one parameter, the zlib level 0-9; the chunk
//! is a zlib stream (RFC 1950 header, deflate data, Adler-32), as zlib's `compress2` writes.
//! Encoding goes through libdeflate at the level that matches zlib's output size for the
//! level asked for (see `zlib_levels.rs`). Decoding a chunk whose decoded size is known goes
//! through libdeflate in one call (about 1.4x zlib-rs's inflate on shuffled floats); any other
//! chunk, or one libdeflate refuses, through zlib-rs, whose errors are the ones reported.

use super::bad_params;
use super::zlib_levels::{self, Framing};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext, FilterId};
use flate2::{Decompress, FlushDecompress, Status};

const ID: u32 = 1;
const NAME: &str = "deflate";

pub(crate) struct Deflate {
    level: u32,
    /// A byte shuffle runs before this filter (see [`Filter::after`]).
    shuffled: bool,
    limit: usize,
    /// Decoded size of a full chunk, when known: the output buffer is sized once.
    hint: Option<usize>,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let level = match params {
        [] => 6,
        [l, ..] if *l <= 9 => *l,
        _ => return Err(bad_params(ID, NAME, params, "the level must be 0 to 9")),
    };
    Ok(Box::new(Deflate {
        level,
        shuffled: false,
        limit: ctx.max_decoded,
        hint: ctx.chunk_bytes(),
    }))
}

impl Filter for Deflate {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn after(&mut self, earlier: &[FilterId]) {
        self.shuffled = earlier.contains(&super::SHUFFLE_ID);
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        zlib_levels::compress(chunk, self.level, self.shuffled, Framing::Zlib, out)
            .map_err(|err| super::corrupt(ID, NAME, err))
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        // the buffer is allocated first: only for chunks whose stored bytes could fill it
        // (deflate expands at most 1032:1) and of a size a copy holds anyway
        let fits = |n: usize| {
            n > 0 && n <= self.limit && n <= WHOLE_MAX && n <= chunk.len().saturating_mul(1032)
        };
        if let Some(n) = self.hint.filter(|&n| fits(n)) {
            if whole(chunk, n, out) {
                return Ok(());
            }
        }
        out.clear();
        let first = self
            .hint
            .unwrap_or(chunk.len().saturating_mul(4))
            .min(self.limit);
        out.reserve(first.max(64));
        let mut z = Decompress::new(true);
        loop {
            let (was_in, was_out) = (z.total_in(), z.total_out());
            let status = z
                .decompress_vec(&chunk[was_in as usize..], out, FlushDecompress::Finish)
                .map_err(|err| super::corrupt(ID, NAME, err))?;
            if out.len() > self.limit {
                return Err(FilterError::TooLarge {
                    id: ID,
                    name: NAME,
                    claimed: out.len() as u64,
                    limit: self.limit,
                });
            }
            if status == Status::StreamEnd {
                return Ok(());
            }
            if out.len() == out.capacity() {
                out.reserve(out.capacity().min(self.limit + 1 - out.len()).max(64));
            } else if z.total_in() == was_in && z.total_out() == was_out {
                return Err(super::corrupt(
                    ID,
                    NAME,
                    "the zlib stream ends before its end marker (truncated chunk)",
                ));
            }
        }
    }
}

/// The largest decoded chunk inflated in one call (larger ones grow as they inflate).
const WHOLE_MAX: usize = 64 << 20;

/// Inflate `chunk` into `out` with libdeflate when it decodes to at most `n` bytes: false
/// (and `out` left to the caller) when it does not, or is not a sound zlib stream.
fn whole(chunk: &[u8], n: usize, out: &mut Vec<u8>) -> bool {
    super::inflate::zlib_into(chunk, n, out)
}
