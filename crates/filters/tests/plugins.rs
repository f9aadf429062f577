//! Interop with the real HDF5 filter plugins on this machine, called through our loader:
//! chunks our built-in codecs encode decode with the plugin, and the other way round, byte
//! for byte. Skips (with a message) when the plugin folders are absent.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::{FilterContext, FilterSpec, Registry};
use std::path::PathBuf;

const DEBIAN: &str = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins";

fn hdf5plugin_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PLUGINDIR_EXTRA") {
        return Some(d.into());
    }
    let out = std::process::Command::new("python3")
        .args(["-c", "import hdf5plugin; print(hdf5plugin.PLUGIN_PATH)"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.is_dir().then_some(p)
}

fn registry_for(dir: &PathBuf) -> Registry {
    let mut r = Registry::with_builtins();
    let report = r.load_plugins(std::slice::from_ref(dir));
    for l in &report.loaded {
        eprintln!("loaded {} = {} ({})", l.id, l.name, l.path.display());
    }
    for s in &report.skipped {
        eprintln!("skipped {}: {}", s.path.display(), s.reason);
    }
    r
}

fn data(n: usize, type_size: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    let mut x: u32 = 7;
    let mut i = 0usize;
    while v.len() < n {
        x = x.wrapping_mul(1664525).wrapping_add(1013904223);
        let f = (i as f32).sin() * 100.0 + ((x >> 24) as f32) * 1e-3;
        let b = f.to_le_bytes();
        v.extend_from_slice(&b[..type_size.min(4)]);
        v.resize(v.len() + type_size.saturating_sub(4), 0);
        i += 1;
    }
    v.truncate(n);
    v
}

/// Encode with one side, decode with the other, both ways.
fn cross(r: &Registry, id: u32, visible: &[u32], type_size: usize, shape: &[u64]) {
    let ctx = FilterContext::new(type_size, shape);
    let chunk = data(ctx.chunk_bytes().unwrap(), type_size);
    let ours = r.builtin(id).unwrap();
    let theirs = r
        .plugin(id)
        .unwrap_or_else(|| panic!("plugin {id} not loaded"));
    let wp = ours.working_params(visible, &ctx);
    if std::env::var_os("NCF_TRACE").is_some() {
        eprintln!("cross {id} {wp:?} ts {type_size} shape {shape:?}");
    }
    assert_eq!(wp, theirs.working_params(visible, &ctx));
    let ours = ours.build(&wp, &ctx).unwrap();
    let theirs = theirs.build(&wp, &ctx).unwrap();
    let mut enc = Vec::new();
    let mut dec = Vec::new();
    ours.encode(&chunk, &mut enc).unwrap();
    if std::env::var_os("NCF_TRACE").is_some() {
        eprintln!("  ours -> theirs: {enc:?}");
    }
    theirs
        .decode(&enc, &mut dec)
        .unwrap_or_else(|e| panic!("plugin {id} {wp:?} decoding ours: {e}"));
    assert!(
        dec == chunk,
        "plugin {id} {wp:?}: their decode of ours differs"
    );
    if std::env::var_os("NCF_TRACE").is_some() {
        eprintln!("  theirs encode");
    }
    if let Err(e) = theirs.encode(&chunk, &mut enc) {
        // HDF5's blosc filter fails (and HDF5 then stores the chunk unfiltered, the filter
        // being optional) when the output would not be smaller than the input
        assert!(id == 32001, "plugin {id} {wp:?} failed to encode: {e}");
        eprintln!(
            "note: blosc plugin did not compress {} bytes ({wp:?})",
            chunk.len()
        );
        return;
    }
    if std::env::var_os("NCF_TRACE").is_some() {
        eprintln!("  theirs -> ours: {:?}", &enc[..enc.len().min(40)]);
    }
    ours.decode(&enc, &mut dec)
        .unwrap_or_else(|e| panic!("built-in {id} {wp:?} decoding the plugin's: {e}"));
    assert!(
        dec == chunk,
        "built-in {id} {wp:?}: our decode of theirs differs"
    );
}

#[test]
fn debian_plugins() {
    let dir = PathBuf::from(DEBIAN);
    if !dir.is_dir() {
        eprintln!("skipping: {DEBIAN} is absent (apt-get install hdf5-filter-plugin)");
        return;
    }
    let r = registry_for(&dir);
    assert_eq!(r.plugin(307).map(|p| p.id()), Some(307));
    assert_eq!(r.plugin(32004).map(|p| p.id()), Some(32004));
    for shape in [vec![4u64, 4, 4], vec![1000], vec![300, 301], vec![1]] {
        cross(&r, 307, &[9], 4, &shape);
        cross(&r, 307, &[1], 4, &shape);
        cross(&r, 307, &[], 8, &shape);
        cross(&r, 32004, &[], 4, &shape);
        cross(&r, 32004, &[1000], 4, &shape);
    }
}

#[test]
fn hdf5plugin_plugins() {
    let Some(dir) = hdf5plugin_dir() else {
        eprintln!("skipping: hdf5plugin is not installed (pip install hdf5plugin)");
        return;
    };
    let r = registry_for(&dir);
    for id in [307, 32001, 32004, 32015] {
        assert!(r.plugin(id).is_some(), "hdf5plugin should provide {id}");
    }
    for shape in [
        vec![4u64, 4, 4],
        vec![1000],
        vec![300, 301],
        vec![1],
        vec![100003],
    ] {
        // the large shape (leftover blocks, several blosc blocks) with 4-byte elements only
        let sizes: &[usize] = if shape == [100003] {
            &[4]
        } else {
            &[1, 2, 4, 8]
        };
        for &ts in sizes {
            cross(&r, 32015, &[1], ts, &shape);
            cross(&r, 32015, &[19], ts, &shape);
            cross(&r, 32004, &[], ts, &shape);
            cross(&r, 307, &[9], ts, &shape);
            for cname in [0u32, 1, 2, 4, 5] {
                for shuffle in [0u32, 1, 2] {
                    cross(&r, 32001, &[0, 0, 0, 0, 5, shuffle, cname], ts, &shape);
                }
            }
            cross(&r, 32001, &[0, 0, 0, 0, 9, 1, 0], ts, &shape);
            cross(&r, 32001, &[0, 0, 0, 0, 1, 1, 1], ts, &shape);
            cross(&r, 32001, &[0, 0, 0, 0, 0, 1, 1], ts, &shape);
        }
    }
}

#[test]
fn every_library_reports_id_and_name() {
    let mut dirs = vec![PathBuf::from(DEBIAN)];
    dirs.extend(hdf5plugin_dir());
    dirs.retain(|d| d.is_dir());
    if dirs.is_empty() {
        eprintln!("skipping: no plugin folder on this machine");
        return;
    }
    for d in &dirs {
        let mut r = Registry::empty();
        let rep = r.load_plugins(std::slice::from_ref(d));
        let n = std::fs::read_dir(d)
            .unwrap()
            .filter(|e| {
                e.as_ref().ok().and_then(|e| {
                    e.file_name()
                        .to_str()
                        .map(nc_filters::plugin::is_plugin_file_name)
                }) == Some(true)
            })
            .count();
        assert_eq!(rep.loaded.len() + rep.skipped.len(), n, "{}", d.display());
        for l in &rep.loaded {
            println!("{}: id {} name {:?}", l.path.display(), l.id, l.name);
            assert!(!l.name.is_empty());
        }
        for s in &rep.skipped {
            println!("{}: skipped: {}", s.path.display(), s.reason);
        }
    }
}

#[test]
fn plugin_preference() {
    let dir = PathBuf::from(DEBIAN);
    if !dir.is_dir() {
        eprintln!("skipping: {DEBIAN} is absent");
        return;
    }
    let mut r = Registry::with_builtins();
    r.set_prefer_plugins(false);
    r.load_plugins(std::slice::from_ref(&dir));
    assert_eq!(
        r.get(307).unwrap().source(),
        nc_filters::FilterSource::Builtin
    );
    r.set_prefer_plugins(true);
    assert!(matches!(
        r.get(307).unwrap().source(),
        nc_filters::FilterSource::Plugin(_)
    ));
    // a full pipeline through the plugin
    let chain = [FilterSpec {
        id: 307,
        params: vec![9],
    }];
    let p = r.pipeline(&chain, FilterContext::new(4, &[64])).unwrap();
    let chunk = data(256, 4);
    assert_eq!(p.decode(&p.encode(&chunk).unwrap()).unwrap(), chunk);
    // a corrupt chunk makes the plugin fail, reported as an error
    assert!(p.decode(&[1, 2, 3, 4]).is_err());
}

/// An lz4 block that grows under compression stays compressed in our chunks (HDF5's filter
/// would store it raw): the real plugin must still decode it.
#[test]
fn lz4_plugin_decodes_our_grown_blocks() {
    let dir = std::path::PathBuf::from(DEBIAN);
    if !dir.is_dir() {
        eprintln!("skipping: {DEBIAN} is absent (apt-get install hdf5-filter-plugin)");
        return;
    }
    let r = registry_for(&dir);
    let Some(theirs) = r.plugin(32004) else {
        panic!("the Debian lz4 plugin did not load");
    };
    let ctx = FilterContext::new(1, &[5000]);
    let mut x: u32 = 99;
    let noise: Vec<u8> = (0..5000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let ours = r.builtin(32004).unwrap().build(&[], &ctx).unwrap();
    let mut enc = Vec::new();
    ours.encode(&noise, &mut enc).unwrap();
    let stored = u32::from_be_bytes(enc[12..16].try_into().unwrap()) as usize;
    assert!(stored > 5000, "the block was expected to grow: {stored}");
    let theirs = theirs.build(&[], &ctx).unwrap();
    let mut dec = Vec::new();
    theirs.decode(&enc, &mut dec).unwrap();
    assert!(
        dec == noise,
        "the plugin decodes our grown block differently"
    );
}
