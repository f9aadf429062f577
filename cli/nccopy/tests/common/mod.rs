//! Helpers shared by nccopy-rs's integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nc_dataset::Format;

/// The nccopy-rs binary under test.
pub fn nccopy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nccopy-rs"))
}

/// Run nccopy-rs with `args`.
pub fn run(args: &[&str]) -> Output {
    nccopy().args(args).output().expect("run nccopy-rs")
}

/// Write `cdl` as a dataset file `dir/name` in `format`, as ncgen-rs would (our CDL parser and
/// writers; only the data the CDL gives is written).
pub fn make_nc(dir: &Path, name: &str, cdl: &str, format: Format) -> PathBuf {
    let ds = nc_cdl::parse_cdl(cdl, name, &nc_cdl::ParseOptions::default()).expect("parse CDL");
    let path = dir.join(name);
    let opts = nc_dispatch::CreateOptions {
        format,
        fill: true,
        only_given_data: true,
        ..Default::default()
    };
    let loc = nc_dispatch::Location::local(&path);
    nc_dispatch::create(&loc, &ds, &nc_dataset::InMemory, &opts).expect("write input");
    path
}

/// The names in a directory, sorted (hidden temporary files included).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    v.sort();
    v
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// True when the reference netCDF-C tools needed are installed (else print why and skip).
pub fn have_reference(tools: &[&str]) -> bool {
    for t in tools {
        if !Path::new(t).exists() {
            eprintln!("skipping: {t} is not installed");
            return false;
        }
    }
    true
}

/// Remove a file or a directory tree, if there.
pub fn remove_any(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}
