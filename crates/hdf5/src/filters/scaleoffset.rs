//! HDF5's scale-offset filter (id 6), write side: the 20 parameters libhdf5's `set_local`
//! stores, and the encoder, bit for bit libhdf5's (`H5Zscaleoffset.c`; decoding is
//! hdf5-reader's).
//!
//! Parameters: scale type (0 floats by decimal scaling, 2 integers; 1, fixed bits for floats,
//! libhdf5 refuses), scale factor (decimal digits for floats; for integers the bits to keep,
//! 0 = as few as the chunk needs), elements in a chunk, class (0 integer, 1 float), size,
//! sign (1 two's complement), byte order (0 LE, 1 BE), fill value defined (1), then the fill
//! value's little-endian bytes, four to a parameter.
//!
//! A chunk is a 21-byte header (the bit count `minbits`, 4 bytes LE; the byte 8; the minimum,
//! 8 bytes LE: an integer's sign-extended, a float's own bits; 8 zero bytes), then each value
//! less the minimum in `minbits` bits, most significant first, the fill value (when defined)
//! as all ones; the bytes begun, plus one. Floats are scaled first: `round(x * 10^D - min *
//! 10^D)` in the float's own precision. `minbits` = 0 (every value the same, no fill value):
//! one zero byte after the header. `minbits` = all the bits: the header and the values as they
//! are. A chunk of big-endian values is byte-swapped first (libhdf5 works in its memory's
//! order, little-endian here, and stores full-precision chunks that way).

use crate::format::datatype::Datatype;

/// Parameters libhdf5 stores (`H5Z_SCALEOFFSET_TOTAL_NPARMS`).
const NPARAMS: usize = 20;
/// Scale types.
const DSCALE: u32 = 0;
const ESCALE: u32 = 1;
const SO_INT: u32 = 2;
/// Header bytes before the packed values.
const HEADER: usize = 21;

/// The parameters libhdf5's `set_local` stores for a dataset of type `dt` whose chunks hold
/// `chunk_elems` elements: the user's scale type and factor (`user`, missing ones 0), and the
/// fill value `fill` (little-endian bytes of one element; `None`: netCDF-C's "no fill", where
/// libhdf5's default fill value, zero, counts as defined).
///
/// # Errors
/// A message when the type is not an integer or float, or a chunk holds more than 2^32 - 1
/// elements.
pub(crate) fn params_for(
    dt: &Datatype,
    chunk_elems: u64,
    user: &[u32],
    fill: Option<&[u8]>,
) -> Result<Vec<u32>, String> {
    let (class, size, sign, big) = match dt {
        Datatype::Int { size, signed, big } => (0, *size, u32::from(*signed), *big),
        Datatype::Float { size, big } => (1, *size, 0, *big),
        _ => return Err("scaleoffset applies to integer and floating-point types only".into()),
    };
    if !matches!(size, 1 | 2 | 4 | 8) {
        return Err(format!("scaleoffset has no {size}-byte type"));
    }
    let elems = u32::try_from(chunk_elems)
        .map_err(|_| format!("a chunk of {chunk_elems} elements is too large for scaleoffset"))?;
    let mut p = vec![0u32; NPARAMS];
    p[0] = user.first().copied().unwrap_or(0);
    p[1] = user.get(1).copied().unwrap_or(0);
    p[2] = elems;
    p[3] = class;
    p[4] = size;
    p[5] = sign;
    p[6] = u32::from(big);
    p[7] = 1;
    if let Some(f) = fill {
        if f.len() != size as usize {
            return Err(format!(
                "fill value of {} bytes for a {size}-byte type",
                f.len()
            ));
        }
        for (k, word) in f.chunks(4).enumerate() {
            let mut b = [0u8; 4];
            b[..word.len()].copy_from_slice(word);
            p[8 + k] = u32::from_le_bytes(b);
        }
    }
    Ok(p)
}

/// The fill value in the parameters, as the low bytes of a u64 (little-endian).
fn fill_bits(cd: &[u32], size: usize) -> u64 {
    let raw = u64::from(cd[8]) | (u64::from(cd[9]) << 32);
    if size == 8 {
        raw
    } else {
        raw & ((1u64 << (size * 8)) - 1)
    }
}

/// `H5Z__scaleoffset_log2`: the ceiling of log2(n) (0 for 0 and 1).
fn log2_ceil(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// What precompression leaves: the bits per value, the minimum, and the values to pack
/// (`None` when stored as they are).
struct Pre {
    minbits: u32,
    minval: u64,
    codes: Option<Vec<u64>>,
}

/// Encode one chunk with the stored parameters `cd` (as [`params_for`] or libhdf5 made them).
///
/// # Errors
/// A message when the parameters are malformed or refused by libhdf5 (E-scaling, a bit count
/// past the type), or the chunk is not `elements x size` bytes.
pub(crate) fn encode(chunk: &[u8], cd: &[u32]) -> Result<Vec<u8>, String> {
    if cd.len() != NPARAMS {
        return Err(format!("{} parameters, expected {NPARAMS}", cd.len()));
    }
    let (scale_type, n, class, size, sign, order, filavail) = (
        cd[0],
        cd[2] as usize,
        cd[3],
        cd[4] as usize,
        cd[5],
        cd[6],
        cd[7],
    );
    let mut factor = cd[1] as i32;
    if !matches!(size, 1 | 2 | 4 | 8) || (class == 1 && !matches!(size, 4 | 8)) || class > 1 {
        return Err(format!(
            "class {class} of {size} bytes, not an integer or float"
        ));
    }
    if class == 1 && scale_type != DSCALE && scale_type != ESCALE {
        return Err(format!("scale type {scale_type} for a float"));
    }
    if class == 0 {
        if scale_type != SO_INT {
            return Err(format!(
                "scale type {scale_type} for an integer (expected 2)"
            ));
        }
        factor = factor.max(0);
    }
    if scale_type == ESCALE {
        return Err("E-scaling (scale type 1) is not implemented by libhdf5".into());
    }
    let mut minbits = 0;
    if scale_type != DSCALE {
        let full = size as i32 * 8;
        if factor > full {
            return Err(format!("{factor} bits for a {size}-byte type"));
        }
        if factor == full {
            return Ok(chunk.to_vec());
        }
        minbits = factor as u32;
    }
    if n.checked_mul(size) != Some(chunk.len()) {
        return Err(format!(
            "chunk of {} bytes, expected {n} elements of {size} bytes",
            chunk.len()
        ));
    }
    // values in memory order (little-endian), as libhdf5 converts them first
    let le: Vec<u8> = if order == 1 {
        chunk
            .chunks(size)
            .flat_map(|c| c.iter().rev().copied())
            .collect()
    } else {
        chunk.to_vec()
    };
    let vals: Vec<u64> = le
        .chunks(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect();
    let fill = (filavail == 1).then(|| fill_bits(cd, size));
    let pre = if class == 0 {
        integers(&vals, size, sign == 1, fill, minbits)
    } else if size == 4 {
        floats32(&vals, fill.map(|f| f32::from_bits(f as u32)), factor)
    } else {
        floats64(&vals, fill.map(f64::from_bits), factor)
    };
    let mut out = Vec::with_capacity(HEADER + chunk.len() + 1);
    out.extend(pre.minbits.to_le_bytes());
    out.push(8);
    out.extend(pre.minval.to_le_bytes());
    out.extend([0u8; 8]);
    let Some(codes) = pre.codes.filter(|_| pre.minbits != size as u32 * 8) else {
        // all the bits: the values as they are, in memory order
        out.extend(&le);
        return Ok(out);
    };
    let packed = n * size * pre.minbits as usize / (size * 8) + 1;
    if pre.minbits == 0 {
        out.resize(HEADER + packed, 0);
        return Ok(out);
    }
    let mut w = nc_filters::bits::BitWriter::with_capacity(packed);
    for c in codes {
        w.put_u64(c, pre.minbits);
    }
    let mut bits = super::nbit::finish_plus_one(w);
    bits.resize(packed, 0);
    out.extend(bits);
    Ok(out)
}

/// Sign-extend the low `size` bytes of `v`.
fn signed(v: u64, size: usize) -> i64 {
    let shift = 64 - size as u32 * 8;
    ((v << shift) as i64) >> shift
}

/// Integer precompression (`H5Z_scaleoffset_precompress_1/2` and the signed char case): the
/// arithmetic wraps at the type's width, as C's does on it.
fn integers(vals: &[u64], size: usize, is_signed: bool, fill: Option<u64>, given: u32) -> Pre {
    let bits = size as u32 * 8;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    // compare as the C type compares
    let key = |v: u64| -> i128 {
        if is_signed {
            i128::from(signed(v, size))
        } else {
            i128::from(v)
        }
    };
    // max and min, leaving out the fill value (all fill: both 0; without a fill value, max
    // and min of all)
    let (min, max) = min_max(vals.iter().copied().filter(|&v| fill != Some(v)), key, 0);
    let mut minbits = given;
    if given == 0 {
        let range = max.wrapping_sub(min) & mask;
        if range > mask - 2 {
            // every bit needed; libhdf5 returns before recording the minimum, except for a
            // signed char without fill value
            let minval = if size == 1 && is_signed && fill.is_none() {
                signed(min, 1) as u64
            } else {
                0
            };
            return Pre {
                minbits: bits,
                minval,
                codes: None,
            };
        }
        let span = range + 1;
        minbits = log2_ceil(if fill.is_some() { span + 1 } else { span });
    }
    let minval = if is_signed {
        signed(min, size) as u64
    } else {
        min
    };
    let codes = (minbits != bits).then(|| {
        let all_ones = if minbits >= 64 {
            u64::MAX
        } else {
            (1u64 << minbits) - 1
        };
        vals.iter()
            .map(|&v| {
                if fill == Some(v) {
                    all_ones & mask
                } else {
                    v.wrapping_sub(min) & mask
                }
            })
            .collect()
    });
    Pre {
        minbits,
        minval,
        codes,
    }
}

/// The smallest and largest of `vals` by `key`, as libhdf5's passes find them: the first
/// value starts both, and a later one replaces them only when it compares smaller or greater
/// (a NaN never does); both `zero` when there is no value.
fn min_max<T: Copy, K: PartialOrd>(
    vals: impl IntoIterator<Item = T>,
    key: impl Fn(T) -> K,
    zero: T,
) -> (T, T) {
    let mut it = vals.into_iter();
    let Some(first) = it.next() else {
        return (zero, zero);
    };
    it.fold((first, first), |(min, max), x| {
        (
            if key(x) < key(min) { x } else { min },
            if key(x) > key(max) { x } else { max },
        )
    })
}

/// Float precompression for `f32` (`H5Z_scaleoffset_precompress_3` with powf, fabsf, roundf,
/// lroundf, llroundf): scaled differences computed in single precision; the fill test while
/// finding max and min in double (`fabs`, `pow`), the one while coding in single.
fn floats32(vals: &[u64], fill: Option<f32>, factor: i32) -> Pre {
    let buf: Vec<f32> = vals.iter().map(|&v| f32::from_bits(v as u32)).collect();
    let d = f64::from(factor);
    let p = 10f32.powf(d as f32);
    // the fill test in double here (`fabs`, `pow`); without a fill value, max and min of all
    let is_fill = |x: f32| fill.is_some_and(|f| f64::from((x - f).abs()) < 10f64.powf(-d));
    let (min, max) = min_max(buf.iter().copied().filter(|&x| !is_fill(x)), |x| x, 0.0);
    if (max * p - min * p).round() > 2f32.powf(31.0) {
        return Pre {
            minbits: 32,
            minval: 0,
            codes: None,
        };
    }
    let span = ((max * p - min * p).round() as i64 as u64).wrapping_add(1);
    let minbits = log2_ceil(if fill.is_some() { span + 1 } else { span });
    let minval = u64::from(min.to_bits());
    let codes = (minbits != 32).then(|| {
        let all_ones = (1u64 << minbits) - 1;
        buf.iter()
            .map(|&x| match fill {
                Some(f) if (x - f).abs() < 10f32.powf(-d as f32) => all_ones & 0xffff_ffff,
                _ => u64::from((x * p - min * p).round() as i64 as i32 as u32),
            })
            .collect()
    });
    Pre {
        minbits,
        minval,
        codes,
    }
}

/// Float precompression for `f64` (`H5Z_scaleoffset_precompress_3` with pow, fabs, round,
/// lround, llround).
fn floats64(vals: &[u64], fill: Option<f64>, factor: i32) -> Pre {
    let buf: Vec<f64> = vals.iter().map(|&v| f64::from_bits(v)).collect();
    let d = f64::from(factor);
    let p = 10f64.powf(d);
    let tiny = 10f64.powf(-d);
    let is_fill = |x: f64| fill.is_some_and(|f| (x - f).abs() < tiny);
    // (without a fill value, `is_fill` is false: max and min of all)
    let (min, max) = min_max(buf.iter().copied().filter(|&x| !is_fill(x)), |x| x, 0.0);
    if (max * p - min * p).round() > 2f64.powf(63.0) {
        return Pre {
            minbits: 64,
            minval: 0,
            codes: None,
        };
    }
    let span = ((max * p - min * p).round() as i64 as u64).wrapping_add(1);
    let minbits = log2_ceil(if fill.is_some() { span + 1 } else { span });
    let minval = min.to_bits();
    let codes = (minbits != 64).then(|| {
        let all_ones = (1u64 << minbits) - 1;
        buf.iter()
            .map(|&x| {
                if is_fill(x) {
                    all_ones
                } else {
                    (x * p - min * p).round() as i64 as u64
                }
            })
            .collect()
    });
    Pre {
        minbits,
        minval,
        codes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(stored: &[u8], cd: &[u32]) -> Vec<u8> {
        hdf5_reader::filters::scaleoffset::decompress_with_limit(stored, cd, 1 << 20).unwrap()
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn i16s(v: &[i16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    const I16: Datatype = Datatype::Int {
        size: 2,
        signed: true,
        big: false,
    };

    #[test]
    fn parameters_as_libhdf5_stores_them() {
        // ncgen -k nc4 (netCDF-C 4.9.0): short s, _Filter "6,2,0", chunks of 4, fill -32767
        let p = params_for(&I16, 4, &[2, 0], Some(&(-32767i16).to_le_bytes())).unwrap();
        assert_eq!(&p[..10], [2, 0, 4, 0, 2, 1, 0, 1, 32769, 0]);
        // float b, "6,0,2", fill 9.96921e36
        let f = Datatype::Float {
            size: 4,
            big: false,
        };
        let p = params_for(&f, 4, &[0, 2], Some(&9.969_21e36f32.to_le_bytes())).unwrap();
        assert_eq!(&p[..10], [0, 2, 4, 1, 4, 0, 0, 1, 2096103424, 0]);
        // no fill value: libhdf5's default, zero, defined
        let d = Datatype::Float { size: 8, big: true };
        let p = params_for(&d, 7, &[0, 3], None).unwrap();
        assert_eq!(
            p,
            [0, 3, 7, 1, 8, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert!(params_for(&Datatype::FixedString { size: 1 }, 4, &[2, 0], None).is_err());
    }

    #[test]
    fn chunks_as_libhdf5_stores_them() {
        // the chunks of that file (h5py reads them with read_direct_chunk)
        let p = params_for(&I16, 4, &[2, 0], Some(&(-32767i16).to_le_bytes())).unwrap();
        let c = encode(&i16s(&[1, 2, 3, 4]), &p).unwrap();
        assert_eq!(c, hex("0300000008010000000000000000000000000000000530"));
        let c = encode(&i16s(&[9, -32767, -32767, -32767]), &p).unwrap();
        assert_eq!(c, hex("01000000080900000000000000000000000000000070"));
        let f = Datatype::Float {
            size: 4,
            big: false,
        };
        let p = params_for(&f, 4, &[0, 2], Some(&9.969_21e36f32.to_le_bytes())).unwrap();
        let c = encode(&f32s(&[1.5, 2.25, 3.0, 9.969_21e36]), &p).unwrap();
        assert_eq!(
            c,
            hex("08000000080000c03f000000000000000000000000004b96ff00")
        );
        let c = encode(&f32s(&[5.0, 6.0, 7.0, 8.0]), &p).unwrap();
        assert_eq!(
            c,
            hex("09000000080000a04000000000000000000000000000191912c0")
        );
        // h5py, default fill value 0 (defined): -0.5, 0 (fill: all ones), 0.5, 1, 1.5
        let p = params_for(&f, 5, &[0, 2], Some(&[0; 4])).unwrap();
        let c = encode(&f32s(&[-0.5, 0.0, 0.5, 1.0, 1.5]), &p).unwrap();
        assert_eq!(
            c,
            hex("0800000008000000bf00000000000000000000000000ff6496c800")
        );
        // h5py, int16 fill 7 in the edge chunk: 6, 7 (fill), 8, 9, then fill
        let p = params_for(&I16, 8, &[2, 0], Some(&7i16.to_le_bytes())).unwrap();
        let c = encode(&i16s(&[6, 7, 8, 9, 7, 7, 7, 7]), &p).unwrap();
        assert_eq!(c, hex("0300000008060000000000000000000000000000001d3fff00"));
    }

    #[test]
    fn edge_cases_round_trip() {
        let ty = |size, signed| Datatype::Int {
            size,
            signed,
            big: false,
        };
        let cases: Vec<(Datatype, Vec<u8>, Option<Vec<u8>>)> = vec![
            // all equal, no fill value: minbits 0, one zero byte after the header
            (
                ty(4, true),
                [5i32; 6].iter().flat_map(|x| x.to_le_bytes()).collect(),
                None,
            ),
            // all fill
            (
                ty(2, false),
                [9u16; 5].iter().flat_map(|x| x.to_le_bytes()).collect(),
                Some(9u16.to_le_bytes().to_vec()),
            ),
            // the full range: stored as they are
            (ty(1, true), vec![0x80, 0x7f, 0, 1], None),
            (ty(1, true), vec![0x80, 0x7f, 0, 1], Some(vec![0])),
            (
                ty(8, false),
                [0u64, u64::MAX, 3]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
                None,
            ),
            // negative values, unsigned bytes, 64-bit
            (
                ty(8, true),
                [-5i64, -1_000_000_000_000, 7]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
                Some((-1i64).to_le_bytes().to_vec()),
            ),
            (ty(1, false), vec![200, 201, 255, 199], Some(vec![255])),
        ];
        for (dt, chunk, fill) in cases {
            let n = chunk.len() / dt.size() as usize;
            let p = params_for(&dt, n as u64, &[2, 0], fill.as_deref()).unwrap();
            let stored = encode(&chunk, &p).unwrap();
            assert_eq!(decode(&stored, &p), chunk, "{dt:?} {chunk:?}");
        }
        let p = params_for(&ty(4, true), 6, &[2, 0], None).unwrap();
        let stored = encode(
            &[5i32; 6]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<_>>(),
            &p,
        )
        .unwrap();
        assert_eq!(stored.len(), HEADER + 1);
        // given bits: min subtracted, no search for the bits needed; all the bits: as it is
        let p = params_for(&ty(2, true), 3, &[2, 12], None).unwrap();
        let chunk = i16s(&[-100, 0, 100]);
        assert_eq!(decode(&encode(&chunk, &p).unwrap(), &p), chunk);
        let p = params_for(&ty(2, true), 3, &[2, 16], None).unwrap();
        assert_eq!(encode(&chunk, &p).unwrap(), chunk);
        // big-endian values are swapped first
        let be = Datatype::Int {
            size: 2,
            signed: true,
            big: true,
        };
        let p = params_for(&be, 3, &[2, 0], Some(&[1, 0])).unwrap();
        let chunk: Vec<u8> = [-100i16, 1, 100]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        assert_eq!(decode(&encode(&chunk, &p).unwrap(), &p), chunk);
        // doubles with 3 decimal digits, a fill value among them
        let d = Datatype::Float {
            size: 8,
            big: false,
        };
        let vals = [1.234f64, -7.5, 9.969_209_968_386_869e36, 0.001];
        let chunk: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
        let p = params_for(&d, 4, &[0, 3], Some(&vals[2].to_le_bytes())).unwrap();
        let back: Vec<f64> = decode(&encode(&chunk, &p).unwrap(), &p)
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for (a, b) in vals.iter().zip(&back) {
            assert!((a - b).abs() < 1e-9 || a == b, "{a} {b}");
        }
    }

    #[test]
    fn refusals() {
        let p = params_for(&I16, 2, &[2, 0], None).unwrap();
        assert!(encode(&[0; 3], &p).is_err());
        let p = params_for(&I16, 2, &[2, 17], None).unwrap();
        assert!(encode(&[0; 4], &p).is_err());
        let p = params_for(&I16, 2, &[0, 0], None).unwrap();
        assert!(encode(&[0; 4], &p).is_err());
        let f = Datatype::Float {
            size: 4,
            big: false,
        };
        let p = params_for(&f, 1, &[1, 8], None).unwrap();
        assert!(encode(&[0; 4], &p).is_err());
        assert!(encode(&[0; 4], &[0; 8]).is_err());
    }
}
