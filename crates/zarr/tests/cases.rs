//! Reading every store of the conformance cases (cases/nczarr/), unzipped and straight from
//! the zip, compared with netCDF-C's expected output (under the case's normalisation).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::Values;

#[test]
fn power_901_pure_zarr_file_and_zip() {
    let Some(c) = cases() else { return };
    let d = tmpdir("power901");
    let zip = c.join("nczarr/ref_power_901_constants_orig.zip");
    unzip(&zip, &d);
    let want = std::fs::read_to_string(c.join("nczarr/ref_power_901_constants.cdl")).unwrap();
    let dir = d.join("ref_power_901_constants");
    let got = dump(
        &format!("file://{}#mode=zarr,file", dir.display()),
        true,
        false,
        None,
    );
    assert_same(&got, &want, false, "power_901 file");
    let z = d.join("ref_power_901_constants.zip");
    std::fs::copy(&zip, &z).unwrap();
    let got = dump(
        &format!("file://{}#mode=xarray,zip", z.display()),
        true,
        false,
        None,
    );
    assert_same(&got, &want, false, "power_901 zip");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn quotes_file_and_zip() {
    let Some(c) = cases() else { return };
    let d = tmpdir("quotes");
    let zip = c.join("nczarr/ref_quotes_orig.zip");
    unzip(&zip, &d);
    let want = std::fs::read_to_string(c.join("nczarr/ref_quotes.cdl")).unwrap();
    let got = dump(
        &format!("file://{}#mode=zarr,file", d.join("ref_quotes").display()),
        true,
        false,
        None,
    );
    assert_same(&got, &want, false, "quotes file");
    let z = d.join("ref_quotes.zip");
    std::fs::copy(&zip, &z).unwrap();
    let got = dump(
        &format!("file://{}#mode=zarr,zip", z.display()),
        true,
        false,
        None,
    );
    assert_same(&got, &want, false, "quotes zip");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn byte_stores_with_fill() {
    let Some(c) = cases() else { return };
    let d = tmpdir("byte");
    for (zip, store, expected) in [
        ("ref_byte.zarr.zip", "ref_byte.zarr", "ref_byte.cdl"),
        (
            "ref_byte_fill_value_null.zarr.zip",
            "ref_byte_fill_value_null.zarr",
            "ref_byte_fill_value_null.cdl",
        ),
    ] {
        unzip(&c.join("nczarr").join(zip), &d);
        let want = std::fs::read_to_string(c.join("nczarr").join(expected)).unwrap();
        let loc = format!("file://{}#mode=zarr,file", d.join(store).display());
        let got = dump(&loc, false, true, None);
        assert_same(&sclean(&got), &want, true, store);
        // and straight from the zip (its single top directory is the store root)
        let loc = format!(
            "file://{}#mode=zarr,zip",
            c.join("nczarr").join(zip).display()
        );
        let got = dump(&loc, false, true, Some(expected.trim_end_matches(".cdl")));
        assert_same(&sclean(&got), &want, true, zip);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn old_format_v1_zip_and_directory() {
    let Some(c) = cases() else { return };
    let zip = c.join("nczarr/ref_oldformat.zip");
    let want = std::fs::read_to_string(c.join("nczarr/ref_oldformat.cdl")).unwrap();
    let got = dump(
        &format!("file://{}#mode=nczarr,zip", zip.display()),
        false,
        false,
        Some("ref_oldformat"),
    );
    assert_same(&got, &want, true, "oldformat zip");
    let d = tmpdir("oldformat");
    unzip(&zip, &d);
    let loc = format!(
        "file://{}#mode=nczarr,file",
        d.join("oldformat.file").display()
    );
    let got = dump(&loc, false, false, Some("ref_oldformat"));
    assert_same(&got, &want, true, "oldformat file");
    let f = open(&loc);
    assert_eq!(f.dataset().info.superblock_version, Some(1));
    assert_eq!(
        f.dataset().info.nc_properties.as_deref(),
        Some("version=2,netcdf=4.8.1-development,nczarr=1.0.0")
    );

    // nccopy to the current format, then read it back as NCZarr and as pure Zarr
    let out = d.join("tmp_newformat.file");
    let l = format!("file://{}#mode=nczarr,file", out.display());
    common::write_at(&l, f.dataset(), &f, &Default::default()).unwrap();
    let got = dump(
        &format!("file://{}#mode=nczarr,file", out.display()),
        false,
        false,
        Some("ref_oldformat"),
    );
    assert_same(&got, &want, true, "newformat");
    let pure = std::fs::read_to_string(c.join("nczarr/ref_newformatpure.cdl")).unwrap();
    let got = dump(
        &format!("file://{}#mode=zarr,file", out.display()),
        false,
        false,
        Some("ref_oldformat"),
    );
    assert_same(&got, &pure, true, "newformat read as pure zarr");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn own_codecs_store() {
    let Some(c) = cases() else { return };
    let d = tmpdir("owncodecs");
    let zip = c.join("nczarr/own/own_codecs.zarr.zip");
    unzip(&zip, &d);
    for loc in [
        format!(
            "file://{}#mode=zarr,file",
            d.join("own_codecs.zarr").display()
        ),
        format!("file://{}#mode=zarr,zip", zip.display()),
    ] {
        let f = open(&loc);
        let ds = f.dataset();
        let v = |n: &str| ds.find_var(nc_dataset::ROOT, n).unwrap();
        assert_eq!(
            ds.var(v("bz")).storage.codecs.as_deref(),
            Some(r#"[{"id": "bz2","level": 9}]"#)
        );
        assert_eq!(
            ds.var(v("zl")).storage.codecs.as_deref(),
            Some(r#"[{"elementsize": 4,"id": "shuffle"},{"id": "zlib","level": 5}]"#)
        );
        assert_eq!(ds.var(v("zl")).storage.filters.len(), 2);
        let hs = print(ds, &f, true, true, None);
        assert!(hs.contains("bz:_Codecs"), "{hs}");
        assert!(hs.contains("zl:_Codecs"), "{hs}");
        assert_eq!(
            f.read_var(v("bz"), &[0, 0], &[4, 4]).unwrap(),
            Values::Float((0..16).map(|x| x as f32).collect())
        );
        assert_eq!(
            f.read_var(v("zl"), &[0, 0], &[4, 4]).unwrap(),
            Values::Int((0..16).collect())
        );
        assert_eq!(
            f.read_var(v("zl"), &[1, 1], &[2, 3]).unwrap(),
            Values::Int(vec![5, 6, 7, 9, 10, 11])
        );
        assert_eq!(
            f.read_var(v("raw"), &[0], &[4]).unwrap(),
            Values::Short(vec![0, 1, 2, 3])
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}
