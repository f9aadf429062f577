//! netCDF-C's own plugins as shipped by the netCDF4 Python wheel (`netCDF4/plugins`): HDF5
//! filters (including an szip encoder, through libaec) and the NCZarr codec tables
//! (`NCZ_get_codec_info`, `NCZ_codec_info_defaults`). Skips when the folder is absent.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::{FilterContext, FilterSpec, Registry};
use std::path::PathBuf;

fn netcdf4_plugin_dir() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import netCDF4, os; print(os.path.join(os.path.dirname(netCDF4.__file__), 'plugins'))",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && p.is_dir()).then_some(p)
}

#[test]
fn netcdf_c_plugins() {
    let Some(dir) = netcdf4_plugin_dir() else {
        eprintln!(
            "skipping: the netCDF4 Python package (with its plugins folder) is not installed"
        );
        return;
    };
    let mut r = Registry::with_builtins();
    let rep = r.load_plugins(std::slice::from_ref(&dir));
    for l in &rep.loaded {
        eprintln!("filter {} {:?} {}", l.id, l.name, l.path.display());
    }
    for s in &rep.skipped {
        eprintln!("skipped {}: {}", s.path.display(), s.reason);
    }
    for c in &rep.codecs {
        eprintln!(
            "codec {:?} = {} defaults={} paired={} {}",
            c.codec_id,
            c.hdf5_id,
            c.defaults,
            c.paired,
            c.path.display()
        );
    }
    // the codec tables pair the standard codecs with their HDF5 ids
    let pairs: Vec<(String, u32)> = rep
        .codecs
        .iter()
        .map(|c| (c.codec_id.clone(), c.hdf5_id))
        .collect();
    for want in [
        ("zlib", 1),
        ("shuffle", 2),
        ("fletcher32", 3),
        ("bz2", 307),
        ("zstd", 32015),
        ("blosc", 32001),
    ] {
        assert!(
            pairs.iter().any(|(c, i)| c == want.0 && *i == want.1),
            "codec {want:?} missing: {pairs:?}"
        );
    }
    assert!(rep.codecs.iter().all(|c| c.paired || c.hdf5_id == 4));
    assert_eq!(r.by_codec_name("zstd").unwrap().id(), 32015);

    // JSON <-> parameters through the plugin's functions
    let zstd = r.codec_plugin("zstd").unwrap();
    let json = zstd.hdf5_to_codec(&[5]).unwrap();
    eprintln!("zstd 5 -> {json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["id"], "zstd");
    assert_eq!(v["level"], 5);
    assert_eq!(zstd.codec_to_hdf5(&json).unwrap(), [5]);
    let zlib = r.codec_plugin("zlib").unwrap();
    assert_eq!(
        zlib.codec_to_hdf5(r#"{"id": "zlib", "level": 7}"#).unwrap(),
        [7]
    );
    assert!(zlib.codec_to_hdf5("not json").is_err());

    // szip: the plugin encodes (libaec), our built-in decodes
    if let Some(sz) = r.plugin(4) {
        for (ts, shape) in [
            (4usize, vec![20u64, 30]),
            (2, vec![100]),
            (8, vec![7, 64]),
            (1, vec![500]),
        ] {
            let ctx = FilterContext::new(ts, &shape);
            let n = ctx.chunk_bytes().unwrap();
            let data: Vec<u8> = (0..n)
                .map(|i| ((i / ts) % 97 + (i % ts) * 3) as u8)
                .collect();
            let wp = sz.working_params(&[32, 16], &ctx);
            let theirs = sz.build(&wp, &ctx).unwrap();
            let mut enc = Vec::new();
            theirs.encode(&data, &mut enc).unwrap();
            let ours = r.builtin(4).unwrap().build(&wp, &ctx).unwrap();
            let mut dec = Vec::new();
            ours.decode(&enc, &mut dec).unwrap();
            assert!(dec == data, "szip {ts} {shape:?}");
            let mut back = Vec::new();
            theirs.decode(&enc, &mut back).unwrap();
            assert!(back == data);
        }
    }
    // the other HDF5 filters: ours -> theirs and back
    let chain_data: Vec<u8> = (0..4000u32)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    for spec in ["1,5", "2", "3", "307,9", "32015,3", "32001,0,0,0,0,5,1,1"] {
        let spec = nc_filters::parse_spec_list(spec).unwrap().remove(0);
        let id = spec.id;
        let Some(theirs) = r.plugin(id) else { continue };
        let ctx = FilterContext::new(4, &[4000]);
        let wp = theirs.working_params(&spec.params, &ctx);
        let theirs = theirs.build(&wp, &ctx).unwrap();
        let ours = r.builtin(id).unwrap().build(&wp, &ctx).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        ours.encode(&chain_data, &mut a).unwrap();
        theirs.decode(&a, &mut b).unwrap();
        assert!(b == chain_data, "{id}: plugin decoding ours");
        theirs.encode(&chain_data, &mut a).unwrap();
        ours.decode(&a, &mut b).unwrap();
        assert!(b == chain_data, "{id}: ours decoding the plugin's");
        let _ = FilterSpec { id, params: wp };
    }
}
