//! Issue 20, item 7: the bad-input corpus. Valid classic, netCDF-4 and NCZarr datasets and CDL
//! texts are made at test time, then broken in fixed, seeded ways (truncations at structure
//! boundaries, bit flips, field mutations to huge sizes); the three tools run on every broken
//! input and must each either fail with a message (exit 1, or 3 when the output cannot hold
//! what was read, such as a name with a NUL; something on stderr) or succeed (exit 0). Never a panic (exit 101), a signal, a timeout, a peak RSS above
//! 512 MB, a temporary left beside the output, or a changed input. Nothing binary is
//! committed. `BAD_INPUT_SCALE=n` multiplies the number of mutations per seed (default 1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, run, tempdir};

/// Per run: wall time and peak resident memory allowed.
const TIMEOUT: Duration = Duration::from_secs(20);
const MAX_RSS_KB: u64 = 512 * 1024;

/// A small deterministic generator (xorshift64*), so every run breaks the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const CDL_NC4: &str = r#"netcdf seed4 {
types:
  compound c_t { int x ; double y ; } ;
  int(*) vl_t ;
  ubyte enum e_t { A = 0, B = 1 } ;
dimensions:
  t = UNLIMITED ; x = 6 ; y = 5 ;
variables:
  float v(t, x, y) ;
    v:_ChunkSizes = 1, 3, 5 ;
    v:_DeflateLevel = 2 ;
    v:_Shuffle = "true" ;
    v:units = "K" ;
  int w(x) ;
    w:_Storage = "contiguous" ;
  string s(x) ;
  c_t c(y) ;
  vl_t l(y) ;
  e_t e(y) ;
  double z(x, y) ;
    z:_Fletcher32 = "true" ;
    z:_ChunkSizes = 2, 5 ;
  :title = "seed" ;
  :n = 1, 2, 3 ;

data:
  v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
      31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60 ;
  w = 1, 2, 3, 4, 5, 6 ;
  s = "a", "bb", "", "dddd", "e", "f" ;
  c = {1, 1.5}, {2, 2.5}, {3, 3.5}, {4, 4.5}, {5, 5.5} ;
  l = {1}, {}, {2, 3}, {4}, {5, 6, 7} ;
  e = A, B, A, B, A ;
  z = 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5 ;
group: g {
  dimensions: k = 3 ;
  variables: short q(k) ; q:_Storage = "compact" ;
  data: q = 1, 2, 3 ;
  }
}
"#;

const CDL_CLASSIC: &str = r#"netcdf seed3 {
dimensions:
  t = UNLIMITED ; x = 4 ; n = 3 ;
variables:
  double time(t) ; time:units = "days" ;
  short v(t, x) ; v:_FillValue = -1s ;
  char name(n, x) ;
  float f(x) ;
  :title = "classic seed" ;
data:
  time = 1, 2, 3 ;
  v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
  name = "abc", "de", "f" ;
  f = 0.5, 1.5, 2.5, 3.5 ;
}
"#;

/// NCZarr has atomic types only.
const CDL_ZARR: &str = r#"netcdf seedz {
dimensions:
  t = UNLIMITED ; x = 6 ;
variables:
  float v(t, x) ;
    v:_ChunkSizes = 2, 3 ;
    v:_DeflateLevel = 1 ;
    v:_Shuffle = "true" ;
    v:units = "K" ;
  string s(x) ;
  char c(x) ;
  int64 n ;
  :title = "zarr seed" ;
data:
  v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 ;
  s = "a", "bb", "", "dddd", "e", "f" ;
  c = "abcdef" ;
  n = 7 ;
group: g {
  dimensions: k = 3 ;
  variables: short q(k) ; q:_FillValue = -9s ;
  data: q = 1, _, 3 ;
  }
}
"#;

/// The HDF5 signatures of checksummed and walked structures: truncating just after one and
/// flipping bytes inside one reach the structure parsers, not only the first bytes.
const HDF5_SIGNATURES: [&[u8]; 12] = [
    b"\x89HDF", b"OHDR", b"OCHK", b"BTHD", b"BTIN", b"BTLF", b"FRHP", b"FHDB", b"FHIB", b"FAHD",
    b"EAHD", b"GCOL",
];

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// Broken copies of `bytes`: truncations (at `cuts` and a spread of points), bit flips,
/// and little-endian fields set to huge or edge values (`targets` are offsets worth hitting).
fn mutations(bytes: &[u8], cuts: &[usize], targets: &[usize], seed: u64) -> Vec<Vec<u8>> {
    let scale: usize = std::env::var("BAD_INPUT_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    let n = bytes.len();
    let mut cut_points: Vec<usize> = cuts.iter().flat_map(|&c| [c, c + 4, c + 9]).collect();
    cut_points.extend((1..8).map(|k| n * k / 8));
    cut_points.sort_unstable();
    cut_points.dedup();
    for c in cut_points.into_iter().filter(|&c| c < n) {
        out.push(bytes[..c].to_vec());
    }
    let huge: [u64; 6] = [
        u64::MAX,
        0x7FFF_FFFF,
        0xFFFF_FFFF,
        0x8000_0000_0000_0000,
        1 << 40,
        0,
    ];
    for _ in 0..40 * scale {
        let mut b = bytes.to_vec();
        let at = if !targets.is_empty() && rng.below(2) == 0 {
            (targets[rng.below(targets.len())] + rng.below(48)).min(n - 1)
        } else {
            rng.below(n)
        };
        match rng.below(3) {
            0 => b[at] ^= 1 << rng.below(8),
            1 => {
                let v = huge[rng.below(huge.len())].to_le_bytes();
                let w = [1, 2, 4, 8][rng.below(4)];
                for (k, byte) in v.iter().take(w).enumerate() {
                    if at + k < n {
                        b[at + k] = *byte;
                    }
                }
            }
            _ => {
                for _ in 0..8 {
                    let p = rng.below(n);
                    b[p] = rng.next() as u8;
                }
            }
        }
        out.push(b);
    }
    out
}

#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    clean_errors: usize,
    successes: usize,
    failures: Vec<String>,
}

/// Run `tool args` in `dir`; record a failure unless it exits 0 or 1 with a message, within the
/// time and memory bounds, leaving only `keep` (and an output named `out`) in `dir`.
fn check_run(t: &mut Tally, dir: &Path, tool: &str, args: &[&str], what: &str) {
    t.runs += 1;
    let mut child = Command::new(bin(tool))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut peak_kb = 0u64;
    let status = loop {
        if let Some(kb) = common::vm_hwm_kb(child.id()) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if t0.elapsed() > TIMEOUT {
            // SIGTERM first, so the tool can remove its temporary output as a user's Ctrl-C
            // would let it; then kill
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            std::thread::sleep(Duration::from_secs(2));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    let label = format!("{what}: {tool} {args:?}");
    match status {
        None => t
            .failures
            .push(format!("{label}: timeout after {TIMEOUT:?}")),
        Some(st) => match st.code() {
            Some(0) => t.successes += 1,
            // nc_runtime::exit: 1 the input, 3 the output (a broken input can be readable
            // but hold what no output format can, such as a name with a NUL)
            Some(1 | 3) if !err.trim().is_empty() => t.clean_errors += 1,
            Some(c @ (1 | 3)) => t
                .failures
                .push(format!("{label}: exit {c} with no message")),
            Some(c) => t.failures.push(format!("{label}: exit {c}: {err}")),
            None => t
                .failures
                .push(format!("{label}: killed by a signal: {err}")),
        },
    }
    if err.contains("panicked") {
        t.failures.push(format!("{label}: panic: {err}"));
    }
    if peak_kb > MAX_RSS_KB {
        t.failures
            .push(format!("{label}: peak RSS {} MB", peak_kb / 1024));
    }
}

/// Files in `dir` other than `keep`; outputs are removed, and a leftover temporary is a failure.
fn sweep(t: &mut Tally, dir: &Path, keep: &[&str], what: &str) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if keep.contains(&name.as_str()) {
            continue;
        }
        if name.starts_with('.') {
            t.failures
                .push(format!("{what}: temporary left behind: {name}"));
        }
        let p = e.path();
        if p.is_dir() {
            fs::remove_dir_all(&p).unwrap();
        } else {
            fs::remove_file(&p).unwrap();
        }
    }
}

/// The three kinds of run on one broken dataset `name` in `dir`.
fn exercise_dataset(t: &mut Tally, dir: &Path, input: &str, what: &str) {
    let before = snapshot(&dir.join(input.trim_start_matches("file://")));
    let failed = t.failures.len();
    check_run(t, dir, "ncdump-rs", &["-hs", input], what);
    check_run(t, dir, "ncdump-rs", &[input], what);
    check_run(t, dir, "nccopy-rs", &["-k", "nc4", input, "out.nc"], what);
    check_run(t, dir, "nccopy-rs", &["-k", "nc3", input, "out3.nc"], what);
    let after = snapshot(&dir.join(input.trim_start_matches("file://")));
    if before != after {
        t.failures.push(format!("{what}: the input changed"));
    }
    if t.failures.len() > failed {
        keep_input(dir, &before, what);
    }
}

/// With `BAD_INPUT_KEEP=dir`, the input of a failing run is kept there (as it was before the
/// run) in a directory named after `what`, to reproduce the failure by hand.
fn keep_input(dir: &Path, files: &[(PathBuf, Vec<u8>)], what: &str) {
    let Ok(keep) = std::env::var("BAD_INPUT_KEEP") else {
        return;
    };
    let tag: String = what
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let base = Path::new(&keep).join(tag);
    for (path, bytes) in files {
        let to = match path.strip_prefix(dir) {
            Ok(rel) => base.join(rel),
            Err(_) => base.join(path.file_name().unwrap_or_default()),
        };
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&to, bytes).unwrap();
    }
}

/// A file's bytes, or a directory's files and bytes, to tell whether a run changed it.
fn snapshot(p: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let p = PathBuf::from(p.to_string_lossy().split('#').next().unwrap_or_default());
    if p.is_dir() {
        let mut out = Vec::new();
        let mut stack = vec![p];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let e = e.unwrap().path();
                if e.is_dir() {
                    stack.push(e);
                } else {
                    out.push((e.clone(), fs::read(&e).unwrap()));
                }
            }
        }
        out.sort();
        out
    } else {
        vec![(p.clone(), fs::read(&p).unwrap_or_default())]
    }
}

fn report(t: &Tally, kind: &str) {
    eprintln!(
        "bad input ({kind}): {} runs, {} clean errors, {} exit 0, {} failures",
        t.runs,
        t.clean_errors,
        t.successes,
        t.failures.len()
    );
    assert!(
        t.failures.is_empty(),
        "{} of {} runs broke the rules:\n{}",
        t.failures.len(),
        t.runs,
        t.failures.join("\n")
    );
}

/// Run the tool that makes seeds: ours, or with `BAD_INPUT_SEED_TOOLS=dir` the one in `dir`,
/// so that other tools (`NC_TOOLS_DIR`, e.g. netCDF-C's under our names) can be run on the
/// very same corpus.
fn seed_tool(tool: &str, args: &[&str], dir: &Path) -> std::process::Output {
    match std::env::var("BAD_INPUT_SEED_TOOLS") {
        Ok(tools) => Command::new(Path::new(&tools).join(tool))
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap(),
        Err(_) => run(tool, args, dir),
    }
}

/// Make `name` from CDL text with ncgen-rs (`args` choose the format).
fn seed_file(dir: &Path, cdl: &str, args: &[&str], name: &str) -> Vec<u8> {
    fs::write(dir.join("seed.cdl"), cdl).unwrap();
    let mut a = args.to_vec();
    a.extend(["-o", name, "seed.cdl"]);
    let o = seed_tool("ncgen-rs", &a, dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = fs::read(dir.join(name)).unwrap();
    fs::remove_file(dir.join(name)).unwrap();
    fs::remove_file(dir.join("seed.cdl")).unwrap();
    b
}

#[test]
fn broken_netcdf4_files() {
    let d = tempdir("bad-nc4");
    let seed = seed_file(&d, CDL_NC4, &["-4"], "s.nc");
    let cuts: Vec<usize> = HDF5_SIGNATURES
        .iter()
        .flat_map(|s| find_all(&seed, s))
        .collect();
    let mut t = Tally::default();
    for (i, bytes) in mutations(&seed, &cuts, &cuts, 0x5eed_0004)
        .iter()
        .enumerate()
    {
        fs::write(d.join("in.nc"), bytes).unwrap();
        exercise_dataset(&mut t, &d, "in.nc", &format!("netCDF-4 #{i}"));
        sweep(&mut t, &d, &["in.nc"], &format!("netCDF-4 #{i}"));
    }
    report(&t, "netCDF-4");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn broken_classic_files() {
    let d = tempdir("bad-classic");
    let mut t = Tally::default();
    for (k, fmt) in ["classic", "64-bit offset", "cdf5"].iter().enumerate() {
        let seed = seed_file(&d, CDL_CLASSIC, &["-k", fmt], "s.nc");
        // header fields: the magic, counts and tags in the first 200 bytes
        let targets: Vec<usize> = (0..seed.len().min(200)).step_by(4).collect();
        let cuts = [4, 8, 12, 32, 64, 96];
        for (i, bytes) in mutations(&seed, &cuts, &targets, 0x5eed_0300 + k as u64)
            .iter()
            .enumerate()
        {
            fs::write(d.join("in.nc"), bytes).unwrap();
            exercise_dataset(&mut t, &d, "in.nc", &format!("{fmt} #{i}"));
            sweep(&mut t, &d, &["in.nc"], &format!("{fmt} #{i}"));
        }
    }
    report(&t, "classic");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn broken_nczarr_stores() {
    let d = tempdir("bad-zarr");
    let nc = seed_file(&d, CDL_ZARR, &["-4"], "s.nc");
    fs::write(d.join("s.nc"), &nc).unwrap();
    // `BAD_INPUT_NCZARR_LAYOUT=4.9` writes the seed in netCDF-C 4.9.0's layout, which that
    // version reads (it crashes on the default 4.10 layout), to compare it on the same corpus
    let layout = std::env::var("BAD_INPUT_NCZARR_LAYOUT")
        .map(|l| format!(",layout={l}"))
        .unwrap_or_default();
    let url = format!(
        "file://{}#mode=nczarr,file{layout}",
        d.join("seed.zarr").display()
    );
    let o = seed_tool("nccopy-rs", &["s.nc", &url], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    fs::remove_file(d.join("s.nc")).unwrap();
    // every object of the store, broken one at a time
    let mut objects = Vec::new();
    let mut stack = vec![d.join("seed.zarr")];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                objects.push(p);
            }
        }
    }
    objects.sort();
    let mut t = Tally::default();
    let input = format!("file://{}#mode=nczarr,file", d.join("in.zarr").display());
    for (k, obj) in objects.iter().enumerate() {
        let original = fs::read(obj).unwrap();
        if original.is_empty() {
            continue;
        }
        let rel = obj.strip_prefix(d.join("seed.zarr")).unwrap().to_path_buf();
        // JSON: its quotes, colons and digits are the fields worth hitting
        let targets: Vec<usize> = original
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, b':' | b'"' | b'[' | b'0'..=b'9'))
            .map(|(i, _)| i)
            .collect();
        let mut muts = mutations(&original, &[], &targets, 0x5eed_2000 + k as u64);
        muts.truncate(12);
        muts.push(Vec::new());
        for (i, bytes) in muts.iter().enumerate() {
            let _ = fs::remove_dir_all(d.join("in.zarr"));
            copy_tree(&d.join("seed.zarr"), &d.join("in.zarr"));
            fs::write(d.join("in.zarr").join(&rel), bytes).unwrap();
            let what = format!("NCZarr {} #{i}", rel.display());
            exercise_dataset(&mut t, &d, &input, &what);
            sweep(&mut t, &d, &["in.zarr", "seed.zarr"], &what);
        }
    }
    report(&t, "NCZarr");
    fs::remove_dir_all(&d).unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let q = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &q);
        } else {
            fs::copy(&p, &q).unwrap();
        }
    }
}

#[test]
fn broken_cdl_texts() {
    let d = tempdir("bad-cdl");
    let mut t = Tally::default();
    let mut k = 0u64;
    for (text, fmt) in [(CDL_NC4, "-4"), (CDL_CLASSIC, "-3")] {
        let bytes = text.as_bytes();
        let targets: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, b'=' | b';' | b'{' | b'(' | b'0'..=b'9'))
            .map(|(i, _)| i)
            .collect();
        k += 1;
        let mut muts = mutations(bytes, &[], &targets, 0x5eed_cd10 + k);
        // crafted huge declarations
        for huge in [
            "dimensions:\n  big = 4000000000 ;\nvariables:\n  double h(big) ;\ndata:\n  h = 1 ;",
            "types:\n  opaque(4294967296) o_t ;\nvariables:\n  o_t o ;",
            "dimensions:\n  a = 100000 ; b = 100000 ;\nvariables:\n  double h(a, b) ;\n  h:_ChunkSizes = 100000, 100000 ;",
            "dimensions:\n  a = 3 ;\nvariables:\n  int h(a) ;\n  h:_ChunkSizes = 4294967295 ;",
        ] {
            muts.push(format!("netcdf huge {{\n{huge}\n}}\n").into_bytes());
        }
        for (i, m) in muts.iter().enumerate() {
            fs::write(d.join("in.cdl"), m).unwrap();
            let what = format!("CDL {fmt} #{i}");
            check_run(
                &mut t,
                &d,
                "ncgen-rs",
                &[fmt, "-o", "out.nc", "in.cdl"],
                &what,
            );
            check_run(&mut t, &d, "ncgen-rs", &["in.cdl"], &what);
            sweep(&mut t, &d, &["in.cdl"], &what);
        }
    }
    report(&t, "CDL");
    fs::remove_dir_all(&d).unwrap();
}
