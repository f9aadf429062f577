//! Dense link and attribute storage (spec IV.A.2.c link info, IV.A.2.v attribute info): the
//! messages in a fractal heap, indexed by a version 2 B-tree on the name's lookup3 hash (then
//! the name) and one on creation order. libhdf5 moves a group's links or an object's
//! attributes here past 8 of them (its default "max compact"), as netCDF-C leaves it.

use super::btree2::{self, kind};
use super::fractal_heap::{self, HeapParams};
use super::message::DenseAddrs;
use super::Put;

/// More links or attributes than this go dense (libhdf5's default maximum compact count).
pub(crate) const MAX_COMPACT: usize = 8;

/// What dense storage holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Links,
    Attributes,
}

/// Laid-out dense storage: its images (address, bytes), where its parts are, its extent.
#[derive(Debug)]
pub(crate) struct LaidDense {
    pub addrs: DenseAddrs,
    pub blocks: Vec<(u64, Vec<u8>)>,
    pub len: u64,
}

/// Lay out the dense storage of `items` (name, encoded link or attribute message), in
/// creation order, at address `at`.
pub(crate) fn lay_out(kind: Kind, items: &[(&str, Vec<u8>)], at: u64) -> LaidDense {
    let params: HeapParams = match kind {
        Kind::Links => fractal_heap::LINKS,
        Kind::Attributes => fractal_heap::ATTRIBUTES,
    };
    let objects: Vec<Vec<u8>> = items.iter().map(|(_, m)| m.clone()).collect();
    let heap = fractal_heap::lay_out(&params, &objects, at);
    drop(objects);
    let hashes: Vec<u32> = items
        .iter()
        .map(|(n, _)| crate::format::checksum::lookup3(n.as_bytes()))
        .collect();
    let mut by_name: Vec<usize> = (0..items.len()).collect();
    by_name.sort_unstable_by(|&a, &b| {
        hashes[a]
            .cmp(&hashes[b])
            .then_with(|| items[a].0.cmp(items[b].0))
    });
    let (name_kind, order_kind, name_rec, order_rec) = match kind {
        Kind::Links => (kind::LINK_NAME, kind::LINK_ORDER, 4 + 7, 8 + 7),
        Kind::Attributes => (kind::ATTR_NAME, kind::ATTR_ORDER, 8 + 1 + 4 + 4, 8 + 1 + 4),
    };
    let mut names = Vec::with_capacity(items.len() * name_rec);
    for &i in &by_name {
        match kind {
            Kind::Links => {
                names.u32(hashes[i]);
                names.extend_from_slice(&heap.ids[i]);
            }
            Kind::Attributes => {
                names.extend_from_slice(&heap.ids[i]);
                names.u8(0);
                names.u32(i as u32);
                names.u32(hashes[i]);
            }
        }
    }
    let mut orders = Vec::with_capacity(items.len() * order_rec);
    for (i, id) in heap.ids.iter().enumerate() {
        match kind {
            Kind::Links => {
                orders.u64(i as u64);
                orders.extend_from_slice(id);
            }
            Kind::Attributes => {
                orders.extend_from_slice(id);
                orders.u8(0);
                orders.u32(i as u32);
            }
        }
    }
    let name_tree = btree2::lay_out(name_kind, name_rec, &names, at + heap.len);
    let order_tree = btree2::lay_out(
        order_kind,
        order_rec,
        &orders,
        name_tree.header + name_tree.len,
    );
    let len = heap.len + name_tree.len + order_tree.len;
    let addrs = DenseAddrs {
        heap: heap.header,
        names: name_tree.header,
        orders: order_tree.header,
    };
    let mut blocks = heap.blocks;
    blocks.extend(name_tree.blocks);
    blocks.extend(order_tree.blocks);
    LaidDense { addrs, blocks, len }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_follow_each_other_without_overlap() {
        let names: Vec<String> = (0..1000).map(|i| format!("att{i}")).collect();
        let items: Vec<(&str, Vec<u8>)> =
            names.iter().map(|n| (n.as_str(), vec![1u8; 40])).collect();
        let d = lay_out(Kind::Attributes, &items, 4096);
        assert_eq!(d.addrs.heap, 4096);
        assert!(d.addrs.names > d.addrs.heap && d.addrs.orders > d.addrs.names);
        assert!(crate::format::disjoint_end(&d.blocks) <= 4096 + d.len);
        let h = &d
            .blocks
            .iter()
            .find(|(a, _)| *a == d.addrs.names)
            .unwrap()
            .1;
        assert_eq!(&h[..6], &[b'B', b'T', b'H', b'D', 0, kind::ATTR_NAME]);
    }
}
