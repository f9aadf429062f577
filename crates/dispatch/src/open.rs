//! Opening by magic bytes and writing with atomic replacement.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use nc_classic::ClassicFile;
use nc_dataset::{DataSource, Dataset, Format};

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
    /// The HDF5 reader failed (its errors already name the file).
    #[error(transparent)]
    Hdf5(nc_hdf5::Hdf5Error),
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
    if s.starts_with("file://")
        || s.contains("#mode=")
        || s.starts_with("s3://")
        || s.starts_with("http")
    {
        return Ok(FileKind::Zarr);
    }
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return Ok(FileKind::Zarr);
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
    if head.len() >= 4 && &head[..4] == b"PK\x03\x04" {
        return Ok(FileKind::Zarr);
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
        }
    }

    /// Where its variable data is read from.
    pub fn source(&self) -> &dyn DataSource {
        match &self.backend {
            Backend::Classic(c) => c,
            Backend::Nc4(h) => h,
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
            let decoder = std::sync::Arc::new(crate::decode::RegistryDecoder::default());
            let h = nc_hdf5::Nc4File::open_with(path, decoder).map_err(DispatchError::Hdf5)?;
            Ok(Opened {
                backend: Backend::Nc4(h),
                kind,
            })
        }
        FileKind::Zarr => Err(DispatchError::NotSupported {
            path: path.to_path_buf(),
            what: "reading NCZarr/Zarr stores".into(),
        }),
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
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            format: Format::Classic,
            fill: true,
            only_given_data: false,
        }
    }
}

/// Write `ds` (data from `src`) to `path` in the asked format. The file is written beside the
/// destination under a temporary name and renamed into place only on success, so a failure
/// never leaves a partial output and never clobbers an existing file.
///
/// # Errors
/// When the dataset does not fit the format, or writing fails.
pub fn create(
    path: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &CreateOptions,
) -> Result<(), DispatchError> {
    if let Some(why) = crate::model_conflict(ds, opts.format) {
        return Err(DispatchError::ModelConflict {
            path: path.to_path_buf(),
            why,
        });
    }
    let tmp = temp_path(path);
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
        Format::Netcdf4 | Format::Netcdf4Classic => Err(DispatchError::NotSupported {
            path: path.to_path_buf(),
            what: format!("writing the {} format", opts.format.kind_name()),
        }),
    };
    match result {
        Ok(()) => std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_err(path, e)
        }),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A temporary name in the destination's directory (so the final rename is atomic).
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = format!(".{name}.tmp-{}", std::process::id());
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(tmp),
        _ => PathBuf::from(tmp),
    }
}
