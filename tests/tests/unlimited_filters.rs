//! Issue 14, "any filter chain on variables with one or more unlimited dimensions": a
//! variable with two unlimited dimensions and edge chunks, under each standard filter, is
//! written by ncgen-rs and read back with the same values by ncdump-rs and by netCDF-C's
//! ncdump (with the HDF5 plugins, when installed). szip is written when its plugin is found,
//! else refused as any missing filter, leaving no output. (Before issue 30 the HDF5 writer re-encoded edge chunks
//! itself and refused the filters it had no codec for with a message of its own; our writer
//! stores every chunk nc-filters encodes, so the refusal is the one of any missing filter.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::process::Command;

use common::{missing_references, run, tempdir};

const DATA: &str = "data:\n  v = {1, 2, 3}, {4, 5, 6}, {7, 8, 9} ;\n}\n";

fn cdl(filter: &str) -> String {
    format!(
        "netcdf u2 {{\ndimensions: t = UNLIMITED ; s = UNLIMITED ;\nvariables:\n  float v(t, s) ;\n  \
         v:_Filter = \"{filter}\" ;\n  v:_ChunkSizes = 2, 2 ;\n{DATA}"
    )
}

/// The data section of a dump, on one line.
fn data_of(dump: &[u8]) -> String {
    let text = String::from_utf8_lossy(dump);
    let at = text.find("data:").unwrap_or(0);
    text[at..].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// HDF5 plugin directories netCDF-C needs for bzip2, blosc, lz4 and zstd, if installed.
fn plugin_path() -> Option<String> {
    let hp = common::hdf5plugin_dir()?;
    Some(format!(
        "{hp}:/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
    ))
}

#[test]
fn two_unlimited_dimensions_under_every_standard_filter() {
    let d = tempdir("unlim-filters");
    let want = "data: v = {1, 2, 3}, {4, 5, 6}, {7, 8, 9} ; }";
    let reference = if missing_references(&["ncdump"]) {
        None
    } else {
        let p = plugin_path();
        if p.is_none() {
            eprintln!("SKIP (netCDF-C comparison): python3 with hdf5plugin not installed");
        }
        p
    };
    for filter in [
        "1,5",
        "2|1,1",
        "32015,3",
        "307,9",
        "32004,0",
        "32001,2,2,4,16,5,1,1",
    ] {
        fs::write(d.join("u2.cdl"), cdl(filter)).unwrap();
        let o = run("ncgen-rs", &["-4", "-o", "u2.nc", "u2.cdl"], &d);
        assert!(
            o.status.success(),
            "{filter}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let ours = run("ncdump-rs", &["u2.nc"], &d);
        assert!(ours.status.success(), "{filter}");
        assert_eq!(data_of(&ours.stdout), want, "{filter}");
        if let Some(path) = &reference {
            let c = Command::new("ncdump")
                .arg("u2.nc")
                .current_dir(&d)
                .env("HDF5_PLUGIN_PATH", path)
                .output()
                .unwrap();
            assert!(
                c.status.success(),
                "{filter}: netCDF-C ncdump: {}",
                String::from_utf8_lossy(&c.stderr)
            );
            assert_eq!(data_of(&c.stdout), want, "{filter}: netCDF-C ncdump");
        }
    }
    // szip: written like the others when an encoder is found (an HDF5 plugin), otherwise
    // refused as any missing filter is, leaving no output
    fs::write(d.join("u2.cdl"), cdl("4,32,32")).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "sz.nc", "u2.cdl"], &d);
    if o.status.success() {
        let back = run("ncdump-rs", &["sz.nc"], &d);
        assert_eq!(data_of(&back.stdout), want, "szip");
    } else {
        // exit 3: the output cannot be written (nc_runtime::exit::OUTPUT)
        assert_eq!(o.status.code(), Some(3));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("variable \"v\" needs filter 4 (szip), not available"),
            "{err}"
        );
        assert!(!d.join("sz.nc").exists());
    }
    fs::remove_dir_all(&d).unwrap();
}
