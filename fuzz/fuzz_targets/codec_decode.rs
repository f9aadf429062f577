//! Fuzz the built-in codecs' decoders on corrupt chunks: deflate, shuffle, fletcher32, szip,
//! nbit, PyTables' LZO... every id the registry builds in. Byte 0 picks the codec, bytes 1-8 give
//! two parameters, byte 9 the element size (low 4 bits) and a third parameter (high 4 bits,
//! LZO's object type); the rest is the stored chunk. Decoding must give the
//! chunk or an error, never a panic or an allocation beyond the chunk's logical size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nc_filters::{FilterContext, FilterSpec, Registry};
use std::sync::OnceLock;

/// Ids tried: HDF5's own filters and the registered ones built in.
const IDS: [u32; 12] = [1, 2, 3, 4, 5, 6, 307, 32001, 32004, 32015, 32000, 305];

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Registry::with_builtins)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let id = IDS[usize::from(data[0]) % IDS.len()];
    let p0 = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let p1 = u32::from_le_bytes([data[5], data[6], data[7], data[8]]);
    let type_size = usize::from(data[9] % 16).max(1);
    let chunk = &data[10..];
    // a logical chunk of up to 64 KiB elements
    let n = (u64::from(p1) % 65536).max(1);
    let mut ctx = FilterContext::new(type_size, &[n]);
    ctx.max_decoded = 1 << 20;
    let registry = registry();
    if !registry.is_available(id) {
        return;
    }
    let p2 = u32::from(data[9] >> 4);
    for params in [vec![], vec![p0], vec![p0, p1], vec![p0, p1 % 32, p2]] {
        let spec = FilterSpec { id, params };
        if let Ok(p) = registry.pipeline_stored(std::slice::from_ref(&spec), ctx.clone()) {
            if let Ok(out) = p.decode(chunk) {
                assert!(
                    out.len() <= ctx.max_decoded.max(chunk.len()),
                    "decoded past the cap"
                );
            }
        }
    }
});
