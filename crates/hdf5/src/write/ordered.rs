//! Produce items `0..n` on worker threads and consume them in order on the calling thread,
//! with at most `window` items produced but not yet consumed.
//!
//! Chunks of a variable are encoded in parallel and written in index order (the file's layout
//! follows the order of writes). A batch-at-a-time loop leaves a core idle at every batch end
//! while the slowest chunk finishes; here the workers run on without a barrier and the writer
//! takes each chunk as soon as the ones before it are written. Memory stays bounded by the
//! window: a worker does not start item `k` before item `k - window` has been consumed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// Run `produce(k)` for `k in 0..n` on `threads` workers and `consume` the results in order of
/// `k`. The first error to reach this thread (from either side) stops the run and is returned,
/// even when items before the failed one are still in flight; `panicked` makes the error
/// reported when a worker panics.
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
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    // items consumed so far; workers wait on it to stay within the window
    let consumed = Mutex::new(0u64);
    let moved = Condvar::new();
    let (tx, rx) = mpsc::channel::<(u64, Result<T, E>)>();
    std::thread::scope(|scope| {
        let mut workers = Vec::with_capacity(threads);
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, consumed, moved, produce) =
                (&next, &stop, &consumed, &moved, &produce);
            workers.push(scope.spawn(move || loop {
                // a panic in `produce` stops the others, which would otherwise wait forever
                // for the missing item to be consumed
                let _halt = HaltOnPanic(stop, consumed, moved);
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n || stop.load(Ordering::Relaxed) {
                    return;
                }
                {
                    let mut done = consumed.lock().unwrap_or_else(|p| p.into_inner());
                    while k >= *done + window && !stop.load(Ordering::Relaxed) {
                        done = moved.wait(done).unwrap_or_else(|p| p.into_inner());
                    }
                }
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let r = produce(k);
                let failed = r.is_err();
                if tx.send((k, r)).is_err() || failed {
                    return;
                }
            }));
        }
        drop(tx);
        let halt = || halt(&stop, &consumed, &moved);
        // a panic in `consume` must not leave the workers waiting (the scope joins them)
        let _halt = HaltOnPanic(&stop, &consumed, &moved);
        let mut in_order = || -> Result<(), Option<E>> {
            let mut pending: BTreeMap<u64, T> = BTreeMap::new();
            let mut at = 0u64;
            while at < n {
                // every worker gone with items left: one of them panicked
                let (k, r) = rx.recv().map_err(|_| None)?;
                pending.insert(k, r?);
                while let Some(item) = pending.remove(&at) {
                    consume(item)?;
                    at += 1;
                    *consumed.lock().unwrap_or_else(|p| p.into_inner()) = at;
                    moved.notify_all();
                }
            }
            Ok(())
        };
        let result = in_order();
        if result.is_err() {
            halt();
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

/// Tell the workers to stop, and wake those waiting for room in the window.
fn halt(stop: &AtomicBool, consumed: &Mutex<u64>, moved: &Condvar) {
    stop.store(true, Ordering::Relaxed);
    // take the lock so that no worker is between its check and its wait
    let _guard = consumed.lock().unwrap_or_else(|p| p.into_inner());
    moved.notify_all();
}

/// Calls [`halt`] when dropped by a panic.
struct HaltOnPanic<'a>(&'a AtomicBool, &'a Mutex<u64>, &'a Condvar);

impl Drop for HaltOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            halt(self.0, self.1, self.2);
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
    fn a_worker_panic_is_an_error_not_a_hang() {
        let r: Result<(), String> = run(
            100,
            4,
            2,
            |k| {
                if k == 7 {
                    panic!("test panic in a worker (expected)");
                }
                Ok(k)
            },
            |_| Ok(()),
            || "an encoder thread panicked".to_string(),
        );
        assert_eq!(r, Err("an encoder thread panicked".to_string()));
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
