//! User-defined types (enum, opaque, compound; vlen as far as the datatype goes) as HDF5
//! datatypes, and fixed-size values of any type as raw little-endian bytes.

use nc_dataset::{AtomicType, Dataset, NcType, UserTypeKind, Values};
use rust_hdf5::format::messages::datatype::{CompoundMember, EnumMember};
use rust_hdf5::DatatypeMessage;

use super::types::{atomic_bytes, atomic_datatype};
use crate::Hdf5Error;

/// Nesting limit for user types (a compound holding a compound ...).
const MAX_DEPTH: usize = 32;

/// The HDF5 datatype of a netCDF type; atomic types in the requested byte order, user
/// types little-endian (as netCDF-C writes them).
pub fn datatype(ds: &Dataset, t: NcType, big: bool) -> Result<DatatypeMessage, Hdf5Error> {
    datatype_at(ds, t, big, 0)
}

fn datatype_at(
    ds: &Dataset,
    t: NcType,
    big: bool,
    depth: usize,
) -> Result<DatatypeMessage, Hdf5Error> {
    let id = match t {
        NcType::Atomic(a) => return Ok(atomic_datatype(a, big)),
        NcType::User(id) => id,
    };
    let ut = ds.types.get(id.0).ok_or_else(|| {
        Hdf5Error::invalid(format!("type #{}", id.0), "no such user-defined type")
    })?;
    let what = || format!("type {}", ut.name);
    if depth > MAX_DEPTH {
        return Err(Hdf5Error::TooDeep {
            what: what(),
            limit: MAX_DEPTH,
        });
    }
    Ok(match &ut.kind {
        UserTypeKind::Enum { base, members } => {
            let mut ms = Vec::with_capacity(members.len());
            for m in members {
                let v = int_value(*base, m.value).ok_or_else(|| {
                    Hdf5Error::invalid(
                        what(),
                        format!("member {} = {} does not fit the base type", m.name, m.value),
                    )
                })?;
                ms.push(EnumMember {
                    name: m.name.clone(),
                    value: atomic_bytes(&v, false).unwrap_or_default(),
                });
            }
            DatatypeMessage::enumeration(atomic_datatype(*base, false), ms)
        }
        UserTypeKind::Opaque { size } => DatatypeMessage::Opaque {
            size: u32::try_from(*size)
                .map_err(|_| Hdf5Error::invalid(what(), "opaque size too large"))?,
            tag: String::new(),
        },
        UserTypeKind::Vlen { base } => DatatypeMessage::VarLenSequence {
            base: Box::new(datatype_at(ds, *base, false, depth + 1)?),
        },
        UserTypeKind::Compound { size, fields } => {
            let mut ms = Vec::with_capacity(fields.len());
            for f in fields {
                let mut dt = datatype_at(ds, f.ty, false, depth + 1)?;
                if !f.dims.is_empty() {
                    let dims = f
                        .dims
                        .iter()
                        .map(|&d| u32::try_from(d))
                        .collect::<Result<Vec<u32>, _>>()
                        .map_err(|_| Hdf5Error::invalid(what(), "array field too large"))?;
                    dt = DatatypeMessage::array(dims, dt);
                }
                ms.push(CompoundMember {
                    name: f.name.clone(),
                    offset: u32::try_from(f.offset)
                        .map_err(|_| Hdf5Error::invalid(what(), "field offset too large"))?,
                    datatype: dt,
                });
            }
            DatatypeMessage::compound(
                u32::try_from(*size)
                    .map_err(|_| Hdf5Error::invalid(what(), "compound size too large"))?,
                ms,
            )
        }
    })
}

/// One value of an integer base type holding `v`, if it fits.
fn int_value(base: AtomicType, v: i128) -> Option<Values> {
    Some(match base {
        AtomicType::Byte => Values::Byte(vec![i8::try_from(v).ok()?]),
        AtomicType::UByte => Values::UByte(vec![u8::try_from(v).ok()?]),
        AtomicType::Short => Values::Short(vec![i16::try_from(v).ok()?]),
        AtomicType::UShort => Values::UShort(vec![u16::try_from(v).ok()?]),
        AtomicType::Int => Values::Int(vec![i32::try_from(v).ok()?]),
        AtomicType::UInt => Values::UInt(vec![u32::try_from(v).ok()?]),
        AtomicType::Int64 => Values::Int64(vec![i64::try_from(v).ok()?]),
        AtomicType::UInt64 => Values::UInt64(vec![u64::try_from(v).ok()?]),
        _ => return None,
    })
}

/// True if values of `t` have a fixed size (no strings or vlens anywhere inside).
pub fn is_fixed_size(ds: &Dataset, t: NcType) -> bool {
    fixed_at(ds, t, 0)
}

fn fixed_at(ds: &Dataset, t: NcType, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match t {
        NcType::Atomic(a) => a != AtomicType::String,
        NcType::User(id) => match ds.types.get(id.0).map(|u| &u.kind) {
            Some(UserTypeKind::Enum { .. } | UserTypeKind::Opaque { .. }) => true,
            Some(UserTypeKind::Compound { fields, .. }) => {
                fields.iter().all(|f| fixed_at(ds, f.ty, depth + 1))
            }
            _ => false,
        },
    }
}

/// Raw bytes of fixed-size values of type `t` (atomic ones in the requested order, user
/// types little-endian); None if the values do not fit the type.
pub fn value_bytes(ds: &Dataset, t: NcType, v: &Values, big: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    put(ds, t, v, big, &mut out, 0)?;
    Some(out)
}

fn put(
    ds: &Dataset,
    t: NcType,
    v: &Values,
    big: bool,
    out: &mut Vec<u8>,
    depth: usize,
) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let id = match t {
        NcType::Atomic(_) => {
            out.extend_from_slice(&atomic_bytes(v, big)?);
            return Some(());
        }
        NcType::User(id) => id,
    };
    match &ds.types.get(id.0)?.kind {
        UserTypeKind::Enum { .. } => out.extend_from_slice(&atomic_bytes(v, false)?),
        UserTypeKind::Opaque { size } => match v {
            Values::Opaque { size: s, bytes } if s == size => out.extend_from_slice(bytes),
            _ => return None,
        },
        UserTypeKind::Compound { size, fields } => {
            let Values::Compound(elems) = v else {
                return None;
            };
            for e in elems {
                let base = out.len();
                out.resize(base + size, 0);
                if e.len() != fields.len() {
                    return None;
                }
                for (f, fv) in fields.iter().zip(e) {
                    let mut tmp = Vec::new();
                    put(ds, f.ty, fv, false, &mut tmp, depth + 1)?;
                    let at = base + f.offset;
                    let end = at.checked_add(tmp.len())?;
                    if end > base + size {
                        return None;
                    }
                    out[at..end].copy_from_slice(&tmp);
                }
            }
        }
        UserTypeKind::Vlen { .. } => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nc_dataset::{CompoundField, ROOT};

    #[test]
    fn compound_bytes_follow_field_offsets() {
        let mut ds = Dataset::new("t");
        let c = ds.add_type(
            ROOT,
            "pair",
            UserTypeKind::Compound {
                size: 8,
                fields: vec![
                    CompoundField {
                        name: "a".into(),
                        ty: AtomicType::Short.into(),
                        dims: vec![],
                        offset: 0,
                    },
                    CompoundField {
                        name: "b".into(),
                        ty: AtomicType::Int.into(),
                        dims: vec![],
                        offset: 4,
                    },
                ],
            },
        );
        let v = Values::Compound(vec![vec![Values::Short(vec![1]), Values::Int(vec![2])]]);
        assert_eq!(
            value_bytes(&ds, NcType::User(c), &v, false),
            Some(vec![1, 0, 0, 0, 2, 0, 0, 0])
        );
        assert!(is_fixed_size(&ds, NcType::User(c)));
    }
}
