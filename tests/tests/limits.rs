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

/// ncgen leaves a contiguous variable of strings, vlens or compounds holding them that the
/// CDL gives no data unallocated, as netCDF-C does: reads give the fill value's heap object.
/// It wrote a heap reference per element before (800 MB and 10 s for the 5e7 strings here).
/// ncdump 4.9.0 shows the file as ncdump-rs does, and h5py reads the fills.
#[test]
fn contiguous_heap_variables_without_data_take_no_space() {
    let d = tempdir("limits-heap-fill");
    let cdl = "netcdf s {\ntypes:\n  compound c {\n    string a ;\n    int b ;\n  }; // c\n\
               \x20 string(*) vs ;\ndimensions:\n\tn = 50000000 ;\n\tm = 2 ;\nvariables:\n\
               \tstring s(n) ;\n\t\ts:_Storage = \"contiguous\" ;\n\
               \tstring t(n) ;\n\t\tt:_FillValue = \"zz\" ;\n\t\tt:_Storage = \"contiguous\" ;\n\
               \tc cc(n) ;\n\t\tcc:_Storage = \"contiguous\" ;\n\
               \tvs v(n) ;\n\t\tv:_Storage = \"contiguous\" ;\n\
               \tstring w(m) ;\n\t\tw:_Storage = \"contiguous\" ;\ndata:\n\n w = \"a\", \"b\" ;\n}\n";
    fs::write(d.join("s.cdl"), cdl).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "s.nc", "s.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let size = fs::metadata(d.join("s.nc")).unwrap().len();
    assert!(size < 1 << 20, "s.nc is {size} bytes");
    let ours = run("ncdump-rs", &["-h", "s.nc"], &d);
    if common::have_reference("ncdump") {
        let o = std::process::Command::new("ncdump")
            .args(["-h", "s.nc"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&ours.stdout)
        );
    }
    let script = "import h5py\n\
                  f = h5py.File('s.nc', 'r')\n\
                  print(f['s'][-2:].tolist(), f['t'][:2].tolist(), f['cc'][-1:].tolist(), \
                  [list(x) for x in f['v'][:1]], f['w'][:].tolist())\n";
    if let Some(got) = common::python_script(&d, "import h5py", "h5py", script) {
        assert_eq!(
            String::from_utf8_lossy(&got),
            "[b'', b''] [b'zz', b'zz'] [(b'', 0)] [[]] [b'a', b'b']\n"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

/// A classic file holds every value, fill included: one that cannot fit its file system's
/// free space (a CDF-5 variable of 2^47 doubles, 1 PiB, from a few bytes of CDL) is refused
/// before anything is written, naming the sizes and the cures, and leaves nothing behind (it
/// ran until the disk was full). The same declaration as netCDF-4 stores nothing and works.
#[test]
fn classic_outputs_larger_than_the_free_space_are_refused_up_front() {
    let d = tempdir("limits-nospace");
    let cdl =
        "netcdf huge {\ndimensions:\n\tn = 140737488355328 ;\nvariables:\n\tdouble v(n) ;\n}\n";
    fs::write(d.join("huge.cdl"), cdl).unwrap();
    for (tool, args) in [
        ("ncgen-rs", vec!["-k", "cdf5", "-o", "huge.nc", "huge.cdl"]),
        ("ncgen-rs", vec!["-4", "-o", "huge4.nc", "huge.cdl"]),
        ("nccopy-rs", vec!["-k", "cdf5", "huge4.nc", "copy.nc"]),
    ] {
        let (o, _) = common::run_measured_within(
            std::process::Command::new(common::bin(tool))
                .args(&args)
                .current_dir(&d),
            std::time::Duration::from_secs(60),
        );
        let err = String::from_utf8_lossy(&o.stderr);
        if args.contains(&"-4") {
            assert!(o.status.success(), "{err}");
            continue;
        }
        assert!(!o.status.success(), "{tool} {args:?} wrote a 1 PiB file?");
        assert!(
            err.contains("the file needs 1125899906842")
                && err.contains("bytes free: free space, write elsewhere, or write netCDF-4"),
            "{err}"
        );
    }
    let mut left: Vec<String> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["huge.cdl", "huge4.nc"]);
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

/// Issue 31, "cost proportional to what is stored": variables declared far larger than what
/// is stored of them (a 2^40-element chunked variable with three values, a 2^31 x 2^31 one
/// with two, a 2^40-element contiguous one with none) are written by ncgen-rs and copied by
/// nccopy-rs — same chunks, deflated, rechunked, to Zarr v2 and to sharded Zarr v3 — in time
/// and memory that follow the few chunks stored. Before, ncgen-rs walked 2^42 chunks and
/// nccopy-rs took 22 GB and did not finish. The values read back through netCDF-C 4.10
/// (netCDF4-python) and zarr-python.
#[test]
fn declared_huge_stored_little_costs_what_is_stored() {
    let d = tempdir("limits-declared-huge");
    let cdl = "netcdf h {\ndimensions:\n\tn = 1099511627776 ;\n\tx = 2147483648 ;\n\ty = 2147483648 ;\n\
               \tm = 3 ;\nvariables:\n\
               \tbyte v(n) ;\n\t\tv:_ChunkSizes = 1048576 ;\n\
               \tfloat f(x, y) ;\n\t\tf:_FillValue = -9.f ;\n\t\tf:_ChunkSizes = 1024, 1024 ;\n\
               \tint c(n) ;\n\t\tc:_Storage = \"contiguous\" ;\n\
               \tint small(m) ;\ndata:\n\n v = 1, 2, 3 ;\n\n f = 1.5, 2.5 ;\n\n small = 4, 5, 6 ;\n}\n";
    fs::write(d.join("h.cdl"), cdl).unwrap();
    let limit = std::time::Duration::from_secs(120);
    let measured = |tool: &str, args: &[&str]| {
        let (o, peak) = common::run_measured_within(
            std::process::Command::new(common::bin(tool))
                .args(args)
                .current_dir(&d),
            limit,
        );
        assert!(
            o.status.success(),
            "{tool} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(peak < 512, "{tool} {args:?} peaked at {peak} MiB");
    };
    measured("ncgen-rs", &["-4", "-o", "h.nc", "h.cdl"]);
    // two chunks of 1 MiB and 4 MiB, metadata: far from the 4 TiB declared
    let size = fs::metadata(d.join("h.nc")).unwrap().len();
    assert!(size < 8 << 20, "h.nc is {size} bytes");
    let dir = d.display().to_string();
    let outputs: Vec<(String, Vec<&str>)> = vec![
        ("same.nc".into(), vec![]),
        ("deflated.nc".into(), vec!["-d", "1"]),
        ("rechunked.nc".into(), vec!["-c", "n/1000,x/100,y/100"]),
        (format!("file://{dir}/h2.zarr#mode=zarr,file"), vec![]),
        (
            format!("file://{dir}/h3.zarr#mode=zarr,v3,file"),
            vec!["--shard", "v:4194304", "--shard", "f:4096,4096"],
        ),
    ];
    for (out, extra) in &outputs {
        let mut args = extra.clone();
        args.extend(["h.nc", out.as_str()]);
        measured("nccopy-rs", &args);
        // each output stores a chunk or two per variable, not its declared size
        let stored: u64 = if out.starts_with("file://") {
            let root = d.join(if out.contains("v3") {
                "h3.zarr"
            } else {
                "h2.zarr"
            });
            walk_size(&root)
        } else {
            fs::metadata(d.join(out)).unwrap().len()
        };
        assert!(stored < 32 << 20, "{out}: {stored} bytes");
        // ncdump 4.9.0 shows the netCDF-4 outputs as ncdump-rs does (header and `small`)
        if !out.starts_with("file://") && common::have_reference("ncdump") {
            let theirs = std::process::Command::new("ncdump")
                .args(["-v", "small", out.as_str()])
                .current_dir(&d)
                .output()
                .unwrap();
            assert!(theirs.status.success(), "ncdump {out}");
            let ours = run("ncdump-rs", &["-v", "small", out.as_str()], &d);
            assert_eq!(
                String::from_utf8_lossy(&theirs.stdout),
                String::from_utf8_lossy(&ours.stdout),
                "{out}"
            );
        }
    }
    // values at both ends, and the contiguous variable's fill, read by netCDF-C 4.10
    let script = format!(
        "import netCDF4\n\
         for p in ['h.nc', 'same.nc', 'deflated.nc', 'rechunked.nc', 'file://{dir}/h2.zarr#mode=zarr,file']:\n\
         \x20   f = netCDF4.Dataset(p)\n\
         \x20   f.set_auto_mask(False)\n\
         \x20   print(f['v'][:5].tolist(), f['v'][-1], f['f'][0, :3].tolist(), f['f'][-1, -1], \
         f['c'][0], f['c'][-1], f['small'][:].tolist())\n"
    );
    let want =
        "[1, 2, 3, -127, -127] -127 [1.5, 2.5, -9.0] -9.0 -2147483647 -2147483647 [4, 5, 6]\n";
    if let Some(got) = common::python_script(&d, "import netCDF4", "netCDF4", &script) {
        assert_eq!(String::from_utf8_lossy(&got), want.repeat(5));
    }
    let script = "import zarr\n\
                  g = zarr.open_group('h3.zarr', mode='r')\n\
                  print(g['v'][:5].tolist(), g['v'][-1], g['f'][0, :3].tolist(), g['f'][-1, -1], \
                  g['c'][0], g['small'][:].tolist())\n";
    if let Some(got) = common::python_script(
        &d,
        "import zarr; assert int(zarr.__version__.split('.')[0]) >= 3",
        "zarr-python 3",
        script,
    ) {
        assert_eq!(
            String::from_utf8_lossy(&got),
            "[1, 2, 3, -127, -127] -127 [1.5, 2.5, -9.0] -9.0 -2147483647 [4, 5, 6]\n"
        );
    }
    // a Zarr v2 and a v3 array of 2^62 elements with one chunk written (zarr-python), whose
    // stored fill is its _FillValue, and one with zarr-python's default fill (0) and no
    // _FillValue, whose netCDF fill is another: both copied to netCDF-4 and to Zarr by
    // listing the chunks (the second was copied chunk by chunk before: it never ended)
    let make = "import zarr\n\
                for fmt in (2, 3):\n\
                \x20   g = zarr.open_group(f'z{fmt}.zarr', mode='w', zarr_format=fmt)\n\
                \x20   kw = {'dimension_names': ['x', 'y']} if fmt == 3 else {}\n\
                \x20   at = {'_FillValue': -1.0} if fmt == 3 else {'_FillValue': -1.0, '_ARRAY_DIMENSIONS': ['x', 'y']}\n\
                \x20   a = g.create_array('big', shape=(2**31, 2**31), chunks=(1000, 1000), dtype='f4', fill_value=-1.0, attributes=at, **kw)\n\
                \x20   a[0, :3] = [1, 2, 3]\n\
                \x20   at.pop('_FillValue')\n\
                \x20   z = g.create_array('zero', shape=(2**31, 2**31), chunks=(1000, 1000), dtype='f4', fill_value=0.0, attributes=at, **kw)\n\
                \x20   z[0, :3] = [1, 2, 3]\n";
    let zarr3 = "import zarr; assert int(zarr.__version__.split('.')[0]) >= 3";
    if common::python_script(&d, zarr3, "zarr-python 3", make).is_some() {
        for z in ["z2", "z3"] {
            let input = format!("file://{dir}/{z}.zarr#mode=zarr,file");
            let nc = format!("{z}.nc");
            let out = format!("file://{dir}/{z}.out.zarr#mode=zarr,file");
            for o in [nc.as_str(), out.as_str()] {
                measured("nccopy-rs", &[input.as_str(), o]);
            }
            assert!(fs::metadata(d.join(&nc)).unwrap().len() < 1 << 20);
            assert!(walk_size(&d.join(format!("{z}.out.zarr"))) < 1 << 20);
            let script = format!(
                "import netCDF4\n\
                 for p in ['{nc}', '{out}']:\n\
                 \x20   f = netCDF4.Dataset(p)\n\
                 \x20   f.set_auto_mask(False)\n\
                 \x20   print(f['big'][0, :4].tolist(), f['big'][-1, -1], f['zero'][0, :4].tolist(), \
                 f['zero'][-1, -1], '_FillValue' in f['zero'].ncattrs())\n"
            );
            if let Some(got) = common::python_script(&d, "import netCDF4", "netCDF4", &script) {
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    "[1.0, 2.0, 3.0, -1.0] -1.0 [1.0, 2.0, 3.0, 0.0] 0.0 False\n".repeat(2),
                    "{z}"
                );
            }
            // the netCDF-4 copy keeps the stored fill as HDF5's fill value (no attribute)
            let script = format!(
                "import h5py\n\
                 f = h5py.File('{nc}', 'r')\n\
                 print(f['zero'].fillvalue, f['zero'].id.get_num_chunks(), sorted(f['zero'].attrs))\n"
            );
            if let Some(got) = common::python_script(&d, "import h5py", "h5py", &script) {
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    "0.0 1 ['DIMENSION_LIST', '_Netcdf4Coordinates']\n",
                    "{z}"
                );
            }
        }
    }
    // an h5py dataset of 2^40 elements with one chunk written and a fill value property but no
    // _FillValue (h5py's `fillvalue=`): its unwritten chunks read as 5, not as netCDF's fill,
    // so the copies keep 5 as their stored fill and write one chunk (before: every chunk)
    let make = "import h5py\n\
                with h5py.File('p.h5', 'w') as f:\n\
                \x20   d = f.create_dataset('p', shape=(2**40,), chunks=(2**20,), dtype='f4', fillvalue=5.0)\n\
                \x20   d[:3] = [1, 2, 3]\n";
    if common::python_script(&d, "import h5py", "h5py", make).is_some() {
        let out = format!("file://{dir}/p.zarr#mode=zarr,file");
        for o in ["p.nc", out.as_str()] {
            measured("nccopy-rs", &["p.h5", o]);
        }
        assert!(fs::metadata(d.join("p.nc")).unwrap().len() < 8 << 20);
        assert!(walk_size(&d.join("p.zarr")) < 8 << 20);
        let script = format!(
            "import netCDF4\n\
             for p in ['p.h5', 'p.nc', '{out}']:\n\
             \x20   f = netCDF4.Dataset(p)\n\
             \x20   f.set_auto_mask(False)\n\
             \x20   print(f['p'][:4].tolist(), f['p'][-1], f['p'].ncattrs())\n"
        );
        if let Some(got) = common::python_script(&d, "import netCDF4", "netCDF4", &script) {
            assert_eq!(
                String::from_utf8_lossy(&got),
                "[1.0, 2.0, 3.0, 5.0] 5.0 []\n".repeat(3)
            );
        }
    }
    fs::remove_dir_all(&d).unwrap();
}

/// The bytes of the files under `root`.
fn walk_size(root: &std::path::Path) -> u64 {
    let mut total = 0;
    for e in fs::read_dir(root).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        total += if t.is_dir() {
            walk_size(&e.path())
        } else {
            e.metadata().unwrap().len()
        };
    }
    total
}
