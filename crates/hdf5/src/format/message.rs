//! Object header message bodies (spec IV.A.2), in the versions libhdf5 1.10 writes for
//! netCDF-C 4.9.0: dataspace 2, fill value 3, layout 3, filter pipeline 2, attribute 3,
//! attribute info 0, link 1, link info 0, group info 0.

use super::datatype::Datatype;
use super::{bytes_for, Put, UNDEF};

/// Dataspace message, version 2 (IV.A.2.b). `None` is a scalar; `Some(dims)` a simple
/// dataspace whose maximum is `max` (`None` = unlimited), always stored as netCDF-C does.
pub(crate) fn dataspace(shape: Option<(&[u64], &[Option<u64>])>) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(2);
    match shape {
        None => {
            b.extend_from_slice(&[0, 0, 0]);
        }
        Some((dims, max)) => {
            b.u8(dims.len() as u8);
            b.u8(1); // maximum dimensions present
            b.u8(1); // simple
            for &d in dims {
                b.u64(d);
            }
            for m in max {
                b.u64(m.unwrap_or(UNDEF));
            }
        }
    }
    b
}

/// A simple dataspace whose maximum is its size (attributes).
pub(crate) fn fixed_dataspace(dims: &[u64]) -> Vec<u8> {
    let max: Vec<Option<u64>> = dims.iter().map(|&d| Some(d)).collect();
    dataspace(Some((dims, &max)))
}

/// When storage is allocated (fill value message bits 0-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Allocation {
    /// Compact data: with the header.
    Early = 1,
    /// Contiguous data: when first written.
    Late = 2,
    /// Chunked data: chunk by chunk.
    Incremental = 3,
}

/// Fill value message, version 3 (IV.A.2.f). `never` is netCDF's "no fill" (fill time
/// never, value left at the library default); otherwise fill time "if set" with `value` when
/// one is given.
pub(crate) fn fill_value(alloc: Allocation, never: bool, value: Option<&[u8]>) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(3);
    let time = if never { 1 } else { 2 };
    let mut flags = alloc as u8 | time << 2;
    if let (Some(v), false) = (value, never) {
        flags |= 0x20;
        b.u8(flags);
        b.u32(v.len() as u32);
        b.extend_from_slice(v);
    } else {
        b.u8(flags);
    }
    b
}

/// Data layout message, version 3 (IV.A.2.i).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Layout<'a> {
    /// Data kept in the message itself.
    Compact(&'a [u8]),
    /// `size` bytes at `addr` ([`UNDEF`] when never written).
    Contiguous { addr: u64, size: u64 },
    /// Chunks of `chunk` elements of `elem` bytes indexed by the version 1 B-tree at `btree`.
    Chunked {
        btree: u64,
        chunk: &'a [u32],
        elem: u32,
    },
}

pub(crate) fn layout(l: &Layout) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(3);
    match l {
        Layout::Compact(data) => {
            b.u8(0);
            b.u16(data.len() as u16);
            b.extend_from_slice(data);
        }
        Layout::Contiguous { addr, size } => {
            b.u8(1);
            b.u64(*addr);
            b.u64(*size);
        }
        Layout::Chunked { btree, chunk, elem } => {
            b.u8(2);
            b.u8(chunk.len() as u8 + 1);
            b.u64(*btree);
            for &c in *chunk {
                b.u32(c);
            }
            b.u32(*elem);
        }
    }
    b
}

/// One filter of a pipeline: id, flags (bit 0: optional), name (stored only for ids of 256
/// and up, as version 2 does), parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PipelineFilter<'a> {
    pub id: u16,
    pub optional: bool,
    pub name: &'a str,
    pub params: &'a [u32],
}

/// Filter pipeline message, version 2 (IV.A.2.l): libhdf5 omits the names of its own filters
/// (ids below 256) and stores the others' names, NUL-terminated and padded to 8 bytes.
pub(crate) fn filter_pipeline(filters: &[PipelineFilter]) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(2);
    b.u8(filters.len() as u8);
    for f in filters {
        b.u16(f.id);
        // ids of 256 and up always carry the name length field (0: no name)
        let name = (f.id >= 256).then(|| {
            if f.name.is_empty() {
                0
            } else {
                (f.name.len() + 1).next_multiple_of(8)
            }
        });
        if let Some(n) = name {
            b.u16(n as u16);
        }
        b.u16(u16::from(f.optional));
        b.u16(f.params.len() as u16);
        if let Some(n) = name.filter(|&n| n > 0) {
            let at = b.len();
            b.extend_from_slice(f.name.as_bytes());
            b.resize(at + n, 0);
        }
        for &p in f.params {
            b.u32(p);
        }
    }
    b
}

/// Attribute message, version 3 (IV.A.2.m): name (ASCII, NUL-terminated), datatype,
/// dataspace and raw data, none shared.
pub(crate) fn attribute(name: &str, ty: &Datatype, space: &[u8], data: &[u8]) -> Vec<u8> {
    let dt = ty.encoded();
    let mut b = Vec::with_capacity(9 + name.len() + 1 + dt.len() + space.len() + data.len());
    b.u8(3);
    b.u8(0);
    b.u16(name.len() as u16 + 1);
    b.u16(dt.len() as u16);
    b.u16(space.len() as u16);
    b.u8(0); // ASCII, as netCDF-C leaves it
    b.extend_from_slice(name.as_bytes());
    b.u8(0);
    b.extend_from_slice(&dt);
    b.extend_from_slice(space);
    b.extend_from_slice(data);
    b
}

/// Where an object's dense storage (links or attributes) is: the fractal heap and the name
/// and creation-order index B-trees, [`UNDEF`] when compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DenseAddrs {
    pub heap: u64,
    pub names: u64,
    pub orders: u64,
}

impl DenseAddrs {
    pub const COMPACT: DenseAddrs = DenseAddrs {
        heap: UNDEF,
        names: UNDEF,
        orders: UNDEF,
    };
}

/// Attribute info message, version 0 (IV.A.2.v), creation order tracked and indexed;
/// `count` attributes were created (libhdf5's "maximum creation index" is the next one,
/// stored in 16 bits).
pub(crate) fn attribute_info(count: usize, at: DenseAddrs) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(0);
    b.u8(3);
    b.u16(u16::try_from(count).unwrap_or(u16::MAX));
    b.u64(at.heap);
    b.u64(at.names);
    b.u64(at.orders);
    b
}

/// Link info message, version 0 (IV.A.2.c), creation order tracked and indexed.
pub(crate) fn link_info(count: usize, at: DenseAddrs) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(0);
    b.u8(3);
    b.u64(count as u64);
    b.u64(at.heap);
    b.u64(at.names);
    b.u64(at.orders);
    b
}

/// Group info message, version 0, nothing stored (IV.A.2.k).
pub(crate) fn group_info() -> Vec<u8> {
    vec![0, 0]
}

/// Link message, version 1 (IV.A.2.g): a hard link named `name` to the object header at
/// `addr`, with its creation order.
pub(crate) fn hard_link(name: &str, order: u64, addr: u64) -> Vec<u8> {
    let mut b = Vec::new();
    b.u8(1);
    let width = bytes_for(name.len() as u64);
    let code = match width {
        1 => 0,
        2 => 1,
        3 | 4 => 2,
        _ => 3,
    };
    b.u8(code | 0x04);
    b.u64(order);
    b.uint(name.len() as u64, 1 << code);
    b.extend_from_slice(name.as_bytes());
    b.u64(addr);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    // expected bytes read from `ncgen -4` (netCDF-C 4.9.0) output
    #[test]
    fn messages_as_netcdf_c_writes_them() {
        assert_eq!(hex(&dataspace(None)), "02000000");
        assert_eq!(
            hex(&dataspace(Some((&[2, 3], &[None, Some(3)])))),
            "0202010102000000000000000300000000000000ffffffffffffffff0300000000000000"
        );
        assert_eq!(
            hex(&fill_value(
                Allocation::Incremental,
                false,
                Some(&[1, 0, 0, 0x80])
            )),
            "032b0400000001000080"
        );
        assert_eq!(
            hex(&fill_value(Allocation::Incremental, false, None)),
            "030b"
        );
        assert_eq!(
            hex(&layout(&Layout::Contiguous {
                addr: UNDEF,
                size: 20
            })),
            "0301ffffffffffffffff1400000000000000"
        );
        assert_eq!(
            hex(&layout(&Layout::Chunked {
                btree: 0x244c,
                chunk: &[1, 3],
                elem: 4
            })),
            "0302034c24000000000000010000000300000004000000"
        );
        let pl = [
            PipelineFilter {
                id: 2,
                optional: true,
                name: "shuffle",
                params: &[4],
            },
            PipelineFilter {
                id: 1,
                optional: true,
                name: "deflate",
                params: &[1],
            },
        ];
        assert_eq!(
            hex(&filter_pipeline(&pl)),
            "02020200010001000400000001000100010001000000"
        );
        assert_eq!(
            hex(&hard_link("t", 1, 0x266)),
            "0104010000000000000001746602000000000000"
        );
        assert_eq!(
            hex(&attribute_info(2, DenseAddrs::COMPACT))[..8].to_string(),
            "00030200"
        );
        assert_eq!(link_info(6, DenseAddrs::COMPACT).len(), 34);
    }

    #[test]
    fn plugin_filters_carry_their_names() {
        let pl = [PipelineFilter {
            id: 32015,
            optional: false,
            name: "zstd",
            params: &[3],
        }];
        let b = filter_pipeline(&pl);
        assert_eq!(&b[..2], &[2, 1]);
        assert_eq!(u16::from_le_bytes([b[2], b[3]]), 32015);
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), 8, "name length, padded");
        assert_eq!(&b[10..18], b"zstd\0\0\0\0");
        assert_eq!(&b[18..], &3u32.to_le_bytes());
    }

    #[test]
    fn attribute_layout() {
        let a = attribute(
            "title",
            &Datatype::FixedString { size: 2 },
            &dataspace(None),
            b"hi",
        );
        assert_eq!(
            hex(&a),
            "0300060008000400007469746c65001300000002000000020000006869"
        );
    }
}
