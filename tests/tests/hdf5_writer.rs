//! Issue 30, "HDF5: a room of our own": the netCDF-4 files our one-pass HDF5 writer makes are
//! read by every real client (netCDF-C's ncdump 4.9.0, h5dump, h5py, netCDF4-python), with
//! what only a writer of our own gives: a contiguous variable without data stays contiguous
//! at any size, filter pipeline entries carry their names, and thousands of variables and
//! attributes go to dense storage.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::process::Command;

use common::{missing_references, python_script, run, tempdir};

/// A 96 MB float variable the CDL gives no data stays contiguous and unallocated, as
/// netCDF-C leaves it (before issue 30, such a variable over 64 MiB was stored chunked): h5py
/// sees no chunks and no storage, both ncdumps say `_Storage = "contiguous"`, and the file
/// holds only metadata.
#[test]
fn a_big_contiguous_variable_without_data_stays_contiguous() {
    let d = tempdir("h5w-big-contig");
    fs::write(
        d.join("big.cdl"),
        "netcdf big {\ndimensions: n = 24000000 ;\nvariables:\n  float big(n) ;\n  int small(n) ;\n  small:_ChunkSizes = 1000000 ;\n}\n",
    )
    .unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "big.nc", "big.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let size = fs::metadata(d.join("big.nc")).unwrap().len();
    assert!(size < 64 << 10, "the file holds {size} bytes");
    let ours = run("ncdump-rs", &["-s", "-h", "big.nc"], &d);
    let text = String::from_utf8_lossy(&ours.stdout);
    assert!(text.contains("big:_Storage = \"contiguous\" ;"), "{text}");
    assert!(text.contains("small:_Storage = \"chunked\" ;"), "{text}");
    if !missing_references(&["ncdump"]) {
        let c = Command::new("ncdump")
            .args(["-s", "-h", "big.nc"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
        let text = String::from_utf8_lossy(&c.stdout);
        assert!(text.contains("big:_Storage = \"contiguous\" ;"), "{text}");
        let data = Command::new("ncdump")
            .args(["-v", "big", "big.nc"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(data.status.success());
        let data = String::from_utf8_lossy(&data.stdout);
        assert!(
            data.contains(" big = _, _, _,"),
            "{}",
            &data[..data.len().min(400)]
        );
    }
    let got = python_script(
        &d,
        "import h5py",
        "h5py",
        "import h5py\nf = h5py.File('big.nc', 'r')\nb = f['big']\nprint(b.chunks, b.id.get_storage_size(), b.shape, f['small'].chunks)\n",
    );
    if let Some(out) = got {
        assert_eq!(
            String::from_utf8_lossy(&out),
            "None 0 (24000000,) (1000000,)\n"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Filter pipeline entries carry the names libhdf5 writes (a plugin filter's name: h5dump's
/// `COMMENT`), and the data comes back through netCDF-C.
#[test]
fn h5dump_shows_filter_names() {
    if missing_references(&["h5dump"]) {
        return;
    }
    let d = tempdir("h5w-filter-names");
    fs::write(
        d.join("z.cdl"),
        "netcdf z {\ndimensions: n = 4 ;\nvariables:\n  int v(n) ;\n  v:_Filter = \"32015,3\" ;\n  v:_Shuffle = \"true\" ;\n  v:_DeflateLevel = 1 ;\ndata:\n v = 1, 2, 3, 4 ;\n}\n",
    )
    .unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "z.nc", "z.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let h = Command::new("h5dump")
        .args(["-p", "-H", "-d", "v", "z.nc"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(h.status.success(), "{}", String::from_utf8_lossy(&h.stderr));
    let text = String::from_utf8_lossy(&h.stdout);
    let filters: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("FILTERS {"))
        .take(9)
        .map(str::trim)
        .collect();
    assert_eq!(
        filters,
        [
            "FILTERS {",
            "PREPROCESSING SHUFFLE",
            "COMPRESSION DEFLATE { LEVEL 1 }",
            "USER_DEFINED_FILTER {",
            "FILTER_ID 32015",
            "COMMENT zstd",
            "PARAMS { 3 }",
            "}",
            "}"
        ],
        "{text}"
    );
    fs::remove_dir_all(&d).unwrap();
}

/// 3,000 variables in the root group (dense links: fractal heap with indirect blocks, name
/// and creation-order B-trees of depth 1), one variable with 40 attributes and one with a
/// 100 KB attribute (dense attributes, a huge heap object), a dimension 3,000 variables use
/// (a 36 KB `REFERENCE_LIST`): netCDF-C's ncdump shows what it shows for its own file, h5dump
/// walks every object, h5py and netCDF4-python find every name.
#[test]
fn thousands_of_variables_and_attributes_for_every_client() {
    let d = tempdir("h5w-many");
    let mut cdl = String::from("netcdf many {\ndimensions:\n  n = 2 ;\nvariables:\n");
    for i in 0..3000 {
        cdl.push_str(&format!("  int v{i}(n) ;\n"));
    }
    cdl.push_str("  double a ;\n");
    for i in 0..40 {
        cdl.push_str(&format!("    a:att{i} = {i} ;\n"));
    }
    cdl.push_str(&format!(
        "    v7:big_text = \"{}\" ;\n",
        "x".repeat(100_000)
    ));
    cdl.push_str("data:\n  v2999 = 5, 6 ;\n  a = 1.5 ;\n}\n");
    fs::write(d.join("many.cdl"), &cdl).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "many.nc", "many.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    if !missing_references(&["ncgen", "ncdump", "h5dump"]) {
        let c = Command::new("ncgen")
            .args(["-4", "-o", "ref.nc", "many.cdl"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(c.status.success());
        let dump = |f: &str| {
            let o = Command::new("ncdump")
                .arg(f)
                .current_dir(&d)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{f}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).replacen("netcdf ref", "netcdf many", 1)
        };
        let (want, got) = (dump("ref.nc"), dump("many.nc"));
        assert!(
            want == got,
            "{}",
            common::diff(want.as_bytes(), got.as_bytes()).unwrap_or_default()
        );
        let h = Command::new("h5dump")
            .args(["-H", "many.nc"])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(h.status.success(), "{}", String::from_utf8_lossy(&h.stderr));
        assert_eq!(
            String::from_utf8_lossy(&h.stdout)
                .matches("DATASET \"")
                .count(),
            3002
        );
    }
    let got = python_script(
        &d,
        "import h5py, netCDF4",
        "h5py and netCDF4",
        "import h5py, netCDF4\n\
         f = h5py.File('many.nc', 'r')\n\
         print(len(f.keys()), len(f['a'].attrs), len(f['v7'].attrs['big_text']), list(map(int, f['v2999'][:])))\n\
         print(len(f['n'].attrs['REFERENCE_LIST']))\n\
         n = netCDF4.Dataset('many.nc')\n\
         print(len(n.variables), n['a'].att39, n['a'][...], n['v2999'].dimensions)\n",
    );
    if let Some(out) = got {
        assert_eq!(
            String::from_utf8_lossy(&out),
            "3002 40 100000 [5, 6]\n3000\n3001 39 1.5 ('n',)\n"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

/// An attribute with one of netCDF-4's reserved names (`CLASS`, `NAME`, `REFERENCE_LIST`,
/// ...) is refused before anything is written: every reader hides those names, so its value
/// would be lost without a word. netCDF-C's ncgen refuses them too ("String match to name in
/// use"); a classic output may hold them.
#[test]
fn reserved_attribute_names_are_refused_not_hidden() {
    let d = tempdir("h5w-reserved");
    for (cdl, owner, att) in [
        (
            "netcdf r { variables: int v ; v:NAME = \"n\" ; data: v = 1 ; }",
            "variable /v",
            "NAME",
        ),
        ("netcdf r { :CLASS = \"GROUP\" ; }", "group /", "CLASS"),
        (
            "netcdf r { group: g { variables: int w ; w:_Netcdf4Dimid = 0 ; } }",
            "variable /g/w",
            "_Netcdf4Dimid",
        ),
    ] {
        fs::write(d.join("r.cdl"), cdl).unwrap();
        let o = run("ncgen-rs", &["-4", "-o", "r.nc", "r.cdl"], &d);
        assert_eq!(o.status.code(), Some(3), "{cdl}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "ncgen: cannot write output: r.nc: {owner}: attribute \"{att}\": the name is \
                 reserved by netCDF-4 (dimension scales and netCDF's own bookkeeping), and \
                 readers do not show it; rename the attribute (netCDF-C refuses it too: \
                 \"String match to name in use\")\n"
            ),
            "{cdl}"
        );
        assert!(!d.join("r.nc").exists(), "{cdl}: an output was left");
        if !missing_references(&["ncgen"]) {
            let r = Command::new("ncgen")
                .args(["-4", "-o", "r_c.nc", "r.cdl"])
                .current_dir(&d)
                .output()
                .unwrap();
            assert!(!r.status.success(), "{cdl}: netCDF-C's ncgen wrote it");
        }
        // classic files have no such reservation
        let o = run("ncgen-rs", &["-k", "nc3", "-o", "r3.nc", "r.cdl"], &d);
        if !cdl.contains("group:") {
            assert!(
                o.status.success(),
                "{cdl}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}
