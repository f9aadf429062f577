//! The conformance corpus against netCDF-C's `ncdump -h`: for every netCDF-4 file (the corpus's
//! own and those `ncgen -k nc4` makes from its CDL files), the dimensions, variable declarations
//! and attribute names (in order, per group) we read must be the ones ncdump lists. Values are
//! checked elsewhere; this catches structure, naming, typing and ordering differences at scale.
//! Takes some seconds: it runs `ncgen` on every CDL file of the corpus.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{have_netcdf_tools, ncdump, tmp_dir};
use nc_dataset::{Dataset, GroupId};
use nc_hdf5::Nc4File;

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/cases"
);

/// One line of structure: `dim NAME = LEN`, `var TYPE NAME(DIMS)`, `att OWNER:NAME`, `group NAME`.
fn ours(ds: &Dataset) -> Vec<String> {
    let mut out = Vec::new();
    group(ds, GroupId(0), &mut out);
    out
}

fn group(ds: &Dataset, g: GroupId, out: &mut Vec<String>) {
    let grp = ds.group(g);
    if g.0 != 0 {
        out.push(format!("group {}", grp.name));
    }
    for &d in &grp.dims {
        let dim = ds.dim(d);
        if dim.unlimited {
            out.push(format!(
                "dim {} = UNLIMITED ; // ({} currently)",
                dim.name, dim.len
            ));
        } else {
            out.push(format!("dim {} = {}", dim.name, dim.len));
        }
    }
    for &v in &grp.vars {
        let var = ds.var(v);
        // ncdump writes out-of-scope types as paths; compare the plain name
        let ty = ds.type_name(var.ty).to_string();
        let dims: Vec<&str> = var.dims.iter().map(|d| ds.dim(*d).name.as_str()).collect();
        if dims.is_empty() {
            out.push(format!("var {ty} {}", var.name));
        } else {
            out.push(format!("var {ty} {}({})", var.name, dims.join(", ")));
        }
        for a in &var.atts {
            out.push(format!("att {}:{}", var.name, a.name));
        }
    }
    for a in &grp.atts {
        out.push(format!("att :{}", a.name));
    }
    for &c in &grp.groups {
        group(ds, c, out);
    }
}

/// The same lines from `ncdump -h` text (types section skipped).
fn theirs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section = "";
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("group: ").and_then(|r| r.strip_suffix(" {")) {
            out.push(format!("group {}", unescape(name)));
            section = "";
            continue;
        }
        match t {
            "types:" | "dimensions:" | "variables:" => {
                section = t;
                continue;
            }
            _ if t.starts_with("// global attributes:")
                || t.starts_with("// group attributes:") =>
            {
                section = "atts";
                continue;
            }
            _ => {}
        }
        if t.is_empty() || t.starts_with('}') {
            continue;
        }
        match section {
            "dimensions:" => {
                let t = t.trim_end_matches(" ;");
                if t.contains("UNLIMITED") {
                    out.push(format!("dim {}", line.trim()));
                } else {
                    out.push(format!("dim {}", unescape(t)));
                }
            }
            "variables:" | "atts" => {
                if let Some((lhs, _)) = t.split_once(" = ") {
                    // `[type ]owner:name`; ncdump writes `data :att` for a variable named like
                    // a CDL keyword
                    let mut att = lhs.rsplit_once(' ').map_or(lhs, |(_, r)| r).to_string();
                    if section == "variables:" && att.starts_with(':') {
                        let owner = lhs.trim_end_matches(att.as_str()).trim_end();
                        att = format!("{}{att}", owner.rsplit(' ').next().unwrap_or(""));
                    }
                    if att.contains(':') {
                        out.push(format!("att {}", unescape(&att)));
                    }
                } else if section == "variables:"
                    && t.ends_with(" ;")
                    && !line.starts_with("\t\t")
                    && !t.starts_with('"')
                {
                    let decl = t.trim_end_matches(" ;");
                    let (ty, rest) = decl.split_once(' ').unwrap_or((decl, ""));
                    let ty = ty.rsplit('/').next().unwrap_or(ty);
                    out.push(format!("var {ty} {}", unescape(rest)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Undo ncdump's backslash escapes in names (`\\1dim` is the name `1dim`).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut esc = false;
    for c in s.chars() {
        if c == '\\' && !esc {
            esc = true;
            continue;
        }
        esc = false;
        out.push(c);
    }
    out
}

/// The corpus' netCDF-4 files, and the directory holding those made from its CDL (removed
/// when it is dropped).
fn netcdf4_files() -> (common::TmpDir, Vec<PathBuf>) {
    let mut files = Vec::new();
    for sub in ["nc_test4", "ncdump"] {
        let Ok(rd) = std::fs::read_dir(Path::new(CASES).join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if matches!(p.extension().and_then(|x| x.to_str()), Some("nc" | "h5")) {
                files.push(p);
            }
        }
    }
    // netCDF-4 files from the CDL corpus
    let dir = tmp_dir("corpus");
    for sub in ["ncdump/cdl", "filters"] {
        let Ok(rd) = std::fs::read_dir(Path::new(CASES).join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().and_then(|x| x.to_str()) != Some("cdl") {
                continue;
            }
            let stem = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("x")
                .to_string();
            let out = dir.join(format!("{sub}-{stem}.nc").replace('/', "-"));
            let ok = std::process::Command::new("/usr/bin/ncgen")
                .args(["-k", "nc4", "-o"])
                .arg(&out)
                .arg(&p)
                .env("HDF5_PLUGIN_PATH", common::PLUGINS)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                files.push(out);
            }
        }
    }
    files.sort();
    (dir, files)
}

#[test]
fn structure_matches_ncdump_on_the_corpus() {
    if !have_netcdf_tools() || !Path::new(CASES).exists() {
        eprintln!("SKIPPED: netCDF-C tools or the conformance corpus are not present");
        return;
    }
    let mut compared = 0;
    let mut failures = Vec::new();
    let (_dir, files) = netcdf4_files();
    for f in files {
        let kind = std::process::Command::new("/usr/bin/ncdump")
            .arg("-k")
            .arg(&f)
            .output()
            .expect("ncdump -k");
        if !String::from_utf8_lossy(&kind.stdout).starts_with("netCDF-4") {
            continue;
        }
        let text = ncdump(&["-h"], &f);
        // empty: netCDF-C itself cannot read it; `\ `: names with escaped blanks, which this
        // line splitter cannot take apart (ref_tst_names)
        if text.is_empty() || text.contains("\\ ") {
            continue;
        }
        let file = match Nc4File::open(&f) {
            Ok(file) => file,
            Err(e) => {
                failures.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        compared += 1;
        let (a, b) = (theirs(&text), ours(file.dataset()));
        if a != b {
            let first = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            failures.push(format!(
                "{}: first difference at line {first}: ncdump {:?} / ours {:?}",
                f.display(),
                a.get(first),
                b.get(first)
            ));
        }
    }
    eprintln!("compared {compared} netCDF-4 files with ncdump -h");
    assert!(compared >= 60, "too few files compared: {compared}");
    assert!(
        failures.is_empty(),
        "{} files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
