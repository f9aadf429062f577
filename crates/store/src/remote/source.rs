//! A remote object as a [`ByteSource`]: one HEAD for its length, then ranged GETs. Small reads
//! (HDF5 and classic metadata) go through aligned blocks kept in a bounded cache, so a header
//! spread over many small structures costs a few requests; a reader that keeps missing the
//! cache is fetched wider spans (1, 1, 2, 4, then 8 blocks, for its first 16 misses), so a
//! header scattered over megabytes costs a dozen requests, not one per block. Large reads (chunks) go to the
//! server, except that a large read continuing where an earlier one ended (a copy reading a
//! variable's chunks in file order) is served from read-ahead windows: 4 MiB, doubling to
//! 16 MiB, the next window fetched in the background while the current one is read.
//! [`ByteSource::read_ranges`] merges close ranges into one GET and runs the GETs concurrently.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt, Shared};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use super::connect::{object_path, remote_error};
use super::runtime::{block_on, permit, spawn};
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
/// The widest span (in blocks) a cache miss fetches once the reader has missed often.
const MAX_GROW: u64 = 8;
/// Misses that may fetch wider spans: opening a file reads its header; later small reads (a
/// chunk index now and then) are far apart, and a wide span around them would be wasted.
const GROW_MISSES: u32 = 16;
/// The first read-ahead window of a run of large reads, and the largest (each window twice
/// the last). At most [`STREAMS`] runs are followed, each holding at most two windows.
const AHEAD_MIN: u64 = 4 << 20;
const AHEAD_MAX: u64 = 16 << 20;
const STREAMS: usize = 4;

/// An object in a bucket or on a web server, read by range.
pub struct ObjectSource {
    url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    path: Path,
    len: u64,
    cache: Mutex<Blocks>,
    /// Cache misses so far: the span the next miss fetches grows with them.
    misses: AtomicU32,
    ahead: Mutex<Ahead>,
}

/// A window being fetched or fetched: its bytes, shared by every reader waiting for them.
type Window = Shared<BoxFuture<'static, Result<Bytes, Arc<object_store::Error>>>>;
/// A window and the bytes of the object it holds.
type Placed = (Range<u64>, Window);

/// Runs of large reads followed for read-ahead.
#[derive(Default)]
struct Ahead {
    streams: Vec<Stream>,
    tick: u64,
}

struct Stream {
    /// Where the last read served ended.
    end: u64,
    /// Fetched (or being fetched) windows, in file order.
    windows: Vec<Placed>,
    /// The size of the next window.
    next: u64,
    /// Last use, to drop the stream used least recently.
    tick: u64,
}

impl Stream {
    /// Where the windows end (or the last read, without windows).
    fn reach(&self) -> u64 {
        self.windows
            .last()
            .map_or(self.end, |w| w.0.end.max(self.end))
    }
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
            misses: AtomicU32::new(0),
            ahead: Mutex::new(Ahead::default()),
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
            // a reader that keeps missing reads a scattered header: each miss fetches a wider
            // aligned span (1, 1, 2, 4, then MAX_GROW blocks), its blocks not cached yet; after
            // GROW_MISSES misses, one block again
            let nblocks = self.len.div_ceil(BLOCK);
            let c = self.cache.lock().map_err(|_| self.poisoned())?;
            for r in &mut runs {
                let n = self.misses.fetch_add(1, Ordering::Relaxed);
                let span = if n < GROW_MISSES {
                    (1u64 << n.saturating_sub(1).min(8)).min(MAX_GROW)
                } else {
                    1
                };
                let a = r.start / span * span;
                let b = (a + span).min(nblocks);
                while r.start > a && c.get(r.start - 1).is_none() {
                    r.start -= 1;
                }
                while r.end < b && c.get(r.end).is_none() {
                    r.end += 1;
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
                    if (first..=last).contains(&i) {
                        have[(i - first) as usize] = Some(b.clone());
                    }
                    c.put(i, b);
                }
            }
        }
        Ok(have.into_iter().flatten().collect())
    }

    /// A window of bytes `r`, fetched in the background from now on.
    fn window(&self, r: Range<u64>) -> Result<Window, StoreError> {
        let (store, path) = (self.store.clone(), self.path.clone());
        let h = spawn(async move { fetch(store.as_ref(), &path, r).await.map_err(Arc::new) })?;
        Ok(async move {
            match h.await {
                Ok(got) => got,
                Err(e) => Err(Arc::new(object_store::Error::JoinError { source: e })),
            }
        }
        .boxed()
        .shared())
    }

    /// A read of at least [`DIRECT`] bytes: from read-ahead windows when it continues a run
    /// of large reads (or falls in a window), else by one GET (which starts a run).
    fn read_large(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        let end = offset + buf.len() as u64;
        let windows = if end - offset > AHEAD_MIN {
            // a read this large is an efficient request already
            None
        } else {
            self.ahead_windows(offset, end)?
        };
        let Some(windows) = windows else {
            let b = block_on(fetch(self.store.as_ref(), &self.path, offset..end))?
                .map_err(|e| self.err(&e))?;
            if b.len() != buf.len() {
                return Err(self.short(&(offset..end), b.len()));
            }
            buf.copy_from_slice(&b);
            return Ok(());
        };
        // the read may span the end of one window and the start of the next
        let mut pos = offset;
        for (r, w) in windows {
            if pos >= end {
                break;
            }
            if r.end <= pos || r.start > pos {
                continue;
            }
            let b = block_on(w)?.map_err(|e| self.err(&e))?;
            if b.len() as u64 != r.end - r.start {
                return Err(self.short(&r, b.len()));
            }
            let upto = end.min(r.end);
            buf[(pos - offset) as usize..(upto - offset) as usize]
                .copy_from_slice(&b[(pos - r.start) as usize..(upto - r.start) as usize]);
            pos = upto;
        }
        if pos != end {
            return Err(self.short(&(offset..end), (pos - offset) as usize));
        }
        Ok(())
    }

    /// The read-ahead windows covering `offset..end` when the read falls in a window or
    /// continues a run of large reads (starting the windows it needs and the one after);
    /// `None` when it does neither (it then starts a run).
    fn ahead_windows(&self, offset: u64, end: u64) -> Result<Option<Vec<Placed>>, StoreError> {
        let mut a = self.ahead.lock().map_err(|_| self.poisoned())?;
        a.tick += 1;
        let tick = a.tick;
        let found = a.streams.iter().position(|s| {
            s.windows.iter().any(|w| w.0.contains(&offset))
                || (s.end <= offset && offset <= s.reach() + COALESCE_GAP)
        });
        let Some(i) = found else {
            if a.streams.len() >= STREAMS {
                if let Some(old) = (0..a.streams.len()).min_by_key(|&k| a.streams[k].tick) {
                    a.streams.swap_remove(old);
                }
            }
            a.streams.push(Stream {
                end,
                windows: Vec::new(),
                next: AHEAD_MIN,
                tick,
            });
            return Ok(None);
        };
        let s = &mut a.streams[i];
        s.tick = tick;
        s.end = s.end.max(end);
        // windows wholly before this read are done with
        s.windows.retain(|w| w.0.end > offset);
        if s.windows.first().is_none_or(|w| w.0.start > offset) {
            // past the windows (or none yet): a new one from here
            s.windows.clear();
            let r = offset..(offset + s.next.max(end - offset)).min(self.len);
            s.next = (s.next * 2).min(AHEAD_MAX);
            s.windows.push((r.clone(), self.window(r)?));
        }
        // the windows up to this read's end, and one more fetched while they are read
        while s.reach() < self.len && (s.reach() < end || s.windows.len() < 2) {
            let from = s.reach();
            let r = from..(from + s.next).min(self.len);
            s.next = (s.next * 2).min(AHEAD_MAX);
            s.windows.push((r.clone(), self.window(r)?));
        }
        Ok(Some(s.windows.clone()))
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
            return self.read_large(offset, buf);
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

    fn byte(i: u64) -> u8 {
        (i.wrapping_mul(2_654_435_761) >> 13) as u8
    }

    /// A 40 MiB object in memory, read as a copy and a header reader read: right bytes, and
    /// requests few (the process-wide counters: the only test here that sends requests).
    #[test]
    fn read_ahead_and_growing_spans() {
        use crate::remote::stats::io_stats;
        use object_store::memory::InMemory;
        use object_store::{ObjectStoreExt, PutPayload};

        let len: u64 = 40 << 20;
        let data: Vec<u8> = (0..len).map(byte).collect();
        let store = Arc::new(InMemory::new());
        let u = crate::remote::url::parse_remote("s3://b/obj").unwrap();
        let path = object_path(&u, "");
        block_on(store.put(&path, PutPayload::from(data.clone())))
            .unwrap()
            .unwrap();
        let check = |src: &ObjectSource, off: u64, n: usize| {
            let mut buf = vec![0u8; n];
            src.read_at(off, &mut buf).unwrap();
            assert!(
                buf == data[off as usize..off as usize + n],
                "{n} bytes at {off}"
            );
        };

        // two variables' chunks read in turn, each run in file order (150 kB chunks)
        let src = ObjectSource::open(&u, store.clone()).unwrap();
        let before = io_stats().requests;
        let chunk = 150_000u64;
        let (mut a, mut b) = (0u64, 20 << 20);
        while b + chunk <= len {
            check(&src, a, chunk as usize);
            check(&src, b, chunk as usize);
            a += chunk;
            b += chunk;
        }
        // a read back inside a window, and one across the end of the object
        check(&src, 1_000_000, 100_000);
        check(&src, len - 70_000, 70_000);
        let sent = io_stats().requests - before;
        // 282 reads: one HEAD; per run one GET, then windows of 4, 8, 16 MiB (and one more
        // fetched ahead); the read back before the windows one GET
        assert!(sent <= 14, "{sent} requests for 282 reads");

        // a header reader: 100-byte reads scattered over 64 blocks, in a shuffled order
        let src = ObjectSource::open(&u, store).unwrap();
        let before = io_stats().requests;
        let mut k = 7u64;
        for _ in 0..64 {
            k = (k * 37 + 11) % 64;
            check(&src, k * (len / 64) + 300, 100);
        }
        let sent = io_stats().requests - before;
        // one HEAD, then spans of 1, 1, 2, 4, 8, 8, ... blocks: 17 requests, a few more as
        // the 64-block cache drops some of the 80 (65 with one block a miss)
        assert!(sent <= 30, "{sent} requests for 64 scattered reads");
    }
}
