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

mod chunks;

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
    #[error("--dimension {dim}: MIN {min} is greater than MAX {max}, and only a longitude wraps (a coordinate variable with units of degrees east, such as \"degrees_east\"): give MIN <= MAX")]
    MinAboveMax {
        /// The dimension's path.
        dim: String,
        /// MIN as given.
        min: String,
        /// MAX as given.
        max: String,
    },
    /// A wrapped coordinate range on longitudes that decrease.
    #[error("--dimension {dim}: MIN {min} is greater than MAX {max}, a wrapped range, but the longitudes decrease along the dimension: a range wraps only on increasing longitudes")]
    WrapDescending {
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

/// A run of kept indices: `count` (at least 1) indices `first`, `first + stride`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The first index kept.
    pub first: u64,
    /// How many indices are kept.
    pub count: u64,
    /// The step between kept indices.
    pub stride: u64,
}

impl Run {
    /// The original index of the run's `k`-th element.
    fn index(&self, k: u64) -> u64 {
        self.first + k * self.stride
    }

    /// The run's last index.
    fn last(&self) -> u64 {
        self.index(self.count.saturating_sub(1))
    }

    /// True when its indices are consecutive in the original (stride 1, or one index).
    pub(crate) fn contiguous(&self) -> bool {
        self.stride == 1 || self.count == 1
    }
}

/// What a subset keeps of one dimension: its runs, one after another in the view's order.
/// One run for a plain range; two for a wrapped longitude range (MIN to the end, then the
/// start to MAX); as many as it takes for several ranges of one dimension (their union, in
/// increasing order, as ncks's multislabs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimSelection {
    /// The runs, none empty.
    pub runs: Vec<Run>,
}

impl DimSelection {
    /// How many indices are kept.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| r.count).sum()
    }

    /// True when nothing is kept (never, for a selection `subset` made).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pieces of runs that hold the view's indices `k0 .. k0 + n`, in order.
    fn segments(&self, k0: u64, n: u64) -> Vec<Run> {
        let mut out = Vec::new();
        let (mut base, end) = (0u64, k0 + n);
        for r in &self.runs {
            let (lo, hi) = (k0.max(base), end.min(base + r.count));
            if lo < hi {
                out.push(Run {
                    first: r.index(lo - base),
                    count: hi - lo,
                    stride: r.stride,
                });
            }
            base += r.count;
        }
        out
    }

    /// Every kept index, in the view's order.
    fn indices(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs
            .iter()
            .flat_map(|r| (0..r.count).map(|k| r.index(k)))
    }

    /// The selection keeping `idx` (sorted, no repeats), as few runs as a greedy pass finds.
    fn from_sorted(idx: &[u64]) -> DimSelection {
        let mut runs = Vec::new();
        let mut i = 0;
        while i < idx.len() {
            let Some(&next) = idx.get(i + 1) else {
                runs.push(Run {
                    first: idx[i],
                    count: 1,
                    stride: 1,
                });
                break;
            };
            let stride = next - idx[i];
            let mut j = i + 1;
            while j + 1 < idx.len() && idx[j + 1] - idx[j] == stride {
                j += 1;
            }
            runs.push(Run {
                first: idx[i],
                count: (j - i + 1) as u64,
                stride,
            });
            i = j + 1;
        }
        DimSelection { runs }
    }

    /// A wrapped range of a dimension of `len`: indices `tail .. len`, then `0 .. head`, every
    /// `stride`-th of that sequence.
    fn wrapped(len: u64, tail: u64, head: u64, stride: u64) -> DimSelection {
        let mut runs = Vec::new();
        let mut skip = 0;
        if tail < len {
            let count = (len - 1 - tail) / stride + 1;
            runs.push(Run {
                first: tail,
                count,
                stride,
            });
            skip = tail + count * stride - len;
        }
        if skip < head {
            runs.push(Run {
                first: skip,
                count: (head - 1 - skip) / stride + 1,
                stride,
            });
        }
        DimSelection { runs }
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
    // every range given for each dimension; several are joined as ncks's multislabs
    let mut given: Vec<Vec<DimSelection>> = vec![Vec::new(); ds.dims.len()];
    for spec in specs {
        let mut matched = false;
        for (i, dim) in ds.dims.iter().enumerate() {
            let path = dim_path(ds, DimId(i));
            if dim.name != spec.name && path != spec.name {
                continue;
            }
            matched = true;
            given[i].push(resolve(ds, src, DimId(i), spec)?);
        }
        if !matched {
            return Err(SubsetError::NoSuchDimension {
                dim: spec.name.clone(),
            });
        }
    }
    let sel: Vec<Option<DimSelection>> = given
        .into_iter()
        .map(|mut g| match g.len() {
            0 => None,
            1 => g.pop(),
            _ => {
                // the union, in increasing order, whatever order the ranges came in
                let mut idx: Vec<u64> = g.iter().flat_map(DimSelection::indices).collect();
                idx.sort_unstable();
                idx.dedup();
                Some(DimSelection::from_sorted(&idx))
            }
        })
        .collect();
    let mut view = ds.clone();
    for (i, s) in sel.iter().enumerate() {
        if let Some(s) = s {
            view.dims[i].len = s.len();
        }
    }
    if sel.iter().any(Option::is_some) {
        src.will_read_parts();
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
    let above = || SubsetError::MinAboveMax {
        dim: dim.clone(),
        min: show(spec.min),
        max: show(spec.max),
    };
    // MIN > MAX wraps on a longitude (as ncks does; ncks wraps any dimension, we only these)
    let longitude = coordinate_var(ds, d).is_some_and(|v| is_longitude(ds.var(v)));
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
                if !longitude {
                    return Err(above());
                }
                if c.len() > 1 && c[1] < c[0] {
                    return Err(SubsetError::WrapDescending {
                        dim,
                        min: show(spec.min),
                        max: show(spec.max),
                    });
                }
                // from the first longitude >= MIN to the end, then from the start to the
                // last one <= MAX
                let tail = c.iter().position(|&x| x >= lo).unwrap_or(c.len()) as u64;
                let head = c.iter().rposition(|&x| x <= hi).map_or(0, |i| i + 1) as u64;
                if tail == len && head == 0 {
                    return Err(SubsetError::Empty {
                        dim,
                        min: show(spec.min),
                        max: show(spec.max),
                        first: c[0],
                        last: c[c.len() - 1],
                    });
                }
                return Ok(DimSelection::wrapped(len, tail, head, spec.stride));
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
            if longitude {
                return Ok(DimSelection::wrapped(len, a, b + 1, spec.stride));
            }
            return Err(above());
        }
        (a, b)
    };
    Ok(DimSelection {
        runs: vec![Run {
            first,
            count: (last - first) / spec.stride + 1,
            stride: spec.stride,
        }],
    })
}

/// The coordinate variable of dimension `d`: a 1-D variable of its name along it, in its group.
fn coordinate_var(ds: &Dataset, d: DimId) -> Option<VarId> {
    let name = &ds.dim(d).name;
    (ds.group(ds.dim(d).group).vars.iter().copied())
        .find(|&v| ds.var(v).name == *name && ds.var(v).dims == [d])
}

/// True for a longitude: units of degrees east (the CF spellings), or the standard name.
fn is_longitude(var: &crate::Variable) -> bool {
    let text = |name: &str| match var.att(name).map(|a| &a.values) {
        Some(Values::Char(b)) => String::from_utf8_lossy(b).trim().to_ascii_lowercase(),
        Some(Values::String(v)) => match v.as_slice() {
            [Some(t)] => t.to_str_lossy().trim().to_ascii_lowercase(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    let units = text("units");
    matches!(
        units.as_str(),
        "degrees_east" | "degree_east" | "degrees_e" | "degree_e" | "degreese" | "degreee"
    ) || text("standard_name") == "longitude"
}

/// The coordinate values of dimension `d`, checked to be monotonic.
fn coordinates(
    ds: &Dataset,
    src: &dyn DataSource,
    d: DimId,
    dim: &str,
) -> Result<Vec<f64>, SubsetError> {
    let var = coordinate_var(ds, d).ok_or_else(|| SubsetError::NoCoordinate {
        dim: dim.to_string(),
        name: ds.dim(d).name.clone(),
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
    fn sels(&self, var: VarId) -> Vec<Option<&DimSelection>> {
        (self.original.var(var).dims.iter())
            .map(|d| self.sel.get(d.0).and_then(Option::as_ref))
            .collect()
    }

    /// True when some dimension of `var` is subset (then its shape differs from the
    /// original's).
    fn affects(&self, var: VarId) -> bool {
        self.sels(var).iter().any(Option::is_some)
    }

    /// Per dimension, the boxes (start, count) of the original that hold the view's `slab`:
    /// one box per run the slab reaches, from its first kept index to its last.
    fn run_boxes(&self, var: VarId, slab: Slab) -> Vec<Vec<(u64, u64)>> {
        let sels = self.sels(var);
        (0..slab.start.len())
            .map(|i| match sels.get(i).copied().flatten() {
                None => vec![(slab.start[i], slab.count[i])],
                Some(s) => (s.segments(slab.start[i], slab.count[i]).iter())
                    .map(|r| (r.first, r.last() - r.first + 1))
                    .collect(),
            })
            .collect()
    }

    /// Per dimension, the boxes of the original the view's `slab` reads: one box along a
    /// dimension kept as one stride-1 run, else one per stored chunk the kept indices fall
    /// in and per contiguous stretch (so a large stride reads only the chunks it needs, not
    /// every chunk between, and a wrapped range reads its two ends, not the middle).
    fn pieces(&self, var: VarId, slab: Slab) -> Result<Vec<Vec<Piece>>, DataError> {
        let sels = self.sels(var);
        let chunks = self.original.var(var).storage.chunk_sizes.clone();
        (0..slab.start.len())
            .map(|i| {
                let (s0, c0) = (slab.start[i], slab.count[i]);
                let Some(s) = sels.get(i).copied().flatten() else {
                    return Ok(vec![Piece {
                        start: s0,
                        count: c0,
                        picks: (0..c0).collect(),
                    }]);
                };
                if s0.checked_add(c0).is_none_or(|end| end > s.len()) {
                    return Err(DataError::from(format!(
                        "subset of {}: indices {s0} to {s0}+{c0} of dimension {i} are past its {} kept elements",
                        self.original.var_path(var),
                        s.len()
                    )));
                }
                let segments = s.segments(s0, c0);
                if let [r] = segments.as_slice() {
                    if r.contiguous() {
                        return Ok(vec![Piece {
                            start: r.first,
                            count: r.count,
                            picks: (0..r.count).collect(),
                        }]);
                    }
                }
                let chunk = (chunks.as_ref().and_then(|c| c.get(i).copied()))
                    .filter(|&c| c > 0)
                    .unwrap_or(u64::MAX);
                let mut out: Vec<Piece> = Vec::new();
                for at in segments.iter().flat_map(|r| (0..r.count).map(|k| r.index(k))) {
                    match out.last_mut() {
                        // after the piece's last index, and next to it or in its chunk
                        Some(p)
                            if at >= p.start + p.count
                                && (at == p.start + p.count || p.start / chunk == at / chunk) =>
                        {
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
                Ok(out)
            })
            .collect()
    }

    /// The view's `slab` of `var` read as one strided hyperslab per combination of runs,
    /// when the source cuts strided hyperslabs itself ([`DataSource::read_strided`], an
    /// OPeNDAP server); `None` when it does not.
    fn read_by_runs(&self, var: VarId, slab: Slab) -> Option<Result<Values, DataError>> {
        let sels = self.sels(var);
        // past the view's end: read_with says so
        let outside = sels.iter().enumerate().any(|(i, s)| {
            s.is_some_and(|s| {
                (slab.start.get(i).zip(slab.count.get(i)))
                    .is_none_or(|(&a, &n)| a.checked_add(n).is_none_or(|e| e > s.len()))
            })
        });
        if outside {
            return None;
        }
        let segs: Vec<Vec<Run>> = (0..slab.start.len())
            .map(|i| match sels.get(i).copied().flatten() {
                None => vec![Run {
                    first: slab.start[i],
                    count: slab.count[i],
                    stride: 1,
                }],
                Some(s) => s.segments(slab.start[i], slab.count[i]),
            })
            .collect();
        let grid: Vec<u64> = segs.iter().map(|s| s.len() as u64).collect();
        if grid.contains(&0) || slab.count.contains(&0) {
            return None;
        }
        let rank = segs.len();
        let mut which = vec![0u64; rank];
        let (mut all, mut bases, mut counts): (Option<Values>, Vec<usize>, Vec<Vec<u64>>) =
            (None, Vec::new(), Vec::new());
        loop {
            let run = |d: usize| segs[d][which[d] as usize];
            let start: Vec<u64> = (0..rank).map(|d| run(d).first).collect();
            let count: Vec<u64> = (0..rank).map(|d| run(d).count).collect();
            let stride: Vec<u64> = (0..rank).map(|d| run(d).stride).collect();
            let got = match self.src.read_strided(
                self.original,
                var,
                Slab::new(&start, &count),
                &stride,
            )? {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            bases.push(all.as_ref().map_or(0, Values::len));
            counts.push(count);
            match &mut all {
                None => all = Some(got),
                Some(a) => {
                    if !a.extend_from(&got) {
                        return Some(Err("subset: the source's boxes differ in type".into()));
                    }
                }
            }
            if !crate::next_index(&mut which, &grid) {
                break;
            }
        }
        let all = all?;
        if counts.len() == 1 {
            return Some(Ok(all));
        }
        // each box holds its runs' elements whole: put them in the view's order
        let pieces: Vec<Vec<Piece>> = segs
            .iter()
            .map(|ss| {
                ss.iter()
                    .map(|r| Piece {
                        start: r.first,
                        count: r.count,
                        picks: (0..r.count).collect(),
                    })
                    .collect()
            })
            .collect();
        let idx = gather_multi(&pieces, &bases, &counts, slab.count);
        Some(Ok(all.gather(&idx)))
    }

    /// Read the view's `slab` of `var` with `read_box` reading boxes of the original, and
    /// put the kept elements in row-major order.
    fn read_with(
        &self,
        var: VarId,
        slab: Slab,
        read_box: &dyn Fn(Slab) -> Result<Values, DataError>,
    ) -> Result<Values, DataError> {
        let pieces = self.pieces(var, slab)?;
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

/// The view's indices (as start, count boxes, one per run) that keep original indices
/// `lo .. lo + n`.
fn kept_in(s: &DimSelection, lo: u64, n: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let hi = lo + n - 1;
    let mut base = 0;
    for r in &s.runs {
        let last = r.last();
        if hi >= r.first && lo <= last {
            let k_lo = lo.saturating_sub(r.first).div_ceil(r.stride);
            let k_hi = (hi.min(last) - r.first) / r.stride;
            if k_lo <= k_hi {
                out.push((base + k_lo, k_hi - k_lo + 1));
            }
        }
        base += r.count;
    }
    out
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
    fn will_read_parts(&self) {
        self.src.will_read_parts();
    }

    fn read(&self, _ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        if !self.affects(var) {
            return self.src.read(self.original, var, slab);
        }
        if let Some(r) = self.read_by_runs(var, slab) {
            return r;
        }
        self.read_with(var, slab, &|b| self.src.read(self.original, var, b))
    }

    fn read_le_bytes(&self, _ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        if !self.affects(var) {
            return self.src.read_le_bytes(self.original, var, slab);
        }
        let pieces = self.pieces(var, slab).ok()?;
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
        if !self.affects(var) {
            return self.src.raw_chunk(self.original, var, chunk);
        }
        // a chunk of the view is a stored chunk of the original when, along every subset
        // dimension, it lies wholly inside the view and its indices are one stride-1 run of
        // the original (the original then has a chunk of that shape there, or says no): a
        // time range of whole chunks is copied without decoding. A chunk reaching past the
        // view's end is decoded: its stored tail would hold the original's values beyond the
        // cut.
        let mut offsets = Vec::with_capacity(chunk.offsets.len());
        for (d, sel) in self.sels(var).into_iter().enumerate() {
            let (o, n) = (*chunk.offsets.get(d)?, *chunk.shape.get(d)?);
            match sel {
                None => offsets.push(o),
                Some(s) => {
                    if o.checked_add(n)? > s.len() {
                        return None;
                    }
                    match s.segments(o, n).as_slice() {
                        [r] if r.contiguous() => offsets.push(r.first),
                        _ => return None,
                    }
                }
            }
        }
        self.src.raw_chunk(
            self.original,
            var,
            ChunkRequest {
                offsets: &offsets,
                shape: chunk.shape,
                chain: chunk.chain,
            },
        )
    }

    fn unwritten(&self, _ds: &Dataset, var: VarId, slab: Slab) -> bool {
        if !self.affects(var) {
            return self.src.unwritten(self.original, var, slab);
        }
        // every kept element lies in one of the runs' boxes: unwritten there, unwritten here
        let boxes = self.run_boxes(var, slab);
        let grid: Vec<u64> = boxes.iter().map(|b| b.len() as u64).collect();
        if grid.contains(&0) {
            return false;
        }
        let mut which = vec![0u64; grid.len()];
        loop {
            let start: Vec<u64> = (0..grid.len())
                .map(|d| boxes[d][which[d] as usize].0)
                .collect();
            let count: Vec<u64> = (0..grid.len())
                .map(|d| boxes[d][which[d] as usize].1)
                .collect();
            if !self
                .src
                .unwritten(self.original, var, Slab::new(&start, &count))
            {
                return false;
            }
            if !crate::next_index(&mut which, &grid) {
                return true;
            }
        }
    }

    fn stored_regions(&self, _ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
        let regions = self.src.stored_regions(self.original, var)?;
        if !self.affects(var) {
            return Some(regions);
        }
        // a stored region's kept elements form one box of the view per run it meets
        let sels = self.sels(var);
        let mut out = Vec::new();
        for r in regions {
            let per_dim: Vec<Vec<(u64, u64)>> = (0..r.start.len())
                .map(|d| match sels.get(d).copied().flatten() {
                    None => vec![(r.start[d], r.count[d])],
                    Some(s) => kept_in(s, r.start[d], r.count[d]),
                })
                .collect();
            let grid: Vec<u64> = per_dim.iter().map(|b| b.len() as u64).collect();
            if grid.contains(&0) {
                continue;
            }
            let mut which = vec![0u64; grid.len()];
            loop {
                let pick = |f: fn(&(u64, u64)) -> u64| -> Vec<u64> {
                    (0..grid.len())
                        .map(|d| f(&per_dim[d][which[d] as usize]))
                        .collect()
                };
                out.push(Region {
                    start: pick(|b| b.0),
                    count: pick(|b| b.1),
                });
                if !crate::next_index(&mut which, &grid) {
                    break;
                }
            }
        }
        Some(out)
    }

    fn placement(&self, _ds: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
        // a cut variable: the original's chunks the subset keeps whole, else chunks of the
        // view's own to be encoded from its values (subset/chunks.rs)
        if self.affects(var) {
            return self.cut_placement(var);
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
        assert!(e("lat,2,1").contains("only a longitude wraps"));
        assert!(e("lat,11.,12.").contains("no coordinate lies"));
        assert!(e("time,1.").contains("needs a coordinate variable"));
    }

    /// `lon` (0, 45, .., 315 degrees east) and `v(lat, lon)`, chunked 1 x `chunk`.
    fn globe(chunk: u64) -> (Dataset, VarId) {
        let mut ds = Dataset::new("w");
        let lat = ds.add_dim(ROOT, "lat", 2, false);
        let lon = ds.add_dim(ROOT, "lon", 8, false);
        let c = ds.add_var(ROOT, "lon", NcType::Atomic(AtomicType::Float), vec![lon]);
        ds.var_mut(c).data = Some(Values::Float((0..8).map(|i| i as f32 * 45.).collect()));
        ds.var_mut(c)
            .atts
            .push(crate::Attribute::text("units", "degrees_east"));
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![lat, lon]);
        ds.var_mut(v).storage.chunk_sizes = Some(vec![1, chunk]);
        (ds, v)
    }

    /// Reads `v` as the values 0..16, and refuses any box holding neither of its two ends
    /// (so a wrapped read that asked for the middle would fail).
    struct Ends;
    impl DataSource for Ends {
        fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
            if ds.var(var).name != "v" {
                return InMemory.read(ds, var, slab);
            }
            if slab.start[1] > 1 && slab.start[1] + slab.count[1] < 7 {
                return Err(format!("read the middle: {:?}", slab.start).into());
            }
            let all = Values::Int((0..16).collect());
            let shape = ds.shape(var);
            let idx: Vec<usize> = (0..slab.count[0])
                .flat_map(|i| (0..slab.count[1]).map(move |j| (i, j)))
                .map(|(i, j)| ((slab.start[0] + i) * shape[1] + slab.start[1] + j) as usize)
                .collect();
            Ok(all.gather(&idx))
        }
        fn stored_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
            if ds.var(var).name != "v" {
                return None;
            }
            // one stored region: row 1, columns 0 to 3
            Some(vec![Region {
                start: vec![1, 0],
                count: vec![1, 4],
            }])
        }
    }

    #[test]
    fn a_longitude_range_wraps_and_reads_only_its_ends() {
        for chunk in [2, 8] {
            let (ds, v) = globe(chunk);
            let (view, src) = subset(&ds, &Ends, &specs(&["lon,300.,50."])).unwrap();
            assert_eq!(view.shape(v), vec![2, 3]);
            assert_eq!(
                view.var(VarId(0)).data,
                Some(Values::Float(vec![315., 0., 45.]))
            );
            let got = src.read(&view, v, Slab::new(&[0, 0], &[2, 3])).unwrap();
            assert_eq!(got, Values::Int(vec![7, 0, 1, 15, 8, 9]));
            // the stored region (row 1, lon 0..3) is view row 1, lon 1..2
            let r = Region {
                start: vec![1, 1],
                count: vec![1, 2],
            };
            assert_eq!(src.stored_regions(&view, v), Some(vec![r]));
            // a stride runs on across the wrap; an index range wraps too
            let (_, src) = subset(&ds, &Ends, &specs(&["lon,300.,50.,2"])).unwrap();
            let got = src.read(&view, v, Slab::new(&[0, 0], &[1, 2])).unwrap();
            assert_eq!(got, Values::Int(vec![7, 1]));
            let (view, src) = subset(&ds, &Ends, &specs(&["lon,6,1"])).unwrap();
            let got = src.read(&view, v, Slab::new(&[1, 1], &[1, 3])).unwrap();
            assert_eq!(got, Values::Int(vec![15, 8, 9]));
        }
        // without degrees east, MIN > MAX is an error
        let (mut ds, _) = globe(2);
        ds.var_mut(VarId(0)).atts.clear();
        let e = subset(&ds, &Ends, &specs(&["lon,300.,50."])).err().unwrap();
        assert!(e.to_string().contains("only a longitude wraps"), "{e}");
    }

    #[test]
    fn several_ranges_of_one_dimension_are_joined_in_order() {
        let (ds, v) = globe(2);
        let (view, src) = subset(&ds, &Ends, &specs(&["lon,5,6", "lon,0,2"])).unwrap();
        assert_eq!(
            view.var(VarId(0)).data,
            Some(Values::Float(vec![0., 45., 90., 225., 270.]))
        );
        let got = src.read(&view, v, Slab::new(&[0, 1], &[1, 4])).unwrap();
        assert_eq!(got, Values::Int(vec![1, 2, 5, 6]));
        let (view, _) = subset(&ds, &Ends, &specs(&["lon,1,6,3", "lon,0,1"])).unwrap();
        assert_eq!(
            view.var(VarId(0)).data,
            Some(Values::Float(vec![0., 45., 180.]))
        );
    }

    #[test]
    fn whole_chunks_inside_a_stride_1_cut_pass_through_raw() {
        // the original gives the stored chunk at any offsets that are multiples of (2, 4),
        // with the shape (2, 4): its bytes name the offsets asked
        struct Raw;
        impl DataSource for Raw {
            fn read(&self, _: &Dataset, _: VarId, _: Slab) -> Result<Values, DataError> {
                Err("unused".into())
            }
            fn raw_chunk(&self, _: &Dataset, _: VarId, c: ChunkRequest) -> Option<Vec<u8>> {
                let aligned = c.offsets[0].is_multiple_of(2) && c.offsets[1].is_multiple_of(4);
                (aligned && c.shape == [2, 4]).then(|| c.offsets.iter().map(|&o| o as u8).collect())
            }
        }
        let (ds, v) = grid();
        let ask = |specs_: &[&str], offsets: &[u64], shape: &[u64]| {
            let (view, src) = subset(&ds, &Raw, &specs(specs_)).unwrap();
            src.raw_chunk(
                &view,
                v,
                ChunkRequest {
                    offsets,
                    shape,
                    chain: &[],
                },
            )
        };
        // time 2..5 of 6: the view's chunk at time 2 is the original's at time 4
        assert_eq!(ask(&["time,2,5"], &[0, 0], &[2, 4]), Some(vec![2, 0]));
        assert_eq!(ask(&["time,2,5"], &[2, 0], &[2, 4]), Some(vec![4, 0]));
        // time 1..4: the original has no chunk at time 1 or 3
        assert_eq!(ask(&["time,1,4"], &[0, 0], &[2, 4]), None);
        // a chunk reaching past the view's end (time 2..4 is 3 long) is not taken raw
        assert_eq!(ask(&["time,2,4"], &[2, 0], &[2, 4]), None);
        // a stride, or a cut through the chunk's other dimension, never is
        assert_eq!(ask(&["time,0,5,2"], &[0, 0], &[2, 4]), None);
        assert_eq!(ask(&["lat,0,1"], &[0, 0], &[2, 2]), None);
        // a dimension left whole keeps its offsets
        assert_eq!(ask(&["lat,0,3"], &[4, 0], &[2, 4]), Some(vec![4, 0]));
    }

    #[test]
    fn one_box_stride_and_stored_regions() {
        let (mut ds, v) = grid();
        ds.var_mut(v).storage.chunk_sizes = None;
        let (view, src) = subset(&ds, &InMemory, &specs(&["time,,,3", "lat,1,2"])).unwrap();
        let got = src.read(&view, v, Slab::new(&[0, 0], &[2, 2])).unwrap();
        assert_eq!(got, Values::Int(vec![1, 2, 13, 14]));
        let sel = DimSelection {
            runs: vec![Run {
                first: 1,
                count: 3,
                stride: 2,
            }],
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
