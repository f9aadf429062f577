//! Fuzz the netCDF-4 / HDF5 reader: the input is a whole file (superblock, object headers,
//! B-trees, heaps, chunk indexes, chunks). It must open or give an error, and printing what
//! opened (header, `-s` storage, and the data when it is small) must not panic, hang or
//! allocate unboundedly, and the JSON of what prints (`ncdump-rs -j`) must parse. Seeds: `fuzz/make_seeds.sh` writes netCDF-4 files of the repository's
//! CDL files (and h5py files when h5py is installed) into `fuzz/corpus/hdf5_file/`.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;

/// Largest dataset (bytes of all variables) whose data is printed.
const MAX_DATA: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let decoder = Arc::new(nc_hdf5::chunk_decoder());
    let Ok(f) = nc_hdf5::Nc4File::from_bytes(data.to_vec(), "fuzz", decoder) else {
        return;
    };
    let ds = f.dataset();
    let total = ds.data_bytes();
    // the text data prints, also where there are no values: a variable of N x 0 elements
    // prints N empty JSON arrays (`[[], [], ...]`, docs/json.md), output the user asked for
    // that the harness must not collect for a declared N of 2^42
    let cells = (0..ds.vars.len()).try_fold(0u64, |acc, i| {
        let n = ds
            .shape(nc_dataset::VarId(i))
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d.max(1)))?;
        acc.checked_add(n)
    });
    let opts = nc_cdl::DumpOptions {
        header_only: total.is_none_or(|t| t > MAX_DATA) || cells.is_none_or(|c| c > MAX_DATA),
        special: true,
        ..Default::default()
    };
    let _ = nc_cdl::print(ds, &f, &opts, &mut std::io::sink());
    let mut json = Vec::new();
    if nc_cdl::print::print_json(ds, &f, &opts, &mut json).is_ok() {
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&json) {
            panic!("ncdump -j wrote invalid JSON ({e}):\n{}", String::from_utf8_lossy(&json));
        }
    }
});
