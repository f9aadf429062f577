//! Issue 19.3: ncgen-rs writes a data section larger than memory in bounded memory. Large
//! variables' values wait in a temporary file between the parse and the writer; these tests
//! check that memory stays below the values' size, that every output kind gets the same bytes
//! as from values kept in memory, and that errors are what they were.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use common::{bin, run, tempdir};

/// Run ncgen-rs in `dir` with `NCGEN_RS_MEMORY_BUDGET` set (or left to its default).
fn ncgen(args: &[&str], dir: &Path, budget: Option<&str>) -> Output {
    let mut c = Command::new(bin("ncgen-rs"));
    c.args(args).current_dir(dir);
    match budget {
        Some(b) => c.env("NCGEN_RS_MEMORY_BUDGET", b),
        None => c.env_remove("NCGEN_RS_MEMORY_BUDGET"),
    };
    c.output().unwrap()
}

/// Run ncgen-rs and return its output with its peak resident memory in MiB (VmHWM, polled).
fn ncgen_measured(args: &[&str], dir: &Path) -> (Output, u64) {
    common::run_measured(
        Command::new(bin("ncgen-rs"))
            .args(args)
            .current_dir(dir)
            .env_remove("NCGEN_RS_MEMORY_BUDGET"),
    )
}

/// The value at index `i` of the big variable (two digits, so the text is ~4 bytes a value).
fn big_value(i: u64) -> i32 {
    ((i * 37 + i / 1000) % 90 + 10) as i32
}

/// 64 MiB of int values (16 Mi of them) in `big(t, y)`, its record count left to the data.
#[test]
fn a_large_data_section_is_written_in_bounded_memory() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("SKIP: no /proc to read the peak memory from");
        return;
    }
    let d = tempdir("ncgen-large-bounded");
    let y = 1024u64;
    let records = 16 * 1024;
    let n = records * y;
    {
        let mut f = std::io::BufWriter::new(fs::File::create(d.join("big.cdl")).unwrap());
        writeln!(
            f,
            "netcdf big {{\ndimensions:\n\tt = UNLIMITED ;\n\ty = {y} ;\nvariables:\n\
             \tint big(t, y) ;\ndata:\n\n big ="
        )
        .unwrap();
        let mut line = String::new();
        for i in 0..n {
            line.push_str(&big_value(i).to_string());
            line.push_str(if i + 1 == n { " ;\n" } else { ", " });
            if line.len() > 4000 {
                f.write_all(line.as_bytes()).unwrap();
                f.write_all(b"\n").unwrap();
                line.clear();
            }
        }
        f.write_all(line.as_bytes()).unwrap();
        f.write_all(b"}\n").unwrap();
    }
    let values_mib = (n * 4) >> 20;
    assert_eq!(values_mib, 64);
    // held in memory, the values alone would take 64 MiB (before issue 19.3, a release build
    // peaked at 89 MB for CDF-2 and 113 MB for netCDF-4; now at 15 and 45 MB, the netCDF-4
    // writer holding two batches of ~8 MiB of chunks in flight whatever the data size)
    for (args, out, limit) in [
        (
            vec!["-k", "nc6", "-o", "big.nc", "big.cdl"],
            "big.nc",
            values_mib / 2,
        ),
        (
            vec!["-4", "-o", "big4.nc", "big.cdl"],
            "big4.nc",
            values_mib,
        ),
    ] {
        let (o, peak) = ncgen_measured(&args, &d);
        assert!(
            o.status.success(),
            "ncgen-rs {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            peak < limit,
            "ncgen-rs {args:?} peaked at {peak} MiB for {values_mib} MiB of values"
        );
        assert!(d.join(out).exists());
    }
    // the classic file holds the one record variable's values last, big-endian, one record
    // after the other: every value is where it should be, and the records are the data's
    let bytes = fs::read(d.join("big.nc")).unwrap();
    let data_len = (n * 4) as usize;
    assert!(bytes.len() > data_len);
    assert_eq!(&bytes[4..8], &(records as u32).to_be_bytes(), "numrecs");
    let data = &bytes[bytes.len() - data_len..];
    for (i, c) in data.chunks_exact(4).enumerate() {
        let got = i32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        assert_eq!(got, big_value(i as u64), "value {i}");
    }
    let o = run("ncdump-rs", &["-h", "big4.nc"], &d);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("t = UNLIMITED ; // (16384 currently)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    fs::remove_dir_all(&d).unwrap();
}

/// A CDL the spilling path meets in full: records decided by the data (the last one partly
/// given), a short data list (a fill tail), a variable given twice, classic types, and small
/// variables that stay in memory. `chunked`: with chunk sizes, deflate and shuffle.
fn sample_cdl(chunked: bool) -> String {
    let rec: Vec<String> = (0..10_050).map(|i| (i * 3 - 500).to_string()).collect();
    let part: Vec<String> = (0..5_000).map(|i| format!("{}.5", i % 977)).collect();
    let sh: Vec<String> = (0..3_000).map(|i| (i % 300 - 150).to_string()).collect();
    let specials = |v: &str, chunks: &str, level: u32| {
        if chunked {
            format!(
                "\n\t\t{v}:_ChunkSizes = {chunks} ;\n\t\t{v}:_DeflateLevel = {level} ;\
                 \n\t\t{v}:_Shuffle = \"true\" ;"
            )
        } else {
            String::new()
        }
    };
    format!(
        "netcdf s {{\ndimensions:\n\tt = UNLIMITED ;\n\tc = 100 ;\n\ta = 60 ;\n\tb = 100 ;\n\
         variables:\n\tint rec(t, c) ;\n\t\trec:long_name = \"records\" ;{}\n\
         \tfloat part(a, b) ;\n\t\tpart:_FillValue = -1.f ;{}\n\
         \tshort sh(a, c) ;{}\n\tdouble t(t) ;\n\tbyte tiny(c) ;\n\tchar name(c) ;\n\
         data:\n\n rec = {} ;\n\n part = 1, 2, 3 ;\n\n t = 0.5, 1.5 ;\n\n part = {} ;\n\n\
          sh = {} ;\n\n tiny = 1, -2, 3 ;\n\n name = \"spilled\" ;\n}}\n",
        specials("rec", "7, 30", 1),
        specials("part", "16, 25", 1),
        specials("sh", "60, 100", 4),
        rec.join(", "),
        part.join(", "),
        sh.join(", "),
    )
}

/// Every file under `p` (or `p` itself) with its bytes, by relative path.
fn tree(p: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    if p.is_dir() {
        let mut stack = vec![p.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in fs::read_dir(&dir).unwrap() {
                let e = e.unwrap().path();
                if e.is_dir() {
                    stack.push(e);
                } else {
                    let rel = e.strip_prefix(p).unwrap().display().to_string();
                    out.push((rel, fs::read(&e).unwrap()));
                }
            }
        }
    } else {
        out.push((String::new(), fs::read(p).unwrap()));
    }
    out.sort();
    out
}

/// The numbers of `var`'s data list in ncdump output.
fn numbers(text: &str, var: &str) -> Vec<String> {
    let start = text.find(&format!("\n {var} =")).unwrap() + var.len() + 4;
    let body = &text[start..];
    let body = &body[..body.find(';').unwrap()];
    body.split(',').map(|s| s.trim().to_string()).collect()
}

#[test]
fn every_output_kind_gets_the_bytes_of_the_in_memory_path() {
    let d = tempdir("ncgen-large-kinds");
    fs::write(d.join("s.cdl"), sample_cdl(false)).unwrap();
    fs::write(d.join("c.cdl"), sample_cdl(true)).unwrap();
    let dir = d.display().to_string();
    // (flags, output name, CDL, zarr mode)
    let kinds: [(&[&str], &str, &str, Option<&str>); 7] = [
        (&["-k", "nc3"], "o3.nc", "s.cdl", None),
        (&["-k", "nc6"], "o6.nc", "s.cdl", None),
        (&["-k", "nc7"], "o7.nc", "s.cdl", None),
        (&["-4"], "o4.nc", "s.cdl", None),
        (&["-4"], "o4c.nc", "c.cdl", None),
        (&[], "o2.zarr", "s.cdl", Some("zarr,file")),
        (&[], "o3.zarr", "c.cdl", Some("zarr,v3,file")),
    ];
    for (flags, name, cdl, mode) in kinds {
        let target = |tag: &str| match mode {
            Some(m) => format!("file://{dir}/{tag}{name}#mode={m}"),
            None => format!("{tag}{name}"),
        };
        // budget 0: every numeric variable's values go through the temporary file;
        // 1 GiB: none do (the path before issue 19.3)
        for (tag, budget) in [("spill-", "0"), ("memory-", "1073741824")] {
            let out = target(tag);
            let mut args = flags.to_vec();
            args.extend(["-o", out.as_str(), cdl]);
            let o = ncgen(&args, &d, Some(budget));
            assert!(
                o.status.success(),
                "ncgen-rs {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let (a, b) = (
            tree(&d.join(format!("spill-{name}"))),
            tree(&d.join(format!("memory-{name}"))),
        );
        assert!(!a.is_empty() && a.len() == b.len(), "{name}");
        for (x, y) in a.iter().zip(&b) {
            assert!(x == y, "{name}: {} differs between the two paths", x.0);
        }
        // the values read back: records from the data, the fill tail, the second list
        let o = run(
            "ncdump-rs",
            &["-v", "t,tiny,name,rec,part", &target("spill-")],
            &d,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        // (pure Zarr has no unlimited dimensions: the length is the data's all the same)
        assert!(
            text.contains("t = UNLIMITED ; // (101 currently)")
                || (mode.is_some() && text.contains("\tt = 101 ;")),
            "{name}: {text}"
        );
        assert!(text.contains(" t = 0.5, 1.5, _, _,"), "{name}: {text}");
        // (netCDF-C's ncdump prints a byte variable's default fill as the number)
        assert!(
            text.contains(" tiny = 1, -2, 3, -127,") || text.contains(" tiny = 1, -2, 3, _,"),
            "{name}: {text}"
        );
        assert!(text.contains(" name = \"spilled\" ;"), "{name}: {text}");
        let rec = numbers(&text, "rec");
        assert_eq!(rec.len(), 10_100, "{name}");
        for (i, v) in rec.iter().enumerate() {
            let want = if i < 10_050 {
                (i as i64 * 3 - 500).to_string()
            } else {
                "_".to_string()
            };
            assert_eq!(v, &want, "{name}: rec[{i}]");
        }
        let part = numbers(&text, "part");
        assert_eq!(part.len(), 6_000, "{name}");
        for (i, v) in part.iter().enumerate() {
            let want = if i < 5_000 {
                format!("{}.5", i % 977)
            } else {
                "_".to_string()
            };
            assert_eq!(v, &want, "{name}: part[{i}]");
        }
    }
    fs::remove_dir_all(&d).unwrap();
}

/// A bad value deep in a variable whose values already went to the temporary file is
/// reported as before (file, line, column, variable), and no output is left behind.
#[test]
fn errors_in_spilled_data_are_those_of_the_in_memory_path() {
    let d = tempdir("ncgen-large-errors");
    let cdl = sample_cdl(false).replacen(", 26500,", ", 26500 26503,", 1);
    assert!(cdl.contains("26500 26503"));
    fs::write(d.join("bad.cdl"), &cdl).unwrap();
    let line = cdl.lines().position(|l| l.contains("26500 26503")).unwrap() + 1;
    let col = cdl.lines().nth(line - 1).unwrap().find("26503").unwrap() + 1;
    let mut seen = Vec::new();
    for budget in [Some("0"), None] {
        let o = ncgen(&["-4", "-o", "bad.nc", "bad.cdl"], &d, budget);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(e.contains(&format!("bad.cdl:{line}:{col}:")), "{e}");
        assert!(e.contains("'rec'"), "{e}");
        assert!(!d.join("bad.nc").exists());
        seen.push(e);
    }
    assert_eq!(seen[0], seen[1]);
    // a budget that is not a number is a usage error
    let o = ncgen(&["-4", "-o", "bad.nc", "bad.cdl"], &d, Some("lots"));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("NCGEN_RS_MEMORY_BUDGET \"lots\""),
        "{o:?}"
    );
    fs::remove_dir_all(&d).unwrap();
}
