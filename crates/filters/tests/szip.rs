//! szip against HDF5's szip filter (libaec): raw chunks HDF5 wrote (through h5py) for many
//! types, options, block sizes, shapes and data kinds decode to the original bytes with our
//! decoder; chunks our encoder writes decode exactly with our decoder, with libaec's libsz
//! (through python3's ctypes) and with HDF5 itself (h5py reading directly written chunks).
//! The libsz and h5py parts skip with a message when python3, libsz or h5py are missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::{FilterContext, FilterSpec, Registry};
use std::process::Command;

const SCRIPT: &str = r#"
import sys, os, h5py, numpy as np
d = sys.argv[1]
if not h5py.h5z.filter_avail(4):
    print('NOSZIP'); sys.exit(0)
rng = np.random.default_rng(5)
cases = []
with h5py.File(d + '/sz.h5', 'w') as f:
    k = 0
    for dt in ['u1', '<i2', '>i2', '<u2', '<i4', '<f4', '>f4', '<f8', '<i8']:
        for opt in ['nn', 'ec']:
            for ppb in [8, 16, 32]:
                for shape in [(10, 10), (7, 33), (100,), (3, 5, 64), (1000,), (2, 300)]:
                    for kind in ['ramp', 'const', 'noise', 'zeros']:
                        n = int(np.prod(shape))
                        if n < ppb:
                            continue
                        if kind == 'ramp':
                            a = (np.arange(n) * 3 + rng.integers(0, 4, n)) % 200
                        elif kind == 'const':
                            a = np.full(n, 77)
                        elif kind == 'zeros':
                            a = np.zeros(n)
                        else:
                            a = rng.integers(0, 120, n)
                        a = a.astype(dt).reshape(shape)
                        if dt.endswith('f4') or dt.endswith('f8'):
                            a = (a * 0.37).astype(dt)
                        name = 'd%d' % k; k += 1
                        ds = f.create_dataset(name, data=a, chunks=shape, compression='szip', compression_opts=(opt, ppb))
                        mask, raw = ds.id.read_direct_chunk((0,) * len(shape))
                        pl = ds.id.get_create_plist()
                        code, flags, vals, _ = pl.get_filter(0)
                        open(d + '/' + name + '.raw', 'wb').write(raw)
                        open(d + '/' + name + '.data', 'wb').write(a.tobytes())
                        cases.append('%s %s %s %s %d' % (name, ','.join(map(str, vals)), a.dtype.itemsize, 'x'.join(map(str, shape)), mask))
open(d + '/cases', 'w').write('\n'.join(cases))
print('OK')
"#;

#[test]
fn szip_decodes_hdf5_chunks() {
    let dir = std::env::temp_dir().join(format!("ncf-szip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = match Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(&dir)
        .output()
    {
        Ok(o) if o.status.success() => o,
        _ => {
            eprintln!("skipping: python3 with h5py is not available");
            return;
        }
    };
    if String::from_utf8_lossy(&out.stdout).trim() == "NOSZIP" {
        eprintln!("skipping: h5py's HDF5 has no szip");
        return;
    }
    let r = Registry::with_builtins();
    let cases = std::fs::read_to_string(dir.join("cases")).unwrap();
    let mut n = 0;
    let mut skipped = 0;
    for line in cases.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let params: Vec<u32> = f[1].split(',').map(|x| x.parse().unwrap()).collect();
        let ts: usize = f[2].parse().unwrap();
        let shape: Vec<u64> = f[3].split('x').map(|x| x.parse().unwrap()).collect();
        let raw = std::fs::read(dir.join(format!("{}.raw", f[0]))).unwrap();
        let data = std::fs::read(dir.join(format!("{}.data", f[0]))).unwrap();
        let chain = [FilterSpec {
            id: 4,
            params: params.clone(),
        }];
        let p = r.pipeline(&chain, FilterContext::new(ts, &shape)).unwrap();
        let mask: u32 = f[4].parse().unwrap();
        if mask != 0 {
            skipped += 1; // HDF5 stored this chunk unfiltered (szip did not shrink it)
        }
        let got = p
            .decode_masked(&raw, mask)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(got == data, "{line}: decoded bytes differ");
        // our working parameters match what HDF5's set_local stored
        let w = r.working_chain(
            &[FilterSpec {
                id: 4,
                params: params[..2].to_vec(),
            }],
            &FilterContext::new(ts, &shape),
        );
        assert_eq!(w[0].params[1..], params[1..], "{line}: working parameters");
        n += 1;
    }
    assert!(
        n - skipped > 300,
        "only {n} cases, {skipped} stored unfiltered"
    );
    eprintln!("{n} szip chunks checked ({skipped} stored unfiltered by HDF5)");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// Encoding

/// Options mask bits (szip's `SZ_*_OPTION_MASK`).
const K13: u32 = 1;
const EC: u32 = 4;
const LSB: u32 = 8;
const MSB: u32 = 16;
const NN: u32 = 32;
const RAW: u32 = 128;

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut s = self.0;
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        self.0 = s;
        s
    }
}

const KINDS: [&str; 7] = [
    "random", "constant", "zeros", "smooth", "noisy", "sparse", "extremes",
];

/// `n` elements of `ts` bytes (little-endian) of one kind of data.
fn make_data(kind: &str, ts: usize, n: usize, rng: &mut Rng) -> Vec<u8> {
    let bits = ts as u32 * 8;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut out = Vec::with_capacity(n * ts);
    for i in 0..n {
        let v: u64 = match kind {
            "random" => rng.next(),
            "constant" => 0x5a17_c3e9_0b2d_8f41,
            "zeros" => 0,
            "smooth" | "noisy" => {
                let x = (i as f64 * 0.01).sin() * 1000.0 + 2000.0;
                let x = if kind == "noisy" {
                    x + (rng.next() % 1000) as f64 * 0.37
                } else {
                    x
                };
                match ts {
                    4 => u64::from((x as f32).to_bits()),
                    8 => x.to_bits(),
                    2 => (x * 10.0) as u64,
                    _ => (x / 40.0) as u64,
                }
            }
            "sparse" => {
                if rng.next().is_multiple_of(23) {
                    rng.next()
                } else {
                    0
                }
            }
            _ => {
                if rng.next().is_multiple_of(2) {
                    u64::MAX
                } else {
                    0
                }
            }
        };
        out.extend_from_slice(&(v & mask).to_le_bytes()[..ts]);
    }
    out
}

/// One encoding case: working parameters, element size, data.
struct Case {
    params: Vec<u32>,
    ts: usize,
    data: Vec<u8>,
}

/// Many cases: every element size, NN and EC, LSB and MSB, 8/16/32 pixels per block, all
/// data kinds, sizes that are and are not whole scanlines, 1-element chunks, and scanlines
/// shorter than a block.
fn cases() -> Vec<Case> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for ts in [1usize, 2, 4, 8] {
        for pre in [NN, EC] {
            for order in [LSB, MSB] {
                for ppb in [8u32, 16, 32] {
                    for (n, pps) in [
                        (1usize, 1u32),
                        (1, 8),
                        (7, 7),
                        (100, 100),
                        (1000, 100),
                        (1000, 37),
                        (2500, ppb * 128),
                        (4099, 64),
                        (300, 3),
                    ] {
                        for kind in KINDS {
                            let mask = pre | order | K13 | RAW;
                            out.push(Case {
                                params: vec![mask, ppb, ts as u32 * 8, pps],
                                ts,
                                data: make_data(kind, ts, n, &mut rng),
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

fn encode_with(r: &Registry, c: &Case) -> Vec<u8> {
    let chain = [FilterSpec {
        id: 4,
        params: c.params.clone(),
    }];
    let n = (c.data.len() / c.ts) as u64;
    let p = r
        .pipeline_stored(&chain, FilterContext::new(c.ts, &[n]))
        .unwrap();
    p.encode(&c.data).unwrap()
}

fn decode_with(r: &Registry, c: &Case, enc: &[u8]) -> Vec<u8> {
    let chain = [FilterSpec {
        id: 4,
        params: c.params.clone(),
    }];
    let n = (c.data.len() / c.ts) as u64;
    let p = r
        .pipeline_stored(&chain, FilterContext::new(c.ts, &[n]))
        .unwrap();
    p.decode(enc)
        .unwrap_or_else(|e| panic!("{:?} ts {}: {e}", c.params, c.ts))
}

#[test]
fn encoded_chunks_decode_exactly() {
    let r = Registry::with_builtins();
    let all = cases();
    let (mut raw, mut enc_total) = (0usize, 0usize);
    for c in &all {
        let enc = encode_with(&r, c);
        assert_eq!(
            enc[..4],
            (c.data.len() as u32).to_le_bytes(),
            "size header {:?}",
            c.params
        );
        let dec = decode_with(&r, c, &enc);
        assert!(
            dec == c.data,
            "{:?} ts {} len {}: round trip differs",
            c.params,
            c.ts,
            c.data.len()
        );
        raw += c.data.len();
        enc_total += enc.len();
    }
    assert!(all.len() > 3000);
    // zeros and constants shrink to almost nothing
    let c = Case {
        params: vec![NN | LSB | K13 | RAW, 16, 32, 1024],
        ts: 4,
        data: vec![0x41; 4 * 65536],
    };
    let enc = encode_with(&r, &c);
    // 256 scanlines of 1024 bytes, each: zero-block id (4 bits), reference (8), ROS (5)
    assert_eq!(enc.len(), 4 + 256 * 17 / 8, "constant chunk");
    assert!(decode_with(&r, &c, &enc) == c.data);
    eprintln!("{} cases: {raw} bytes -> {enc_total}", all.len());
}

#[test]
fn working_parameters_encode_through_the_pipeline() {
    // the visible parameters as ncgen's _Filter gives them, set_local's values added by us
    let r = Registry::with_builtins();
    let mut rng = Rng(77);
    for ts in [1usize, 2, 4, 8] {
        for visible in [[32u32, 32], [4, 8], [32, 16], [4, 32]] {
            for shape in [
                vec![4u64, 4, 4],
                vec![1],
                vec![3],
                vec![10, 333],
                vec![5000],
            ] {
                let ctx = FilterContext::new(ts, &shape);
                let n = ctx.chunk_bytes().unwrap() / ts;
                let chain = [FilterSpec {
                    id: 4,
                    params: visible.to_vec(),
                }];
                let p = r.pipeline(&chain, ctx).unwrap();
                for kind in KINDS {
                    let data = make_data(kind, ts, n, &mut rng);
                    let enc = p.encode(&data).unwrap();
                    assert!(
                        p.decode(&enc).unwrap() == data,
                        "{visible:?} ts {ts} {shape:?} {kind}"
                    );
                }
            }
        }
    }
}

#[test]
fn encoding_odd_inputs_never_panics() {
    let r = Registry::with_builtins();
    let mut rng = Rng(5);
    for params in [
        [NN | LSB | K13 | RAW, 8, 8, 8],
        [EC | MSB | RAW, 2, 16, 1],
        [NN | K13 | RAW, 32, 32, 4096],
        [EC | K13 | RAW, 16, 64, 3],
        [NN | MSB | RAW, 2, 64, 1],
    ] {
        for len in 0..70usize {
            let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let chain = [FilterSpec {
                id: 4,
                params: params.to_vec(),
            }];
            // no chunk shape: any length is allowed by the pipeline
            let p = r
                .pipeline_stored(&chain, FilterContext::new(1, &[]))
                .unwrap();
            match p.encode(&data) {
                Ok(enc) => assert!(p.decode(&enc).unwrap() == data, "{params:?} {len}"),
                // only 16-bit pixels refuse odd lengths
                Err(e) => {
                    assert!(params[2] == 16 && len % 2 == 1, "{params:?} {len}: {e}");
                    assert!(e.to_string().contains("bits per pixel 16"), "{e}");
                }
            }
        }
    }
}

#[test]
fn bad_parameters_name_the_parameter() {
    let r = Registry::with_builtins();
    let build = |p: &[u32]| {
        let chain = [FilterSpec {
            id: 4,
            params: p.to_vec(),
        }];
        r.pipeline_stored(&chain, FilterContext::new(4, &[100]))
    };
    let err = |p: &[u32]| match build(p) {
        Ok(pipe) => pipe.encode(&[0u8; 400]).unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    let e = err(&[NN | RAW, 7, 32, 100]);
    assert!(e.contains("pixels per block must be even"), "{e}");
    let e = err(&[NN | RAW, 34, 32, 100]);
    assert!(
        e.contains("pixels per block 34 is above HDF5's limit of 32"),
        "{e}"
    );
    let e = err(&[NN | RAW, 8, 24, 100]);
    assert!(e.contains("8, 16, 32 and 64 bits per pixel"), "{e}");
    let e = err(&[NN | RAW, 8, 32, 0]);
    assert!(e.contains("pixels per scanline is 0"), "{e}");
    let e = err(&[NN | RAW, 2, 32, 10_000]);
    assert!(
        e.contains("pixels per scanline 10000 makes 5000 blocks"),
        "{e}"
    );
    let e = err(&[NN | RAW, 8, 32]);
    assert!(e.contains("needs 4 working values"), "{e}");
}

/// Where the libsz / h5py exchanges happen.
fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ncf-szip-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Calls libaec's szip layer (libsz) through ctypes: decodes our streams (`N.ours` ->
/// `N.back`) and encodes the data (`N.data` -> `N.aec`, with the 4-byte size like HDF5).
const LIBSZ: &str = r#"
import sys, ctypes, ctypes.util
d = sys.argv[1]
try:
    sz = ctypes.CDLL('libsz.so.2')
except OSError:
    print('NOLIBSZ'); sys.exit(0)
class Com(ctypes.Structure):
    _fields_ = [('options_mask', ctypes.c_int), ('bits_per_pixel', ctypes.c_int),
                ('pixels_per_block', ctypes.c_int), ('pixels_per_scanline', ctypes.c_int)]
bad = []
stats = {}
for line in open(d + '/cases').read().split('\n'):
    if not line:
        continue
    name, mask, ppb, bpp, pps = line.split()
    com = Com(int(mask), int(bpp), int(ppb), int(pps))
    data = open(d + '/' + name + '.data', 'rb').read()
    ours = open(d + '/' + name + '.ours', 'rb').read()
    n = len(data)
    out = ctypes.create_string_buffer(n + 1)
    outlen = ctypes.c_size_t(n)
    src = ours[4:]
    rc = sz.SZ_BufftoBuffDecompress(out, ctypes.byref(outlen), src, ctypes.c_size_t(len(src)), ctypes.byref(com))
    back = out.raw[:outlen.value]
    if rc != 0 or back != data:
        bad.append('%s rc=%d len=%d' % (name, rc, outlen.value))
    cap = 2 * n + 4096
    enc = ctypes.create_string_buffer(cap)
    enclen = ctypes.c_size_t(cap)
    rc = sz.SZ_BufftoBuffCompress(enc, ctypes.byref(enclen), data, ctypes.c_size_t(n), ctypes.byref(com))
    if rc == 0:
        aec = n.to_bytes(4, 'little') + enc.raw[:enclen.value]
        open(d + '/' + name + '.aec', 'wb').write(aec)
        key = 'same' if aec == ours else 'smaller' if len(ours) < len(aec) else 'larger' if len(ours) > len(aec) else 'samesize'
        stats[key] = stats.get(key, 0) + 1
print('BAD ' + ';'.join(bad) if bad else 'OK ' + ' '.join('%s=%d' % kv for kv in sorted(stats.items())))
"#;

fn run_python(script: &str, dir: &std::path::Path) -> Option<String> {
    match Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
    {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => {
            eprintln!(
                "skipping: python3 failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        Err(e) => {
            eprintln!("skipping: no python3 ({e})");
            None
        }
    }
}

#[test]
fn libsz_decodes_our_chunks_and_we_decode_its() {
    let r = Registry::with_builtins();
    let dir = scratch_dir("libsz");
    let all = cases();
    let mut list = String::new();
    for (i, c) in all.iter().enumerate() {
        let enc = encode_with(&r, c);
        std::fs::write(dir.join(format!("c{i}.data")), &c.data).unwrap();
        std::fs::write(dir.join(format!("c{i}.ours")), &enc).unwrap();
        let p = &c.params;
        list.push_str(&format!("c{i} {} {} {} {}\n", p[0], p[1], p[2], p[3]));
    }
    std::fs::write(dir.join("cases"), list).unwrap();
    let Some(res) = run_python(LIBSZ, &dir) else {
        return;
    };
    if res == "NOLIBSZ" {
        eprintln!("skipping: libsz.so.2 (libaec) is not installed");
        return;
    }
    assert!(
        res.starts_with("OK"),
        "libsz failed on some of our chunks: {res}"
    );
    eprintln!("libsz: {res} (our streams against libaec's)");
    // libaec's own streams decode with ours; compare sizes
    let (mut ours, mut theirs, mut n_aec) = (0usize, 0usize, 0usize);
    for (i, c) in all.iter().enumerate() {
        let Ok(aec) = std::fs::read(dir.join(format!("c{i}.aec"))) else {
            continue;
        };
        assert!(decode_with(&r, c, &aec) == c.data, "c{i}: libaec's stream");
        ours += std::fs::metadata(dir.join(format!("c{i}.ours")))
            .unwrap()
            .len() as usize;
        theirs += aec.len();
        n_aec += 1;
    }
    assert!(n_aec > all.len() / 2, "libsz encoded only {n_aec} cases");
    eprintln!(
        "{} cases decoded by libsz; on {n_aec} libaec encoded: ours {ours} bytes, libaec {theirs}",
        all.len()
    );
    // exact bit counts per block: never larger than libaec in total
    assert!(ours <= theirs, "ours {ours} vs libaec {theirs}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Creates szip datasets with h5py (HDF5 computes the working parameters), writes our
/// encoded chunk for each with `write_direct_chunk`, and reads it back through HDF5's szip.
const H5PY_READS: &str = r#"
import sys, h5py, numpy as np
d = sys.argv[1]
if not h5py.h5z.filter_avail(4):
    print('NOSZIP'); sys.exit(0)
bad = []
n = 0
with h5py.File(d + '/ours.h5', 'w') as f:
    for line in open(d + '/cases').read().split('\n'):
        if not line:
            continue
        name, dt, shape, opt, ppb, params = line.split()
        shape = tuple(int(x) for x in shape.split('x'))
        want = np.frombuffer(open(d + '/' + name + '.data', 'rb').read(), dtype=dt).reshape(shape)
        ds = f.create_dataset(name, shape=shape, dtype=dt, chunks=shape, compression='szip', compression_opts=(opt, int(ppb)))
        stored = ','.join(map(str, ds.id.get_create_plist().get_filter(0)[2]))
        if stored != params:
            bad.append('%s: HDF5 stored %s, we encoded with %s' % (name, stored, params))
            continue
        ds.id.write_direct_chunk((0,) * len(shape), open(d + '/' + name + '.ours', 'rb').read(), 0)
        f.flush()
        got = ds[...]
        if got.dtype != want.dtype or got.tobytes() != want.tobytes():
            bad.append('%s: values differ' % name)
        n += 1
print(('BAD ' + '; '.join(bad)) if bad else 'OK %d' % n)
"#;

#[test]
fn hdf5_reads_our_chunks() {
    let r = Registry::with_builtins();
    let dir = scratch_dir("h5py");
    let mut rng = Rng(99);
    let mut list = String::new();
    let mut k = 0;
    for (dt, ts) in [
        ("u1", 1usize),
        ("<i2", 2),
        ("<u2", 2),
        ("<i4", 4),
        ("<f4", 4),
        ("<f8", 8),
        ("<i8", 8),
    ] {
        for (opt, mask) in [("nn", 32u32), ("ec", 4)] {
            for ppb in [8u32, 16, 32] {
                for shape in [vec![4u64, 4, 4], vec![7, 33], vec![1000], vec![2, 300]] {
                    for kind in KINDS {
                        let ctx = FilterContext::new(ts, &shape);
                        let n = ctx.chunk_bytes().unwrap() / ts;
                        if (n as u32) < ppb {
                            continue; // HDF5 refuses szip on chunks smaller than a block
                        }
                        let data = make_data(kind, ts, n, &mut rng);
                        let chain = [FilterSpec {
                            id: 4,
                            params: vec![mask, ppb],
                        }];
                        let w = r.working_chain(&chain, &ctx);
                        let p = r.pipeline(&chain, ctx).unwrap();
                        let enc = p.encode(&data).unwrap();
                        std::fs::write(dir.join(format!("d{k}.data")), &data).unwrap();
                        std::fs::write(dir.join(format!("d{k}.ours")), &enc).unwrap();
                        let shape_s: Vec<String> = shape.iter().map(|x| x.to_string()).collect();
                        let params: Vec<String> =
                            w[0].params.iter().map(|x| x.to_string()).collect();
                        list.push_str(&format!(
                            "d{k} {dt} {} {opt} {ppb} {}\n",
                            shape_s.join("x"),
                            params.join(",")
                        ));
                        k += 1;
                    }
                }
            }
        }
    }
    std::fs::write(dir.join("cases"), list).unwrap();
    let Some(res) = run_python(H5PY_READS, &dir) else {
        return;
    };
    if res == "NOSZIP" {
        eprintln!("skipping: h5py's HDF5 has no szip");
        return;
    }
    assert_eq!(res, format!("OK {k}"), "HDF5 reading our chunks");
    eprintln!("{k} chunks written by us read back by HDF5's szip");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Encoding speed and size on smooth float32 data, next to libaec when it is there:
/// `cargo test --release -p nc-filters --test szip -- --ignored --nocapture`.
#[test]
#[ignore]
fn encode_speed_float32() {
    let r = Registry::with_builtins();
    let n = 1 << 22; // 16 MiB
    let data = make_data("smooth", 4, n, &mut Rng(3));
    let noisy = make_data("noisy", 4, n, &mut Rng(4));
    let dir = scratch_dir("speed");
    let mut list = String::new();
    for (name, d) in [("smooth", &data), ("noisy", &noisy)] {
        for params in [
            vec![NN | LSB | K13 | RAW, 32, 32, 1024],
            vec![NN | LSB | K13 | RAW, 8, 32, 1024],
        ] {
            let c = Case {
                params: params.clone(),
                ts: 4,
                data: d.clone(),
            };
            let t = std::time::Instant::now();
            let enc = encode_with(&r, &c);
            let secs = t.elapsed().as_secs_f64();
            let t = std::time::Instant::now();
            assert!(decode_with(&r, &c, &enc) == c.data);
            let dsecs = t.elapsed().as_secs_f64();
            eprintln!(
                "{name} f32 ppb {}: {} -> {} bytes (ratio {:.3}), encode {:.0} MB/s, decode {:.0} MB/s",
                params[1],
                d.len(),
                enc.len(),
                d.len() as f64 / enc.len() as f64,
                d.len() as f64 / secs / 1e6,
                d.len() as f64 / dsecs / 1e6
            );
            let tag = format!("{name}{}", params[1]);
            std::fs::write(dir.join(format!("{tag}.data")), d).unwrap();
            std::fs::write(dir.join(format!("{tag}.ours")), &enc).unwrap();
            list.push_str(&format!(
                "{tag} {} {} {} {}\n",
                params[0], params[1], params[2], params[3]
            ));
        }
    }
    std::fs::write(dir.join("cases"), list).unwrap();
    if let Some(res) = run_python(LIBSZ, &dir) {
        eprintln!("libsz decoding ours: {res}");
        for tag in ["smooth32", "smooth8", "noisy32", "noisy8"] {
            if let Ok(a) = std::fs::read(dir.join(format!("{tag}.aec"))) {
                eprintln!("libaec {tag}: {} bytes", a.len());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Any bytes, any supported parameters: encoding succeeds (16-bit pixels need an even
    /// length) and decodes to exactly the input.
    #[test]
    fn any_chunk_round_trips(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
        pre in proptest::sample::select(vec![NN, EC, 0]),
        order in proptest::sample::select(vec![LSB, MSB]),
        ppb in proptest::sample::select(vec![2u32, 4, 8, 10, 16, 32]),
        bpp in proptest::sample::select(vec![8u32, 16, 32, 64]),
        pps in 1u32..300,
        smooth in proptest::prelude::any::<bool>(),
    ) {
        let mut bytes = bytes;
        if bpp == 16 && bytes.len() % 2 == 1 {
            bytes.pop();
        }
        if smooth {
            // small steps: low-entropy residuals (second extension, small k)
            let mut acc = 0u8;
            for b in bytes.iter_mut() {
                acc = acc.wrapping_add(*b % 3);
                *b = acc;
            }
        }
        let r = Registry::with_builtins();
        let chain = [FilterSpec { id: 4, params: vec![pre | order | K13 | RAW, ppb, bpp, pps] }];
        let p = r.pipeline_stored(&chain, FilterContext::new(1, &[])).unwrap();
        let enc = p.encode(&bytes).unwrap();
        proptest::prop_assert_eq!(p.decode(&enc).unwrap(), bytes);
    }
}

#[test]
fn visible_parameters_with_a_chunk_shape_build_the_working_filter() {
    // an NCZarr codec stores only mask and pixels per block: the filter adds the rest from
    // the chunk shape, so chunks written with the working values decode
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(4, &[4, 4, 4]);
    let data = make_data("smooth", 4, 64, &mut Rng(8));
    let visible = [FilterSpec {
        id: 4,
        params: vec![NN | K13 | RAW | LSB, 32],
    }];
    let working = r.working_chain(&visible, &ctx);
    assert_eq!(working[0].params, [NN | K13 | RAW | LSB, 32, 32, 64]);
    let enc = r
        .pipeline_stored(&working, ctx.clone())
        .unwrap()
        .encode(&data)
        .unwrap();
    let p = r.pipeline_stored(&visible, ctx).unwrap();
    assert!(p.decode(&enc).unwrap() == data);
    assert!(p.encode(&data).unwrap() == enc);
    // without a chunk shape, 2 values are not enough
    let e = r
        .pipeline_stored(&visible, FilterContext::new(4, &[]))
        .unwrap_err();
    assert!(e.to_string().contains("needs 4 working values"), "{e}");
}
