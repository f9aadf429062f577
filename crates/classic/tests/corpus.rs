//! Files netCDF-C wrote: every CDL of the conformance corpus that the reference `ncgen` can
//! write as CDF-1, CDF-2 or CDF-5, plus the corpus's own classic `.nc` files, are read with
//! [`ClassicFile`] and written back through it as the data source:
//! * with fill on, the copy must equal ncgen's file byte for byte;
//! * with fill off, it must equal what the reference `nccopy` writes (nccopy uses NC_NOFILL).
//!
//! Skipped when the reference tools or the corpus are absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use nc_classic::{write_to, ClassicFile, WriteOptions};
use nc_dataset::Format;

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/cases"
);

fn cdl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cdl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "cdl") {
            out.push(p);
        }
    }
}

fn copy_with(file: &ClassicFile, fill: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = WriteOptions {
        format: file.header().format,
        fill,
        only_given_data: false,
    };
    write_to(&mut out, file.dataset(), file, &opts).unwrap_or_else(|e| panic!("copy: {e}"));
    out
}

fn nccopy(input: &Path, output: &Path) -> Option<Vec<u8>> {
    let r = Command::new("/usr/bin/nccopy")
        .arg(input)
        .arg(output)
        .output()
        .ok()?;
    if !r.status.success() {
        return None;
    }
    std::fs::read(output).ok()
}

/// Compare and describe the first difference.
fn same(what: &str, ours: &[u8], theirs: &[u8]) -> Result<(), String> {
    if ours == theirs {
        Ok(())
    } else {
        Err(format!(
            "{what}: differs at byte {:?} (ours {} bytes, reference {})",
            common::first_diff(ours, theirs),
            ours.len(),
            theirs.len()
        ))
    }
}

fn check_file(path: &Path, dir: &Path, cdl_has_nofill: bool) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let file = ClassicFile::open(path).map_err(|e| format!("open: {e}"))?;
    // the header we parse from the bytes equals the one read incrementally from the file
    let from_bytes = ClassicFile::from_bytes(bytes.clone()).map_err(|e| e.to_string())?;
    // compared as text: NaN attributes are not equal to themselves
    if format!("{:?}", from_bytes.dataset()) != format!("{:?}", file.dataset())
        || from_bytes.header() != file.header()
    {
        return Err("open and from_bytes disagree".into());
    }
    if !cdl_has_nofill {
        same("fill copy vs ncgen", &copy_with(&file, true), &bytes)?;
    }
    if let Some(reference) = nccopy(path, &dir.join("nccopy.nc")) {
        same(
            "nofill copy vs nccopy",
            &copy_with(&file, false),
            &reference,
        )?;
    }
    Ok(())
}

#[test]
fn corpus_cdl_through_ncgen_then_read_and_rewrite() {
    if !common::have_ncgen() || !Path::new(CASES).exists() {
        eprintln!("skipping: reference ncgen or corpus absent");
        return;
    }
    let mut cdls = Vec::new();
    cdl_files(Path::new(CASES), &mut cdls);
    let dir = common::scratch("corpus");
    let mut checked = 0;
    let mut failures = Vec::new();
    for cdl in &cdls {
        let stem = cdl.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.starts_with("big") || stem.contains(".big.") {
            // 4 GB files: covered header-only by tests/big.rs
            continue;
        }
        let text = std::fs::read_to_string(cdl).unwrap_or_default();
        let nofill = text.contains("_NoFill");
        for f in [Format::Classic, Format::Offset64, Format::Cdf5] {
            let out = dir.join("ref.nc");
            let _ = std::fs::remove_file(&out);
            let ok = Command::new("/usr/bin/ncgen")
                .current_dir(cdl.parent().unwrap())
                .args(["-b", "-k", common::kind_arg(f), "-o"])
                .arg(&out)
                .arg(cdl)
                .output()
                .is_ok_and(|r| r.status.success());
            let size = std::fs::metadata(&out).map_or(0, |m| m.len());
            if !ok || size == 0 || size > 64 << 20 {
                continue;
            }
            checked += 1;
            if let Err(e) = check_file(&out, &dir, nofill) {
                failures.push(format!("{} ({}): {e}", cdl.display(), f.kind_name()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("checked {checked} ncgen outputs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= 100,
        "only {checked} CDL files could be written as classic"
    );
}

#[test]
fn corpus_classic_nc_files() {
    if !Path::new(CASES).exists() {
        eprintln!("skipping: corpus absent");
        return;
    }
    let names = [
        "ncdump/ref_test_365_day_1900.nc",
        "ncdump/ref_test_360_day_1900.nc",
        "ncdump/ref_test_366_day_1900.nc",
        "ncdump/ref_nccopy3_subset.nc",
        "ncdump/ref_null_byte_padding_test.nc",
    ];
    let dir = common::scratch("corpus-nc");
    for n in names {
        let p = Path::new(CASES).join(n);
        let file = ClassicFile::open(&p).unwrap_or_else(|e| panic!("{n}: {e}"));
        assert!(!file.dataset().vars.is_empty(), "{n}");
        if Path::new("/usr/bin/nccopy").exists() {
            let reference = nccopy(&p, &dir.join("c.nc")).expect("nccopy");
            same(n, &copy_with(&file, false), &reference).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_magic_file_is_refused() {
    let p = Path::new(CASES).join("ncdump/ref_test_corrupt_magic.nc");
    if !p.exists() {
        eprintln!("skipping: corpus absent");
        return;
    }
    let e = ClassicFile::open(&p)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.starts_with("not a classic netCDF file: first bytes are ["),
        "{e}"
    );
}
