//! The format-to-format copy loop behind nccopy-rs.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use nc_dataset::{
    DataError, DataSource, Dataset, DimId, Format, GroupId, InMemory, Layout, NcType, TypeId,
    UserTypeKind, Values, VarId,
};

use crate::{create, CreateOptions, Failure, Opened};

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
    /// `-g`: copy data only for variables in these groups (full paths such as `/g/h`, `/` for
    /// the root, or plain names matching every group so named); all definitions are kept.
    pub data_groups: Option<Vec<String>>,
    /// `-G`: copy only these groups (same names as `data_groups`), with the root group's
    /// definitions always; a listed group's parent must be listed too (or be the root).
    pub only_groups: Option<Vec<String>>,
    /// `-F` options in command-line order.
    pub filters: Vec<String>,
    /// `-d n`: deflate level.
    pub deflate: Option<u32>,
    /// `-s`: shuffle with deflate.
    pub shuffle: bool,
    /// `-c` chunking specs (`dim/N,…`, `var:N1,N2`, `var:` contiguous, `/` contiguous for all).
    pub chunks: Vec<String>,
    /// `--shard` specs for a Zarr v3 output: `auto` (every chunked variable, shards of about
    /// 128 MiB) or `var:N1,N2,…` (shard lengths, whole chunks).
    pub shards: Vec<String>,
    /// `-Q` specs: quantize float and double variables (`VAR,ALGORITHM,N`, `*` for all; see
    /// `quantize::apply_specs`).
    pub quantize: Vec<String>,
    /// `-M n`: non-record variables smaller than this many bytes stay contiguous when `-c`
    /// chunks by dimension (`None`: nccopy's default, 8192).
    pub min_chunk_bytes: Option<u64>,
    /// `-m n`: copy buffer size in bytes. Accepted as a hint: the writers read their input in
    /// slabs of their own fixed size (about 4 MiB classic, 2^20 elements netCDF-4).
    pub buffer_size: Option<u64>,
    /// `-h n`: chunk cache size in bytes. Accepted as a hint: the readers keep no chunk cache.
    pub cache_size: Option<u64>,
    /// `-e n`: chunk cache element count. Accepted as a hint, as `cache_size`.
    pub cache_elems: Option<u64>,
    /// Called as data is read for the output (from several threads at once).
    pub progress: Option<ProgressFn>,
    /// Replace an existing output file the user may not write (`--force`).
    pub force: bool,
    /// `--part`: write the output store by parts, this call doing one step (init, one part,
    /// finish; see [`nc_zarr::fanout`]). Only for NCZarr / Zarr directory and object-storage
    /// outputs.
    pub part: Option<nc_zarr::FanoutStep>,
}

/// How far a copy has come: sent once before any data is read, after every read of the
/// writers, and once at the end with `finished` set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressEvent {
    /// Bytes of variable data read so far (elements × in-memory type size).
    pub bytes_done: u64,
    /// Bytes of variable data in the whole output.
    pub bytes_total: u64,
    /// Variables whose data has been read completely.
    pub vars_done: usize,
    /// Variables in the output.
    pub vars_total: usize,
    /// The output is complete and in place.
    pub finished: bool,
}

/// A progress callback (see [`CopyOptions::progress`]).
#[derive(Clone)]
pub struct ProgressFn(pub Arc<dyn Fn(ProgressEvent) + Send + Sync>);

impl std::fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressFn(..)")
    }
}

/// What a copy did besides copying: the per-variable filter decisions and warnings.
#[derive(Debug, Clone, Default)]
pub struct CopyReport {
    /// Warnings for the user (unfilterable variables, options matching nothing, dropped settings).
    pub warnings: Vec<String>,
    /// One line per output variable: the -F rule row that fired, the filter chain, the chunk
    /// shape and the storage layout (see [`explain`]).
    pub explain: Vec<String>,
    /// With [`CopyOptions::part`]: why the step wrote nothing (it had been done already).
    pub unchanged: Option<String>,
}

/// A `-c` chunking spec, parsed (grammar: nccopy's man page and netCDF-C 4.9.0's
/// `ncdump/chunkspec.c`).
#[derive(Debug, Clone, Default, PartialEq)]
struct ChunkSpec {
    /// `dim/N` entries (`None`: `dim/` — the full dimension length).
    dims: Vec<(String, Option<u64>)>,
    /// `var:N1,N2`, `var:`, `var:contiguous`, `var:compact` entries.
    vars: Vec<(String, VarChunking)>,
    /// `/` alone: every variable contiguous.
    all_contiguous: bool,
}

/// What a per-variable `-c var:...` asks.
#[derive(Debug, Clone, PartialEq)]
enum VarChunking {
    /// `var:N1,N2,...`: chunked with these sizes.
    Sizes(Vec<u64>),
    /// `var:` or `var:contiguous`.
    Contiguous,
    /// `var:compact` (in the HDF5 object header; at most 64 KiB).
    Compact,
}

/// HDF5 (and netCDF-C's `nc_def_var_chunking`) keep compact data under 64 KiB.
const MAX_COMPACT_BYTES: u64 = 64 * 1024;

fn parse_chunk_specs(specs: &[String]) -> Result<ChunkSpec, String> {
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
fn dim_matches(ds: &Dataset, d: DimId, name: &str) -> bool {
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
fn check_chunk_specs(input: &Dataset, specs: &[String]) -> Result<(), String> {
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

/// Apply `-F`/`-d`/`-s`/`-c` to the output variables' storage settings.
fn apply_storage_options(
    out: &mut Dataset,
    format: Format,
    to_zarr: bool,
    opts: &CopyOptions,
    report: &mut CopyReport,
) -> Result<(), String> {
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
                .map(|f| {
                    format!(
                        "{} ({})",
                        f.id,
                        nc_filters::filter_name(f.id).unwrap_or("unknown")
                    )
                })
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
        return Ok(());
    }
    if asked_filters {
        let infos: Vec<nc_filters::rules::VarInfo> = (0..out.vars.len())
            .map(|i| nc_filters::rules::VarInfo::from_dataset(out, VarId(i)))
            .collect();
        let plan = nc_filters::rules::decide(&opts.filters, opts.deflate, opts.shuffle, &infos)
            .map_err(|e| format!("-F: {e}"))?;
        report.warnings.extend(plan.warnings.iter().cloned());
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
    } else {
        // an input filter on variable-length data (older netCDF-C, h5py) cannot be kept:
        // netCDF-4 refuses filters on strings and vlens
        for i in 0..out.vars.len() {
            let info = nc_filters::rules::VarInfo::from_dataset(out, VarId(i));
            let st = &mut out.vars[i].storage;
            if let Some(u) = info.unfilterable.filter(|_| !st.filters.is_empty()) {
                report.warnings.push(format!(
                    "variable {}: filters cannot apply to a {u} variable; left unfiltered",
                    info.path
                ));
                st.filters.clear();
                st.codecs = None;
            }
        }
    }
    // HDF5's nbit (5) and scaleoffset (6) are decoded on reading but have no encoder here:
    // the copy holds the decoded values without them (netCDF-C keeps them, through libhdf5)
    for i in 0..out.vars.len() {
        let st = &mut out.vars[i].storage;
        let dropped: Vec<String> = st
            .filters
            .iter()
            .filter(|f| matches!(f.id, 5 | 6))
            .map(|f| {
                format!(
                    "{} ({})",
                    f.id,
                    nc_filters::filter_name(f.id).unwrap_or("unknown")
                )
            })
            .collect();
        if !dropped.is_empty() {
            st.filters.retain(|f| !matches!(f.id, 5 | 6));
            report.warnings.push(format!(
                "variable {}: filter {} cannot be written (HDF5-only, read side); the data is copied without it",
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
    Ok(())
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

/// The variable matches a `-v`/`-V` entry: its plain name or its full path.
fn var_matches(ds: &Dataset, v: VarId, names: &[String]) -> bool {
    let name = &ds.var(v).name;
    let path = ds.var_path(v);
    // `grp/var` (relative to the root) as nccopy takes it, besides `/grp/var` and `var`
    names.iter().any(|n| {
        n == name || *n == path || (!n.starts_with('/') && path.strip_prefix('/') == Some(n))
    })
}

/// The groups a `-g`/`-G` list names: `/` is the root, `/a/b` a full path, a plain name every
/// group so named (at any depth). A relative path with a `/` names nothing, as in nccopy.
fn resolve_groups(ds: &Dataset, names: &[String], opt: &str) -> Result<Vec<bool>, String> {
    let mut sel = vec![false; ds.groups.len()];
    for n in names {
        let mut found = false;
        for (g, grp) in ds.groups.iter().enumerate() {
            let hit = if n.starts_with('/') {
                ds.group_path(GroupId(g)) == *n
            } else {
                g != 0 && !n.contains('/') && grp.name == *n
            };
            if hit {
                sel[g] = true;
                found = true;
            }
        }
        if !found {
            let hint = if !n.starts_with('/') && n.contains('/') {
                " (a group below the root is named by its full path, such as \"/g1/g2\", or by its plain name)"
            } else {
                ""
            };
            return Err(format!(
                "group \"{n}\" given to {opt} is not in the input{hint}"
            ));
        }
    }
    Ok(sel)
}

/// Keep only the groups and variables marked, renumbering groups, dimensions, user types and
/// variables in their original order. Returns the new id of each old variable.
fn retain(ds: &mut Dataset, keep_group: &[bool], keep_var: &[bool]) -> Vec<Option<VarId>> {
    fn renumber(keep: impl Iterator<Item = bool>) -> Vec<Option<usize>> {
        let mut next = 0;
        keep.map(|k| {
            k.then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
    }
    let gmap = renumber(keep_group.iter().copied());
    let gkept = |g: GroupId| gmap.get(g.0).copied().flatten().map(GroupId);
    let dmap = renumber(ds.dims.iter().map(|d| gkept(d.group).is_some()));
    let tmap = renumber(ds.types.iter().map(|t| gkept(t.group).is_some()));
    let vmap = renumber(
        ds.vars
            .iter()
            .enumerate()
            .map(|(i, v)| gkept(v.group).is_some() && keep_var.get(i).copied().unwrap_or(false)),
    );
    let ty = |t: NcType| match t {
        // a kept variable's type is defined in a kept group (its own or an ancestor)
        NcType::User(id) => NcType::User(TypeId(tmap.get(id.0).copied().flatten().unwrap_or(0))),
        a => a,
    };
    let fix_atts = |atts: &mut Vec<nc_dataset::Attribute>| {
        for a in atts {
            a.ty = ty(a.ty);
        }
    };
    let mut groups = Vec::new();
    for (g, grp) in std::mem::take(&mut ds.groups).into_iter().enumerate() {
        if gmap[g].is_none() {
            continue;
        }
        let mut grp = grp;
        grp.parent = grp.parent.and_then(gkept);
        grp.dims = grp
            .dims
            .iter()
            .filter_map(|d| dmap[d.0].map(DimId))
            .collect();
        grp.types = grp
            .types
            .iter()
            .filter_map(|t| tmap[t.0].map(TypeId))
            .collect();
        grp.vars = grp
            .vars
            .iter()
            .filter_map(|v| vmap[v.0].map(VarId))
            .collect();
        grp.groups = grp.groups.iter().filter_map(|c| gkept(*c)).collect();
        fix_atts(&mut grp.atts);
        groups.push(grp);
    }
    ds.groups = groups;
    let dims = std::mem::take(&mut ds.dims);
    ds.dims = dims
        .into_iter()
        .enumerate()
        .filter(|(i, _)| dmap[*i].is_some())
        .map(|(_, mut d)| {
            d.group = gkept(d.group).unwrap_or(GroupId(0));
            d
        })
        .collect();
    let types = std::mem::take(&mut ds.types);
    ds.types = types
        .into_iter()
        .enumerate()
        .filter(|(i, _)| tmap[*i].is_some())
        .map(|(_, mut t)| {
            t.group = gkept(t.group).unwrap_or(GroupId(0));
            match &mut t.kind {
                UserTypeKind::Vlen { base } => *base = ty(*base),
                UserTypeKind::Compound { fields, .. } => {
                    for f in fields {
                        f.ty = ty(f.ty);
                    }
                }
                UserTypeKind::Enum { .. } | UserTypeKind::Opaque { .. } => {}
            }
            t
        })
        .collect();
    let vars = std::mem::take(&mut ds.vars);
    ds.vars = vars
        .into_iter()
        .enumerate()
        .filter(|(i, _)| vmap[*i].is_some())
        .map(|(_, mut v)| {
            v.group = gkept(v.group).unwrap_or(GroupId(0));
            v.ty = ty(v.ty);
            v.dims = v.dims.iter().filter_map(|d| dmap[d.0].map(DimId)).collect();
            fix_atts(&mut v.atts);
            v
        })
        .collect();
    vmap.into_iter().map(|v| v.map(VarId)).collect()
}

/// Build the output dataset's metadata from the input's and the mapping out-var → in-var
/// (`None`: the output variable gets no data, it reads as fill).
fn plan(input: &Dataset, opts: &CopyOptions) -> Result<(Dataset, Vec<Option<VarId>>), String> {
    let mut out = input.clone();
    for v in &mut out.vars {
        v.data = None;
        // an HDF5 virtual dataset is copied as data: the output's default layout
        if v.storage.layout == Some(nc_dataset::Layout::Virtual) {
            v.storage.layout = None;
        }
    }
    if opts.fix_unlimited {
        for d in &mut out.dims {
            d.unlimited = false;
        }
        // as in nccopy -u, a variable that had an unlimited dimension drops the input's chunk
        // shape: contiguous when unfiltered, else the default chunking of its fixed shape
        for v in &mut out.vars {
            if v.dims.iter().any(|d| input.dim(*d).unlimited) {
                v.storage.chunk_sizes = None;
                if v.storage.filters.is_empty() && v.storage.codecs.is_none() {
                    v.storage.layout = Some(nc_dataset::Layout::Contiguous);
                }
            }
        }
    }
    for list in [&opts.data_vars, &opts.only_vars].into_iter().flatten() {
        for n in list {
            let found = (0..input.vars.len())
                .any(|i| var_matches(input, VarId(i), std::slice::from_ref(n)));
            if !found {
                return Err(format!(
                    "variable \"{n}\" given to -v/-V is not in the input"
                ));
            }
        }
    }
    let data_groups = match &opts.data_groups {
        Some(l) => Some(resolve_groups(input, l, "-g")?),
        None => None,
    };
    let only_groups = match &opts.only_groups {
        Some(l) => Some(resolve_groups(input, l, "-G")?),
        None => None,
    };
    let n = input.vars.len();
    // which input variables get their data copied
    let gets_data = |i: usize| {
        let v = VarId(i);
        let g = input.var(v).group.0;
        opts.data_vars
            .as_ref()
            .is_none_or(|l| var_matches(input, v, l))
            && opts
                .only_vars
                .as_ref()
                .is_none_or(|l| var_matches(input, v, l))
            && data_groups.as_ref().is_none_or(|s| s[g])
            && only_groups.as_ref().is_none_or(|s| s[g])
    };
    let data: Vec<bool> = (0..n).map(gets_data).collect();
    if opts.only_vars.is_none() && only_groups.is_none() {
        let map = (0..n).map(|i| data[i].then_some(VarId(i))).collect();
        return Ok((out, map));
    }
    let keep_group: Vec<bool> = match &only_groups {
        None => vec![true; input.groups.len()],
        Some(sel) => {
            let mut keep = sel.clone();
            keep[0] = true;
            for (g, grp) in input.groups.iter().enumerate() {
                if let Some(p) = grp.parent {
                    if keep[g] && !keep[p.0] {
                        return Err(format!(
                            "-G lists group \"{}\" but not its parent \"{}\"; list the parent too",
                            input.group_path(GroupId(g)),
                            input.group_path(p)
                        ));
                    }
                }
            }
            keep
        }
    };
    let keep_var: Vec<bool> = (0..n)
        .map(|i| {
            opts.only_vars
                .as_ref()
                .is_none_or(|l| var_matches(input, VarId(i), l))
        })
        .collect();
    let renumbered = retain(&mut out, &keep_group, &keep_var);
    let mut map = vec![None; out.vars.len()];
    for (i, new) in renumbered.iter().enumerate() {
        if let Some(nv) = new {
            map[nv.0] = data[i].then_some(VarId(i));
        }
    }
    // an unlimited dimension no copied variable uses has no records (nccopy's -V lat)
    for d in 0..out.dims.len() {
        let used = out.vars.iter().any(|v| v.dims.iter().any(|x| x.0 == d));
        if out.dims[d].unlimited && !used {
            out.dims[d].len = 0;
        }
    }
    Ok((out, map))
}

/// Counts the bytes the writers read, per variable, and reports them.
struct Progress {
    cb: ProgressFn,
    var_total: Vec<u64>,
    var_done: Vec<AtomicU64>,
    elem_size: Vec<u64>,
    bytes_total: u64,
    bytes_done: AtomicU64,
    vars_done: AtomicUsize,
}

impl Progress {
    fn new(cb: ProgressFn, ds: &Dataset) -> Progress {
        let elem_size: Vec<u64> = ds.vars.iter().map(|v| ds.type_size(v.ty) as u64).collect();
        let var_total: Vec<u64> = (0..ds.vars.len())
            .map(|i| {
                ds.num_elements(VarId(i))
                    .unwrap_or(0)
                    .saturating_mul(elem_size[i])
            })
            .collect();
        let bytes_total = var_total.iter().fold(0u64, |a, b| a.saturating_add(*b));
        let empty = var_total.iter().filter(|&&t| t == 0).count();
        Progress {
            cb,
            var_done: var_total.iter().map(|_| AtomicU64::new(0)).collect(),
            var_total,
            elem_size,
            bytes_total,
            bytes_done: AtomicU64::new(0),
            vars_done: AtomicUsize::new(empty),
        }
    }

    fn event(&self, finished: bool) -> ProgressEvent {
        ProgressEvent {
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            bytes_total: self.bytes_total,
            vars_done: self.vars_done.load(Ordering::Relaxed),
            vars_total: self.var_total.len(),
            finished,
        }
    }

    fn read(&self, var: VarId, count: &[u64]) {
        let Some(size) = self.elem_size.get(var.0) else {
            return;
        };
        let n = count
            .iter()
            .fold(1u64, |a, c| a.saturating_mul(*c))
            .saturating_mul(*size);
        // a region can be reported twice (a writer asks whether chunks are unwritten while
        // planning, then again while writing): a variable never counts past its size
        let total = self.var_total[var.0];
        let before = self.var_done[var.0]
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| {
                Some(d.saturating_add(n).min(total))
            })
            .unwrap_or(total);
        let added = before.saturating_add(n).min(total).saturating_sub(before);
        self.bytes_done.fetch_add(added, Ordering::Relaxed);
        if before < total && before.saturating_add(n) >= total {
            self.vars_done.fetch_add(1, Ordering::Relaxed);
        }
        (self.cb.0)(self.event(false));
    }
}

/// Reads the output variables' data from the input, or fill for variables not copied.
struct MappedSource<'a> {
    input: &'a Dataset,
    src: &'a dyn DataSource,
    map: Vec<Option<VarId>>,
    progress: Option<Progress>,
    /// The first error reading the input: the writer's failure is then the input's fault.
    input_error: std::sync::Mutex<Option<String>>,
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

/// The reader's message when a writer failed on the input's data without asking the source
/// (the netCDF-4 writer decodes a chunk it copies raw, so a corrupt one fails the copy).
fn source_failure(e: &crate::DispatchError) -> Option<String> {
    let crate::DispatchError::Hdf5(h) = e else {
        return None;
    };
    let h = match h {
        nc_hdf5::Hdf5Error::InFile { inner, .. } => inner.as_ref(),
        other => other,
    };
    match h {
        nc_hdf5::Hdf5Error::Source { message, .. } => Some(message.clone()),
        _ => None,
    }
}

/// Reading the input's data failed during a copy (the message is the reader's).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputReadError(String);

impl DataSource for MappedSource<'_> {
    fn read(
        &self,
        ds: &Dataset,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<Values, DataError> {
        let values = match self.map.get(var.0).copied().flatten() {
            Some(iv) => self.note(self.src.read(self.input, iv, start, count))?,
            None => InMemory.read(ds, var, start, count)?,
        };
        if let Some(p) = &self.progress {
            p.read(var, count);
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
        // variables whose data is not copied read as fill through `read`
        let iv = self.map.get(var.0).copied().flatten()?;
        // bytes are not converted: only for the same type on both sides
        if self.input.vars.get(iv.0)?.ty != ds.vars.get(var.0)?.ty {
            return None;
        }
        let bytes = self.src.read_le_bytes(self.input, iv, start, count)?;
        let bytes = self.note(bytes);
        if let Some(p) = &self.progress {
            p.read(var, count);
        }
        Some(bytes)
    }

    fn raw_chunk(
        &self,
        ds: &Dataset,
        var: VarId,
        offsets: &[u64],
        chunk: &[u64],
        chain: &[nc_dataset::FilterSpec],
    ) -> Option<Vec<u8>> {
        let iv = self.map.get(var.0).copied().flatten()?;
        // the input's type must be the output's (a raw chunk is not converted)
        if self.input.vars.get(iv.0)?.ty != ds.vars.get(var.0)?.ty {
            return None;
        }
        let bytes = self.src.raw_chunk(self.input, iv, offsets, chunk, chain)?;
        if let Some(p) = &self.progress {
            // progress counts the chunk's elements inside the variable
            let shape = ds.shape(var);
            let count: Vec<u64> = offsets
                .iter()
                .zip(chunk)
                .zip(&shape)
                .map(|((&o, &c), &n)| c.min(n.saturating_sub(o)))
                .collect();
            p.read(var, &count);
        }
        Some(bytes)
    }

    fn unwritten(&self, ds: &Dataset, var: VarId, start: &[u64], count: &[u64]) -> bool {
        let skip = match self.map.get(var.0).copied().flatten() {
            // the input's fill must be the output's: same type and the same fill value
            Some(iv) => {
                self.input.vars.get(iv.0).map(|v| v.ty) == ds.vars.get(var.0).map(|v| v.ty)
                    && same_bits(self.input.fill_value(iv), ds.fill_value(var))
                    && self.src.unwritten(self.input, iv, start, count)
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

/// The output format: the asked one, else the input's, except that compression or chunking
/// asked for a classic-format input gives netCDF-4 classic model (`-d n`, `-s`, `-c`) or
/// netCDF-4 (`-F` other than `none`), as netCDF-C 4.9.0's nccopy does.
fn output_format(input: Option<Format>, opts: &CopyOptions) -> Format {
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
fn apply_shards(out: &mut Dataset, v3: bool, specs: &[String]) -> Result<(), String> {
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

/// The output dataset and where its data comes from, with the report so far.
struct Prepared {
    out: Dataset,
    map: Vec<Option<VarId>>,
    format: Format,
    report: CopyReport,
}

/// Everything but the writing: selection, storage options, explanation lines. Its errors are
/// the command line's: a name the input lacks, an option the output cannot take.
fn prepare(in_ds: &Dataset, out_path: &Path, opts: &CopyOptions) -> Result<Prepared, Failure> {
    check_chunk_specs(in_ds, &opts.chunks).map_err(Failure::usage)?;
    let (mut out, map) = plan(in_ds, opts).map_err(Failure::usage)?;
    let to_zarr = crate::open::is_zarr_output(out_path);
    let format = output_format(in_ds.format, opts);
    let mut report = CopyReport::default();
    apply_storage_options(&mut out, format, to_zarr, opts, &mut report).map_err(Failure::usage)?;
    apply_shards(
        &mut out,
        crate::open::is_zarr_v3_output(out_path),
        &opts.shards,
    )
    .map_err(Failure::usage)?;
    let notes = crate::quantize::apply_specs(&mut out, &opts.quantize).map_err(Failure::usage)?;
    report.warnings.extend(notes);
    report.explain = explain_lines(&out, format, to_zarr, opts).map_err(Failure::usage)?;
    Ok(Prepared {
        out,
        map,
        format,
        report,
    })
}

/// One `--explain` line per output variable, after `-F`/`-d`/`-s`/`-c` are applied.
fn explain_lines(
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
                        Some(nc_hdf5::write::default_chunk_sizes(
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

/// What [`copy`] would do with these options, without writing anything: the report's
/// `explain` holds one line per output variable — the `-F` rule row that fired, the filter
/// chain, the chunk shape and the storage layout. `out_path` only tells whether the output
/// would be an NCZarr store.
///
/// # Errors
/// When the options do not fit the input (marked [`crate::Side::Usage`]).
pub fn explain(input: &Opened, out_path: &Path, opts: &CopyOptions) -> Result<CopyReport, Failure> {
    Ok(prepare(input.dataset(), out_path, opts)?.report)
}

/// Copy `input` to `out_path` as `opts` says; the output is written atomically.
///
/// # Errors
/// Marked with the side that failed: [`crate::Side::Usage`] when the options do not fit the
/// input, [`crate::Side::Input`] when reading its data fails (an [`InputReadError`] with the
/// reader's message), else [`crate::Side::Output`] (creating, writing or committing it, or a
/// dataset the output format cannot hold).
pub fn copy(input: &Opened, out_path: &Path, opts: &CopyOptions) -> Result<CopyReport, Failure> {
    let in_ds = input.dataset();
    if opts.part.is_some() {
        check_part_output(out_path)?;
    }
    let Prepared {
        out: out_ds,
        map,
        format,
        mut report,
    } = prepare(in_ds, out_path, opts)?;
    // what the output's metadata does not show but every part must agree on: which
    // variables get data, and from where
    let facts: String = map
        .iter()
        .enumerate()
        .map(|(o, i)| {
            let from = i.map_or("-".to_string(), |i| in_ds.var_path(i));
            format!("{} <- {from}\n", out_ds.var_path(VarId(o)))
        })
        .collect();
    let progress = opts.progress.clone().map(|cb| Progress::new(cb, &out_ds));
    if let Some(p) = &progress {
        (p.cb.0)(p.event(false));
    }
    let src = MappedSource {
        input: in_ds,
        src: input.source(),
        map,
        progress,
        input_error: std::sync::Mutex::new(None),
    };
    // netCDF-C's nccopy writes with fill off: padding is zeros, data is all copied.
    let create_opts = CreateOptions {
        format,
        fill: false,
        only_given_data: false,
        force: opts.force,
    };
    let written = match opts.part {
        None => create(out_path, &out_ds, &src, &create_opts),
        Some(step) => crate::create_part(
            out_path,
            &out_ds,
            &src,
            &create_opts,
            step,
            facts.as_bytes(),
        )
        .map(|outcome| {
            if let nc_zarr::FanoutOutcome::Unchanged(why) = outcome {
                report.unchanged = Some(why);
            }
        }),
    };
    if let Err(e) = written {
        let read = src
            .input_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        return Err(match read.or_else(|| source_failure(&e)) {
            Some(msg) => Failure::input(InputReadError(msg)),
            None => Failure::output(e),
        });
    }
    if let Some(p) = &src.progress {
        (p.cb.0)(p.event(true));
    }
    Ok(report)
}

/// `--part` writes an NCZarr / Zarr store in a directory or on object storage, nothing else.
fn check_part_output(out_path: &Path) -> Result<(), Failure> {
    match crate::open::zarr_output(out_path) {
        Some(loc) if loc.storage == nc_zarr::StorageKind::Zip => Err(Failure::usage(format!(
            "--part: {}: a zip store is one archive with one writer, so it cannot be written \
             by parts: write a directory store (#mode=...,file) or object storage by parts, \
             then zip it",
            out_path.display()
        ))),
        Some(_) => Ok(()),
        None => Err(Failure::usage(format!(
            "--part: {}: only an NCZarr / Zarr store can be written by parts: name the output \
             as a directory store (file://PATH#mode=zarr,file, #mode=nczarr,file or \
             #mode=zarr,v3,file) or a store on object storage (s3://bucket/key#mode=zarr); a \
             netCDF-4 or classic file has one writer: copy it in one call without --part",
            out_path.display()
        ))),
    }
}

#[cfg(test)]
mod group_tests {
    use super::*;
    use nc_dataset::{AtomicType, EnumMember, ROOT};

    /// /v(d), /a/{e type, w(d2)}, /b/{f type, x(d3) of type f, subgroup c/{y}}.
    fn sample() -> Dataset {
        let mut ds = Dataset::new("s");
        let d = ds.add_dim(ROOT, "d", 2, false);
        ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![d]);
        let a = ds.add_group(ROOT, "a");
        let enum_kind = |n: &str| UserTypeKind::Enum {
            base: AtomicType::Int,
            members: vec![EnumMember {
                name: n.into(),
                value: 1,
            }],
        };
        ds.add_type(a, "e", enum_kind("A"));
        let d2 = ds.add_dim(a, "d2", 3, false);
        ds.add_var(a, "w", NcType::Atomic(AtomicType::Short), vec![d2]);
        let b = ds.add_group(ROOT, "b");
        let f = ds.add_type(b, "f", enum_kind("B"));
        let d3 = ds.add_dim(b, "d3", 4, false);
        ds.add_var(b, "x", NcType::User(f), vec![d3, d]);
        let c = ds.add_group(b, "c");
        ds.add_var(c, "y", NcType::Atomic(AtomicType::Int), vec![d3]);
        ds
    }

    #[test]
    fn big_g_drops_groups_and_renumbers_ids() {
        let ds = sample();
        let opts = CopyOptions {
            only_groups: Some(vec!["/b".into(), "c".into()]),
            ..CopyOptions::default()
        };
        let (out, map) = plan(&ds, &opts).unwrap();
        let paths: Vec<String> = (0..out.groups.len())
            .map(|g| out.group_path(GroupId(g)))
            .collect();
        assert_eq!(paths, ["/", "/b", "/b/c"]);
        let vars: Vec<String> = out.all_vars().iter().map(|v| out.var_path(*v)).collect();
        assert_eq!(vars, ["/v", "/b/x", "/b/c/y"]);
        // the root's definitions stay, its data does not (not listed)
        assert_eq!(map, [None, Some(VarId(2)), Some(VarId(3))]);
        assert_eq!(out.types.len(), 1);
        assert_eq!(out.types[0].name, "f");
        assert_eq!(out.types[0].group, GroupId(1));
        let x = out.var(VarId(1));
        assert_eq!(x.ty, NcType::User(TypeId(0)));
        let dims: Vec<(&str, u64)> = x
            .dims
            .iter()
            .map(|d| (out.dim(*d).name.as_str(), out.dim(*d).len))
            .collect();
        assert_eq!(dims, [("d3", 4), ("d", 2)]);
        assert_eq!(out.groups[1].dims, [DimId(1)]);
        assert_eq!(out.groups[2].parent, Some(GroupId(1)));
        assert_eq!(out.groups[0].groups, [GroupId(1)]);
    }

    #[test]
    fn small_g_keeps_definitions_and_selects_data() {
        let ds = sample();
        let opts = CopyOptions {
            data_groups: Some(vec!["/".into(), "c".into()]),
            ..CopyOptions::default()
        };
        let (out, map) = plan(&ds, &opts).unwrap();
        assert_eq!(out.vars.len(), 4);
        assert_eq!(out.groups.len(), 4);
        assert_eq!(map, [Some(VarId(0)), None, None, Some(VarId(3))]);
    }

    #[test]
    fn group_names_that_match_nothing() {
        let ds = sample();
        for (list, opt, why) in [
            (
                vec!["b/c"],
                "-g",
                "group \"b/c\" given to -g is not in the input (a group below the root is named by its full path, such as \"/g1/g2\", or by its plain name)",
            ),
            (vec!["zz"], "-G", "group \"zz\" given to -G is not in the input"),
            (
                vec!["c"],
                "-G",
                "-G lists group \"/b/c\" but not its parent \"/b\"; list the parent too",
            ),
        ] {
            let list: Vec<String> = list.into_iter().map(String::from).collect();
            let opts = if opt == "-g" {
                CopyOptions {
                    data_groups: Some(list),
                    ..CopyOptions::default()
                }
            } else {
                CopyOptions {
                    only_groups: Some(list),
                    ..CopyOptions::default()
                }
            };
            assert_eq!(plan(&ds, &opts).unwrap_err(), why);
        }
    }

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

#[cfg(test)]
mod progress_tests {
    use super::*;
    use nc_dataset::{AtomicType, ROOT};
    use std::sync::Mutex;

    /// Write `ds` in `format`, copy the data of `a` only to netCDF-4, and return every
    /// progress event of the copy.
    fn events_of_copy(ds: &Dataset, format: Format) -> Vec<ProgressEvent> {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in.nc");
        let input_opts = CreateOptions {
            format,
            ..CreateOptions::default()
        };
        create(&src, ds, &InMemory, &input_opts).unwrap();
        let input = crate::open(&src).unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let opts = CopyOptions {
            format: Some(Format::Netcdf4),
            data_vars: Some(vec!["a".into()]),
            progress: Some(ProgressFn(Arc::new(move |e| {
                sink.lock().unwrap().push(e);
            }))),
            ..CopyOptions::default()
        };
        copy(&input, &dir.path().join("out.nc"), &opts).unwrap();
        let ev = events.lock().unwrap().clone();
        ev
    }

    #[test]
    fn progress_counts_every_byte_and_variable() {
        let mut ds = Dataset::new("p");
        let n = ds.add_dim(ROOT, "n", 1000, false);
        let a = ds.add_var(ROOT, "a", NcType::Atomic(AtomicType::Double), vec![n]);
        ds.var_mut(a).data = Some(Values::Double((0..1000).map(f64::from).collect()));
        ds.add_var(ROOT, "b", NcType::Atomic(AtomicType::Short), vec![n]);
        ds.add_var(ROOT, "s", NcType::Atomic(AtomicType::Int), vec![]);
        let ev = events_of_copy(&ds, Format::Classic);
        let total = 8000 + 2000 + 4;
        assert_eq!(
            ev.first(),
            Some(&ProgressEvent {
                bytes_done: 0,
                bytes_total: total,
                vars_done: 0,
                vars_total: 3,
                finished: false,
            })
        );
        assert_eq!(
            ev.last(),
            Some(&ProgressEvent {
                bytes_done: total,
                bytes_total: total,
                vars_done: 3,
                vars_total: 3,
                finished: true,
            })
        );
    }

    /// Chunks left unwritten (a variable not copied, chunked) are asked about twice, while
    /// planning and while writing: the bar still ends at exactly 100 %, never past it.
    #[test]
    fn progress_never_counts_past_the_total() {
        let mut ds = Dataset::new("p");
        let n = ds.add_dim(ROOT, "n", 1000, false);
        let a = ds.add_var(ROOT, "a", NcType::Atomic(AtomicType::Double), vec![n]);
        ds.var_mut(a).data = Some(Values::Double((0..1000).map(f64::from).collect()));
        let b = ds.add_var(ROOT, "b", NcType::Atomic(AtomicType::Short), vec![n]);
        ds.var_mut(b).storage.layout = Some(nc_dataset::Layout::Chunked);
        ds.var_mut(b).storage.chunk_sizes = Some(vec![100]);
        let ev = events_of_copy(&ds, Format::Netcdf4);
        let total = 8000 + 2000;
        assert!(
            ev.iter().all(|e| e.bytes_done <= total && e.vars_done <= 2),
            "{ev:?}"
        );
        let last = ev.last().unwrap();
        assert_eq!(
            (last.bytes_done, last.vars_done, last.finished),
            (total, 2, true)
        );
    }
}
