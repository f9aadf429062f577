//! Key → bytes stores (the NCZarr "zmap"): a directory tree, a zip archive, memory.
//!
//! Keys are relative, `/`-separated paths such as `g1/v/.zarray` or `v/0.1`. Every key is
//! checked by [`check_key`] before use, so no key can name anything outside the store
//! (`..`, absolute paths, backslashes, empty segments and NUL are refused).

use crate::error::StoreError;
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Largest object a store hands out (4 GiB); larger objects are refused, not allocated.
pub const MAX_OBJECT_SIZE: u64 = 1 << 32;

/// A key → bytes map holding one dataset.
pub trait Store: Send + Sync {
    /// The object at `key`, or `None` when there is none.
    ///
    /// # Errors
    /// Bad key, I/O failure, or an object larger than [`MAX_OBJECT_SIZE`].
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Store `value` at `key`, replacing any object there.
    ///
    /// # Errors
    /// Bad key, I/O failure, or a read-only store.
    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError>;
    /// All keys under `prefix` (a key path without trailing `/`; `""` for the whole store),
    /// sorted.
    ///
    /// # Errors
    /// Bad prefix or I/O failure.
    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError>;
    /// Remove the object at `key` (no error when there is none).
    ///
    /// # Errors
    /// Bad key, I/O failure, or a read-only store.
    fn delete(&self, key: &str) -> Result<(), StoreError>;
    /// `len` bytes of the object at `key` from byte `offset` (a shard's index or one of its
    /// inner chunks), `None` when there is no object. The default reads the whole object.
    ///
    /// # Errors
    /// As [`Store::get`]; a range past the object's end.
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(all) = self.get(key)? else {
            return Ok(None);
        };
        let end = offset.checked_add(len).filter(|&e| e <= all.len() as u64);
        match end {
            Some(end) => Ok(Some(all[offset as usize..end as usize].to_vec())),
            None => Err(range_error(key, offset, len, all.len() as u64)),
        }
    }
    /// The size in bytes of the object at `key`, `None` when there is none. The default reads
    /// the whole object.
    ///
    /// # Errors
    /// As [`Store::get`].
    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.get(key)?.map(|b| b.len() as u64))
    }
    /// A writer of the object at `key` that takes its bytes piece by piece (a shard: each
    /// inner chunk as it is encoded, then the index), so the whole object is never held in
    /// memory where the store can avoid it. The object is complete once
    /// [`ObjectWriter::finish`] returns. The default collects the pieces and stores them with
    /// [`Store::put`].
    ///
    /// # Errors
    /// As [`Store::put`].
    fn writer<'a>(&'a self, key: &str) -> Result<Box<dyn ObjectWriter + 'a>, StoreError> {
        check_key(key)?;
        Ok(Box::new(Collected {
            store: self,
            key: key.to_string(),
            bytes: Vec::new(),
        }))
    }
    /// Remove what is left of `prefix` once its keys are deleted (a directory store's empty
    /// directory); stores without such remains do nothing.
    ///
    /// # Errors
    /// Bad prefix, I/O failure.
    fn prune(&self, prefix: &str) -> Result<(), StoreError> {
        check_key(prefix)
    }
    /// Finish writing (a zip store builds its archive here). Reading stores do nothing.
    ///
    /// # Errors
    /// I/O failure.
    fn close(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Give up writing: remove what was written where the store can, and say what it left
    /// behind (a sentence naming the keys), or `None` when the store leaves nothing a reader
    /// could mistake for a dataset (local stores are written under a temporary name).
    fn abort(&self) -> Option<String> {
        None
    }
}

/// An object being written piece by piece ([`Store::writer`]).
pub trait ObjectWriter {
    /// Append `bytes` to the object.
    ///
    /// # Errors
    /// I/O failure.
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError>;
    /// Complete the object.
    ///
    /// # Errors
    /// I/O failure.
    fn finish(self: Box<Self>) -> Result<(), StoreError>;
}

/// The default [`ObjectWriter`]: the pieces collected, then stored with [`Store::put`].
struct Collected<'a, S: Store + ?Sized> {
    store: &'a S,
    key: String,
    bytes: Vec<u8>,
}

impl<S: Store + ?Sized> ObjectWriter for Collected<'_, S> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(), StoreError> {
        self.store.put(&self.key, &self.bytes)
    }
}

/// A file of a directory store written piece by piece.
struct FileWriter {
    file: fs::File,
    path: PathBuf,
}

impl ObjectWriter for FileWriter {
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.file
            .write_all(bytes)
            .map_err(|e| StoreError::io(self.path.display(), e))
    }
    fn finish(self: Box<Self>) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The error of a byte range that is not inside its object.
pub(crate) fn range_error(key: &str, offset: u64, len: u64, size: u64) -> StoreError {
    StoreError::Range {
        key: key.to_string(),
        offset,
        end: offset.saturating_add(len),
        size,
    }
}

/// Check that `key` is a safe relative key: non-empty `/`-separated segments, none of them
/// `.` or `..`, no backslash, no NUL, not absolute.
///
/// # Errors
/// [`StoreError::BadKey`] naming the problem.
pub fn check_key(key: &str) -> Result<(), StoreError> {
    let bad = |reason| {
        Err(StoreError::BadKey {
            key: key.to_string(),
            reason,
        })
    };
    if key.is_empty() {
        return bad("empty key");
    }
    if key.starts_with('/') {
        return bad("absolute key");
    }
    if key.contains('\\') || key.contains('\0') {
        return bad("backslash or NUL in key");
    }
    for seg in key.split('/') {
        match seg {
            "" => return bad("empty path segment"),
            "." | ".." => return bad("'.' or '..' segment"),
            _ => {}
        }
        let b = seg.as_bytes();
        if b.len() == 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
            return bad("drive-letter segment");
        }
    }
    Ok(())
}

pub(crate) fn check_prefix(prefix: &str) -> Result<(), StoreError> {
    if prefix.is_empty() {
        Ok(())
    } else {
        check_key(prefix)
    }
}

pub(crate) fn under(prefix: &str, key: &str) -> bool {
    prefix.is_empty()
        || (key.len() > prefix.len()
            && key.starts_with(prefix)
            && key.as_bytes()[prefix.len()] == b'/')
}

/// A dataset stored as a directory tree: key `a/b/c` is the file `ROOT/a/b/c`.
#[derive(Debug, Clone)]
pub struct DirStore {
    root: PathBuf,
    writable: bool,
    /// The lock this process holds on a directory it made ([`DirStore::create`]) while the
    /// store lives, so that no other run takes it for a killed run's temporary
    /// ([`crate::remove_stale`]).
    _lock: Option<std::sync::Arc<fs::File>>,
}

impl DirStore {
    /// Open an existing directory store for reading.
    ///
    /// # Errors
    /// [`StoreError::Io`] when `root` is not a directory.
    pub fn open(root: &Path) -> Result<DirStore, StoreError> {
        let md = fs::metadata(root).map_err(|e| StoreError::io(root.display(), e))?;
        if !md.is_dir() {
            return Err(StoreError::io(
                root.display(),
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a directory"),
            ));
        }
        Ok(DirStore {
            root: root.to_path_buf(),
            writable: false,
            _lock: None,
        })
    }

    /// Open an existing directory store to add keys to it, replacing nothing (a writer of one
    /// part of a store another call created).
    ///
    /// # Errors
    /// [`StoreError::Io`] when `root` is not a directory.
    pub fn open_writable(root: &Path) -> Result<DirStore, StoreError> {
        let mut s = DirStore::open(root)?;
        s.writable = true;
        Ok(s)
    }

    /// Create a new directory store at `root`. An existing empty directory or an existing
    /// Zarr store (a directory holding `.zgroup`) is replaced; anything else is refused.
    ///
    /// # Errors
    /// [`StoreError::Io`] when the directory exists with other contents or cannot be made.
    pub fn create(root: &Path) -> Result<DirStore, StoreError> {
        if root.exists() {
            let is_store = root.join(".zgroup").is_file();
            let is_empty = root.is_dir()
                && fs::read_dir(root)
                    .map_err(|e| StoreError::io(root.display(), e))?
                    .next()
                    .is_none();
            if !is_store && !is_empty {
                return Err(StoreError::io(
                    root.display(),
                    std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "exists and is not a Zarr store; remove it or choose another name",
                    ),
                ));
            }
            fs::remove_dir_all(root).map_err(|e| StoreError::io(root.display(), e))?;
        }
        fs::create_dir_all(root).map_err(|e| StoreError::io(root.display(), e))?;
        Ok(DirStore {
            root: root.to_path_buf(),
            writable: true,
            _lock: crate::temp::hold_lock(root).map(std::sync::Arc::new),
        })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &str) -> Result<PathBuf, StoreError> {
        check_key(key)?;
        let mut p = self.root.clone();
        for seg in key.split('/') {
            p.push(seg);
        }
        Ok(p)
    }

    /// Make the missing directories of `key` below the root, never the root itself: a store
    /// removed while it is written (an interrupted copy's temporary) stays removed, and the
    /// write fails instead of bringing it back.
    fn make_dirs_for(&self, key: &str) -> Result<(), StoreError> {
        let mut dir = self.root.clone();
        let segs: Vec<&str> = key.split('/').collect();
        for seg in &segs[..segs.len().saturating_sub(1)] {
            dir.push(seg);
            match fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(StoreError::io(dir.display(), e)),
            }
        }
        Ok(())
    }

    fn read_only(&self, key: &str) -> StoreError {
        StoreError::io(
            format!("{}/{key}", self.root.display()),
            std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "store opened for reading",
            ),
        )
    }
}

impl Store for DirStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let p = self.path(key)?;
        let md = match fs::metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(p.display(), e)),
        };
        if !md.is_file() {
            return Ok(None);
        }
        if md.len() > MAX_OBJECT_SIZE {
            return Err(StoreError::TooLarge {
                key: key.to_string(),
                limit: MAX_OBJECT_SIZE,
            });
        }
        fs::read(&p)
            .map(Some)
            .map_err(|e| StoreError::io(p.display(), e))
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StoreError> {
        use std::io::{Read, Seek, SeekFrom};
        let p = self.path(key)?;
        let mut f = match fs::File::open(&p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(p.display(), e)),
        };
        let size = f
            .metadata()
            .map_err(|e| StoreError::io(p.display(), e))?
            .len();
        if offset.checked_add(len).is_none_or(|e| e > size) || len > MAX_OBJECT_SIZE {
            return Err(range_error(key, offset, len, size));
        }
        let mut buf = vec![0u8; len as usize];
        f.seek(SeekFrom::Start(offset))
            .and_then(|_| f.read_exact(&mut buf))
            .map_err(|e| StoreError::io(p.display(), e))?;
        Ok(Some(buf))
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let p = self.path(key)?;
        match fs::metadata(&p) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(p.display(), e)),
        }
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        if !self.writable {
            return Err(self.read_only(key));
        }
        let p = self.path(key)?;
        // the directory is made only when the write finds it missing (one mkdir per chunk
        // directory, not per chunk)
        match fs::write(&p, value) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.make_dirs_for(key)?;
                fs::write(&p, value)
            }
            r => r,
        }
        .map_err(|e| StoreError::io(p.display(), e))
    }

    fn writer<'a>(&'a self, key: &str) -> Result<Box<dyn ObjectWriter + 'a>, StoreError> {
        if !self.writable {
            return Err(self.read_only(key));
        }
        let path = self.path(key)?;
        let file = match fs::File::create(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.make_dirs_for(key)?;
                fs::File::create(&path)
            }
            r => r,
        }
        .map_err(|e| StoreError::io(path.display(), e))?;
        Ok(Box::new(FileWriter { file, path }))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_prefix(prefix)?;
        let start = if prefix.is_empty() {
            self.root.clone()
        } else {
            self.path(prefix)?
        };
        let mut out = Vec::new();
        let mut stack = vec![(start, prefix.to_string())];
        while let Some((dir, key)) = stack.pop() {
            let rd = match fs::read_dir(&dir) {
                Ok(r) => r,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io(dir.display(), e)),
            };
            for ent in rd {
                let ent = ent.map_err(|e| StoreError::io(dir.display(), e))?;
                let Some(name) = ent.file_name().to_str().map(str::to_string) else {
                    continue; // not UTF-8: cannot be a key
                };
                let k = if key.is_empty() {
                    name
                } else {
                    format!("{key}/{name}")
                };
                // symlinks are not followed out of the store: file_type() does not follow
                let ft = ent
                    .file_type()
                    .map_err(|e| StoreError::io(dir.display(), e))?;
                if ft.is_dir() {
                    stack.push((ent.path(), k));
                } else if ft.is_file() {
                    out.push(k);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        if !self.writable {
            return Err(self.read_only(key));
        }
        let p = self.path(key)?;
        match fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io(p.display(), e)),
        }
    }

    fn prune(&self, prefix: &str) -> Result<(), StoreError> {
        if !self.writable {
            return Err(self.read_only(prefix));
        }
        let p = self.path(prefix)?;
        match fs::remove_dir(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            // only an empty directory goes: a key still below it keeps it
            Err(_) if fs::read_dir(&p).is_ok_and(|mut d| d.next().is_some()) => Ok(()),
            Err(e) => Err(StoreError::io(p.display(), e)),
        }
    }
}

/// A dataset stored in a zip archive. Reading: entries are looked up by name, under the
/// archive's root or, when the root has no `.zgroup` (or Zarr v3 `zarr.json`), under its single top-level directory
/// (as `zip -r x.zip x.file` makes). Writing: objects go to a staging directory beside the
/// archive, and [`Store::close`] builds the archive from it.
pub struct ZipStore {
    path: PathBuf,
    mode: ZipMode,
}

enum ZipMode {
    Read {
        archive: Mutex<zip::ZipArchive<fs::File>>,
        /// key → entry index
        index: BTreeMap<String, usize>,
    },
    Write {
        staging: DirStore,
        closed: Mutex<bool>,
    },
}

impl std::fmt::Debug for ZipStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZipStore")
            .field("path", &self.path)
            .finish()
    }
}

impl ZipStore {
    /// Open a zip archive for reading.
    ///
    /// # Errors
    /// I/O failure or a file that is not a zip archive.
    pub fn open(path: &Path) -> Result<ZipStore, StoreError> {
        let f = fs::File::open(path).map_err(|e| StoreError::io(path.display(), e))?;
        let mut archive = zip::ZipArchive::new(f).map_err(|e| StoreError::Zip {
            path: path.display().to_string(),
            msg: e.to_string(),
        })?;
        let mut names = Vec::new();
        for i in 0..archive.len() {
            let ent = archive.by_index_raw(i).map_err(|e| StoreError::Zip {
                path: path.display().to_string(),
                msg: e.to_string(),
            })?;
            if ent.is_dir() {
                continue;
            }
            let name = ent.name().trim_start_matches("./").to_string();
            if check_key(&name).is_ok() {
                names.push((name, i));
            }
        }
        // root detection: `.zgroup` at the top, else one top-level directory holding it
        // (a pure Zarr store may lack the root .zgroup: an array one level down marks it too)
        let has_root = names.iter().any(|(n, _)| {
            n == ".zgroup"
                || n == "zarr.json"
                || (n.ends_with("/.zarray") && n.matches('/').count() == 1)
        });
        let mut prefix = String::new();
        if !has_root {
            let tops: std::collections::BTreeSet<&str> = names
                .iter()
                .filter_map(|(n, _)| n.split_once('/').map(|(t, _)| t))
                .collect();
            if tops.len() == 1 {
                if let Some(t) = tops.into_iter().next() {
                    prefix = format!("{t}/");
                }
            }
        }
        let index = names
            .into_iter()
            .filter_map(|(n, i)| n.strip_prefix(prefix.as_str()).map(|k| (k.to_string(), i)))
            .filter(|(k, _)| !k.is_empty())
            .collect();
        Ok(ZipStore {
            path: path.to_path_buf(),
            mode: ZipMode::Read {
                archive: Mutex::new(archive),
                index,
            },
        })
    }

    /// Start a new zip store at `path` (written by [`Store::close`]). An existing file at
    /// `path` is replaced at close.
    ///
    /// # Errors
    /// When the staging directory cannot be made.
    pub fn create(path: &Path) -> Result<ZipStore, StoreError> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".nczarr-staging-{}", std::process::id()));
        let staging = DirStore::create(&path.with_file_name(name))?;
        Ok(ZipStore {
            path: path.to_path_buf(),
            mode: ZipMode::Write {
                staging,
                closed: Mutex::new(false),
            },
        })
    }

    fn zip_err(&self, msg: impl std::fmt::Display) -> StoreError {
        StoreError::Zip {
            path: self.path.display().to_string(),
            msg: msg.to_string(),
        }
    }

    fn read_only(&self) -> StoreError {
        self.zip_err("opened for reading; zip stores are written whole by create + close")
    }

    fn build_archive(&self, staging: &DirStore) -> Result<(), StoreError> {
        let keys = staging.list("")?;
        let mut tmp_name = self.path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(".tmp");
        let tmp = self.path.with_file_name(tmp_name);
        // unnamed until complete where the system allows (nothing for a SIGKILL to leave)
        let dir = self.path.parent().unwrap_or(Path::new(""));
        let out = crate::temp::OutputFile::create(dir, &tmp)
            .and_then(|o| Ok((o.handle()?, o)))
            .map_err(|e| StoreError::io(tmp.display(), e));
        let (f, out) = out?;
        let mut w = zip::ZipWriter::new(std::io::BufWriter::new(f));
        for key in keys {
            // metadata deflated; chunks stored (usually compressed already)
            let meta = key.rsplit('/').next().is_some_and(|s| s.starts_with('.'));
            let method = if meta {
                zip::CompressionMethod::Deflated
            } else {
                zip::CompressionMethod::Stored
            };
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(method)
                .large_file(false);
            let data = staging.get(&key)?.unwrap_or_default();
            w.start_file(key.as_str(), opts)
                .map_err(|e| self.zip_err(e))?;
            w.write_all(&data)
                .map_err(|e| StoreError::io(tmp.display(), e))?;
        }
        let mut inner = w.finish().map_err(|e| self.zip_err(e))?;
        inner
            .flush()
            .map_err(|e| StoreError::io(tmp.display(), e))?;
        drop(inner);
        out.publish(&self.path, &tmp)
            .map_err(|e| StoreError::io(self.path.display(), e))?;
        fs::remove_dir_all(staging.root()).map_err(|e| StoreError::io(staging.root().display(), e))
    }
}

impl Store for ZipStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_key(key)?;
        match &self.mode {
            ZipMode::Write { staging, .. } => staging.get(key),
            ZipMode::Read { archive, index } => {
                let Some(&i) = index.get(key) else {
                    return Ok(None);
                };
                let mut a = archive.lock().map_err(|_| self.zip_err("lock poisoned"))?;
                let ent = a.by_index(i).map_err(|e| self.zip_err(e))?;
                let declared = ent.size();
                if declared > MAX_OBJECT_SIZE {
                    return Err(StoreError::TooLarge {
                        key: key.to_string(),
                        limit: MAX_OBJECT_SIZE,
                    });
                }
                // never trust the declared size beyond the limit: read at most declared+1
                let mut out = Vec::with_capacity(declared.min(1 << 24) as usize);
                ent.take(declared + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| self.zip_err(format!("entry {key:?}: {e}")))?;
                if out.len() as u64 != declared {
                    return Err(self.zip_err(format!(
                        "entry {key:?} inflates to a size other than the {declared} bytes it declares"
                    )));
                }
                Ok(Some(out))
            }
        }
    }

    /// A stored (uncompressed) entry, as zarr-python's `ZipStore` writes them, is read in
    /// place: a shard's index or one inner chunk, not the whole shard.
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StoreError> {
        use std::io::{Seek, SeekFrom};
        check_key(key)?;
        let ZipMode::Read { archive, index } = &self.mode else {
            return self.get(key).and_then(|b| match b {
                None => Ok(None),
                Some(all) => match offset.checked_add(len).filter(|&e| e <= all.len() as u64) {
                    Some(end) => Ok(Some(all[offset as usize..end as usize].to_vec())),
                    None => Err(range_error(key, offset, len, all.len() as u64)),
                },
            });
        };
        let Some(&i) = index.get(key) else {
            return Ok(None);
        };
        let (start, size, stored) = {
            let mut a = archive.lock().map_err(|_| self.zip_err("lock poisoned"))?;
            let ent = a.by_index_raw(i).map_err(|e| self.zip_err(e))?;
            (
                ent.data_start(),
                ent.size(),
                ent.compression() == zip::CompressionMethod::Stored
                    && ent.compressed_size() == ent.size(),
            )
        };
        if offset.checked_add(len).is_none_or(|e| e > size) || len > MAX_OBJECT_SIZE {
            return Err(range_error(key, offset, len, size));
        }
        if !stored {
            let all = self.get(key)?.unwrap_or_default();
            return match offset.checked_add(len).filter(|&e| e <= all.len() as u64) {
                Some(end) => Ok(Some(all[offset as usize..end as usize].to_vec())),
                None => Err(range_error(key, offset, len, all.len() as u64)),
            };
        }
        let mut f =
            fs::File::open(&self.path).map_err(|e| StoreError::io(self.path.display(), e))?;
        let mut buf = vec![0u8; len as usize];
        f.seek(SeekFrom::Start(start + offset))
            .and_then(|_| f.read_exact(&mut buf))
            .map_err(|e| self.zip_err(format!("entry {key:?}: {e}")))?;
        Ok(Some(buf))
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        check_key(key)?;
        match &self.mode {
            ZipMode::Write { staging, .. } => staging.size(key),
            ZipMode::Read { archive, index } => {
                let Some(&i) = index.get(key) else {
                    return Ok(None);
                };
                let mut a = archive.lock().map_err(|_| self.zip_err("lock poisoned"))?;
                let ent = a.by_index_raw(i).map_err(|e| self.zip_err(e))?;
                Ok(Some(ent.size()))
            }
        }
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        match &self.mode {
            ZipMode::Write { staging, .. } => staging.put(key, value),
            ZipMode::Read { .. } => Err(self.read_only()),
        }
    }

    fn writer<'a>(&'a self, key: &str) -> Result<Box<dyn ObjectWriter + 'a>, StoreError> {
        match &self.mode {
            ZipMode::Write { staging, .. } => staging.writer(key),
            ZipMode::Read { .. } => Err(self.read_only()),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_prefix(prefix)?;
        match &self.mode {
            ZipMode::Write { staging, .. } => staging.list(prefix),
            ZipMode::Read { index, .. } => {
                Ok(index.keys().filter(|k| under(prefix, k)).cloned().collect())
            }
        }
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        match &self.mode {
            ZipMode::Write { staging, .. } => staging.delete(key),
            ZipMode::Read { .. } => Err(self.read_only()),
        }
    }

    fn close(&self) -> Result<(), StoreError> {
        match &self.mode {
            ZipMode::Read { .. } => Ok(()),
            ZipMode::Write { staging, closed } => {
                let mut done = closed.lock().map_err(|_| self.zip_err("lock poisoned"))?;
                if *done {
                    return Ok(());
                }
                self.build_archive(staging)?;
                *done = true;
                Ok(())
            }
        }
    }
}

impl Drop for ZipStore {
    fn drop(&mut self) {
        // an unclosed writer leaves no staging directory behind
        if let ZipMode::Write { staging, closed } = &self.mode {
            if closed.lock().map(|c| !*c).unwrap_or(false) {
                let _ = fs::remove_dir_all(staging.root());
            }
        }
    }
}

/// A store in memory (tests, fuzzing, building a store before writing it elsewhere).
#[derive(Debug, Default)]
pub struct MemStore {
    map: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl MemStore {
    /// An empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, BTreeMap<String, Vec<u8>>>, StoreError> {
        self.map.lock().map_err(|_| StoreError::BadKey {
            key: String::new(),
            reason: "memory store lock poisoned",
        })
    }
}

impl Store for MemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        check_key(key)?;
        Ok(self.lock()?.get(key).cloned())
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        check_key(key)?;
        self.lock()?.insert(key.to_string(), value.to_vec());
        Ok(())
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_prefix(prefix)?;
        Ok(self
            .lock()?
            .keys()
            .filter(|k| under(prefix, k))
            .cloned()
            .collect())
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        check_key(key)?;
        self.lock()?.remove(key);
        Ok(())
    }
}

/// Copy every object of `from` into `to` (zipping a directory store, unzipping a zip
/// store); `to` is not closed.
///
/// # Errors
/// Read or write failures of either store.
pub fn copy_store(from: &dyn Store, to: &dyn Store) -> Result<usize, StoreError> {
    let keys = from.list("")?;
    for k in &keys {
        if let Some(v) = from.get(k)? {
            to.put(k, &v)?;
        }
    }
    Ok(keys.len())
}

#[cfg(test)]
mod tests;
