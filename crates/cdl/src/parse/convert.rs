//! Constants (rule `const`) and their conversion to typed values, as ncgen converts them:
//! C casts for numbers, enum constants by name, char/string rules, opaque hex bytes.

use nc_dataset::{default_fill, AtomicType, Dataset, NcString, NcType, UserTypeKind, Values};

use super::lexer::Pos;
use super::literal::{cvt_i64, Number};

/// One datalist element (rule `dataitem`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// numeric literal
    Num(Number),
    /// "string"
    Str(Vec<u8>),
    /// 'c'
    Char(u8),
    /// 0x...
    Opaque(Vec<u8>),
    /// a name: an enum constant
    Name(String),
    /// `_`
    Fill,
    /// `NIL`
    Nil,
    /// `{ ... }`
    Group(Vec<PItem>),
}

/// An item and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PItem {
    /// the item
    pub item: Item,
    /// its position
    pub pos: Pos,
}

/// Outcome of a conversion: a message for the caller to position.
pub(crate) type ConvResult<T> = Result<T, String>;

/// An empty vector of the right variant for values of `ty`.
pub(crate) fn empty_values(ds: &Dataset, ty: NcType) -> Values {
    match ty {
        NcType::Atomic(a) => Values::empty(a),
        NcType::User(id) => match &ds.types[id.0].kind {
            UserTypeKind::Enum { base, .. } => Values::empty(*base),
            UserTypeKind::Opaque { size } => Values::Opaque {
                size: *size,
                bytes: Vec::new(),
            },
            UserTypeKind::Vlen { .. } => Values::Vlen(Vec::new()),
            UserTypeKind::Compound { .. } => Values::Compound(Vec::new()),
        },
    }
}

/// One default (fill) element of `ty`: the netCDF default fill for atomic and enum types,
/// zero bytes for opaque, an empty sequence for vlen, per-field defaults for compound.
pub(crate) fn default_one(ds: &Dataset, ty: NcType, depth: usize) -> Values {
    match ty {
        NcType::Atomic(a) => default_fill(a),
        NcType::User(id) => match &ds.types[id.0].kind {
            UserTypeKind::Enum { base, .. } => default_fill(*base),
            UserTypeKind::Opaque { size } => Values::Opaque {
                size: *size,
                bytes: vec![0; *size],
            },
            UserTypeKind::Vlen { base } => Values::Vlen(vec![empty_values(ds, *base)]),
            UserTypeKind::Compound { fields, .. } => {
                if depth > 32 {
                    return Values::Compound(vec![Vec::new()]);
                }
                let mut rec = Vec::with_capacity(fields.len());
                for f in fields {
                    let n: usize = f.dims.iter().product::<usize>().max(1);
                    let one = default_one(ds, f.ty, depth + 1);
                    rec.push(Values::repeat_first(&one, n).unwrap_or(one));
                }
                Values::Compound(vec![rec])
            }
        },
    }
}

/// A number from a non-numeric constant, for numeric targets.
fn item_number(item: &Item) -> ConvResult<Number> {
    Ok(match item {
        Item::Num(n) => *n,
        Item::Char(c) => Number::Int {
            bits: i64::from(*c as i8),
            ty: AtomicType::Byte,
        },
        Item::Str(s) => {
            // ncgen converts a string to a number with strtod-like rules; text that is
            // no number gives 0
            numeric_prefix(s)
        }
        Item::Nil => return Err("NIL is only allowed for string values".into()),
        Item::Name(n) => return Err(format!("undefined enum constant or name '{n}'")),
        Item::Group(_) => return Err("expected a primitive value, found {..}".into()),
        Item::Opaque(_) | Item::Fill => {
            return Err("internal: opaque/fill handled by caller".into())
        }
    })
}

/// The number a string starts with, as C's `strtod` reads it ("1900-01-01" is 1900; no
/// number at all is 0).
pub(crate) fn numeric_prefix(s: &[u8]) -> Number {
    let t: &[u8] = {
        let k = s.iter().take_while(|c| c.is_ascii_whitespace()).count();
        &s[k..]
    };
    let mut i = 0;
    if matches!(t.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let ds = i;
    while i < t.len() && t[i].is_ascii_digit() {
        i += 1;
    }
    let int_end = i;
    let mut is_float = false;
    if i < t.len() && t[i] == b'.' {
        let mut j = i + 1;
        while j < t.len() && t[j].is_ascii_digit() {
            j += 1;
        }
        if j > i + 1 || int_end > ds {
            is_float = true;
            i = j;
        }
    }
    if int_end == ds && !is_float {
        return Number::Int {
            bits: 0,
            ty: AtomicType::Int,
        };
    }
    if i < t.len() && (t[i] == b'e' || t[i] == b'E') {
        let mut j = i + 1;
        if j < t.len() && matches!(t[j], b'-' | b'+') {
            j += 1;
        }
        let k = j;
        while j < t.len() && t[j].is_ascii_digit() {
            j += 1;
        }
        if j > k {
            is_float = true;
            i = j;
        }
    }
    let text = std::str::from_utf8(&t[..i]).unwrap_or("0");
    if is_float {
        Number::double(text.parse::<f64>().unwrap_or(0.0))
    } else {
        let v = text.parse::<i64>().unwrap_or(0);
        Number::Int {
            bits: v,
            ty: AtomicType::Int64,
        }
    }
}

/// Push one number converted to the element type of `out` (an atomic numeric variant).
#[inline]
pub(crate) fn push_number(out: &mut Values, n: &Number) {
    match out {
        Values::Byte(v) => v.push(n.as_i32() as i8),
        Values::Short(v) => v.push(n.as_i32() as i16),
        Values::Int(v) => v.push(n.as_i32()),
        Values::Float(v) => v.push(n.as_f64() as f32),
        Values::Double(v) => v.push(n.as_f64()),
        Values::UByte(v) => v.push(n.as_i32() as u8),
        Values::UShort(v) => v.push(n.as_i32() as u16),
        Values::UInt(v) => v.push(match n {
            Number::Int { bits, .. } => *bits as u32,
            Number::Real { v, .. } => cvt_i64(*v) as u32,
        }),
        Values::Int64(v) => v.push(n.as_i64()),
        Values::UInt64(v) => v.push(n.as_u64()),
        Values::Char(v) => v.push(n.as_i32() as u8),
        Values::String(v) => v.push(Some(n.text().into())),
        _ => {}
    }
}

/// Opaque hex bytes read as a little-endian number of the target's size (what ncgen's
/// memcpy of the bytes amounts to on x86).
fn push_opaque_as_number(out: &mut Values, bytes: &[u8]) {
    let mut b = [0u8; 8];
    for (d, s) in b.iter_mut().zip(bytes) {
        *d = *s;
    }
    match out {
        Values::Byte(v) => v.push(b[0] as i8),
        Values::Char(v) | Values::UByte(v) => v.push(b[0]),
        Values::Short(v) => v.push(i16::from_le_bytes([b[0], b[1]])),
        Values::UShort(v) => v.push(u16::from_le_bytes([b[0], b[1]])),
        Values::Int(v) => v.push(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Values::UInt(v) => v.push(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Values::Float(v) => v.push(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Values::Int64(v) => v.push(i64::from_le_bytes(b)),
        Values::UInt64(v) => v.push(u64::from_le_bytes(b)),
        Values::Double(v) => v.push(f64::from_le_bytes(b)),
        Values::String(v) => v.push(Some(
            bytes
                .iter()
                .map(|x| format!("{x:02X}"))
                .collect::<String>()
                .into(),
        )),
        _ => {}
    }
}

/// Push element 0 of `fill` onto `out` (same variant), or the type default.
pub(crate) fn push_fill(out: &mut Values, fill: &Values) {
    if !fill.is_empty() && out.extend_from(&fill.slice(0, 1)) {
        return;
    }
    if let Some(a) = out.atomic_type() {
        out.extend_from(&default_fill(a));
    }
}

/// Look up an enum constant `name` (or `Type.name`) in enum type `t`.
pub(crate) fn enum_value(ds: &Dataset, t: NcType, name: &str) -> Option<i128> {
    let NcType::User(id) = t else { return None };
    let ut = &ds.types[id.0];
    let UserTypeKind::Enum { members, .. } = &ut.kind else {
        return None;
    };
    if let Some(m) = members.iter().find(|m| m.name == name) {
        return Some(m.value);
    }
    let prefix = format!("{}.", ut.name);
    let rest = name.strip_prefix(&prefix)?;
    members.iter().find(|m| m.name == rest).map(|m| m.value)
}

/// Converter of items to values of one type, with the dataset for user types.
pub(crate) struct Conv<'a> {
    /// the dataset (types)
    pub ds: &'a Dataset,
    /// deepest nesting accepted
    pub max_depth: usize,
}

impl Conv<'_> {
    /// Append the value of `it` as one element of type `ty` to `out` (made by [`empty_values`]).
    /// `fill` is the value `_` stands for.
    pub(crate) fn push(
        &self,
        ty: NcType,
        it: &PItem,
        fill: Option<&Values>,
        out: &mut Values,
        depth: usize,
    ) -> Result<(), (Pos, String)> {
        if depth > self.max_depth {
            return Err((
                it.pos,
                format!("values nested deeper than {}", self.max_depth),
            ));
        }
        let at = |m: String| (it.pos, m);
        if let Item::Fill = it.item {
            match fill {
                Some(f) if !f.is_empty() => {
                    if !out.extend_from(&f.slice(0, 1)) {
                        let d = default_one(self.ds, ty, 0);
                        out.extend_from(&d);
                    }
                }
                _ => {
                    let d = default_one(self.ds, ty, 0);
                    out.extend_from(&d);
                }
            }
            return Ok(());
        }
        match ty {
            NcType::Atomic(AtomicType::Char) => {
                let Values::Char(v) = out else {
                    return Err(at("internal: char target".into()));
                };
                match &it.item {
                    Item::Char(c) => v.push(*c),
                    Item::Str(s) => v.push(s.first().copied().unwrap_or(0)),
                    Item::Num(n) => v.push(n.as_i32() as u8),
                    other => {
                        return Err(at(format!("cannot convert {} to char", item_kind(other))))
                    }
                }
            }
            NcType::Atomic(AtomicType::String) => {
                let Values::String(v) = out else {
                    return Err(at("internal: string target".into()));
                };
                match &it.item {
                    Item::Str(s) => v.push(Some(NcString::from(s.as_slice()))),
                    Item::Nil => v.push(None),
                    Item::Char(c) => v.push(Some(format!("{}", *c as i8).into())),
                    Item::Num(n) => v.push(Some(n.text().into())),
                    Item::Opaque(b) => push_opaque_as_number(out, b),
                    other => {
                        return Err(at(format!("cannot convert {} to string", item_kind(other))))
                    }
                }
            }
            NcType::Atomic(_) => match &it.item {
                Item::Opaque(b) => push_opaque_as_number(out, b),
                item => {
                    let n = item_number(item).map_err(at)?;
                    push_number(out, &n);
                }
            },
            NcType::User(id) => match &self.ds.types[id.0].kind {
                UserTypeKind::Enum { base, .. } => match &it.item {
                    Item::Name(n) => {
                        let v = enum_value(self.ds, ty, n).ok_or_else(|| {
                            at(format!(
                                "'{n}' is not a constant of enum type {}",
                                self.ds.types[id.0].name
                            ))
                        })?;
                        push_number(
                            out,
                            &Number::Int {
                                bits: v as i64,
                                ty: *base,
                            },
                        );
                    }
                    other => {
                        return Err(at(format!(
                            "data value {} is not consistent with the expected type {}: give an enum constant name",
                            item_kind(other),
                            self.ds.types[id.0].name
                        )))
                    }
                },
                UserTypeKind::Opaque { size } => {
                    let Values::Opaque { bytes, .. } = out else {
                        return Err(at("internal: opaque target".into()));
                    };
                    match &it.item {
                        Item::Opaque(b) => {
                            let mut b = b.clone();
                            b.resize(*size, 0);
                            bytes.extend_from_slice(&b);
                        }
                        Item::Str(s) => {
                            // a string of hex digits is accepted as opaque data
                            let mut b: Vec<u8> = s
                                .chunks(2)
                                .map(|p| {
                                    let h = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                                    h(p[0]) * 16 + p.get(1).map_or(0, |&c| h(c))
                                })
                                .collect();
                            b.resize(*size, 0);
                            bytes.extend_from_slice(&b);
                        }
                        other => {
                            return Err(at(format!(
                                "expected an opaque constant 0x..., found {}",
                                item_kind(other)
                            )))
                        }
                    }
                }
                UserTypeKind::Vlen { base } => {
                    let Values::Vlen(v) = out else {
                        return Err(at("internal: vlen target".into()));
                    };
                    let mut seq = empty_values(self.ds, *base);
                    match &it.item {
                        Item::Group(items) => {
                            if *base == NcType::Atomic(AtomicType::Char) {
                                self.push_chars(items, &mut seq, None)?;
                            } else {
                                for sub in items {
                                    self.push(*base, sub, None, &mut seq, depth + 1)?;
                                }
                            }
                        }
                        Item::Str(s) if *base == NcType::Atomic(AtomicType::Char) => {
                            seq.extend_from(&Values::Char(s.clone()));
                        }
                        other => {
                            // a lone value is a one-element sequence
                            let _ = other;
                            self.push(*base, it, None, &mut seq, depth + 1)?;
                        }
                    }
                    v.push(seq);
                }
                UserTypeKind::Compound { fields, .. } => {
                    let Item::Group(items) = &it.item else {
                        return Err(at(format!(
                            "expected {{...}} for a value of compound type {}, found {}",
                            self.ds.types[id.0].name,
                            item_kind(&it.item)
                        )));
                    };
                    if items.len() > fields.len() {
                        return Err((
                            items[fields.len()].pos,
                            format!(
                                "datalist longer than the number of compound fields ({}) of {}",
                                fields.len(),
                                self.ds.types[id.0].name
                            ),
                        ));
                    }
                    let mut rec = Vec::with_capacity(fields.len());
                    for (fi, f) in fields.iter().enumerate() {
                        let n: usize = f.dims.iter().product::<usize>().max(1);
                        let mut fv = empty_values(self.ds, f.ty);
                        if let Some(sub) = items.get(fi) {
                            let arr = !f.dims.is_empty();
                            match (&sub.item, arr) {
                                (Item::Group(inner), true) => {
                                    if f.ty == NcType::Atomic(AtomicType::Char) {
                                        self.push_chars(inner, &mut fv, None)?;
                                    } else {
                                        for x in inner {
                                            if fv.len() < n {
                                                self.push(f.ty, x, None, &mut fv, depth + 1)?;
                                            }
                                        }
                                    }
                                }
                                (_, true) => {
                                    return Err((
                                        sub.pos,
                                        format!(
                                            "dimensioned field '{}' must be enclosed in {{...}}",
                                            f.name
                                        ),
                                    ))
                                }
                                _ => {
                                    if f.ty == NcType::Atomic(AtomicType::Char) {
                                        self.push_chars(std::slice::from_ref(sub), &mut fv, None)?;
                                    } else {
                                        self.push(f.ty, sub, None, &mut fv, depth + 1)?;
                                    }
                                }
                            }
                        }
                        // pad or cut to the field's array length
                        if fv.len() > n {
                            fv = fv.slice(0, n);
                        }
                        if fv.len() < n {
                            let d = default_one(self.ds, f.ty, 0);
                            if f.ty == NcType::Atomic(AtomicType::Char) {
                                if let Values::Char(c) = &mut fv {
                                    c.resize(n, 0);
                                }
                            } else if let Some(rep) = Values::repeat_first(&d, n - fv.len()) {
                                fv.extend_from(&rep);
                            }
                        }
                        rec.push(fv);
                    }
                    if let Values::Compound(v) = out {
                        v.push(rec);
                    }
                }
            },
        }
        Ok(())
    }

    /// Char items as bytes (strings whole, char constants one byte, `_` the fill byte).
    pub(crate) fn push_chars(
        &self,
        items: &[PItem],
        out: &mut Values,
        fill: Option<u8>,
    ) -> Result<(), (Pos, String)> {
        let Values::Char(v) = out else {
            return Err((Pos::default(), "internal: char target".into()));
        };
        for it in items {
            match &it.item {
                Item::Str(s) => v.extend_from_slice(s),
                Item::Char(c) => v.push(*c),
                Item::Fill => v.push(fill.unwrap_or(0)),
                other => {
                    return Err((
                        it.pos,
                        format!(
                            "encountered non-string and non-char constant ({}) in char data",
                            item_kind(other)
                        ),
                    ))
                }
            }
        }
        Ok(())
    }
}

/// A word for an item in messages.
pub(crate) fn item_kind(it: &Item) -> String {
    match it {
        Item::Num(n) => format!("number {}", n.text()),
        Item::Str(s) => format!("string \"{}\"", String::from_utf8_lossy(s)),
        Item::Char(c) => format!("character '{}'", char::from(*c).escape_default()),
        Item::Opaque(_) => "opaque constant".into(),
        Item::Name(n) => format!("name '{n}'"),
        Item::Fill => "'_'".into(),
        Item::Nil => "NIL".into(),
        Item::Group(_) => "{..}".into(),
    }
}

/// The order ncgen's attribute type inference uses for integer types: the signed twin's code.
fn signed_rank(t: AtomicType) -> u32 {
    match t {
        AtomicType::UByte | AtomicType::Char => AtomicType::Byte.code(),
        AtomicType::UShort => AtomicType::Short.code(),
        AtomicType::UInt => AtomicType::Int.code(),
        AtomicType::UInt64 => AtomicType::Int64.code(),
        other => other.code(),
    }
}

/// The type of an untyped attribute (rule `attdecl`, "type inference" in NOTES.md).
///
/// # Errors
/// A message when the list mixes strings and non-strings or holds `_`, names or opaques.
pub(crate) fn infer_attribute_type(items: &[PItem]) -> Result<AtomicType, (Pos, String)> {
    let strs = items
        .iter()
        .filter(|i| matches!(i.item, Item::Str(_)))
        .count();
    if let Some(f) = items.iter().find(|i| matches!(i.item, Item::Fill)) {
        return Err((
            f.pos,
            "attribute data may not contain fill values (i.e. _ )".into(),
        ));
    }
    if strs > 0 {
        if strs == items.len() {
            return Ok(AtomicType::Char);
        }
        return Err((
            items[0].pos,
            "non-simple list of values for untyped attribute: strings mixed with other constants"
                .into(),
        ));
    }
    let mut any_double = false;
    let mut any_float = false;
    let mut int_ty: Option<AtomicType> = None;
    for it in items {
        let t = match &it.item {
            Item::Num(Number::Real { ty, .. }) => {
                if *ty == AtomicType::Float {
                    any_float = true;
                } else {
                    any_double = true;
                }
                continue;
            }
            Item::Num(Number::Int { ty, .. }) => *ty,
            Item::Char(_) => AtomicType::Byte,
            other => {
                return Err((
                    it.pos,
                    format!(
                        "non-simple list of values for untyped attribute: {} needs a type; write e.g. 'int v:att = ...'",
                        item_kind(other)
                    ),
                ))
            }
        };
        int_ty = Some(match int_ty {
            None => t,
            Some(prior) => {
                if signed_rank(prior) <= signed_rank(t) {
                    t
                } else {
                    prior
                }
            }
        });
    }
    Ok(if any_double {
        AtomicType::Double
    } else if any_float {
        AtomicType::Float
    } else {
        int_ty.unwrap_or(AtomicType::Int)
    })
}
