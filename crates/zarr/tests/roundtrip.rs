//! CDL → our NCZarr writer → our reader, compared with the source dataset, with the cases'
//! expected outputs, and (when installed) with netCDF-C 4.9.0's ncdump of its own stores.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::InMemory;
use std::path::Path;

const CDLS: [&str; 16] = [
    "nczarr/ref_whole.cdl",
    "nczarr/ref_skip.cdl",
    "nczarr/ref_skipw.cdl",
    "nczarr/ref_rem.cdl",
    "nczarr/ref_ndims.cdl",
    "nczarr/ref_avail1.cdl",
    "nczarr/ref_misc1.cdl",
    "nczarr/ref_misc2.cdl",
    "nczarr/ref_jsonconvention.cdl",
    "nczarr/ref_fillonly.cdl",
    "nczarr/ref_purezarr_base.cdl",
    "ncdump/cdl/ref_dimscope.cdl",
    "ncdump/cdl/ref_tst_group_data.cdl",
    "ncdump/cdl/ref_tst_solar_1.cdl",
    "ncdump/cdl/ref_tst_nul4.cdl",
    "ncdump/cdl/ref_tst_nans.cdl",
];

fn stem(p: &str) -> String {
    Path::new(p)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// write → read gives back the same dataset text and data, for NCZarr and pure Zarr, in
/// directory and zip stores.
#[test]
fn round_trip_every_cdl() {
    let Some(c) = cases() else { return };
    let d = tmpdir("rt");
    let mut n = 0;
    for rel in CDLS {
        let ds = cdl(&c.join(rel));
        let want = print(&ds, &InMemory, false, false, None);
        for mode in [
            "nczarr,file",
            "nczarr,zip",
            "zarr,file",
            "nczarr,noxarray,file",
        ] {
            if mode.starts_with("zarr") && ds.groups.len() > 1 {
                continue; // pure Zarr has no named dimensions outside the root
            }
            let ext = if mode.ends_with("zip") { "zip" } else { "file" };
            let loc = format!(
                "file://{}/{}-{}.{ext}#mode={mode}",
                d.display(),
                stem(rel),
                mode.replace(',', "_")
            );
            write(&ds, &loc, &Default::default());
            let got = dump(&loc, false, false, Some(&ds.name));
            if mode.starts_with("zarr") {
                // pure Zarr keeps dimension names through _ARRAY_DIMENSIONS; types of
                // attributes are inferred, so compare data lines only
                // and list variables in key order: compare the sorted data blocks
                let data = |s: &str| {
                    let body = s
                        .split_once("data:")
                        .map(|x| x.1.to_string())
                        .unwrap_or_default();
                    let mut blocks: Vec<String> = body
                        .trim_end_matches(|c: char| c == '}' || c.is_whitespace())
                        .split("\n\n")
                        .map(|b| b.trim().to_string())
                        .filter(|b| !b.is_empty())
                        .collect();
                    blocks.sort();
                    blocks.join("\n")
                };
                assert_same(&data(&got), &data(&want), false, &format!("{rel} {mode}"));
            } else if rel.contains("jsonconvention") {
                // JSON-valued text comes back in compact JSON spelling: compare as JSON
                let back = open(&loc);
                let atts = |d: &nc_dataset::Dataset| -> Vec<serde_json::Value> {
                    d.groups[0]
                        .atts
                        .iter()
                        .chain(d.vars[0].atts.iter())
                        .map(|a| match &a.values {
                            nc_dataset::Values::Char(b) => serde_json::from_slice(b).unwrap(),
                            other => panic!("{other:?}"),
                        })
                        .collect()
                };
                assert_eq!(atts(back.dataset()), atts(&ds), "{rel} {mode}");
            } else {
                assert_same(&got, &want, false, &format!("{rel} {mode}"));
            }
            n += 1;
        }
    }
    assert!(n >= 40, "{n} round trips");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The pure-Zarr cases of the conformance suite (expected outputs from netCDF-C).
#[test]
fn pure_zarr_cases() {
    let Some(c) = cases() else { return };
    let d = tmpdir("pure");
    let base = cdl(&c.join("nczarr/ref_purezarr_base.cdl"));
    let read = |p: &str| std::fs::read_to_string(c.join(p)).unwrap();

    let loc = format!(
        "file://{}/tmp_purezarr.file#mode=zarr,noxarray,file",
        d.display()
    );
    write(&base, &loc, &Default::default());
    assert_same(
        &dump(&loc, false, false, None),
        &read("nczarr/ref_purezarr.cdl"),
        false,
        "noxarray",
    );
    assert!(
        !d.join("tmp_purezarr.file/i/.zattrs").exists()
            || !std::fs::read_to_string(d.join("tmp_purezarr.file/i/.zattrs"))
                .unwrap()
                .contains("_ARRAY_DIMENSIONS")
    );

    let loc = format!("file://{}/tmp_xarray.file#mode=zarr,file", d.display());
    write(&base, &loc, &Default::default());
    assert_same(
        &dump(&loc, false, false, None),
        &read("nczarr/ref_xarray.cdl"),
        false,
        "xarray",
    );
    let zattrs = std::fs::read_to_string(d.join("tmp_xarray.file/i/.zattrs")).unwrap();
    assert_eq!(zattrs, r#"{"_ARRAY_DIMENSIONS":["x","y"]}"#);
    let zgroup = std::fs::read_to_string(d.join("tmp_xarray.file/.zgroup")).unwrap();
    assert_eq!(zgroup, r#"{"zarr_format":2}"#);

    let whole = cdl(&c.join("nczarr/ref_whole.cdl"));
    let loc = format!(
        "file://{}/tmp_nczarr.file#mode=nczarr,noxarray,file",
        d.display()
    );
    write(&whole, &loc, &Default::default());
    let got = dump(
        &format!("file://{}/tmp_nczarr.file#mode=zarr,file", d.display()),
        false,
        false,
        Some("nczarr2zarr"),
    );
    assert_same(
        &got,
        &read("nczarr/ref_nczarr2zarr.cdl"),
        false,
        "nczarr2zarr",
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn json_convention_case() {
    let Some(c) = cases() else { return };
    let d = tmpdir("jsonconv");
    let ds = cdl(&c.join("nczarr/ref_jsonconvention.cdl"));
    let loc = format!(
        "file://{}/tmp_jsonconvention.file#mode=nczarr,file",
        d.display()
    );
    write(&ds, &loc, &Default::default());
    // the char attribute holding JSON is stored as JSON
    let za = std::fs::read_to_string(d.join("tmp_jsonconvention.file/v/.zattrs")).unwrap();
    assert!(
        za.starts_with(r#"{"varconvention":{"key1":[1,2,3],"key2":{"key3":"abc"}}"#),
        "{za}"
    );
    let want = std::fs::read_to_string(c.join("nczarr/ref_jsonconvention.cdl"))
        .unwrap()
        .replace("\\n", "");
    let got = dump(&loc, false, false, None);
    // netCDF-C prints the JSON back compactly; compare without blanks inside the text
    let squash = |s: &str| s.replace(", ", ",").replace(": ", ":");
    assert_same(&squash(&got), &squash(&want), true, "jsonconvention");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Write options for netCDF-C 4.9.0's layout (`layout=4.9`; the default is 4.10's).
fn layout_49() -> nc_zarr::ZarrWriteOptions {
    nc_zarr::ZarrWriteOptions {
        layout: nc_zarr::NczarrLayout::NetcdfC490,
        ..Default::default()
    }
}

/// netCDF-C 4.9.0's ncdump reads our `layout=4.9` stores exactly as it reads the stores its
/// ncgen writes for the same CDL (header, specials and data).
#[test]
fn reference_ncdump_reads_our_stores_identically() {
    let Some(c) = cases() else { return };
    if !have_reference() {
        return;
    }
    let d = tmpdir("refcmp");
    let mut compared = 0;
    for rel in CDLS {
        let src = c.join(rel);
        let name = stem(rel);
        let refloc = format!("file://{}/{name}-ref.file#mode=nczarr,file", d.display());
        let ours = format!("file://{}/{name}-ours.file#mode=nczarr,file", d.display());
        if !reference_ncgen(&src, &refloc, &d) {
            eprintln!("{rel}: reference ncgen fails, not compared");
            continue;
        }
        write(&cdl(&src), &ours, &layout_49());
        let want = reference_ncdump(&name, &refloc);
        let got = reference_ncdump(&name, &ours);
        if !want.status.success() {
            eprintln!("{rel}: reference ncdump fails on its own store, not compared");
            continue;
        }
        assert!(
            got.status.success(),
            "{rel}: ncdump fails on our store: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        assert_eq!(
            without_ncproperties(&got.stdout),
            without_ncproperties(&want.stdout),
            "{rel}"
        );
        compared += 1;
    }
    eprintln!("compared {compared} stores with the reference");
    assert!(compared >= 10, "only {compared} compared");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The filter cases (netCDF-C's expected outputs come from a build with NCZarr codecs).
#[test]
fn filter_cases_show_filter_and_codecs() {
    let Some(c) = cases() else { return };
    let d = tmpdir("filtcases");
    for (cdl_rel, var, filter, codecs) in [
        (
            "nczarr/derived/ref_any_deflate.cdl",
            "ivar",
            "1,9",
            r#"[{"id": "zlib","level": 9}]"#,
        ),
        (
            "nczarr/derived/ref_any_shuffle.cdl",
            "ivar",
            "2,4",
            r#"[{"id": "shuffle","elementsize": 4}]"#,
        ),
        (
            "nczarr/derived/ref_any_bzip2.cdl",
            "fvar",
            "307,9",
            r#"[{"id": "bz2","level": 9}]"#,
        ),
        (
            "nczarr/derived/ref_any_zstd.cdl",
            "fvar",
            "32015,1",
            r#"[{"id": "zstd","level": 1}]"#,
        ),
        (
            "nczarr/derived/ref_any_fletcher32.cdl",
            "ivar",
            "3",
            r#"[{"id": "fletcher32"}]"#,
        ),
        (
            "nczarr/derived/ref_any_blosc.cdl",
            "ivar",
            "32001,2,2,4,256,5,1,1",
            r#"[{"id": "blosc","cname": "lz4","clevel": 5,"shuffle": 1,"blocksize": 0}]"#,
        ),
    ] {
        let ds = cdl(&c.join(cdl_rel));
        let loc = format!(
            "file://{}/{}.file#mode=nczarr,file",
            d.display(),
            stem(cdl_rel)
        );
        write(&ds, &loc, &Default::default());
        let f = open(&loc);
        let v = f.dataset().find_var(nc_dataset::ROOT, var).unwrap();
        let st = &f.dataset().var(v).storage;
        assert_eq!(
            nc_filters::format_spec_list(&st.filters),
            filter,
            "{cdl_rel}"
        );
        assert_eq!(st.codecs.as_deref(), Some(codecs), "{cdl_rel}");
        // data identical to the source
        let want = print(&ds, &nc_dataset::InMemory, false, false, None);
        let got = print(f.dataset(), &f, false, false, Some(&ds.name));
        assert_same(&got, &want, false, cdl_rel);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Every CDL of the corpus that netCDF-C 4.9.0 can write as NCZarr: its ncdump -s of our
/// store equals its ncdump -s of its own store.
#[test]
fn reference_sweep_over_the_cdl_corpus() {
    let Some(c) = cases() else { return };
    if !have_reference() {
        return;
    }
    let d = tmpdir("sweep");
    let (mut same, mut same_pure, mut skipped) = (0, 0, Vec::new());
    let mut files: Vec<_> = ["ncdump/cdl", "ncgen", "ncgen3", "nczarr", "filters"]
        .iter()
        .flat_map(|sub| std::fs::read_dir(c.join(sub)).into_iter().flatten())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cdl"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for src in files {
        let name = src.file_stem().unwrap().to_string_lossy().into_owned();
        // netCDF-C 4.9.0 writes doubles to JSON with 6 significant digits: attribute
        // 999999986991104 becomes 1e+15 and the double fill value 9.969209968386869e36
        // becomes 9.96921e+36 (then no longer recognised as fill); we write them exactly
        if ["ref_power_901_constants", "ref_perdimspecs"].contains(&name.as_str()) {
            skipped.push(format!("{name} (reference loses double precision)"));
            continue;
        }
        let Ok(ds) = nc_cdl::parse_cdl_file(&src, &nc_cdl::ParseOptions::default()) else {
            skipped.push(format!("{name} (nc-cdl cannot parse it)"));
            continue;
        };
        let elements: u64 = (0..ds.vars.len())
            .map(|v| ds.num_elements(nc_dataset::VarId(v)).unwrap_or(u64::MAX))
            .fold(0u64, u64::saturating_add);
        if elements > 1 << 20 {
            skipped.push(format!("{name} (too large for a dump comparison)"));
            continue;
        }
        let refloc = format!("file://{}/{name}-ref.file#mode=nczarr,file", d.display());
        let ours = format!("file://{}/{name}-ours.file#mode=nczarr,file", d.display());
        if !reference_ncgen(&src, &refloc, &d) {
            skipped.push(format!("{name} (reference ncgen fails)"));
            continue;
        }
        let want = reference_ncdump(&name, &refloc);
        if !want.status.success() {
            skipped.push(format!("{name} (reference ncdump fails on its own store)"));
            continue;
        }
        if let Err(e) = common::write_at(&ours, &ds, &nc_dataset::InMemory, &layout_49()) {
            failures.push(format!("{name}: our writer: {e}"));
            continue;
        }
        let got = reference_ncdump(&name, &ours);
        if without_ncproperties(&got.stdout) != without_ncproperties(&want.stdout) {
            failures.push(format!(
                "{name}: ncdump differs\n--- ours:\n{}\n--- reference:\n{}",
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout)
            ));
            continue;
        }
        same += 1;
        // pure Zarr too (char data excepted: 4.9.0 crashes on `|S1`, which we write for
        // zarr-python's sake)
        let has_char = ds
            .vars
            .iter()
            .any(|v| v.ty == nc_dataset::AtomicType::Char.into());
        // ref_fillonly: 4.9.0 types an untyped `_FillValue: -9999` as short; we write -9999.0
        if has_char || ds.groups.len() > 1 || name == "ref_fillonly" {
            continue;
        }
        let refp = format!("file://{}/{name}-refp.file#mode=zarr,file", d.display());
        let oursp = format!("file://{}/{name}-oursp.file#mode=zarr,file", d.display());
        if !reference_ncgen(&src, &refp, &d) {
            continue;
        }
        common::write_at(&oursp, &ds, &nc_dataset::InMemory, &Default::default()).unwrap();
        let (want, got) = (
            reference_ncdump(&name, &refp),
            reference_ncdump(&name, &oursp),
        );
        if !want.status.success() {
            continue;
        }
        if without_ncproperties(&got.stdout) != without_ncproperties(&want.stdout) {
            failures.push(format!(
                "{name} (pure zarr): ncdump differs\n--- ours:\n{}\n--- reference:\n{}",
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout)
            ));
            continue;
        }
        same_pure += 1;
    }
    eprintln!("{same} identical, {same_pure} pure Zarr identical; skipped: {skipped:?}");
    assert!(
        same_pure >= 10,
        "only {same_pure} pure Zarr stores compared"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(same >= 30, "only {same} compared");
    std::fs::remove_dir_all(&d).unwrap();
}

/// netCDF-C 4.9.0's `ncgen -4 -lb` writes `src` to location `loc` (run in `dir`); false when it
/// fails.
fn reference_ncgen(src: &Path, loc: &str, dir: &Path) -> bool {
    std::process::Command::new("/usr/bin/ncgen")
        .args(["-4", "-lb", "-o", loc, src.to_str().unwrap()])
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

/// netCDF-C 4.9.0's `ncdump -s -n name` of location `loc`.
fn reference_ncdump(name: &str, loc: &str) -> std::process::Output {
    std::process::Command::new("/usr/bin/ncdump")
        .args(["-s", "-n", name, loc])
        .output()
        .unwrap()
}

/// An ncdump text without its `_NCProperties` line: the value names the writing library
/// (ours says ncgen-rs), which is all that may differ.
fn without_ncproperties(dump: &[u8]) -> String {
    String::from_utf8_lossy(dump)
        .lines()
        .filter(|l| !l.contains(":_NCProperties = "))
        .map(|l| format!("{l}\n"))
        .collect()
}
