//! Element conversion between netCDF values and stored bytes (byte order and string forms
//! of the dtype).

use crate::dtype::{Dtype, Endian, Kind};
use nc_dataset::{AtomicType, NcString, Values};

macro_rules! put_num {
    ($out:expr, $x:expr, $big:expr) => {{
        if $big {
            $out.extend_from_slice(&$x.to_be_bytes())
        } else {
            $out.extend_from_slice(&$x.to_le_bytes())
        }
    }};
}

/// Append the stored form of every element of `v` (converted to the dtype's type).
/// Strings longer than a fixed length are cut here: callers check lengths first.
pub(crate) fn encode(v: &Values, d: &Dtype, out: &mut Vec<u8>) {
    let big = d.endian == Endian::Big;
    let n = v.len();
    match d.kind {
        Kind::Num(t) => {
            out.reserve(n * t.size());
            for i in 0..n {
                let int = || {
                    v.get_i128(i)
                        .or_else(|| v.get_f64(i).map(|f| f as i128))
                        .unwrap_or(0)
                };
                let flt = || v.get_f64(i).unwrap_or(0.0);
                match t {
                    AtomicType::Byte => put_num!(out, int() as i8, big),
                    AtomicType::UByte => put_num!(out, int() as u8, big),
                    AtomicType::Short => put_num!(out, int() as i16, big),
                    AtomicType::UShort => put_num!(out, int() as u16, big),
                    AtomicType::Int => put_num!(out, int() as i32, big),
                    AtomicType::UInt => put_num!(out, int() as u32, big),
                    AtomicType::Int64 => put_num!(out, int() as i64, big),
                    AtomicType::UInt64 => put_num!(out, int() as u64, big),
                    AtomicType::Float => match v {
                        Values::Float(x) => put_num!(out, x[i], big),
                        _ => put_num!(out, flt() as f32, big),
                    },
                    AtomicType::Double => put_num!(out, flt(), big),
                    AtomicType::Char | AtomicType::String => out.push(0),
                }
            }
        }
        Kind::Half => {
            for i in 0..n {
                let h = f32_to_f16(v.get_f64(i).unwrap_or(0.0) as f32);
                put_num!(out, h, big);
            }
        }
        // slot 0: the fill value (object arrays are read, never written)
        Kind::VlenUtf8 => out.extend(std::iter::repeat_n(0u8, 8 * n)),
        Kind::Char => match v {
            Values::Char(b) => out.extend_from_slice(b),
            other => out.extend(std::iter::repeat_n(0u8, other.len())),
        },
        // the bytes as they are, UTF-8 or not (as netCDF-C 4.10 stores them)
        Kind::Bytes(w) => {
            for i in 0..n {
                let b = match v {
                    Values::String(x) => x[i].as_ref().map_or(&[][..], NcString::as_bytes),
                    _ => &[],
                };
                let k = b.len().min(w);
                out.extend_from_slice(&b[..k]);
                out.extend(std::iter::repeat_n(0u8, w - k));
            }
        }
        // only values read from JSON metadata (a `<Un` array's fill) come here: the writer
        // never chooses `<Un`, so the text is UTF-8 and nothing is replaced
        Kind::Unicode(w) => {
            for i in 0..n {
                let s = match v {
                    Values::String(x) => x[i].as_ref().map(NcString::to_str_lossy),
                    _ => None,
                };
                let s = s.as_deref().unwrap_or("");
                let mut k = 0;
                for c in s.chars().take(w) {
                    put_num!(out, c as u32, big);
                    k += 1;
                }
                out.extend(std::iter::repeat_n(0u8, 4 * (w - k)));
            }
        }
    }
}

/// The float a half-precision bit pattern stands for (exact: every half is a float).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    match exp {
        // zero and subnormals: man * 2^-24, exact in a float
        0 => {
            let x = man as f32 * f32::from_bits(0x3380_0000);
            if sign != 0 {
                -x
            } else {
                x
            }
        }
        // infinities and NaNs (the payload kept)
        31 => f32::from_bits(sign | 0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (man << 13)),
    }
}

/// The half nearest to `x` (ties to even; past the largest half, infinity; NaN stays NaN).
pub(crate) fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 255 {
        let payload = (man >> 13) as u16;
        return sign | 0x7c00 | if man != 0 { payload.max(0x200) } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    // keep the top bits of `m` after dropping `shift` bits, rounding to nearest even
    let round = |m: u32, shift: u32| -> u32 {
        let kept = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        if rem > half || (rem == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // a subnormal half (a carry into the exponent gives the smallest normal, as it should)
        return sign | round(man | 0x80_0000, (14 - e) as u32) as u16;
    }
    // a carry out of the mantissa moves to the next exponent (up to infinity), as it should
    sign | round((e as u32) << 23 | man, 13) as u16
}

macro_rules! get_nums {
    ($bytes:expr, $ty:ty, $big:expr, $variant:ident) => {{
        const N: usize = std::mem::size_of::<$ty>();
        Values::$variant(
            $bytes
                .chunks_exact(N)
                .map(|c| {
                    let mut a = [0u8; N];
                    a.copy_from_slice(c);
                    if $big {
                        <$ty>::from_be_bytes(a)
                    } else {
                        <$ty>::from_le_bytes(a)
                    }
                })
                .collect(),
        )
    }};
}

/// The values stored in `bytes` (a whole number of elements).
pub(crate) fn decode(bytes: &[u8], d: &Dtype) -> Values {
    let big = d.endian == Endian::Big;
    match d.kind {
        Kind::Num(t) => match t {
            AtomicType::Byte => Values::Byte(bytes.iter().map(|&b| b as i8).collect()),
            AtomicType::UByte => Values::UByte(bytes.to_vec()),
            AtomicType::Short => get_nums!(bytes, i16, big, Short),
            AtomicType::UShort => get_nums!(bytes, u16, big, UShort),
            AtomicType::Int => get_nums!(bytes, i32, big, Int),
            AtomicType::UInt => get_nums!(bytes, u32, big, UInt),
            AtomicType::Int64 => get_nums!(bytes, i64, big, Int64),
            AtomicType::UInt64 => get_nums!(bytes, u64, big, UInt64),
            AtomicType::Float => get_nums!(bytes, f32, big, Float),
            AtomicType::Double => get_nums!(bytes, f64, big, Double),
            AtomicType::Char => Values::Char(bytes.to_vec()),
            AtomicType::String => Values::String(Vec::new()),
        },
        Kind::Half => match get_nums!(bytes, u16, big, UShort) {
            Values::UShort(h) => Values::Float(h.into_iter().map(f16_to_f32).collect()),
            _ => unreachable!("get_nums! of u16 gives UShort"),
        },
        Kind::Char => Values::Char(bytes.to_vec()),
        // slots without their strings: read.rs resolves them (see `Kind::VlenUtf8`)
        Kind::VlenUtf8 => Values::String(vec![Some(NcString::default()); bytes.len() / 8]),
        Kind::Bytes(w) => Values::String(
            bytes
                .chunks_exact(w)
                .map(|c| {
                    let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
                    Some(NcString::from(&c[..end]))
                })
                .collect(),
        ),
        Kind::Unicode(w) => Values::String(
            bytes
                .chunks_exact(4 * w)
                .map(|c| {
                    let s: String = c
                        .chunks_exact(4)
                        .map(|u| {
                            let a = [u[0], u[1], u[2], u[3]];
                            if big {
                                u32::from_be_bytes(a)
                            } else {
                                u32::from_le_bytes(a)
                            }
                        })
                        .take_while(|&u| u != 0)
                        .map(|u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
                        .collect();
                    Some(NcString::from(s))
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(v: Values, dt: &str) {
        let d = Dtype::parse(dt).unwrap();
        let mut b = Vec::new();
        encode(&v, &d, &mut b);
        assert_eq!(b.len(), v.len() * d.size(), "{dt}");
        assert_eq!(decode(&b, &d), v, "{dt}");
    }

    #[test]
    fn half_floats() {
        // every half widens exactly and narrows back to itself (NaNs stay NaN)
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert!(f16_to_f32(f32_to_f16(f)).is_nan(), "{h:#06x}");
            } else {
                assert_eq!(f32_to_f16(f), h, "{h:#06x} = {f}");
            }
        }
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f32_to_f16(0.1), 0x2e66);
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        assert_eq!(
            f32_to_f16(65520.0),
            0x7c00,
            "ties to even past the largest half"
        );
        assert_eq!(f32_to_f16(1e-8), 0);
        assert_eq!(
            f32_to_f16(-3.0e-8),
            0x8001,
            "above half the smallest subnormal"
        );
        assert_eq!(f32_to_f16(f32::NEG_INFINITY), 0xfc00);
        rt(Values::Float(vec![1.5, -2.25, 65504.0, 0.0]), "<f2");
        rt(Values::Float(vec![1.5, -2.25, 6.1035156e-5]), ">f2");
    }

    #[test]
    fn round_trips() {
        rt(Values::Int(vec![1, -2, i32::MAX]), "<i4");
        rt(Values::Int(vec![1, -2, i32::MAX]), ">i4");
        rt(Values::Double(vec![1.5, -0.0]), ">f8");
        rt(Values::Float(vec![1.5, f32::MAX]), "<f4");
        rt(Values::UInt64(vec![u64::MAX]), ">u8");
        rt(Values::Byte(vec![-1, 5]), "|i1");
        rt(Values::Char(b"ab\0".to_vec()), ">S1");
        rt(
            Values::String(vec![Some("abc".into()), Some("".into())]),
            "|S4",
        );
        rt(Values::String(vec![Some("hé".into())]), "<U3");
        let d = Dtype::parse(">i2").unwrap();
        let mut b = Vec::new();
        encode(&Values::Short(vec![0x0102]), &d, &mut b);
        assert_eq!(b, vec![1, 2]);
    }
}
