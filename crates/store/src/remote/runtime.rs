//! The small asynchronous runtime nc-store owns: object_store is asynchronous, our readers and
//! writers are not. Callers block on one future at a time ([`block_on`]); work that runs in
//! the background (a store's uploads) is spawned here ([`spawn`]). Every request holds one
//! permit of a process-wide semaphore, so at most [`concurrency`] requests are in flight.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use tokio::runtime::Runtime;
use tokio::sync::Semaphore;

use crate::error::StoreError;

/// Environment variable: the most requests in flight at once (default 16).
pub const CONCURRENCY_ENV: &str = "NC_STORE_CONCURRENCY";

struct Shared {
    rt: Runtime,
    permits: Arc<Semaphore>,
    n: usize,
}

fn shared() -> Result<&'static Shared, StoreError> {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let n = std::env::var(CONCURRENCY_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(16)
                .min(256);
            // two worker threads drive the sockets; the work is waiting, not computing
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("nc-store-io")
                .enable_all()
                .build()
                .map(|rt| Shared {
                    rt,
                    permits: Arc::new(Semaphore::new(n)),
                    n,
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| StoreError::Remote {
            url: String::new(),
            cause: format!("cannot start the I/O runtime: {e}"),
            cure: None,
        })
}

/// The most requests in flight at once.
pub fn concurrency() -> usize {
    shared().map_or(1, |s| s.n)
}

/// Run `f` to completion on the runtime, blocking this (non-runtime) thread.
pub(crate) fn block_on<F: Future>(f: F) -> Result<F::Output, StoreError> {
    Ok(shared()?.rt.block_on(f))
}

/// Run `f` on the runtime in the background.
pub(crate) fn spawn<F>(f: F) -> Result<tokio::task::JoinHandle<F::Output>, StoreError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(shared()?.rt.spawn(f))
}

/// One request's permit (wait for it inside the runtime).
pub(crate) async fn permit() -> Option<tokio::sync::OwnedSemaphorePermit> {
    let s = shared().ok()?;
    s.permits.clone().acquire_owned().await.ok()
}
