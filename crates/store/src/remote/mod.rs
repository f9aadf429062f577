//! Remote places through the `object_store` crate: S3 (and S3-compatible servers), Google
//! Cloud Storage, Azure Blob Storage, and plain HTTP(S) servers (read-only, by range).
//!
//! object_store is asynchronous; this crate's interface is not. A small runtime owned here
//! ([`runtime`]) drives the requests, at most `NC_STORE_CONCURRENCY` (16) at once, and
//! callers block on the result. Credentials, region and endpoint come from each cloud's
//! standard environment and files; a secret never appears in a message ([`redact`]).

mod connect;
mod creds;
mod kv;
pub mod runtime;
mod source;
mod stats;
mod upload;
mod url;

use std::path::Path;
use std::sync::Arc;

pub use connect::{RETRIES_ENV, RETRY_TIMEOUT_ENV, TIMEOUT_ENV};
pub use creds::redact;
pub use kv::{MetadataRank, ObjectKvStore};
pub use source::{ObjectSource, BLOCK};
pub use stats::{io_stats, record_request, IoStats};
pub use upload::abort_uploads;
pub use url::{mode_words, parse_remote, Access, Cloud, RemoteUrl};

use crate::error::StoreError;

/// Open the object `u` names as a byte source, by the first ranged GET its reader would make
/// (no HEAD; a web server ignoring `Range` sends the whole object).
///
/// # Errors
/// No such object or bucket, denied, unreachable server, incomplete settings; each names the
/// URL, the cause and the cure.
pub fn open_source(u: &RemoteUrl) -> Result<ObjectSource, StoreError> {
    ObjectSource::open(u, connect::connect(u)?)
}

/// Open the store below `u` for reading (no request is made yet).
///
/// # Errors
/// Incomplete or contradictory settings.
pub fn open_store(u: &RemoteUrl) -> Result<ObjectKvStore, StoreError> {
    Ok(ObjectKvStore::open(u, connect::connect(u)?))
}

/// Create a store below `u` for writing; `rank` tells the metadata keys, held back until
/// close (see [`ObjectKvStore`]). An existing store there is replaced; other objects are not.
///
/// # Errors
/// Plain HTTP (read-only), a prefix holding objects that are not a store, request failures.
pub fn create_store(u: &RemoteUrl, rank: MetadataRank) -> Result<ObjectKvStore, StoreError> {
    ObjectKvStore::create(u, connect::connect(u)?, rank)
}

/// Open the existing store below `u` for writing more keys into it, replacing nothing: for a
/// writer of one part of a store that another call created (fan-out over chunks). Keys `rank`
/// marks as metadata are still held back until close.
///
/// # Errors
/// Plain HTTP (read-only), incomplete settings.
pub fn open_store_writable(u: &RemoteUrl, rank: MetadataRank) -> Result<ObjectKvStore, StoreError> {
    ObjectKvStore::open_writable(u, connect::connect(u)?, rank)
}

/// Upload a finished local file to the object `u` names, visible only once complete.
///
/// # Errors
/// Plain HTTP (read-only), request failures (the upload is aborted), an unreadable file.
pub fn upload_file(u: &RemoteUrl, local: &Path) -> Result<(), StoreError> {
    let f = std::fs::File::open(local).map_err(|e| StoreError::io(local.display(), e))?;
    upload::upload_file(u, connect::connect(u)?, f, &local.display().to_string())
}

/// Upload the open file `f` (from its start) to the object `u` names; `shown` names the
/// local file in errors.
///
/// # Errors
/// As [`upload_file`].
pub fn upload_open_file(u: &RemoteUrl, f: std::fs::File, shown: &str) -> Result<(), StoreError> {
    upload::upload_file(u, connect::connect(u)?, f, shown)
}

/// True when an object exists at `u` (a HEAD request); `false` when there is none.
///
/// # Errors
/// Any other failure (denied, no such bucket, unreachable).
pub fn object_exists(u: &RemoteUrl) -> Result<bool, StoreError> {
    match source::head_len(u, connect::connect(u)?.as_ref()) {
        Ok(_) => Ok(true),
        Err(StoreError::Remote { cause, .. }) if cause == "no such object" => Ok(false),
        Err(e) => Err(e),
    }
}

/// The shared handle type of a remote byte source.
pub type SharedSource = Arc<dyn crate::ByteSource>;
