//! Records the versions of the codec crates this build links (read from the workspace's
//! `Cargo.lock`), so that `--version` can name them. A build without the lock file says "?".

use std::fmt::Write as _;

/// Crates whose version `--version` reports.
const CRATES: &[&str] = &[
    "flate2",
    "zlib-rs",
    "libdeflater",
    "bzip2",
    "bzip2-sys",
    "zstd",
    "zstd-sys",
    "lz4_flex",
    "lzma-rs",
];

fn main() {
    let lock = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    // (name, version) of every package, and the versions nc-filters itself asks for when the
    // lock file holds two versions of one crate ("bzip2 0.4.4")
    let mut packages: Vec<(String, String)> = Vec::new();
    let mut ours: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let mut in_deps = false;
    for line in text.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            current = None;
            in_deps = false;
        } else if let Some(n) = line
            .strip_prefix("name = \"")
            .and_then(|s| s.strip_suffix('"'))
        {
            current = Some(n.to_string());
        } else if let Some(v) = line
            .strip_prefix("version = \"")
            .and_then(|s| s.strip_suffix('"'))
        {
            if let Some(n) = &current {
                packages.push((n.clone(), v.to_string()));
            }
        } else if line.starts_with("dependencies = [") {
            in_deps = current.as_deref() == Some("nc-filters");
        } else if line == "]" {
            in_deps = false;
        } else if in_deps {
            ours.push(line.trim_matches(|c| c == '"' || c == ',').to_string());
        }
    }
    let mut out = String::from("/// (crate, version) of the codec crates in this build.\npub(crate) const CODEC_CRATES: &[(&str, &str)] = &[\n");
    for name in CRATES {
        let versions: Vec<&String> = packages
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .collect();
        let chosen = match versions.as_slice() {
            [one] => one.to_string(),
            [] => "?".to_string(),
            many => many
                .iter()
                .find(|v| ours.iter().any(|d| d == &format!("{name} {v}")))
                .map_or("?".to_string(), |v| v.to_string()),
        };
        let _ = writeln!(out, "    ({name:?}, {chosen:?}),");
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_default())
        .join("codec_versions.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        println!("cargo:warning=cannot write {}: {e}", dest.display());
    }
}
