//! Property tests: every built-in codec round-trips random data of random element sizes and
//! chunk shapes; decoders given random bytes return errors and never panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::{parse_spec_list, FilterContext, Registry};
use proptest::prelude::*;

const CHAINS: &[&str] = &[
    "1,0",
    "1,6",
    "2",
    "3",
    "307,1",
    "307,9",
    "32004",
    "32004,64",
    "32015,1",
    "32015,-5",
    "32001,0,0,0,0,5,1,0",
    "32001,0,0,0,0,5,1,1",
    "32001,0,0,0,0,5,0,4",
    "32001,0,0,0,0,3,1,5",
    "32001,0,0,0,0,5,2,1",
    "3|2|1,5",
    "2|32004|3",
    "2|307,9",
];

fn chunk_strategy() -> impl Strategy<Value = (usize, Vec<u64>, Vec<u8>)> {
    (
        prop::sample::select(vec![1usize, 2, 4, 8, 3, 16]),
        prop::collection::vec(1u64..40, 1..4),
        any::<u64>(),
        0u8..3,
    )
        .prop_map(|(ts, shape, seed, kind)| {
            let n = shape.iter().product::<u64>() as usize * ts;
            let mut x = seed | 1;
            let data = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match kind {
                        0 => x as u8,              // noise
                        1 => (i / 7) as u8,        // runs
                        _ => (x % 4) as u8 + b'a', // low entropy
                    }
                })
                .collect();
            (ts, shape, data)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn roundtrip((ts, shape, data) in chunk_strategy(), which in 0..CHAINS.len()) {
        let r = Registry::with_builtins();
        let chain = parse_spec_list(CHAINS[which]).unwrap();
        let p = r.pipeline(&chain, FilterContext::new(ts, &shape)).unwrap();
        let enc = p.encode(&data).unwrap();
        prop_assert_eq!(p.decode(&enc).unwrap(), data);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), which in 0..CHAINS.len()) {
        let r = Registry::with_builtins();
        let chain = parse_spec_list(CHAINS[which]).unwrap();
        let mut ctx = FilterContext::new(4, &[]);
        ctx.max_decoded = 1 << 20;
        let p = r.pipeline(&chain, ctx).unwrap();
        let _ = p.decode(&bytes);
    }

    #[test]
    fn mutated_chunks_never_panic((ts, shape, data) in chunk_strategy(), which in 0..CHAINS.len(), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let r = Registry::with_builtins();
        let chain = parse_spec_list(CHAINS[which]).unwrap();
        let p = r.pipeline(&chain, FilterContext::new(ts, &shape)).unwrap();
        let mut enc = p.encode(&data).unwrap();
        for (at, x) in flips {
            if !enc.is_empty() {
                let i = at % enc.len();
                enc[i] ^= x;
            }
        }
        let keep = if enc.is_empty() { 0 } else { cut % (enc.len() + 1) };
        let _ = p.decode(&enc[..keep]);
        let _ = p.decode(&enc);
    }

    #[test]
    fn szip_random_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        params in prop::sample::select(vec![[169u32, 8, 16, 10], [141, 32, 8, 100], [169, 16, 32, 64], [137, 8, 64, 8]]),
        size in 0u32..5000,
    ) {
        let r = Registry::with_builtins();
        let chain = [nc_filters::FilterSpec { id: 4, params: params.to_vec() }];
        let p = r.pipeline(&chain, FilterContext::new(1, &[])).unwrap();
        let _ = p.decode(&bytes);
        let mut framed = size.to_le_bytes().to_vec();
        framed.extend_from_slice(&bytes);
        let _ = p.decode(&framed);
    }

    #[test]
    fn spec_parser_never_panics(s in "[-0-9a-zA-Z.,|+ ]{0,30}") {
        let _ = parse_spec_list(&s);
        let _ = nc_filters::rules::FOptions::parse(&[s.as_str()]);
    }
}
