//! End-to-end: bad input gets a clear, positioned error and a non-zero exit; never a panic,
//! never a partial output file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

fn assert_clean_failure(o: &std::process::Output, tool: &str, must_contain: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{tool} succeeded; stderr: {err}");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{tool} exit status; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "{tool} panicked: {err}");
    assert!(
        err.starts_with(&format!("{tool}: ")),
        "stderr should start with the tool name: {err}"
    );
    for m in must_contain {
        assert!(err.contains(m), "stderr should contain {m:?}: {err}");
    }
}

#[test]
fn ncdump_rejects_damaged_classic_files() {
    let dir = tempdir("malformed-nc");
    let good = std::fs::read(testdata("nc/classic/c0.nc3.nc")).unwrap();
    // every truncation inside the header
    let header_len = 1200.min(good.len());
    for cut in (0..header_len).step_by(7) {
        let p = dir.join(format!("cut{cut}.nc"));
        std::fs::write(&p, &good[..cut]).unwrap();
        let o = run("ncdump-rs", &[p.to_str().unwrap()], &dir);
        assert_clean_failure(&o, "ncdump", &[&format!("cut{cut}.nc")]);
    }
    // bad magic
    let mut bad = good.clone();
    bad[3] = 9;
    let p = dir.join("badmagic.nc");
    std::fs::write(&p, &bad).unwrap();
    assert_clean_failure(
        &run("ncdump-rs", &[p.to_str().unwrap()], &dir),
        "ncdump",
        &["badmagic.nc", "Unknown file format"],
    );
    // absurd dimension count: NC_DIMENSION tag then 0x7fffffff entries
    let mut absurd = b"CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x7f\xff\xff\xff".to_vec();
    absurd.extend_from_slice(&[0u8; 16]);
    let p = dir.join("absurd.nc");
    std::fs::write(&p, &absurd).unwrap();
    assert_clean_failure(
        &run("ncdump-rs", &[p.to_str().unwrap()], &dir),
        "ncdump",
        &["absurd.nc"],
    );
    // a dimension name that is not UTF-8
    let mut nonutf = b"CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x00\x00\x02\xff\xfe\x00\x00\x00\x00\x00\x03".to_vec();
    nonutf.extend_from_slice(&[0u8; 16]);
    let p = dir.join("nonutf8.nc");
    std::fs::write(&p, &nonutf).unwrap();
    assert_clean_failure(
        &run("ncdump-rs", &[p.to_str().unwrap()], &dir),
        "ncdump",
        &["nonutf8.nc"],
    );
    // missing and empty files
    assert_clean_failure(
        &run("ncdump-rs", &["does-not-exist.nc"], &dir),
        "ncdump",
        &["does-not-exist.nc"],
    );
    let p = dir.join("empty.nc");
    std::fs::write(&p, b"").unwrap();
    assert_clean_failure(
        &run("ncdump-rs", &[p.to_str().unwrap()], &dir),
        "ncdump",
        &["empty.nc"],
    );
}

#[test]
fn ncgen_reports_cdl_errors_with_positions_and_writes_nothing() {
    let dir = tempdir("malformed-cdl");
    let cases: [(&str, &str, &str); 7] = [
        (
            "semicolon",
            "netcdf x {\ndimensions:\n d = 2\nvariables:\n int v(d) ;\n}\n",
            "semicolon.cdl:4:",
        ),
        (
            "undef_dim",
            "netcdf x {\ndimensions:\n d = 2 ;\nvariables:\n int v(e) ;\n}\n",
            "undef_dim.cdl:5:",
        ),
        (
            "bad_number",
            "netcdf x {\nvariables:\n int v ;\ndata:\n v = 12x ;\n}\n",
            "bad_number.cdl:5:",
        ),
        (
            "unterminated",
            "netcdf x {\nvariables:\n char c ;\n c:a = \"abc ;\n}\n",
            "unterminated.cdl:4:",
        ),
        (
            "unbalanced",
            "netcdf x {\ndimensions:\n d = 2 ;\n",
            "unbalanced.cdl:",
        ),
        (
            "bad_type",
            "netcdf x {\nvariables:\n foo v ;\n}\n",
            "bad_type.cdl:3:",
        ),
        ("not_cdl", "hello world\n", "not_cdl.cdl:1:1"),
    ];
    for (name, text, want) in cases {
        let cdl = dir.join(format!("{name}.cdl"));
        std::fs::write(&cdl, text).unwrap();
        let out = dir.join(format!("{name}.nc"));
        let o = run(
            "ncgen-rs",
            &["-b", "-o", out.to_str().unwrap(), cdl.to_str().unwrap()],
            &dir,
        );
        assert_clean_failure(&o, "ncgen", &[want]);
        assert!(
            !out.exists(),
            "{name}: a failed run must not leave {}",
            out.display()
        );
    }
}

#[test]
fn failed_write_leaves_existing_output_untouched() {
    let dir = tempdir("atomic");
    let out = dir.join("keep.nc");
    std::fs::write(&out, b"previous contents").unwrap();
    // a string variable cannot go into a classic file: the write fails before any rename
    let cdl = dir.join("s.cdl");
    std::fs::write(
        &cdl,
        "netcdf s {\ndimensions:\n d = 1 ;\nvariables:\n string v(d) ;\ndata:\n v = \"a\" ;\n}\n",
    )
    .unwrap();
    let o = run(
        "ncgen-rs",
        &[
            "-k",
            "classic",
            "-o",
            out.to_str().unwrap(),
            cdl.to_str().unwrap(),
        ],
        &dir,
    );
    assert_clean_failure(&o, "ncgen", &[]);
    assert_eq!(std::fs::read(&out).unwrap(), b"previous contents");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn corrupt_netcdf4_object_headers_are_errors_not_repaired() {
    // issue 20: a corrupt v2 object header used to be read by a fallback walk that checked
    // no checksum; ncdump -h printed nonsense and nccopy dropped variables, both exiting 0
    let dir = tempdir("checksum");
    let cdl = dir.join("t.cdl");
    std::fs::write(
        &cdl,
        "netcdf t {\ndimensions:\n x = 4 ;\n t = UNLIMITED ;\nvariables:\n int v(t, x) ;\n  v:units = \"m\" ;\n float w(x) ;\ndata:\n v = 1, 2, 3, 4, 5, 6, 7, 8 ;\n w = 1, 2, 3, 4 ;\n}\n",
    )
    .unwrap();
    let good = dir.join("t.nc");
    let o = run(
        "ncgen-rs",
        &[
            "-k",
            "nc4",
            "-o",
            good.to_str().unwrap(),
            cdl.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("ncdump-rs", &["-h", good.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&good).unwrap();
    let mut blocks: Vec<(usize, &str)> = Vec::new();
    for (sig, name) in [(b"OHDR", "object header"), (b"OCHK", "continuation block")] {
        blocks.extend(
            bytes
                .windows(4)
                .enumerate()
                .filter(|(_, w)| w == sig)
                .map(|(i, _)| (i, name)),
        );
    }
    assert!(
        blocks.len() >= 4,
        "root group, 2 dimensions and 2 variables: {blocks:?}"
    );
    for (n, (at, name)) in blocks.into_iter().enumerate() {
        let mut bad = bytes.clone();
        // a byte of the first message (inside what the checksum covers, past the fields
        // that size the block): after a header's prefix, after a continuation's signature
        let first = if name == "object header" {
            let flags = bytes[at + 5];
            let times = if flags & 0x20 != 0 { 16 } else { 0 };
            let phase = if flags & 0x10 != 0 { 4 } else { 0 };
            at + 6 + times + phase + (1 << (flags & 3))
        } else {
            at + 4
        };
        bad[first + 1] ^= 0x5a;
        let file = format!("bad{n}.nc");
        let p = dir.join(&file);
        std::fs::write(&p, &bad).unwrap();
        let want = format!("{name} at {at:#x}: checksum mismatch (stored 0x");
        let o = run("ncdump-rs", &["-h", &file], &dir);
        assert_clean_failure(&o, "ncdump", &[&file, &want, "the file is corrupt"]);
        let out = dir.join(format!("copy{n}.nc"));
        let o = run("nccopy-rs", &[&file, out.to_str().unwrap()], &dir);
        assert_clean_failure(&o, "nccopy", &[&file, &want]);
        assert!(!out.exists(), "nccopy left an output for a corrupt input");
    }
}
