//! The join plan: which dimensions are joined, how long they become, which variables run
//! along them, and every input checked against the first, each input's metadata read once.

use std::collections::{HashMap, HashSet};

use nc_dataset::{Dataset, DimId, Slab, Values, VarId};
use nc_dispatch::{Location, Opened};

use crate::kept::Kept;
use crate::units::{Calendar, Rebase, TimeUnits};
use crate::JoinError;

/// The full path of a dimension: `/time`, `/g/time`.
pub(crate) fn dim_path(ds: &Dataset, d: DimId) -> String {
    let dim = ds.dim(d);
    let g = ds.group_path(dim.group);
    if g == "/" {
        format!("/{}", dim.name)
    } else {
        format!("{g}/{}", dim.name)
    }
}

/// Every variable of `ds` by its full path.
pub(crate) fn vars_by_path(ds: &Dataset) -> HashMap<String, VarId> {
    (0..ds.vars.len())
        .map(|i| (ds.var_path(VarId(i)), VarId(i)))
        .collect()
}

/// One joined dimension (a dimension of the join's name, in any group).
#[derive(Debug)]
pub(crate) struct JoinDim {
    /// Its full path.
    pub path: String,
    /// Where each input's indices begin in the join: `offsets[i]..offsets[i + 1]` (one more
    /// entry than inputs).
    pub offsets: Vec<u64>,
    /// The coordinate variable's path (a 1-D variable of the dimension's name), if any.
    pub coord: Option<String>,
    /// Per input, the rebase of its coordinate to the first input's units (`None`: same units).
    pub rebase: Vec<Option<Rebase>>,
}

impl JoinDim {
    /// The input pieces of `start..start + count` of the joined dimension: (input, first
    /// index in the input, count), in order.
    pub fn pieces(&self, start: u64, count: u64) -> Vec<(usize, u64, u64)> {
        let mut out = Vec::new();
        if count == 0 {
            return out;
        }
        let mut i = self
            .offsets
            .partition_point(|&o| o <= start)
            .saturating_sub(1);
        let mut at = start;
        let end = start + count;
        while at < end && i + 1 < self.offsets.len() {
            let (lo, hi) = (self.offsets[i], self.offsets[i + 1]);
            if hi > at {
                let n = hi.min(end) - at;
                out.push((i, at - lo, n));
                at += n;
            }
            i += 1;
        }
        out
    }

    /// True when any input's coordinate needs rebasing.
    pub fn rebases(&self) -> bool {
        self.rebase.iter().any(Option::is_some)
    }
}

/// How a variable of the joined view is read.
#[derive(Debug, Clone)]
pub(crate) struct VarRoute {
    /// Its full path (the same in every input).
    pub path: String,
    /// The axis of the join dimension and which of [`Plan::joins`] it is; `None`: read from
    /// the first input.
    pub join: Option<(usize, usize)>,
    /// True for a coordinate some input's values are rebased in.
    pub rebased: bool,
}

/// Everything the view needs about its inputs, kept after they are closed.
#[derive(Debug)]
pub(crate) struct Plan {
    pub inputs: Vec<Location>,
    pub joins: Vec<JoinDim>,
    pub routes: Vec<VarRoute>,
    /// Each input's chunk index and coordinate values, read while the plan had it open.
    pub kept: Kept,
}

/// The state of a plan being built: the first input's facts and the running checks.
pub(crate) struct Planner {
    pub first: Dataset,
    first_name: String,
    /// Every dimension of the first input: path, length, whether joined.
    dims: Vec<(String, u64, Option<usize>)>,
    /// Every variable of the first input: path, type name, dimension paths.
    vars: Vec<(String, String, Vec<String>)>,
    pub joins: Vec<JoinDim>,
    /// Per join dimension: units and calendar of the first input's coordinate.
    first_units: Vec<Option<(String, Option<String>)>>,
    /// Per join dimension: the last coordinate value seen and the direction so far.
    last: Vec<Option<(f64, u64)>>,
    direction: Vec<Option<bool>>,
    /// With whole chunks asked for: per joined variable its path, join, axis, the first
    /// input's chunk shape, and the last input with records that ended inside a chunk.
    whole: Vec<WholeChunks>,
    /// What the copy reads of each input without opening it again.
    kept: Kept,
    keep_index: bool,
}

/// A joined variable whose chunks along the join must lie within one file.
struct WholeChunks {
    path: String,
    join: usize,
    axis: usize,
    chunks: Option<Vec<u64>>,
    /// The last input with records, if they end inside a chunk: its name and records.
    partial: Option<(String, u64)>,
}

/// An input's joined coordinates read ahead of [`Planner::add`]: per join dimension, its
/// values (`Ok(None)`: the coordinate is empty), the error reading them, or nothing to read;
/// and the input's variables by path, which the reading looked them up in and every check of
/// [`Planner::add`] looks up.
pub(crate) struct Coords {
    by_path: HashMap<String, VarId>,
    values: Vec<Option<Result<Option<Values>, JoinError>>>,
}

/// The values of `input`'s joined coordinates (`paths`: [`Planner::coordinate_paths`]), one
/// per join dimension (`None` where there is no such variable: [`Planner::add`] then says
/// so). Only reads: many inputs' coordinates are read at once, on other threads, while
/// [`Planner::add`] checks them in order.
pub(crate) fn read_coordinates(input: &Opened, paths: &[Option<String>], name: &str) -> Coords {
    let by_path = vars_by_path(input.dataset());
    let values = paths
        .iter()
        .map(|path| {
            let path = path.as_ref()?;
            let v = *by_path.get(path)?;
            Some(read_coordinate(input, v, name, path))
        })
        .collect();
    Coords { by_path, values }
}

/// The values of coordinate `v` of `input` (`None` when it has no values).
fn read_coordinate(
    input: &Opened,
    v: VarId,
    name: &str,
    path: &str,
) -> Result<Option<Values>, JoinError> {
    let ds = input.dataset();
    let len = ds.shape(v).first().copied().unwrap_or(0);
    if len == 0 {
        return Ok(None);
    }
    input
        .source()
        .read(ds, v, Slab::new(&[0], &[len]))
        .map(Some)
        .map_err(|source| JoinError::Read {
            file: name.to_string(),
            var: path.to_string(),
            source,
        })
}

fn text_att(ds: &Dataset, v: VarId, name: &str) -> Option<String> {
    ds.var(v).att(name).and_then(|a| match &a.values {
        nc_dataset::Values::Char(b) => Some(
            String::from_utf8_lossy(b)
                .trim_end_matches('\0')
                .to_string(),
        ),
        nc_dataset::Values::String(s) => s
            .first()
            .and_then(|x| x.as_ref())
            .map(|x| String::from_utf8_lossy(x.as_bytes()).into_owned()),
        _ => None,
    })
}

/// A variable's type, as compared between inputs: its CDL name.
fn type_key(ds: &Dataset, v: VarId) -> String {
    let ty = ds.var(v).ty;
    ds.type_name(ty).to_string()
}

impl Planner {
    /// Start from the first input: find the join dimensions (`dim`, or the record dimension).
    pub fn new(first: &Opened, name: &str, dim: Option<&str>) -> Result<Planner, JoinError> {
        let ds = first.dataset();
        let join_name = match dim {
            Some(d) => d
                .trim_start_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(d)
                .to_string(),
            None => {
                // the root group's record dimension, else the first unlimited one anywhere
                let root = ds.group(nc_dataset::ROOT).dims.iter().copied();
                let any = (0..ds.dims.len()).map(DimId);
                root.chain(any)
                    .find(|&d| ds.dim(d).unlimited)
                    .map(|d| ds.dim(d).name.clone())
                    .ok_or_else(|| JoinError::NoRecordDimension {
                        file: name.to_string(),
                    })?
            }
        };
        let mut joins = Vec::new();
        let mut dims = Vec::new();
        for d in (0..ds.dims.len()).map(DimId) {
            let path = dim_path(ds, d);
            let joined = (ds.dim(d).name == join_name).then(|| {
                let coord = ds
                    .find_var(ds.dim(d).group, &join_name)
                    .filter(|&v| ds.var(v).dims == [d])
                    .map(|v| ds.var_path(v));
                joins.push(JoinDim {
                    path: path.clone(),
                    offsets: vec![0],
                    coord,
                    rebase: Vec::new(),
                });
                joins.len() - 1
            });
            dims.push((path, ds.dim(d).len, joined));
        }
        if joins.is_empty() {
            return Err(JoinError::NoSuchDimension {
                file: name.to_string(),
                dim: join_name,
            });
        }
        let vars = (0..ds.vars.len())
            .map(VarId)
            .map(|v| {
                let dims = ds.var(v).dims.iter().map(|&d| dim_path(ds, d)).collect();
                (ds.var_path(v), type_key(ds, v), dims)
            })
            .collect();
        let first_units = joins
            .iter()
            .map(|j| {
                let v = j
                    .coord
                    .as_ref()
                    .and_then(|p| vars_by_path(ds).get(p).copied())?;
                Some((text_att(ds, v, "units")?, text_att(ds, v, "calendar")))
            })
            .collect();
        let n = joins.len();
        Ok(Planner {
            first: ds.clone(),
            first_name: name.to_string(),
            dims,
            vars,
            joins,
            first_units,
            last: vec![None; n],
            direction: vec![None; n],
            whole: Vec::new(),
            kept: Kept::new(n),
            keep_index: true,
        })
    }

    /// From now on, refuse inputs whose chunks of a joined variable would straddle two files
    /// or differ from the first input's chunking.
    pub fn check_whole_chunks(&mut self) {
        let ds = &self.first;
        for (path, ty, vdims) in &self.vars {
            // coordinates and strings are written inline, in chunks of the writer's own
            let inline =
                ty == "string" || self.joins.iter().any(|j| j.coord.as_ref() == Some(path));
            if inline {
                continue;
            }
            let join = vdims.iter().enumerate().find_map(|(axis, d)| {
                self.joins
                    .iter()
                    .position(|j| &j.path == d)
                    .map(|j| (axis, j))
            });
            let Some((axis, join)) = join else {
                continue;
            };
            let chunks = vars_by_path(ds)
                .get(path)
                .and_then(|&v| ds.var(v).storage.chunk_sizes.clone());
            self.whole.push(WholeChunks {
                path: path.clone(),
                join,
                axis,
                chunks,
                partial: None,
            });
        }
    }

    /// Input `ds` (named `name`, its records just added; `by_path`: its variables) against
    /// [`Planner::whole`].
    fn whole_chunks(
        &mut self,
        ds: &Dataset,
        by_path: &HashMap<String, VarId>,
        name: &str,
    ) -> Result<(), JoinError> {
        if self.whole.is_empty() {
            return Ok(());
        }
        for w in &mut self.whole {
            let here = by_path
                .get(&w.path)
                .and_then(|&v| ds.var(v).storage.chunk_sizes.clone());
            if here != w.chunks {
                return Err(JoinError::ChunkShape {
                    file: name.to_string(),
                    var: w.path.clone(),
                    chunks: here,
                    first_chunks: w.chunks.clone(),
                    first: self.first_name.clone(),
                });
            }
            // not chunked (classic records): one chunk per record, checked when written
            let Some(c) = w.chunks.as_ref().and_then(|c| c.get(w.axis)).copied() else {
                continue;
            };
            let offsets = &self.joins[w.join].offsets;
            let records = offsets[offsets.len() - 1] - offsets[offsets.len() - 2];
            if records == 0 {
                continue;
            }
            if let Some((file, records)) = w.partial.take() {
                return Err(JoinError::ChunkStraddles {
                    file,
                    var: w.path.clone(),
                    chunk: c,
                    records,
                });
            }
            if c > 0 && !records.is_multiple_of(c) {
                w.partial = Some((name.to_string(), records));
            }
        }
        Ok(())
    }

    /// Check input `input` (named `name`) against the first and add its records to the
    /// plan: dimensions, variables, types, shapes, then its coordinate's units and order.
    ///
    /// `coords`, if given, are the input's joined coordinates as [`read_coordinates`] read
    /// them (on another thread); else they are read here.
    pub fn add(
        &mut self,
        input: &Opened,
        name: &str,
        coords: Option<Coords>,
    ) -> Result<(), JoinError> {
        let ds = input.dataset();
        let first = &self.first_name;
        let mut dims: HashMap<String, DimId> = (0..ds.dims.len())
            .map(|i| (dim_path(ds, DimId(i)), DimId(i)))
            .collect();
        for (path, len, joined) in &self.dims {
            let Some(d) = dims.remove(path) else {
                return Err(JoinError::MissingDimension {
                    file: name.to_string(),
                    dim: path.clone(),
                    first: first.clone(),
                });
            };
            let here = ds.dim(d).len;
            match joined {
                Some(j) => {
                    let offsets = &mut self.joins[*j].offsets;
                    let end = offsets.last().copied().unwrap_or(0);
                    offsets.push(end + here);
                }
                None if here != *len => {
                    return Err(JoinError::DimensionLength {
                        file: name.to_string(),
                        dim: path.clone(),
                        len: here,
                        first_len: *len,
                        first: first.clone(),
                    })
                }
                None => {}
            }
        }
        if let Some(extra) = dims.keys().min() {
            return Err(JoinError::ExtraDimension {
                file: name.to_string(),
                dim: extra.clone(),
                first: first.clone(),
            });
        }
        // the input's variables by path, looked up by every check below
        let (by_path, mut read) = match coords {
            Some(Coords { by_path, values }) => (by_path, values),
            None => (vars_by_path(ds), Vec::new()),
        };
        for (path, ty, vdims) in &self.vars {
            let Some(&v) = by_path.get(path) else {
                return Err(JoinError::MissingVariable {
                    file: name.to_string(),
                    var: path.clone(),
                    first: first.clone(),
                });
            };
            let here_ty = type_key(ds, v);
            if &here_ty != ty {
                return Err(JoinError::VariableType {
                    file: name.to_string(),
                    var: path.clone(),
                    ty: here_ty,
                    first_ty: ty.clone(),
                    first: first.clone(),
                });
            }
            let here: Vec<String> = ds.var(v).dims.iter().map(|&d| dim_path(ds, d)).collect();
            if &here != vdims {
                return Err(JoinError::VariableShape {
                    file: name.to_string(),
                    var: path.clone(),
                    dims: here.join(", "),
                    first_dims: vdims.join(", "),
                    first: first.clone(),
                });
            }
        }
        // every variable of the first is here: any more are extra
        let extra = (by_path.len() > self.vars.len())
            .then(|| {
                let first_vars: HashSet<&str> = self.vars.iter().map(|v| v.0.as_str()).collect();
                by_path
                    .keys()
                    .filter(|p| !first_vars.contains(p.as_str()))
                    .min()
            })
            .flatten();
        if let Some(extra) = extra {
            return Err(JoinError::ExtraVariable {
                file: name.to_string(),
                var: extra.clone(),
                first: first.clone(),
            });
        }
        for j in 0..self.joins.len() {
            let values = read.get_mut(j).and_then(Option::take);
            self.coordinate(j, input, &by_path, name, values)?;
        }
        self.whole_chunks(ds, &by_path, name)?;
        self.keep(input, &by_path);
        Ok(())
    }

    /// Whether to keep each input's chunk index (the coordinates' values are kept anyway).
    pub fn keep_chunk_index(&mut self, keep: bool) {
        self.keep_index = keep;
    }

    /// Keep where the input's joined variables are stored (see [`Kept`]).
    fn keep(&mut self, input: &Opened, by_path: &HashMap<String, VarId>) {
        if !self.keep_index {
            return;
        }
        let ds = input.dataset();
        let joined: Vec<&str> = self
            .dims
            .iter()
            .filter(|d| d.2.is_some())
            .map(|d| d.0.as_str())
            .collect();
        let vars: Vec<(usize, VarId)> = self
            .vars
            .iter()
            .enumerate()
            .filter(|(_, (_, _, dims))| dims.iter().any(|d| joined.contains(&d.as_str())))
            .filter_map(|(k, (path, _, _))| by_path.get(path).map(|&v| (k, v)))
            .collect();
        self.kept.input(ds, input.source(), &vars);
    }

    /// The path of each join dimension's coordinate variable, if it has one: what
    /// [`read_coordinates`] reads.
    pub fn coordinate_paths(&self) -> Vec<Option<String>> {
        self.joins.iter().map(|j| j.coord.clone()).collect()
    }

    /// Input `input`'s coordinate of join dimension `j` (`by_path`: the input's variables):
    /// its rebase to the first input's units, and its values continuing the join's order
    /// (`read`: the values as read ahead).
    fn coordinate(
        &mut self,
        j: usize,
        input: &Opened,
        by_path: &HashMap<String, VarId>,
        name: &str,
        read: Option<Result<Option<Values>, JoinError>>,
    ) -> Result<(), JoinError> {
        let ds = input.dataset();
        let Some(path) = self.joins[j].coord.clone() else {
            self.joins[j].rebase.push(None);
            self.kept.coordinate(j, None);
            return Ok(());
        };
        let v = by_path
            .get(&path)
            .copied()
            .ok_or_else(|| JoinError::MissingVariable {
                file: name.to_string(),
                var: path.clone(),
                first: self.first_name.clone(),
            })?;
        let units = text_att(ds, v, "units");
        let rebase = match (&self.first_units[j], units) {
            (Some((fu, fcal)), Some(u)) if u.trim() != fu.trim() => {
                let cal = text_att(ds, v, "calendar");
                let bad = || JoinError::Units {
                    file: name.to_string(),
                    var: path.clone(),
                    units: u.clone(),
                    first_units: fu.clone(),
                    first: self.first_name.clone(),
                };
                let same_cal = Calendar::parse(cal.as_deref())
                    .filter(|c| Some(*c) == Calendar::parse(fcal.as_deref()))
                    .ok_or_else(bad)?;
                let to = TimeUnits::parse(fu, same_cal).ok_or_else(bad)?;
                let from = TimeUnits::parse(&u, same_cal).ok_or_else(bad)?;
                Some(from.rebase_to(&to))
            }
            _ => None,
        };
        self.joins[j].rebase.push(rebase);
        // the order of the joined coordinate, checked on its values in the first file's units
        let read = match read {
            Some(r) => r,
            None => read_coordinate(input, v, name, &path),
        };
        let Some(values) = read? else {
            self.kept.coordinate(j, None);
            return Ok(());
        };
        self.kept.coordinate(j, Some(&values));
        let offsets = &self.joins[j].offsets;
        let base = offsets[offsets.len() - 2];
        for k in 0..values.len() {
            let Some(x) = values.get_f64(k) else {
                return Ok(()); // not numbers: no order to keep
            };
            let x = rebase.map_or(x, |r| r.apply_one(x));
            let at = base + k as u64;
            if let Some((prev, _)) = self.last[j] {
                let up = x > prev;
                let ok = x != prev && self.direction[j].is_none_or(|d| d == up);
                if !ok {
                    return Err(JoinError::NotMonotonic {
                        file: name.to_string(),
                        var: path.clone(),
                        at,
                        before: prev,
                        value: x,
                    });
                }
                self.direction[j] = Some(up);
            }
            self.last[j] = Some((x, at));
        }
        Ok(())
    }

    /// The joined dataset and its plan, once every input has been added.
    pub fn finish(self, inputs: Vec<Location>) -> (Dataset, Plan) {
        let mut ds = self.first;
        for (d, (_, _, joined)) in self.dims.iter().enumerate() {
            if let Some(j) = joined {
                ds.dims[d].len = self.joins[*j].offsets.last().copied().unwrap_or(0);
            }
        }
        let dim_join: HashMap<usize, usize> = self
            .dims
            .iter()
            .enumerate()
            .filter_map(|(d, (_, _, j))| j.map(|j| (d, j)))
            .collect();
        let routes = (0..ds.vars.len())
            .map(|i| {
                let v = &mut ds.vars[i];
                // data comes through the view's source, never the first file's memory
                v.data = None;
                v.data_elsewhere = None;
                let join = v
                    .dims
                    .iter()
                    .enumerate()
                    .find_map(|(axis, d)| dim_join.get(&d.0).map(|&j| (axis, j)));
                let path = ds.var_path(VarId(i));
                let rebased = join.is_some_and(|(_, j)| {
                    self.joins[j].rebases() && self.joins[j].coord.as_deref() == Some(&path)
                });
                VarRoute {
                    path,
                    join,
                    rebased,
                }
            })
            .collect();
        (
            ds,
            Plan {
                inputs,
                joins: self.joins,
                routes,
                kept: self.kept,
            },
        )
    }

    /// Refuse variables that use a join dimension twice.
    pub fn check_repeats(&self) -> Result<(), JoinError> {
        for (path, _, dims) in &self.vars {
            for j in &self.joins {
                if dims.iter().filter(|d| **d == j.path).count() > 1 {
                    return Err(JoinError::JoinDimensionTwice {
                        file: self.first_name.clone(),
                        var: path.clone(),
                        dim: j.path.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_at_file_boundaries_and_skip_empty_files() {
        let j = JoinDim {
            path: "/t".into(),
            offsets: vec![0, 2, 2, 5, 6],
            coord: None,
            rebase: vec![None; 4],
        };
        assert_eq!(j.pieces(0, 6), vec![(0, 0, 2), (2, 0, 3), (3, 0, 1)]);
        assert_eq!(j.pieces(1, 2), vec![(0, 1, 1), (2, 0, 1)]);
        assert_eq!(j.pieces(3, 2), vec![(2, 1, 2)]);
        assert_eq!(j.pieces(5, 1), vec![(3, 0, 1)]);
        assert_eq!(j.pieces(4, 0), vec![]);
    }
}
