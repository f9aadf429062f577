//! Fuzz the CDL parser: any text must give a Dataset or a positioned error, never a panic,
//! a hang or an unbounded allocation. A dataset that parses must print as JSON that parses
//! (`ncdump-rs -j`; the data too when it is small).
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Largest dataset (elements of all variables) whose data is printed as JSON.
const MAX_ELEMENTS: u64 = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(ds) = nc_cdl::parse_cdl(&text, "fuzz.cdl", &nc_cdl::ParseOptions::default()) else {
        return;
    };
    let total = (0..ds.vars.len()).try_fold(0u64, |acc, i| {
        acc.checked_add(ds.num_elements(nc_dataset::VarId(i))?)
    });
    let opts = nc_cdl::DumpOptions {
        header_only: total.is_none_or(|t| t > MAX_ELEMENTS),
        special: true,
        ..Default::default()
    };
    let mut json = Vec::new();
    if nc_cdl::print::print_json(&ds, &nc_dataset::InMemory, &opts, &mut json).is_ok() {
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&json) {
            panic!("ncdump -j wrote invalid JSON ({e}):\n{}", String::from_utf8_lossy(&json));
        }
    }
});
