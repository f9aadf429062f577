//! HDF5's nbit filter (id 5), write side: the parameters libhdf5's `set_local` stores for a
//! datatype, and the encoder, bit for bit libhdf5's (`H5Znbit.c`; decoding is hdf5-reader's).
//!
//! Parameters: `[count, need-not-compress, elements in a chunk, type...]`, where a type is
//! - atomic (integer, float): `1, size, order (0 LE, 1 BE), precision, offset`;
//! - array: `2, size, base type`;
//! - compound: `3, size, members, then per member its byte offset and its type`;
//! - anything else inside an array or compound ("no-op"): `4, size`.
//!
//! A top-level type of another class adds nothing after the element count. need-not-compress
//! is 1 when every atomic type in it has all its bits significant (precision = 8 x size,
//! offset 0): the chunk is then stored as it is. Otherwise each atomic value's `precision`
//! bits from bit `offset` are written one after another, most significant first, no-op bytes
//! whole, compound padding skipped; the chunk is the bytes begun plus one (libhdf5 counts the
//! byte it would write next).

use crate::format::datatype::Datatype;
use nc_filters::bits::BitWriter;

/// The most parameters libhdf5 accepts (`H5Z_NBIT_MAX_NPARMS`).
const MAX_PARAMS: usize = 4096;

const ATOMIC: u32 = 1;
const ARRAY: u32 = 2;
const COMPOUND: u32 = 3;
const NOOP: u32 = 4;

/// The parameters libhdf5's `set_local` stores for a dataset of type `dt` whose chunks hold
/// `chunk_elems` elements.
///
/// # Errors
/// A message when the type needs more than 4096 parameters, a chunk holds more than 2^32 - 1
/// elements, or the type is not one nbit can describe at the top (a string, enum, opaque or
/// reference: libhdf5 stores three parameters, which libhdf5 2.0 then refuses to read).
pub(crate) fn params_for(dt: &Datatype, chunk_elems: u64) -> Result<Vec<u32>, String> {
    let elems = u32::try_from(chunk_elems)
        .map_err(|_| format!("a chunk of {chunk_elems} elements is too large for nbit"))?;
    let mut p = vec![0, 1, elems];
    match dt {
        Datatype::Int { .. } | Datatype::Float { .. } => atomic(dt, &mut p),
        Datatype::Array { .. } => array(dt, &mut p)?,
        Datatype::Compound { .. } => compound(dt, &mut p)?,
        _ => {
            return Err(
                "nbit applies to integer, floating-point, compound and array types only \
                 (libhdf5 2.0 cannot read what libhdf5 stores for other types)"
                    .into(),
            )
        }
    }
    if p.len() > MAX_PARAMS {
        return Err(format!(
            "the type needs {} nbit parameters, more than libhdf5's {MAX_PARAMS}",
            p.len()
        ));
    }
    p[0] = p.len() as u32;
    // need-not-compress: the writer's types (netCDF's) have every bit significant
    p[1] = 1;
    Ok(p)
}

fn atomic(dt: &Datatype, p: &mut Vec<u32>) {
    let (size, big) = match dt {
        Datatype::Int { size, big, .. } | Datatype::Float { size, big } => (*size, *big),
        _ => unreachable!("atomic() is called for integer and float types only"),
    };
    // precision 8 x size, offset 0
    p.extend([ATOMIC, size, u32::from(big), size * 8, 0]);
}

fn noop(size: u32, p: &mut Vec<u32>) {
    p.extend([NOOP, size]);
}

/// A type inside an array or compound.
fn member(dt: &Datatype, p: &mut Vec<u32>) -> Result<(), String> {
    match dt {
        Datatype::Int { .. } | Datatype::Float { .. } => atomic(dt, p),
        Datatype::Array { .. } => array(dt, p)?,
        Datatype::Compound { .. } => compound(dt, p)?,
        Datatype::Vlen { .. } | Datatype::VarString => {
            return Err("nbit cannot describe variable-length data".into())
        }
        other => noop(other.size(), p),
    }
    Ok(())
}

fn array(dt: &Datatype, p: &mut Vec<u32>) -> Result<(), String> {
    let Datatype::Array { base, .. } = dt else {
        unreachable!("array() is called for array types only")
    };
    p.extend([ARRAY, dt.size()]);
    member(base, p)
}

fn compound(dt: &Datatype, p: &mut Vec<u32>) -> Result<(), String> {
    let Datatype::Compound { size, members } = dt else {
        unreachable!("compound() is called for compound types only")
    };
    p.extend([COMPOUND, *size, members.len() as u32]);
    for m in members {
        p.push(m.offset);
        member(&m.ty, p)?;
    }
    Ok(())
}

/// The bytes of `w`, with the one more libhdf5 counts for nbit and scaleoffset: the byte
/// begun, or when the bits end on a byte boundary, the (zero) byte after it.
pub(crate) fn finish_plus_one(w: BitWriter) -> Vec<u8> {
    let aligned = w.is_byte_aligned();
    let mut out = w.finish();
    if aligned {
        out.push(0);
    }
    out
}

/// Encode one chunk with the stored parameters `cd` (as [`params_for`] or libhdf5 made them).
///
/// # Errors
/// A message when the parameters are malformed or the chunk is not `elements x size` bytes.
pub(crate) fn encode(chunk: &[u8], cd: &[u32]) -> Result<Vec<u8>, String> {
    if cd.len() < 5 || cd[0] as usize != cd.len() {
        return Err(format!("{} parameters, malformed", cd.len()));
    }
    if cd[1] != 0 {
        return Ok(chunk.to_vec());
    }
    let n = cd[2] as usize;
    let size = cd[4] as usize;
    if size == 0 || n.checked_mul(size) != Some(chunk.len()) {
        return Err(format!(
            "chunk of {} bytes, expected {n} elements of {size} bytes",
            chunk.len()
        ));
    }
    let mut w = BitWriter::with_capacity(chunk.len());
    let top = cd[3];
    for i in 0..n {
        let elem = &chunk[i * size..(i + 1) * size];
        let mut at = 3;
        match top {
            ATOMIC | ARRAY | COMPOUND => one(elem, cd, &mut at, &mut w)?,
            other => return Err(format!("type class {other} at the top, malformed")),
        }
    }
    Ok(finish_plus_one(w))
}

fn param(cd: &[u32], at: &mut usize) -> Result<u32, String> {
    let v = *cd
        .get(*at)
        .ok_or_else(|| "parameters end before the type they describe".to_string())?;
    *at += 1;
    Ok(v)
}

/// Encode one value of the type whose class is `cd[*at]` (the parameters advance past it).
fn one(data: &[u8], cd: &[u32], at: &mut usize, w: &mut BitWriter) -> Result<(), String> {
    let class = param(cd, at)?;
    let size = param(cd, at)? as usize;
    if data.len() < size {
        return Err(format!("a value of {size} bytes lies past its container"));
    }
    let data = &data[..size];
    match class {
        ATOMIC => {
            let order = param(cd, at)?;
            let precision = param(cd, at)?;
            let offset = param(cd, at)?;
            atomic_bits(data, order, precision, offset, w)
        }
        ARRAY => {
            let begin = *at;
            // the base type's size, read ahead as libhdf5 does
            let base_size = cd.get(begin + 1).copied().unwrap_or(0) as usize;
            if base_size == 0 {
                return Err("array of 0-byte elements, malformed".into());
            }
            for k in 0..size / base_size {
                *at = begin;
                one(&data[k * base_size..], cd, at, w)?;
            }
            if size / base_size == 0 {
                // skip the base type's parameters all the same
                skip(cd, at)?;
            }
            Ok(())
        }
        COMPOUND => {
            let members = param(cd, at)?;
            for _ in 0..members {
                let off = param(cd, at)? as usize;
                if off > size {
                    return Err(format!("member at byte {off} of a {size}-byte compound"));
                }
                one(&data[off..], cd, at, w)?;
            }
            Ok(())
        }
        NOOP => {
            for &b in data {
                w.put(u32::from(b), 8);
            }
            Ok(())
        }
        other => Err(format!("type class {other}, malformed")),
    }
}

/// Move past the parameters of one type.
fn skip(cd: &[u32], at: &mut usize) -> Result<(), String> {
    let class = param(cd, at)?;
    let _size = param(cd, at)?;
    match class {
        ATOMIC => {
            *at += 3;
        }
        ARRAY => skip(cd, at)?,
        COMPOUND => {
            for _ in 0..param(cd, at)? {
                *at += 1;
                skip(cd, at)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The `precision` bits of an atomic value from bit `offset`, most significant first, byte by
/// byte as libhdf5 takes them.
fn atomic_bits(
    data: &[u8],
    order: u32,
    precision: u32,
    offset: u32,
    w: &mut BitWriter,
) -> Result<(), String> {
    let size = data.len() as u32;
    let len = size * 8;
    if precision == 0 || precision > len || precision + offset > len {
        return Err(format!(
            "precision {precision} and offset {offset} do not fit {size} bytes"
        ));
    }
    // the bytes holding the significant bits, most significant first
    let top = (precision + offset - 1) / 8; // significance of the highest byte
    let low = offset / 8;
    for sig in (low..=top).rev() {
        let k = if order == 0 { sig } else { size - 1 - sig } as usize;
        let val = data[k];
        let (val, n) = if top == low {
            (val >> (offset % 8), precision)
        } else if sig == top {
            (val, 8 - (len - precision - offset) % 8)
        } else if sig == low {
            let n = 8 - offset % 8;
            (val >> (8 - n), n)
        } else {
            (val, 8)
        };
        w.put(u32::from(val), n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::datatype::Member;

    fn decode(stored: &[u8], cd: &[u32]) -> Vec<u8> {
        hdf5_reader::filters::nbit::decompress_with_limit(stored, cd, 1 << 20).unwrap()
    }

    #[test]
    fn netcdf_types_are_stored_as_they_are() {
        let int = Datatype::Int {
            size: 4,
            signed: true,
            big: false,
        };
        // as ncgen -k nc4 (netCDF-C 4.9.0, libhdf5 1.10) stores `int a(n)`, 4-element chunks
        assert_eq!(params_for(&int, 4).unwrap(), [8, 1, 4, 1, 4, 0, 32, 0]);
        let big = Datatype::Float { size: 8, big: true };
        assert_eq!(params_for(&big, 7).unwrap(), [8, 1, 7, 1, 8, 1, 64, 0]);
        let chunk = [1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(
            encode(&chunk, &params_for(&int, 2).unwrap()).unwrap(),
            chunk
        );
        let comp = Datatype::Compound {
            size: 12,
            members: vec![
                Member {
                    name: "a".into(),
                    offset: 0,
                    ty: Datatype::Int {
                        size: 2,
                        signed: false,
                        big: false,
                    },
                },
                Member {
                    name: "c".into(),
                    offset: 2,
                    ty: Datatype::FixedString { size: 1 },
                },
                Member {
                    name: "f".into(),
                    offset: 4,
                    ty: Datatype::Array {
                        dims: vec![2],
                        base: Box::new(Datatype::Float {
                            size: 4,
                            big: false,
                        }),
                    },
                },
            ],
        };
        assert_eq!(
            params_for(&comp, 3).unwrap(),
            [23, 1, 3, 3, 12, 3, 0, 1, 2, 0, 16, 0, 2, 4, 1, 4, 2, 8, 1, 4, 0, 32, 0]
        );
        assert!(params_for(&Datatype::FixedString { size: 1 }, 3).is_err());
    }

    #[test]
    fn reduced_precision_round_trips() {
        // h5py: STD_I32LE with precision 12, offset 4; values -5..-2 (libhdf5 2.0 stored
        // ffbffcffdffe00)
        let cd = [8, 0, 4, 1, 4, 0, 12, 4];
        let chunk: Vec<u8> = [-5i32, -4, -3, -2]
            .iter()
            .flat_map(|v| ((v << 4) & 0xfff0).to_le_bytes())
            .collect();
        let stored = encode(&chunk, &cd).unwrap();
        assert_eq!(stored, [0xff, 0xbf, 0xfc, 0xff, 0xdf, 0xfe, 0x00]);
        assert_eq!(decode(&stored, &cd), chunk);
        // the same type big-endian, and one whose bits sit in one byte
        let be: Vec<u8> = chunk
            .chunks(4)
            .flat_map(|c| [c[3], c[2], c[1], c[0]])
            .collect();
        let cd_be = [8, 0, 4, 1, 4, 1, 12, 4];
        let s = encode(&be, &cd_be).unwrap();
        assert_eq!(s, stored);
        assert_eq!(decode(&s, &cd_be), be);
        let cd1 = [8, 0, 5, 1, 2, 0, 3, 9];
        let small: Vec<u8> = (0u16..5).flat_map(|v| (v << 9).to_le_bytes()).collect();
        let s = encode(&small, &cd1).unwrap();
        assert_eq!(s.len(), 15 / 8 + 1);
        assert_eq!(decode(&s, &cd1), small);
    }

    #[test]
    fn compounds_and_arrays_pack_member_by_member() {
        // h5py (libhdf5 2.0): compound of 8 bytes { u16 a (precision 10, offset 3) at 0;
        // i8[2] b (precision 5) at 4; a 1-byte string o at 6 }, values a = 100 + i,
        // b = [i, -3], o = "x" + i: libhdf5's parameters and chunk
        let cd = [
            23, 0, 3, 3, 8, 3, 0, 1, 2, 0, 10, 3, 4, 2, 2, 1, 1, 0, 5, 0, 6, 4, 1,
        ];
        let mut chunk = Vec::new();
        for i in 0..3u8 {
            chunk.extend(((100 + u16::from(i)) << 3).to_le_bytes());
            chunk.extend([0, 0, i, 0x1d, b'x' + i, 0]);
        }
        let stored = encode(&chunk, &cd).unwrap();
        // 3 x (10 + 5 + 5 + 8) bits = 84 bits: 10 bytes begun, plus one
        assert_eq!(
            stored,
            [0x19, 0x01, 0xd7, 0x81, 0x94, 0x3d, 0x79, 0x19, 0x85, 0xd7, 0xa0]
        );
        assert_eq!(decode(&stored, &cd), chunk);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(encode(&[0; 4], &[3, 0, 1]).is_err());
        assert!(encode(&[0; 4], &[8, 0, 2, 1, 4, 0, 12, 4]).is_err());
        assert!(encode(&[0; 4], &[8, 0, 1, 1, 4, 0, 30, 4]).is_err());
        assert!(encode(&[0; 4], &[8, 0, 1, 9, 4, 0, 30, 4]).is_err());
    }
}
