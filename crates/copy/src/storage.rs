//! The output's format and each variable's storage: `-F`/`-d`/`-s`/`-c`/`--shard` applied to
//! the output dataset.

use nc_dataset::{Dataset, Format, Layout, VarId};

use crate::chunkspec::{dim_matches, parse_chunk_specs, VarChunking};
use crate::{CopyOptions, CopyReport};

/// Apply `-F`/`-d`/`-s`/`-c` to the output variables' storage settings. Returns the `-F`
/// table's decisions (one per output variable, in order; `None` when the output format has no
/// filters), which `--explain` reports.
pub(crate) fn apply_storage_options(
    out: &mut Dataset,
    format: Format,
    to_zarr: bool,
    opts: &CopyOptions,
    report: &mut CopyReport,
) -> Result<Option<nc_filters::rules::Plan>, String> {
    if !to_zarr {
        // numcodecs' gzip, lz4 and delta have no HDF5 filter: say so instead of dropping them
        for i in 0..out.vars.len() {
            let Some(text) = out.vars[i].storage.codecs.as_deref() else {
                continue;
            };
            let lost = nc_filters::codec_json::zarr_only_ids(text);
            if !lost.is_empty() {
                report.warnings.push(format!(
                    "{}: Zarr codec(s) {} have no HDF5 filter; the output stores the data without them",
                    out.var_path(VarId(i)),
                    lost.join(", ")
                ));
                out.vars[i].storage.codecs = None;
            }
        }
    }
    if to_zarr {
        // szip has no codec zarr-python/numcodecs reads: the data is decoded on input and
        // written without it (the Zarr writer refuses it when asked directly)
        for i in 0..out.vars.len() {
            let path = out.var_path(VarId(i));
            let st = &mut out.vars[i].storage;
            // categorize is read only: its labels and dtype describe the input's string
            // encoding, which the writer does not reproduce (it writes `|Sn` or `>S1`)
            let categorize = st.codecs.as_deref().is_some_and(|c| {
                nc_filters::codec_json::zarr_only_ids(c)
                    .iter()
                    .any(|id| id == "categorize")
            });
            if categorize {
                st.codecs = None;
                report.warnings.push(format!(
                    "{path}: Zarr codec categorize is decoded on reading only; the output stores the \
                     strings without it"
                ));
            }
            // likewise every filter without a standard Zarr codec (h5py's lzf, plugins)
            let ctx = nc_filters::FilterContext::new(1, &[]);
            let no_codec = |f: &nc_dataset::FilterSpec| {
                f.id == 4 || nc_filters::codec_json::hdf5_to_codec(f, &ctx).is_err()
            };
            let dropped: Vec<String> = st
                .filters
                .iter()
                .filter(|f| no_codec(f))
                .map(id_and_name)
                .collect();
            if !dropped.is_empty() {
                st.filters.retain(|f| !no_codec(f));
                st.codecs = None;
                report.warnings.push(format!(
                    "{path}: filter {} has no Zarr codec that zarr-python or numcodecs reads; \
                     the output stores the data without it",
                    dropped.join(", ")
                ));
            }
        }
    }
    let can_filter = to_zarr || matches!(format, Format::Netcdf4 | Format::Netcdf4Classic);
    let asked_filters = !opts.filters.is_empty() || opts.deflate.is_some() || opts.shuffle;
    if !can_filter {
        // -d 0 and -F none ask for no filters: nothing is lost, nothing to say
        let asks_something = opts.filters.iter().any(|o| o.trim() != "none")
            || opts.deflate.is_some_and(|d| d > 0)
            || opts.shuffle
            || !opts.chunks.is_empty();
        if asks_something {
            report.warnings.push(format!(
                "-d, -s, -c and -F have no effect: the {} output format has no chunking or filters",
                format.kind_name()
            ));
        }
        for v in &mut out.vars {
            if !v.storage.is_default() {
                v.storage = nc_dataset::Storage::default();
            }
        }
        return Ok(None);
    }
    // the -F table's decision for every variable, made here once: with no -F/-d/-s that is
    // rows 4 and 7 (input filters kept, except on variable-length data, which netCDF-4 refuses
    // to filter: older netCDF-C and h5py wrote such files). `--explain` prints these decisions.
    let infos: Vec<nc_filters::rules::VarInfo> = (0..out.vars.len())
        .map(|i| nc_filters::rules::VarInfo::from_dataset(out, VarId(i)))
        .collect();
    let plan = nc_filters::rules::decide(&opts.filters, opts.deflate, opts.shuffle, &infos)
        .map_err(|e| format!("-F: {e}"))?;
    report.warnings.extend(plan.warnings.iter().cloned());
    for (i, d) in plan.decisions.iter().enumerate() {
        if !asked_filters && d.unfilterable.is_none() {
            // the input's chain (and its Zarr codec text) is kept as it is
            continue;
        }
        let st = &mut out.vars[i].storage;
        st.filters = d.chain.clone();
        st.codecs = None;
        if !st.filters.is_empty() {
            st.layout = Some(nc_dataset::Layout::Chunked);
        }
    }
    // PyTables' LZO (305) is decoded on reading but has no encoder here: the copy holds the
    // decoded values without it (netCDF-C keeps it through PyTables' filter when registered)
    let read_only =
        |f: &nc_dataset::FilterSpec| nc_filters::known(f.id).is_some_and(|k| k.read_only);
    for i in 0..out.vars.len() {
        let st = &mut out.vars[i].storage;
        let dropped: Vec<String> = st
            .filters
            .iter()
            .filter(|f| read_only(f))
            .map(id_and_name)
            .collect();
        if !dropped.is_empty() {
            st.filters.retain(|f| !read_only(f));
            report.warnings.push(format!(
                "variable {}: filter {} cannot be written (decoded on reading only); the data is copied without it",
                out.var_path(VarId(i)),
                dropped.join(", ")
            ));
        }
    }
    if !opts.chunks.is_empty() {
        let spec = parse_chunk_specs(&opts.chunks)?;
        for i in 0..out.vars.len() {
            let v = VarId(i);
            let path = out.var_path(v);
            let name = out.var(v).name.clone();
            let shape = out.shape(v);
            // the -c dim/N entry (last wins) for each of the variable's dimensions
            let dim_spec: Vec<Option<Option<u64>>> = out
                .var(v)
                .dims
                .iter()
                .map(|&d| {
                    spec.dims
                        .iter()
                        .rev()
                        .find(|(n, _)| dim_matches(out, d, n))
                        .map(|(_, k)| *k)
                })
                .collect();
            let rank = out.var(v).dims.len();
            let unlimited: Vec<bool> = out
                .var(v)
                .dims
                .iter()
                .map(|d| out.dim(*d).unlimited)
                .collect();

            let by_var = spec
                .vars
                .iter()
                .rev()
                .find(|(n, _)| *n == name || *n == path || path.strip_prefix('/') == Some(n))
                .map(|(_, k)| k);
            let is_record = unlimited.iter().any(|&u| u);
            let elem_size = out.type_size(out.var(v).ty) as u64;
            let st = &mut out.vars[i].storage;
            let not_chunked = match by_var {
                Some(VarChunking::Contiguous) => Some(Layout::Contiguous),
                Some(VarChunking::Compact) => Some(Layout::Compact),
                Some(VarChunking::Sizes(_)) => None,
                None if spec.all_contiguous => Some(Layout::Contiguous),
                None => None,
            };
            if let Some(layout) = not_chunked {
                if to_zarr {
                    if by_var.is_some() {
                        report.warnings.push(format!(
                            "{path}: an NCZarr store is always chunked; -c {name}:{} has no effect",
                            if layout == Layout::Compact {
                                "compact"
                            } else {
                                "contiguous"
                            }
                        ));
                    }
                    continue;
                }
                if is_record {
                    // netCDF-4 keeps variables of an unlimited dimension chunked
                    if by_var.is_some() {
                        report.warnings.push(format!(
                            "{path}: a variable of an unlimited dimension must be chunked; keeping it chunked"
                        ));
                    }
                    continue;
                }
                if !st.filters.is_empty() {
                    report.warnings.push(format!(
                        "{path}: filters need chunked storage; keeping it chunked"
                    ));
                    continue;
                }
                st.layout = Some(layout);
                st.chunk_sizes = None;
                continue;
            }
            if let Some(VarChunking::Sizes(sizes)) = by_var {
                if sizes.len() != rank {
                    return Err(format!(
                        "-c {name}:...: {} sizes given for a variable of rank {rank}",
                        sizes.len(),
                    ));
                }
                st.layout = Some(nc_dataset::Layout::Chunked);
                st.chunk_sizes = Some(sizes.clone());
                continue;
            }
            if rank == 0 || dim_spec.iter().all(Option::is_none) {
                continue;
            }
            // nccopy's -M: small fixed-size variables are not worth chunking
            let bytes = shape.iter().product::<u64>().saturating_mul(elem_size);
            let min = opts.min_chunk_bytes.unwrap_or(DEFAULT_MIN_CHUNK_BYTES);
            if !is_record && st.filters.is_empty() && bytes < min {
                continue;
            }
            let current = st.chunk_sizes.clone();
            let sizes: Vec<u64> = dim_spec
                .iter()
                .enumerate()
                .map(|(k, asked)| match asked {
                    Some(None) => shape[k].max(1),
                    // an unlimited dimension grows: its chunk size is not bounded by its length
                    Some(Some(n)) if unlimited[k] => *n,
                    Some(Some(n)) => (*n).min(shape[k].max(1)),
                    // a dimension not named keeps the input's chunking, else the whole
                    // length, or one record along an unlimited dimension
                    None => current
                        .as_ref()
                        .and_then(|c| c.get(k).copied())
                        .unwrap_or(if unlimited[k] { 1 } else { shape[k].max(1) }),
                })
                .collect();
            st.layout = Some(nc_dataset::Layout::Chunked);
            st.chunk_sizes = Some(sizes);
        }
    }
    clamp_chunks_to_fixed_dims(out);
    Ok(Some(plan))
}

/// nccopy's default `-M`: non-record variables under 8192 bytes are not chunked by `-c dim/N`.
const DEFAULT_MIN_CHUNK_BYTES: u64 = 8192;

/// A chunk cannot be longer than a fixed dimension (HDF5 refuses it): an input chunk size that
/// was fine along an unlimited dimension is cut to the length when `-u` makes it fixed.
fn clamp_chunks_to_fixed_dims(out: &mut Dataset) {
    for i in 0..out.vars.len() {
        let dims: Vec<(bool, u64)> = out.vars[i]
            .dims
            .iter()
            .map(|d| (out.dim(*d).unlimited, out.dim(*d).len))
            .collect();
        if let Some(sizes) = out.vars[i].storage.chunk_sizes.as_mut() {
            for (c, &(unlimited, len)) in sizes.iter_mut().zip(&dims) {
                if !unlimited && len > 0 {
                    *c = (*c).min(len);
                }
            }
        }
    }
}
/// The output format: the asked one, else the input's, except that compression or chunking
/// asked for a classic-format input gives netCDF-4 classic model (`-d n`, `-s`, `-c`) or
/// netCDF-4 (`-F` other than `none`), as netCDF-C 4.9.0's nccopy does.
pub(crate) fn output_format(input: Option<Format>, opts: &CopyOptions) -> Format {
    if let Some(f) = opts.format {
        return f;
    }
    let f = input.unwrap_or(Format::Classic);
    if !f.is_classic_file() {
        return f;
    }
    if opts.filters.iter().any(|o| o.trim() != "none") {
        return Format::Netcdf4;
    }
    if opts.deflate.is_some_and(|d| d > 0) || opts.shuffle || !opts.chunks.is_empty() {
        return Format::Netcdf4Classic;
    }
    f
}

/// `--shard`: set `_ShardSizes` of the output variables (an empty list: the writer picks a
/// shard of about 128 MiB of whole chunks).
pub(crate) fn apply_shards(out: &mut Dataset, v3: bool, specs: &[String]) -> Result<(), String> {
    if !v3 {
        // the shards of a Zarr v3 input are its layout, as its chunks are: other formats
        // have none to keep
        for v in &mut out.vars {
            v.storage.shard_sizes = None;
        }
    }
    if specs.is_empty() {
        return Ok(());
    }
    if !v3 {
        return Err(
            "--shard applies to Zarr version 3 outputs only (file://PATH#mode=zarr,v3,file)".into(),
        );
    }
    for spec in specs {
        let spec = spec.trim();
        if spec == "auto" {
            for v in &mut out.vars {
                if !v.dims.is_empty() {
                    v.storage.shard_sizes = Some(Vec::new());
                }
            }
            continue;
        }
        let bad = || {
            format!(
                "--shard {spec:?}: expected \"auto\" or VAR:N1,N2,... (shard lengths, whole \
                 chunks of the variable)"
            )
        };
        let (name, sizes) = spec.rsplit_once(':').ok_or_else(bad)?;
        let sizes: Vec<u64> = sizes
            .split(',')
            .map(|n| n.trim().parse::<u64>().ok().filter(|&n| n > 0))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        let found: Vec<VarId> = (0..out.vars.len())
            .map(VarId)
            .filter(|&v| {
                let path = out.var_path(v);
                path == name || path.trim_start_matches('/') == name || out.var(v).name == name
            })
            .collect();
        if found.is_empty() {
            return Err(format!("--shard {spec:?}: no variable named {name:?}"));
        }
        for v in found {
            let rank = out.var(v).dims.len();
            if sizes.len() != rank {
                return Err(format!(
                    "--shard {spec:?}: {} lengths for the rank-{rank} variable {}",
                    sizes.len(),
                    out.var_path(v)
                ));
            }
            out.var_mut(v).storage.shard_sizes = Some(sizes.clone());
        }
    }
    Ok(())
}

/// A filter as the copy's warnings name it: `307 (bzip2)`, `id (unknown)` for one we do not know.
fn id_and_name(f: &nc_dataset::FilterSpec) -> String {
    format!(
        "{} ({})",
        f.id,
        nc_filters::filter_name(f.id).unwrap_or("unknown")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_format_follows_nccopy() {
        let with = |f: &dyn Fn(&mut CopyOptions)| {
            let mut o = CopyOptions::default();
            f(&mut o);
            output_format(Some(Format::Classic), &o)
        };
        assert_eq!(with(&|_| {}), Format::Classic);
        assert_eq!(with(&|o| o.deflate = Some(0)), Format::Classic);
        assert_eq!(with(&|o| o.deflate = Some(1)), Format::Netcdf4Classic);
        assert_eq!(with(&|o| o.shuffle = true), Format::Netcdf4Classic);
        assert_eq!(
            with(&|o| o.chunks = vec!["/".into()]),
            Format::Netcdf4Classic
        );
        assert_eq!(with(&|o| o.filters = vec!["none".into()]), Format::Classic);
        assert_eq!(with(&|o| o.filters = vec!["v,1,1".into()]), Format::Netcdf4);
        assert_eq!(
            with(&|o| {
                o.format = Some(Format::Offset64);
                o.deflate = Some(1);
            }),
            Format::Offset64
        );
    }
}
