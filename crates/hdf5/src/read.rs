//! Hyperslab reads: compact and contiguous data directly, chunked data through the chunk index
//! and the filter pipeline (chunks decoded in parallel), missing chunks and the part of a
//! variable beyond its HDF5 extent as the fill value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hdf5_reader::chunk_index::{self, ChunkEntry};
use hdf5_reader::io::Cursor;
use hdf5_reader::messages::datatype::{Datatype, StringSize};
use hdf5_reader::messages::layout::{ChunkIndexing, DataLayout};
use hdf5_reader::ByteOrder;
use nc_dataset::{
    ChunkBytes, ChunkMap, Dataset, FilterSpec, Placement, Region, StoredChunk, StoredChunks,
    StoredField, StoredType, VarId,
};
use rayon::prelude::*;

use crate::convert::Decoder;
use crate::filters::filter_name;
use crate::h5::{H5, MAX_READ_BYTES};
use crate::meta::VarInfo;
use crate::vds::{self, Source, Virtual};
use crate::Hdf5Error;
use nc_filters::{ChunkDecoder, FilterContext};

/// Decoded chunks kept for repeated small reads: the budget the cache starts with, and the
/// most it grows to (bytes; see [`ChunkCache`]).
const CHUNK_CACHE_START: usize = 8 << 20;
const CHUNK_CACHE_BYTES: usize = 64 << 20;
/// Chunks decoded per parallel batch (bounds memory held at once).
const BATCH: usize = 64;

/// Decoded chunks by (variable, chunk address), kept for repeated small reads. The budget
/// starts at [`CHUNK_CACHE_START`] and doubles, up to [`CHUNK_CACHE_BYTES`], each time a chunk
/// dropped when the cache was last emptied is asked for again: a copy that reads each chunk
/// once (a subset, a copy to the same chunks) holds a few megabytes whose buffers the
/// allocator hands out again, instead of tens of megabytes of fresh pages; one that reads
/// chunks again (a rechunking copy) soon gets the room it needs.
#[derive(Default)]
struct ChunkCache {
    bytes: usize,
    budget: usize,
    map: HashMap<ChunkKey, Arc<Vec<u8>>>,
    dropped: std::collections::HashSet<ChunkKey>,
}

/// A decoded chunk's key: (variable, chunk address, still byte-shuffled).
type ChunkKey = (usize, u64, bool);

/// A decoded chunk, and whether it is still byte-shuffled.
type Decoded = (Arc<Vec<u8>>, bool);

impl ChunkCache {
    /// Keep `data`, decoded for `key` because it was not kept.
    fn keep(&mut self, key: ChunkKey, data: &Arc<Vec<u8>>) {
        if self.budget == 0 {
            self.budget = CHUNK_CACHE_START;
        }
        if self.dropped.remove(&key) {
            self.budget = (self.budget * 2).min(CHUNK_CACHE_BYTES);
        }
        if data.len() > CHUNK_CACHE_BYTES / 4 {
            return;
        }
        if self.bytes + data.len() > self.budget {
            self.dropped = self.map.drain().map(|(k, _)| k).collect();
            self.bytes = 0;
        }
        self.bytes += data.len();
        self.map.insert(key, Arc::clone(data));
    }
}

/// A chunked variable's index entries, chunk shape and decoded chunk size in bytes.
type ChunkIndex = (Arc<Vec<ChunkEntry>>, Vec<u64>, u64);

/// Per-file caches of the data reader.
#[derive(Default)]
pub(crate) struct ReadCache {
    entries: Mutex<HashMap<usize, Arc<Vec<ChunkEntry>>>>,
    chunks: Mutex<ChunkCache>,
}

/// A validated request: start/count clipped to the stored extent.
struct Slab<'a> {
    start: &'a [u64],
    count: &'a [u64],
}

pub(crate) struct Reader<'a> {
    pub h5: &'a H5,
    pub decoder: &'a ChunkDecoder,
    pub cache: &'a ReadCache,
}

impl Reader<'_> {
    pub fn read(
        &self,
        ds: &Dataset,
        var: VarId,
        info: &VarInfo,
        start: &[u64],
        count: &[u64],
    ) -> Result<nc_dataset::Values, Hdf5Error> {
        let (total, out) = self.read_stored(ds, var, info, start, count)?;
        let what = format!("variable \"{}\"", ds.var(var).name);
        let dec = Decoder {
            h5: self.h5,
            what: &what,
        };
        dec.decode(&info.dt, &out, total as usize, true)
    }

    /// [`Self::read`] as little-endian element bytes, for integer, float and char variables
    /// (`None` for other types): the stored bytes, swapped in place when big-endian.
    pub fn read_le(
        &self,
        ds: &Dataset,
        var: VarId,
        info: &VarInfo,
        start: &[u64],
        count: &[u64],
    ) -> Option<Result<Vec<u8>, Hdf5Error>> {
        let (size, order) = match &info.dt {
            Datatype::FixedPoint {
                size, byte_order, ..
            } if matches!(size, 1 | 2 | 4 | 8) => (*size as usize, *byte_order),
            Datatype::FloatingPoint { size, byte_order } if matches!(size, 4 | 8) => {
                (*size as usize, *byte_order)
            }
            Datatype::String {
                size: StringSize::Fixed(1),
                ..
            } => (1, ByteOrder::LittleEndian),
            _ => return None,
        };
        if size != info.elem_size {
            return None;
        }
        Some(
            self.read_stored(ds, var, info, start, count)
                .map(|(_, mut out)| {
                    if size > 1 && order == ByteOrder::BigEndian {
                        for e in out.chunks_exact_mut(size) {
                            e.reverse();
                        }
                    }
                    out
                }),
        )
    }

    /// The stored bytes of a hyperslab (fill where nothing is stored) and its element count.
    fn read_stored(
        &self,
        ds: &Dataset,
        var: VarId,
        info: &VarInfo,
        start: &[u64],
        count: &[u64],
    ) -> Result<(u64, Vec<u8>), Hdf5Error> {
        let v = ds.var(var);
        self.read_block(var, &v.name, info, &ds.shape(var), start, count)
    }

    /// The stored bytes of a hyperslab of a dataset of shape `shape` (which may be longer
    /// than its stored extent along unlimited dimensions: fill there) and its element count.
    fn read_block(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        shape: &[u64],
        start: &[u64],
        count: &[u64],
    ) -> Result<(u64, Vec<u8>), Hdf5Error> {
        let bad = |message: String| Hdf5Error::BadRequest {
            var: name.to_string(),
            message,
        };
        if start.len() != shape.len() || count.len() != shape.len() {
            return Err(bad(format!(
                "hyperslab rank {} does not match variable rank {}",
                start.len(),
                shape.len()
            )));
        }
        for d in 0..shape.len() {
            if start[d].checked_add(count[d]).is_none_or(|e| e > shape[d]) {
                return Err(bad(format!(
                    "hyperslab {}+{} exceeds dimension length {}",
                    start[d], count[d], shape[d]
                )));
            }
        }
        let es = info.elem_size;
        let total = count.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        let bytes = total.and_then(|t| t.checked_mul(es as u64));
        let (Some(total), Some(bytes)) = (total, bytes) else {
            return Err(bad("hyperslab size overflows".to_string()));
        };
        if bytes > MAX_READ_BYTES {
            return Err(Hdf5Error::TooLarge {
                what: format!("variable \"{name}\""),
                bytes,
                limit: MAX_READ_BYTES,
            });
        }
        if let Some(whole) = self.whole_chunk(var, name, info, start, count)? {
            return Ok((total, whole));
        }
        let mut fill = info.fill.clone().unwrap_or_else(|| vec![0u8; es]);
        // integers with unused bits (`VarInfo::int_bits()`) read as HDF5 converts them: chunks
        // are unpacked as they are decoded, so only the fill here; other storage afterwards
        let per_chunk = info.virt.is_some() || matches!(info.layout, DataLayout::Chunked { .. });
        if per_chunk {
            unpack_ints(info, &mut fill);
        }
        let mut out = fill.repeat(total as usize);
        if total > 0 {
            let slab = Slab { start, count };
            self.fill_from_storage(var, name, info, &slab, &mut out)?;
        }
        if !per_chunk {
            unpack_ints(info, &mut out);
        }
        Ok((total, out))
    }

    fn fill_from_storage(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        slab: &Slab<'_>,
        out: &mut [u8],
    ) -> Result<(), Hdf5Error> {
        let es = info.elem_size;
        let what = format!("variable \"{name}\"");
        let ext = &info.shape;
        let rank = ext.len();
        let stored_elems = ext
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
            .unwrap_or(u64::MAX);
        if let Some(v) = &info.virt {
            return self.fill_virtual(name, info, v, slab, out);
        }
        match &info.layout {
            DataLayout::Compact { data } => {
                if (data.len() as u64) < stored_elems.saturating_mul(es as u64) {
                    return Err(Hdf5Error::invalid(
                        what,
                        "compact data shorter than the dataset",
                    ));
                }
                copy_linear(slab, ext, 0, data, out, es);
            }
            DataLayout::Contiguous { .. } if info.external.is_some() => {
                let (first, last) = span(slab, ext);
                let Some((first, last)) = first.zip(last) else {
                    return Ok(());
                };
                let len = (last - first + 1)
                    .checked_mul(es as u64)
                    .filter(|&l| l <= MAX_READ_BYTES)
                    .ok_or_else(|| Hdf5Error::invalid(&what, "contiguous span too large"))?;
                let slots = info.external.as_deref().unwrap_or_default();
                let data = self.read_external(name, slots, first * es as u64, len)?;
                copy_linear(slab, ext, first, &data, out, es);
            }
            DataLayout::Contiguous { address, .. } => {
                if Cursor::is_undefined_offset(*address, self.h5.os) {
                    return Ok(());
                }
                // read the span from the first to the last selected element once
                let (first, last) = span(slab, ext);
                let Some((first, last)) = first.zip(last) else {
                    return Ok(());
                };
                let len = (last - first + 1)
                    .checked_mul(es as u64)
                    .filter(|&l| l <= MAX_READ_BYTES)
                    .ok_or_else(|| Hdf5Error::invalid(&what, "contiguous span too large"))?;
                let addr = address
                    .checked_add(first * es as u64)
                    .ok_or_else(|| Hdf5Error::invalid(&what, "address overflows"))?;
                let data = self.h5.read(addr, len, &what)?;
                // the block starts at linear element `first`: copy with a shifted view
                copy_linear(slab, ext, first, &data, out, es);
            }
            DataLayout::Chunked {
                address,
                dims,
                chunk_indexing,
                ..
            } => {
                if Cursor::is_undefined_offset(*address, self.h5.os) {
                    return Ok(());
                }
                if dims.len() != rank || dims.contains(&0) {
                    return Err(Hdf5Error::invalid(
                        what,
                        format!("chunk shape {dims:?} does not fit rank {rank}"),
                    ));
                }
                let chunk: Vec<u64> = dims.iter().map(|&c| u64::from(c)).collect();
                let chunk_bytes = chunk
                    .iter()
                    .try_fold(es as u64, |a, &b| a.checked_mul(b))
                    .filter(|&b| b <= MAX_READ_BYTES)
                    .ok_or_else(|| Hdf5Error::invalid(&what, "chunk too large"))?;
                let entries = self.entries(
                    var,
                    info,
                    *address,
                    dims,
                    chunk_indexing.as_ref(),
                    chunk_bytes,
                    &what,
                )?;
                // chunks overlapping the request
                let wanted: Vec<&ChunkEntry> = entries
                    .iter()
                    .filter(|e| {
                        e.offsets.len() == rank
                            && (0..rank).all(|d| {
                                e.offsets[d] < slab.start[d] + slab.count[d]
                                    && e.offsets[d] + chunk[d] > slab.start[d]
                            })
                    })
                    .collect();
                // a byte-shuffled chunk of which the request takes less than half: its
                // elements are gathered from the shuffled planes, not the whole chunk unshuffled
                let planes = |e: &ChunkEntry| {
                    Self::shuffled_first(info, e)
                        && slab.overlap(&e.offsets, &chunk, ext).saturating_mul(2)
                            < chunk.iter().product::<u64>()
                };
                let one = |e: &&ChunkEntry| {
                    let p = planes(e);
                    self.chunk(var, name, info, e, &chunk, chunk_bytes, p)
                        .map(|b| (b, p))
                };
                for batch in wanted.chunks(BATCH) {
                    let decoded: Vec<Result<Decoded, Hdf5Error>> = if batch.len() > 1 {
                        batch.par_iter().map(one).collect()
                    } else {
                        batch.iter().map(one).collect()
                    };
                    for (e, got) in batch.iter().zip(decoded) {
                        let (bytes, planes) = got?;
                        // clip the chunk to the stored extent (edge chunks)
                        if planes {
                            slab.copy_block_planes(&e.offsets, &chunk, ext, &bytes, out, es);
                        } else {
                            slab.copy_block_clipped(&e.offsets, &chunk, ext, &bytes, out, es);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The elements of a virtual dataset's hyperslab that its mappings cover, from their
    /// sources (the rest keeps the fill value already in `out`).
    fn fill_virtual(
        &self,
        name: &str,
        info: &VarInfo,
        v: &Virtual,
        slab: &Slab<'_>,
        out: &mut [u8],
    ) -> Result<(), Hdf5Error> {
        let es = info.elem_size;
        // a source read for another virtual dataset carries its description as its name
        let what = if name.starts_with("source dataset ") {
            name.to_string()
        } else {
            format!("variable \"{name}\"")
        };
        for m in &v.maps {
            let src = match m {
                Source::Missing => continue,
                Source::Unusable(why) => {
                    return Err(Hdf5Error::unsupported(
                        &what,
                        format!("virtual dataset mapping: {why}"),
                    ))
                }
                Source::Found(f) => f,
            };
            if src.info.elem_size != es {
                return Err(Hdf5Error::invalid(
                    &what,
                    format!("{} has elements of another size", src.name),
                ));
            }
            let ext = &src.info.shape;
            // the box of source elements the request needs
            let rank = ext.len();
            let (mut lo, mut hi) = (vec![u64::MAX; rank], vec![0u64; rank]);
            let mut any = false;
            vds::pairs(&src.vsel, &src.ssel, ext, slab.start, slab.count, |_, c| {
                any = true;
                for d in 0..rank {
                    lo[d] = lo[d].min(c[d]);
                    hi[d] = hi[d].max(c[d]);
                }
            });
            if !any {
                continue;
            }
            let count: Vec<u64> = (0..rank).map(|d| hi[d] - lo[d] + 1).collect();
            let reader = Reader {
                h5: &src.info.file,
                decoder: self.decoder,
                cache: &src.cache,
            };
            // a source's unusable mapping names the source; say which variable reads it
            let (_, data) = reader
                .read_block(VarId(0), &src.name, &src.info, ext, &lo, &count)
                .map_err(|e| match e {
                    Hdf5Error::Unsupported { what: w, message } => Hdf5Error::Unsupported {
                        what: format!("{what}: {w}"),
                        message,
                    },
                    e => e,
                })?;
            vds::pairs(
                &src.vsel,
                &src.ssel,
                ext,
                slab.start,
                slab.count,
                |pos, c| {
                    let mut at = 0u64;
                    for d in 0..rank {
                        at = at * count[d] + (c[d] - lo[d]);
                    }
                    let (s, o) = (at as usize * es, pos as usize * es);
                    if let (Some(src), Some(dst)) = (data.get(s..s + es), out.get_mut(o..o + es)) {
                        dst.copy_from_slice(src);
                    }
                },
            );
        }
        Ok(())
    }

    /// `len` bytes from byte `at` of a dataset stored in external files (`slots`: file name,
    /// offset, size, in dataset order). Bytes past the end of an external file read as
    /// zeros, as HDF5 reads them; a range past the slots' total is an error.
    fn read_external(
        &self,
        var: &str,
        slots: &[(String, u64, u64)],
        at: u64,
        len: u64,
    ) -> Result<Vec<u8>, Hdf5Error> {
        let n = usize::try_from(len).map_err(|_| {
            Hdf5Error::invalid(format!("variable \"{var}\""), "size exceeds memory")
        })?;
        let mut out = vec![0u8; n];
        let end = at + len;
        let mut pos = 0u64;
        for (name, offset, size) in slots {
            let slot_end = pos.saturating_add(*size);
            let lo = at.max(pos);
            let hi = end.min(slot_end);
            if lo < hi {
                let io = |error| Hdf5Error::ExternalFile {
                    var: var.to_string(),
                    file: std::path::PathBuf::from(name),
                    error,
                };
                let f = match self.h5.open_named(name) {
                    Some(f) => f.map_err(|e| io(crate::h5::io_error(e)))?,
                    None => {
                        return Err(io(std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "no such file",
                        )))
                    }
                };
                let from = offset.checked_add(lo - pos).ok_or_else(|| {
                    Hdf5Error::invalid(
                        format!("variable \"{var}\""),
                        "external file offset overflows",
                    )
                })?;
                let dst = &mut out[(lo - at) as usize..(hi - at) as usize];
                // a short file leaves zeros: HDF5 reads what was never written as zeros
                let have = f.len().saturating_sub(from).min(dst.len() as u64) as usize;
                if have > 0 {
                    f.read_at(from, &mut dst[..have])
                        .map_err(|e| io(crate::h5::io_error(e)))?;
                }
            }
            pos = slot_end;
        }
        if pos < end {
            return Err(Hdf5Error::invalid(
                format!("variable \"{var}\""),
                format!("its external files hold {pos} bytes, the dataset needs {end}"),
            ));
        }
        Ok(out)
    }

    /// The stored bytes of the chunk at `offsets` when the variable is stored little-endian in
    /// chunks of `chunk` with exactly `chain` applied (see `DataSource::raw_chunk`).
    pub fn raw_chunk(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        offsets: &[u64],
        chunk: &[u64],
        chain: &[FilterSpec],
    ) -> Option<Vec<u8>> {
        let little = match &info.dt {
            // integers of other widths are widened on reading: not the variable's bytes
            Datatype::FixedPoint {
                byte_order,
                size: 1 | 2 | 4 | 8,
                ..
            } => info.elem_size == 1 || *byte_order == ByteOrder::LittleEndian,
            // half floats are widened on reading: their stored bytes are not the variable's
            Datatype::FloatingPoint { size, byte_order } => {
                matches!(size, 4 | 8) && *byte_order == ByteOrder::LittleEndian
            }
            Datatype::String {
                size: StringSize::Fixed(1),
                ..
            } => true,
            _ => false,
        };
        // integers with unused bits are unpacked on reading: their stored bytes are not the
        // values (with nbit too: the output's own nbit parameters differ)
        if !little || info.filters.as_slice() != chain || info.int_bits().is_some() {
            return None;
        }
        let (e, _, chunk_bytes) = self
            .chunk_at(var, name, info, offsets, |stored| stored == chunk)
            .ok()??;
        // every filter applied, and a size the decoder would accept
        if e.filter_mask != 0
            || e.size > MAX_READ_BYTES
            || (chain.is_empty() && e.size != chunk_bytes)
        {
            return None;
        }
        self.h5
            .read(e.address, e.size, &format!("variable \"{name}\""))
            .ok()
    }

    /// A request that is exactly one stored chunk inside the extent (what a copy with the same
    /// chunk shape asks for): the decoded chunk itself, with no fill pass and no copy (not
    /// cached: a copy reads each chunk once). `None` for any other request.
    fn whole_chunk(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        start: &[u64],
        count: &[u64],
    ) -> Result<Option<Vec<u8>>, Hdf5Error> {
        let ext = &info.shape;
        if start.is_empty() || start.len() != ext.len() {
            return Ok(None);
        }
        let exact = |chunk: &[u64]| {
            (0..ext.len()).all(|d| {
                let c = chunk[d];
                start[d].is_multiple_of(c) && count[d] == c && start[d] + c <= ext[d]
            })
        };
        let Some((e, chunk, chunk_bytes)) = self.chunk_at(var, name, info, start, exact)? else {
            return Ok(None);
        };
        if let Some(c) = self.cached((var.0, e.address, false)) {
            return Ok(Some(c[..chunk_bytes as usize].to_vec()));
        }
        let mut data = self.decode_chunk(name, info, &e, &chunk, chunk_bytes)?;
        data.truncate(chunk_bytes as usize);
        Ok(Some(data))
    }

    /// The index entry of the stored chunk of a chunked variable whose first element is at
    /// `offsets`, with the chunk shape and its decoded size in bytes, when `accept` takes the
    /// chunk shape. `None` for other layouts, a dataset with no storage yet, a shape not
    /// accepted, or no chunk stored there.
    fn chunk_at(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        offsets: &[u64],
        accept: impl Fn(&[u64]) -> bool,
    ) -> Result<Option<(ChunkEntry, Vec<u64>, u64)>, Hdf5Error> {
        if offsets.len() != info.shape.len() {
            return Ok(None);
        }
        let Some((entries, chunk, chunk_bytes)) = self.chunk_index(var, name, info, accept)? else {
            return Ok(None);
        };
        Ok(entries
            .binary_search_by(|e| e.offsets.as_slice().cmp(offsets))
            .ok()
            .map(|i| (entries[i].clone(), chunk, chunk_bytes)))
    }

    /// True when nothing is stored for the hyperslab `start`/`count` (no chunk of a chunked
    /// variable overlaps it, or the variable has no storage yet): it reads as the fill value.
    /// False for compact, external and virtual storage, and when the index cannot be read.
    pub fn unwritten(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        start: &[u64],
        count: &[u64],
    ) -> bool {
        if info.virt.is_some() || info.external.is_some() || start.len() != count.len() {
            return false;
        }
        match &info.layout {
            DataLayout::Contiguous { address, .. } => {
                Cursor::is_undefined_offset(*address, self.h5.os)
            }
            DataLayout::Chunked { address, .. }
                if Cursor::is_undefined_offset(*address, self.h5.os) =>
            {
                true
            }
            DataLayout::Chunked { .. } => {
                let Ok(Some((entries, chunk, _))) = self.chunk_index(var, name, info, |_| true)
                else {
                    return false;
                };
                if chunk.len() != start.len() {
                    return false;
                }
                // the grid cells the request overlaps, looked up one by one when few
                let first: Vec<u64> = start.iter().zip(&chunk).map(|(&s, &c)| s / c).collect();
                let last: Vec<u64> = start
                    .iter()
                    .zip(count)
                    .zip(&chunk)
                    .map(|((&s, &n), &c)| (s + n.max(1) - 1) / c)
                    .collect();
                let cells = first
                    .iter()
                    .zip(&last)
                    .try_fold(1u64, |a, (&f, &l)| a.checked_mul(l - f + 1));
                match cells {
                    Some(n) if n <= 4096 => {
                        let mut cell = first.clone();
                        loop {
                            let offsets: Vec<u64> =
                                cell.iter().zip(&chunk).map(|(&i, &c)| i * c).collect();
                            if entries
                                .binary_search_by(|e| e.offsets.as_slice().cmp(&offsets))
                                .is_ok()
                            {
                                return false;
                            }
                            if !nc_dataset::next_cell(&mut cell, &first, &last) {
                                return true;
                            }
                        }
                    }
                    _ => !entries.iter().any(|e| {
                        e.offsets.len() == start.len()
                            && (0..start.len()).all(|d| {
                                e.offsets[d] < start[d] + count[d]
                                    && e.offsets[d] + chunk[d] > start[d]
                            })
                    }),
                }
            }
            _ => false,
        }
    }

    /// The regions of the variable that have storage (see
    /// `nc_dataset::DataSource::stored_regions`): each stored chunk clipped to the dataset's
    /// extent, the whole extent for allocated contiguous or compact storage, none when
    /// nothing is allocated. `None` for virtual and external storage, and when the chunk
    /// index cannot be read (the copy then asks region by region).
    pub fn stored_regions(&self, var: VarId, name: &str, info: &VarInfo) -> Option<Vec<Region>> {
        if info.virt.is_some() || info.external.is_some() {
            return None;
        }
        match &info.layout {
            DataLayout::Contiguous { address, .. } | DataLayout::Chunked { address, .. }
                if Cursor::is_undefined_offset(*address, self.h5.os) =>
            {
                Some(Vec::new())
            }
            DataLayout::Chunked { .. } => {
                let Ok(Some((entries, chunk, _))) = self.chunk_index(var, name, info, |_| true)
                else {
                    return None;
                };
                let rank = info.shape.len();
                if chunk.len() != rank {
                    return None;
                }
                if entries.iter().any(|e| e.offsets.len() != rank) {
                    return None;
                }
                // a chunk past the extent (a dataset that shrank) holds nothing read: left out
                Some(
                    entries
                        .iter()
                        .filter_map(|e| Region::chunk_at(e.offsets.clone(), &chunk, &info.shape))
                        .collect(),
                )
            }
            _ => Some(vec![Region {
                start: vec![0; info.shape.len()],
                count: info.shape.clone(),
            }]),
        }
    }

    /// The chunk index of a chunked variable with its chunk shape and decoded chunk size, when
    /// `accept` takes the chunk shape. `None` for other layouts, a dataset with no storage
    /// yet, a shape not accepted or a chunk too big to read.
    fn chunk_index(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        accept: impl Fn(&[u64]) -> bool,
    ) -> Result<Option<ChunkIndex>, Hdf5Error> {
        let Some(g) = chunk_geometry(self.h5, info) else {
            return Ok(None);
        };
        let chunk: Vec<u64> = g.dims.iter().map(|&c| u64::from(c)).collect();
        if !accept(&chunk) || g.chunk_bytes > MAX_READ_BYTES {
            return Ok(None);
        }
        let chunk_bytes = g.chunk_bytes;
        let entries = self.entries(
            var,
            info,
            g.address,
            g.dims,
            g.indexing,
            chunk_bytes,
            &format!("variable \"{name}\""),
        )?;
        Ok(Some((entries, chunk, chunk_bytes)))
    }

    /// Where variable `var`'s stored bytes are, for references to them in place
    /// ([`nc_dataset::Placement`]); `shape` is its netCDF shape (longer than the HDF5 extent
    /// along an unlimited dimension that grew through another variable: fill there).
    pub(crate) fn placement(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        shape: &[u64],
    ) -> Result<Placement, Hdf5Error> {
        let what = format!("variable \"{name}\"");
        let elsewhere = |why: &str| {
            Ok(Placement::Elsewhere {
                why: why.to_string(),
            })
        };
        if info.virt.is_some() {
            return elsewhere("a virtual dataset (its values come from other datasets)");
        }
        if matches!(&info.dt, Datatype::FixedPoint { size, .. } if !matches!(size, 1 | 2 | 4 | 8)) {
            return elsewhere(
                "integers of a width netCDF has no type for (widened to a netCDF type on reading)",
            );
        }
        // (nbit-packed ones are referenced with their filter, which references then refuse)
        if info.nbit_bits.is_none() && info.int_bits().is_some() {
            return elsewhere(
                "integers with unused bits (precision or offset), unpacked on reading",
            );
        }
        let Some(elem) = stored_type(&info.dt, 0) else {
            return elsewhere(
                "variable-length data (references into the file's global heap, not the values)",
            );
        };
        if elem.size() != info.elem_size || shape.len() != info.shape.len() {
            return elsewhere("elements stored otherwise than netCDF reads them");
        }
        let file_len = self.h5.storage().len();
        let base = self.h5.base();
        let rank = shape.len();
        let whole: Vec<u64> = shape.iter().map(|&n| n.max(1)).collect();
        let elems = info.shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        let bytes = elems.and_then(|n| n.checked_mul(info.elem_size as u64));
        let Some(bytes) = bytes else {
            return Err(Hdf5Error::invalid(what, "size overflows"));
        };
        let map = |chunk: Vec<u64>, chunks: Vec<StoredChunk>, file| {
            Placement::Chunks(ChunkMap {
                elem: elem.clone(),
                chunk,
                filters: info.filters.clone(),
                fill: info.fill.clone(),
                file,
                chunks: StoredChunks::List(chunks),
            })
        };
        // one chunk of the whole variable (contiguous storage), whose bytes are `range`
        let one = |range: Option<(u64, u64)>, file| {
            let chunks = match range {
                _ if bytes == 0 => Vec::new(),
                None => Vec::new(),
                // a dimension longer than the stored extent reads as fill past it
                Some(_) if shape != info.shape.as_slice() => vec![StoredChunk {
                    index: vec![0; rank],
                    bytes: ChunkBytes::Decoded,
                }],
                Some((offset, len)) => vec![StoredChunk {
                    index: vec![0; rank],
                    bytes: ChunkBytes::Range { offset, len },
                }],
            };
            map(whole.clone(), chunks, file)
        };
        match &info.layout {
            DataLayout::Compact { .. } => elsewhere("compact storage (inside the object header)"),
            DataLayout::Contiguous { .. } if info.external.is_some() => {
                let slots = info.external.as_deref().unwrap_or_default();
                match slots {
                    [(file, offset, size)] if *size >= bytes => {
                        let found = self.h5.open_named(file).and_then(Result::ok);
                        match found.as_ref().and_then(|f| f.local_path()) {
                            Some(path) => Ok(one(Some((*offset, bytes)), Some(path.to_path_buf()))),
                            None => elsewhere("an external raw data file that is not found"),
                        }
                    }
                    _ => elsewhere("external raw data in more than one segment"),
                }
            }
            DataLayout::Contiguous { address, .. } => {
                if Cursor::is_undefined_offset(*address, self.h5.os) {
                    return Ok(one(None, None));
                }
                let offset = base
                    .checked_add(*address)
                    .filter(|&o| o.checked_add(bytes).is_some_and(|e| e <= file_len + base))
                    .ok_or_else(|| {
                        Hdf5Error::invalid(
                            &what,
                            format!(
                                "{bytes} bytes at {address:#x} run past the end of the \
                                 {file_len}-byte file (truncated?)"
                            ),
                        )
                    })?;
                Ok(one(Some((offset, bytes)), None))
            }
            DataLayout::Chunked {
                address,
                dims,
                chunk_indexing,
                ..
            } => {
                if dims.len() != rank || dims.contains(&0) {
                    return Err(Hdf5Error::invalid(
                        what,
                        format!("chunk shape {dims:?} does not fit rank {rank}"),
                    ));
                }
                let chunk: Vec<u64> = dims.iter().map(|&c| u64::from(c)).collect();
                if Cursor::is_undefined_offset(*address, self.h5.os) {
                    return Ok(map(chunk, Vec::new(), None));
                }
                let chunk_bytes = chunk
                    .iter()
                    .try_fold(info.elem_size as u64, |a, &b| a.checked_mul(b))
                    .ok_or_else(|| Hdf5Error::invalid(&what, "chunk size overflows"))?;
                let entries = self.entries(
                    var,
                    info,
                    *address,
                    dims,
                    chunk_indexing.as_ref(),
                    chunk_bytes,
                    &what,
                )?;
                let ext = &info.shape;
                let nfilters = info.filters.len().min(32);
                let mut chunks = Vec::with_capacity(entries.len());
                for e in entries.iter() {
                    if e.offsets.len() != rank || (0..rank).any(|d| e.offsets[d] % chunk[d] != 0) {
                        return Err(Hdf5Error::invalid(
                            what,
                            format!(
                                "chunk at {:?} is not on the chunk grid {chunk:?}",
                                e.offsets
                            ),
                        ));
                    }
                    // past the stored extent: HDF5 reads fill there, whatever the chunk holds
                    if (0..rank).any(|d| e.offsets[d] >= ext[d] || e.offsets[d] >= shape[d]) {
                        continue;
                    }
                    let index = (0..rank).map(|d| e.offsets[d] / chunk[d]).collect();
                    let skipped = e.filter_mask & ((1u64 << nfilters) - 1) as u32 != 0;
                    // partly past the stored extent inside the netCDF shape: fill there
                    let straddles =
                        (0..rank).any(|d| e.offsets[d] + chunk[d] > ext[d] && shape[d] > ext[d]);
                    let bytes = if skipped || straddles {
                        ChunkBytes::Decoded
                    } else {
                        let end = e.address.checked_add(e.size);
                        if end.is_none_or(|end| end > file_len) {
                            return Err(Hdf5Error::invalid(
                                what,
                                format!(
                                    "chunk at {:?}: {} bytes at {:#x} run past the end of the \
                                     {file_len}-byte file (truncated?)",
                                    e.offsets, e.size, e.address
                                ),
                            ));
                        }
                        ChunkBytes::Range {
                            offset: base.saturating_add(e.address),
                            len: e.size,
                        }
                    };
                    chunks.push(StoredChunk { index, bytes });
                }
                Ok(map(chunk, chunks, None))
            }
        }
    }

    /// A decoded chunk from the cache.
    fn cached(&self, key: ChunkKey) -> Option<Arc<Vec<u8>>> {
        self.cache
            .chunks
            .lock()
            .ok()
            .and_then(|m| m.map.get(&key).cloned())
    }

    #[allow(clippy::too_many_arguments)]
    fn entries(
        &self,
        var: VarId,
        info: &VarInfo,
        address: u64,
        dims: &[u32],
        indexing: Option<&ChunkIndexing>,
        chunk_bytes: u64,
        what: &str,
    ) -> Result<Arc<Vec<ChunkEntry>>, Hdf5Error> {
        if let Some(e) = self
            .cache
            .entries
            .lock()
            .ok()
            .and_then(|m| m.get(&var.0).cloned())
        {
            return Ok(e);
        }
        let mut entries =
            collect_chunk_entries(self.h5, info, address, dims, indexing, chunk_bytes, what)?;
        // sorted by position, so that a chunk is found by binary search (`chunk_at`, `unwritten`)
        entries.sort_by(|a, b| a.offsets.cmp(&b.offsets));
        let entries = Arc::new(entries);
        if let Ok(mut m) = self.cache.entries.lock() {
            m.insert(var.0, entries.clone());
        }
        Ok(entries)
    }

    /// Chunk `e` decoded (cached); with `planes`, its byte shuffle left undone (the caller
    /// takes the elements it needs from the planes, [`Slab::copy_block_planes`]).
    #[allow(clippy::too_many_arguments)]
    fn chunk(
        &self,
        var: VarId,
        name: &str,
        info: &VarInfo,
        e: &ChunkEntry,
        chunk: &[u64],
        chunk_bytes: u64,
        planes: bool,
    ) -> Result<Arc<Vec<u8>>, Hdf5Error> {
        let key = (var.0, e.address, planes);
        if let Some(c) = self.cached(key) {
            return Ok(c);
        }
        let data = Arc::new(self.decode_chunk_as(name, info, e, chunk, chunk_bytes, planes)?);
        if let Ok(mut m) = self.cache.chunks.lock() {
            m.keep(key, &data);
        }
        Ok(data)
    }

    /// True when chunk `e` of `info` is byte-shuffled first of all its filters, so that its
    /// other filters undone leave the shuffled planes of its elements.
    fn shuffled_first(info: &VarInfo, e: &ChunkEntry) -> bool {
        info.elem_size > 1
            && info.int_bits().is_none()
            && e.filter_mask & 1 == 0
            && info
                .filters
                .first()
                .is_some_and(|f| f.id == nc_dataset::FILTER_SHUFFLE)
    }

    /// Read and decode one chunk (no cache).
    fn decode_chunk(
        &self,
        name: &str,
        info: &VarInfo,
        e: &ChunkEntry,
        chunk: &[u64],
        chunk_bytes: u64,
    ) -> Result<Vec<u8>, Hdf5Error> {
        self.decode_chunk_as(name, info, e, chunk, chunk_bytes, false)
    }

    /// Read and decode one chunk (no cache); with `planes` (only for a chunk
    /// [`Reader::shuffled_first`]), all but its byte shuffle.
    fn decode_chunk_as(
        &self,
        name: &str,
        info: &VarInfo,
        e: &ChunkEntry,
        chunk: &[u64],
        chunk_bytes: u64,
        planes: bool,
    ) -> Result<Vec<u8>, Hdf5Error> {
        let what = format!("variable \"{name}\"");
        // an unfiltered chunk is never larger than its logical size; a filtered one is bounded
        // by the read limit
        if e.size > MAX_READ_BYTES || (info.filters.is_empty() && e.size > chunk_bytes) {
            return Err(Hdf5Error::invalid(
                what,
                format!("chunk at {:?} claims {} bytes", e.offsets, e.size),
            ));
        }
        let raw = self.h5.read(e.address, e.size, &what)?;
        let active: Vec<FilterSpec> = info
            .filters
            .iter()
            .enumerate()
            .filter(|(i, _)| *i >= 32 || e.filter_mask & (1 << i) == 0)
            .filter(|(i, _)| !(planes && *i == 0))
            .map(|(_, f)| f.clone())
            .collect();
        for f in &active {
            if !self.decoder.supports(f.id) {
                return Err(Hdf5Error::MissingFilter {
                    var: name.to_string(),
                    id: f.id,
                    name: filter_name(f.id).to_string(),
                    cure: missing_filter_cure(),
                });
            }
        }
        let data = if active.is_empty() {
            raw
        } else {
            self.decoder
                .decode(&active, FilterContext::new(info.elem_size, chunk), &raw)
                .map_err(|err| Hdf5Error::Filter {
                    var: name.to_string(),
                    offsets: e.offsets.clone(),
                    message: err.to_string(),
                })?
        };
        let mut data = data;
        if !planes {
            unpack_ints(info, &mut data);
        }
        if (data.len() as u64) < chunk_bytes {
            return Err(Hdf5Error::Filter {
                var: name.to_string(),
                offsets: e.offsets.clone(),
                message: format!(
                    "decoded chunk has {} bytes, expected {chunk_bytes}",
                    data.len()
                ),
            });
        }
        Ok(data)
    }
}

impl Slab<'_> {
    /// The number of elements of the block at `org` of shape `blk`, clipped to `ext`, that
    /// this slab takes.
    fn overlap(&self, org: &[u64], blk: &[u64], ext: &[u64]) -> u64 {
        self.clipped(org, blk, ext).map_or(0, |(lo, hi)| {
            lo.iter().zip(&hi).map(|(l, h)| h - l).product()
        })
    }

    /// The box this slab takes of the block at `org` of shape `blk`, clipped to the stored
    /// extent `ext`: its first indices and the indices past its end; `None` when empty.
    fn clipped(&self, org: &[u64], blk: &[u64], ext: &[u64]) -> Option<(Vec<u64>, Vec<u64>)> {
        let rank = self.count.len();
        let mut lo = vec![0u64; rank];
        let mut hi = vec![0u64; rank];
        for d in 0..rank {
            lo[d] = self.start[d].max(org[d]);
            hi[d] = (self.start[d] + self.count[d])
                .min(org[d] + blk[d])
                .min(ext[d]);
            if lo[d] >= hi[d] {
                return None;
            }
        }
        Some((lo, hi))
    }

    /// [`Slab::copy_block_clipped`] from a block still byte-shuffled: `src` holds `es` planes,
    /// plane `b` the `b`-th byte of every element in order; each element this slab takes is
    /// put back together from the planes.
    fn copy_block_planes(
        &self,
        org: &[u64],
        blk: &[u64],
        ext: &[u64],
        src: &[u8],
        out: &mut [u8],
        es: usize,
    ) {
        let n = blk.iter().product::<u64>() as usize;
        if src.len() < n * es {
            return;
        }
        self.clipped_runs(org, blk, ext, |s, o, run| {
            if let Some(dst) = out.get_mut(o * es..(o + run) * es) {
                for b in 0..es {
                    let plane = &src[b * n + s..b * n + s + run];
                    for (k, &x) in plane.iter().enumerate() {
                        dst[k * es + b] = x;
                    }
                }
            }
        });
    }

    /// Like [`Slab::copy_block`] but only the part of the block inside the stored extent `ext`
    /// counts (the rest of an edge chunk is padding).
    fn copy_block_clipped(
        &self,
        org: &[u64],
        blk: &[u64],
        ext: &[u64],
        src: &[u8],
        out: &mut [u8],
        es: usize,
    ) {
        self.clipped_runs(org, blk, ext, |s, o, run| {
            let (s, o, run) = (s * es, o * es, run * es);
            if let (Some(src), Some(dst)) = (src.get(s..s + run), out.get_mut(o..o + run)) {
                dst.copy_from_slice(src);
            }
        });
    }

    /// Each run of elements along the last dimension that this slab takes from the block at
    /// `org` of shape `blk`, clipped to the stored extent `ext`: `put(s, o, n)`, `n` elements
    /// from element `s` of the block to element `o` of the slab, in row-major order.
    fn clipped_runs(
        &self,
        org: &[u64],
        blk: &[u64],
        ext: &[u64],
        mut put: impl FnMut(usize, usize, usize),
    ) {
        let rank = self.count.len();
        if rank == 0 {
            return;
        }
        let Some((lo, hi)) = self.clipped(org, blk, ext) else {
            return;
        };
        let run = (hi[rank - 1] - lo[rank - 1]) as usize;
        let mut idx = lo.clone();
        loop {
            let mut s = 0u64;
            let mut o = 0u64;
            for d in 0..rank {
                s = s * blk[d] + (idx[d] - org[d]);
                o = o * self.count[d] + (idx[d] - self.start[d]);
            }
            put(s as usize, o as usize, run);
            if !advance(&mut idx, &lo, &hi) {
                return;
            }
        }
    }
}

/// Step the outer indices (all but the last) of a row-major walk; false when done.
fn advance(idx: &mut [u64], lo: &[u64], hi: &[u64]) -> bool {
    let rank = idx.len();
    let mut d = rank - 1;
    while d > 0 {
        d -= 1;
        idx[d] += 1;
        if idx[d] < hi[d] {
            return true;
        }
        idx[d] = lo[d];
    }
    false
}

/// Linear indices (in the stored extent) of the first and last requested stored element.
fn span(slab: &Slab<'_>, ext: &[u64]) -> (Option<u64>, Option<u64>) {
    let mut first = 0u64;
    let mut last = 0u64;
    for ((&e, &s), &c) in ext.iter().zip(slab.start).zip(slab.count) {
        let hi = (s + c).min(e);
        if s >= hi {
            return (None, None);
        }
        first = first * e + s;
        last = last * e + (hi - 1);
    }
    (Some(first), Some(last))
}

/// Copy the requested elements out of a contiguous block holding stored elements
/// `base..` (linear, row-major over `ext`).
fn copy_linear(slab: &Slab<'_>, ext: &[u64], base: u64, data: &[u8], out: &mut [u8], es: usize) {
    let rank = ext.len();
    if rank == 0 {
        let n = es.min(data.len()).min(out.len());
        out[..n].copy_from_slice(&data[..n]);
        return;
    }
    let mut lo = vec![0u64; rank];
    let mut hi = vec![0u64; rank];
    for d in 0..rank {
        lo[d] = slab.start[d];
        hi[d] = (slab.start[d] + slab.count[d]).min(ext[d]);
        if lo[d] >= hi[d] {
            return;
        }
    }
    let run = (hi[rank - 1] - lo[rank - 1]) as usize * es;
    let mut idx = lo.clone();
    loop {
        let mut s = 0u64;
        let mut o = 0u64;
        for d in 0..rank {
            s = s * ext[d] + idx[d];
            o = o * slab.count[d] + (idx[d] - slab.start[d]);
        }
        let s = (s - base) as usize * es;
        let o = o as usize * es;
        if let (Some(src), Some(dst)) = (data.get(s..s + run), out.get_mut(o..o + run)) {
            dst.copy_from_slice(src);
        }
        if !advance(&mut idx, &lo, &hi) {
            return;
        }
    }
}

/// Integers of `size` bytes whose value is `precision` bits at bit `offset`: shift the bits
/// down, clear the rest, sign-extend signed ones (HDF5's conversion to a native integer).
/// [`unpack_int_bits`] of `data` when the variable's integers have unused bits.
fn unpack_ints(info: &VarInfo, data: &mut [u8]) {
    if let (
        Some((precision, offset)),
        Datatype::FixedPoint {
            signed, byte_order, ..
        },
    ) = (info.int_bits(), &info.dt)
    {
        unpack_int_bits(
            data,
            info.elem_size,
            precision,
            offset,
            *signed,
            *byte_order,
        );
    }
}

fn unpack_int_bits(
    data: &mut [u8],
    size: usize,
    precision: u32,
    offset: u32,
    signed: bool,
    order: ByteOrder,
) {
    if size == 0 || size > 16 || precision == 0 || precision + offset > 8 * size as u32 {
        return;
    }
    let mask = if precision >= 128 {
        u128::MAX
    } else {
        (1u128 << precision) - 1
    };
    for e in data.chunks_exact_mut(size) {
        let mut v: u128 = 0;
        for i in 0..size {
            let b = match order {
                ByteOrder::LittleEndian => e[i],
                ByteOrder::BigEndian => e[size - 1 - i],
            };
            v |= u128::from(b) << (8 * i);
        }
        v = (v >> offset) & mask;
        if signed && precision < 128 && (v >> (precision - 1)) & 1 == 1 {
            v |= !mask;
        }
        for i in 0..size {
            let b = (v >> (8 * i)) as u8;
            match order {
                ByteOrder::LittleEndian => e[i] = b,
                ByteOrder::BigEndian => e[size - 1 - i] = b,
            }
        }
    }
}

/// The stored layout of an HDF5 datatype ([`StoredType`]), `None` for what has no fixed-size
/// representation of its values (variable-length strings and sequences, references) or no
/// netCDF meaning (bitfields).
fn stored_type(dt: &Datatype, depth: usize) -> Option<StoredType> {
    if depth > 32 {
        return None;
    }
    Some(match dt {
        Datatype::FixedPoint {
            size,
            signed,
            byte_order,
        } if matches!(size, 1 | 2 | 4 | 8) => StoredType::Int {
            size: usize::from(*size),
            signed: *signed,
            big_endian: *size > 1 && *byte_order == ByteOrder::BigEndian,
        },
        Datatype::FloatingPoint { size, byte_order } if matches!(size, 2 | 4 | 8) => {
            StoredType::Float {
                size: usize::from(*size),
                big_endian: *byte_order == ByteOrder::BigEndian,
            }
        }
        Datatype::String {
            size: StringSize::Fixed(n),
            ..
        } => StoredType::Text { size: *n as usize },
        Datatype::Enum { base, .. } => stored_type(base, depth + 1)?,
        Datatype::Opaque { size, .. } => StoredType::Opaque {
            size: *size as usize,
        },
        Datatype::Compound { size, fields } => StoredType::Compound {
            size: *size as usize,
            fields: fields
                .iter()
                .map(|f| {
                    let (base, dims) = match &f.datatype {
                        Datatype::Array { base, dims } => (
                            base.as_ref(),
                            dims.iter()
                                .map(|&d| usize::try_from(d).ok())
                                .collect::<Option<Vec<usize>>>()?,
                        ),
                        other => (other, Vec::new()),
                    };
                    Some(StoredField {
                        name: f.name.clone(),
                        offset: f.byte_offset as usize,
                        dims,
                        ty: stored_type(base, depth + 1)?,
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        },
        _ => return None,
    })
}

/// Where plugins were looked for, and what to do: the cure of a missing-filter error.
pub(crate) fn missing_filter_cure() -> String {
    let dirs: Vec<String> = nc_filters::plugin::default_plugin_dirs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if dirs.is_empty() {
        "no built-in codec and no plugin (no plugin directory searched); add its plugin directory to HDF5_PLUGIN_PATH".to_string()
    } else {
        format!(
            "no built-in codec and no plugin in {}; add its plugin directory to HDF5_PLUGIN_PATH",
            dirs.join(":")
        )
    }
}

/// Where a chunked dataset's index is and the shape and decoded size of its chunks.
struct ChunkGeometry<'a> {
    address: u64,
    dims: &'a [u32],
    indexing: Option<&'a ChunkIndexing>,
    chunk_bytes: u64,
}

/// The chunk geometry of dataset `info`: `None` when it is not chunked, its chunk rank is not
/// its rank, a chunk dimension is 0, it has no storage yet or a chunk's size overflows.
fn chunk_geometry<'a>(h5: &H5, info: &'a VarInfo) -> Option<ChunkGeometry<'a>> {
    let DataLayout::Chunked {
        address,
        dims,
        chunk_indexing,
        ..
    } = &info.layout
    else {
        return None;
    };
    if dims.len() != info.shape.len()
        || dims.contains(&0)
        || Cursor::is_undefined_offset(*address, h5.os)
    {
        return None;
    }
    let chunk_bytes = dims
        .iter()
        .try_fold(info.elem_size as u64, |a, &b| a.checked_mul(u64::from(b)))?;
    Some(ChunkGeometry {
        address: *address,
        dims,
        indexing: chunk_indexing.as_ref(),
        chunk_bytes,
    })
}

/// The entries of the chunk index at `address` of the chunked dataset `info` (chunk shape
/// `dims`, `chunk_bytes` decoded bytes per chunk), in index order, each with its stored size.
fn collect_chunk_entries(
    h5: &H5,
    info: &VarInfo,
    address: u64,
    dims: &[u32],
    indexing: Option<&ChunkIndexing>,
    chunk_bytes: u64,
    what: &str,
) -> Result<Vec<ChunkEntry>, Hdf5Error> {
    let s = h5.storage();
    let (os, ls) = (h5.os, h5.ls);
    let rank = info.shape.len();
    let st = |e: hdf5_reader::error::Error| {
        Hdf5Error::structure(format!("{what}: chunk index at {address:#x}"), e)
    };
    // hdf5-reader skips the checksums of these indexes' blocks: check them first, once per
    // dataset (the entries are cached below, so this runs again only after an error)
    crate::format::verify::chunk_index(h5, indexing, address, what)?;
    let mut entries = match indexing {
        None => {
            let leaves = hdf5_reader::btree_v1::collect_btree_v1_leaves_storage(
                s,
                address,
                os,
                ls,
                Some(rank as u32),
                dims,
                None,
            )
            .map_err(st)?;
            let mut v = Vec::with_capacity(leaves.len());
            for (key, addr) in leaves {
                if let hdf5_reader::btree_v1::BTreeV1Key::RawData {
                    chunk_size,
                    filter_mask,
                    offsets,
                } = key
                {
                    v.push(ChunkEntry {
                        address: addr,
                        size: u64::from(chunk_size),
                        filter_mask,
                        offsets: offsets.into_iter().take(rank).collect(),
                    });
                }
            }
            v
        }
        Some(ChunkIndexing::SingleChunk {
            filtered_size,
            filters,
        }) => {
            let size = if info.filters.is_empty() {
                chunk_bytes
            } else {
                *filtered_size
            };
            vec![chunk_index::single_chunk_entry(
                address, size, *filters, rank,
            )]
        }
        Some(ChunkIndexing::BTreeV2) => chunk_index::collect_v2_chunk_entries_storage(
            s,
            address,
            os,
            ls,
            rank as u32,
            dims,
            None,
        )
        .map_err(st)?,
        Some(ChunkIndexing::Implicit) => chunk_index::collect_implicit_chunk_entries(
            address,
            &info.shape,
            dims,
            info.elem_size,
            None,
            s.len(),
        )
        .map_err(st)?,
        Some(ChunkIndexing::FixedArray { .. }) => {
            hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage(
                s,
                address,
                os,
                ls,
                &info.shape,
                dims,
                None,
            )
            .map_err(st)?
        }
        Some(ChunkIndexing::ExtensibleArray { .. }) => {
            hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage(
                s,
                address,
                os,
                ls,
                &info.shape,
                info.max_dims.as_deref(),
                dims,
                None,
            )
            .map_err(st)?
        }
    };
    // unfiltered records of some indexes carry no size: a chunk is then stored whole
    for e in &mut entries {
        if e.size == 0 {
            e.size = chunk_bytes;
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elements gathered from a block's shuffled planes are the ones the unshuffled block
    /// gives, for slabs inside, across and at the clipped edge of the block.
    #[test]
    fn elements_from_shuffled_planes_are_the_unshuffled_blocks() {
        let (blk, org, ext, es) = ([4u64, 6], [4u64, 6], [7u64, 10], 4usize);
        let n = 24;
        let block: Vec<u8> = (0..n * es).map(|i| (i * 37 % 251) as u8).collect();
        let mut planes = vec![0u8; n * es];
        for k in 0..n {
            for b in 0..es {
                planes[b * n + k] = block[k * es + b];
            }
        }
        for (start, count) in [
            ([4u64, 6], [4u64, 6]),
            ([5, 7], [2, 3]),
            ([0, 0], [7, 10]),
            ([6, 9], [1, 1]),
            ([3, 8], [5, 2]),
        ] {
            let slab = Slab {
                start: &start,
                count: &count,
            };
            let len = (count[0] * count[1]) as usize * es;
            let (mut want, mut got) = (vec![0u8; len], vec![0u8; len]);
            slab.copy_block_clipped(&org, &blk, &ext, &block, &mut want, es);
            slab.copy_block_planes(&org, &blk, &ext, &planes, &mut got, es);
            assert_eq!(got, want, "{start:?} {count:?}");
            assert!(slab.overlap(&org, &blk, &ext) <= 12);
        }
        let whole = Slab {
            start: &[0, 0],
            count: &[7, 10],
        };
        // rows 4..7 of the block, columns 6..10: 3 x 4
        assert_eq!(whole.overlap(&org, &blk, &ext), 12);
    }

    /// Chunks read once never grow the cache past its first budget; a chunk dropped and asked
    /// again doubles it, up to the most.
    #[test]
    fn the_chunk_cache_grows_only_when_dropped_chunks_come_back() {
        let mut c = ChunkCache::default();
        let chunk = Arc::new(vec![0u8; 1 << 20]);
        for k in 0..40u64 {
            c.keep((0, k, false), &chunk);
            assert!(c.bytes <= CHUNK_CACHE_START);
        }
        assert_eq!(c.budget, CHUNK_CACHE_START);
        // the chunks of the last emptying: 24..32 were dropped when 32 came in
        assert!(c.dropped.contains(&(0, 24, false)) && !c.map.contains_key(&(0, 24, false)));
        c.keep((0, 24, false), &chunk);
        assert_eq!(c.budget, 2 * CHUNK_CACHE_START);
        for k in 25..32 {
            c.keep((0, k, false), &chunk);
        }
        assert_eq!(c.budget, CHUNK_CACHE_BYTES);
        // too large to keep: not kept, nothing dropped
        let before = c.map.len();
        c.keep(
            (1, 0, false),
            &Arc::new(vec![0u8; CHUNK_CACHE_BYTES / 4 + 1]),
        );
        assert_eq!(c.map.len(), before);
    }
}
