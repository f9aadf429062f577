//! Progress of a copy: the bytes the writers read, per variable, reported to a callback.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use nc_dataset::{Dataset, VarId};

/// How far a copy has come: sent once before any data is read, after every read of the
/// writers, and once at the end with `finished` set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressEvent {
    /// Bytes of variable data read so far (elements × in-memory type size).
    pub bytes_done: u64,
    /// Bytes of variable data in the whole output.
    pub bytes_total: u64,
    /// Variables whose data has been read completely.
    pub vars_done: usize,
    /// Variables in the output.
    pub vars_total: usize,
    /// The output is complete and in place.
    pub finished: bool,
}

/// A progress callback (see [`CopyOptions::progress`]).
#[derive(Clone)]
pub struct ProgressFn(pub Arc<dyn Fn(ProgressEvent) + Send + Sync>);

impl std::fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressFn(..)")
    }
}
/// Counts the bytes the writers read, per variable, and reports them.
pub(crate) struct Progress {
    pub(crate) cb: ProgressFn,
    var_total: Vec<u64>,
    var_done: Vec<AtomicU64>,
    elem_size: Vec<u64>,
    bytes_total: u64,
    bytes_done: AtomicU64,
    vars_done: AtomicUsize,
}

impl Progress {
    pub(crate) fn new(cb: ProgressFn, ds: &Dataset) -> Progress {
        let elem_size: Vec<u64> = ds.vars.iter().map(|v| ds.type_size(v.ty) as u64).collect();
        let var_total: Vec<u64> = (0..ds.vars.len())
            .map(|i| {
                ds.num_elements(VarId(i))
                    .unwrap_or(0)
                    .saturating_mul(elem_size[i])
            })
            .collect();
        let bytes_total = var_total.iter().fold(0u64, |a, b| a.saturating_add(*b));
        let empty = var_total.iter().filter(|&&t| t == 0).count();
        Progress {
            cb,
            var_done: var_total.iter().map(|_| AtomicU64::new(0)).collect(),
            var_total,
            elem_size,
            bytes_total,
            bytes_done: AtomicU64::new(0),
            vars_done: AtomicUsize::new(empty),
        }
    }

    pub(crate) fn event(&self, finished: bool) -> ProgressEvent {
        ProgressEvent {
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            bytes_total: self.bytes_total,
            vars_done: self.vars_done.load(Ordering::Relaxed),
            vars_total: self.var_total.len(),
            finished,
        }
    }

    pub(crate) fn read(&self, var: VarId, count: &[u64]) {
        let Some(size) = self.elem_size.get(var.0) else {
            return;
        };
        let n = count
            .iter()
            .fold(1u64, |a, c| a.saturating_mul(*c))
            .saturating_mul(*size);
        // a region can be reported twice (a writer asks whether chunks are unwritten while
        // planning, then again while writing): a variable never counts past its size
        let total = self.var_total[var.0];
        let before = self.var_done[var.0]
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| {
                Some(d.saturating_add(n).min(total))
            })
            .unwrap_or(total);
        let added = before.saturating_add(n).min(total).saturating_sub(before);
        self.bytes_done.fetch_add(added, Ordering::Relaxed);
        if before < total && before.saturating_add(n) >= total {
            self.vars_done.fetch_add(1, Ordering::Relaxed);
        }
        (self.cb.0)(self.event(false));
    }
}
