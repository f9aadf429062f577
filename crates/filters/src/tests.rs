//! Unit tests of the crate's public API: spec text, chains, codecs, pipeline.

use crate::*;

fn words(t: &str) -> Vec<u32> {
    parse_spec_list(&format!("1,{t}")).unwrap()[0]
        .params
        .clone()
}

fn bad(text: &str) -> (String, usize, SpecProblem) {
    match parse_spec_list(text) {
        Err(FilterSpecError::Bad {
            token,
            pos,
            problem,
            ..
        }) => (token, pos, problem),
        other => panic!("{text:?}: expected a Bad error, got {other:?}"),
    }
}

#[test]
fn documented_constants_exact_words() {
    // every row of the documentation's constant table
    assert_eq!(words("-17b"), [4294967279]); // sign extended (docs), not 239 (4.9.0 code)
    assert_eq!(words("23ub"), [23]);
    assert_eq!(words("-25S"), [4294967271]);
    assert_eq!(words("27US"), [27]);
    assert_eq!(words("-77"), [4294967219]);
    assert_eq!(words("77"), [77]);
    assert_eq!(words("93U"), [93]);
    assert_eq!(words("789f"), [1145389056]);
    assert_eq!(words("12345678.12345678d"), [3287505826, 1097305129]);
    assert_eq!(words("-9223372036854775807L"), [1, 2147483648]);
    assert_eq!(words("18446744073709551615UL"), [4294967295, 4294967295]);
}

#[test]
fn tags_are_case_insensitive_and_ranges_hold() {
    assert_eq!(words("-17B"), [4294967279]);
    assert_eq!(words("23Ub"), [23]);
    assert_eq!(words("23uB"), [23]);
    assert_eq!(words("-25s"), [4294967271]);
    assert_eq!(words("27uS"), [27]);
    assert_eq!(words("93u"), [93]);
    assert_eq!(words("789F"), [1145389056]);
    assert_eq!(words("-1.5f"), [(-1.5f32).to_bits()]);
    assert_eq!(words("1e3f"), [1000f32.to_bits()]);
    assert_eq!(words("2.5D"), {
        let b = 2.5f64.to_bits();
        vec![b as u32, (b >> 32) as u32]
    });
    assert_eq!(words("5l"), [5, 0]);
    assert_eq!(words("-1L"), [u32::MAX, u32::MAX]);
    assert_eq!(words("4294967296UL"), [0, 1]);
    assert_eq!(words("127b"), [127]);
    assert_eq!(words("-128b"), [0xffff_ff80]);
    assert_eq!(words("255ub"), [255]);
    assert_eq!(words("65535us"), [65535]);
    assert_eq!(words("-32768s"), [0xffff_8000]);
    assert_eq!(words("4294967295"), [u32::MAX]);
    assert_eq!(words("-2147483648"), [0x8000_0000]);
    assert_eq!(words("0"), [0]);
    assert_eq!(words("9UB"), [9]);
}

#[test]
fn rejections_name_token_and_position() {
    assert_eq!(
        bad("1,1.5"),
        ("1.5".into(), 2, SpecProblem::UntaggedFraction)
    );
    assert_eq!(bad("1,0x10"), ("0x10".into(), 2, SpecProblem::Hex));
    assert_eq!(
        bad("1,4294967296"),
        ("4294967296".into(), 2, SpecProblem::OutOfRange)
    );
    assert_eq!(bad("1,5x"), ("5x".into(), 2, SpecProblem::UnknownTag));
    assert_eq!(bad("307,9,"), ("".into(), 6, SpecProblem::Empty));
    assert_eq!(bad("307,9|"), ("".into(), 6, SpecProblem::Empty));
    assert_eq!(bad("|307"), ("".into(), 0, SpecProblem::Empty));
    assert_eq!(bad(""), ("".into(), 0, SpecProblem::Empty));
    assert_eq!(bad("307,,9"), ("".into(), 4, SpecProblem::Empty));
    assert_eq!(bad("307,128b"), ("128b".into(), 4, SpecProblem::OutOfRange));
    assert_eq!(
        bad("307,256ub"),
        ("256ub".into(), 4, SpecProblem::OutOfRange)
    );
    assert_eq!(
        bad("307,-1u"),
        ("-1u".into(), 4, SpecProblem::NegativeUnsigned)
    );
    assert_eq!(
        bad("307,-3ub"),
        ("-3ub".into(), 4, SpecProblem::NegativeUnsigned)
    );
    assert_eq!(
        bad("307,-1UL"),
        ("-1UL".into(), 4, SpecProblem::NegativeUnsigned)
    );
    assert_eq!(
        bad("307,-2147483649"),
        ("-2147483649".into(), 4, SpecProblem::OutOfRange)
    );
    assert_eq!(
        bad("307,1.5b"),
        ("1.5b".into(), 4, SpecProblem::UntaggedFraction)
    );
    assert_eq!(bad("307,abc"), ("abc".into(), 4, SpecProblem::NotANumber));
    assert_eq!(bad("307,+5"), ("+5".into(), 4, SpecProblem::NotANumber));
    assert_eq!(
        bad("307,18446744073709551616UL"),
        ("18446744073709551616UL".into(), 4, SpecProblem::OutOfRange)
    );
    assert_eq!(bad("0,1"), ("0".into(), 0, SpecProblem::BadFilterId));
    assert_eq!(bad("65536"), ("65536".into(), 0, SpecProblem::BadFilterId));
    assert_eq!(bad("-1"), ("-1".into(), 0, SpecProblem::BadFilterId));
    assert_eq!(bad("0x133"), ("0x133".into(), 0, SpecProblem::Hex));
    assert_eq!(
        bad("307,9|nosuch,1"),
        ("nosuch".into(), 6, SpecProblem::UnknownName)
    );
    assert_eq!(
        bad("307, 9 | 1,1e"),
        ("1e".into(), 11, SpecProblem::UnknownTag)
    );
    // the message carries the token, the position and the cure
    let e = parse_spec_list("1,1.5").unwrap_err().to_string();
    assert_eq!(
        e,
        "bad filter spec \"1,1.5\": token \"1.5\" at byte 2: a fraction or exponent needs a tag: add `f` (float) or `d` (double)"
    );
}

#[test]
fn names_extension_and_strict_mode() {
    let specs = parse_spec_list(
        "bzip2,9|LZ4|zstandard,3|bz2|zlib,5|deflate,1|shuffle|fletcher32|szip,4,32|blosc",
    )
    .unwrap();
    let ids: Vec<u32> = specs.iter().map(|s| s.id).collect();
    assert_eq!(ids, [307, 32004, 32015, 307, 1, 1, 2, 3, 4, 32001]);
    assert_eq!(specs[0].params, [9]);
    let strict = SpecParser::strict();
    assert!(matches!(
        strict.parse_list("bzip2,9"),
        Err(FilterSpecError::Bad {
            problem: SpecProblem::NameNotAllowed,
            pos: 0,
            ..
        })
    ));
    // strict mode checks known filters' parameters: deflate needs a level
    let e = strict.parse_list("1").unwrap_err();
    assert_eq!(
        e.to_string(),
        "filter spec \"1\": filter 1 (deflate) needs exactly one parameter, the level 0-9; got 0"
    );
    assert!(strict.parse_list("1,10").is_err());
    assert!(strict.parse_list("307,0").is_err());
    assert!(strict.parse_list("3,1").is_err());
    assert!(strict.parse_list("4,32").is_err());
    assert!(strict.parse_list("4,4,31").is_err());
    assert_eq!(
        strict
            .parse_list("307,9|4,32,32|3|2|32004|32015,1|40000,1,2,3")
            .unwrap()
            .len(),
        7
    );
    assert_eq!(filter_name(32015), Some("zstd"));
    assert_eq!(filter_id_by_name("Zstandard"), Some(32015));
    assert_eq!(filter_name(40000), None);
}

#[test]
fn printer_gives_ncdump_form() {
    let specs = parse_spec_list("307,9|32004").unwrap();
    assert_eq!(format_spec_list(&specs), "307,9|32004");
    let specs = parse_spec_list("1, -17b ,789f|2").unwrap();
    assert_eq!(format_spec_list(&specs), "1,4294967279,1145389056|2");
    assert_eq!(format_spec_list(&[]), "");
}

fn fs(id: u32, params: &[u32]) -> FilterSpec {
    FilterSpec {
        id,
        params: params.to_vec(),
    }
}

#[test]
fn chain_order_rules() {
    // "2|1,5|3" -> fletcher32 first, then shuffle (ncdump shows 3|2,4|1,5)
    let c = normalize_chain(&parse_spec_list("2|1,5|3").unwrap());
    assert_eq!(c, [fs(3, &[]), fs(2, &[]), fs(1, &[5])]);
    // repeated id keeps its first position, takes the last parameters
    let c = normalize_chain(&parse_spec_list("1,2|307,9|1,3").unwrap());
    assert_eq!(c, [fs(1, &[3]), fs(307, &[9])]);
    let c = normalize_chain(&parse_spec_list("307,9|1,5").unwrap());
    assert_eq!(c, [fs(307, &[9]), fs(1, &[5])]);
    let c = normalize_chain(&parse_spec_list("307,9|3").unwrap());
    assert_eq!(c, [fs(3, &[]), fs(307, &[9])]);
    // working parameters: shuffle gets the element size
    let r = Registry::with_builtins();
    let w = r.working_chain(&c_chain("3|2|1,5"), &FilterContext::new(4, &[4, 4]));
    assert_eq!(format_spec_list(&w), "3|2,4|1,5");
    let w = r.working_chain(
        &c_chain("32001,0,0,0,0,5,1,1"),
        &FilterContext::new(4, &[4, 4, 4]),
    );
    assert_eq!(format_spec_list(&w), "32001,2,2,4,256,5,1,1");
    let w = r.working_chain(&c_chain("32001"), &FilterContext::new(8, &[10]));
    assert_eq!(format_spec_list(&w), "32001,2,2,8,80");
}

fn c_chain(t: &str) -> Vec<FilterSpec> {
    parse_spec_list(t).unwrap()
}

fn sample(n: usize) -> Vec<u8> {
    // float32 ramp with noise in the low bits: compressible but not trivial
    let mut v = Vec::with_capacity(n * 4);
    let mut x: u32 = 12345;
    for i in 0..n {
        x = x.wrapping_mul(1103515245).wrapping_add(12345);
        let f = (i as f32) * 0.25 + ((x >> 20) as f32) * 1e-4;
        v.extend_from_slice(&f.to_le_bytes());
    }
    v
}

fn roundtrip(chain: &str, type_size: usize, shape: &[u64]) -> Vec<u8> {
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(type_size, shape);
    let n = ctx.chunk_bytes().unwrap();
    let data: Vec<u8> = sample(n.div_ceil(4)).into_iter().take(n).collect();
    let p = r.pipeline(&c_chain(chain), ctx).unwrap();
    let enc = p.encode(&data).unwrap();
    let dec = p.decode(&enc).unwrap();
    assert_eq!(dec, data, "chain {chain}");
    enc
}

#[test]
fn builtin_roundtrips() {
    for chain in [
        "1,5",
        "2",
        "3",
        "307,9",
        "32004",
        "32004,100",
        "32015,3",
        "32001,0,0,0,0,5,1,1",
        "32001,0,0,0,0,5,0,4",
        "32001,0,0,0,0,9,1,5",
        "32001,0,0,0,0,0,1,1",
        "32001,0,0,0,0,5,2,0",
        "3|2|1,5",
        "2|307,1|3",
        "2|32001|32015",
    ] {
        for (ts, shape) in [
            (4usize, vec![64u64, 64]),
            (8, vec![100]),
            (1, vec![7]),
            (2, vec![1]),
            (4, vec![300000]),
        ] {
            roundtrip(chain, ts, &shape);
        }
    }
}

#[test]
fn deflate_is_zlib_and_shuffle_layout() {
    let enc = roundtrip("1,5", 4, &[16]);
    assert_eq!(enc[0], 0x78); // zlib header, as HDF5's compress2
    let mut out = Vec::new();
    shuffle_bytes(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 4, &mut out);
    assert_eq!(out, [1, 5, 2, 6, 3, 7, 4, 8, 9]);
    let mut back = Vec::new();
    unshuffle_bytes(&out, 4, &mut back);
    assert_eq!(back, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn fletcher32_known_values() {
    // hand-computed: words 0x6162, 0x6364, odd byte 0x65 -> 0x6500
    // sum1 = 0x6162+0x6364+0x6500 = 0x12a26 -> 0x2a27 ; sum2 = 0x6162+0xc4c6+0x129c6 = 0x1efee... reduce
    let s1: u32 = 0x6162 + 0x6364;
    let s2: u32 = 0x6162 + s1;
    let s1r = (s1 & 0xffff) + (s1 >> 16);
    let s2r = (s2 & 0xffff) + (s2 >> 16);
    let s1b = s1r + 0x6500;
    let s2b = s2r + s1b;
    let s1c = (s1b & 0xffff) + (s1b >> 16);
    let s2c = (s2b & 0xffff) + (s2b >> 16);
    let expect = (((s2c & 0xffff) + (s2c >> 16)) << 16) | ((s1c & 0xffff) + (s1c >> 16));
    assert_eq!(fletcher32(b"abcde"), expect);
    assert_eq!(fletcher32(b""), 0);
    let enc = roundtrip("3", 1, &[5]);
    assert_eq!(enc.len(), 9);
}

#[test]
fn fletcher32_detects_corruption_and_accepts_old_byte_order() {
    let r = Registry::with_builtins();
    let p = r
        .pipeline(&c_chain("3"), FilterContext::new(1, &[6]))
        .unwrap();
    let mut enc = p.encode(b"abcdef").unwrap();
    let sum = fletcher32(b"abcdef").to_le_bytes();
    assert_eq!(&enc[6..], &sum);
    // pre-1.6.3 HDF5 byte order: each 16-bit half swapped
    let mut old = enc.clone();
    old[6..].copy_from_slice(&[sum[1], sum[0], sum[3], sum[2]]);
    assert_eq!(p.decode(&old).unwrap(), b"abcdef");
    enc[0] ^= 1;
    assert!(matches!(
        p.decode(&enc),
        Err(FilterError::Checksum { id: 3, .. })
    ));
    assert!(matches!(
        p.decode(&[1, 2]),
        Err(FilterError::Truncated { .. })
    ));
}

#[test]
fn lz4_framing_is_hdf5s() {
    let data = vec![7u8; 1000];
    let r = Registry::with_builtins();
    let p = r
        .pipeline(&c_chain("32004,300"), FilterContext::new(1, &[1000]))
        .unwrap();
    let enc = p.encode(&data).unwrap();
    assert_eq!(&enc[..8], &1000u64.to_be_bytes());
    assert_eq!(&enc[8..12], &300u32.to_be_bytes());
    // 4 blocks (300, 300, 300, 100)
    let mut pos = 12;
    let mut blocks = 0;
    while pos < enc.len() {
        let c = u32::from_be_bytes(enc[pos..pos + 4].try_into().unwrap()) as usize;
        pos += 4 + c;
        blocks += 1;
    }
    assert_eq!((pos, blocks), (enc.len(), 4));
    // incompressible data: the block stays lz4 (a few bytes larger than the block, which HDF5's
    // filter decodes as lz4: only a size equal to the block's means "stored as it is")
    let noise: Vec<u8> = (0..64u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let p = r
        .pipeline(&c_chain("32004"), FilterContext::new(1, &[64]))
        .unwrap();
    let enc = p.encode(&noise).unwrap();
    let c = u32::from_be_bytes(enc[12..16].try_into().unwrap()) as usize;
    assert!(c > 64, "compressed size {c}");
    assert_eq!(enc.len(), 16 + c);
    assert_eq!(p.decode(&enc).unwrap(), noise);
    // and a block stored as it is (what HDF5 writes for such data) decodes too
    let mut raw = enc[..12].to_vec();
    raw.extend_from_slice(&64u32.to_be_bytes());
    raw.extend_from_slice(&noise);
    assert_eq!(p.decode(&raw).unwrap(), noise);
}

#[test]
fn corrupt_inputs_error() {
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(4, &[64]);
    for chain in ["1,5", "307", "32004", "32015", "32001", "3"] {
        let p = r.pipeline(&c_chain(chain), ctx.clone()).unwrap();
        let enc = p.encode(&sample(64)).unwrap();
        assert!(
            p.decode(&enc[..enc.len() / 2]).is_err(),
            "{chain} truncated"
        );
        assert!(p.decode(&[]).is_err(), "{chain} empty");
    }
    // lz4 header claiming a huge size from a tiny chunk
    let p = r
        .pipeline(&c_chain("32004"), FilterContext::new(1, &[]))
        .unwrap();
    let mut evil = (1u64 << 40).to_be_bytes().to_vec();
    evil.extend_from_slice(&(1u32 << 30).to_be_bytes());
    evil.extend_from_slice(&4u32.to_be_bytes());
    evil.extend_from_slice(&[0, 0, 0, 0]);
    assert!(matches!(p.decode(&evil), Err(FilterError::TooLarge { .. })));
    // blosc header claiming more bytes than the chunk
    let p = r
        .pipeline(&c_chain("32001"), FilterContext::new(1, &[]))
        .unwrap();
    let mut evil = vec![2u8, 1, 0x20, 1];
    evil.extend_from_slice(&1000u32.to_le_bytes());
    evil.extend_from_slice(&1000u32.to_le_bytes());
    evil.extend_from_slice(&5000u32.to_le_bytes());
    assert!(p.decode(&evil).is_err());
    // pipeline length check against the chunk shape
    let p = r
        .pipeline(&c_chain("1,1"), FilterContext::new(4, &[8]))
        .unwrap();
    let enc = p.encode(&[0u8; 16]).unwrap();
    assert!(matches!(
        p.decode(&enc),
        Err(FilterError::Length {
            expected: 32,
            got: 16,
            ..
        })
    ));
}

#[test]
fn optional_filters_and_stored_params() {
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(4, &[16]);
    let data = sample(16);
    // szip refuses to encode with 34 pixels per block (HDF5's limit is 32; decoding accepts
    // up to 64): as an optional filter it is skipped and flagged in the mask
    let chain = c_chain("2|4,141,34,32,16|1,3");
    let p = r.pipeline_stored(&chain, ctx.clone()).unwrap();
    assert!(matches!(
        p.encode(&data),
        Err(FilterError::BadParams { id: 4, .. })
    ));
    assert!(p.encode_masked(&data, 0b001).is_err());
    let (enc, mask) = p.encode_masked(&data, 0b010).unwrap();
    assert_eq!(mask, 0b010);
    assert_eq!(p.decode_masked(&enc, mask).unwrap(), data);
    // stored parameters are used as they are
    let p = r
        .pipeline_stored(&c_chain("32001,2,2,4,64,5,1,1"), ctx.clone())
        .unwrap();
    assert_eq!(p.decode(&p.encode(&data).unwrap()).unwrap(), data);
    // the context of a dataset variable
    let mut ds = nc_dataset::Dataset::new("t");
    let x = ds.add_dim(nc_dataset::ROOT, "x", 10, false);
    let v = ds.add_var(
        nc_dataset::ROOT,
        "v",
        nc_dataset::AtomicType::Double.into(),
        vec![x],
    );
    ds.var_mut(v).storage.chunk_sizes = Some(vec![5]);
    assert_eq!(
        FilterContext::for_variable(&ds, v),
        FilterContext::new(8, &[5])
    );
}

#[test]
fn not_available_names_everything() {
    let mut r = Registry::with_builtins();
    r.load_plugins(&["/nonexistent/dir".into()]);
    let e = r
        .pipeline(&c_chain("40000,1"), FilterContext::new(4, &[4]))
        .unwrap_err()
        .for_variable("temp");
    assert_eq!(
        e.to_string(),
        "variable \"temp\" needs filter 40000, not available: no built-in codec and no plugin in /nonexistent/dir; add its plugin directory to HDF5_PLUGIN_PATH"
    );
    let e = Registry::empty().not_available(32015).for_variable("v");
    assert_eq!(
        e.to_string(),
        "variable \"v\" needs filter 32015 (zstd), not available: no built-in codec and no plugin (no plugin directory searched); add its plugin directory to HDF5_PLUGIN_PATH"
    );
}

#[test]
fn registry_lookup_and_override() {
    let mut r = Registry::with_builtins();
    assert_eq!(r.get(307).unwrap().name(), "bzip2");
    assert_eq!(r.by_codec_name("zlib").unwrap().id(), 1);
    assert_eq!(r.by_codec_name("bz2").unwrap().id(), 307);
    assert_eq!(r.by_codec_name("blosc").unwrap().id(), 32001);
    assert!(r.by_codec_name("nosuch").is_none());
    let again = crate::codecs::builtins().remove(0);
    assert!(matches!(
        r.register(again.clone(), false),
        Err(FilterError::AlreadyRegistered { id: 1, .. })
    ));
    r.register(again, true).unwrap();
}

#[test]
fn plugin_dirs_and_names() {
    assert_eq!(
        plugin::plugin_dirs_from(Some(std::ffi::OsStr::new("/a::/b"))),
        [
            std::path::PathBuf::from("/a"),
            "/b".into(),
            plugin::DEFAULT_PLUGIN_DIR.into()
        ]
    );
    assert_eq!(
        plugin::plugin_dirs_from(None),
        [std::path::PathBuf::from(plugin::DEFAULT_PLUGIN_DIR)]
    );
    assert!(plugin::is_plugin_file_name("libh5bz2.so"));
    assert!(plugin::is_plugin_file_name("libh5bz2.so.1.0"));
    assert!(!plugin::is_plugin_file_name("h5bz2.so"));
    assert!(!plugin::is_plugin_file_name("libh5bz2.a"));
}

mod f_rules {
    use crate::rules::*;
    use crate::{format_spec_list, parse_spec_list, FilterSpecError, SpecProblem};

    fn var(path: &str, input: &str) -> VarInfo {
        VarInfo {
            path: path.into(),
            input: if input.is_empty() {
                Vec::new()
            } else {
                parse_spec_list(input).unwrap()
            },
            unfilterable: None,
        }
    }

    fn vars() -> Vec<VarInfo> {
        let mut s = var("/svar", "");
        s.unfilterable = Some(Unfilterable::String);
        let mut sc = var("/scal", "");
        sc.unfilterable = Some(Unfilterable::Scalar);
        vec![
            var("/fvar", "307,9"),
            var("/uvar", ""),
            var("/dvar", "2,4|1,5"),
            var("/g/var", ""),
            var("/g/fvar", "1,1"),
            s,
            sc,
        ]
    }

    fn plan(opts: &[&str], d: Option<u32>, s: bool) -> Plan {
        decide(opts, d, s, &vars()).unwrap()
    }

    /// (row, chain) of each variable, in vars() order
    fn rows(p: &Plan) -> Vec<(u8, String)> {
        p.decisions
            .iter()
            .map(|d| (d.row.0, format_spec_list(&d.chain)))
            .collect()
    }

    fn r(v: &[(u8, &str)]) -> Vec<(u8, String)> {
        v.iter().map(|(a, b)| (*a, b.to_string())).collect()
    }

    #[test]
    fn parse_forms() {
        let o = FOptions::parse(&[
            "none",
            "*,none",
            "v,none",
            "/g/v,307,9|32004",
            "*,1,5",
            "a&/g/b,307,1",
            "a|b,307,1",
        ])
        .unwrap();
        let t: Vec<_> = o
            .options
            .iter()
            .map(|o| (o.target.clone(), o.action.clone()))
            .collect();
        let ch = |s: &str| Action::Chain(parse_spec_list(s).unwrap());
        let vs = |v: &[&str]| Target::Vars(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            t,
            [
                (Target::All, Action::None),
                (Target::All, Action::None),
                (vs(&["v"]), Action::None),
                (vs(&["/g/v"]), ch("307,9|32004")),
                (Target::All, ch("1,5")),
                (vs(&["a", "/g/b"]), ch("307,1")),
                (vs(&["a", "b"]), ch("307,1")),
            ]
        );
    }

    #[test]
    fn parse_errors() {
        let e = FOptions::parse(&["fvar,1"]).unwrap_err();
        assert!(matches!(e, FilterSpecError::BadParams { id: 1, .. }), "{e}");
        let e = FOptions::parse(&["fvar"]).unwrap_err();
        assert!(matches!(
            e,
            FilterSpecError::Bad {
                problem: SpecProblem::MissingComma,
                pos: 0,
                ..
            }
        ));
        let e = FOptions::parse(&["a&&b,307"]).unwrap_err();
        assert!(matches!(
            e,
            FilterSpecError::Bad {
                problem: SpecProblem::EmptyVariable,
                pos: 2,
                ..
            }
        ));
        let e = FOptions::parse(&["fvar,307,9,"]).unwrap_err();
        assert!(matches!(
            e,
            FilterSpecError::Bad {
                problem: SpecProblem::Empty,
                pos: 11,
                ..
            }
        ));
        let e = FOptions::parse(&["fvar,307,0x9"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad filter spec \"fvar,307,0x9\": token \"0x9\" at byte 9: hexadecimal constants are not allowed: write the value in decimal"
        );
        // names: allowed by default, refused by the strict 4.9.0 parser
        assert!(FOptions::parse(&["fvar,bzip2,2"]).is_ok());
        assert!(FOptions::parse_with(&["fvar,bzip2,2"], &crate::SpecParser::strict()).is_err());
    }

    #[test]
    fn no_options_rows_4_and_7() {
        let p = plan(&[], None, false);
        assert_eq!(
            rows(&p),
            r(&[
                (4, "307,9"),
                (7, ""),
                (4, "2,4|1,5"),
                (7, ""),
                (4, "1,1"),
                (7, ""),
                (7, "")
            ])
        );
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn none_row_1_and_star_none() {
        for o in ["none", "*,none", "NONE"] {
            let p = plan(&[o], None, false);
            assert!(
                p.decisions
                    .iter()
                    .all(|d| d.row.0 == 1 && d.chain.is_empty()),
                "{o}"
            );
        }
    }

    #[test]
    fn none_plus_var_none_row_2_and_var_def_row_3() {
        let p = plan(&["none", "fvar,none", "uvar,32004"], None, false);
        assert_eq!(
            rows(&p),
            r(&[
                (2, ""),
                (3, "32004"),
                (1, ""),
                (1, ""),
                (1, ""),
                (1, ""),
                (1, "")
            ])
        );
        // order does not matter for -F none
        let q = plan(&["uvar,32004", "fvar,none", "none"], None, false);
        assert_eq!(rows(&p), rows(&q));
    }

    #[test]
    fn var_none_row_5_var_def_rows_6_and_8() {
        let p = plan(&["fvar,none", "uvar,307,5", "dvar,307,3"], None, false);
        assert_eq!(
            rows(&p),
            r(&[
                (5, ""),
                (6, "307,5"),
                (8, "307,3"),
                (7, ""),
                (4, "1,1"),
                (7, ""),
                (7, "")
            ])
        );
        assert_eq!(
            p.get("/dvar").unwrap().explain(),
            "/dvar: row 8 (-F none=false, -F var=defined, input filter=defined: use output filter(s)): 307,3 from -F \"dvar,307,3\""
        );
        assert_eq!(
            p.get("/uvar").unwrap().explain(),
            "/uvar: row 6 (-F none=false, -F var=defined, input filter=undefined: use output filter(s)): 307,5 from -F \"uvar,307,5\""
        );
        assert_eq!(
            p.get("/fvar").unwrap().explain(),
            "/fvar: row 5 (-F none=false, -F var=none, input filter=NA: unfiltered): unfiltered from -F \"fvar,none\""
        );
    }

    #[test]
    fn star_applies_to_all_filterable_and_warns_for_others() {
        let p = plan(&["*,307,3"], None, false);
        assert_eq!(
            rows(&p),
            r(&[
                (8, "307,3"),
                (6, "307,3"),
                (8, "307,3"),
                (6, "307,3"),
                (8, "307,3"),
                (6, ""),
                (6, "")
            ])
        );
        assert_eq!(
            p.warnings,
            [
                "variable /svar: filters cannot apply to a string variable; left unfiltered",
                "variable /scal: filters cannot apply to a scalar variable; left unfiltered",
            ]
        );
        assert_eq!(
            p.get("/svar").unwrap().unfilterable,
            Some(Unfilterable::String)
        );
        // per-variable beats star whatever the order
        let p = plan(&["fvar,none", "*,32004"], None, false);
        assert_eq!(rows(&p)[0], (5, String::new()));
        assert_eq!(rows(&p)[1], (6, "32004".to_string()));
    }

    #[test]
    fn names_qualified_plain_and_lists() {
        // plain name: the root's variable only when the root has one
        let p = plan(&["fvar&/g/var,307,1", "var,32004"], None, false);
        assert_eq!(
            rows(&p),
            r(&[
                (8, "307,1"),
                (7, ""),
                (4, "2,4|1,5"),
                (6, "32004"),
                (4, "1,1"),
                (7, ""),
                (7, "")
            ])
        );
        assert_eq!(
            p.warnings,
            ["variable /g/var: -F \"var,32004\" overrides the earlier -F \"fvar&/g/var,307,1\""]
        );
        let p = plan(&["/g/fvar,32004", "fvar|uvar,307,1"], None, false);
        assert_eq!(
            rows(&p),
            r(&[
                (8, "307,1"),
                (6, "307,1"),
                (4, "2,4|1,5"),
                (7, ""),
                (8, "32004"),
                (7, ""),
                (7, "")
            ])
        );
    }

    #[test]
    fn unknown_variable_warns() {
        let p = plan(&["nosuchvar,307,2", "/g/nope,none"], None, false);
        assert_eq!(rows(&p), rows(&plan(&[], None, false)));
        assert_eq!(
            p.warnings,
            [
                "-F \"nosuchvar,307,2\": no variable \"nosuchvar\" in the input; option ignored for it",
                "-F \"/g/nope,none\": no variable \"/g/nope\" in the input; option ignored for it",
            ]
        );
    }

    #[test]
    fn repeated_options_last_wins() {
        let p = plan(&["fvar,307,1", "fvar,32004", "*,1,1", "*,1,2"], None, false);
        assert_eq!(rows(&p)[0], (8, "32004".to_string()));
        assert_eq!(rows(&p)[1], (6, "1,2".to_string()));
        assert_eq!(
            p.warnings,
            [
                "variable /fvar: -F \"fvar,32004\" overrides the earlier -F \"fvar,307,1\"",
                "-F \"*,1,2\" replaces the earlier -F \"*,1,1\" for all variables",
                "variable /svar: filters cannot apply to a string variable; left unfiltered",
                "variable /scal: filters cannot apply to a scalar variable; left unfiltered",
            ]
        );
    }

    #[test]
    fn deflate_and_shuffle_options() {
        // -d keeps other input filters, replaces the deflate level, adds deflate
        let p = plan(&[], Some(3), false);
        assert_eq!(
            rows(&p),
            r(&[
                (4, "307,9|1,3"),
                (7, "1,3"),
                (4, "2,4|1,3"),
                (7, "1,3"),
                (4, "1,3"),
                (7, ""),
                (7, "")
            ])
        );
        assert!(p.decisions[0].deflate_applied);
        // -d with -s adds shuffle (before the others)
        let p = plan(&[], Some(3), true);
        assert_eq!(rows(&p)[0], (4, "2|307,9|1,3".to_string()));
        assert_eq!(rows(&p)[2], (4, "2,4|1,3".to_string()));
        // -s alone is ignored; -d 0 removes deflate only
        assert_eq!(rows(&plan(&[], None, true)), rows(&plan(&[], None, false)));
        let p = plan(&[], Some(0), false);
        assert_eq!(rows(&p)[2], (4, "2,4".to_string()));
        assert_eq!(rows(&p)[0], (4, "307,9".to_string()));
        // explicit -F wins over -d
        let p = plan(&["uvar,307,4"], Some(3), false);
        assert_eq!(rows(&p)[1], (6, "307,4".to_string()));
        assert_eq!(rows(&p)[0], (4, "307,9|1,3".to_string()));
        let p = plan(&["none"], Some(3), false);
        assert!(p.decisions.iter().all(|d| d.chain.is_empty()));
        let p = plan(&["fvar,none"], Some(2), false);
        assert_eq!(rows(&p)[0], (5, String::new()));
        assert_eq!(rows(&p)[1], (7, "1,2".to_string()));
    }

    #[test]
    fn var_info_from_dataset() {
        use nc_dataset::*;
        let mut ds = Dataset::new("t");
        let x = ds.add_dim(ROOT, "x", 4, false);
        let g = ds.add_group(ROOT, "g");
        let a = ds.add_var(g, "a", AtomicType::Float.into(), vec![x]);
        ds.var_mut(a).storage.filters = parse_spec_list("307,9").unwrap();
        let s = ds.add_var(ROOT, "s", AtomicType::String.into(), vec![x]);
        let sc = ds.add_var(ROOT, "sc", AtomicType::Int.into(), vec![]);
        let vl = ds.add_type(
            ROOT,
            "vl",
            UserTypeKind::Vlen {
                base: AtomicType::Int.into(),
            },
        );
        let v = ds.add_var(ROOT, "v", NcType::User(vl), vec![x]);
        let cm = ds.add_type(
            ROOT,
            "cm",
            UserTypeKind::Compound {
                size: 16,
                fields: vec![CompoundField {
                    name: "f".into(),
                    ty: NcType::User(vl),
                    dims: vec![],
                    offset: 0,
                }],
            },
        );
        let c = ds.add_var(ROOT, "c", NcType::User(cm), vec![x]);
        let info = |id| VarInfo::from_dataset(&ds, id);
        assert_eq!(info(a), var("/g/a", "307,9"));
        assert_eq!(info(s).unfilterable, Some(Unfilterable::String));
        assert_eq!(info(sc).unfilterable, Some(Unfilterable::Scalar));
        assert_eq!(info(v).unfilterable, Some(Unfilterable::Vlen));
        assert_eq!(info(c).unfilterable, Some(Unfilterable::Vlen));
        assert_eq!(info(s).path, "/s");
    }
}

mod codec_json_tests {
    use crate::codec_json::*;
    use crate::{parse_spec_list, FilterContext, FilterSpec};
    use serde_json::json;

    fn ctx() -> FilterContext {
        FilterContext::new(4, &[10, 10])
    }

    fn to(v: serde_json::Value) -> String {
        crate::format_spec_list(&[codec_to_hdf5(&v, &ctx()).unwrap().unwrap()])
    }

    #[test]
    fn json_to_hdf5() {
        assert_eq!(to(json!({"id": "zlib", "level": 5})), "1,5");
        assert_eq!(to(json!({"id": "zlib", "level": "7"})), "1,7"); // number as string
        assert_eq!(to(json!({"id": "shuffle", "elementsize": 8})), "2,8");
        assert_eq!(to(json!({"id": "shuffle", "elementsize": 0})), "2,4"); // real size, never 0
        assert_eq!(to(json!({"id": "shuffle"})), "2,4");
        assert_eq!(to(json!({"id": "fletcher32"})), "3");
        assert_eq!(
            to(json!({"id": "szip", "mask": 4, "pixels-per-block": "16"})),
            "4,4,16"
        );
        assert_eq!(to(json!({"id": "bz2", "level": 9})), "307,9");
        assert_eq!(to(json!({"id": "zstd", "level": -3})), "32015,4294967293");
        // numcodecs' lz4 framing is not filter 32004's: a Zarr-only codec
        assert_eq!(
            codec_to_hdf5(&json!({"id": "lz4", "acceleration": 1}), &ctx()).unwrap(),
            None
        );
        assert_eq!(
            to(
                json!({"id": "blosc", "cname": "zstd", "clevel": "3", "shuffle": 2, "blocksize": 0})
            ),
            "32001,2,2,4,400,3,2,5"
        );
        assert_eq!(
            to(json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1})),
            "32001,2,2,4,400,5,1,1"
        );
        assert_eq!(
            codec_to_hdf5(&json!({"id": "gzip2000", "x": 1}), &ctx()).unwrap(),
            None
        );
        assert!(matches!(
            codec_to_hdf5(&json!({"level": 1}), &ctx()),
            Err(CodecJsonError::NoId { .. })
        ));
        assert!(matches!(
            codec_to_hdf5(&json!({"id": "zlib", "level": "x"}), &ctx()),
            Err(CodecJsonError::BadField { .. })
        ));
        assert!(codec_to_hdf5(&json!({"id": "zlib", "level": 12}), &ctx()).is_err());
        assert!(codec_to_hdf5(&json!({"id": "blosc", "cname": "lzma"}), &ctx()).is_err());
    }

    #[test]
    fn hdf5_to_json() {
        let j = |s: &str| hdf5_to_codec(&parse_spec_list(s).unwrap()[0], &ctx()).unwrap();
        assert_eq!(j("1,5"), json!({"id": "zlib", "level": 5}));
        assert_eq!(j("2"), json!({"id": "shuffle", "elementsize": 4}));
        assert_eq!(j("2,8"), json!({"id": "shuffle", "elementsize": 8}));
        assert_eq!(j("3"), json!({"id": "fletcher32"}));
        assert_eq!(
            j("4,4,16"),
            json!({"id": "szip", "mask": 4, "pixels-per-block": 16})
        );
        assert_eq!(j("307,9"), json!({"id": "bz2", "level": 9}));
        assert_eq!(j("32015,-3"), json!({"id": "zstd", "level": -3}));
        assert_eq!(j("32004"), json!({"id": "lz4", "acceleration": 1}));
        assert_eq!(
            j("32001,2,2,4,400,5,1,0"),
            json!({"id": "blosc", "cname": "blosclz", "clevel": 5, "shuffle": 1, "blocksize": 0})
        );
        assert!(matches!(
            hdf5_to_codec(
                &FilterSpec {
                    id: 40000,
                    params: vec![]
                },
                &ctx()
            ),
            Err(CodecJsonError::NoCodec { id: 40000 })
        ));
    }

    #[test]
    fn compressor_filters_split() {
        let chain = parse_spec_list("3|2,4|1,5").unwrap();
        let (c, f) = split_chain(&chain);
        assert_eq!(c.unwrap().id, 1);
        assert_eq!(f.len(), 2);
        let (comp, filters) = chain_to_zarr(&chain, &ctx()).unwrap();
        assert_eq!(comp, json!({"id": "zlib", "level": 5}));
        assert_eq!(
            filters,
            json!([{"id": "fletcher32"}, {"id": "shuffle", "elementsize": 4}])
        );
        let back = zarr_to_chain(&comp, &filters, &ctx()).unwrap();
        let specs: Vec<FilterSpec> = back.iter().map(|z| z.spec.clone().unwrap()).collect();
        assert_eq!(specs, chain);
        // unknown codecs are kept verbatim
        let unk = json!({"id": "jpeg2k", "rate": 3});
        let back = zarr_to_chain(&unk, &serde_json::Value::Null, &ctx()).unwrap();
        assert_eq!(
            back,
            [ZarrCodec {
                json: unk,
                spec: None
            }]
        );
        assert_eq!(
            chain_to_zarr(&[], &ctx()).unwrap(),
            (serde_json::Value::Null, serde_json::Value::Null)
        );
        assert_eq!(parse_codecs("[{\"id\":\"zlib\"}]").unwrap().len(), 1);
        assert!(matches!(
            parse_codecs("[{"),
            Err(CodecJsonError::Syntax { .. })
        ));
    }
}

/// Deflate chunks of the known chunk size inflate in one call (libdeflate); a truncated or
/// corrupt one still fails as the zlib-rs decoder words it, and a stream longer than the
/// chunk still decodes (then fails the pipeline's length check, as before).
#[test]
fn deflate_decodes_whole_chunks_and_words_bad_ones_as_before() {
    let r = Registry::with_builtins();
    let p = r
        .pipeline(&c_chain("1,4"), FilterContext::new(4, &[1000]))
        .unwrap();
    let data: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 251) as u8).collect();
    let enc = p.encode(&data).unwrap();
    assert_eq!(p.decode(&enc).unwrap(), data);
    let err = p.decode(&enc[..enc.len() / 2]).unwrap_err().to_string();
    assert!(err.contains("truncated chunk"), "{err}");
    let mut bad = enc.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0xff; // the Adler-32 checksum
    assert!(p.decode(&bad).is_err());
    // a chunk that holds more than the chunk shape says
    let small = r
        .pipeline(&c_chain("1,4"), FilterContext::new(4, &[10]))
        .unwrap();
    assert!(matches!(
        small.decode(&enc),
        Err(FilterError::Length {
            expected: 40,
            got: 4000,
            ..
        })
    ));
}
