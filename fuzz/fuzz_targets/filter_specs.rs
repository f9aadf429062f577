//! Fuzz the parsers of filter requests: `_Filter` / `-F` filter lists (tagged constants,
//! `|` pipelines), `nccopy -F` rules, and `_Codecs` / Zarr codec JSON with its mapping to HDF5
//! filters. Each must parse or give an error; none may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nc_filters::codec_json::{codec_to_hdf5, parse_codecs, zarr_to_chain};
use nc_filters::rules::FOptions;
use nc_filters::{format_spec_list, parse_spec_list, FilterContext, SpecParser};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(list) = parse_spec_list(text) {
        // what we print parses back
        let again = format_spec_list(&list);
        let _ = parse_spec_list(&again);
    }
    let _ = SpecParser::strict().parse_list(text);
    let rules: Vec<&str> = text.split('\n').collect();
    let _ = FOptions::parse(&rules);
    let ctx = FilterContext::new(4, &[16, 16]);
    if let Ok(codecs) = parse_codecs(text) {
        for c in &codecs {
            let _ = codec_to_hdf5(c, &ctx);
        }
        let arr = serde_json::Value::Array(codecs.clone());
        let _ = zarr_to_chain(&serde_json::Value::Null, &arr, &ctx);
        if let Some(first) = codecs.first() {
            let _ = zarr_to_chain(first, &serde_json::Value::Null, &ctx);
        }
    }
});
