//! The dataset tree: flat tables of groups, dimensions, user types and variables, addressed by ids.

use crate::{
    default_fill, AtomicType, CompoundField, NcType, Storage, UserType, UserTypeKind, Values,
};

/// Index of a group in [`Dataset::groups`]; the root group is `GroupId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub usize);
/// Index of a dimension in [`Dataset::dims`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DimId(pub usize);
/// Index of a user-defined type in [`Dataset::types`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub usize);
/// Index of a variable in [`Dataset::vars`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub usize);

/// The on-disk format of a dataset (what `ncdump -k` reports, `_Format` says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CDF-1
    Classic,
    /// CDF-2, 64-bit offset
    Offset64,
    /// CDF-5, 64-bit data
    Cdf5,
    /// netCDF-4 (HDF5), enhanced model
    Netcdf4,
    /// netCDF-4 (HDF5), classic model
    Netcdf4Classic,
}

impl Format {
    /// The text `ncdump -k` prints and `_Format` holds.
    pub fn kind_name(self) -> &'static str {
        match self {
            Format::Classic => "classic",
            Format::Offset64 => "64-bit offset",
            Format::Cdf5 => "cdf5",
            Format::Netcdf4 => "netCDF-4",
            Format::Netcdf4Classic => "netCDF-4 classic model",
        }
    }

    /// True for CDF-1, CDF-2 and CDF-5.
    pub fn is_classic_file(self) -> bool {
        matches!(self, Format::Classic | Format::Offset64 | Format::Cdf5)
    }

    /// True for formats limited to the classic data model (everything but netCDF-4 enhanced).
    pub fn is_classic_model(self) -> bool {
        self != Format::Netcdf4
    }
}

/// An attribute: a name, a type and a vector of values.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Attribute name.
    pub name: String,
    /// Attribute type.
    pub ty: NcType,
    /// Values (char attributes hold their bytes in `Values::Char`).
    pub values: Values,
}

impl Attribute {
    /// A new attribute of an atomic type; the type is taken from the values.
    ///
    /// # Panics
    /// Panics if `values` is not an atomic variant (a caller bug).
    pub fn new(name: impl Into<String>, values: Values) -> Attribute {
        #[allow(clippy::expect_used)]
        let ty = values
            .atomic_type()
            .expect("Attribute::new takes atomic values; use the struct for user types");
        Attribute {
            name: name.into(),
            ty: NcType::Atomic(ty),
            values,
        }
    }

    /// A char attribute holding `text`.
    pub fn text(name: impl Into<String>, text: &str) -> Attribute {
        Attribute::new(name, Values::Char(text.as_bytes().to_vec()))
    }
}

/// A dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct Dimension {
    /// Dimension name.
    pub name: String,
    /// The group that defines it.
    pub group: GroupId,
    /// Current length (for an unlimited dimension: the number of records so far).
    pub len: u64,
    /// True for an unlimited (record) dimension.
    pub unlimited: bool,
}

/// A variable: type, shape, attributes, storage settings and (optionally) in-memory data.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Variable name.
    pub name: String,
    /// The group that defines it.
    pub group: GroupId,
    /// Element type.
    pub ty: NcType,
    /// Dimensions, slowest varying first; empty for a scalar.
    pub dims: Vec<DimId>,
    /// Attributes in definition order (special attributes are not here: see `storage`).
    pub atts: Vec<Attribute>,
    /// Storage settings.
    pub storage: Storage,
    /// Data held in memory (row-major, `shape` product elements); `None` when a reader
    /// streams it or none was given (reads as fill).
    pub data: Option<Values>,
    /// Data given but held by the data source instead of `data` (ncgen-rs keeps a large CDL
    /// data section in a temporary file): how many leading elements, in row-major order, the
    /// source holds; the rest reads as fill. `None` when `data` says it all.
    pub data_elsewhere: Option<u64>,
}

impl Variable {
    /// How many leading elements (row-major) of data were given for this variable, in memory
    /// or held by the data source; `None` when none was given.
    pub fn given_len(&self) -> Option<u64> {
        match &self.data {
            Some(d) => Some(d.len() as u64),
            None => self.data_elsewhere,
        }
    }

    /// The attribute called `name`.
    pub fn att(&self, name: &str) -> Option<&Attribute> {
        self.atts.iter().find(|a| a.name == name)
    }
}

/// A group: named container of dimensions, types, variables, attributes and subgroups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    /// Group name (the root's is unused: the dataset name stands for it).
    pub name: String,
    /// Parent group, `None` for the root.
    pub parent: Option<GroupId>,
    /// Dimensions defined here, in order.
    pub dims: Vec<DimId>,
    /// User types defined here, in order.
    pub types: Vec<TypeId>,
    /// Variables defined here, in order.
    pub vars: Vec<VarId>,
    /// Group (global) attributes, in order.
    pub atts: Vec<Attribute>,
    /// Subgroups, in order.
    pub groups: Vec<GroupId>,
}

/// Read-only facts about the file that `ncdump -s` shows as virtual global attributes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileInfo {
    /// `_NCProperties`
    pub nc_properties: Option<String>,
    /// `_SuperblockVersion`
    pub superblock_version: Option<u32>,
    /// `_IsNetcdf4`
    pub is_netcdf4: Option<bool>,
}

/// A netCDF dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The dataset name (`netcdf NAME {`).
    pub name: String,
    /// The file format (read from a file, or asked for by `_Format` in CDL).
    pub format: Option<Format>,
    /// File facts for `ncdump -s`.
    pub info: FileInfo,
    /// All groups; `groups[0]` is the root.
    pub groups: Vec<Group>,
    /// All dimensions.
    pub dims: Vec<Dimension>,
    /// All user-defined types.
    pub types: Vec<UserType>,
    /// All variables.
    pub vars: Vec<Variable>,
}

/// The root group id.
pub const ROOT: GroupId = GroupId(0);

impl Dataset {
    /// An empty dataset with a root group.
    pub fn new(name: impl Into<String>) -> Dataset {
        Dataset {
            name: name.into(),
            format: None,
            info: FileInfo::default(),
            groups: vec![Group::default()],
            dims: Vec::new(),
            types: Vec::new(),
            vars: Vec::new(),
        }
    }

    /// The group with this id.
    pub fn group(&self, g: GroupId) -> &Group {
        &self.groups[g.0]
    }

    /// The group with this id, mutably.
    pub fn group_mut(&mut self, g: GroupId) -> &mut Group {
        &mut self.groups[g.0]
    }

    /// The dimension with this id.
    pub fn dim(&self, d: DimId) -> &Dimension {
        &self.dims[d.0]
    }

    /// The variable with this id.
    pub fn var(&self, v: VarId) -> &Variable {
        &self.vars[v.0]
    }

    /// The variable with this id, mutably.
    pub fn var_mut(&mut self, v: VarId) -> &mut Variable {
        &mut self.vars[v.0]
    }

    /// The user type with this id.
    pub fn user_type(&self, t: TypeId) -> &UserType {
        &self.types[t.0]
    }

    /// The fields of `ty` when it is a compound type, else `None`.
    pub fn compound_fields(&self, ty: NcType) -> Option<&[CompoundField]> {
        match ty {
            NcType::User(t) => match &self.user_type(t).kind {
                UserTypeKind::Compound { fields, .. } => Some(fields),
                _ => None,
            },
            NcType::Atomic(_) => None,
        }
    }

    /// Add a subgroup of `parent`.
    pub fn add_group(&mut self, parent: GroupId, name: impl Into<String>) -> GroupId {
        let id = GroupId(self.groups.len());
        self.groups.push(Group {
            name: name.into(),
            parent: Some(parent),
            ..Group::default()
        });
        self.groups[parent.0].groups.push(id);
        id
    }

    /// Add a dimension to `group`.
    pub fn add_dim(
        &mut self,
        group: GroupId,
        name: impl Into<String>,
        len: u64,
        unlimited: bool,
    ) -> DimId {
        let id = DimId(self.dims.len());
        self.dims.push(Dimension {
            name: name.into(),
            group,
            len,
            unlimited,
        });
        self.groups[group.0].dims.push(id);
        id
    }

    /// Add a user-defined type to `group`.
    pub fn add_type(
        &mut self,
        group: GroupId,
        name: impl Into<String>,
        kind: UserTypeKind,
    ) -> TypeId {
        let id = TypeId(self.types.len());
        self.types.push(UserType {
            name: name.into(),
            group,
            kind,
        });
        self.groups[group.0].types.push(id);
        id
    }

    /// Add a variable to `group` (no attributes, default storage, no data).
    pub fn add_var(
        &mut self,
        group: GroupId,
        name: impl Into<String>,
        ty: NcType,
        dims: Vec<DimId>,
    ) -> VarId {
        let id = VarId(self.vars.len());
        self.vars.push(Variable {
            name: name.into(),
            group,
            ty,
            dims,
            atts: Vec::new(),
            storage: Storage::default(),
            data: None,
            data_elsewhere: None,
        });
        self.groups[group.0].vars.push(id);
        id
    }

    /// Ancestors of `g` from `g` itself up to the root.
    pub fn ancestors(&self, g: GroupId) -> impl Iterator<Item = GroupId> + '_ {
        std::iter::successors(Some(g), move |g| self.groups[g.0].parent)
    }

    /// The full path of a group: `/` for the root, `/a/b` otherwise.
    pub fn group_path(&self, g: GroupId) -> String {
        let mut names: Vec<&str> = self
            .ancestors(g)
            .filter(|g| g.0 != 0)
            .map(|g| self.groups[g.0].name.as_str())
            .collect();
        if names.is_empty() {
            return "/".to_string();
        }
        names.reverse();
        let mut s = String::new();
        for n in names {
            s.push('/');
            s.push_str(n);
        }
        s
    }

    /// The full path of a variable: `/v` in the root group, `/g/h/v` in a subgroup.
    pub fn var_path(&self, v: VarId) -> String {
        let var = &self.vars[v.0];
        let g = self.group_path(var.group);
        if g == "/" {
            format!("/{}", var.name)
        } else {
            format!("{g}/{}", var.name)
        }
    }

    /// The dimension `name` as seen from group `g`: defined in `g` or an ancestor.
    pub fn find_dim(&self, g: GroupId, name: &str) -> Option<DimId> {
        self.ancestors(g).find_map(|g| {
            self.groups[g.0]
                .dims
                .iter()
                .copied()
                .find(|d| self.dims[d.0].name == name)
        })
    }

    /// The user type `name` as seen from group `g`: defined in `g` or an ancestor.
    pub fn find_type(&self, g: GroupId, name: &str) -> Option<TypeId> {
        self.ancestors(g).find_map(|g| {
            self.groups[g.0]
                .types
                .iter()
                .copied()
                .find(|t| self.types[t.0].name == name)
        })
    }

    /// The variable `name` defined directly in group `g`.
    pub fn find_var(&self, g: GroupId, name: &str) -> Option<VarId> {
        self.groups[g.0]
            .vars
            .iter()
            .copied()
            .find(|v| self.vars[v.0].name == name)
    }

    /// The subgroup `name` of `g`.
    pub fn find_group(&self, g: GroupId, name: &str) -> Option<GroupId> {
        self.groups[g.0]
            .groups
            .iter()
            .copied()
            .find(|c| self.groups[c.0].name == name)
    }

    /// The shape (current dimension lengths) of a variable.
    pub fn shape(&self, v: VarId) -> Vec<u64> {
        self.vars[v.0]
            .dims
            .iter()
            .map(|d| self.dims[d.0].len)
            .collect()
    }

    /// Number of elements of a variable (1 for a scalar); None on overflow.
    pub fn num_elements(&self, v: VarId) -> Option<u64> {
        self.shape(v)
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
    }

    /// Bytes of the data of all variables: each one's elements times its type's size (a size
    /// of 0 counted as 1). None on overflow.
    pub fn data_bytes(&self) -> Option<u64> {
        (0..self.vars.len()).try_fold(0u64, |acc, i| {
            let v = VarId(i);
            let n = self
                .num_elements(v)?
                .checked_mul(self.type_size(self.vars[i].ty).max(1) as u64)?;
            acc.checked_add(n)
        })
    }

    /// True if the variable's first dimension is unlimited (a record variable).
    pub fn is_record_var(&self, v: VarId) -> bool {
        self.vars[v.0]
            .dims
            .first()
            .is_some_and(|d| self.dims[d.0].unlimited)
    }

    /// The atomic type behind `t` for fill and storage purposes (an enum's base type).
    pub fn base_atomic(&self, t: NcType) -> Option<AtomicType> {
        match t {
            NcType::Atomic(a) => Some(a),
            NcType::User(id) => match &self.types[id.0].kind {
                UserTypeKind::Enum { base, .. } => Some(*base),
                _ => None,
            },
        }
    }

    /// The fill value of a variable: its `_FillValue` attribute (when of the variable's type),
    /// else the type's default (for an enum without `_FillValue`: the base type's default;
    /// None for other user types).
    pub fn fill_value(&self, v: VarId) -> Option<Values> {
        let var = &self.vars[v.0];
        let base = self.base_atomic(var.ty);
        if let Some(a) = var.att("_FillValue") {
            // a `_FillValue` of another atomic type than the variable's (NCO leaves a float
            // one on a short variable) is not its fill value: netCDF-C uses the default then
            let other_type = matches!((a.values.atomic_type(), base), (Some(x), Some(y)) if x != y);
            if !a.values.is_empty() && !other_type {
                return Some(a.values.slice(0, 1));
            }
        }
        base.map(default_fill)
    }

    /// What an element of a variable reads as where nothing is stored: its `_FillValue`
    /// (when of the variable's type), else the stored fill a reader kept in
    /// [`crate::Storage::fill_value`] (a pure Zarr array's `fill_value`, an HDF5 dataset's
    /// fill value property, neither shown as an attribute), else the type's default
    /// ([`Dataset::fill_value`]). Writers store this as the output's fill (Zarr `fill_value`,
    /// the HDF5 fill value property), so that a region a copy leaves unwritten reads as the
    /// input did.
    pub fn stored_fill(&self, v: VarId) -> Option<Values> {
        let var = &self.vars[v.0];
        let base = self.base_atomic(var.ty);
        let own = var.att("_FillValue").is_some_and(|a| {
            !a.values.is_empty()
                && !matches!((a.values.atomic_type(), base), (Some(x), Some(y)) if x != y)
        });
        if !own {
            if let Some(f) = var
                .storage
                .fill_value
                .as_ref()
                .filter(|f| f.len() == 1 && base.is_some() && f.atomic_type() == base)
            {
                return Some(f.clone());
            }
        }
        self.fill_value(v)
    }

    /// The value netCDF-C fills an element of type `t` with when the variable has no
    /// `_FillValue`: the default fill of atomic types (and of an enum's base type), each
    /// field's default fill for a compound, zero bytes for an opaque, an empty vlen.
    pub fn default_value(&self, t: NcType) -> Values {
        match t {
            NcType::Atomic(a) => default_fill(a),
            NcType::User(id) => match &self.types[id.0].kind {
                UserTypeKind::Enum { base, .. } => default_fill(*base),
                UserTypeKind::Opaque { size } => Values::Opaque {
                    size: *size,
                    bytes: vec![0; *size],
                },
                UserTypeKind::Vlen { base } => {
                    Values::Vlen(vec![self.default_value(*base).slice(0, 0)])
                }
                UserTypeKind::Compound { fields, .. } => {
                    let record = fields
                        .iter()
                        .map(|f| {
                            let n: usize = f.dims.iter().product::<usize>().max(1);
                            let one = self.default_value(f.ty);
                            Values::repeat_first(&one, n).unwrap_or(one)
                        })
                        .collect();
                    Values::Compound(vec![record])
                }
            },
        }
    }

    /// The type name as CDL writes it (`int`, `MyEnum`, ...).
    pub fn type_name(&self, t: NcType) -> &str {
        match t {
            NcType::Atomic(a) => a.cdl_name(),
            NcType::User(id) => &self.types[id.0].name,
        }
    }

    /// Size in bytes of one element of type `t` (vlen and string: 16 and 8, as netCDF-C's in-memory sizes).
    pub fn type_size(&self, t: NcType) -> usize {
        match t {
            NcType::Atomic(a) => a.size(),
            NcType::User(id) => match &self.types[id.0].kind {
                UserTypeKind::Enum { base, .. } => base.size(),
                UserTypeKind::Opaque { size } => *size,
                UserTypeKind::Vlen { .. } => 16,
                UserTypeKind::Compound { size, .. } => *size,
            },
        }
    }

    /// All variables in definition order, depth-first over groups (root first).
    pub fn all_vars(&self) -> Vec<VarId> {
        let mut out = Vec::new();
        let mut stack = vec![GroupId(0)];
        while let Some(g) = stack.pop() {
            out.extend(self.groups[g.0].vars.iter().copied());
            stack.extend(self.groups[g.0].groups.iter().rev().copied());
        }
        out
    }

    /// True if the dataset uses anything outside the classic data model (groups, user types,
    /// new atomic types, several unlimited dimensions, unlimited not first).
    pub fn needs_enhanced_model(&self) -> bool {
        self.groups.len() > 1
            || !self.types.is_empty()
            || self.dims.iter().filter(|d| d.unlimited).count() > 1
            || self.vars.iter().any(|v| {
                v.ty.as_atomic().is_none_or(|a| !a.is_classic())
                    || v.dims.iter().skip(1).any(|d| self.dims[d.0].unlimited)
                    || v.atts
                        .iter()
                        .any(|a| a.ty.as_atomic().is_none_or(|a| !a.is_classic()))
            })
            || self.groups[0]
                .atts
                .iter()
                .any(|a| a.ty.as_atomic().is_none_or(|a| !a.is_classic()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_through_ancestor_groups() {
        let mut ds = Dataset::new("n");
        let d = ds.add_dim(ROOT, "time", 0, true);
        let g = ds.add_group(ROOT, "g");
        let h = ds.add_group(g, "h");
        let e = ds.add_dim(g, "x", 4, false);
        assert_eq!(ds.find_dim(h, "time"), Some(d));
        assert_eq!(ds.find_dim(h, "x"), Some(e));
        assert_eq!(ds.find_dim(ROOT, "x"), None);
        assert_eq!(ds.group_path(h), "/g/h");
        assert_eq!(ds.group_path(ROOT), "/");
        assert_eq!(ds.find_group(g, "h"), Some(h));
    }

    #[test]
    fn data_bytes_of_all_variables() {
        let mut ds = Dataset::new("b");
        let x = ds.add_dim(ROOT, "x", 3, false);
        ds.add_var(ROOT, "d", AtomicType::Double.into(), vec![x]);
        ds.add_var(ROOT, "s", AtomicType::Short.into(), vec![]);
        assert_eq!(ds.data_bytes(), Some(3 * 8 + 2));
        assert_eq!(AtomicType::integer(2, false), Some(AtomicType::UShort));
        assert_eq!(AtomicType::integer(8, true), Some(AtomicType::Int64));
        assert_eq!(AtomicType::integer(3, true), None);
        let y = ds.add_dim(ROOT, "y", u64::MAX, false);
        ds.add_var(ROOT, "huge", AtomicType::Int.into(), vec![y]);
        assert_eq!(ds.data_bytes(), None);
    }

    #[test]
    fn fill_value_prefers_the_attribute() {
        let mut ds = Dataset::new("f");
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Short), vec![]);
        assert_eq!(
            ds.fill_value(v),
            Some(Values::Short(vec![crate::FILL_SHORT]))
        );
        ds.var_mut(v)
            .atts
            .push(Attribute::new("_FillValue", Values::Short(vec![7])));
        assert_eq!(ds.fill_value(v), Some(Values::Short(vec![7])));
    }

    #[test]
    fn record_variables_and_enhanced_model() {
        let mut ds = Dataset::new("r");
        let t = ds.add_dim(ROOT, "t", 3, true);
        let x = ds.add_dim(ROOT, "x", 2, false);
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Float), vec![t, x]);
        assert!(ds.is_record_var(v));
        assert_eq!(ds.num_elements(v), Some(6));
        assert!(!ds.needs_enhanced_model());
        ds.add_var(ROOT, "w", NcType::Atomic(AtomicType::Float), vec![x, t]);
        assert!(ds.needs_enhanced_model());
    }
}
