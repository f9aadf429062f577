//! Temporary outputs in flight, and their removal when the process is interrupted.
//!
//! `nc_dispatch::create` writes beside the destination under a temporary name (or, for a file,
//! unnamed until complete: [`register_unnamed_temp`]), registers that name here before
//! writing, and links or renames it into place through [`commit_unless_interrupted`], which
//! refuses once an interrupt has been seen. SIGKILL cannot be caught: what it leaves is
//! removed by the next run to the destination (`nc_store::remove_stale`). A binary that calls
//! [`install_interrupt_handler`] gets a thread that, on SIGINT, SIGTERM or SIGHUP, marks the
//! process interrupted, removes every registered temporary file or directory and exits with
//! 128 + the signal number: the destination is either untouched or already completely
//! replaced, never partial.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The registry: temporary paths being written, and whether an interrupt was seen.
#[derive(Default)]
struct Registry {
    /// Id, path, and whether the output has no name yet (an unnamed file that will be linked
    /// at the path: nothing to remove, the kernel frees it when the process exits).
    paths: Vec<(u64, PathBuf, bool)>,
    interrupted: bool,
    /// An output has been renamed into place: an interrupt after it finds nothing to remove
    /// because the work is done, not because none had started.
    committed: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    paths: Vec::new(),
    interrupted: false,
    committed: false,
});
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn registry() -> MutexGuard<'static, Registry> {
    // a panic while holding the lock leaves the list intact: keep using it
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// A registered temporary output; dropping it unregisters the path (it does not remove it).
#[derive(Debug)]
#[must_use = "the path is unregistered when the guard is dropped"]
pub struct TempGuard {
    id: u64,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        registry().paths.retain(|(id, _, _)| *id != self.id);
    }
}

/// Register `path` as a temporary output being written, to be removed on interrupt.
pub fn register_temp(path: &Path) -> TempGuard {
    register(path, false)
}

/// Register an output being written unnamed (`nc_store::OutputFile`), to be linked at `path`
/// (the temporary name, or the destination) when complete: an interrupt removes `path` if the
/// link was made, and counts the output as removed in any case (the process's exit frees it).
pub fn register_unnamed_temp(path: &Path) -> TempGuard {
    register(path, true)
}

fn register(path: &Path, unnamed: bool) -> TempGuard {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    registry().paths.push((id, path.to_path_buf(), unnamed));
    TempGuard { id }
}

/// The temporary paths currently registered (for tests and diagnostics).
pub fn temps_in_flight() -> Vec<PathBuf> {
    registry().paths.iter().map(|(_, p, _)| p.clone()).collect()
}

/// True once [`interrupt`] has run.
pub fn is_interrupted() -> bool {
    registry().interrupted
}

/// When an interrupt has been seen, never return: the handler thread is removing the
/// temporary outputs and will exit with 128 + the signal number. Call this before reporting
/// an error, which may only be the interrupt's doing (a write into a removed temporary).
pub fn wait_if_interrupted() {
    if is_interrupted() {
        loop {
            std::thread::park();
        }
    }
}

/// Run `rename` (moving a finished temporary output into place) unless the process has been
/// interrupted; holds the registry lock so an interrupt cannot remove the file half way.
///
/// # Errors
/// `ErrorKind::Interrupted` when an interrupt came first; otherwise what `rename` returns.
pub fn commit_unless_interrupted(
    rename: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let reg = registry();
    if reg.interrupted {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "interrupted before the output was complete",
        ));
    }
    let mut reg = reg;
    let r = rename();
    reg.committed |= r.is_ok();
    drop(reg);
    r
}

/// Mark the process interrupted and remove every registered temporary output (file or
/// directory). Returns the paths that were there and got removed. Later
/// [`commit_unless_interrupted`] calls fail.
pub fn interrupt() -> Vec<PathBuf> {
    interrupt_and_tell().0
}

/// [`interrupt`], and whether an output had already been renamed into place before it.
fn interrupt_and_tell() -> (Vec<PathBuf>, bool) {
    let mut reg = registry();
    reg.interrupted = true;
    let mut removed = Vec::new();
    for (_, p, unnamed) in &reg.paths {
        // a path already renamed into place (the guard not yet dropped) is not there any more
        for q in std::iter::once(p.clone()).chain(companions(p)) {
            if std::fs::symlink_metadata(&q).is_ok() {
                nc_store::remove_path(&q);
                removed.push(q);
            }
        }
        // an unnamed output is discarded by the exit that follows (the commit, which names
        // it, holds the lock taken above: it has not begun, or has finished and unregistered)
        if *unnamed && !removed.contains(p) {
            removed.push(p.clone());
        }
    }
    (removed, reg.committed)
}

/// Entries beside a temporary output that a writer made for it, named after it with a
/// suffix (a zip store's staging directory `NAME.nczarr-staging-PID`, its archive `NAME.tmp`).
fn companions(tmp: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (tmp.parent(), tmp.file_name()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut prefix = name.to_os_string();
    prefix.push(".");
    let prefix = prefix.as_encoded_bytes().to_vec();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().as_encoded_bytes().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// Start a thread that handles SIGINT, SIGTERM and SIGHUP: it removes the temporary outputs
/// in flight (see [`interrupt`]), prints `{tool}: interrupted by SIGINT; temporary output
/// removed, destination untouched` to stderr (or `...; no output written` when nothing was
/// being written, `...; the output was already complete` when the signal came after the
/// output was renamed into place) and exits with status 128 + the signal number (130 for
/// SIGINT).
///
/// # Errors
/// When the signal handlers cannot be installed.
pub fn install_interrupt_handler(tool: &'static str) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("interrupt-cleanup".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let (removed, committed) = interrupt_and_tell();
                // an upload in progress aborts its multipart upload: no object appears
                nc_store::remote::abort_uploads(std::time::Duration::from_secs(10));
                let name = match sig {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                let what = if !removed.is_empty() {
                    "temporary output removed, destination untouched"
                } else if committed {
                    // the signal came between the rename and the exit: the work is done
                    "the output was already complete"
                } else {
                    "no output written"
                };
                // start on a clean line when a progress bar may be on screen
                let clear = if std::io::stderr().is_terminal() {
                    "\r\x1b[2K"
                } else {
                    ""
                };
                eprintln!("{clear}{tool}: interrupted by {name}; {what}");
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_registers_and_unregisters() {
        let p = PathBuf::from("/nonexistent/.x.tmp-1");
        {
            let _g = register_temp(&p);
            assert!(temps_in_flight().contains(&p));
        }
        assert!(!temps_in_flight().contains(&p));
        let q = PathBuf::from("/nonexistent/.y.tmp-1");
        {
            let _g = register_unnamed_temp(&q);
            assert!(temps_in_flight().contains(&q));
        }
        assert!(!temps_in_flight().contains(&q));
    }
}
