//! Checksums of the blocks that hdf5-reader 0.12.1 reads without verifying: the extensible
//! array's index, secondary and data blocks (and data block pages), the fixed array's data
//! block (and its pages), and the fractal heap's indirect blocks. Headers are verified here too, since their fields size
//! everything else. One pass per dataset, each block read once; the bytes read are bounded by
//! the file's size, so a corrupt index that points many times at the same place cannot make
//! the walk run long.
//!
//! HDF5 File Format Specification v3: III.G (Fractal Heap: indirect block), III.H (Extensible Array: header, index block, secondary
//! block, data block, data block page), III.I (Fixed Array: header, data block, data block
//! page), II.C (checksums). A data block is paged when it holds more elements than a page
//! (`2^page bits`); a page is covered by its checksum only once it has been written, which the
//! page bitmap records (bit `i` of the bitmap is `0x80 >> (i % 8)` of byte `i / 8`).

use hdf5_reader::io::Cursor;
use hdf5_reader::messages::layout::ChunkIndexing;

use crate::format::object_header::read::verified;
use crate::h5::H5;
use crate::Hdf5Error;

/// Verify the checksums of the chunk index at `addr` of a dataset (`what` names it), for the
/// index types hdf5-reader does not fully verify; other index types are left to the decoder.
pub(crate) fn chunk_index(
    h5: &H5,
    indexing: Option<&ChunkIndexing>,
    addr: u64,
    what: &str,
) -> Result<(), Hdf5Error> {
    let mut walk = Walk {
        h5,
        what,
        part: "chunk index",
        budget: h5.storage().len(),
        file_len: h5.storage().len(),
    };
    match indexing {
        Some(ChunkIndexing::FixedArray { .. }) => walk.fixed_array(addr),
        Some(ChunkIndexing::ExtensibleArray { .. }) => walk.extensible_array(addr),
        _ => Ok(()),
    }
}

/// Verify the checksums of the indirect blocks of the fractal heap `heap` (dense links or
/// attributes of the object `what`). Its header and direct blocks are checked by hdf5-reader.
pub(crate) fn fractal_heap(
    h5: &H5,
    heap: &hdf5_reader::fractal_heap::FractalHeap,
    what: &str,
) -> Result<(), Hdf5Error> {
    if heap.current_rows_in_root_indirect == 0
        || Cursor::is_undefined_offset(heap.root_block_address, h5.os)
    {
        // the root block is a direct block (or there is none yet)
        return Ok(());
    }
    let mut walk = Walk {
        h5,
        what,
        part: "fractal heap",
        budget: h5.storage().len(),
        file_len: h5.storage().len(),
    };
    let bad = |m: String| Hdf5Error::invalid(format!("{what}: fractal heap"), m);
    let (start, max_direct, width) = (
        heap.starting_block_size,
        heap.max_direct_block_size,
        u64::from(heap.table_width),
    );
    if !start.is_power_of_two()
        || !max_direct.is_power_of_two()
        || max_direct < start
        || !width.is_power_of_two()
    {
        return Err(bad(format!(
            "doubling table makes no sense (width {width}, blocks of {start} to {max_direct} bytes)"
        )));
    }
    let geo = HeapGeometry {
        os: u64::from(h5.os),
        width,
        // rows of direct blocks: one of the starting size, then doubling up to the maximum
        max_direct_rows: u64::from(max_direct.trailing_zeros() - start.trailing_zeros()) + 2,
        // bits of the first row: its blocks times their size
        first_row_bits: u64::from(start.trailing_zeros() + width.trailing_zeros()),
        start_bits: u64::from(start.trailing_zeros()),
        off_bytes: u64::from(heap.max_heap_size.div_ceil(8)),
        direct_entry: u64::from(h5.os)
            + if heap.io_filter_info.is_empty() {
                0
            } else {
                u64::from(h5.ls) + 4
            },
    };
    walk.heap_indirect(
        &geo,
        heap.root_block_address,
        u64::from(heap.current_rows_in_root_indirect),
        0,
    )
}

/// Sizes of a fractal heap's blocks, from its header's doubling table.
struct HeapGeometry {
    os: u64,
    width: u64,
    max_direct_rows: u64,
    first_row_bits: u64,
    start_bits: u64,
    off_bytes: u64,
    /// Bytes of one direct block entry: address, and filtered size and mask when filtered.
    direct_entry: u64,
}

/// Most nested indirect blocks: each level at least doubles the block size, and a heap
/// addresses at most 2^64 bytes.
const MAX_HEAP_DEPTH: u32 = 64;

/// One walk over one index: the bytes it may still read, and where errors point.
struct Walk<'a> {
    h5: &'a H5,
    what: &'a str,
    /// What is walked, for errors: "chunk index" or "fractal heap".
    part: &'static str,
    budget: u64,
    file_len: u64,
}

/// Little-endian unsigned integer of 1 to 8 bytes at `at` of `b` (None when out of range).
fn uint(b: &[u8], at: usize, width: usize) -> Option<u64> {
    let bytes = b.get(at..at.checked_add(width)?)?;
    let mut w = [0u8; 8];
    w.get_mut(..width)?.copy_from_slice(bytes);
    Some(u64::from_le_bytes(w))
}

/// Whether bit `i` of a page bitmap is set (most significant bit first, as HDF5 numbers them).
fn bit(bitmap: &[u8], i: u64) -> bool {
    usize::try_from(i / 8)
        .ok()
        .and_then(|byte| bitmap.get(byte))
        .is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
}

impl Walk<'_> {
    fn err(&self, message: impl Into<String>) -> Hdf5Error {
        Hdf5Error::invalid(format!("{}: {}", self.what, self.part), message)
    }

    fn undefined(&self, addr: u64) -> bool {
        Cursor::is_undefined_offset(addr, self.h5.os)
    }

    /// `len` bytes at `addr`, charged to the walk's budget.
    fn read(&mut self, addr: u64, len: u64, name: &str) -> Result<Vec<u8>, Hdf5Error> {
        self.budget = self.budget.checked_sub(len).ok_or_else(|| {
            self.err(format!(
                "its blocks add up to more than the file's {} bytes (a {name} at {addr:#x} of {len} bytes is one too many): the {} is corrupt",
                self.file_len, self.part
            ))
        })?;
        self.h5
            .read(addr, len, &format!("{}: {name} at {addr:#x}", self.what))
    }

    /// Read the structure `name` of `len` bytes at `addr`, check its signature and checksum
    /// (the last 4 bytes), and return it without the checksum.
    fn block(
        &mut self,
        addr: u64,
        len: u64,
        sig: &[u8; 4],
        name: &str,
    ) -> Result<Vec<u8>, Hdf5Error> {
        let mut b = self.read(addr, len, name)?;
        if b.get(..4) != Some(sig.as_slice()) {
            return Err(self.err(format!(
                "{name} at {addr:#x} has no {} signature",
                String::from_utf8_lossy(sig)
            )));
        }
        let n = verified(&b, addr, &format!("{}: {name}", self.what))?.len();
        b.truncate(n);
        Ok(b)
    }

    /// Checksum of a block part (a data block page) that has no signature.
    fn page(&mut self, addr: u64, len: u64, name: &str) -> Result<(), Hdf5Error> {
        let b = self.read(addr, len, name)?;
        verified(&b, addr, &format!("{}: {name}", self.what)).map(|_| ())
    }

    fn mul(&self, a: u64, b: u64) -> Result<u64, Hdf5Error> {
        a.checked_mul(b)
            .ok_or_else(|| self.err("block size overflows"))
    }

    fn add(&self, a: u64, b: u64) -> Result<u64, Hdf5Error> {
        a.checked_add(b)
            .ok_or_else(|| self.err("block size overflows"))
    }

    /// The fractal heap indirect block `FHIB` at `addr` of `nrows` rows, and those below it.
    fn heap_indirect(
        &mut self,
        geo: &HeapGeometry,
        addr: u64,
        nrows: u64,
        depth: u32,
    ) -> Result<(), Hdf5Error> {
        if depth > MAX_HEAP_DEPTH {
            return Err(Hdf5Error::TooDeep {
                what: format!("{}: fractal heap indirect block at {addr:#x}", self.what),
                limit: MAX_HEAP_DEPTH as usize,
            });
        }
        let direct_rows = nrows.min(geo.max_direct_rows);
        let indirect_rows = nrows - direct_rows;
        let head = 5 + geo.os + geo.off_bytes;
        let direct_bytes = self.mul(self.mul(direct_rows, geo.width)?, geo.direct_entry)?;
        let indirect_bytes = self.mul(self.mul(indirect_rows, geo.width)?, geo.os)?;
        let len = [head, direct_bytes, indirect_bytes, 4]
            .into_iter()
            .try_fold(0u64, |a, b| self.add(a, b))?;
        let b = self.block(addr, len, b"FHIB", "fractal heap indirect block")?;
        let os = geo.os as usize;
        for i in 0..indirect_rows * geo.width {
            let at = (head + direct_bytes + i * geo.os) as usize;
            let Some(child) = uint(&b, at, os).filter(|&a| !self.undefined(a)) else {
                continue;
            };
            // a row's blocks are the starting size for rows 0 and 1, then double each row;
            // an indirect block of that size holds the rows up to that size
            let row = direct_rows + i / geo.width;
            let size_bits = geo.start_bits + row.saturating_sub(1);
            let child_rows = (size_bits + 1)
                .checked_sub(geo.first_row_bits)
                .filter(|&r| r > 0)
                .ok_or_else(|| {
                    self.err(format!(
                        "fractal heap indirect block at {addr:#x}: child in row {row} has no rows"
                    ))
                })?;
            self.heap_indirect(geo, child, child_rows, depth + 1)?;
        }
        Ok(())
    }

    /// Fixed array: header `FAHD`, data block `FADB`, and its pages when paged.
    fn fixed_array(&mut self, addr: u64) -> Result<(), Hdf5Error> {
        let (os, ls) = (usize::from(self.h5.os), usize::from(self.h5.ls));
        let name = "fixed array header";
        // signature, version, client, element size, page bits, elements, data block address
        let h = self.block(addr, (8 + ls + os + 4) as u64, b"FAHD", name)?;
        let short = || self.err(format!("{name} at {addr:#x} is too short"));
        let es = u64::from(*h.get(6).ok_or_else(short)?);
        let page_bits = u32::from(*h.get(7).ok_or_else(short)?);
        let nelmts = uint(&h, 8, ls).ok_or_else(short)?;
        let dblk = uint(&h, 8 + ls, os).ok_or_else(short)?;
        if self.undefined(dblk) || nelmts == 0 {
            return Ok(());
        }
        if es == 0 {
            return Err(self.err(format!("{name} at {addr:#x}: elements of 0 bytes")));
        }
        // signature, version, client, header address
        let prefix = 6 + os as u64;
        let page_nelmts = 1u64.checked_shl(page_bits).unwrap_or(u64::MAX);
        if nelmts <= page_nelmts {
            let len = self.add(self.add(prefix, self.mul(nelmts, es)?)?, 4)?;
            self.block(dblk, len, b"FADB", "fixed array data block")?;
            return Ok(());
        }
        let npages = nelmts.div_ceil(page_nelmts);
        let head = self.add(prefix, npages.div_ceil(8))?;
        let b = self.block(dblk, head + 4, b"FADB", "fixed array data block")?;
        let bitmap = b.get(prefix as usize..).unwrap_or_default().to_vec();
        let page_len = self.add(self.mul(page_nelmts, es)?, 4)?;
        let first = self.add(dblk, head + 4)?;
        for p in (0..npages).filter(|&p| bit(&bitmap, p)) {
            let n = if p + 1 == npages {
                nelmts - p * page_nelmts
            } else {
                page_nelmts
            };
            let at = self.add(first, self.mul(p, page_len)?)?;
            let len = self.add(self.mul(n, es)?, 4)?;
            self.page(at, len, &format!("fixed array data block page {p}"))?;
        }
        Ok(())
    }

    /// Extensible array: header `EAHD`, index block `EAIB`, the data blocks `EADB` it points
    /// to, secondary blocks `EASB` and theirs, data block pages.
    fn extensible_array(&mut self, addr: u64) -> Result<(), Hdf5Error> {
        let (os, ls) = (usize::from(self.h5.os), usize::from(self.h5.ls));
        let name = "extensible array header";
        // signature, version, client, 6 one-byte parameters, 6 statistics, index block address
        let h = self.block(addr, (12 + 6 * ls + os + 4) as u64, b"EAHD", name)?;
        let byte = |i: usize| {
            h.get(i)
                .copied()
                .ok_or_else(|| self.err(format!("{name} at {addr:#x} is too short")))
        };
        let es = u64::from(byte(6)?);
        let max_bits = u32::from(byte(7)?);
        let idx_elmts = u64::from(byte(8)?);
        let dblk_min = u64::from(byte(9)?);
        let sblk_min_ptrs = u64::from(byte(10)?);
        let page_bits = u32::from(byte(11)?);
        let iblock = uint(&h, 12 + 6 * ls, os)
            .ok_or_else(|| self.err(format!("{name} at {addr:#x} is too short")))?;
        if self.undefined(iblock) {
            return Ok(());
        }
        if es == 0
            || !dblk_min.is_power_of_two()
            || !sblk_min_ptrs.is_power_of_two()
            || !(1..=64).contains(&max_bits)
            || dblk_min.trailing_zeros() > max_bits
        {
            return Err(self.err(format!(
                "{name} at {addr:#x}: creation parameters make no sense (element size {es}, \
                 {max_bits} bits, data blocks of at least {dblk_min}, secondary blocks of at least {sblk_min_ptrs})"
            )));
        }
        let geo = EaGeometry {
            os: os as u64,
            es,
            // bytes of the "block offset" field: enough for 2^max_bits elements
            off_bytes: u64::from(max_bits.div_ceil(8)),
            dblk_min,
            page_nelmts: 1u64.checked_shl(page_bits).unwrap_or(u64::MAX),
        };
        let nsblks = u64::from(1 + max_bits - dblk_min.trailing_zeros());
        // the index block points at the data blocks of the first super blocks itself
        let direct_sblks = (2 * u64::from(sblk_min_ptrs.trailing_zeros())).min(nsblks);
        let ndblk_addrs = 2 * (sblk_min_ptrs - 1);
        let nsblk_addrs = nsblks - direct_sblks;
        let addrs = self.add(ndblk_addrs, nsblk_addrs)?;
        let len = [
            self.mul(idx_elmts, es)?,
            self.mul(addrs, geo.os)?,
            6 + geo.os + 4,
        ]
        .into_iter()
        .try_fold(0u64, |a, b| self.add(a, b))?;
        let ib = self.block(iblock, len, b"EAIB", "extensible array index block")?;
        let mut at = 6 + os + (idx_elmts * es) as usize;
        let mut next_addr = || {
            let a = uint(&ib, at, os);
            at += os;
            a
        };
        let mut direct = Vec::new();
        for u in 0..direct_sblks {
            for _ in 0..geo.ndblks(u) {
                if direct.len() as u64 == ndblk_addrs {
                    break;
                }
                direct.push((u, next_addr()));
            }
        }
        // the address list has room for exactly `ndblk_addrs` data blocks
        while (direct.len() as u64) < ndblk_addrs {
            next_addr();
            direct.push((u64::MAX, None));
        }
        let secondary: Vec<(u64, Option<u64>)> =
            (direct_sblks..nsblks).map(|u| (u, next_addr())).collect();
        for (u, a) in direct {
            let Some(a) = a.filter(|&a| !self.undefined(a)) else {
                continue;
            };
            let nelmts = geo
                .dblk_nelmts(u)
                .ok_or_else(|| self.err("data block size overflows"))?;
            self.ea_data_block(&geo, a, nelmts, None)?;
        }
        for (u, a) in secondary {
            let Some(a) = a.filter(|&a| !self.undefined(a)) else {
                continue;
            };
            self.ea_secondary_block(&geo, a, u)?;
        }
        Ok(())
    }

    fn ea_secondary_block(&mut self, geo: &EaGeometry, addr: u64, u: u64) -> Result<(), Hdf5Error> {
        let ndblks = geo.ndblks(u);
        let nelmts = geo
            .dblk_nelmts(u)
            .ok_or_else(|| self.err("data block size overflows"))?;
        let npages = geo.pages(nelmts);
        // HDF5 reserves whole bytes per data block, numbering the bits continuously
        let bitmap_len = self.mul(ndblks, npages.div_ceil(8))?;
        let head = 6 + geo.os + geo.off_bytes;
        let len = [head, bitmap_len, self.mul(ndblks, geo.os)?, 4]
            .into_iter()
            .try_fold(0u64, |a, b| self.add(a, b))?;
        let b = self.block(addr, len, b"EASB", "extensible array secondary block")?;
        let (head, bitmap_len) = (head as usize, bitmap_len as usize);
        let bitmap = b.get(head..head + bitmap_len).unwrap_or_default().to_vec();
        let os = geo.os as usize;
        for d in 0..ndblks {
            let at = head + bitmap_len + d as usize * os;
            let Some(a) = uint(&b, at, os).filter(|&a| !self.undefined(a)) else {
                continue;
            };
            let first_bit = self.mul(d, npages)?;
            self.ea_data_block(geo, a, nelmts, Some((&bitmap, first_bit)))?;
        }
        Ok(())
    }

    /// A data block of `nelmts` elements; for a paged one, `pages` is the page bitmap of its
    /// secondary block and the bit of its first page (data blocks of the index block carry
    /// no bitmap, so only their prefix can be checked if they are ever paged).
    fn ea_data_block(
        &mut self,
        geo: &EaGeometry,
        addr: u64,
        nelmts: u64,
        pages: Option<(&[u8], u64)>,
    ) -> Result<(), Hdf5Error> {
        let name = "extensible array data block";
        let prefix = 6 + geo.os + geo.off_bytes;
        let npages = geo.pages(nelmts);
        if npages == 0 {
            let len = self.add(self.add(prefix, self.mul(nelmts, geo.es)?)?, 4)?;
            self.block(addr, len, b"EADB", name)?;
            return Ok(());
        }
        self.block(addr, prefix + 4, b"EADB", name)?;
        let Some((bitmap, first_bit)) = pages else {
            return Ok(());
        };
        let page_len = self.add(self.mul(geo.page_nelmts, geo.es)?, 4)?;
        let first = self.add(addr, prefix + 4)?;
        for p in 0..npages {
            if !bit(bitmap, self.add(first_bit, p)?) {
                continue;
            }
            let at = self.add(first, self.mul(p, page_len)?)?;
            self.page(
                at,
                page_len,
                &format!("{name} page {p} (of the block at {addr:#x})"),
            )?;
        }
        Ok(())
    }
}

/// Sizes of an extensible array's blocks, from its header.
struct EaGeometry {
    os: u64,
    es: u64,
    off_bytes: u64,
    dblk_min: u64,
    page_nelmts: u64,
}

impl EaGeometry {
    /// Data blocks in super block `u`: `2^(u/2)`.
    fn ndblks(&self, u: u64) -> u64 {
        1u64.checked_shl((u / 2) as u32).unwrap_or(0)
    }

    /// Elements in each data block of super block `u`: `2^ceil(u/2)` times the minimum.
    fn dblk_nelmts(&self, u: u64) -> Option<u64> {
        self.dblk_min
            .checked_mul(1u64.checked_shl(u.div_ceil(2) as u32)?)
    }

    /// Pages of a data block of `nelmts` elements, 0 when it is not paged.
    fn pages(&self, nelmts: u64) -> u64 {
        if nelmts > self.page_nelmts {
            nelmts.div_ceil(self.page_nelmts)
        } else {
            0
        }
    }
}
