//! Byte sources: a file's bytes wherever they live, read by range (`read_at`), several ranges
//! at once (`read_ranges`, which a remote source coalesces into fewer requests).

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::StoreError;

/// A read-only sequence of bytes with ranged reads: a local file, a byte buffer, an object
/// in a bucket, a file on a web server. Readers of HDF5 and classic files ask it for ranges
/// and never learn where the bytes are.
pub trait ByteSource: Send + Sync {
    /// The number of bytes.
    fn len(&self) -> u64;

    /// True when there are no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fill `buf` with the bytes from `offset`.
    ///
    /// # Errors
    /// [`StoreError::Range`] when the range is not inside the source; I/O or request failures.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError>;

    /// `n` bytes from `offset` in a new buffer. A local file reads them straight into the
    /// buffer (no zeroing first, no copy after); the default fills a zeroed buffer with
    /// [`ByteSource::read_at`].
    ///
    /// # Errors
    /// As [`ByteSource::read_at`].
    fn read_vec(&self, offset: u64, n: usize) -> Result<Vec<u8>, StoreError> {
        // checked before the buffer is made: a hostile length field must not size an
        // allocation beyond the bytes the source holds
        check_range(self.name(), offset, n, self.len())?;
        let mut buf = vec![0u8; n];
        self.read_at(offset, &mut buf)?;
        Ok(buf)
    }

    /// `n` bytes from `offset` appended to `out` (a buffer used again: a local file reads
    /// them straight into its spare room, without zeroing it first). On error `out` may hold
    /// part of them.
    ///
    /// # Errors
    /// As [`ByteSource::read_at`].
    fn read_append(&self, offset: u64, n: usize, out: &mut Vec<u8>) -> Result<(), StoreError> {
        out.extend_from_slice(&self.read_vec(offset, n)?);
        Ok(())
    }

    /// The bytes of each range, in the order asked. A remote source merges ranges that are
    /// close together into one request and runs requests concurrently; the default reads
    /// them one by one.
    ///
    /// # Errors
    /// As [`ByteSource::read_at`], for the first range that fails.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>, StoreError> {
        ranges
            .iter()
            .map(|r| {
                let n = range_len(self.name(), r, self.len())?;
                let mut buf = vec![0u8; n];
                self.read_at(r.start, &mut buf)?;
                Ok(buf)
            })
            .collect()
    }

    /// The name to show in messages: a path or a URL without credentials.
    fn name(&self) -> &str;

    /// True for a source reached over a network (readers size their read-ahead by it).
    fn is_remote(&self) -> bool {
        false
    }

    /// The file's path when the bytes are a local file: files it names by relative path
    /// (HDF5 external links and raw data files) are looked for beside it, and references to
    /// its bytes name it. `None` for every other source.
    fn local_path(&self) -> Option<&Path> {
        None
    }

    /// The file these bytes name as `name` (an HDF5 external link's file, a virtual
    /// dataset's source file, an external raw data file), found by HDF5's rule: an absolute
    /// name as it is; a relative one beside this file (when this is a local file) if it is
    /// there, else in the current directory. `None` when it is in neither place.
    fn open_named(&self, name: &str) -> Option<Result<Arc<dyn ByteSource>, StoreError>> {
        let path = find_named(self.local_path().and_then(Path::parent), name)?;
        Some(FileSource::open(&path).map(|s| Arc::new(s) as Arc<dyn ByteSource>))
    }

    /// What makes two sources the same file (its canonical path, for a local file), so that a
    /// reader following names opens each file once and sees a cycle. `None`: no identity.
    fn identity(&self) -> Option<PathBuf> {
        std::fs::canonicalize(self.local_path()?).ok()
    }
}

/// Where a file named `name` by a file in `dir` is (see [`ByteSource::open_named`]).
fn find_named(dir: Option<&Path>, name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.exists().then(|| p.to_path_buf());
    }
    if let Some(beside) = dir.map(|d| d.join(p)).filter(|b| b.exists()) {
        return Some(beside);
    }
    p.exists().then(|| p.to_path_buf())
}

/// The length of `r` as a buffer size, checked against the source's length.
///
/// # Errors
/// [`StoreError::Range`] for a range past the end or too large to hold.
pub fn range_len(name: &str, r: &Range<u64>, len: u64) -> Result<usize, StoreError> {
    let bad = || StoreError::Range {
        key: name.to_string(),
        offset: r.start,
        end: r.end,
        size: len,
    };
    if r.end < r.start || r.end > len || r.end - r.start > crate::MAX_OBJECT_SIZE {
        return Err(bad());
    }
    usize::try_from(r.end - r.start).map_err(|_| bad())
}

/// Check that `offset..offset + n` lies inside a source of `len` bytes.
pub(crate) fn check_range(name: &str, offset: u64, n: usize, len: u64) -> Result<(), StoreError> {
    let end = offset.saturating_add(n as u64);
    if end > len {
        return Err(StoreError::Range {
            key: name.to_string(),
            offset,
            end,
            size: len,
        });
    }
    Ok(())
}

/// A local file, read with positional reads (any size; several threads at once).
///
/// The file's first [`HEAD`] bytes are read once, at the first small read that lies within
/// them, and served from memory after: readers of HDF5 structures ask for a hundred small
/// pieces of a small file, most of them there, and a join or a reference set over thousands
/// of files then costs one read per file instead of a hundred. Small reads in the first
/// [`FIRST`] bytes are served from those alone until [`PAST_FIRST`] small reads went past
/// them: the format probe and a classic header need no more, nor do the few values of a
/// record coordinate past them (copying 64 KiB of every input of a join was a fifth of its
/// planning). Larger reads go to the file.
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
    name: String,
    path: PathBuf,
    head: OnceLock<Option<Box<[u8]>>>,
    /// The first [`FIRST`] bytes, read before the head is needed.
    first: OnceLock<Option<Box<[u8]>>>,
    /// Small reads in the head's span but past [`FIRST`], while the head is not read.
    past_first: std::sync::atomic::AtomicU32,
}

/// How many of a file's first bytes [`FileSource`] keeps.
const HEAD: u64 = 64 << 10;

/// How many of a file's first bytes are kept before the head is.
const FIRST: u64 = 8 << 10;

/// Small reads past [`FIRST`] (in the head's span) that go to the file before the head is read.
const PAST_FIRST: u32 = 3;

/// The largest read served from the kept head (a larger one is data: read where it is).
const HEAD_READ: usize = 16 << 10;

impl FileSource {
    /// Open `path` for reading.
    ///
    /// # Errors
    /// [`StoreError::Io`] when it cannot be opened or is not a file.
    pub fn open(path: &Path) -> Result<FileSource, StoreError> {
        let file = File::open(path).map_err(|e| StoreError::io(path.display(), e))?;
        let md = file
            .metadata()
            .map_err(|e| StoreError::io(path.display(), e))?;
        if md.is_dir() {
            return Err(StoreError::io(
                path.display(),
                std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory"),
            ));
        }
        Ok(FileSource {
            file,
            len: md.len(),
            name: path.display().to_string(),
            path: path.to_path_buf(),
            head: OnceLock::new(),
            first: OnceLock::new(),
            past_first: std::sync::atomic::AtomicU32::new(0),
        })
    }

    /// A failed read of `n` bytes at `offset`, worded: past the end when the file shrank
    /// since it was opened.
    fn read_error(&self, offset: u64, n: usize, e: std::io::Error) -> StoreError {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            StoreError::Range {
                key: self.name.clone(),
                offset,
                end: offset.saturating_add(n as u64),
                size: self.len,
            }
        } else {
            StoreError::io(&self.name, e)
        }
    }

    /// The bytes `offset..offset + n` from the kept head, when they lie in it and the read
    /// is small (its first [`FIRST`] bytes are read at the first such read, the whole head
    /// once [`PAST_FIRST`] such reads went past them).
    fn in_head(&self, offset: u64, n: usize) -> Option<&[u8]> {
        let end = offset.checked_add(n as u64)?;
        if n > HEAD_READ || end > HEAD.min(self.len) {
            return None;
        }
        let kept = |size: u64| {
            let len = usize::try_from(size.min(self.len)).ok()?;
            pread_vec(&self.file, 0, len)
                .ok()
                .map(Vec::into_boxed_slice)
        };
        let range = usize::try_from(offset).ok()?..usize::try_from(end).ok()?;
        if self.head.get().is_none() {
            if end <= FIRST {
                return self
                    .first
                    .get_or_init(|| kept(FIRST))
                    .as_deref()?
                    .get(range);
            }
            let past = &self.past_first;
            if past.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < PAST_FIRST {
                return None;
            }
        }
        self.head.get_or_init(|| kept(HEAD)).as_deref()?.get(range)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ByteSource for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        check_range(&self.name, offset, buf.len(), self.len)?;
        if let Some(b) = self.in_head(offset, buf.len()) {
            buf.copy_from_slice(b);
            return Ok(());
        }
        (self.file.read_exact_at(buf, offset)).map_err(|e| self.read_error(offset, buf.len(), e))
    }

    fn local_path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn read_append(&self, offset: u64, n: usize, out: &mut Vec<u8>) -> Result<(), StoreError> {
        check_range(&self.name, offset, n, self.len)?;
        if let Some(b) = self.in_head(offset, n) {
            out.extend_from_slice(b);
            return Ok(());
        }
        pread_append(&self.file, offset, n, out).map_err(|e| self.read_error(offset, n, e))
    }

    fn read_vec(&self, offset: u64, n: usize) -> Result<Vec<u8>, StoreError> {
        let mut out = Vec::new();
        self.read_append(offset, n, &mut out)?;
        Ok(out)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// `n` bytes at `offset` of `file`, read by `pread` into a fresh buffer's spare capacity, so
/// a large read (a contiguous variable, a chunk) is not zeroed first (the local fast path).
fn pread_vec(file: &File, offset: u64, n: usize) -> std::io::Result<Vec<u8>> {
    let mut buf: Vec<u8> = Vec::new();
    pread_append(file, offset, n, &mut buf)?;
    Ok(buf)
}

/// `n` bytes from `offset` appended to `buf`, read straight into its spare capacity.
#[allow(unsafe_code)]
fn pread_append(file: &File, offset: u64, n: usize, buf: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind};
    use std::os::fd::AsRawFd;
    buf.reserve(n);
    let base = buf.len();
    let mut done = 0usize;
    while done < n {
        let at = offset
            .checked_add(done as u64)
            .and_then(|o| libc::off_t::try_from(o).ok())
            .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "offset past 2^63"))?;
        // SAFETY: the destination is the buffer's spare capacity from `base + done` on, which
        // holds at least `n - done` bytes (reserved above); pread writes at most that many
        // there and nothing else, and the descriptor is open (owned by `file`, borrowed for
        // the call).
        let r = unsafe {
            libc::pread(
                file.as_raw_fd(),
                buf.as_mut_ptr().add(base + done).cast(),
                n - done,
                at,
            )
        };
        match r {
            0 => {
                return Err(Error::new(
                    ErrorKind::UnexpectedEof,
                    "the file ended early (truncated while being read?)",
                ))
            }
            r if r > 0 => done += r as usize,
            _ => {
                let e = Error::last_os_error();
                if e.kind() != ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    // SAFETY: pread initialised the `n` bytes after `base` (the loop ends only when
    // `done == n`), within the capacity reserved above.
    unsafe { buf.set_len(base + n) };
    Ok(())
}

/// Bytes in memory (tests, fuzzing, small files fetched whole).
#[derive(Debug, Clone)]
pub struct BytesSource {
    bytes: std::sync::Arc<[u8]>,
    name: String,
}

impl BytesSource {
    /// A source over `bytes`, called `name` in messages.
    pub fn new(bytes: impl Into<std::sync::Arc<[u8]>>, name: &str) -> BytesSource {
        BytesSource {
            bytes: bytes.into(),
            name: name.to_string(),
        }
    }
}

impl ByteSource for BytesSource {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        check_range(&self.name, offset, buf.len(), self.len())?;
        // in range: offset + len <= bytes.len(), which fits usize
        let s = offset as usize;
        buf.copy_from_slice(&self.bytes[s..s + buf.len()]);
        Ok(())
    }

    fn name(&self) -> &str {
        &self.name
    }
}
