//! A Zarr v3 store as the source of a copy: little-endian bytes without a typed detour
//! (`read_le`), and stored chunks handed over as they are (`raw_chunk`) only when their shape,
//! byte order and codecs are exactly what the output asks for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use nc_dataset::{FilterSpec, VarId};

const CDL: &str = r#"netcdf s {
dimensions:
  y = 5 ;
  x = 6 ;
variables:
  short big(y, x) ;
    big:_Endianness = "big" ;
    big:_ChunkSizes = 2, 3 ;
    big:_Filter = "32015,3" ;
  float z(y, x) ;
    z:_ChunkSizes = 2, 3 ;
    z:_ShardSizes = 4, 6 ;
    z:_Filter = "32015,3" ;
  int g(y, x) ;
    g:_ChunkSizes = 2, 3 ;
    g:_DeflateLevel = 2 ;
  double plain(x) ;
    plain:_ChunkSizes = 4 ;
data:
  big = 1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16, 17, -18,
    19, -20, 21, -22, 23, -24, 25, -26, 27, -28, 29, -30 ;
  z = 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5,
    14.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5,
    27.5, 28.5, 29.5 ;
  g = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30 ;
  plain = 1, 2, 3, 4, 5, 6 ;
}
"#;

#[test]
fn v3_store_as_a_copy_source() {
    let d = tmpdir("v3source");
    std::fs::write(d.join("s.cdl"), CDL).unwrap();
    let ds = cdl(&d.join("s.cdl"));
    let loc = format!("file://{}/s.zarr#mode=zarr,v3,file", d.display());
    write(&ds, &loc, &Default::default());
    let f = open(&loc);
    let var = |name: &str| {
        VarId(
            f.dataset()
                .vars
                .iter()
                .position(|v| v.name == name)
                .unwrap(),
        )
    };
    let (big, z, g, plain) = (var("big"), var("z"), var("g"), var("plain"));

    // little-endian bytes whatever the stored order
    let le = f.read_le(big, &[1, 2], &[2, 3]).unwrap().unwrap();
    let want: Vec<u8> = [9i16, -10, 11, 15, -16, 17]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(le, want);
    let le = f.read_le(z, &[4, 0], &[1, 6]).unwrap().unwrap();
    let want: Vec<u8> = (0..6)
        .flat_map(|k| (24.5f32 + k as f32).to_le_bytes())
        .collect();
    assert_eq!(le, want);

    let zstd3 = [FilterSpec {
        id: 32015,
        params: vec![3],
    }];
    // a sharded chunk with the output's chunk shape and codec: its stored bytes, which zstd
    // decodes to the chunk (rows 2-3, columns 3-5)
    let raw = f.raw_chunk(z, &[2, 3], &[2, 3], &zstd3).unwrap();
    let chunk = zstd::decode_all(raw.as_slice()).unwrap();
    let want: Vec<u8> = [15.5f32, 16.5, 17.5, 21.5, 22.5, 23.5]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(chunk, want);
    // the partial edge chunk of the partial edge shard: a whole chunk, as stored
    let raw = f.raw_chunk(z, &[4, 0], &[2, 3], &zstd3).unwrap();
    assert_eq!(zstd::decode_all(raw.as_slice()).unwrap().len(), 24);
    // not offered: another chunk shape, an offset inside a chunk, other filters or
    // parameters, big-endian elements, gzip (not HDF5's deflate framing)
    assert!(f.raw_chunk(z, &[0, 0], &[4, 6], &zstd3).is_none());
    assert!(f.raw_chunk(z, &[1, 0], &[2, 3], &zstd3).is_none());
    assert!(f.raw_chunk(z, &[0, 0], &[2, 3], &[]).is_none());
    let zstd1 = [FilterSpec {
        id: 32015,
        params: vec![1],
    }];
    assert!(f.raw_chunk(z, &[0, 0], &[2, 3], &zstd1).is_none());
    assert!(f.raw_chunk(big, &[0, 0], &[2, 3], &zstd3).is_none());
    let deflate2 = [FilterSpec {
        id: 1,
        params: vec![2],
    }];
    assert!(f.raw_chunk(g, &[0, 0], &[2, 3], &deflate2).is_none());
    // no codecs: the chunk's bytes themselves, the padded edge chunk included
    let raw = f.raw_chunk(plain, &[4], &[4], &[]).unwrap();
    let want: Vec<u8> = [5.0f64, 6.0, 0.0, 0.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(raw[..16], want[..16]);
    assert_eq!(raw.len(), 32);
    std::fs::remove_dir_all(&d).ok();
}
