//! Shared helpers of the end-to-end tests: find the built binaries, run them, compare texts.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `testdata/…`
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// Path of a built tool (`ncgen-rs`, `ncdump-rs`, `nccopy-rs`): `$NC_TOOLS_DIR/name` if set, else
/// in this test's own profile directory (target/<profile>/name). `cargo test` does not build other
/// packages' binaries, so the first call runs `cargo build` for the three tools (a no-op when
/// they are up to date).
pub fn bin(name: &str) -> PathBuf {
    if let Ok(dir) = std::env::var("NC_TOOLS_DIR") {
        return PathBuf::from(dir).join(name);
    }
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let profile_dir = BUILT.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        // target/<profile>/deps/test-xxxx -> target/<profile>/
        let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let target_dir = profile_dir.parent().unwrap();
        let profile = profile_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "-q",
            "-p",
            "ncgen-rs",
            "-p",
            "ncdump-rs",
            "-p",
            "nccopy-rs",
        ])
        .env("CARGO_TARGET_DIR", target_dir)
        .current_dir(root());
        if profile == "release" {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("cannot run cargo to build the tools");
        assert!(st.success(), "building the tools failed");
        profile_dir
    });
    profile_dir.join(name)
}

/// Run a tool with arguments in `dir`.
pub fn run(tool: &str, args: &[&str], dir: &Path) -> Output {
    Command::new(bin(tool))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"))
}

/// Run a tool with arguments in `dir`; it must succeed (else its standard error is the
/// failure message).
pub fn run_ok(tool: &str, args: &[&str], dir: &Path) -> Output {
    let out = run(tool, args, dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run the reference tool `name` (netCDF-C's, from `PATH`) with arguments in `dir`; it must
/// succeed (else its standard error is the failure message).
pub fn reference_ok(name: &str, args: &[&str], dir: &Path) -> Output {
    let out = Command::new(name)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"));
    assert!(
        out.status.success(),
        "{name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Is the netCDF-C reference tool `name` installed?
pub fn have_reference(name: &str) -> bool {
    Command::new(name).arg("-h").output().is_ok()
}

/// True, after printing a `SKIP` line that names them, when any of the reference tools `names`
/// is not installed (a test then returns early).
pub fn missing_references(names: &[&str]) -> bool {
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !have_reference(n))
        .collect();
    if missing.is_empty() {
        return false;
    }
    eprintln!(
        "SKIP: reference tool(s) not installed: {}",
        missing.join(", ")
    );
    true
}

/// A fresh temporary directory under the target dir.
pub fn tempdir(tag: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let d = exe
        .parent()
        .unwrap()
        .join("e2e-tmp")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compare two texts; on difference, describe the first differing line.
pub fn diff(expected: &[u8], got: &[u8]) -> Option<String> {
    if expected == got {
        return None;
    }
    let e = String::from_utf8_lossy(expected);
    let g = String::from_utf8_lossy(got);
    let el: Vec<&str> = e.split('\n').collect();
    let gl: Vec<&str> = g.split('\n').collect();
    for i in 0..el.len().max(gl.len()) {
        let a = el.get(i).copied().unwrap_or("<end>");
        let b = gl.get(i).copied().unwrap_or("<end>");
        if a != b {
            return Some(format!(
                "line {}:\n  expected: {a:?}\n  got:      {b:?}",
                i + 1
            ));
        }
    }
    Some("texts differ (line endings?)".into())
}

/// Run the Python `script` in `dir` and return its stdout; `None`, after a SKIP line naming
/// `needs`, when python3 cannot run the `probe` (imports, a version check). A failing script
/// fails the test with its stderr.
pub fn python_script(dir: &Path, probe: &str, needs: &str, script: &str) -> Option<Vec<u8>> {
    let ok = Command::new("python3")
        .args(["-c", probe])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: python3 with {needs} not installed");
        return None;
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

/// The peak resident memory so far (VmHWM, KiB) of a running process, `None` once it is gone.
pub fn vm_hwm_kb(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Run `cmd` with its output captured and return the output with its peak resident memory in
/// MiB (VmHWM, polled every 2 ms while it runs).
pub fn run_measured(cmd: &mut Command) -> (Output, u64) {
    run_measured_within(cmd, std::time::Duration::from_secs(600))
}

/// [`run_measured`], killing the process and failing the test when it still runs after
/// `limit` (a hang guard, not a speed test: the limit is far above the expected time).
pub fn run_measured_within(cmd: &mut Command, limit: std::time::Duration) -> (Output, u64) {
    let began = std::time::Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut peak_kb = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Some(kb) = vm_hwm_kb(child.id()) {
            peak_kb = peak_kb.max(kb);
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} still ran after {limit:?} (peak {} MiB): killed",
                peak_kb / 1024
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    (child.wait_with_output().unwrap(), peak_kb / 1024)
}

/// hdf5plugin's plugin directory (bzip2, blosc, lz4, zstd for netCDF-C's tools), from
/// `python3 -c "import hdf5plugin"`, asked once per test binary (the import takes most of a
/// second); `None` when Python lacks hdf5plugin.
pub fn hdf5plugin_dir() -> Option<&'static str> {
    static DIR: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let o = Command::new("python3")
            .args(["-c", "import hdf5plugin; print(hdf5plugin.PLUGIN_PATH)"])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
        (!p.is_empty()).then_some(p)
    })
    .as_deref()
}
