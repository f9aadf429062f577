//! The `dap4.*` cases of the conformance corpus (`/work/shared/conformance/cases`, or
//! `NC_CONFORMANCE_CASES`): each `.dap` response is decoded with `nc_dap::dap4::open_response`,
//! printed as ncdump-rs prints it, and compared with netCDF-C 4.9.0's expected `.dmp` under the
//! case's normalisation (`wB`: white space and blank lines ignored; `ws`: white space ignored).
//! Every case is reported; the test fails if any differs. Without the corpus it is skipped.

use std::path::{Path, PathBuf};

use nc_cdl::DumpOptions;
use nc_dataset::InMemory;

fn cases_dir() -> PathBuf {
    match std::env::var_os("NC_CONFORMANCE_CASES") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases"),
    }
}

/// One case: its id, the response file, whether `-h` is asked, the expected file, the mode.
struct Case {
    id: String,
    response: PathBuf,
    header_only: bool,
    expected: PathBuf,
    normalisation: String,
}

/// The `dap4.*` rows whose command is `ncdump [-h] "URL"` for a `file:` URL of a response.
fn dap4_cases(dir: &Path) -> Vec<Case> {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap_or_default();
    let mut out = Vec::new();
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 7 || !cols[0].starts_with("dap4.") || cols[5] != "file" {
            continue;
        }
        let Some(rest) = cols[3].strip_prefix("ncdump ") else {
            continue;
        };
        let (header_only, url) = match rest.strip_prefix("-h ") {
            Some(u) => (true, u),
            None => (false, rest),
        };
        let url = url.trim_matches('"');
        // [log][dap4]file://$CASES/..., file:$CASES/..., file://$CASES/...#dap4
        let Some(i) = url.find("$CASES/") else {
            continue;
        };
        let path = url[i + "$CASES/".len()..].split('#').next().unwrap_or("");
        out.push(Case {
            id: cols[0].to_string(),
            response: dir.join(format!("{path}.dap")),
            header_only,
            expected: dir.join(cols[4]),
            normalisation: cols[6].to_string(),
        });
    }
    out
}

/// Lines compared as `diff -w` (all white space ignored), and with `-B` blank lines dropped.
fn normalise(text: &str, drop_blank: bool) -> Vec<String> {
    text.lines()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<String>())
        .filter(|l| !(drop_blank && l.is_empty()))
        .collect()
}

/// The dump ncdump-rs would print for `response`, or the error.
fn dump(response: &Path, header_only: bool) -> Result<String, String> {
    let bytes = std::fs::read(response).map_err(|e| format!("{}: {e}", response.display()))?;
    let display = response.display().to_string();
    let (mut ds, data, _warnings) =
        nc_dap::dap4::open_response(&bytes, &display).map_err(|e| e.to_string())?;
    for (v, values) in data.values {
        ds.var_mut(v).data = Some(values);
    }
    // the URL's last component without its extension (`test_one_var.nc.dap` -> `test_one_var`)
    let stem = response.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let name = match stem.rfind('.') {
        Some(i) if i > 0 => &stem[..i],
        _ => stem,
    };
    let opts = DumpOptions {
        header_only,
        name: Some(name.to_string()),
        ..DumpOptions::default()
    };
    let mut out = Vec::new();
    nc_cdl::print(&ds, &InMemory, &opts, &mut out).map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

#[test]
fn dap4_responses_dump_as_netcdf_c_does() {
    let dir = cases_dir();
    if !dir.join("MANIFEST.tsv").exists() {
        println!(
            "skipped: no conformance corpus at {} (set NC_CONFORMANCE_CASES)",
            dir.display()
        );
        return;
    }
    let cases = dap4_cases(&dir);
    assert!(!cases.is_empty(), "no dap4 cases in {}", dir.display());
    let mut failed = Vec::new();
    for c in &cases {
        let expected = std::fs::read_to_string(&c.expected).unwrap_or_default();
        let verdict = match dump(&c.response, c.header_only) {
            Err(e) => Err(format!("error: {e}")),
            Ok(got) if got == expected => Ok("pass-exact"),
            Ok(got) => {
                let drop_blank = c.normalisation.contains('B');
                let (g, e) = (
                    normalise(&got, drop_blank),
                    normalise(&expected, drop_blank),
                );
                if g == e {
                    Ok("pass-normalised")
                } else {
                    let i = g.iter().zip(&e).take_while(|(a, b)| a == b).count();
                    Err(format!(
                        "first difference at normalised line {}: got {:?}, expected {:?}",
                        i + 1,
                        g.get(i).map_or("<end>", |s| s.as_str()),
                        e.get(i).map_or("<end>", |s| s.as_str())
                    ))
                }
            }
        };
        match verdict {
            Ok(v) => println!("{:<40} {v}", c.id),
            Err(why) => {
                println!("{:<40} FAIL {why}", c.id);
                failed.push(c.id.clone());
            }
        }
    }
    println!(
        "dap4 baselines: {} passed, {} failed",
        cases.len() - failed.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "failing dap4 cases: {failed:?}");
}

/// Byte-for-byte against the reference: when netCDF-C's `ncdump` is on PATH, every response of
/// the corpus (`daptestfiles/`, `misctestfiles/`) dumps exactly as `ncdump "[dap4]file://..."`
/// prints it, and with `-h` too. Skipped without the corpus or without `ncdump`.
#[test]
fn dap4_responses_dump_exactly_as_reference_ncdump() {
    let dir = cases_dir().join("dap4");
    let mut files: Vec<PathBuf> = ["daptestfiles", "misctestfiles"]
        .iter()
        .filter_map(|d| std::fs::read_dir(dir.join(d)).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dap"))
        .collect();
    files.sort();
    if files.is_empty() {
        println!("skipped: no DAP4 responses under {}", dir.display());
        return;
    }
    let probe = std::process::Command::new("ncdump").output();
    if probe.is_err() {
        println!("skipped: no reference ncdump on PATH");
        return;
    }
    let mut failed = Vec::new();
    for f in &files {
        let url = format!("[dap4]file://{}", f.with_extension("").display());
        for header_only in [false, true] {
            let mut cmd = std::process::Command::new("ncdump");
            if header_only {
                cmd.arg("-h");
            }
            let Ok(r) = cmd.arg(&url).output() else {
                continue;
            };
            let want = String::from_utf8_lossy(&r.stdout).into_owned();
            let got = dump(f, header_only).unwrap_or_else(|e| format!("error: {e}"));
            let name = format!("{}{}", if header_only { "-h " } else { "" }, f.display());
            if got == want {
                println!("{name}: identical");
            } else {
                let (g, w): (Vec<&str>, Vec<&str>) =
                    (got.lines().collect(), want.lines().collect());
                let i = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
                println!(
                    "{name}: DIFFERS at line {}: got {:?}, reference {:?}",
                    i + 1,
                    g.get(i).unwrap_or(&"<end>"),
                    w.get(i).unwrap_or(&"<end>")
                );
                failed.push(name);
            }
        }
    }
    assert!(failed.is_empty(), "differ from the reference: {failed:?}");
}
