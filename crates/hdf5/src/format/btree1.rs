//! Version 1 B-trees of raw data chunks (spec III.A.1, node type 1): the chunk index of layout
//! message version 3, as libhdf5 1.10 writes it for netCDF-C. Each node is allocated at its
//! full size (2K entries, K = 32, the default for chunk indexes), holds `entries used` keys and
//! children, and the key after each child bounds it: a chunk's key is its size, filter mask
//! and element offsets (plus a zero for the element "dimension"); the key after the last chunk
//! is that chunk's offsets with the element size in the last place, as libhdf5 writes it.
//!
//! The tree's shape depends only on the number of chunks, so its nodes can be reserved before
//! the chunks are written ([`Shape`]) and encoded once their addresses are known.

use super::{Put, UNDEF};

/// Entries per node: 2K with libhdf5's chunk index K of 32.
const FANOUT: usize = 64;

/// One stored chunk: its first element, stored size, filter mask and address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkEntry {
    pub offsets: Vec<u64>,
    pub size: u32,
    pub mask: u32,
    pub addr: u64,
}

/// Bytes of one node of a rank-`rank` variable's chunk index.
pub(crate) fn node_len(rank: usize) -> u64 {
    let key = 8 + 8 * (rank as u64 + 1);
    24 + (2 * FANOUT as u64 + 1) * key + 2 * FANOUT as u64 * 8
}

/// The nodes of a tree over `n` chunks, level by level from the leaves: how many entries each
/// node of each level has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    levels: Vec<Vec<usize>>,
    rank: usize,
}

fn split(n: usize) -> Vec<usize> {
    let nodes = n.div_ceil(FANOUT).max(1);
    (0..nodes)
        .map(|i| n / nodes + usize::from(i < n % nodes))
        .collect()
}

impl Shape {
    /// The shape for `n` chunks (at least one) of a rank-`rank` variable.
    pub fn new(n: usize, rank: usize) -> Shape {
        let mut levels = vec![split(n)];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().map_or(0, Vec::len);
            levels.push(split(below));
        }
        Shape { levels, rank }
    }

    /// Bytes to reserve for all the nodes.
    pub fn len(&self) -> u64 {
        self.levels.iter().map(|l| l.len() as u64).sum::<u64>() * node_len(self.rank)
    }

    /// Node images for `chunks` (row-major order, as many as the shape was made for), the
    /// root at `at`, then each level from the top.
    pub fn encode(&self, chunks: &[ChunkEntry], elem: u32, at: u64) -> Vec<(u64, Vec<u8>)> {
        let nl = node_len(self.rank);
        // node addresses: the root level first
        let mut addrs: Vec<Vec<u64>> = vec![Vec::new(); self.levels.len()];
        let mut next = at;
        for (lv, nodes) in self.levels.iter().enumerate().rev() {
            for _ in nodes {
                addrs[lv].push(next);
                next += nl;
            }
        }
        let mut last_key = Vec::new();
        if let Some(c) = chunks.last() {
            last_key.u32(0);
            last_key.u32(0);
            for &o in &c.offsets {
                last_key.u64(o);
            }
            last_key.u64(u64::from(elem));
        }
        let key_of = |c: &ChunkEntry| {
            let mut k = Vec::new();
            k.u32(c.size);
            k.u32(c.mask);
            for &o in &c.offsets {
                k.u64(o);
            }
            k.u64(0);
            k
        };
        // children of the level below: (first key of the subtree, address)
        let mut below: Vec<(Vec<u8>, u64)> = chunks.iter().map(|c| (key_of(c), c.addr)).collect();
        let mut out = Vec::new();
        for (lv, nodes) in self.levels.iter().enumerate() {
            let mut at_child = 0usize;
            let mut up = Vec::with_capacity(nodes.len());
            for (i, &n) in nodes.iter().enumerate() {
                let mut b = Vec::with_capacity(nl as usize);
                b.extend_from_slice(b"TREE");
                b.u8(1);
                b.u8(lv as u8);
                b.u16(n as u16);
                b.u64(if i > 0 { addrs[lv][i - 1] } else { UNDEF });
                b.u64(addrs[lv].get(i + 1).copied().unwrap_or(UNDEF));
                for (key, addr) in &below[at_child..at_child + n] {
                    b.extend_from_slice(key);
                    b.u64(*addr);
                }
                // the key bounding the last child: the next node's first key, or the end
                match below.get(at_child + n) {
                    Some((key, _)) => b.extend_from_slice(key),
                    None => b.extend_from_slice(&last_key),
                }
                b.resize(nl as usize, 0);
                up.push((below[at_child].0.clone(), addrs[lv][i]));
                out.push((addrs[lv][i], b));
                at_child += n;
            }
            below = up;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_leaf_as_libhdf5_writes_it() {
        let chunks: Vec<ChunkEntry> = (0..2u64)
            .map(|i| ChunkEntry {
                offsets: vec![i, 0],
                size: 13,
                mask: 0,
                addr: 7272 + 13 * i,
            })
            .collect();
        let s = Shape::new(2, 2);
        assert_eq!(s.len(), node_len(2));
        let nodes = s.encode(&chunks, 4, 9292);
        assert_eq!(nodes.len(), 1);
        let b = &nodes[0].1;
        assert_eq!(b.len() as u64, node_len(2));
        assert_eq!(&b[..8], b"TREE\x01\x00\x02\x00");
        assert_eq!(&b[8..24], &[0xff; 16]);
        // key 0, child 0, key 1, child 1, final key (offsets of the last chunk, element size)
        let key = |k: usize| &b[24 + k * 40..24 + k * 40 + 32];
        assert_eq!(&key(0)[..8], &[13, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(u64::from_le_bytes(b[56..64].try_into().unwrap()), 7272);
        assert_eq!(u64::from_le_bytes(key(1)[8..16].try_into().unwrap()), 1);
        let fin = key(2);
        assert_eq!(&fin[..8], &[0; 8]);
        assert_eq!(u64::from_le_bytes(fin[8..16].try_into().unwrap()), 1);
        assert_eq!(u64::from_le_bytes(fin[24..32].try_into().unwrap()), 4);
    }

    #[test]
    fn many_chunks_make_levels_whose_keys_bound_their_children() {
        let n = 5000;
        let chunks: Vec<ChunkEntry> = (0..n as u64)
            .map(|i| ChunkEntry {
                offsets: vec![i * 10],
                size: 40,
                mask: 0,
                addr: 1_000_000 + 40 * i,
            })
            .collect();
        let s = Shape::new(n, 1);
        let nodes = s.encode(&chunks, 4, 0);
        assert_eq!(nodes.len() as u64 * node_len(1), s.len());
        // root first, at the reserved address, at level 2 (5000 / 64 leaves > 64)
        assert_eq!(nodes.last().unwrap().1[5], 2);
        let root = nodes.iter().find(|(a, _)| *a == 0).unwrap();
        assert_eq!(root.1[5], 2);
        // every leaf entry is one chunk, in order
        let mut seen = Vec::new();
        for (_, b) in nodes.iter().filter(|(_, b)| b[5] == 0) {
            let used = u16::from_le_bytes([b[6], b[7]]) as usize;
            for k in 0..used {
                let at = 24 + k * 32;
                seen.push(u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap()));
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..n as u64).map(|i| i * 10).collect::<Vec<_>>());
    }
}
