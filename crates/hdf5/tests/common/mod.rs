//! Helpers shared by the integration tests: temporary files made by the installed netCDF-C
//! `ncgen` and by python3's h5py; each helper returns `None` (and the test skips) when the
//! tool is missing.

#![allow(dead_code, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's HDF5 filter plugins (bzip2, lz4, ...) live.
pub const PLUGINS: &str = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins";

/// A fresh directory for one test, removed when the test is done with it (kept when the test
/// fails, to look at).
pub struct TmpDir(PathBuf);

impl std::ops::Deref for TmpDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TmpDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A fresh directory for one test.
pub fn tmp_dir(test: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("nc-hdf5-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    TmpDir(d)
}

/// True when the reference netCDF-C tools are installed.
pub fn have_netcdf_tools() -> bool {
    Path::new("/usr/bin/ncgen").exists() && Path::new("/usr/bin/ncdump").exists()
}

/// `ncgen -k <kind> -o <dir>/<name>.nc` of `cdl`; None (with a message) without ncgen.
pub fn ncgen(dir: &Path, name: &str, kind: &str, cdl: &str) -> Option<PathBuf> {
    if !have_netcdf_tools() {
        eprintln!("SKIPPED: /usr/bin/ncgen not installed");
        return None;
    }
    let cdl_path = dir.join(format!("{name}.cdl"));
    std::fs::write(&cdl_path, cdl).expect("write cdl");
    let out = dir.join(format!("{name}.nc"));
    let st = Command::new("/usr/bin/ncgen")
        .args(["-k", kind, "-o"])
        .arg(&out)
        .arg(&cdl_path)
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .status()
        .expect("run ncgen");
    assert!(st.success(), "ncgen failed on {name}");
    Some(out)
}

/// Run a python3 script (with h5py) in `dir`; false (with a message) when python3 or h5py is
/// missing.
pub fn python(dir: &Path, script: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import h5py, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: python3 with h5py not installed");
        return false;
    }
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// `ncdump <args> <file>` stdout.
pub fn ncdump(args: &[&str], file: &Path) -> String {
    let out = Command::new("/usr/bin/ncdump")
        .args(args)
        .arg(file)
        .env("HDF5_PLUGIN_PATH", PLUGINS)
        .output()
        .expect("run ncdump");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run `script` with h5py in a fresh directory; None (test skipped) without h5py.
pub fn files(test: &str, script: &str) -> Option<TmpDir> {
    let dir = tmp_dir(test);
    python(&dir, script).then_some(dir)
}

/// Our CDL of `file` (ncdump's default options) and the reader's warnings.
pub fn ours(file: &Path) -> (String, Vec<String>) {
    let f = nc_hdf5::Nc4File::open(file).expect("open");
    let mut out = Vec::new();
    nc_cdl::print(f.dataset(), &f, &nc_cdl::DumpOptions::default(), &mut out).expect("print");
    (
        String::from_utf8(out).expect("utf-8"),
        f.warnings().to_vec(),
    )
}

/// netCDF-C 4.9.0's `ncdump` of `file`, run in the file's directory; None (with a SKIP line)
/// when it is not installed.
pub fn reference(file: &Path) -> Option<String> {
    if !have_netcdf_tools() {
        eprintln!("SKIP: /usr/bin/ncdump not installed, comparing with netCDF-C skipped");
        return None;
    }
    let out = Command::new("/usr/bin/ncdump")
        .arg(file.file_name().unwrap())
        .current_dir(file.parent().unwrap())
        .output()
        .expect("run ncdump");
    assert!(
        out.status.success(),
        "ncdump failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Our CDL equals ncdump's (when installed); returns ours and the warnings.
pub fn same_as_ncdump(file: &Path) -> (String, Vec<String>) {
    let (cdl, warnings) = ours(file);
    if let Some(want) = reference(file) {
        assert_eq!(cdl, want, "CDL of {} differs from ncdump's", file.display());
    }
    (cdl, warnings)
}
