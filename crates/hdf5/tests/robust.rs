//! Hostile input: truncated and corrupted files must give errors, never panics, and opening
//! must stay metadata-only and fast.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use nc_dataset::Slab;
use std::sync::Arc;

use common::{ncgen, tmp_dir};
use nc_dataset::DataSource;
use nc_hdf5::{chunk_decoder, Hdf5Error, Nc4File};

/// Open `bytes` and read every variable whole; errors are fine, panics are not.
fn exercise(bytes: Vec<u8>) -> Result<usize, Hdf5Error> {
    let f = Nc4File::from_bytes(bytes, "x", Arc::new(chunk_decoder()))?;
    let ds = f.dataset();
    let mut ok = 0;
    for v in ds.all_vars() {
        let shape = ds.shape(v);
        // keep reads small: a corrupt dimension length may be huge
        let count: Vec<u64> = shape.iter().map(|&n| n.min(64)).collect();
        if f.read(ds, v, Slab::new(&vec![0; shape.len()], &count))
            .is_ok()
        {
            ok += 1;
        }
    }
    Ok(ok)
}

fn sample(test: &str) -> Option<Vec<u8>> {
    if let Some(p) = std::env::var_os("NC_HDF5_CORRUPT_SAMPLE") {
        return Some(std::fs::read(p).expect("read NC_HDF5_CORRUPT_SAMPLE"));
    }
    let dir = tmp_dir(test);
    let path = ncgen(&dir, "enhanced", "nc4", include_str!("data/enhanced.cdl"))?;
    Some(std::fs::read(path).expect("read sample"))
}

#[test]
fn intact_sample_reads_every_variable() {
    let Some(bytes) = sample("robust-intact") else {
        return;
    };
    // 13 variables; nf is never written (no fill) and reads as zeros
    assert_eq!(exercise(bytes).expect("intact file"), 13);
}

#[test]
fn truncated_files_fail_cleanly() {
    let Some(bytes) = sample("robust-truncated") else {
        return;
    };
    let mut failures = 0;
    let mut n = 0;
    while n < bytes.len() {
        if exercise(bytes[..n].to_vec()).is_err() {
            failures += 1;
        }
        n += if n < 512 { 7 } else { 61 };
    }
    assert!(
        failures > 10,
        "truncated copies must be refused ({failures} were)"
    );
}

#[test]
fn corrupted_files_never_panic() {
    let Some(bytes) = sample("robust-corrupt") else {
        return;
    };
    // a fixed xorshift sequence: reproducible corruption
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    // NC_HDF5_CORRUPT_ITERS raises the count for a longer local run
    let iters = std::env::var("NC_HDF5_CORRUPT_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for _ in 0..iters {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % b.len() as u64) as usize;
            b[i] ^= (next() % 255 + 1) as u8;
        }
        let _ = exercise(b);
    }
}

/// Fuzz finding (hdf5_file, 2026-11-28): a global heap collection whose size field says
/// 2^54 bytes made the byte source allocate that much before finding the range outside the
/// file. Every collection of the sample gets such a size: the file must open or fail with an
/// error, with allocations sized by what the file holds.
#[test]
fn global_heap_of_declared_petabytes_is_refused_not_allocated() {
    let Some(bytes) = sample("robust-gcol-size") else {
        return;
    };
    let at: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"GCOL")
        .map(|(i, _)| i)
        .collect();
    assert!(
        !at.is_empty(),
        "the sample has a global heap (strings, dimension lists)"
    );
    let mut b = bytes.clone();
    for &i in &at {
        // signature (4), version (1), reserved (3), collection size (8 bytes with 8-byte lengths)
        b[i + 8..i + 16].copy_from_slice(&(1u64 << 54).to_le_bytes());
    }
    let _ = exercise(b);
}

#[test]
fn not_hdf5_and_missing_files() {
    let err = Nc4File::from_bytes(
        b"CDF\x01 this is classic".to_vec(),
        "x",
        Arc::new(chunk_decoder()),
    )
    .expect_err("not HDF5");
    assert!(err.to_string().starts_with("superblock: "), "{err}");
    let err = Nc4File::open("/nonexistent/dir/file.nc").expect_err("missing");
    assert!(matches!(err, Hdf5Error::Io { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("cannot read /nonexistent/dir/file.nc: "),
        "{err}"
    );
}

#[test]
fn opening_two_thousand_deflated_variables_is_metadata_only() {
    let dir = tmp_dir("manyvars");
    let mut cdl =
        String::from("netcdf manyvars {\ndimensions:\n  t = UNLIMITED ;\n  x = 10 ;\nvariables:\n");
    for i in 0..2000 {
        cdl.push_str(&format!(
            "  float v{i}(t, x) ;\n    v{i}:_DeflateLevel = 1 ;\n    v{i}:_ChunkSizes = 1, 10 ;\n    v{i}:units = \"m\" ;\n"
        ));
    }
    cdl.push_str("data:\n  v7 = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 ;\n}\n");
    let Some(path) = ncgen(&dir, "manyvars", "nc4", &cdl) else {
        return;
    };
    let t = std::time::Instant::now();
    let f = Nc4File::open(&path).expect("open");
    let took = t.elapsed();
    let ds = f.dataset();
    assert_eq!(ds.vars.len(), 2000);
    assert_eq!(ds.dims[0].len, 2);
    assert!(ds.vars.iter().all(|v| v.storage.deflate_level() == Some(1)));
    // netCDF-C's ncdump -hs needs seconds here; metadata alone must take well under one
    assert!(took.as_secs_f64() < 1.5, "open took {took:?}");
    let v7 = ds.find_var(nc_dataset::ROOT, "v7").expect("v7");
    let vals = f.read(ds, v7, Slab::new(&[1, 0], &[1, 10])).expect("read");
    assert_eq!(
        vals,
        nc_dataset::Values::Float((11..=20).map(|x| x as f32).collect())
    );
}
