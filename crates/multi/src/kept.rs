//! What the copy reads of each input without opening it again, taken while the plan has it
//! open: where each joined variable's chunks are stored (its chunk index, from
//! [`DataSource::placement`]) and the values of each join coordinate.
//!
//! A copy walks the joined view variable by variable, and each variable along every input in
//! turn; with more inputs than [`crate::JoinOptions::max_open`], each input would be opened
//! (its metadata parsed) again for every joined variable. With its chunk index kept, a chunk
//! stored as the output stores it is read straight from the file's bytes, and whether a region
//! is stored is answered from the index; the coordinate's values are at hand. Everything kept
//! is bounded by [`BUDGET`] bytes in all: past it, inputs are opened again as before.

use std::sync::Arc;

use nc_dataset::{
    ChunkBytes, ChunkRequest, DataSource, Dataset, FilterSpec, Placement, StoredChunks, StoredType,
    Values, VarId,
};

/// At most this many bytes of chunk lists and coordinate values are kept, over all inputs.
pub(crate) const BUDGET: usize = 64 << 20;

/// The largest chunk read from its bytes (as the HDF5 reader's own bound on one read).
const MAX_CHUNK: u64 = 4 << 30;

/// How a variable's chunks are stored in one input (shared by the inputs that store it so).
#[derive(Debug, PartialEq, Eq)]
struct Layout {
    /// Chunk shape.
    chunk: Vec<u64>,
    /// Filters every listed chunk went through.
    filters: Vec<FilterSpec>,
    /// Bytes of one element when they are the variable's little-endian bytes (what
    /// [`DataSource::raw_chunk`] hands out); `None`: another byte order or layout.
    little: Option<u64>,
}

/// One joined variable's stored chunks in one input.
#[derive(Debug)]
struct VarChunks {
    layout: Arc<Layout>,
    /// Chunks along each dimension of the input's variable.
    grid: Box<[u64]>,
    /// (linear grid index, offset, stored length), by index; `len == u64::MAX`: stored, but
    /// not as the others (read through the input).
    stored: Box<[(u64, u64, u64)]>,
}

/// The row-major number of the grid cell at `index` in a grid of `grid` cells along each
/// dimension; `None` outside the grid.
fn linear(index: impl Iterator<Item = u64>, grid: &[u64]) -> Option<u64> {
    let mut k = 0u64;
    for (i, g) in index.zip(grid) {
        if i >= *g {
            return None;
        }
        k = k.checked_mul(*g)?.checked_add(i)?;
    }
    Some(k)
}

impl VarChunks {
    fn linear(&self, index: impl Iterator<Item = u64>) -> Option<u64> {
        linear(index, &self.grid)
    }

    fn find(&self, k: u64) -> Option<(u64, u64)> {
        self.stored
            .binary_search_by_key(&k, |e| e.0)
            .ok()
            .map(|at| (self.stored[at].1, self.stored[at].2))
    }
}

/// One input's kept facts: per variable of the joined view (by its index), its chunks.
#[derive(Debug, Default)]
struct InputKept {
    vars: Vec<Option<VarChunks>>,
}

/// What is kept of every input (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Kept {
    inputs: Vec<Option<InputKept>>,
    /// Per join dimension, per input: its coordinate's values as stored (not rebased).
    coords: Vec<Vec<Option<Values>>>,
    /// The last layout kept, shared by the next input that stores the same way.
    last: Vec<Option<Arc<Layout>>>,
    used: usize,
}

/// Bytes of one element when the stored element is the variable's little-endian value.
fn little(elem: &StoredType) -> Option<u64> {
    match *elem {
        StoredType::Int {
            size: s @ (1 | 2 | 4 | 8),
            big_endian,
            ..
        } if s == 1 || !big_endian => Some(s as u64),
        StoredType::Float {
            size: s @ (4 | 8),
            big_endian: false,
        } => Some(s as u64),
        StoredType::Text { size: 1 } => Some(1),
        _ => None,
    }
}

impl Kept {
    pub(crate) fn new(joins: usize) -> Kept {
        Kept {
            coords: vec![Vec::new(); joins],
            ..Kept::default()
        }
    }

    fn room(&mut self, bytes: usize) -> bool {
        if self.used.saturating_add(bytes) > BUDGET {
            return false;
        }
        self.used += bytes;
        true
    }

    /// Keep the values of join `j`'s coordinate in the next input (called once per input and
    /// join, in order; `None` when it has none or they were not read).
    pub(crate) fn coordinate(&mut self, j: usize, values: Option<&Values>) {
        let v = values.filter(|v| {
            let bytes = v.len().saturating_mul(8).saturating_add(32);
            self.used.saturating_add(bytes) <= BUDGET
        });
        if let Some(v) = v {
            self.used += v.len() * 8 + 32;
        }
        self.coords[j].push(v.cloned());
    }

    /// Keep where input `src`'s joined variables are stored: `vars` pairs each joined
    /// variable's index in the view with its id in the input's dataset `ds`.
    pub(crate) fn input(&mut self, ds: &Dataset, src: &dyn DataSource, vars: &[(usize, VarId)]) {
        let Some(nvars) = vars.iter().map(|v| v.0 + 1).max() else {
            self.inputs.push(None);
            return;
        };
        if self.last.len() < nvars {
            self.last.resize(nvars, None);
        }
        let mut kept = InputKept {
            vars: Vec::with_capacity(nvars),
        };
        kept.vars.resize_with(nvars, || None);
        let mut any = false;
        for &(k, v) in vars {
            let Some(Ok(Placement::Chunks(map))) = src.placement(ds, v) else {
                continue;
            };
            if map.file.is_some() {
                continue;
            }
            let shape = ds.shape(v);
            if map.chunk.len() != shape.len() || map.chunk.contains(&0) {
                continue;
            }
            let grid: Box<[u64]> = (shape.iter().zip(&map.chunk))
                .map(|(n, c)| n.div_ceil(*c).max(1))
                .collect();
            let stored: Vec<(u64, u64, u64)> = match &map.chunks {
                StoredChunks::List(list) => {
                    if !self.room(list.len() * 24 + 96) {
                        break;
                    }
                    let mut out = Vec::with_capacity(list.len());
                    for c in list {
                        // a chunk outside the grid is never asked for
                        let Some(lin) = linear(c.index.iter().copied(), &grid) else {
                            continue;
                        };
                        let (off, len) = match c.bytes {
                            ChunkBytes::Range { offset, len } => (offset, len),
                            ChunkBytes::Decoded => (0, u64::MAX),
                        };
                        out.push((lin, off, len));
                    }
                    out.sort_unstable_by_key(|e| e.0);
                    out
                }
                // classic records: read through the input (a classic output swaps them anyway)
                StoredChunks::Strided { .. } => continue,
            };
            // nbit and scale-offset chunks are unpacked on reading: not the values' bytes
            let packed = map.filters.iter().any(|f| matches!(f.id, 5 | 6));
            let layout = Layout {
                chunk: map.chunk.clone(),
                filters: map.filters.clone(),
                little: little(&map.elem).filter(|_| !packed),
            };
            let layout = match &self.last[k] {
                Some(l) if **l == layout => Arc::clone(l),
                _ => Arc::new(layout),
            };
            self.last[k] = Some(Arc::clone(&layout));
            kept.vars[k] = Some(VarChunks {
                layout,
                grid,
                stored: stored.into_boxed_slice(),
            });
            any = true;
        }
        self.inputs.push(any.then_some(kept));
    }

    fn var(&self, input: usize, var: usize) -> Option<&VarChunks> {
        self.inputs.get(input)?.as_ref()?.vars.get(var)?.as_ref()
    }

    /// Input `input`'s coordinate values of join `j`, when kept.
    pub(crate) fn coord(&self, j: usize, input: usize) -> Option<&Values> {
        self.coords.get(j)?.get(input)?.as_ref()
    }

    /// True when the coordinate values of join `j` are kept for every input with records
    /// (`offsets`: where each input's records begin in the join, one more than inputs).
    pub(crate) fn all_coords(&self, j: usize, offsets: &[u64]) -> bool {
        self.coords.get(j).is_some_and(|c| {
            c.len() + 1 == offsets.len()
                && c.iter()
                    .zip(offsets.windows(2))
                    .all(|(v, o)| v.is_some() || o[0] == o[1])
        })
    }

    /// Where the stored bytes of the chunk `req` asks for are in input `input`, when they are
    /// what [`DataSource::raw_chunk`] would hand out (see there): `Some(None)`: the index is
    /// kept and says not (ask nothing more); `None`: not kept (ask the input).
    pub(crate) fn raw_range(
        &self,
        input: usize,
        var: usize,
        req: &ChunkRequest,
    ) -> Option<Option<(u64, u64)>> {
        let c = self.var(input, var)?;
        let l = &c.layout;
        let Some(elem) = l.little else {
            return Some(None);
        };
        if l.chunk != req.shape || l.filters != req.chain {
            return Some(None);
        }
        let index = req.offsets.iter().zip(&l.chunk).map(
            |(o, c)| {
                if o % c == 0 {
                    o / c
                } else {
                    u64::MAX
                }
            },
        );
        let Some(k) = c.linear(index) else {
            return Some(None);
        };
        let Some((off, len)) = c.find(k) else {
            return Some(None);
        };
        let chunk_bytes = l.chunk.iter().product::<u64>().saturating_mul(elem);
        if len == u64::MAX || len > MAX_CHUNK || (req.chain.is_empty() && len != chunk_bytes) {
            return Some(None);
        }
        Some(Some((off, len)))
    }

    /// Whether input `input` stores any chunk of variable `var` overlapping the slab
    /// `start`/`count` (in the input's indices): `None` when not kept.
    pub(crate) fn stores_any(
        &self,
        input: usize,
        var: usize,
        start: &[u64],
        count: &[u64],
    ) -> Option<bool> {
        let c = self.var(input, var)?;
        let chunk = &c.layout.chunk;
        if start.len() != chunk.len() || count.contains(&0) {
            return None;
        }
        // the range of chunk indices the slab covers along each dimension
        let lo: Vec<u64> = start.iter().zip(chunk).map(|(s, c)| s / c).collect();
        let hi: Vec<u64> = start
            .iter()
            .zip(count)
            .zip(chunk)
            .map(|((s, n), c)| (s + n - 1) / c)
            .collect();
        let cells: u64 = lo.iter().zip(&hi).map(|(l, h)| h - l + 1).product();
        if cells > c.stored.len() as u64 {
            // fewer stored chunks than cells: test each stored chunk
            return Some(c.stored.iter().any(|&(k, _, _)| {
                let mut k = k;
                let mut inside = true;
                for d in (0..c.grid.len()).rev() {
                    let i = k % c.grid[d];
                    k /= c.grid[d];
                    inside &= i >= lo[d] && i <= hi[d];
                }
                inside
            }));
        }
        // fewer cells than stored chunks: look each cell up
        let mut at = lo.clone();
        loop {
            if c.linear(at.iter().copied())
                .is_some_and(|k| c.find(k).is_some())
            {
                return Some(true);
            }
            let mut d = at.len();
            loop {
                if d == 0 {
                    return Some(false);
                }
                d -= 1;
                if at[d] < hi[d] {
                    at[d] += 1;
                    break;
                }
                at[d] = lo[d];
            }
        }
    }
}
