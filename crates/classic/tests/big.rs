//! The corpus's 4 GB cases (ncgen3/big*.cdl): format size limits as netCDF-C applies them, the
//! header of files with variables over 4 GiB, and positioned reads past 4 GiB.
//!
//! The reference is `ncgen -b -x` (no fill: a sparse file); ours is written to a sink that
//! keeps only the first and last bytes, so nothing large is held in memory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use nc_dataset::Slab;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

use common::B;
use nc_classic::{write_to, ClassicError, ClassicFile, WriteOptions};
use nc_dataset::AtomicType::Float;
use nc_dataset::{DataSource, Dataset, Format, InMemory, Values, VarId};

const KEEP: usize = 64 * 1024;

/// Keeps the first and last [`KEEP`] bytes and the length.
#[derive(Default)]
struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    len: u64,
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.head.len() < KEEP {
            let n = (KEEP - self.head.len()).min(buf.len());
            self.head.extend_from_slice(&buf[..n]);
        }
        self.tail.extend_from_slice(buf);
        if self.tail.len() > 4 * KEEP {
            let cut = self.tail.len() - KEEP;
            self.tail.drain(..cut);
        }
        self.len += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn big_dataset(name: &str) -> Dataset {
    let n = if name.ends_with('3') { 1025 } else { 1000 };
    let mut b = B::new().dim("x", n).dim("y", n).dim("z", n);
    if name.starts_with("bigr") {
        b = b.unlim("t", 1);
    }
    b = b
        .var("x", Float, &["x"])
        .var("y", Float, &["y"])
        .var("z", Float, &["z"]);
    match name {
        "bigf1" => b.var("fvar", Float, &["x", "y", "z"]),
        "bigf2" | "bigf3" => b
            .var("fvar", Float, &["x", "y", "z"])
            .var("flast", Float, &[])
            .data("flast", Values::Float(vec![42.0])),
        "bigr1" => b
            .var("t", Float, &["t"])
            .var("var1", Float, &["t"])
            .var("var2", Float, &["t", "x", "y", "z"])
            .data("var1", Values::Float(vec![42.0])),
        _ => b
            .var("t", Float, &["t"])
            .var("var2", Float, &["t", "x", "y", "z"])
            .var("var1", Float, &["t"])
            .data("var1", Values::Float(vec![42.0])),
    }
    .build()
}

fn read_range(path: &Path, from: u64, n: usize) -> Vec<u8> {
    let mut f = std::fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(from)).unwrap();
    let mut b = vec![0u8; n];
    f.read_exact(&mut b).unwrap();
    b
}

#[test]
fn four_gigabyte_cases_match_ncgen() {
    let cases = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/cases/ncgen3"
    ));
    if !common::have_ncgen() || !cases.exists() {
        eprintln!("skipping: reference ncgen or corpus absent");
        return;
    }
    let dir = common::scratch("big");
    let mut compared = 0;
    let mut refused = 0;
    for name in ["bigf1", "bigf2", "bigf3", "bigr1", "bigr2", "bigr3"] {
        let ds = big_dataset(name);
        for f in [Format::Classic, Format::Offset64, Format::Cdf5] {
            let out = dir.join("ref.nc");
            let _ = std::fs::remove_file(&out);
            let ok = Command::new("/usr/bin/ncgen")
                .args(["-b", "-x", "-k", common::kind_arg(f), "-o"])
                .arg(&out)
                .arg(cases.join(format!("{name}.cdl")))
                .output()
                .unwrap()
                .status
                .success();
            let mut cap = Capture::default();
            let opts = WriteOptions {
                format: f,
                fill: false,
                only_given_data: true,
            };
            let r = write_to(&mut cap, &ds, &InMemory, &opts);
            if !ok {
                match r {
                    Err(ClassicError::VarTooLarge { .. }) => {}
                    other => panic!("{name} {f:?}: ncgen refuses, we gave {other:?}"),
                }
                assert_eq!(
                    cap.len, 0,
                    "{name} {f:?}: nothing is written before refusing"
                );
                refused += 1;
                continue;
            }
            if let Err(e) = r {
                panic!("{name} {f:?}: ncgen writes it, we refuse: {e}");
            }
            let len = std::fs::metadata(&out).unwrap().len();
            assert_eq!(cap.len, len, "{name} {f:?}: length");
            assert_eq!(
                cap.head,
                read_range(&out, 0, cap.head.len()),
                "{name} {f:?}: head"
            );
            let t = cap.tail.len() as u64;
            assert_eq!(
                cap.tail,
                read_range(&out, len - t, t as usize),
                "{name} {f:?}: tail"
            );
            // positioned reads work past 4 GiB
            let file = ClassicFile::open(&out).unwrap();
            let back = file.dataset();
            if let Some(v) = back
                .vars
                .iter()
                .position(|v| v.name == "var1" || v.name == "flast")
            {
                let shape = file.header().vars[v].shape.clone();
                let got = file
                    .read(back, VarId(v), Slab::new(&vec![0; shape.len()], &shape))
                    .unwrap();
                assert_eq!(got, Values::Float(vec![42.0]), "{name} {f:?}");
            }
            compared += 1;
            let _ = std::fs::remove_file(&out);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // bigf2/bigr2 classic, bigf3/bigr3 classic and 64-bit offset are refused by netCDF-C
    assert_eq!((compared, refused), (12, 6));
}

#[test]
fn size_limit_messages() {
    let ds = big_dataset("bigf3");
    let opts = WriteOptions {
        format: Format::Offset64,
        fill: false,
        only_given_data: true,
    };
    let e = write_to(&mut Capture::default(), &ds, &InMemory, &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "variable \"fvar\": 4307562500 bytes exceeds 2^32 - 4 bytes (CDF-2), allowed only for the last fixed-size variable (use the cdf5 format)"
    );
    let ds = big_dataset("bigf2");
    let e = write_to(
        &mut Capture::default(),
        &ds,
        &InMemory,
        &WriteOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "variable \"fvar\": 4000000000 bytes exceeds 2^31 - 4 bytes (CDF-1), allowed only for the last fixed-size variable (use the 64-bit offset or cdf5 format)"
    );
}

#[test]
fn cdf5_file_over_4_gib() {
    if !common::have_ncgen() {
        eprintln!("skipping: reference ncgen absent");
        return;
    }
    let ds = B::new()
        .dim("n", 1_250_000_000)
        .var("big", Float, &["n"])
        .var("last", Float, &[])
        .data("last", Values::Float(vec![42.0]))
        .build();
    let dir = common::scratch("over4g");
    let cdl = common::to_cdl(&ds);
    std::fs::write(dir.join("h.cdl"), &cdl).unwrap();
    let out = dir.join("ref.nc");
    let ok = Command::new("/usr/bin/ncgen")
        .args(["-b", "-x", "-k", "cdf5", "-o"])
        .arg(&out)
        .arg(dir.join("h.cdl"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "ncgen failed on\n{cdl}");
    let len = std::fs::metadata(&out).unwrap().len();
    assert!(len > 5_000_000_000);
    let mut cap = Capture::default();
    let opts = WriteOptions {
        format: Format::Cdf5,
        fill: false,
        only_given_data: true,
    };
    write_to(&mut cap, &ds, &InMemory, &opts).unwrap();
    assert_eq!(cap.len, len);
    assert_eq!(cap.head, read_range(&out, 0, cap.head.len()));
    let t = cap.tail.len() as u64;
    assert_eq!(cap.tail, read_range(&out, len - t, t as usize));
    let file = ClassicFile::open(&out).unwrap();
    assert!(file.header().vars[1].begin > 1 << 32);
    assert_eq!(
        file.read_slab(VarId(1), &[], &[]).unwrap(),
        Values::Float(vec![42.0])
    );
    assert_eq!(
        file.read_slab(VarId(0), &[1_249_999_998], &[2]).unwrap(),
        Values::Float(vec![0.0, 0.0])
    );
    // and in CDF-2 the 5 GB variable must be last
    let e = write_to(
        &mut Capture::default(),
        &ds,
        &InMemory,
        &WriteOptions {
            format: Format::Offset64,
            ..opts
        },
    )
    .unwrap_err();
    assert!(e
        .to_string()
        .contains("allowed only for the last fixed-size variable"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cdf2_last_variable_over_4_gib_stores_vsize_all_ones() {
    if !common::have_ncgen() {
        eprintln!("skipping: reference ncgen absent");
        return;
    }
    let ds = B::new()
        .dim("n", 1_250_000_000)
        .var("small", Float, &[])
        .var("big", Float, &["n"])
        .data("small", Values::Float(vec![42.0]))
        .build();
    let dir = common::scratch("cdf2-4g");
    std::fs::write(dir.join("h.cdl"), common::to_cdl(&ds)).unwrap();
    let out = dir.join("ref.nc");
    let ok = Command::new("/usr/bin/ncgen")
        .args(["-b", "-x", "-k", "64-bit offset", "-o"])
        .arg(&out)
        .arg(dir.join("h.cdl"))
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let len = std::fs::metadata(&out).unwrap().len();
    let mut cap = Capture::default();
    let opts = WriteOptions {
        format: Format::Offset64,
        fill: false,
        only_given_data: true,
    };
    write_to(&mut cap, &ds, &InMemory, &opts).unwrap();
    assert_eq!(cap.len, len);
    assert_eq!(cap.head, read_range(&out, 0, cap.head.len()));
    let file = ClassicFile::open(&out).unwrap();
    let vh = &file.header().vars[1];
    assert_eq!(
        (vh.stored_vsize, vh.vsize),
        (u64::from(u32::MAX), 5_000_000_000)
    );
    assert_eq!(
        file.read_slab(VarId(1), &[1_249_999_999], &[1]).unwrap(),
        Values::Float(vec![0.0])
    );
    assert_eq!(
        file.read_slab(VarId(0), &[], &[]).unwrap(),
        Values::Float(vec![42.0])
    );
    let _ = std::fs::remove_dir_all(&dir);
}
