//! Fuzz the OPeNDAP decoders (issue 32): DAP2's DDS and DAS parsers, the `.dods` decoder and
//! the mapping to netCDF's classic model; DAP4's chunked `.dap` response (framing, DMR parser,
//! netCDF view, data with checksums). Any input must decode or give an error — never a panic,
//! a hang or an allocation sized by a declared count rather than by the bytes present — and
//! what decoded is printed as ncdump prints it.
//!
//! Input: byte 0 picks the protocol (even: DAP4, the rest is a `.dap` response; odd: DAP2,
//! the rest is `u32 LE length + DDS text`, `u32 LE length + DAS text`, then the `.dods`
//! response). Seeds (fuzz/make_seeds.sh): netCDF-C's DAP test responses from the conformance
//! corpus, in this framing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nc_dap::dap2::{build, parse, xdr};
use nc_dataset::{Dataset, InMemory};

/// Largest dataset (bytes of every variable) that is printed.
const MAX_PRINT: u64 = 1 << 20;

fn take(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
    let rest = &b[4..];
    (n <= rest.len()).then(|| rest.split_at(n))
}

fn print(ds: &Dataset) {
    let total: u64 = (0..ds.vars.len())
        .map(|v| {
            let v = nc_dataset::VarId(v);
            ds.num_elements(v).unwrap_or(u64::MAX).saturating_mul(8)
        })
        .fold(0, u64::saturating_add);
    if total > MAX_PRINT {
        return;
    }
    let _ = nc_cdl::print(
        ds,
        &InMemory,
        &nc_cdl::DumpOptions::default(),
        &mut std::io::sink(),
    );
}

fn dap2(input: &[u8]) {
    let Some((dds_text, rest)) = take(input) else {
        return;
    };
    let Some((das_text, dods)) = take(rest) else {
        return;
    };
    let Ok(parse::Parsed::Ok(dds)) = parse::parse_dds(dds_text) else {
        return;
    };
    let das = match parse::parse_das(das_text) {
        Ok(parse::Parsed::Ok(items)) => items,
        _ => Vec::new(),
    };
    let decoded = parse::split_dods(dods).and_then(|(text, body)| {
        let Ok(parse::Parsed::Ok(ddds)) = parse::parse_dds(text) else {
            return None;
        };
        let data = xdr::decode(&ddds.vars, body).ok()?;
        Some((ddds, data))
    });
    let opts = build::MapOptions::default();
    let Ok(mut mapped) = build::map(
        &dds,
        &das,
        decoded.as_ref().map(|(_, d)| d.as_slice()),
        &opts,
        "fuzz",
    ) else {
        return;
    };
    if let Some((ddds, mut data)) = decoded {
        if let Ok(values) = build::gather(&mapped.dataset, &ddds, &mut data, &mapped.leaves) {
            for (v, vals) in values {
                mapped.dataset.var_mut(v).data = Some(vals);
            }
        }
    }
    print(&mapped.dataset);
}

fn dap4(input: &[u8]) {
    if let Ok((mut ds, data, _)) = nc_dap::dap4::open_response(input, "fuzz") {
        for (v, vals) in data.values {
            ds.var_mut(v).data = Some(vals);
        }
        print(&ds);
    }
}

fuzz_target!(|input: &[u8]| {
    match input.split_first() {
        Some((k, rest)) if k % 2 == 1 => dap2(rest),
        Some((_, rest)) => dap4(rest),
        None => {}
    }
});
