//! Reading variable data by hyperslab, so large variables stream instead of loading whole.

use crate::{Dataset, Values, VarId};

/// Boxed error of a data source (each backend has its own error type).
pub type DataError = Box<dyn std::error::Error + Send + Sync>;

/// A hyperslab of a variable: `count[i]` elements from `start[i]` along each dimension, read
/// or written row-major (the last dimension fastest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slab<'a> {
    /// The first index along each dimension.
    pub start: &'a [u64],
    /// The number of elements along each dimension.
    pub count: &'a [u64],
}

impl<'a> Slab<'a> {
    /// The hyperslab of `count` elements from `start`.
    pub fn new(start: &'a [u64], count: &'a [u64]) -> Slab<'a> {
        Slab { start, count }
    }

    /// The number of elements it holds.
    pub fn len(&self) -> u64 {
        self.count.iter().product()
    }

    /// True when it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A stored chunk asked of [`DataSource::raw_chunk`]: the one whose first element is at
/// `offsets`, if it is stored as `shape` with `chain` applied (filter ids and stored
/// parameters, in application order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkRequest<'a> {
    /// The chunk's first element.
    pub offsets: &'a [u64],
    /// The chunk shape the reader wants.
    pub shape: &'a [u64],
    /// The filter chain the reader can take as it is stored.
    pub chain: &'a [crate::FilterSpec],
}

/// A hyperslab held by value: `count[i]` elements from `start[i]` along each dimension (see
/// [`DataSource::stored_regions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The first index along each dimension.
    pub start: Vec<u64>,
    /// The number of elements along each dimension.
    pub count: Vec<u64>,
}

impl Region {
    /// The chunk of shape `chunk` that begins at `start`, clipped to an array of `shape`;
    /// `None` when it begins past the array's end (a reader never reads it) or the ranks
    /// differ.
    pub fn chunk_at(start: Vec<u64>, chunk: &[u64], shape: &[u64]) -> Option<Region> {
        let rank = shape.len();
        if start.len() != rank || chunk.len() != rank || (0..rank).any(|d| start[d] >= shape[d]) {
            return None;
        }
        let count = (0..rank)
            .map(|d| chunk[d].min(shape[d] - start[d]))
            .collect();
        Some(Region { start, count })
    }

    /// The cells of a grid of `chunk`-shaped cells (C order, `grid` cells along each
    /// dimension) this region overlaps, as linear cell numbers, appended to `out`; false when
    /// that would be more than `limit` cells in all (then `out` is left as it was).
    pub fn grid_cells(&self, chunk: &[u64], grid: &[u64], limit: u64, out: &mut Vec<u64>) -> bool {
        let rank = chunk.len();
        if self.start.len() != rank || self.count.len() != rank || grid.len() != rank {
            return false;
        }
        if self.count.contains(&0) {
            return true;
        }
        let first: Vec<u64> = (0..rank).map(|d| self.start[d] / chunk[d].max(1)).collect();
        let last: Vec<u64> = (0..rank)
            .map(|d| ((self.start[d] + self.count[d] - 1) / chunk[d].max(1)).min(grid[d] - 1))
            .collect();
        let n = (0..rank).try_fold(1u64, |a, d| {
            a.checked_mul(last[d].saturating_sub(first[d]) + 1)
        });
        match n {
            Some(n) if n <= limit.saturating_sub(out.len() as u64) => {}
            _ => return false,
        }
        let mut cell = first.clone();
        loop {
            out.push((0..rank).fold(0u64, |a, d| a * grid[d] + cell[d]));
            if !next_cell(&mut cell, &first, &last) {
                return true;
            }
        }
    }
}

/// Steps `cell` to the next cell of the box `first..=last` (inclusive along each dimension),
/// last dimension fastest. False when the walk is done (`cell` is back at `first`).
pub fn next_cell(cell: &mut [u64], first: &[u64], last: &[u64]) -> bool {
    let mut d = cell.len();
    loop {
        if d == 0 {
            return false;
        }
        d -= 1;
        if cell[d] < last[d] {
            cell[d] += 1;
            return true;
        }
        cell[d] = first[d];
    }
}

/// The cells of a grid of `chunk`-shaped cells that any of `regions` overlaps, as sorted
/// linear cell numbers without repeats; `None` when that would be more than `limit` cells.
pub fn cells_touched(
    regions: &[Region],
    chunk: &[u64],
    grid: &[u64],
    limit: u64,
) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    for r in regions {
        if !r.grid_cells(chunk, grid, limit, &mut out) {
            return None;
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// The first `n` elements in row-major order of an array of `shape`, as at most one
/// hyperslab per dimension (whole leading rows, then the partial row's whole sub-rows, and so
/// on): what a CDL that gives only the first values of a variable stores.
pub fn prefix_regions(shape: &[u64], n: u64) -> Vec<Region> {
    let rank = shape.len();
    let mut out = Vec::new();
    if rank == 0 {
        if n > 0 {
            out.push(Region {
                start: Vec::new(),
                count: Vec::new(),
            });
        }
        return out;
    }
    let total = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
    let mut left = total.map_or(n, |t| n.min(t));
    // at: the index of the first element not yet covered, dimension by dimension
    let mut at = vec![0u64; rank];
    for d in 0..rank {
        let below = shape[d + 1..]
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b));
        let Some(below) = below.filter(|&b| b > 0) else {
            break;
        };
        let rows = left / below;
        if rows > 0 {
            let mut count: Vec<u64> = shape.to_vec();
            count[..d].iter_mut().for_each(|c| *c = 1);
            count[d] = rows;
            // `at` is zero from dimension d on: the rows begin at the first uncovered index
            out.push(Region {
                start: at.clone(),
                count,
            });
        }
        left -= rows * below;
        if left == 0 {
            break;
        }
        at[d] = rows;
    }
    out
}

/// The answer of [`DataSource::read_le_bytes`]: `None` when not offered, else the bytes or
/// the error reading them.
pub type MaybeBytes = Option<Result<Vec<u8>, DataError>>;

/// Something that can read a hyperslab of a variable's data.
pub trait DataSource: Sync {
    /// Read the hyperslab `slab` of `var` (row-major result).
    ///
    /// # Errors
    /// When the data cannot be read or decoded.
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError>;

    /// The same hyperslab as little-endian element bytes, row-major, for variables of a
    /// fixed-size atomic type (not `string`), when the source has the bytes at hand more cheaply
    /// than a typed vector (a copy then moves bytes without converting them twice).
    /// `None`: not offered here, use [`DataSource::read`].
    fn read_le_bytes(&self, ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let _ = (ds, var, slab);
        None
    }

    /// The strided hyperslab `slab` of `var`, every `stride[d]`-th index along dimension `d`
    /// from `slab.start[d]`, `slab.count[d]` of them (row-major result), when this source cuts
    /// it in one request of its own: an OPeNDAP server does (`var[start:stride:stop]`), so a
    /// subset asks the server for just what it keeps instead of the whole variable. `None`:
    /// not offered (read boxes through [`DataSource::read`] and pick the elements).
    fn read_strided(
        &self,
        ds: &Dataset,
        var: VarId,
        slab: Slab,
        stride: &[u64],
    ) -> Option<Result<Values, DataError>> {
        let _ = (ds, var, slab, stride);
        None
    }

    /// Told that the reads that follow are parts of variables (a `--dimension` subset is
    /// read through this source): a source that would fetch every variable in one request
    /// at its first read (a DAP4 server's `URL.dap`) fetches each variable, or each strided
    /// hyperslab ([`DataSource::read_strided`]), alone instead. Nothing for other sources.
    fn will_read_parts(&self) {}

    /// The stored bytes of the chunk `chunk` asks for, still filtered, when this source stores
    /// the variable in little-endian chunks of exactly `chunk.shape` with exactly `chunk.chain`
    /// applied to that chunk: a copy to the same chunking and filters then moves the bytes
    /// without decoding them. `None`: not offered for this chunk (decode through
    /// [`DataSource::read`]).
    fn raw_chunk(&self, ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        let _ = (ds, var, chunk);
        None
    }

    /// True when this source stores nothing for the hyperslab, so that reading it gives the
    /// variable's fill value (`_FillValue`, or its type's default) everywhere: a copy then
    /// leaves the same region of its output unwritten (it reads as the same fill) instead of
    /// producing and encoding fill values, which for a chunk declared but never written could
    /// be gigabytes. False when unknown.
    fn unwritten(&self, ds: &Dataset, var: VarId, slab: Slab) -> bool {
        let _ = (ds, var, slab);
        false
    }

    /// Every region this source stores data for `var` in, as hyperslabs (a stored chunk each,
    /// clipped to the variable's shape), when it can list them from what it holds (a chunk
    /// index): outside them the variable reads as its fill value, as
    /// [`DataSource::unwritten`] would say of any slab there, so a copy visits only these
    /// regions — time and memory follow what is stored, not what is declared (a 2^40-element
    /// variable with three chunks written costs three chunks). `None`: cannot say (then every
    /// region is asked about).
    fn stored_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
        let _ = (ds, var);
        None
    }

    /// Where variable `var`'s values are stored ([`crate::Placement`]: chunks as byte ranges of
    /// a file, or why they have none), for a writer of references that points at the bytes in
    /// place (`ncdump-rs --kerchunk`). `None`: this source cannot say (data in memory, a Zarr
    /// store, a source that transforms what it reads).
    fn placement(&self, ds: &Dataset, var: VarId) -> Option<Result<crate::Placement, DataError>> {
        let _ = (ds, var);
        None
    }

    /// Records `first .. first + n` appended to `out` exactly as a classic (CDF) file whose
    /// records are laid out as `layout` says stores them (big-endian, interleaved), when this
    /// source stores every one of those records so: a classic writer then moves whole records
    /// with one read, without a read and two byte swaps per variable. `None`: not offered
    /// (`out` is left as it was); the writer reads variable by variable.
    fn stored_records(
        &self,
        ds: &Dataset,
        first: u64,
        n: u64,
        layout: &RecordLayout,
        out: &mut Vec<u8>,
    ) -> Option<Result<(), DataError>> {
        let _ = (ds, first, n, layout, out);
        None
    }
}

/// The layout of a classic file's records asked of [`DataSource::stored_records`]: each record
/// is `recsize` bytes, holding each of `vars` (every record variable, in the order they are
/// stored) back to back from its start, with no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLayout {
    /// Bytes of one record.
    pub recsize: u64,
    /// The record variables, in the order their records are stored, with their bytes per
    /// record.
    pub vars: Vec<(VarId, u64)>,
}

/// Steps `idx` to the next index of a row-major walk over a hyperslab of `count` elements
/// along each dimension (the last dimension fastest; `count` may be longer than `idx`, whose
/// dimensions are the leading ones). False when the walk is done: `idx` is back at zero.
pub fn next_index(idx: &mut [u64], count: &[u64]) -> bool {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < count[d] {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// Data held in memory in [`crate::Variable::data`]; missing data and missing tails read as fill.
#[derive(Debug, Default, Clone, Copy)]
pub struct InMemory;

impl DataSource for InMemory {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;
        let shape = ds.shape(var);
        if start.len() != shape.len() || count.len() != shape.len() {
            return Err(format!(
                "variable {}: hyperslab rank {} does not match variable rank {}",
                ds.var(var).name,
                start.len(),
                shape.len()
            )
            .into());
        }
        for i in 0..shape.len() {
            if start[i].checked_add(count[i]).is_none_or(|e| e > shape[i]) {
                return Err(format!(
                    "variable {}: hyperslab {}+{} exceeds dimension length {}",
                    ds.var(var).name,
                    start[i],
                    count[i],
                    shape[i]
                )
                .into());
            }
        }
        let total: u64 = count.iter().product();
        // user types without a fill value read as netCDF-C fills them; a stored fill
        // (`Dataset::stored_fill`) is what a writer leaves unwritten regions reading as
        let fill = ds
            .stored_fill(var)
            .or_else(|| Some(ds.default_value(ds.var(var).ty)));
        let v = ds.var(var);
        let data = v.data.as_ref();
        let proto = match (data, &fill) {
            (Some(d), _) => d.slice(0, 0),
            (None, Some(f)) => f.slice(0, 0),
            (None, None) => {
                return Err(format!("variable {}: no data and no fill value", v.name).into())
            }
        };
        let mut out = proto;
        // strides of the full array
        let rank = shape.len();
        let mut strides = vec![1u64; rank];
        for i in (0..rank.saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        let inner = if rank == 0 { 1 } else { count[rank - 1] };
        if total == 0 {
            return Ok(out);
        }
        let rows = total / inner.max(1);
        let mut idx = vec![0u64; rank.saturating_sub(1)];
        for _ in 0..rows {
            let mut off = 0u64;
            for (i, &k) in idx.iter().enumerate() {
                off += (start[i] + k) * strides[i];
            }
            if rank > 0 {
                off += start[rank - 1];
            }
            let have = data.map_or(0, |d| d.len() as u64);
            let avail = have.saturating_sub(off).min(inner);
            if avail > 0 {
                if let Some(d) = data {
                    out.extend_from(&d.slice(off as usize, avail as usize));
                }
            }
            if avail < inner {
                let f = match &fill {
                    Some(f) => f.clone(),
                    None => {
                        return Err(format!(
                            "variable {}: data too short and no fill value",
                            v.name
                        )
                        .into())
                    }
                };
                if let Some(rep) = Values::repeat_first(&f, (inner - avail) as usize) {
                    out.extend_from(&rep);
                }
            }
            next_index(&mut idx, count);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AtomicType, Attribute, NcType, ROOT};

    fn two_by_three() -> (Dataset, VarId) {
        let mut ds = Dataset::new("t");
        let a = ds.add_dim(ROOT, "a", 2, false);
        let b = ds.add_dim(ROOT, "b", 3, false);
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![a, b]);
        (ds, v)
    }

    #[test]
    fn next_index_walks_row_major() {
        let count = [2, 3, 7];
        let mut idx = [0u64; 2];
        let mut seen = vec![idx];
        while next_index(&mut idx, &count) {
            seen.push(idx);
        }
        assert_eq!(seen, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
        assert_eq!(idx, [0, 0]);
        assert!(!next_index(&mut [], &count));
    }

    #[test]
    fn hyperslab_of_in_memory_data() {
        let (mut ds, v) = two_by_three();
        ds.var_mut(v).data = Some(Values::Int(vec![0, 1, 2, 10, 11, 12]));
        let got = InMemory.read(&ds, v, Slab::new(&[0, 1], &[2, 2])).unwrap();
        assert_eq!(got, Values::Int(vec![1, 2, 11, 12]));
        let got = InMemory.read(&ds, v, Slab::new(&[1, 0], &[1, 3])).unwrap();
        assert_eq!(got, Values::Int(vec![10, 11, 12]));
    }

    #[test]
    fn short_data_reads_as_fill_in_its_tail() {
        let (mut ds, v) = two_by_three();
        ds.var_mut(v)
            .atts
            .push(Attribute::new("_FillValue", Values::Int(vec![-1])));
        ds.var_mut(v).data = Some(Values::Int(vec![5, 6, 7, 8]));
        let got = InMemory.read(&ds, v, Slab::new(&[0, 0], &[2, 3])).unwrap();
        assert_eq!(got, Values::Int(vec![5, 6, 7, 8, -1, -1]));
        // no data at all: default fill
        ds.var_mut(v).data = None;
        ds.var_mut(v).atts.clear();
        let got = InMemory.read(&ds, v, Slab::new(&[1, 2], &[1, 1])).unwrap();
        assert_eq!(got, Values::Int(vec![crate::FILL_INT]));
    }

    #[test]
    fn out_of_range_hyperslab_is_an_error() {
        let (ds, v) = two_by_three();
        let e = InMemory
            .read(&ds, v, Slab::new(&[0, 2], &[1, 2]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exceeds dimension length 3"), "{e}");
        let e = InMemory
            .read(&ds, v, Slab::new(&[0], &[1]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 1 does not match variable rank 2"), "{e}");
    }

    #[test]
    fn scalar_reads_one_value() {
        let mut ds = Dataset::new("s");
        let v = ds.add_var(ROOT, "x", NcType::Atomic(AtomicType::Double), vec![]);
        ds.var_mut(v).data = Some(Values::Double(vec![2.5]));
        assert_eq!(
            InMemory.read(&ds, v, Slab::new(&[], &[])).unwrap(),
            Values::Double(vec![2.5])
        );
    }
}

#[cfg(test)]
mod region_tests {
    use super::*;

    fn elems(r: &[Region], shape: &[u64]) -> Vec<u64> {
        // every element's row-major number, region by region
        let mut out = Vec::new();
        for reg in r {
            let mut idx = vec![0u64; shape.len()];
            loop {
                let lin = (0..shape.len()).fold(0u64, |a, d| a * shape[d] + reg.start[d] + idx[d]);
                out.push(lin);
                if !next_index(&mut idx, &reg.count) {
                    break;
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn prefixes_cover_exactly_the_first_elements() {
        for shape in [vec![7u64], vec![3, 4], vec![2, 3, 5], vec![4, 1, 3]] {
            let total: u64 = shape.iter().product();
            for n in 0..=total {
                let r = prefix_regions(&shape, n);
                assert!(r.len() <= shape.len(), "{shape:?} {n}: {r:?}");
                assert_eq!(
                    elems(&r, &shape),
                    (0..n).collect::<Vec<_>>(),
                    "{shape:?} {n}: {r:?}"
                );
            }
        }
        // declared far beyond memory: still a region per dimension at most
        let r = prefix_regions(&[1 << 31, 1 << 31], 3);
        assert_eq!(
            r,
            vec![Region {
                start: vec![0, 0],
                count: vec![1, 3]
            }]
        );
    }

    #[test]
    fn cells_touched_lists_each_overlapped_chunk_once() {
        let regions = vec![
            Region {
                start: vec![0, 0],
                count: vec![1, 3],
            },
            Region {
                start: vec![3, 9],
                count: vec![2, 1],
            },
        ];
        // 10 x 10 in 4 x 4 chunks: a 3 x 3 grid
        let got = cells_touched(&regions, &[4, 4], &[3, 3], 100);
        assert_eq!(got, Some(vec![0, 2, 5]));
        assert_eq!(cells_touched(&regions, &[4, 4], &[3, 3], 2), None);
        // a 2^62-element grid with nothing stored
        assert_eq!(
            cells_touched(&[], &[1, 1], &[1 << 31, 1 << 31], 10),
            Some(vec![])
        );
    }
}
