//! netCDF types and values as HDF5 datatypes and raw bytes.

use nc_dataset::{AtomicType, Values};

use crate::format::datatype::Datatype;

/// The HDF5 datatype netCDF-C gives an atomic type in the requested byte order.
pub fn atomic_datatype(t: AtomicType, big: bool) -> Datatype {
    let int = |size: u32, signed: bool| Datatype::Int { size, signed, big };
    match t {
        AtomicType::Byte => int(1, true),
        AtomicType::UByte => int(1, false),
        AtomicType::Short => int(2, true),
        AtomicType::UShort => int(2, false),
        AtomicType::Int => int(4, true),
        AtomicType::UInt => int(4, false),
        AtomicType::Int64 => int(8, true),
        AtomicType::UInt64 => int(8, false),
        AtomicType::Float => Datatype::Float { size: 4, big },
        AtomicType::Double => Datatype::Float { size: 8, big },
        AtomicType::Char => Datatype::FixedString { size: 1 },
        AtomicType::String => Datatype::VarString,
    }
}

/// Raw bytes of fixed-size atomic values (not strings or user types) in little- or big-endian
/// order; None for values without a fixed-size atomic image.
pub fn atomic_bytes(v: &Values, big: bool) -> Option<Vec<u8>> {
    macro_rules! conv {
        ($xs:expr) => {{
            let mut out = Vec::with_capacity(std::mem::size_of_val(&$xs[..]));
            for x in $xs.iter() {
                if big {
                    out.extend_from_slice(&x.to_be_bytes());
                } else {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            out
        }};
    }
    Some(match v {
        Values::Byte(x) => conv!(x),
        Values::Char(x) => x.clone(),
        Values::UByte(x) => x.clone(),
        Values::Short(x) => conv!(x),
        Values::UShort(x) => conv!(x),
        Values::Int(x) => conv!(x),
        Values::UInt(x) => conv!(x),
        Values::Int64(x) => conv!(x),
        Values::UInt64(x) => conv!(x),
        Values::Float(x) => conv!(x),
        Values::Double(x) => conv!(x),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_both_orders() {
        let v = Values::Short(vec![1, -2]);
        assert_eq!(atomic_bytes(&v, false), Some(vec![1, 0, 0xfe, 0xff]));
        assert_eq!(atomic_bytes(&v, true), Some(vec![0, 1, 0xff, 0xfe]));
        assert_eq!(
            atomic_bytes(&Values::Char(b"ab".to_vec()), true),
            Some(b"ab".to_vec())
        );
        assert_eq!(atomic_bytes(&Values::String(vec![None]), false), None);
    }
}
