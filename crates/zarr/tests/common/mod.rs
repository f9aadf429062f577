//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use nc_dataset::{DataSource, Dataset, FilterSpec};
use nc_zarr::{ZarrError, ZarrFile, ZarrModes, ZarrWriteOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shared conformance cases, if present.
pub fn cases() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipping: {} not found", p.display());
        None
    }
}

/// A fresh temporary directory.
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nc-zarr-it-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A filter of the chain: HDF5 filter `id` with its client parameters.
pub fn filter(id: u32, params: &[u32]) -> FilterSpec {
    FilterSpec {
        id,
        params: params.to_vec(),
    }
}

/// Extract a zip archive into `dir`.
pub fn unzip(zip: &Path, dir: &Path) {
    let f = std::fs::File::open(zip).unwrap();
    let mut a = zip::ZipArchive::new(f).unwrap();
    a.extract(dir).unwrap();
}

/// Open the store a location names, through nc-store's door as nc-dispatch does.
pub fn open_at(loc: &str) -> Result<ZarrFile, ZarrError> {
    let l = nc_store::Location::parse(loc).unwrap_or_else(|e| panic!("{loc}: {e}"));
    assert!(l.names_store(), "not a store location: {loc}");
    ZarrFile::open(
        l.open_store()?,
        &l.display(),
        &l.dataset_name(),
        &ZarrModes::from(&l.store_modes()),
    )
}

/// Write `ds` (data from `src`) as the store a location names.
pub fn write_at(
    loc: &str,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ZarrWriteOptions,
) -> Result<(), ZarrError> {
    let l = nc_store::Location::parse(loc).unwrap_or_else(|e| panic!("{loc}: {e}"));
    assert!(l.names_store(), "not a store location: {loc}");
    let create = || l.create_store(nc_zarr::metadata_rank);
    nc_zarr::write_store(create, ds, src, &ZarrModes::from(&l.store_modes()), opts)
}

/// Open a location.
pub fn open(loc: &str) -> ZarrFile {
    open_at(loc).unwrap_or_else(|e| panic!("{loc}: {e}"))
}

/// Our ncdump: print a dataset read through `src`.
pub fn print(
    ds: &Dataset,
    src: &dyn DataSource,
    header: bool,
    special: bool,
    name: Option<&str>,
) -> String {
    let opts = nc_cdl::DumpOptions {
        header_only: header,
        special,
        name: name.map(str::to_string),
        ..Default::default()
    };
    let mut out = Vec::new();
    nc_cdl::print(ds, src, &opts, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Dump a store with our reader.
pub fn dump(loc: &str, header: bool, special: bool, name: Option<&str>) -> String {
    let f = open(loc);
    print(f.dataset(), &f, header, special, name)
}

/// Parse a CDL file.
pub fn cdl(path: &Path) -> Dataset {
    nc_cdl::parse_cdl_file(path, &nc_cdl::ParseOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Write a dataset (in-memory data) to a location.
pub fn write(ds: &Dataset, loc: &str, opts: &ZarrWriteOptions) {
    write_at(loc, ds, &nc_dataset::InMemory, opts).unwrap_or_else(|e| panic!("{loc}: {e}"));
}

/// The conformance normalisations.
pub fn sclean(s: &str) -> String {
    s.lines()
        .filter(|l| {
            !(l.contains(":_IsNetcdf4")
                || l.contains(":_Endianness")
                || l.contains("_NCProperties")
                || l.contains("_SuperblockVersion"))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Line keys as `diff -w` (all whitespace removed) or `diff -b` (runs made one space).
pub fn keys(s: &str, ws: bool) -> Vec<String> {
    s.lines()
        .map(|l| {
            if ws {
                l.split_whitespace().collect::<String>()
            } else {
                l.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        })
        .collect()
}

/// Assert equal under `diff -w` / `-b`, showing the first difference.
pub fn assert_same(got: &str, want: &str, ws: bool, what: &str) {
    let (a, b) = (keys(got, ws), keys(want, ws));
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i), b.get(i));
        assert_eq!(
            x,
            y,
            "{what}: line {}\n--- got:\n{got}\n--- want:\n{want}",
            i + 1
        );
    }
}

/// True when the reference netCDF-C tools are installed.
pub fn have_reference() -> bool {
    let ok = Path::new("/usr/bin/ncdump").exists() && Path::new("/usr/bin/ncgen").exists();
    if !ok {
        eprintln!("skipping: /usr/bin/ncdump or /usr/bin/ncgen not installed");
    }
    ok
}

/// Run a command, returning stdout (panics on failure).
pub fn run(cmd: &str, args: &[&str], dir: &Path) -> String {
    let o = std::process::Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Does `python3 -c check` succeed? Says what is missing (a SKIP line) when not.
pub fn python_has(check: &str, missing: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", check])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: python3 with {missing} is not installed");
    }
    ok
}

/// Is python3 with zarr-python 3 and numcodecs installed? (Says so when not.) The tests
/// write and read Zarr v2 stores through it with `zarr_format=2`.
pub fn have_zarr() -> bool {
    python_has(
        "import zarr, numcodecs; assert int(zarr.__version__.split('.')[0]) >= 3",
        "zarr-python 3 and numcodecs",
    )
}

/// Is python3 with netCDF4-python on netCDF-C 4.10 or later installed? (Says so when not.)
pub fn have_netcdf4_410() -> bool {
    python_has(
        "import netCDF4; v = netCDF4.__netcdf4libversion__.split('.'); \
         assert (int(v[0]), int(v[1])) >= (4, 10)",
        "netCDF4 (netCDF-C >= 4.10)",
    )
}

/// Run a python script in `dir`; it must succeed. Its standard output.
pub fn python(script: &str, dir: &Path) -> String {
    python_args(script, &[], dir)
}

/// Run a python script with arguments (`sys.argv[1..]`) in `dir`; it must succeed. Its
/// standard output.
pub fn python_args(script: &str, args: &[String], dir: &Path) -> String {
    let mut all = vec!["-c", script];
    all.extend(args.iter().map(String::as_str));
    run("python3", &all, dir)
}
