//! Stores: the key → bytes map (the NCZarr "zmap"). They live in `nc-store`, which knows where
//! bytes are (directory, zip, memory, object storage) and no format; this module names them
//! where the Zarr code has always found them.

pub use nc_store::{
    check_key, copy_store, DirStore, MemStore, ObjectWriter, Store, ZipStore, MAX_OBJECT_SIZE,
};
