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
        // exit 3: the output cannot be written (nc_runtime::exit::OUTPUT)
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

/// Issue 18: a quantize attribute out of its type's range is an error naming the variable,
/// the attribute, the range and the position; nothing is written.
#[test]
fn quantize_digits_out_of_range_are_refused() {
    let d = tempdir("limits-quantize");
    for (att, n, range) in [
        (
            "_QuantizeBitRoundNumberOfSignificantBits",
            24,
            "1 to 23 significant bits",
        ),
        (
            "_QuantizeBitGroomNumberOfSignificantDigits",
            7,
            "1 to 6 significant digits",
        ),
        (
            "_QuantizeGranularBitRoundNumberOfSignificantDigits",
            0,
            "1 to 6 significant digits",
        ),
    ] {
        fs::write(
            d.join("q.cdl"),
            format!("netcdf q {{\ndimensions: n = 2 ;\nvariables:\n  float v(n) ;\n  v:{att} = {n} ;\ndata:\n  v = 1.5, 2.5 ;\n}}\n"),
        )
        .unwrap();
        let o = run("ncgen-rs", &["-4", "-o", "q.nc", "q.cdl"], &d);
        assert_eq!(o.status.code(), Some(1), "{att}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "ncgen: cannot read CDL: q.cdl:5:{}: variable 'v': {att} = {n} is out of range: \
                 a float variable keeps {range}\n",
                8 + att.len()
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

/// Run a tool and return its output with its peak resident memory in MiB (VmHWM, polled).
fn run_measured(tool: &str, args: &[&str], dir: &std::path::Path) -> (std::process::Output, u64) {
    common::run_measured(
        std::process::Command::new(common::bin(tool))
            .args(args)
            .current_dir(dir),
    )
}

/// A chunk declared but never written is fill: a copy leaves it unwritten (the output reads
/// the same fill) instead of producing gigabytes of fill values, to netCDF-4 and to NCZarr,
/// with the chunk shape kept or changed (issue 20: nccopy-rs took 4.1 GB on a 2 GiB chunk).
#[test]
fn unwritten_chunks_are_copied_in_bounded_memory() {
    let d = tempdir("limits-unwritten");
    // 2 GiB chunks of float, never written; a small variable with data beside them
    let cdl = "netcdf u {\ndimensions:\n\tn = 536870912 ;\n\tm = 3 ;\nvariables:\n\
               \tfloat big(n) ;\n\t\tbig:_FillValue = -1.f ;\n\t\tbig:_ChunkSizes = 536870912 ;\n\
               \tdouble nofill(n) ;\n\t\tnofill:_ChunkSizes = 268435456 ;\n\
               \tint small(m) ;\ndata:\n\n small = 1, 2, 3 ;\n}\n";
    fs::write(d.join("u.cdl"), cdl).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "u.nc", "u.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dump_small = |path: &str| -> String {
        let o = run("ncdump-rs", &["-v", "small", path], &d);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let want = dump_small("u.nc");
    for (out, extra) in [
        ("same.nc", vec![]),
        ("rechunked.nc", vec!["-c", "n/1000000"]),
        ("file://DIR/u.zarr#mode=nczarr,file", vec![]),
    ] {
        let out = out.replace("DIR", d.to_str().unwrap());
        let mut args: Vec<&str> = extra.clone();
        args.extend(["u.nc", out.as_str()]);
        let (o, peak) = run_measured("nccopy-rs", &args, &d);
        assert!(
            o.status.success(),
            "nccopy-rs {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(peak < 512, "nccopy-rs {args:?} peaked at {peak} MiB");
        // the values read back: the small variable, and fill at both ends of the big ones
        assert_eq!(
            dump_small(&out).lines().skip(1).collect::<Vec<_>>(),
            want.lines().skip(1).collect::<Vec<_>>(),
            "{out}"
        );
        // values at both ends of the big variables, read by netCDF-C 4.10 (netCDF4-python)
        let script = format!(
            "import netCDF4\n\
             f = netCDF4.Dataset({:?})\n\
             f.set_auto_mask(False)\n\
             b, n = f['big'], f['nofill']\n\
             print(b[0], b[-1], b[123456789], n[0], n[-1], f['small'][:].tolist())\n",
            if out.contains("#mode") {
                out.clone()
            } else {
                d.join(&out).display().to_string()
            }
        );
        if let Some(got) = common::python_script(&d, "import netCDF4", "netCDF4", &script) {
            assert_eq!(
                String::from_utf8_lossy(&got),
                "-1.0 -1.0 -1.0 9.969209968386869e+36 9.969209968386869e+36 [1, 2, 3]\n",
                "{out}"
            );
        }
    }
    fs::remove_dir_all(&d).unwrap();
}
