//! References of many files as one (kerchunk's `MultiZarrToZarr(concat_dims=[DIM])`,
//! VirtualiZarr's concat): the joined dataset's metadata, then each joined array's chunks
//! file by file, renumbered along the join dimension, each pointing at its own file.
//!
//! The join itself (which files, how long the joined dimension is, the rebased coordinate)
//! is the caller's ([`JoinedInputs`], nc-multi's join); this module plans the arrays as the
//! single-file writer does, from the first input's placements, and streams the chunks of
//! each input into the sink in turn, asking the inputs one at a time (the caller keeps only
//! a bounded number open). Nothing but one input's placement of one variable is held.

use std::collections::HashMap;

use nc_dataset::{
    records_per_chunk, DataError, DataSource, Dataset, Placement, Slab, StoredChunks, Values,
    VarId, ROOT,
};

use super::{
    chunk_grid, emit_entries, plan_group, plan_var, select, write_chunk_refs, write_chunks,
    ChunkRef, Content, Entry, ReferenceOptions, ReferenceSink, VarPlan,
};
use crate::error::ZarrError;

/// The inputs of a join, as the reference writer asks for them. The joined dataset is the
/// first input's with the join dimensions lengthened, so its variables have the first
/// input's ids; in the other inputs they are found by path.
pub trait JoinedInputs: Sync {
    /// How many inputs.
    fn inputs(&self) -> usize;
    /// Input `input` as the user gave it, for messages.
    fn name(&self, input: usize) -> String;
    /// The URL the references to input `input`'s bytes carry (as the single-file writer
    /// names a file: its absolute path, or its URL).
    ///
    /// # Errors
    /// A path that cannot be resolved or is not UTF-8.
    fn url(&self, input: usize) -> Result<String, ZarrError>;
    /// For a variable of the joined dataset that runs along a join dimension: the axis of
    /// that dimension and where each input's indices begin along it (one more entry than
    /// inputs, the last the joined length). `None`: the variable is the first input's.
    fn join(&self, var: VarId) -> Option<(usize, &[u64])>;
    /// True for a join dimension's coordinate variable, whose joined values (rebased to the
    /// first input's units) the joined source reads and the references carry inline.
    fn is_coordinate(&self, var: VarId) -> bool;
    /// Call `f` with input `input`'s dataset and source.
    ///
    /// # Errors
    /// The input cannot be opened again (or no longer has the records it was planned with);
    /// what `f` returns.
    fn with_input(
        &self,
        input: usize,
        f: &mut dyn FnMut(&Dataset, &dyn DataSource) -> Result<(), ZarrError>,
    ) -> Result<(), ZarrError>;
}

/// The joined source for values, the first input for placements: what the single-file
/// planner asks, answered for the joined dataset.
struct FirstPlacement<'a> {
    src: &'a dyn DataSource,
    inputs: &'a dyn JoinedInputs,
    per: &'a RecordsPerChunk,
}

/// The records per chunk of each joined variable whose records are strided (classic record
/// variables), by netCDF path: one number for all inputs ([`joined_records_per_chunk`]).
type RecordsPerChunk = HashMap<String, u64>;

/// An input's source with its strided records regrouped to the join's records per chunk.
struct Regrouped<'a> {
    src: &'a dyn DataSource,
    per: &'a RecordsPerChunk,
}

impl DataSource for Regrouped<'_> {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        self.src.read(ds, var, slab)
    }

    fn placement(&self, ds: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
        let p = self.src.placement(ds, var)?;
        let Some(&per) = self.per.get(&ds.var_path(var)) else {
            return Some(p);
        };
        // records that cannot be grouped so stay as they are: the chunk check then refuses
        // the input, naming both chunkings
        Some(p.map(|p| match p {
            Placement::Chunks(m) => Placement::Chunks(m.with_records_per_chunk(per).unwrap_or(m)),
            other => other,
        }))
    }
}

/// For each selected joined variable whose first input stores its records strided (a
/// classic record variable), how many records one chunk of the joined array holds. A Zarr
/// chunk grid is regular and a chunk cannot straddle two files, so the number must divide
/// every input's record count; and several records make one byte range only where every
/// input has them back to back (a classic file with a single record variable). So: the
/// largest divisor of all the inputs' record counts that keeps a chunk within
/// [`nc_dataset::RECORD_CHUNK_BYTES`] when every input's records are back to back, else one
/// record per chunk (each input's own grouping would differ from file to file when their
/// record counts do). Asks every input's placement of those variables once.
fn joined_records_per_chunk(
    ds: &Dataset,
    inputs: &dyn JoinedInputs,
    selected: &Option<Vec<bool>>,
) -> Result<RecordsPerChunk, ZarrError> {
    let mut out = RecordsPerChunk::new();
    for v in ds.all_vars() {
        if selected.as_ref().is_some_and(|s| !s[v.0]) || inputs.is_coordinate(v) {
            continue;
        }
        let Some((0, offsets)) = inputs.join(v) else {
            continue;
        };
        let path = ds.var_path(v);
        let mut strided = true;
        // (bytes of one record, the gcd of the record counts); None: some input's records
        // are not back to back
        let mut grouped: Option<(u64, u64)> = None;
        for i in 0..inputs.inputs() {
            let records = offsets[i + 1] - offsets[i];
            if records == 0 && i > 0 {
                continue;
            }
            let mut here = None;
            inputs.with_input(i, &mut |d, s| {
                if let Some(Ok(Placement::Chunks(m))) =
                    find(d, &path).and_then(|w| s.placement(d, w))
                {
                    here = Some(m);
                }
                Ok(())
            })?;
            if i == 0 {
                strided = here
                    .as_ref()
                    .is_some_and(|m| matches!(m.chunks, StoredChunks::Strided { .. }));
                if !strided {
                    break;
                }
                if records == 0 {
                    continue;
                }
            }
            grouped = match (here.and_then(|m| m.back_to_back_records()), grouped) {
                // the first input with records
                (Some(r), None) if offsets[i] == 0 => Some(r),
                (Some((rec, n)), Some((rec0, g))) if rec == rec0 => Some((rec, gcd(g, n))),
                _ => {
                    grouped = None;
                    break;
                }
            };
        }
        if strided {
            let per = grouped.map_or(1, |(rec, g)| records_per_chunk(rec, g));
            out.insert(path, per);
        }
    }
    Ok(out)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl DataSource for FirstPlacement<'_> {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        self.src.read(ds, var, slab)
    }

    fn placement(&self, ds: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
        if self.inputs.is_coordinate(var) {
            // the joined coordinate's values (rebased), not any file's bytes
            return Some(Ok(Placement::Elsewhere {
                why: "the coordinate of the join".into(),
            }));
        }
        let path = ds.var_path(var);
        let mut out = None;
        let asked = self.inputs.with_input(0, &mut |d0, s0| {
            let s0 = Regrouped {
                src: s0,
                per: self.per,
            };
            out = find(d0, &path).and_then(|v0| s0.placement(d0, v0));
            Ok(())
        });
        match asked {
            Ok(()) => out,
            Err(e) => Some(Err(e.into())),
        }
    }
}

fn find(ds: &Dataset, path: &str) -> Option<VarId> {
    ds.all_vars().into_iter().find(|&v| ds.var_path(v) == path)
}

/// Chunks given to another sink with their index moved along the join axis.
struct Shifted<'a> {
    inner: &'a mut dyn ReferenceSink,
    axis: usize,
    by: u64,
    idx: Vec<u64>,
}

impl ReferenceSink for Shifted<'_> {
    fn metadata(&mut self, key: &str, text: &str) -> Result<(), ZarrError> {
        self.inner.metadata(key, text)
    }
    fn begin_array(&mut self, prefix: &str, grid: &[u64]) -> Result<(), ZarrError> {
        self.inner.begin_array(prefix, grid)
    }
    fn chunk(&mut self, idx: &[u64], r: ChunkRef<'_>) -> Result<(), ZarrError> {
        self.idx.clear();
        self.idx.extend_from_slice(idx);
        if let Some(x) = self.idx.get_mut(self.axis) {
            *x += self.by;
        }
        self.inner.chunk(&self.idx, r)
    }
    fn end_array(&mut self) -> Result<(), ZarrError> {
        self.inner.end_array()
    }
    fn finish(&mut self) -> Result<(), ZarrError> {
        self.inner.finish()
    }
}

/// Plan the joined dataset `ds` (its values read through `src`, the join's source) as one
/// reference set and give `sink` its metadata, then each array's chunks: an array along a
/// join dimension input by input, its chunk indices moved along the join axis to where the
/// input's records begin, each range pointing at its own input; a join coordinate's values
/// inline; every other variable the first input's. Returns the warnings (attributes left
/// out).
///
/// # Errors
/// As [`super::write_references`]; [`ZarrError::NotJoinable`] for an input whose chunks of a
/// joined variable cannot continue the joined chunk grid (another chunk shape, type or filter
/// chain than the first input's; records that do not fill its last chunk along the join
/// dimension when other records follow, which one Zarr chunk grid cannot express).
pub fn emit_joined_references(
    ds: &Dataset,
    src: &dyn DataSource,
    inputs: &dyn JoinedInputs,
    opts: &ReferenceOptions,
    sink: &mut dyn ReferenceSink,
) -> Result<Vec<String>, ZarrError> {
    let selected = select(ds, &opts.vars)?;
    let per = joined_records_per_chunk(ds, inputs, &selected)?;
    let first = FirstPlacement {
        src,
        inputs,
        per: &per,
    };
    let mut plan_opts = opts.clone();
    plan_opts.url = inputs.url(0)?;
    // the joined coordinate is always inline, however long
    for v in ds.all_vars() {
        if inputs.is_coordinate(v) {
            let bytes = ds
                .num_elements(v)
                .and_then(|n| n.checked_mul(8))
                .unwrap_or(u64::MAX);
            plan_opts.inline_limit = plan_opts.inline_limit.max(bytes);
        }
    }
    let mut warnings = Vec::new();
    let mut entries = Vec::new();
    plan_group(
        ds,
        &first,
        &plan_opts,
        ROOT,
        "",
        &selected,
        &mut entries,
        &mut warnings,
    )?;
    for e in &mut entries {
        if let Entry::Var(p) = e {
            check_axis(ds, inputs, p)?;
            first_fill(inputs, &plan_opts, &per, p)?;
        }
    }
    let registry = std::sync::OnceLock::new();
    emit_entries(&entries, sink, |p, sink| {
        match (inputs.join(p.var), &p.content) {
            (Some((axis, offsets)), Content::Refs { .. }) => {
                let j = JoinedArray {
                    ds,
                    inputs,
                    opts: &plan_opts,
                    plan: p,
                    axis,
                    offsets,
                    per: &per,
                };
                j.write(&registry, sink)
            }
            _ => write_chunks(ds, &first, &plan_opts, p, &registry, sink),
        }
    })?;
    sink.finish()?;
    Ok(warnings)
}

/// Chunks are given in C order of the grid, so a joined array's inputs follow one another
/// only when no dimension before the join axis has more than one chunk.
fn check_axis(ds: &Dataset, inputs: &dyn JoinedInputs, p: &VarPlan) -> Result<(), ZarrError> {
    let Some((axis, _)) = inputs.join(p.var) else {
        return Ok(());
    };
    if !matches!(p.content, Content::Refs { .. }) {
        return Ok(());
    }
    let shape = ds.shape(p.var);
    let before = shape[..axis]
        .iter()
        .zip(&p.chunk)
        .any(|(&n, &c)| n.div_ceil(c) > 1);
    if before {
        let dim = &ds.dim(ds.var(p.var).dims[axis]).name;
        return Err(ZarrError::NotJoinable {
            var: p.path.clone(),
            file: inputs.name(0),
            why: format!(
                "it is joined along \"{dim}\", which is not its first chunked dimension, so \
                 each file's chunks would not follow one another in the chunk grid; join \
                 along its first dimension, or copy the join first (nccopy-rs IN1 IN2 ... \
                 OUT.nc) and reference the copy"
            ),
        });
    }
    Ok(())
}

/// A joined array's `fill_value` as the first input's references have it: planned over the
/// joined shape, every chunk past the first input would look missing. Later inputs' missing
/// chunks read as this too (docs/compat.md).
fn first_fill(
    inputs: &dyn JoinedInputs,
    opts: &ReferenceOptions,
    per: &RecordsPerChunk,
    p: &mut VarPlan,
) -> Result<(), ZarrError> {
    if inputs.join(p.var).is_none() || !matches!(p.content, Content::Refs { .. }) {
        return Ok(());
    }
    let mut fill = None;
    inputs.with_input(0, &mut |d, s| {
        let s = &Regrouped { src: s, per };
        if let Some(v) = find(d, &p.path) {
            let mut ignored = Vec::new();
            let here = plan_var(d, s, opts, v, &p.key, &mut ignored)?;
            fill = here.zarray.get("fill_value").cloned();
        }
        Ok(())
    })?;
    if let (Some(f), Some(z)) = (fill, p.zarray.as_object_mut()) {
        z.insert("fill_value".into(), f);
    }
    Ok(())
}

/// One array along a join dimension, written input by input.
struct JoinedArray<'a> {
    ds: &'a Dataset,
    inputs: &'a dyn JoinedInputs,
    opts: &'a ReferenceOptions,
    plan: &'a VarPlan,
    axis: usize,
    offsets: &'a [u64],
    per: &'a RecordsPerChunk,
}

impl JoinedArray<'_> {
    fn write(
        &self,
        registry: &std::sync::OnceLock<std::sync::Arc<nc_filters::Registry>>,
        sink: &mut dyn ReferenceSink,
    ) -> Result<(), ZarrError> {
        let p = self.plan;
        let Some(grid) = chunk_grid(self.ds, p) else {
            return Ok(());
        };
        sink.begin_array(&p.key, &grid)?;
        let total = self.offsets.last().copied().unwrap_or(0);
        let c = p.chunk[self.axis];
        for i in 0..self.inputs.inputs() {
            let (lo, hi) = (self.offsets[i], self.offsets[i + 1]);
            if lo == hi {
                continue;
            }
            let refuse = |why: String| ZarrError::NotJoinable {
                var: p.path.clone(),
                file: self.inputs.name(i),
                why,
            };
            // earlier inputs all filled their last chunk, so `lo` starts a chunk
            if hi != total && !(hi - lo).is_multiple_of(c) {
                return Err(refuse(format!(
                    "its {} records along the join dimension do not fill whole chunks of \
                     length {c}, and one Zarr chunk grid cannot hold a chunk that straddles \
                     two files; rechunk the inputs with a chunk length that divides every \
                     file's record count (nccopy-rs -c), or copy the join (nccopy-rs IN1 IN2 \
                     ... OUT.nc) and reference the copy",
                    hi - lo
                )));
            }
            let mut opts = self.opts.clone();
            opts.url = self.inputs.url(i)?;
            let mut shifted = Shifted {
                inner: &mut *sink,
                axis: self.axis,
                by: lo / c,
                idx: Vec::new(),
            };
            self.inputs.with_input(i, &mut |d, s| {
                let s = &Regrouped {
                    src: s,
                    per: self.per,
                };
                let v = find(d, &p.path).ok_or_else(|| refuse("it is gone".into()))?;
                let mut ignored = Vec::new();
                let here = plan_var(d, s, &opts, v, &p.key, &mut ignored)?;
                let same = |k: &str| here.zarray.get(k) == p.zarray.get(k);
                if here.chunk != p.chunk || !same("dtype") || !same("filters") {
                    return Err(refuse(format!(
                        "its chunks are {:?} of {} with filters {}, the first file's {:?} of \
                         {} with filters {}; copy the inputs with one chunking and filter \
                         chain (nccopy-rs -c ... -F ...) first",
                        here.chunk,
                        here.zarray["dtype"],
                        here.zarray["filters"],
                        p.chunk,
                        p.zarray["dtype"],
                        p.zarray["filters"],
                    )));
                }
                if !matches!(here.content, Content::Refs { .. }) {
                    return Err(refuse(
                        "its bytes have no range to reference in this file, unlike the \
                         first file's"
                            .into(),
                    ));
                }
                write_chunk_refs(d, s, &opts, &here, registry, &mut shifted)
            })?;
        }
        sink.end_array()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::kerchunk::write_joined_references;
    use nc_dataset::{AtomicType, ChunkBytes, ChunkMap, InMemory, NcType, StoredChunk, StoredType};
    use serde_json::{json, Map, Value};

    /// Data in memory, placements by variable index.
    struct Mock(HashMap<usize, Placement>);

    impl DataSource for Mock {
        fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
            InMemory.read(ds, var, slab)
        }

        fn placement(&self, _: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
            self.0.get(&var.0).cloned().map(Ok)
        }
    }

    /// Inputs of a join along `t`: each a dataset (`time(t)` then `v(t, x)` with x = 3) and
    /// `v`'s placement; `time` is the join coordinate.
    struct Inputs {
        files: Vec<(Dataset, Mock)>,
        offsets: Vec<u64>,
    }

    impl JoinedInputs for Inputs {
        fn inputs(&self) -> usize {
            self.files.len()
        }
        fn name(&self, input: usize) -> String {
            format!("f{input}.nc")
        }
        fn url(&self, input: usize) -> Result<String, ZarrError> {
            Ok(format!("/d/f{input}.nc"))
        }
        fn join(&self, var: VarId) -> Option<(usize, &[u64])> {
            Some((0, self.offsets.as_slice())).filter(|_| var.0 <= 1)
        }
        fn is_coordinate(&self, var: VarId) -> bool {
            var.0 == 0
        }
        fn with_input(
            &self,
            input: usize,
            f: &mut dyn FnMut(&Dataset, &dyn DataSource) -> Result<(), ZarrError>,
        ) -> Result<(), ZarrError> {
            let (d, s) = &self.files[input];
            f(d, s)
        }
    }

    /// A dataset of `n` records: `time(t)` (doubles from `first`) and `v(t, x)`, x = 3.
    fn records(n: u64, first: u64) -> (Dataset, VarId) {
        let mut ds = Dataset::new("j");
        let t = ds.add_dim(ROOT, "t", n, true);
        let x = ds.add_dim(ROOT, "x", 3, false);
        let time = ds.add_var(ROOT, "t", NcType::Atomic(AtomicType::Double), vec![t]);
        ds.var_mut(time).data = Some(Values::Double(
            (first..first + n).map(|k| k as f64).collect(),
        ));
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Float), vec![t, x]);
        (ds, v)
    }

    fn map(chunk: Vec<u64>, chunks: StoredChunks) -> Placement {
        Placement::Chunks(ChunkMap {
            elem: StoredType::Float {
                size: 4,
                big_endian: true,
            },
            chunk,
            filters: Vec::new(),
            fill: None,
            file: None,
            chunks,
        })
    }

    /// A classic file's `v`: `count` chunks of `per` records (12 bytes each) at 100, one
    /// every `stride` bytes.
    fn strided(per: u64, stride: u64, count: u64) -> Placement {
        map(
            vec![per, 3],
            StoredChunks::Strided {
                offset: 100,
                stride,
                len: 12 * per,
                count,
            },
        )
    }

    /// A netCDF-4 file's `v` in chunks of `c` records: chunk i at 1000 + 100 i.
    fn listed(c: u64, n: u64) -> Placement {
        let list = (0..n.div_ceil(c))
            .map(|i| StoredChunk {
                index: vec![i, 0],
                bytes: ChunkBytes::Range {
                    offset: 1000 + 100 * i,
                    len: 50,
                },
            })
            .collect();
        map(vec![c, 3], StoredChunks::List(list))
    }

    /// The inputs of `records` counts, `v` placed by `place(count)`, and the joined dataset.
    fn join(counts: &[u64], place: impl Fn(u64) -> Placement) -> (Dataset, Inputs) {
        let mut files = Vec::new();
        let mut offsets = vec![0];
        for &n in counts {
            let (ds, v) = records(n, *offsets.last().unwrap());
            files.push((ds, Mock(HashMap::from([(v.0, place(n))]))));
            offsets.push(offsets.last().unwrap() + n);
        }
        let total = *offsets.last().unwrap();
        let (joined, _) = records(total, 0);
        (joined, Inputs { files, offsets })
    }

    /// The joined references of `counts` records (`place` each input's `v`).
    fn refs(
        counts: &[u64],
        place: impl Fn(u64) -> Placement,
    ) -> Result<Map<String, Value>, ZarrError> {
        let (ds, inputs) = join(counts, place);
        let mut out = Vec::new();
        let r = write_joined_references(
            &ds,
            &Mock(HashMap::new()),
            &inputs,
            &Default::default(),
            &mut out,
        );
        match r {
            Ok(_) => {
                let doc: Value = serde_json::from_slice(&out).unwrap();
                Ok(doc["refs"].as_object().unwrap().clone())
            }
            Err(e) => Err(e),
        }
    }

    /// `v`'s chunk keys and references, and its `.zarray` chunks.
    fn v_refs(refs: &Map<String, Value>) -> (Vec<(String, Value)>, Value) {
        let chunks = refs
            .iter()
            .filter(|(k, _)| k.starts_with("v/") && !k.contains("/."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let z: Value = serde_json::from_str(refs["v/.zarray"].as_str().unwrap()).unwrap();
        (chunks, z["chunks"].clone())
    }

    fn entry(k: &str, v: Value) -> (String, Value) {
        (k.to_string(), v)
    }

    #[test]
    fn each_inputs_chunks_move_along_the_join_axis_to_where_its_records_begin() {
        // chunks of 2 records: 4, then 2, then 3 (the last file may end inside a chunk)
        let refs = refs(&[4, 2, 3], |n| listed(2, n)).unwrap();
        let (chunks, shape) = v_refs(&refs);
        assert_eq!(shape, json!([2, 3]));
        assert_eq!(
            chunks,
            [
                entry("v/0.0", json!(["/d/f0.nc", 1000, 50])),
                entry("v/1.0", json!(["/d/f0.nc", 1100, 50])),
                entry("v/2.0", json!(["/d/f1.nc", 1000, 50])),
                entry("v/3.0", json!(["/d/f2.nc", 1000, 50])),
                entry("v/4.0", json!(["/d/f2.nc", 1100, 50])),
            ]
        );
        // the coordinate is inline: the joined values 0..9, little-endian
        let z: Value = serde_json::from_str(refs["t/.zarray"].as_str().unwrap()).unwrap();
        assert_eq!(
            (z["shape"].clone(), z["dtype"].clone()),
            (json!([9]), json!("<f8"))
        );
        assert!(refs["t/0"].as_str().unwrap().starts_with("base64:"));
    }

    #[test]
    fn a_chunk_straddling_two_inputs_is_refused_naming_the_input() {
        let e = refs(&[3, 2], |n| listed(2, n)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "variable \"/v\" of f0.nc cannot be referenced in the joined dataset: its 3 records along the join \
             dimension do not fill whole chunks of length 2, and one Zarr chunk grid cannot hold \
             a chunk that straddles two files; rechunk the inputs with a chunk length that \
             divides every file's record count (nccopy-rs -c), or copy the join (nccopy-rs IN1 \
             IN2 ... OUT.nc) and reference the copy"
        );
        // an empty input in the middle changes nothing
        let refs = refs(&[2, 0, 2], |n| listed(2, n)).unwrap();
        let (chunks, _) = v_refs(&refs);
        assert_eq!(
            chunks,
            [
                entry("v/0.0", json!(["/d/f0.nc", 1000, 50])),
                entry("v/1.0", json!(["/d/f2.nc", 1000, 50])),
            ]
        );
    }

    #[test]
    fn another_chunk_shape_than_the_first_inputs_is_refused() {
        let (ds, mut inputs) = join(&[2, 2], |n| listed(2, n));
        let v = VarId(1);
        inputs.files[1].1 .0.insert(v.0, listed(1, 2));
        let e = write_joined_references(
            &ds,
            &Mock(HashMap::new()),
            &inputs,
            &Default::default(),
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("variable \"/v\" of f1.nc cannot be referenced in the joined dataset: its chunks are [1, 3] of \">f4\" with filters null, the first file's [2, 3] of \">f4\" with filters null"),
            "{e}"
        );
    }

    #[test]
    fn records_back_to_back_are_grouped_by_a_divisor_of_every_inputs_count() {
        // classic files of 6, 4 and 8 records back to back (each alone would be one chunk of
        // its own length): 2 records per chunk, the largest dividing 6, 4 and 8
        let back = |n: u64| strided(n, 12 * n, 1);
        let (ds, inputs) = join(&[6, 4, 8], back);
        let per = joined_records_per_chunk(&ds, &inputs, &None).unwrap();
        assert_eq!(per, HashMap::from([("/v".to_string(), 2)]));
        let refs = refs(&[6, 4, 8], back).unwrap();
        let (chunks, shape) = v_refs(&refs);
        assert_eq!(shape, json!([2, 3]));
        let mut want = Vec::new();
        for (f, first, n) in [(0, 0, 3), (1, 3, 2), (2, 5, 4)] {
            for k in 0..n {
                want.push(entry(
                    &format!("v/{}.0", first + k),
                    json!([format!("/d/f{f}.nc"), 100 + 24 * k, 24]),
                ));
            }
        }
        // in C order of the grid: input by input
        assert_eq!(chunks, want);

        // the same counts: one chunk per input
        let (ds, inputs) = join(&[5, 5], back);
        assert_eq!(
            joined_records_per_chunk(&ds, &inputs, &None).unwrap(),
            HashMap::from([("/v".to_string(), 5)])
        );
        // counts with no common divisor but 1: one record per chunk
        let (ds, inputs) = join(&[3, 4], back);
        assert_eq!(
            joined_records_per_chunk(&ds, &inputs, &None).unwrap(),
            HashMap::from([("/v".to_string(), 1)])
        );
        let (chunks, _) = v_refs(&refs_of(&ds, &inputs));
        assert_eq!(chunks.len(), 7);
        assert_eq!(chunks[3], entry("v/3.0", json!(["/d/f1.nc", 100, 12])));
    }

    #[test]
    fn interleaved_records_anywhere_keep_one_record_per_chunk() {
        // the second file has its records 40 bytes apart (several record variables): every
        // input is referenced record by record, the first's grouping undone
        let (ds, mut inputs) = join(&[2, 2], |n| strided(n, 12 * n, 1));
        inputs.files[1].1 .0.insert(1, strided(1, 40, 2));
        assert_eq!(
            joined_records_per_chunk(&ds, &inputs, &None).unwrap(),
            HashMap::from([("/v".to_string(), 1)])
        );
        let (chunks, shape) = v_refs(&refs_of(&ds, &inputs));
        assert_eq!(shape, json!([1, 3]));
        assert_eq!(
            chunks,
            [
                entry("v/0.0", json!(["/d/f0.nc", 100, 12])),
                entry("v/1.0", json!(["/d/f0.nc", 112, 12])),
                entry("v/2.0", json!(["/d/f1.nc", 100, 12])),
                entry("v/3.0", json!(["/d/f1.nc", 140, 12])),
            ]
        );
        // listed chunks (netCDF-4) are no business of the grouping
        let (ds, inputs) = join(&[2, 2], |n| listed(2, n));
        assert!(joined_records_per_chunk(&ds, &inputs, &None)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_join_along_a_later_chunked_dimension_is_refused() {
        // v(t, x) joined along t, but chunked (1, 1) with x = 3 chunks: the grid's C order
        // would interleave the inputs
        let one = |_| {
            map(
                vec![1, 1],
                StoredChunks::List(vec![StoredChunk {
                    index: vec![0, 0],
                    bytes: ChunkBytes::Range { offset: 0, len: 4 },
                }]),
            )
        };
        let (mut ds, mut inputs) = join(&[2, 2], one);
        // v(x, t): t is the second dimension
        ds.vars[1].dims.reverse();
        for (d, _) in &mut inputs.files {
            d.vars[1].dims.reverse();
        }
        struct Axis1(Inputs);
        impl JoinedInputs for Axis1 {
            fn inputs(&self) -> usize {
                self.0.inputs()
            }
            fn name(&self, i: usize) -> String {
                self.0.name(i)
            }
            fn url(&self, i: usize) -> Result<String, ZarrError> {
                self.0.url(i)
            }
            fn join(&self, var: VarId) -> Option<(usize, &[u64])> {
                self.0.join(var).map(|(_, o)| (usize::from(var.0 == 1), o))
            }
            fn is_coordinate(&self, var: VarId) -> bool {
                self.0.is_coordinate(var)
            }
            fn with_input(
                &self,
                i: usize,
                f: &mut dyn FnMut(&Dataset, &dyn DataSource) -> Result<(), ZarrError>,
            ) -> Result<(), ZarrError> {
                self.0.with_input(i, f)
            }
        }
        let e = write_joined_references(
            &ds,
            &Mock(HashMap::new()),
            &Axis1(inputs),
            &Default::default(),
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("variable \"/v\" of f0.nc cannot be referenced in the joined dataset: it is joined along \"t\", which is not its first chunked dimension"),
            "{e}"
        );
    }

    fn refs_of(ds: &Dataset, inputs: &Inputs) -> Map<String, Value> {
        let mut out = Vec::new();
        write_joined_references(
            ds,
            &Mock(HashMap::new()),
            inputs,
            &Default::default(),
            &mut out,
        )
        .unwrap();
        let doc: Value = serde_json::from_slice(&out).unwrap();
        doc["refs"].as_object().unwrap().clone()
    }
}
