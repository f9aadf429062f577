//! End-to-end, issue 14: the interop suite. `tests/interop/corpus.py` writes a varied corpus with
//! the real clients (h5py, h5netcdf, netCDF4-python, xarray, zarr-python) at test time;
//! `tests/interop/driver.py` runs ncdump-rs / nccopy-rs and netCDF-C 4.9.0's ncdump / nccopy on
//! every file and checks the values with the clients, and prints a JSON report. This test
//! compares our results with `tests/interop/known_failures.txt`: it fails, listing every
//! (file, check), when a check fails that is not listed, or a listed one passes (remove its line).
//!
//! `INTEROP_TABLE=docs/interop.md` also rewrites the table of results (relative to the repository
//! root). Skips with a message when python3, a client or netCDF-C's tools are missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::collections::BTreeMap;
use std::process::Command;

const CLIENTS: &str = "import netCDF4, h5py, hdf5plugin, h5netcdf, zarr, numcodecs, xarray, scipy
assert int(zarr.__version__.split('.')[0]) >= 3";

fn clients_missing() -> Option<String> {
    match Command::new("python3").args(["-c", CLIENTS]).output() {
        Err(e) => Some(format!("python3 not runnable: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "Python clients missing: {}",
            String::from_utf8_lossy(&o.stderr)
                .trim()
                .lines()
                .last()
                .unwrap_or("")
        )),
        Ok(_) => None,
    }
}

/// (file, check) -> reason, from known_failures.txt.
fn known_failures() -> BTreeMap<(String, String), String> {
    let path = root().join("tests/interop/known_failures.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, char::is_whitespace);
        let file = parts.next().unwrap().to_string();
        let check = parts.next().unwrap_or("").to_string();
        let reason = parts.next().unwrap_or("").trim().to_string();
        assert!(
            !check.is_empty() && !reason.is_empty(),
            "{}:{}: want `file check reason`",
            path.display(),
            n + 1
        );
        let dup = out.insert((file, check), reason);
        assert!(dup.is_none(), "{}:{}: listed twice", path.display(), n + 1);
    }
    out
}

#[test]
fn python_clients_and_netcdf_c_agree_with_our_tools() {
    if let Some(why) = clients_missing() {
        eprintln!("SKIP: {why}");
        return;
    }
    if missing_references(&["ncdump", "nccopy"]) {
        return;
    }
    let tools = bin("ncdump-rs").parent().unwrap().to_path_buf();
    let work = tempdir("interop");
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("tests/interop/driver.py"))
        .arg("--tools")
        .arg(&tools)
        .arg("--work")
        .arg(&work)
        .arg("--known")
        .arg(root().join("tests/interop/known_failures.txt"));
    if let Ok(table) = std::env::var("INTEROP_TABLE") {
        cmd.arg("--table").arg(root().join(table));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "driver.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("driver.py printed no JSON report ({e})"));
    let known = known_failures();
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut counts = BTreeMap::<String, usize>::new();
    for r in report["results"].as_array().unwrap() {
        let file = r["file"].as_str().unwrap().to_string();
        let check = r["check"].as_str().unwrap().to_string();
        let status = r["ours"]["status"].as_str().unwrap();
        *counts.entry(status.to_string()).or_default() += 1;
        let detail: Vec<&str> = r["ours"]["detail"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        let key = (file.clone(), check.clone());
        seen.insert(key.clone());
        match (status, known.get(&key)) {
            ("FAIL", None) => problems.push(format!(
                "{file} {check}: FAILS (not in known_failures.txt):\n      {}",
                detail.join("\n      ")
            )),
            ("FAIL", Some(_)) => {}
            ("n.a.", Some(reason)) if reason.starts_with("netcdf-c 4.9.0 bug:") => {}
            (_, Some(reason)) => problems.push(format!(
                "{file} {check}: listed in known_failures.txt ({reason}) but is {status} now: remove the line"
            )),
            _ => {}
        }
    }
    for (file, check) in known.keys() {
        if !seen.contains(&(file.clone(), check.clone())) {
            problems.push(format!(
                "{file} {check}: listed in known_failures.txt but no such file and check ran"
            ));
        }
    }
    eprintln!(
        "interop: {} results ({counts:?}) in {} s (corpus {} s)",
        report["results"].as_array().unwrap().len(),
        report["seconds"],
        report["corpus_seconds"]
    );
    assert!(
        problems.is_empty(),
        "{} interop problem(s) (files and copies kept in {}):\n  {}",
        problems.len(),
        work.display(),
        problems.join("\n  ")
    );
    std::fs::remove_dir_all(&work).unwrap();
}
