//! Deflate encoders on a corpus's own chunks (issue 19, docs/benchmarks.md "Deflate at zlib's
//! ratio"): for each encoder and level, the total compressed size (also per element size: 2 =
//! psl, 4 = tas, 8 = zg500 in the benchmark corpus), the ratio and the single-thread CPU speed,
//! with or without HDF5's byte shuffle first. `verify` inflates every output with stock zlib;
//! `decode` also times zlib-rs inflating it.
//!
//! ```text
//! python3 extract_chunks.py /work/corpus/corpus_M_raw.nc chunks_M8.bin 8   # every 8th step
//! cargo run --release -- chunks_M8.bin zlib,libdeflate,zlibrs,miniz 1,2,3,4,5,6,7,8,9 s,n verify
//! ```
//!
//! Codecs: `zlib` (stock, libz-sys), `libdeflate` (levels 0-12), `zlibrs` (flate2), `miniz`.
//! Output lines: mode, codec, level, bytes, bytes of 2-, 4- and 8-byte elements, ratio, MiB/s.

fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn load(path: &str) -> Vec<(usize, Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    let mut v = Vec::new();
    let mut p = 0;
    while p < b.len() {
        let es = u32::from_le_bytes(b[p..p + 4].try_into().unwrap()) as usize;
        let n = u32::from_le_bytes(b[p + 4..p + 8].try_into().unwrap()) as usize;
        v.push((es, b[p + 8..p + 8 + n].to_vec()));
        p += 8 + n;
    }
    v
}

fn shuffle(es: usize, d: &[u8]) -> Vec<u8> {
    if es <= 1 {
        return d.to_vec();
    }
    let n = d.len() / es;
    let mut o = vec![0u8; d.len()];
    for i in 0..n {
        for j in 0..es {
            o[j * n + i] = d[i * es + j];
        }
    }
    o[n * es..].copy_from_slice(&d[n * es..]);
    o
}

fn zlibrs(d: &[u8], l: u32) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mut out = Vec::with_capacity(d.len() + d.len() / 1000 + 64);
    let mut z = Compress::new(Compression::new(l), true);
    loop {
        let done = z.total_in() as usize;
        if z.compress_vec(&d[done..], &mut out, FlushCompress::Finish)
            .unwrap()
            == flate2::Status::StreamEnd
        {
            return out;
        }
        out.reserve(out.capacity());
    }
}
fn miniz(d: &[u8], l: u32) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(d, l as u8)
}
fn ldeflate(c: &mut libdeflater::Compressor, d: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; c.zlib_compress_bound(d.len())];
    let n = c.zlib_compress(d, &mut out).unwrap();
    out.truncate(n);
    out
}
fn czlib(d: &[u8], l: u32) -> Vec<u8> {
    unsafe {
        let mut n = libz_sys::compressBound(d.len() as _);
        let mut out = vec![0u8; n as usize];
        let r = libz_sys::compress2(out.as_mut_ptr(), &mut n, d.as_ptr(), d.len() as _, l as i32);
        assert_eq!(r, 0);
        out.truncate(n as usize);
        out
    }
}
/// Inflate with stock zlib: the output is a valid zlib stream holding `orig`.
fn check(orig: &[u8], enc: &[u8]) {
    unsafe {
        let mut n = orig.len() as libz_sys::uLongf;
        let mut out = vec![0u8; orig.len() + 1];
        let r = libz_sys::uncompress(out.as_mut_ptr(), &mut n, enc.as_ptr(), enc.len() as _);
        assert_eq!(r, 0);
        assert_eq!(&out[..n as usize], orig);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let chunks = load(&args[1]);
    let codecs: Vec<String> = args[2].split(',').map(String::from).collect();
    let levels: Vec<u32> = args[3].split(',').map(|s| s.parse().unwrap()).collect();
    let shuf_modes: Vec<bool> = args[4].split(',').map(|s| s == "s").collect();
    let verify = args
        .get(5)
        .map(|s| s == "verify" || s == "decode")
        .unwrap_or(false);
    let decode = args.get(5).map(|s| s == "decode").unwrap_or(false);
    let total: usize = chunks.iter().map(|c| c.1.len()).sum();
    for &sh in &shuf_modes {
        let data: Vec<Vec<u8>> = chunks
            .iter()
            .map(|(es, d)| if sh { shuffle(*es, d) } else { d.clone() })
            .collect();
        for codec in &codecs {
            for &l in &levels {
                let t = cpu();
                let mut sz = 0usize;
                let mut per = [0usize; 9];
                let mut encs = Vec::new();
                match codec.as_str() {
                    "libdeflate" => {
                        let mut c = libdeflater::Compressor::new(
                            libdeflater::CompressionLvl::new(l as i32).unwrap(),
                        );
                        for (i, d) in data.iter().enumerate() {
                            let e = ldeflate(&mut c, d);
                            sz += e.len();
                            per[chunks[i].0] += e.len();
                            if verify {
                                encs.push(e)
                            }
                        }
                    }
                    _ => {
                        let f: fn(&[u8], u32) -> Vec<u8> = match codec.as_str() {
                            "zlibrs" => zlibrs,
                            "miniz" => miniz,
                            "zlib" => czlib,
                            _ => panic!("codec"),
                        };
                        for (i, d) in data.iter().enumerate() {
                            let e = f(d, l);
                            sz += e.len();
                            per[chunks[i].0] += e.len();
                            if verify {
                                encs.push(e)
                            }
                        }
                    }
                }
                let s = cpu() - t;
                if verify {
                    for (d, e) in data.iter().zip(&encs) {
                        check(d, e);
                    }
                }
                let mut dsec = 0.0;
                if decode {
                    let t = cpu();
                    let mut out: Vec<u8> = Vec::new();
                    for (d, e) in data.iter().zip(&encs) {
                        out.clear();
                        out.reserve(d.len());
                        let mut z = flate2::Decompress::new(true);
                        z.decompress_vec(e, &mut out, flate2::FlushDecompress::Finish)
                            .unwrap();
                        assert_eq!(out.len(), d.len());
                    }
                    dsec = cpu() - t;
                }
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.4}\t{:.1}",
                    if sh { "shuf" } else { "noshuf" },
                    codec,
                    l,
                    sz,
                    per[2],
                    per[4],
                    per[8],
                    total as f64 / sz as f64,
                    total as f64 / 1048576.0 / s
                );
                if decode {
                    println!(
                        "  decode(zlib-rs) {:.1} MiB/s",
                        total as f64 / 1048576.0 / dsec
                    );
                }
            }
        }
    }
}
