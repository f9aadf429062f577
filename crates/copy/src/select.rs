//! Which groups and variables the output holds, and which get data (`-v`, `-V`, `-g`, `-G`,
//! `-u`): the output dataset's metadata and the map from output to input variables.

use nc_dataset::{Dataset, DimId, GroupId, NcType, TypeId, UserTypeKind, VarId};

use crate::CopyOptions;

/// The variable matches a `-v`/`-V` entry: its plain name or its full path.
pub(crate) fn var_matches(ds: &Dataset, v: VarId, names: &[String]) -> bool {
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
pub(crate) fn plan(
    input: &Dataset,
    opts: &CopyOptions,
) -> Result<(Dataset, Vec<Option<VarId>>), String> {
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

/// What an NCZarr / Zarr output cannot hold is left out, each piece named in a warning: a
/// variable of a user-defined type (NCZarr has only atomic types) and an attribute of one,
/// the rest copied (netCDF-C refuses the whole copy). `map` (output variable -> input
/// variable) follows the renumbering.
pub(crate) fn drop_user_typed(out: &mut Dataset, map: &mut Vec<Option<VarId>>) -> Vec<String> {
    if out.types.is_empty() {
        // no user-defined type: nothing to leave out, nothing to look at
        return Vec::new();
    }
    let user = |t: NcType| matches!(t, NcType::User(_));
    let left_out = |ds: &Dataset, what: String, t: NcType| {
        let name = match t {
            NcType::User(id) => ds.user_type(id).name.as_str(),
            NcType::Atomic(_) => "",
        };
        format!(
            "{what} left out: its type \"{name}\" is user-defined and NCZarr has only atomic types"
        )
    };
    let mut warnings = Vec::new();
    // (owner's words, its attributes): groups first, then variables
    let owners: Vec<(String, Option<usize>, Option<GroupId>)> = (0..out.groups.len())
        .map(|g| {
            (
                format!("group attribute {}:", out.group_path(GroupId(g))),
                None,
                Some(GroupId(g)),
            )
        })
        .chain((0..out.vars.len()).map(|i| {
            (
                format!("attribute {}:", out.var_path(VarId(i))),
                Some(i),
                None,
            )
        }))
        .collect();
    for (words, var, group) in owners {
        if let Some(i) = var {
            let ty = out.vars[i].ty;
            if user(ty) {
                let what = format!("variable {}", out.var_path(VarId(i)));
                warnings.push(left_out(out, what, ty));
                continue;
            }
        }
        let atts = match (var, group) {
            (Some(i), _) => &mut out.vars[i].atts,
            (None, Some(g)) => &mut out.groups[g.0].atts,
            (None, None) => continue,
        };
        let (dropped, kept): (Vec<_>, Vec<_>) =
            std::mem::take(atts).into_iter().partition(|a| user(a.ty));
        *atts = kept;
        for a in dropped {
            warnings.push(left_out(out, format!("{words}{}", a.name), a.ty));
        }
    }
    let keep_var: Vec<bool> = out.vars.iter().map(|v| !user(v.ty)).collect();
    if keep_var.iter().all(|&k| k) {
        return warnings;
    }
    let keep_group = vec![true; out.groups.len()];
    let renumbered = retain(out, &keep_group, &keep_var);
    let mut new_map = vec![None; out.vars.len()];
    for (old, new) in renumbered.iter().enumerate() {
        if let Some(nv) = new {
            new_map[nv.0] = map.get(old).copied().flatten();
        }
    }
    *map = new_map;
    warnings
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
}
