//! A key → bytes [`Store`] in a bucket, below a key prefix: Zarr stores on object storage.
//!
//! Writing: objects are uploaded in the background, at most `NC_STORE_CONCURRENCY` at once,
//! while the writer goes on; the keys the creator marks as metadata are held back and written
//! only at [`Store::close`], after every other object is in place, in the creator's rank
//! order (the Zarr writer ranks arrays' metadata before groups', the root's last), so a store
//! being written never looks complete to a reader. A failure removes what was written, as far
//! as the server lets it, and the error lists the keys it left.
//!
//! Replacing a store in place ([`ObjectKvStore::create`] over an old one) costs the new
//! store's PUTs plus batched deletes (one request per 1,000 keys on S3): the old metadata
//! objects go first (the root's, then the rest), so the old store stops looking complete
//! before any of its chunks is overwritten; old chunks the new store writes again are simply
//! overwritten; the old keys it does not write (a chunk now all fill, a variable no longer
//! there) are deleted at close, after every new chunk and before the new metadata.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use super::connect::{is_not_found, object_path, remote_error};
use super::runtime::{block_on, permit, spawn};
use super::source::fetch;
use super::stats::{count_read, count_request, count_written};
use super::url::{Cloud, RemoteUrl};
use crate::error::StoreError;
use crate::kv::{check_key, check_prefix, range_error, under, Store, MAX_OBJECT_SIZE};

/// How a store's creator ranks its keys: `None` for data written at once, `Some(rank)` for
/// metadata held back until close and written in increasing rank.
pub type MetadataRank = fn(&str) -> Option<u32>;

/// Most keys named in an error about what a failed write left.
const MAX_KEYS_SHOWN: usize = 10;

type Pending = tokio::task::JoinHandle<Result<String, StoreError>>;
type InFlight = (String, Pending);

/// A store on object storage (S3, GCS, Azure; plain HTTP read-only).
pub struct ObjectKvStore {
    url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    writable: Option<MetadataRank>,
    deferred: Mutex<BTreeMap<String, Vec<u8>>>,
    pending: Mutex<Vec<InFlight>>,
    written: Mutex<Vec<String>>,
    /// Keys of the store this one replaces: those this one did not write are deleted at
    /// close, before the metadata; all of them on a failure.
    stale: Mutex<BTreeSet<String>>,
    failed: Mutex<Option<String>>,
    closed: Mutex<bool>,
}

impl std::fmt::Debug for ObjectKvStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectKvStore")
            .field("url", &self.url.display)
            .finish_non_exhaustive()
    }
}

/// The first keys of a list, for a message.
fn list_keys(keys: &[String]) -> String {
    let shown: Vec<&str> = keys
        .iter()
        .take(MAX_KEYS_SHOWN)
        .map(String::as_str)
        .collect();
    let more = if keys.len() > MAX_KEYS_SHOWN {
        ", ..."
    } else {
        ""
    };
    format!("{}{more}", shown.join(", "))
}

fn poisoned(u: &RemoteUrl) -> StoreError {
    StoreError::Remote {
        url: u.display.clone(),
        cause: "store lock poisoned (a writer thread panicked)".into(),
        cure: None,
    }
}

impl ObjectKvStore {
    pub(crate) fn open(u: &RemoteUrl, store: Arc<dyn ObjectStore>) -> ObjectKvStore {
        ObjectKvStore {
            url: u.clone(),
            store,
            writable: None,
            deferred: Mutex::default(),
            pending: Mutex::default(),
            written: Mutex::default(),
            stale: Mutex::default(),
            failed: Mutex::default(),
            closed: Mutex::new(false),
        }
    }

    /// A store at `u` to add keys to, replacing nothing (see [`super::open_store_writable`]).
    pub(crate) fn open_writable(
        u: &RemoteUrl,
        store: Arc<dyn ObjectStore>,
        rank: MetadataRank,
    ) -> Result<ObjectKvStore, StoreError> {
        if u.cloud == Cloud::Http {
            return Err(StoreError::ReadOnly {
                location: u.display.clone(),
                why: "a plain http(s) server is read-only here; write to s3://, gs:// or az://, \
                      or to an S3-compatible server named with #mode=...,s3"
                    .into(),
            });
        }
        let mut s = ObjectKvStore::open(u, store);
        s.writable = Some(rank);
        Ok(s)
    }

    /// A store to write at `u`: an existing store there (a prefix holding a top-level
    /// metadata key, as `rank` tells) is replaced: its metadata objects are deleted at once
    /// (the top-level ones first), its other keys either overwritten by the new store or
    /// deleted at [`Store::close`] before the new metadata; a prefix holding other objects is
    /// refused.
    pub(crate) fn create(
        u: &RemoteUrl,
        store: Arc<dyn ObjectStore>,
        rank: MetadataRank,
    ) -> Result<ObjectKvStore, StoreError> {
        let s = ObjectKvStore::open_writable(u, store, rank)?;
        let old = s.list("")?;
        if !old.is_empty() {
            if !old.iter().any(|k| !k.contains('/') && rank(k).is_some()) {
                return Err(StoreError::BadLocation {
                    location: u.display.clone(),
                    reason: format!(
                        "holds {} objects and is not a Zarr store (no metadata object at its \
                         top): refusing to replace it; remove them or choose another name",
                        old.len()
                    ),
                });
            }
            // the old store stops looking complete first: its top-level metadata (what a
            // reader opens first), then the rest of its metadata, each in batches; its data
            // keys stay until the new store has overwritten them or close deletes them
            let (meta, data): (Vec<String>, Vec<String>) =
                old.into_iter().partition(|k| rank(k).is_some());
            let (top, deep): (Vec<String>, Vec<String>) =
                meta.into_iter().partition(|k| !k.contains('/'));
            for batch in [top, deep] {
                let left = s.delete_many(batch)?;
                if !left.is_empty() {
                    return Err(StoreError::Remote {
                        url: u.display.clone(),
                        cause: format!(
                            "cannot remove the metadata of the store being replaced: {} are \
                             left",
                            list_keys(&left)
                        ),
                        cure: None,
                    });
                }
            }
            *s.stale.lock().map_err(|_| poisoned(u))? = data.into_iter().collect();
        }
        Ok(s)
    }

    /// Delete `keys` in batches (S3's DeleteObjects: up to 1,000 keys a request), missing
    /// keys counting as deleted; the keys that could not be deleted.
    fn delete_many(&self, keys: Vec<String>) -> Result<Vec<String>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let requests = match self.url.cloud {
            Cloud::S3 => keys.len().div_ceil(1000),
            _ => keys.len(),
        };
        let paths: Vec<object_store::path::Path> =
            keys.iter().map(|k| object_path(&self.url, k)).collect();
        let done: BTreeSet<String> = block_on(async {
            let _p = permit().await;
            for _ in 0..requests {
                count_request();
            }
            let input = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
            self.store
                .delete_stream(input)
                .filter_map(|r| async move {
                    match r {
                        Ok(p) => Some(p.to_string()),
                        Err(object_store::Error::NotFound { path, .. }) => Some(path),
                        Err(_) => None,
                    }
                })
                .collect()
                .await
        })?;
        Ok(keys
            .into_iter()
            .filter(|k| !done.contains(object_path(&self.url, k).as_ref()))
            .collect())
    }

    fn delete_now(&self, key: &str) -> Result<(), StoreError> {
        let path = object_path(&self.url, key);
        let r = block_on(async {
            let _p = permit().await;
            count_request();
            self.store.delete(&path).await
        })?;
        match r {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(remote_error(&self.url, key, &e)),
        }
    }

    fn read_only(&self, key: &str) -> StoreError {
        StoreError::ReadOnly {
            location: self.url.display_key(key),
            why: "store opened for reading".into(),
        }
    }

    /// Wait for the uploads in flight; the first failure's message, if any.
    fn drain(&self) -> Result<Option<String>, StoreError> {
        let handles: Vec<InFlight> =
            std::mem::take(&mut *self.pending.lock().map_err(|_| poisoned(&self.url))?);
        let results = block_on(futures::future::join_all(
            handles.into_iter().map(|(_, h)| h),
        ))?;
        let mut first = None;
        let mut written = self.written.lock().map_err(|_| poisoned(&self.url))?;
        for r in results {
            match r {
                Ok(Ok(k)) => written.push(k),
                Ok(Err(e)) => {
                    first.get_or_insert_with(|| e.to_string());
                }
                Err(e) => {
                    first.get_or_insert_with(|| format!("upload task failed: {e}"));
                }
            }
        }
        Ok(first)
    }

    /// Remove what was written (best effort) and say what is left.
    fn left_behind(&self) -> String {
        let _ = self.drain();
        let mut gone: BTreeSet<String> = self
            .written
            .lock()
            .map(|mut w| std::mem::take(&mut *w).into_iter().collect())
            .unwrap_or_default();
        // what is left of a store this one replaced goes too (its metadata went first)
        if let Ok(mut s) = self.stale.lock() {
            gone.append(&mut s);
        }
        let keys: Vec<String> = gone.into_iter().collect();
        let left = self.delete_many(keys.clone()).unwrap_or(keys);
        if left.is_empty() {
            return "nothing was left behind (the objects written were removed)".into();
        }
        format!(
            "{} objects were left without their metadata, so no reader takes them for a store: \
             {} (remove everything below {})",
            left.len(),
            list_keys(&left),
            self.url.display
        )
    }

    fn fail(&self, cause: String) -> StoreError {
        let left = self.left_behind();
        if let Ok(mut d) = self.deferred.lock() {
            d.clear();
        }
        StoreError::Remote {
            url: self.url.display.clone(),
            cause: format!("writing the store failed: {cause}; {left}"),
            cure: None,
        }
    }

    fn upload(&self, key: &str, value: Bytes) -> Result<(), StoreError> {
        let permit = block_on(permit())?;
        let store = self.store.clone();
        let path = object_path(&self.url, key);
        let url = self.url.clone();
        let key = key.to_string();
        let k = key.clone();
        let h = spawn(async move {
            let key = k;
            let _p = permit;
            count_request();
            let n = value.len() as u64;
            match store.put(&path, PutPayload::from_bytes(value)).await {
                Ok(_) => {
                    count_written(n);
                    Ok(key)
                }
                Err(e) => Err(remote_error(&url, &key, &e)),
            }
        })?;
        let mut pending = self.pending.lock().map_err(|_| poisoned(&self.url))?;
        pending.push((key, h));
        // collect what finished, so the list stays as long as the uploads in flight
        if pending.len() >= 256 {
            let (done, running): (Vec<InFlight>, Vec<InFlight>) =
                pending.drain(..).partition(|(_, h)| h.is_finished());
            *pending = running;
            drop(pending);
            let results = block_on(futures::future::join_all(done.into_iter().map(|(_, h)| h)))?;
            let mut written = self.written.lock().map_err(|_| poisoned(&self.url))?;
            for r in results {
                match r {
                    Ok(Ok(k)) => written.push(k),
                    Ok(Err(e)) => {
                        let mut f = self.failed.lock().map_err(|_| poisoned(&self.url))?;
                        f.get_or_insert_with(|| e.to_string());
                    }
                    Err(e) => {
                        let mut f = self.failed.lock().map_err(|_| poisoned(&self.url))?;
                        f.get_or_insert_with(|| format!("upload task failed: {e}"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Wait for the uploads in flight, so a read, a delete or a second write of a key sees
    /// the last write (uploads of one key may finish out of order). A failure is kept for the
    /// next put or close.
    fn settle(&self) -> Result<(), StoreError> {
        let busy = self.pending.lock().map(|p| !p.is_empty()).unwrap_or(false);
        if busy {
            if let Some(f) = self.drain()? {
                let mut first = self.failed.lock().map_err(|_| poisoned(&self.url))?;
                first.get_or_insert(f);
            }
        }
        Ok(())
    }

    fn in_flight(&self, key: &str) -> bool {
        self.pending
            .lock()
            .map(|p| p.iter().any(|(k, _)| k == key))
            .unwrap_or(false)
    }

    fn first_failure(&self) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }
}

impl Store for ObjectKvStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_key(key)?;
        self.settle()?;
        if let Some(v) = self.deferred.lock().ok().and_then(|d| d.get(key).cloned()) {
            return Ok(Some(v));
        }
        let path = object_path(&self.url, key);
        let r = block_on(async {
            let _p = permit().await;
            count_request();
            let got = self.store.get(&path).await?;
            if got.meta.size > MAX_OBJECT_SIZE {
                return Ok(Err(got.meta.size));
            }
            let b = got.bytes().await?;
            count_read(b.len() as u64);
            Ok(Ok(b))
        })?;
        match r {
            Ok(Ok(b)) => Ok(Some(b.to_vec())),
            Ok(Err(_)) => Err(StoreError::TooLarge {
                key: self.url.display_key(key),
                limit: MAX_OBJECT_SIZE,
            }),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(remote_error(&self.url, key, &e)),
        }
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StoreError> {
        check_key(key)?;
        self.settle()?;
        if len > MAX_OBJECT_SIZE {
            return Err(range_error(key, offset, len, 0));
        }
        let Some(end) = offset.checked_add(len) else {
            return Err(range_error(key, offset, len, 0));
        };
        let path = object_path(&self.url, key);
        match block_on(fetch(self.store.as_ref(), &path, offset..end))? {
            Ok(b) if b.len() as u64 == len => Ok(Some(b.to_vec())),
            Ok(b) => Err(range_error(key, offset, len, offset + b.len() as u64)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(object_store::Error::Generic { source, .. })
                if source.to_string().contains("InvalidRange") =>
            {
                Err(range_error(key, offset, len, self.size(key)?.unwrap_or(0)))
            }
            Err(e) => Err(remote_error(&self.url, key, &e)),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        check_key(key)?;
        self.settle()?;
        let path = object_path(&self.url, key);
        let r = block_on(async {
            let _p = permit().await;
            count_request();
            self.store.head(&path).await
        })?;
        match r {
            Ok(m) => Ok(Some(m.size)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(remote_error(&self.url, key, &e)),
        }
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        check_key(key)?;
        let Some(rank) = self.writable else {
            return Err(self.read_only(key));
        };
        if let Some(f) = self.first_failure() {
            return Err(StoreError::Remote {
                url: self.url.display_key(key),
                cause: format!("an earlier upload failed: {f}"),
                cure: None,
            });
        }
        if rank(key).is_some() {
            self.deferred
                .lock()
                .map_err(|_| poisoned(&self.url))?
                .insert(key.to_string(), value.to_vec());
            return Ok(());
        }
        if self.in_flight(key) {
            self.settle()?;
        }
        self.upload(key, Bytes::copy_from_slice(value))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_prefix(prefix)?;
        self.settle()?;
        let base = object_path(&self.url, "");
        let at = object_path(&self.url, prefix);
        let r = block_on(async {
            let _p = permit().await;
            count_request();
            self.store
                .list(Some(&at))
                .map_ok(|m| m.location.to_string())
                .try_collect::<Vec<String>>()
                .await
        })?;
        let names = match r {
            Ok(n) => n,
            Err(e) if is_not_found(&e) => Vec::new(),
            Err(e) => return Err(remote_error(&self.url, prefix, &e)),
        };
        let base = base.to_string();
        let mut keys: Vec<String> = names
            .into_iter()
            .filter_map(|n| {
                if base.is_empty() {
                    Some(n)
                } else {
                    n.strip_prefix(&base)
                        .and_then(|k| k.strip_prefix('/'))
                        .map(str::to_string)
                }
            })
            .filter(|k| check_key(k).is_ok() && under(prefix, k))
            .collect();
        if let Ok(d) = self.deferred.lock() {
            keys.extend(d.keys().filter(|k| under(prefix, k)).cloned());
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        check_key(key)?;
        if self.writable.is_none() {
            return Err(self.read_only(key));
        }
        if let Ok(mut d) = self.deferred.lock() {
            d.remove(key);
        }
        if let Ok(mut s) = self.stale.lock() {
            s.remove(key);
        }
        self.settle()?;
        self.delete_now(key)
    }

    fn close(&self) -> Result<(), StoreError> {
        let Some(rank) = self.writable else {
            return Ok(());
        };
        let mut closed = self.closed.lock().map_err(|_| poisoned(&self.url))?;
        if *closed {
            return Ok(());
        }
        // a close is tried once; a failure reports (and removes) what it left itself
        *closed = true;
        if let Some(f) = self.drain()?.or_else(|| self.first_failure()) {
            return Err(self.fail(f));
        }
        // the replaced store's keys this one did not write, after every chunk and before the
        // metadata: the new store never looks complete with an old chunk in it (a key whose
        // upload failed stays in `stale` until here, so a failure removes and names it too)
        let stale: Vec<String> = {
            let written = self.written.lock().map_err(|_| poisoned(&self.url))?;
            let written: std::collections::HashSet<&str> =
                written.iter().map(String::as_str).collect();
            std::mem::take(&mut *self.stale.lock().map_err(|_| poisoned(&self.url))?)
                .into_iter()
                .filter(|k| !written.contains(k.as_str()))
                .collect()
        };
        let left = self.delete_many(stale)?;
        if !left.is_empty() {
            let n = left.len();
            let shown = list_keys(&left);
            if let Ok(mut s) = self.stale.lock() {
                s.extend(left);
            }
            return Err(self.fail(format!(
                "cannot remove {n} objects of the store being replaced: {shown}"
            )));
        }
        // metadata last, in rank order; objects of one rank concurrently
        let deferred = std::mem::take(&mut *self.deferred.lock().map_err(|_| poisoned(&self.url))?);
        let mut by_rank: BTreeMap<u32, Vec<(String, Vec<u8>)>> = BTreeMap::new();
        for (k, v) in deferred {
            by_rank
                .entry(rank(&k).unwrap_or(0))
                .or_default()
                .push((k, v));
        }
        for (_, objects) in by_rank {
            for (k, v) in objects {
                self.upload(&k, Bytes::from(v))?;
            }
            if let Some(f) = self.drain()? {
                return Err(self.fail(f));
            }
        }
        Ok(())
    }

    fn abort(&self) -> Option<String> {
        if self.writable.is_none() || self.closed.lock().map(|c| *c).unwrap_or(true) {
            return None;
        }
        if let Ok(mut d) = self.deferred.lock() {
            d.clear();
        }
        Some(self.left_behind())
    }
}

impl Drop for ObjectKvStore {
    fn drop(&mut self) {
        // never leave uploads running past the store's life
        if let Ok(p) = self.pending.lock() {
            for (_, h) in p.iter() {
                h.abort();
            }
        }
    }
}
