//! The crate's error type.

use nc_dataset::NcString;
use nc_filters::FilterError;

/// Errors of the NCZarr / Zarr backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZarrError {
    /// The store failed (its errors name the key, file or URL).
    #[error(transparent)]
    Store(#[from] nc_store::StoreError),
    /// Writing a store failed part way, and the store could not vanish at once (object
    /// storage): `left` says what it left behind.
    #[error("{error}; {left}")]
    Abandoned {
        /// What failed.
        error: Box<ZarrError>,
        /// What the failed write left behind, naming keys.
        left: String,
    },
    /// A fan-out step (one call of a copy written by parts) cannot run here: why, and the
    /// cure.
    #[error("{location}: {why}")]
    Fanout {
        /// The store, as named.
        location: String,
        /// What is wrong and what to do.
        why: String,
    },
    /// The text is not a usable NCZarr location.
    #[error("{location:?} is not an NCZarr/Zarr location: {reason}")]
    BadLocation {
        /// The location text.
        location: String,
        /// What is wrong.
        reason: String,
    },
    /// No `.zgroup` at the root of the store.
    #[error("{path}: not a Zarr store: no .zgroup at its root")]
    NotAStore {
        /// The store path.
        path: String,
    },
    /// A store object larger than the limit (zip-bomb guard).
    #[error("store object {key:?} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The key.
        key: String,
        /// The limit.
        limit: u64,
    },
    /// A metadata object that is not valid JSON.
    #[error("{key}: invalid JSON: {msg}")]
    Json {
        /// The key of the object.
        key: String,
        /// The parser's message.
        msg: String,
    },
    /// Valid JSON with a wrong or missing field.
    #[error("{key}: {what}")]
    Metadata {
        /// The key of the object.
        key: String,
        /// What is wrong.
        what: String,
    },
    /// A data type the backend cannot map.
    #[error("{key}: dtype {dtype:?} is not supported: {why}")]
    Dtype {
        /// The key of the `.zarray`.
        key: String,
        /// The dtype text.
        dtype: String,
        /// Why.
        why: &'static str,
    },
    /// A codec failed or is missing.
    #[error("variable \"{var}\": {source}")]
    Filter {
        /// Full variable path.
        var: String,
        /// The filter engine's error.
        #[source]
        source: FilterError,
    },
    /// A codec of the chain has no implementation at all (unknown numcodecs id).
    #[error("variable \"{var}\" needs codec {codec}, which no built-in codec or plugin implements (plugin directories searched: {searched}); add its NCZarr codec plugin directory to HDF5_PLUGIN_PATH")]
    UnknownCodec {
        /// Full variable path.
        var: String,
        /// The codec JSON.
        codec: String,
        /// Directories searched.
        searched: String,
    },
    /// A chunk whose contents do not match the array metadata.
    #[error("variable \"{var}\": chunk {key:?}: {what}")]
    Chunk {
        /// Full variable path.
        var: String,
        /// The chunk key.
        key: String,
        /// What is wrong.
        what: String,
    },
    /// A hyperslab request outside the variable.
    #[error("variable \"{var}\": {what}")]
    Request {
        /// Full variable path.
        var: String,
        /// What is wrong.
        what: String,
    },
    /// A string longer than the fixed length of its Zarr dtype.
    #[error("variable \"{var}\": string of {len} bytes at element {index} is longer than the maximum string length {max}; set the variable attribute _nczarr_maxstrlen (or the global _nczarr_default_maxstrlen) to at least {len}")]
    StringTooLong {
        /// Full variable path.
        var: String,
        /// Element index.
        index: u64,
        /// Byte length of the string.
        len: usize,
        /// The maximum.
        max: usize,
    },
    /// Something of the dataset the (NC)Zarr model cannot hold.
    #[error("{what} cannot be stored in Zarr: {why}")]
    NotRepresentable {
        /// The object (variable, type, attribute).
        what: String,
        /// Why, and the cure.
        why: String,
    },
    /// Text bound for JSON metadata (an attribute, a fill value) whose bytes are not UTF-8.
    #[error("{what} cannot be stored in Zarr: its value {value:?} is not UTF-8 text, and Zarr metadata is JSON, which must be; recode the text as UTF-8, or copy to netCDF-4 (-k nc4), which keeps the bytes")]
    NotUtf8 {
        /// The object (attribute, fill value) and its owner.
        what: String,
        /// The value, shown with its bytes that are not UTF-8 escaped.
        value: NcString,
    },
    /// A variable whose stored bytes a reference file cannot point at.
    #[error("variable \"{var}\" cannot be referenced as Zarr chunks: {why}")]
    NotReferenceable {
        /// Full variable path.
        var: String,
        /// Why, and the cure.
        why: String,
    },
    /// A joined variable whose chunks in one input of a join cannot continue the joined
    /// dataset's chunk grid (references of many files as one).
    #[error("variable \"{var}\" of {file} cannot be referenced in the joined dataset: {why}")]
    NotJoinable {
        /// Full variable path.
        var: String,
        /// The input, as given.
        file: String,
        /// Why, and the cure.
        why: String,
    },
    /// An input of a join could not be opened again or named.
    #[error("{file}: {msg}")]
    Input {
        /// The input, as given.
        file: String,
        /// What failed.
        msg: String,
    },
    /// A variable named for selection (`-v`) that the dataset does not have.
    #[error("{name}: No such variable")]
    NoSuchVariable {
        /// The name as given.
        name: String,
    },
    /// Writing the output failed.
    #[error("writing the references: {source}")]
    Output {
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Reading data from the source dataset failed while writing.
    #[error("variable \"{var}\": reading source data: {msg}")]
    Source {
        /// Full variable path.
        var: String,
        /// The source's message.
        msg: String,
    },
}

impl ZarrError {
    pub(crate) fn meta(key: &str, what: impl Into<String>) -> ZarrError {
        ZarrError::Metadata {
            key: key.to_string(),
            what: what.into(),
        }
    }
}
