//! The data source the writers read: the input's variables through the output-to-input map,
//! fill for variables whose data is not copied, progress counted as data is read.

use nc_dataset::{ChunkRequest, MaybeBytes, RecordLayout, Region, Slab};
use nc_dataset::{DataError, DataSource, Dataset, InMemory, Values, VarId};

use crate::progress::Progress;

/// Reads the output variables' data from the input, or fill for variables not copied.
pub(crate) struct MappedSource<'a> {
    pub(crate) input: &'a Dataset,
    pub(crate) src: &'a dyn DataSource,
    pub(crate) map: Vec<Option<VarId>>,
    pub(crate) progress: Option<Progress>,
    /// The first error reading the input: the writer's failure is then the input's fault.
    pub(crate) input_error: std::sync::Mutex<Option<String>>,
}

impl MappedSource<'_> {
    fn note<T>(&self, r: Result<T, DataError>) -> Result<T, DataError> {
        if let Err(e) = &r {
            let mut first = self.input_error.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert_with(|| e.to_string());
        }
        r
    }
}

/// Reading the input's data failed during a copy (the message is the reader's).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputReadError(pub(crate) String);

impl DataSource for MappedSource<'_> {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        let values = match self.map.get(var.0).copied().flatten() {
            Some(iv) => self.note(self.src.read(self.input, iv, Slab::new(start, count)))?,
            None => InMemory.read(ds, var, Slab::new(start, count))?,
        };
        if let Some(p) = &self.progress {
            p.read(var, count);
        }
        Ok(values)
    }

    fn read_le_bytes(&self, ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let Slab { start, count } = slab;

        // variables whose data is not copied read as fill through `read`
        let iv = self.map.get(var.0).copied().flatten()?;
        // bytes are not converted: only for the same type on both sides
        if self.input.vars.get(iv.0)?.ty != ds.vars.get(var.0)?.ty {
            return None;
        }
        let bytes = self
            .src
            .read_le_bytes(self.input, iv, Slab::new(start, count))?;
        let bytes = self.note(bytes);
        if let Some(p) = &self.progress {
            p.read(var, count);
        }
        Some(bytes)
    }

    fn raw_chunk(&self, ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        let iv = self.map.get(var.0).copied().flatten()?;
        // the input's type must be the output's (a raw chunk is not converted)
        if self.input.vars.get(iv.0)?.ty != ds.vars.get(var.0)?.ty {
            return None;
        }
        let bytes = self.src.raw_chunk(self.input, iv, chunk)?;
        if let Some(p) = &self.progress {
            // progress counts the chunk's elements inside the variable
            let shape = ds.shape(var);
            let count: Vec<u64> = (chunk.offsets.iter())
                .zip(chunk.shape)
                .zip(&shape)
                .map(|((&o, &c), &n)| c.min(n.saturating_sub(o)))
                .collect();
            p.read(var, &count);
        }
        Some(bytes)
    }

    fn stored_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
        self.mapped_stored_regions(ds, var)
    }

    fn stored_records(
        &self,
        ds: &Dataset,
        first: u64,
        n: u64,
        layout: &RecordLayout,
        out: &mut Vec<u8>,
    ) -> Option<Result<(), DataError>> {
        // every variable copied from the input, without conversion
        let mut vars = Vec::with_capacity(layout.vars.len());
        for &(var, bytes) in &layout.vars {
            let iv = self.map.get(var.0).copied().flatten()?;
            if self.input.vars.get(iv.0)?.ty != ds.vars.get(var.0)?.ty {
                return None;
            }
            vars.push((iv, bytes));
        }
        let mapped = RecordLayout {
            recsize: layout.recsize,
            vars,
        };
        let got = self
            .src
            .stored_records(self.input, first, n, &mapped, out)?;
        let got = self.note(got);
        if let (Ok(()), Some(p)) = (&got, &self.progress) {
            for &(var, _) in &layout.vars {
                let mut count = ds.shape(var);
                if let Some(c) = count.first_mut() {
                    *c = n;
                }
                p.read(var, &count);
            }
        }
        Some(got)
    }

    fn unwritten(&self, ds: &Dataset, var: VarId, slab: Slab) -> bool {
        let Slab { start, count } = slab;

        let skip = match self.map.get(var.0).copied().flatten() {
            // the input's fill must be the output's: same type and the same fill value
            Some(iv) => {
                self.input.vars.get(iv.0).map(|v| v.ty) == ds.vars.get(var.0).map(|v| v.ty)
                    && same_bits(self.input.stored_fill(iv), ds.stored_fill(var))
                    && self.src.unwritten(self.input, iv, Slab::new(start, count))
            }
            // data not copied (-v, -g): fill everywhere, unless the output holds data of its own
            None => ds.vars.get(var.0).is_some_and(|v| v.data.is_none()),
        };
        if skip {
            if let Some(p) = &self.progress {
                p.read(var, count);
            }
        }
        skip
    }
}

impl MappedSource<'_> {
    /// The input's stored regions of output variable `var` when a region outside them reads
    /// as the output's fill (see [`MappedSource::unwritten`]); what lies outside them counts
    /// as read at once (writers ask once per variable and never visit it).
    fn mapped_stored_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
        let regions = match self.map.get(var.0).copied().flatten() {
            Some(iv) => {
                if self.input.vars.get(iv.0).map(|v| v.ty) != ds.vars.get(var.0).map(|v| v.ty)
                    || !same_bits(self.input.stored_fill(iv), ds.stored_fill(var))
                    || self.input.shape(iv) != ds.shape(var)
                {
                    return None;
                }
                self.src.stored_regions(self.input, iv)?
            }
            None if ds.vars.get(var.0).is_some_and(|v| v.data.is_none()) => Vec::new(),
            None => return None,
        };
        if let Some(p) = &self.progress {
            let total = ds.num_elements(var).unwrap_or(0);
            let stored = regions
                .iter()
                .map(|r| r.count.iter().product::<u64>())
                .fold(0u64, u64::saturating_add);
            p.read(var, &[total.saturating_sub(stored)]);
        }
        Some(regions)
    }
}

/// True when two fill values are present and the same bit for bit (a NaN equals itself).
fn same_bits(a: Option<Values>, b: Option<Values>) -> bool {
    match (a, b) {
        (Some(Values::Float(x)), Some(Values::Float(y))) => x
            .iter()
            .map(|v| v.to_bits())
            .eq(y.iter().map(|v| v.to_bits())),
        (Some(Values::Double(x)), Some(Values::Double(y))) => x
            .iter()
            .map(|v| v.to_bits())
            .eq(y.iter().map(|v| v.to_bits())),
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}
