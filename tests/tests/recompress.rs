//! End-to-end: recompression round trips with nccopy-rs (issue 5 acceptance).
//!
//! A netCDF-4 file of a few MB (a float and a short variable, chunked, computed data; or
//! `$NC_BENCH_CORPUS/corpus_S_raw.nc` when that is set) goes raw → `-F '*,307,9'` (bzip2) →
//! `-F '*,32015,3'` (zstd) → `-F none`; every step must give back the original values exactly
//! (the data section of the dumps), and the last file must be unfiltered again.
//!
//! The same chain through the real HDF5 plugins (Debian's bzip2 plugin, hdf5plugin's zstd;
//! `NC_FILTERS_PREFER_PLUGIN=1` turns the built-in codecs off) must store the very same chunk
//! bytes as the built-in codecs: the codecs are deterministic. The chunks are read raw with
//! h5py (`read_direct_chunk`). Deflate has no plugin (HDF5 has it inside): its chunks are
//! compared with netCDF-C's nccopy's. Each part prints a message and passes when what it needs
//! (plugins, h5py, netCDF-C) is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

const DEBIAN_PLUGINS: &str = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins";

/// The generated input: t(z, y, x) float and s(z, y, x) short, 2 + 1 MB: t in 40 chunks of
/// 50 KB, s in 2 chunks of 500 KB (more than two of zstd's 128 KiB blocks, where zstd versions
/// and APIs have differed in what they store).
fn generated_cdl() -> String {
    let (nz, ny, nx) = (10usize, 200usize, 250usize);
    let mut t = String::with_capacity(8 << 20);
    t.push_str(&format!(
        "netcdf raw {{\ndimensions:\n\tz = {nz} ;\n\ty = {ny} ;\n\tx = {nx} ;\nvariables:\n\
         \tfloat t(z, y, x) ;\n\t\tt:_ChunkSizes = 2, 50, 125 ;\n\t\tt:units = \"K\" ;\n\
         \tshort s(z, y, x) ;\n\t\ts:_ChunkSizes = 5, 200, 250 ;\n\t\ts:_FillValue = -1s ;\n\
         data:\n\n t =\n"
    ));
    let mut noise: u32 = 12345;
    let mut next = || {
        noise = noise.wrapping_mul(1_103_515_245).wrapping_add(12345);
        (noise >> 16) & 0x7fff
    };
    let n = nz * ny * nx;
    let mut line = String::new();
    for i in 0..n {
        let (k, j, l) = (i / (ny * nx), (i / nx) % ny, i % nx);
        // a smooth field plus quantised noise: compresses somewhat, like real data
        let v = 250.0
            + 20.0 * ((j as f64) / 31.0).sin() * ((l as f64) / 17.0).cos()
            + k as f64 * 0.5
            + f64::from(next() % 100) / 400.0;
        push_value(&mut t, &mut line, &format!("{v:.3}"), i + 1 == n);
    }
    t.push_str("\n s =\n");
    for i in 0..n {
        let (j, l) = ((i / nx) % 200, i % nx);
        let v = ((j * 37 + l * 11) % 2000) as i64 - 1000 + i64::from(next() % 7);
        push_value(&mut t, &mut line, &v.to_string(), i + 1 == n);
    }
    t.push_str("}\n");
    t
}

/// Adds value `v` of a data list to `line`, and `line` to the CDL text `t` once it is long
/// enough or `v` is the `last` value (which ends the list with ` ;`).
fn push_value(t: &mut String, line: &mut String, v: &str, last: bool) {
    line.push_str(v);
    line.push_str(if last { " ;\n" } else { ", " });
    if line.len() > 100 || last {
        t.push_str("  ");
        t.push_str(line);
        if !last {
            t.push('\n');
        }
        line.clear();
    }
}

/// The raw input: the corpus file when `NC_BENCH_CORPUS` has one, else the generated file
/// (written by ncgen-rs).
fn raw_input(dir: &Path) -> PathBuf {
    if let Ok(c) = std::env::var("NC_BENCH_CORPUS") {
        let p = PathBuf::from(c).join("corpus_S_raw.nc");
        if p.exists() {
            eprintln!("using {}", p.display());
            return p;
        }
        eprintln!(
            "NC_BENCH_CORPUS has no corpus_S_raw.nc: using the generated input ({})",
            p.display()
        );
    }
    let cdl = dir.join("raw.cdl");
    std::fs::write(&cdl, generated_cdl()).unwrap();
    let out = dir.join("raw.nc");
    let o = run(
        "ncgen-rs",
        &[
            "-b",
            "-k",
            "nc4",
            "-o",
            out.to_str().unwrap(),
            cdl.to_str().unwrap(),
        ],
        dir,
    );
    assert!(
        o.status.success(),
        "ncgen-rs: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// `nccopy-rs ARGS in out` with extra environment.
fn copy(args: &[&str], input: &Path, out: &Path, env: &[(&str, &str)]) {
    let mut cmd = Command::new(bin("nccopy-rs"));
    cmd.args(args).arg(input).arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "nccopy-rs {args:?} {}: {}",
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// ncdump-rs output with options.
fn dump(opts: &[&str], file: &Path) -> String {
    let mut a: Vec<&str> = opts.to_vec();
    a.push(file.to_str().unwrap());
    let o = run("ncdump-rs", &a, file.parent().unwrap());
    assert!(
        o.status.success(),
        "ncdump-rs {opts:?} {}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The data section of a dump (names of files differ, headers differ in storage attributes).
fn data_section(dump: &str) -> &str {
    let at = dump.find("\ndata:\n").expect("no data section");
    &dump[at..]
}

/// The storage attribute lines (`_Filter`, `_DeflateLevel`, ...) of a `-hs` dump.
fn filter_lines(dump: &str) -> Vec<String> {
    dump.lines()
        .filter(|l| {
            ["_Filter", "_DeflateLevel", "_Shuffle", "_Fletcher32"]
                .iter()
                .any(|k| l.contains(&format!(":{k} =")))
        })
        .map(|l| l.trim().to_string())
        .collect()
}

/// The chained copies: (step name, -F spec, output).
fn chain(dir: &Path, raw: &Path, env: &[(&str, &str)]) -> Vec<(String, PathBuf)> {
    let steps = [
        ("bzip2", "*,307,9"),
        ("zstd", "*,32015,3"),
        ("none", "none"),
    ];
    let mut input = raw.to_path_buf();
    let mut outs = Vec::new();
    for (name, spec) in steps {
        let out = dir.join(format!("{name}.nc"));
        let _ = std::fs::remove_file(&out);
        copy(&["-F", spec], &input, &out, env);
        outs.push((name.to_string(), out.clone()));
        input = out;
    }
    outs
}

fn assert_chain_gives_back_the_values(raw: &Path, outs: &[(String, PathBuf)]) {
    let original = dump(&[], raw);
    let raw_filters = filter_lines(&dump(&["-hs"], raw));
    for (name, out) in outs {
        let d = dump(&[], out);
        if let Some(diff) = diff(
            data_section(&original).as_bytes(),
            data_section(&d).as_bytes(),
        ) {
            panic!("{name}: the values changed: {diff}");
        }
        let filters = filter_lines(&dump(&["-hs"], out));
        let got: Vec<&str> = filters
            .iter()
            .map(|l| l.split_once(':').map_or(l.as_str(), |(_, r)| r))
            .collect();
        match name.as_str() {
            "bzip2" | "zstd" => {
                let spec = if name == "bzip2" { "307,9" } else { "32015,3" };
                let want = format!("_Filter = \"{spec}\" ;");
                assert!(
                    !got.is_empty() && got.iter().all(|l| *l == want),
                    "{name}: filters {filters:?} (raw had {raw_filters:?})"
                );
            }
            _ => assert!(got.is_empty(), "{name}: still filtered: {filters:?}"),
        }
    }
    // and netCDF-C reads the last one the same
    if Path::new("/usr/bin/ncdump").exists() {
        let (_, last) = outs.last().unwrap();
        let theirs = Command::new("/usr/bin/ncdump").arg(last).output().unwrap();
        assert!(theirs.status.success());
        let theirs = String::from_utf8(theirs.stdout).unwrap();
        assert!(
            data_section(&original) == data_section(&theirs),
            "netCDF-C's ncdump reads other values from the round-tripped file"
        );
    }
}

#[test]
fn bzip2_zstd_none_round_trip_gives_back_the_values() {
    let dir = tempdir("recompress-builtin");
    let raw = raw_input(&dir);
    let outs = chain(&dir, &raw, &[]);
    assert_chain_gives_back_the_values(&raw, &outs);
}

/// HDF5_PLUGIN_PATH with Debian's plugin directory and hdf5plugin's, when both hold what the
/// chain needs (bzip2 307 and zstd 32015).
fn plugin_path() -> Option<String> {
    let Some(hp) = common::hdf5plugin_dir() else {
        eprintln!("skipped: python3 with hdf5plugin is not installed");
        return None;
    };
    let bz = Path::new(DEBIAN_PLUGINS).join("libh5bz2.so");
    let zs = Path::new(&hp).join("libh5zstd.so");
    if !bz.exists() || !zs.exists() {
        eprintln!(
            "skipped: no bzip2 plugin ({}) or zstd plugin ({})",
            bz.display(),
            zs.display()
        );
        return None;
    }
    Some(format!("{DEBIAN_PLUGINS}:{hp}"))
}

/// Every chunk of every chunked dataset, raw (`read_direct_chunk`): one line per chunk with the
/// dataset, the chunk's offset, its filter mask, size and SHA-256. None when h5py is missing.
fn raw_chunks(file: &Path) -> Option<String> {
    const SCRIPT: &str = r#"
import sys, hashlib
try:
    import h5py
except ImportError:
    print("NO-H5PY")
    sys.exit(0)
out = []
def visit(name, obj):
    if isinstance(obj, h5py.Dataset) and obj.chunks is not None:
        for i in range(obj.id.get_num_chunks()):
            info = obj.id.get_chunk_info(i)
            mask, data = obj.id.read_direct_chunk(info.chunk_offset)
            out.append("%s %s %d %d %s" % (name, tuple(info.chunk_offset), mask, len(data),
                                           hashlib.sha256(data).hexdigest()))
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
print("\n".join(sorted(out)))
"#;
    let o = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(file)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    if text.trim() == "NO-H5PY" {
        eprintln!("skipped: h5py is not installed");
        return None;
    }
    assert!(
        o.status.success(),
        "h5py on {}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!text.trim().is_empty(), "no chunks in {}", file.display());
    Some(text)
}

/// A copy that keeps the chunk shape and the filters moves the stored chunks without decoding
/// them: every chunk of the output is byte-identical to the input's, also for deflate chunks
/// written by netCDF-C (zlib), which our deflate (libdeflate) would encode differently.
#[test]
fn same_chunks_and_filters_copy_stored_bytes() {
    let dir = tempdir("recompress-raw-copy");
    let raw = raw_input(&dir);
    let bz = dir.join("bz.nc");
    copy(&["-F", "*,307,9"], &raw, &bz, &[]);
    let again = dir.join("bz-again.nc");
    copy(&[], &bz, &again, &[]);
    let (Some(a), Some(b)) = (raw_chunks(&bz), raw_chunks(&again)) else {
        return;
    };
    if let Some(d) = diff(a.as_bytes(), b.as_bytes()) {
        panic!("plain copy of a bzip2 file changed stored chunks: {d}");
    }
    if !Path::new("/usr/bin/nccopy").exists() {
        eprintln!("skipped the netCDF-C part: /usr/bin/nccopy is not installed");
        return;
    }
    let theirs = dir.join("theirs-d3s.nc");
    let o = Command::new("/usr/bin/nccopy")
        .args(["-d", "3", "-s"])
        .arg(&raw)
        .arg(&theirs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = dir.join("ours-from-theirs.nc");
    copy(&[], &theirs, &ours, &[]);
    let (Some(a), Some(b)) = (raw_chunks(&theirs), raw_chunks(&ours)) else {
        return;
    };
    if let Some(d) = diff(a.as_bytes(), b.as_bytes()) {
        panic!("plain copy of netCDF-C's deflated file changed stored chunks: {d}");
    }
    let (da, db) = (dump(&[], &theirs), dump(&[], &ours));
    assert!(data_section(&da) == data_section(&db), "values differ");
}

#[test]
fn plugins_store_the_same_chunks_as_the_builtin_codecs() {
    let Some(plugins) = plugin_path() else { return };
    let dir = tempdir("recompress-plugins");
    let raw = raw_input(&dir);
    let builtin_dir = dir.join("builtin");
    let plugin_dir = dir.join("plugin");
    std::fs::create_dir_all(&builtin_dir).unwrap();
    std::fs::create_dir_all(&plugin_dir).unwrap();
    let builtin = chain(&builtin_dir, &raw, &[]);
    let env = [
        ("HDF5_PLUGIN_PATH", plugins.as_str()),
        ("NC_FILTERS_PREFER_PLUGIN", "1"),
    ];
    let plugin = chain(&plugin_dir, &raw, &env);
    // the plugins are really loaded (glibc's loader tells, when it is glibc's)
    for (spec, lib) in [("*,307,9", "libh5bz2.so"), ("*,32015,3", "libh5zstd.so")] {
        let o = Command::new(bin("nccopy-rs"))
            .args(["-F", spec])
            .arg(&raw)
            .arg(plugin_dir.join("probe.nc"))
            .envs(env)
            .env("LD_DEBUG", "files")
            .output()
            .unwrap();
        assert!(o.status.success());
        let log = String::from_utf8_lossy(&o.stderr);
        if log.contains("file=") {
            assert!(
                log.lines()
                    .any(|l| l.contains(lib) && l.contains("dynamically loaded")),
                "-F {spec}: {lib} was not loaded"
            );
        }
        let _ = std::fs::remove_file(plugin_dir.join("probe.nc"));
    }
    assert_chain_gives_back_the_values(&raw, &plugin);
    for ((name, b), (_, p)) in builtin.iter().zip(&plugin) {
        let (Some(cb), Some(cp)) = (raw_chunks(b), raw_chunks(p)) else {
            return;
        };
        if let Some(d) = diff(cp.as_bytes(), cb.as_bytes()) {
            panic!("{name}: built-in chunks differ from the plugin's: {d}");
        }
    }
}

/// Deflate with and without shuffle by ours and by netCDF-C's nccopy (HDF5's own deflate, zlib):
/// (ours, theirs) outputs. None when netCDF-C's nccopy is missing.
fn deflated_pairs(dir: &Path, raw: &Path) -> Option<Vec<(String, PathBuf, PathBuf)>> {
    if !Path::new("/usr/bin/nccopy").exists() {
        eprintln!("skipped: netCDF-C's nccopy is not installed");
        return None;
    }
    let mut v = Vec::new();
    for (tag, spec) in [("d6", "*,1,6"), ("sd1", "*,2|1,1")] {
        let ours = dir.join(format!("{tag}-ours.nc"));
        copy(&["-F", spec], raw, &ours, &[]);
        let theirs = dir.join(format!("{tag}-theirs.nc"));
        let o = Command::new("/usr/bin/nccopy")
            .args(["-F", spec])
            .arg(raw)
            .arg(&theirs)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "netCDF-C's nccopy -F {spec}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        v.push((spec.to_string(), ours, theirs));
    }
    Some(v)
}

/// Deflated by ours and by netCDF-C: the same values, the same filters.
#[test]
fn deflate_matches_netcdf_c() {
    let dir = tempdir("recompress-deflate");
    let raw = raw_input(&dir);
    let Some(pairs) = deflated_pairs(&dir, &raw) else {
        return;
    };
    for (spec, ours, theirs) in pairs {
        let (o, t) = (dump(&[], &ours), dump(&[], &theirs));
        assert!(
            data_section(&o) == data_section(&t),
            "-F {spec}: values differ"
        );
        let (o, t) = (dump(&["-hs"], &ours), dump(&["-hs"], &theirs));
        assert_eq!(filter_lines(&o), filter_lines(&t), "-F {spec}");
    }
}
