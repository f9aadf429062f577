//! Opening by magic bytes and writing with atomic replacement.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nc_classic::ClassicFile;

use crate::dest::{check_destination, OutputKind};
use nc_dataset::{DataSource, Dataset, Format};
use nc_store::Destination;

/// Opening or creating a dataset failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// The file could not be opened or read.
    #[error("{}", .path.display())]
    Io {
        /// the file
        path: PathBuf,
        /// the OS error
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not any format we know.
    #[error("{}: NetCDF: Unknown file format (first bytes {found:02x?}: not classic netCDF \"CDF\\x01|\\x02|\\x05\", not HDF5, not a Zarr store)", .path.display())]
    UnknownFormat {
        /// the file
        path: PathBuf,
        /// its first bytes
        found: Vec<u8>,
    },
    /// A format or feature this build cannot read or write yet.
    #[error("{}: {what} is not supported yet", .path.display())]
    NotSupported {
        /// the file
        path: PathBuf,
        /// what is missing
        what: String,
    },
    /// The classic reader or writer failed.
    #[error("{}", .path.display())]
    Classic {
        /// the file
        path: PathBuf,
        /// what went wrong
        #[source]
        source: nc_classic::ClassicError,
    },
    /// The NCZarr/Zarr backend failed (its errors name the store, object or variable).
    #[error(transparent)]
    Zarr(nc_zarr::ZarrError),
    /// The HDF5 reader failed (its errors already name the file).
    #[error(transparent)]
    Hdf5(nc_hdf5::Hdf5Error),
    /// A byte source or store failed (its errors name the file or URL, the cause and cure).
    #[error(transparent)]
    Store(nc_store::StoreError),
    /// A remote URL with neither an object nor a Zarr store at it.
    #[error("{url}: no such object, and no Zarr store (.zgroup, zarr.json or .zarray) below it; check the key (the path after the bucket)")]
    RemoteMissing {
        /// the URL as shown (no credentials)
        url: String,
    },
    /// The dataset cannot be written in the format asked for.
    #[error("{}: {why}", .path.display())]
    ModelConflict {
        /// the output file
        path: PathBuf,
        /// the first offending construct
        why: String,
    },
}

/// The storage kind found by [`detect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// CDF-1, CDF-2 or CDF-5.
    Classic(Format),
    /// An HDF5 file (netCDF-4 or plain HDF5), with the byte offset of its superblock.
    Hdf5 {
        /// superblock offset (0, 512, 1024, ...)
        offset: u64,
    },
    /// A Zarr / NCZarr store (directory, zip, or `file://…#mode=` URL).
    Zarr,
}

const HDF5_MAGIC: [u8; 8] = [0x89, b'H', b'D', b'F', b'\r', b'\n', 0x1a, b'\n'];

fn io_err(path: &Path, source: std::io::Error) -> DispatchError {
    DispatchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Find the storage kind of `path` from its bytes (HDF5 signatures are searched at 0 and at
/// powers of two from 512, as the HDF5 format allows a user block).
///
/// # Errors
/// When the file cannot be read or its bytes match no known format.
pub fn detect(path: &Path) -> Result<FileKind, DispatchError> {
    let s = path.to_string_lossy();
    nc_zarr::check_mode_words(&s).map_err(DispatchError::Zarr)?;
    if nc_zarr::parse_location(&s).is_some() {
        return Ok(FileKind::Zarr);
    }
    if let Some(u) = nc_store::remote::parse_remote(&s) {
        return match open_remote(&u)? {
            Remote::Source(src) => detect_source(src.as_ref()),
            Remote::Store(_) => Ok(FileKind::Zarr),
        };
    }
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return Err(DispatchError::UnknownFormat {
            path: path.to_path_buf(),
            found: Vec::new(),
        });
    }
    let mut f = File::open(path).map_err(|e| io_err(path, e))?;
    let mut head = [0u8; 8];
    let n = read_up_to(&mut f, &mut head).map_err(|e| io_err(path, e))?;
    let head = &head[..n];
    if head.len() >= 4 && &head[..3] == b"CDF" {
        match head[3] {
            1 => return Ok(FileKind::Classic(Format::Classic)),
            2 => return Ok(FileKind::Classic(Format::Offset64)),
            5 => return Ok(FileKind::Classic(Format::Cdf5)),
            _ => {}
        }
    }
    if head == HDF5_MAGIC {
        return Ok(FileKind::Hdf5 { offset: 0 });
    }
    let len = meta.len();
    let mut off = 512u64;
    while off + 8 <= len {
        use std::os::unix::fs::FileExt;
        let mut sig = [0u8; 8];
        f.read_exact_at(&mut sig, off)
            .map_err(|e| io_err(path, e))?;
        if sig == HDF5_MAGIC {
            return Ok(FileKind::Hdf5 { offset: off });
        }
        off *= 2;
    }
    Err(DispatchError::UnknownFormat {
        path: path.to_path_buf(),
        found: head.to_vec(),
    })
}

/// What a remote name (not claimed by store mode words) holds.
enum Remote {
    /// An object: a file read by range.
    Source(Arc<dyn nc_store::ByteSource>),
    /// No object, but a Zarr store below it.
    Store(nc_zarr::ZarrLocation),
}

/// Look at a remote name: an object there is a file (read by range, `#mode=bytes` or not);
/// with no object, a prefix holding Zarr metadata is a store.
fn open_remote(u: &nc_store::remote::RemoteUrl) -> Result<Remote, DispatchError> {
    use nc_store::Store;
    match nc_store::remote::open_source(u) {
        Ok(src) => Ok(Remote::Source(Arc::new(src))),
        Err(nc_store::StoreError::Remote { cause, .. })
            if cause == "no such object" && !u.wants_bytes() =>
        {
            let st = nc_store::remote::open_store(u).map_err(DispatchError::Store)?;
            let get = |k: &str| st.get(k).map_err(DispatchError::Store);
            let zgroup = get(".zgroup")?;
            let v3 = zgroup.is_none() && get("zarr.json")?.is_some();
            if zgroup.is_none() && !v3 && get(".zarray")?.is_none() {
                return Err(DispatchError::RemoteMissing {
                    url: u.display.clone(),
                });
            }
            let nczarr = |b: &Option<Vec<u8>>| {
                b.as_ref().is_some_and(|b| {
                    let t = String::from_utf8_lossy(b);
                    t.contains("_nczarr_superblock") || t.contains("_nczarr_group")
                })
            };
            let pure =
                v3 || !(nczarr(&zgroup) || get(".nczgroup")?.is_some() || nczarr(&get(".zattrs")?));
            Ok(Remote::Store(nc_zarr::ZarrLocation::remote_store(
                &u.text, pure,
            )))
        }
        Err(e) => Err(DispatchError::Store(e)),
    }
}

/// The format of a file from its first bytes (HDF5 signatures also at 512, 1024, ...).
fn detect_source(src: &dyn nc_store::ByteSource) -> Result<FileKind, DispatchError> {
    let unknown = |found: Vec<u8>| DispatchError::UnknownFormat {
        path: PathBuf::from(src.name()),
        found,
    };
    let len = src.len();
    let mut head = vec![0u8; len.min(8) as usize];
    src.read_at(0, &mut head).map_err(DispatchError::Store)?;
    if head.len() >= 4 && &head[..3] == b"CDF" {
        match head[3] {
            1 => return Ok(FileKind::Classic(Format::Classic)),
            2 => return Ok(FileKind::Classic(Format::Offset64)),
            5 => return Ok(FileKind::Classic(Format::Cdf5)),
            _ => {}
        }
    }
    if head == HDF5_MAGIC {
        return Ok(FileKind::Hdf5 { offset: 0 });
    }
    let mut off = 512u64;
    while off + 8 <= len {
        let mut sig = [0u8; 8];
        src.read_at(off, &mut sig).map_err(DispatchError::Store)?;
        if sig == HDF5_MAGIC {
            return Ok(FileKind::Hdf5 { offset: off });
        }
        off *= 2;
    }
    Err(unknown(head))
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

enum Backend {
    Classic(ClassicFile),
    Nc4(nc_hdf5::Nc4File),
    Zarr(nc_zarr::ZarrFile),
}

/// An open dataset: its metadata and a source for its data.
pub struct Opened {
    backend: Backend,
    kind: FileKind,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened").field("kind", &self.kind).finish()
    }
}

impl Opened {
    /// The dataset's metadata (and in-memory data, if any).
    pub fn dataset(&self) -> &Dataset {
        match &self.backend {
            Backend::Classic(c) => c.dataset(),
            Backend::Nc4(h) => h.dataset(),
            Backend::Zarr(z) => z.dataset(),
        }
    }

    /// Where its variable data is read from.
    pub fn source(&self) -> &dyn DataSource {
        match &self.backend {
            Backend::Classic(c) => c,
            Backend::Nc4(h) => h,
            Backend::Zarr(z) => z,
        }
    }

    /// What the reader left out or shows differently (one sentence each, naming the object),
    /// for the tool to print on stderr.
    pub fn warnings(&self) -> &[String] {
        match &self.backend {
            Backend::Nc4(h) => h.warnings(),
            Backend::Zarr(z) => z.warnings(),
            Backend::Classic(_) => &[],
        }
    }

    /// The storage kind.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// What `ncdump -K` prints: the extended format name and netCDF-C's mode flags.
    pub fn extended_kind(&self) -> &'static str {
        match self.kind {
            FileKind::Classic(Format::Classic) => "classic mode=00000000",
            FileKind::Classic(Format::Offset64) => "64-bit offset mode=00000200",
            FileKind::Classic(_) => "64-bit data mode=00000020",
            FileKind::Hdf5 { .. } => "HDF5 mode=00001000",
            FileKind::Zarr => "NCZarr mode=00004000",
        }
    }
}

/// Open a dataset file for reading, recognising its format by content.
///
/// # Errors
/// When the file cannot be read, its format is unknown or not supported yet, or its header is bad.
pub fn open(path: &Path) -> Result<Opened, DispatchError> {
    let s = path.to_string_lossy();
    nc_zarr::check_mode_words(&s).map_err(DispatchError::Zarr)?;
    if nc_zarr::parse_location(&s).is_none() {
        if let Some(u) = nc_store::remote::parse_remote(&s) {
            return open_remote_dataset(&u);
        }
    }
    let kind = detect(path)?;
    match kind {
        FileKind::Classic(_) => {
            let c = ClassicFile::open(path).map_err(|source| DispatchError::Classic {
                path: path.to_path_buf(),
                source,
            })?;
            Ok(Opened {
                backend: Backend::Classic(c),
                kind,
            })
        }
        FileKind::Hdf5 { .. } => {
            let decoder = std::sync::Arc::new(nc_hdf5::chunk_decoder());
            let h = nc_hdf5::Nc4File::open_with(path, decoder).map_err(DispatchError::Hdf5)?;
            Ok(Opened {
                backend: Backend::Nc4(h),
                kind,
            })
        }
        FileKind::Zarr => {
            let loc = nc_zarr::ZarrLocation::parse(&path.to_string_lossy())
                .map_err(DispatchError::Zarr)?;
            let z = nc_zarr::ZarrFile::open(&loc).map_err(DispatchError::Zarr)?;
            Ok(Opened {
                backend: Backend::Zarr(z),
                kind,
            })
        }
    }
}

/// Open a remote file (by range) or store.
fn open_remote_dataset(u: &nc_store::remote::RemoteUrl) -> Result<Opened, DispatchError> {
    let src = match open_remote(u)? {
        Remote::Store(loc) => {
            let z = nc_zarr::ZarrFile::open(&loc).map_err(DispatchError::Zarr)?;
            return Ok(Opened {
                backend: Backend::Zarr(z),
                kind: FileKind::Zarr,
            });
        }
        Remote::Source(src) => src,
    };
    let kind = detect_source(src.as_ref())?;
    let shown = PathBuf::from(src.name());
    let backend = match kind {
        FileKind::Classic(_) => Backend::Classic(
            ClassicFile::open_source(src, &nc_classic::Limits::default()).map_err(|source| {
                DispatchError::Classic {
                    path: shown.clone(),
                    source,
                }
            })?,
        ),
        FileKind::Hdf5 { .. } => {
            let decoder = Arc::new(nc_hdf5::chunk_decoder());
            let name = name_of(&u.key);
            Backend::Nc4(
                nc_hdf5::Nc4File::open_source(src, &name, decoder).map_err(DispatchError::Hdf5)?,
            )
        }
        FileKind::Zarr => {
            return Err(DispatchError::UnknownFormat {
                path: shown,
                found: Vec::new(),
            })
        }
    };
    Ok(Opened { backend, kind })
}

/// ncdump's dataset name for an object key: its last segment without the extension.
fn name_of(key: &str) -> String {
    let base = key.rsplit('/').next().unwrap_or(key);
    match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_string(),
        _ => base.to_string(),
    }
}

/// How to create an output dataset.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// The output format.
    pub format: Format,
    /// Write fill values into parts the source does not provide (ncgen `-x` turns this off).
    pub fill: bool,
    /// Write only the data the source holds (ncgen: variables without a data list are left
    /// as the file's fill); `false` copies every variable's data (nccopy).
    pub only_given_data: bool,
    /// Replace an existing destination file even when the user may not write it (as a
    /// rename allows); a directory that is not a store is never replaced.
    pub force: bool,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            format: Format::Classic,
            fill: true,
            only_given_data: false,
            force: false,
        }
    }
}

/// Write `ds` (data from `src`) to `path` in the asked format. The file is written beside the
/// destination under a temporary name, flushed to disk, and renamed into place only on
/// success, so a failure never leaves a partial output and never clobbers an existing file.
/// A destination that must not be replaced (a directory for a file output, a directory that
/// is not a store, a file the user may not write) is refused before anything is written; a
/// symbolic link is written through (see `dest.rs`).
///
/// # Errors
/// When the dataset does not fit the format, the destination must not be replaced, or
/// writing fails.
pub fn create(
    path: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
) -> Result<(), DispatchError> {
    create_inner(path, ds, src, opts, None).map(|_| ())
}

/// One step of writing the NCZarr / Zarr store at `path` by parts (fan-out, see
/// [`nc_zarr::fanout`]): init (under a temporary name, renamed into place, for a directory),
/// one part, or finish. `facts` are plan facts beyond the metadata; every step must get the
/// same.
///
/// # Errors
/// As [`create`]; an output that is not a directory or object-storage store; the step's own
/// refusals (another plan, parts missing).
pub fn create_part(
    path: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
    step: nc_zarr::FanoutStep,
    facts: &[u8],
) -> Result<nc_zarr::FanoutOutcome, DispatchError> {
    match create_inner(path, ds, src, opts, Some((step, facts)))? {
        Some(outcome) => Ok(outcome),
        None => Err(DispatchError::NotSupported {
            path: path.to_path_buf(),
            what: "writing by parts (--part) a file output".into(),
        }),
    }
}

fn create_inner(
    path: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
    step: Option<(nc_zarr::FanoutStep, &[u8])>,
) -> Result<Option<nc_zarr::FanoutOutcome>, DispatchError> {
    let s = path.to_string_lossy();
    nc_zarr::check_mode_words(&s).map_err(DispatchError::Zarr)?;
    let zarr = zarr_output(path);
    let remote = match &zarr {
        None => nc_store::remote::parse_remote(&s),
        Some(_) => None,
    };
    // an NCZarr store is always chunked and holds storage settings whatever the format kind
    // asked: a classic kind there means the classic data model (netCDF-4 classic), CDF-5
    // adds its types (as netCDF-4 does)
    let model = match (&zarr, opts.format) {
        (Some(_), Format::Classic | Format::Offset64) => Format::Netcdf4Classic,
        (Some(_), Format::Cdf5) => Format::Netcdf4,
        (_, f) => f,
    };
    if let Some(why) = crate::model_conflict(ds, model) {
        return Err(DispatchError::ModelConflict {
            path: path.to_path_buf(),
            why,
        });
    }
    if !zarr.as_ref().is_some_and(|l| l.v3) {
        if let Some(v) = ds
            .all_vars()
            .into_iter()
            .find(|&v| ds.var(v).storage.shard_sizes.is_some())
        {
            return Err(DispatchError::ModelConflict {
                path: path.to_path_buf(),
                why: format!(
                    "variable \"{}\" has _ShardSizes, which only a Zarr v3 output holds \
                     (file://PATH#mode=zarr,v3,file); remove it or write Zarr v3",
                    ds.var_path(v)
                ),
            });
        }
    }
    // quantization (CDL _Quantize*, nccopy-rs -Q) happens as the data is read, before filters
    let quantizing =
        crate::quantize::Quantizing::wrap(ds, src).map_err(|why| DispatchError::ModelConflict {
            path: path.to_path_buf(),
            why,
        })?;
    let src: &dyn DataSource = match &quantizing {
        Some(q) => q,
        None => src,
    };
    if let Some((step, facts)) = step {
        return match zarr {
            Some(loc) => create_zarr_step(&loc, ds, src, opts.force, step, facts).map(Some),
            None => Ok(None),
        };
    }
    if let Some(loc) = zarr {
        return create_zarr(&loc, ds, src, opts.force).map(|()| None);
    }
    // a remote file is written locally first, then uploaded whole (visible once complete)
    let dest = match &remote {
        Some(u) => Destination::object(u),
        None => Destination::local(&check_destination(path, OutputKind::File, opts.force)?),
    };
    let tmp = dest.temp().to_path_buf();
    let _guard = crate::cleanup::register_temp(&tmp);
    let writeback = dest.start_writeback();
    let result = match opts.format {
        Format::Classic | Format::Offset64 | Format::Cdf5 => {
            let wopts = nc_classic::WriteOptions {
                format: opts.format,
                fill: opts.fill,
                only_given_data: opts.only_given_data,
            };
            nc_classic::write_file(&tmp, ds, src, &wopts).map_err(|source| DispatchError::Classic {
                path: path.to_path_buf(),
                source,
            })
        }
        Format::Netcdf4 | Format::Netcdf4Classic => {
            let wopts = nc_hdf5::Nc4WriteOptions {
                classic_model: opts.format == Format::Netcdf4Classic,
                fill: opts.fill,
                only_given_data: opts.only_given_data,
            };
            nc_hdf5::write_file(&tmp, ds, src, &wopts).map_err(|e| match e {
                // name the destination, not the temporary file the user never sees
                nc_hdf5::Hdf5Error::InFile { inner, .. } => {
                    DispatchError::Hdf5(nc_hdf5::Hdf5Error::InFile {
                        path: path.to_path_buf(),
                        inner,
                    })
                }
                other => DispatchError::Hdf5(other),
            })
        }
    };
    drop(writeback);
    finish(&dest, result).map(|()| None)
}

/// Commit the finished temporary output (rename, or upload), or remove it after a failure.
fn finish(dest: &Destination, result: Result<(), DispatchError>) -> Result<(), DispatchError> {
    if let Err(e) = result {
        dest.discard();
        return Err(e);
    }
    let committed = match dest {
        // under the interrupt registry's lock: an interrupt either comes first (and the
        // destination stays untouched) or waits until the output is completely in place
        Destination::Local { .. } => {
            let mut r = Ok(());
            let lock = crate::cleanup::commit_unless_interrupted(|| {
                r = dest.commit();
                Ok(())
            });
            lock.map_err(|e| {
                dest.discard();
                nc_store::StoreError::io(dest.temp().display(), e)
            })
            .and(r)
        }
        // an upload is long: an interrupt during it exits, and the incomplete multipart
        // upload is never visible
        Destination::Object { url, .. } => {
            if crate::cleanup::is_interrupted() {
                dest.discard();
                return Err(io_err(
                    Path::new(&url.display),
                    std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "interrupted before the output was complete",
                    ),
                ));
            }
            dest.commit()
        }
    };
    committed.map_err(|e| match e {
        nc_store::StoreError::Io { path, source } => DispatchError::Io {
            path: PathBuf::from(path),
            source,
        },
        e => DispatchError::Store(e),
    })
}

/// True when an output name asks for an NCZarr / Zarr store.
pub(crate) fn is_zarr_output(path: &Path) -> bool {
    zarr_output(path).is_some()
}

/// True when the output name asks for a Zarr version 3 store (`#mode=zarr,v3,…`).
pub(crate) fn is_zarr_v3_output(path: &Path) -> bool {
    zarr_output(path).is_some_and(|l| l.v3)
}

/// The NCZarr location an output name asks for (`file://…#mode=…` or a path with `#mode=`).
pub(crate) fn zarr_output(path: &Path) -> Option<nc_zarr::ZarrLocation> {
    let s = path.to_string_lossy();
    if !(s.starts_with("file://") || s.contains("#mode=")) {
        return None;
    }
    nc_zarr::parse_location(&s)
}

/// Write an NCZarr / Zarr store under a temporary name beside the destination, then rename it.
fn create_zarr(
    loc: &nc_zarr::ZarrLocation,
    ds: &Dataset,
    src: &dyn DataSource,
    force: bool,
) -> Result<(), DispatchError> {
    let opts = nc_zarr::ZarrWriteOptions {
        layout: loc.write_layout().map_err(DispatchError::Zarr)?,
        ..Default::default()
    };
    if loc.remote.is_some() {
        // on object storage the store is written in place, its metadata last (nc-store), so
        // it never looks complete before it is; a failure says what it left
        return nc_zarr::write_store(loc, ds, src, &opts).map_err(DispatchError::Zarr);
    }
    let kind = match loc.storage {
        nc_zarr::StorageKind::File => OutputKind::Directory,
        nc_zarr::StorageKind::Zip => OutputKind::File,
    };
    let dest = Destination::local(&check_destination(&loc.path, kind, force)?);
    let _guard = crate::cleanup::register_temp(dest.temp());
    let mut tmp_loc = loc.clone();
    tmp_loc.path = dest.temp().to_path_buf();
    let result = nc_zarr::write_store(&tmp_loc, ds, src, &opts).map_err(DispatchError::Zarr);
    finish(&dest, result)
}

/// One fan-out step into the store at `loc`: init is written as a whole copy is (under a
/// temporary name, renamed into place, for a directory); a part or finish adds to the store
/// in place.
fn create_zarr_step(
    loc: &nc_zarr::ZarrLocation,
    ds: &Dataset,
    src: &dyn DataSource,
    force: bool,
    step: nc_zarr::FanoutStep,
    facts: &[u8],
) -> Result<nc_zarr::FanoutOutcome, DispatchError> {
    let opts = nc_zarr::ZarrWriteOptions {
        layout: loc.write_layout().map_err(DispatchError::Zarr)?,
        ..Default::default()
    };
    let run = |at: &nc_zarr::ZarrLocation| {
        nc_zarr::fanout::write_step(at, ds, src, &opts, step, facts).map_err(DispatchError::Zarr)
    };
    if step != nc_zarr::FanoutStep::Init
        || loc.remote.is_some()
        || loc.storage == nc_zarr::StorageKind::Zip
    {
        return run(loc);
    }
    let dest = Destination::local(&check_destination(&loc.path, OutputKind::Directory, force)?);
    let _guard = crate::cleanup::register_temp(dest.temp());
    let mut tmp_loc = loc.clone();
    tmp_loc.path = dest.temp().to_path_buf();
    let mut outcome = None;
    let result = run(&tmp_loc).map(|o| outcome = Some(o));
    finish(&dest, result)?;
    Ok(outcome.unwrap_or(nc_zarr::FanoutOutcome::Written))
}
