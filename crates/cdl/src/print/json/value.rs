//! Single JSON values: strings and byte strings, numbers (64-bit integers exact, floats in
//! their shortest round-trip form, NaN and infinities as strings), and values of user-defined
//! types. Layout rules are in `docs/json.md`.

use std::io::Write;

use crate::print::values::{enum_member, vlen_base, with_definitions};
use nc_dataset::{Dataset, NcType, Values};
use serde_json::ser::{CompactFormatter, Formatter};

/// Result of writing into a `Vec<u8>` through serde_json's formatter (which is `io::Write`
/// based; a `Vec` never fails, the error is passed on all the same).
pub(super) type W = std::io::Result<()>;

/// A JSON string holding `s` (serde_json's escaping: `"`, `\` and control characters).
pub(super) fn push_str(out: &mut Vec<u8>, s: &str) -> W {
    serde_json::to_writer(&mut *out, s).map_err(std::io::Error::from)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex digits, two per byte.
pub(super) fn push_hex_digits(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(2 * bytes.len());
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

/// Text from a file (char data, string values): a JSON string when the bytes are UTF-8,
/// else `{"hex": "..."}` with every byte, so that nothing is replaced or lost.
pub(super) fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> W {
    match std::str::from_utf8(bytes) {
        Ok(s) => push_str(out, s),
        Err(_) => {
            out.extend_from_slice(b"{\"hex\": \"");
            push_hex_digits(out, bytes);
            out.extend_from_slice(b"\"}");
            Ok(())
        }
    }
}

/// A float: shortest decimal that reads back as the same `f32` (always with a `.` or an
/// exponent), or a NaN/infinity string.
#[inline]
pub(super) fn push_f32(out: &mut Vec<u8>, x: f32) -> W {
    if x.is_finite() {
        return CompactFormatter.write_f32(out, x);
    }
    if x.is_nan() {
        let bits = x.to_bits();
        match bits {
            0x7fc0_0000 => out.extend_from_slice(b"\"NaN\""),
            0xffc0_0000 => out.extend_from_slice(b"\"-NaN\""),
            _ => write!(out, "\"NaN(0x{bits:08x})\"")?,
        }
    } else {
        push_inf(out, x > 0.0);
    }
    Ok(())
}

/// A double, as [`push_f32`].
#[inline]
pub(super) fn push_f64(out: &mut Vec<u8>, x: f64) -> W {
    if x.is_finite() {
        return CompactFormatter.write_f64(out, x);
    }
    if x.is_nan() {
        let bits = x.to_bits();
        match bits {
            0x7ff8_0000_0000_0000 => out.extend_from_slice(b"\"NaN\""),
            0xfff8_0000_0000_0000 => out.extend_from_slice(b"\"-NaN\""),
            _ => write!(out, "\"NaN(0x{bits:016x})\"")?,
        }
    } else {
        push_inf(out, x > 0.0);
    }
    Ok(())
}

fn push_inf(out: &mut Vec<u8>, positive: bool) {
    out.extend_from_slice(if positive {
        b"\"Infinity\"".as_slice()
    } else {
        b"\"-Infinity\"".as_slice()
    });
}

/// An integer, exactly (i128 holds every netCDF integer and enum value).
fn push_int(out: &mut Vec<u8>, x: i128) -> W {
    if let Ok(v) = i64::try_from(x) {
        CompactFormatter.write_i64(out, v)
    } else if let Ok(v) = u64::try_from(x) {
        CompactFormatter.write_u64(out, v)
    } else {
        write!(out, "{x}")
    }
}

/// Writes elements of values of a known type.
#[derive(Clone, Copy)]
pub(super) struct ElemFmt<'a> {
    pub ds: &'a Dataset,
}

impl ElemFmt<'_> {
    /// Element `i` of `vals`, whose elements are of type `ty` (the variant decides how the
    /// number is written; `ty` names enum members and gives vlen and compound layouts).
    pub fn elem(&self, out: &mut Vec<u8>, ty: NcType, vals: &Values, i: usize) -> W {
        match vals {
            Values::Float(v) => push_f32(out, v[i]),
            Values::Double(v) => push_f64(out, v[i]),
            Values::Char(v) => push_bytes(out, &v[i..=i]),
            Values::String(v) => match &v[i] {
                Some(s) => push_bytes(out, s.as_bytes()),
                None => {
                    out.extend_from_slice(b"null");
                    Ok(())
                }
            },
            Values::Opaque { size, bytes } => {
                out.push(b'"');
                push_hex_digits(out, &bytes[i * size..(i + 1) * size]);
                out.push(b'"');
                Ok(())
            }
            Values::Vlen(v) => self.vlen(out, vlen_base(self.ds, ty), &v[i]),
            Values::Compound(v) => self.compound(out, ty, &v[i]),
            // the integer types
            _ => self.int_or_enum(out, ty, vals.get_i128(i).unwrap_or_default()),
        }
    }

    fn int_or_enum(&self, out: &mut Vec<u8>, ty: NcType, x: i128) -> W {
        match enum_member(self.ds, ty, x) {
            Some(name) => push_str(out, name),
            None => push_int(out, x),
        }
    }

    /// All elements of `vals` as a JSON array.
    pub fn list(&self, out: &mut Vec<u8>, ty: NcType, vals: &Values) -> W {
        out.push(b'[');
        for j in 0..vals.len() {
            if j > 0 {
                out.extend_from_slice(b", ");
            }
            self.elem(out, ty, vals, j)?;
        }
        out.push(b']');
        Ok(())
    }

    /// One vlen value: its elements as an array, a vlen of char as one string.
    fn vlen(&self, out: &mut Vec<u8>, base: NcType, seq: &Values) -> W {
        match seq {
            Values::Char(bytes) => push_bytes(out, bytes),
            _ => self.list(out, base, seq),
        }
    }

    /// `vals` (all the elements of an array of `shape`) as nested arrays, one level per
    /// dimension; for char, the last dimension's rows are strings without their trailing NULs.
    /// A length that does not match the shape (a reader bug) is written as a flat array.
    fn shaped(&self, out: &mut Vec<u8>, ty: NcType, shape: &[usize], vals: &Values) -> W {
        let total: usize = shape.iter().product();
        if let Values::Char(bytes) = vals {
            let (outer, row) = match shape.split_last() {
                Some((&last, rest)) => (rest, last),
                None => (&[][..], 1),
            };
            if bytes.len() != total || row == 0 {
                return push_bytes(out, bytes);
            }
            let rows: Vec<&[u8]> = bytes.chunks(row).map(strip_nuls).collect();
            return nest(out, outer, rows.len(), |out, k| push_bytes(out, rows[k]));
        }
        if vals.len() != total {
            return self.list(out, ty, vals);
        }
        nest(out, shape, vals.len(), |out, k| self.elem(out, ty, vals, k))
    }

    /// One compound value: `{"field": value, ...}` in field order.
    fn compound(&self, out: &mut Vec<u8>, ty: NcType, fields: &[Values]) -> W {
        out.push(b'{');
        for (k, (f, def)) in with_definitions(self.ds, ty, fields).enumerate() {
            if k > 0 {
                out.extend_from_slice(b", ");
            }
            match def {
                Some(d) => {
                    push_str(out, &d.name)?;
                    out.extend_from_slice(b": ");
                    self.shaped(out, d.ty, &d.dims, f)?;
                }
                None => {
                    // values without a field definition: a reader bug, shown, not dropped
                    push_str(out, &format!("field{k}"))?;
                    out.extend_from_slice(b": ");
                    self.list(out, ty, f)?;
                }
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// A char row without its trailing NUL padding (the dimension length restores it).
pub(super) fn strip_nuls(row: &[u8]) -> &[u8] {
    &row[..row.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1)]
}

/// `n` elements laid out as nested arrays of `shape` (n = product of shape): element `k` is
/// written by `one`. An empty shape is a single element without brackets.
fn nest(
    out: &mut Vec<u8>,
    shape: &[usize],
    n: usize,
    mut one: impl FnMut(&mut Vec<u8>, usize) -> W,
) -> W {
    let blocks: Vec<u64> = block_sizes_usize(shape);
    if n == 0 {
        push_empty(out, &shape.iter().map(|&d| d as u64).collect::<Vec<_>>());
        return Ok(());
    }
    for k in 0..n {
        open_brackets(out, &blocks, k as u64);
        one(out, k)?;
        close_brackets(out, &blocks, k as u64);
    }
    Ok(())
}

fn block_sizes_usize(shape: &[usize]) -> Vec<u64> {
    block_sizes(&shape.iter().map(|&d| d as u64).collect::<Vec<_>>())
}

/// For each dimension `k`, the number of elements in one index of dimension `k - 1`
/// (the product of `shape[k..]`); an element whose index is a multiple of `blocks[k]` opens an
/// array at depth `k`.
pub(super) fn block_sizes(shape: &[u64]) -> Vec<u64> {
    let mut b = vec![1u64; shape.len()];
    let mut p = 1u64;
    for k in (0..shape.len()).rev() {
        p = p.saturating_mul(shape[k]);
        b[k] = p;
    }
    b
}

/// Before element `n` (0-based, row-major): `, ` after a previous element, then one `[` per
/// array that starts here.
#[inline]
pub(super) fn open_brackets(out: &mut Vec<u8>, blocks: &[u64], n: u64) {
    if n > 0 {
        out.extend_from_slice(b", ");
    }
    // every block size is a multiple of the innermost one: test that first
    match blocks.last() {
        Some(&b) if n.is_multiple_of(b) => {
            for &b in blocks.iter().rev() {
                if !n.is_multiple_of(b) {
                    break;
                }
                out.push(b'[');
            }
        }
        _ => {}
    }
}

/// After element `n`: one `]` per array that ends with it.
#[inline]
pub(super) fn close_brackets(out: &mut Vec<u8>, blocks: &[u64], n: u64) {
    let m = n + 1;
    match blocks.last() {
        Some(&b) if m.is_multiple_of(b) => {
            for &b in blocks.iter().rev() {
                if !m.is_multiple_of(b) {
                    break;
                }
                out.push(b']');
            }
        }
        _ => {}
    }
}

/// Nested arrays of a shape with no elements: `[]` for a zero-length first dimension,
/// `[[], []]` for 2 x 0, and so on (the nesting up to the first zero-length dimension).
pub(super) fn push_empty(out: &mut Vec<u8>, shape: &[u64]) {
    let z = shape.iter().position(|&d| d == 0).unwrap_or(shape.len());
    let outer = &shape[..z];
    let n: u64 = outer.iter().product();
    let blocks = block_sizes(outer);
    for k in 0..n {
        open_brackets(out, &blocks, k);
        out.extend_from_slice(b"[]");
        close_brackets(out, &blocks, k);
    }
}
