//! The netCDF view of a DMR tree, defined in the order netCDF-C 4.9.0's `d4meta.c` defines it,
//! since ids decide what ncdump prints first:
//!
//! 1. all nodes are sorted: dimensions and atomic and opaque types first (creation order), then
//!    a depth-first walk from the root group that lists each node after what it depends on (a
//!    variable after its dimensions, type and `<Map>` targets; a compound after its fields'
//!    types; a vlen after its base);
//! 2. groups (depth first), then dimensions, enumerations, opaque types, compound and vlen
//!    types, then the top-level variables, each in sorted order.
//!
//! A `<Structure>`'s compound is named `NAME_t`; a `<Sequence>`'s vlen `NAME_t` of compound
//! `NAME_base_t`. Attributes named `_edu.ucar.*`, `_DAP4_Checksum_CRC32`, `_DAP4_Little_Endian`
//! and `_NCProperties` are not shown; `<Map>`s become a string attribute `_edu.ucar.maps`.
//! A `_FillValue` of another type than its variable takes the variable's type (netCDF-C's
//! default `[fillmismatch]`; its `[nofillmismatch]` does not turn it off in 4.9.0).

use std::collections::{HashMap, HashSet};

use nc_dataset::{
    AtomicType, Attribute, CompoundField, Dataset, DimId, EnumMember, Format, GroupId, NcString,
    NcType, TypeId, UserTypeKind, Values, VarId, ROOT,
};

use super::dmr::{
    backslash_escape, make_fqn, scan_f64, scan_i64, scan_u64, truncate, Dmr, Sort, Sub,
};

/// The netCDF view and how DMR nodes map to it.
pub(crate) struct Built {
    pub ds: Dataset,
    pub var_ids: HashMap<usize, VarId>,
}

/// Why the DMR has no netCDF view (netCDF-C refuses it too).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BuildError(pub String);

type R<T> = Result<T, BuildError>;

fn fail<T>(what: impl Into<String>) -> R<T> {
    Err(BuildError(what.into()))
}

/// netCDF-C's topological sort of all nodes.
pub(crate) fn toposort(dmr: &Dmr) -> Vec<usize> {
    let n = dmr.nodes.len();
    let mut visited = vec![false; n];
    let mut sorted = Vec::with_capacity(n);
    for (i, node) in dmr.nodes.iter().enumerate() {
        let first = match node.sort {
            Sort::Dim => true,
            Sort::Type => matches!(node.sub, Sub::Atomic(_) | Sub::Opaque),
            _ => false,
        };
        if first {
            visited[i] = true;
            sorted.push(i);
        }
    }
    // depth-first, with an explicit stack: (node, its dependencies listed yet?)
    let mut stack = vec![(dmr.root, false)];
    while let Some((x, expanded)) = stack.pop() {
        if expanded {
            sorted.push(x);
            continue;
        }
        if visited[x] {
            continue;
        }
        visited[x] = true;
        let node = &dmr.nodes[x];
        let mut deps: Vec<usize> = Vec::new();
        match node.sort {
            Sort::Group => deps.extend(&node.elements),
            Sort::Type => match node.sub {
                Sub::Seq => deps.extend(node.basetype),
                Sub::Struct => deps.extend(&node.vars),
                _ => {}
            },
            Sort::Var => {
                deps.extend(&node.dims);
                deps.extend(node.basetype);
                deps.extend(&node.maps);
            }
            Sort::Attr => deps.extend(node.basetype),
            Sort::Dim => {}
        }
        deps.extend(&node.attributes);
        stack.push((x, true));
        for &d in deps.iter().rev() {
            if !visited[d] {
                stack.push((d, false));
            }
        }
    }
    for (i, v) in visited.iter().enumerate() {
        if !v {
            sorted.push(i);
        }
    }
    sorted
}

/// Build the dataset.
pub(crate) fn build(dmr: &Dmr, name: &str) -> R<Built> {
    let sorted = toposort(dmr);
    let mut ds = Dataset::new(name);
    ds.format = Some(Format::Netcdf4);
    // netCDF-C's in-memory netCDF-4 substrate, as `ncdump -s` shows it (its `_NCProperties`
    // is unset memory there, printed as garbage or not at all: left out)
    ds.info.superblock_version = Some(2);
    ds.info.is_netcdf4 = Some(true);
    let mut b = Builder {
        dmr,
        ds,
        groups: HashMap::new(),
        dims: HashMap::new(),
        types: HashMap::new(),
        var_ids: HashMap::new(),
        names: HashSet::new(),
    };
    b.groups.insert(dmr.root, ROOT);
    b.define_groups(dmr.root)?;
    for &x in &sorted {
        let n = &dmr.nodes[x];
        if n.sort == Sort::Dim {
            let g = b.group_of(x);
            if b.ds
                .group(g)
                .dims
                .iter()
                .any(|&d| b.ds.dim(d).name == n.name)
            {
                return fail(format!("dimension {} is defined twice", n.name));
            }
            // size 0 is NC_UNLIMITED to nc_def_dim, so an empty dimension is unlimited
            let unlimited = n.unlimited || n.dim_size == 0;
            let d = b.ds.add_dim(g, n.name.clone(), n.dim_size, unlimited);
            b.dims.insert(x, d);
        }
    }
    for &x in &sorted {
        let n = &dmr.nodes[x];
        if n.sort == Sort::Type && n.sub == Sub::Enum {
            let base = match n.basetype.map(|t| dmr.nodes[t].sub) {
                Some(Sub::Atomic(t)) if t.is_integer() => t,
                _ => {
                    return fail(format!(
                        "enumeration {}: the base type is not an integer type",
                        n.name
                    ))
                }
            };
            let members = n
                .econsts
                .iter()
                .map(|c| EnumMember {
                    name: c.name.clone(),
                    value: c.value,
                })
                .collect();
            b.add_type(x, n.name.clone(), UserTypeKind::Enum { base, members })?;
        }
    }
    for &x in &sorted {
        let n = &dmr.nodes[x];
        if n.sort == Sort::Type && n.sub == Sub::Opaque && n.opaque_size > 0 {
            b.add_type(
                x,
                n.name.clone(),
                UserTypeKind::Opaque {
                    size: n.opaque_size,
                },
            )?;
        }
    }
    for &x in &sorted {
        let n = &dmr.nodes[x];
        if n.sort != Sort::Type {
            continue;
        }
        match n.sub {
            Sub::Struct => {
                let kind = b.compound(x)?;
                b.add_type(x, format!("{}_t", backslash_escape(&n.name)), kind)?;
            }
            Sub::Seq => {
                let Some(base) = n.basetype.and_then(|t| b.nc_type(t)) else {
                    return fail(format!("sequence type {} has no record type", n.name));
                };
                b.add_type(x, backslash_escape(&n.name), UserTypeKind::Vlen { base })?;
            }
            _ => {}
        }
    }
    // group attributes (netCDF-C defines them before the types: see `attribute_values`)
    let mut gs = vec![dmr.root];
    while let Some(g) = gs.pop() {
        let gid = b.groups[&g];
        let atts = b.attributes(g)?;
        b.ds.group_mut(gid).atts = atts;
        gs.extend(dmr.nodes[g].groups.iter().rev());
    }
    for &x in &sorted {
        let n = &dmr.nodes[x];
        let top = n.container.is_none_or(|c| dmr.nodes[c].sort == Sort::Group);
        if n.sort != Sort::Var || !top {
            continue;
        }
        let g = b.group_of(x);
        let Some(ty) = n.basetype.and_then(|t| b.nc_type(t)) else {
            return fail(format!("variable {} has no type", n.name));
        };
        if !b.names.insert((g, 2, n.name.clone())) {
            return fail(format!("variable {} is defined twice in its group", n.name));
        }
        let dims: Vec<DimId> = n
            .dims
            .iter()
            .filter_map(|d| b.dims.get(d).copied())
            .collect();
        let v = b.ds.add_var(g, n.name.clone(), ty, dims);
        let mut atts = b.attributes(x)?;
        if !n.maps.is_empty() {
            let fqns = n
                .maps
                .iter()
                .map(|&m| Some(NcString::from(make_fqn(dmr, m))))
                .collect();
            atts.push(Attribute::new("_edu.ucar.maps", Values::String(fqns)));
        }
        b.ds.var_mut(v).atts = atts;
        // what `ncdump -s` shows of netCDF-C's in-memory substrate: contiguous unless a
        // dimension is unlimited (then its default chunks), no fill for atomic non-string types
        let unlimited = b.ds.var(v).dims.iter().any(|&d| b.ds.dim(d).unlimited);
        let chunks = unlimited.then(|| nc_dataset::chunking::default_var_chunk_sizes(&b.ds, v));
        let st = &mut b.ds.var_mut(v).storage;
        st.layout = Some(if unlimited {
            nc_dataset::Layout::Chunked
        } else {
            nc_dataset::Layout::Contiguous
        });
        st.chunk_sizes = chunks;
        st.no_fill = matches!(ty, NcType::Atomic(a) if a != AtomicType::String).then_some(true);
        b.var_ids.insert(x, v);
    }
    Ok(Built {
        ds: b.ds,
        var_ids: b.var_ids,
    })
}

struct Builder<'a> {
    dmr: &'a Dmr,
    ds: Dataset,
    groups: HashMap<usize, GroupId>,
    dims: HashMap<usize, DimId>,
    types: HashMap<usize, TypeId>,
    var_ids: HashMap<usize, VarId>,
    /// (group, 0 dimension / 1 type / 2 variable / 3 subgroup, name) defined so far
    names: HashSet<(GroupId, u8, String)>,
}

impl Builder<'_> {
    fn define_groups(&mut self, parent: usize) -> R<()> {
        let pid = self.groups[&parent];
        for &g in &self.dmr.nodes[parent].groups {
            let name = &self.dmr.nodes[g].name;
            if !self.names.insert((pid, 3, name.clone())) {
                return fail(format!("group {name} is defined twice"));
            }
            let id = self.ds.add_group(pid, name.clone());
            self.groups.insert(g, id);
            self.define_groups(g)?;
        }
        Ok(())
    }

    fn group_of(&self, mut x: usize) -> GroupId {
        loop {
            if let Some(&g) = self.groups.get(&x) {
                return g;
            }
            match self.dmr.nodes[x].container {
                Some(c) => x = c,
                None => return ROOT,
            }
        }
    }

    fn add_type(&mut self, x: usize, name: String, kind: UserTypeKind) -> R<()> {
        let g = self.group_of(x);
        if !self.names.insert((g, 1, name.clone())) {
            return fail(format!("inferred type name conflict: {name}"));
        }
        let t = self.ds.add_type(g, name, kind);
        self.types.insert(x, t);
        Ok(())
    }

    fn nc_type(&self, t: usize) -> Option<NcType> {
        match self.dmr.nodes[t].sub {
            Sub::Atomic(a) => Some(NcType::Atomic(a)),
            _ => self.types.get(&t).map(|&id| NcType::User(id)),
        }
    }

    /// A compound type's fields, at offsets laid out as netCDF-C lays them out.
    fn compound(&self, x: usize) -> R<UserTypeKind> {
        let mut fields = Vec::new();
        let mut offset = 0usize;
        let mut largest = 1usize;
        for &f in &self.dmr.nodes[x].vars {
            let node = &self.dmr.nodes[f];
            let Some(ty) = node.basetype.and_then(|t| self.nc_type(t)) else {
                return fail(format!("field {} has no type", node.name));
            };
            let (size, align) = self.size_align(ty);
            largest = largest.max(align);
            if align > 0 && !offset.is_multiple_of(align) {
                offset += align - offset % align;
            }
            let dims: Vec<usize> = node
                .dims
                .iter()
                .map(|&d| usize::try_from(self.dmr.nodes[d].dim_size).unwrap_or(usize::MAX))
                .collect();
            let count = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
            fields.push(CompoundField {
                name: node.name.clone(),
                ty,
                dims,
                offset,
            });
            offset = count
                .and_then(|c| c.checked_mul(size))
                .and_then(|s| offset.checked_add(s))
                .ok_or_else(|| BuildError(format!("field {} is too large", node.name)))?;
        }
        // netCDF-C rounds up by adding `size % alignment` (not the padding to the next multiple)
        offset += offset % largest;
        Ok(UserTypeKind::Compound {
            size: offset,
            fields,
        })
    }

    fn size_align(&self, t: NcType) -> (usize, usize) {
        match t {
            NcType::Atomic(a) => (a.size(), a.size()),
            NcType::User(id) => match &self.ds.user_type(id).kind {
                UserTypeKind::Compound { size, fields } => {
                    let align = fields
                        .iter()
                        .map(|f| self.size_align(f.ty).1)
                        .max()
                        .unwrap_or(1);
                    (*size, align)
                }
                _ => {
                    let s = self.ds.type_size(t);
                    (s, s)
                }
            },
        }
    }

    /// The attributes of a group or top-level variable as netCDF-C shows them.
    fn attributes(&self, x: usize) -> R<Vec<Attribute>> {
        let node = &self.dmr.nodes[x];
        let mut out: Vec<Attribute> = Vec::new();
        for &a in &node.attributes {
            let attr = &self.dmr.nodes[a];
            if attr.name.starts_with("_edu.ucar.")
                || matches!(
                    attr.name.as_str(),
                    "_DAP4_Checksum_CRC32" | "_DAP4_Little_Endian" | "_NCProperties"
                )
            {
                continue;
            }
            let mut base = attr.basetype.unwrap_or(0);
            if node.sort == Sort::Var && attr.name == "_FillValue" {
                if let Some(vb) = node.basetype {
                    base = vb;
                }
            }
            let att = self.attribute_values(&node.name, attr, base)?;
            // a second attribute of the same name replaces the first, in its place
            match out.iter_mut().find(|o| o.name == att.name) {
                Some(o) => *o = att,
                None => out.push(att),
            }
        }
        Ok(out)
    }

    fn attribute_values(&self, owner: &str, attr: &super::dmr::Node, base: usize) -> R<Attribute> {
        let tnode = &self.dmr.nodes[base];
        let bad = || {
            BuildError(format!(
                "attribute {owner}:{}: illegal attribute type {}",
                attr.name, tnode.name
            ))
        };
        let (ty, atomic) = match tnode.sub {
            Sub::Atomic(t) => (NcType::Atomic(t), t),
            // netCDF-C defines group attributes before any type, so it refuses these
            Sub::Enum if self.dmr.nodes[attr.container.unwrap_or(0)].sort == Sort::Group => {
                return Err(BuildError(format!(
                    "group attribute {}: netCDF-C 4.9.0 cannot define a group attribute of enumeration type {} (NetCDF: Not a valid data type)",
                    attr.name, tnode.name
                )))
            }
            Sub::Enum => {
                let t = match tnode.basetype.map(|b| self.dmr.nodes[b].sub) {
                    Some(Sub::Atomic(t)) => t,
                    _ => return Err(bad()),
                };
                let id = self.types.get(&base).ok_or_else(bad)?;
                (NcType::User(*id), t)
            }
            _ => return Err(bad()),
        };
        let mut values = Values::with_capacity(atomic, attr.values.len());
        for s in &attr.values {
            let bad_value = || {
                BuildError(format!(
                    "attribute {owner}:{}: malformed value \"{s}\" for type {}",
                    attr.name, tnode.name
                ))
            };
            if tnode.sub == Sub::Enum {
                let by_name = tnode.econsts.iter().find(|c| c.name == *s);
                let c = match by_name {
                    Some(c) => c,
                    None => {
                        let n = if atomic_is_unsigned(atomic) {
                            scan_u64(s).map(i128::from)
                        } else {
                            scan_i64(s).map(i128::from)
                        }
                        .ok_or_else(bad_value)?;
                        tnode
                            .econsts
                            .iter()
                            .find(|c| c.written == n)
                            .ok_or_else(|| {
                                BuildError(format!(
                                    "attribute {owner}:{}: no enumeration constant matches {s}",
                                    attr.name
                                ))
                            })?
                    }
                };
                push_int(&mut values, c.value);
                continue;
            }
            match atomic {
                AtomicType::String => {
                    if let Values::String(v) = &mut values {
                        v.push(Some(NcString::from(s.as_str())));
                    }
                }
                AtomicType::Char => {
                    if let Values::Char(v) = &mut values {
                        v.push(s.as_bytes().first().copied().unwrap_or(0));
                    }
                }
                AtomicType::Float => {
                    let f = scan_f64(s).ok_or_else(bad_value)?;
                    if let Values::Float(v) = &mut values {
                        v.push(float_as_netcdf_c_converts(f));
                    }
                }
                AtomicType::Double => {
                    let f = scan_f64(s).ok_or_else(bad_value)?;
                    if let Values::Double(v) = &mut values {
                        v.push(f);
                    }
                }
                t => {
                    let n = if atomic_is_unsigned(t) {
                        scan_u64(s).map(i128::from)
                    } else {
                        scan_i64(s).map(i128::from)
                    }
                    .ok_or_else(bad_value)?;
                    push_int(&mut values, truncate(n, t));
                }
            }
        }
        Ok(Attribute {
            name: attr.name.clone(),
            ty,
            values,
        })
    }
}

/// A `float` attribute value as netCDF-C 4.9.0 computes it (`d4meta.c`): the text is read as a
/// double, cast to float into the low four bytes of the same 8-byte union (x86, little-endian),
/// and then the cast is done a second time from the union's double, whose low 32 bits are now
/// the float's. So `-1.5` becomes `-1.500001f`, as its ncdump prints.
pub(crate) fn float_as_netcdf_c_converts(d: f64) -> f32 {
    let once = d as f32;
    let mixed = (d.to_bits() & 0xFFFF_FFFF_0000_0000) | u64::from(once.to_bits());
    f64::from_bits(mixed) as f32
}

fn atomic_is_unsigned(t: AtomicType) -> bool {
    matches!(
        t,
        AtomicType::UByte | AtomicType::UShort | AtomicType::UInt | AtomicType::UInt64
    )
}

/// Append an integer already truncated to the vector's type.
fn push_int(values: &mut Values, n: i128) {
    match values {
        Values::Byte(v) => v.push(n as i8),
        Values::UByte(v) => v.push(n as u8),
        Values::Short(v) => v.push(n as i16),
        Values::UShort(v) => v.push(n as u16),
        Values::Int(v) => v.push(n as i32),
        Values::UInt(v) => v.push(n as u32),
        Values::Int64(v) => v.push(n as i64),
        Values::UInt64(v) => v.push(n as u64),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn float_attributes_take_netcdf_c_s_double_conversion() {
        let f = super::float_as_netcdf_c_converts(-1.5);
        assert_eq!(format!("{f:.6}"), "-1.500001");
        assert_eq!(super::float_as_netcdf_c_converts(0.0), 0.0);
    }
}
