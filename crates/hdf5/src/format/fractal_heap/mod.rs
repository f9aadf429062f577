//! Fractal heaps of managed objects (spec III.G), laid out whole: the header (`FRHP`), a root
//! direct block (`FHDB`) when everything fits the first block, otherwise a root indirect block
//! (`FHIB`) whose doubling table holds direct blocks and, past the largest direct block size,
//! child indirect blocks. Objects are placed in heap-offset order, each in one direct block;
//! blocks no object needs are not allocated (their entries stay undefined), so the heap has
//! no free-space manager.
//!
//! The parameters are libhdf5's for dense links and dense attributes (table width 4, blocks of
//! 512 or 1024 up to 64 KiB, 32- or 40-bit heap offsets, 7- or 8-byte heap IDs, objects of
//! up to 4 KiB managed). Larger objects are "huge": stored as they are after the blocks and
//! found through a version 2 B-tree of type 1 (indirectly accessed, unfiltered) keyed by the
//! huge object ID their heap ID holds.

pub(crate) mod read;

use super::{btree2, Put, ADDR, UNDEF};

/// A heap's doubling table and heap ID shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeapParams {
    /// Bytes of a heap ID.
    pub id_len: usize,
    /// Bits of a heap offset ("maximum heap size").
    pub heap_bits: u16,
    /// Size of the blocks of the first two rows.
    pub start: u64,
    /// Largest direct block.
    pub max_direct: u64,
    /// Blocks per row.
    pub width: u64,
}

/// Dense links (libhdf5's group heap).
pub(crate) const LINKS: HeapParams = HeapParams {
    id_len: 7,
    heap_bits: 32,
    start: 512,
    max_direct: 65536,
    width: 4,
};

/// Dense attributes (libhdf5's object header heap).
pub(crate) const ATTRIBUTES: HeapParams = HeapParams {
    id_len: 8,
    heap_bits: 40,
    start: 1024,
    max_direct: 65536,
    width: 4,
};

/// libhdf5's largest managed object; larger ones are huge objects.
const MAX_MANAGED: u64 = 4096;
/// Bytes of the heap header with 8-byte addresses and lengths.
pub(crate) const HEADER_LEN: u64 = 146;

/// A laid-out heap: its blocks (address, bytes, header first), where the header is, each
/// object's heap ID, and the bytes from the first block to past the last.
#[derive(Debug)]
pub(crate) struct LaidHeap {
    pub header: u64,
    pub ids: Vec<Vec<u8>>,
    pub blocks: Vec<(u64, Vec<u8>)>,
    pub len: u64,
}

impl HeapParams {
    fn off_bytes(&self) -> usize {
        usize::from(self.heap_bits).div_ceil(8)
    }
    fn direct_overhead(&self) -> u64 {
        // signature, version, heap header address, block offset, checksum
        5 + ADDR as u64 + self.off_bytes() as u64 + 4
    }
    /// Rows of direct blocks: the starting size twice, then doubling to the maximum.
    fn max_direct_rows(&self) -> u64 {
        u64::from(self.max_direct.trailing_zeros() - self.start.trailing_zeros()) + 2
    }
    fn row_size(&self, r: u64) -> u64 {
        if r == 0 {
            self.start
        } else {
            self.start << (r - 1)
        }
    }
    fn row_offset(&self, r: u64) -> u64 {
        if r == 0 {
            0
        } else {
            (self.width * self.start) << (r - 1)
        }
    }
    /// Rows of an indirect block covering `size` bytes of heap space.
    fn rows_for(&self, size: u64) -> u64 {
        u64::from(size.trailing_zeros()) - u64::from((self.start * self.width).trailing_zeros()) + 1
    }
    fn len_bytes(&self, max_managed: u64) -> usize {
        // libhdf5: the smaller of the encoding sizes of the largest direct block and the
        // largest managed object, each (floor(log2(x)) / 8) + 1
        let enc = |x: u64| (63 - x.max(1).leading_zeros() as usize) / 8 + 1;
        enc(self.max_direct).min(enc(max_managed))
    }
}

/// Direct blocks in heap-offset order over an indirect block of `nrows` rows at `base`,
/// calling `f(offset, size)` until it returns false.
fn walk_direct(p: &HeapParams, base: u64, nrows: u64, f: &mut dyn FnMut(u64, u64) -> bool) -> bool {
    for r in 0..nrows {
        let size = p.row_size(r);
        for c in 0..p.width {
            let at = base + p.row_offset(r) + c * size;
            let go = if r < p.max_direct_rows() {
                f(at, size)
            } else {
                walk_direct(p, at, p.rows_for(size), f)
            };
            if !go {
                return false;
            }
        }
    }
    true
}

enum Entry {
    Empty,
    Direct(usize),
    Indirect(Box<Indirect>),
}

struct Indirect {
    offset: u64,
    nrows: u64,
    entries: Vec<Entry>,
    addr: u64,
}

/// One used direct block: heap offset, size, objects (their positions in the block).
struct Direct {
    offset: u64,
    size: u64,
    objects: Vec<(usize, u64)>,
    addr: u64,
}

/// Lay out a heap of `objects` at address `at`.
pub(crate) fn lay_out(p: &HeapParams, objects: &[Vec<u8>], at: u64) -> LaidHeap {
    let overhead = p.direct_overhead();
    let max_managed = MAX_MANAGED;
    let managed: Vec<usize> = (0..objects.len())
        .filter(|&i| objects[i].len() as u64 <= max_managed)
        .collect();
    let huge: Vec<usize> = (0..objects.len())
        .filter(|&i| objects[i].len() as u64 > max_managed)
        .collect();
    // place every managed object: the next direct block when it does not fit the current one
    let mut blocks: Vec<Direct> = Vec::new();
    let single = managed
        .iter()
        .map(|&i| objects[i].len() as u64)
        .sum::<u64>()
        + overhead
        <= p.start;
    if single && !managed.is_empty() {
        let mut pos = overhead;
        let mut objs = Vec::with_capacity(managed.len());
        for &i in &managed {
            objs.push((i, pos));
            pos += objects[i].len() as u64;
        }
        blocks.push(Direct {
            offset: 0,
            size: p.start,
            objects: objs,
            addr: 0,
        });
    } else if !managed.is_empty() {
        let mut next = 0usize;
        walk_direct(p, 0, p.rows_for(1 << p.heap_bits), &mut |offset, size| {
            let mut pos = overhead;
            let mut objs = Vec::new();
            while let Some(&i) = managed.get(next) {
                let len = objects[i].len() as u64;
                if pos + len > size {
                    break;
                }
                objs.push((i, pos));
                pos += len;
                next += 1;
            }
            if !objs.is_empty() {
                blocks.push(Direct {
                    offset,
                    size,
                    objects: objs,
                    addr: 0,
                });
            }
            next < managed.len()
        });
    }
    // the root: a direct block, or an indirect block of as many rows as the last block needs
    let end = blocks.last().map_or(0, |b| b.offset + b.size);
    let mut root = if single || blocks.is_empty() {
        None
    } else {
        let mut nrows = 1;
        while p.row_offset(nrows) < end {
            nrows += 1;
        }
        let mut k = 0usize;
        Some(build_indirect(p, 0, nrows, &blocks, &mut k))
    };
    // addresses: header, indirect blocks (pre-order), direct blocks
    let mut next = at + HEADER_LEN;
    if let Some(r) = root.as_mut() {
        assign_indirect(p, r, &mut next);
    }
    for b in &mut blocks {
        b.addr = next;
        next += b.size;
    }
    // huge objects after the blocks, then their index (record: address, length, ID)
    let huge_id_len = p.id_len - 1;
    let mut huge_addrs = Vec::with_capacity(huge.len());
    for &i in &huge {
        huge_addrs.push(next);
        next += objects[i].len() as u64;
    }
    let huge_tree = (!huge.is_empty()).then(|| {
        // the record's ID field has the size of a length (8), whatever the heap ID's size
        let mut records = Vec::with_capacity(huge.len() * 24);
        for (k, &i) in huge.iter().enumerate() {
            records.u64(huge_addrs[k]);
            records.u64(objects[i].len() as u64);
            records.u64(k as u64 + 1);
        }
        let t = btree2::lay_out(btree2::kind::HUGE, 24, &records, next);
        next += t.len;
        t
    });
    let len = next - at;
    // heap IDs
    let off_bytes = p.off_bytes();
    let len_bytes = p.len_bytes(max_managed);
    let mut ids = vec![Vec::new(); objects.len()];
    for b in &blocks {
        for &(i, pos) in &b.objects {
            let mut id = Vec::with_capacity(p.id_len);
            id.u8(0); // version 0, managed
            id.uint(b.offset + pos, off_bytes);
            id.uint(objects[i].len() as u64, len_bytes);
            id.resize(p.id_len, 0);
            ids[i] = id;
        }
    }
    for (k, &i) in huge.iter().enumerate() {
        let mut id = Vec::with_capacity(p.id_len);
        id.u8(0x10); // version 0, huge
        id.uint(k as u64 + 1, huge_id_len);
        ids[i] = id;
    }
    // images
    let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
    let root_addr = match &root {
        Some(r) => r.addr,
        None => blocks.first().map_or(UNDEF, |b| b.addr),
    };
    let allocated: u64 = blocks.iter().map(|b| b.size).sum();
    let used: u64 = blocks
        .iter()
        .map(|b| {
            overhead
                + b.objects
                    .iter()
                    .map(|&(i, _)| objects[i].len() as u64)
                    .sum::<u64>()
        })
        .sum();
    let mut h = Vec::with_capacity(HEADER_LEN as usize);
    h.extend_from_slice(b"FRHP");
    h.u8(0);
    h.u16(p.id_len as u16);
    h.u16(0); // no I/O filters
    h.u8(0x02); // direct blocks are checksummed
    h.u32(max_managed as u32);
    h.u64(huge.len() as u64); // next huge object ID (the last one given)
    h.u64(huge_tree.as_ref().map_or(UNDEF, |t| t.header));
    h.u64(allocated - used); // free space in managed blocks
    h.u64(UNDEF); // free-space manager
    h.u64(match &root {
        Some(r) => p.row_offset(r.nrows),
        None => allocated,
    });
    h.u64(allocated);
    h.u64(if root.is_some() { end } else { 0 }); // direct block allocation iterator
    h.u64(managed.len() as u64);
    h.u64(huge.iter().map(|&i| objects[i].len() as u64).sum());
    h.u64(huge.len() as u64);
    h.u64(0); // tiny objects: size, count
    h.u64(0);
    h.u16(p.width as u16);
    h.u64(p.start);
    h.u64(p.max_direct);
    h.u16(p.heap_bits);
    h.u16(1); // starting rows of the root indirect block
    h.u64(root_addr);
    h.u16(root.as_ref().map_or(0, |r| r.nrows as u16));
    h.checksum_from(0);
    debug_assert_eq!(h.len() as u64, HEADER_LEN);
    out.push((at, h));
    if let Some(r) = &root {
        encode_indirect(p, r, at, &blocks, &mut out);
    }
    for b in &blocks {
        let mut d = Vec::with_capacity(b.size as usize);
        d.extend_from_slice(b"FHDB");
        d.u8(0);
        d.u64(at);
        d.uint(b.offset, off_bytes);
        let sum_at = d.len();
        d.u32(0);
        for &(i, _) in &b.objects {
            d.extend_from_slice(&objects[i]);
        }
        d.resize(b.size as usize, 0);
        // the checksum covers the whole block with its own field zero
        let sum = crate::format::checksum::lookup3(&d);
        d[sum_at..sum_at + 4].copy_from_slice(&sum.to_le_bytes());
        out.push((b.addr, d));
    }
    for (k, &i) in huge.iter().enumerate() {
        out.push((huge_addrs[k], objects[i].clone()));
    }
    if let Some(t) = huge_tree {
        out.extend(t.blocks);
    }
    LaidHeap {
        header: at,
        ids,
        blocks: out,
        len,
    }
}

/// The indirect block of `nrows` rows at heap offset `offset`; `k` walks `blocks` in order.
fn build_indirect(
    p: &HeapParams,
    offset: u64,
    nrows: u64,
    blocks: &[Direct],
    k: &mut usize,
) -> Indirect {
    let mut entries = Vec::with_capacity((nrows * p.width) as usize);
    for r in 0..nrows {
        let size = p.row_size(r);
        for c in 0..p.width {
            let at = offset + p.row_offset(r) + c * size;
            let entry = match blocks.get(*k) {
                Some(b) if b.offset >= at && b.offset < at + size => {
                    if r < p.max_direct_rows() {
                        *k += 1;
                        Entry::Direct(*k - 1)
                    } else {
                        Entry::Indirect(Box::new(build_indirect(
                            p,
                            at,
                            p.rows_for(size),
                            blocks,
                            k,
                        )))
                    }
                }
                _ => Entry::Empty,
            };
            entries.push(entry);
        }
    }
    Indirect {
        offset,
        nrows,
        entries,
        addr: 0,
    }
}

fn indirect_len(p: &HeapParams, nrows: u64) -> u64 {
    5 + ADDR as u64 + p.off_bytes() as u64 + nrows * p.width * ADDR as u64 + 4
}

fn assign_indirect(p: &HeapParams, b: &mut Indirect, next: &mut u64) {
    b.addr = *next;
    *next += indirect_len(p, b.nrows);
    for e in &mut b.entries {
        if let Entry::Indirect(child) = e {
            assign_indirect(p, child, next);
        }
    }
}

fn encode_indirect(
    p: &HeapParams,
    b: &Indirect,
    header: u64,
    blocks: &[Direct],
    out: &mut Vec<(u64, Vec<u8>)>,
) {
    let mut d = Vec::with_capacity(indirect_len(p, b.nrows) as usize);
    d.extend_from_slice(b"FHIB");
    d.u8(0);
    d.u64(header);
    d.uint(b.offset, p.off_bytes());
    for e in &b.entries {
        d.u64(match e {
            Entry::Empty => UNDEF,
            Entry::Direct(i) => blocks[*i].addr,
            Entry::Indirect(child) => child.addr,
        });
    }
    d.checksum_from(0);
    out.push((b.addr, d));
    for e in &b.entries {
        if let Entry::Indirect(child) = e {
            encode_indirect(p, child, header, blocks, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image of a laid-out heap, from its header to past its last block.
    fn image(h: &LaidHeap) -> Vec<u8> {
        let mut img = vec![0u8; h.len as usize];
        for (addr, bytes) in &h.blocks {
            let at = (addr - h.header) as usize;
            img[at..at + bytes.len()].copy_from_slice(bytes);
        }
        img
    }

    /// The object of heap ID `id` read back from the image (a small reader of our own:
    /// offset -> the block holding it, found through the block offsets stored in each
    /// direct block).
    fn read_back(h: &LaidHeap, p: &HeapParams, id: &[u8]) -> Vec<u8> {
        let ob = p.off_bytes();
        let off = id[1..1 + ob]
            .iter()
            .rev()
            .fold(0u64, |a, &b| a << 8 | u64::from(b));
        let lb = p.len_bytes(MAX_MANAGED);
        let len = id[1 + ob..1 + ob + lb]
            .iter()
            .rev()
            .fold(0u64, |a, &b| a << 8 | u64::from(b));
        for (_, b) in &h.blocks {
            if &b[..4] != b"FHDB" {
                continue;
            }
            let bo = b[13..13 + ob]
                .iter()
                .rev()
                .fold(0u64, |a, &x| a << 8 | u64::from(x));
            if off >= bo && off < bo + b.len() as u64 {
                let at = (off - bo) as usize;
                return b[at..at + len as usize].to_vec();
            }
        }
        panic!("object at heap offset {off} not found");
    }

    #[test]
    fn few_objects_live_in_a_root_direct_block() {
        let objs: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 20]).collect();
        let h = lay_out(&LINKS, &objs, 1000);
        assert_eq!(h.blocks.len(), 2);
        assert_eq!(&h.blocks[0].1[..4], b"FRHP");
        assert_eq!(h.blocks[1].0, 1000 + HEADER_LEN);
        assert_eq!(h.ids[0].len(), 7);
        for (i, id) in h.ids.iter().enumerate() {
            assert_eq!(read_back(&h, &LINKS, id), objs[i]);
        }
        let img = image(&h);
        assert_eq!(img.len() as u64, HEADER_LEN + 512);
        // header checksum
        let sum = u32::from_le_bytes(img[142..146].try_into().unwrap());
        assert_eq!(sum, crate::format::checksum::lookup3(&img[..142]));
    }

    #[test]
    fn many_objects_need_indirect_blocks_and_nested_ones() {
        // ~3 MiB of objects: past the root's direct rows (512 KiB), into child indirect
        // blocks
        let objs: Vec<Vec<u8>> = (0..100_000u32)
            .map(|i| format!("object number {i:>10}").into_bytes())
            .collect();
        let h = lay_out(&ATTRIBUTES, &objs, 4096);
        assert_eq!(h.ids[0].len(), 8);
        for i in [0usize, 1, 999, 50_000, 99_999] {
            assert_eq!(read_back(&h, &ATTRIBUTES, &h.ids[i]), objs[i], "object {i}");
        }
        let indirect = h.blocks.iter().filter(|(_, b)| &b[..4] == b"FHIB").count();
        assert!(
            indirect > 1,
            "child indirect blocks expected, got {indirect}"
        );
        // blocks do not overlap and stay inside the heap's extent
        assert_eq!(crate::format::disjoint_end(&h.blocks), 4096 + h.len);
    }

    #[test]
    fn big_objects_are_huge_objects_indexed_by_id() {
        let objs = vec![
            vec![1u8; 10],
            vec![2u8; 20_000],
            vec![3u8; 10],
            vec![4u8; 300_000],
        ];
        let h = lay_out(&ATTRIBUTES, &objs, 0);
        assert_eq!(h.ids[1][0], 0x10);
        assert_eq!(&h.ids[1][1..], &[1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&h.ids[3][1..], &[2, 0, 0, 0, 0, 0, 0]);
        assert_eq!(read_back(&h, &ATTRIBUTES, &h.ids[2]), objs[2]);
        let hdr = &h.blocks[0].1;
        let uint = |a: usize| u64::from_le_bytes(hdr[a..a + 8].try_into().unwrap());
        // next huge ID, huge B-tree address, ..., huge size and count
        assert_eq!(uint(14), 2);
        let tree = uint(22);
        let (_, t) = h.blocks.iter().find(|(a, _)| *a == tree).unwrap();
        assert_eq!(&t[..6], &[b'B', b'T', b'H', b'D', 0, 1]);
        assert_eq!((uint(78), uint(86)), (320_000, 2));
        // the objects themselves, as they are, at the addresses the records give
        let (_, leaf) = h.blocks.iter().find(|(_, b)| &b[..4] == b"BTLF").unwrap();
        let addr = u64::from_le_bytes(leaf[6..14].try_into().unwrap());
        let (_, obj) = h.blocks.iter().find(|(a, _)| *a == addr).unwrap();
        assert_eq!(obj, &objs[1]);
        let ends: u64 = h
            .blocks
            .iter()
            .map(|(a, b)| a + b.len() as u64)
            .max()
            .unwrap();
        assert_eq!(ends, h.len);
    }
}
