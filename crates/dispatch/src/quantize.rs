//! Quantization on write: the data of variables whose storage asks for it (CDL
//! `_Quantize*`, `nccopy-rs -Q`) is quantized as it is read from the source, before any
//! writer's filters, whatever the output format (netCDF-4, NCZarr, Zarr v2 and v3).

use nc_dataset::quantize::{slab_index, Quantizer};
use nc_dataset::{AtomicType, DataError, DataSource, Dataset, NcType, Values, VarId};
use nc_dataset::{ChunkRequest, MaybeBytes, Slab};

/// A data source whose float and double variables come out quantized where their storage says
/// so. Raw chunks and bytes are not passed through for those (they are the unquantized input).
pub(crate) struct Quantizing<'a> {
    inner: &'a dyn DataSource,
    by_var: Vec<Option<Quantizer>>,
}

impl<'a> Quantizing<'a> {
    /// `None` when no variable of `ds` asks for quantization.
    ///
    /// # Errors
    /// A variable whose type or digits the mode cannot take, named.
    pub(crate) fn wrap(ds: &Dataset, inner: &'a dyn DataSource) -> Result<Option<Self>, String> {
        let mut any = false;
        let mut by_var = Vec::with_capacity(ds.vars.len());
        for (i, var) in ds.vars.iter().enumerate() {
            let Some((mode, nsd)) = var.storage.quantize else {
                by_var.push(None);
                continue;
            };
            let ty = match var.ty {
                NcType::Atomic(t) => t,
                NcType::User(_) => AtomicType::Char,
            };
            let fill = ds
                .fill_value(VarId(i))
                .and_then(|f| f.get_f64(0))
                .unwrap_or(f64::NAN);
            let q = Quantizer::new(mode, nsd, ty, fill)
                .map_err(|e| format!("variable \"{}\": {e}", ds.var_path(VarId(i))))?;
            by_var.push(Some(q));
            any = true;
        }
        Ok(any.then_some(Quantizing { inner, by_var }))
    }

    fn quantizer(&self, var: VarId) -> Option<&Quantizer> {
        self.by_var.get(var.0).and_then(Option::as_ref)
    }
}

impl DataSource for Quantizing<'_> {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        let mut values = self.inner.read(ds, var, Slab::new(start, count))?;
        if let Some(q) = self.quantizer(var) {
            let shape = ds.shape(var);
            q.apply(&mut values, |i| slab_index(&shape, start, count, i));
        }
        Ok(values)
    }

    fn read_le_bytes(&self, ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let Slab { start, count } = slab;

        if self.quantizer(var).is_some() {
            return None;
        }
        self.inner.read_le_bytes(ds, var, Slab::new(start, count))
    }

    fn raw_chunk(&self, ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        if self.quantizer(var).is_some() {
            return None;
        }
        self.inner.raw_chunk(ds, var, chunk)
    }

    fn unwritten(&self, ds: &Dataset, var: VarId, slab: Slab) -> bool {
        let Slab { start, count } = slab;

        // fill is never quantized: an unwritten region stays unwritten
        self.inner.unwritten(ds, var, Slab::new(start, count))
    }
}
