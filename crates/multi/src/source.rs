//! The joined view's [`DataSource`]: each hyperslab along a join dimension is split at the
//! files' boundaries, each piece read from its file, and the pieces put back in row-major
//! order. Files are opened on demand and at most [`crate::JoinOptions::max_open`] are kept
//! open (least recently used closed first), so a join of 100,000 files needs neither
//! 100,000 descriptors nor their metadata in memory at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use nc_dataset::{ChunkRequest, DataError, DataSource, Dataset, MaybeBytes, Region, Slab};
use nc_dataset::{RecordLayout, Values, VarId};
use nc_dispatch::Opened;
use nc_store::ByteSource;

use crate::plan::{dim_path, vars_by_path, Plan, VarRoute};
use crate::JoinError;

/// One open input and its variables by path.
struct Entry {
    opened: Opened,
    vars: HashMap<String, VarId>,
}

impl Entry {
    fn var(&self, route: &VarRoute) -> Result<VarId, DataError> {
        self.vars
            .get(&route.path)
            .copied()
            .ok_or_else(|| format!("variable {:?} is gone", route.path).into())
    }
}

/// An open input, as its `Opened`.
struct OpenedRef(Arc<Entry>);

impl std::ops::Deref for OpenedRef {
    type Target = Opened;
    fn deref(&self) -> &Opened {
        &self.0.opened
    }
}

/// The inputs kept open, with the tick each was last used at; and the inputs' bytes opened
/// (without their metadata) to read chunks whose place [`crate::kept::Kept`] holds.
#[derive(Default)]
struct Cache {
    open: Lru<Entry>,
    bytes: Lru<dyn ByteSource>,
}

/// Values kept per input, at most a bound of them: the least recently used goes first.
struct Lru<T: ?Sized> {
    tick: u64,
    /// (input, when last used, value)
    items: Vec<(usize, u64, Arc<T>)>,
}

impl<T: ?Sized> Default for Lru<T> {
    fn default() -> Lru<T> {
        Lru {
            tick: 0,
            items: Vec::new(),
        }
    }
}

impl<T: ?Sized> Lru<T> {
    fn new(items: impl IntoIterator<Item = (usize, Arc<T>)>) -> Lru<T> {
        Lru {
            tick: 0,
            items: items.into_iter().map(|(i, v)| (i, 0, v)).collect(),
        }
    }

    /// Input `i`'s value, marked as just used.
    fn get(&mut self, i: usize) -> Option<Arc<T>> {
        self.tick += 1;
        let tick = self.tick;
        let e = self.items.iter_mut().find(|e| e.0 == i)?;
        e.1 = tick;
        Some(Arc::clone(&e.2))
    }

    /// Keep `v` for input `i`, the least recently used dropped to stay under `max`; the value
    /// already kept for `i` when another thread kept one first.
    fn put(&mut self, i: usize, v: Arc<T>, max: usize) -> Arc<T> {
        if let Some(kept) = self.get(i) {
            return kept;
        }
        while self.items.len() >= max {
            match (0..self.items.len()).min_by_key(|&k| self.items[k].1) {
                Some(k) => drop(self.items.swap_remove(k)),
                None => break,
            }
        }
        self.items.push((i, self.tick, Arc::clone(&v)));
        v
    }
}

/// The data of the joined view (see the module docs).
pub struct JoinSource {
    plan: Plan,
    max_open: usize,
    cache: Mutex<Cache>,
    /// Inputs opened again (their metadata parsed) after the plan.
    reopened: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for JoinSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinSource")
            .field("inputs", &self.plan.inputs.len())
            .field("max_open", &self.max_open)
            .finish()
    }
}

/// Input pieces of a slab along the join axis: (input, the slab in that input).
type Piece = (usize, Vec<u64>, Vec<u64>);

impl JoinSource {
    pub(crate) fn new(plan: Plan, max_open: usize, kept: Vec<(usize, Opened)>) -> JoinSource {
        let open = Lru::new(kept.into_iter().map(|(i, opened)| {
            let vars = vars_by_path(opened.dataset());
            (i, Arc::new(Entry { opened, vars }))
        }));
        JoinSource {
            plan,
            max_open: max_open.max(1),
            reopened: 0.into(),
            cache: Mutex::new(Cache {
                open,
                bytes: Lru::default(),
            }),
        }
    }

    /// How many inputs are open now (for tests of the bound).
    pub fn open_inputs(&self) -> usize {
        self.cache.lock().map_or(0, |c| c.open.items.len())
    }

    /// How many times an input was opened again (its metadata parsed) after the plan: a
    /// copy whose chunks and coordinates the plan kept opens none.
    pub fn reopened(&self) -> usize {
        self.reopened.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The plan the view reads by.
    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Input `i` opened (kept among the open inputs, or opened again and checked to have
    /// the records it was planned with).
    pub(crate) fn opened(
        &self,
        i: usize,
    ) -> Result<impl std::ops::Deref<Target = Opened>, DataError> {
        self.input(i).map(OpenedRef)
    }

    /// Input `i`, from the cache or opened again (and checked to be as planned).
    fn input(&self, i: usize) -> Result<Arc<Entry>, DataError> {
        if let Some(e) = self.lock().open.get(i) {
            return Ok(e);
        }
        // opened outside the lock, so other threads read meanwhile
        let loc = &self.plan.inputs[i];
        self.reopened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let opened = nc_dispatch::open(loc).map_err(JoinError::Open)?;
        self.check_unchanged(i, &opened)?;
        let vars = vars_by_path(opened.dataset());
        let entry = Arc::new(Entry { opened, vars });
        // another thread may have opened it first: one is kept
        Ok(self.lock().open.put(i, entry, self.max_open))
    }

    /// Input `i`'s bytes (kept among the last [`crate::JoinOptions::max_open`] opened).
    fn bytes(&self, i: usize) -> Result<Arc<dyn ByteSource>, DataError> {
        if let Some(b) = self.lock().bytes.get(i) {
            return Ok(b);
        }
        let src = self.plan.inputs[i]
            .open_source()
            .map_err(|e| DataError::from(e.to_string()))?;
        Ok(self.lock().bytes.put(i, src, self.max_open))
    }

    /// The cache (a panic elsewhere while holding it leaves it usable).
    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The join coordinate `route` is of, when its values are kept for every input: the
    /// join's index.
    fn kept_coordinate(&self, route: &VarRoute) -> Option<usize> {
        let (_, j) = route.join?;
        let join = &self.plan.joins[j];
        (join.coord.as_deref() == Some(route.path.as_str())
            && self.plan.kept.all_coords(j, &join.offsets))
        .then_some(j)
    }

    /// A reopened input must still have the join lengths it was planned with.
    fn check_unchanged(&self, i: usize, opened: &Opened) -> Result<(), JoinError> {
        let ds = opened.dataset();
        for j in &self.plan.joins {
            let was = j.offsets[i + 1] - j.offsets[i];
            let len = (0..ds.dims.len())
                .map(nc_dataset::DimId)
                .find(|&d| dim_path(ds, d) == j.path)
                .map(|d| ds.dim(d).len);
            if len != Some(was) {
                return Err(JoinError::Changed {
                    file: self.plan.inputs[i].display(),
                    dim: j.path.clone(),
                    len: len.unwrap_or(0),
                    was,
                });
            }
        }
        Ok(())
    }

    /// The pieces of `slab` of a joined variable (`axis` along join dimension `j`).
    fn pieces(&self, axis: usize, j: usize, slab: Slab) -> Vec<Piece> {
        self.plan.joins[j]
            .pieces(slab.start[axis], slab.count[axis])
            .into_iter()
            .map(|(i, at, n)| {
                let mut start = slab.start.to_vec();
                let mut count = slab.count.to_vec();
                start[axis] = at;
                count[axis] = n;
                (i, start, count)
            })
            .collect()
    }

    /// Read every piece with `read`, then interleave them: for each index before the join
    /// axis, each piece's block in turn.
    fn gather<T, R, E>(
        &self,
        axis: usize,
        slab: Slab,
        pieces: &[Piece],
        read: R,
        mut extend: E,
    ) -> Result<Option<T>, DataError>
    where
        R: Fn(usize, &Slab) -> Result<Option<T>, DataError>,
        E: FnMut(&mut Option<T>, &T, usize, usize),
        T: Len,
    {
        let outer: u64 = slab.count[..axis].iter().product();
        let mut parts = Vec::with_capacity(pieces.len());
        for (i, start, count) in pieces {
            match read(*i, &Slab::new(start, count))? {
                Some(p) => parts.push(p),
                None => return Ok(None),
            }
        }
        if parts.len() == 1 {
            return Ok(parts.pop());
        }
        let mut out: Option<T> = None;
        for o in 0..outer as usize {
            for p in &parts {
                let block = p.len() / (outer as usize).max(1);
                extend(&mut out, p, o * block, block);
            }
        }
        Ok(out)
    }
}

/// Lengths of the two kinds of pieces.
trait Len {
    fn len(&self) -> usize;
}
impl Len for Values {
    fn len(&self) -> usize {
        Values::len(self)
    }
}
impl Len for Vec<u8> {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
}

impl DataSource for JoinSource {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let route = &self.plan.routes[var.0];
        let Some((axis, j)) = route.join else {
            let e = self.input(0)?;
            return e
                .opened
                .source()
                .read(e.opened.dataset(), e.var(route)?, slab);
        };
        let pieces = self.pieces(axis, j, slab);
        let rebase = &self.plan.joins[j].rebase;
        let kept = self.kept_coordinate(route);
        let got = self.gather(
            axis,
            slab,
            &pieces,
            |i, s| {
                let v = match kept.and_then(|j| self.plan.kept.coord(j, i)) {
                    // a coordinate is 1-D, along the join
                    Some(all) if s.start.len() == 1 => {
                        let (at, n) = (s.start[0] as usize, s.count[0] as usize);
                        if at + n > all.len() {
                            return Err(
                                format!("{}: index past the kept values", route.path).into()
                            );
                        }
                        all.slice(at, n)
                    }
                    _ => {
                        let e = self.input(i)?;
                        e.opened
                            .source()
                            .read(e.opened.dataset(), e.var(route)?, *s)?
                    }
                };
                match rebase[i].filter(|_| route.rebased) {
                    Some(r) => r.apply(&v).map(Some).ok_or_else(|| {
                        format!("{}: not numbers, cannot rebase", route.path).into()
                    }),
                    None => Ok(Some(v)),
                }
            },
            |out, p, at, n| match out {
                Some(o) => {
                    o.extend_from(&p.slice(at, n));
                }
                None => *out = Some(p.slice(at, n)),
            },
        )?;
        // an empty slab: no piece at all
        Ok(got.unwrap_or_else(|| ds.default_value(ds.var(var).ty).slice(0, 0)))
    }

    fn read_le_bytes(&self, _ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let route = &self.plan.routes[var.0];
        let Some((axis, j)) = route.join else {
            let e = match self.input(0) {
                Ok(e) => e,
                Err(err) => return Some(Err(err)),
            };
            let v = match e.var(route) {
                Ok(v) => v,
                Err(err) => return Some(Err(err)),
            };
            return e.opened.source().read_le_bytes(e.opened.dataset(), v, slab);
        };
        // a kept coordinate is read from its values (`read`), without opening the inputs
        if route.rebased || slab.is_empty() || self.kept_coordinate(route).is_some() {
            return None;
        }
        let pieces = self.pieces(axis, j, slab);
        self.gather(
            axis,
            slab,
            &pieces,
            |i, s| {
                let e = self.input(i)?;
                match e
                    .opened
                    .source()
                    .read_le_bytes(e.opened.dataset(), e.var(route)?, *s)
                {
                    Some(r) => r.map(Some),
                    None => Ok(None),
                }
            },
            |out: &mut Option<Vec<u8>>, p: &Vec<u8>, at, n| {
                out.get_or_insert_with(Vec::new)
                    .extend_from_slice(&p[at..at + n]);
            },
        )
        .transpose()
    }

    fn raw_chunk(&self, _ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        let route = &self.plan.routes[var.0];
        let (i, offsets) = match route.join {
            None => (0, chunk.offsets.to_vec()),
            Some(_) if route.rebased => return None,
            Some((axis, j)) => {
                let join = &self.plan.joins[j];
                let total = join.offsets.last().copied().unwrap_or(0);
                let want = chunk.shape[axis].min(total.saturating_sub(chunk.offsets[axis]));
                let pieces = join.pieces(chunk.offsets[axis], want);
                // one file holds the whole chunk, or its end when the chunk is the join's last
                let [(i, at, n)] = pieces[..] else {
                    return None;
                };
                let in_len = join.offsets[i + 1] - join.offsets[i];
                if n != chunk.shape[axis] && at + n != in_len {
                    return None;
                }
                let mut o = chunk.offsets.to_vec();
                o[axis] = at;
                // where the chunk's bytes are, from the input's kept chunk index
                let req = ChunkRequest {
                    offsets: &o,
                    ..chunk
                };
                if let Some(range) = self.plan.kept.raw_range(i, var.0, &req) {
                    let (offset, len) = range?;
                    let len = usize::try_from(len).ok()?;
                    return self.bytes(i).ok()?.read_vec(offset, len).ok();
                }
                (i, o)
            }
        };
        let e = self.input(i).ok()?;
        let v = e.var(route).ok()?;
        let req = ChunkRequest {
            offsets: &offsets,
            ..chunk
        };
        e.opened.source().raw_chunk(e.opened.dataset(), v, req)
    }

    fn unwritten(&self, _ds: &Dataset, var: VarId, slab: Slab) -> bool {
        let route = &self.plan.routes[var.0];
        let ask = |i: usize, s: Slab| {
            self.input(i).ok().is_some_and(|e| {
                e.var(route)
                    .is_ok_and(|v| e.opened.source().unwritten(e.opened.dataset(), v, s))
            })
        };
        match route.join {
            None => ask(0, slab),
            Some((axis, j)) => {
                let pieces = self.pieces(axis, j, slab);
                // a piece that the kept chunk index shows stored: written, without asking
                let kept = &self.plan.kept;
                if pieces
                    .iter()
                    .any(|(i, s, c)| kept.stores_any(*i, var.0, s, c) == Some(true))
                {
                    return false;
                }
                !pieces.is_empty() && pieces.iter().all(|(i, s, c)| ask(*i, Slab::new(s, c)))
            }
        }
    }

    fn stored_records(
        &self,
        _ds: &Dataset,
        first: u64,
        n: u64,
        layout: &RecordLayout,
        out: &mut Vec<u8>,
    ) -> Option<Result<(), DataError>> {
        // every variable joined along the same dimension, its first, as the inputs store it
        let mut join = None;
        for (var, _) in &layout.vars {
            let route = &self.plan.routes[var.0];
            match route.join {
                Some((0, j)) if !route.rebased && join.is_none_or(|k| k == j) => join = Some(j),
                _ => return None,
            }
        }
        let mark = out.len();
        for (i, at, k) in self.plan.joins[join?].pieces(first, n) {
            let e = match self.input(i) {
                Ok(e) => e,
                Err(err) => return Some(Err(err)),
            };
            let vars: Option<Vec<(VarId, u64)>> = (layout.vars.iter())
                .map(|&(v, b)| e.var(&self.plan.routes[v.0]).ok().map(|iv| (iv, b)))
                .collect();
            let here = vars.map(|vars| RecordLayout {
                recsize: layout.recsize,
                vars,
            });
            let got = here.and_then(|l| {
                (e.opened.source()).stored_records(e.opened.dataset(), at, k, &l, out)
            });
            match got {
                Some(Ok(())) => {}
                Some(Err(err)) => return Some(Err(err)),
                None => {
                    out.truncate(mark);
                    return None;
                }
            }
        }
        Some(Ok(()))
    }

    fn stored_regions(&self, _ds: &Dataset, var: VarId) -> Option<Vec<Region>> {
        let route = &self.plan.routes[var.0];
        // a joined variable's regions would open every file once more: asked chunk by chunk
        if route.join.is_some() {
            return None;
        }
        let e = self.input(0).ok()?;
        let v = e.var(route).ok()?;
        e.opened.source().stored_regions(e.opened.dataset(), v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_input_goes_first_and_one_value_is_kept_per_input() {
        let mut lru: Lru<str> = Lru::new([(7, Arc::from("seven"))]);
        assert_eq!(lru.get(7).as_deref(), Some("seven"));
        assert_eq!(&*lru.put(1, Arc::from("one"), 2), "one");
        // 7 was used before 1: it goes when 2 comes
        assert_eq!(lru.get(1).as_deref(), Some("one"));
        assert_eq!(&*lru.put(2, Arc::from("two"), 2), "two");
        assert!(lru.get(7).is_none());
        // a second value for a kept input: the kept one, nothing dropped
        assert_eq!(&*lru.put(1, Arc::from("uno"), 2), "one");
        assert_eq!(lru.items.len(), 2);
        assert_eq!(lru.get(2).as_deref(), Some("two"));
        // now 1 is the oldest
        lru.put(3, Arc::from("three"), 2);
        assert!(lru.get(1).is_none());
        assert_eq!(lru.get(3).as_deref(), Some("three"));
    }
}
