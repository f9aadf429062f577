//! Quantization on write: the data of variables whose storage asks for it (CDL
//! `_Quantize*`, `nccopy-rs -Q`) is quantized as it is read from the source, before any
//! writer's filters, whatever the output format (netCDF-4, NCZarr, Zarr v2 and v3).

use nc_dataset::quantize::{slab_index, Quantizer};
use nc_dataset::{AtomicType, DataError, DataSource, Dataset, NcType, Values, VarId};

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
    fn read(
        &self,
        ds: &Dataset,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<Values, DataError> {
        let mut values = self.inner.read(ds, var, start, count)?;
        if let Some(q) = self.quantizer(var) {
            let shape = ds.shape(var);
            q.apply(&mut values, |i| slab_index(&shape, start, count, i));
        }
        Ok(values)
    }

    fn read_le_bytes(
        &self,
        ds: &Dataset,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Option<Result<Vec<u8>, DataError>> {
        if self.quantizer(var).is_some() {
            return None;
        }
        self.inner.read_le_bytes(ds, var, start, count)
    }

    fn raw_chunk(
        &self,
        ds: &Dataset,
        var: VarId,
        offsets: &[u64],
        chunk: &[u64],
        chain: &[nc_dataset::FilterSpec],
    ) -> Option<Vec<u8>> {
        if self.quantizer(var).is_some() {
            return None;
        }
        self.inner.raw_chunk(ds, var, offsets, chunk, chain)
    }

    fn unwritten(&self, ds: &Dataset, var: VarId, start: &[u64], count: &[u64]) -> bool {
        // fill is never quantized: an unwritten region stays unwritten
        self.inner.unwritten(ds, var, start, count)
    }
}

/// Apply `nccopy -Q` specs (`VAR[|VAR...],ALGORITHM,N` or `*,ALGORITHM,N`, in order; a later
/// one wins) to the output's variables: their storage asks for quantization and they carry
/// the attribute netCDF-C writes (any other `_Quantize*` one replaced). `*` takes every float
/// and double variable that is not quantized already (an input's quantized variable keeps its
/// own: it is copied, not quantized again); a named variable is quantized as asked.
/// Returns notes for the report.
///
/// # Errors
/// A malformed spec, an unknown algorithm or variable, or digits out of the type's range.
pub(crate) fn apply_specs(out: &mut Dataset, specs: &[String]) -> Result<Vec<String>, String> {
    use nc_dataset::quantize::{check, parse_mode};
    let mut notes = Vec::new();
    for spec in specs {
        let bad = |why: &str| {
            format!(
                "-Q {spec:?}: {why}; expected VAR,ALGORITHM,N with ALGORITHM BitGroom, \
                 GranularBitRound or BitRound (e.g. -Q '*,BitRound,10', -Q 'tas|pr,GranularBitRound,3')"
            )
        };
        let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
        let [names, alg, n] = parts[..] else {
            return Err(bad("not three comma-separated fields"));
        };
        let mode = parse_mode(alg).ok_or_else(|| bad(&format!("unknown algorithm {alg:?}")))?;
        let nsd: u32 = n
            .parse()
            .map_err(|_| bad(&format!("{n:?} is not a number of digits or bits")))?;
        let quantized = |out: &Dataset, v: VarId| {
            out.var(v)
                .atts
                .iter()
                .any(|a| a.name.starts_with("_Quantize"))
                && out.var(v).storage.quantize.is_none()
        };
        let targets: Vec<VarId> = if names == "*" {
            let all: Vec<VarId> = (0..out.vars.len())
                .map(VarId)
                .filter(|&v| {
                    matches!(
                        out.var(v).ty,
                        NcType::Atomic(AtomicType::Float | AtomicType::Double)
                    )
                })
                .collect();
            for &v in all.iter().filter(|&&v| quantized(out, v)) {
                notes.push(format!(
                    "{}: quantized already (its _Quantize* attribute): copied as it is, not \
                     quantized again by -Q '*,...'",
                    out.var_path(v)
                ));
            }
            all.into_iter().filter(|&v| !quantized(out, v)).collect()
        } else {
            let mut found = Vec::new();
            for name in names.split('|') {
                let hits: Vec<VarId> = (0..out.vars.len())
                    .map(VarId)
                    .filter(|&v| {
                        let path = out.var_path(v);
                        path == name
                            || path.trim_start_matches('/') == name
                            || out.var(v).name == name
                    })
                    .collect();
                if hits.is_empty() {
                    return Err(bad(&format!("no variable named {name:?}")));
                }
                found.extend(hits);
            }
            found
        };
        for v in targets {
            let ty = match out.var(v).ty {
                NcType::Atomic(t) => t,
                NcType::User(_) => AtomicType::Char,
            };
            check(mode, nsd, ty).map_err(|e| format!("-Q {spec:?}: {}: {e}", out.var_path(v)))?;
            let var = out.var_mut(v);
            var.storage.quantize = Some((mode, nsd));
            var.atts.retain(|a| !a.name.starts_with("_Quantize"));
            var.atts.push(nc_dataset::Attribute::new(
                mode.attribute_name(),
                Values::Int(vec![nsd as i32]),
            ));
        }
    }
    Ok(notes)
}
