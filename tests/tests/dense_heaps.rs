//! Fractal heaps big enough to have child indirect blocks (HDF5 spec III.G): dense attribute
//! storage of 12,000 attributes on one variable, as netCDF-C 4.9.0 writes it. hdf5-reader
//! located objects in a child indirect block with a block offset relative to the child, and
//! `ncdump-rs` failed ("unexpected end of data"); the reader now walks the doubling table
//! itself (`crates/hdf5/src/fheap.rs`), for attribute, link and shared-message heaps. A group
//! of 24,000 links in dense link storage (h5py, `libver="latest"`) guards the link side.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

#[test]
fn twelve_thousand_attributes_from_netcdf_c() {
    if missing_references(&["ncgen", "ncdump"]) {
        return;
    }
    let d = tempdir("dense-attrs");
    let mut cdl = String::from("netcdf a {\nvariables:\n  int v ;\n");
    for i in 0..12_000 {
        cdl.push_str(&format!("    v:a{i} = {i} ;\n"));
    }
    cdl.push_str("}\n");
    std::fs::write(d.join("a.cdl"), cdl).unwrap();
    let o = std::process::Command::new("ncgen")
        .args(["-4", "-o", "a.nc", "a.cdl"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = run("ncdump-rs", &["-h", "a.nc"], &d);
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let theirs = std::process::Command::new("ncdump")
        .args(["-h", "a.nc"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(diff(&theirs.stdout, &ours.stdout), None);
    assert!(String::from_utf8_lossy(&ours.stdout).contains("\t\tv:a11999 = 11999 ;\n"));
}

#[test]
fn many_links_from_h5py() {
    let d = tempdir("dense-links");
    let Some(_) = python_script(
        &d,
        "import h5py",
        "h5py",
        r#"
import h5py, numpy as np
with h5py.File('links.h5', 'w', libver='latest') as f:
    g = f.create_group('g')
    for i in range(24000):
        g.create_dataset('d%05d' % i, data=np.int32(i))
"#,
    ) else {
        return;
    };
    let o = run("ncdump-rs", &["-v", "/g/d23999,/g/d00000", "links.h5"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("\tint d").count(), 24_000, "{}", &text[..200]);
    assert!(
        text.contains(" d00000 = 0 ;\n") && text.contains(" d23999 = 23999 ;\n"),
        "{text}"
    );
}
