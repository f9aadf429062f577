//! Cross-check of the netCDF-4 writer against netCDF-C: for each CDL of the corpus, netCDF-C's
//! `ncdump -s` of our file must equal `ncdump -s` of the file netCDF-C's `ncgen -k nc4` writes
//! (ignoring `_NCProperties`), `h5dump -p -H` must show the same filter pipelines, and
//! netCDF4-python and h5py must read the same values. Skips when the reference tools are absent.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use nc_dataset::{Format, InMemory};
use nc_hdf5::{write_file, Nc4WriteOptions};

const NCGEN: &str = "/usr/bin/ncgen";
const NCDUMP: &str = "/usr/bin/ncdump";
const PLUGINS: &str = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins";
const H5DUMP: &str = "/usr/bin/h5dump";

/// Reads every variable and attribute of two files with netCDF4-python and every dataset with
/// h5py, and prints OK when both files give the same values.
const PY_CHECK: &str = r#"import sys, numpy as np
import netCDF4, h5py
def walk_nc(g, out, path=""):
    for n, v in g.variables.items():
        v.set_auto_mask(False)
        try:
            out[path + "/" + n] = v[...]
        except Exception as e:
            out[path + "/" + n] = "ERR " + type(e).__name__
    for n, a in g.__dict__.items():
        out[path + "/@" + n] = a
    for n, c in g.groups.items():
        walk_nc(c, out, path + "/" + n)
def walk_h5(f):
    out = {}
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            try:
                out[name] = obj[()]
            except Exception as e:
                out[name] = "ERR " + type(e).__name__
    f.visititems(visit)
    return out
def same(a, b):
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a = np.asarray(a); b = np.asarray(b)
            if a.dtype.kind == 'f':
                return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
            return a.shape == b.shape and bool(np.all(a == b))
        return a == b
    except Exception:
        return repr(a) == repr(b)
def compare(ref, ours):
    bad = []
    a, b = {}, {}
    walk_nc(netCDF4.Dataset(ref), a); walk_nc(netCDF4.Dataset(ours), b)
    for k in sorted(set(a) | set(b)):
        if k.endswith("@_NCProperties"): continue
        if k not in a or k not in b or not same(a[k], b[k]): bad.append("netCDF4 " + k)
    a = walk_h5(h5py.File(ref, "r")); b = walk_h5(h5py.File(ours, "r"))
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b or not same(a[k], b[k]): bad.append("h5py " + k)
    return "OK" if not bad else "DIFF " + ", ".join(bad[:5])
# pairs of files on the command line: one line of verdict each
args = sys.argv[1:]
for ref, ours in zip(args[0::2], args[1::2]):
    try:
        print(compare(ref, ours))
    except Exception as e:
        print("ERROR " + type(e).__name__ + ": " + str(e).replace("\n", " "))
"#;

/// The filter pipelines `h5dump -p -H` shows, per dataset: the lines inside `FILTERS { }`
/// without the free-text `COMMENT` (the filter name, which rust-hdf5 does not store), and the
/// type of the `dimension` field of `REFERENCE_LIST` attributes.
fn h5dump_filters(path: &Path) -> Option<Vec<String>> {
    let out = Command::new(H5DUMP)
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .args(["-p", "-H"])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut got = Vec::new();
    let mut dataset = String::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("DATASET ") {
            dataset = rest.to_string();
        }
        // the REFERENCE_LIST member netCDF-C (H5DS) types as a signed int
        if t.ends_with("\"dimension\";") {
            got.push(format!("{dataset}: REFERENCE_LIST {t}"));
        }
        if t == "FILTERS {" {
            depth = 1;
            continue;
        }
        if depth > 0 {
            if t.ends_with('{') {
                depth += 1;
            }
            if t == "}" {
                depth -= 1;
                if depth == 0 {
                    continue;
                }
            }
            if !t.starts_with("COMMENT") {
                got.push(format!("{dataset}: {t}"));
            }
        }
    }
    Some(got)
}

/// Result of the Python readers on the two files: `Some(Ok(()))` when they agree, None when
/// Python or its modules are missing.
/// netCDF4-python's and h5py's verdict on each pair of files, by one Python process (its
/// imports cost more than a comparison); `None` when Python lacks those modules.
fn python_agrees(pairs: &[(&Path, &Path)]) -> Option<Vec<Result<(), String>>> {
    if pairs.is_empty() {
        return Some(Vec::new());
    }
    let out = Command::new("python3")
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .arg("-c")
        .arg(PY_CHECK)
        .args(pairs.iter().flat_map(|(a, b)| [a, b]))
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("ModuleNotFoundError") {
            return None;
        }
        panic!("the Python check failed: {err}");
    }
    let verdicts: Vec<Result<(), String>> = text
        .lines()
        .map(|l| {
            if l == "OK" {
                Ok(())
            } else {
                Err(l.to_string())
            }
        })
        .collect();
    assert_eq!(verdicts.len(), pairs.len(), "{text}");
    Some(verdicts)
}

fn tools_present() -> bool {
    Path::new(NCGEN).exists() && Path::new(NCDUMP).exists()
}

fn ncdump_s(path: &Path, name: &str) -> Option<String> {
    ncdump_s_args(path, name, &["-s"])
}

fn ncdump_s_args(path: &Path, name: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(NCDUMP)
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .args(args)
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
    /// netCDF-C's tools see the same file: the Python readers are asked next.
    ToReaders(PathBuf, PathBuf),
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
    let (Some(mut a), Some(mut b)) = (ncdump_s(&theirs, &stem), ncdump_s(&ours, &stem)) else {
        return Outcome::DumpFailed;
    };
    if a != b && ncdump_s(&theirs, &stem).as_ref() != Some(&a) {
        // netCDF-C's own file dumps differently each time: `_NoFill` variables with unwritten
        // chunks read uninitialized memory. Compare the headers only.
        let h = |p: &Path| ncdump_s_args(p, &stem, &["-hs"]);
        let (Some(ha), Some(hb)) = (h(&theirs), h(&ours)) else {
            return Outcome::DumpFailed;
        };
        (a, b) = (ha, hb);
    }
    if a == b {
        if Path::new(H5DUMP).exists() {
            let (fa, fb) = (h5dump_filters(&theirs), h5dump_filters(&ours));
            if fa != fb {
                return Outcome::Differs(format!(
                    "    h5dump -p -H filters: ref {fa:?}\n    ours {fb:?}"
                ));
            }
        }
        Outcome::ToReaders(theirs, ours)
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

/// Cases the corpus lacks: a variable named like a dimension it is not the coordinate of, a
/// 2-D variable named like a dimension, big-endian, `_NoFill`, compact, a filter chain with
/// fletcher32 and shuffle, attributes of the new types, nested groups using outer dimensions.
const EXTRA: &[(&str, &str)] = &[(
    "extra_noncoord",
    r#"netcdf noncoord {
dimensions:
  x = 3 ; y = 2 ; t = UNLIMITED ;
variables:
  int x(y) ;
  float y(y, x) ;
  double t(t) ;
  short v(t, y) ;
    v:_Endianness = "big" ;
    v:_NoFill = "true" ;
  ubyte u(x) ;
    u:_Storage = "compact" ;
  uint64 w(t, x, y) ;
    w:_Filter = "1,5|2" ;
    w:_Fletcher32 = "true" ;
  :g = 1UB, 2UB ;
  :h = 1.5f ;
  :i = -5LL, 7LL ;
  string :s = "a", "b" ;
data:
  x = 1, 2 ;
  y = 1, 2, 3, 4, 5, 6 ;
  t = 10, 20, 30 ;
  v = 1, 2, 3, 4, 5, 6 ;
  u = 7, 8, 9 ;
  w = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18 ;
group: sub {
  dimensions: z = 4 ;
  variables:
    int z(z) ;
    float q(x, z) ;
      q:_ChunkSizes = 2, 3 ;
      q:_DeflateLevel = 2 ;
    string names(z) ;
  data:
    z = 1, 2, 3, 4 ;
    q = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
    names = "a", "bb", "", "dddd" ;
  group: deeper {
    variables: int r(t) ; r:_ChunkSizes = 2 ;
    data: r = 1, 2, 3 ;
  }
}
}
"#,
)];

fn corpus(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (name, text) in EXTRA {
        let p = dir.join(format!("{name}.cdl"));
        std::fs::write(&p, text).unwrap();
        out.push(p);
    }
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
            // the big*.cdl cases define multi-GB variables: too slow for a unit test (unless
            // asked for by NC_WRITE_ONLY)
            .filter(|p| {
                std::env::var_os("NC_WRITE_ONLY").is_some()
                    || !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("big"))
            })
            .filter(|p| {
                std::env::var("NC_WRITE_ONLY")
                    .map_or(true, |only| p.to_string_lossy().contains(&only))
            })
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

/// Ask the Python readers about every pair netCDF-C's tools found equal, in one process: a
/// pair they read differently differs, unless they read netCDF-C's own file differently
/// from itself (uninitialized `_NoFill` data): then they cannot judge it.
fn judge_by_readers(outcomes: &mut [Outcome]) {
    let asked: Vec<usize> = (0..outcomes.len())
        .filter(|&i| matches!(outcomes[i], Outcome::ToReaders(..)))
        .collect();
    let pairs: Vec<(PathBuf, PathBuf)> = asked
        .iter()
        .filter_map(|&i| match &outcomes[i] {
            Outcome::ToReaders(a, b) => Some((a.clone(), b.clone())),
            _ => None,
        })
        .collect();
    let borrowed: Vec<(&Path, &Path)> = pairs
        .iter()
        .map(|(a, b)| (a.as_path(), b.as_path()))
        .collect();
    let verdicts = python_agrees(&borrowed);
    let failed: Vec<usize> = verdicts.as_ref().map_or(Vec::new(), |v| {
        (0..v.len()).filter(|&k| v[k].is_err()).collect()
    });
    let selves: Vec<(&Path, &Path)> = failed
        .iter()
        .map(|&k| (borrowed[k].0, borrowed[k].0))
        .collect();
    let own = python_agrees(&selves);
    for (k, &i) in asked.iter().enumerate() {
        let verdict = verdicts.as_ref().map(|v| &v[k]);
        let own = failed
            .iter()
            .position(|&f| f == k)
            .and_then(|j| own.as_ref().map(|o| &o[j]));
        outcomes[i] = match verdict {
            Some(Err(e)) if own.is_none_or(Result::is_ok) => {
                Outcome::Differs(format!("    python readers: {e}"))
            }
            _ => Outcome::Match,
        };
    }
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
    let cdls: Vec<PathBuf> = corpus(&dir)
        .into_iter()
        .filter(|cdl| {
            let known = KNOWN_DIFFERENT
                .iter()
                .find(|(f, _)| cdl.file_name().is_some_and(|n| n == *f));
            if let Some((_, why)) = known {
                eprintln!("not compared: {}: {why}", cdl.display());
            }
            known.is_none()
        })
        .collect();
    // each file's netCDF-C tools run on a few threads (they wait for child processes)
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes: Vec<std::sync::Mutex<Option<Outcome>>> =
        cdls.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(cdl) = cdls.get(i) else { break };
                *outcomes[i].lock().unwrap() = Some(check(cdl, &dir));
            });
        }
    });
    let mut outcomes: Vec<Outcome> = outcomes
        .into_iter()
        .map(|o| o.into_inner().unwrap().unwrap())
        .collect();
    judge_by_readers(&mut outcomes);
    for (cdl, outcome) in cdls.iter().zip(outcomes) {
        let name = cdl.display().to_string();
        match outcome {
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
            Outcome::ToReaders(..) => unreachable!("judged by judge_by_readers"),
        }
    }
    if std::env::var_os("NC_WRITE_KEEP").is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
    eprintln!("{report}");
    eprintln!("matched {matched} of {tried} (skipped {skipped}: netCDF-C or our parser refused)");
    // the floor grows as the writer does; it must never drop
    assert!(
        matched >= MATCH_FLOOR || std::env::var_os("NC_WRITE_ONLY").is_some(),
        "only {matched} matched, floor is {MATCH_FLOOR}"
    );
}

/// Number of corpus files known to match.
const MATCH_FLOOR: usize = 126;

/// Corpus files where netCDF-C's file is wrong (docs/compat.md), so values differ by design.
const KNOWN_DIFFERENT: &[(&str, &str)] = &[(
    "ref_tst_unlim2.cdl",
    "4.9.0's ncgen runs the strings of cuuu together across records; ours follow the braces",
)];
