//! The format-to-format copy loop behind nccopy-rs.

use std::collections::HashSet;
use std::path::Path;

use nc_dataset::{DataError, DataSource, Dataset, Format, InMemory, Values, VarId};

use crate::{create, CreateOptions, DispatchError, Opened};

/// What to copy and how (nccopy's options, as far as this backend set supports them).
#[derive(Debug, Clone, Default)]
pub struct CopyOptions {
    /// Output format; `None` = same as the input.
    pub format: Option<Format>,
    /// `-u`: make unlimited dimensions fixed.
    pub fix_unlimited: bool,
    /// `-v`: copy data only for these variables (names or full paths); all definitions are kept.
    pub data_vars: Option<Vec<String>>,
    /// `-V`: copy definitions and data only for these variables.
    pub only_vars: Option<Vec<String>>,
    /// `-F` options in command-line order.
    pub filters: Vec<String>,
    /// `-d n`: deflate level.
    pub deflate: Option<u32>,
    /// `-s`: shuffle with deflate.
    pub shuffle: bool,
    /// `-c` chunking specs (`dim/N,…`, `var:N1,N2`, `var:` contiguous, `/` contiguous for all).
    pub chunks: Vec<String>,
}

/// What a copy did besides copying: the per-variable filter decisions and warnings.
#[derive(Debug, Clone, Default)]
pub struct CopyReport {
    /// Warnings for the user (unfilterable variables, options matching nothing, dropped settings).
    pub warnings: Vec<String>,
    /// One line per output variable: the -F rule row that fired and the chain.
    pub explain: Vec<String>,
}

/// A `-c` chunking spec, parsed.
#[derive(Debug, Clone, Default, PartialEq)]
struct ChunkSpec {
    /// `dim/N` entries (N = 0 means the full dimension length).
    dims: Vec<(String, u64)>,
    /// `var:N1,N2` entries (empty sizes = contiguous).
    vars: Vec<(String, Vec<u64>)>,
    /// `/` alone: every variable contiguous.
    all_contiguous: bool,
}

fn parse_chunk_specs(specs: &[String]) -> Result<ChunkSpec, String> {
    let mut out = ChunkSpec::default();
    for spec in specs {
        let spec = spec.trim();
        // "/" (and "//", as netCDF-C's tests write it): every variable contiguous
        if !spec.is_empty() && spec.chars().all(|c| c == '/') {
            out.all_contiguous = true;
            continue;
        }
        if let Some((var, sizes)) = spec.split_once(':') {
            let sizes = sizes.trim();
            let v: Result<Vec<u64>, _> = if sizes.is_empty() {
                Ok(Vec::new())
            } else {
                sizes.split(',').map(|n| n.trim().parse::<u64>()).collect()
            };
            let v = v.map_err(|_| {
                format!("-c {spec}: chunk sizes must be whole numbers, as var:N1,N2,...")
            })?;
            if v.contains(&0) {
                return Err(format!("-c {spec}: a chunk size must be at least 1"));
            }
            out.vars.push((var.trim().to_string(), v));
            continue;
        }
        for part in spec.split(',') {
            let Some((d, n)) = part.split_once('/') else {
                return Err(format!(
                    "-c {spec}: expected dim/N,... or var:N1,N2,... (\"{part}\" has neither)"
                ));
            };
            let n = if n.trim().is_empty() {
                0
            } else {
                n.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("-c {spec}: \"{n}\" is not a chunk size"))?
            };
            out.dims.push((d.trim().to_string(), n));
        }
    }
    Ok(out)
}

/// Apply `-F`/`-d`/`-s`/`-c` to the output variables' storage settings.
fn apply_storage_options(
    out: &mut Dataset,
    format: Format,
    to_zarr: bool,
    opts: &CopyOptions,
    report: &mut CopyReport,
) -> Result<(), String> {
    let can_filter = to_zarr || matches!(format, Format::Netcdf4 | Format::Netcdf4Classic);
    let asked_filters = !opts.filters.is_empty() || opts.deflate.is_some() || opts.shuffle;
    if !can_filter {
        if asked_filters || !opts.chunks.is_empty() {
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
        return Ok(());
    }
    if asked_filters {
        let infos: Vec<nc_filters::rules::VarInfo> = (0..out.vars.len())
            .map(|i| nc_filters::rules::VarInfo::from_dataset(out, VarId(i)))
            .collect();
        let plan = nc_filters::rules::decide(&opts.filters, opts.deflate, opts.shuffle, &infos)
            .map_err(|e| format!("-F: {e}"))?;
        report.warnings.extend(plan.warnings.iter().cloned());
        report.explain.extend(plan.explain());
        for (i, info) in infos.iter().enumerate() {
            if let Some(d) = plan.get(&info.path) {
                let st = &mut out.vars[i].storage;
                st.filters = d.chain.clone();
                st.codecs = None;
                if !st.filters.is_empty() {
                    st.layout = Some(nc_dataset::Layout::Chunked);
                }
            }
        }
    }
    if !opts.chunks.is_empty() {
        let spec = parse_chunk_specs(&opts.chunks)?;
        for i in 0..out.vars.len() {
            let v = VarId(i);
            let path = out.var_path(v);
            let name = out.var(v).name.clone();
            let shape = out.shape(v);
            let dims: Vec<String> = out
                .var(v)
                .dims
                .iter()
                .map(|d| out.dim(*d).name.clone())
                .collect();
            let unlimited: Vec<bool> = out
                .var(v)
                .dims
                .iter()
                .map(|d| out.dim(*d).unlimited)
                .collect();

            let by_var = spec.vars.iter().find(|(n, _)| *n == name || *n == path);
            let st = &mut out.vars[i].storage;
            if spec.all_contiguous || by_var.is_some_and(|(_, s)| s.is_empty()) {
                if !st.filters.is_empty() {
                    report.warnings.push(format!(
                        "{path}: filters need chunked storage; keeping it chunked"
                    ));
                    continue;
                }
                st.layout = Some(nc_dataset::Layout::Contiguous);
                st.chunk_sizes = None;
                continue;
            }
            if let Some((_, sizes)) = by_var {
                if sizes.len() != dims.len() {
                    return Err(format!(
                        "-c {name}:...: {} sizes given for a variable of rank {}",
                        sizes.len(),
                        dims.len()
                    ));
                }
                st.layout = Some(nc_dataset::Layout::Chunked);
                st.chunk_sizes = Some(sizes.clone());
                continue;
            }
            if dims.is_empty() || !dims.iter().any(|d| spec.dims.iter().any(|(n, _)| n == d)) {
                continue;
            }
            let current = st.chunk_sizes.clone();
            let sizes: Vec<u64> = dims
                .iter()
                .enumerate()
                .map(|(k, d)| match spec.dims.iter().find(|(n, _)| n == d) {
                    Some((_, 0)) => shape[k].max(1),
                    // an unlimited dimension grows: its chunk size is not bounded by its length
                    Some((_, n)) if unlimited[k] => *n,
                    Some((_, n)) => (*n).min(shape[k].max(1)),
                    None => current
                        .as_ref()
                        .and_then(|c| c.get(k).copied())
                        .unwrap_or(shape[k].max(1)),
                })
                .collect();
            st.layout = Some(nc_dataset::Layout::Chunked);
            st.chunk_sizes = Some(sizes);
        }
    }
    Ok(())
}

/// The variable matches a `-v`/`-V` entry: its plain name or its full path.
fn var_matches(ds: &Dataset, v: VarId, names: &[String]) -> bool {
    let name = &ds.var(v).name;
    let path = ds.var_path(v);
    names.iter().any(|n| n == name || *n == path)
}

/// Build the output dataset's metadata from the input's and the mapping out-var → in-var.
fn plan(input: &Dataset, opts: &CopyOptions) -> Result<(Dataset, Vec<Option<VarId>>), String> {
    let mut out = input.clone();
    for v in &mut out.vars {
        v.data = None;
    }
    if opts.fix_unlimited {
        for d in &mut out.dims {
            d.unlimited = false;
        }
    }
    let mut map: Vec<Option<VarId>> = (0..input.vars.len()).map(|i| Some(VarId(i))).collect();
    for list in [&opts.data_vars, &opts.only_vars].into_iter().flatten() {
        for n in list {
            let found = input
                .vars
                .iter()
                .enumerate()
                .any(|(i, _)| var_matches(input, VarId(i), std::slice::from_ref(n)));
            if !found {
                return Err(format!(
                    "variable \"{n}\" given to -v/-V is not in the input"
                ));
            }
        }
    }
    if let Some(names) = &opts.data_vars {
        for (i, m) in map.iter_mut().enumerate() {
            if !var_matches(input, VarId(i), names) {
                *m = None;
            }
        }
    }
    if let Some(names) = &opts.only_vars {
        let keep: HashSet<usize> = (0..input.vars.len())
            .filter(|&i| var_matches(input, VarId(i), names))
            .collect();
        // Rebuild the variable table keeping only the listed variables, in order.
        let mut new_vars = Vec::new();
        let mut new_map = Vec::new();
        let mut renumber = vec![None; input.vars.len()];
        for (i, v) in out.vars.iter().enumerate() {
            if keep.contains(&i) {
                renumber[i] = Some(VarId(new_vars.len()));
                new_vars.push(v.clone());
                new_map.push(map[i]);
            }
        }
        for g in &mut out.groups {
            g.vars = g.vars.iter().filter_map(|v| renumber[v.0]).collect();
        }
        out.vars = new_vars;
        map = new_map;
    }
    Ok((out, map))
}

/// Reads the output variables' data from the input, or fill for variables not copied.
struct MappedSource<'a> {
    input: &'a Dataset,
    src: &'a dyn DataSource,
    map: Vec<Option<VarId>>,
}

impl DataSource for MappedSource<'_> {
    fn read(
        &self,
        ds: &Dataset,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<Values, DataError> {
        match self.map.get(var.0).copied().flatten() {
            Some(iv) => self.src.read(self.input, iv, start, count),
            None => InMemory.read(ds, var, start, count),
        }
    }
}

/// Copy `input` to `out_path` as `opts` says; the output is written atomically.
///
/// # Errors
/// When the options do not fit the input, or reading or writing fails.
pub fn copy(
    input: &Opened,
    out_path: &Path,
    opts: &CopyOptions,
) -> Result<CopyReport, DispatchError> {
    let in_ds = input.dataset();
    let conflict = |why| DispatchError::ModelConflict {
        path: out_path.to_path_buf(),
        why,
    };
    let (mut out_ds, map) = plan(in_ds, opts).map_err(conflict)?;
    let to_zarr = crate::open::is_zarr_output(out_path);
    let format = opts.format.or(in_ds.format).unwrap_or(Format::Classic);
    let mut report = CopyReport::default();
    apply_storage_options(&mut out_ds, format, to_zarr, opts, &mut report).map_err(conflict)?;
    let src = MappedSource {
        input: in_ds,
        src: input.source(),
        map,
    };
    create(
        out_path,
        &out_ds,
        &src,
        // netCDF-C's nccopy writes with fill off: padding is zeros, data is all copied.
        &CreateOptions {
            format,
            fill: false,
            only_given_data: false,
        },
    )?;
    Ok(report)
}
