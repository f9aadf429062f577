//! Issue 20, "allocation follows evidence": declarations the formats cannot hold are refused
//! before anything is written, with a message that names the variable and the cure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{run, tempdir};

#[test]
fn chunks_hdf5_cannot_hold_are_refused_before_writing() {
    let d = tempdir("limits-chunks");
    let cases = [
        (
            "dimensions: n = 100000 ; m = 100000 ;\nvariables:\n  double v(n, m) ; v:_ChunkSizes = 100000, 100000 ;",
            "ncgen: cannot write output: c.nc: variable v: NetCDF: Bad chunk sizes: a chunk of \
             100000 x 100000 elements of 8 bytes is 80000000000 bytes, and HDF5 holds at most \
             4 GiB - 1 bytes in one chunk; give smaller chunk sizes\n",
        ),
        (
            "dimensions: n = 10 ;\nvariables:\n  int v(n) ; v:_ChunkSizes = 20 ;",
            "ncgen: cannot write output: c.nc: variable v: NetCDF: Bad chunk sizes: chunk length \
             20 along dimension n is longer than the dimension (10); give chunk sizes at most the \
             dimension lengths\n",
        ),
    ];
    for (body, expected) in cases {
        fs::write(d.join("c.cdl"), format!("netcdf c {{\n{body}\n}}\n")).unwrap();
        let o = run("ncgen-rs", &["-4", "-o", "c.nc", "c.cdl"], &d);
        // exit 3: the output cannot be written (nc_dispatch::exit::OUTPUT)
        assert_eq!(o.status.code(), Some(3), "{body}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), expected, "{body}");
        let left: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("c.cdl")], "{body}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Issue 14: a special attribute ncgen-rs cannot honour yet is an error naming it, never
/// silently dropped (quantization is issue 18's to write).
#[test]
fn quantize_attributes_are_refused_not_dropped() {
    let d = tempdir("limits-quantize");
    for att in [
        "_QuantizeBitRoundNumberOfSignificantBits",
        "_QuantizeBitGroomNumberOfSignificantDigits",
        "_QuantizeGranularBitRoundNumberOfSignificantDigits",
    ] {
        fs::write(
            d.join("q.cdl"),
            format!("netcdf q {{\ndimensions: n = 2 ;\nvariables:\n  float v(n) ;\n  v:{att} = 5 ;\ndata:\n  v = 1.5, 2.5 ;\n}}\n"),
        )
        .unwrap();
        let o = run("ncgen-rs", &["-4", "-o", "q.nc", "q.cdl"], &d);
        assert_eq!(o.status.code(), Some(3), "{att}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "ncgen: variable v: {att} = 5: quantization is not implemented yet, and the \
                 attribute would otherwise be dropped; remove it (or quantize with netCDF-C's \
                 ncgen or netCDF4-python)\n"
            )
        );
        assert!(!d.join("q.nc").exists(), "{att}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// A dimension without a coordinate variable costs no data space, however long: netCDF-C
/// leaves its scale unallocated, and a 4e9 dimension must not make a 16 GB file (apparent
/// size). The dimensions still read back at their lengths, here and in ncdump 4.9.0.
#[test]
fn long_dimensions_without_variables_take_no_space() {
    let d = tempdir("limits-dims");
    let cdl = "netcdf c {\ndimensions:\n\tbig = 4000000000 ;\n\tmid = 100000 ;\n\tsmall = 3 ;\n\
               variables:\n\tint v(small) ;\ndata:\n\n v = 1, 2, 3 ;\n}\n";
    fs::write(d.join("c.cdl"), cdl).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "c.nc", "c.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let size = fs::metadata(d.join("c.nc")).unwrap().len();
    assert!(size < 64 * 1024, "c.nc is {size} bytes");
    let o = run("ncdump-rs", &["c.nc"], &d);
    assert_eq!(String::from_utf8_lossy(&o.stdout), cdl);
    if common::have_reference("ncdump") {
        let o = std::process::Command::new("ncdump")
            .arg("c.nc")
            .current_dir(&d)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), cdl);
    }
    fs::remove_dir_all(&d).unwrap();
}
