//! Stores: the key → bytes map (the NCZarr "zmap"). They live in `nc-store`, which knows where
//! bytes are (directory, zip, memory, object storage) and no format; this module names them
//! where the Zarr code has always found them, and says which keys are metadata
//! ([`metadata_rank`]), which only a Zarr writer knows.

pub use nc_store::{
    check_key, copy_store, DirStore, MemStore, ObjectWriter, Store, ZipStore, MAX_OBJECT_SIZE,
};

/// The order in which a store's metadata objects are written on object storage, after all
/// chunks: `None` for a chunk (written at once). Arrays' and groups' metadata go deepest
/// first; at the top, the attributes and NCZarr keys, then last of all the objects by which
/// readers recognise a store (`.zgroup`, `.zmetadata`, `zarr.json`), so that a store whose
/// copy failed never looks complete. nc-store knows no format: this is what it is told.
pub fn metadata_rank(key: &str) -> Option<u32> {
    let last = key.rsplit('/').next().unwrap_or(key);
    if !(last.starts_with('.') || last == "zarr.json") {
        return None;
    }
    let depth = key.matches('/').count() as u32;
    Some(match (depth, last) {
        (0, ".zgroup" | ".zmetadata" | "zarr.json") => u32::MAX,
        (0, _) => u32::MAX - 1,
        (d, _) => 1_000_000u32.saturating_sub(d),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_goes_last_and_the_root_last_of_all() {
        assert_eq!(metadata_rank("v/0.0"), None);
        assert_eq!(metadata_rank("v/c/0/0"), None);
        assert!(metadata_rank("g/v/.zarray") > metadata_rank("g/v/w/.zarray"));
        assert!(metadata_rank(".zgroup") > metadata_rank(".zattrs"));
        assert!(metadata_rank(".zattrs") > metadata_rank("v/zarr.json"));
    }
}
