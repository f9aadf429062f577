//! `--explain`: one line per output variable saying how it is stored.

use nc_dataset::{Dataset, Format, Layout};

use nc_filters::rules::Plan;

/// One `--explain` line per output variable, after `-F`/`-d`/`-s`/`-c` are applied: the `-F`
/// table's decision as [`crate::storage::apply_storage_options`] made it (`plan`, `None` for an
/// output format without filters), the chain the output keeps, its chunks and layout.
pub(crate) fn explain_lines(
    out: &Dataset,
    format: Format,
    to_zarr: bool,
    plan: Option<&Plan>,
) -> Vec<String> {
    let all = out.all_vars();
    let Some(plan) = plan else {
        return all
            .iter()
            .map(|&v| {
                format!(
                    "{}: {} output format: unfiltered; storage contiguous",
                    out.var_path(v),
                    format.kind_name()
                )
            })
            .collect();
    };
    let mut lines = Vec::with_capacity(all.len());
    for v in all {
        let path = out.var_path(v);
        let var = out.var(v);
        let st = &var.storage;
        let mut line = match plan.decisions.get(v.0) {
            Some(d) => {
                // the decision says which row fired; the chain is what the output keeps (the
                // decided one less the filters the output cannot hold, e.g. nbit in Zarr)
                let mut d = d.clone();
                d.chain = st.filters.clone();
                d.explain()
            }
            None => format!("{path}: unfiltered"),
        };
        let rank = var.dims.len();
        let any_unlim = var.dims.iter().any(|d| out.dim(*d).unlimited);
        // the layout rule of the netCDF-4 writer (NCZarr stores are always chunked)
        let layout = match st.layout {
            _ if to_zarr && rank > 0 => Layout::Chunked,
            _ if to_zarr => Layout::Contiguous,
            Some(l) if rank > 0 || l != Layout::Chunked => l,
            _ if rank == 0 => Layout::Contiguous,
            _ if any_unlim || !st.filters.is_empty() || st.chunk_sizes.is_some() => Layout::Chunked,
            _ => Layout::Contiguous,
        };
        match layout {
            Layout::Chunked => {
                let chunks = match &st.chunk_sizes {
                    Some(c) if c.len() == rank => Some(c.clone()),
                    _ if to_zarr => None,
                    _ => Some(nc_dataset::chunking::default_var_chunk_sizes(out, v)),
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
    lines
}
