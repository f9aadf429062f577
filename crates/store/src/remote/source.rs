//! A remote object as a [`ByteSource`]: opened by the first ranged GET its reader makes (the
//! object's length from the answer), then more ranged GETs. Small reads
//! (HDF5 and classic metadata) go through aligned blocks kept in a bounded cache, so a header
//! spread over many small structures costs a few requests. The first miss fetches one block; a
//! miss near the first one (in its aligned 16 MiB, nearer to it than to the end of the object)
//! means a header scattered over megabytes: it fetches the aligned 16 MiB around it, later
//! misses 4 MiB (for the first 16 misses, once the 16 MiB proved of use), so such a header
//! costs a handful of requests, while a miss near the end (structures written last) fetches a
//! block. Other misses (a chunk index node among chunks) fetch the 64 KiB around them into the
//! read-ahead pool, unless just past an earlier miss (small reads in order: a block). A miss
//! of a block another reader is fetching waits for that fetch. Large reads (chunks) go to the
//! server, except that a large read continuing where an earlier one ended (a copy reading a
//! variable's chunks in file order) is served from read-ahead windows: 4 MiB, growing to
//! 16 MiB once the run proved long, the next window fetched in the background while the
//! current one is read. The windows are held in one pool of 64 MiB that serves any read
//! falling in them, whichever run fetched them, and a new window never fetches bytes held
//! already, nor bytes a large read had already (a copy reads each chunk once). A run whose
//! variable is stored in stretches between other variables' chunks (it jumps forward) has its
//! windows end where its stretch is predicted to end (as long as its last stretch), so it does
//! not fetch the others' chunks; a full pool drops the windows with the fewest unread bytes
//! first. [`ByteSource::read_ranges`] merges close ranges into one GET and runs the GETs
//! concurrently.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt, Shared};
use object_store::path::Path;
use object_store::{GetOptions, ObjectStore, ObjectStoreExt};

use super::connect::{object_path, remote_error};
use super::runtime::{block_on, permit, spawn};
use super::stats::{count_read, count_request};
use super::url::{Access, Cloud, RemoteUrl};
use crate::error::StoreError;
use crate::source::{check_range, range_len, ByteSource};

/// Size of a cached block: the read-ahead of a small read.
pub const BLOCK: u64 = 512 * 1024;
/// Reads this large or larger go straight to the server (a chunk), not through the blocks
/// (the read-ahead of metadata structures, which are small).
const DIRECT: u64 = 64 * 1024;
/// What a lone small read fetches (aligned): a structure among chunks, e.g. an index node.
const PIECE: u64 = 64 * 1024;
/// What a lone small read fetches when the reader reads a small part of the object
/// ([`Access::Sparse`]): an index node is a few KiB, and the bytes around it are chunks the
/// subset does not want. Small reads in order double it, up to a [`BLOCK`].
const SPARSE_PIECE: u64 = 16 * 1024;
/// Blocks kept (32 MiB).
const MAX_BLOCKS: usize = 64;
/// Ranges at most this far apart are fetched by one request.
const COALESCE_GAP: u64 = 256 * 1024;
/// Largest merged request.
const MAX_SPAN: u64 = 64 << 20;
/// The span (in blocks, aligned) a miss near the first miss fetches (16 MiB): the header
/// continues near where it began, so it is scattered over megabytes (a netCDF-4 file's object
/// headers between its first chunks). A miss near the end of the object (a few structures
/// written last) fetches a block.
const WIDE: u64 = 32;
/// The span of the misses after the wide one (4 MiB), while they are fewer than
/// [`GROW_MISSES`] and the wide span was of use.
const MAX_GROW: u64 = 8;
/// Misses that may fetch wider spans: opening a file reads its header; later small reads (a
/// chunk index now and then) are far apart, and a wide span around them would be wasted.
const GROW_MISSES: u32 = 16;
/// Blocks of the wide span that must have been read (the missed one included) before later
/// misses fetch [`MAX_GROW`] blocks: until then the wide span may have been wasted.
const WIDE_USED: u32 = 2;
/// The first read-ahead window of a run of large reads, and the largest (each window twice
/// the last once the run read [`AHEAD_MAX`] in one stretch or knows its stretches). At most
/// [`STREAMS`] runs are followed, their windows held in one pool of [`POOL`] bytes.
const AHEAD_MIN: u64 = 4 << 20;
const AHEAD_MAX: u64 = 16 << 20;
const STREAMS: usize = 4;
/// Bytes of read-ahead windows held (replayed on a copy's trace, with windows stopping at
/// bytes read and unread bytes kept longest: 1.017x the file's bytes, 96 MiB 1.010x).
const POOL: u64 = 64 << 20;
/// A large read at most this far past the end of a run continues it (a new stretch).
const JUMP: u64 = 16 << 20;
/// Bytes a window of a run in stretches reaches past the stretch's predicted end (stretches
/// of compressed chunks differ a little in length).
const SLACK: u64 = 256 << 10;

/// The slack of a stretch of `l` bytes: [`SLACK`], at most a 32nd of the stretch (a window
/// reaching further fetches the start of the next variable's stretch, read much later).
fn slack(l: u64) -> u64 {
    SLACK.min(l / 32)
}

/// An object in a bucket or on a web server, read by range.
pub struct ObjectSource {
    url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    path: Path,
    len: u64,
    /// The whole object, when the server sent it in answer to the opening GET (it would not
    /// answer a range): every read is served from it.
    whole: Option<Bytes>,
    cache: Mutex<Blocks>,
    ahead: Mutex<Ahead>,
    /// Large reads (chunks) have begun: the header was read.
    data: AtomicBool,
    /// This source's requests and bytes received.
    tally: Arc<Tally>,
}

/// Requests sent and bytes received by one source (the process-wide counts are `io_stats`).
#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// A window being fetched or fetched: its bytes, shared by every reader waiting for them.
type Window = Shared<BoxFuture<'static, Result<Bytes, Arc<object_store::Error>>>>;
/// A window and the bytes of the object it holds.
type Placed = (Range<u64>, Window);

/// Runs of large reads followed for read-ahead, and the windows fetched for them.
#[derive(Default)]
struct Ahead {
    streams: Vec<Stream>,
    /// Windows held, disjoint: any large read falling in them is served from them, whichever
    /// run fetched them (a window on one variable's run also holds other variables' chunks,
    /// read later by their own runs). At most [`POOL`] bytes, the least recently used dropped.
    pool: Vec<Held>,
    tick: u64,
    /// Bytes served to large reads (start -> end, disjoint, adjacent ones merged): a window
    /// stops where they begin, a copy reading each chunk once.
    consumed: BTreeMap<u64, u64>,
}

struct Stream {
    /// Where the last read served ended.
    end: u64,
    /// Where the run's current stretch of adjacent reads began.
    start: u64,
    /// The length of its last stretch: the next one is taken to be as long.
    stretch: Option<u64>,
    /// Where the windows fetched for this run end.
    reach: u64,
    /// The size of the next window.
    next: u64,
    /// Last use, to drop the stream used least recently.
    tick: u64,
}

struct Held {
    range: Range<u64>,
    window: Window,
    /// Last use, to drop the window used least recently.
    tick: u64,
}

impl Ahead {
    /// The held windows covering `from..` without a hole (each marked used), and where
    /// they end (`from` when none holds it).
    fn covered(&mut self, from: u64, upto: u64) -> (Vec<Placed>, u64) {
        let tick = self.tick;
        let mut out = Vec::new();
        let mut pos = from;
        while pos < upto {
            let Some(h) = self.pool.iter_mut().find(|h| h.range.contains(&pos)) else {
                break;
            };
            h.tick = tick;
            out.push((h.range.clone(), h.window.clone()));
            pos = h.range.end;
        }
        (out, pos)
    }

    /// Note bytes `r` as served to a large read.
    fn consume(&mut self, r: Range<u64>) {
        let (mut s, mut e) = (r.start, r.end);
        // merge with the ranges touching it
        if let Some((&ps, &pe)) = self.consumed.range(..=s).next_back() {
            if pe >= s {
                s = ps;
                e = e.max(pe);
            }
        }
        let touching: Vec<u64> = self.consumed.range(s..=e).map(|(&k, _)| k).collect();
        for k in touching {
            if let Some(ke) = self.consumed.remove(&k) {
                e = e.max(ke);
            }
        }
        self.consumed.insert(s, e);
    }

    /// Where the bytes from `pos` on not yet served to large reads end: `pos` when a large
    /// read had byte `pos`, else where the next served range begins (`u64::MAX` when none).
    fn unread_until(&self, pos: u64) -> u64 {
        if let Some((_, &e)) = self.consumed.range(..=pos).next_back() {
            if e > pos {
                return pos;
            }
        }
        self.consumed
            .range(pos..)
            .next()
            .map_or(u64::MAX, |(&s, _)| s)
    }

    /// Where the next held window after `pos` starts (`len` when none); pieces (small) do
    /// not count: a window fetches them again rather than split in two.
    fn next_held(&self, pos: u64, len: u64) -> u64 {
        self.pool
            .iter()
            .filter(|h| h.range.end - h.range.start > PIECE * 2)
            .map(|h| h.range.start)
            .filter(|&s| s > pos)
            .min()
            .unwrap_or(len)
    }

    /// The bytes of `r` not served to large reads yet.
    fn unread(&self, r: &Range<u64>) -> u64 {
        let from = self
            .consumed
            .range(..=r.start)
            .next_back()
            .map_or(r.start, |(&s, _)| s);
        let read: u64 = self
            .consumed
            .range(from..r.end)
            .map(|(&s, &e)| e.min(r.end).saturating_sub(s.max(r.start)))
            .sum();
        (r.end - r.start).saturating_sub(read)
    }

    /// Drop windows until at most [`POOL`] bytes are held, but none overlapping `keep`:
    /// first those with the fewest bytes not read yet by large reads (a copy reads a chunk
    /// once; the bytes left are the chunks of another variable, fetched with this one's),
    /// of those the least recently used.
    fn evict(&mut self, keep: &Range<u64>) {
        let mut held: u64 = self.pool.iter().map(|h| h.range.end - h.range.start).sum();
        while held > POOL {
            let old = (0..self.pool.len())
                .filter(|&k| {
                    let r = &self.pool[k].range;
                    r.end <= keep.start || r.start >= keep.end
                })
                .min_by_key(|&k| (self.unread(&self.pool[k].range), self.pool[k].tick));
            let Some(old) = old else { break };
            let h = self.pool.swap_remove(old);
            held -= h.range.end - h.range.start;
        }
    }
}

/// How a small read is served: from blocks of the cache, or from the read-ahead pool (held
/// there, or fetched there in pieces of this size).
enum Served {
    Blocks(Vec<Bytes>),
    Pool(u64),
}

/// What a miss of the block cache fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Miss {
    /// This many blocks, aligned to their number (from the first to the last not held).
    Blocks(u64),
    /// The pieces of this size (aligned) holding the read, into the read-ahead pool (a lone
    /// structure, a chunk index node among chunks: a block would be mostly chunk bytes,
    /// received again with the chunks).
    Piece(u64),
}

#[derive(Default)]
struct Blocks {
    map: HashMap<u64, Bytes>,
    order: VecDeque<u64>,
    /// Runs of blocks (block numbers) being fetched: a reader missing one of them waits for that fetch.
    fetching: Vec<(Range<u64>, Window)>,
    /// Cache misses so far: the span the next miss fetches depends on them.
    misses: u32,
    /// The block of the first miss (where the header begins).
    first: Option<u64>,
    /// The [`WIDE`]-aligned region of each of the first [`GROW_MISSES`] misses.
    regions: Vec<u64>,
    /// Where the last few misses' fetches ended (bytes): a miss just past one is a reader
    /// going through small structures (or small chunks) in order, not a lone structure.
    ends: VecDeque<u64>,
    /// The wide span (block numbers) fetched by the third miss, and which of its blocks
    /// were read (a bit each): later misses fetch wider spans only once it proved of use.
    wide: Option<(Range<u64>, u64)>,
    /// [`Access::Sparse`]: every miss fetches pieces (see [`SPARSE_PIECE`]).
    sparse: bool,
    /// The size of the last piece a sparse reader's miss fetched.
    last_piece: u64,
}

impl Blocks {
    /// Note that block `i` was read (for judging the wide span).
    fn touch(&mut self, i: u64) {
        if let Some((r, used)) = &mut self.wide {
            if r.contains(&i) {
                *used |= 1 << (i - r.start);
            }
        }
    }

    /// What the miss of block `i` (of an object of `nblocks` blocks) by the read `want`
    /// fetches; `data` once large reads (chunks) have begun. See [`Miss`].
    fn miss(&mut self, i: u64, nblocks: u64, want: &Range<u64>, data: bool) -> Miss {
        let got = self.decide(i, nblocks, want, data);
        let end = match got {
            Miss::Blocks(n) => (i / n * n + n) * BLOCK,
            Miss::Piece(p) => want.end.div_ceil(p) * p,
        };
        if self.ends.len() >= 4 {
            self.ends.pop_front();
        }
        self.ends.push_back(end);
        got
    }

    fn decide(&mut self, i: u64, nblocks: u64, want: &Range<u64>, data: bool) -> Miss {
        let n = self.misses;
        self.misses = n.saturating_add(1);
        if self.sparse {
            // a part of the object: the header's start in one piece, a lone structure in a
            // small one, reading on in order in pieces twice the last
            let next = self
                .ends
                .iter()
                .any(|&e| want.start + SPARSE_PIECE >= e && want.start < e + BLOCK);
            let p = match n {
                0 => PIECE,
                _ if next => (self.last_piece * 2).clamp(SPARSE_PIECE, BLOCK),
                _ => SPARSE_PIECE,
            };
            self.last_piece = p;
            return Miss::Piece(p);
        }
        let region = i / WIDE;
        let earlier = self.regions.iter().filter(|&&r| r == region).count();
        let first = *self.first.get_or_insert(i);
        if n < GROW_MISSES {
            self.regions.push(region);
        }
        if self.wide.is_none() && !data && n < GROW_MISSES {
            // the header continues near where it began (and not at the end of the object,
            // where the structures written last are), or a region missed twice already
            let near_first = n > 0 && first / WIDE == region && i - first.min(i) < nblocks - 1 - i;
            if near_first || earlier >= 2 {
                return Miss::Blocks(WIDE);
            }
        }
        let used = self.wide.as_ref().map_or(0, |w| w.1.count_ones());
        // just past an earlier miss's fetch: reading on in order
        let next = self
            .ends
            .iter()
            .any(|&e| want.start + PIECE >= e && want.start < e + BLOCK);
        match n {
            _ if n < GROW_MISSES && used >= WIDE_USED => Miss::Blocks(MAX_GROW),
            0 | 1 => Miss::Blocks(1),
            _ if next => Miss::Blocks(1),
            _ => Miss::Piece(PIECE),
        }
    }

    /// Block `i` is neither held nor being fetched.
    fn free(&self, i: u64) -> bool {
        !self.map.contains_key(&i) && !self.fetching.iter().any(|f| f.0.contains(&i))
    }

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

/// What the GET opening an object received.
enum Opened {
    /// The object's length and its first bytes (the range asked for, or fewer when the object
    /// is shorter).
    Start { len: u64, bytes: Bytes },
    /// The whole object: the server would not answer the range (an empty object: 416; a web
    /// server ignoring `Range`: 200 with the whole body).
    Whole(Bytes),
}

/// True when `e` says the server did not answer a range with part of the object: a range
/// past the end (416, S3's InvalidRange; the in-memory store's own check), or a 200 with
/// the whole body, which object_store refuses before reading it.
fn range_refused(e: &object_store::Error) -> bool {
    if matches!(e, object_store::Error::NotSupported { .. }) {
        // the HTTP store: "Range request not supported"
        return true;
    }
    let t = e.to_string();
    t.contains("416 Range Not Satisfiable")
        || t.contains("InvalidRange")
        || t.contains("Wanted range starting at 0,")
        || t.contains("non-partial response when range requested")
}

/// The GET opening an object: its first `n` bytes and its length (from Content-Range). When
/// the server does not answer the range ([`range_refused`]) the whole object is asked for
/// (object_store drops a 200's body unread, so that costs a second GET).
async fn open_get(
    store: &dyn ObjectStore,
    path: &Path,
    n: u64,
) -> Result<Opened, object_store::Error> {
    let _p = permit().await;
    count_request();
    let opts = GetOptions::new().with_range(Some(0..n));
    match store.get_opts(path, opts).await {
        Ok(got) => {
            let len = got.meta.size;
            let bytes = got.bytes().await?;
            count_read(bytes.len() as u64);
            Ok(Opened::Start { len, bytes })
        }
        Err(e) if range_refused(&e) => {
            count_request();
            let bytes = store
                .get_opts(path, GetOptions::new())
                .await?
                .bytes()
                .await?;
            count_read(bytes.len() as u64);
            Ok(Opened::Whole(bytes))
        }
        Err(e) => Err(e),
    }
}

/// The length of the object `u` names, by one HEAD request (and, for a failure on object
/// storage, a one-byte GET whose answer names the cause).
///
/// # Errors
/// [`StoreError::Remote`] naming the URL, the cause (no such object or bucket, denied,
/// unreachable) and the cure.
pub(crate) fn head_len(u: &RemoteUrl, store: &dyn ObjectStore) -> Result<u64, StoreError> {
    let path = object_path(u, "");
    let meta = block_on(async {
        let _p = permit().await;
        count_request();
        match store.head(&path).await {
            Ok(m) => Ok(m),
            // a plain web server's 404 says all there is to say
            Err(e @ object_store::Error::NotFound { .. }) if u.cloud == Cloud::Http => Err(e),
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
    Ok(meta.size)
}

impl ObjectSource {
    /// Open the object `u` names by the first GET its reader would make: the first piece
    /// ([`Access::Sparse`]) or block ([`Access::Whole`]), kept as the cache's first miss, the
    /// object's length read from the answer (Content-Range). No HEAD.
    ///
    /// # Errors
    /// [`StoreError::Remote`] naming the URL, the cause (no such object or bucket, denied,
    /// unreachable; a GET's answer carries S3's error code) and the cure.
    pub(crate) fn open(u: &RemoteUrl, store: Arc<dyn ObjectStore>) -> Result<Self, StoreError> {
        let path = object_path(u, "");
        let sparse = u.access == Access::Sparse;
        let first = if sparse { PIECE } else { BLOCK };
        let opened = block_on(open_get(store.as_ref(), &path, first))?
            .map_err(|e| remote_error(u, "", &e))?;
        let (len, whole, bytes, requests) = match opened {
            Opened::Whole(b) => (b.len() as u64, Some(b.clone()), b, 2),
            Opened::Start { len, bytes } => (len, None, bytes, 1),
        };
        let s = ObjectSource {
            url: u.clone(),
            store,
            path,
            len,
            whole,
            cache: Mutex::new(Blocks {
                sparse,
                ..Blocks::default()
            }),
            ahead: Mutex::new(Ahead::default()),
            data: AtomicBool::new(false),
            tally: Arc::default(),
        };
        s.tally.requests.fetch_add(requests, Ordering::Relaxed);
        s.tally
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let want = first.min(len);
        if s.whole.is_some() || len == 0 {
            return Ok(s);
        }
        if bytes.len() as u64 != want {
            return Err(s.short(&(0..want), bytes.len()));
        }
        {
            // the first miss, as a reader's first read (its magic number at byte 0) makes it:
            // a block, or a piece into the read-ahead pool
            let mut c = s.cache.lock().map_err(|_| s.poisoned())?;
            let miss = c.miss(0, len.div_ceil(BLOCK), &(0..1), false);
            debug_assert_eq!(
                miss,
                if sparse {
                    Miss::Piece(PIECE)
                } else {
                    Miss::Blocks(1)
                }
            );
            if sparse {
                let window: Window = futures::future::ready(Ok(bytes)).boxed().shared();
                let mut a = s.ahead.lock().map_err(|_| s.poisoned())?;
                a.pool.push(Held {
                    range: 0..want,
                    window,
                    tick: 0,
                });
            } else {
                c.put(0, bytes);
            }
        }
        Ok(s)
    }

    /// One ranged GET of this object, counted in its tally; runs in the background from now on.
    fn get(
        &self,
        r: Range<u64>,
    ) -> impl std::future::Future<Output = Result<Bytes, object_store::Error>> + Send + 'static
    {
        let (store, path, tally) = (self.store.clone(), self.path.clone(), self.tally.clone());
        async move {
            let b = fetch(store.as_ref(), &path, r).await?;
            tally.requests.fetch_add(1, Ordering::Relaxed);
            tally.bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
            Ok(b)
        }
    }

    /// Ranged GETs sent by this source and the bytes they returned.
    #[cfg(test)]
    fn sent(&self) -> (u64, u64) {
        (
            self.tally.requests.load(Ordering::Relaxed),
            self.tally.bytes.load(Ordering::Relaxed),
        )
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

    /// The blocks `first..=last` holding the small read `want`, from the cache, from a fetch
    /// of another reader already under way, or fetched (runs of missing blocks by one request
    /// each, concurrently); [`Served::Pool`] when the read is to be served from the
    /// read-ahead pool (held there, or a miss fetching [`Miss::Piece`] of that size).
    fn blocks(&self, first: u64, last: u64, want: &Range<u64>) -> Result<Served, StoreError> {
        let mut have: Vec<Option<Bytes>> = vec![None; (last - first + 1) as usize];
        // spans of blocks to wait for: (blocks, their fetch, fetched by this reader)
        let mut waits: Vec<(Range<u64>, Window, bool)> = Vec::new();
        {
            let mut c = self.cache.lock().map_err(|_| self.poisoned())?;
            let mut runs: Vec<Range<u64>> = Vec::new();
            for i in first..=last {
                if let Some(b) = c.get(i) {
                    c.touch(i);
                    have[(i - first) as usize] = Some(b);
                } else if let Some(f) = c.fetching.iter().find(|f| f.0.contains(&i)) {
                    // another reader is fetching it: wait for that fetch, do not send another
                    if !waits.iter().any(|w| w.0 == f.0) {
                        waits.push((f.0.clone(), f.1.clone(), false));
                    }
                } else {
                    match runs.last_mut() {
                        Some(r) if r.end == i => r.end = i + 1,
                        _ => runs.push(i..i + 1),
                    }
                }
            }
            let nblocks = self.len.div_ceil(BLOCK);
            if !runs.is_empty() {
                // bytes a chunk window or a piece holds (or is fetching) are not fetched again
                let mut a = self.ahead.lock().map_err(|_| self.poisoned())?;
                if a.covered(want.start, want.end).1 >= want.end {
                    return Ok(Served::Pool(PIECE));
                }
            }
            let data = self.data.load(Ordering::Relaxed);
            let mut spans = Vec::with_capacity(runs.len());
            for r in &runs {
                match c.miss(r.start, nblocks, want, data) {
                    Miss::Blocks(n) => spans.push(n),
                    Miss::Piece(p) => return Ok(Served::Pool(p)),
                }
            }
            for (mut r, span) in runs.into_iter().zip(spans) {
                // the span's blocks from its first to its last one neither held nor being
                // fetched: one request (held blocks between them are fetched again)
                let a = r.start / span * span;
                let b = (a + span).min(nblocks);
                if let Some(s) = (a..r.start).find(|&k| c.free(k)) {
                    r.start = s;
                }
                if let Some(e) = (r.end..b).rev().find(|&k| c.free(k)) {
                    r.end = e + 1;
                }
                if span == WIDE {
                    // the blocks this read wants count as read
                    let want = (first.max(r.start) - r.start)..(last.min(r.end - 1) + 1 - r.start);
                    c.wide = Some((r.clone(), want.fold(0, |m, k| m | 1 << k)));
                }
                let w = self.window(r.start * BLOCK..(r.end * BLOCK).min(self.len))?;
                c.fetching.push((r.clone(), w.clone()));
                waits.push((r, w, true));
            }
        }
        if waits.is_empty() {
            return Ok(Served::Blocks(have.into_iter().flatten().collect()));
        }
        let got = block_on(futures::future::join_all(waits.iter().map(|w| w.1.clone())))?;
        let mut c = self.cache.lock().map_err(|_| self.poisoned())?;
        let mut failed = None;
        for ((r, _, mine), got) in waits.iter().zip(got) {
            if *mine {
                c.fetching.retain(|f| f.0 != *r);
            }
            let bytes = match got {
                Ok(b) => b,
                Err(e) => {
                    failed.get_or_insert_with(|| self.err(&e));
                    continue;
                }
            };
            let want = ((r.end * BLOCK).min(self.len) - r.start * BLOCK) as usize;
            if bytes.len() != want {
                failed.get_or_insert_with(|| {
                    self.short(&(r.start * BLOCK..r.end * BLOCK), bytes.len())
                });
                continue;
            }
            for i in r.clone() {
                let s = ((i - r.start) * BLOCK) as usize;
                let e = (s + BLOCK as usize).min(bytes.len());
                let b = bytes.slice(s..e);
                if (first..=last).contains(&i) {
                    have[(i - first) as usize] = Some(b.clone());
                }
                if *mine {
                    c.put(i, b);
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(Served::Blocks(have.into_iter().flatten().collect()))
    }

    /// A window of bytes `r`, fetched in the background from now on.
    fn window(&self, r: Range<u64>) -> Result<Window, StoreError> {
        let get = self.get(r);
        let h = spawn(async move { get.await.map_err(Arc::new) })?;
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
        self.data.store(true, Ordering::Relaxed);
        let end = offset + buf.len() as u64;
        let sparse = self.url.access == Access::Sparse;
        let windows = if end - offset > AHEAD_MIN || sparse {
            // a read this large is an efficient request already; a sparse reader reads a few
            // chunks, and windows ahead would fetch chunks it does not want
            None
        } else {
            self.ahead_windows(offset, end)?
        };
        let Some(windows) = windows else {
            self.ahead
                .lock()
                .map_err(|_| self.poisoned())?
                .consume(offset..end);
            let b = block_on(self.get(offset..end))?.map_err(|e| self.err(&e))?;
            if b.len() != buf.len() {
                return Err(self.short(&(offset..end), b.len()));
            }
            buf.copy_from_slice(&b);
            return Ok(());
        };
        self.copy_windows(windows, offset, buf)
    }

    /// Copy `buf.len()` bytes at `offset` out of `windows` (in order, covering them; the
    /// read may span the end of one window and the start of the next).
    fn copy_windows(
        &self,
        windows: Vec<Placed>,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<(), StoreError> {
        let end = offset + buf.len() as u64;
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

    /// A small read served from the read-ahead pool: from the windows holding it, else by
    /// fetching the aligned pieces of `piece` bytes around it into the pool.
    fn read_piece(&self, offset: u64, buf: &mut [u8], piece: u64) -> Result<(), StoreError> {
        let end = offset + buf.len() as u64;
        let windows = {
            let mut a = self.ahead.lock().map_err(|_| self.poisoned())?;
            a.tick += 1;
            let (held, upto) = a.covered(offset, end);
            if upto >= end {
                held
            } else {
                let r =
                    offset / piece * piece..end.div_ceil(piece).saturating_mul(piece).min(self.len);
                let window = self.window(r.clone())?;
                let tick = a.tick;
                a.pool.push(Held {
                    range: r.clone(),
                    window: window.clone(),
                    tick,
                });
                a.evict(&r);
                vec![(r, window)]
            }
        };
        self.copy_windows(windows, offset, buf)
    }

    /// The read-ahead windows covering `offset..end` when the read falls in held windows or
    /// continues a run of large reads (starting the windows it needs and the one after, but
    /// not fetching again what is held); `None` when it does neither (it then starts a run).
    fn ahead_windows(&self, offset: u64, end: u64) -> Result<Option<Vec<Placed>>, StoreError> {
        let mut a = self.ahead.lock().map_err(|_| self.poisoned())?;
        a.tick += 1;
        let tick = a.tick;
        // a read continuing a run, or else jumping a little forward of one (a variable's
        // chunks stored in stretches between other variables' chunks)
        let found = a
            .streams
            .iter()
            .position(|s| s.end <= offset && offset <= s.reach.max(s.end) + COALESCE_GAP)
            .or_else(|| {
                a.streams
                    .iter()
                    .position(|s| s.end < offset && offset <= s.end + JUMP)
            });
        let Some(i) = found else {
            let (held, upto) = a.covered(offset, end);
            if upto >= end {
                a.consume(offset..end);
                return Ok(Some(held));
            }
            if a.streams.len() >= STREAMS {
                if let Some(old) = (0..a.streams.len()).min_by_key(|&k| a.streams[k].tick) {
                    a.streams.swap_remove(old);
                }
            }
            a.streams.push(Stream {
                end,
                start: offset,
                stretch: None,
                reach: end,
                next: AHEAD_MIN,
                tick,
            });
            return Ok(None);
        };
        let cap = {
            let s = &mut a.streams[i];
            s.tick = tick;
            if offset > s.end + COALESCE_GAP {
                // a new stretch: the last one ended at s.end
                let l = s.end - s.start;
                s.stretch = Some(l);
                s.start = offset;
                // one window for a stretch as long as the last
                s.next = (l + slack(l)).clamp(AHEAD_MIN, AHEAD_MAX);
            }
            s.end = s.end.max(end);
            // windows stop where this stretch ends if as long as the last (or a multiple,
            // once longer), not fetching the other variables' chunks after it
            match s.stretch {
                Some(l) if l > 0 => {
                    let mut cap = s.start + l + slack(l);
                    while cap <= end {
                        cap += l;
                    }
                    cap.min(self.len)
                }
                _ => self.len,
            }
        };
        // windows up to this read's end, each from the first byte not held to the next held
        // window at most, and one more after the window holding its end, fetched while the
        // held ones are read
        loop {
            let (held, from) = a.covered(offset, end);
            let ahead = from >= end;
            let from = if ahead {
                let after = held.last().map_or(end, |w| w.0.end);
                // not ahead into bytes held, or read already (a copy reads a chunk once)
                if after >= cap
                    || a.covered(after, after + 1).1 > after
                    || a.unread_until(after) == after
                {
                    break;
                }
                after
            } else {
                from
            };
            let s = &mut a.streams[i];
            let size = s.next.max(end.saturating_sub(from));
            // windows grow once the run proved long (or its stretches are known): a first
            // stretch may end anywhere, and past it lie other variables' chunks
            if s.stretch.is_some() || s.end - s.start >= AHEAD_MAX {
                s.next = (s.next * 2).min(AHEAD_MAX);
            }
            let to = (from + size)
                .min(a.next_held(from, self.len))
                .min(a.unread_until(from.max(end)).max(end))
                .min(cap.max(end));
            let window = self.window(from..to)?;
            a.streams[i].reach = a.streams[i].reach.max(to);
            a.pool.push(Held {
                range: from..to,
                window,
                tick,
            });
            if ahead {
                break;
            }
        }
        a.evict(&(offset..end));
        let (held, upto) = a.covered(offset, end);
        if upto < end {
            return Err(self.short(&(offset..end), (upto - offset) as usize));
        }
        a.consume(offset..end);
        Ok(Some(held))
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
        if let Some(w) = &self.whole {
            buf.copy_from_slice(&w[offset as usize..offset as usize + buf.len()]);
            return Ok(());
        }
        let end = offset + buf.len() as u64;
        if buf.len() as u64 >= DIRECT {
            return self.read_large(offset, buf);
        }
        let (first, last) = (offset / BLOCK, (end - 1) / BLOCK);
        let blocks = match self.blocks(first, last, &(offset..end))? {
            Served::Blocks(b) => b,
            Served::Pool(piece) => return self.read_piece(offset, buf, piece),
        };
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
        if let Some(w) = &self.whole {
            return Ok(ranges
                .iter()
                .map(|r| w[r.start as usize..r.end as usize].to_vec())
                .collect());
        }
        // a sparse reader's ranges are a few chunks: bytes between them are not wanted
        let gap = match self.url.access {
            Access::Sparse => SPARSE_PIECE,
            Access::Whole => COALESCE_GAP,
        };
        let spans = merge_within(ranges, gap);
        let got = block_on(futures::future::try_join_all(
            spans.iter().map(|s| self.get(s.clone())),
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
#[cfg(test)]
fn merge(ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    merge_within(ranges, COALESCE_GAP)
}

/// [`merge`] with ranges at most `gap` apart merged.
fn merge_within(ranges: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.end > r.start).cloned().collect();
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(last)
                if r.start <= last.end.saturating_add(gap)
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

    /// An object of `len` bytes ([`byte`]) in a store in memory.
    fn object(len: u64) -> (Arc<object_store::memory::InMemory>, RemoteUrl, Vec<u8>) {
        use object_store::{ObjectStoreExt, PutPayload};
        let data: Vec<u8> = (0..len).map(byte).collect();
        let store = Arc::new(object_store::memory::InMemory::new());
        let u = crate::remote::url::parse_remote("s3://b/obj").unwrap();
        let path = object_path(&u, "");
        block_on(store.put(&path, PutPayload::from(data.clone())))
            .unwrap()
            .unwrap();
        (store, u, data)
    }

    /// A 40 MiB object in memory, read as a copy and a header reader read: right bytes, and
    /// requests few.
    #[test]
    fn read_ahead_and_growing_spans() {
        let len: u64 = 40 << 20;
        let (store, u, data) = object(len);
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
        let sent = src.sent().0;
        // 282 reads: per run one GET, then windows of 4, 8, 16 MiB (and one more
        // fetched ahead); the read back before the windows one GET
        assert!(sent <= 14, "{sent} requests for 282 reads");

        // a header reader: 100-byte reads scattered over 64 blocks, in a shuffled order
        let src = ObjectSource::open(&u, store).unwrap();
        let mut k = 7u64;
        for _ in 0..64 {
            k = (k * 37 + 11) % 64;
            check(&src, k * (len / 64) + 300, 100);
        }
        let sent = src.sent().0;
        // misses far apart: a block each, then 64 KiB pieces
        assert!(sent <= 30, "{sent} requests for 64 scattered reads");
    }

    /// A sparse reader (a subset): the header's start in one 64 KiB piece, a lone index node
    /// in a 16 KiB piece, each chunk by its own GET with nothing ahead: the bytes received
    /// are about the bytes read. The same reads by a whole reader receive blocks and windows.
    #[test]
    fn a_sparse_reader_receives_about_what_it_reads() {
        let len: u64 = 40 << 20;
        let (store, mut u, data) = object(len);
        let reads = |src: &ObjectSource| {
            let check = |off: u64, n: usize| {
                let mut buf = vec![0u8; n];
                src.read_at(off, &mut buf).unwrap();
                assert!(
                    buf == data[off as usize..off as usize + n],
                    "{n} bytes at {off}"
                );
            };
            // the header: small reads in its first 20 kB
            for off in (0..20_000).step_by(500) {
                check(off, 200);
            }
            // a chunk index node far away, then two chunks side by side and one more
            check(30_000_000, 3_000);
            check(10_000_000, 200_000);
            check(10_200_000, 200_000);
            check(25_000_000, 200_000);
            src.sent()
        };
        let whole = reads(&ObjectSource::open(&u, store.clone()).unwrap());
        u.access = Access::Sparse;
        let sparse = reads(&ObjectSource::open(&u, store).unwrap());
        // the header's piece, the node's piece, three chunks
        assert_eq!(
            sparse,
            (5, 64 * 1024 + 16 * 1024 + 600_000),
            "whole: {whole:?}"
        );
        assert!(whole.1 > 2 * sparse.1, "whole {whole:?}, sparse {sparse:?}");
    }

    /// Readers missing the same block at once: one request, every reader the right bytes.
    #[test]
    fn concurrent_misses_share_one_fetch() {
        use object_store::throttle::{ThrottleConfig, ThrottledStore};
        let (mem, u, data) = object(40 << 20);
        // each GET takes 200 ms, so the readers all miss while the first fetch is under way
        let cfg = ThrottleConfig {
            wait_get_per_call: std::time::Duration::from_millis(200),
            ..ThrottleConfig::default()
        };
        let src = ObjectSource::open(&u, Arc::new(ThrottledStore::new(mem, cfg))).unwrap();
        // block 0 came with the opening GET; block 70 is far from it (one block, not a span)
        let base = 70 * BLOCK;
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (src, barrier, data) = (&src, &barrier, &data);
                s.spawn(move || {
                    barrier.wait();
                    let off = base + 1000 + t * 5000;
                    let mut buf = vec![0u8; 3000];
                    src.read_at(off, &mut buf).unwrap();
                    assert!(buf == data[off as usize..off as usize + 3000], "reader {t}");
                });
            }
        });
        assert_eq!(
            src.sent(),
            (2, 2 * BLOCK),
            "requests and bytes: the opening block 0, then block 70 once for 4 readers"
        );
    }

    /// The opening GET gives the object's length and its first block (a whole reader) or
    /// piece (a sparse one), not fetched again; an object shorter than that range, and an
    /// empty one (the in-memory store refuses the range, as S3 answers 416), open too.
    #[test]
    fn the_opening_get_is_the_first_read() {
        for (len, access, first) in [
            (3 << 20, Access::Whole, BLOCK),
            (3 << 20, Access::Sparse, PIECE),
            (1000, Access::Whole, 1000),
            (1000, Access::Sparse, 1000),
        ] {
            let (store, mut u, data) = object(len);
            u.access = access;
            let src = ObjectSource::open(&u, store).unwrap();
            assert_eq!(src.len(), len, "{access:?} {len}");
            assert_eq!(src.sent(), (1, first), "{access:?} {len}: opened");
            // reads in the first bytes: no request
            for (off, n) in [(0u64, 8usize), (100, 300), (first - 10, 10)] {
                let mut buf = vec![0u8; n];
                src.read_at(off, &mut buf).unwrap();
                assert!(
                    buf == data[off as usize..off as usize + n],
                    "{n} bytes at {off}"
                );
            }
            assert_eq!(
                src.sent(),
                (1, first),
                "{access:?} {len}: read in the first bytes"
            );
        }
        let (store, u, _) = object(0);
        let src = ObjectSource::open(&u, store).unwrap();
        assert_eq!(src.len(), 0);
        // the refused range, then the whole (empty) object
        assert_eq!(src.sent(), (2, 0));
        assert_eq!(src.read_vec(0, 0).unwrap(), Vec::<u8>::new());
        let (store, _, _) = object(10);
        let u = crate::remote::url::parse_remote("s3://b/missing").unwrap();
        let Err(e) = ObjectSource::open(&u, store) else {
            panic!("opened a missing object")
        };
        assert_eq!(
            e.to_string(),
            "s3://b/missing: no such object; check the key (the path after the bucket)"
        );
    }

    /// Two variables stored in alternating stretches of 16 chunks (as netCDF-C writes a file
    /// record by record), copied one after the other: each byte received about once (before
    /// the windows stopped at a stretch's end and were pooled, twice), requests few.
    #[test]
    fn stretches_of_interleaved_variables() {
        let (na, nb) = (80_000u64, 200_000u64);
        let period = 16 * (na + nb);
        let len = 20 * period;
        let (store, u, data) = object(len);
        let src = ObjectSource::open(&u, store).unwrap();
        let check = |off: u64, n: u64| {
            let mut buf = vec![0u8; n as usize];
            src.read_at(off, &mut buf).unwrap();
            assert!(
                buf == data[off as usize..(off + n) as usize],
                "{n} bytes at {off}"
            );
        };
        for p in 0..20 {
            for k in 0..16 {
                check(p * period + k * na, na);
            }
        }
        for p in 0..20 {
            for k in 0..16 {
                check(p * period + 16 * na + k * nb, nb);
            }
        }
        let (requests, bytes) = src.sent();
        // 40 stretches: one window each, a few more while the first stretches are learnt;
        // b's stretches fetched with a's first ones are kept (unread bytes evicted last)
        eprintln!("{requests} requests, {bytes} bytes received for {len}");
        assert!(
            bytes * 100 <= len * 105 && requests <= 60,
            "{requests} requests, {bytes} bytes received for {len}"
        );
    }

    /// Header reads on an object in memory: (1) a header at both ends of an 8 MiB object
    /// fetches two blocks, not the object; (2) the misses of a header scattered over the first
    /// 16 MiB of a 52 MB object (the block order of `ncdump-rs -hs` of a 2000-variable file)
    /// cost 6 GETs; (3) after chunk reads began, a lone small read fetches a 64 KiB piece.
    #[test]
    fn header_misses() {
        let read = |src: &ObjectSource, off: u64, n: usize| {
            let mut buf = vec![0u8; n];
            src.read_at(off, &mut buf).unwrap();
            assert!(
                buf.iter()
                    .enumerate()
                    .all(|(k, &b)| b == byte(off + k as u64)),
                "{n} bytes at {off}"
            );
        };
        let len = (8 << 20) + 300_000;
        let (store, u, _) = object(len);
        let src = ObjectSource::open(&u, store).unwrap();
        for k in 0..40 {
            read(&src, 96 + k * 400, 300);
            read(&src, len - 2000 + k * 20, 16);
        }
        assert_eq!(
            src.sent(),
            (2, BLOCK + (len - 16 * BLOCK)),
            "8 MiB + 300 kB"
        );

        let len = 52_496_258;
        let (store, u, _) = object(len);
        let src = ObjectSource::open(&u, store).unwrap();
        let order = [
            0, 13, 16, 20, 31, 5, 9, 14, 25, 18, 22, 32, 3, 1, 27, 12, 19, 8, 24, 15, 30, 2, 10,
            17, 28, 7, 21, 4, 29, 26, 100, 99, 86, 87, 6, 11, 23, 38, 55,
        ];
        for round in 0..3 {
            for b in order {
                read(
                    &src,
                    (b * BLOCK + 5000 + round * 70_000).min(len - 100),
                    100,
                );
            }
        }
        let (requests, bytes) = src.sent();
        assert!(requests <= 6, "{requests} GETs, {bytes} bytes");
        assert!(bytes <= 40 << 20, "{requests} GETs, {bytes} bytes");

        // a copy: the header, a chunk, then index nodes far apart
        let len = 64 << 20;
        let (store, u, _) = object(len);
        let src = ObjectSource::open(&u, store).unwrap();
        read(&src, 0, 2000);
        read(&src, 30 << 20, 4000);
        read(&src, 1 << 20, 200_000);
        let before = src.sent();
        for k in 1..6u64 {
            read(&src, ((k * 9) << 20) + 4321, 3000);
        }
        let after = src.sent();
        assert_eq!(
            (after.0 - before.0, after.1 - before.1),
            (5, 5 * PIECE),
            "5 lone index reads"
        );
    }
}
