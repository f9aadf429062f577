//! The one door, and where bytes live, knowing no format.
//!
//! - [`Location`]: every name a tool is given (a path; `file://` with netCDF-C's `#mode=`
//!   words and `[...]` client parameters; `s3://`, `gs://`, `az://`, `http(s)://`) parsed
//!   once, at the binary's edge. It opens what backends need: a byte source, a store, and
//!   says the display name and the dataset name (the one place that rule is written).
//! - Byte sources with ranged reads ([`ByteSource`]: a local file with positional reads
//!   straight into the caller's buffer, bytes in memory, a remote object).
//! - Key → bytes stores ([`Store`]: a directory tree, a zip archive, memory, object storage).
//! - Destinations ([`Destination`]): an output published atomically (link or rename, or one
//!   upload), written unnamed where it can be ([`OutputFile`]), and the removal of what a
//!   killed run left ([`remove_stale`]).
//!
//! Readers of HDF5 and classic files ask a byte source for ranges; the Zarr reader and writer
//! ask a store for keys; neither learns where the bytes are. This crate must not know any
//! format: which keys of a store are metadata is told to it ([`remote::MetadataRank`]), and
//! what a file holds is found by nc-dispatch. Every implementation passes the shared suite in
//! [`suite`] (feature `conformance`).

mod dest;
mod error;
mod kv;
mod location;
pub mod remote;
mod source;
#[cfg(any(test, feature = "conformance"))]
pub mod suite;
mod temp;
mod wildcard;

pub use dest::{remove_path, Destination, Writeback};
pub use error::StoreError;
pub use kv::{
    check_key, copy_store, DirStore, MemStore, ObjectWriter, Store, ZipStore, MAX_OBJECT_SIZE,
};
pub use location::{
    param_in, DapPlace, DapProtocol, Location, Place, StorageKind, StoreModes, KNOWN_MODE_WORDS,
};
pub use source::{range_len, ByteSource, BytesSource, FileSource};
pub use temp::{free_bytes, hold_lock, remove_stale, OutputFile, NAMED_TEMPS_ENV};
pub use wildcard::Wildcard;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_bytes_sources_pass_the_suite() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        suite::byte_source(&BytesSource::new(bytes.clone(), "mem"), &bytes);
        let d = std::env::temp_dir().join(format!("nc-store-src-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("f.bin");
        std::fs::write(&p, &bytes).unwrap();
        let f = FileSource::open(&p).unwrap();
        suite::byte_source(&f, &bytes);
        // a file longer than the kept head: small reads in it, across its end, past it
        let long: Vec<u8> = (0..200_000u32).map(|i| (i * 13 % 253) as u8).collect();
        let q = d.join("long.bin");
        std::fs::write(&q, &long).unwrap();
        let g = FileSource::open(&q).unwrap();
        suite::byte_source(&g, &long);
        for (at, n) in [
            (0, 8),
            (100, 4096),
            (8_000, 192),
            (8_000, 500),
            (4_000, 4096),
            (65_000, 536),
            (65_530, 20),
            (70_000, 10),
        ] {
            assert_eq!(
                g.read_vec(at, n).unwrap(),
                long[at as usize..at as usize + n]
            );
            let mut buf = vec![0u8; n];
            g.read_at(at, &mut buf).unwrap();
            assert_eq!(buf, long[at as usize..at as usize + n]);
            // appended, from the head or from the file
            let mut out = vec![1u8];
            g.read_append(at, n, &mut out).unwrap();
            assert_eq!(out[1..], long[at as usize..at as usize + n]);
        }
        // a large read straight into a buffer used before (its old bytes cleared)
        let mut out = vec![9u8; 100];
        out.clear();
        g.read_append(1_000, 150_000, &mut out).unwrap();
        assert_eq!(out, long[1_000..151_000]);
        // the head is what the file held at its first small read
        std::fs::write(&q, vec![0u8; 200_000]).unwrap();
        assert_eq!(g.read_vec(100, 8).unwrap(), long[100..108]);
        assert_eq!(g.read_vec(100_000, 8).unwrap(), vec![0u8; 8]);
        // small reads in the first 8 KiB keep those alone; three small reads past them go to
        // the file, the fourth reads the head (what the file holds by then), which serves all
        std::fs::write(&q, &long).unwrap();
        let h = FileSource::open(&q).unwrap();
        assert_eq!(h.read_vec(0, 4).unwrap(), long[..4]);
        assert_eq!(h.read_vec(8_000, 192).unwrap(), long[8_000..8_192]);
        let mut now = long.clone();
        for (i, at) in [9_000usize, 20_000, 30_000, 40_000].into_iter().enumerate() {
            now[at..at + 8].fill(i as u8 + 1);
            std::fs::write(&q, &now).unwrap();
            assert_eq!(
                h.read_vec(at as u64, 8).unwrap(),
                vec![i as u8 + 1; 8],
                "read {i}"
            );
            assert_eq!(
                h.read_vec(100, 8).unwrap(),
                long[100..108],
                "from the first bytes"
            );
        }
        std::fs::write(&q, vec![5u8; 200_000]).unwrap();
        assert_eq!(h.read_vec(9_000, 8).unwrap(), vec![1u8; 8], "from the head");
        assert_eq!(
            h.read_vec(100, 8).unwrap(),
            long[100..108],
            "the head serves all now"
        );
        assert!(FileSource::open(&d).is_err(), "a directory is not a source");
        let e = FileSource::open(&d.join("missing")).unwrap_err();
        assert!(e.is_not_found() && e.to_string().contains("missing"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
