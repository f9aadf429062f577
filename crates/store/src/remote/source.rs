//! A remote object as a [`ByteSource`]: one HEAD for its length, then ranged GETs. Small reads
//! (HDF5 and classic metadata) go through aligned blocks kept in a bounded cache, so a header
//! spread over many small structures costs a few requests; large reads (chunks) go straight
//! to the server. [`ByteSource::read_ranges`] merges close ranges into one GET and runs the
//! GETs concurrently.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use super::connect::{object_path, remote_error};
use super::runtime::{block_on, permit};
use super::stats::{count_read, count_request};
use super::url::RemoteUrl;
use crate::error::StoreError;
use crate::source::{check_range, range_len, ByteSource};

/// Size of a cached block: the read-ahead of a small read.
pub const BLOCK: u64 = 512 * 1024;
/// Reads this large or larger go straight to the server (a chunk), not through the blocks
/// (the read-ahead of metadata structures, which are small).
const DIRECT: u64 = 64 * 1024;
/// Blocks kept (32 MiB).
const MAX_BLOCKS: usize = 64;
/// Ranges at most this far apart are fetched by one request.
const COALESCE_GAP: u64 = 256 * 1024;
/// Largest merged request.
const MAX_SPAN: u64 = 64 << 20;

/// An object in a bucket or on a web server, read by range.
pub struct ObjectSource {
    url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    path: Path,
    len: u64,
    cache: Mutex<Blocks>,
}

#[derive(Default)]
struct Blocks {
    map: HashMap<u64, Bytes>,
    order: VecDeque<u64>,
}

impl Blocks {
    fn get(&self, i: u64) -> Option<Bytes> {
        self.map.get(&i).cloned()
    }

    fn put(&mut self, i: u64, b: Bytes) {
        if self.map.insert(i, b).is_none() {
            self.order.push_back(i);
        }
        while self.order.len() > MAX_BLOCKS {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

impl std::fmt::Debug for ObjectSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectSource")
            .field("url", &self.url.display)
            .field("len", &self.len)
            .finish()
    }
}

/// One ranged GET.
pub(crate) async fn fetch(
    store: &dyn ObjectStore,
    path: &Path,
    r: Range<u64>,
) -> Result<Bytes, object_store::Error> {
    let _p = permit().await;
    count_request();
    let b = store.get_range(path, r).await?;
    count_read(b.len() as u64);
    Ok(b)
}

impl ObjectSource {
    /// Open the object `u` names: one HEAD request for its length.
    ///
    /// # Errors
    /// [`StoreError::Remote`] naming the URL, the cause (no such object or bucket, denied,
    /// unreachable) and the cure.
    pub(crate) fn open(u: &RemoteUrl, store: Arc<dyn ObjectStore>) -> Result<Self, StoreError> {
        let path = object_path(u, "");
        let meta = block_on(async {
            let _p = permit().await;
            count_request();
            match store.head(&path).await {
                Ok(m) => Ok(m),
                // a HEAD answer has no body, so no S3 error code (NoSuchBucket or NoSuchKey,
                // InvalidAccessKeyId or AccessDenied): ask again with a GET, whose answer says
                Err(e) => {
                    count_request();
                    match store.get_range(&path, 0..1).await {
                        Err(detailed) => Err(detailed),
                        Ok(_) => Err(e),
                    }
                }
            }
        })?
        .map_err(|e| remote_error(u, "", &e))?;
        Ok(ObjectSource {
            url: u.clone(),
            store,
            path,
            len: meta.size,
            cache: Mutex::new(Blocks::default()),
        })
    }

    fn err(&self, e: &object_store::Error) -> StoreError {
        remote_error(&self.url, "", e)
    }

    fn short(&self, r: &Range<u64>, got: usize) -> StoreError {
        StoreError::Remote {
            url: self.url.display.clone(),
            cause: format!(
                "asked for bytes {}..{}, the server sent {got} bytes (the object changed while read?)",
                r.start, r.end
            ),
            cure: None,
        }
    }

    /// The blocks `first..=last`, from the cache or fetched (runs of missing blocks by one
    /// request each, concurrently).
    fn blocks(&self, first: u64, last: u64) -> Result<Vec<Bytes>, StoreError> {
        let mut have: Vec<Option<Bytes>> = {
            let c = self.cache.lock().map_err(|_| self.poisoned())?;
            (first..=last).map(|i| c.get(i)).collect()
        };
        let mut runs: Vec<Range<u64>> = Vec::new();
        for (k, b) in have.iter().enumerate() {
            if b.is_none() {
                let i = first + k as u64;
                match runs.last_mut() {
                    Some(r) if r.end == i => r.end = i + 1,
                    _ => runs.push(i..i + 1),
                }
            }
        }
        if !runs.is_empty() {
            let len = self.len;
            let fetched = block_on(futures::future::try_join_all(runs.iter().map(|r| {
                let range = r.start * BLOCK..(r.end * BLOCK).min(len);
                fetch(self.store.as_ref(), &self.path, range)
            })))?
            .map_err(|e| self.err(&e))?;
            let mut c = self.cache.lock().map_err(|_| self.poisoned())?;
            for (r, bytes) in runs.iter().zip(fetched) {
                let want = ((r.end * BLOCK).min(len) - r.start * BLOCK) as usize;
                if bytes.len() != want {
                    return Err(self.short(&(r.start * BLOCK..r.end * BLOCK), bytes.len()));
                }
                for i in r.clone() {
                    let s = ((i - r.start) * BLOCK) as usize;
                    let e = (s + BLOCK as usize).min(bytes.len());
                    let b = bytes.slice(s..e);
                    have[(i - first) as usize] = Some(b.clone());
                    c.put(i, b);
                }
            }
        }
        Ok(have.into_iter().flatten().collect())
    }

    fn poisoned(&self) -> StoreError {
        StoreError::Remote {
            url: self.url.display.clone(),
            cause: "block cache lock poisoned (a reader thread panicked)".into(),
            cure: None,
        }
    }
}

impl ByteSource for ObjectSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        check_range(&self.url.display, offset, buf.len(), self.len)?;
        if buf.is_empty() {
            return Ok(());
        }
        let end = offset + buf.len() as u64;
        if buf.len() as u64 >= DIRECT {
            let b = block_on(fetch(self.store.as_ref(), &self.path, offset..end))?
                .map_err(|e| self.err(&e))?;
            if b.len() != buf.len() {
                return Err(self.short(&(offset..end), b.len()));
            }
            buf.copy_from_slice(&b);
            return Ok(());
        }
        let (first, last) = (offset / BLOCK, (end - 1) / BLOCK);
        let blocks = self.blocks(first, last)?;
        let mut pos = 0usize;
        for (k, b) in blocks.iter().enumerate() {
            let bstart = (first + k as u64) * BLOCK;
            let s = offset.max(bstart) - bstart;
            let e = (end.min(bstart + b.len() as u64)) - bstart;
            let n = (e - s) as usize;
            buf[pos..pos + n].copy_from_slice(&b[s as usize..e as usize]);
            pos += n;
        }
        if pos != buf.len() {
            return Err(self.short(&(offset..end), pos));
        }
        Ok(())
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>, StoreError> {
        for r in ranges {
            range_len(&self.url.display, r, self.len)?;
        }
        let spans = merge(ranges);
        let got = block_on(futures::future::try_join_all(
            spans
                .iter()
                .map(|s| fetch(self.store.as_ref(), &self.path, s.clone())),
        ))?
        .map_err(|e| self.err(&e))?;
        for (s, b) in spans.iter().zip(&got) {
            if b.len() as u64 != s.end - s.start {
                return Err(self.short(s, b.len()));
            }
        }
        ranges
            .iter()
            .map(|r| {
                if r.end == r.start {
                    return Ok(Vec::new());
                }
                // the span holding r: spans are sorted and disjoint
                let i = spans.partition_point(|s| s.end < r.end.max(r.start + 1));
                let s = spans
                    .get(i)
                    .filter(|s| s.start <= r.start && r.end <= s.end);
                match s {
                    Some(s) => {
                        let a = (r.start - s.start) as usize;
                        let b = (r.end - s.start) as usize;
                        Ok(got[i][a..b].to_vec())
                    }
                    None => Err(self.short(r, 0)),
                }
            })
            .collect()
    }

    fn name(&self) -> &str {
        &self.url.display
    }

    fn is_remote(&self) -> bool {
        true
    }
}

/// Sorted, disjoint spans covering `ranges`, merging ranges at most [`COALESCE_GAP`] apart into
/// spans of at most [`MAX_SPAN`] bytes.
pub(crate) fn merge(ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.end > r.start).cloned().collect();
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(last)
                if r.start <= last.end.saturating_add(COALESCE_GAP)
                    && r.end.max(last.end) - last.start <= MAX_SPAN =>
            {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_ranges_merge() {
        assert_eq!(merge(&[0..10, 20..30, 10..15]), vec![0..30]);
        assert_eq!(
            merge(&[0..10, 1_000_000..1_000_010]),
            vec![0..10, 1_000_000..1_000_010]
        );
        assert_eq!(merge(&[5..5, 7..7]), Vec::<Range<u64>>::new());
        assert_eq!(merge(&[0..(MAX_SPAN), MAX_SPAN..MAX_SPAN + 1]).len(), 2);
    }
}
