//! Each built-in codec through the filter layer ([`Pipeline`]) next to the raw crate's own
//! call, on realistic float32 data (a smooth field with noise in the low bits), in MB/s of
//! uncompressed data. The filter layer should add less than 5%.
//!
//! `cargo bench -p nc-filters` (add `-- --quick` for a short run).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)] // bench code

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use nc_filters::{parse_spec_list, FilterContext, Registry};
use std::io::{Read, Write};

fn field() -> Vec<u8> {
    // 256 x 256 float32 chunk: 256 KiB
    let mut v = Vec::with_capacity(256 * 256 * 4);
    let mut x: u32 = 1;
    for i in 0..256 {
        for j in 0..256 {
            x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            let f = ((i as f32) * 0.05).sin() * ((j as f32) * 0.03).cos() * 280.0
                + 15.0
                + ((x >> 16) as f32) * 1e-6;
            v.extend_from_slice(&f.to_le_bytes());
        }
    }
    v
}

fn bench(c: &mut Criterion) {
    let data = field();
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(4, &[256, 256]);
    let mut g = c.benchmark_group("codecs");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);
    let pipe = |spec: &str| {
        r.pipeline(&parse_spec_list(spec).unwrap(), ctx.clone())
            .unwrap()
    };

    // deflate level 5
    let p = pipe("1,5");
    let enc = p.encode(&data).unwrap();
    g.bench_function("deflate5/encode/filter", |b| {
        b.iter(|| p.encode(black_box(&data)).unwrap())
    });
    g.bench_function("deflate5/encode/raw", |b| {
        b.iter(|| {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(5));
            e.write_all(black_box(&data)).unwrap();
            e.finish().unwrap()
        })
    });
    g.bench_function("deflate5/decode/filter", |b| {
        b.iter(|| p.decode(black_box(&enc)).unwrap())
    });
    g.bench_function("deflate5/decode/raw", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(black_box(&enc[..]))
                .read_to_end(&mut out)
                .unwrap();
            out
        })
    });

    // zstd level 3
    let p = pipe("32015,3");
    let enc = p.encode(&data).unwrap();
    g.bench_function("zstd3/encode/filter", |b| {
        b.iter(|| p.encode(black_box(&data)).unwrap())
    });
    g.bench_function("zstd3/encode/raw", |b| {
        b.iter(|| zstd::bulk::compress(black_box(&data), 3).unwrap())
    });
    g.bench_function("zstd3/decode/filter", |b| {
        b.iter(|| p.decode(black_box(&enc)).unwrap())
    });
    g.bench_function("zstd3/decode/raw", |b| {
        b.iter(|| zstd::bulk::decompress(black_box(&enc), data.len()).unwrap())
    });

    // lz4 (one block)
    let p = pipe("32004");
    let enc = p.encode(&data).unwrap();
    let raw = lz4_flex::block::compress(&data);
    g.bench_function("lz4/encode/filter", |b| {
        b.iter(|| p.encode(black_box(&data)).unwrap())
    });
    g.bench_function("lz4/encode/raw", |b| {
        b.iter(|| lz4_flex::block::compress(black_box(&data)))
    });
    g.bench_function("lz4/decode/filter", |b| {
        b.iter(|| p.decode(black_box(&enc)).unwrap())
    });
    g.bench_function("lz4/decode/raw", |b| {
        b.iter(|| lz4_flex::block::decompress(black_box(&raw), data.len()).unwrap())
    });

    // bzip2 level 9
    let p = pipe("307,9");
    let enc = p.encode(&data).unwrap();
    g.bench_function("bzip2/decode/filter", |b| {
        b.iter(|| p.decode(black_box(&enc)).unwrap())
    });
    g.bench_function("bzip2/decode/raw", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            bzip2::read::BzDecoder::new(black_box(&enc[..]))
                .read_to_end(&mut out)
                .unwrap();
            out
        })
    });

    // shuffle, fletcher32, blosc (no raw crate: our own code)
    for spec in ["2", "3", "32001,0,0,0,0,5,1,1", "3|2|1,5"] {
        let p = pipe(spec);
        let enc = p.encode(&data).unwrap();
        g.bench_function(format!("{spec}/encode"), |b| {
            b.iter(|| p.encode(black_box(&data)).unwrap())
        });
        g.bench_function(format!("{spec}/decode"), |b| {
            b.iter(|| p.decode(black_box(&enc)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
