//! The classic header parser on arbitrary bytes: it must return Ok or an error, never panic,
//! hang or allocate without bound; when it succeeds, reading each (small) variable must not
//! panic either, and writing the dataset back must succeed or fail cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nc_classic::{write_to, ClassicFile, WriteOptions};
use nc_dataset::{DataSource, Slab, VarId};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = ClassicFile::from_bytes(data.to_vec()) else {
        return;
    };
    let ds = file.dataset().clone();
    let mut small = true;
    for (i, vh) in file.header().vars.iter().enumerate() {
        let total = vh.shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        if total.is_some_and(|t| t <= 1 << 16) {
            let start = vec![0; vh.shape.len()];
            let _ = file.read(&ds, VarId(i), Slab::new(&start, &vh.shape));
        } else {
            small = false;
        }
    }
    if small {
        let mut out = Vec::new();
        let opts = WriteOptions {
            format: file.header().format,
            fill: false,
            only_given_data: false,
        };
        let _ = write_to(&mut out, &ds, &file, &opts);
    }
});
