//! Variable data: contiguous storage written in slabs at its planned place, chunks encoded
//! in parallel and appended in order with their index after them, strings and vlens as
//! global heap references into collections appended as they fill.

use nc_dataset::{AtomicType, DataSource, Dataset, Layout, NcType, Values, VarId};
use nc_dataset::{ChunkRequest, Slab};
use nc_filters::{FilterContext, Pipeline, Registry};

use super::heap::DataHeap;
use super::out::Out;
use super::user;
use super::{ordered, Sparse, VarPlan, Writer, SLAB_ELEMENTS};
use crate::format::btree1::{ChunkEntry, Shape};
use crate::format::UNDEF;
use crate::Hdf5Error;
use nc_dataset::FilterSpec;

/// Chunk coordinates (in chunks) and the stored bytes of one chunk.
type EncodedChunk = (Vec<usize>, Vec<u8>);

impl Writer<'_> {
    /// Write variable `v`'s data; the address its layout message points to (contiguous
    /// storage or chunk index), [`UNDEF`] when nothing is stored.
    pub(super) fn write_data(
        &self,
        out: &Out,
        heap: &mut DataHeap,
        v: VarId,
    ) -> Result<u64, Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let Some(plan) = self.plans[v.0].as_ref() else {
            return Ok(UNDEF);
        };
        if plan.layout == Layout::Compact {
            return Ok(UNDEF);
        }
        let shape = ds.shape(v);
        let heap_refs = !user::is_fixed_size(ds, var.ty);
        if !self.gets_data(v) {
            // netCDF-C leaves such storage unallocated, strings, vlens and compounds holding
            // them included: reads give the fill value (the fill message's heap reference)
            return Ok(UNDEF);
        }
        if shape.contains(&0) {
            return Ok(UNDEF);
        }
        if plan.layout != Layout::Chunked && plan.sparse == Sparse::Only(Vec::new()) {
            // a copy of contiguous data the source never stored: unallocated, as in the source
            return Ok(UNDEF);
        }
        if heap_refs {
            return self.write_heap_var(out, heap, v, plan, &shape);
        }
        match plan.layout {
            Layout::Chunked => self.write_chunked(out, v, plan, &shape),
            _ if var.ty.as_atomic().is_some() => self.write_slabs(out, v, plan, &shape),
            _ => {
                let vals = read_slab(ds, self.src, v, &vec![0; shape.len()], &shape)?;
                let bytes = user::value_bytes(ds, var.ty, &vals, plan.big).ok_or_else(|| {
                    Hdf5Error::invalid(
                        format!("variable {}", var.name),
                        "values do not match the type",
                    )
                })?;
                let addr = out.alloc(bytes.len() as u64);
                out.write_at(addr, &bytes)?;
                Ok(addr)
            }
        }
    }

    /// Contiguous atomic data in hyperslabs of at most [`SLAB_ELEMENTS`] elements, each a
    /// run of the storage; the next slab is read on another thread while this one is
    /// written. Numbers the source offers as little-endian bytes go to the file as they are.
    fn write_slabs(
        &self,
        out: &Out,
        v: VarId,
        plan: &VarPlan,
        shape: &[u64],
    ) -> Result<u64, Hdf5Error> {
        let (ds, src) = (self.ds, self.src);
        let var = ds.var(v);
        let name = &var.name;
        let es = plan.datatype.size() as u64;
        let total: u64 = shape.iter().product();
        let addr = out.alloc(total * es);
        let list = slabs(shape, SLAB_ELEMENTS);
        let le_size = match var.ty.as_atomic() {
            Some(AtomicType::String) | None => None,
            Some(t) if !plan.big && cfg!(target_endian = "little") => Some(t.size()),
            Some(_) => None,
        };
        let read = |s: &[u64], c: &[u64]| -> Result<Vec<u8>, Hdf5Error> {
            if let Some(size) = le_size {
                if let Some(b) = read_le_slab(ds, src, v, s, c, size) {
                    return b;
                }
            }
            let vals = read_slab(ds, src, v, s, c)?;
            super::types::atomic_bytes(&vals, plan.big).ok_or_else(|| {
                Hdf5Error::invalid(format!("variable {name}"), "values do not match the type")
            })
        };
        let Some((s0, c0)) = list.first() else {
            return Ok(addr);
        };
        let mut current = read(s0, c0)?;
        for k in 0..list.len() {
            let next = list.get(k + 1);
            let (next_slab, written) = std::thread::scope(|scope| {
                let job = next.map(|(s, c)| scope.spawn(move || read(s, c)));
                let at = addr + row_major_index(&list[k].0, shape) as u64 * es;
                let written = out.write_at(at, &current);
                (job.map(|j| j.join()), written)
            });
            written?;
            match next_slab {
                Some(Ok(slab)) => current = slab?,
                Some(Err(_)) => {
                    return Err(Hdf5Error::invalid(
                        format!("variable {name}"),
                        "a slab reader thread panicked",
                    ))
                }
                None => {}
            }
        }
        Ok(addr)
    }

    /// Strings, vlens and compounds holding them: values as heap references, contiguous in
    /// slabs or chunk by chunk (never filtered), on this thread (the heap is one).
    fn write_heap_var(
        &self,
        out: &Out,
        heap: &mut DataHeap,
        v: VarId,
        plan: &VarPlan,
        shape: &[u64],
    ) -> Result<u64, Hdf5Error> {
        let ds = self.ds;
        let ty = ds.var(v).ty;
        let es = plan.datatype.size() as u64;
        if plan.layout != Layout::Chunked {
            let total: u64 = shape.iter().product();
            let addr = out.alloc(total * es);
            for (s, c) in slabs(shape, SLAB_ELEMENTS) {
                let vals = read_slab(ds, self.src, v, &s, &c)?;
                let bytes = user::heap_value_bytes(ds, ty, &vals, heap)?;
                out.write_at(addr + row_major_index(&s, shape) as u64 * es, &bytes)?;
            }
            return Ok(addr);
        }
        let grid = chunk_grid(shape, &plan.chunk);
        let n: u64 = grid.iter().product();
        let zero = vec![0u8; es as usize];
        let mut entries = Vec::with_capacity(n as usize);
        for k in 0..n {
            let (coords, start, count) = chunk_region(k, &grid, &plan.chunk, shape);
            let vals = read_slab(ds, self.src, v, &start, &count)?;
            let bytes = user::heap_value_bytes(ds, ty, &vals, heap)?;
            // past the extent: null references, never read
            let full = pad_chunk(bytes, &count, &plan.chunk, &zero);
            let addr = out.alloc(full.len() as u64);
            out.write_at(addr, &full)?;
            entries.push(ChunkEntry {
                offsets: coords
                    .iter()
                    .zip(&plan.chunk)
                    .map(|(&c, &n)| c * n)
                    .collect(),
                size: full.len() as u32,
                mask: 0,
                addr,
            });
        }
        chunk_index(out, &entries, shape.len(), es as u32)
    }

    /// Chunked data of a fixed-size type: chunks read and encoded in parallel, appended in
    /// order; their index after them. The index's address, [`UNDEF`] when no chunk is stored.
    fn write_chunked(
        &self,
        out: &Out,
        v: VarId,
        plan: &VarPlan,
        shape: &[u64],
    ) -> Result<u64, Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let name = var.name.clone();
        let type_size = ds.type_size(var.ty);
        let pipeline: Option<Pipeline> = if plan.chain.is_empty() {
            None
        } else {
            let ctx = FilterContext::new(type_size, &plan.chunk);
            Some(
                self.registry
                    .pipeline_stored(&plan.chain, ctx)
                    .map_err(|e| missing_filter(&self.registry, &name, &plan.chain, e))?,
            )
        };
        // an edge chunk's part past the array: the fill value, or zeros under "no fill"
        // (libhdf5 clears a new chunk's buffer when its fill time is "never"; it matters to
        // scaleoffset, whose minimum and bit count see those elements)
        let fill = if plan.no_fill {
            None
        } else {
            ds.stored_fill(v)
                .and_then(|f| user::value_bytes(ds, var.ty, &f, plan.big))
        }
        .unwrap_or_else(|| vec![0; type_size]);
        let grid = chunk_grid(shape, &plan.chunk);
        // ncgen: chunks that begin past the data the CDL gives stay unwritten (fill)
        let given = self.given_prefix(v);
        // the chunks to visit: those overlapping what a copy's source lists as stored, or
        // what ncgen's given values reach; else all of them
        let all: u64 = grid.iter().product();
        let prefix_cells = given.and_then(|n| {
            let regions = nc_dataset::prefix_regions(shape, n);
            nc_dataset::cells_touched(&regions, &plan.chunk, &grid, all.min(super::MAX_VISIT))
        });
        let visit = match (&plan.sparse, &prefix_cells) {
            (Sparse::Only(cells), _) | (_, Some(cells)) => Some(cells.as_slice()),
            _ => None,
        };
        let n_chunks: u64 = visit.map_or(all, |c| c.len() as u64);
        // a batch: a few chunks per thread and at least ~8 MiB, so small chunks do not pay a
        // thread hand-over each
        let chunk_bytes = plan.chunk.iter().product::<u64>().max(1) * type_size.max(1) as u64;
        let batch = ((rayon::current_num_threads() * 4) as u64)
            .max((8 << 20) / chunk_bytes)
            .clamp(1, 1 << 16);
        // little-endian output of an integer, float or char type: take the source's bytes as
        // they are when it offers them (no typed vector in between)
        let raw_le = !plan.big
            && matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
            && type_size == var.ty.as_atomic().map_or(0, AtomicType::size);
        let src = self.src;
        let ty = var.ty;
        let pipeline = &pipeline;
        let fill = &fill;
        let grid = &grid;
        // a copy: chunks the source never stored stay unwritten too, when the output reads
        // them as the same fill (fill enabled; the source checks that the values agree)
        let keep_unwritten = plan.sparse != Sparse::No;
        let encode_one = |i: u64| -> Result<EncodedChunk, Hdf5Error> {
            let k = visit.map_or(i, |c| c[i as usize]);
            let (coords, start, count) = chunk_region(k, grid, &plan.chunk, shape);
            if let Some(n) = given {
                if row_major_index(&start, shape) >= u128::from(n) {
                    return Ok((Vec::new(), Vec::new()));
                }
            }
            if keep_unwritten && src.unwritten(ds, v, Slab::new(&start, &count)) {
                return Ok((Vec::new(), Vec::new()));
            }
            // Same chunk shape and filters in the source: its stored bytes as they are. They are
            // still decoded once (not re-encoded) so that a corrupt chunk fails the copy here
            // instead of passing on to the output.
            if raw_le {
                if let Some(stored) = src.raw_chunk(
                    ds,
                    v,
                    ChunkRequest {
                        offsets: &start,
                        shape: &plan.chunk,
                        chain: &plan.chain,
                    },
                ) {
                    if let Some(p) = pipeline {
                        let want = plan.chunk.iter().product::<u64>() * type_size as u64;
                        // worded as the reader words it: the input is what is corrupt
                        let corrupt = |message: String| Hdf5Error::Source {
                            var: name.clone(),
                            message: format!("variable \"{name}\": chunk at {start:?}: {message}"),
                        };
                        let decoded = p.decode(&stored).map_err(|e| corrupt(e.to_string()))?;
                        if (decoded.len() as u64) < want {
                            return Err(corrupt(format!(
                                "decoded chunk has {} bytes, expected {want}",
                                decoded.len()
                            )));
                        }
                    }
                    return Ok((coords.iter().map(|&c| c as usize).collect(), stored));
                }
            }
            let le = if raw_le {
                read_le_slab(ds, src, v, &start, &count, type_size)
            } else {
                None
            };
            let bytes = match le {
                Some(b) => b?,
                None => {
                    let vals = read_slab(ds, src, v, &start, &count)?;
                    user::value_bytes(ds, ty, &vals, plan.big).ok_or_else(|| {
                        Hdf5Error::unsupported(
                            format!("variable {name}"),
                            "chunked data of this type is not written yet",
                        )
                    })?
                }
            };
            let full = pad_chunk(bytes, &count, &plan.chunk, fill);
            let stored = match pipeline {
                Some(p) => p.encode(&full).map_err(|e| Hdf5Error::Filter {
                    var: name.clone(),
                    offsets: start.clone(),
                    message: e.to_string(),
                })?,
                None => full,
            };
            Ok((coords.iter().map(|&c| c as usize).collect(), stored))
        };
        let mut entries: Vec<ChunkEntry> = Vec::new();
        let write_one = |(coords, bytes): EncodedChunk| -> Result<(), Hdf5Error> {
            if coords.is_empty() {
                // a chunk past the given data (see `given_prefix`) or never stored
                return Ok(());
            }
            let size = u32::try_from(bytes.len()).map_err(|_| {
                Hdf5Error::invalid(
                    format!("variable {name}"),
                    format!(
                        "chunk {coords:?} encodes to {} bytes, over HDF5's 4 GiB limit",
                        bytes.len()
                    ),
                )
            })?;
            let addr = out.alloc(bytes.len() as u64);
            out.write_at(addr, &bytes)?;
            entries.push(ChunkEntry {
                offsets: coords
                    .iter()
                    .zip(&plan.chunk)
                    .map(|(&c, &n)| c as u64 * n)
                    .collect(),
                size,
                mask: 0,
                addr,
            });
            Ok(())
        };
        // Chunks are read and encoded on all cores, this thread's included, and this thread
        // writes them in order; at most two batches are in flight (memory: two batches of
        // chunks).
        ordered::run(
            n_chunks,
            2 * batch,
            rayon::current_num_threads(),
            encode_one,
            write_one,
            || {
                Hdf5Error::invalid(
                    format!("variable {name}"),
                    "a chunk encoder thread panicked",
                )
            },
        )?;
        chunk_index(out, &entries, shape.len(), type_size as u32)
    }
}

/// The version 1 B-tree indexing `entries` (in row-major order), placed after them; its
/// address, [`UNDEF`] when there is no chunk.
fn chunk_index(
    out: &Out,
    entries: &[ChunkEntry],
    rank: usize,
    elem: u32,
) -> Result<u64, Hdf5Error> {
    if entries.is_empty() {
        return Ok(UNDEF);
    }
    let shape = Shape::new(entries.len(), rank);
    let at = out.alloc(shape.len());
    for (addr, node) in shape.encode(entries, elem, at) {
        out.write_at(addr, &node)?;
    }
    Ok(at)
}

pub(super) fn read_slab(
    ds: &Dataset,
    src: &dyn DataSource,
    v: VarId,
    start: &[u64],
    count: &[u64],
) -> Result<Values, Hdf5Error> {
    src.read(ds, v, Slab::new(start, count))
        .map_err(|e| Hdf5Error::Source {
            var: ds.var(v).name.clone(),
            message: e.to_string(),
        })
}

/// [`DataSource::read_le_bytes`] of a hyperslab of `size`-byte elements, checked to be as
/// long as the hyperslab; `None` when the source does not offer the bytes.
fn read_le_slab(
    ds: &Dataset,
    src: &dyn DataSource,
    v: VarId,
    start: &[u64],
    count: &[u64],
    size: usize,
) -> Option<Result<Vec<u8>, Hdf5Error>> {
    let name = || ds.var(v).name.clone();
    let r = src.read_le_bytes(ds, v, Slab::new(start, count))?;
    Some(
        r.map_err(|e| Hdf5Error::Source {
            var: name(),
            message: e.to_string(),
        })
        .and_then(|b| {
            let want = count.iter().product::<u64>() * size as u64;
            if b.len() as u64 == want {
                Ok(b)
            } else {
                Err(Hdf5Error::Source {
                    var: name(),
                    message: format!("the source gave {} bytes for {want} bytes of data", b.len()),
                })
            }
        }),
    )
}

fn missing_filter(
    reg: &Registry,
    var: &str,
    chain: &[FilterSpec],
    e: nc_filters::FilterError,
) -> Hdf5Error {
    match chain.iter().find(|f| !reg.is_available(f.id)) {
        Some(f) => Hdf5Error::MissingFilter {
            var: var.to_string(),
            id: f.id,
            name: crate::filter_name(f.id).to_string(),
            cure: format!(
                "cannot encode its data; add the plugin's directory to HDF5_PLUGIN_PATH (searched: {:?})",
                reg.searched_dirs()
            ),
        },
        None => Hdf5Error::Filter {
            var: var.to_string(),
            offsets: Vec::new(),
            message: e.to_string(),
        },
    }
}

/// The row-major position of element `at` in an array of `shape`.
fn row_major_index(at: &[u64], shape: &[u64]) -> u128 {
    at.iter()
        .zip(shape)
        .fold(0u128, |acc, (&i, &n)| acc * u128::from(n) + u128::from(i))
}

pub(super) fn chunk_grid(shape: &[u64], chunk: &[u64]) -> Vec<u64> {
    shape
        .iter()
        .zip(chunk)
        .map(|(&n, &c)| n.div_ceil(c))
        .collect()
}

fn unravel(mut k: u64, grid: &[u64]) -> Vec<u64> {
    let mut out = vec![0; grid.len()];
    for i in (0..grid.len()).rev() {
        let g = grid[i].max(1);
        out[i] = k % g;
        k /= g;
    }
    out
}

/// Chunk `k` (row-major) of a grid of `chunk`-shaped chunks over `shape`: its grid
/// coordinates, its first element and its element counts (edge chunks clipped to `shape`).
pub(super) fn chunk_region(
    k: u64,
    grid: &[u64],
    chunk: &[u64],
    shape: &[u64],
) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let coords = unravel(k, grid);
    let start: Vec<u64> = coords.iter().zip(chunk).map(|(&i, &c)| i * c).collect();
    let count = start
        .iter()
        .zip(chunk)
        .zip(shape)
        .map(|((&s, &c), &n)| c.min(n - s))
        .collect();
    (coords, start, count)
}

/// A full chunk of `chunk` elements holding the `count`-shaped slab `bytes` at its origin,
/// the rest filled with `fill` (one element's bytes).
fn pad_chunk(bytes: Vec<u8>, count: &[u64], chunk: &[u64], fill: &[u8]) -> Vec<u8> {
    if count == chunk {
        return bytes;
    }
    let es = fill.len();
    let total: u64 = chunk.iter().product();
    let mut out = fill.repeat(total as usize);
    let rank = chunk.len();
    let inner = count[rank - 1] as usize * es;
    let rows: u64 = count[..rank - 1].iter().product();
    let mut idx = vec![0u64; rank - 1];
    for r in 0..rows as usize {
        let mut off = 0u64;
        for (i, &k) in idx.iter().enumerate() {
            let stride: u64 = chunk[i + 1..].iter().product();
            off += k * stride;
        }
        let dst = off as usize * es;
        out[dst..dst + inner].copy_from_slice(&bytes[r * inner..(r + 1) * inner]);
        for i in (0..idx.len()).rev() {
            idx[i] += 1;
            if idx[i] < count[i] {
                break;
            }
            idx[i] = 0;
        }
    }
    out
}

/// Hyperslabs covering `shape` row-major, each at most `limit` elements (at least one row of
/// the innermost split dimension).
fn slabs(shape: &[u64], limit: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    let rank = shape.len();
    if rank == 0 {
        return vec![(Vec::new(), Vec::new())];
    }
    // split dimension k: the first whose trailing product fits the limit
    let mut k = 0;
    while k < rank && shape[k + 1..].iter().product::<u64>() > limit {
        k += 1;
    }
    let k = k.min(rank - 1);
    let tail: u64 = shape[k + 1..].iter().product::<u64>().max(1);
    let step = (limit / tail).max(1);
    let outer: u64 = shape[..k].iter().product();
    let mut out = Vec::new();
    for o in 0..outer {
        let prefix = unravel(o, &shape[..k]);
        let mut s = 0;
        while s < shape[k] {
            let n = step.min(shape[k] - s);
            let mut start = prefix.clone();
            start.push(s);
            start.extend(std::iter::repeat_n(0, rank - k - 1));
            let mut count = vec![1; k];
            count.push(n);
            count.extend_from_slice(&shape[k + 1..]);
            out.push((start, count));
            s += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_cover_the_shape() {
        assert_eq!(
            slabs(&[3, 4], 8),
            vec![(vec![0, 0], vec![2, 4]), (vec![2, 0], vec![1, 4])]
        );
        assert_eq!(
            slabs(&[2, 3], 2),
            vec![
                (vec![0, 0], vec![1, 2]),
                (vec![0, 2], vec![1, 1]),
                (vec![1, 0], vec![1, 2]),
                (vec![1, 2], vec![1, 1])
            ]
        );
        assert_eq!(slabs(&[], 8), vec![(vec![], vec![])]);
    }

    #[test]
    fn edge_chunks_are_padded_with_fill() {
        let got = pad_chunk(vec![1, 2, 3, 4], &[2, 2], &[3, 3], &[9]);
        assert_eq!(got, vec![1, 2, 9, 3, 4, 9, 9, 9, 9]);
    }
}
