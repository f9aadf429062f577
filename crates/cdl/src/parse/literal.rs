//! Numeric literals (grammar rules `int_literal`, `float_literal`, `suffix` in `cdl.ebnf`),
//! recognized with nom, and their C-like conversions to each atomic type.

use nc_dataset::AtomicType;
use nom::{
    branch::alt,
    bytes::complete::{tag, tag_no_case},
    character::complete::{digit0, digit1, one_of},
    combinator::{all_consuming, opt, recognize},
    sequence::tuple,
    IResult,
};

/// A numeric constant with the type ncgen gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    /// An integer: its value wrapped to 64 bits and its type (from the suffix or the size).
    Int {
        /// two's complement bits
        bits: i64,
        /// byte .. uint64
        ty: AtomicType,
    },
    /// A floating constant (float or double).
    Real {
        /// value
        v: f64,
        /// Float or Double
        ty: AtomicType,
    },
}

impl Number {
    /// A double constant.
    pub(crate) fn double(v: f64) -> Number {
        Number::Real {
            v,
            ty: AtomicType::Double,
        }
    }
    /// A float constant.
    pub(crate) fn float(v: f64) -> Number {
        Number::Real {
            v,
            ty: AtomicType::Float,
        }
    }

    /// Text for messages.
    pub(crate) fn text(&self) -> String {
        match self {
            Number::Int { bits, ty } if *ty == AtomicType::UInt64 => format!("{}", *bits as u64),
            Number::Int { bits, .. } => format!("{bits}"),
            Number::Real { v, .. } => format!("{v}"),
        }
    }

    /// Value as f64 (C conversion).
    #[inline]
    pub(crate) fn as_f64(&self) -> f64 {
        match *self {
            Number::Int { bits, ty } => {
                if matches!(ty, AtomicType::UInt64) {
                    bits as u64 as f64
                } else {
                    bits as f64
                }
            }
            Number::Real { v, .. } => v,
        }
    }

    /// Value converted to a 64-bit integer the way a C cast does on x86-64.
    #[inline]
    pub(crate) fn as_i64(&self) -> i64 {
        match *self {
            Number::Int { bits, .. } => bits,
            Number::Real { v, .. } => cvt_i64(v),
        }
    }

    /// Value converted to i32 the way a C cast does on x86-64 (NaN, overflow -> INT_MIN).
    #[inline]
    pub(crate) fn as_i32(&self) -> i32 {
        match *self {
            Number::Int { bits, .. } => bits as i32,
            Number::Real { v, .. } => cvt_i32(v),
        }
    }

    /// Value as u64 (C cast).
    #[inline]
    pub(crate) fn as_u64(&self) -> u64 {
        match *self {
            Number::Int { bits, .. } => bits as u64,
            Number::Real { v, .. } => {
                if v >= 9_223_372_036_854_775_808.0 {
                    (cvt_i64(v - 9_223_372_036_854_775_808.0) as u64) ^ (1u64 << 63)
                } else {
                    cvt_i64(v) as u64
                }
            }
        }
    }
}

/// `cvttsd2si` 32-bit: out of range and NaN give `i32::MIN`.
#[inline]
pub(crate) fn cvt_i32(v: f64) -> i32 {
    if v.is_nan() || v >= 2_147_483_648.0 || v <= -2_147_483_649.0 {
        i32::MIN
    } else {
        v as i32
    }
}

/// `cvttsd2si` 64-bit: out of range and NaN give `i64::MIN`.
#[inline]
pub(crate) fn cvt_i64(v: f64) -> i64 {
    if v.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
        i64::MIN
    } else {
        v as i64
    }
}

fn exponent(i: &[u8]) -> IResult<&[u8], &[u8]> {
    recognize(tuple((one_of("eE"), opt(one_of("+-")), digit1)))(i)
}

/// `float_literal` without suffix: `1.`, `.5`, `1.5`, `1e5`, `1.e-3`.
fn float_body(i: &[u8]) -> IResult<&[u8], &[u8]> {
    alt((
        recognize(tuple((
            alt((
                recognize(tuple((digit1, tag("."), digit0))),
                recognize(tuple((tag("."), digit1))),
            )),
            opt(exponent),
        ))),
        recognize(tuple((digit1, exponent))),
    ))(i)
}

fn int_suffix(i: &[u8]) -> IResult<&[u8], AtomicType> {
    let (r, s) = alt((
        tag_no_case("ull"),
        tag_no_case("ul"),
        tag_no_case("us"),
        tag_no_case("ub"),
        tag_no_case("ll"),
        tag_no_case("u"),
        tag_no_case("s"),
        tag_no_case("b"),
        tag_no_case("l"),
    ))(i)?;
    let t = match s.to_ascii_lowercase().as_slice() {
        b"ull" => AtomicType::UInt64,
        b"ul" | b"u" => AtomicType::UInt,
        b"us" => AtomicType::UShort,
        b"ub" => AtomicType::UByte,
        b"ll" => AtomicType::Int64,
        b"s" => AtomicType::Short,
        b"b" => AtomicType::Byte,
        _ => AtomicType::Int,
    };
    Ok((r, t))
}

/// The type an unsuffixed integer gets (ncgen 4.9.0, found by experiment).
pub(crate) fn int_natural_type(bits: i64) -> AtomicType {
    if bits < 0 {
        if bits >= i64::from(i32::MIN) {
            AtomicType::Int
        } else {
            AtomicType::Int64
        }
    } else if bits <= i64::from(i32::MAX) {
        AtomicType::Int
    } else if bits <= i64::from(u32::MAX) {
        AtomicType::UInt
    } else {
        AtomicType::UInt64
    }
}

fn digits_value(d: &[u8]) -> Result<u64, &'static str> {
    // leading 0: octal, as strtoull base 0 reads it (stops at the first non-octal digit)
    let (radix, body) = if d.len() > 1 && d[0] == b'0' {
        let n = d.iter().take_while(|c| (b'0'..=b'7').contains(c)).count();
        (8u64, &d[..n])
    } else {
        (10u64, d)
    };
    let mut v: u64 = 0;
    for &c in body {
        v = v
            .checked_mul(radix)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
            .ok_or("integer constant out of range")?;
    }
    Ok(v)
}

fn parse_f64(text: &[u8]) -> Result<f64, &'static str> {
    let s = std::str::from_utf8(text).map_err(|_| "malformed number")?;
    // Rust's parser does not take "1.e5"; insert nothing, just handle that shape
    match s.parse::<f64>() {
        Ok(v) => Ok(v),
        Err(_) => {
            let fixed = s.replacen(".e", ".0e", 1).replacen(".E", ".0E", 1);
            fixed.parse::<f64>().map_err(|_| "malformed number")
        }
    }
}

/// A hex integer with a type suffix, `0xabcdS` (rule `hex_int`).
///
/// # Errors
/// When the digits exceed 64 bits or the suffix is unknown.
pub(crate) fn classify_hex(text: &[u8]) -> Result<Number, &'static str> {
    let body = &text[2..];
    let nd = body.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    let (digits, suffix) = body.split_at(nd);
    let mut v: u64 = 0;
    for &c in digits {
        let d = (c as char).to_digit(16).unwrap_or(0);
        v = v
            .checked_mul(16)
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or("integer constant out of range")?;
    }
    let r: IResult<&[u8], AtomicType> = all_consuming(int_suffix)(suffix);
    let ty = r.map(|(_, t)| t).map_err(|_| "unknown integer suffix")?;
    if matches!(
        ty,
        AtomicType::UByte | AtomicType::UShort | AtomicType::UInt | AtomicType::UInt64
    ) {
        return Err("hex integer constants take no unsigned suffix");
    }
    // ncgen reads hex digits into 32 bits, saturating (0xabcdabcdabcdabcdL is 4294967295)
    Ok(Number::Int {
        bits: v.min(u64::from(u32::MAX)) as i64,
        ty,
    })
}

/// Classify the text of a numeric token (sign included) as ncgen's lexer does.
///
/// # Errors
/// A message when the text is no valid literal or an integer exceeds 64 bits.
pub(crate) fn classify_number(text: &[u8]) -> Result<Number, &'static str> {
    let (neg, body) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    // fast path: plain decimal digits with at most one '.', no suffix
    let octal = body.len() > 1 && body[0] == b'0' && body[1].is_ascii_digit();
    if !body.is_empty() && !octal {
        let mut dots = 0;
        let mut plain = true;
        for &c in body {
            if c == b'.' {
                dots += 1;
            } else if !c.is_ascii_digit() {
                plain = false;
                break;
            }
        }
        if plain && dots == 0 {
            let v = digits_value(body)?;
            let bits = if neg {
                (v as i64).wrapping_neg()
            } else {
                v as i64
            };
            return Ok(Number::Int {
                bits,
                ty: int_natural_type(bits),
            });
        }
        if plain && dots == 1 && body.len() > 1 {
            let v = parse_f64(body)?;
            return Ok(Number::double(if neg { -v } else { v }));
        }
    }
    // general forms
    let float_form: IResult<&[u8], (&[u8], Option<char>)> =
        all_consuming(tuple((float_body, opt(one_of("fFdD")))))(body);
    if let Ok((_, (f, suf))) = float_form {
        let v = parse_f64(f)?;
        let v = if neg { -v } else { v };
        return Ok(match suf {
            Some('f' | 'F') => Number::float(f64::from(v as f32)),
            _ => Number::double(v),
        });
    }
    let int_form: IResult<&[u8], (&[u8], Option<AtomicType>)> =
        all_consuming(tuple((digit1, opt(int_suffix))))(body);
    if let Ok((_, (d, suf))) = int_form {
        let v = digits_value(d)?;
        let bits = if neg {
            (v as i64).wrapping_neg()
        } else {
            v as i64
        };
        let Some(ty) = suf else {
            return Ok(Number::Int {
                bits,
                ty: int_natural_type(bits),
            });
        };
        // suffix rules of ncgen 4.9.0 (by experiment): unsigned suffixes reject signs and
        // values out of range; `l`/`L` keeps 32 bits; `b`, `s` wrap when converted
        let max = match ty {
            AtomicType::UByte => Some(u64::from(u8::MAX)),
            AtomicType::UShort => Some(u64::from(u16::MAX)),
            AtomicType::UInt => Some(u64::from(u32::MAX)),
            _ => None,
        };
        let unsigned = max.is_some() || ty == AtomicType::UInt64;
        if unsigned && neg && v != 0 {
            return Err("unsigned integer constant cannot be negative");
        }
        if max.is_some_and(|m| v > m) {
            return Err("value out of range for its suffix");
        }
        let bits = if ty == AtomicType::Int {
            i64::from(bits as i32)
        } else {
            bits
        };
        return Ok(Number::Int { bits, ty });
    }
    Err("malformed numeric constant")
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn c(s: &str) -> Number {
        match classify_number(s.as_bytes()) {
            Ok(n) => n,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn ty(s: &str) -> AtomicType {
        match c(s) {
            Number::Int { ty, .. } | Number::Real { ty, .. } => ty,
        }
    }

    // rule: int_literal (natural types, found with ncgen 4.9.0)
    #[test]
    fn int_literal_natural_types() {
        assert_eq!(
            c("1"),
            Number::Int {
                bits: 1,
                ty: AtomicType::Int
            }
        );
        assert_eq!(
            c("3000000000"),
            Number::Int {
                bits: 3_000_000_000,
                ty: AtomicType::UInt
            }
        );
        assert_eq!(ty("4294967296"), AtomicType::UInt64);
        assert_eq!(ty("-3000000000"), AtomicType::Int64);
        assert_eq!(ty("-2147483648"), AtomicType::Int);
        assert_eq!(
            c("18446744073709551615"),
            Number::Int {
                bits: -1,
                ty: AtomicType::Int
            }
        );
        assert_eq!(ty("9223372036854775808"), AtomicType::Int64);
        assert_eq!(
            c("010"),
            Number::Int {
                bits: 8,
                ty: AtomicType::Int
            }
        );
        assert_eq!(
            c("08"),
            Number::Int {
                bits: 0,
                ty: AtomicType::Int
            }
        );
        assert!(classify_number(b"18446744073709551616").is_err());
    }

    // rule: int_literal with suffix
    #[test]
    fn int_literal_suffixes() {
        assert_eq!(ty("1b"), AtomicType::Byte);
        assert_eq!(ty("1UB"), AtomicType::UByte);
        assert_eq!(ty("2s"), AtomicType::Short);
        assert_eq!(ty("2us"), AtomicType::UShort);
        assert_eq!(ty("2L"), AtomicType::Int);
        assert_eq!(ty("2ll"), AtomicType::Int64);
        assert_eq!(ty("2u"), AtomicType::UInt);
        assert_eq!(ty("2ul"), AtomicType::UInt);
        assert_eq!(ty("2ULL"), AtomicType::UInt64);
        assert_eq!(
            c("-1b"),
            Number::Int {
                bits: -1,
                ty: AtomicType::Byte
            }
        );
        assert!(classify_number(b"1d").is_err());
        assert!(classify_number(b"2f").is_err());
    }

    // rule: float_literal
    #[test]
    fn float_literal_forms() {
        assert_eq!(c("1.5"), Number::double(1.5));
        assert_eq!(c("-1.5"), Number::double(-1.5));
        assert_eq!(c("1.e5"), Number::double(1e5));
        assert_eq!(c(".5"), Number::double(0.5));
        assert_eq!(c("5."), Number::double(5.0));
        assert_eq!(c("1E3"), Number::double(1000.0));
        assert_eq!(c("1e-3f"), Number::float(f64::from(1e-3f32)));
        assert_eq!(c("1.5F"), Number::float(1.5));
        assert_eq!(c("1.5d"), Number::double(1.5));
        assert_eq!(c("0.25"), Number::double(0.25));
        assert!(classify_number(b"1.5e").is_err());
        assert!(classify_number(b"1.5ef").is_err());
    }

    #[test]
    fn c_conversions() {
        assert_eq!(cvt_i32(f64::NAN), i32::MIN);
        assert_eq!(cvt_i32(1e10), i32::MIN);
        assert_eq!(cvt_i32(-1.7), -1);
        assert_eq!(Number::double(1e19).as_u64(), 10_000_000_000_000_000_000);
    }
}
