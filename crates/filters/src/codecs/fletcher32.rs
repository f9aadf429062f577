//! Fletcher32, HDF5 filter 3: no parameters. Encode appends HDF5's Fletcher-32 checksum of the
//! data (16-bit big-endian words, an odd last byte as a high byte) as 4 little-endian bytes;
//! decode checks and strips it. Checksums written byte-swapped by HDF5 before 1.6.3 (each
//! 16-bit half swapped) are accepted, as HDF5 does.

use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

const ID: u32 = 3;
const NAME: &str = "fletcher32";

/// HDF5's Fletcher-32 checksum of `data`.
pub fn fletcher32(data: &[u8]) -> u32 {
    let mut sum1: u32 = 0;
    let mut sum2: u32 = 0;
    // 360 words keep the sums below 2^32 before each reduction (HDF5 does the same).
    for block in data.chunks(720) {
        let mut words = block.chunks_exact(2);
        for w in &mut words {
            sum1 = sum1.wrapping_add((u32::from(w[0]) << 8) | u32::from(w[1]));
            sum2 = sum2.wrapping_add(sum1);
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        if let [last] = words.remainder() {
            sum1 = sum1.wrapping_add(u32::from(*last) << 8);
            sum2 = sum2.wrapping_add(sum1);
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

pub(crate) struct Fletcher32;

pub(crate) fn build(_params: &[u32], _ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    Ok(Box::new(Fletcher32))
}

impl Filter for Fletcher32 {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        super::with_sum(chunk, fletcher32(chunk), false, out);
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let Some((data, stored)) = super::split_sum(chunk, false) else {
            return Err(FilterError::Truncated {
                id: ID,
                name: NAME,
                needed: 4,
                at: 0,
                len: chunk.len(),
            });
        };
        let computed = fletcher32(data);
        let c = computed.to_le_bytes();
        let reversed = u32::from_le_bytes([c[1], c[0], c[3], c[2]]);
        if stored != computed && stored != reversed {
            return Err(FilterError::Checksum {
                id: ID,
                name: NAME,
                stored,
                computed,
            });
        }
        out.clear();
        out.extend_from_slice(data);
        Ok(())
    }
}
