//! References of many files as one (kerchunk's `MultiZarrToZarr(concat_dims=[DIM])`,
//! VirtualiZarr's concat): the joined dataset's metadata, then each joined array's chunks
//! file by file, renumbered along the join dimension, each pointing at its own file.
//!
//! The join itself (which files, how long the joined dimension is, the rebased coordinate)
//! is the caller's ([`JoinedInputs`], nc-multi's join); this module plans the arrays as the
//! single-file writer does, from the first input's placements, and streams the chunks of
//! each input into the sink in turn, asking the inputs one at a time (the caller keeps only
//! a bounded number open). Nothing but one input's placement of one variable is held.

use nc_dataset::{DataError, DataSource, Dataset, Placement, Slab, Values, VarId, ROOT};

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
    let first = FirstPlacement { src, inputs };
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
            first_fill(inputs, &plan_opts, p)?;
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
    p: &mut VarPlan,
) -> Result<(), ZarrError> {
    if inputs.join(p.var).is_none() || !matches!(p.content, Content::Refs { .. }) {
        return Ok(());
    }
    let mut fill = None;
    inputs.with_input(0, &mut |d, s| {
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
