//! The atomic destination: an output becomes visible under its final name only when it is
//! complete, with one commit per kind of place.
//!
//! - A local file or directory store is written under a temporary name beside the destination,
//!   flushed to disk, and renamed into place ([`Destination::Local`]).
//! - An object (a netCDF-4 or classic file bound for a bucket) is written to a temporary local
//!   file, then uploaded by one multipart upload, which the server makes visible only when it
//!   is complete ([`Destination::Object`]).
//! - A store on object storage has no rename and no single upload: it is written in place with
//!   its metadata objects last ([`crate::remote::ObjectKvStore`]; its commit is
//!   [`crate::Store::close`], and [`crate::Store::abort`] says what a failure left).
//!
//! A failure or [`Destination::discard`] removes the temporary; the destination is as it was.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::StoreError;
use crate::remote::RemoteUrl;

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
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        let tmp = format!(".{name}.tmp-{}", std::process::id());
        let tmp = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.join(tmp),
            _ => PathBuf::from(tmp),
        };
        Destination::Local {
            dest: dest.to_path_buf(),
            tmp,
        }
    }

    /// An object destination; the temporary file is `.NAME.upload-PID` in `TMPDIR`.
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

    /// Give up: remove the temporary output.
    pub fn discard(&self) {
        remove_path(self.temp());
    }
}

/// Move a finished temporary output `tmp` to `dest`. A directory at `dest` (an old store
/// already checked by [`check_destination`]) is first renamed aside and removed only after the
/// new one is in place, so `dest` never names a half-removed tree.
fn publish(tmp: &Path, dest: &Path) -> std::io::Result<()> {
    sync_tree(tmp)?;
    let old_dir = fs::symlink_metadata(dest).is_ok_and(|m| m.is_dir());
    if old_dir {
        let aside = aside_name(dest);
        fs::rename(dest, &aside)?;
        if let Err(e) = fs::rename(tmp, dest) {
            // put the old store back: the destination is as it was
            let _ = fs::rename(&aside, dest);
            return Err(e);
        }
        remove_path(&aside);
    } else {
        fs::rename(tmp, dest)?;
    }
    sync_parent(dest);
    Ok(())
}

fn aside_name(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    dest.with_file_name(format!(".{name}.old-{}", std::process::id()))
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
}
