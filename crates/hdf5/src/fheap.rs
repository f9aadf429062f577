//! Managed objects of a fractal heap found by our own walk of its doubling table (HDF5 file
//! format spec III.G), for heaps whose objects hdf5-reader 0.12 cannot reach: it fails on
//! objects under a child indirect block (a heap beyond 512 KiB with libhdf5's attribute
//! parameters: more than ~10,000 dense attributes, or ~20,000 links in a group).
//!
//! A managed heap ID holds the object's offset in the heap's address space and its length.
//! The root indirect block's rows cover that space in order: `width` blocks a row, the first
//! two rows of the starting block size, each later row twice the previous; rows below the
//! maximum direct block size hold direct blocks, the rest child indirect blocks that divide
//! their span the same way. An offset within a direct block counts from the block's start
//! (its header included).

use hdf5_reader::fractal_heap::FractalHeap;

use crate::h5::H5;
use crate::Hdf5Error;

/// Most nested indirect blocks (each level at least doubles the block size).
const MAX_DEPTH: u32 = 64;

fn uint(b: &[u8], at: usize, width: usize) -> Option<u64> {
    let bytes = b.get(at..at.checked_add(width)?)?;
    let mut w = [0u8; 8];
    w.get_mut(..width)?.copy_from_slice(bytes);
    Some(u64::from_le_bytes(w))
}

/// Bytes needed for a value up to `n`.
fn bytes_for(n: u64) -> usize {
    (64 - n.leading_zeros() as usize).div_ceil(8)
}

/// The managed object with heap ID `id` of `heap`; `what` names the heap in errors.
///
/// # Errors
/// When the ID is not a managed object's, or the blocks on the way are not where the heap
/// says (their checksums are verified separately, by `verify::fractal_heap`).
pub(crate) fn managed_object(
    h5: &H5,
    heap: &FractalHeap,
    id: &[u8],
    what: &str,
) -> Result<Vec<u8>, Hdf5Error> {
    let bad = |m: String| Hdf5Error::invalid(format!("{what}: fractal heap"), m);
    if id.first().is_none_or(|&f| f & 0x30 != 0) {
        return Err(bad("not a managed object's heap ID".into()));
    }
    let off_bytes = usize::from(heap.max_heap_size).div_ceil(8);
    let len_bytes = bytes_for(heap.max_direct_block_size)
        .min(usize::from(heap.heap_id_len).saturating_sub(1 + off_bytes));
    let (Some(offset), Some(len)) = (uint(id, 1, off_bytes), uint(id, 1 + off_bytes, len_bytes))
    else {
        return Err(bad(format!("heap ID of {} bytes is too short", id.len())));
    };
    let start = heap.starting_block_size;
    let max_direct = heap.max_direct_block_size;
    let width = u64::from(heap.table_width);
    if !start.is_power_of_two() || !max_direct.is_power_of_two() || max_direct < start || width == 0
    {
        return Err(bad("doubling table makes no sense".into()));
    }
    let geo = Geometry {
        os: usize::from(h5.os),
        off_bytes,
        width,
        start,
        max_direct_rows: u64::from(max_direct.trailing_zeros() - start.trailing_zeros()) + 2,
        filtered: heap.io_filters_len > 0,
        ls: usize::from(h5.ls),
    };
    if heap.current_rows_in_root_indirect == 0 {
        // the root is a direct block at offset 0
        return h5.read(heap.root_block_address + offset, len, what);
    }
    let mut addr = heap.root_block_address;
    let mut nrows = u64::from(heap.current_rows_in_root_indirect);
    let mut base = 0u64;
    for _ in 0..MAX_DEPTH {
        let direct_rows = nrows.min(geo.max_direct_rows);
        let entry = geo.os + if geo.filtered { geo.ls + 4 } else { 0 };
        let head = 5 + geo.os + geo.off_bytes;
        let n_entries = (nrows * width) as usize;
        let len_iblock = head
            + (direct_rows * width) as usize * entry
            + ((nrows - direct_rows) * width) as usize * geo.os;
        let b = h5.read(addr, len_iblock as u64, what)?;
        if b.get(..4) != Some(b"FHIB".as_slice()) {
            return Err(bad(format!("no indirect block at {addr:#x}")));
        }
        let mut cur = base;
        let mut next = None;
        for k in 0..n_entries as u64 {
            let row = k / width;
            let size = geo.row_size(row);
            if offset >= cur && offset < cur + size {
                let is_direct = row < direct_rows;
                let at = if is_direct {
                    head + k as usize * entry
                } else {
                    head + (direct_rows * width) as usize * entry
                        + (k - direct_rows * width) as usize * geo.os
                };
                let child = uint(&b, at, geo.os)
                    .ok_or_else(|| bad(format!("indirect block at {addr:#x} is short")))?;
                if is_direct {
                    return h5.read(child + (offset - cur), len, what);
                }
                // a child indirect block of `size` bytes has the rows that add up to it
                let child_rows = u64::from(size.trailing_zeros()) + 1
                    - u64::from((geo.start * geo.width).trailing_zeros());
                next = Some((child, child_rows, cur));
                break;
            }
            cur += size;
        }
        let Some((child, rows, b0)) = next else {
            return Err(bad(format!("offset {offset:#x} is in no block")));
        };
        addr = child;
        nrows = rows;
        base = b0;
    }
    Err(Hdf5Error::TooDeep {
        what: format!("{what}: fractal heap"),
        limit: MAX_DEPTH as usize,
    })
}

struct Geometry {
    os: usize,
    ls: usize,
    off_bytes: usize,
    width: u64,
    start: u64,
    max_direct_rows: u64,
    filtered: bool,
}

impl Geometry {
    /// Size of the blocks of row `row`: the starting size for rows 0 and 1, then doubling.
    fn row_size(&self, row: u64) -> u64 {
        self.start << row.saturating_sub(1).min(63)
    }
}

/// hdf5-reader's `error` on reading the object `id` of `heap`, replaced by the object when our
/// walk finds it (a managed object under a child indirect block).
///
/// # Errors
/// `error` when our walk fails too.
pub(crate) fn fallback(
    h5: &H5,
    heap: &FractalHeap,
    id: &[u8],
    what: &str,
    error: hdf5_reader::error::Error,
) -> Result<Vec<u8>, hdf5_reader::error::Error> {
    managed_object(h5, heap, id, what).map_err(|_| error)
}
