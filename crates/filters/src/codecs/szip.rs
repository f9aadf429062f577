//! szip, HDF5 filter 4 (`H5Z_FILTER_SZIP`): visible parameters options mask and pixels per
//! block; HDF5's `set_local` adds bits per pixel and pixels per scanline, so the stored
//! (working) values are `mask, pixels_per_block, bits_per_pixel, pixels_per_scanline`.
//!
//! Chunk: the decoded size as 4 bytes little-endian, then a CCSDS 121.0 (adaptive Rice)
//! bitstream as szip / libaec's szip compatibility layer writes it: samples of
//! `bits_per_pixel` bits (32- and 64-bit pixels are byte-interleaved and coded as 8-bit
//! samples), each scanline coded as one reference sample interval padded to whole blocks,
//! the unit-delay predictor when the NN option (32) is set, 16-bit samples most significant
//! byte first when the MSB option (16) is set.
//!
//! Encoding and decoding, written from the CCSDS 121.0-B recommendation; the encoder is in
//! [`encode`]. Encoded chunks decode with HDF5's szip filter (libaec's libsz); the encoder is
//! not bit-identical to libaec (it picks each block's option by exact bit count).

use super::{corrupt, Cursor};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

mod encode;

const ID: u32 = 4;
const NAME: &str = "szip";

const RAW_OPTION_MASK: u32 = 128;
const ALLOW_K13_OPTION_MASK: u32 = 1;
const CHIP_OPTION_MASK: u32 = 2;
const NN_OPTION_MASK: u32 = 32;
const MSB_OPTION_MASK: u32 = 16;
const LSB_OPTION_MASK: u32 = 8;
/// szip's limit on blocks per scanline.
const MAX_BLOCKS_PER_SCANLINE: u64 = 128;
/// Zero-block "remainder of segment" code and segment length (CCSDS 121.0, 5.1.4).
const ROS: usize = 5;
const SEGMENT: usize = 64;

pub(crate) fn working(visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
    match visible {
        [mask, ppb] => {
            let bits = (ctx.type_size * 8) as u32;
            let ppb64 = u64::from(*ppb).max(1);
            let npoints: u64 = ctx.chunk_shape.iter().product();
            let mut scan = ctx.chunk_shape.last().copied().unwrap_or(1);
            if scan < ppb64 {
                scan = (ppb64 * MAX_BLOCKS_PER_SCANLINE).min(npoints);
            } else {
                scan = scan.min(ppb64 * MAX_BLOCKS_PER_SCANLINE);
            }
            let order = if cfg!(target_endian = "big") {
                MSB_OPTION_MASK
            } else {
                LSB_OPTION_MASK
            };
            // H5Pset_szip (which netCDF-C calls) always allows K13 and clears the chip option;
            // set_local then adds raw mode and the native bit order
            let mask = (*mask & !(MSB_OPTION_MASK | LSB_OPTION_MASK | CHIP_OPTION_MASK))
                | ALLOW_K13_OPTION_MASK
                | RAW_OPTION_MASK
                | order;
            vec![mask, *ppb, bits, u32::try_from(scan).unwrap_or(u32::MAX)]
        }
        v => v.to_vec(),
    }
}

pub(crate) struct Szip {
    /// The working parameters, for error messages.
    params: [u32; 4],
    mask: u32,
    ppb: usize,
    bpp: usize,
    pps: usize,
    limit: usize,
}

/// The configured filter for 4 working values; given only the 2 visible ones (an NCZarr
/// codec's mask and pixels per block) and a chunk shape, adds the other two as `set_local`
/// does (netCDF-C's NCZarr szip wrapper computes them the same way).
pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    let full;
    let params = match params {
        [_, _] if !ctx.chunk_shape.is_empty() => {
            full = working(params, ctx);
            &full[..]
        }
        _ => params,
    };
    let bad = |why: &str| super::bad_params(ID, NAME, params, why);
    let [mask, ppb, bpp, pps, ..] = *params else {
        return Err(bad(
            "needs 4 working values (mask, pixels per block, bits per pixel, pixels per scanline)",
        ));
    };
    if !(2..=64).contains(&ppb) || !ppb.is_multiple_of(2) {
        return Err(bad("pixels per block must be even, 2 to 64"));
    }
    if !matches!(bpp, 8 | 16 | 32 | 64) {
        return Err(bad("only 8, 16, 32 and 64 bits per pixel are supported"));
    }
    if pps == 0 {
        return Err(bad("pixels per scanline is 0"));
    }
    Ok(Box::new(Szip {
        params: [mask, ppb, bpp, pps],
        mask,
        ppb: ppb as usize,
        bpp: bpp as usize,
        pps: pps as usize,
        limit: ctx.max_decoded,
    }))
}

/// MSB-first bit reader.
struct Bits<'a> {
    buf: &'a [u8],
    pos: usize, // in bits
}

impl Bits<'_> {
    fn get(&mut self, n: usize) -> Option<u64> {
        let mut v = 0u64;
        for _ in 0..n {
            let byte = *self.buf.get(self.pos >> 3)?;
            let bit = (byte >> (7 - (self.pos & 7))) & 1;
            v = (v << 1) | u64::from(bit);
            self.pos += 1;
        }
        Some(v)
    }

    /// Fundamental sequence: the number of 0 bits before the next 1.
    fn fs(&mut self) -> Option<usize> {
        let mut n = 0;
        loop {
            let byte = *self.buf.get(self.pos >> 3)?;
            let bit = (byte >> (7 - (self.pos & 7))) & 1;
            self.pos += 1;
            if bit == 1 {
                return Some(n);
            }
            n += 1;
        }
    }
}

/// Decode `nsamples` samples of `n` bits in RSIs of `rsi` blocks of `j` samples.
fn decode_samples(
    data: &[u8],
    n: usize,
    j: usize,
    rsi: usize,
    nn: bool,
    nsamples: usize,
) -> Option<Vec<u64>> {
    let id_len = if n > 16 {
        5
    } else if n > 8 {
        4
    } else {
        3
    };
    let id_uncomp = (1u64 << id_len) - 1;
    let xmax: u64 = (1u64 << n) - 1;
    let mut r = Bits { buf: data, pos: 0 };
    let mut out: Vec<u64> = Vec::with_capacity(nsamples);
    // residuals of the current RSI are turned into samples as they come
    let mut last: u64 = 0;
    let put = |out: &mut Vec<u64>, v: u64, is_ref: bool, last: &mut u64| {
        let x = if !nn || is_ref {
            v
        } else {
            let pred = *last;
            let theta = pred.min(xmax - pred);
            if v <= 2 * theta {
                if v & 1 == 0 {
                    pred + v / 2
                } else {
                    pred.saturating_sub(v.div_ceil(2))
                }
            } else if theta == pred {
                v
            } else {
                xmax.saturating_sub(v)
            }
        };
        // a value past the sample range can only come from a corrupt stream: keep n bits
        let x = x & xmax;
        *last = x;
        out.push(x);
    };
    while out.len() < nsamples {
        // one RSI
        let mut b = 0;
        while b < rsi && out.len() < nsamples {
            let refb = nn && b == 0;
            let id = r.get(id_len)?;
            if id == 0 {
                let second_ext = r.get(1)? == 1;
                if refb {
                    let v = r.get(n)?;
                    put(&mut out, v, true, &mut last);
                }
                if second_ext {
                    let mut i = usize::from(refb);
                    while i < j {
                        let m = r.fs()?;
                        // m = beta * (beta + 1) / 2 + b2, with a + b2 = beta
                        let mut beta = 0usize;
                        while (beta + 1) * (beta + 2) / 2 <= m {
                            beta += 1;
                            if beta > 64 {
                                return None;
                            }
                        }
                        let b2 = (m - beta * (beta + 1) / 2) as u64;
                        let a = beta as u64 - b2;
                        if i & 1 == 0 {
                            put(&mut out, a, false, &mut last);
                            i += 1;
                        }
                        put(&mut out, b2, false, &mut last);
                        i += 1;
                    }
                    b += 1;
                } else {
                    let fs = r.fs()?;
                    let mut zb = fs + 1;
                    if zb == ROS {
                        zb = (rsi - b).min(SEGMENT - (b % SEGMENT));
                    } else if zb > ROS {
                        zb -= 1;
                    }
                    if zb == 0 || b + zb > rsi {
                        return None;
                    }
                    let count = zb * j - usize::from(refb);
                    for _ in 0..count {
                        put(&mut out, 0, false, &mut last);
                    }
                    b += zb;
                }
            } else if id == id_uncomp {
                for i in 0..j {
                    let v = r.get(n)?;
                    put(&mut out, v, refb && i == 0, &mut last);
                }
                b += 1;
            } else {
                let k = (id - 1) as usize;
                let start = if refb {
                    let v = r.get(n)?;
                    put(&mut out, v, true, &mut last);
                    1
                } else {
                    0
                };
                let mut fs = [0u64; 64];
                for f in fs.iter_mut().take(j).skip(start) {
                    *f = r.fs()? as u64;
                }
                for &f in fs.iter().take(j).skip(start) {
                    let low = if k > 0 { r.get(k)? } else { 0 };
                    let v = (f.checked_shl(k as u32)?) | low;
                    put(&mut out, v, false, &mut last);
                }
                b += 1;
            }
            if out.len() > nsamples + 64 * rsi {
                return None;
            }
        }
    }
    Some(out)
}

/// HDF5's largest pixels per block (`H5_SZIP_MAX_PIXELS_PER_BLOCK`).
const MAX_PIXELS_PER_BLOCK: usize = 32;
/// CCSDS 121.0's (and libaec's) largest reference sample interval, in blocks.
const MAX_RSI: usize = 4096;

impl Szip {
    fn bad(&self, reason: String) -> FilterError {
        super::bad_params(ID, NAME, &self.params, reason)
    }

    /// Encode one chunk: the 4-byte size, then the bitstream (see the module comment).
    fn encode_chunk(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        if self.ppb > MAX_PIXELS_PER_BLOCK {
            return Err(self.bad(format!(
                "pixels per block {} is above HDF5's limit of {MAX_PIXELS_PER_BLOCK}: use 2 to 32 (even)",
                self.ppb
            )));
        }
        let rsi = self.pps.div_ceil(self.ppb);
        if rsi > MAX_RSI {
            return Err(self.bad(format!(
                "pixels per scanline {} makes {rsi} blocks of {} pixels per scanline, more than the {MAX_RSI} blocks per reference sample interval CCSDS 121.0 allows",
                self.pps, self.ppb
            )));
        }
        let size = u32::try_from(chunk.len()).map_err(|_| {
            self.bad(format!(
                "a chunk of {} bytes is too large: szip's size field has 32 bits",
                chunk.len()
            ))
        })?;
        let interleave = self.bpp == 32 || self.bpp == 64;
        let n = if interleave { 8 } else { self.bpp };
        let sbytes = n / 8;
        if !chunk.len().is_multiple_of(sbytes) {
            return Err(self.bad(format!(
                "a chunk of {} bytes is not whole pixels of bits per pixel {}",
                chunk.len(),
                self.bpp
            )));
        }
        let mut shuffled = Vec::new();
        let bytes = if interleave {
            super::shuffle::shuffle_bytes(chunk, self.bpp / 8, &mut shuffled);
            &shuffled[..]
        } else {
            chunk
        };
        let nn = self.mask & NN_OPTION_MASK != 0;
        let msb = self.mask & MSB_OPTION_MASK != 0;
        let k13 = self.mask & ALLOW_K13_OPTION_MASK != 0;
        let coder = encode::Coder::new(n as u32, self.ppb, rsi, nn, k13);
        let mut w = encode::BitWriter::with_capacity(chunk.len() / 2 + 16);
        let mut line: Vec<u32> = Vec::with_capacity(coder.rsi_samples());
        let mut scratch = Vec::with_capacity(coder.rsi_samples());
        // each scanline of `pps` pixels is one RSI, padded to whole blocks with its last
        // pixel (the predictor then codes zeros) or with 0 (without the predictor)
        for raw in bytes.chunks(self.pps * sbytes) {
            line.clear();
            match (sbytes, msb) {
                (1, _) => line.extend(raw.iter().map(|&b| u32::from(b))),
                (_, true) => line.extend(
                    raw.chunks_exact(2)
                        .map(|p| u32::from(u16::from_be_bytes([p[0], p[1]]))),
                ),
                (_, false) => line.extend(
                    raw.chunks_exact(2)
                        .map(|p| u32::from(u16::from_le_bytes([p[0], p[1]]))),
                ),
            }
            let pad = if nn {
                line.last().copied().unwrap_or(0)
            } else {
                0
            };
            line.resize(coder.rsi_samples(), pad);
            coder.encode_rsi(&line, &mut scratch, &mut w);
        }
        out.clear();
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&w.finish());
        Ok(())
    }
}

impl Filter for Szip {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.encode_chunk(chunk, out)
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let mut cur = Cursor::new(chunk, ID, NAME);
        let h = cur.take(4)?;
        let size = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        if size > self.limit {
            return Err(FilterError::TooLarge {
                id: ID,
                name: NAME,
                claimed: size as u64,
                limit: self.limit,
            });
        }
        let interleave = self.bpp == 32 || self.bpp == 64;
        let n = if interleave { 8 } else { self.bpp };
        let sbytes = n / 8;
        if !size.is_multiple_of(sbytes) {
            return Err(corrupt(
                ID,
                NAME,
                format!("size {size} is not whole {n}-bit samples"),
            ));
        }
        let nsamples = size / sbytes;
        let rsi = self.pps.div_ceil(self.ppb);
        let padded_line = rsi * self.ppb;
        let lines = nsamples.div_ceil(self.pps);
        // each sample needs at least one bit, except in zero blocks (bounded by 64 blocks
        // per bit of fundamental sequence): refuse sizes the stream cannot hold
        let total = lines
            .checked_mul(padded_line)
            .filter(|&t| t / 4096 <= chunk.len().saturating_mul(8))
            .ok_or_else(|| {
                corrupt(
                    ID,
                    NAME,
                    format!("{size} bytes cannot come from {} bytes", chunk.len()),
                )
            })?;
        let nn = self.mask & NN_OPTION_MASK != 0;
        let samples = decode_samples(&chunk[4..], n, self.ppb, rsi, nn, total)
            .ok_or_else(|| corrupt(ID, NAME, "bitstream ends early or holds an invalid code"))?;
        let msb = self.mask & MSB_OPTION_MASK != 0;
        let mut bytes = Vec::with_capacity(size);
        for line in samples.chunks(padded_line) {
            for &s in line.iter().take(self.pps) {
                if bytes.len() >= size {
                    break;
                }
                match (sbytes, msb) {
                    (1, _) => bytes.push(s as u8),
                    (_, true) => bytes.extend_from_slice(&(s as u16).to_be_bytes()),
                    (_, false) => bytes.extend_from_slice(&(s as u16).to_le_bytes()),
                }
            }
        }
        if bytes.len() != size {
            return Err(FilterError::Length {
                id: ID,
                name: NAME,
                expected: size,
                got: bytes.len(),
            });
        }
        if interleave {
            super::shuffle::unshuffle_bytes(&bytes, self.bpp / 8, out);
        } else {
            *out = bytes;
        }
        Ok(())
    }
}
