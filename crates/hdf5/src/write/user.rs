//! User-defined types (enum, opaque, compound, vlen) as HDF5 datatypes, and values of any type
//! as the raw little-endian bytes HDF5 stores: strings and vlen sequences become global heap
//! references through a [`HeapSink`].
//!
//! A compound type holding strings is laid out as HDF5 lays it out on disk: netCDF gives a
//! `string` field the 8 bytes of a C pointer, HDF5 stores a 16-byte heap reference there and
//! moves the later fields up by the difference (the type's size grows by it too).

use super::types::{atomic_bytes, atomic_datatype};
use crate::format::datatype::{Datatype, Member};
use crate::Hdf5Error;
use nc_dataset::{AtomicType, Dataset, NcType, UserTypeKind, Values};

/// Nesting limit for user types (a compound holding a compound ...).
const MAX_DEPTH: usize = 32;

/// The HDF5 datatype of a netCDF type; atomic types in the requested byte order, user
/// types little-endian (as netCDF-C writes them).
pub fn datatype(ds: &Dataset, t: NcType, big: bool) -> Result<Datatype, Hdf5Error> {
    datatype_at(ds, t, big, 0)
}

fn datatype_at(ds: &Dataset, t: NcType, big: bool, depth: usize) -> Result<Datatype, Hdf5Error> {
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
            let mut names = Vec::with_capacity(members.len());
            let mut values = Vec::with_capacity(members.len() * base.size());
            for m in members {
                let v = int_value(*base, m.value).ok_or_else(|| {
                    Hdf5Error::invalid(
                        what(),
                        format!("member {} = {} does not fit the base type", m.name, m.value),
                    )
                })?;
                names.push(m.name.clone());
                values.extend_from_slice(&atomic_bytes(&v, false).unwrap_or_default());
            }
            Datatype::Enum {
                base: Box::new(atomic_datatype(*base, false)),
                names,
                values,
            }
        }
        UserTypeKind::Opaque { size } => Datatype::Opaque {
            size: u32::try_from(*size)
                .map_err(|_| Hdf5Error::invalid(what(), "opaque size too large"))?,
        },
        UserTypeKind::Vlen { base } => Datatype::Vlen {
            base: Box::new(datatype_at(ds, *base, false, depth + 1)?),
        },
        UserTypeKind::Compound { size, fields } => {
            let (offsets, size) = compound_layout(ds, *size, fields, depth);
            let mut ms = Vec::with_capacity(fields.len());
            for (f, &offset) in fields.iter().zip(&offsets) {
                let mut dt = datatype_at(ds, f.ty, false, depth + 1)?;
                if !f.dims.is_empty() {
                    let dims = f
                        .dims
                        .iter()
                        .map(|&d| u32::try_from(d))
                        .collect::<Result<Vec<u32>, _>>()
                        .map_err(|_| Hdf5Error::invalid(what(), "array field too large"))?;
                    dt = Datatype::Array {
                        dims,
                        base: Box::new(dt),
                    };
                }
                ms.push(Member {
                    name: f.name.clone(),
                    offset: u32::try_from(offset)
                        .map_err(|_| Hdf5Error::invalid(what(), "field offset too large"))?,
                    ty: dt,
                });
            }
            Datatype::Compound {
                size: u32::try_from(size)
                    .map_err(|_| Hdf5Error::invalid(what(), "compound size too large"))?,
                members: ms,
            }
        }
    })
}

/// Bytes of one stored value of `t`: the netCDF size, except that a string (a C pointer in
/// netCDF) and a vlen are 16-byte heap references, and compounds holding them grow.
pub fn disk_size(ds: &Dataset, t: NcType) -> usize {
    disk_size_at(ds, t, 0)
}

fn disk_size_at(ds: &Dataset, t: NcType, depth: usize) -> usize {
    match t {
        NcType::Atomic(AtomicType::String) => HEAP_REF_SIZE,
        NcType::Atomic(a) => a.size(),
        NcType::User(id) => match ds.types.get(id.0).map(|u| &u.kind) {
            Some(UserTypeKind::Compound { size, fields }) if depth <= MAX_DEPTH => {
                compound_layout(ds, *size, fields, depth + 1).1
            }
            Some(UserTypeKind::Vlen { .. }) => HEAP_REF_SIZE,
            _ => ds.type_size(t),
        },
    }
}

/// The stored field offsets and size of a compound type: HDF5 walks the fields in offset
/// order and moves each one up by what the earlier fields grew on disk.
fn compound_layout(
    ds: &Dataset,
    size: usize,
    fields: &[nc_dataset::CompoundField],
    depth: usize,
) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..fields.len()).collect();
    order.sort_by_key(|&i| fields[i].offset);
    let mut offsets = vec![0; fields.len()];
    let mut grown = 0usize;
    for i in order {
        let f = &fields[i];
        offsets[i] = f.offset + grown;
        let count: usize = f.dims.iter().product::<usize>().max(1);
        let disk = disk_size_at(ds, f.ty, depth + 1) * count;
        let mem = ds.type_size(f.ty) * count;
        grown += disk.saturating_sub(mem);
    }
    (offsets, size + grown)
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

/// Bytes of one global heap reference: sequence length (u32), collection address (8 bytes),
/// object index (u32).
pub const HEAP_REF_SIZE: usize = 16;

/// Where the global heap objects of strings and vlen sequences go.
pub trait HeapSink {
    /// Store one heap object; its collection address and index.
    fn store(&mut self, bytes: &[u8]) -> Result<(u64, u32), Hdf5Error>;
}

/// For values that need no heap: storing anything fails.
struct NoHeap;

impl HeapSink for NoHeap {
    fn store(&mut self, _: &[u8]) -> Result<(u64, u32), Hdf5Error> {
        Err(Hdf5Error::unsupported(
            "value",
            "strings and vlens need the global heap here",
        ))
    }
}

/// Why a value could not be laid out.
enum PutError {
    /// The values do not fit the type.
    Mismatch,
    /// The heap failed.
    Heap(Hdf5Error),
}

/// Raw bytes of fixed-size values of type `t` (atomic ones in the requested order, user
/// types little-endian); None if the values do not fit the type or need the global heap.
pub fn value_bytes(ds: &Dataset, t: NcType, v: &Values, big: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    put(ds, t, v, big, &mut out, 0, &mut NoHeap).ok()?;
    Some(out)
}

/// Raw bytes of values of any type `t`, little-endian, strings and vlen sequences stored in
/// `heap` (an empty sequence and a NIL string are null references).
pub fn heap_value_bytes(
    ds: &Dataset,
    t: NcType,
    v: &Values,
    heap: &mut dyn HeapSink,
) -> Result<Vec<u8>, Hdf5Error> {
    let mut out = Vec::new();
    match put(ds, t, v, false, &mut out, 0, heap) {
        Ok(()) => Ok(out),
        Err(PutError::Heap(e)) => Err(e),
        Err(PutError::Mismatch) => Err(Hdf5Error::invalid(
            "values",
            "the values do not match their type",
        )),
    }
}

fn heap_ref(out: &mut Vec<u8>, count: usize, place: Option<(u64, u32)>) -> Result<(), PutError> {
    let count = u32::try_from(count).map_err(|_| PutError::Mismatch)?;
    let (addr, index) = place.unwrap_or((0, 0));
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&addr.to_le_bytes());
    out.extend_from_slice(&index.to_le_bytes());
    Ok(())
}

fn put(
    ds: &Dataset,
    t: NcType,
    v: &Values,
    big: bool,
    out: &mut Vec<u8>,
    depth: usize,
    heap: &mut dyn HeapSink,
) -> Result<(), PutError> {
    if depth > MAX_DEPTH {
        return Err(PutError::Mismatch);
    }
    let id = match t {
        NcType::Atomic(AtomicType::String) => {
            let Values::String(xs) = v else {
                return Err(PutError::Mismatch);
            };
            for x in xs {
                match x {
                    // NIL: a null reference
                    None => heap_ref(out, 0, None)?,
                    // "" is an empty object, not NIL
                    Some(s) => {
                        let place = heap.store(s.as_bytes()).map_err(PutError::Heap)?;
                        heap_ref(out, s.len(), Some(place))?;
                    }
                }
            }
            return Ok(());
        }
        NcType::Atomic(_) => {
            out.extend_from_slice(&atomic_bytes(v, big).ok_or(PutError::Mismatch)?);
            return Ok(());
        }
        NcType::User(id) => id,
    };
    match &ds.types.get(id.0).ok_or(PutError::Mismatch)?.kind {
        UserTypeKind::Enum { .. } => {
            out.extend_from_slice(&atomic_bytes(v, false).ok_or(PutError::Mismatch)?)
        }
        UserTypeKind::Opaque { size } => match v {
            Values::Opaque { size: s, bytes } if s == size => out.extend_from_slice(bytes),
            _ => return Err(PutError::Mismatch),
        },
        UserTypeKind::Compound { size, fields } => {
            let Values::Compound(elems) = v else {
                return Err(PutError::Mismatch);
            };
            let (offsets, size) = compound_layout(ds, *size, fields, depth);
            for e in elems {
                let base = out.len();
                out.resize(base + size, 0);
                if e.len() != fields.len() {
                    return Err(PutError::Mismatch);
                }
                for ((f, fv), &offset) in fields.iter().zip(e).zip(&offsets) {
                    let mut tmp = Vec::new();
                    put(ds, f.ty, fv, false, &mut tmp, depth + 1, heap)?;
                    let at = base + offset;
                    let end = at.checked_add(tmp.len()).ok_or(PutError::Mismatch)?;
                    if end > base + size {
                        return Err(PutError::Mismatch);
                    }
                    out[at..end].copy_from_slice(&tmp);
                }
            }
        }
        UserTypeKind::Vlen { base } => {
            let Values::Vlen(seqs) = v else {
                return Err(PutError::Mismatch);
            };
            for seq in seqs {
                let n = seq.len();
                if n == 0 {
                    heap_ref(out, 0, None)?;
                    continue;
                }
                let mut tmp = Vec::new();
                put(ds, *base, seq, false, &mut tmp, depth + 1, heap)?;
                let place = heap.store(&tmp).map_err(PutError::Heap)?;
                heap_ref(out, n, Some(place))?;
            }
        }
    }
    Ok(())
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

    /// Records heap objects; hands out (1000 + k, k + 1).
    struct Recorder(Vec<Vec<u8>>);

    impl HeapSink for Recorder {
        fn store(&mut self, bytes: &[u8]) -> Result<(u64, u32), Hdf5Error> {
            self.0.push(bytes.to_vec());
            let k = self.0.len() as u64;
            Ok((999 + k, k as u32))
        }
    }

    fn heap_ref(count: u32, addr: u64, index: u32) -> Vec<u8> {
        let mut out = count.to_le_bytes().to_vec();
        out.extend_from_slice(&addr.to_le_bytes());
        out.extend_from_slice(&index.to_le_bytes());
        out
    }

    #[test]
    fn a_string_field_moves_the_later_fields_up_as_hdf5_does() {
        // netCDF (C) layout: int x at 0, string s at 8 (a pointer), double t at 16, size 24
        let mut ds = Dataset::new("t");
        let field = |name: &str, ty: NcType, offset| CompoundField {
            name: name.into(),
            ty,
            dims: vec![],
            offset,
        };
        let c = ds.add_type(
            ROOT,
            "c_t",
            UserTypeKind::Compound {
                size: 24,
                fields: vec![
                    field("x", AtomicType::Int.into(), 0),
                    field("s", AtomicType::String.into(), 8),
                    field("t", AtomicType::Double.into(), 16),
                ],
            },
        );
        let t = NcType::User(c);
        assert_eq!(disk_size(&ds, t), 32);
        let Datatype::Compound { size, members } = datatype(&ds, t, false).unwrap() else {
            panic!("not a compound");
        };
        assert_eq!(size, 32);
        let offsets: Vec<u32> = members.iter().map(|m| m.offset).collect();
        assert_eq!(offsets, vec![0, 8, 24]);
        let v = Values::Compound(vec![vec![
            Values::Int(vec![7]),
            Values::String(vec![Some("ab".into())]),
            Values::Double(vec![1.5]),
        ]]);
        let mut heap = Recorder(Vec::new());
        let got = heap_value_bytes(&ds, t, &v, &mut heap).unwrap();
        let mut want = 7i32.to_le_bytes().to_vec();
        want.extend_from_slice(&[0; 4]);
        want.extend_from_slice(&heap_ref(2, 1000, 1));
        want.extend_from_slice(&1.5f64.to_le_bytes());
        assert_eq!(got, want);
        assert_eq!(heap.0, vec![b"ab".to_vec()]);
        // without a heap the value cannot be laid out
        assert_eq!(value_bytes(&ds, t, &v, false), None);
    }

    #[test]
    fn vlens_of_vlens_and_nil_strings_become_heap_references() {
        let mut ds = Dataset::new("t");
        let inner = ds.add_type(
            ROOT,
            "vi",
            UserTypeKind::Vlen {
                base: AtomicType::Short.into(),
            },
        );
        let outer = ds.add_type(
            ROOT,
            "vvi",
            UserTypeKind::Vlen {
                base: NcType::User(inner),
            },
        );
        let v = Values::Vlen(vec![
            Values::Vlen(vec![Values::Short(vec![1, 2]), Values::Short(vec![])]),
            Values::Vlen(vec![]),
        ]);
        let mut heap = Recorder(Vec::new());
        let got = heap_value_bytes(&ds, NcType::User(outer), &v, &mut heap).unwrap();
        // the inner sequence is stored first; the empty ones are null references
        assert_eq!(heap.0[0], vec![1, 0, 2, 0]);
        let mut outer_obj = heap_ref(2, 1000, 1);
        outer_obj.extend_from_slice(&heap_ref(0, 0, 0));
        assert_eq!(heap.0[1], outer_obj);
        let mut want = heap_ref(2, 1001, 2);
        want.extend_from_slice(&heap_ref(0, 0, 0));
        assert_eq!(got, want);

        let s = Values::String(vec![None, Some("".into())]);
        let mut heap = Recorder(Vec::new());
        let got = heap_value_bytes(&ds, AtomicType::String.into(), &s, &mut heap).unwrap();
        let mut want = heap_ref(0, 0, 0);
        want.extend_from_slice(&heap_ref(0, 1000, 1));
        assert_eq!(got, want, "NIL is a null reference, \"\" an empty object");
    }
}
