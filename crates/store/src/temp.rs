//! Temporary outputs that a SIGKILL cannot leave behind, and the removal of those that an
//! earlier killed run left.
//!
//! A signal the process can catch (SIGINT, SIGTERM, SIGHUP) removes the temporaries it
//! registered (nc-runtime). SIGKILL, an out-of-memory kill or a power loss cannot be caught, so:
//!
//! - A single-file output (classic, netCDF-4, a zip store's archive) is created *unnamed* in
//!   its destination's directory (Linux `O_TMPFILE`) and given a name only when it is complete
//!   and flushed ([`OutputFile::publish`]): a kill before that leaves nothing, the kernel frees
//!   the file with the process. Where the system or file system lacks `O_TMPFILE` (another
//!   Unix, NFS, some FUSE file systems, a kernel before 3.11, no `/proc`) it is created under
//!   the temporary name as before.
//! - Every named temporary (a store directory, a zip store's staging directory, a file where
//!   `O_TMPFILE` is missing) is named after the destination with its writer's PID
//!   (`.NAME.tmp-PID`, `.NAME.tmp-PID.nczarr-staging-PID`, `.NAME.tmp-PID.tmp`) and is held
//!   under an advisory lock (`flock`) by its writer for as long as it is written
//!   ([`hold_lock`]). The next run to the same destination removes those whose lock is free
//!   and whose process is gone ([`remove_stale`]); a live writer's temporary is never
//!   touched, whatever its PID (PID reuse, another PID namespace, another host on a shared
//!   file system: its lock is held).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// Set to `1` to create single-file outputs under their temporary name even where `O_TMPFILE`
/// works (the fallback's behaviour, for tests and for comparison).
pub const NAMED_TEMPS_ENV: &str = "NCRS_NAMED_TEMPS";

/// A single-file output being written: unnamed until [`OutputFile::publish`] where the system
/// allows, else at its temporary name. Writers write through [`OutputFile::handle`] and never
/// reopen it by name.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// `None`: unnamed (`O_TMPFILE`); else the temporary name it was created at.
    named: Option<PathBuf>,
}

impl OutputFile {
    /// Create the file unnamed in `dir` (Linux `O_TMPFILE`), or, where that is not supported,
    /// at `fallback` (created or truncated) under this process's lock.
    ///
    /// # Errors
    /// When the fallback file cannot be created.
    pub fn create(dir: &Path, fallback: &Path) -> io::Result<OutputFile> {
        if let Some(file) = open_unnamed(dir) {
            return Ok(OutputFile { file, named: None });
        }
        OutputFile::create_named(fallback)
    }

    /// Create (or truncate) the file at `path`, under this process's lock.
    ///
    /// # Errors
    /// When it cannot be created.
    pub fn create_named(path: &Path) -> io::Result<OutputFile> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        lock_file(&file);
        Ok(OutputFile {
            file,
            named: Some(path.to_path_buf()),
        })
    }

    /// A handle for the writer (the same open file: writes through it are this file's).
    ///
    /// # Errors
    /// When the descriptor cannot be duplicated.
    pub fn handle(&self) -> io::Result<File> {
        self.file.try_clone()
    }

    /// True when the file has no name yet (`O_TMPFILE`).
    pub fn is_unnamed(&self) -> bool {
        self.named.is_none()
    }

    /// Flush the finished file to disk, then give it the name `to`, replacing a file there
    /// atomically. An unnamed file is linked at `to` directly when nothing is there (no
    /// moment with another name), else at `spare` (a free name in the same directory) and
    /// renamed over `to` (where the kernel will not link it, its bytes are copied to `spare`
    /// instead); a named one is renamed from its name.
    ///
    /// # Errors
    /// The flush, link, copy or rename failed; `spare` is removed again when it was made.
    pub fn publish(&self, to: &Path, spare: &Path) -> io::Result<()> {
        self.file.sync_all()?;
        let Some(path) = &self.named else {
            return match link_fd(&self.file, to) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.publish_via(spare, to),
                // the kernel opened it unnamed but will not link it (a sandboxed /proc):
                // copy it out under the spare name instead
                Err(_) => self.copy_via(spare, to),
            };
        };
        if path == to {
            Ok(())
        } else {
            fs::rename(path, to)
        }
    }

    /// Link at `spare`, then rename over `to`.
    fn publish_via(&self, spare: &Path, to: &Path) -> io::Result<()> {
        match link_fd(&self.file, spare) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // an earlier process of our PID left it: ours now
                fs::remove_file(spare)?;
                link_fd(&self.file, spare)?;
            }
            Err(_) => return self.copy_via(spare, to),
        }
        fs::rename(spare, to).inspect_err(|_| {
            let _ = fs::remove_file(spare);
        })
    }

    /// Copy the file's bytes to a new file at `spare`, flush it, rename it over `to`.
    fn copy_via(&self, spare: &Path, to: &Path) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        let r = (|| {
            let mut from = self.file.try_clone()?;
            from.seek(SeekFrom::Start(0))?;
            let mut copy = OutputFile::create_named(spare)?.file;
            io::copy(&mut from, &mut copy)?;
            copy.sync_all()?;
            fs::rename(spare, to)
        })();
        if r.is_err() {
            let _ = fs::remove_file(spare);
        }
        r
    }
}

/// `O_TMPFILE` in `dir`, when the system has it, `/proc` is there to link it later, and
/// [`NAMED_TEMPS_ENV`] does not ask for named temporaries.
#[cfg(target_os = "linux")]
fn open_unnamed(dir: &Path) -> Option<File> {
    use rustix::fs::{Mode, OFlags};
    if std::env::var_os(NAMED_TEMPS_ENV).is_some_and(|v| v == "1")
        || !Path::new("/proc/self/fd").is_dir()
    {
        return None;
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    // any failure (EOPNOTSUPP: the file system lacks it; EISDIR/EINVAL: an old kernel) falls
    // back to a named file, whose own error, if any, is the one reported
    rustix::fs::openat(
        rustix::fs::CWD,
        dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )
    .ok()
    .map(File::from)
}

#[cfg(not(target_os = "linux"))]
fn open_unnamed(_: &Path) -> Option<File> {
    None
}

/// Give an unnamed file the name `to` (which must not exist). Through `/proc/self/fd` with
/// `AT_SYMLINK_FOLLOW`: `AT_EMPTY_PATH` would need `CAP_DAC_READ_SEARCH` on most kernels.
#[cfg(target_os = "linux")]
fn link_fd(file: &File, to: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let from = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::linkat(
        rustix::fs::CWD,
        from.as_str(),
        rustix::fs::CWD,
        to,
        rustix::fs::AtFlags::SYMLINK_FOLLOW,
    )
    .map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn link_fd(_: &File, _: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Take this process's lock on a temporary it made (best effort: a file system without
/// `flock` leaves it unlocked, and [`remove_stale`] then never removes it).
fn lock_file(f: &File) {
    let _ = rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive);
}

/// Hold this process's lock on the temporary directory or file `path` it just made, for as
/// long as the returned handle lives, so that no other run takes it for a killed run's
/// leftover. `None` when it cannot be opened.
pub fn hold_lock(path: &Path) -> Option<File> {
    let f = File::open(path).ok()?;
    lock_file(&f);
    Some(f)
}

/// The temporary name of a local output `dest`: `.NAME.tmp-PID` in the same directory.
pub(crate) fn temp_name(dest: &Path) -> PathBuf {
    let tmp = format!("{}{}", tmp_prefix(dest), std::process::id());
    match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

fn shown_name(dest: &Path) -> String {
    dest.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into())
}

fn tmp_prefix(dest: &Path) -> String {
    format!(".{}.tmp-", shown_name(dest))
}

/// Where an old directory store is moved aside while a new one is renamed into place (where
/// the file system cannot swap the two): `.NAME.old-PID`.
pub(crate) fn aside_name(dest: &Path) -> PathBuf {
    dest.with_file_name(format!(".{}.old-{}", shown_name(dest), std::process::id()))
}

/// What a name beside a destination is, when it is one of our temporaries.
#[derive(Debug, PartialEq, Eq)]
enum Leftover {
    /// `.NAME.tmp-PID`, `.NAME.tmp-PID.tmp`, `.NAME.tmp-PID.nczarr-staging-PID`: an output
    /// being written; removed when stale.
    Temp(u32),
    /// `.NAME.old-PID`: an old store moved aside; put back when the destination is missing.
    Aside(u32),
}

fn classify(entry: &str, dest: &Path) -> Option<Leftover> {
    fn digits(s: &str) -> Option<(u32, &str)> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        Some((s[..end].parse().ok()?, &s[end..]))
    }
    if let Some(rest) = entry.strip_prefix(&tmp_prefix(dest)) {
        let (pid, tail) = digits(rest)?;
        let ours = tail.is_empty()
            || tail == ".tmp"
            || tail
                .strip_prefix(".nczarr-staging-")
                .and_then(digits)
                .is_some_and(|(_, t)| t.is_empty());
        return ours.then_some(Leftover::Temp(pid));
    }
    let rest = entry.strip_prefix(&format!(".{}.old-", shown_name(dest)))?;
    match digits(rest)? {
        (pid, "") => Some(Leftover::Aside(pid)),
        _ => None,
    }
}

/// True when no live process has `pid`: gone, or a zombie (a killed process its parent has
/// not yet waited for; its descriptors and locks are released). Our own PID counts as gone:
/// this run has not made the temporary yet, so an earlier process of the same PID did.
fn process_gone(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") && Path::new("/proc/self").exists() {
        return match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(e) => e.kind() == io::ErrorKind::NotFound,
            // "PID (comm) S ...": the state follows the last ')'
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| {
                matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))
            }),
        };
    }
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    rustix::process::test_kill_process(p) == Err(rustix::io::Errno::SRCH)
}

/// Remove the temporaries that earlier runs to `dest` left when they were killed (SIGKILL,
/// a crash, a power loss): our names for `dest` (`.NAME.tmp-PID`, `.NAME.tmp-PID.tmp`,
/// `.NAME.tmp-PID.nczarr-staging-PID`, `.NAME.old-PID`) whose writer's process is
/// gone and whose lock nobody holds. An old store moved aside is put back when nothing is at
/// `dest` (the run was killed between its two renames), else removed. Best effort and quiet:
/// what cannot be read, locked or removed is left. Returns what was removed or put back.
pub fn remove_stale(dest: &Path) -> Vec<PathBuf> {
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(kind) = classify(&name.to_string_lossy(), dest) else {
            continue;
        };
        let (Leftover::Temp(pid) | Leftover::Aside(pid)) = kind;
        let path = entry.path();
        // a link of that name is not ours to follow
        if !process_gone(pid) || entry.file_type().map_or(true, |t| t.is_symlink()) {
            continue;
        }
        let Ok(held) = File::open(&path) else {
            continue;
        };
        // free lock: no writer; held (or no flock here): leave it
        if rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        match kind {
            Leftover::Aside(_) if fs::symlink_metadata(dest).is_err() => {
                if fs::rename(&path, dest).is_ok() {
                    done.push(path);
                }
            }
            _ => {
                crate::dest::remove_path(&path);
                if fs::symlink_metadata(&path).is_err() {
                    done.push(path);
                }
            }
        }
    }
    done
}

/// Bytes an unprivileged writer may still add to the file system holding `file`, a regular
/// file (`fstatvfs`: available blocks times the fragment size); `None` when it cannot be
/// asked, for other files (devices, pipes), and for file systems that report no size (some
/// network and FUSE ones say 0 of 0).
pub fn free_bytes(file: &std::fs::File) -> Option<u64> {
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let st = rustix::fs::fstatvfs(file).ok()?;
    if st.f_blocks == 0 {
        return None;
    }
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("nc-store-temp-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A PID no process has: a child that has exited and been waited for.
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    #[test]
    fn our_names_are_recognised_and_no_others() {
        let dest = Path::new("/d/out.nc");
        assert_eq!(classify(".out.nc.tmp-42", dest), Some(Leftover::Temp(42)));
        assert_eq!(
            classify(".out.nc.tmp-42.tmp", dest),
            Some(Leftover::Temp(42))
        );
        assert_eq!(
            classify(".out.nc.tmp-42.nczarr-staging-42", dest),
            Some(Leftover::Temp(42))
        );
        assert_eq!(classify(".out.nc.old-7", dest), Some(Leftover::Aside(7)));
        for other in [
            "out.nc",
            ".out.nc.tmp-",
            ".out.nc.tmp-x",
            ".out.nc.tmp-42.bak",
            ".out.nc.tmp-42.nczarr-staging-",
            ".out.nc.old-7.tmp",
            ".out.nc2.tmp-42",
            ".other.nc.tmp-42",
        ] {
            assert_eq!(classify(other, dest), None, "{other}");
        }
    }

    #[test]
    fn an_unnamed_file_has_no_name_until_published() {
        let d = tmpdir("unnamed");
        let to = d.join("out.nc");
        let spare = temp_name(&to);
        let out = OutputFile::create(&d, &spare).unwrap();
        if !out.is_unnamed() {
            eprintln!("SKIP: no O_TMPFILE here");
            return;
        }
        use std::io::Write;
        out.handle().unwrap().write_all(b"new").unwrap();
        assert_eq!(names(&d), Vec::<String>::new());
        out.publish(&to, &spare).unwrap();
        assert_eq!(fs::read(&to).unwrap(), b"new");
        // over an existing file: through the spare name, atomically
        let out = OutputFile::create(&d, &spare).unwrap();
        out.handle().unwrap().write_all(b"newer").unwrap();
        assert_eq!(names(&d), ["out.nc"]);
        out.publish(&to, &spare).unwrap();
        assert_eq!(fs::read(&to).unwrap(), b"newer");
        assert_eq!(names(&d), ["out.nc"]);
        // where linking is refused: copied out under the spare name
        let out = OutputFile::create(&d, &spare).unwrap();
        out.handle().unwrap().write_all(b"copied").unwrap();
        out.copy_via(&spare, &to).unwrap();
        assert_eq!(fs::read(&to).unwrap(), b"copied");
        assert_eq!(names(&d), ["out.nc"]);
        // dropped unpublished: nothing
        let out = OutputFile::create(&d, &spare).unwrap();
        out.handle().unwrap().write_all(b"lost").unwrap();
        drop(out);
        assert_eq!(names(&d), ["out.nc"]);
        assert_eq!(fs::read(&to).unwrap(), b"copied");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn stale_temporaries_go_and_live_ones_stay() {
        let d = tmpdir("stale");
        let dest = d.join("out.zarr");
        let dead = dead_pid();
        // a killed run's store, zip staging directory and archive
        fs::create_dir_all(d.join(format!(".out.zarr.tmp-{dead}/v"))).unwrap();
        fs::write(d.join(format!(".out.zarr.tmp-{dead}/v/0")), b"x").unwrap();
        fs::create_dir(d.join(format!(".out.zarr.tmp-{dead}.nczarr-staging-{dead}"))).unwrap();
        fs::write(d.join(format!(".out.zarr.tmp-{dead}.tmp")), b"x").unwrap();
        // a live writer's (this process stands in for it: alive, and holding the lock)
        let parent = std::os::unix::process::parent_id();
        let live = d.join(format!(".out.zarr.tmp-{parent}"));
        fs::create_dir(&live).unwrap();
        let _lock = hold_lock(&live).unwrap();
        // a dead PID, but the lock is held (another host, another PID namespace)
        let locked = d.join(format!(".out.zarr.tmp-{}", dead_pid()));
        fs::create_dir(&locked).unwrap();
        let _lock2 = hold_lock(&locked).unwrap();
        // not ours
        fs::write(d.join(".out.zarr.tmp-1x"), b"keep").unwrap();
        fs::write(d.join(".other.tmp-1"), b"keep").unwrap();
        let removed = remove_stale(&dest);
        assert_eq!(removed.len(), 3, "{removed:?}");
        let mut want = vec![
            ".other.tmp-1".to_string(),
            ".out.zarr.tmp-1x".to_string(),
            live.file_name().unwrap().to_string_lossy().into_owned(),
            locked.file_name().unwrap().to_string_lossy().into_owned(),
        ];
        want.sort();
        assert_eq!(names(&d), want);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_old_store_left_aside_is_put_back_when_the_destination_is_missing() {
        let d = tmpdir("aside");
        let dest = d.join("s.zarr");
        let aside = d.join(format!(".s.zarr.old-{}", dead_pid()));
        fs::create_dir(&aside).unwrap();
        fs::write(aside.join(".zgroup"), b"old").unwrap();
        remove_stale(&dest);
        assert_eq!(fs::read(dest.join(".zgroup")).unwrap(), b"old");
        assert_eq!(names(&d), ["s.zarr"]);
        // with a destination there, a leftover aside store is removed
        fs::create_dir(&aside).unwrap();
        remove_stale(&dest);
        assert_eq!(names(&d), ["s.zarr"]);
        fs::remove_dir_all(&d).unwrap();
    }
}
