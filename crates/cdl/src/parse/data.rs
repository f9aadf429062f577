//! The data section (rules `data_section`, `datadecl`, `datalist` in `cdl.ebnf`).
//!
//! Plain numeric and enum variables take the fast path: tokens are converted as they are read
//! and appended to one typed vector, so a 200 MiB section costs only the values' memory; with
//! a temporary file (`spill.rs`) the vector goes there block by block as it fills.
//! Char, string and user-typed variables go through the item tree; variables with an unlimited
//! dimension other than the first keep their `{...}` tree until every record count is known.

use std::io::Read;

use nc_dataset::{AtomicType, GroupId, NcType, UserTypeKind, Values, VarId};

use super::convert::{
    default_one, empty_values, enum_value, item_kind, push_fill, push_number, Conv, Item, PItem,
};
use super::lexer::{Pos, Tok};
use super::literal::Number;
use super::parser::{name_number, Parser};
use super::spill::{Run, Settled};
use super::CdlError;

/// Largest capacity reserved up front (the vector grows past it as values arrive).
const MAX_PREALLOC: u64 = 1 << 22;
/// Most elements laid out with fill padding (char padding, UNLIMITED-in-braces layout); only
/// hostile input reaches it, since it does not come from values actually given.
const MAX_LAYOUT: u64 = 1 << 28;

impl<R: Read> Parser<R> {
    /// rule: data_section — `name = datalist ;` until `group:` or '}'.
    pub(crate) fn data_section(&mut self, g: GroupId) -> Result<(), CdlError> {
        loop {
            if self.peek_is_punct(b'}')? {
                return Ok(());
            }
            if self.at_section("group")? {
                return Ok(());
            }
            let (t, p) = self.lx.next()?;
            let Tok::Name(name) = t else {
                return Err(self.expected("a variable name in the data section", &t, p));
            };
            let v = self.find_data_var(g, &name).ok_or_else(|| {
                self.semantic(
                    p,
                    format!("undefined variable '{name}' in the data section"),
                )
            })?;
            self.expect_punct(b'=', "after the variable name in the data section")?;
            self.var_data(v, p)?;
        }
    }

    fn find_data_var(&self, g: GroupId, name: &str) -> Option<VarId> {
        // ncgen takes plain names only: a data section fills its own group's variables
        self.find_var(g, name)
    }

    /// Shape facts of a variable: (rank, first dim unlimited, any later dim unlimited,
    /// element count of the fixed shape or of one record).
    fn shape_facts(&self, v: VarId) -> (usize, bool, bool, Option<u64>) {
        let dims = &self.ds.vars[v.0].dims;
        let rank = dims.len();
        let first_unlim = dims.first().is_some_and(|d| self.ds.dims[d.0].unlimited);
        let inner_unlim = dims.iter().skip(1).any(|d| self.ds.dims[d.0].unlimited);
        let skip = usize::from(first_unlim);
        let per: Option<u64> = dims
            .iter()
            .skip(skip)
            .try_fold(1u64, |a, d| a.checked_mul(self.ds.dims[d.0].len));
        (rank, first_unlim, inner_unlim, per)
    }

    fn var_data(&mut self, v: VarId, vpos: Pos) -> Result<(), CdlError> {
        let ty = self.ds.vars[v.0].ty;
        let (rank, first_unlim, inner_unlim, per) = self.shape_facts(v);
        let Some(per) = per else {
            return Err(self.semantic(vpos, "variable size overflows 64 bits"));
        };
        if inner_unlim {
            let items = self.datalist(1)?;
            self.expect_punct(b';', "after the data list")?;
            self.ragged.push((v, items));
            return Ok(());
        }
        if matches!(ty, NcType::User(_))
            && self.ds.base_atomic(ty).is_some()
            && self.ds.vars[v.0].att("_FillValue").is_none()
        {
            self.enum_checks.push((v, vpos));
        }
        let base = self.ds.base_atomic(ty);
        let mut run = None;
        let values = match base {
            Some(a) if a != AtomicType::Char && a != AtomicType::String => {
                self.fast_numeric(v, ty, a, per, first_unlim, rank, &mut run)?
            }
            _ => {
                let items = self.datalist(1)?;
                self.expect_punct(b';', "after the data list")?;
                if items.is_empty() {
                    return Err(
                        self.syntax(vpos, "empty data list: give at least one value or '_'")
                    );
                }
                if ty == NcType::Atomic(AtomicType::Char) {
                    self.char_data(v, &items, rank)?
                } else {
                    let fill = self.ds.fill_value(v);
                    let conv = Conv {
                        ds: &self.ds,
                        max_depth: self.opts.max_depth,
                    };
                    let mut out = empty_values(&self.ds, ty);
                    for it in &items {
                        if !first_unlim && out.len() as u64 >= per {
                            break;
                        }
                        if let (NcType::Atomic(_), Item::Group(_)) = (ty, &it.item) {
                            return Err(
                                self.semantic(it.pos, "expected a primitive value, found {..}")
                            );
                        }
                        conv.push(ty, it, fill.as_ref(), &mut out, 0)
                            .map_err(|(p, m)| {
                                self.semantic(
                                    p,
                                    format!("variable '{}': {m}", self.ds.vars[v.0].name),
                                )
                            })?;
                    }
                    if rank == 0 && items.len() > 1 {
                        return Err(self.semantic(
                            items[1].pos,
                            format!(
                                "scalar variable '{}' takes one value, found {}",
                                self.ds.vars[v.0].name,
                                items.len()
                            ),
                        ));
                    }
                    out
                }
            }
        };
        if first_unlim {
            let n = values.len() as u64 + run.map_or(0, |r| r.elems());
            let recs = if per == 0 { 0 } else { n.div_ceil(per) };
            let d = self.ds.vars[v.0].dims[0];
            let dim = &mut self.ds.dims[d.0];
            dim.len = dim.len.max(recs);
        }
        self.keep_data(v, values, run)
    }

    /// Give variable `v` its values: in memory, or in the temporary file when there is one
    /// and they began going there or the memory budget is spent.
    fn keep_data(&mut self, v: VarId, values: Values, run: Option<Run>) -> Result<(), CdlError> {
        let settled = match self.spill.as_mut() {
            Some(s) => s
                .settle(v.0, values, run)
                .map_err(|e| self.spill_error(e))?,
            None => Settled::Memory(values),
        };
        let var = &mut self.ds.vars[v.0];
        match settled {
            Settled::Memory(values) => {
                var.data = Some(values);
                var.data_elsewhere = None;
            }
            Settled::File(n) => {
                var.data = None;
                var.data_elsewhere = Some(n);
            }
        }
        Ok(())
    }

    fn spill_error(&self, e: std::io::Error) -> CdlError {
        CdlError::Spill {
            file: self.lx.file.clone(),
            dir: self
                .spill
                .as_ref()
                .map(|s| s.dir().display().to_string())
                .unwrap_or_default(),
            msg: e.to_string(),
        }
    }

    /// The fast path: numbers straight into a typed vector. With a temporary file, each full
    /// block of the vector goes there as part of `run`; the values returned follow the run.
    #[allow(clippy::too_many_arguments)]
    fn fast_numeric(
        &mut self,
        v: VarId,
        ty: NcType,
        base: AtomicType,
        per: u64,
        first_unlim: bool,
        rank: usize,
        run: &mut Option<Run>,
    ) -> Result<Values, CdlError> {
        let limit = if first_unlim { u64::MAX } else { per };
        let block = self
            .spill
            .as_ref()
            .map_or(usize::MAX, |s| s.block_elems(base));
        let cap = if first_unlim {
            1024
        } else {
            per.min(MAX_PREALLOC).min(block as u64)
        };
        let mut out = Values::with_capacity(base, cap as usize);
        let fill = self
            .ds
            .fill_value(v)
            .unwrap_or_else(|| nc_dataset::default_fill(base));
        let is_enum = matches!(ty, NcType::User(_));
        let mut count: u64 = 0;
        loop {
            if out.len() >= block {
                if let Some(s) = self.spill.as_mut() {
                    if let Err(e) = s.append(run, &mut out) {
                        return Err(self.spill_error(e));
                    }
                }
            }
            let keep = count < limit;
            if let Some(n) = if is_enum {
                None
            } else {
                self.lx.fast_number()?
            } {
                if keep {
                    push_number(&mut out, &n);
                }
                count += 1;
                match self.lx.fast_sep()? {
                    Some(b',') => continue,
                    Some(_) => break,
                    None => {
                        let (t, p) = self.lx.next()?;
                        return Err(self.expected(
                            &format!(
                                "',' or ';' in the data list of variable '{}'",
                                self.ds.vars[v.0].name
                            ),
                            &t,
                            p,
                        ));
                    }
                }
            }
            let (t, p) = self.lx.next()?;
            match t {
                Tok::Num(n) => {
                    if is_enum {
                        return Err(self.semantic(p, format!("data value {} is not consistent with the expected type {}: give an enum constant name", n.text(), self.ds.type_name(ty))));
                    }
                    if keep {
                        push_number(&mut out, &n);
                    }
                }
                Tok::Name(n) => {
                    if n == "_" {
                        if is_enum && self.ds.vars[v.0].att("_FillValue").is_none() {
                            return Err(self.semantic(p, format!("'_' in the data of enum variable '{}' needs a _FillValue attribute (the default fill is no constant of {})", self.ds.vars[v.0].name, self.ds.type_name(ty))));
                        }
                        if keep {
                            push_fill(&mut out, &fill);
                        }
                    } else if let Some(num) = name_number(&n) {
                        if keep {
                            push_number(&mut out, &num);
                        }
                    } else if is_enum {
                        let val = enum_value(&self.ds, ty, &n).ok_or_else(|| {
                            self.semantic(
                                p,
                                format!(
                                    "'{n}' is not a constant of enum type {}",
                                    self.ds.type_name(ty)
                                ),
                            )
                        })?;
                        if keep {
                            push_number(
                                &mut out,
                                &Number::Int {
                                    bits: val as i64,
                                    ty: base,
                                },
                            );
                        }
                    } else {
                        return Err(self.semantic(
                            p,
                            format!(
                                "undefined name '{n}' in the data of variable '{}'",
                                self.ds.vars[v.0].name
                            ),
                        ));
                    }
                }
                Tok::Punct(b'{') => {
                    return Err(self.semantic(p, format!("expected a primitive value for variable '{}', found {{..}} (braces only group compound, vlen, or non-first UNLIMITED dimension data)", self.ds.vars[v.0].name)));
                }
                Tok::Punct(b';') if count == 0 => {
                    return Err(self.syntax(
                        p,
                        format!("empty data list for variable '{}'", self.ds.vars[v.0].name),
                    ));
                }
                t @ (Tok::Str(_) | Tok::Char(_) | Tok::Opaque(_)) => {
                    if keep {
                        let it = PItem {
                            item: match t {
                                Tok::Str(s) => Item::Str(s),
                                Tok::Char(c) => Item::Char(c),
                                Tok::Opaque(b) => Item::Opaque(b),
                                _ => Item::Fill,
                            },
                            pos: p,
                        };
                        let conv = Conv {
                            ds: &self.ds,
                            max_depth: self.opts.max_depth,
                        };
                        conv.push(NcType::Atomic(base), &it, Some(&fill), &mut out, 0)
                            .map_err(|(p, m)| self.semantic(p, m))?;
                    }
                }
                other => return Err(self.expected("a value in the data list", &other, p)),
            }
            count += 1;
            let (t, p) = self.lx.next()?;
            match t {
                Tok::Punct(b',') => {}
                Tok::Punct(b';') => break,
                other => {
                    return Err(self.expected(
                        &format!(
                            "',' or ';' in the data list of variable '{}'",
                            self.ds.vars[v.0].name
                        ),
                        &other,
                        p,
                    ))
                }
            }
        }
        if rank == 0 && count > 1 {
            return Err(self.semantic(
                self.lx.here(),
                format!(
                    "scalar variable '{}' takes one value, found {count}",
                    self.ds.vars[v.0].name
                ),
            ));
        }
        Ok(out)
    }

    /// Char data: each string is padded with NULs to a multiple of the last dimension's
    /// length (rule `chardata` in NOTES.md), character constants take one byte each.
    fn char_data(&self, v: VarId, items: &[PItem], rank: usize) -> Result<Values, CdlError> {
        let var = &self.ds.vars[v.0];
        let last_len = match var.dims.last() {
            // a one-dimensional char variable takes strings concatenated, unpadded
            Some(d) if rank >= 2 => self.ds.dims[d.0].len.max(1),
            _ => 1,
        };
        let fill_byte = match self.ds.fill_value(v) {
            Some(Values::Char(c)) => c.first().copied().unwrap_or(0),
            _ => 0,
        };
        let first_unlim = var
            .dims
            .first()
            .is_some_and(|d| self.ds.dims[d.0].unlimited);
        let total: Option<u64> = if first_unlim {
            None
        } else {
            var.dims
                .iter()
                .try_fold(1u64, |a, d| a.checked_mul(self.ds.dims[d.0].len))
        };
        let mut out: Vec<u8> = Vec::new();
        for it in items {
            match &it.item {
                Item::Str(s) => {
                    out.extend_from_slice(s);
                    let l = last_len;
                    if l > 1 {
                        let rem = s.len() as u64 % l;
                        if rem != 0 || s.is_empty() {
                            let mut pad = if s.is_empty() { l } else { l - rem };
                            if let Some(t) = total {
                                pad = pad.min(t.saturating_sub(out.len() as u64));
                            }
                            if out.len() as u64 + pad > MAX_LAYOUT {
                                return Err(self.semantic(
                                    it.pos,
                                    format!(
                                        "variable '{}': char data padded past {MAX_LAYOUT} bytes",
                                        var.name
                                    ),
                                ));
                            }
                            out.resize(out.len() + pad as usize, 0);
                        }
                    }
                }
                Item::Char(c) => out.push(*c),
                Item::Num(n) => out.push(n.as_i32() as u8),
                Item::Fill => out.push(fill_byte),
                other => {
                    return Err(self.semantic(
                        it.pos,
                        format!(
                            "variable '{}': expected a string or character, found {}",
                            var.name,
                            item_kind(other)
                        ),
                    ))
                }
            }
            if let Some(t) = total {
                if out.len() as u64 >= t {
                    out.truncate(t as usize);
                    break;
                }
            }
        }
        Ok(Values::Char(out))
    }

    /// After all data: size the unlimited dimensions used inside braces and lay those
    /// variables out row-major, filling gaps with the fill value.
    pub(crate) fn finish(&mut self) -> Result<(), CdlError> {
        // ncgen rejects enum data that would need the default fill (no enum constant)
        for (v, pos) in std::mem::take(&mut self.enum_checks) {
            let have = self.ds.vars[v.0].given_len().unwrap_or(0);
            let want = self.ds.num_elements(v).unwrap_or(u64::MAX);
            if have < want {
                return Err(self.semantic(
                    pos,
                    format!(
                        "enum variable '{}' gets {have} of {want} values; the rest would be fill, which needs a _FillValue attribute",
                        self.ds.vars[v.0].name
                    ),
                ));
            }
        }
        let ragged = std::mem::take(&mut self.ragged);
        for (v, items) in &ragged {
            self.measure(*v, items, 0, 0)?;
        }
        for (v, items) in &ragged {
            let ty = self.ds.vars[v.0].ty;
            let fill = self
                .ds
                .fill_value(*v)
                .unwrap_or_else(|| default_one(&self.ds, ty, 0));
            let mut out = empty_values(&self.ds, ty);
            self.flatten(*v, items, 0, &fill, &mut out, 0)?;
            self.ds.vars[v.0].data = Some(out);
        }
        Ok(())
    }

    /// The next unlimited dimension index after `k` (or the rank) and the element count of
    /// the fixed dimensions strictly between.
    fn next_unlim(&self, v: VarId, k: usize) -> (usize, u64) {
        let dims = &self.ds.vars[v.0].dims;
        let mut m = k + 1;
        let mut block = 1u64;
        while m < dims.len() && !self.ds.dims[dims[m].0].unlimited {
            block = block.saturating_mul(self.ds.dims[dims[m].0].len);
            m += 1;
        }
        (m, block)
    }

    fn measure(
        &mut self,
        v: VarId,
        items: &[PItem],
        k: usize,
        depth: usize,
    ) -> Result<(), CdlError> {
        if depth > self.opts.max_depth {
            return Err(self.semantic(
                items.first().map_or(Pos::default(), |i| i.pos),
                "data nested too deeply",
            ));
        }
        let dims = self.ds.vars[v.0].dims.clone();
        let rank = dims.len();
        let (m, block) = self.next_unlim(v, k);
        let d = dims[k];
        let is_char = self.ds.vars[v.0].ty == NcType::Atomic(AtomicType::Char);
        if self.ds.dims[d.0].unlimited {
            // char data at the innermost level counts characters, not strings
            let units = if is_char && m == rank {
                char_count(items)
            } else {
                items.len() as u64
            };
            let len = if block == 0 { 0 } else { units.div_ceil(block) };
            let dim = &mut self.ds.dims[d.0];
            dim.len = dim.len.max(len);
        }
        let slots = self.ds.dims[d.0].len.saturating_mul(block);
        for it in items
            .iter()
            .take(usize::try_from(slots).unwrap_or(usize::MAX))
        {
            match (&it.item, m < rank) {
                (Item::Group(inner), true) => self.measure(v, inner, m, depth + 1)?,
                (_, true) if !matches!(it.item, Item::Fill) => {
                    return Err(self.semantic(it.pos, format!("variable '{}': UNLIMITED dimension (other than first) must be enclosed in {{}}", self.ds.vars[v.0].name)));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn flatten(
        &self,
        v: VarId,
        items: &[PItem],
        k: usize,
        fill: &Values,
        out: &mut Values,
        depth: usize,
    ) -> Result<(), CdlError> {
        let dims = &self.ds.vars[v.0].dims;
        let rank = dims.len();
        let ty = self.ds.vars[v.0].ty;
        let (m, block) = self.next_unlim(v, k);
        let slots = self.ds.dims[dims[k].0].len.saturating_mul(block);
        let sub: u64 = dims[m..]
            .iter()
            .fold(1u64, |a, d| a.saturating_mul(self.ds.dims[d.0].len));
        if slots.saturating_mul(sub) > MAX_LAYOUT {
            return Err(self.semantic(
                Pos::default(),
                format!(
                    "variable '{}' is too large to lay out in memory",
                    self.ds.vars[v.0].name
                ),
            ));
        }
        let conv = Conv {
            ds: &self.ds,
            max_depth: self.opts.max_depth,
        };
        if ty == NcType::Atomic(AtomicType::Char) && m == rank {
            let mut bytes = Values::Char(Vec::new());
            conv.push_chars(items, &mut bytes, None)
                .map_err(|(p, msg)| self.semantic(p, msg))?;
            if let Values::Char(mut b) = bytes {
                b.resize(slots as usize, 0);
                out.extend_from(&Values::Char(b));
            }
            return Ok(());
        }
        for i in 0..slots as usize {
            match items.get(i) {
                Some(it) if m < rank => match &it.item {
                    Item::Group(inner) => {
                        if depth > self.opts.max_depth {
                            return Err(self.semantic(it.pos, "data nested too deeply"));
                        }
                        self.flatten(v, inner, m, fill, out, depth + 1)?
                    }
                    _ => {
                        for _ in 0..sub {
                            out.extend_from(fill);
                        }
                    }
                },
                Some(it) => {
                    if let (NcType::Atomic(_), Item::Group(_)) = (ty, &it.item) {
                        if !is_user_nonenum(&self.ds, ty) {
                            return Err(
                                self.semantic(it.pos, "expected a primitive value, found {..}")
                            );
                        }
                    }
                    if ty == NcType::Atomic(AtomicType::Char) {
                        conv.push_chars(std::slice::from_ref(it), out, None)
                            .map_err(|(p, msg)| self.semantic(p, msg))?;
                    } else {
                        conv.push(ty, it, Some(fill), out, 0)
                            .map_err(|(p, msg)| self.semantic(p, msg))?;
                    }
                }
                None => {
                    for _ in 0..sub {
                        out.extend_from(fill);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Characters a char data list holds (strings count their length).
fn char_count(items: &[PItem]) -> u64 {
    items
        .iter()
        .map(|it| match &it.item {
            Item::Str(s) => s.len() as u64,
            _ => 1,
        })
        .sum()
}

fn is_user_nonenum(ds: &nc_dataset::Dataset, t: NcType) -> bool {
    match t {
        NcType::Atomic(_) => false,
        NcType::User(id) => !matches!(ds.types[id.0].kind, UserTypeKind::Enum { .. }),
    }
}
