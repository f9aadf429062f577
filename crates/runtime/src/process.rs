//! Process-wide settings the command-line tools apply at start-up.

/// Keep freed copy buffers in the heap for reuse instead of returning them to the kernel.
///
/// The tools move data in slabs of a few MiB: a fresh buffer per slab. With glibc's defaults a
/// freed slab at the top of the heap is trimmed (or unmapped) and the next one is faulted in and
/// zeroed again page by page, which cost nccopy-rs more system time than the copy itself (0.7 s
/// of 0.8 s for 512 MiB). Raising the trim threshold and fixing the mmap threshold at its
/// 32 MiB maximum keeps the pages; peak memory is unchanged since the largest live set is what
/// the heap holds anyway.
///
/// One arena for every thread: a chunk buffer is allocated by one worker and freed by another,
/// and with glibc's default of an arena per thread (up to eight per core) the kept pages of
/// each arena fragment apart, so the resident size grew with the number of chunks copied, not
/// with the live set (the same live set: 87 -> 107 MB RSS for `-k 2` from 222 to 1,776 chunks,
/// with one arena 83 -> 84 MB). The tools make few, large allocations, so the arena's lock is
/// not contended. Other platforms and allocators: no-op.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::tune();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    #![allow(unsafe_code)]

    pub(super) fn tune() {
        // SAFETY: mallopt only changes malloc's tuning parameters; it is called at start-up, with
        // valid parameter codes and values, and its failure (return 0) leaves the defaults.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
    }
}
