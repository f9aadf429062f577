//! Filter spec text: `_Filter` attribute values, `nccopy -F` parameters, ncdump's output.
//!
//! Grammar (netCDF filters documentation, "Filter Specification Syntax" and its BNF appendix):
//! `speclist := spec ('|' spec)*`, `spec := filterid (',' param)*`. Parameters are the tagged
//! constants of the documentation's table; 8-byte values (`d`, `l`, `ul`) become two u32 words,
//! low word first on every host (the documented "LE encoding"). Signed `b`/`s` values are sign
//! extended as the newest documentation says (`-17b` is 4294967279); netCDF-C 4.9.0's code zero
//! extends instead (239).
//!
//! Extension: filter names (`bzip2,9`) where the caller allows them ([`SpecParser::names`]).

use crate::error::{FilterSpecError, SpecProblem};
use crate::known::{filter_id_by_name, filter_name};
use nc_dataset::FilterSpec;

/// One parsed parameter constant: one u32 word, or two (8-byte values, low word first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamWords {
    /// A 1-, 2- or 4-byte value.
    One(u32),
    /// An 8-byte value as (low word, high word).
    Two(u32, u32),
}

/// Split a 64-bit value into the two parameter words, low word first.
pub fn u64_to_words(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// Join two parameter words (low word first) into a 64-bit value.
pub fn words_to_u64(lo: u32, hi: u32) -> u64 {
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Parse one tagged constant (`-17b`, `23ub`, `-25S`, `27US`, `-77`, `77`, `93U`, `789f`,
/// `12345678.12345678d`, `-9223372036854775807L`, `18446744073709551615UL`).
///
/// # Errors
/// The [`SpecProblem`] of the first thing the documentation does not allow.
pub fn parse_constant(tok: &str) -> Result<ParamWords, SpecProblem> {
    if tok.is_empty() {
        return Err(SpecProblem::Empty);
    }
    let (neg, body) = match tok.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, tok),
    };
    let lower = body.to_ascii_lowercase();
    if lower.starts_with("0x") {
        return Err(SpecProblem::Hex);
    }
    // numeric prefix: digits [. digits] [e [+-] digits]
    let b = lower.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i;
    let mut fraction = false;
    if i < b.len() && b[i] == b'.' {
        fraction = true;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == 0 || (fraction && i == 1) {
        return Err(SpecProblem::NotANumber);
    }
    if i < b.len() && b[i] == b'e' {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            fraction = true;
            i = j;
        }
    }
    let num = &lower[..i];
    let tag = &lower[i..];
    let float_text = || {
        if neg {
            format!("-{num}")
        } else {
            num.to_string()
        }
    };
    match tag {
        "f" => {
            let v: f32 = float_text().parse().map_err(|_| SpecProblem::NotANumber)?;
            if !v.is_finite() {
                return Err(SpecProblem::OutOfRange);
            }
            return Ok(ParamWords::One(v.to_bits()));
        }
        "d" => {
            let v: f64 = float_text().parse().map_err(|_| SpecProblem::NotANumber)?;
            if !v.is_finite() {
                return Err(SpecProblem::OutOfRange);
            }
            let [lo, hi] = u64_to_words(v.to_bits());
            return Ok(ParamWords::Two(lo, hi));
        }
        "" | "b" | "ub" | "s" | "us" | "u" | "l" | "ul" => {}
        _ => return Err(SpecProblem::UnknownTag),
    }
    if fraction {
        return Err(SpecProblem::UntaggedFraction);
    }
    if int_digits == 0 {
        return Err(SpecProblem::NotANumber);
    }
    let mag: u128 = num.parse().map_err(|_| SpecProblem::OutOfRange)?;
    let unsigned_tag = tag.starts_with('u');
    if neg && unsigned_tag {
        return Err(SpecProblem::NegativeUnsigned);
    }
    let v: i128 = if neg {
        -(i128::try_from(mag).map_err(|_| SpecProblem::OutOfRange)?)
    } else {
        i128::try_from(mag).map_err(|_| SpecProblem::OutOfRange)?
    };
    let in_range = |lo: i128, hi: i128| {
        if v < lo || v > hi {
            Err(SpecProblem::OutOfRange)
        } else {
            Ok(())
        }
    };
    Ok(match tag {
        "" if neg => {
            in_range(i128::from(i32::MIN), -1)?;
            ParamWords::One(v as i32 as u32)
        }
        "" | "u" => {
            in_range(0, i128::from(u32::MAX))?;
            ParamWords::One(v as u32)
        }
        "b" => {
            in_range(i128::from(i8::MIN), i128::from(i8::MAX))?;
            ParamWords::One(i32::from(v as i8) as u32)
        }
        "ub" => {
            in_range(0, i128::from(u8::MAX))?;
            ParamWords::One(v as u32)
        }
        "s" => {
            in_range(i128::from(i16::MIN), i128::from(i16::MAX))?;
            ParamWords::One(i32::from(v as i16) as u32)
        }
        "us" => {
            in_range(0, i128::from(u16::MAX))?;
            ParamWords::One(v as u32)
        }
        "l" => {
            in_range(i128::from(i64::MIN), i128::from(i64::MAX))?;
            let [lo, hi] = u64_to_words(v as i64 as u64);
            ParamWords::Two(lo, hi)
        }
        _ => {
            // "ul"
            in_range(0, i128::from(u64::MAX))?;
            let [lo, hi] = u64_to_words(v as u64);
            ParamWords::Two(lo, hi)
        }
    })
}

/// A filter spec parser with options. [`parse_spec_list`] uses the defaults (names allowed).
#[derive(Debug, Clone)]
pub struct SpecParser {
    /// Accept filter names (`bzip2`) as well as numeric ids (an extension of netCDF-C 4.9.0,
    /// which rejects names).
    pub names: bool,
    /// Extra names (for example from loaded plugins), checked after the table's ([`crate::known::FILTERS`]).
    pub extra_names: Vec<(String, u32)>,
    /// Check the parameters of well-known filters ([`check_params`]): deflate needs a level…
    pub check_known: bool,
}

impl Default for SpecParser {
    fn default() -> Self {
        SpecParser {
            names: true,
            extra_names: Vec::new(),
            check_known: false,
        }
    }
}

/// Trim ASCII whitespace, returning the trimmed text and its offset inside `s`.
fn trim_at(s: &str, at: usize) -> (&str, usize) {
    let start = s.len() - s.trim_start().len();
    (s.trim(), at + start)
}

/// Split `s` at `sep`, giving each piece and its byte offset (relative to `base`).
pub(crate) fn split_at_sep(s: &str, sep: char, base: usize) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if c == sep {
            out.push((&s[start..i], base + start));
            start = i + c.len_utf8();
        }
    }
    out.push((&s[start..], base + start));
    out
}

impl SpecParser {
    /// Strict netCDF-C 4.9.0 syntax: numeric ids only, known filters' parameters checked.
    pub fn strict() -> SpecParser {
        SpecParser {
            names: false,
            extra_names: Vec::new(),
            check_known: true,
        }
    }

    fn lookup_name(&self, name: &str) -> Option<u32> {
        filter_id_by_name(name).or_else(|| {
            self.extra_names
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, i)| *i)
        })
    }

    /// Parse a spec list (`307,9|32004`).
    ///
    /// # Errors
    /// [`FilterSpecError::Bad`] naming the first offending token and its byte position;
    /// [`FilterSpecError::BadParams`] when `check_known` is on and a known filter's parameters
    /// are wrong.
    pub fn parse_list(&self, text: &str) -> Result<Vec<FilterSpec>, FilterSpecError> {
        self.parse_list_at(text, text, 0)
    }

    /// Parse `sub`, a piece of `whole` starting at byte `base`, so errors name positions in `whole`.
    pub(crate) fn parse_list_at(
        &self,
        whole: &str,
        sub: &str,
        base: usize,
    ) -> Result<Vec<FilterSpec>, FilterSpecError> {
        let bad = |token: &str, pos: usize, problem: SpecProblem| FilterSpecError::Bad {
            text: whole.to_string(),
            token: token.to_string(),
            pos,
            problem,
        };
        let mut out = Vec::new();
        for (spec, spos) in split_at_sep(sub, '|', base) {
            let mut items = split_at_sep(spec, ',', spos).into_iter();
            let (id_tok, id_pos) = match items.next() {
                Some((t, p)) => trim_at(t, p),
                None => ("", spos),
            };
            if id_tok.is_empty() {
                return Err(bad(id_tok, id_pos, SpecProblem::Empty));
            }
            let id = if id_tok.bytes().all(|c| c.is_ascii_digit()) {
                match id_tok.parse::<u32>() {
                    Ok(v) if (1..=65535).contains(&v) => v,
                    _ => return Err(bad(id_tok, id_pos, SpecProblem::BadFilterId)),
                }
            } else if id_tok
                .bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
            {
                if !self.names {
                    return Err(bad(id_tok, id_pos, SpecProblem::NameNotAllowed));
                }
                self.lookup_name(id_tok)
                    .ok_or_else(|| bad(id_tok, id_pos, SpecProblem::UnknownName))?
            } else {
                let problem = match parse_constant(id_tok) {
                    Err(SpecProblem::Hex) => SpecProblem::Hex,
                    _ => SpecProblem::BadFilterId,
                };
                return Err(bad(id_tok, id_pos, problem));
            };
            let mut params = Vec::new();
            for (tok, pos) in items {
                let (tok, pos) = trim_at(tok, pos);
                match parse_constant(tok) {
                    Ok(ParamWords::One(w)) => params.push(w),
                    Ok(ParamWords::Two(lo, hi)) => params.extend([lo, hi]),
                    Err(problem) => return Err(bad(tok, pos, problem)),
                }
            }
            let spec = FilterSpec { id, params };
            if self.check_known {
                check_params(&spec).map_err(|reason| FilterSpecError::BadParams {
                    text: whole.to_string(),
                    id,
                    name: filter_name(id).unwrap_or("?").to_string(),
                    reason,
                })?;
            }
            out.push(spec);
        }
        Ok(out)
    }
}

/// Parse `speclist := spec ('|' spec)*`, `spec := filterid (',' param)*`, with tagged constants
/// and filter names allowed (see [`SpecParser`] for the strict 4.9.0 syntax).
///
/// # Errors
/// [`FilterSpecError::Bad`] naming the offending token and its byte position.
pub fn parse_spec_list(text: &str) -> Result<Vec<FilterSpec>, FilterSpecError> {
    SpecParser::default().parse_list(text)
}

/// One spec as ncdump prints it: `307,9` (plain unsigned decimals).
pub fn format_spec(spec: &FilterSpec) -> String {
    let mut s = spec.id.to_string();
    for p in &spec.params {
        s.push(',');
        s.push_str(&p.to_string());
    }
    s
}

/// A chain as ncdump prints it in `_Filter`: `307,9|32004`.
pub fn format_spec_list(specs: &[FilterSpec]) -> String {
    specs.iter().map(format_spec).collect::<Vec<_>>().join("|")
}

/// Check the parameters of the well-known filters (unknown ids pass).
///
/// # Errors
/// A sentence saying what is wrong and what is expected.
pub fn check_params(spec: &FilterSpec) -> Result<(), String> {
    let p = &spec.params;
    let n = p.len();
    match spec.id {
        1 => match p.as_slice() {
            [l] if *l <= 9 => Ok(()),
            [l] => Err(format!("level {l} is out of range: use 0 to 9")),
            _ => Err(format!(
                "needs exactly one parameter, the level 0-9; got {n}"
            )),
        },
        2 if n > 1 => Err(format!(
            "takes at most one parameter (the element size); got {n}"
        )),
        3 if n > 0 => Err(format!("takes no parameters; got {n}")),
        4 => match p.as_slice() {
            [_, ppb] | [_, ppb, _, _] if *ppb % 2 == 0 && (2..=32).contains(ppb) => Ok(()),
            [_, ppb] | [_, ppb, _, _] => Err(format!(
                "pixels per block {ppb} must be even and between 2 and 32"
            )),
            _ => Err(format!(
                "needs 2 parameters (options mask, pixels per block); got {n}"
            )),
        },
        // HDF5's bzip2 filter reads only the first value (extra ones are ignored, as the
        // plugin and netCDF-C's tests use them, e.g. "307,9,4")
        307 => match p.first() {
            None => Ok(()),
            Some(l) if (1..=9).contains(l) => Ok(()),
            Some(l) => Err(format!("block size {l} is out of range: use 1 to 9")),
        },
        32004 | 32015 if n > 1 => Err(format!("takes at most one parameter; got {n}")),
        32001 if n > 7 => Err(format!("takes at most 7 parameters; got {n}")),
        _ => Ok(()),
    }
}

/// Put a chain in the order the filters documentation ("Order of Invocation") prescribes:
/// a repeated id keeps its first position and takes the last parameters; fletcher32 comes
/// first, then shuffle, then the others in definition order.
pub fn normalize_chain(specs: &[FilterSpec]) -> Vec<FilterSpec> {
    let mut merged: Vec<FilterSpec> = Vec::new();
    for s in specs {
        match merged.iter_mut().find(|m| m.id == s.id) {
            Some(m) => m.params.clone_from(&s.params),
            None => merged.push(s.clone()),
        }
    }
    let rank = |id: u32| match id {
        3 => 0,
        2 => 1,
        _ => 2,
    };
    merged.sort_by_key(|s| rank(s.id)); // stable: the others keep their order
    merged
}
