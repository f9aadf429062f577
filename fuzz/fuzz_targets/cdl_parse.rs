//! Fuzz the CDL parser: any text must give a Dataset or a positioned error, never a panic,
//! a hang or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = nc_cdl::parse_cdl(&text, "fuzz.cdl", &nc_cdl::ParseOptions::default());
});
