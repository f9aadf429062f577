//! `_Codecs` in CDL declares filters as numcodecs JSON (issue 14: never dropped silently).
//! Alone, it is the variable's filter chain, in any output; its Zarr-only codecs go to Zarr
//! stores as given and are refused for netCDF-4, naming them; a codec nobody knows is an error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{run, tempdir};

const CDL: &str = "netcdf z {\ndimensions:\n\tx = 8 ;\nvariables:\n\tdouble v(x) ;\n\
    \t\tv:_Codecs = \"CODECS\" ;\ndata:\n\n v = 1, 2, 3, 4, 5, 6, 7, 8 ;\n}\n";

fn cdl(codecs: &str) -> String {
    CDL.replace("CODECS", &codecs.replace('"', "\\\""))
}

fn special_lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.contains("v:_"))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn codecs_alone_declare_the_filters_of_a_netcdf4_variable() {
    let d = tempdir("cdl-codecs-nc4");
    fs::write(
        d.join("z.cdl"),
        cdl(r#"[{"id": "shuffle", "elementsize": 8}, {"id": "zlib", "level": 4}]"#),
    )
    .unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "z.nc", "z.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("ncdump-rs", &["-s", "z.nc"], &d);
    assert_eq!(
        special_lines(&o.stdout),
        [
            "v:_Storage = \"chunked\" ;",
            "v:_ChunkSizes = 8 ;",
            "v:_Shuffle = \"true\" ;",
            "v:_DeflateLevel = 4 ;",
            "v:_Endianness = \"little\" ;",
        ]
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains(" v = 1, 2, 3, 4, 5, 6, 7, 8 ;"));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn zarr_only_codecs_go_to_zarr_and_are_refused_for_netcdf4() {
    let d = tempdir("cdl-codecs-zarr");
    let codecs = r#"[{"id": "delta", "dtype": "<f8"}, {"id": "zlib", "level": 4}]"#;
    fs::write(d.join("z.cdl"), cdl(codecs)).unwrap();
    let url = format!("file://{}/z.zarr#mode=zarr,file", d.display());
    let o = run("ncgen-rs", &["-o", &url, "z.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let zarray = fs::read_to_string(d.join("z.zarr/v/.zarray")).unwrap();
    assert!(
        zarray.contains(
            r#""compressor":{"id":"zlib","level":4},"filters":[{"id":"delta","dtype":"<f8"}]"#
        ),
        "{zarray}"
    );
    let o = run("ncdump-rs", &[&url], &d);
    assert!(String::from_utf8_lossy(&o.stdout).contains(" v = 1, 2, 3, 4, 5, 6, 7, 8 ;"));
    // zarr-python decodes the delta + zlib chain as written
    let script = "import zarr\nprint(zarr.open_array('z.zarr/v', mode='r')[:].tolist())\n";
    if let Some(got) = common::python_script(&d, "import zarr", "zarr-python", script) {
        assert_eq!(
            String::from_utf8_lossy(&got),
            "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]\n"
        );
    }

    let o = run("ncgen-rs", &["-4", "-o", "z.nc", "z.cdl"], &d);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("variable /v")
            && err.contains("the Zarr codec(s) delta, which have no HDF5 filter"),
        "{err}"
    );
    assert!(!d.join("z.nc").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unknown_codecs_and_bad_json_are_errors_naming_them() {
    let d = tempdir("cdl-codecs-bad");
    for (codecs, want) in [
        (
            r#"[{"id": "frobnicate"}]"#,
            "codec {\"id\":\"frobnicate\"} is not one ncgen-rs knows",
        ),
        (r#"[{"id": "zlib", "level": 12}]"#, "level"),
        ("[{", "_Codecs:"),
    ] {
        fs::write(d.join("z.cdl"), cdl(codecs)).unwrap();
        let o = run("ncgen-rs", &["-4", "-o", "z.nc", "z.cdl"], &d);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{codecs}: {err}");
        assert!(err.contains("variable 'v'"), "{err}");
        assert!(!d.join("z.nc").exists());
    }
    fs::remove_dir_all(&d).unwrap();
}
