//! ncdump flags → [`nc_cdl::DumpOptions`], with ncdump 4.9.0's checks and messages.

use anyhow::bail;
use nc_cdl::print::{Annotation, IndexStyle, TimeMode};
use nc_cdl::DumpOptions;
use nc_dataset::subset::DimSpec;

use crate::Args;

/// A command-line value ncdump rejects; the message is ncdump's. The binary exits with the
/// usage code on it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadOption(pub String);

fn bad<T>(msg: String) -> anyhow::Result<T> {
    Err(BadOption(msg).into())
}

/// `-b`/`-f`: only the first letter counts, case-insensitively (ncdump reads `optarg[0]`).
fn index_style(flag: &str, v: &str) -> anyhow::Result<IndexStyle> {
    match v.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('c') => Ok(IndexStyle::C),
        Some('f') => Ok(IndexStyle::Fortran),
        _ => bad(format!("invalid value for -{flag} option: {v}")),
    }
}

/// C's `strtol(s, &end, base)`: leading blanks, a sign, then digits (`base` 0 also takes `0x`
/// and a leading `0` for octal). Returns the value (0 when there are no digits) and the rest
/// of the text after the number (all of `s` when there are no digits).
fn strtol(s: &str, base: u32) -> (i64, &str) {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if base == 0 {
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            (16, h)
        } else if t.starts_with('0') {
            (8, t)
        } else {
            (10, t)
        }
    } else {
        (base, t)
    };
    let n = digits.chars().take_while(|c| c.is_digit(radix)).count();
    if n == 0 {
        return (0, s);
    }
    let v = digits[..n].chars().fold(0i64, |acc, c| {
        acc.saturating_mul(i64::from(radix))
            .saturating_add(i64::from(c.to_digit(radix).unwrap_or(0)))
    });
    (if neg { -v } else { v }, &digits[n..])
}

/// `-p` / `-d`: as ncdump 4.9.0's `set_precision`. `n` alone sets float digits and leaves
/// doubles at 15; `n,m` sets both; text starting with `,` changes nothing (ncdump reads the
/// double digits only after a float number).
fn precision(o: &mut DumpOptions, p: &str) -> anyhow::Result<()> {
    let mut flt = 7;
    let mut dbl = 15;
    let mut rest = None;
    if !p.is_empty() && !p.starts_with(',') {
        let (v, r) = strtol(p, 10);
        flt = v;
        rest = Some(r);
    }
    if !(1..=20).contains(&flt) {
        return bad(format!(
            "unreasonable value for float significant digits: {flt}"
        ));
    }
    if let Some(after) = rest.and_then(|r| r.strip_prefix(',')) {
        let (v, r2) = strtol(after, 10);
        // no digits after the comma reads as 0, as ncdump reports it
        let v = if r2.len() == after.len() { 0 } else { v };
        if !(1..=20).contains(&v) {
            return bad(format!(
                "unreasonable value for double significant digits: {v}"
            ));
        }
        dbl = v;
    }
    // 1..=20 checked above
    o.float_digits = Some(flt as usize);
    o.double_digits = Some(dbl as usize);
    Ok(())
}

fn split(v: &str) -> Vec<String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Map the command line onto the printer's options.
///
/// # Errors
/// A [`BadOption`] (with ncdump's message) for a value ncdump rejects.
pub fn dump_options(args: &Args) -> anyhow::Result<DumpOptions> {
    let mut o = DumpOptions {
        header_only: args.header,
        coords_only: args.coords,
        // ncdump keeps only the last -v and the last -g list
        vars: args.vars.last().map(|v| split(v)).unwrap_or_default(),
        groups: args.groups.last().map(|g| split(g)).unwrap_or_default(),
        special: args.special,
        all_filters: args.filters,
        name: args.name.clone(),
        ..DumpOptions::default()
    };
    if let Some(b) = &args.brief {
        o.annotate = Annotation::Brief(index_style("b", b)?);
    }
    if let Some(f) = &args.full {
        o.annotate = Annotation::Full(index_style("f", f)?);
    }
    if let Some(l) = &args.line_len {
        let (n, _) = strtol(l, 0);
        if n < 10 {
            return bad(format!("unreasonably small line length specified: {n}"));
        }
        o.max_line_len = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(p) = args.precision.as_ref().or(args.sigdigs.as_ref()) {
        precision(&mut o, p)?;
    }
    if args.time {
        o.time = TimeMode::Iso;
    }
    if args.iso_time {
        o.time = TimeMode::IsoT;
    }
    if args.json {
        json_conflicts(args)?;
    }
    for x in &args.extra {
        // ncdump reads only the first letter, case-insensitively
        match x.chars().next().map(|c| c.to_ascii_lowercase()) {
            Some('p') => o.no_nc_properties = true,
            Some('f') => o.fill_value_type = true,
            Some('m') => {}
            _ => bail!(BadOption(format!("invalid value for -X option: {x}"))),
        }
    }
    Ok(o)
}

/// The `--dimension` subsets, parsed (a malformed one is a [`BadOption`]).
///
/// # Errors
/// A [`BadOption`] naming the option and the form it takes.
pub fn dimension_specs(args: &Args) -> anyhow::Result<Vec<DimSpec>> {
    let several = !args.more.is_empty()
        || args.join_dim.is_some()
        || args
            .file
            .as_ref()
            .is_some_and(|f| nc_multi::is_wildcard(&f.to_string_lossy()));
    if args.kerchunk && !args.dimension.is_empty() && several {
        // a subset of a join would renumber chunks file by file: not done
        return bad(
            "--dimension with --kerchunk takes one file: references of a subset of several files joined are not made; make references of the join, or of each file's subset"
                .to_string(),
        );
    }
    if !args.more.is_empty() && !args.kerchunk {
        return bad(
            "more than one file is only for --kerchunk (references of the files joined as one dataset); ncdump-rs prints one file, nccopy-rs IN1 IN2 ... OUT joins them"
                .to_string(),
        );
    }
    if (!args.more.is_empty() || args.join_dim.is_some()) && args.kerchunk_url.is_some() {
        return bad(
            "--kerchunk-url names one file; references of several files carry each file's own path"
                .to_string(),
        );
    }
    args.dimension
        .iter()
        .map(|t| DimSpec::parse(t).map_err(|e| BadOption(e.to_string()).into()))
        .collect()
}

/// `-j` with an option that only shapes CDL or NcML text is a usage error, not silently
/// ignored: JSON values are always complete and exact.
fn json_conflicts(args: &Args) -> anyhow::Result<()> {
    let flags: [(bool, &str); 10] = [
        (args.ncml, "-x"),
        (args.brief.is_some(), "-b"),
        (args.full.is_some(), "-f"),
        (args.line_len.is_some(), "-l"),
        (args.name.is_some(), "-n"),
        (args.precision.is_some(), "-p"),
        (args.sigdigs.is_some(), "-d"),
        (args.time, "-t"),
        (args.iso_time, "-i"),
        (
            args.extra
                .iter()
                .any(|x| x.starts_with('F') || x.starts_with('f')),
            "-XF",
        ),
    ];
    match flags.iter().find(|(set, _)| *set) {
        Some((_, flag)) => bad(format!(
            "{flag} has no meaning with -j (JSON output is always complete and exact; see docs/json.md)"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::strtol;

    #[test]
    fn strtol_as_c() {
        assert_eq!(strtol("40", 0), (40, ""));
        assert_eq!(strtol("0x20", 0), (32, ""));
        assert_eq!(strtol("010", 0), (8, ""));
        assert_eq!(strtol(" 3,4", 10), (3, ",4"));
        assert_eq!(strtol("x", 10), (0, "x"));
        assert_eq!(strtol("-5", 10), (-5, ""));
    }
}
