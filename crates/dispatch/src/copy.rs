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
}

/// The variable matches a `-v`/`-V` entry: its plain name or its full path.
fn var_matches(ds: &Dataset, v: VarId, names: &[String]) -> bool {
    let var = ds.var(v);
    let path = {
        let g = ds.group_path(var.group);
        if g == "/" {
            format!("/{}", var.name)
        } else {
            format!("{g}/{}", var.name)
        }
    };
    names.iter().any(|n| *n == var.name || *n == path)
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
pub fn copy(input: &Opened, out_path: &Path, opts: &CopyOptions) -> Result<(), DispatchError> {
    let in_ds = input.dataset();
    let (out_ds, map) = plan(in_ds, opts).map_err(|why| DispatchError::ModelConflict {
        path: out_path.to_path_buf(),
        why,
    })?;
    let format = opts.format.or(in_ds.format).unwrap_or(Format::Classic);
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
    )
}
