//! Our own object header walk, used when `hdf5-reader` refuses a header: hdf5-reader 0.12.1
//! rejects attribute messages whose datatype (or dataspace) is shared, i.e. an attribute of a
//! committed datatype, which netCDF-C writes for user-typed attributes in some versions. Here
//! the attribute message is decoded by us and the shared datatype fetched from the committed
//! type's header; every other message still goes through hdf5-reader's message parsers.
//!
//! HDF5 File Format Specification v3: IV.A.1.a/b (object header v1/v2), IV.A.2.c (shared
//! messages), IV.A.2.m (attribute message).

use std::collections::HashSet;

use hdf5_reader::io::Cursor;
use hdf5_reader::messages::attribute::AttributeMessage;
use hdf5_reader::messages::shared::{self, SharedMessage};
use hdf5_reader::messages::{self, HdfMessage};
use hdf5_reader::object_header::ObjectHeader;

use crate::h5::H5;
use crate::Hdf5Error;

const MSG_DATASPACE: u16 = 0x0001;
const MSG_DATATYPE: u16 = 0x0003;
const MSG_LAYOUT: u16 = 0x0008;
const MSG_ATTRIBUTE: u16 = 0x000C;
const MSG_CONTINUATION: u16 = 0x0010;

/// The precision and offset of the fixed-point datatype of the object header at `addr` when
/// they leave bits of its size unused (hdf5-reader decodes the datatype without them); `None`
/// for every other datatype, a shared one, or bits that do not fit its size.
pub(crate) fn integer_bits(h5: &H5, addr: u64) -> Result<Option<(u32, u32)>, Hdf5Error> {
    let Some(data) = raw_message(h5, addr, MSG_DATATYPE)? else {
        return Ok(None);
    };
    // class and version 1 byte (class 0: fixed-point), flags 3, size 4, then bit offset and
    // bit precision, 2 bytes each
    let field = |i: usize, n: usize| {
        data.get(i..i + n)
            .map(|b| b.iter().rev().fold(0u32, |a, &x| a << 8 | u32::from(x)))
    };
    if data.first().is_none_or(|c| c & 0x0f != 0) {
        return Ok(None);
    }
    let (Some(size), Some(offset), Some(precision)) = (field(4, 4), field(8, 2), field(10, 2))
    else {
        return Ok(None);
    };
    let bits = size.saturating_mul(8);
    let unused = precision > 0
        && precision.saturating_add(offset) <= bits
        && (precision < bits || offset > 0);
    Ok(unused.then_some((precision, offset)))
}
/// Most header blocks (first chunk and continuations) we follow.
const MAX_BLOCKS: usize = 4096;
/// Most bytes of one header block.
const MAX_BLOCK_BYTES: u64 = 16 << 20;
/// How deep shared messages may point to other headers that share again.
const MAX_SHARED_DEPTH: usize = 4;

fn st(what: &str) -> impl Fn(hdf5_reader::error::Error) -> Hdf5Error + '_ {
    move |e| Hdf5Error::structure(what, e)
}

/// Parse the object header at `addr`.
pub(crate) fn parse(h5: &H5, addr: u64) -> Result<ObjectHeader, Hdf5Error> {
    parse_depth(h5, addr, 0)
}

fn parse_depth(h5: &H5, addr: u64, depth: usize) -> Result<ObjectHeader, Hdf5Error> {
    let what = format!("object header at {addr:#x}");
    if depth > MAX_SHARED_DEPTH {
        return Err(Hdf5Error::TooDeep {
            what,
            limit: MAX_SHARED_DEPTH,
        });
    }
    let (version, refcount, raw) = collect_raw(h5, addr, &what)?;
    let mut messages = Vec::with_capacity(raw.len());
    for (ty, flags, data, _) in raw {
        if ty == MSG_CONTINUATION {
            continue;
        }
        messages.push(message(h5, ty, flags, &data, depth, &what)?);
    }
    Ok(ObjectHeader {
        version,
        messages,
        reference_count: refcount,
        modification_time: None,
    })
}

/// Verify the checksums of the object header at `addr` (its first chunk and every
/// continuation block, for a version 2 header; version 1 headers have none) without decoding
/// its messages.
pub(crate) fn check(h5: &H5, addr: u64) -> Result<(), Hdf5Error> {
    collect_raw(h5, addr, &format!("object header at {addr:#x}")).map(|_| ())
}

/// Raw header messages: type, flags, bytes, and creation order (0 when not tracked).
type Raw = Vec<(u16, u8, Vec<u8>, u16)>;

fn continuation(data: &[u8], h5: &H5, what: &str) -> Result<(u64, u64), Hdf5Error> {
    let mut c = Cursor::new(data);
    let a = c.read_offset(h5.os).map_err(st(what))?;
    let l = c.read_length(h5.ls).map_err(st(what))?;
    Ok((a, l))
}

fn v1_messages(
    blk: &[u8],
    raw: &mut Raw,
    blocks: &mut Vec<(u64, u64)>,
    h5: &H5,
    what: &str,
) -> Result<(), Hdf5Error> {
    let mut p = 0usize;
    while p + 8 <= blk.len() {
        let ty = u16::from_le_bytes([blk[p], blk[p + 1]]);
        let size = usize::from(u16::from_le_bytes([blk[p + 2], blk[p + 3]]));
        let flags = blk[p + 4];
        let data = blk
            .get(p + 8..p + 8 + size)
            .ok_or_else(|| Hdf5Error::invalid(what, "message runs past its header block"))?;
        if ty == MSG_CONTINUATION {
            blocks.push(continuation(data, h5, what)?);
        }
        raw.push((ty, flags, data.to_vec(), 0));
        p += 8 + size;
    }
    Ok(())
}

fn v2_messages(
    body: &[u8],
    hflags: u8,
    raw: &mut Raw,
    blocks: &mut Vec<(u64, u64)>,
    h5: &H5,
    what: &str,
) -> Result<(), Hdf5Error> {
    let order = hflags & 0x04 != 0;
    let head = if order { 6 } else { 4 };
    let mut p = 0usize;
    while p + head <= body.len() {
        let ty = u16::from(body[p]);
        let size = usize::from(u16::from_le_bytes([body[p + 1], body[p + 2]]));
        let flags = body[p + 3];
        let data = body
            .get(p + head..p + head + size)
            .ok_or_else(|| Hdf5Error::invalid(what, "message runs past its header chunk"))?;
        if ty == MSG_CONTINUATION {
            blocks.push(continuation(data, h5, what)?);
        }
        let created = if order {
            u16::from_le_bytes([body[p + 4], body[p + 5]])
        } else {
            0
        };
        raw.push((ty, flags, data.to_vec(), created));
        p += head + size;
    }
    Ok(())
}

/// Decode one message: shared ones from the header they live in, attributes ourselves.
fn message(
    h5: &H5,
    ty: u16,
    flags: u8,
    data: &[u8],
    depth: usize,
    what: &str,
) -> Result<HdfMessage, Hdf5Error> {
    if flags & 0x02 != 0 {
        let sm = shared::parse(&mut Cursor::new(data), ty, h5.os, h5.ls, data.len())
            .map_err(st(what))?;
        return resolve_shared(h5, &sm, ty, depth, what);
    }
    if ty == MSG_ATTRIBUTE {
        return Ok(HdfMessage::Attribute(attribute(h5, data, depth, what)?));
    }
    // a virtual dataset's layout (version 4 or 5, class 3), which hdf5-reader refuses: passed
    // on as it is, for `meta.rs` to read its mapping block
    if ty == MSG_LAYOUT && matches!(data.first(), Some(4 | 5)) && data.get(1) == Some(&3) {
        return Ok(HdfMessage::Unknown {
            type_id: MSG_LAYOUT,
            data: data.to_vec(),
        });
    }
    messages::parse_message(ty, data.len(), &mut Cursor::new(data), h5.os, h5.ls).map_err(st(what))
}

fn resolve_shared(
    h5: &H5,
    sm: &SharedMessage,
    ty: u16,
    depth: usize,
    what: &str,
) -> Result<HdfMessage, Hdf5Error> {
    let address = match sm {
        SharedMessage::SharedInOhdr { address, .. } => address,
        SharedMessage::SharedInSohm { heap_id, .. } => {
            let bytes = h5.sohm_message(ty, heap_id, what)?;
            if ty == MSG_ATTRIBUTE {
                return Ok(HdfMessage::Attribute(attribute(
                    h5,
                    &bytes,
                    depth + 1,
                    what,
                )?));
            }
            return messages::parse_message(
                ty,
                bytes.len(),
                &mut Cursor::new(&bytes),
                h5.os,
                h5.ls,
            )
            .map_err(st(what));
        }
    };
    let target = parse_depth(h5, *address, depth + 1)?;
    let want = |m: &HdfMessage| match ty {
        MSG_DATATYPE => matches!(m, HdfMessage::Datatype(_)),
        MSG_DATASPACE => matches!(m, HdfMessage::Dataspace(_)),
        0x0004 | 0x0005 => matches!(m, HdfMessage::FillValue(_)),
        0x000B => matches!(m, HdfMessage::FilterPipeline(_)),
        MSG_ATTRIBUTE => matches!(m, HdfMessage::Attribute(_)),
        _ => false,
    };
    target.messages.into_iter().find(want).ok_or_else(|| {
        Hdf5Error::invalid(
            what,
            format!("shared message {ty:#x} not found at {address:#x}"),
        )
    })
}

/// A shared message of type `ty` stored inline as a reference (`bytes`), resolved from the
/// header it lives in.
fn shared_message(
    h5: &H5,
    bytes: &[u8],
    ty: u16,
    depth: usize,
    what: &str,
) -> Result<HdfMessage, Hdf5Error> {
    let sm =
        shared::parse(&mut Cursor::new(bytes), ty, h5.os, h5.ls, bytes.len()).map_err(st(what))?;
    resolve_shared(h5, &sm, ty, depth, what)
}

/// An attribute message, versions 1 to 3, with shared datatype and dataspace allowed.
pub(crate) fn attribute(
    h5: &H5,
    data: &[u8],
    depth: usize,
    what: &str,
) -> Result<AttributeMessage, Hdf5Error> {
    let short = || Hdf5Error::invalid(what, "attribute message shorter than its fields");
    let take = |p: &mut usize, n: usize| -> Result<&[u8], Hdf5Error> {
        let s = data
            .get(*p..p.checked_add(n).ok_or_else(short)?)
            .ok_or_else(short)?;
        *p += n;
        Ok(s)
    };
    let version = *data.first().ok_or_else(short)?;
    let flags = *data.get(1).ok_or_else(short)?;
    let u16_at = |i: usize| -> Result<usize, Hdf5Error> {
        let b = data.get(i..i + 2).ok_or_else(short)?;
        Ok(usize::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let (name_len, dt_len, ds_len) = (u16_at(2)?, u16_at(4)?, u16_at(6)?);
    let pad = |n: usize| if version == 1 { n.div_ceil(8) * 8 } else { n };
    let mut p = if version == 3 { 9 } else { 8 };
    if !(1..=3).contains(&version) {
        return Err(Hdf5Error::invalid(
            what,
            format!("attribute message version {version}"),
        ));
    }
    let name_bytes = take(&mut p, name_len)?;
    let name =
        String::from_utf8_lossy(name_bytes.split(|&b| b == 0).next().unwrap_or(&[])).into_owned();
    p += pad(name_len) - name_len;
    let dt_bytes = take(&mut p, dt_len)?;
    p += pad(dt_len) - dt_len;
    let ds_bytes = take(&mut p, ds_len)?;
    p += pad(ds_len) - ds_len;
    let awhat = format!("{what}: attribute \"{name}\"");
    // a shared datatype or dataspace: the message stored elsewhere (flag bits 0 and 1)
    let shared = |bytes: &[u8], kind: u16, flag: u8| -> Result<Option<HdfMessage>, Hdf5Error> {
        if flags & flag == 0 {
            return Ok(None);
        }
        shared_message(h5, bytes, kind, depth, &awhat).map(Some)
    };
    let wrong = |what_kind: &str| {
        Hdf5Error::invalid(&awhat, format!("shared {what_kind} is not a {what_kind}"))
    };
    let dt = match shared(dt_bytes, MSG_DATATYPE, 0x01)? {
        Some(HdfMessage::Datatype(d)) => d,
        Some(_) => return Err(wrong("datatype")),
        None => messages::datatype::parse(&mut Cursor::new(dt_bytes), dt_bytes.len())
            .map_err(st(&awhat))?,
    };
    let ds = match shared(ds_bytes, MSG_DATASPACE, 0x02)? {
        Some(HdfMessage::Dataspace(d)) => d,
        Some(_) => return Err(wrong("dataspace")),
        None => {
            messages::dataspace::parse(&mut Cursor::new(ds_bytes), h5.os, h5.ls, ds_bytes.len())
                .map_err(st(&awhat))?
        }
    };
    let n = ds
        .num_elements()
        .map_err(|e| Hdf5Error::invalid(&awhat, e.to_string()))?;
    let size = n
        .checked_mul(u64::from(dt.size))
        .and_then(|s| usize::try_from(s).ok())
        .ok_or_else(|| Hdf5Error::invalid(&awhat, "data size overflows"))?;
    let raw_data = data
        .get(p..p.checked_add(size).ok_or_else(short)?)
        .ok_or_else(|| {
            Hdf5Error::invalid(&awhat, format!("{size} bytes of data, message ends first"))
        })?
        .to_vec();
    Ok(AttributeMessage {
        name,
        datatype: dt.datatype,
        dataspace: ds,
        raw_data,
    })
}

/// Creation-order index of each compact attribute of the object header at `addr`, by attribute
/// name (all 0 when the header is version 1 or does not track creation order). hdf5-reader
/// drops the per-message creation order, and HDF5 reuses freed message slots, so header order
/// is not creation order (netCDF-C lists attributes by creation order).
pub(crate) fn attribute_orders(
    h5: &H5,
    addr: u64,
) -> Result<std::collections::HashMap<Vec<u8>, (u16, usize)>, Hdf5Error> {
    let what = format!("object header at {addr:#x}");
    let (_, _, raw) = collect_raw(h5, addr, &what)?;
    // (creation order when tracked, else 0; then the message's place in the header walk)
    Ok(raw
        .iter()
        .enumerate()
        .filter(|(_, (ty, flags, _, _))| *ty == MSG_ATTRIBUTE && flags & 0x02 == 0)
        .filter_map(|(i, (_, _, data, order))| attribute_name(data).map(|n| (n, (*order, i))))
        .collect())
}

/// The name bytes of an attribute message (versions 1 to 3), without its terminating NUL.
fn attribute_name(data: &[u8]) -> Option<Vec<u8>> {
    let version = *data.first()?;
    let name_len = usize::from(u16::from_le_bytes([*data.get(2)?, *data.get(3)?]));
    let start = match version {
        1 | 2 => 8,
        3 => 9,
        _ => return None,
    };
    let raw = data.get(start..start + name_len)?;
    Some(raw.split(|&c| c == 0).next().unwrap_or(raw).to_vec())
}

/// The bytes of the first message of type `ty` of the object header at `addr` (not shared).
pub(crate) fn raw_message(h5: &H5, addr: u64, ty: u16) -> Result<Option<Vec<u8>>, Hdf5Error> {
    let (_, _, raw) = collect_raw(h5, addr, &format!("object header at {addr:#x}"))?;
    Ok(raw
        .into_iter()
        .find(|(t, flags, _, _)| *t == ty && flags & 0x02 == 0)
        .map(|(_, _, data, _)| data))
}

/// The raw messages (type, flags, bytes) of the object header at `addr`, continuation blocks
/// followed, with the header version and reference count.
fn collect_raw(h5: &H5, addr: u64, what: &str) -> Result<(u8, u32, Raw), Hdf5Error> {
    let what = what.to_string();
    let sig = h5.read(addr, 4, &what)?;
    let mut raw: Raw = Vec::new();
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    let (version, refcount) = if sig == b"OHDR" {
        let pre = h5.read(addr, 6, &what)?;
        let flags = pre[5];
        let mut off = 6u64;
        if flags & 0x20 != 0 {
            off += 16;
        }
        if flags & 0x10 != 0 {
            off += 4;
        }
        let width = 1u64 << (flags & 3);
        let sz = h5.read(addr + off, width, &what)?;
        let mut b = [0u8; 8];
        b[..sz.len()].copy_from_slice(&sz);
        let chunk0 = u64::from_le_bytes(b);
        off += width;
        if chunk0 > MAX_BLOCK_BYTES {
            return Err(Hdf5Error::invalid(
                &what,
                format!("first chunk of {chunk0} bytes"),
            ));
        }
        // the prefix, chunk 0 (messages and gap), then the checksum of all that: IV.A.1.b
        let whole = h5.read(addr, off + chunk0 + 4, &what)?;
        let body = verified(&whole, addr, "object header")?;
        v2_messages(
            body.get(off as usize..).unwrap_or_default(),
            flags,
            &mut raw,
            &mut blocks,
            h5,
            &what,
        )?;
        let mut seen = HashSet::new();
        // chunks in the order their continuation messages are met, as HDF5 walks them (the
        // order of compact attributes without tracked creation order)
        while let Some((a, l)) = next_block(&mut blocks, &mut seen, &what)? {
            if !(8..=MAX_BLOCK_BYTES).contains(&l) {
                return Err(Hdf5Error::invalid(
                    &what,
                    format!("continuation block of {l} bytes"),
                ));
            }
            let blk = h5.read(a, l, &what)?;
            if &blk[..4] != b"OCHK" {
                return Err(Hdf5Error::invalid(
                    &what,
                    format!("continuation at {a:#x} has no OCHK signature"),
                ));
            }
            // signature, messages and gap, then the checksum of those
            let body = verified(&blk, a, &format!("{what}: continuation block"))?;
            v2_messages(
                body.get(4..).unwrap_or_default(),
                flags,
                &mut raw,
                &mut blocks,
                h5,
                &what,
            )?;
        }
        (2u8, 0u32)
    } else {
        let pre = h5.read(addr, 16, &what)?;
        if pre[0] != 1 {
            return Err(Hdf5Error::invalid(
                &what,
                format!("object header version {}", pre[0]),
            ));
        }
        let refcount = u32::from_le_bytes([pre[4], pre[5], pre[6], pre[7]]);
        let size = u64::from(u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]));
        blocks.push((addr + 16, size));
        let mut seen = HashSet::new();
        // chunks in the order their continuation messages are met, as HDF5 walks them (the
        // order of compact attributes without tracked creation order)
        while let Some((a, l)) = next_block(&mut blocks, &mut seen, &what)? {
            if l > MAX_BLOCK_BYTES {
                return Err(Hdf5Error::invalid(
                    &what,
                    format!("header block of {l} bytes"),
                ));
            }
            let blk = h5.read(a, l, &what)?;
            v1_messages(&blk, &mut raw, &mut blocks, h5, &what)?;
        }
        (1u8, refcount)
    };
    Ok((version, refcount, raw))
}

/// The next header block to read (the first continuation met that is not read yet), `None`
/// when all are read; an error when a block comes again (a cycle) or there are too many.
fn next_block(
    blocks: &mut Vec<(u64, u64)>,
    seen: &mut HashSet<u64>,
    what: &str,
) -> Result<Option<(u64, u64)>, Hdf5Error> {
    if blocks.is_empty() {
        return Ok(None);
    }
    let (a, l) = blocks.remove(0);
    if !seen.insert(a) || seen.len() > MAX_BLOCKS {
        return Err(Hdf5Error::invalid(
            what,
            "continuation blocks repeat (cycle)",
        ));
    }
    Ok(Some((a, l)))
}

/// `block` (a structure read whole from `addr`) without its last 4 bytes, when those are the
/// lookup3 checksum of the rest; `what` names the structure in the error.
pub(crate) fn verified<'a>(block: &'a [u8], addr: u64, what: &str) -> Result<&'a [u8], Hdf5Error> {
    let split = block.len().checked_sub(4).ok_or_else(|| {
        Hdf5Error::invalid(format!("{what} at {addr:#x}"), "shorter than its checksum")
    })?;
    let (body, sum) = block.split_at(split);
    let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
    let computed = crate::format::checksum::lookup3(body);
    if stored != computed {
        return Err(Hdf5Error::checksum(
            format!("{what} at {addr:#x}"),
            stored,
            computed,
        ));
    }
    Ok(body)
}

/// The data layout of a dataset whose layout message is version 1 or 2, decoded by us:
/// hdf5-reader 0.12.1 skips 3 reserved bytes in version 2 where the format has 5 (HDF5 file
/// format specification, "Data Layout Message", versions 1 and 2), which misplaces the data
/// address of files written by HDF5 1.6-era libraries. `None` for later versions.
pub(crate) fn legacy_layout(
    h5: &H5,
    addr: u64,
) -> Result<Option<hdf5_reader::messages::layout::DataLayout>, Hdf5Error> {
    use hdf5_reader::messages::layout::DataLayout;
    let what = format!("object header at {addr:#x}");
    let (_, _, raw) = collect_raw(h5, addr, &what)?;
    let Some((_, _, data, _)) = raw.iter().find(|(ty, flags, d, _)| {
        *ty == MSG_LAYOUT && flags & 0x02 == 0 && matches!(d.first(), Some(1 | 2))
    }) else {
        return Ok(None);
    };
    let bad = || Hdf5Error::invalid(&what, "data layout message (version 1/2) too short");
    let rank = usize::from(*data.get(1).ok_or_else(bad)?);
    let class = *data.get(2).ok_or_else(bad)?;
    let mut p = 8usize;
    let os = usize::from(h5.os);
    let mut address = u64::MAX;
    if class == 1 || class == 2 {
        let b = data.get(p..p + os).ok_or_else(bad)?;
        let mut w = [0u8; 8];
        w[..os.min(8)].copy_from_slice(&b[..os.min(8)]);
        address = u64::from_le_bytes(w);
        p += os;
    }
    let mut dims = Vec::with_capacity(rank);
    for _ in 0..rank {
        let b = data.get(p..p + 4).ok_or_else(bad)?;
        dims.push(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        p += 4;
    }
    Ok(Some(match class {
        0 => {
            let b = data.get(p..p + 4).ok_or_else(bad)?;
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
            let bytes = data.get(p + 4..p + 4 + n).ok_or_else(bad)?;
            DataLayout::Compact {
                data: bytes.to_vec(),
            }
        }
        1 => DataLayout::Contiguous {
            address,
            size: dims.iter().map(|&d| u64::from(d)).product(),
        },
        2 => {
            let element_size = dims.last().copied().unwrap_or(0);
            let cd = dims[..dims.len().saturating_sub(1)].to_vec();
            DataLayout::Chunked {
                address,
                dims: cd,
                element_size,
                chunk_indexing: None,
            }
        }
        c => return Err(Hdf5Error::invalid(&what, format!("data layout class {c}"))),
    }))
}
