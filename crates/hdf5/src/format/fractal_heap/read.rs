//! Managed objects of a fractal heap (HDF5 file format spec III.G), located by walking the
//! doubling table ourselves. hdf5-reader 0.12.1 finds the direct block of an object inside a
//! child indirect block with that block's offset relative to the child, not the heap, and so
//! reads past the block: dense attribute storage of more than about 6,000 attributes (heaps
//! whose root indirect block has child indirect blocks) could not be read. Heaps with I/O
//! filters, and huge and tiny objects, are left to hdf5-reader.

use crate::error::Hdf5Error;
use crate::h5::H5;
use hdf5_reader::fractal_heap::FractalHeap;
use hdf5_reader::io::Cursor;

/// Most nested indirect blocks (each level at least doubles the block size).
const MAX_DEPTH: u32 = 64;

/// Little-endian unsigned integer of `b`.
fn uint(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(w)
}

/// Bytes needed for `x` (at least one).
fn bytes_for(x: u64) -> usize {
    (((64 - x.leading_zeros()) as usize).div_ceil(8)).max(1)
}

/// The bytes of the managed object `id` of `heap`; `Ok(None)` when it is not a managed object
/// of an unfiltered heap (the caller asks hdf5-reader).
pub(crate) fn managed_object(
    h5: &H5,
    heap: &FractalHeap,
    id: &[u8],
    what: &str,
) -> Result<Option<Vec<u8>>, Hdf5Error> {
    let bad = |m: String| Hdf5Error::invalid(format!("{what}: fractal heap"), m);
    if id.first().is_none_or(|b| b & 0xF0 != 0) || heap.io_filters_len != 0 {
        return Ok(None);
    }
    let off_bytes = usize::from(heap.max_heap_size).div_ceil(8).max(1);
    let len_bytes = bytes_for(heap.max_direct_block_size.min(heap.max_managed_object_size));
    let Some(fields) = id.get(1..1 + off_bytes + len_bytes) else {
        return Err(bad(format!("heap id of {} bytes is too short", id.len())));
    };
    let (offset, len) = (uint(&fields[..off_bytes]), uint(&fields[off_bytes..]));
    let os = u64::from(h5.os);
    let start = heap.starting_block_size;
    let width = u64::from(heap.table_width);
    if start == 0 || width == 0 || !start.is_power_of_two() || !width.is_power_of_two() {
        return Err(bad(format!(
            "doubling table makes no sense (width {width}, starting blocks of {start} bytes)"
        )));
    }
    let row_size = |row: u64| -> Option<u64> {
        if row == 0 {
            Some(start)
        } else {
            start.checked_mul(1u64.checked_shl(u32::try_from(row - 1).ok()?)?)
        }
    };
    // rows of direct blocks (sizes up to the largest direct block)
    let mut max_direct_rows = 0u64;
    while row_size(max_direct_rows).is_some_and(|s| s <= heap.max_direct_block_size) {
        max_direct_rows += 1;
        if max_direct_rows > 64 {
            break;
        }
    }
    // (file address, heap offset, size) of the direct block holding `offset`
    let (block, block_offset, block_size) = if heap.current_rows_in_root_indirect == 0 {
        (heap.root_block_address, 0, start)
    } else {
        let head = 5 + os + usize::from(heap.max_heap_size).div_ceil(8) as u64;
        let mut iblock = heap.root_block_address;
        let mut nrows = u64::from(heap.current_rows_in_root_indirect);
        let mut base = 0u64;
        let mut depth = 0;
        loop {
            depth += 1;
            if depth > MAX_DEPTH || Cursor::is_undefined_offset(iblock, h5.os) {
                return Err(bad(format!(
                    "heap offset {offset} is in no block of the doubling table"
                )));
            }
            let rel = offset - base;
            let mut run = 0u64;
            let mut found = None;
            'rows: for row in 0..nrows {
                let size = row_size(row).ok_or_else(|| bad("block size overflows".into()))?;
                for col in 0..width {
                    let end = run
                        .checked_add(size)
                        .ok_or_else(|| bad("heap offsets overflow".into()))?;
                    if rel < end {
                        found = Some((row * width + col, run, size));
                        break 'rows;
                    }
                    run = end;
                }
            }
            let Some((k, at, size)) = found else {
                return Err(bad(format!(
                    "heap offset {offset} is past the {nrows} rows of the indirect block at {iblock:#x}"
                )));
            };
            let direct_entries = nrows.min(max_direct_rows) * width;
            if size <= heap.max_direct_block_size {
                let e = h5.read(iblock + head + k * os, os, what)?;
                break (uint(&e), base + at, size);
            }
            let e = h5.read(
                iblock + head + direct_entries * os + (k - direct_entries) * os,
                os,
                what,
            )?;
            iblock = uint(&e);
            base += at;
            // a child indirect block of `size` bytes has the rows that add up to it
            let mut rows = 0u64;
            let mut total = 0u64;
            while let Some(s) = row_size(rows).and_then(|s| s.checked_mul(width)) {
                if total + s > size {
                    break;
                }
                total += s;
                rows += 1;
            }
            nrows = rows;
        }
    };
    if Cursor::is_undefined_offset(block, h5.os) {
        return Err(bad(format!(
            "heap offset {offset} is in a direct block never allocated"
        )));
    }
    let within = offset - block_offset;
    if within.checked_add(len).is_none_or(|e| e > block_size) {
        return Err(bad(format!(
            "object of {len} bytes at heap offset {offset} runs past its {block_size}-byte block at {block:#x}"
        )));
    }
    let sig = h5.read(block, 4, what)?;
    if sig != b"FHDB" {
        return Err(bad(format!("no direct block (FHDB) at {block:#x}")));
    }
    h5.read(block + within, len, what).map(Some)
}
