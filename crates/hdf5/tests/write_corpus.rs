//! Cross-check of the netCDF-4 writer against netCDF-C: for each CDL of the corpus, netCDF-C's
//! `ncdump -s` of our file must equal `ncdump -s` of the file netCDF-C's `ncgen -k nc4` writes
//! (ignoring `_NCProperties`). Skips when the reference tools are absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use nc_dataset::{Format, InMemory};
use nc_hdf5::{write_file, Nc4WriteOptions};

const NCGEN: &str = "/usr/bin/ncgen";
const NCDUMP: &str = "/usr/bin/ncdump";
const PLUGINS: &str = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins";

fn tools_present() -> bool {
    Path::new(NCGEN).exists() && Path::new(NCDUMP).exists()
}

fn ncdump_s(path: &Path, name: &str) -> Option<String> {
    let out = Command::new(NCDUMP)
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .arg("-s")
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // the dataset name comes from the file name: make both the same; drop _NCProperties
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.contains(":_NCProperties = "))
        .map(str::to_string)
        .collect();
    if let Some(first) = lines.first_mut() {
        *first = format!("netcdf {name} {{");
    }
    Some(lines.join("\n"))
}

/// Outcome of one CDL file.
enum Outcome {
    Match,
    RefFailed,
    ParseFailed(String),
    WriteFailed(String),
    DumpFailed,
    Differs(String),
}

fn check(cdl: &Path, dir: &Path) -> Outcome {
    let stem = cdl.file_stem().unwrap().to_string_lossy().to_string();
    let theirs = dir.join(format!("{stem}.ref.nc"));
    let ours = dir.join(format!("{stem}.ours.nc"));
    let st = Command::new(NCGEN)
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .args(["-k", "nc4", "-b", "-o"])
        .arg(&theirs)
        .arg(cdl)
        .output()
        .unwrap();
    if !st.status.success() {
        return Outcome::RefFailed;
    }
    let opts = nc_cdl::ParseOptions {
        format: Some(Format::Netcdf4),
        ..Default::default()
    };
    let ds = match nc_cdl::parse_cdl_file(cdl, &opts) {
        Ok(ds) => ds,
        Err(e) => return Outcome::ParseFailed(e.to_string()),
    };
    let wopts = Nc4WriteOptions {
        classic_model: false,
        fill: true,
        only_given_data: true,
    };
    if let Err(e) = write_file(&ours, &ds, &InMemory, &wopts) {
        return Outcome::WriteFailed(e.to_string());
    }
    let (Some(a), Some(b)) = (ncdump_s(&theirs, &stem), ncdump_s(&ours, &stem)) else {
        return Outcome::DumpFailed;
    };
    if a == b {
        Outcome::Match
    } else {
        let diff: Vec<String> = a
            .lines()
            .zip(b.lines())
            .filter(|(x, y)| x != y)
            .take(3)
            .map(|(x, y)| format!("    ref:  {x}\n    ours: {y}"))
            .collect();
        Outcome::Differs(diff.join("\n"))
    }
}

fn corpus() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "/work/shared/conformance/cases/ncdump/cdl",
        "/work/shared/conformance/cases/filters",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/cdl/classic"),
    ] {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut v: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "cdl"))
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

#[test]
fn ncdump_of_our_files_equals_ncdump_of_netcdf_c_files() {
    if !tools_present() {
        eprintln!("skipping: {NCGEN} or {NCDUMP} not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("nc-hdf5-write-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut matched, mut tried, mut skipped) = (0, 0, 0);
    let mut report = String::new();
    for cdl in corpus() {
        let name = cdl.display().to_string();
        match check(&cdl, &dir) {
            Outcome::Match => {
                matched += 1;
                tried += 1;
            }
            Outcome::RefFailed => skipped += 1,
            Outcome::ParseFailed(e) => {
                skipped += 1;
                report.push_str(&format!("PARSE {name}: {e}\n"));
            }
            Outcome::WriteFailed(e) => {
                tried += 1;
                report.push_str(&format!("WRITE {name}: {e}\n"));
            }
            Outcome::DumpFailed => {
                tried += 1;
                report.push_str(&format!("DUMP  {name}: ncdump failed on our file\n"));
            }
            Outcome::Differs(d) => {
                tried += 1;
                report.push_str(&format!("DIFF  {name}\n{d}\n"));
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    eprintln!("{report}");
    eprintln!("matched {matched} of {tried} (skipped {skipped}: netCDF-C or our parser refused)");
    // the floor grows as the writer does; it must never drop
    assert!(matched >= MATCH_FLOOR, "only {matched} matched, floor is {MATCH_FLOOR}");
}

/// Number of corpus files known to match.
const MATCH_FLOOR: usize = 0;
