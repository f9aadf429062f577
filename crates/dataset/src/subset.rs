//! Subsets by index and by coordinate value (`--dimension DIM,MIN[,MAX[,STRIDE]]`, NCO's
//! `ncks -d`) as a view: a [`Dataset`] whose dimensions are shrunk and a [`DataSource`] that
//! maps each hyperslab of the view onto the original. Nothing is copied here; a tool hands
//! the view to its printer or writer as it would the original.
//!
//! Semantics follow NCO's "Hyperslabs" (nco.sf.net/nco.html#hyp): integers are 0-based
//! indices (negative ones count from the end), inclusive; a value with a decimal point or an
//! exponent is a coordinate value, and the range holds every index whose coordinate lies in
//! `[MIN, MAX]`; `DIM,VAL` alone selects one index (for a coordinate, the nearest one; a tie
//! goes to the lower index); an empty MIN or MAX is an open end; STRIDE takes every n-th index
//! from the first selected.

use crate::{ChunkRequest, DataError, DataSource, Dataset, DimId, MaybeBytes, Placement};
use crate::{InMemory, Region, Slab, Values, VarId};

/// One end of a range as the user wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// A 0-based index; negative counts from the end (-1 is the last).
    Index(i64),
    /// A coordinate value (written with a decimal point or an exponent).
    Coord(f64),
}

/// One `--dimension` option, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct DimSpec {
    /// The dimension's name (matched in every group), or its full path (`/g/lat`).
    pub name: String,
    /// The first index or lowest coordinate; `None` is open.
    pub min: Option<Limit>,
    /// The last index or highest coordinate; `None` is open.
    pub max: Option<Limit>,
    /// True for `DIM,VAL` (no MAX written): one index, the nearest for a coordinate.
    pub single: bool,
    /// Every n-th index from the first selected (at least 1).
    pub stride: u64,
}

/// A `--dimension` text that cannot be read: the request is wrong, whatever the data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DimSpecError {
    /// Not `DIM,MIN[,MAX[,STRIDE]]`.
    #[error("--dimension {text:?}: {why}; expected DIM,MIN[,MAX[,STRIDE]] (indices are integers, coordinate values have a decimal point, such as lat,-30.,30.)")]
    Malformed {
        /// The option's text.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// MIN is an index and MAX a coordinate value, or the other way round.
    #[error("--dimension {text:?}: MIN and MAX must both be indices (integers) or both coordinate values (with a decimal point, such as 10. or 1e1)")]
    MixedLimits {
        /// The option's text.
        text: String,
    },
}

/// A subset that does not fit the data: the dimension, its length or its coordinates.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SubsetError {
    /// No dimension of that name.
    #[error("--dimension {dim}: no such dimension (ncdump -h lists the dimensions)")]
    NoSuchDimension {
        /// The name given.
        dim: String,
    },
    /// One dimension named by two options.
    #[error("--dimension {dim}: given twice; several ranges of one dimension are not supported: give one range")]
    Repeated {
        /// The dimension's path.
        dim: String,
    },
    /// An index at or past the end.
    #[error("--dimension {dim}: index {index} is past the end (the dimension has {len} elements, indices 0 to {}): give a smaller index", .len.saturating_sub(1))]
    PastEnd {
        /// The dimension's path.
        dim: String,
        /// The index given.
        index: i64,
        /// The dimension's length.
        len: u64,
    },
    /// MIN > MAX.
    #[error("--dimension {dim}: MIN {min} is greater than MAX {max}; wrapped ranges (such as longitudes across 0) are not yet supported: give MIN <= MAX, or copy the two pieces separately")]
    MinAboveMax {
        /// The dimension's path.
        dim: String,
        /// MIN as given.
        min: String,
        /// MAX as given.
        max: String,
    },
    /// A coordinate value for a dimension without a coordinate variable.
    #[error("--dimension {dim}: a coordinate value needs a coordinate variable (a 1-D variable named {name:?} along it), and there is none: give indices (integers) instead")]
    NoCoordinate {
        /// The dimension's path.
        dim: String,
        /// The dimension's plain name.
        name: String,
    },
    /// The coordinate variable is not a number.
    #[error("--dimension {dim}: the coordinate variable is not numeric: give indices (integers) instead")]
    NotNumeric {
        /// The dimension's path.
        dim: String,
    },
    /// Coordinates neither increasing nor decreasing.
    #[error("--dimension {dim}: the coordinate values are not monotonic (at index {at}), so a value range has no meaning: give indices (integers) instead")]
    NotMonotonic {
        /// The dimension's path.
        dim: String,
        /// The first index that breaks the order.
        at: u64,
    },
    /// A coordinate range that holds no coordinate.
    #[error("--dimension {dim}: no coordinate lies in [{min}, {max}] (the coordinates run from {first} to {last}): widen the range, or give one value for the nearest")]
    Empty {
        /// The dimension's path.
        dim: String,
        /// MIN as given.
        min: String,
        /// MAX as given.
        max: String,
        /// The first coordinate.
        first: f64,
        /// The last coordinate.
        last: f64,
    },
    /// The dimension has no elements to select.
    #[error("--dimension {dim}: the dimension has no elements (an unlimited dimension with no records?), so nothing can be selected")]
    NoElements {
        /// The dimension's path.
        dim: String,
    },
    /// Reading the coordinate variable failed.
    #[error("--dimension {dim}: reading its coordinate variable: {source}")]
    Read {
        /// The dimension's path.
        dim: String,
        /// The reader's error.
        #[source]
        source: DataError,
    },
}

impl DimSpec {
    /// Parse `DIM,MIN[,MAX[,STRIDE]]`.
    ///
    /// # Errors
    /// When the text is not of that form, a number cannot be read, the stride is not a
    /// positive integer, or MIN and MAX are of different kinds.
    pub fn parse(text: &str) -> Result<DimSpec, DimSpecError> {
        let bad = |why: &str| DimSpecError::Malformed {
            text: text.to_string(),
            why: why.to_string(),
        };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() < 2 {
            return Err(bad("no \",\" after the dimension name"));
        }
        if parts.len() > 4 {
            return Err(bad("more than four fields"));
        }
        if parts[0].is_empty() {
            return Err(bad("no dimension name"));
        }
        let limit = |s: &str| -> Result<Option<Limit>, DimSpecError> {
            if s.is_empty() {
                return Ok(None);
            }
            let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                return s
                    .parse::<i64>()
                    .map(|i| Some(Limit::Index(i)))
                    .map_err(|_| bad(&format!("index {s:?} is too large")));
            }
            match s.parse::<f64>() {
                Ok(x) if x.is_finite() && s.contains(['.', 'e', 'E']) => Ok(Some(Limit::Coord(x))),
                _ => Err(bad(&format!(
                    "{s:?} is neither an index nor a coordinate value"
                ))),
            }
        };
        let min = limit(parts[1])?;
        let single = parts.len() == 2;
        let max = if single { min } else { limit(parts[2])? };
        let stride = match parts.get(3) {
            None | Some(&"") => 1,
            Some(s) => match s.parse::<u64>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(bad(&format!(
                        "stride {s:?} is not a positive integer (1 takes every index)"
                    )))
                }
            },
        };
        if matches!(
            (min, max),
            (Some(Limit::Index(_)), Some(Limit::Coord(_)))
                | (Some(Limit::Coord(_)), Some(Limit::Index(_)))
        ) {
            return Err(DimSpecError::MixedLimits {
                text: text.to_string(),
            });
        }
        Ok(DimSpec {
            name: parts[0].to_string(),
            min,
            max,
            single,
            stride,
        })
    }
}

/// What a subset keeps of one dimension: `count` indices `first`, `first + stride`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimSelection {
    /// The first index kept.
    pub first: u64,
    /// How many indices are kept.
    pub count: u64,
    /// The step between kept indices.
    pub stride: u64,
}

impl DimSelection {
    /// The original index of the view's index `k`.
    fn index(&self, k: u64) -> u64 {
        self.first + k * self.stride
    }
}

/// The data of a subset view: reads the original through the per-dimension selections.
pub struct SubsetSource<'a> {
    original: &'a Dataset,
    src: &'a dyn DataSource,
    /// By dimension id: `None` keeps the dimension whole.
    sel: Vec<Option<DimSelection>>,
}

/// The view of `ds` that `specs` select, and the source reading it from `src`. With no
/// specs the view is the dataset itself.
///
/// # Errors
/// When a spec does not fit the dataset ([`SubsetError`]: no such dimension, an index past
/// the end, MIN > MAX, a coordinate value without a monotonic coordinate variable, a range
/// holding no coordinate), or reading a coordinate variable fails.
pub fn subset<'a>(
    ds: &'a Dataset,
    src: &'a dyn DataSource,
    specs: &[DimSpec],
) -> Result<(Dataset, SubsetSource<'a>), SubsetError> {
    let mut sel: Vec<Option<DimSelection>> = vec![None; ds.dims.len()];
    for spec in specs {
        let mut matched = false;
        for (i, dim) in ds.dims.iter().enumerate() {
            let path = dim_path(ds, DimId(i));
            if dim.name != spec.name && path != spec.name {
                continue;
            }
            matched = true;
            if sel[i].is_some() {
                return Err(SubsetError::Repeated { dim: path });
            }
            sel[i] = Some(resolve(ds, src, DimId(i), spec)?);
        }
        if !matched {
            return Err(SubsetError::NoSuchDimension {
                dim: spec.name.clone(),
            });
        }
    }
    let mut view = ds.clone();
    for (i, s) in sel.iter().enumerate() {
        if let Some(s) = s {
            view.dims[i].len = s.count;
        }
    }
    let source = SubsetSource {
        original: ds,
        src,
        sel,
    };
    for v in 0..view.vars.len() {
        if !source.affects(VarId(v)) {
            continue;
        }
        let shape = view.shape(VarId(v));
        let var = &mut view.vars[v];
        if let Some(chunks) = &mut var.storage.chunk_sizes {
            for (c, &n) in chunks.iter_mut().zip(&shape) {
                *c = (*c).min(n.max(1));
            }
            if let Some(shards) = &mut var.storage.shard_sizes {
                // whole chunks, no more than the dimension needs
                for ((s, &c), &n) in shards.iter_mut().zip(chunks.iter()).zip(&shape) {
                    *s = (*s).min(n.max(1).div_ceil(c.max(1)) * c.max(1)).max(c);
                }
            }
        }
        // data held in memory is subset now; data held by the source is read through it
        var.data_elsewhere = None;
        if ds.vars[v].data.is_some() {
            let count = shape.clone();
            let start = vec![0; shape.len()];
            let data = source
                .read_with(VarId(v), Slab::new(&start, &count), &|b: Slab| {
                    InMemory.read(ds, VarId(v), b)
                })
                .map_err(|e| SubsetError::Read {
                    dim: ds.var_path(VarId(v)),
                    source: e,
                })?;
            view.vars[v].data = Some(data);
        }
    }
    Ok((view, source))
}

/// A dimension's full path (`/lat`, `/g/lat`).
fn dim_path(ds: &Dataset, d: DimId) -> String {
    let dim = ds.dim(d);
    let g = ds.group_path(dim.group);
    if g.ends_with('/') {
        format!("{g}{}", dim.name)
    } else {
        format!("{g}/{}", dim.name)
    }
}

fn show(l: Option<Limit>) -> String {
    match l {
        None => String::new(),
        Some(Limit::Index(i)) => i.to_string(),
        Some(Limit::Coord(x)) => x.to_string(),
    }
}

/// The indices `spec` keeps of dimension `d`.
fn resolve(
    ds: &Dataset,
    src: &dyn DataSource,
    d: DimId,
    spec: &DimSpec,
) -> Result<DimSelection, SubsetError> {
    let dim = dim_path(ds, d);
    let len = ds.dim(d).len;
    if len == 0 {
        return Err(SubsetError::NoElements { dim });
    }
    let coords =
        matches!(spec.min, Some(Limit::Coord(_))) || matches!(spec.max, Some(Limit::Coord(_)));
    let (first, last) = if coords {
        let c = coordinates(ds, src, d, &dim)?;
        let lo = match spec.min {
            Some(Limit::Coord(x)) => x,
            _ => f64::NEG_INFINITY,
        };
        let hi = match spec.max {
            Some(Limit::Coord(x)) => x,
            _ => f64::INFINITY,
        };
        if spec.single {
            // the nearest coordinate; a tie goes to the lower index, as ncks
            let mut best = 0usize;
            for (i, &x) in c.iter().enumerate() {
                if (x - lo).abs() < (c[best] - lo).abs() {
                    best = i;
                }
            }
            (best as u64, best as u64)
        } else {
            if lo > hi {
                return Err(SubsetError::MinAboveMax {
                    dim,
                    min: show(spec.min),
                    max: show(spec.max),
                });
            }
            let inside: Vec<usize> = (0..c.len()).filter(|&i| c[i] >= lo && c[i] <= hi).collect();
            match (inside.first(), inside.last()) {
                (Some(&a), Some(&b)) => (a as u64, b as u64),
                _ => {
                    return Err(SubsetError::Empty {
                        dim,
                        min: show(spec.min),
                        max: show(spec.max),
                        first: c[0],
                        last: c[c.len() - 1],
                    })
                }
            }
        }
    } else {
        let index = |l: Option<Limit>, open: u64| -> Result<u64, SubsetError> {
            match l {
                Some(Limit::Index(i)) => {
                    let at = if i < 0 {
                        len as i128 + i as i128
                    } else {
                        i as i128
                    };
                    if at < 0 || at >= len as i128 {
                        return Err(SubsetError::PastEnd {
                            dim: dim.clone(),
                            index: i,
                            len,
                        });
                    }
                    Ok(at as u64)
                }
                _ => Ok(open),
            }
        };
        let a = index(spec.min, 0)?;
        let b = index(spec.max, len - 1)?;
        if a > b {
            return Err(SubsetError::MinAboveMax {
                dim,
                min: show(spec.min),
                max: show(spec.max),
            });
        }
        (a, b)
    };
    Ok(DimSelection {
        first,
        count: (last - first) / spec.stride + 1,
        stride: spec.stride,
    })
}

/// The coordinate values of dimension `d`, checked to be monotonic.
fn coordinates(
    ds: &Dataset,
    src: &dyn DataSource,
    d: DimId,
    dim: &str,
) -> Result<Vec<f64>, SubsetError> {
    let name = &ds.dim(d).name;
    let group = ds.dim(d).group;
    let var = ds
        .group(group)
        .vars
        .iter()
        .copied()
        .find(|&v| ds.var(v).name == *name && ds.var(v).dims == [d])
        .ok_or_else(|| SubsetError::NoCoordinate {
            dim: dim.to_string(),
            name: name.clone(),
        })?;
    let len = ds.dim(d).len;
    let values = src
        .read(ds, var, Slab::new(&[0], &[len]))
        .map_err(|e| SubsetError::Read {
            dim: dim.to_string(),
            source: e,
        })?;
    let c: Vec<f64> = (0..values.len())
        .map(|i| values.get_f64(i))
        .collect::<Option<_>>()
        .ok_or_else(|| SubsetError::NotNumeric {
            dim: dim.to_string(),
        })?;
    let up = c.len() < 2 || c[1] > c[0];
    for i in 1..c.len() {
        let ok = if up { c[i] > c[i - 1] } else { c[i] < c[i - 1] };
        if !ok {
            return Err(SubsetError::NotMonotonic {
                dim: dim.to_string(),
                at: i as u64,
            });
        }
    }
    if c.iter().any(|x| x.is_nan()) {
        return Err(SubsetError::NotMonotonic {
            dim: dim.to_string(),
            at: 0,
        });
    }
    Ok(c)
}

/// One box of the original a view's hyperslab reads: per dimension its start and count, and
/// the offsets inside it of the kept indices.
struct Piece {
    start: u64,
    count: u64,
    picks: Vec<u64>,
}

impl SubsetSource<'_> {
    /// The selection of each of `var`'s dimensions.
    fn sels(&self, var: VarId) -> Vec<Option<DimSelection>> {
        (self.original.var(var).dims.iter())
            .map(|d| self.sel.get(d.0).copied().flatten())
            .collect()
    }

    /// True when some dimension of `var` is subset (then its shape differs from the
    /// original's).
    fn affects(&self, var: VarId) -> bool {
        self.sels(var).iter().any(Option::is_some)
    }

    /// The original's hyperslab holding the view's `slab` (every index between its first
    /// and last kept ones).
    fn bounding(&self, var: VarId, slab: Slab) -> (Vec<u64>, Vec<u64>) {
        let sels = self.sels(var);
        let mut start = slab.start.to_vec();
        let mut count = slab.count.to_vec();
        for (i, s) in sels.iter().enumerate() {
            if let (Some(s), Some(st), Some(c)) = (s, start.get_mut(i), count.get_mut(i)) {
                *st = s.index(*st);
                *c = if *c == 0 { 0 } else { (*c - 1) * s.stride + 1 };
            }
        }
        (start, count)
    }

    /// Per dimension, the boxes of the original the view's `slab` reads: one box along a
    /// dimension with stride 1, else one per stored chunk the kept indices fall in (so a
    /// large stride reads only the chunks it needs, not every chunk between).
    fn pieces(&self, var: VarId, slab: Slab) -> Vec<Vec<Piece>> {
        let sels = self.sels(var);
        let chunks = self.original.var(var).storage.chunk_sizes.clone();
        (0..slab.start.len())
            .map(|i| {
                let (s0, c0) = (slab.start[i], slab.count[i]);
                match sels.get(i).copied().flatten() {
                    Some(s) if s.stride > 1 && c0 > 0 => {
                        let chunk = chunks
                            .as_ref()
                            .and_then(|c| c.get(i).copied())
                            .filter(|&c| c > 0)
                            .unwrap_or(u64::MAX);
                        let mut out: Vec<Piece> = Vec::new();
                        for k in s0..s0 + c0 {
                            let at = s.index(k);
                            match out.last_mut() {
                                Some(p) if p.start / chunk == at / chunk => {
                                    p.count = at - p.start + 1;
                                    p.picks.push(at - p.start);
                                }
                                _ => out.push(Piece {
                                    start: at,
                                    count: 1,
                                    picks: vec![0],
                                }),
                            }
                        }
                        out
                    }
                    sel => {
                        let start = sel.map_or(s0, |s| s.index(s0));
                        vec![Piece {
                            start,
                            count: c0,
                            picks: (0..c0).collect(),
                        }]
                    }
                }
            })
            .collect()
    }

    /// Read the view's `slab` of `var` with `read_box` reading boxes of the original, and
    /// put the kept elements in row-major order.
    fn read_with(
        &self,
        var: VarId,
        slab: Slab,
        read_box: &dyn Fn(Slab) -> Result<Values, DataError>,
    ) -> Result<Values, DataError> {
        let pieces = self.pieces(var, slab);
        if pieces.iter().all(|p| p.len() == 1) {
            // one box: a stride-1 read needs no picking
            let start: Vec<u64> = pieces.iter().map(|p| p[0].start).collect();
            let count: Vec<u64> = pieces.iter().map(|p| p[0].count).collect();
            let all = read_box(Slab::new(&start, &count))?;
            if count == slab.count {
                return Ok(all);
            }
            let idx = gather_index(&pieces, &[0], &count);
            return Ok(all.gather(&idx));
        }
        // every combination of boxes, row-major; each read once and appended
        let rank = pieces.len();
        let grid: Vec<u64> = pieces.iter().map(|p| p.len() as u64).collect();
        let mut which = vec![0u64; rank];
        let mut all: Option<Values> = None;
        let mut bases = Vec::new();
        let mut counts = Vec::new();
        let mut base = 0usize;
        loop {
            let start: Vec<u64> = (0..rank)
                .map(|d| pieces[d][which[d] as usize].start)
                .collect();
            let count = count_of(&pieces, &which);
            let got = read_box(Slab::new(&start, &count))?;
            bases.push(base);
            base += got.len();
            counts.push(count);
            match &mut all {
                None => all = Some(got),
                Some(a) => {
                    a.extend_from(&got);
                }
            }
            if !crate::next_index(&mut which, &grid) {
                break;
            }
        }
        let all = all.ok_or("subset: no box read")?;
        let idx = gather_multi(&pieces, &bases, &counts, slab.count);
        Ok(all.gather(&idx))
    }
}

/// The counts of the box `which` picks along each dimension.
fn count_of(pieces: &[Vec<Piece>], which: &[u64]) -> Vec<u64> {
    (0..pieces.len())
        .map(|d| pieces[d][which[d] as usize].count)
        .collect()
}

/// The positions, in one box of `count`, of the kept elements, row-major.
fn gather_index(pieces: &[Vec<Piece>], bases: &[usize], count: &[u64]) -> Vec<usize> {
    let rank = pieces.len();
    let picks: Vec<&[u64]> = pieces.iter().map(|p| p[0].picks.as_slice()).collect();
    let n: Vec<u64> = picks.iter().map(|p| p.len() as u64).collect();
    let mut out = Vec::with_capacity(n.iter().product::<u64>() as usize);
    if n.contains(&0) {
        return out;
    }
    let mut k = vec![0u64; rank];
    loop {
        let off = (0..rank).fold(0u64, |a, d| a * count[d] + picks[d][k[d] as usize]);
        out.push(bases[0] + off as usize);
        if !crate::next_index(&mut k, &n) {
            return out;
        }
    }
}

/// The positions of the view's elements, row-major, in the concatenation of every box
/// (box `b` begins at `bases[b]` and has shape `counts[b]`).
fn gather_multi(
    pieces: &[Vec<Piece>],
    bases: &[usize],
    counts: &[Vec<u64>],
    view_count: &[u64],
) -> Vec<usize> {
    let rank = pieces.len();
    // per dimension, per view index: (box along that dimension, offset in it)
    let at: Vec<Vec<(u64, u64)>> = pieces
        .iter()
        .map(|ps| {
            ps.iter()
                .enumerate()
                .flat_map(|(b, p)| p.picks.iter().map(move |&o| (b as u64, o)))
                .collect()
        })
        .collect();
    let grid: Vec<u64> = pieces.iter().map(|p| p.len() as u64).collect();
    let mut out = Vec::with_capacity(view_count.iter().product::<u64>() as usize);
    if view_count.contains(&0) {
        return out;
    }
    let mut k = vec![0u64; rank];
    loop {
        let b = (0..rank).fold(0u64, |a, d| a * grid[d] + at[d][k[d] as usize].0) as usize;
        let count = &counts[b];
        let off = (0..rank).fold(0u64, |a, d| a * count[d] + at[d][k[d] as usize].1);
        out.push(bases[b] + off as usize);
        if !crate::next_index(&mut k, view_count) {
            return out;
        }
    }
}

impl DataSource for SubsetSource<'_> {
    fn read(&self, _ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        if !self.affects(var) {
            return self.src.read(self.original, var, slab);
        }
        self.read_with(var, slab, &|b| self.src.read(self.original, var, b))
    }

    fn read_le_bytes(&self, _ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        if !self.affects(var) {
            return self.src.read_le_bytes(self.original, var, slab);
        }
        let pieces = self.pieces(var, slab);
        if !pieces
            .iter()
            .all(|p| p.len() == 1 && p[0].count == p[0].picks.len() as u64)
        {
            // picking elements out of bytes: through typed values
            return None;
        }
        let start: Vec<u64> = pieces.iter().map(|p| p[0].start).collect();
        self.src
            .read_le_bytes(self.original, var, Slab::new(&start, slab.count))
    }

    fn raw_chunk(&self, _ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        // a subset's chunks are not the original's
        if self.affects(var) {
            return None;
        }
        self.src.raw_chunk(self.original, var, chunk)
    }

    fn unwritten(&self, _ds: &Dataset, var: VarId, slab: Slab) -> bool {
        if !self.affects(var) {
            return self.src.unwritten(self.original, var, slab);
        }
        // every kept element lies in the bounding box: unwritten there, unwritten here
        let (start, count) = self.bounding(var, slab);
        self.src
            .unwritten(self.original, var, Slab::new(&start, &count))
    }

    fn stored_regions(&self, _ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
        let regions = self.src.stored_regions(self.original, var)?;
        if !self.affects(var) {
            return Some(regions);
        }
        // each stored region's kept elements form a box of the view
        let sels = self.sels(var);
        let mut out = Vec::new();
        'region: for r in regions {
            let mut start = r.start.clone();
            let mut count = r.count.clone();
            for (d, s) in sels.iter().enumerate() {
                let Some(s) = s else { continue };
                let (lo, n) = (r.start[d], r.count[d]);
                if n == 0 {
                    continue 'region;
                }
                let hi = lo + n - 1;
                let last = s.index(s.count - 1);
                if hi < s.first || lo > last {
                    continue 'region;
                }
                let k_lo = lo.saturating_sub(s.first).div_ceil(s.stride);
                let k_hi = ((hi.min(last)) - s.first) / s.stride;
                if k_lo > k_hi {
                    continue 'region;
                }
                start[d] = k_lo;
                count[d] = k_hi - k_lo + 1;
            }
            out.push(Region { start, count });
        }
        Some(out)
    }

    fn placement(&self, _ds: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
        // a subset's values are not where the original's chunks say
        if self.affects(var) {
            return None;
        }
        self.src.placement(self.original, var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AtomicType, NcType, ROOT};

    fn grid() -> (Dataset, VarId) {
        let mut ds = Dataset::new("g");
        let t = ds.add_dim(ROOT, "time", 6, true);
        let lat = ds.add_dim(ROOT, "lat", 4, false);
        let c = ds.add_var(ROOT, "lat", NcType::Atomic(AtomicType::Float), vec![lat]);
        ds.var_mut(c).data = Some(Values::Float(vec![30., 10., -10., -30.]));
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![t, lat]);
        ds.var_mut(v).data = Some(Values::Int((0..24).collect()));
        ds.var_mut(v).storage.chunk_sizes = Some(vec![2, 4]);
        (ds, v)
    }

    fn specs(s: &[&str]) -> Vec<DimSpec> {
        s.iter().map(|t| DimSpec::parse(t).unwrap()).collect()
    }

    #[test]
    fn parses_indices_coordinates_and_open_ends() {
        let s = DimSpec::parse("lat,1,,2").unwrap();
        assert_eq!(
            (s.min, s.max, s.single, s.stride),
            (Some(Limit::Index(1)), None, false, 2)
        );
        let s = DimSpec::parse("lat,1e1").unwrap();
        assert_eq!(
            (s.min, s.max, s.single),
            (Some(Limit::Coord(10.)), Some(Limit::Coord(10.)), true)
        );
        assert!(matches!(
            DimSpec::parse("lat,0,1."),
            Err(DimSpecError::MixedLimits { .. })
        ));
        assert!(DimSpec::parse("lat,0,1,0").is_err());
        assert!(DimSpec::parse("lat").is_err());
        assert!(DimSpec::parse("lat,x").is_err());
    }

    #[test]
    fn strided_reads_pick_across_chunks() {
        let (ds, v) = grid();
        let (view, src) = subset(&ds, &InMemory, &specs(&["time,1,,2", "lat,-20.,20."])).unwrap();
        assert_eq!(view.shape(v), vec![3, 2]);
        let got = src.read(&view, v, Slab::new(&[0, 0], &[3, 2])).unwrap();
        assert_eq!(got, Values::Int(vec![5, 6, 13, 14, 21, 22]));
        let got = src.read(&view, v, Slab::new(&[1, 1], &[2, 1])).unwrap();
        assert_eq!(got, Values::Int(vec![14, 22]));
        assert_eq!(view.var(v).storage.chunk_sizes, Some(vec![2, 2]));
        assert_eq!(
            view.var(v).data,
            Some(Values::Int(vec![5, 6, 13, 14, 21, 22]))
        );
    }

    #[test]
    fn nearest_and_errors() {
        let (ds, _) = grid();
        let (view, _) = subset(&ds, &InMemory, &specs(&["lat,0."])).unwrap();
        let c = VarId(0);
        assert_eq!(view.var(c).data, Some(Values::Float(vec![10.])));
        let e = |s: &str| {
            subset(&ds, &InMemory, &specs(&[s]))
                .err()
                .unwrap()
                .to_string()
        };
        assert!(e("lon,1").contains("no such dimension"));
        assert!(e("lat,4").contains("past the end"));
        assert!(e("lat,2,1").contains("not yet supported"));
        assert!(e("lat,11.,12.").contains("no coordinate lies"));
        assert!(e("time,1.").contains("needs a coordinate variable"));
    }

    #[test]
    fn one_box_stride_and_stored_regions() {
        let (mut ds, v) = grid();
        ds.var_mut(v).storage.chunk_sizes = None;
        let (view, src) = subset(&ds, &InMemory, &specs(&["time,,,3", "lat,1,2"])).unwrap();
        let got = src.read(&view, v, Slab::new(&[0, 0], &[2, 2])).unwrap();
        assert_eq!(got, Values::Int(vec![1, 2, 13, 14]));
        let sel = DimSelection {
            first: 1,
            count: 3,
            stride: 2,
        };
        let one = Dataset::new("x");
        let mut one = one;
        let d = one.add_dim(ROOT, "d", 8, false);
        let w = one.add_var(ROOT, "w", NcType::Atomic(AtomicType::Int), vec![d]);
        struct Stored;
        impl DataSource for Stored {
            fn read(&self, _: &Dataset, _: VarId, _: Slab) -> Result<Values, DataError> {
                Err("unused".into())
            }
            fn stored_regions(&self, _: &Dataset, _: VarId) -> Option<Vec<Region>> {
                let r = |s, c| Region {
                    start: vec![s],
                    count: vec![c],
                };
                Some(vec![r(0, 2), r(2, 2), r(6, 2)])
            }
        }
        let src = SubsetSource {
            original: &one,
            src: &Stored,
            sel: vec![Some(sel)],
        };
        // kept: 1, 3, 5 -> regions [0,2) keeps view 0, [2,4) view 1, [6,8) nothing
        let r = |s, c| Region {
            start: vec![s],
            count: vec![c],
        };
        assert_eq!(src.stored_regions(&one, w), Some(vec![r(0, 1), r(1, 1)]));
    }
}
