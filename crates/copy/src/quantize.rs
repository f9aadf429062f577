//! `-Q`: which output variables are quantized, and how (the writers quantize as they read,
//! through nc-dispatch).

use nc_dataset::{AtomicType, Dataset, NcType, Values, VarId};

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
