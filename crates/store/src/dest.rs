//! The atomic destination: an output becomes visible under its final name only when it is
//! complete, with one commit per kind of place.
//!
//! - A local file is written unnamed in the destination's directory (Linux `O_TMPFILE`, else
//!   under a temporary name beside it: [`OutputFile`]), flushed to disk, and linked or renamed
//!   into place ([`Destination::create_file`], [`Destination::commit_file`]); a local directory
//!   store is written under a temporary name beside the destination, flushed, and renamed (or
//!   swapped) into place ([`Destination::Local`]). What a killed run left is removed by the
//!   next run to the same destination ([`Destination::remove_stale`]).
//! - An object (a netCDF-4 or classic file bound for a bucket) is written to a temporary local
//!   file in `TMPDIR` (unnamed where the system allows, as a local file is, so a SIGKILL leaves
//!   nothing there either), then uploaded by one multipart upload, which the server makes
//!   visible only when it is complete ([`Destination::Object`]).
//! - A store on object storage has no rename and no single upload: it is written in place with
//!   its metadata objects last ([`crate::remote::ObjectKvStore`]; its commit is
//!   [`crate::Store::close`], and [`crate::Store::abort`] says what a failure left).
//!
//! A failure or [`Destination::discard`] removes the temporary; the destination is as it was.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::StoreError;
use crate::remote::RemoteUrl;
use crate::temp::OutputFile;

/// Where a finished output goes, and how it gets there.
#[derive(Debug, Clone)]
pub enum Destination {
    /// A local file or directory: written at `tmp` (beside `dest`), renamed to `dest`.
    Local {
        /// The final name (a symbolic link's target, when the name was a link).
        dest: PathBuf,
        /// The temporary name in the same directory.
        tmp: PathBuf,
    },
    /// An object: written at `tmp` (in `TMPDIR`), uploaded to `url`.
    Object {
        /// The object.
        url: RemoteUrl,
        /// The temporary local file.
        tmp: PathBuf,
    },
}

impl Destination {
    /// A local destination; the temporary name is `.NAME.tmp-PID` in the same directory, so
    /// the final rename is atomic.
    pub fn local(dest: &Path) -> Destination {
        Destination::Local {
            dest: dest.to_path_buf(),
            tmp: crate::temp::temp_name(dest),
        }
    }

    /// An object destination; the temporary file is unnamed in `TMPDIR` where the system
    /// allows ([`Destination::create_file`]), else `.NAME.upload-PID` there.
    pub fn object(url: &RemoteUrl) -> Destination {
        let name = url
            .key
            .rsplit('/')
            .next()
            .filter(|n| !n.is_empty())
            .unwrap_or("out");
        Destination::Object {
            url: url.clone(),
            tmp: std::env::temp_dir().join(format!(".{name}.upload-{}", std::process::id())),
        }
    }

    /// Where the writer writes.
    pub fn temp(&self) -> &Path {
        match self {
            Destination::Local { tmp, .. } | Destination::Object { tmp, .. } => tmp,
        }
    }

    /// Make the finished temporary output the destination: flush it and rename it into place
    /// (an old directory store there is moved aside first and removed only after), or upload
    /// it and remove it. On failure the temporary is removed and the destination is as it was.
    ///
    /// # Errors
    /// [`StoreError::Io`] naming the destination; an upload's [`StoreError::Remote`].
    pub fn commit(&self) -> Result<(), StoreError> {
        let r = match self {
            Destination::Local { dest, tmp } => {
                publish(tmp, dest).map_err(|e| StoreError::io(dest.display(), e))
            }
            Destination::Object { url, tmp } => {
                let r = crate::remote::upload_file(url, tmp);
                remove_path(tmp);
                r
            }
        };
        if r.is_err() {
            self.discard();
        }
        r
    }

    /// Create the file a single-file output is written into (see [`OutputFile`]): for a local
    /// destination unnamed in its directory where the system allows (nothing named exists
    /// until [`Destination::commit_file`]), else at [`Destination::temp`]; for an object, the
    /// temporary local file to upload.
    ///
    /// # Errors
    /// [`StoreError::Io`] naming the destination when the file cannot be created.
    pub fn create_file(&self) -> Result<OutputFile, StoreError> {
        match self {
            Destination::Local { dest, tmp } => {
                let dir = tmp.parent().unwrap_or(Path::new(""));
                OutputFile::create(dir, tmp).map_err(|e| StoreError::io(dest.display(), e))
            }
            Destination::Object { url, tmp } => {
                let dir = tmp.parent().unwrap_or(Path::new(""));
                OutputFile::create(dir, tmp).map_err(|e| StoreError::io(&url.display, e))
            }
        }
    }

    /// [`Destination::commit`] for a file made by [`Destination::create_file`]: flush it and
    /// give it the destination's name (linked into place when unnamed: directly when nothing
    /// is there, else at the temporary name and renamed over the destination), or upload it.
    /// On failure the temporary is removed and the destination is as it was.
    ///
    /// # Errors
    /// As [`Destination::commit`].
    pub fn commit_file(&self, file: OutputFile) -> Result<(), StoreError> {
        match self {
            Destination::Local { dest, tmp } => {
                let r = file.publish(dest, tmp).map(|()| sync_parent(dest));
                drop(file);
                r.map_err(|e| {
                    self.discard();
                    StoreError::io(dest.display(), e)
                })
            }
            // uploaded from the open file: an unnamed one has no name to read it by
            Destination::Object { url, tmp } => {
                let r = file
                    .handle()
                    .map_err(|e| StoreError::io(&url.display, e))
                    .and_then(|f| {
                        crate::remote::upload_open_file(url, f, &tmp.display().to_string())
                    });
                drop(file);
                remove_path(tmp);
                r
            }
        }
    }

    /// Remove what earlier runs to this destination left when they were killed (see
    /// [`crate::remove_stale`]); call it before writing. Object destinations: nothing.
    pub fn remove_stale(&self) {
        if let Destination::Local { dest, .. } = self {
            crate::temp::remove_stale(dest);
        }
    }

    /// Give up: remove the temporary output.
    pub fn discard(&self) {
        remove_path(self.temp());
    }

    /// While a local file is being written, start writing its pages to disk every
    /// [`WRITEBACK_EVERY`], so the flush before it is published ([`Destination::commit_file`])
    /// finds little left and does not stall the end of the copy (it was 0.14-0.16 s of a 0.4 s
    /// copy of 512 MiB). The thread works on the file's descriptor, never its name (it has
    /// none while unnamed). Stops when the returned guard is dropped; drop it before the
    /// commit. A file bound for upload: nothing to do.
    pub fn start_writeback(&self, file: &OutputFile) -> Writeback {
        match (self, file.handle()) {
            (Destination::Local { .. }, Ok(f)) => Writeback::start(f),
            _ => Writeback { stop: None },
        }
    }
}

/// How often a file being written is handed to the kernel's writeback. Short, so that the
/// flush at the end waits for at most the last few milliseconds of writes: on ext4 a flush of
/// 5.5 MB written just before took 3-4.5 ms, and 0.15 ms when writeback was started 3 ms
/// earlier. A hand-over of a file with no new dirty pages is one cheap system call.
pub const WRITEBACK_EVERY: std::time::Duration = std::time::Duration::from_millis(2);

/// The thread that starts writeback of a file being written ([`Destination::start_writeback`]);
/// dropping it stops and joins the thread.
pub struct Writeback {
    stop: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Writeback {
    fn start(file: fs::File) -> Writeback {
        if !cfg!(target_os = "linux") {
            return Writeback { stop: None };
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("writeback".into())
            .spawn(move || {
                // until the guard is dropped (the sender gone: Disconnected)
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    rx.recv_timeout(WRITEBACK_EVERY)
                {
                    start_file_writeback(&file);
                }
            });
        match thread {
            Ok(t) => Writeback {
                stop: Some((tx, t)),
            },
            // no thread: the flush at commit does all the work, as without this
            Err(_) => Writeback { stop: None },
        }
    }
}

impl Drop for Writeback {
    fn drop(&mut self) {
        if let Some((tx, t)) = self.stop.take() {
            drop(tx);
            let _ = t.join();
        }
    }
}

/// Ask the kernel to start writing the file's dirty pages now, without waiting for them
/// (`sync_file_range(SYNC_FILE_RANGE_WRITE)` on the whole file). Best effort: an error leaves
/// the work to the flush at commit.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_file_writeback(f: &fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range only reads its integer arguments; the descriptor is open (owned
    // by `f`, alive for the call), offset 0 and length 0 mean the whole file, and the flag is
    // one of the documented ones. It does not touch memory of ours.
    unsafe {
        libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_file_writeback(_: &fs::File) {}

/// Move a finished temporary output `tmp` to `dest`. A directory at `dest` (an old store
/// already checked by `nc_dispatch`) is swapped with the new one in one step where the file
/// system can (`renameat2(RENAME_EXCHANGE)`, Linux) and then removed from the temporary name,
/// so `dest` always names a complete store, even after a SIGKILL (the old store left at the
/// temporary name is removed by the next run: [`crate::remove_stale`]). Elsewhere it is
/// renamed aside first (`.NAME.old-PID`) and removed only after the new one is in place; a
/// kill between the two renames leaves it aside, and the next run puts it back.
fn publish(tmp: &Path, dest: &Path) -> std::io::Result<()> {
    sync_tree(tmp)?;
    let old_dir = fs::symlink_metadata(dest).is_ok_and(|m| m.is_dir());
    if old_dir {
        if swap(tmp, dest)? {
            remove_path(tmp);
        } else {
            let aside = crate::temp::aside_name(dest);
            fs::rename(dest, &aside)?;
            if let Err(e) = fs::rename(tmp, dest) {
                // put the old store back: the destination is as it was
                let _ = fs::rename(&aside, dest);
                return Err(e);
            }
            remove_path(&aside);
        }
    } else {
        fs::rename(tmp, dest)?;
    }
    sync_parent(dest);
    Ok(())
}

/// Exchange two names atomically; `Ok(false)` when the system or file system cannot.
fn swap(a: &Path, b: &Path) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::io::Errno;
        match rustix::fs::renameat_with(
            rustix::fs::CWD,
            a,
            rustix::fs::CWD,
            b,
            rustix::fs::RenameFlags::EXCHANGE,
        ) {
            Ok(()) => Ok(true),
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// Flush a finished output to disk before it is published: a file, or every file and
/// directory of a store tree (so a power loss after the rename cannot leave an empty file
/// under the final name).
fn sync_tree(p: &Path) -> std::io::Result<()> {
    let meta = fs::symlink_metadata(p)?;
    if meta.is_dir() {
        let mut files = Vec::new();
        let mut dirs = vec![p.to_path_buf()];
        let mut i = 0;
        while i < dirs.len() {
            for entry in fs::read_dir(&dirs[i])? {
                let entry = entry?;
                let ft = entry.file_type()?;
                if ft.is_dir() {
                    dirs.push(entry.path());
                } else if ft.is_file() {
                    files.push(entry.path());
                }
            }
            i += 1;
        }
        use rayon::prelude::*;
        files
            .par_iter()
            .try_for_each(|f| fs::File::open(f)?.sync_all())?;
        for d in dirs.iter().rev() {
            fs::File::open(d)?.sync_all()?;
        }
        Ok(())
    } else if meta.is_file() {
        fs::File::open(p)?.sync_all()
    } else {
        Ok(())
    }
}

/// Flush the directory entry made by the rename (best effort: some file systems refuse it).
fn sync_parent(dest: &Path) {
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Remove a file or a directory tree; a writer may still be adding files to a directory
/// being removed, so retry a few times.
pub fn remove_path(p: &Path) {
    for _ in 0..20 {
        let meta = match std::fs::symlink_metadata(p) {
            Ok(m) => m,
            Err(_) => return,
        };
        let r = if meta.is_dir() {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        };
        if r.is_ok() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("nc-store-dest-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn publishing_a_store_keeps_the_old_one_until_the_new_is_in_place() {
        let d = tmpdir("publish");
        let dest = d.join("out.zarr");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join(".zgroup"), b"old").unwrap();
        let tmp = d.join(".out.zarr.tmp");
        fs::create_dir_all(tmp.join("v")).unwrap();
        fs::write(tmp.join(".zgroup"), b"new").unwrap();
        fs::write(tmp.join("v/0"), b"chunk").unwrap();
        publish(&tmp, &dest).unwrap();
        assert_eq!(fs::read(dest.join(".zgroup")).unwrap(), b"new");
        assert_eq!(fs::read(dest.join("v/0")).unwrap(), b"chunk");
        // nothing but the store is left
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.zarr")]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_local_destination_commits_by_rename_and_discards_cleanly() {
        let d = tmpdir("local");
        let out = d.join("out.nc");
        fs::write(&out, b"old").unwrap();
        let dest = Destination::local(&out);
        assert_eq!(dest.temp().parent(), Some(d.as_path()));
        fs::write(dest.temp(), b"new").unwrap();
        dest.commit().unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"new");
        let dest = Destination::local(&out);
        fs::write(dest.temp(), b"half").unwrap();
        dest.discard();
        assert_eq!(fs::read(&out).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.nc")]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn writeback_runs_while_the_file_is_written_and_stops_when_dropped() {
        let d = tmpdir("writeback");
        let out = d.join("out.nc");
        let dest = Destination::local(&out);
        let file = dest.create_file().unwrap();
        let wb = dest.start_writeback(&file);
        assert!(
            wb.stop.is_some(),
            "a local destination starts the writeback thread"
        );
        // the writer writes through its own handle while the thread runs
        let block = vec![7u8; 1 << 20];
        {
            use std::io::Write;
            let mut f = file.handle().unwrap();
            for _ in 0..8 {
                f.write_all(&block).unwrap();
                std::thread::sleep(WRITEBACK_EVERY / 2);
            }
        }
        let t = std::time::Instant::now();
        drop(wb);
        assert!(
            t.elapsed() < std::time::Duration::from_millis(500),
            "stopped in {:?}",
            t.elapsed()
        );
        dest.commit_file(file).unwrap();
        let got = fs::read(&out).unwrap();
        assert_eq!(got.len(), 8 << 20);
        assert!(got.iter().all(|&b| b == 7));
        // an object's temporary file is uploaded, not flushed: no thread
        let url = crate::remote::parse_remote("s3://b/k.nc").unwrap();
        let dest = Destination::object(&url);
        let file = dest.create_file().unwrap();
        assert!(dest.start_writeback(&file).stop.is_none());
        drop(file);
        dest.discard();
        fs::remove_dir_all(&d).unwrap();
    }
}
