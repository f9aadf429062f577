//! Zarr v2 `dtype` strings (NumPy array-interface typestr) ↔ netCDF types.
//!
//! `<f4`, `>i2`, `|u1`, `|b1` map to the numeric types; `S1`/`U1` (any byte order mark) to
//! char — netCDF-C 4.9.0 writes char as `<U1` with one byte per element, the NCZarr
//! documentation says `>S1`; `|Sn` (n > 1) is a fixed-length string of n bytes and `<Un`
//! one of n UCS-4 characters, both NC_STRING.

use nc_dataset::{AtomicType, Endianness};

/// Byte order of stored elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endian {
    Little,
    Big,
    /// `|`: not applicable (one-byte types, byte strings).
    NotApplicable,
}

/// What one element is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A numeric type (bool reads as ubyte).
    Num(AtomicType),
    /// IEEE 754 half precision (`<f2`, v3 `float16`): netCDF has no half float, so it reads as
    /// NC_FLOAT, every value exactly (a half widens to a float without rounding).
    Half,
    /// NC_CHAR, one byte per element (`S1`, or `U1` as netCDF-C 4.9.0 writes it).
    Char,
    /// NC_STRING stored as n bytes, NUL padded.
    Bytes(usize),
    /// NC_STRING stored as n UCS-4 code points.
    Unicode(usize),
    /// NC_STRING in an object array (`|O`) whose chunks are `vlen-utf8` encoded. In a decoded
    /// chunk buffer each element is an 8-byte slot: a 1-based index into the strings read so
    /// far, 0 for the fill value.
    VlenUtf8,
}

/// A parsed dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dtype {
    pub kind: Kind,
    pub endian: Endian,
}

/// Longest fixed string length accepted from a dtype (bytes or characters).
const MAX_STRLEN: usize = 1 << 20;

impl Dtype {
    /// The byte order a netCDF-4 copy records: none for single bytes and non-numbers.
    pub fn endianness(&self) -> Option<Endianness> {
        match (self.kind, self.endian) {
            (Kind::Num(t), _) if t.size() == 1 => None,
            (Kind::Num(_), Endian::Big) => Some(Endianness::Big),
            (Kind::Num(_), _) => Some(Endianness::Little),
            _ => None,
        }
    }

    /// Parse a dtype string; the error says why it is refused.
    pub fn parse(s: &str) -> Result<Dtype, &'static str> {
        let b = s.as_bytes();
        if b.len() < 2 || !b.is_ascii() {
            return Err("too short or not ASCII");
        }
        let (endian, rest) = match b[0] {
            b'<' => (Endian::Little, &s[1..]),
            b'>' => (Endian::Big, &s[1..]),
            b'|' => (Endian::NotApplicable, &s[1..]),
            b'=' => (Endian::Little, &s[1..]),
            _ => (Endian::Little, s),
        };
        let kind_c = rest.as_bytes().first().copied().ok_or("no type letter")?;
        if rest == "O" {
            // an object array: readable only with the vlen-utf8 or vlen-bytes filter, checked by
            // the caller (other object arrays are left out with a warning)
            return Ok(Dtype {
                kind: Kind::VlenUtf8,
                endian: Endian::NotApplicable,
            });
        }
        let size: usize = rest[1..]
            .parse()
            .map_err(|_| "size after the type letter is not a number")?;
        use AtomicType as A;
        let kind = match (kind_c, size) {
            (b'b', 1) => Kind::Num(A::UByte),
            (b'i', 1) => Kind::Num(A::Byte),
            (b'i', 2) => Kind::Num(A::Short),
            (b'i', 4) => Kind::Num(A::Int),
            (b'i', 8) => Kind::Num(A::Int64),
            (b'u', 1) => Kind::Num(A::UByte),
            (b'u', 2) => Kind::Num(A::UShort),
            (b'u', 4) => Kind::Num(A::UInt),
            (b'u', 8) => Kind::Num(A::UInt64),
            (b'f', 4) => Kind::Num(A::Float),
            (b'f', 8) => Kind::Num(A::Double),
            (b'f', 2) => Kind::Half,
            (b'f', _) => return Err("only 2-, 4- and 8-byte floats are read"),
            (b'i' | b'u', _) => return Err("integer size must be 1, 2, 4 or 8"),
            (b'S' | b'U', 1) => Kind::Char,
            (b'S', n) if (2..=MAX_STRLEN).contains(&n) => Kind::Bytes(n),
            (b'U', n) if (2..=MAX_STRLEN).contains(&n) => Kind::Unicode(n),
            (b'S' | b'U', _) => return Err("string length must be 1 to 1048576"),
            (b'c', _) => return Err("complex numbers have no netCDF type"),
            (b'm' | b'M', _) => return Err("datetime/timedelta have no netCDF type"),
            (b'O', _) => return Err("object arrays have no size after \"O\""),
            _ => return Err("unknown type letter"),
        };
        Ok(Dtype { kind, endian })
    }

    /// Bytes per stored element.
    pub fn size(&self) -> usize {
        match self.kind {
            Kind::Num(t) => t.size(),
            Kind::Half => 2,
            Kind::Char => 1,
            Kind::Bytes(n) => n,
            Kind::Unicode(n) => 4 * n,
            Kind::VlenUtf8 => 8,
        }
    }

    /// The netCDF type.
    pub fn atomic(&self) -> AtomicType {
        match self.kind {
            Kind::Num(t) => t,
            Kind::Half => AtomicType::Float,
            Kind::Char => AtomicType::Char,
            Kind::Bytes(_) | Kind::Unicode(_) | Kind::VlenUtf8 => AtomicType::String,
        }
    }

    /// True when stored big-endian (multi-byte numbers only).
    pub fn big_endian(&self) -> bool {
        self.endian == Endian::Big
    }
}

/// The netCDF type an attribute type string of `_nczarr_attr` names: a dtype, or (NCZarr
/// version 1) a netCDF type code such as `"4"`.
pub(crate) fn attr_type(s: &str) -> Option<AtomicType> {
    if let Ok(code) = s.trim().parse::<u32>() {
        return AtomicType::from_code(code);
    }
    Dtype::parse(s).ok().map(|d| d.atomic())
}

/// The dtype of a numeric type (`<i4`, `>f8`; one-byte types `|i1`/`|u1`, as NumPy spells
/// them: zarr-python 3 refuses `<i1`).
pub(crate) fn numeric_dtype(t: AtomicType, big: bool) -> String {
    let letter = match t {
        AtomicType::Byte | AtomicType::Short | AtomicType::Int | AtomicType::Int64 => 'i',
        AtomicType::Float | AtomicType::Double => 'f',
        _ => 'u',
    };
    let order = match (t.size(), big) {
        (1, _) => '|',
        (_, true) => '>',
        (_, false) => '<',
    };
    format!("{order}{letter}{}", t.size())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        use AtomicType as A;
        let k = |s: &str| Dtype::parse(s).map(|d| (d.kind, d.size()));
        assert_eq!(k("<f4"), Ok((Kind::Num(A::Float), 4)));
        assert_eq!(k(">f2"), Ok((Kind::Half, 2)));
        assert_eq!(k(">i2"), Ok((Kind::Num(A::Short), 2)));
        assert_eq!(k("|u1"), Ok((Kind::Num(A::UByte), 1)));
        assert_eq!(k("|b1"), Ok((Kind::Num(A::UByte), 1)));
        assert_eq!(k("<u8"), Ok((Kind::Num(A::UInt64), 8)));
        assert_eq!(k(">S1"), Ok((Kind::Char, 1)));
        assert_eq!(k("<U1"), Ok((Kind::Char, 1)));
        assert_eq!(k("|S12"), Ok((Kind::Bytes(12), 12)));
        assert_eq!(k("<U3"), Ok((Kind::Unicode(3), 12)));
        assert_eq!(k("|O"), Ok((Kind::VlenUtf8, 8)));
        assert!(Dtype::parse(">i2").unwrap().big_endian());
        for bad in [
            "<c8",
            "<M8",
            "|O8",
            "<f16",
            "<i3",
            "x",
            "|S0",
            "<U99999999",
            "<iX",
        ] {
            assert!(Dtype::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn attr_types() {
        assert_eq!(attr_type("4"), Some(AtomicType::Int));
        assert_eq!(attr_type("2"), Some(AtomicType::Char));
        assert_eq!(attr_type("<U1"), Some(AtomicType::Char));
        assert_eq!(attr_type("<i2"), Some(AtomicType::Short));
        assert_eq!(attr_type("|S8"), Some(AtomicType::String));
        assert_eq!(attr_type("99"), None);
        assert_eq!(numeric_dtype(AtomicType::Double, true), ">f8");
        assert_eq!(numeric_dtype(AtomicType::UByte, false), "|u1");
        assert_eq!(numeric_dtype(AtomicType::Byte, true), "|i1");
    }
}
