//! HDF5 datatypes to netCDF types, and stored bytes to [`Values`].
//!
//! netCDF-4 maps its atomic types onto HDF5 integer, float and string classes (NC_CHAR is a
//! one-byte fixed string, NC_STRING a variable-length string); user-defined types are committed
//! HDF5 datatypes, matched structurally the way netCDF-C matches them with `H5Tequal`.

use hdf5_reader::messages::datatype::{Datatype, StringSize, VarLenKind};
use hdf5_reader::ByteOrder;
use nc_dataset::{AtomicType, NcString, NcType, TypeId, Values};

use crate::h5::H5;
use crate::Hdf5Error;

/// The user types of a file, with the HDF5 datatype each was committed as.
#[derive(Debug, Default)]
pub(crate) struct TypeTable {
    pub entries: Vec<(TypeId, Datatype)>,
}

impl TypeTable {
    /// The netCDF type of an HDF5 datatype. `as_dataset` makes fixed strings longer than one
    /// byte NC_STRING (netCDF-C reads such datasets as strings; attributes become char).
    pub fn nc_type(&self, dt: &Datatype, as_dataset: bool) -> Option<NcType> {
        if let Some(a) = atomic(dt, as_dataset) {
            return Some(NcType::Atomic(a));
        }
        self.entries
            .iter()
            .find(|(_, d)| same_type(d, dt))
            .map(|(id, _)| NcType::User(*id))
    }
}

/// `dt` without the compound members netCDF cannot type (h5py's bool and complex members,
/// an uncommitted nested compound), as `meta::user_kind` leaves them out of the netCDF type:
/// the members kept keep their offsets and the element its size, so the stored bytes decode
/// to exactly the members the type declares. Each member left out is in `dropped`, named
/// `outer.inner` when nested, with its datatype.
pub(crate) fn typed_part(
    dt: &Datatype,
    table: &TypeTable,
    dropped: &mut Vec<(String, Datatype)>,
) -> Datatype {
    typed_part_in(dt, table, "", dropped, 0)
}

fn typed_part_in(
    dt: &Datatype,
    table: &TypeTable,
    path: &str,
    dropped: &mut Vec<(String, Datatype)>,
    depth: usize,
) -> Datatype {
    if depth > 32 {
        return dt.clone();
    }
    match dt {
        Datatype::Compound { size, fields } => Datatype::Compound {
            size: *size,
            fields: fields
                .iter()
                .filter_map(|f| {
                    let name = if path.is_empty() {
                        f.name.clone()
                    } else {
                        format!("{path}.{}", f.name)
                    };
                    let base = match &f.datatype {
                        Datatype::Array { base, .. } => base.as_ref(),
                        other => other,
                    };
                    if table.nc_type(base, false).is_none() {
                        dropped.push((name, f.datatype.clone()));
                        return None;
                    }
                    Some(hdf5_reader::messages::datatype::CompoundField {
                        datatype: typed_part_in(&f.datatype, table, &name, dropped, depth + 1),
                        ..f.clone()
                    })
                })
                .collect(),
        },
        Datatype::Array { base, dims } => Datatype::Array {
            base: Box::new(typed_part_in(base, table, path, dropped, depth + 1)),
            dims: dims.clone(),
        },
        Datatype::VarLen {
            base,
            kind,
            encoding,
            padding,
        } => Datatype::VarLen {
            base: Box::new(typed_part_in(base, table, path, dropped, depth + 1)),
            kind: *kind,
            encoding: *encoding,
            padding: *padding,
        },
        other => other.clone(),
    }
}

/// Structural equality that ignores what netCDF cannot see (string padding of char members).
fn same_type(a: &Datatype, b: &Datatype) -> bool {
    a == b
}

/// The atomic netCDF type of an HDF5 datatype, if it is one.
pub(crate) fn atomic(dt: &Datatype, as_dataset: bool) -> Option<AtomicType> {
    Some(match dt {
        Datatype::FixedPoint { size, signed, .. } => {
            AtomicType::integer(usize::from(*size), *signed)?
        }
        // half floats widen to float, as netCDF-C 4.9's native-type mapping reads them
        Datatype::FloatingPoint { size: 2 | 4, .. } => AtomicType::Float,
        Datatype::FloatingPoint { size: 8, .. } => AtomicType::Double,
        Datatype::String {
            size: StringSize::Fixed(n),
            ..
        } => {
            if *n > 1 && as_dataset {
                AtomicType::String
            } else {
                AtomicType::Char
            }
        }
        Datatype::String {
            size: StringSize::Variable,
            ..
        } => AtomicType::String,
        Datatype::VarLen {
            kind: VarLenKind::String,
            ..
        } => AtomicType::String,
        _ => return None,
    })
}

/// The netCDF type netCDF-C gives an integer of a width netCDF has no type for (3, 5 to 7, 9
/// to 16 bytes: PyTables' 128-bit integers): HDF5's native type of at least that width, or
/// the 64-bit one for wider integers, of the same sign. Values are converted to it with
/// clamping, as HDF5 converts them (`1e30` in 128 bits reads as the largest `int64`).
pub(crate) fn widened_integer(size: u8, signed: bool) -> Option<AtomicType> {
    match size {
        3 => Some(if signed {
            AtomicType::Int
        } else {
            AtomicType::UInt
        }),
        5..=7 | 9..=16 => Some(if signed {
            AtomicType::Int64
        } else {
            AtomicType::UInt64
        }),
        _ => None,
    }
}

/// Each `size`-byte integer (at most 16) of `bytes` as an i128 (u128 values past i128's
/// range clamp to its largest, which every caller clamps further anyway).
fn wide_ints(
    bytes: &[u8],
    size: u8,
    signed: bool,
    order: ByteOrder,
) -> impl Iterator<Item = i128> + '_ {
    let w = usize::from(size);
    bytes.chunks_exact(w).map(move |c| {
        let mut le = [0u8; 16];
        for (i, b) in le.iter_mut().take(w).enumerate() {
            *b = match order {
                ByteOrder::LittleEndian => c[i],
                ByteOrder::BigEndian => c[w - 1 - i],
            };
        }
        let negative = signed && le[w - 1] & 0x80 != 0;
        if negative {
            le[w..].fill(0xff);
        }
        let v = u128::from_le_bytes(le);
        if signed {
            v as i128
        } else {
            i128::try_from(v).unwrap_or(i128::MAX)
        }
    })
}

/// The byte order of an atomic numeric datatype wider than one byte.
pub(crate) fn byte_order(dt: &Datatype) -> Option<ByteOrder> {
    match dt {
        Datatype::FixedPoint {
            size, byte_order, ..
        }
        | Datatype::FloatingPoint { size, byte_order }
            if *size > 1 =>
        {
            Some(*byte_order)
        }
        _ => None,
    }
}

/// Size in bytes of one stored element (vlen: the heap reference).
/// True when stored values of `dt` hold references into the file's global heap
/// (variable-length strings and sequences, references), anywhere inside it.
pub(crate) fn has_heap_refs(dt: &Datatype) -> bool {
    match dt {
        Datatype::String {
            size: StringSize::Variable,
            ..
        }
        | Datatype::VarLen { .. }
        | Datatype::Reference { .. } => true,
        Datatype::Compound { fields, .. } => fields.iter().any(|f| has_heap_refs(&f.datatype)),
        Datatype::Array { base, .. } => has_heap_refs(base),
        Datatype::Enum { base, .. } => has_heap_refs(base),
        _ => false,
    }
}

pub(crate) fn stored_size(dt: &Datatype, h5: &H5) -> Option<usize> {
    Some(match dt {
        Datatype::FixedPoint { size, .. }
        | Datatype::FloatingPoint { size, .. }
        | Datatype::Bitfield { size, .. } => usize::from(*size),
        Datatype::String {
            size: StringSize::Fixed(n),
            ..
        } => *n as usize,
        Datatype::String {
            size: StringSize::Variable,
            ..
        }
        | Datatype::VarLen { .. } => h5.vlen_ref_size(),
        Datatype::Compound { size, .. } | Datatype::Opaque { size, .. } => *size as usize,
        Datatype::Enum { base, .. } => stored_size(base, h5)?,
        Datatype::Array { base, dims } => {
            let n = dims
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))?;
            stored_size(base, h5)?.checked_mul(n)?
        }
        Datatype::Reference { size, .. } => usize::from(*size),
    })
}

/// Decodes stored bytes into values, following vlen references into the global heap.
pub(crate) struct Decoder<'a> {
    pub h5: &'a H5,
    /// Where (for messages).
    pub what: &'a str,
}

macro_rules! ints {
    ($bytes:expr, $n:expr, $t:ty, $order:expr) => {{
        const W: usize = std::mem::size_of::<$t>();
        $bytes
            .chunks_exact(W)
            .take($n)
            .map(|c| {
                let mut a = [0u8; W];
                a.copy_from_slice(c);
                match $order {
                    ByteOrder::LittleEndian => <$t>::from_le_bytes(a),
                    ByteOrder::BigEndian => <$t>::from_be_bytes(a),
                }
            })
            .collect::<Vec<$t>>()
    }};
}

impl Decoder<'_> {
    /// `n` elements of `dt` from `bytes`. `as_dataset` as in [`TypeTable::nc_type`].
    pub fn decode(
        &self,
        dt: &Datatype,
        bytes: &[u8],
        n: usize,
        as_dataset: bool,
    ) -> Result<Values, Hdf5Error> {
        self.decode_depth(dt, bytes, n, as_dataset, 0)
    }

    fn decode_depth(
        &self,
        dt: &Datatype,
        bytes: &[u8],
        n: usize,
        as_dataset: bool,
        depth: usize,
    ) -> Result<Values, Hdf5Error> {
        if depth > 32 {
            return Err(Hdf5Error::TooDeep {
                what: self.what.to_string(),
                limit: 32,
            });
        }
        let size = stored_size(dt, self.h5)
            .ok_or_else(|| Hdf5Error::unsupported(self.what, format!("datatype {dt:?}")))?;
        let need = size
            .checked_mul(n)
            .filter(|&need| need <= bytes.len())
            .ok_or_else(|| {
                Hdf5Error::invalid(
                    self.what,
                    format!(
                        "{n} elements of {size} bytes need more than the {} bytes stored",
                        bytes.len()
                    ),
                )
            })?;
        let bytes = &bytes[..need];
        Ok(match dt {
            Datatype::FixedPoint {
                size,
                signed,
                byte_order,
            } => {
                let o = *byte_order;
                match (size, signed) {
                    (1, true) => Values::Byte(bytes.iter().map(|&b| b as i8).collect()),
                    (1, false) => Values::UByte(bytes.to_vec()),
                    (2, true) => Values::Short(ints!(bytes, n, i16, o)),
                    (2, false) => Values::UShort(ints!(bytes, n, u16, o)),
                    (4, true) => Values::Int(ints!(bytes, n, i32, o)),
                    (4, false) => Values::UInt(ints!(bytes, n, u32, o)),
                    (8, true) => Values::Int64(ints!(bytes, n, i64, o)),
                    (8, false) => Values::UInt64(ints!(bytes, n, u64, o)),
                    // other widths (PyTables' 128-bit, 3-byte integers): the native type
                    // `widened_integer` names, values clamped as HDF5's conversion does
                    (&w, &s) => match widened_integer(w, s) {
                        Some(AtomicType::Int) => Values::Int(
                            wide_ints(bytes, w, s, o)
                                .map(|v| v.clamp(i32::MIN.into(), i32::MAX.into()) as i32)
                                .collect(),
                        ),
                        Some(AtomicType::UInt) => Values::UInt(
                            wide_ints(bytes, w, s, o)
                                .map(|v| v.clamp(0, u32::MAX.into()) as u32)
                                .collect(),
                        ),
                        Some(AtomicType::Int64) => Values::Int64(
                            wide_ints(bytes, w, s, o)
                                .map(|v| v.clamp(i64::MIN.into(), i64::MAX.into()) as i64)
                                .collect(),
                        ),
                        Some(AtomicType::UInt64) => Values::UInt64(
                            wide_ints(bytes, w, s, o)
                                .map(|v| v.clamp(0, u64::MAX.into()) as u64)
                                .collect(),
                        ),
                        _ => {
                            return Err(Hdf5Error::unsupported(
                                self.what,
                                format!("{w}-byte integers"),
                            ))
                        }
                    },
                }
            }
            Datatype::FloatingPoint {
                size: 2,
                byte_order,
            } => Values::Float(
                ints!(bytes, n, u16, *byte_order)
                    .into_iter()
                    .map(half_to_f32)
                    .collect(),
            ),
            Datatype::FloatingPoint {
                size: 4,
                byte_order,
            } => Values::Float(ints!(bytes, n, f32, *byte_order)),
            Datatype::FloatingPoint {
                size: 8,
                byte_order,
            } => Values::Double(ints!(bytes, n, f64, *byte_order)),
            Datatype::String {
                size: StringSize::Fixed(w),
                ..
            } => {
                if *w > 1 && as_dataset {
                    Values::String(
                        bytes
                            .chunks_exact(*w as usize)
                            .map(|c| Some(fixed_string(c)))
                            .collect(),
                    )
                } else {
                    Values::Char(bytes.to_vec())
                }
            }
            Datatype::String {
                size: StringSize::Variable,
                ..
            }
            | Datatype::VarLen {
                kind: VarLenKind::String,
                ..
            } => {
                let mut out = Vec::with_capacity(n);
                for r in bytes.chunks_exact(size) {
                    let (count, b) = self.h5.vlen_bytes(r, 1, self.what)?;
                    out.push(if count == 0 && is_null_ref(r, self.h5) {
                        None
                    } else {
                        Some(NcString::from(trim_nul(&b)))
                    });
                }
                Values::String(out)
            }
            Datatype::Enum { base, .. } => {
                self.decode_depth(base, bytes, n, as_dataset, depth + 1)?
            }
            Datatype::Opaque { size, .. } => Values::Opaque {
                size: *size as usize,
                bytes: bytes.to_vec(),
            },
            Datatype::VarLen { base, .. } => {
                let esize = stored_size(base, self.h5).ok_or_else(|| {
                    Hdf5Error::unsupported(self.what, format!("vlen of {base:?}"))
                })?;
                let mut out = Vec::with_capacity(n);
                for r in bytes.chunks_exact(size) {
                    let (count, b) = self.h5.vlen_bytes(r, esize, self.what)?;
                    // fixed-length strings longer than a byte are strings in a vlen,
                    // attribute or not (its type says so: `meta::user_kind`)
                    out.push(self.decode_depth(base, &b, count, true, depth + 1)?);
                }
                Values::Vlen(out)
            }
            Datatype::Compound { fields, .. } => {
                let mut out = Vec::with_capacity(n);
                for elem in bytes.chunks_exact(size.max(1)) {
                    let mut vals = Vec::with_capacity(fields.len());
                    for f in fields {
                        let (base, count) = match &f.datatype {
                            Datatype::Array { base, dims } => {
                                let c = dims
                                    .iter()
                                    .try_fold(1usize, |a, &d| {
                                        a.checked_mul(usize::try_from(d).ok()?)
                                    })
                                    .ok_or_else(|| {
                                        Hdf5Error::invalid(self.what, "array field too large")
                                    })?;
                                (base.as_ref(), c)
                            }
                            other => (other, 1),
                        };
                        let start = f.byte_offset as usize;
                        let fb = elem.get(start..).ok_or_else(|| {
                            Hdf5Error::invalid(
                                self.what,
                                format!("compound field \"{}\" lies outside its element", f.name),
                            )
                        })?;
                        // char members keep their bytes (NC_CHAR), as netCDF-C reads them
                        vals.push(self.decode_depth(base, fb, count, false, depth + 1)?);
                    }
                    out.push(vals);
                }
                Values::Compound(out)
            }
            other => {
                return Err(Hdf5Error::unsupported(
                    self.what,
                    format!("datatype {other:?}"),
                ))
            }
        })
    }
}

fn is_null_ref(r: &[u8], h5: &H5) -> bool {
    let os = usize::from(h5.os);
    r.get(4..4 + os)
        .is_some_and(|a| a.iter().all(|&b| b == 0) || a.iter().all(|&b| b == 0xff))
}

fn trim_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// A fixed-length string element as netCDF-C reads it: a C string, so it ends at the first
/// NUL whatever the padding (space padding is kept, as netCDF-C 4.9 / 4.10 show it).
/// One fixed-length string's text: up to its first NUL, whatever padding its datatype names.
pub(crate) fn fixed_string(c: &[u8]) -> NcString {
    NcString::from(trim_nul(c))
}

/// An IEEE 754 binary16 value widened to f32 (exact: every half is a float).
fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    match exp {
        // subnormal: frac * 2^-24
        0 => sign * frac * 2f32.powi(-24),
        0x1f if frac == 0.0 => sign * f32::INFINITY,
        0x1f => f32::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::half_to_f32;

    #[test]
    fn half_floats_widen_exactly() {
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc080), -2.25);
        assert_eq!(half_to_f32(0x7bff), 65504.0);
        assert_eq!(half_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(half_to_f32(0xfc00), f32::NEG_INFINITY);
        assert!(half_to_f32(0x7e00).is_nan());
        assert_eq!(half_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }
}
