//! ncdump flags → [`nc_cdl::DumpOptions`].

use anyhow::bail;
use nc_cdl::print::{Annotation, IndexStyle, TimeMode};
use nc_cdl::DumpOptions;

use crate::Args;

fn index_style(flag: &str, v: &str) -> anyhow::Result<IndexStyle> {
    match v.chars().next() {
        Some('c') | Some('C') => Ok(IndexStyle::C),
        Some('f') | Some('F') => Ok(IndexStyle::Fortran),
        _ => bail!("-{flag} {v}: invalid value for -{flag} option; use c (C indices) or f (Fortran indices)"),
    }
}

fn split(v: &[String]) -> Vec<String> {
    v.iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Map the command line onto the printer's options.
pub(crate) fn dump_options(args: &Args) -> anyhow::Result<DumpOptions> {
    let mut o = DumpOptions {
        header_only: args.header,
        coords_only: args.coords,
        vars: split(&args.vars),
        groups: split(&args.groups),
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
        match l.trim().parse::<usize>() {
            Ok(n) if n >= 10 => o.max_line_len = n,
            _ => bail!("-l {l}: line length must be a number of at least 10"),
        }
    }
    if let Some(p) = &args.precision {
        let mut it = p.splitn(2, ',');
        let f = it.next().unwrap_or("").trim();
        let d = it.next().map(str::trim);
        let digits = |s: &str| -> anyhow::Result<usize> {
            match s.parse::<usize>() {
                Ok(n) if (1..=20).contains(&n) => Ok(n),
                _ => bail!("-p {p}: precision must be 1 to 20 digits, as -p fdig[,ddig]"),
            }
        };
        if !f.is_empty() {
            o.float_digits = Some(digits(f)?);
            // netCDF-C: -p n alone sets both float and double precision.
            if d.is_none() {
                o.double_digits = Some(digits(f)?);
            }
        }
        if let Some(d) = d.filter(|d| !d.is_empty()) {
            o.double_digits = Some(digits(d)?);
        }
    }
    if args.time {
        o.time = TimeMode::Iso;
    }
    if args.iso_time {
        o.time = TimeMode::IsoT;
    }
    for x in &args.extra {
        match x.as_str() {
            "p" => o.no_nc_properties = true,
            "m" => {}
            other => bail!("-X{other}: unknown -X option; use -Xp or -Xm"),
        }
    }
    Ok(o)
}
