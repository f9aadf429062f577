//! `-c` chunking specs: parsed, and checked against the input.

use nc_dataset::{Dataset, DimId, VarId};

use crate::select::var_matches;

/// A `-c` chunking spec, parsed (grammar: nccopy's man page and netCDF-C 4.9.0's
/// `ncdump/chunkspec.c`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ChunkSpec {
    /// `dim/N` entries (`None`: `dim/` — the full dimension length).
    pub(crate) dims: Vec<(String, Option<u64>)>,
    /// `var:N1,N2`, `var:`, `var:contiguous`, `var:compact` entries.
    pub(crate) vars: Vec<(String, VarChunking)>,
    /// `/` alone: every variable contiguous.
    pub(crate) all_contiguous: bool,
}

/// What a per-variable `-c var:...` asks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum VarChunking {
    /// `var:N1,N2,...`: chunked with these sizes.
    Sizes(Vec<u64>),
    /// `var:` or `var:contiguous`.
    Contiguous,
    /// `var:compact` (in the HDF5 object header; at most 64 KiB).
    Compact,
}

/// HDF5 (and netCDF-C's `nc_def_var_chunking`) keep compact data under 64 KiB.
const MAX_COMPACT_BYTES: u64 = 64 * 1024;

pub(crate) fn parse_chunk_specs(specs: &[String]) -> Result<ChunkSpec, String> {
    let mut out = ChunkSpec::default();
    for spec in specs {
        let spec = spec.trim();
        if spec.is_empty() {
            continue;
        }
        // "/" (and "//", as netCDF-C's tests write it): every variable contiguous
        if spec.chars().all(|c| c == '/') {
            out.all_contiguous = true;
            continue;
        }
        if let Some((var, sizes)) = spec.split_once(':') {
            let sizes = sizes.trim();
            let kind = if sizes.is_empty() || sizes.eq_ignore_ascii_case("contiguous") {
                VarChunking::Contiguous
            } else if sizes.eq_ignore_ascii_case("compact") {
                VarChunking::Compact
            } else {
                let v = sizes
                    .split(',')
                    .map(|n| n.trim().parse::<u64>())
                    .collect::<Result<Vec<u64>, _>>()
                    .map_err(|_| {
                        format!(
                            "-c {spec}: expected var:N1,N2,... (whole numbers), var:contiguous, var:compact or var:"
                        )
                    })?;
                if v.contains(&0) {
                    return Err(format!("-c {spec}: a chunk size must be at least 1"));
                }
                VarChunking::Sizes(v)
            };
            out.vars.push((var.trim().to_string(), kind));
            continue;
        }
        for part in spec.split(',') {
            let Some((d, n)) = part.rsplit_once('/') else {
                return Err(format!(
                    "-c {spec}: expected dim/N,... or var:N1,N2,... (\"{part}\" has neither)"
                ));
            };
            let n = n.trim();
            let n = if n.is_empty() {
                None
            } else {
                match n.parse::<u64>() {
                    Ok(0) => {
                        return Err(format!(
                            "-c {spec}: dimension \"{d}\": a chunk size must be at least 1 (\"{d}/\" is its full length)"
                        ))
                    }
                    Ok(k) => Some(k),
                    Err(_) => {
                        return Err(format!(
                            "-c {spec}: dimension \"{d}\": \"{n}\" is not a chunk size"
                        ))
                    }
                }
            };
            out.dims.push((d.trim().to_string(), n));
        }
    }
    Ok(out)
}

/// A `-c` name matches a dimension: its name, or its full path (`/grp/dim`).
pub(crate) fn dim_matches(ds: &Dataset, d: DimId, name: &str) -> bool {
    let dim = ds.dim(d);
    if dim.name == name {
        return true;
    }
    let g = ds.group_path(dim.group);
    let full = if g == "/" {
        format!("/{}", dim.name)
    } else {
        format!("{g}/{}", dim.name)
    };
    full == name
}

/// Every name a `-c` spec gives must be in the input, and sizes must fit (as netCDF-C 4.9.0's
/// nccopy checks, naming what is wrong).
pub(crate) fn check_chunk_specs(input: &Dataset, specs: &[String]) -> Result<(), String> {
    for text in specs {
        check_chunk_spec(input, text)?;
    }
    Ok(())
}

fn check_chunk_spec(input: &Dataset, text: &str) -> Result<(), String> {
    let text = text.trim();
    let spec = parse_chunk_specs(&[text.to_string()])?;
    for (d, _) in &spec.dims {
        if !(0..input.dims.len()).any(|i| dim_matches(input, DimId(i), d)) {
            return Err(format!("-c {text}: no dimension \"{d}\" in the input"));
        }
    }
    for (name, kind) in &spec.vars {
        let vars: Vec<VarId> = (0..input.vars.len())
            .map(VarId)
            .filter(|&v| var_matches(input, v, std::slice::from_ref(name)))
            .collect();
        if vars.is_empty() {
            return Err(format!("-c {text}: no variable \"{name}\" in the input"));
        }
        for v in vars {
            let var = input.var(v);
            let path = input.var_path(v);
            let unlimited = var.dims.iter().any(|d| input.dim(*d).unlimited);
            match kind {
                VarChunking::Sizes(sizes) => {
                    if sizes.len() != var.dims.len() {
                        return Err(format!(
                            "-c {text}: {} sizes given for variable \"{path}\" of rank {}",
                            sizes.len(),
                            var.dims.len()
                        ));
                    }
                    for (k, (&c, d)) in sizes.iter().zip(&var.dims).enumerate() {
                        let dim = input.dim(*d);
                        if !dim.unlimited && c > dim.len {
                            return Err(format!(
                                "-c {text}: chunk size {c} along dimension {k} (\"{}\") of variable \"{path}\" is larger than its length {}",
                                dim.name, dim.len
                            ));
                        }
                    }
                }
                VarChunking::Compact => {
                    if unlimited {
                        return Err(format!(
                            "-c {text}: variable \"{path}\" has an unlimited dimension; compact storage is for fixed-size variables (use -u to fix the dimension)"
                        ));
                    }
                    let bytes = input
                        .shape(v)
                        .iter()
                        .product::<u64>()
                        .saturating_mul(input.type_size(var.ty) as u64);
                    if bytes > MAX_COMPACT_BYTES {
                        return Err(format!(
                            "-c {text}: variable \"{path}\" holds {bytes} bytes; compact storage holds at most {MAX_COMPACT_BYTES}"
                        ));
                    }
                }
                VarChunking::Contiguous => {}
            }
        }
    }
    Ok(())
}
