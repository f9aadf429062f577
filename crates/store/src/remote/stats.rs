//! Process-wide counters of remote requests and bytes, for `nccopy-rs --explain`, the
//! `NC_IO_STATS` report of the tools, and benchmarks.

use std::sync::atomic::{AtomicU64, Ordering};

static REQUESTS: AtomicU64 = AtomicU64::new(0);
static BYTES_READ: AtomicU64 = AtomicU64::new(0);
static BYTES_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Counts of remote requests since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Requests sent (each GET, HEAD, PUT, LIST page, DELETE, multipart part), retries not
    /// counted separately.
    pub requests: u64,
    /// Bytes received in object bodies.
    pub bytes_read: u64,
    /// Bytes sent in object bodies.
    pub bytes_written: u64,
}

impl std::fmt::Display for IoStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests, {} bytes read, {} bytes written",
            self.requests, self.bytes_read, self.bytes_written
        )
    }
}

/// The counts so far.
pub fn io_stats() -> IoStats {
    IoStats {
        requests: REQUESTS.load(Ordering::Relaxed),
        bytes_read: BYTES_READ.load(Ordering::Relaxed),
        bytes_written: BYTES_WRITTEN.load(Ordering::Relaxed),
    }
}

/// Count one request made outside nc-store (the OPeNDAP client's GETs: each redirect hop
/// and each retry is one), with the bytes of its answer's body as received.
pub fn record_request(bytes_read: u64) {
    count_request();
    count_read(bytes_read);
}

pub(crate) fn count_request() {
    REQUESTS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn count_read(n: u64) {
    BYTES_READ.fetch_add(n, Ordering::Relaxed);
}

pub(crate) fn count_written(n: u64) {
    BYTES_WRITTEN.fetch_add(n, Ordering::Relaxed);
}
