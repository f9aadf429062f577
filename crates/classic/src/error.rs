//! The one error type of this crate.

use nc_dataset::DataError;

/// Reading or writing a classic (CDF-1, CDF-2, CDF-5) file failed.
///
/// Byte offsets are counted from the start of the file. Readers of byte slices do not know the
/// file name; the caller that opened the file adds it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClassicError {
    /// The file does not start with `CDF` and a known version byte.
    #[error(
        "not a classic netCDF file: first bytes are {found:02x?}, expected \"CDF\" then 1, 2 or 5"
    )]
    BadMagic {
        /// The first (up to 4) bytes of the file.
        found: Vec<u8>,
    },
    /// The header needs more bytes than the file has.
    #[error("header ends early while reading {what}: needed {wanted} bytes at byte {at}, the file has {len} bytes (truncated copy?)")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Offset of the read.
        at: u64,
        /// Bytes needed there.
        wanted: u64,
        /// Bytes available in total.
        len: u64,
    },
    /// A count in the header cannot be right: its elements would need more bytes than remain.
    #[error("header says {count} {what} (elements from byte {at}), needing at least {needed} bytes, but only {remaining} remain (corrupt header?)")]
    CountTooLarge {
        /// What is counted.
        what: &'static str,
        /// The count found.
        count: u64,
        /// Offset where the counted elements start.
        at: u64,
        /// The fewest bytes those elements can take.
        needed: u64,
        /// Bytes left from `at`.
        remaining: u64,
    },
    /// A list tag is neither ABSENT nor the expected tag.
    #[error("bad {what} tag {tag:#010x} at byte {at}: expected {expected:#x} or 0 (ABSENT)")]
    BadTag {
        /// Which list.
        what: &'static str,
        /// Offset of the tag.
        at: u64,
        /// The tag found.
        tag: u32,
        /// The tag expected.
        expected: u32,
    },
    /// An ABSENT list tag (zero) followed by a non-zero count.
    #[error("{what} at byte {at} is marked ABSENT but has count {count}")]
    BadAbsent {
        /// Which list.
        what: &'static str,
        /// Offset of the tag.
        at: u64,
        /// The count found.
        count: u64,
    },
    /// A type code that this format version does not have.
    #[error("{what}: type code {code} at byte {at} is not valid in CDF-{version}")]
    BadType {
        /// Whose type.
        what: String,
        /// The code found.
        code: u32,
        /// Offset of the code.
        at: u64,
        /// The format version (1, 2 or 5).
        version: u8,
    },
    /// A name that is not UTF-8 or otherwise unusable.
    #[error("name at byte {at} is invalid: {reason}")]
    BadName {
        /// Offset of the name.
        at: u64,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A variable refers to a dimension id that does not exist.
    #[error(
        "variable \"{var}\": dimension id {dimid} does not exist (the file has {ndims} dimensions)"
    )]
    BadDimId {
        /// The variable.
        var: String,
        /// The id found.
        dimid: u64,
        /// Number of dimensions.
        ndims: usize,
    },
    /// The unlimited dimension is used in a place other than the first.
    #[error("variable \"{var}\": the unlimited dimension must be the first dimension")]
    UnlimitedNotFirst {
        /// The variable.
        var: String,
    },
    /// More than one unlimited dimension (classic files allow one).
    #[error("dimensions \"{first}\" and \"{second}\" are both unlimited; classic files allow one unlimited dimension (use netCDF-4)")]
    SeveralUnlimited {
        /// The first unlimited dimension.
        first: String,
        /// The second one.
        second: String,
    },
    /// Variable data offsets that overlap the header or each other.
    #[error("variable \"{var}\": data at byte {begin} overlaps {other} (which ends at byte {other_end}); corrupt header?")]
    Overlap {
        /// The variable.
        var: String,
        /// Its begin offset.
        begin: u64,
        /// What it overlaps.
        other: String,
        /// Where that ends.
        other_end: u64,
    },
    /// The file to write is larger than its file system's free space (checked before writing).
    #[error(
        "the file needs {need} bytes (every value of a classic file is written, fill included) \
         and its file system has {free} bytes free: free space, write elsewhere, or write \
         netCDF-4 (-k nc4), which stores no unwritten data"
    )]
    NoSpace {
        /// Length of the whole file.
        need: u64,
        /// Bytes available on its file system.
        free: u64,
    },
    /// A size computed from the header does not fit 64 bits.
    #[error("variable \"{var}\": its size overflows 64 bits (corrupt header?)")]
    SizeOverflow {
        /// The variable.
        var: String,
    },
    /// Variable data lies (partly) past the end of the file.
    #[error("variable \"{var}\": data up to byte {end} is needed but the file has {file_len} bytes (truncated copy?)")]
    DataPastEof {
        /// The variable.
        var: String,
        /// End offset of the data needed.
        end: u64,
        /// File length.
        file_len: u64,
    },
    /// A hyperslab request outside the variable.
    #[error("variable \"{var}\": hyperslab start {start:?} count {count:?} is outside its shape {shape:?}")]
    BadHyperslab {
        /// The variable.
        var: String,
        /// Start asked for.
        start: Vec<u64>,
        /// Count asked for.
        count: Vec<u64>,
        /// The variable's shape.
        shape: Vec<u64>,
    },
    /// A variable id that this file does not have.
    #[error("variable id {0} does not exist in this file")]
    NoSuchVar(usize),
    /// A hyperslab too large to hold in memory on this machine.
    #[error("variable \"{var}\": {bytes} bytes asked for in one read; read it in smaller slabs")]
    SlabTooLarge {
        /// The variable.
        var: String,
        /// Bytes asked for.
        bytes: u64,
    },
    /// The header is larger than the configured limit.
    #[error("header needs more than {limit} bytes; raise Limits::max_header_bytes if the file is genuine")]
    HeaderTooLarge {
        /// The limit.
        limit: u64,
    },
    /// An operating-system I/O error.
    #[error("{what}")]
    Io {
        /// What we were doing.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The byte source failed (a remote request, a file that cannot be read).
    #[error("{what}")]
    ByteSource {
        /// What we were doing.
        what: String,
        /// The source's error (it names the file or URL).
        #[source]
        source: Box<nc_store::StoreError>,
    },
    /// A type that the chosen format cannot store.
    #[error("{what} has type {ty}, which the {format} format cannot store (use {cure})")]
    TypeNotInFormat {
        /// Whose type (`variable "x"`, `attribute "x:a"`).
        what: String,
        /// The type name.
        ty: String,
        /// The format asked for.
        format: &'static str,
        /// What would work.
        cure: &'static str,
    },
    /// A netCDF-4 (enhanced model or storage) feature in a classic file.
    #[error("{what}: {feature} needs the netCDF-4 format; classic files cannot store it")]
    Netcdf4Only {
        /// Where.
        what: String,
        /// The feature.
        feature: String,
    },
    /// A dimension length that the format cannot store.
    #[error(
        "dimension \"{dim}\": length {len} is too large for the {format} format (at most {max})"
    )]
    DimTooLong {
        /// The dimension.
        dim: String,
        /// Its length.
        len: u64,
        /// The format asked for.
        format: &'static str,
        /// The largest length allowed.
        max: u64,
    },
    /// A fixed dimension of length 0 (in classic files, length 0 marks the unlimited dimension).
    #[error(
        "dimension \"{dim}\" has length 0 but is not unlimited; classic files cannot store that"
    )]
    ZeroLengthDim {
        /// The dimension.
        dim: String,
    },
    /// Variable sizes or offsets that the format cannot store (netCDF-C's NC_EVARSIZE).
    #[error("variable \"{var}\": {reason} ({cure})")]
    VarTooLarge {
        /// The variable.
        var: String,
        /// What limit it breaks.
        reason: String,
        /// What would work.
        cure: &'static str,
    },
    /// A `_FillValue` attribute that does not fit its variable.
    #[error("variable \"{var}\": _FillValue {reason}")]
    BadFillValue {
        /// The variable.
        var: String,
        /// What is wrong.
        reason: String,
    },
    /// A name the format cannot store.
    #[error("{what}: name {name:?} is invalid: {reason}")]
    InvalidName {
        /// What it names.
        what: &'static str,
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// An attribute whose values do not match its type.
    #[error("{what}: values do not match the declared type {ty}")]
    ValuesMismatch {
        /// Whose values.
        what: String,
        /// The declared type.
        ty: String,
    },
    /// The data source failed.
    #[error("variable \"{var}\": reading its data failed")]
    Source {
        /// The variable.
        var: String,
        /// The source's error.
        #[source]
        source: DataError,
    },
    /// The data source returned data of the wrong type or length.
    #[error("variable \"{var}\": the data source returned {got} values of type {got_ty}, expected {expected} of type {ty}")]
    SourceMismatch {
        /// The variable.
        var: String,
        /// Values expected.
        expected: u64,
        /// Values returned.
        got: u64,
        /// Type expected.
        ty: &'static str,
        /// Type returned.
        got_ty: &'static str,
    },
}

impl ClassicError {
    /// The smallest prefix length of the file that could avoid this error, if the error comes
    /// from parsing a prefix too short (used to read headers incrementally).
    pub(crate) fn needed_len(&self) -> Option<u64> {
        match self {
            ClassicError::Truncated { at, wanted, .. } => Some(at.saturating_add(*wanted)),
            ClassicError::CountTooLarge { at, needed, .. } => Some(at.saturating_add(*needed)),
            _ => None,
        }
    }
}
