//! Typed value vectors: one `Vec` per atomic type, so N values cost N × element size.

use crate::{AtomicType, NcString};

/// A vector of values of one type. Enum-typed data is stored as its base integer type;
/// user types use the recursive variants.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// byte
    Byte(Vec<i8>),
    /// char (raw bytes, not necessarily UTF-8)
    Char(Vec<u8>),
    /// short
    Short(Vec<i16>),
    /// int
    Int(Vec<i32>),
    /// float
    Float(Vec<f32>),
    /// double
    Double(Vec<f64>),
    /// ubyte
    UByte(Vec<u8>),
    /// ushort
    UShort(Vec<u16>),
    /// uint
    UInt(Vec<u32>),
    /// int64
    Int64(Vec<i64>),
    /// uint64
    UInt64(Vec<u64>),
    /// string, as the bytes the file holds (not necessarily UTF-8); `None` is a null string
    /// pointer (NC_STRING fill is `""` but nulls exist in files)
    String(Vec<Option<NcString>>),
    /// opaque values of `size` bytes each, concatenated
    Opaque {
        /// bytes per value
        size: usize,
        /// `len * size` bytes
        bytes: Vec<u8>,
    },
    /// vlen values: each element is a sequence of the base type
    Vlen(Vec<Values>),
    /// compound values: each element is one `Values` per field (with the field's array length)
    Compound(Vec<Vec<Values>>),
}

macro_rules! each_atomic {
    ($v:expr, $x:ident => $body:expr, $other:pat => $obody:expr) => {
        match $v {
            Values::Byte($x) => $body,
            Values::Char($x) => $body,
            Values::Short($x) => $body,
            Values::Int($x) => $body,
            Values::Float($x) => $body,
            Values::Double($x) => $body,
            Values::UByte($x) => $body,
            Values::UShort($x) => $body,
            Values::UInt($x) => $body,
            Values::Int64($x) => $body,
            Values::UInt64($x) => $body,
            Values::String($x) => $body,
            $other => $obody,
        }
    };
}

impl Values {
    /// An empty vector for an atomic type.
    pub fn empty(t: AtomicType) -> Values {
        Values::with_capacity(t, 0)
    }

    /// An empty vector for an atomic type with room for `n` elements.
    pub fn with_capacity(t: AtomicType, n: usize) -> Values {
        match t {
            AtomicType::Byte => Values::Byte(Vec::with_capacity(n)),
            AtomicType::Char => Values::Char(Vec::with_capacity(n)),
            AtomicType::Short => Values::Short(Vec::with_capacity(n)),
            AtomicType::Int => Values::Int(Vec::with_capacity(n)),
            AtomicType::Float => Values::Float(Vec::with_capacity(n)),
            AtomicType::Double => Values::Double(Vec::with_capacity(n)),
            AtomicType::UByte => Values::UByte(Vec::with_capacity(n)),
            AtomicType::UShort => Values::UShort(Vec::with_capacity(n)),
            AtomicType::UInt => Values::UInt(Vec::with_capacity(n)),
            AtomicType::Int64 => Values::Int64(Vec::with_capacity(n)),
            AtomicType::UInt64 => Values::UInt64(Vec::with_capacity(n)),
            AtomicType::String => Values::String(Vec::with_capacity(n)),
        }
    }

    /// The atomic type of the elements, if atomic.
    pub fn atomic_type(&self) -> Option<AtomicType> {
        Some(match self {
            Values::Byte(_) => AtomicType::Byte,
            Values::Char(_) => AtomicType::Char,
            Values::Short(_) => AtomicType::Short,
            Values::Int(_) => AtomicType::Int,
            Values::Float(_) => AtomicType::Float,
            Values::Double(_) => AtomicType::Double,
            Values::UByte(_) => AtomicType::UByte,
            Values::UShort(_) => AtomicType::UShort,
            Values::UInt(_) => AtomicType::UInt,
            Values::Int64(_) => AtomicType::Int64,
            Values::UInt64(_) => AtomicType::UInt64,
            Values::String(_) => AtomicType::String,
            _ => return None,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        each_atomic!(self, v => v.len(), other => match other {
            Values::Opaque { size, bytes } => if *size == 0 { 0 } else { bytes.len() / size },
            Values::Vlen(v) => v.len(),
            Values::Compound(v) => v.len(),
            _ => 0,
        })
    }

    /// Remove every element, keeping the allocation.
    pub fn clear(&mut self) {
        each_atomic!(self, v => v.clear(), other => match other {
            Values::Opaque { bytes, .. } => bytes.clear(),
            Values::Vlen(v) => v.clear(),
            Values::Compound(v) => v.clear(),
            _ => {}
        })
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `start..start+count` as a new vector.
    ///
    /// # Panics
    /// Panics if the range is out of bounds (a caller bug: ranges come from validated shapes).
    pub fn slice(&self, start: usize, count: usize) -> Values {
        let r = start..start + count;
        match self {
            Values::Byte(v) => Values::Byte(v[r].to_vec()),
            Values::Char(v) => Values::Char(v[r].to_vec()),
            Values::Short(v) => Values::Short(v[r].to_vec()),
            Values::Int(v) => Values::Int(v[r].to_vec()),
            Values::Float(v) => Values::Float(v[r].to_vec()),
            Values::Double(v) => Values::Double(v[r].to_vec()),
            Values::UByte(v) => Values::UByte(v[r].to_vec()),
            Values::UShort(v) => Values::UShort(v[r].to_vec()),
            Values::UInt(v) => Values::UInt(v[r].to_vec()),
            Values::Int64(v) => Values::Int64(v[r].to_vec()),
            Values::UInt64(v) => Values::UInt64(v[r].to_vec()),
            Values::String(v) => Values::String(v[r].to_vec()),
            Values::Opaque { size, bytes } => Values::Opaque {
                size: *size,
                bytes: bytes[r.start * size..r.end * size].to_vec(),
            },
            Values::Vlen(v) => Values::Vlen(v[r].to_vec()),
            Values::Compound(v) => Values::Compound(v[r].to_vec()),
        }
    }

    /// The elements at `idx`, in that order, as a new vector (a strided subset's picks).
    ///
    /// # Panics
    /// Panics if an index is out of bounds (a caller bug: indices come from validated shapes).
    pub fn gather(&self, idx: &[usize]) -> Values {
        fn pick<T: Clone>(v: &[T], idx: &[usize]) -> Vec<T> {
            idx.iter().map(|&i| v[i].clone()).collect()
        }
        match self {
            Values::Byte(v) => Values::Byte(pick(v, idx)),
            Values::Char(v) => Values::Char(pick(v, idx)),
            Values::Short(v) => Values::Short(pick(v, idx)),
            Values::Int(v) => Values::Int(pick(v, idx)),
            Values::Float(v) => Values::Float(pick(v, idx)),
            Values::Double(v) => Values::Double(pick(v, idx)),
            Values::UByte(v) => Values::UByte(pick(v, idx)),
            Values::UShort(v) => Values::UShort(pick(v, idx)),
            Values::UInt(v) => Values::UInt(pick(v, idx)),
            Values::Int64(v) => Values::Int64(pick(v, idx)),
            Values::UInt64(v) => Values::UInt64(pick(v, idx)),
            Values::String(v) => Values::String(pick(v, idx)),
            Values::Opaque { size, bytes } => Values::Opaque {
                size: *size,
                bytes: idx
                    .iter()
                    .flat_map(|&i| bytes[i * size..(i + 1) * size].iter().copied())
                    .collect(),
            },
            Values::Vlen(v) => Values::Vlen(pick(v, idx)),
            Values::Compound(v) => Values::Compound(pick(v, idx)),
        }
    }

    /// Append all elements of `other` (must be the same variant).
    ///
    /// Returns false (and appends nothing) if the variants differ.
    pub fn extend_from(&mut self, other: &Values) -> bool {
        match (self, other) {
            (Values::Byte(a), Values::Byte(b)) => a.extend_from_slice(b),
            (Values::Char(a), Values::Char(b)) => a.extend_from_slice(b),
            (Values::Short(a), Values::Short(b)) => a.extend_from_slice(b),
            (Values::Int(a), Values::Int(b)) => a.extend_from_slice(b),
            (Values::Float(a), Values::Float(b)) => a.extend_from_slice(b),
            (Values::Double(a), Values::Double(b)) => a.extend_from_slice(b),
            (Values::UByte(a), Values::UByte(b)) => a.extend_from_slice(b),
            (Values::UShort(a), Values::UShort(b)) => a.extend_from_slice(b),
            (Values::UInt(a), Values::UInt(b)) => a.extend_from_slice(b),
            (Values::Int64(a), Values::Int64(b)) => a.extend_from_slice(b),
            (Values::UInt64(a), Values::UInt64(b)) => a.extend_from_slice(b),
            (Values::String(a), Values::String(b)) => a.extend_from_slice(b),
            (Values::Opaque { size: sa, bytes: a }, Values::Opaque { size: sb, bytes: b })
                if sa == sb =>
            {
                a.extend_from_slice(b)
            }
            (Values::Vlen(a), Values::Vlen(b)) => a.extend_from_slice(b),
            (Values::Compound(a), Values::Compound(b)) => a.extend_from_slice(b),
            _ => return false,
        }
        true
    }

    /// Element `i` as f64, for numeric atomic types (None for strings and user types).
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        Some(match self {
            Values::Byte(v) => f64::from(*v.get(i)?),
            Values::Char(v) => f64::from(*v.get(i)?),
            Values::Short(v) => f64::from(*v.get(i)?),
            Values::Int(v) => f64::from(*v.get(i)?),
            Values::Float(v) => f64::from(*v.get(i)?),
            Values::Double(v) => *v.get(i)?,
            Values::UByte(v) => f64::from(*v.get(i)?),
            Values::UShort(v) => f64::from(*v.get(i)?),
            Values::UInt(v) => f64::from(*v.get(i)?),
            Values::Int64(v) => *v.get(i)? as f64,
            Values::UInt64(v) => *v.get(i)? as f64,
            _ => return None,
        })
    }

    /// Element `i` as i128, for integer and char types (None otherwise).
    pub fn get_i128(&self, i: usize) -> Option<i128> {
        Some(match self {
            Values::Byte(v) => i128::from(*v.get(i)?),
            Values::Char(v) => i128::from(*v.get(i)?),
            Values::Short(v) => i128::from(*v.get(i)?),
            Values::Int(v) => i128::from(*v.get(i)?),
            Values::UByte(v) => i128::from(*v.get(i)?),
            Values::UShort(v) => i128::from(*v.get(i)?),
            Values::UInt(v) => i128::from(*v.get(i)?),
            Values::Int64(v) => i128::from(*v.get(i)?),
            Values::UInt64(v) => i128::from(*v.get(i)?),
            _ => return None,
        })
    }

    /// Append the elements as little-endian bytes, for fixed-size atomic types (false, and
    /// nothing appended, for strings and user types).
    pub fn extend_le_bytes(&self, out: &mut Vec<u8>) -> bool {
        macro_rules! le {
            ($v:expr) => {{
                out.reserve(std::mem::size_of_val($v.as_slice()));
                for x in $v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }};
        }
        match self {
            Values::Byte(v) => le!(v),
            Values::Char(v) | Values::UByte(v) => out.extend_from_slice(v),
            Values::Short(v) => le!(v),
            Values::Int(v) => le!(v),
            Values::Float(v) => le!(v),
            Values::Double(v) => le!(v),
            Values::UShort(v) => le!(v),
            Values::UInt(v) => le!(v),
            Values::Int64(v) => le!(v),
            Values::UInt64(v) => le!(v),
            _ => return false,
        }
        true
    }

    /// Values of the fixed-size atomic type `t` from little-endian bytes (a trailing partial
    /// element is ignored); `None` for `string`.
    pub fn from_le_bytes(t: AtomicType, bytes: &[u8]) -> Option<Values> {
        Values::from_bytes::<false>(t, bytes)
    }

    /// Values of the fixed-size atomic type `t` from big-endian bytes (a trailing partial
    /// element is ignored); `None` for `string`.
    pub fn from_be_bytes(t: AtomicType, bytes: &[u8]) -> Option<Values> {
        Values::from_bytes::<true>(t, bytes)
    }

    fn from_bytes<const BIG: bool>(t: AtomicType, bytes: &[u8]) -> Option<Values> {
        macro_rules! get {
            ($variant:ident, $ty:ty) => {{
                const N: usize = std::mem::size_of::<$ty>();
                Values::$variant(
                    bytes
                        .chunks_exact(N)
                        .map(|c| {
                            let mut a = [0u8; N];
                            a.copy_from_slice(c);
                            if BIG {
                                <$ty>::from_be_bytes(a)
                            } else {
                                <$ty>::from_le_bytes(a)
                            }
                        })
                        .collect(),
                )
            }};
        }
        Some(match t {
            AtomicType::Byte => get!(Byte, i8),
            AtomicType::Char => Values::Char(bytes.to_vec()),
            AtomicType::UByte => Values::UByte(bytes.to_vec()),
            AtomicType::Short => get!(Short, i16),
            AtomicType::Int => get!(Int, i32),
            AtomicType::Float => get!(Float, f32),
            AtomicType::Double => get!(Double, f64),
            AtomicType::UShort => get!(UShort, u16),
            AtomicType::UInt => get!(UInt, u32),
            AtomicType::Int64 => get!(Int64, i64),
            AtomicType::UInt64 => get!(UInt64, u64),
            AtomicType::String => return None,
        })
    }

    /// A vector of `n` copies of element 0 of `one` (used to expand a fill value).
    ///
    /// Returns None if `one` is empty.
    pub fn repeat_first(one: &Values, n: usize) -> Option<Values> {
        if one.is_empty() {
            return None;
        }
        Some(match one {
            Values::Byte(v) => Values::Byte(vec![v[0]; n]),
            Values::Char(v) => Values::Char(vec![v[0]; n]),
            Values::Short(v) => Values::Short(vec![v[0]; n]),
            Values::Int(v) => Values::Int(vec![v[0]; n]),
            Values::Float(v) => Values::Float(vec![v[0]; n]),
            Values::Double(v) => Values::Double(vec![v[0]; n]),
            Values::UByte(v) => Values::UByte(vec![v[0]; n]),
            Values::UShort(v) => Values::UShort(vec![v[0]; n]),
            Values::UInt(v) => Values::UInt(vec![v[0]; n]),
            Values::Int64(v) => Values::Int64(vec![v[0]; n]),
            Values::UInt64(v) => Values::UInt64(vec![v[0]; n]),
            Values::String(v) => Values::String(vec![v[0].clone(); n]),
            Values::Opaque { size, bytes } => Values::Opaque {
                size: *size,
                bytes: bytes[..*size].repeat(n),
            },
            Values::Vlen(v) => Values::Vlen(vec![v[0].clone(); n]),
            Values::Compound(v) => Values::Compound(vec![v[0].clone(); n]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn little_endian_bytes_round_trip() {
        let cases = [
            Values::Byte(vec![-1, 2]),
            Values::Char(b"ab".to_vec()),
            Values::Short(vec![-2, 0x0102]),
            Values::Int(vec![0x0102_0304, -5]),
            Values::Float(vec![1.5, f32::NAN]),
            Values::Double(vec![-0.25, 1e300]),
            Values::UShort(vec![65535]),
            Values::UInt(vec![4_000_000_000]),
            Values::Int64(vec![i64::MIN]),
            Values::UInt64(vec![u64::MAX - 1]),
        ];
        for v in cases {
            let mut b = Vec::new();
            assert!(v.extend_le_bytes(&mut b));
            let t = v.atomic_type().unwrap();
            assert_eq!(b.len(), v.len() * t.size());
            let back = Values::from_le_bytes(t, &b).unwrap();
            // compare bits: NaN != NaN
            let mut b2 = Vec::new();
            back.extend_le_bytes(&mut b2);
            assert_eq!(b, b2, "{v:?}");
            assert_eq!(back.len(), v.len());
        }
        let mut b = Vec::new();
        Values::Short(vec![0x0102]).extend_le_bytes(&mut b);
        assert_eq!(b, [2, 1]);
        assert!(!Values::String(vec![None]).extend_le_bytes(&mut b));
        assert_eq!(Values::from_le_bytes(AtomicType::String, &[]), None);
    }

    #[test]
    fn big_endian_bytes() {
        assert_eq!(
            Values::from_be_bytes(AtomicType::Short, &[1, 2, 0xff, 0xfe, 9]),
            Some(Values::Short(vec![0x0102, -2]))
        );
        assert_eq!(
            Values::from_be_bytes(AtomicType::Double, &1.5f64.to_be_bytes()),
            Some(Values::Double(vec![1.5]))
        );
        assert_eq!(Values::from_be_bytes(AtomicType::String, &[]), None);
    }
}
