//! Recursive-descent parser for the CDL header (rules `cdl`, `group_body`, `types_section`,
//! `dims_section`, `vars_section`, `attdecl` in `cdl.ebnf`); the data section is in `data.rs`.

use std::collections::HashMap;
use std::io::Read;

use nc_dataset::{
    AtomicType, Attribute, CompoundField, Dataset, EnumMember, Format, GroupId, NcType, TypeId,
    UserTypeKind, Values, VarId, ROOT,
};

use super::convert::{empty_values, infer_attribute_type, Conv, Item, PItem};
use super::lexer::{Lexer, Pos, Tok};
use super::literal::Number;
use super::special::{
    apply_global_special, apply_var_special, Chain, GLOBAL_SPECIALS, VAR_SPECIALS,
};
use super::{CdlError, ParseOptions};

/// The parser state.
pub(crate) struct Parser<R: Read> {
    pub(crate) lx: Lexer<R>,
    pub(crate) ds: Dataset,
    pub(crate) opts: ParseOptions,
    /// filter chains being built, per variable
    chains: HashMap<usize, Chain>,
    /// variables whose data has inner unlimited dimensions: flattened at the end
    pub(crate) ragged: Vec<(VarId, Vec<PItem>)>,
    /// enum variables without `_FillValue` that got data: they must not need any fill
    pub(crate) enum_checks: Vec<(VarId, Pos)>,
    /// where each attribute name sits in its list, per (group, variable): a repeated name is
    /// found without scanning the list, so many attributes parse in linear time
    attr_slots: HashMap<(usize, Option<usize>), HashMap<String, usize>>,
    /// each group's variables by name: many variables parse in linear time
    var_slots: HashMap<(usize, String), VarId>,
    /// the temporary file for large variables' values, when parsing with one
    pub(crate) spill: Option<super::spill::Spill>,
}

/// The atomic type a CDL keyword names (rule `primtype`).
pub(crate) fn prim_type(name: &str) -> Option<AtomicType> {
    Some(match name {
        "char" => AtomicType::Char,
        "byte" => AtomicType::Byte,
        "short" => AtomicType::Short,
        "int" | "long" | "integer" => AtomicType::Int,
        "float" | "real" => AtomicType::Float,
        "double" => AtomicType::Double,
        "ubyte" => AtomicType::UByte,
        "ushort" => AtomicType::UShort,
        "uint" => AtomicType::UInt,
        "int64" => AtomicType::Int64,
        "uint64" => AtomicType::UInt64,
        "string" => AtomicType::String,
        _ => return None,
    })
}

/// Words that cannot name a dimension, variable or type. As ncgen's lexer does it, the type
/// names the output format cannot hold are plain names: netCDF-4-only types (ubyte, ushort,
/// uint, int64, uint64, string) when the format is classic, 64-bit offset, netCDF-4 classic
/// model or not given; `string` when it is CDF-5.
fn is_reserved(name: &str, format: Option<Format>) -> bool {
    match prim_type(name) {
        Some(t) if t.is_classic() => true,
        Some(t) => match format {
            Some(Format::Netcdf4) => true,
            Some(Format::Cdf5) => t != AtomicType::String,
            _ => false,
        },
        None => matches!(name, "compound" | "enum" | "opaque"),
    }
}

/// Number-like names (rule `special_float`).
pub(crate) fn name_number(n: &str) -> Option<Number> {
    Some(match n {
        "NaN" | "nan" => Number::double(f64::NAN),
        "Infinity" | "inf" if n == "Infinity" => Number::double(f64::INFINITY),
        "NaNf" | "nanf" => Number::float(f64::NAN),
        "Infinityf" => Number::float(f64::INFINITY),
        _ => return None,
    })
}

impl<R: Read> Parser<R> {
    pub(crate) fn new(lx: Lexer<R>, opts: ParseOptions) -> Self {
        Parser {
            lx,
            ds: Dataset::new(""),
            opts,
            chains: HashMap::new(),
            ragged: Vec::new(),
            enum_checks: Vec::new(),
            attr_slots: HashMap::new(),
            var_slots: HashMap::new(),
            spill: None,
        }
    }

    // ---- helpers -------------------------------------------------------------------------

    pub(crate) fn syntax(&self, pos: Pos, msg: impl Into<String>) -> CdlError {
        self.lx.err_at(pos, msg)
    }

    pub(crate) fn semantic(&self, pos: Pos, msg: impl Into<String>) -> CdlError {
        CdlError::Semantic {
            file: self.lx.file.clone(),
            line: pos.line,
            col: pos.col,
            msg: msg.into(),
        }
    }

    pub(crate) fn expected(&self, what: &str, tok: &Tok, pos: Pos) -> CdlError {
        self.syntax(pos, format!("expected {what}, found {}", tok.describe()))
    }

    /// After an item of a list: true after `,` (another item follows), false after `close`;
    /// anything else is an error expecting `',' or '<close>' <what>`.
    fn more_items(&mut self, close: u8, what: &str) -> Result<bool, CdlError> {
        let (t, sp) = self.lx.next()?;
        match t {
            Tok::Punct(b',') => Ok(true),
            Tok::Punct(c) if c == close => Ok(false),
            other => Err(self.expected(
                &format!("',' or '{}' {what}", char::from(close)),
                &other,
                sp,
            )),
        }
    }

    pub(crate) fn expect_punct(&mut self, c: u8, ctx: &str) -> Result<Pos, CdlError> {
        let (t, p) = self.lx.next()?;
        if t == Tok::Punct(c) {
            Ok(p)
        } else {
            Err(self.expected(&format!("'{}' {ctx}", char::from(c)), &t, p))
        }
    }

    pub(crate) fn peek_is_punct(&mut self, c: u8) -> Result<bool, CdlError> {
        Ok(self.lx.peek()?.0 == Tok::Punct(c))
    }

    fn expect_name(&mut self, what: &str) -> Result<(String, Pos), CdlError> {
        let (t, p) = self.lx.next()?;
        match t {
            Tok::Name(n) if !n.starts_with('/') => Ok((n, p)),
            other => Err(self.expected(what, &other, p)),
        }
    }

    /// Is the peeked token the section keyword `kw` directly followed by ':'? Not when what
    /// follows is `_Storage = ...` or another special attribute of a variable named `kw`:
    /// ncdump 4.9.0 writes those lines as `data:_Storage = "chunked" ;` (its own ncgen then
    /// fails on them; we read them as the attribute they are).
    pub(crate) fn at_section(&mut self, kw: &str) -> Result<bool, CdlError> {
        let p = match self.lx.peek()? {
            (Tok::Name(n), p) if n == kw => *p,
            _ => return Ok(false),
        };
        // the ':' right after the keyword, no blank between (the keyword has no escapes, so
        // its bytes in the source are its own)
        let glued = matches!(self.lx.peek_nth(1)?, (Tok::Punct(b':'), q)
            if q.line == p.line && q.col == p.col + kw.len());
        if !glued {
            return Ok(false);
        }
        let special = matches!(&self.lx.peek_nth(2)?.0, Tok::Name(a)
            if super::special::VAR_SPECIALS.contains(&a.as_str()))
            && matches!(self.lx.peek_nth(3)?.0, Tok::Punct(b'='));
        Ok(!special)
    }

    fn at_any_section(&mut self) -> Result<bool, CdlError> {
        for kw in ["types", "dimensions", "variables", "data", "group"] {
            if self.at_section(kw)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    // ---- rule: cdl -----------------------------------------------------------------------

    pub(crate) fn parse(&mut self) -> Result<Dataset, CdlError> {
        self.lx.skip_bom()?;
        let (t, p) = self.lx.next()?;
        if t != Tok::Name("netcdf".into()) {
            return Err(self.expected("'netcdf' at the start of the CDL", &t, p));
        }
        // the dataset name may be left out: the file name stands for it
        let name = if self.peek_is_punct(b'{')? {
            let stem = std::path::Path::new(&self.lx.file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            stem
        } else {
            let (t, p) = self.lx.next()?;
            match t {
                Tok::Name(n) => n,
                Tok::Num(n) => n.text(),
                other => return Err(self.expected("the dataset name after 'netcdf'", &other, p)),
            }
        };
        self.ds.name = name;
        self.expect_punct(b'{', "to open the dataset")?;
        self.group_body(ROOT, 1)?;
        self.expect_punct(b'}', "to close the dataset")?;
        let (t, p) = self.lx.next()?;
        if t != Tok::Eof {
            return Err(self.expected("end of file after the closing '}'", &t, p));
        }
        self.finish()?;
        order_types_like_ncgen(&mut self.ds);
        Ok(std::mem::replace(&mut self.ds, Dataset::new("")))
    }

    // ---- rule: group_body ----------------------------------------------------------------

    fn group_body(&mut self, g: GroupId, depth: usize) -> Result<(), CdlError> {
        if depth > self.opts.max_depth {
            let p = self.lx.here();
            return Err(self.semantic(
                p,
                format!("groups nested deeper than {}", self.opts.max_depth),
            ));
        }
        let order = ["types", "dimensions", "variables", "data"];
        let mut next_section = 0;
        // rule: group_body starts with optional attribute declarations
        while !self.at_any_section()? && self.try_attr(g)? {}
        loop {
            let mut found = None;
            for (i, kw) in order.iter().enumerate() {
                if self.at_section(kw)? {
                    found = Some(i);
                    break;
                }
            }
            let Some(i) = found else { break };
            let (_, p) = self.lx.next()?;
            if i < next_section {
                return Err(self.syntax(
                    p,
                    format!(
                        "section '{}:' out of order: sections go types:, dimensions:, variables:, data:",
                        order[i]
                    ),
                ));
            }
            self.lx.next()?; // ':'
            next_section = i + 1;
            match i {
                0 => self.types_section(g, depth)?,
                1 => self.dims_section(g)?,
                2 => self.vars_section(g)?,
                _ => self.data_section(g)?,
            }
        }
        // rule: group_decl*
        while self.at_section("group")? {
            self.lx.next()?;
            self.lx.next()?;
            let (name, p) = self.expect_name("a group name after 'group:'")?;
            if self.ds.find_group(g, &name).is_some() {
                return Err(self.semantic(p, format!("duplicate group name '{name}'")));
            }
            let child = self.ds.add_group(g, name);
            self.expect_punct(b'{', "to open the group")?;
            self.group_body(child, depth + 1)?;
            self.expect_punct(b'}', "to close the group")?;
        }
        Ok(())
    }

    /// Parses the attribute declarations that come next in a section; then true when another
    /// declaration follows, false at the section's end (another section or the group's `}`).
    fn at_declaration(&mut self, g: GroupId) -> Result<bool, CdlError> {
        loop {
            if self.at_any_section()? || self.peek_is_punct(b'}')? {
                return Ok(false);
            }
            if !self.try_attr(g)? {
                return Ok(true);
            }
        }
    }

    // ---- rule: types_section -------------------------------------------------------------

    fn types_section(&mut self, g: GroupId, depth: usize) -> Result<(), CdlError> {
        while self.at_declaration(g)? {
            let (t, p) = self.lx.peek()?.clone();
            match t {
                Tok::Name(n) if n == "compound" => {
                    self.lx.next()?;
                    self.compound_decl(g, depth)?;
                }
                Tok::Name(n) if n == "opaque" => {
                    self.lx.next()?;
                    self.expect_punct(b'(', "after 'opaque'")?;
                    let (t, sp) = self.lx.next()?;
                    let size = match t {
                        Tok::Num(Number::Int { bits, .. }) if bits > 0 => bits as usize,
                        other => return Err(self.expected("a positive opaque size", &other, sp)),
                    };
                    self.expect_punct(b')', "after the opaque size")?;
                    let (name, np) = self.expect_name("the opaque type name")?;
                    self.check_new_type(g, &name, np)?;
                    self.ds.add_type(g, name, UserTypeKind::Opaque { size });
                    if self.peek_is_punct(b';')? {
                        self.lx.next()?;
                    }
                }
                Tok::Name(_) => {
                    // enum or vlen
                    let ty = self.type_ref(g)?;
                    let (t2, p2) = self.lx.next()?;
                    match t2 {
                        Tok::Name(n) if n == "enum" => self.enum_decl(g, ty, p)?,
                        Tok::Punct(b'(') => {
                            self.expect_punct(b'*', "in a vlen declaration 'type(*) name'")?;
                            self.expect_punct(b')', "in a vlen declaration 'type(*) name'")?;
                            let (name, np) = self.expect_name("the vlen type name")?;
                            self.check_new_type(g, &name, np)?;
                            self.ds.add_type(g, name, UserTypeKind::Vlen { base: ty });
                            if self.peek_is_punct(b';')? {
                                self.lx.next()?;
                            }
                        }
                        other => {
                            return Err(self.expected(
                                "'enum' or '(*)' after a type in types:",
                                &other,
                                p2,
                            ))
                        }
                    }
                }
                other => return Err(self.expected("a type declaration", &other, p)),
            }
        }
        Ok(())
    }

    /// A reserved word cannot name a `what` (type, dimension, variable).
    fn check_not_reserved(&self, name: &str, p: Pos, what: &str) -> Result<(), CdlError> {
        if is_reserved(name, self.opts.format) {
            return Err(self.syntax(
                p,
                format!("'{name}' is a reserved word and cannot name a {what}"),
            ));
        }
        Ok(())
    }

    fn check_new_type(&self, g: GroupId, name: &str, p: Pos) -> Result<(), CdlError> {
        self.check_not_reserved(name, p, "type")?;
        if self
            .ds
            .group(g)
            .types
            .iter()
            .any(|t| self.ds.types[t.0].name == name)
        {
            return Err(self.semantic(p, format!("duplicate type name '{name}'")));
        }
        Ok(())
    }

    /// rule: typeref — a primitive type keyword or a (path to a) user type.
    fn type_ref(&mut self, g: GroupId) -> Result<NcType, CdlError> {
        let (t, p) = self.lx.next()?;
        let Tok::Name(n) = t else {
            return Err(self.expected("a type name", &t, p));
        };
        self.resolve_type(g, &n, p)
    }

    fn resolve_type(&self, g: GroupId, n: &str, p: Pos) -> Result<NcType, CdlError> {
        if let Some(a) = prim_type(n) {
            return Ok(NcType::Atomic(a));
        }
        self.find_user_type(g, n)
            .map(NcType::User)
            .ok_or_else(|| self.semantic(p, format!("undefined type '{n}'")))
    }

    fn find_user_type(&self, g: GroupId, n: &str) -> Option<TypeId> {
        if let Some(path) = n.strip_prefix('/') {
            let (grp, last) = self.split_path(path)?;
            return self
                .ds
                .group(grp)
                .types
                .iter()
                .copied()
                .find(|t| self.ds.types[t.0].name == last);
        }
        if let Some(t) = self.ds.find_type(g, n) {
            return Some(t);
        }
        // ncgen also finds a type defined anywhere when the name is unique
        let mut hits = self
            .ds
            .types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.name == n);
        let first = hits.next()?;
        if hits.next().is_none() {
            Some(TypeId(first.0))
        } else {
            None
        }
    }

    /// rule: enum_decl (after `basetype enum`).
    fn enum_decl(&mut self, g: GroupId, base: NcType, p: Pos) -> Result<(), CdlError> {
        let base = match base {
            NcType::Atomic(a) if a.is_integer() => a,
            _ => return Err(self.semantic(p, "enum base type must be an integer type")),
        };
        let (name, np) = self.expect_name("the enum type name")?;
        self.check_new_type(g, &name, np)?;
        self.expect_punct(b'{', "to open the enum members")?;
        let mut members: Vec<EnumMember> = Vec::new();
        loop {
            let (mname, mp) = self.expect_name("an enum member name")?;
            self.expect_punct(b'=', "after the enum member name")?;
            let (t, vp) = self.lx.next()?;
            let value: i128 = match t {
                Tok::Num(Number::Int { bits, ty }) => {
                    if ty == AtomicType::UInt64 {
                        i128::from(bits as u64)
                    } else {
                        i128::from(bits)
                    }
                }
                other => return Err(self.expected("an integer enum value", &other, vp)),
            };
            let (lo, hi): (i128, i128) = match base {
                AtomicType::Byte => (-128, 127),
                AtomicType::UByte => (0, 255),
                AtomicType::Short => (-32768, 32767),
                AtomicType::UShort => (0, 65535),
                AtomicType::Int => (i128::from(i32::MIN), i128::from(i32::MAX)),
                AtomicType::UInt => (0, i128::from(u32::MAX)),
                AtomicType::Int64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
                _ => (0, i128::from(u64::MAX)),
            };
            if value < lo || value > hi {
                return Err(self.semantic(
                    vp,
                    format!(
                        "enum value {value} of '{mname}' does not fit base type {}",
                        base.cdl_name()
                    ),
                ));
            }
            if members.iter().any(|m| m.value == value) {
                return Err(self.semantic(
                    vp,
                    format!("enum value {value} of '{mname}' repeats an earlier member's value"),
                ));
            }
            if members.iter().any(|m| m.name == mname) {
                return Err(self.semantic(mp, format!("duplicate enum member '{mname}'")));
            }
            members.push(EnumMember { name: mname, value });
            if !self.more_items(b'}', "in the enum member list")? {
                break;
            }
        }
        self.ds
            .add_type(g, name, UserTypeKind::Enum { base, members });
        if self.peek_is_punct(b';')? {
            self.lx.next()?;
        }
        Ok(())
    }

    /// rule: compound_decl (after `compound`).
    fn compound_decl(&mut self, g: GroupId, depth: usize) -> Result<(), CdlError> {
        let (name, np) = self.expect_name("the compound type name")?;
        self.check_new_type(g, &name, np)?;
        self.expect_punct(b'{', "to open the compound fields")?;
        let mut fields: Vec<CompoundField> = Vec::new();
        while !self.peek_is_punct(b'}')? {
            let fty = self.type_ref(g)?;
            loop {
                let (fname, fp) = self.expect_name("a compound field name")?;
                let mut dims = Vec::new();
                if self.peek_is_punct(b'(')? {
                    self.lx.next()?;
                    loop {
                        let (t, dp) = self.lx.next()?;
                        match t {
                            Tok::Num(Number::Int { bits, .. }) if bits > 0 => {
                                dims.push(bits as usize)
                            }
                            Tok::Name(dn) => match self.ds.find_dim(g, &dn) {
                                Some(d) => dims.push(self.ds.dim(d).len as usize),
                                None => {
                                    return Err(
                                        self.semantic(dp, format!("undefined dimension '{dn}'"))
                                    )
                                }
                            },
                            other => {
                                return Err(self.expected("a positive field dimension", &other, dp))
                            }
                        }
                        if !self.more_items(b')', "in field dimensions")? {
                            break;
                        }
                    }
                }
                if fields.iter().any(|f| f.name == fname) {
                    return Err(self.semantic(
                        fp,
                        format!("duplicate field '{fname}' in compound '{name}'"),
                    ));
                }
                if dims
                    .iter()
                    .try_fold(1usize, |a, &b| a.checked_mul(b))
                    .is_none_or(|n| n > (1 << 20))
                {
                    return Err(self.semantic(fp, format!("field '{fname}' is too large")));
                }
                fields.push(CompoundField {
                    name: fname,
                    ty: fty,
                    dims,
                    offset: 0,
                });
                if !self.more_items(b';', "after a compound field")? {
                    break;
                }
            }
        }
        self.lx.next()?; // '}'
        let _ = depth;
        let size = self.layout_compound(&mut fields);
        self.ds
            .add_type(g, name, UserTypeKind::Compound { size, fields });
        if self.peek_is_punct(b';')? {
            self.lx.next()?;
        }
        Ok(())
    }

    /// (size, alignment) of a type in native C layout.
    fn native_size_align(&self, t: NcType) -> (usize, usize) {
        match t {
            NcType::Atomic(a) => {
                let s = a.size();
                (s, s.max(1))
            }
            NcType::User(id) => match &self.ds.types[id.0].kind {
                UserTypeKind::Enum { base, .. } => (base.size(), base.size()),
                UserTypeKind::Opaque { size } => (*size, 1),
                UserTypeKind::Vlen { .. } => (16, 8),
                UserTypeKind::Compound { size, fields } => {
                    let al = fields
                        .iter()
                        .map(|f| self.native_size_align(f.ty).1)
                        .max()
                        .unwrap_or(1);
                    (*size, al)
                }
            },
        }
    }

    fn layout_compound(&self, fields: &mut [CompoundField]) -> usize {
        let mut off = 0usize;
        let mut max_al = 1usize;
        for f in fields.iter_mut() {
            let (s, al) = self.native_size_align(f.ty);
            let n: usize = f.dims.iter().product::<usize>().max(1);
            off = off.div_ceil(al) * al;
            f.offset = off;
            off = off.saturating_add(s.saturating_mul(n));
            max_al = max_al.max(al);
        }
        off.div_ceil(max_al) * max_al
    }

    // ---- rule: dims_section --------------------------------------------------------------

    fn dims_section(&mut self, g: GroupId) -> Result<(), CdlError> {
        while self.at_declaration(g)? {
            loop {
                let (name, p) = self.expect_name("a dimension name")?;
                self.check_not_reserved(&name, p, "dimension")?;
                if self
                    .ds
                    .group(g)
                    .dims
                    .iter()
                    .any(|d| self.ds.dims[d.0].name == name)
                {
                    return Err(self.semantic(p, format!("duplicate dimension name '{name}'")));
                }
                self.expect_punct(b'=', "after the dimension name")?;
                let (t, vp) = self.lx.next()?;
                match t {
                    Tok::Name(u) if u == "UNLIMITED" || u == "unlimited" || u == "NC_UNLIMITED" => {
                        self.ds.add_dim(g, name, 0, true);
                    }
                    Tok::Num(Number::Int { bits, ty }) => {
                        if bits < 0 && ty != AtomicType::UInt64 {
                            return Err(self.semantic(
                                vp,
                                format!("dimension '{name}' has negative length {bits}"),
                            ));
                        }
                        if bits == 0 {
                            // ncgen treats a zero length as unlimited
                            self.ds.add_dim(g, name, 0, true);
                        } else {
                            self.ds.add_dim(g, name, bits as u64, false);
                        }
                    }
                    Tok::Num(Number::Real { v, .. })
                        if v >= 1.0 && v.fract() == 0.0 && v < 9e18 =>
                    {
                        self.ds.add_dim(g, name, v as u64, false);
                    }
                    other => {
                        return Err(self.expected("a dimension length or UNLIMITED", &other, vp))
                    }
                }
                if !self.more_items(b';', "after a dimension declaration")? {
                    break;
                }
            }
        }
        Ok(())
    }

    // ---- rule: vars_section --------------------------------------------------------------

    fn vars_section(&mut self, g: GroupId) -> Result<(), CdlError> {
        while self.at_declaration(g)? {
            let (t, p) = self.lx.next()?;
            let Tok::Name(first) = t else {
                return Err(self.expected("a variable or attribute declaration", &t, p));
            };
            if !matches!(self.lx.peek()?.0, Tok::Name(_)) {
                let (t2, p2) = self.lx.peek()?.clone();
                return Err(self.expected(
                    &format!("a variable name after type '{first}' (or ':' for an attribute)"),
                    &t2,
                    p2,
                ));
            }
            let ty = self.resolve_type(g, &first, p)?;
            self.var_decl(g, ty)?;
        }
        Ok(())
    }

    /// The variable `name` of group `g`.
    pub(crate) fn find_var(&self, g: GroupId, name: &str) -> Option<VarId> {
        self.var_slots.get(&(g.0, name.to_string())).copied()
    }

    /// After a type: `name(dims), name2 ;` (rule `vardecl`).
    fn var_decl(&mut self, g: GroupId, ty: NcType) -> Result<(), CdlError> {
        loop {
            let (name, p) = self.expect_name("a variable name")?;
            self.check_not_reserved(&name, p, "variable")?;
            if self.find_var(g, &name).is_some() {
                return Err(self.semantic(p, format!("duplicate variable name '{name}'")));
            }
            let mut dims = Vec::new();
            if self.peek_is_punct(b'(')? {
                self.lx.next()?;
                if !self.peek_is_punct(b')')? {
                    loop {
                        let (t, dp) = self.lx.next()?;
                        let Tok::Name(dn) = t else {
                            return Err(self.expected("a dimension name", &t, dp));
                        };
                        let d = self.find_dim_path(g, &dn).ok_or_else(|| {
                            self.semantic(
                                dp,
                                format!("undefined dimension '{dn}' in variable '{name}'"),
                            )
                        })?;
                        dims.push(d);
                        if !self.more_items(b')', "in the dimension list")? {
                            break;
                        }
                    }
                } else {
                    self.lx.next()?;
                }
            }
            if dims.len() > 1024 {
                return Err(self.semantic(
                    p,
                    format!("variable '{name}' has more than 1024 dimensions"),
                ));
            }
            let v = self.ds.add_var(g, name.clone(), ty, dims);
            self.var_slots.insert((g.0, name), v);
            let (t, sp) = self.lx.next()?;
            match t {
                Tok::Punct(b',') => continue,
                Tok::Punct(b';') => return Ok(()),
                other => return Err(self.expected("';' after variable declaration", &other, sp)),
            }
        }
    }

    /// An absolute path without its leading `/` (`g/h/x`): the group it names (`/g/h`) and
    /// the last name (`x`); `None` when a group on the way does not exist.
    fn split_path<'n>(&self, path: &'n str) -> Option<(GroupId, &'n str)> {
        let mut parts: Vec<&str> = path.split('/').collect();
        let last = parts.pop()?;
        let mut grp = ROOT;
        for part in parts {
            grp = self.ds.find_group(grp, part)?;
        }
        Some((grp, last))
    }

    fn find_dim_path(&self, g: GroupId, n: &str) -> Option<nc_dataset::DimId> {
        if let Some(path) = n.strip_prefix('/') {
            let (grp, last) = self.split_path(path)?;
            return self
                .ds
                .group(grp)
                .dims
                .iter()
                .copied()
                .find(|d| self.ds.dims[d.0].name == last);
        }
        self.ds.find_dim(g, n)
    }

    // ---- rule: attdecl -------------------------------------------------------------------

    /// If an attribute declaration starts here (`:a`, `v:a`, `T :a`, `T v:a`), parse it.
    fn try_attr(&mut self, g: GroupId) -> Result<bool, CdlError> {
        let (t0, p0) = self.lx.peek()?.clone();
        match t0 {
            Tok::Punct(b':') => {
                self.lx.next()?;
                self.attr_rest(g, None, None, p0)?;
                Ok(true)
            }
            Tok::Name(a) => {
                let t1 = self.lx.peek_nth(1)?.0.clone();
                match t1 {
                    Tok::Punct(b':') => {
                        self.lx.next()?;
                        self.lx.next()?;
                        if let Some(v) = self.find_var(g, &a) {
                            self.attr_rest(g, Some(v), None, p0)?;
                        } else if prim_type(&a).is_some() || self.find_user_type(g, &a).is_some() {
                            let ty = self.resolve_type(g, &a, p0)?;
                            self.attr_rest(g, None, Some(ty), p0)?;
                        } else {
                            return Err(self.semantic(p0, format!("undefined variable '{a}' (attributes must follow their variable's declaration)")));
                        }
                        Ok(true)
                    }
                    Tok::Name(b) => {
                        if self.lx.peek_nth(2)?.0 != Tok::Punct(b':') {
                            return Ok(false);
                        }
                        let ty = self.resolve_type(g, &a, p0)?;
                        self.lx.next()?;
                        let (_, pb) = self.lx.next()?;
                        self.lx.next()?;
                        let v = self.find_var(g, &b).ok_or_else(|| {
                            self.semantic(pb, format!("undefined variable '{b}' (attributes must follow their variable's declaration)"))
                        })?;
                        self.attr_rest(g, Some(v), Some(ty), p0)?;
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            }
            _ => Ok(false),
        }
    }

    /// After `[type] [var]:` — `attname = datalist ;`.
    fn attr_rest(
        &mut self,
        g: GroupId,
        var: Option<VarId>,
        ty: Option<NcType>,
        start: Pos,
    ) -> Result<(), CdlError> {
        let (name, np) = self.expect_name("an attribute name after ':'")?;
        self.expect_punct(b'=', "after the attribute name")?;
        let items = self.datalist(1)?;
        self.expect_punct(b';', "after the attribute value")?;
        if items.is_empty() {
            // an empty list makes an empty char attribute (ncgen allows it only for char)
            let is_char = ty.is_none_or(|t| t == NcType::Atomic(AtomicType::Char));
            if !is_char || var.is_some_and(|_| name == "_FillValue") {
                return Err(self.semantic(np, format!("attribute '{name}': an empty value list can only be assigned to attributes of type char")));
            }
        }
        // special attributes
        match var {
            Some(v) if VAR_SPECIALS.contains(&name.as_str()) => {
                let mut chain = self.chains.remove(&v.0).unwrap_or_default();
                chain.type_size = self.ds.type_size(self.ds.vars[v.0].ty);
                let r = apply_var_special(
                    &name,
                    &items,
                    np,
                    &mut self.ds.vars[v.0].storage,
                    &mut chain,
                );
                chain.apply(&mut self.ds.vars[v.0].storage);
                self.chains.insert(v.0, chain);
                // quantization: digits or bits in the range of the variable's type
                let r = r.and_then(|()| match self.ds.vars[v.0].storage.quantize {
                    Some((mode, nsd)) if name.starts_with("_Quantize") => {
                        let ty = match self.ds.vars[v.0].ty {
                            NcType::Atomic(t) => t,
                            _ => AtomicType::Char,
                        };
                        nc_dataset::quantize::check(mode, nsd, ty)
                            .map_err(|m| (items.first().map_or(np, |i| i.pos), m))
                    }
                    _ => Ok(()),
                });
                if let (Ok(()), Some((mode, nsd))) = (&r, self.ds.vars[v.0].storage.quantize) {
                    if name.starts_with("_Quantize") {
                        // a real attribute of the file too, where the CDL puts it (netCDF-C
                        // writes it with the variable); other _Quantize* ones give way
                        self.ds.vars[v.0]
                            .atts
                            .retain(|a| !a.name.starts_with("_Quantize") || a.name == name);
                        let att =
                            Attribute::new(mode.attribute_name(), Values::Int(vec![nsd as i32]));
                        self.push_attr(g, var, att);
                    }
                }
                return r.map_err(|(p, m)| {
                    self.semantic(p, format!("variable '{}': {m}", self.ds.vars[v.0].name))
                });
            }
            None if GLOBAL_SPECIALS.contains(&name.as_str()) && g == ROOT => {
                return apply_global_special(&name, &items, np, &mut self.ds)
                    .map_err(|(p, m)| self.semantic(p, m));
            }
            _ => {}
        }
        if items.is_empty() {
            let att = Attribute {
                name: name.clone(),
                ty: NcType::Atomic(AtomicType::Char),
                values: Values::Char(Vec::new()),
            };
            self.push_attr(g, var, att);
            return Ok(());
        }
        // _FillValue always takes its variable's type (ncgen converts the values to it)
        let ty = match (var, ty) {
            (Some(v), _) if name == "_FillValue" => self.ds.vars[v.0].ty,
            (_, Some(t)) => t,
            (_, None) => self.infer_type(g, &items)?,
        };
        let values = self.convert_attribute(ty, &items, &name)?;
        let att = Attribute {
            name: name.clone(),
            ty,
            values,
        };
        self.push_attr(g, var, att);
        let _ = start;
        Ok(())
    }

    fn push_attr(&mut self, g: GroupId, var: Option<VarId>, att: Attribute) {
        let list = match var {
            Some(v) => &mut self.ds.vars[v.0].atts,
            None => &mut self.ds.groups[g.0].atts,
        };
        let slots = self.attr_slots.entry((g.0, var.map(|v| v.0))).or_default();
        // the index is only a hint: trust a slot when it still holds that name
        let slot = match slots.get(&att.name) {
            Some(&i) if list.get(i).is_some_and(|a| a.name == att.name) => Some(i),
            Some(_) => list.iter().position(|a| a.name == att.name),
            None if slots.len() == list.len() => None,
            // the list was filled elsewhere: look it up
            None => list.iter().position(|a| a.name == att.name),
        };
        // a repeated attribute replaces the earlier one (ncgen keeps the last)
        match slot {
            Some(i) => {
                slots.insert(att.name.clone(), i);
                list[i] = att;
            }
            None => {
                slots.insert(att.name.clone(), list.len());
                list.push(att);
            }
        }
    }

    fn infer_type(&self, _g: GroupId, items: &[PItem]) -> Result<NcType, CdlError> {
        infer_attribute_type(items)
            .map(NcType::Atomic)
            .map_err(|(p, m)| self.semantic(p, m))
    }

    fn convert_attribute(
        &self,
        ty: NcType,
        items: &[PItem],
        name: &str,
    ) -> Result<Values, CdlError> {
        if let Some(f) = items.iter().find(|i| matches!(i.item, Item::Fill)) {
            return Err(self.semantic(
                f.pos,
                format!("attribute '{name}': attribute data may not contain fill values (i.e. _ )"),
            ));
        }
        let conv = Conv {
            ds: &self.ds,
            max_depth: self.opts.max_depth,
        };
        let mut out = empty_values(&self.ds, ty);
        if ty == NcType::Atomic(AtomicType::Char) {
            conv.push_chars(items, &mut out, None)
                .map_err(|(p, m)| self.semantic(p, format!("attribute '{name}': {m}")))?;
            // ncgen stores an empty text attribute as one NUL byte (never zero length).
            if let Values::Char(v) = &mut out {
                if v.is_empty() {
                    v.push(0);
                }
            }
            return Ok(out);
        }
        for it in items {
            conv.push(ty, it, None, &mut out, 0)
                .map_err(|(p, m)| self.semantic(p, format!("attribute '{name}': {m}")))?;
        }
        Ok(out)
    }

    // ---- rule: datalist ------------------------------------------------------------------

    /// A comma-separated list of data items up to (not including) ';' or '}'.
    pub(crate) fn datalist(&mut self, depth: usize) -> Result<Vec<PItem>, CdlError> {
        let mut items = Vec::new();
        if self.peek_is_punct(b';')? || self.peek_is_punct(b'}')? {
            return Ok(items);
        }
        loop {
            items.push(self.data_item(depth)?);
            if self.peek_is_punct(b',')? {
                self.lx.next()?;
                continue;
            }
            return Ok(items);
        }
    }

    /// rule: dataitem
    pub(crate) fn data_item(&mut self, depth: usize) -> Result<PItem, CdlError> {
        let (t, p) = self.lx.next()?;
        let item = match t {
            Tok::Num(n) => Item::Num(n),
            Tok::Str(mut s) => {
                // adjacent strings are not joined by ncgen; keep one string per token
                s.shrink_to_fit();
                Item::Str(s)
            }
            Tok::Char(c) => Item::Char(c),
            Tok::Opaque(b) => Item::Opaque(b),
            Tok::Name(n) => {
                if n == "_" {
                    Item::Fill
                } else if n == "NIL" {
                    Item::Nil
                } else if let Some(num) = name_number(&n) {
                    Item::Num(num)
                } else {
                    Item::Name(n)
                }
            }
            Tok::Punct(b'{') => {
                if depth > self.opts.max_depth {
                    return Err(self.semantic(
                        p,
                        format!("braces nested deeper than {}", self.opts.max_depth),
                    ));
                }
                let inner = self.datalist(depth + 1)?;
                self.expect_punct(b'}', "to close '{'")?;
                Item::Group(inner)
            }
            other => return Err(self.expected("a value", &other, p)),
        };
        Ok(PItem { item, pos: p })
    }
}

/// Define the user types in the order netCDF-C's ncgen does (it shows in the file's creation
/// order, so in ncdump's `types:` list): first, in CDL order, every type that uses no other
/// user type (enums, opaques, vlens of an atomic type, compounds of atomic fields); then, pass
/// after pass in CDL order, every type whose user types are all defined already.
pub(crate) fn order_types_like_ncgen(ds: &mut Dataset) {
    use nc_dataset::{NcType, UserTypeKind};
    let n = ds.types.len();
    let user_deps = |k: usize| -> Vec<usize> {
        let ids = |t: &NcType| match t {
            NcType::User(id) => Some(id.0),
            NcType::Atomic(_) => None,
        };
        match &ds.types[k].kind {
            UserTypeKind::Vlen { base } => ids(base).into_iter().collect(),
            UserTypeKind::Compound { fields, .. } => {
                fields.iter().filter_map(|f| ids(&f.ty)).collect()
            }
            UserTypeKind::Enum { .. } | UserTypeKind::Opaque { .. } => Vec::new(),
        }
    };
    let deps: Vec<Vec<usize>> = (0..n).map(user_deps).collect();
    let mut rank = vec![usize::MAX; n];
    let mut next = 0;
    for k in 0..n {
        if deps[k].is_empty() {
            rank[k] = next;
            next += 1;
        }
    }
    loop {
        let mut progress = false;
        for k in 0..n {
            if rank[k] == usize::MAX && deps[k].iter().all(|&d| rank[d] != usize::MAX) {
                rank[k] = next;
                next += 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    for g in &mut ds.groups {
        // anything left (a cycle cannot be written in CDL) keeps its place at the end
        g.types.sort_by_key(|t| (rank[t.0], t.0));
    }
}
