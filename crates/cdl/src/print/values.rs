//! Formatting of single values: names, quoted strings, numbers in data style (no suffixes) and
//! attribute style (typed suffixes), user-defined types.

use nc_dataset::{AtomicType, Dataset, NcType, UserTypeKind, Values};

use super::fmtnum::{push_g, push_i64, push_u64};

/// Append a CDL name as ncdump escapes it: a backslash before a leading digit and before
/// characters that are special in CDL (netCDF-C's `escaped_name`: not `%` nor `/`).
pub(crate) fn push_name(out: &mut Vec<u8>, name: &str) {
    for (i, &b) in name.as_bytes().iter().enumerate() {
        let special = matches!(
            b,
            b' ' | b'!'
                | b'"'
                | b'#'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b','
                | b':'
                | b';'
                | b'<'
                | b'='
                | b'>'
                | b'?'
                | b'['
                | b']'
                | b'\\'
                | b'^'
                | b'`'
                | b'{'
                | b'|'
                | b'}'
                | b'~'
        ) || (i == 0 && b.is_ascii_digit());
        if special {
            out.push(b'\\');
        }
        out.push(b);
    }
}

/// Append one byte of a quoted string with ncdump's escapes (bytes from 0x80 up are copied).
#[inline]
pub(crate) fn push_escaped_byte(out: &mut Vec<u8>, b: u8) {
    match b {
        b'\x08' => out.extend_from_slice(b"\\b"),
        b'\x0c' => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        b'\x0b' => out.extend_from_slice(b"\\v"),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\'' => out.extend_from_slice(b"\\'"),
        b'"' => out.extend_from_slice(b"\\\""),
        0..=0x1f | 0x7f => push_octal(out, b),
        _ => out.push(b),
    }
}

fn push_octal(out: &mut Vec<u8>, b: u8) {
    out.push(b'\\');
    out.push(b'0' + (b >> 6));
    out.push(b'0' + ((b >> 3) & 7));
    out.push(b'0' + (b & 7));
}

/// Append `bytes` as the quoted text of a char variable's row: as [`push_quoted`], but bytes
/// from 0x80 up are octal escapes too, as ncdump writes char data (not attributes or strings).
pub(crate) fn push_char_data(out: &mut Vec<u8>, bytes: &[u8], split: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        if b >= 0x80 {
            push_octal(out, b);
        } else {
            push_escaped_byte(out, b);
        }
        if b == b'\n' {
            out.extend_from_slice(b"\",\n");
            out.extend_from_slice(split);
            out.push(b'"');
        }
    }
    out.push(b'"');
}

/// Append `bytes` as a quoted string; when `split` is given, each escaped newline is followed
/// by closing the string and reopening it on a new line after `split` (`",\n<split>"`).
pub(crate) fn push_quoted(out: &mut Vec<u8>, bytes: &[u8], split: Option<&[u8]>) {
    out.push(b'"');
    for &b in bytes {
        push_escaped_byte(out, b);
        if b == b'\n' {
            if let Some(s) = split {
                out.extend_from_slice(b"\",\n");
                out.extend_from_slice(s);
                out.push(b'"');
            }
        }
    }
    out.push(b'"');
}

/// The base type of vlen type `ty` (`ty` itself when it is no vlen).
pub(crate) fn vlen_base(ds: &Dataset, ty: NcType) -> NcType {
    match ty {
        NcType::User(t) => match &ds.user_type(t).kind {
            UserTypeKind::Vlen { base } => *base,
            _ => ty,
        },
        NcType::Atomic(_) => ty,
    }
}

/// The name of the member of enum type `ty` whose value is `x` (`None` when `ty` is no enum
/// or has no such member).
pub(crate) fn enum_member(ds: &Dataset, ty: NcType, x: i128) -> Option<&str> {
    let NcType::User(t) = ty else {
        return None;
    };
    match &ds.user_type(t).kind {
        UserTypeKind::Enum { members, .. } => members
            .iter()
            .find(|m| m.value == x)
            .map(|m| m.name.as_str()),
        _ => None,
    }
}

/// The field values of a compound value of type `ty`, each with its definition (`None` past
/// the type's fields: a reader bug, shown rather than dropped).
pub(crate) fn with_definitions<'v, 'd>(
    ds: &'d Dataset,
    ty: NcType,
    fields: &'v [Values],
) -> impl Iterator<Item = (&'v Values, Option<&'d nc_dataset::CompoundField>)> {
    let defs = ds.compound_fields(ty);
    fields
        .iter()
        .enumerate()
        .map(move |(k, f)| (f, defs.and_then(|d| d.get(k))))
}

/// Per-variable (or per-attribute) value formatter.
pub(crate) struct ValueFmt<'a> {
    pub ds: &'a Dataset,
    pub float_digits: usize,
    pub double_digits: usize,
}

impl ValueFmt<'_> {
    /// Data style: numbers without suffixes, `NaNf`/`Infinityf` for floats, strings quoted,
    /// `NIL` for null strings, user types in braces. `ty` is the type of `vals`' elements.
    pub fn data(&self, out: &mut Vec<u8>, ty: NcType, vals: &Values, i: usize) {
        match vals {
            Values::Float(v) => push_float(out, f64::from(v[i]), self.float_digits, true, false),
            Values::Double(v) => push_float(out, v[i], self.double_digits, false, false),
            Values::Char(v) => push_quoted(out, &v[i..=i], None),
            Values::String(v) => match &v[i] {
                Some(s) => push_quoted(out, s.as_bytes(), None),
                None => out.extend_from_slice(b"NIL"),
            },
            Values::Opaque { size, bytes } => push_opaque(out, &bytes[i * size..(i + 1) * size]),
            Values::Vlen(v) => {
                out.push(b'{');
                self.list(out, vlen_base(self.ds, ty), &v[i]);
                out.push(b'}');
            }
            Values::Compound(v) => self.compound(out, ty, &v[i]),
            // the integer types
            _ => self.int_or_enum(out, ty, vals.get_i128(i).unwrap_or_default()),
        }
    }

    fn int_or_enum(&self, out: &mut Vec<u8>, ty: NcType, x: i128) {
        match enum_member(self.ds, ty, x) {
            Some(name) => push_name(out, name),
            None => push_i128(out, x),
        }
    }

    /// Elements of `vals` in data style, joined by ", ".
    fn list(&self, out: &mut Vec<u8>, ty: NcType, vals: &Values) {
        for j in 0..vals.len() {
            if j > 0 {
                out.extend_from_slice(b", ");
            }
            self.data(out, ty, vals, j);
        }
    }

    fn compound(&self, out: &mut Vec<u8>, ty: NcType, fields: &[Values]) {
        out.push(b'{');
        for (k, (f, def)) in with_definitions(self.ds, ty, fields).enumerate() {
            if k > 0 {
                out.extend_from_slice(b", ");
            }
            let fty = def.map_or_else(
                || NcType::Atomic(f.atomic_type().unwrap_or(AtomicType::Int)),
                |d| d.ty,
            );
            let is_array = def.is_some_and(|d| !d.dims.is_empty());
            if let Values::Char(bytes) = f {
                // char fields print as one string, in braces when the field is an array
                let n = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                if is_array {
                    out.push(b'{');
                }
                push_quoted(out, &bytes[..n], None);
                if is_array {
                    out.push(b'}');
                }
            } else if is_array {
                out.push(b'{');
                self.list(out, fty, f);
                out.push(b'}');
            } else {
                self.list(out, fty, f);
            }
        }
        out.push(b'}');
    }

    /// Attribute style for numbers: `1b`, `2s`, `3`, `1.5f`, `1.`, `4UB`, `5US`, `6U`, `7LL`,
    /// `8ULL`; other types as in data.
    pub fn att(&self, out: &mut Vec<u8>, ty: NcType, vals: &Values, i: usize) {
        match (vals, ty) {
            (Values::Byte(v), NcType::Atomic(_)) => {
                push_i64(out, i64::from(v[i]));
                out.push(b'b');
            }
            (Values::Short(v), NcType::Atomic(_)) => {
                push_i64(out, i64::from(v[i]));
                out.push(b's');
            }
            (Values::Int(v), NcType::Atomic(_)) => push_i64(out, i64::from(v[i])),
            (Values::UByte(v), NcType::Atomic(_)) => {
                push_u64(out, u64::from(v[i]));
                out.extend_from_slice(b"UB");
            }
            (Values::UShort(v), NcType::Atomic(_)) => {
                push_u64(out, u64::from(v[i]));
                out.extend_from_slice(b"US");
            }
            (Values::UInt(v), NcType::Atomic(_)) => {
                push_u64(out, u64::from(v[i]));
                out.push(b'U');
            }
            (Values::Int64(v), NcType::Atomic(_)) => {
                push_i64(out, v[i]);
                out.extend_from_slice(b"LL");
            }
            (Values::UInt64(v), NcType::Atomic(_)) => {
                push_u64(out, v[i]);
                out.extend_from_slice(b"ULL");
            }
            (Values::Float(v), NcType::Atomic(_)) => {
                push_float(out, f64::from(v[i]), self.float_digits, true, true);
            }
            (Values::Double(v), NcType::Atomic(_)) => {
                push_float(out, v[i], self.double_digits, false, true);
            }
            _ => self.data(out, ty, vals, i),
        }
    }
}

fn push_i128(out: &mut Vec<u8>, x: i128) {
    if let Ok(v) = i64::try_from(x) {
        push_i64(out, v);
    } else if let Ok(v) = u64::try_from(x) {
        push_u64(out, v);
    } else {
        out.extend_from_slice(x.to_string().as_bytes());
    }
}

/// `0X` and the bytes in upper-case hex.
pub(crate) fn push_opaque(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.extend_from_slice(b"0X");
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

/// A float or double: `NaN`, `Infinity`, `-Infinity` (with an `f` for floats in both data and
/// attributes), else `%.{digits}g`; attributes use `%#.{digits}g` without trailing zeros and an
/// `f` suffix for floats.
#[inline]
pub(crate) fn push_float(out: &mut Vec<u8>, v: f64, digits: usize, is_float: bool, att: bool) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 {
            b"Infinity".as_slice()
        } else {
            b"-Infinity".as_slice()
        });
    } else {
        push_g(out, v, digits, att);
        if is_float && att {
            out.push(b'f');
        }
        return;
    }
    if is_float {
        out.push(b'f');
    }
}
