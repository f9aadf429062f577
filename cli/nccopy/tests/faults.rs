//! Fault tests: corrupt input, a missing filter plugin, a full disk, an interrupt. Each
//! checks the exact message and that no output (and no temporary file) is left behind.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{listing, make_nc, run, stderr};
use nc_dataset::Format;

/// `temp` holds 4000 ints (i * 7919 % 100003), deflated, in chunks of 1000.
fn deflated_cdl() -> String {
    let vals: Vec<String> = (0..4000u64)
        .map(|i| (i * 7919 % 100_003).to_string())
        .collect();
    format!(
        "netcdf def {{\ndimensions: n = 4000 ;\nvariables:\n  int temp(n) ; temp:_DeflateLevel = 1 ; temp:_ChunkSizes = 1000 ;\ndata:\n temp = {} ;\n}}\n",
        vals.join(", ")
    )
}

/// The byte offset of the zlib stream holding the chunk of `temp` that starts at element
/// 1000: the candidate that inflates to exactly those 1000 ints.
fn find_chunk(file: &[u8]) -> usize {
    let want: Vec<u8> = (1000..2000u64)
        .flat_map(|i| ((i * 7919 % 100_003) as i32).to_le_bytes())
        .collect();
    for k in 0..file.len().saturating_sub(2) {
        if file[k] != 0x78 || !matches!(file[k + 1], 0x01 | 0x5e | 0x9c | 0xda) {
            continue;
        }
        let mut out = Vec::new();
        let mut z = flate2::read::ZlibDecoder::new(&file[k..]);
        if z.read_to_end(&mut out).is_ok() && out == want {
            return k;
        }
    }
    panic!("no deflated chunk found");
}

#[test]
fn corrupt_chunk_names_the_variable_and_leaves_no_output() {
    let inp = tempfile::tempdir().unwrap();
    let outd = tempfile::tempdir().unwrap();
    let src = make_nc(inp.path(), "def.nc", &deflated_cdl(), Format::Netcdf4);
    let mut bytes = std::fs::read(&src).unwrap();
    let k = find_chunk(&bytes);
    // overwrite the middle of the stream: the decoder must notice (codes or Adler-32)
    for b in &mut bytes[k + 1000..k + 1064] {
        *b = 0xff;
    }
    let bad = inp.path().join("bad.nc");
    std::fs::write(&bad, &bytes).unwrap();
    let out = outd.path().join("out.nc");
    let o = run(&[bad.to_str().unwrap(), out.to_str().unwrap()]);
    let err = stderr(&o);
    // the input is what is corrupt: exit 1, named as the input
    assert_eq!(o.status.code(), Some(1), "{err}");
    let expected = format!(
        "nccopy: cannot read input: {}: variable \"temp\": chunk at [1000]: filter 1 (deflate): corrupt chunk",
        bad.display()
    );
    assert!(err.starts_with(&expected), "stderr: {err}");
    assert_eq!(listing(outd.path()), Vec::<String>::new());
}

/// Bob Jenkins' lookup3 `hashlittle`, the checksum of HDF5 version-2 object headers.
fn lookup3(data: &[u8]) -> u32 {
    let mut a: u32 = 0xdead_beef_u32.wrapping_add(data.len() as u32);
    let (mut b, mut c) = (a, a);
    let word = |s: &[u8], i: usize| {
        let mut w = [0u8; 4];
        for (j, x) in w.iter_mut().enumerate() {
            *x = s.get(i + j).copied().unwrap_or(0);
        }
        u32::from_le_bytes(w)
    };
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(rest, 0));
        b = b.wrapping_add(word(rest, 4));
        c = c.wrapping_add(word(rest, 8));
        a = a.wrapping_sub(c) ^ c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(rest, 0));
    b = b.wrapping_add(word(rest, 4));
    c = c.wrapping_add(word(rest, 8));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

/// A netCDF-4 file whose variable `v` is compressed with filter 40000, which nobody has:
/// written with zstd (32015), then the id in the filter pipeline message is patched and the
/// object header's checksum recomputed.
fn unknown_filter_file(dir: &Path) -> std::path::PathBuf {
    let cdl = "netcdf unk {\ndimensions: n = 10 ;\nvariables:\n  int v(n) ; v:_Filter = \"32015,3\" ;\ndata: v = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 ;\n}\n";
    let p = make_nc(dir, "zstd.nc", cdl, Format::Netcdf4);
    let mut d = std::fs::read(&p).unwrap();
    let id = 32015u16.to_le_bytes();
    let hits: Vec<usize> = (0..d.len() - 1).filter(|&i| d[i..i + 2] == id).collect();
    assert_eq!(hits.len(), 1, "filter id found once");
    let i = hits[0];
    d[i..i + 2].copy_from_slice(&40000u16.to_le_bytes());
    // the version-2 object header holding the message, and its first chunk's checksum
    let o = (0..i).rev().find(|&k| &d[k..k + 4] == b"OHDR").unwrap();
    let flags = d[o + 5];
    let mut p2 = o + 6;
    if flags & 0x20 != 0 {
        p2 += 16;
    }
    if flags & 0x10 != 0 {
        p2 += 4;
    }
    let w = [1usize, 2, 4, 8][(flags & 3) as usize];
    let mut size = [0u8; 8];
    size[..w].copy_from_slice(&d[p2..p2 + w]);
    let end = p2 + w + u64::from_le_bytes(size) as usize;
    let sum = lookup3(&d[o..end]);
    d[end..end + 4].copy_from_slice(&sum.to_le_bytes());
    let out = dir.join("unknown.nc");
    std::fs::write(&out, d).unwrap();
    out
}

#[test]
fn missing_plugin_names_the_id_and_the_directories_searched() {
    let inp = tempfile::tempdir().unwrap();
    let outd = tempfile::tempdir().unwrap();
    let plugins = inp.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let src = unknown_filter_file(inp.path());
    let out = outd.path().join("out.nc");
    let o = common::nccopy()
        .env("HDF5_PLUGIN_PATH", &plugins)
        .args([src.to_str().unwrap(), out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&o);
    // the output keeps the input's filter and cannot encode it: an output error (exit 3)
    assert_eq!(o.status.code(), Some(3), "{err}");
    let expected = format!(
        "nccopy: cannot write output: {}: variable \"v\" needs filter 40000 (unknown), not available: cannot encode its data; add the plugin's directory to HDF5_PLUGIN_PATH (searched: [{:?}",
        out.display(),
        plugins.display().to_string()
    );
    assert!(err.starts_with(&expected), "stderr: {err}");
    assert_eq!(listing(outd.path()), Vec::<String>::new());
}

#[test]
fn full_disk_leaves_the_destination_untouched() {
    if !Path::new("/bin/bash").exists() {
        eprintln!("skipping: no /bin/bash for ulimit");
        return;
    }
    let inp = tempfile::tempdir().unwrap();
    let outd = tempfile::tempdir().unwrap();
    // 800 KB of doubles; the file size limit below is 100 KiB
    let src = make_nc(
        inp.path(),
        "big.nc",
        "netcdf big {\ndimensions: n = 100000 ;\nvariables: double x(n) ;\n}\n",
        Format::Classic,
    );
    let out = outd.path().join("out.nc");
    std::fs::write(&out, "old").unwrap();
    for kind in ["-3", "-4"] {
        // SIGXFSZ ignored: write() then fails with EFBIG instead of killing the process
        let script = format!("trap '' XFSZ; ulimit -f 100; exec \"$0\" {kind} \"$1\" \"$2\"");
        let o = Command::new("/bin/bash")
            .args(["-c", &script, env!("CARGO_BIN_EXE_nccopy-rs")])
            .arg(&src)
            .arg(&out)
            .output()
            .unwrap();
        // the output cannot be written: exit 3
        assert_eq!(o.status.code(), Some(3), "{kind}");
        let err = stderr(&o);
        let expected = if kind == "-3" {
            format!(
                "nccopy: cannot write output: {}: writing the file: File too large (os error 27)\n",
                out.display()
            )
        } else {
            // the byte offset of the failed write is our writer's layout: not asserted
            format!(
                "nccopy: cannot write output: {}: variable x: writing data: writing ",
                out.display()
            )
        };
        if kind == "-3" {
            assert!(err.ends_with(&expected), "{kind}: stderr: {err}");
        } else {
            assert!(err.contains(&expected), "{kind}: stderr: {err}");
            assert!(
                err.ends_with(": File too large (os error 27)\n"),
                "{kind}: stderr: {err}"
            );
        }
        assert_eq!(listing(outd.path()), vec!["out.nc".to_string()], "{kind}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old", "{kind}");
    }
}

/// Start a copy, wait until its temporary output exists, send `signal`, and return the exit
/// code and stderr.
fn interrupt_copy(src: &Path, out: &Path, signal: &str) -> (Option<i32>, String) {
    let mut child = common::nccopy()
        .args(["-d", "1", src.to_str().unwrap(), out.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the output file is unnamed while it is written (O_TMPFILE), so look for it among the
    // process's open files: `/proc/PID/fd` shows it as `DIR/#INODE (deleted)`, or, where the
    // file system lacks O_TMPFILE, as `DIR/.NAME.tmp-PID`
    let dir = out.parent().unwrap().canonicalize().unwrap();
    let named = format!(".{}.tmp-", out.file_name().unwrap().to_string_lossy());
    let writing = |pid: u32| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .any(|t| {
                let name = t.file_name().unwrap_or_default().to_string_lossy();
                t.parent() == Some(dir.as_path())
                    && (name.starts_with('#') || name.starts_with(&named))
            })
    };
    let t0 = Instant::now();
    while !writing(child.id()) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no temporary output appeared"
        );
        assert!(child.try_wait().unwrap().is_none(), "copy ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_stopped(child.id(), signal);
    let o = child.wait_with_output().unwrap();
    (o.status.code(), stderr(&o))
}

/// Stop the process, queue `signal`, let it go on: the signal surely lands mid-copy, however
/// fast the build is.
fn signal_stopped(pid: u32, signal: &str) {
    let pid = pid.to_string();
    for s in ["-STOP", signal, "-CONT"] {
        let k = Command::new("kill").args([s, &pid]).status().unwrap();
        assert!(k.success(), "kill {s}");
    }
}

#[test]
fn interrupt_removes_the_temporary_output() {
    let inp = tempfile::tempdir().unwrap();
    // 200 MB of doubles (fill values): compressing it takes seconds
    let src = make_nc(
        inp.path(),
        "huge.nc",
        "netcdf huge {\ndimensions: n = 5000 ; m = 5000 ;\nvariables: double x(n, m) ;\n}\n",
        Format::Classic,
    );
    // SIGINT, no destination yet
    let outd = tempfile::tempdir().unwrap();
    let out = outd.path().join("out.nc");
    let (code, err) = interrupt_copy(&src, &out, "-INT");
    assert_eq!(code, Some(130));
    assert_eq!(
        err,
        "nccopy: interrupted by SIGINT; temporary output removed, destination untouched\n"
    );
    assert_eq!(listing(outd.path()), Vec::<String>::new());
    // SIGTERM, an existing destination stays as it was
    std::fs::write(&out, "old").unwrap();
    let (code, err) = interrupt_copy(&src, &out, "-TERM");
    assert_eq!(code, Some(143));
    assert_eq!(
        err,
        "nccopy: interrupted by SIGTERM; temporary output removed, destination untouched\n"
    );
    assert_eq!(listing(outd.path()), vec!["out.nc".to_string()]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    // an NCZarr store: the temporary directory goes too
    let zout = outd.path().join("out.zarr");
    let url = format!("file://{}#mode=nczarr,file", zout.display());
    let mut child = common::nccopy()
        .args(["-4", "-d", "1", src.to_str().unwrap(), &url])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tmp = outd.path().join(format!(".out.zarr.tmp-{}", child.id()));
    let t0 = Instant::now();
    while !tmp.exists() {
        assert!(t0.elapsed() < Duration::from_secs(60), "no temporary store");
        assert!(child.try_wait().unwrap().is_none(), "copy ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_stopped(child.id(), "-INT");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(listing(outd.path()), vec!["out.nc".to_string()]);
}

/// SIGINT at many moments of an NCZarr copy (directory and zip stores) while the writer
/// threads run: every run exits 130 and leaves nothing beside the destination (issue 20: the
/// writers used to bring a removed temporary store back, and the main thread's error raced
/// the handler's exit code).
#[test]
fn interrupting_store_copies_at_any_moment_leaves_nothing() {
    let inp = tempfile::tempdir().unwrap();
    let src = make_nc(
        inp.path(),
        "big.nc",
        "netcdf big {\ndimensions: n = 2000 ; m = 5000 ;\nvariables: double x(n, m) ;\n}\n",
        Format::Classic,
    );
    let outd = tempfile::tempdir().unwrap();
    for run in 0..12u64 {
        let (name, mode) = if run % 3 == 2 {
            ("out.zip", "nczarr,zip")
        } else {
            ("out.zarr", "nczarr,file")
        };
        let url = format!("file://{}#mode={mode}", outd.path().join(name).display());
        let mut child = common::nccopy()
            .args(["-4", "-c", "n/50,m/500", src.to_str().unwrap(), &url])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let tmp_prefix = format!(".{name}.tmp-{}", child.id());
        let t0 = Instant::now();
        while !listing(outd.path())
            .iter()
            .any(|n| n.starts_with(&tmp_prefix))
        {
            assert!(t0.elapsed() < Duration::from_secs(60), "no temporary store");
            assert!(child.try_wait().unwrap().is_none(), "copy ended early");
            std::thread::sleep(Duration::from_millis(5));
        }
        // from at once to well into the chunk writes
        std::thread::sleep(Duration::from_millis(run * 15));
        let k = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(k.success());
        let o = child.wait_with_output().unwrap();
        eprintln!("run {run}: exit {:?}", o.status.code());
        if o.status.code() == Some(0)
            || stderr(&o) == "nccopy: interrupted by SIGINT; the output was already complete\n"
        {
            // finished before the signal came (or between the rename and the exit, then exit
            // 130): the store is complete; start afresh
            assert!(o.status.code() == Some(0) || o.status.code() == Some(130));
            assert!(
                outd.path().join(name).exists(),
                "run {run}: complete store missing"
            );
            common::remove_any(&outd.path().join(name));
        } else {
            assert_eq!(o.status.code(), Some(130), "run {run}: {}", stderr(&o));
            assert_eq!(
                stderr(&o),
                "nccopy: interrupted by SIGINT; temporary output removed, destination untouched\n",
                "run {run}"
            );
        }
        assert_eq!(listing(outd.path()), Vec::<String>::new(), "run {run}");
    }
}
