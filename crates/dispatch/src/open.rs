//! Opening by magic bytes (or a store's metadata keys) and writing with atomic replacement,
//! both from a [`Location`] parsed once by the binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nc_classic::ClassicFile;

use crate::dest::{check_destination, OutputKind};
use nc_dataset::{DataSource, Dataset, Format};
use nc_store::{Destination, Location};

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
    /// The OPeNDAP client failed (its errors name the URL or file).
    #[error(transparent)]
    Dap(nc_dap::DapError),
    /// A remote URL with neither an object nor a Zarr store at it.
    #[error("{url}: no such object, no OPeNDAP dataset (URL.dds), and no Zarr store (.zgroup, zarr.json or .zarray) below it; check the key (the path after the bucket)")]
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
    /// A Zarr / NCZarr store (directory, zip, or objects below a prefix).
    Zarr,
    /// An OPeNDAP dataset (DAP2 or DAP4 responses, local `file://` or from a server).
    Dap(nc_store::DapProtocol),
}

const HDF5_MAGIC: [u8; 8] = [0x89, b'H', b'D', b'F', b'\r', b'\n', 0x1a, b'\n'];

fn io_err(path: &Path, source: std::io::Error) -> DispatchError {
    DispatchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A local store or file failure as the dispatch error that names the file once.
fn store_err(e: nc_store::StoreError) -> DispatchError {
    match e {
        nc_store::StoreError::Io { path, source } => DispatchError::Io {
            path: PathBuf::from(path),
            source,
        },
        e => DispatchError::Store(e),
    }
}

/// What a location holds, found by [`probe`].
enum Found {
    /// A file: its bytes and format.
    File(Arc<dyn nc_store::ByteSource>, FileKind),
    /// A Zarr store, opened, and how to read it.
    Store(Box<dyn nc_store::Store>, nc_zarr::ZarrModes),
    /// An OPeNDAP dataset, by this protocol.
    Dap(nc_store::DapProtocol),
}

/// The mode words of `loc` as the Zarr backend's options.
fn zarr_modes(loc: &Location) -> nc_zarr::ZarrModes {
    nc_zarr::ZarrModes::from(&loc.store_modes())
}

/// Format detection, the one place: a store when the mode words name one; else a local
/// directory holding Zarr metadata, or a local `.zip` holding a store; else, for a remote
/// name, the object there (or, when there is none, a store below it); else the first bytes of
/// the file (HDF5 signatures are also searched at 512, 1024, ... as the format allows a user
/// block).
fn probe(loc: &Location) -> Result<Found, DispatchError> {
    if let Some(p) = loc.dap() {
        return Ok(Found::Dap(p));
    }
    if loc.names_store() {
        let store = loc.open_store().map_err(nc_zarr::ZarrError::from);
        return Ok(Found::Store(
            store.map_err(DispatchError::Zarr)?,
            zarr_modes(loc),
        ));
    }
    // a local file (not a zip archive) is opened at once: one look at it, where a join opens
    // thousands; what cannot be opened as a file is looked at below
    let file = loc
        .local_path()
        .filter(|_| loc.storage_kind() != nc_store::StorageKind::Zip)
        .and_then(|_| loc.open_source().ok());
    if let (Some(path), None) = (loc.local_path(), &file) {
        let unknown = || DispatchError::UnknownFormat {
            path: PathBuf::from(loc.text()),
            found: Vec::new(),
        };
        let meta = std::fs::metadata(path).map_err(|source| DispatchError::Io {
            path: PathBuf::from(loc.text()),
            source,
        })?;
        if meta.is_dir() {
            // no #mode: NCZarr when the store holds NCZarr metadata, else pure Zarr
            let store = nc_store::DirStore::open(path).map_err(store_err)?;
            if !has_any(&store, &[".zgroup", ".zarray", ".zattrs", "zarr.json"])? {
                return Err(unknown());
            }
            let modes = nc_zarr::ZarrModes {
                pure_zarr: !has_nczarr_metadata(&store)?,
                ..nc_zarr::ZarrModes::default()
            };
            return Ok(Found::Store(Box::new(store), modes));
        }
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
        {
            if let Ok(z) = nc_store::ZipStore::open(path) {
                if has_any(&z, &[".zgroup", "zarr.json"]).unwrap_or(false) {
                    return Ok(Found::Store(Box::new(z), nc_zarr::ZarrModes::default()));
                }
            }
        }
    }
    let src = match file {
        Some(src) => src,
        None => match loc.remote() {
            Some(u) => match nc_store::remote::open_source(u) {
                Ok(src) => Arc::new(src) as Arc<dyn nc_store::ByteSource>,
                Err(nc_store::StoreError::Remote { cause, .. })
                    if cause == "no such object" && !u.wants_bytes() =>
                {
                    // no object: a DAP2 server's dataset (URL.dds answers), else a Zarr store
                    if nc_dap::answers_dap2(loc) {
                        return Ok(Found::Dap(nc_store::DapProtocol::Dap2));
                    }
                    return remote_store(loc, u);
                }
                Err(e) => return Err(DispatchError::Store(e)),
            },
            None => loc.open_source().map_err(store_err)?,
        },
    };
    let kind = match file_kind(src.as_ref(), loc) {
        // a web page or other object that is not netCDF, where URL.dds is a DAP2 dataset
        Err(DispatchError::UnknownFormat { .. })
            if loc.is_remote() && nc_dap::answers_dap2(loc) =>
        {
            return Ok(Found::Dap(nc_store::DapProtocol::Dap2));
        }
        k => k?,
    };
    Ok(Found::File(src, kind))
}

/// True when the store holds any of `keys`.
fn has_any(store: &dyn nc_store::Store, keys: &[&str]) -> Result<bool, DispatchError> {
    for k in keys {
        if store.get(k).map_err(DispatchError::Store)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// True when the store holds NCZarr metadata (`.nczgroup`, or an `_nczarr_superblock` /
/// `_nczarr_group` key in its `.zgroup` or `.zattrs`), not only pure Zarr.
fn has_nczarr_metadata(store: &dyn nc_store::Store) -> Result<bool, DispatchError> {
    if has_any(store, &[".nczgroup"])? {
        return Ok(true);
    }
    for k in [".zgroup", ".zattrs"] {
        if let Some(b) = store.get(k).map_err(DispatchError::Store)? {
            let t = String::from_utf8_lossy(&b);
            if t.contains("_nczarr_superblock") || t.contains("_nczarr_group") {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A remote name with no object at it: the Zarr store below it, found by its metadata.
fn remote_store(loc: &Location, u: &nc_store::remote::RemoteUrl) -> Result<Found, DispatchError> {
    let st = nc_store::remote::open_store(u).map_err(DispatchError::Store)?;
    let v2 = has_any(&st, &[".zgroup"])?;
    let v3 = !v2 && has_any(&st, &["zarr.json"])?;
    if !v2 && !v3 && !has_any(&st, &[".zarray"])? {
        return Err(DispatchError::RemoteMissing {
            url: u.display.clone(),
        });
    }
    let modes = nc_zarr::ZarrModes {
        pure_zarr: v3 || !has_nczarr_metadata(&st)?,
        ..zarr_modes(loc)
    };
    Ok(Found::Store(Box::new(st), modes))
}

/// The format of a file from its first bytes (HDF5 signatures also at 512, 1024, ...).
fn file_kind(src: &dyn nc_store::ByteSource, loc: &Location) -> Result<FileKind, DispatchError> {
    let len = src.len();
    let head = src.read_vec(0, len.min(8) as usize).map_err(store_err)?;
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
        if src.read_vec(off, 8).map_err(store_err)? == HDF5_MAGIC {
            return Ok(FileKind::Hdf5 { offset: off });
        }
        off *= 2;
    }
    Err(DispatchError::UnknownFormat {
        path: shown_path(loc, src),
        found: head,
    })
}

/// How an input is named in errors: a local name as given, a remote one without credentials.
fn shown_path(loc: &Location, src: &dyn nc_store::ByteSource) -> PathBuf {
    if loc.is_remote() {
        PathBuf::from(src.name())
    } else {
        PathBuf::from(loc.text())
    }
}

/// Find the storage kind at `at` from its bytes or its store's metadata keys.
///
/// # Errors
/// When it cannot be read, or holds no format we know.
pub fn detect(at: &Location) -> Result<FileKind, DispatchError> {
    Ok(match probe(at)? {
        Found::File(_, kind) => kind,
        Found::Store(..) => FileKind::Zarr,
        Found::Dap(p) => FileKind::Dap(p),
    })
}

enum Backend {
    Classic(ClassicFile),
    Nc4(nc_hdf5::Nc4File),
    Zarr(nc_zarr::ZarrFile),
    Dap(nc_dap::DapFile),
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
            Backend::Dap(d) => d.dataset(),
        }
    }

    /// Where its variable data is read from.
    pub fn source(&self) -> &dyn DataSource {
        match &self.backend {
            Backend::Classic(c) => c,
            Backend::Nc4(h) => h,
            Backend::Zarr(z) => z,
            Backend::Dap(d) => d,
        }
    }

    /// What the reader left out or shows differently (one sentence each, naming the object),
    /// for the tool to print on stderr.
    pub fn warnings(&self) -> &[String] {
        match &self.backend {
            Backend::Nc4(h) => h.warnings(),
            Backend::Zarr(z) => z.warnings(),
            Backend::Dap(d) => d.warnings(),
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
            FileKind::Dap(nc_store::DapProtocol::Dap2) => "DAP2 mode=00000000",
            FileKind::Dap(nc_store::DapProtocol::Dap4) => "DAP4 mode=00001000",
        }
    }
}

/// Open a dataset for reading, recognising its format by content ([`detect`]).
///
/// # Errors
/// When it cannot be read, its format is unknown or not supported yet, or its header is bad.
pub fn open(loc: &Location) -> Result<Opened, DispatchError> {
    let (src, kind) = match probe(loc)? {
        Found::Store(store, modes) => {
            let z = nc_zarr::ZarrFile::open(store, &loc.display(), &loc.dataset_name(), &modes)
                .map_err(DispatchError::Zarr)?;
            return Ok(Opened {
                backend: Backend::Zarr(z),
                kind: FileKind::Zarr,
            });
        }
        Found::File(src, kind) => (src, kind),
        Found::Dap(p) => {
            let d = nc_dap::DapFile::open(loc, p).map_err(DispatchError::Dap)?;
            return Ok(Opened {
                backend: Backend::Dap(d),
                kind: FileKind::Dap(p),
            });
        }
    };
    let shown = shown_path(loc, src.as_ref());
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
            Backend::Nc4(
                nc_hdf5::Nc4File::open_source(src, &loc.dataset_name(), decoder)
                    .map_err(DispatchError::Hdf5)?,
            )
        }
        // probe finds stores as stores and DAP datasets as such: a file is neither
        FileKind::Zarr | FileKind::Dap(_) => {
            return Err(DispatchError::UnknownFormat {
                path: shown,
                found: Vec::new(),
            })
        }
    };
    Ok(Opened { backend, kind })
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

/// Write `ds` (data from `src`) to `at` in the asked format. The file is written beside the
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
    at: &Location,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
) -> Result<(), DispatchError> {
    create_inner(at, ds, src, opts, None).map(|_| ())
}

/// One step of writing the NCZarr / Zarr store at `at` by parts (fan-out, see
/// [`nc_zarr::fanout`]): init (under a temporary name, renamed into place, for a directory),
/// one part, or finish. `facts` are plan facts beyond the metadata; every step must get the
/// same.
///
/// # Errors
/// As [`create`]; an output that is not a directory or object-storage store; the step's own
/// refusals (another plan, parts missing).
pub fn create_part(
    at: &Location,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
    step: nc_zarr::FanoutStep,
    facts: &[u8],
) -> Result<nc_zarr::FanoutOutcome, DispatchError> {
    match create_inner(at, ds, src, opts, Some((step, facts)))? {
        Some(outcome) => Ok(outcome),
        None => Err(DispatchError::NotSupported {
            path: PathBuf::from(at.text()),
            what: "writing by parts (--part) a file output".into(),
        }),
    }
}

fn create_inner(
    loc: &Location,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
    step: Option<(nc_zarr::FanoutStep, &[u8])>,
) -> Result<Option<nc_zarr::FanoutOutcome>, DispatchError> {
    let shown = || PathBuf::from(loc.text());
    let zarr = loc.names_store();
    // an NCZarr store is always chunked and holds storage settings whatever the format kind
    // asked: a classic kind there means the classic data model (netCDF-4 classic), CDF-5
    // adds its types (as netCDF-4 does)
    let model = match (zarr, opts.format) {
        (true, Format::Classic | Format::Offset64) => Format::Netcdf4Classic,
        (true, Format::Cdf5) => Format::Netcdf4,
        (_, f) => f,
    };
    if let Some(why) = crate::model_conflict(ds, model) {
        return Err(DispatchError::ModelConflict { path: shown(), why });
    }
    if !(zarr && loc.store_modes().v3) {
        if let Some(v) = ds
            .all_vars()
            .into_iter()
            .find(|&v| ds.var(v).storage.shard_sizes.is_some())
        {
            return Err(DispatchError::ModelConflict {
                path: shown(),
                why: format!(
                    "variable \"{}\" has _ShardSizes, which only a Zarr v3 output holds \
                     (file://PATH#mode=zarr,v3,file); remove it or write Zarr v3",
                    ds.var_path(v)
                ),
            });
        }
    }
    // quantization (CDL _Quantize*, nccopy-rs -Q) happens as the data is read, before filters
    let quantizing = crate::quantize::Quantizing::wrap(ds, src)
        .map_err(|why| DispatchError::ModelConflict { path: shown(), why })?;
    let src: &dyn DataSource = match &quantizing {
        Some(q) => q,
        None => src,
    };
    if let Some((step, facts)) = step {
        return match zarr {
            true => create_zarr_step(loc, ds, src, opts.force, step, facts).map(Some),
            false => Ok(None),
        };
    }
    if zarr {
        return create_zarr(loc, ds, src, opts.force).map(|()| None);
    }
    // a remote file is written locally first, then uploaded whole (visible once complete)
    let dest = match loc.place() {
        nc_store::Place::Remote(u) => Destination::object(u),
        nc_store::Place::Local(path) => {
            Destination::local(&check_destination(path, OutputKind::File, opts.force)?)
        }
        _ => {
            return Err(DispatchError::NotSupported {
                path: shown(),
                what: "writing to this kind of place".into(),
            })
        }
    };
    // a killed run's leftovers go first; then the file, unnamed where the system allows, so
    // that a SIGKILL leaves nothing (nc_store::OutputFile)
    dest.remove_stale();
    let file = dest.create_file().map_err(|e| match e {
        nc_store::StoreError::Io { source, .. } => io_err(&shown(), source),
        e => DispatchError::Store(e),
    })?;
    let tmp = dest.temp().to_path_buf();
    let _guard = if file.is_unnamed() {
        nc_runtime::register_unnamed_temp(&tmp)
    } else {
        nc_runtime::register_temp(&tmp)
    };
    let writeback = dest.start_writeback(&file);
    let handle = file.handle().map_err(|e| io_err(&shown(), e))?;
    let result = match opts.format {
        Format::Classic | Format::Offset64 | Format::Cdf5 => {
            let wopts = nc_classic::WriteOptions {
                format: opts.format,
                fill: opts.fill,
                only_given_data: opts.only_given_data,
            };
            nc_classic::write_open_file(handle, ds, src, &wopts).map_err(|source| {
                DispatchError::Classic {
                    path: shown(),
                    source,
                }
            })
        }
        Format::Netcdf4 | Format::Netcdf4Classic => {
            let wopts = nc_hdf5::Nc4WriteOptions {
                classic_model: opts.format == Format::Netcdf4Classic,
                fill: opts.fill,
                only_given_data: opts.only_given_data,
            };
            // errors name the destination, not the temporary file the user never sees
            nc_hdf5::write_open_file(handle, &shown(), ds, src, &wopts).map_err(DispatchError::Hdf5)
        }
    };
    drop(writeback);
    finish(&dest, Some(file), result).map(|()| None)
}

/// Commit the finished temporary output (`file`, or the store at the temporary name: link,
/// rename, or upload), or remove it after a failure.
pub(crate) fn finish(
    dest: &Destination,
    file: Option<nc_store::OutputFile>,
    result: Result<(), DispatchError>,
) -> Result<(), DispatchError> {
    if let Err(e) = result {
        dest.discard();
        return Err(e);
    }
    let commit = |file: Option<nc_store::OutputFile>| match file {
        Some(f) => dest.commit_file(f),
        None => dest.commit(),
    };
    let committed = match dest {
        // under the interrupt registry's lock: an interrupt either comes first (and the
        // destination stays untouched) or waits until the output is completely in place
        Destination::Local { .. } => {
            let mut r = Ok(());
            let lock = nc_runtime::commit_unless_interrupted(|| {
                r = commit(file);
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
            if nc_runtime::is_interrupted() {
                dest.discard();
                return Err(io_err(
                    Path::new(&url.display),
                    std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "interrupted before the output was complete",
                    ),
                ));
            }
            commit(file)
        }
    };
    committed.map_err(store_err)
}

/// True when an output name asks for an NCZarr / Zarr store (the copy engine's question).
pub fn is_zarr_output(at: &Location) -> bool {
    zarr_output(at).is_some()
}

/// True when the output name asks for a Zarr version 3 store (`#mode=zarr,v3,…`).
pub fn is_zarr_v3_output(at: &Location) -> bool {
    zarr_output(at).is_some_and(|o| o.v3)
}

/// What an output name asks of a store, when it names one.
pub struct ZarrOutput {
    /// Directory (or objects) or zip archive.
    pub storage: nc_store::StorageKind,
    /// Zarr version 3.
    pub v3: bool,
}

/// The store an output name asks for (mode words that name one), if any.
pub fn zarr_output(loc: &Location) -> Option<ZarrOutput> {
    loc.names_store().then(|| ZarrOutput {
        storage: loc.storage_kind(),
        v3: loc.store_modes().v3,
    })
}

/// The writer's options for the store at `loc`.
fn zarr_write_options(loc: &Location) -> Result<nc_zarr::ZarrWriteOptions, DispatchError> {
    Ok(nc_zarr::ZarrWriteOptions {
        layout: nc_zarr::NczarrLayout::from_param(loc.store_modes().layout.as_deref(), loc.text())
            .map_err(DispatchError::Zarr)?,
        ..Default::default()
    })
}

/// Write an NCZarr / Zarr store under a temporary name beside the destination, then rename it.
fn create_zarr(
    loc: &Location,
    ds: &Dataset,
    src: &dyn DataSource,
    force: bool,
) -> Result<(), DispatchError> {
    let opts = zarr_write_options(loc)?;
    let modes = zarr_modes(loc);
    let path = match loc.place() {
        nc_store::Place::Local(p) => p,
        _ => {
            // on object storage the store is written in place, its metadata last (nc-store),
            // so it never looks complete before it is; a failure says what it left
            let create = || loc.create_store(nc_zarr::metadata_rank);
            return nc_zarr::write_store(create, ds, src, &modes, &opts)
                .map_err(DispatchError::Zarr);
        }
    };
    let kind = match loc.storage_kind() {
        nc_store::StorageKind::File => OutputKind::Directory,
        nc_store::StorageKind::Zip => OutputKind::File,
    };
    let dest = Destination::local(&check_destination(path, kind, force)?);
    dest.remove_stale();
    let _guard = nc_runtime::register_temp(dest.temp());
    let tmp = loc.at_local(dest.temp());
    let create = || tmp.create_store(nc_zarr::metadata_rank);
    let result = nc_zarr::write_store(create, ds, src, &modes, &opts).map_err(DispatchError::Zarr);
    finish(&dest, None, result)
}

/// One fan-out step into the store at `loc`: init is written as a whole copy is (under a
/// temporary name, renamed into place, for a directory); a part or finish adds to the store
/// in place.
fn create_zarr_step(
    loc: &Location,
    ds: &Dataset,
    src: &dyn DataSource,
    force: bool,
    step: nc_zarr::FanoutStep,
    facts: &[u8],
) -> Result<nc_zarr::FanoutOutcome, DispatchError> {
    let opts = zarr_write_options(loc)?;
    let modes = zarr_modes(loc);
    let run = |at: &Location| {
        nc_zarr::fanout::write_step(at, &modes, ds, src, &opts, step, facts)
            .map_err(DispatchError::Zarr)
    };
    let path = match loc.place() {
        nc_store::Place::Local(p)
            if step == nc_zarr::FanoutStep::Init
                && loc.storage_kind() == nc_store::StorageKind::File =>
        {
            p
        }
        _ => return run(loc),
    };
    // init only: parts and finish write into the store in place and sweep nothing, so a
    // part never touches another part's work
    let dest = Destination::local(&check_destination(path, OutputKind::Directory, force)?);
    dest.remove_stale();
    let _guard = nc_runtime::register_temp(dest.temp());
    let mut outcome = None;
    let result = run(&loc.at_local(dest.temp())).map(|o| outcome = Some(o));
    finish(&dest, None, result)?;
    Ok(outcome.unwrap_or(nc_zarr::FanoutOutcome::Written))
}
