//! What an output name may replace, decided before anything is written.
//!
//! netCDF-C opens its output with `O_CREAT|O_TRUNC`: a directory there fails with "Is a
//! directory", a file the user may not write fails with "Permission denied", and a symbolic
//! link is written through. We write beside the destination and rename into place, which the
//! kernel allows in cases `open` would refuse (rename needs only the directory's permission,
//! and it replaces a directory or a link itself), so the same refusals are made here, first.
//!
//! - A file output (classic, netCDF-4) never replaces a directory, and replaces a file only
//!   when the user could open it for writing (or asked to force it).
//! - A store output (NCZarr / Zarr directory) replaces only a directory that is a Zarr store
//!   (or empty), and never a plain file; a zip store replaces only a file.
//! - A symbolic link at the destination is followed: its target is replaced, the link stays.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::open::DispatchError;

/// What kind of output is about to be written at a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputKind {
    /// One file: classic, netCDF-4, or a zip store.
    File,
    /// A directory store.
    Directory,
}

/// Keys whose presence at the top of a directory makes it a Zarr store we may replace (the
/// plan key: a store being written by parts, `nccopy-rs --part`, whose root metadata comes
/// last; `.zmetadata`: also fsspec's Parquet references, `ncdump-rs --kerchunk-format
/// parquet`).
const STORE_MARKERS: [&str; 7] = [
    ".zgroup",
    ".zarray",
    ".zattrs",
    "zarr.json",
    ".nczarr",
    ".zmetadata",
    nc_zarr::fanout::PLAN_KEY,
];

fn refuse(path: &Path, kind: ErrorKind, msg: String) -> DispatchError {
    DispatchError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(kind, msg),
    }
}

/// Check that writing `kind` at `path` replaces nothing the user did not ask to replace, and
/// return the path to write (a symbolic link's target, or `path` itself).
///
/// # Errors
/// [`DispatchError::Io`] naming the destination and the cure when it must not be replaced.
pub(crate) fn check_destination(
    path: &Path,
    kind: OutputKind,
    force: bool,
) -> Result<PathBuf, DispatchError> {
    let link = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => {
            return Err(DispatchError::Io {
                path: path.to_path_buf(),
                source: e,
            })
        }
    };
    // follow a link (chains too) to what it names; a dangling link is written through as well
    let target = if link.file_type().is_symlink() {
        resolve_link(path)?
    } else {
        path.to_path_buf()
    };
    let meta = match fs::metadata(&target) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(target),
        Err(e) => {
            return Err(DispatchError::Io {
                path: path.to_path_buf(),
                source: e,
            })
        }
    };
    match kind {
        OutputKind::File if meta.is_dir() => Err(refuse(
            path,
            ErrorKind::IsADirectory,
            "Is a directory: the output must be a file name (to write an NCZarr store there, \
             name it as file://PATH#mode=nczarr,file)"
                .into(),
        )),
        OutputKind::File => {
            // only a regular file is opened to test it: opening a FIFO for writing would block
            if !force && meta.is_file() {
                check_writable(path, &target)?;
            }
            Ok(target)
        }
        OutputKind::Directory if !meta.is_dir() => Err(refuse(
            path,
            ErrorKind::AlreadyExists,
            "exists and is a file, not a Zarr store: remove it or choose another name".into(),
        )),
        OutputKind::Directory => {
            if !is_store_or_empty(&target) {
                return Err(refuse(
                    path,
                    ErrorKind::AlreadyExists,
                    "exists and is a directory that is not a Zarr store (no .zgroup, .zarray, \
                     .zattrs or zarr.json): refusing to replace it; remove it or choose another \
                     name"
                        .into(),
                ));
            }
            if !force && meta.permissions().readonly() {
                return Err(refuse(
                    path,
                    ErrorKind::PermissionDenied,
                    "Permission denied: the store is read-only (make it writable, or use \
                     --force to replace it)"
                        .into(),
                ));
            }
            Ok(target)
        }
    }
}

/// True when `out` and one of `inputs` (paths or store URLs) reach the same local file or
/// directory, through symbolic links, hard links or different spellings: copying onto `out`
/// would replace that input. The output is looked at once, and the inputs only when it exists
/// (a join names thousands).
pub fn output_is_an_input(inputs: &[nc_store::Location], out: &nc_store::Location) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(out) = out.local_path().and_then(|p| fs::metadata(p).ok()) else {
        return false;
    };
    inputs.iter().any(|i| {
        i.local_path()
            .and_then(|p| fs::metadata(p).ok())
            .is_some_and(|m| m.dev() == out.dev() && m.ino() == out.ino())
    })
}

/// The file a symbolic link finally names (relative links resolve against their directory).
fn resolve_link(path: &Path) -> Result<PathBuf, DispatchError> {
    let mut cur = path.to_path_buf();
    // as the kernel does (ELOOP after 40 links)
    for _ in 0..40 {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&cur).map_err(|e| DispatchError::Io {
                    path: path.to_path_buf(),
                    source: e,
                })?;
                cur = match cur.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(cur),
        }
    }
    Err(refuse(
        path,
        ErrorKind::InvalidInput,
        "Too many levels of symbolic links".into(),
    ))
}

/// Refuse a file the user could not open for writing, as netCDF-C's `open(O_TRUNC)` would.
/// Opening without truncation changes nothing in the file.
fn check_writable(path: &Path, target: &Path) -> Result<(), DispatchError> {
    match fs::OpenOptions::new().write(true).open(target) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::PermissionDenied => Err(refuse(
            path,
            ErrorKind::PermissionDenied,
            "Permission denied: the existing file is not writable by you (make it writable, \
             remove it, or use --force to replace it)"
                .into(),
        )),
        // a busy executable, a special file: let the write itself report it
        Err(_) => Ok(()),
    }
}

/// True for a directory holding Zarr metadata at its top, or nothing at all.
fn is_store_or_empty(dir: &Path) -> bool {
    if STORE_MARKERS.iter().any(|m| dir.join(m).exists()) {
        return true;
    }
    fs::read_dir(dir).is_ok_and(|mut it| it.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("nc-dest-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_directory_is_never_a_file_destination() {
        let d = tmpdir("dir");
        let out = d.join("d");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("keep"), b"x").unwrap();
        let e = check_destination(&out, OutputKind::File, true).unwrap_err();
        assert!(e.to_string().contains("d"), "{e}");
        let DispatchError::Io { source, .. } = e else {
            panic!("wrong variant")
        };
        assert_eq!(source.kind(), ErrorKind::IsADirectory);
        assert_eq!(fs::read(out.join("keep")).unwrap(), b"x");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn only_stores_or_empty_directories_are_replaced_by_stores() {
        let d = tmpdir("store");
        let plain = d.join("plain");
        fs::create_dir(&plain).unwrap();
        fs::write(plain.join("keep"), b"x").unwrap();
        let e = check_destination(&plain, OutputKind::Directory, false).unwrap_err();
        let DispatchError::Io { source, .. } = e else {
            panic!("wrong variant")
        };
        assert!(source.to_string().contains("not a Zarr store"), "{source}");
        let store = d.join("store");
        fs::create_dir(&store).unwrap();
        fs::write(store.join(".zgroup"), b"{}").unwrap();
        assert_eq!(
            check_destination(&store, OutputKind::Directory, false).unwrap(),
            store
        );
        let empty = d.join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(check_destination(&empty, OutputKind::Directory, false).is_ok());
        let file = d.join("file");
        fs::write(&file, b"x").unwrap();
        assert!(check_destination(&file, OutputKind::Directory, true).is_err());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn aliases_of_one_file_are_the_same_dataset() {
        let d = tmpdir("alias");
        let real = d.join("in.nc");
        fs::write(&real, b"x").unwrap();
        fs::hard_link(&real, d.join("hard.nc")).unwrap();
        std::os::unix::fs::symlink("in.nc", d.join("soft.nc")).unwrap();
        fs::write(d.join("other.nc"), b"x").unwrap();
        let same = |a: &Path, b: &Path| {
            output_is_an_input(
                &[nc_store::Location::local(a)],
                &nc_store::Location::local(b),
            )
        };
        assert!(same(&real, &d.join("hard.nc")));
        assert!(same(&real, &d.join("soft.nc")));
        assert!(same(&real, &d.join(".").join("in.nc")));
        assert!(!same(&real, &d.join("other.nc")));
        assert!(!same(&real, &d.join("missing.nc")));
        let store = d.join("s.zarr");
        fs::create_dir(&store).unwrap();
        let url = format!("file://{}#mode=nczarr,file", store.display());
        assert!(output_is_an_input(
            &[nc_store::Location::local(&store)],
            &nc_store::Location::parse(&url).unwrap()
        ));
        // one of several inputs; none, when the output does not exist
        let inputs = [
            nc_store::Location::local(&d.join("other.nc")),
            nc_store::Location::local(&d.join("soft.nc")),
        ];
        assert!(output_is_an_input(
            &inputs,
            &nc_store::Location::local(&real)
        ));
        assert!(!output_is_an_input(
            &inputs,
            &nc_store::Location::local(&d.join("missing.nc"))
        ));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn links_are_followed_to_their_target() {
        let d = tmpdir("link");
        let real = d.join("real.nc");
        fs::write(&real, b"old").unwrap();
        let link = d.join("link.nc");
        std::os::unix::fs::symlink("real.nc", &link).unwrap();
        assert_eq!(
            check_destination(&link, OutputKind::File, false).unwrap(),
            d.join("real.nc")
        );
        let dirlink = d.join("dirlink");
        fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub", &dirlink).unwrap();
        assert!(check_destination(&dirlink, OutputKind::File, false).is_err());
        let looped = d.join("loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap();
        assert!(check_destination(&looped, OutputKind::File, false).is_err());
        fs::remove_dir_all(&d).unwrap();
    }
}
