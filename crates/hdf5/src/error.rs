//! The error type of the netCDF-4 / HDF5 reader.

use std::path::PathBuf;

/// What can go wrong reading a netCDF-4 (HDF5) file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Hdf5Error {
    /// The file could not be read from disk.
    #[error("cannot read {}: {error}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (printed in the message, so not a `source()`).
        error: std::io::Error,
    },
    /// The HDF5 structure decoder refused the bytes (truncated or corrupt file).
    #[error("{what}: {message}")]
    Structure {
        /// What we were reading (e.g. `object header at 0x60`).
        what: String,
        /// The decoder's message.
        message: String,
    },
    /// A structure's stored checksum does not match its bytes: the file is corrupt, and
    /// nothing read from that structure can be trusted.
    #[error("{what}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is corrupt")]
    Checksum {
        /// The structure and its address (e.g. `object header at 0x1a3`).
        what: String,
        /// The checksum stored in the file.
        stored: u32,
        /// The checksum of the bytes as they are.
        computed: u32,
    },
    /// A structure is well-formed HDF5 but its content makes no sense (bad sizes, counts).
    #[error("{what}: {message}")]
    Invalid {
        /// Where (object, attribute, variable).
        what: String,
        /// What is wrong.
        message: String,
    },
    /// An HDF5 feature netCDF cannot represent or this reader does not handle.
    #[error("{what}: unsupported: {message}")]
    Unsupported {
        /// Where.
        what: String,
        /// What is not supported.
        message: String,
    },
    /// Group nesting, link chains or B-trees go deeper than the limit (cycle or hostile file).
    #[error("{what}: nesting deeper than {limit} levels (cyclic or corrupt file?)")]
    TooDeep {
        /// Where.
        what: String,
        /// The limit.
        limit: usize,
    },
    /// An object is reached twice while walking groups (a cycle, or a hard link netCDF cannot model).
    #[error("group \"{path}\": links back to an object already visited (cyclic group structure)")]
    Cycle {
        /// The path that closes the cycle.
        path: String,
    },
    /// A variable's raw data is in an external file that cannot be read.
    #[error("variable \"{var}\": its data is in external file {}, which cannot be read: {error} (external files are looked for beside the HDF5 file, then in the current directory)", .file.display())]
    ExternalFile {
        /// The variable.
        var: String,
        /// The external file, as resolved.
        file: PathBuf,
        /// The OS error (printed in the message, so not a `source()`).
        error: std::io::Error,
    },
    /// A read asks for more data than the limit allows.
    #[error("{what}: needs {bytes} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Where.
        what: String,
        /// Bytes needed.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A hyperslab request does not fit the variable.
    #[error("variable \"{var}\": {message}")]
    BadRequest {
        /// The variable.
        var: String,
        /// What is wrong with the request.
        message: String,
    },
    /// A chunk needs a filter that is not available.
    #[error("variable \"{var}\" needs filter {id} ({name}), not available: {cure}")]
    MissingFilter {
        /// The variable.
        var: String,
        /// HDF5 filter id.
        id: u32,
        /// Filter name (well-known name, or the name stored in the file).
        name: String,
        /// What to do about it.
        cure: String,
    },
    /// A filter failed on a chunk.
    #[error("variable \"{var}\": chunk at {offsets:?}: {message}")]
    Filter {
        /// The variable.
        var: String,
        /// Element offsets of the chunk.
        offsets: Vec<u64>,
        /// The decoder's message.
        message: String,
    },
    /// The HDF5 writer refused an operation while writing a file.
    #[error("{what}: {message}")]
    Write {
        /// What we were writing (variable, attribute, group).
        what: String,
        /// The writer's message.
        message: String,
    },
    /// The data source failed to give a variable's data while writing.
    #[error("variable \"{var}\": reading its data: {message}")]
    Source {
        /// The variable.
        var: String,
        /// The source's message.
        message: String,
    },
    /// An error annotated with the file it came from.
    #[error("{}: {inner}", .path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// The error (printed in the message, so not a `source()`).
        inner: Box<Hdf5Error>,
    },
}

impl Hdf5Error {
    /// The decoder's error while reading `what`; its checksum mismatches become
    /// [`Hdf5Error::Checksum`].
    pub(crate) fn structure(what: impl Into<String>, err: hdf5_reader::error::Error) -> Hdf5Error {
        match err {
            hdf5_reader::error::Error::ChecksumMismatch { expected, actual } => {
                Hdf5Error::Checksum {
                    what: what.into(),
                    stored: expected,
                    computed: actual,
                }
            }
            err => Hdf5Error::Structure {
                what: what.into(),
                message: err.to_string(),
            },
        }
    }

    /// A checksum mismatch in the structure `what` (its name and address).
    pub(crate) fn checksum(what: impl Into<String>, stored: u32, computed: u32) -> Hdf5Error {
        Hdf5Error::Checksum {
            what: what.into(),
            stored,
            computed,
        }
    }

    /// True for a checksum mismatch, possibly inside [`Hdf5Error::InFile`].
    pub fn is_checksum_mismatch(&self) -> bool {
        match self {
            Hdf5Error::Checksum { .. } => true,
            Hdf5Error::InFile { inner, .. } => inner.is_checksum_mismatch(),
            _ => false,
        }
    }

    pub(crate) fn invalid(what: impl Into<String>, message: impl Into<String>) -> Hdf5Error {
        Hdf5Error::Invalid {
            what: what.into(),
            message: message.into(),
        }
    }

    pub(crate) fn unsupported(what: impl Into<String>, message: impl Into<String>) -> Hdf5Error {
        Hdf5Error::Unsupported {
            what: what.into(),
            message: message.into(),
        }
    }
}
