//! Facts of the classic format shared by the reader and the writer: tags, widths, type codes,
//! padding, `vsize`, record size, and big-endian value coding.
//!
//! Spec: netCDF "File Format Specifications", classic format grammar (CDF-1), "The 64-bit
//! Offset Format" (CDF-2), and CDF-5 (the CDF-2 grammar with 64-bit counts and five more types).

use nc_dataset::{AtomicType, Format, Values};

/// `NC_DIMENSION` list tag.
pub(crate) const TAG_DIMENSION: u32 = 0x0A;
/// `NC_VARIABLE` list tag.
pub(crate) const TAG_VARIABLE: u32 = 0x0B;
/// `NC_ATTRIBUTE` list tag.
pub(crate) const TAG_ATTRIBUTE: u32 = 0x0C;

/// The version byte after `CDF`.
pub(crate) fn version_byte(format: Format) -> u8 {
    match format {
        Format::Offset64 => 2,
        Format::Cdf5 => 5,
        _ => 1,
    }
}

/// The format for a version byte.
pub(crate) fn format_of_version(v: u8) -> Option<Format> {
    match v {
        1 => Some(Format::Classic),
        2 => Some(Format::Offset64),
        5 => Some(Format::Cdf5),
        _ => None,
    }
}

/// Width in bytes of `NON_NEG` counts and lengths (`nelems`, dimension lengths, `vsize`,
/// `numrecs`): 8 in CDF-5, else 4.
pub(crate) fn count_width(format: Format) -> usize {
    if format == Format::Cdf5 {
        8
    } else {
        4
    }
}

/// Width in bytes of a variable's `begin`: 4 in CDF-1, else 8.
pub(crate) fn offset_width(format: Format) -> usize {
    if format == Format::Classic {
        4
    } else {
        8
    }
}

/// Round `n` up to a multiple of 4 (header and data padding); None on overflow.
pub(crate) fn pad4(n: u64) -> Option<u64> {
    n.checked_add(3).map(|m| m & !3)
}

/// The atomic type of a type code, if valid in `format` (CDF-1/2: byte .. double; CDF-5 adds
/// ubyte .. uint64; strings never).
pub(crate) fn type_from_code(code: u32, format: Format) -> Option<AtomicType> {
    let t = AtomicType::from_code(code)?;
    if t.is_classic() || (format == Format::Cdf5 && t.is_cdf5_only()) {
        Some(t)
    } else {
        None
    }
}

/// True if `format` can store type `t`.
pub(crate) fn type_in_format(t: AtomicType, format: Format) -> bool {
    type_from_code(t.code(), format) == Some(t)
}

/// External size of one value.
pub(crate) fn ext_size(t: AtomicType) -> u64 {
    t.size() as u64
}

/// Where one variable's data lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VarPlace {
    /// File offset of the first value (of record 0 for record variables).
    pub begin: u64,
    /// Values per record (record variables) or in total (others).
    pub elems: u64,
    /// `elems * size`, unpadded.
    pub bytes: u64,
    /// `bytes` rounded up to 4: the space reserved (per record for record variables).
    pub vsize: u64,
    /// True for record variables.
    pub record: bool,
}

/// Values and bytes of a variable from its type and shape (the record dimension, if `record`,
/// is left out). None on overflow.
pub(crate) fn var_size(t: AtomicType, shape: &[u64], record: bool) -> Option<(u64, u64, u64)> {
    let skip = usize::from(record);
    let elems = shape
        .iter()
        .skip(skip)
        .try_fold(1u64, |a, &b| a.checked_mul(b))?;
    let bytes = elems.checked_mul(ext_size(t))?;
    Some((elems, bytes, pad4(bytes)?))
}

/// The record size: the sum of the record variables' `vsize`, except that with exactly one
/// record variable records are not padded ("Note on padding").
pub(crate) fn record_size(places: &[VarPlace]) -> Option<u64> {
    let recs: Vec<&VarPlace> = places.iter().filter(|p| p.record).collect();
    match recs.as_slice() {
        [] => Some(0),
        [one] => Some(one.bytes),
        many => many.iter().try_fold(0u64, |a, p| a.checked_add(p.vsize)),
    }
}

/// Append `v` as big-endian bytes. Returns false if `v` is not an atomic numeric or char vector
/// (strings and user types have no classic encoding).
pub(crate) fn encode_be(v: &Values, out: &mut Vec<u8>) -> bool {
    macro_rules! put {
        ($xs:expr) => {{
            out.reserve(std::mem::size_of_val(&$xs[..]));
            for x in $xs.iter() {
                out.extend_from_slice(&x.to_be_bytes());
            }
        }};
    }
    match v {
        Values::Byte(xs) => put!(xs),
        Values::Char(xs) => out.extend_from_slice(xs),
        Values::UByte(xs) => out.extend_from_slice(xs),
        Values::Short(xs) => put!(xs),
        Values::Int(xs) => put!(xs),
        Values::Float(xs) => put!(xs),
        Values::Double(xs) => put!(xs),
        Values::UShort(xs) => put!(xs),
        Values::UInt(xs) => put!(xs),
        Values::Int64(xs) => put!(xs),
        Values::UInt64(xs) => put!(xs),
        _ => return false,
    }
    true
}

/// Decode big-endian bytes (a whole number of values) into a vector of type `t`.
/// Strings decode to an empty vector (they never occur in classic files).
pub(crate) fn decode_be(t: AtomicType, bytes: &[u8]) -> Values {
    Values::from_be_bytes(t, bytes).unwrap_or(Values::String(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_to_four() {
        assert_eq!(
            [0, 1, 2, 3, 4, 5].map(pad4),
            [Some(0), Some(4), Some(4), Some(4), Some(4), Some(8)]
        );
        assert_eq!(pad4(u64::MAX), None);
    }

    #[test]
    fn single_record_variable_is_not_padded() {
        let p = |bytes: u64, record: bool| VarPlace {
            begin: 0,
            elems: bytes,
            bytes,
            vsize: pad4(bytes).unwrap_or(0),
            record,
        };
        assert_eq!(record_size(&[p(3, true), p(5, false)]), Some(3));
        assert_eq!(record_size(&[p(3, true), p(5, true)]), Some(12));
        assert_eq!(record_size(&[p(3, false)]), Some(0));
    }

    #[test]
    fn big_endian_round_trip() {
        let v = Values::Short(vec![1, -2, 0x1234]);
        let mut out = Vec::new();
        assert!(encode_be(&v, &mut out));
        assert_eq!(out, [0, 1, 0xff, 0xfe, 0x12, 0x34]);
        assert_eq!(decode_be(AtomicType::Short, &out), v);
        let d = Values::Double(vec![1.5]);
        out.clear();
        assert!(encode_be(&d, &mut out));
        assert_eq!(out, [0x3f, 0xf8, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_be(AtomicType::Double, &out), d);
    }

    #[test]
    fn type_codes_by_format() {
        assert_eq!(type_from_code(4, Format::Classic), Some(AtomicType::Int));
        assert_eq!(type_from_code(7, Format::Offset64), None);
        assert_eq!(type_from_code(10, Format::Cdf5), Some(AtomicType::Int64));
        assert_eq!(type_from_code(12, Format::Cdf5), None);
        assert_eq!(type_from_code(0, Format::Cdf5), None);
    }
}
