//! Version 2 B-trees (spec III.A.2), built whole from sorted records: the header (`BTHD`),
//! internal nodes (`BTIN`) and leaves (`BTLF`), each node of 512 bytes as libhdf5 makes them
//! for dense links and attributes, with a checksum after its last record.
//!
//! Node capacities follow the header's node and record sizes exactly as readers compute them
//! (libhdf5's "max records" of a leaf, then of each internal depth with its child pointers:
//! address, records in the child, and below depth 1 the records under the child), so the
//! shape chosen here (the shallowest tree, children filled evenly) decodes everywhere.

use super::{Put, ADDR, UNDEF};

/// Record types we write (spec III.A.2, "Version 2 B-tree Record Types").
pub(crate) mod kind {
    /// Huge objects of a fractal heap, indirectly accessed and unfiltered: address (8),
    /// length (8), huge object ID (8: the size of a length, as libhdf5 and the spec have it).
    pub const HUGE: u8 = 1;
    /// Link name index: name hash (4), heap ID (7).
    pub const LINK_NAME: u8 = 5;
    /// Link creation order index: creation order (8), heap ID (7).
    pub const LINK_ORDER: u8 = 6;
    /// Attribute name index: heap ID (8), message flags (1), creation order (4), hash (4).
    pub const ATTR_NAME: u8 = 8;
    /// Attribute creation order index: heap ID (8), message flags (1), creation order (4).
    pub const ATTR_ORDER: u8 = 9;
}

/// Node size libhdf5 uses for the dense storage indexes.
pub(crate) const NODE_SIZE: u64 = 512;
/// Bytes of the header.
pub(crate) const HEADER_LEN: u64 = 38;
/// Signature, version, type, checksum.
const PREFIX: u64 = 10;

/// Bytes needed to encode counts up to `n` (libhdf5: floor(log2(n)) / 8 + 1).
fn enc_size(n: u64) -> usize {
    (63 - n.max(1).leading_zeros() as usize) / 8 + 1
}

/// Capacities of each depth: (max records of a node, max records under it, bytes of that
/// count).
fn capacities(rec: u64, depth: usize) -> Vec<(u64, u64, usize)> {
    let leaf = (NODE_SIZE - PREFIX) / rec;
    let max_nrec_size = enc_size(leaf);
    let mut out = vec![(leaf, leaf, 0usize)];
    for d in 1..=depth {
        let below = if d > 1 { out[d - 1].2 } else { 0 };
        let ptr = ADDR as u64 + max_nrec_size as u64 + below as u64;
        let max = (NODE_SIZE - (PREFIX + ptr)) / (rec + ptr);
        let cum = (max + 1) * out[d - 1].1 + max;
        out.push((max, cum, enc_size(cum)));
    }
    out
}

/// A laid-out tree: node images (address, bytes; the header first) and its extent.
#[derive(Debug)]
pub(crate) struct LaidTree {
    pub header: u64,
    pub blocks: Vec<(u64, Vec<u8>)>,
    pub len: u64,
}

struct Node {
    depth: usize,
    /// Record range [from, to) of this node's own records when a leaf; for an internal
    /// node, its separator records.
    records: Vec<usize>,
    children: Vec<Node>,
    total: u64,
    addr: u64,
}

fn build(from: usize, to: usize, depth: usize, caps: &[(u64, u64, usize)]) -> Node {
    let n = to - from;
    if depth == 0 {
        return Node {
            depth,
            records: (from..to).collect(),
            children: Vec::new(),
            total: n as u64,
            addr: 0,
        };
    }
    let below = caps[depth - 1].1 as usize;
    let c = (n + 1).div_ceil(below + 1).max(1);
    let in_children = n - (c - 1);
    let mut records = Vec::with_capacity(c - 1);
    let mut children = Vec::with_capacity(c);
    let mut at = from;
    for i in 0..c {
        let take = in_children / c + usize::from(i < in_children % c);
        children.push(build(at, at + take, depth - 1, caps));
        at += take;
        if i + 1 < c {
            records.push(at);
            at += 1;
        }
    }
    Node {
        depth,
        records,
        children,
        total: n as u64,
        addr: 0,
    }
}

fn assign(n: &mut Node, next: &mut u64) {
    n.addr = *next;
    *next += NODE_SIZE;
    for c in &mut n.children {
        assign(c, next);
    }
}

fn encode(
    n: &Node,
    kind: u8,
    rec: usize,
    records: &[u8],
    caps: &[(u64, u64, usize)],
    out: &mut Vec<(u64, Vec<u8>)>,
) {
    let mut b = Vec::with_capacity(NODE_SIZE as usize);
    b.extend_from_slice(if n.depth == 0 { b"BTLF" } else { b"BTIN" });
    b.u8(0);
    b.u8(kind);
    for &r in &n.records {
        b.extend_from_slice(&records[r * rec..(r + 1) * rec]);
    }
    if n.depth > 0 {
        let nrec_size = enc_size(caps[0].0);
        for c in &n.children {
            b.u64(c.addr);
            b.uint(
                if c.depth == 0 {
                    c.total
                } else {
                    c.records.len() as u64
                },
                nrec_size,
            );
            if n.depth > 1 {
                b.uint(c.total, caps[n.depth - 1].2);
            }
        }
    }
    b.checksum_from(0);
    debug_assert!(b.len() as u64 <= NODE_SIZE, "B-tree node over its size");
    b.resize(NODE_SIZE as usize, 0);
    out.push((n.addr, b));
    for c in &n.children {
        encode(c, kind, rec, records, caps, out);
    }
}

/// Lay out a tree of type `kind` over `records` (each `rec` bytes, concatenated, already in
/// the index's order) at address `at`.
pub(crate) fn lay_out(kind: u8, rec: usize, records: &[u8], at: u64) -> LaidTree {
    let n = records.len() / rec.max(1);
    let mut depth = 0;
    while capacities(rec as u64, depth)[depth].1 < n as u64 {
        depth += 1;
    }
    let caps = capacities(rec as u64, depth);
    let mut blocks = Vec::new();
    let mut next = at + HEADER_LEN;
    let root = (n > 0).then(|| {
        let mut r = build(0, n, depth, &caps);
        assign(&mut r, &mut next);
        r
    });
    let mut h = Vec::with_capacity(HEADER_LEN as usize);
    h.extend_from_slice(b"BTHD");
    h.u8(0);
    h.u8(kind);
    h.u32(NODE_SIZE as u32);
    h.u16(rec as u16);
    h.u16(depth as u16);
    h.u8(100); // split percent
    h.u8(40); // merge percent
    h.u64(root.as_ref().map_or(UNDEF, |r| r.addr));
    h.u16(root.as_ref().map_or(0, |r| {
        if r.depth == 0 {
            r.total
        } else {
            r.records.len() as u64
        }
    }) as u16);
    h.u64(n as u64);
    h.checksum_from(0);
    blocks.push((at, h));
    if let Some(r) = &root {
        encode(r, kind, rec, records, &caps, &mut blocks);
    }
    LaidTree {
        header: at,
        blocks,
        len: next - at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uint(b: &[u8]) -> u64 {
        b.iter().rev().fold(0, |a, &x| a << 8 | u64::from(x))
    }

    /// Every record of the tree in order, read back by walking the images.
    fn walk(t: &LaidTree, rec: usize) -> Vec<Vec<u8>> {
        fn node(blocks: &[(u64, Vec<u8>)], a: u64) -> &[u8] {
            &blocks.iter().find(|(x, _)| *x == a).unwrap().1
        }
        let h = node(&t.blocks, t.header);
        let depth = u16::from_le_bytes([h[12], h[13]]) as usize;
        let caps = capacities(rec as u64, depth);
        fn go(
            a: u64,
            nrec: usize,
            depth: usize,
            rec: usize,
            caps: &[(u64, u64, usize)],
            blocks: &[(u64, Vec<u8>)],
            out: &mut Vec<Vec<u8>>,
        ) {
            let b = node(blocks, a);
            let recs = &b[6..6 + nrec * rec];
            // checksum right after the node's records and pointers
            if depth == 0 {
                for r in recs.chunks(rec) {
                    out.push(r.to_vec());
                }
                let end = 6 + nrec * rec;
                assert_eq!(
                    uint(&b[end..end + 4]) as u32,
                    crate::format::checksum::lookup3(&b[..end])
                );
                return;
            }
            let ns = enc_size(caps[0].0);
            let ts = if depth > 1 { caps[depth - 1].2 } else { 0 };
            let mut p = 6 + nrec * rec;
            for i in 0..=nrec {
                let child = uint(&b[p..p + 8]);
                let cn = uint(&b[p + 8..p + 8 + ns]) as usize;
                p += 8 + ns + ts;
                go(child, cn, depth - 1, rec, caps, blocks, out);
                if i < nrec {
                    out.push(recs[i * rec..(i + 1) * rec].to_vec());
                }
            }
            assert_eq!(
                uint(&b[p..p + 4]) as u32,
                crate::format::checksum::lookup3(&b[..p])
            );
        }
        let root = uint(&h[16..24]);
        let nrec = u16::from_le_bytes([h[24], h[25]]) as usize;
        let mut out = Vec::new();
        go(root, nrec, depth, rec, &caps, &t.blocks, &mut out);
        out
    }

    #[test]
    fn trees_of_every_depth_keep_their_records_in_order() {
        for n in [1usize, 29, 30, 31, 500, 2_000, 100_000] {
            let rec = 17;
            let records: Vec<u8> = (0..n as u32)
                .flat_map(|i| {
                    let mut r = vec![0u8; rec];
                    r[..4].copy_from_slice(&i.to_be_bytes());
                    r
                })
                .collect();
            let t = lay_out(kind::ATTR_NAME, rec, &records, 1 << 20);
            let got = walk(&t, rec);
            assert_eq!(got.len(), n, "{n} records");
            assert!(got
                .iter()
                .enumerate()
                .all(|(i, r)| r[..4] == (i as u32).to_be_bytes()));
            let h = &t.blocks[0].1;
            assert_eq!(&h[..6], &[b'B', b'T', b'H', b'D', 0, kind::ATTR_NAME]);
            assert_eq!(uint(&h[26..34]), n as u64);
            assert_eq!(
                uint(&h[34..38]) as u32,
                crate::format::checksum::lookup3(&h[..34])
            );
        }
    }

    #[test]
    fn leaf_capacity_is_libhdf5s() {
        // (512 - 10) / 17 = 29 attribute name records fit a leaf
        assert_eq!(capacities(17, 0)[0].0, 29);
        let t = lay_out(kind::ATTR_NAME, 17, &[0u8; 17 * 29], 0);
        assert_eq!(
            u16::from_le_bytes([t.blocks[0].1[12], t.blocks[0].1[13]]),
            0
        );
        let t = lay_out(kind::ATTR_NAME, 17, &[0u8; 17 * 30], 0);
        assert_eq!(
            u16::from_le_bytes([t.blocks[0].1[12], t.blocks[0].1[13]]),
            1
        );
    }
}
