//! `--explain`: one line per output variable saying how it is stored.

use nc_dataset::{Dataset, Format, Layout, VarId};

use crate::CopyOptions;

/// One `--explain` line per output variable, after `-F`/`-d`/`-s`/`-c` are applied.
pub(crate) fn explain_lines(
    out: &Dataset,
    format: Format,
    to_zarr: bool,
    opts: &CopyOptions,
) -> Result<Vec<String>, String> {
    let all = out.all_vars();
    let can_filter = to_zarr || matches!(format, Format::Netcdf4 | Format::Netcdf4Classic);
    if !can_filter {
        return Ok(all
            .iter()
            .map(|&v| {
                format!(
                    "{}: {} output format: unfiltered; storage contiguous",
                    out.var_path(v),
                    format.kind_name()
                )
            })
            .collect());
    }
    // the decisions as the -F table made them (computed on the output's settings: with no
    // -F/-d/-s options that is rows 4 and 7, input filters kept)
    let infos: Vec<nc_filters::rules::VarInfo> = (0..out.vars.len())
        .map(|i| nc_filters::rules::VarInfo::from_dataset(out, VarId(i)))
        .collect();
    let asked = !opts.filters.is_empty() || opts.deflate.is_some() || opts.shuffle;
    let plan = if asked {
        nc_filters::rules::decide(&opts.filters, opts.deflate, opts.shuffle, &infos)
    } else {
        nc_filters::rules::decide::<&str>(&[], None, false, &infos)
    }
    .map_err(|e| format!("-F: {e}"))?;
    let mut lines = Vec::with_capacity(all.len());
    for v in all {
        let path = out.var_path(v);
        let var = out.var(v);
        let st = &var.storage;
        let mut line = match plan.get(&path) {
            Some(d) if asked => d.explain(),
            Some(d) => {
                // the decision says which row fired; the chain is what the output keeps
                let mut d = d.clone();
                d.chain = st.filters.clone();
                d.explain()
            }
            None => format!("{path}: unfiltered"),
        };
        let rank = var.dims.len();
        let unlim: Vec<bool> = var.dims.iter().map(|d| out.dim(*d).unlimited).collect();
        // the layout rule of the netCDF-4 writer (NCZarr stores are always chunked)
        let layout = match st.layout {
            _ if to_zarr && rank > 0 => Layout::Chunked,
            _ if to_zarr => Layout::Contiguous,
            Some(l) if rank > 0 || l != Layout::Chunked => l,
            _ if rank == 0 => Layout::Contiguous,
            _ if unlim.iter().any(|&u| u) || !st.filters.is_empty() || st.chunk_sizes.is_some() => {
                Layout::Chunked
            }
            _ => Layout::Contiguous,
        };
        match layout {
            Layout::Chunked => {
                let chunks = match &st.chunk_sizes {
                    Some(c) if c.len() == rank => Some(c.clone()),
                    _ if to_zarr => None,
                    _ => {
                        let shape: Vec<u64> = var
                            .dims
                            .iter()
                            .map(|d| {
                                let dim = out.dim(*d);
                                if dim.unlimited {
                                    0
                                } else {
                                    dim.len
                                }
                            })
                            .collect();
                        Some(nc_dataset::chunking::default_chunk_sizes(
                            &shape,
                            &unlim,
                            out.type_size(var.ty),
                        ))
                    }
                };
                match chunks {
                    Some(c) => {
                        let c: Vec<String> = c.iter().map(u64::to_string).collect();
                        line.push_str(&format!("; chunks {}; storage chunked", c.join(",")));
                    }
                    None => line.push_str("; chunks NCZarr default; storage chunked"),
                }
            }
            Layout::Contiguous => {
                if !st.filters.is_empty() {
                    line.push_str(" (not applied: contiguous storage has no filters)");
                }
                line.push_str("; storage contiguous");
            }
            Layout::Compact => line.push_str("; storage compact"),
            // cleared by `plan`
            Layout::Virtual => line.push_str("; storage virtual"),
        }
        lines.push(line);
    }
    Ok(lines)
}
