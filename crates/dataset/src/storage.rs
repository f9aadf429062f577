//! Per-variable storage settings (what the CDL special attributes `_Storage`, `_ChunkSizes`,
//! `_Filter`, `_DeflateLevel`, `_Shuffle`, `_Fletcher32`, `_Endianness`, `_NoFill`, `_Quantize*` say).

/// HDF5 filter id of deflate (zlib).
pub const FILTER_DEFLATE: u32 = 1;
/// HDF5 filter id of shuffle.
pub const FILTER_SHUFFLE: u32 = 2;
/// HDF5 filter id of fletcher32.
pub const FILTER_FLETCHER32: u32 = 3;
/// HDF5 filter id of szip.
pub const FILTER_SZIP: u32 = 4;

/// How a variable's data is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One contiguous block.
    Contiguous,
    /// Chunked (needed for filters and unlimited dimensions in netCDF-4).
    Chunked,
    /// Stored in the object header (small fixed-size variables, netCDF-4 only).
    Compact,
    /// An HDF5 virtual dataset (read only: its data comes from other datasets); a copy stores
    /// it as the output's default layout.
    Virtual,
}

impl Layout {
    /// The `_Storage` attribute text.
    pub fn cdl_name(self) -> &'static str {
        match self {
            Layout::Contiguous => "contiguous",
            Layout::Chunked => "chunked",
            Layout::Compact => "compact",
            Layout::Virtual => "virtual",
        }
    }
}

/// Byte order of stored data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endianness {
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
    /// Native (as `_Endianness = "native"` asks).
    Native,
}

impl Endianness {
    /// The `_Endianness` attribute text.
    pub fn cdl_name(self) -> &'static str {
        match self {
            Endianness::Little => "little",
            Endianness::Big => "big",
            Endianness::Native => "native",
        }
    }
}

/// One filter of a chain: an HDF5 filter id and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FilterSpec {
    /// HDF5 filter id.
    pub id: u32,
    /// Client parameters (HDF5 `cd_values`).
    pub params: Vec<u32>,
}

/// Lossy quantization (netCDF 4.8+): `_QuantizeBitGroomNumberOfSignificantDigits` etc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantizeMode {
    /// `_QuantizeBitGroomNumberOfSignificantDigits`
    BitGroom,
    /// `_QuantizeGranularBitRoundNumberOfSignificantDigits`
    GranularBitRound,
    /// `_QuantizeBitRoundNumberOfSignificantBits`
    BitRound,
}

impl QuantizeMode {
    /// The CDL attribute name that carries this mode's digits/bits.
    pub fn attribute_name(self) -> &'static str {
        match self {
            QuantizeMode::BitGroom => "_QuantizeBitGroomNumberOfSignificantDigits",
            QuantizeMode::GranularBitRound => "_QuantizeGranularBitRoundNumberOfSignificantDigits",
            QuantizeMode::BitRound => "_QuantizeBitRoundNumberOfSignificantBits",
        }
    }
}

/// Storage settings of one variable. `None` means "not said": the backend's default applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Storage {
    /// `_Storage`
    pub layout: Option<Layout>,
    /// `_ChunkSizes` (one per dimension)
    pub chunk_sizes: Option<Vec<u64>>,
    /// `_ShardSizes` (one per dimension): the shard (outer chunk) shape of a sharded Zarr v3
    /// array, a whole number of `_ChunkSizes` (the inner chunks) along each dimension.
    pub shard_sizes: Option<Vec<u64>>,
    /// The filter chain in application order (write order); `_DeflateLevel`, `_Shuffle` and
    /// `_Fletcher32` become filters 1, 2 and 3 here.
    pub filters: Vec<FilterSpec>,
    /// `_Codecs` text as read from a Zarr store or CDL (kept verbatim for display).
    pub codecs: Option<String>,
    /// `_Endianness`
    pub endianness: Option<Endianness>,
    /// `_NoFill`
    pub no_fill: Option<bool>,
    /// Quantization mode and number of significant digits (or bits).
    pub quantize: Option<(QuantizeMode, u32)>,
    /// The stored fill value of a variable with no `_FillValue` attribute, when it is not
    /// netCDF's default: a pure Zarr array's `fill_value` (netCDF-C shows no `_FillValue` for
    /// it; xarray takes it as one). Not shown; the Zarr writer writes it as `fill_value`
    /// when the variable has no `_FillValue`, so that a Zarr copy keeps it.
    pub fill_value: Option<crate::Values>,
}

impl Storage {
    /// The deflate level, if the chain holds deflate.
    pub fn deflate_level(&self) -> Option<u32> {
        self.filters
            .iter()
            .find(|f| f.id == FILTER_DEFLATE)
            .map(|f| f.params.first().copied().unwrap_or(0))
    }

    /// True if the chain holds shuffle.
    pub fn has_shuffle(&self) -> bool {
        self.filters.iter().any(|f| f.id == FILTER_SHUFFLE)
    }

    /// True if the chain holds fletcher32.
    pub fn has_fletcher32(&self) -> bool {
        self.filters.iter().any(|f| f.id == FILTER_FLETCHER32)
    }

    /// True when nothing is set.
    pub fn is_default(&self) -> bool {
        *self == Storage::default()
    }
}
