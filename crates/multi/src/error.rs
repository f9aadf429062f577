//! What can go wrong joining files: one enum, each variant naming the file and, where there
//! is one, the variable or dimension.

use nc_dataset::DataError;

/// A join that cannot be made, found before anything is written (or, for `Read` and
/// `Changed`, while reading).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JoinError {
    /// An input could not be opened (the error names the file).
    #[error(transparent)]
    Open(nc_dispatch::DispatchError),
    /// Listing an object-storage wildcard failed.
    #[error("{pattern}: listing the objects: {source}")]
    List {
        /// The wildcard as given.
        pattern: String,
        /// The store's error.
        #[source]
        source: nc_store::StoreError,
    },
    /// A wildcard that matched nothing.
    #[error("{pattern}: no object matches the wildcard; check the bucket and the prefix (nccopy-rs lists the prefix before the first wildcard and sorts the names)")]
    EmptyWildcard {
        /// The wildcard as given.
        pattern: String,
    },
    /// No record dimension to join along, and none named.
    #[error("{file}: no unlimited (record) dimension to join along: name the dimension with --join-dim NAME")]
    NoRecordDimension {
        /// The first input.
        file: String,
    },
    /// The named join dimension is not in the first input.
    #[error("{file}: --join-dim {dim}: no such dimension (ncdump -h lists the dimensions)")]
    NoSuchDimension {
        /// The first input.
        file: String,
        /// The name given.
        dim: String,
    },
    /// A dimension of the first input is missing from another.
    #[error("{file}: dimension \"{dim}\" of {first} is missing: joined files must have the same dimensions")]
    MissingDimension {
        /// The input lacking it.
        file: String,
        /// The dimension's path.
        dim: String,
        /// The first input.
        first: String,
    },
    /// An input has a dimension the first does not.
    #[error(
        "{file}: dimension \"{dim}\" is not in {first}: joined files must have the same dimensions"
    )]
    ExtraDimension {
        /// The input having it.
        file: String,
        /// The dimension's path.
        dim: String,
        /// The first input.
        first: String,
    },
    /// A dimension other than the join one differs in length.
    #[error("{file}: dimension \"{dim}\" has length {len}, but {first_len} in {first}: only the join dimension may differ")]
    DimensionLength {
        /// The input that differs.
        file: String,
        /// The dimension's path.
        dim: String,
        /// Its length there.
        len: u64,
        /// Its length in the first input.
        first_len: u64,
        /// The first input.
        first: String,
    },
    /// A variable of the first input is missing from another.
    #[error("{file}: variable \"{var}\" of {first} is missing: joined files must have the same variables")]
    MissingVariable {
        /// The input lacking it.
        file: String,
        /// The variable's path.
        var: String,
        /// The first input.
        first: String,
    },
    /// An input has a variable the first does not.
    #[error(
        "{file}: variable \"{var}\" is not in {first}: joined files must have the same variables"
    )]
    ExtraVariable {
        /// The input having it.
        file: String,
        /// The variable's path.
        var: String,
        /// The first input.
        first: String,
    },
    /// A variable's type differs.
    #[error("{file}: variable \"{var}\" is of type {ty}, but {first_ty} in {first}")]
    VariableType {
        /// The input that differs.
        file: String,
        /// The variable's path.
        var: String,
        /// Its type there.
        ty: String,
        /// Its type in the first input.
        first_ty: String,
        /// The first input.
        first: String,
    },
    /// A variable's dimensions differ.
    #[error("{file}: variable \"{var}\" has dimensions ({dims}), but ({first_dims}) in {first}")]
    VariableShape {
        /// The input that differs.
        file: String,
        /// The variable's path.
        var: String,
        /// Its dimensions there.
        dims: String,
        /// Its dimensions in the first input.
        first_dims: String,
        /// The first input.
        first: String,
    },
    /// A variable uses the join dimension twice.
    #[error("{file}: variable \"{var}\" has the join dimension \"{dim}\" twice; such a variable cannot be joined")]
    JoinDimensionTwice {
        /// The first input.
        file: String,
        /// The variable's path.
        var: String,
        /// The join dimension's path.
        dim: String,
    },
    /// The coordinate's units differ and cannot be converted.
    #[error("{file}: variable \"{var}\": units {units:?} differ from {first_units:?} in {first}, and only CF time units (seconds, minutes, hours or days since a date, in the calendar both files name) are rebased")]
    Units {
        /// The input that differs.
        file: String,
        /// The coordinate variable's path.
        var: String,
        /// Its units there.
        units: String,
        /// Its units in the first input.
        first_units: String,
        /// The first input.
        first: String,
    },
    /// Record coordinate values that do not keep going one way across the join.
    #[error("{file}: variable \"{var}\": the joined coordinate is not monotonic at index {at} of the join ({before} then {value}); give the files in the order of their records")]
    NotMonotonic {
        /// The input where the order breaks.
        file: String,
        /// The coordinate variable's path.
        var: String,
        /// The index in the joined dimension.
        at: u64,
        /// The value before (in the first file's units).
        before: f64,
        /// The value there.
        value: f64,
    },
    /// A joined variable's chunk along the join dimension would straddle two files, which
    /// references of the join cannot express ([`crate::JoinOptions::whole_chunks`]).
    #[error(
        "{file}: variable \"{var}\": its {records} records along the join dimension do not \
         fill whole chunks of length {chunk}, and references of many files as one cannot hold \
         a chunk straddling two files in one Zarr chunk grid; rechunk the inputs so that the \
         chunk length divides every file's record count (nccopy-rs -c), or reference a copy \
         of the join (nccopy-rs IN1 IN2 ... OUT.nc)"
    )]
    ChunkStraddles {
        /// The input whose records end inside a chunk.
        file: String,
        /// The variable's path.
        var: String,
        /// The chunk length along the join dimension.
        chunk: u64,
        /// The input's records.
        records: u64,
    },
    /// A joined variable chunked unlike in the first input
    /// ([`crate::JoinOptions::whole_chunks`]).
    #[error(
        "{file}: variable \"{var}\": chunks {chunks:?}, where {first} has {first_chunks:?}; \
         references of many files as one need one chunk grid: rechunk the inputs alike \
         (nccopy-rs -c)"
    )]
    ChunkShape {
        /// The input.
        file: String,
        /// The variable's path.
        var: String,
        /// Its chunk shape there (none: not chunked).
        chunks: Option<Vec<u64>>,
        /// Its chunk shape in the first input.
        first_chunks: Option<Vec<u64>>,
        /// The first input.
        first: String,
    },
    /// Reading an input's data failed.
    #[error("{file}: variable \"{var}\": {source}")]
    Read {
        /// The input.
        file: String,
        /// The variable's path.
        var: String,
        /// The reader's error.
        #[source]
        source: DataError,
    },
    /// An input is not what it was when the join was planned.
    #[error("{file}: changed since the join was planned (dimension \"{dim}\" now has length {len}, was {was})")]
    Changed {
        /// The input.
        file: String,
        /// The dimension's path.
        dim: String,
        /// Its length now.
        len: u64,
        /// Its length then.
        was: u64,
    },
}
