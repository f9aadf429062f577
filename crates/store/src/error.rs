//! The crate's error type.

/// Errors of a byte source or a key → bytes store, local or remote.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file-system operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A store key that could escape the store or is malformed.
    #[error("store key {key:?} is not allowed: {reason}")]
    BadKey {
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },
    /// A zip archive that cannot be read or written.
    #[error("zip store {path}: {msg}")]
    Zip {
        /// The archive path.
        path: String,
        /// The zip library's message.
        msg: String,
    },
    /// A store object larger than the limit (zip-bomb guard).
    #[error("store object {key:?} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The key.
        key: String,
        /// The limit.
        limit: u64,
    },
    /// A byte range that is not inside its object or file.
    #[error("{key}: bytes {offset}..{end} asked for, but the object holds {size} bytes")]
    Range {
        /// The key, file or URL.
        key: String,
        /// First byte asked for.
        offset: u64,
        /// One past the last byte asked for.
        end: u64,
        /// The object's size.
        size: u64,
    },
    /// A location text that names no place we can reach.
    #[error("{location}: {reason}")]
    BadLocation {
        /// The location as given (credentials in it are never repeated).
        location: String,
        /// What is wrong, and the cure.
        reason: String,
    },
    /// A `#mode=` word nobody knows (netCDF-C ignores it; a typo would then silently choose
    /// another format or storage).
    #[error("{location:?}: unknown mode word \"{word}\" in #mode= (known: {known})")]
    UnknownModeWord {
        /// The location text.
        location: String,
        /// The word.
        word: String,
        /// The words netCDF-C knows, comma-separated.
        known: String,
    },
    /// A remote request failed; `cause` and `cure` are one line each, and never hold a secret.
    #[error("{url}: {cause}{}", .cure.as_deref().map(|c| format!("; {c}")).unwrap_or_default())]
    Remote {
        /// The object's URL (without credentials or query).
        url: String,
        /// What the server or the network said.
        cause: String,
        /// What to do about it, when there is something.
        cure: Option<String>,
    },
    /// An object-storage wildcard (`*`, `?`) in the bucket or before the last `/`.
    #[error(
        "{name}: a wildcard is supported in the last path segment only (s3://bucket/run/*.nc)"
    )]
    WildcardPlace {
        /// The name as given.
        name: String,
    },
    /// Writing was asked of a place opened for reading, or of a read-only kind of place.
    #[error("{location}: {why}")]
    ReadOnly {
        /// The place.
        location: String,
        /// Why it cannot be written, and what to do.
        why: String,
    },
}

impl StoreError {
    /// An I/O error on `path`.
    pub fn io(path: impl std::fmt::Display, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_string(),
            source,
        }
    }

    /// True when the error says the object or file does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            StoreError::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
            _ => false,
        }
    }
}
