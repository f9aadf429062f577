//! End-to-end: the `layout=` fragment key (our extension) selects the NCZarr metadata spelling
//! the tools write. `layout=4.10` stores are what netCDF-C 4.10 reads: netCDF4-python (which
//! bundles it, with its codec plugins) must read our filtered store with the same values and
//! filters. Skips with a message when netCDF4-python with netCDF-C >= 4.10 is absent.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::process::Command;

fn have_netcdf4_python_410() -> bool {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import netCDF4; v = netCDF4.__netcdf4libversion__.split('.'); \
             assert (int(v[0]), int(v[1])) >= (4, 10)",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: python3 with netCDF4 (netCDF-C >= 4.10) is not available");
    }
    ok
}

#[test]
fn layout_410_is_read_by_netcdf4_python() {
    if !have_netcdf4_python_410() {
        return;
    }
    let dir = tempdir("nczarr-layout");
    let store = dir.join("lay.file");
    let url = format!("file://{}#mode=nczarr,file&layout=4.10", store.display());
    let cdl = testdata("cdl/nczarr/layout410.cdl");
    let o = run(
        "ncgen-rs",
        &["-4", "-b", "-o", &url, cdl.to_str().unwrap()],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let script = format!(
        "import netCDF4, json\n\
         d = netCDF4.Dataset('file://{}#mode=nczarr,file')\n\
         f = lambda v: sorted(k for k, on in v.filters().items() if on and k != 'complevel')\n\
         print(json.dumps({{'t': d['t'][:].tolist(), 'z': d['z'][:].tolist(), \
         'tf': f(d['t']), 'zf': f(d['z']), 'units': d['t'].units}}))",
        store.display()
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t: Vec<Vec<f64>> = (0..4)
        .map(|r| {
            (0..5)
                .map(|c| {
                    if r == 3 && c == 4 {
                        19.5
                    } else {
                        f64::from(r * 5 + c)
                    }
                })
                .collect()
        })
        .collect();
    let z: Vec<Vec<i32>> = (0..4)
        .map(|r| {
            (0..5)
                .map(|c| {
                    let i = r * 5 + c;
                    if i % 2 == 0 {
                        i
                    } else {
                        -i
                    }
                })
                .collect()
        })
        .collect();
    assert_eq!(got["t"], serde_json::json!(t));
    assert_eq!(got["z"], serde_json::json!(z));
    assert_eq!(got["tf"], serde_json::json!(["bzip2"]));
    assert_eq!(got["zf"], serde_json::json!(["shuffle", "zlib"]));
    assert_eq!(got["units"], serde_json::json!("K"));
}

#[test]
fn unknown_layout_is_refused_and_writes_nothing() {
    let dir = tempdir("nczarr-badlayout");
    let store = dir.join("bad.file");
    let url = format!("file://{}#mode=nczarr,file&layout=5", store.display());
    let cdl = testdata("cdl/nczarr/layout410.cdl");
    let o = run(
        "ncgen-rs",
        &["-4", "-b", "-o", &url, cdl.to_str().unwrap()],
        &dir,
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "layout=5: use layout=4.10 (netCDF-C 4.10 and netCDF4-python, the default), layout=4.9"
        ),
        "{err}"
    );
    assert!(!store.exists());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// numcodecs' gzip (no HDF5 filter) cannot go into a netCDF-4 file: the copy keeps the values,
/// drops the codec and says so.
#[test]
fn zarr_only_codecs_warn_when_copied_to_netcdf4() {
    let have = Command::new("python3")
        .args([
            "-c",
            "import zarr, numcodecs; assert int(zarr.__version__.split('.')[0]) >= 3",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        eprintln!("SKIP: python3 with zarr-python 3 and numcodecs is not available");
        return;
    }
    let dir = tempdir("nczarr-gzip-copy");
    let script = "import zarr, numpy as np, numcodecs as nc
root = zarr.open_group('gz.zarr', mode='w', zarr_format=2)
z = root.create_array('v', shape=(6,), chunks=(4,), dtype='<i4', compressors=nc.GZip(5))
z[...] = np.arange(6, dtype='<i4') * 3 - 5
z.attrs['_ARRAY_DIMENSIONS'] = ['x']";
    let o = Command::new("python3")
        .args(["-c", script])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let src = format!("file://{}#mode=zarr,file", dir.join("gz.zarr").display());
    let out = dir.join("out.nc");
    let o = run("nccopy-rs", &["-4", &src, out.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "nccopy: warning: /v: Zarr codec(s) gzip have no HDF5 filter; the output stores the data without them\n"
    );
    let o = run("ncdump-rs", &["-v", "v", out.to_str().unwrap()], &dir);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(" v = -5, -2, 1, 4, 7, 10 ;"), "{text}");
    // -q silences it
    let o = run(
        "nccopy-rs",
        &["-q", "-4", &src, dir.join("q.nc").to_str().unwrap()],
        &dir,
    );
    assert!(o.status.success());
    assert!(o.stderr.is_empty());
}

/// zarr-python 3 (`zarr_format=2`) and xarray open what ncgen-rs and nccopy-rs write, with every standard codec
/// chain (zlib, shuffle+zlib, bzip2, zstd, blosc, lz4, fletcher32+zlib), and get the CDL's values.
#[test]
fn zarr_python_and_xarray_read_what_the_tools_write() {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import zarr, numcodecs, xarray; assert int(zarr.__version__.split('.')[0]) >= 3; \
             import tempfile, os; d = tempfile.mkdtemp(); zarr.open_group(d, mode='w', zarr_format=2); \
             xarray.open_zarr(d, consolidated=False, zarr_format=2)",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "SKIP: python3 with zarr-python 3, numcodecs and xarray (reading Zarr v2 stores) \
             is not available"
        );
        return;
    }
    let dir = tempdir("nczarr-interop-cli");
    let cdl = testdata("cdl/nczarr/codecs.cdl");
    let gen = dir.join("gen.file");
    let o = run(
        "ncgen-rs",
        &[
            "-4",
            "-b",
            "-o",
            &format!("file://{}#mode=nczarr,file", gen.display()),
            cdl.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let nc = dir.join("codecs.nc");
    let o = run(
        "ncgen-rs",
        &[
            "-4",
            "-b",
            "-o",
            nc.to_str().unwrap(),
            cdl.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let copied = dir.join("copied.file");
    let o = run(
        "nccopy-rs",
        &[
            nc.to_str().unwrap(),
            &format!("file://{}#mode=nczarr,file", copied.display()),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names = ["zl", "sz", "bz", "zs", "bl", "l4", "fl"];
    for store in [&gen, &copied] {
        let script = format!(
            "import zarr, xarray, json\n\
             g = zarr.open_group({p:?}, mode='r', zarr_format=2)\n\
             x = xarray.open_zarr({p:?}, consolidated=False, zarr_format=2, mask_and_scale=False)\n\
             names = {names:?}\n\
             out = {{n: [g[n][...].reshape(-1).tolist(), x[n].values.reshape(-1).tolist(), \
             list(x[n].dims), [c.codec_id for c in (g[n].filters or [])] + \
             [c.codec_id for c in (g[n].compressors or [])]] for n in names}}\n\
             print(json.dumps(out))",
            p = store.display().to_string(),
        );
        let o = Command::new("python3")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}: {}",
            store.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let codecs = [
            vec!["zlib"],
            vec!["shuffle", "zlib"],
            vec!["bz2"],
            vec!["zstd"],
            vec!["blosc"],
            vec!["lz4"],
            vec!["fletcher32", "zlib"],
        ];
        for (k, n) in names.iter().enumerate() {
            let want: Vec<i64> = (0..60).map(|i| i * (k as i64 + 2) - 50).collect();
            assert_eq!(
                got[n][0],
                serde_json::json!(want),
                "{} {n} (zarr)",
                store.display()
            );
            assert_eq!(
                got[n][1],
                serde_json::json!(want),
                "{} {n} (xarray)",
                store.display()
            );
            assert_eq!(got[n][2], serde_json::json!(["x", "y"]), "{n} dims");
            assert_eq!(got[n][3], serde_json::json!(codecs[k]), "{n} codecs");
        }
    }
}

/// nccopy-rs from netCDF-4 files with each filter chain (fletcher32 before and after shuffle,
/// szip) to pure Zarr and NCZarr: zarr-python 3 and xarray read the values, with the codecs in
/// the order numcodecs applies them; szip, which numcodecs has no codec for, is dropped with
/// a warning, and ncgen-rs writing `_Filter = "4,..."` to Zarr is refused with a message.
#[test]
fn filter_chains_copied_to_zarr_open_in_zarr_python_and_xarray() {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import zarr, numcodecs, xarray; assert int(zarr.__version__.split('.')[0]) >= 3",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: python3 with zarr-python 3, numcodecs and xarray is not available");
        return;
    }
    let dir = tempdir("nczarr-chains");
    let chains = [
        // ncgen-rs, like netCDF-C, stores fletcher32 first in the HDF5 pipeline whatever the
        // _Filter order (3, 2, 1); a Zarr store puts shuffle ahead of it, since numcodecs'
        // Shuffle refuses a buffer the checksum made longer than whole elements
        ("fsz", "3|2|1,5", vec!["shuffle", "fletcher32", "zlib"]),
        ("sfz", "2|3|1,5", vec!["shuffle", "fletcher32", "zlib"]),
        ("szz", "2|1,1", vec!["shuffle", "zlib"]),
        ("sp", "4,32,32", vec![]),
    ];
    let mut cdl = String::from("netcdf chains {\ndimensions:\n\tx = 6 ;\n\ty = 10 ;\nvariables:\n");
    for (n, f, _) in &chains {
        cdl += &format!(
            "\tint {n}(x, y) ;\n\t\t{n}:_ChunkSizes = 4, 4 ;\n\t\t{n}:_Filter = \"{f}\" ;\n"
        );
    }
    cdl += "data:\n";
    for (k, (n, _, _)) in chains.iter().enumerate() {
        let vals: Vec<String> = (0..60)
            .map(|i| (i * (k as i64 + 3) - 70).to_string())
            .collect();
        cdl += &format!("\n {n} = {} ;\n", vals.join(", "));
    }
    cdl += "}\n";
    std::fs::write(dir.join("chains.cdl"), &cdl).unwrap();
    let nc = dir.join("chains.nc");
    let o = run(
        "ncgen-rs",
        &["-4", "-b", "-o", nc.to_str().unwrap(), "chains.cdl"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // ncgen-rs straight to Zarr: szip refused, naming the variable and the filter
    let o = run(
        "ncgen-rs",
        &[
            "-4",
            "-b",
            "-o",
            &format!("file://{}#mode=zarr,file", dir.join("gen.file").display()),
            "chains.cdl",
        ],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("\"/sp\"") && err.contains("filter 4 (szip)"),
        "{err}"
    );
    for mode in ["zarr", "nczarr"] {
        let store = dir.join(format!("copy-{mode}.file"));
        let o = run(
            "nccopy-rs",
            &[
                nc.to_str().unwrap(),
                &format!("file://{}#mode={mode},file", store.display()),
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "nccopy: warning: /sp: filter 4 (szip) has no Zarr codec that zarr-python or \
             numcodecs reads; the output stores the data without it\n"
        );
        let names: Vec<&str> = chains.iter().map(|c| c.0).collect();
        let script = format!(
            "import zarr, xarray, json\n\
             g = zarr.open_group({p:?}, mode='r', zarr_format=2)\n\
             x = xarray.open_zarr({p:?}, consolidated=False, zarr_format=2, mask_and_scale=False)\n\
             names = {names:?}\n\
             out = {{n: [g[n][...].reshape(-1).tolist(), x[n].values.reshape(-1).tolist(), \
             [c.codec_id for c in (g[n].filters or [])] + \
             [c.codec_id for c in (g[n].compressors or [])]] for n in names}}\n\
             print(json.dumps(out))",
            p = store.display().to_string(),
        );
        let o = Command::new("python3")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for (k, (n, _, codecs)) in chains.iter().enumerate() {
            let want: Vec<i64> = (0..60).map(|i| i * (k as i64 + 3) - 70).collect();
            assert_eq!(got[n][0], serde_json::json!(want), "{mode} {n} (zarr)");
            assert_eq!(got[n][1], serde_json::json!(want), "{mode} {n} (xarray)");
            assert_eq!(got[n][2], serde_json::json!(codecs), "{mode} {n} codecs");
        }
    }
}

/// The data sections of a CDL text, variable name -> its values with whitespace runs made one
/// space.
fn data_blocks(cdl: &str) -> std::collections::BTreeMap<String, String> {
    let data = cdl.split_once("\ndata:\n").map_or("", |(_, d)| d);
    let mut out = std::collections::BTreeMap::new();
    for block in data.split(" ;\n") {
        let block = block.trim();
        if let Some((name, values)) = block.split_once(" =") {
            let v: Vec<&str> = values.split_whitespace().collect();
            out.insert(name.trim().to_string(), v.join(" "));
        }
    }
    out
}

/// Stores zarr-python 3 and xarray write with each codec we read (fixed seed): ncdump-rs
/// prints, for every variable, the data section netCDF-C's ncdump prints for a netCDF-4 file
/// holding the values zarr-python reads; nccopy-rs to netCDF-4 and back to Zarr keeps them.
#[test]
fn ncdump_prints_what_zarr_python_reads() {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import zarr, numcodecs, xarray, netCDF4; \
             assert int(zarr.__version__.split('.')[0]) >= 3",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok || missing_references(&["ncdump"]) {
        eprintln!("SKIP: python3 with zarr-python 3, numcodecs, xarray, netCDF4 or ncdump missing");
        return;
    }
    let dir = tempdir("nczarr-pydump");
    let script = r#"
import zarr, numpy as np, numcodecs as nc, xarray as xr, netCDF4
rng = np.random.default_rng(2014)
words = np.array(['', 'a', 'hello', 'x y', 'zz'], dtype=object)
xr.Dataset({'txt': (('r', 'c'), words[rng.integers(0, 5, size=(3, 4))])}).to_zarr(
    'py.zarr', zarr_format=2, consolidated=False, encoding={'txt': {'chunks': (2, 3)}})
root = zarr.open_group('py.zarr', mode='a', zarr_format=2)
def mk(name, data, chunks, comp, filt):
    z = root.create_array(name, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          compressors=comp, filters=filt, fill_value=None)
    z[...] = data
    z.attrs['_ARRAY_DIMENSIONS'] = [f'{name}_d{i}' for i in range(data.ndim)]
i4 = rng.integers(-5000, 5000, size=(5, 6)).astype('<i4')
f8 = np.round(rng.normal(10, 3, size=(4, 5)), 3)
mk('gzip', i4, (2, 4), nc.GZip(4), None)
mk('lz4', i4, (3, 3), nc.LZ4(1), None)
mk('lzma', i4, (4, 4), nc.LZMA(), None)
mk('delta', i4, (2, 2), nc.Zlib(1), [nc.Delta('<i4')])
mk('bz2', f8, (2, 5), nc.BZ2(3), None)
mk('zstd_shuffle', f8, (3, 3), nc.Zstd(2), [nc.Shuffle(elementsize=8)])
mk('blosc', i4.astype('<i2'), (5, 2), nc.Blosc(cname='zstd', clevel=3, shuffle=2), None)
mk('fso', f8, (4, 4), nc.Zlib(1), [nc.FixedScaleOffset(offset=10, scale=100, dtype='<f8', astype='<i2')])
mk('quantize', f8, (4, 4), None, [nc.Quantize(digits=2, dtype='<f8')])
mk('astype', f8, (2, 2), None, [nc.AsType(encode_dtype='<f4', decode_dtype='<f8')])
mk('fletcher', i4, (5, 6), None, [nc.Fletcher32()])
# the reference: the values zarr-python reads, in a netCDF-4 file (no fill values)
g = zarr.open_group('py.zarr', mode='r', zarr_format=2)
d = netCDF4.Dataset('ref.nc', 'w')
for k in sorted(g.array_keys()):
    a = g[k]
    dims = a.attrs['_ARRAY_DIMENSIONS']
    for n, s in zip(dims, a.shape):
        if n not in d.dimensions:
            d.createDimension(n, s)
    vals = a[...]
    if vals.dtype.kind in 'OTU':
        t, vals = str, np.array(vals.tolist(), dtype=object)
    else:
        t = vals.dtype.newbyteorder('=')
    v = d.createVariable(k, t, dims, fill_value=False)
    v[...] = vals
d.close()
"#;
    let o = Command::new("python3")
        .args(["-c", script])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("ncdump")
        .arg(dir.join("ref.nc"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = data_blocks(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(want.len(), 12, "{want:?}");
    let store = format!("file://{}#mode=zarr,file", dir.join("py.zarr").display());
    let nc = dir.join("copy.nc");
    let back = format!("file://{}#mode=zarr,file", dir.join("back.zarr").display());
    let o = run("nccopy-rs", &["-q", &store, nc.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("nccopy-rs", &["-q", nc.to_str().unwrap(), &back], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for what in [store.as_str(), nc.to_str().unwrap(), back.as_str()] {
        let o = run("ncdump-rs", &[what], &dir);
        assert!(
            o.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = data_blocks(&String::from_utf8_lossy(&o.stdout));
        for (name, values) in &want {
            assert_eq!(got.get(name), Some(values), "{what}: {name}");
        }
    }
}

/// A pure Zarr v2 store of ours carries consolidated metadata (`.zmetadata`): netCDF-C still
/// reads it, 4.9.0's ncdump (the whole dump, values included) and 4.10.1 through
/// netCDF4-python (every value and attribute).
#[test]
fn netcdf_c_reads_our_consolidated_zarr() {
    if missing_references(&["ncdump"]) {
        return;
    }
    let dir = tempdir("zarr-consolidated-netcdf-c");
    std::fs::write(
        dir.join("t.cdl"),
        "netcdf t { dimensions: x = 4 ; y = 3 ; variables: int v(x, y) ; v:units = \"m\" ; \
         float w(x) ; data: v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ; \
         w = 1.5, 2.5, 3.5, 4.5 ; }",
    )
    .unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "t.nc", "t.cdl"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let store = dir.join("t.zarr");
    let url = format!("file://{}#mode=zarr,file", store.display());
    let o = run("nccopy-rs", &["t.nc", &url], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cons: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join(".zmetadata")).unwrap()).unwrap();
    assert_eq!(cons["zarr_consolidated_format"], 1);
    assert!(cons["metadata"].get("v/.zarray").is_some(), "{cons}");
    let o = Command::new("ncdump").arg(&url).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dump = String::from_utf8_lossy(&o.stdout);
    let data = &dump[dump.find("data:").expect("a data section")..];
    assert_eq!(
        data,
        "data:\n\n v =\n  1, 2, 3,\n  4, 5, 6,\n  7, 8, 9,\n  10, 11, 12 ;\n\n w = 1.5, 2.5, 3.5, 4.5 ;\n}\n"
    );
    assert!(dump.contains("v:units = \"m\" ;"), "{dump}");
    let script = format!(
        "import netCDF4, json\n\
         d = netCDF4.Dataset('{url}')\n\
         print(json.dumps([d['v'][:].tolist(), d['w'][:].tolist(), d['v'].units]))"
    );
    let Some(out) = python_script(&dir, "import netCDF4", "netCDF4", &script) else {
        return;
    };
    let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        got,
        serde_json::json!([
            [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]],
            [1.5, 2.5, 3.5, 4.5],
            "m"
        ])
    );
}

/// A netCDF-4 input with user-defined types copied to NCZarr (and pure Zarr, v2 and v3): each
/// variable and attribute of a user-defined type is left out with a warning naming it; the
/// rest is copied, as zarr-python reads it (netCDF-C refuses the whole copy).
#[test]
fn user_defined_types_are_left_out_of_a_zarr_copy_by_name() {
    let dir = tempdir("nczarr-udt");
    let cdl = dir.join("udt.cdl");
    std::fs::write(
        &cdl,
        "netcdf udt {\ntypes:\n  byte enum mood_t { sad = 0, happy = 1 } ;\n  \
         compound pair_t { int a ; short b ; } ;\n\
         dimensions:\n  n = 3 ;\nvariables:\n  mood_t mood(n) ;\n  pair_t pairs(n) ;\n  \
         int count(n) ;\n    count:units = \"1\" ;\n    pair_t count:best = {7, 8} ;\n\
         // global attributes:\n  :title = \"udt\" ;\n  mood_t :overall = happy ;\n\
         data:\n  mood = sad, happy, sad ;\n  pairs = {1, 2}, {3, 4}, {5, 6} ;\n  \
         count = 10, 20, 30 ;\n\
         group: sub {\n  variables:\n    mood_t gmood ;\n    double x ;\n  data:\n    \
         gmood = happy ;\n    x = 2.5 ;\n  }\n}\n",
    )
    .unwrap();
    run_ok("ncgen-rs", &["-4", "-o", "udt.nc", "udt.cdl"], &dir);
    for (mode, name) in [
        ("nczarr,file", "nz.file"),
        ("zarr,file", "z2.file"),
        ("zarr,v3,file", "z3.file"),
    ] {
        let url = format!("file://{}#mode={mode}", dir.join(name).display());
        let o = run_ok("nccopy-rs", &["udt.nc", &url], &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err,
            "nccopy: warning: group attribute /:overall left out: its type \"mood_t\" is user-defined and NCZarr has only atomic types\n\
             nccopy: warning: variable /mood left out: its type \"mood_t\" is user-defined and NCZarr has only atomic types\n\
             nccopy: warning: variable /pairs left out: its type \"pair_t\" is user-defined and NCZarr has only atomic types\n\
             nccopy: warning: attribute /count:best left out: its type \"pair_t\" is user-defined and NCZarr has only atomic types\n\
             nccopy: warning: variable /sub/gmood left out: its type \"mood_t\" is user-defined and NCZarr has only atomic types\n",
            "{mode}"
        );
        let script = format!(
            "import zarr, json\n\
             g = zarr.open_group('{}', mode='r')\n\
             print(json.dumps({{'arrays': sorted(k for k, _ in g.arrays()), \
             'count': g['count'][:].tolist(), 'units': g['count'].attrs['units'], \
             'count_atts': sorted(g['count'].attrs.keys()), 'x': float(g['sub/x'][...].ravel()[0]), \
             'title': g.attrs['title'], 'overall': 'overall' in g.attrs}}))",
            dir.join(name).display()
        );
        let Some(out) = python_script(&dir, "import zarr", "zarr", &script) else {
            return;
        };
        let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(got["arrays"], serde_json::json!(["count"]), "{mode}");
        assert_eq!(got["count"], serde_json::json!([10, 20, 30]), "{mode}");
        assert_eq!(got["units"], "1", "{mode}");
        assert_eq!(got["x"], 2.5, "{mode}");
        assert_eq!(got["title"], "udt", "{mode}");
        assert_eq!(got["overall"], false, "{mode}");
        let count_atts: Vec<String> = got["count_atts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert!(
            !count_atts.contains(&"best".to_string()),
            "{mode}: {count_atts:?}"
        );
    }
}
