//! Dense attribute storage of objects with many attributes, written by us after rust-hdf5
//! closes the file.
//!
//! rust-hdf5 0.7.9 looks each new attribute's name up in a list of the object's attributes,
//! so handing it N attributes one by one costs O(N²) (200,000 took six minutes). An object
//! with more than [`OWN_DENSE_ABOVE`] attributes is therefore given only [`STAND_INS`] small
//! stand-in attributes, which make the crate create dense storage (more than eight
//! attributes, as libhdf5's default `max_compact`) with an Attribute Info message in the
//! object header (HDF5 file format spec IV.A.2.v). After close, [`Dense::encode`] reads the
//! object's dense storage back in creation order, puts the real attributes' messages where
//! the stand-ins were (attributes rust-hdf5 added after them, such as `CLASS`, `NAME`,
//! `_Netcdf4Dimid`, `_Netcdf4Coordinates` and `DIMENSION_LIST`, keep their bytes and their
//! places), and [`Laid::write`] appends a new fractal heap of those messages (spec III.G), a
//! version 2 B-tree of type 8 (name index: records sorted by the Jenkins lookup3 hash of the
//! name, then the name) and, when the header says creation order is indexed, one of type 9
//! (creation order), spec III.A.2, then points the Attribute Info message at them (same
//! length, so the header's checksum is renewed in place). The old storage stays behind as a
//! few unreferenced kilobytes.
//!
//! The heap and B-tree images come from rust-hdf5's public layout functions
//! (`build_heap`, `btree_v2::build_index`), which lay a whole set out in one pass.
//! Creation indices are 32-bit in the B-tree records but 16-bit in the Attribute Info
//! message; past 65,535 the message's maximum stays at 65,535 (libhdf5 refuses to create the
//! 65,536th attribute of an object that tracks creation order; netCDF-C's ncgen stops there).

use std::fs::File;

use hdf5_reader::btree_v2::{self, BTreeV2Header, BTreeV2Record};
use hdf5_reader::fractal_heap::{FractalHeap, FractalHeapDirectBlockCache};
use hdf5_reader::messages::HdfMessage;
use nc_dataset::{Attribute, Dataset, GroupId, NcType, Values, VarId};
use rust_hdf5::format::checksum::checksum_metadata;
use rust_hdf5::format::chunk_index::btree_v2::{
    build_index, BT2_TYPE_ATTR_CORDER, BT2_TYPE_ATTR_NAME,
};
use rust_hdf5::format::fractal_heap::HeapParams;
use rust_hdf5::format::fractal_heap_write::build_heap;
use rust_hdf5::format::messages::attribute::AttributeMessage;
use rust_hdf5::format::{FormatContext, LibverBound};
use rust_hdf5::DatatypeMessage;

use super::heap::{self, patch_message, read_at, real_message, write_at};
use super::locate::Locator;
use super::types::{atomic_bytes, atomic_datatype};
use super::user::{self, HeapSink};
use crate::Hdf5Error;

/// Objects with more attributes than this get their dense storage from us.
pub(super) const OWN_DENSE_ABOVE: usize = 64;
/// Stand-in attributes given to rust-hdf5: one more than its compact maximum (8).
const STAND_INS: usize = 9;
/// Name prefix of the stand-ins (never left in the file).
const STAND_IN: &str = "_nc_rs_dense_stand_in_";
/// Heap ID bytes in the attribute index records (spec III.A.2, record types 8 and 9).
const HEAP_ID_LEN: usize = 8;
/// Node size of both attribute indexes (libhdf5 uses 512 bytes).
const NODE_SIZE: u32 = 512;
/// Attribute Info message type (spec IV.A.2.v) and continuation message type (IV.A.2.q).
const MSG_ATTR_INFO: u8 = 0x15;
const MSG_CONTINUATION: u8 = 0x10;

/// An attribute's name and its encoded message.
type Named = (Vec<u8>, Vec<u8>);

fn ctx() -> FormatContext {
    FormatContext::default_v3()
}

/// The object whose attributes are laid out by us.
#[derive(Debug, Clone, Copy)]
pub(super) enum Owner {
    Group(GroupId),
    /// A variable and the index of its dataset name in [`Dense::names`].
    Var(VarId, usize),
}

/// Objects with many attributes, in the order they were defined.
#[derive(Default)]
pub(super) struct Dense {
    owners: Vec<Owner>,
    /// Dataset names of the variables among them (`_nc4_non_coord_` prefixed or not).
    names: Vec<String>,
}

/// True if an object with `n` attributes gets its dense storage from us.
pub(super) fn wanted(n: usize) -> bool {
    n > OWN_DENSE_ABOVE
}

/// The stand-in attributes to give rust-hdf5 in place of the real ones: name, datatype,
/// value.
pub(super) fn stand_ins() -> impl Iterator<Item = (String, DatatypeMessage, Vec<u8>)> {
    (0..STAND_INS).map(|i| {
        (
            format!("{STAND_IN}{i}"),
            DatatypeMessage::i32_type(),
            (i as i32).to_le_bytes().to_vec(),
        )
    })
}

/// One object's new dense storage, its messages encoded, not yet placed.
pub(super) struct Laid {
    what: String,
    /// Where the Attribute Info message's body is, and its bytes.
    info_at: u64,
    info: Vec<u8>,
    /// Attribute messages in creation order, with their names.
    messages: Vec<Named>,
}

impl Dense {
    /// Group `g` got stand-ins for its attributes.
    pub fn add_group(&mut self, g: GroupId) {
        self.owners.push(Owner::Group(g));
    }

    /// Variable `v`, whose dataset is named `h5name`, got stand-ins for its attributes.
    pub fn add_var(&mut self, v: VarId, h5name: &str) {
        self.owners.push(Owner::Var(v, self.names.len()));
        self.names.push(h5name.to_string());
    }

    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }

    /// Encode every object's attributes (strings and vlens into `heap`) and find where its
    /// Attribute Info message is.
    ///
    /// # Errors
    /// When the file cannot be read, an object or its stand-ins are not where rust-hdf5 was
    /// told to put them, or a value does not fit its type.
    pub fn encode(
        &self,
        loc: &mut Locator,
        file: &File,
        ds: &Dataset,
        heap: &mut dyn HeapSink,
    ) -> Result<Vec<Laid>, Hdf5Error> {
        let mut out = Vec::with_capacity(self.owners.len());
        for &owner in &self.owners {
            let (addr, what, atts) = match owner {
                Owner::Group(g) => (
                    loc.group(ds, g)?,
                    format!("group {}", ds.group_path(g)),
                    &ds.group(g).atts,
                ),
                Owner::Var(v, k) => {
                    let var = ds.var(v);
                    (
                        loc.child(ds, var.group, &self.names[k])?,
                        format!("variable {}", var.name),
                        &var.atts,
                    )
                }
            };
            let old = old_messages(loc, addr, &what)?;
            let mut messages = Vec::with_capacity(old.len() + atts.len());
            let mut placed = false;
            for (name, bytes) in old {
                if name.starts_with(STAND_IN.as_bytes()) {
                    if !placed {
                        for a in atts {
                            let m = message(ds, a, heap).map_err(|e| {
                                Hdf5Error::invalid(
                                    format!("{what}: attribute {}", a.name),
                                    e.to_string(),
                                )
                            })?;
                            messages.push((a.name.as_bytes().to_vec(), m));
                        }
                        placed = true;
                    }
                } else {
                    messages.push((name, bytes));
                }
            }
            if !placed {
                return Err(Hdf5Error::invalid(
                    what,
                    "the stand-in attributes were not found in the written file",
                ));
            }
            let (info_at, info) = attribute_info(file, addr, &what)?;
            out.push(Laid {
                what,
                info_at,
                info,
                messages,
            });
        }
        Ok(out)
    }
}

impl Laid {
    /// Append this object's heap and indexes at `next` and point its Attribute Info message
    /// at them; the address past them.
    ///
    /// # Errors
    /// When the file cannot be written or the Attribute Info message is not as expected.
    pub fn write(self, file: &File, next: u64) -> Result<u64, Hdf5Error> {
        let what = || format!("{}: dense attribute storage", self.what);
        let flags = *self
            .info
            .get(1)
            .ok_or_else(|| Hdf5Error::invalid(what(), "Attribute Info message too short"))?;
        let tracked = flags & 1 != 0;
        let indexed = flags & 2 != 0;
        let (storage, end) = lay_out(&self.messages, tracked, indexed, next)
            .map_err(|e| Hdf5Error::invalid(what(), format!("laying out the fractal heap: {e}")))?;
        write_at(
            file,
            next,
            &storage.image,
            "writing dense attribute storage",
        )?;
        let mut info = vec![0u8, flags];
        if tracked {
            let max = u16::try_from(self.messages.len()).unwrap_or(u16::MAX);
            info.extend_from_slice(&max.to_le_bytes());
        }
        info.extend_from_slice(&storage.heap.to_le_bytes());
        info.extend_from_slice(&storage.names.to_le_bytes());
        if indexed {
            info.extend_from_slice(&storage.orders.unwrap_or(u64::MAX).to_le_bytes());
        }
        if info.len() != self.info.len() {
            return Err(Hdf5Error::invalid(
                what(),
                format!(
                    "Attribute Info message of {} bytes, expected {}",
                    self.info.len(),
                    info.len()
                ),
            ));
        }
        if !patch_message(file, self.info_at, &self.info, &info)? {
            return Err(Hdf5Error::invalid(
                what(),
                "the Attribute Info message changed before it was rewritten",
            ));
        }
        Ok(end)
    }
}

/// A laid-out dense storage: one image from its start, and where its parts are.
struct Storage {
    image: Vec<u8>,
    heap: u64,
    names: u64,
    orders: Option<u64>,
}

/// Fractal heap and indexes of `messages` (name, encoded message; creation order is their
/// order) laid out from address `start`; the storage and the address past it.
fn lay_out(
    messages: &[Named],
    tracked: bool,
    indexed: bool,
    start: u64,
) -> Result<(Storage, u64), rust_hdf5::format::FormatError> {
    let c = ctx();
    let mut next = start;
    let mut blocks: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut alloc = |len: u64| {
        let at = next;
        next += len;
        at
    };
    let objects: Vec<Vec<u8>> = messages.iter().map(|(_, m)| m.clone()).collect();
    let heap = build_heap(&HeapParams::object_header(), &c, &objects, &mut alloc)?;
    drop(objects);
    blocks.extend(heap.blocks.into_iter().map(|b| (b.addr, b.image)));
    // the creation index of each record (libhdf5's "none" is 0xffff when untracked)
    let order = |i: usize| -> u32 {
        if tracked {
            i as u32
        } else {
            u32::from(u16::MAX)
        }
    };
    let hashes: Vec<u32> = messages.iter().map(|(n, _)| checksum_metadata(n)).collect();
    let mut by_name: Vec<usize> = (0..messages.len()).collect();
    by_name.sort_unstable_by(|&a, &b| {
        hashes[a]
            .cmp(&hashes[b])
            .then_with(|| messages[a].0.cmp(&messages[b].0))
    });
    // type 8 record: heap ID, message flags, creation order, name hash
    let mut records = Vec::with_capacity(messages.len() * (HEAP_ID_LEN + 9));
    for &i in &by_name {
        records.extend_from_slice(&heap.ids[i]);
        records.push(0);
        records.extend_from_slice(&order(i).to_le_bytes());
        records.extend_from_slice(&hashes[i].to_le_bytes());
    }
    let (names, nodes) = build_index(
        BT2_TYPE_ATTR_NAME,
        (HEAP_ID_LEN + 9) as u16,
        NODE_SIZE,
        &records,
        &c,
        &mut alloc,
    );
    blocks.extend(nodes);
    let orders = if indexed {
        // type 9 record: heap ID, message flags, creation order (already in creation order)
        let mut records = Vec::with_capacity(messages.len() * (HEAP_ID_LEN + 5));
        for (i, id) in heap.ids.iter().enumerate() {
            records.extend_from_slice(id);
            records.push(0);
            records.extend_from_slice(&order(i).to_le_bytes());
        }
        let (at, nodes) = build_index(
            BT2_TYPE_ATTR_CORDER,
            (HEAP_ID_LEN + 5) as u16,
            NODE_SIZE,
            &records,
            &c,
            &mut alloc,
        );
        blocks.extend(nodes);
        Some(at)
    } else {
        None
    };
    let mut image = vec![0u8; (next - start) as usize];
    for (addr, bytes) in blocks {
        let at = (addr - start) as usize;
        image[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    Ok((
        Storage {
            image,
            heap: heap.header_addr,
            names,
            orders,
        },
        next,
    ))
}

/// The attribute messages of the object at `addr` kept in dense storage, in creation order:
/// (name, raw message).
fn old_messages(loc: &Locator, addr: u64, what: &str) -> Result<Vec<Named>, Hdf5Error> {
    let h5 = &loc.h5;
    let hdr = h5.header(addr)?;
    let info = hdr
        .messages
        .iter()
        .find_map(|m| match m {
            HdfMessage::AttributeInfo(i) => Some(i.clone()),
            _ => None,
        })
        .ok_or_else(|| Hdf5Error::invalid(what, "no Attribute Info message after writing"))?;
    let st = |e| Hdf5Error::structure(format!("{what}: dense attributes"), e);
    let s = h5.storage();
    let heap =
        FractalHeap::parse_at_storage(s, info.fractal_heap_address, h5.os, h5.ls).map_err(st)?;
    let bt = BTreeV2Header::parse_at_storage(s, info.btree_name_index_address, h5.os, h5.ls)
        .map_err(st)?;
    let records = btree_v2::collect_btree_v2_records_storage(s, &bt, h5.os, h5.ls, None, &[], None)
        .map_err(st)?;
    let mut cache = FractalHeapDirectBlockCache::default();
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        let BTreeV2Record::AttributeNameHash {
            creation_order,
            heap_id,
            ..
        } = r
        else {
            continue;
        };
        let bytes = heap
            .get_object_storage_cached(&heap_id, s, h5.os, h5.ls, &mut cache)
            .map_err(st)?;
        let name = message_name(&bytes)
            .ok_or_else(|| Hdf5Error::invalid(what, "an attribute message without a name"))?;
        out.push((creation_order, name, bytes));
    }
    out.sort_by_key(|x| x.0);
    Ok(out.into_iter().map(|(_, n, b)| (n, b)).collect())
}

/// The name (without its NUL) of an encoded attribute message (spec IV.A.2.m, versions 1
/// to 3).
fn message_name(m: &[u8]) -> Option<Vec<u8>> {
    let len = usize::from(u16::from_le_bytes([*m.get(2)?, *m.get(3)?]));
    let at = if *m.first()? == 3 { 9 } else { 8 };
    let name = m.get(at..at + len)?;
    Some(name.split(|&b| b == 0).next().unwrap_or(name).to_vec())
}

/// Where the body of the Attribute Info message of the version 2 object header at `addr` is,
/// and its bytes (spec IV.A.1.b: chunk 0 then continuation chunks).
fn attribute_info(file: &File, addr: u64, what: &str) -> Result<(u64, Vec<u8>), Hdf5Error> {
    let bad = |why: &str| Hdf5Error::invalid(format!("{what}: object header at {addr:#x}"), why);
    let pre = read_at(file, addr, 16, "reading an object header")?;
    if &pre[..4] != b"OHDR" || pre[4] != 2 {
        return Err(bad("not a version 2 object header"));
    }
    let flags = pre[5];
    let mut p = 6usize;
    if flags & 0x20 != 0 {
        p += 16;
    }
    if flags & 0x10 != 0 {
        p += 4;
    }
    let width = 1usize << (flags & 3);
    let sz = read_at(file, addr + p as u64, width, "reading an object header")?;
    let size = sz
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let head = if flags & 0x04 != 0 { 6 } else { 4 };
    // chunks to walk: (address of the first message, bytes of messages)
    let mut chunks = vec![(addr + (p + width) as u64, size)];
    let mut k = 0;
    while let Some(&(start, len)) = chunks.get(k) {
        k += 1;
        if len > 64 << 20 || k > 4096 {
            return Err(bad("object header chunk too large or too many chunks"));
        }
        let buf = read_at(file, start, len as usize, "reading an object header")?;
        let mut q = 0usize;
        while q + head <= buf.len() {
            let ty = buf[q];
            let n = usize::from(u16::from_le_bytes([buf[q + 1], buf[q + 2]]));
            let body = q + head;
            let Some(b) = buf.get(body..body + n) else {
                return Err(bad("a message runs past its chunk"));
            };
            if ty == MSG_ATTR_INFO {
                return Ok((start + body as u64, b.to_vec()));
            }
            if ty == MSG_CONTINUATION && n >= 16 {
                let at = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
                let l = u64::from_le_bytes(b[8..16].try_into().unwrap_or_default());
                // continuation chunk: "OCHK", messages, checksum
                if l < 8 {
                    return Err(bad("a continuation chunk too small"));
                }
                chunks.push((at + 4, l - 8));
            }
            q = body + n;
        }
    }
    Err(bad("no Attribute Info message"))
}

/// The encoded attribute message of `a` as rust-hdf5 writes it through our setters (see
/// `group_attr` and `var_attr`), strings and vlens in `heap`.
fn message(ds: &Dataset, a: &Attribute, heap: &mut dyn HeapSink) -> Result<Vec<u8>, Hdf5Error> {
    let enc = |m: AttributeMessage| m.encode_at(&ctx(), LibverBound::V18);
    if heap::attr_is_deferred(ds, a) {
        let dt = user::datatype(ds, a.ty, false)?;
        let data = user::heap_value_bytes(ds, a.ty, &a.values, heap)?;
        return Ok(real_message(&a.name, dt, a.values.len(), data));
    }
    Ok(match (a.ty, &a.values) {
        (NcType::User(_), v) => {
            let dt = user::datatype(ds, a.ty, false)?;
            let bytes = user::value_bytes(ds, a.ty, v, false)
                .ok_or_else(|| Hdf5Error::invalid("value", "does not fit its type"))?;
            enc(AttributeMessage::scalar_numeric(&a.name, dt, bytes))
        }
        (_, Values::Char(x)) => enc(AttributeMessage::scalar_numeric(
            &a.name,
            super::char_type(x.len()),
            super::char_bytes(x),
        )),
        (NcType::Atomic(t), Values::String(_)) => {
            let data = user::heap_value_bytes(ds, a.ty, &a.values, heap)?;
            real_message(&a.name, atomic_datatype(t, false), a.values.len(), data)
        }
        (NcType::Atomic(t), v) => {
            let data = atomic_bytes(v, false)
                .ok_or_else(|| Hdf5Error::invalid("value", "does not fit its type"))?;
            enc(AttributeMessage::array_numeric(
                &a.name,
                atomic_datatype(t, false),
                &[v.len() as u64],
                data,
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_from_version_3_and_1_messages() {
        let m = AttributeMessage::scalar_numeric("abc", DatatypeMessage::i32_type(), vec![0; 4])
            .encode_at(&ctx(), LibverBound::V18);
        assert_eq!(message_name(&m), Some(b"abc".to_vec()));
        let mut v1 = vec![1, 0, 4, 0, 0, 0, 0, 0];
        v1.extend_from_slice(b"xyz\0\0\0\0\0");
        assert_eq!(message_name(&v1), Some(b"xyz".to_vec()));
    }

    #[test]
    fn name_index_is_sorted_by_hash_and_order_index_by_creation() {
        let messages: Vec<Named> = (0..300)
            .map(|i| {
                let name = format!("a{i}");
                let m = AttributeMessage::scalar_numeric(
                    &name,
                    DatatypeMessage::i32_type(),
                    vec![0; 4],
                )
                .encode_at(&ctx(), LibverBound::V18);
                (name.into_bytes(), m)
            })
            .collect();
        let (s, end) = lay_out(&messages, true, true, 4096).expect("laid out");
        assert_eq!(end - 4096, s.image.len() as u64);
        // the name index header: "BTHD", version 0, type 8; its root node's records are in
        // hash order
        let at = |a: u64| (a - 4096) as usize;
        let h = &s.image[at(s.names)..];
        assert_eq!(&h[..4], b"BTHD");
        assert_eq!(h[5], BT2_TYPE_ATTR_NAME);
        let o = &s.image[at(s.orders.expect("indexed"))..];
        assert_eq!(o[5], BT2_TYPE_ATTR_CORDER);
        // header checksum (spec III.A.2: covers the header before it)
        let hlen = 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + 8 + 2 + 8;
        let sum = u32::from_le_bytes(h[hlen..hlen + 4].try_into().expect("4 bytes"));
        assert_eq!(checksum_metadata(&h[..hlen]), sum);
        // every name's hash appears once, in non-decreasing order, across the leaves
        let mut hashes: Vec<u32> = messages.iter().map(|(n, _)| checksum_metadata(n)).collect();
        hashes.sort_unstable();
        assert_eq!(hashes.len(), 300);
        let h0 = &s.image[at(s.heap)..];
        assert_eq!(&h0[..4], b"FRHP");
    }
}
