//! Where bytes live, knowing no format: byte sources with ranged reads ([`ByteSource`]: a local
//! file, bytes in memory) and key → bytes stores ([`Store`]: a directory tree, a zip archive,
//! memory). Readers of HDF5 and classic files ask a byte source for ranges; the Zarr reader
//! and writer ask a store for keys. Neither learns where the bytes are.
//!
//! Every implementation passes the shared suite in [`suite`] (feature `conformance`).

mod dest;
mod error;
mod kv;
pub mod remote;
mod source;
#[cfg(any(test, feature = "conformance"))]
pub mod suite;

pub use dest::{remove_path, Destination, Writeback};
pub use error::StoreError;
pub use kv::{
    check_key, copy_store, DirStore, MemStore, ObjectWriter, Store, ZipStore, MAX_OBJECT_SIZE,
};
pub use source::{range_len, ByteSource, BytesSource, FileSource};

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
        assert!(FileSource::open(&d).is_err(), "a directory is not a source");
        let e = FileSource::open(&d.join("missing")).unwrap_err();
        assert!(e.is_not_found() && e.to_string().contains("missing"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
