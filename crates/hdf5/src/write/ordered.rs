//! Produce items `0..n` on worker threads and on the calling thread, and consume them in order
//! on the calling thread, with at most `window` items produced but not yet consumed.
//!
//! Chunks of a variable are encoded in parallel and written in index order (the file's layout
//! follows the order of writes). A batch-at-a-time loop leaves a core idle at every batch end
//! while the slowest chunk finishes; here the workers run on without a barrier and the writer
//! takes each chunk as soon as the ones before it are written. Memory stays bounded by the
//! window: no item `k` is started before item `k - window` has been consumed.
//!
//! The calling thread (which alone writes: the output and its allocator are not shared) is one of the
//! `threads` producers: when the next item to write is not ready it produces one itself, and it
//! waits only when every item is taken or the window is full. So `threads` threads share
//! `threads` cores, and no core is split between a worker and a writer woken per chunk.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// Run `produce(k)` for `k in 0..n` on `threads` threads (the calling one included) and
/// `consume` the results in order of `k` on the calling thread. The first error to reach this
/// thread (from either side) stops the run and is returned, even when items before the failed
/// one are still in flight; `panicked` makes the error reported when `produce` panics.
pub(crate) fn run<T, E>(
    n: u64,
    window: u64,
    threads: usize,
    produce: impl Fn(u64) -> Result<T, E> + Sync,
    mut consume: impl FnMut(T) -> Result<(), E>,
    panicked: impl FnOnce() -> E,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    if n == 0 {
        return Ok(());
    }
    let window = window.max(1);
    let threads = threads.clamp(1, usize::try_from(n).unwrap_or(usize::MAX));
    let gate = Gate {
        next: AtomicU64::new(0),
        consumed: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        waiting: AtomicUsize::new(0),
        lock: Mutex::new(()),
        moved: Condvar::new(),
        n,
        window,
    };
    let (tx, rx) = mpsc::channel::<(u64, Result<T, E>)>();
    std::thread::scope(|scope| {
        let mut workers = Vec::with_capacity(threads - 1);
        for _ in 1..threads {
            let tx = tx.clone();
            let (gate, produce) = (&gate, &produce);
            workers.push(scope.spawn(move || {
                // a panic in `produce` stops the others, which would otherwise wait forever
                // for the missing item to be consumed
                let _halt = HaltOnPanic(gate);
                while let Some(k) = gate.take_waiting() {
                    let r = produce(k);
                    let failed = r.is_err();
                    if tx.send((k, r)).is_err() || failed {
                        return;
                    }
                }
            }));
        }
        drop(tx);
        // a panic in `consume` must not leave the workers waiting (the scope joins them)
        let _halt = HaltOnPanic(&gate);
        let mut in_order = || -> Result<(), Option<E>> {
            let mut pending: BTreeMap<u64, T> = BTreeMap::new();
            let mut at = 0u64;
            while at < n {
                // what the workers made meanwhile
                while let Ok((k, r)) = rx.try_recv() {
                    pending.insert(k, r?);
                }
                if !pending.contains_key(&at) {
                    if let Some(k) = gate.take_now(at) {
                        // made here rather than waited for; a panic is reported like a
                        // worker's
                        let r = catch_unwind(AssertUnwindSafe(|| produce(k))).map_err(|_| None)?;
                        pending.insert(k, r?);
                    } else {
                        // every item taken or the window full: wait for a worker's; every
                        // worker gone with items left means one of them panicked
                        let (k, r) = rx.recv().map_err(|_| None)?;
                        pending.insert(k, r?);
                    }
                }
                while let Some(item) = pending.remove(&at) {
                    consume(item)?;
                    at += 1;
                    gate.consumed_up_to(at);
                }
            }
            Ok(())
        };
        let result = in_order();
        if result.is_err() {
            gate.halt();
        }
        // joined here, so that a worker's panic is reported as an error instead of re-raised
        let mut panic = false;
        for w in workers {
            panic |= w.join().is_err();
        }
        match result {
            Err(Some(e)) => Err(e),
            Err(None) => Err(panicked()),
            Ok(()) if panic => Err(panicked()),
            Ok(()) => Ok(()),
        }
    })
}

/// Which items are taken, how many are consumed, and the workers waiting for room.
struct Gate {
    /// the next item not yet taken
    next: AtomicU64,
    /// items consumed so far (in order)
    consumed: AtomicU64,
    stop: AtomicBool,
    /// workers waiting for room in the window (the consumer wakes them only then)
    waiting: AtomicUsize,
    lock: Mutex<()>,
    moved: Condvar,
    n: u64,
    window: u64,
}

impl Gate {
    /// A worker's next item, after waiting for room in the window; `None` when all are taken
    /// or the run stopped.
    fn take_waiting(&self) -> Option<u64> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        if k >= self.n || self.stop.load(Ordering::Relaxed) {
            return None;
        }
        if k >= self.consumed.load(Ordering::SeqCst) + self.window {
            let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            // counted before the check: the consumer either sees the count or made the room
            // this check sees (see `consumed_up_to`)
            self.waiting.fetch_add(1, Ordering::SeqCst);
            while k >= self.consumed.load(Ordering::SeqCst) + self.window
                && !self.stop.load(Ordering::SeqCst)
            {
                guard = self.moved.wait(guard).unwrap_or_else(|p| p.into_inner());
            }
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        (!self.stop.load(Ordering::Relaxed)).then_some(k)
    }

    /// An item for the consumer to make itself, when one is left within the window of `at`
    /// (the first item not yet consumed).
    fn take_now(&self, at: u64) -> Option<u64> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut k = self.next.load(Ordering::Relaxed);
        while k < self.n && k < at + self.window {
            match self
                .next
                .compare_exchange_weak(k, k + 1, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(k),
                Err(seen) => k = seen,
            }
        }
        None
    }

    /// `at` items are consumed: wake the workers waiting for room, if any.
    fn consumed_up_to(&self, at: u64) {
        self.consumed.store(at, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            // taken so that no worker is between its check and its wait
            let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            self.moved.notify_all();
        }
    }

    /// Tell the workers to stop, and wake those waiting for room in the window.
    fn halt(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.moved.notify_all();
    }
}

/// Calls [`Gate::halt`] when dropped by a panic.
struct HaltOnPanic<'a>(&'a Gate);

impl Drop for HaltOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.halt();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn consumes_in_order_within_the_window() {
        let consumed = AtomicU64::new(0);
        let mut seen = Vec::new();
        let r: Result<(), String> = run(
            1000,
            8,
            4,
            |k| {
                // never more than `window` items ahead of the consumer
                let c = consumed.load(Ordering::SeqCst);
                assert!(k < c + 8, "item {k} started with {c} consumed");
                Ok(k * 3)
            },
            |v| {
                seen.push(v);
                consumed.fetch_add(1, Ordering::SeqCst);
                Ok(())
            },
            || "panicked".to_string(),
        );
        assert_eq!(r, Ok(()));
        assert_eq!(seen, (0..1000).map(|k| k * 3).collect::<Vec<u64>>());
    }

    #[test]
    fn first_producer_error_stops_the_run() {
        let mut seen = Vec::new();
        let r: Result<(), String> = run(
            10_000,
            16,
            2,
            |k| {
                if k == 50 {
                    Err(format!("bad {k}"))
                } else {
                    Ok(k)
                }
            },
            |v| {
                seen.push(v);
                Ok(())
            },
            || "panicked".to_string(),
        );
        assert_eq!(r, Err("bad 50".to_string()));
        // the error ends the run as soon as it arrives: what was written before it is a
        // prefix of the items before 50 (the others may still have been in flight)
        assert!(seen.len() <= 50, "{} items written", seen.len());
        assert_eq!(seen, (0..seen.len() as u64).collect::<Vec<u64>>());
    }

    #[test]
    fn consumer_error_stops_the_workers() {
        let produced = AtomicU64::new(0);
        let r: Result<(), String> = run(
            100_000,
            4,
            2,
            |k| {
                produced.fetch_add(1, Ordering::SeqCst);
                Ok(k)
            },
            |v| {
                if v == 10 {
                    Err("disk full".into())
                } else {
                    Ok(())
                }
            },
            || "panicked".to_string(),
        );
        assert_eq!(r, Err("disk full".to_string()));
        // the window holds the workers: nothing far past item 10 was made
        assert!(produced.load(Ordering::SeqCst) <= 10 + 4 + 2);
    }

    #[test]
    fn a_producer_panic_is_an_error_not_a_hang() {
        // one thread: item 7 is made by the calling thread; more: by whichever takes it
        for threads in [1, 2, 4] {
            let r: Result<(), String> = run(
                100,
                4,
                threads,
                |k| {
                    if k == 7 {
                        panic!("test panic in a producer (expected)");
                    }
                    Ok(k)
                },
                |_| Ok(()),
                || "an encoder thread panicked".to_string(),
            );
            assert_eq!(
                r,
                Err("an encoder thread panicked".to_string()),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn the_calling_thread_produces_too() {
        // two threads: the calling thread and one worker both make items, and a single thread
        // makes them all itself
        for (threads, want_workers) in [(1, false), (2, true)] {
            let caller = std::thread::current().id();
            let (on_caller, on_workers) = (AtomicU64::new(0), AtomicU64::new(0));
            let r: Result<(), String> = run(
                200,
                8,
                threads,
                |k| {
                    if std::thread::current().id() == caller {
                        on_caller.fetch_add(1, Ordering::SeqCst);
                        // with a worker, the calling thread's first item waits for one of the
                        // worker's (bounded), so that both sides make some on a loaded machine
                        let t0 = std::time::Instant::now();
                        while want_workers
                            && on_workers.load(Ordering::SeqCst) == 0
                            && t0.elapsed().as_secs() < 10
                        {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                    } else {
                        on_workers.fetch_add(1, Ordering::SeqCst);
                        // slower than the caller, so that the caller finds items not ready
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                    Ok(k)
                },
                |_| Ok(()),
                || "panicked".to_string(),
            );
            assert_eq!(r, Ok(()));
            let (mine, theirs) = (
                on_caller.load(Ordering::SeqCst),
                on_workers.load(Ordering::SeqCst),
            );
            assert_eq!(mine + theirs, 200);
            if want_workers {
                assert!(
                    mine > 0 && theirs > 0,
                    "{mine} of 200 on the calling thread"
                );
            } else {
                assert_eq!(mine, 200);
            }
        }
    }

    #[test]
    fn a_consumer_panic_is_not_a_hang() {
        let r = std::panic::catch_unwind(|| {
            let _: Result<(), String> = run(
                100_000,
                4,
                2,
                Ok,
                |v| {
                    assert!(v != 9, "test panic in the consumer (expected)");
                    Ok(())
                },
                || "panicked".to_string(),
            );
        });
        assert!(r.is_err(), "the consumer's panic goes on to the caller");
    }

    #[test]
    fn empty_and_single() {
        // no items (no worker started), and one item with more threads than items
        for (n, threads, want) in [(0, 2, vec![]), (1, 8, vec![0])] {
            let mut seen = Vec::new();
            let r: Result<(), ()> = run(
                n,
                4,
                threads,
                Ok,
                |v: u64| {
                    seen.push(v);
                    Ok(())
                },
                || (),
            );
            assert_eq!(r, Ok(()));
            assert_eq!(seen, want, "{n} items on {threads} threads");
        }
    }
}
