//! Special (virtual) attributes: `_Storage`, `_ChunkSizes`, `_Filter`, ... become storage
//! settings; global `_Format`, `_NCProperties`, `_IsNetcdf4`, `_SuperblockVersion` become
//! dataset facts (rule `attdecl`, "special attributes" in NOTES.md).

use nc_dataset::{
    Dataset, Endianness, FilterSpec, Format, Layout, QuantizeMode, Storage, FILTER_DEFLATE,
    FILTER_FLETCHER32, FILTER_SHUFFLE,
};

use super::convert::{Item, PItem};
use super::lexer::Pos;

/// Names of the per-variable special attributes.
pub(crate) const VAR_SPECIALS: [&str; 13] = [
    "_Storage",
    "_ChunkSizes",
    "_ShardSizes",
    "_DeflateLevel",
    "_Shuffle",
    "_Fletcher32",
    "_Endianness",
    "_NoFill",
    "_Filter",
    "_Codecs",
    "_QuantizeBitGroomNumberOfSignificantDigits",
    "_QuantizeGranularBitRoundNumberOfSignificantDigits",
    "_QuantizeBitRoundNumberOfSignificantBits",
];

/// Names of the global special attributes.
pub(crate) const GLOBAL_SPECIALS: [&str; 4] = [
    "_Format",
    "_NCProperties",
    "_IsNetcdf4",
    "_SuperblockVersion",
];

/// The filter chain as it is being built: fletcher32 and shuffle are flags placed first
/// (netCDF-C applies fletcher32, then shuffle, then the rest in definition order).
#[derive(Debug, Default, Clone)]
pub(crate) struct Chain {
    fletcher32: bool,
    shuffle: bool,
    /// `_DeflateLevel`
    deflate: Option<FilterSpec>,
    /// the last `_Filter` assignment (a later one replaces an earlier one, as attributes do)
    filter_attr: Vec<FilterSpec>,
    /// the HDF5 filters of the standard codecs of `_Codecs`, in its order: the chain when no
    /// other filter attribute is given (`_Codecs` alone declares the filters)
    from_codecs: Vec<FilterSpec>,
    /// the size in bytes of the variable's type (shuffle's and blosc's parameters)
    pub(crate) type_size: usize,
}

impl Chain {
    /// Write the chain into `storage.filters` in the order ncgen 4.9.0 builds it: fletcher32,
    /// shuffle, `_DeflateLevel`'s deflate, then the `_Filter` list in its order (an id already
    /// in the chain gets the new parameters in place; shuffle and fletcher32 given in
    /// `_Filter` take their fixed places).
    pub(crate) fn apply(&self, storage: &mut Storage) {
        if !self.fletcher32
            && !self.shuffle
            && self.deflate.is_none()
            && self.filter_attr.is_empty()
            && !self.from_codecs.is_empty()
        {
            storage.filters = self.from_codecs.clone();
            return;
        }
        let mut out = Vec::new();
        if self.fletcher32 {
            out.push(FilterSpec {
                id: FILTER_FLETCHER32,
                params: Vec::new(),
            });
        }
        if self.shuffle {
            out.push(FilterSpec {
                id: FILTER_SHUFFLE,
                params: Vec::new(),
            });
        }
        out.extend(self.deflate.iter().cloned());
        for f in &self.filter_attr {
            if f.id == FILTER_FLETCHER32 || f.id == FILTER_SHUFFLE {
                continue;
            }
            if let Some(old) = out.iter_mut().find(|o| o.id == f.id) {
                old.params = f.params.clone();
            } else {
                out.push(f.clone());
            }
        }
        storage.filters = out;
    }
}

fn text_of(items: &[PItem]) -> Option<String> {
    let mut s = Vec::new();
    for it in items {
        match &it.item {
            Item::Str(b) => s.extend_from_slice(b),
            Item::Char(c) => s.push(*c),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&s).into_owned())
}

fn ints_of(items: &[PItem]) -> Option<Vec<i64>> {
    items
        .iter()
        .map(|it| match &it.item {
            Item::Num(n) => Some(n.as_i64()),
            Item::Str(s) => String::from_utf8_lossy(s).trim().parse::<i64>().ok(),
            _ => None,
        })
        .collect()
}

/// A true/false setting: "true"/"false" (any case), "1"/"0", or a number.
fn bool_of(items: &[PItem]) -> Option<bool> {
    if let Some(t) = text_of(items) {
        return match t.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        };
    }
    match ints_of(items)?.as_slice() {
        [v] => Some(*v != 0),
        _ => None,
    }
}

type SpecialResult = Result<(), (Pos, String)>;

fn bad(items: &[PItem], at: Pos, msg: String) -> SpecialResult {
    Err((items.first().map_or(at, |i| i.pos), msg))
}

/// Apply variable special attribute `name` to `storage`/`chain`.
pub(crate) fn apply_var_special(
    name: &str,
    items: &[PItem],
    at: Pos,
    storage: &mut Storage,
    chain: &mut Chain,
) -> SpecialResult {
    match name {
        "_Storage" => {
            let t = text_of(items).unwrap_or_default();
            // ncdump -s of an HDF5 virtual dataset: its data is written with the default layout
            // (nothing can create a virtual dataset)
            if t.trim().eq_ignore_ascii_case("virtual") {
                storage.layout = None;
                return Ok(());
            }
            storage.layout = Some(match t.trim().to_ascii_lowercase().as_str() {
                "contiguous" => Layout::Contiguous,
                "chunked" => Layout::Chunked,
                "compact" => Layout::Compact,
                _ => {
                    return bad(
                        items,
                        at,
                        format!("_Storage must be \"contiguous\", \"chunked\" or \"compact\", found \"{t}\""),
                    )
                }
            });
        }
        "_ChunkSizes" => {
            let Some(v) = ints_of(items) else {
                return bad(
                    items,
                    at,
                    "_ChunkSizes needs a list of positive integers".into(),
                );
            };
            if v.iter().any(|&x| x <= 0) {
                return bad(items, at, "_ChunkSizes values must be positive".into());
            }
            storage.chunk_sizes = Some(v.into_iter().map(|x| x as u64).collect());
            if storage.layout.is_none() {
                storage.layout = Some(Layout::Chunked);
            }
        }
        "_ShardSizes" => {
            let Some(v) = ints_of(items) else {
                return bad(
                    items,
                    at,
                    "_ShardSizes needs a list of positive integers".into(),
                );
            };
            if v.iter().any(|&x| x <= 0) {
                return bad(items, at, "_ShardSizes values must be positive".into());
            }
            storage.shard_sizes = Some(v.into_iter().map(|x| x as u64).collect());
            if storage.layout.is_none() {
                storage.layout = Some(Layout::Chunked);
            }
        }
        "_DeflateLevel" => match ints_of(items).as_deref() {
            Some([l]) if (0..=9).contains(l) => {
                chain.deflate = Some(FilterSpec {
                    id: FILTER_DEFLATE,
                    params: vec![*l as u32],
                })
            }
            _ => return bad(items, at, "_DeflateLevel must be one integer 0..9".into()),
        },
        "_Shuffle" => match bool_of(items) {
            Some(b) => chain.shuffle = b,
            None => return bad(items, at, "_Shuffle must be \"true\" or \"false\"".into()),
        },
        "_Fletcher32" => match bool_of(items) {
            Some(b) => chain.fletcher32 = b,
            None => {
                return bad(
                    items,
                    at,
                    "_Fletcher32 must be \"true\" or \"false\"".into(),
                )
            }
        },
        "_NoFill" => match bool_of(items) {
            Some(b) => storage.no_fill = Some(b),
            None => return bad(items, at, "_NoFill must be \"true\" or \"false\"".into()),
        },
        "_Endianness" => {
            let t = text_of(items).unwrap_or_default();
            storage.endianness = Some(match t.trim().to_ascii_lowercase().as_str() {
                "little" => Endianness::Little,
                "big" => Endianness::Big,
                "native" => Endianness::Native,
                _ => {
                    return bad(
                        items,
                        at,
                        format!(
                            "_Endianness must be \"little\", \"big\" or \"native\", found \"{t}\""
                        ),
                    )
                }
            });
        }
        "_Filter" => {
            let Some(t) = text_of(items) else {
                return bad(
                    items,
                    at,
                    "_Filter needs a string such as \"307,9|1,5\"".into(),
                );
            };
            // filter names (bzip2,9) are accepted as an extension: see docs/compat.md
            match nc_filters::parse_spec_list(&t) {
                Ok(specs) => {
                    for s in &specs {
                        match s.id {
                            FILTER_FLETCHER32 => chain.fletcher32 = true,
                            FILTER_SHUFFLE => chain.shuffle = true,
                            _ => {}
                        }
                    }
                    chain.filter_attr = specs;
                }
                Err(e) => return bad(items, at, format!("_Filter: unparsable filter spec: {e}")),
            }
        }
        "_Codecs" => {
            let Some(t) = text_of(items) else {
                return bad(items, at, "_Codecs needs a JSON string".into());
            };
            // each codec is a standard one (an HDF5 filter), or one only Zarr has (kept in the
            // text; the Zarr writer puts it back in place, the netCDF-4 writer refuses it)
            let codecs = match nc_filters::codec_json::parse_codecs(&t) {
                Ok(c) => c,
                Err(e) => return bad(items, at, format!("_Codecs: {e}")),
            };
            let ctx = nc_filters::FilterContext::new(chain.type_size.max(1), &[]);
            let mut specs = Vec::new();
            for c in &codecs {
                if nc_filters::codec_json::is_zarr_only(c) {
                    continue;
                }
                match nc_filters::codec_json::codec_to_hdf5(c, &ctx) {
                    Ok(Some(spec)) => specs.push(spec),
                    Ok(None) => {
                        return bad(
                            items,
                            at,
                            format!(
                                "_Codecs: codec {c} is not one ncgen-rs knows (zlib, shuffle, \
                                 fletcher32, szip, bz2, zstd, blosc, and the Zarr-only gzip, lz4, \
                                 lzma, delta, ...); declare a plugin's filter with _Filter \
                                 (its HDF5 id and parameters) instead"
                            ),
                        )
                    }
                    Err(e) => return bad(items, at, format!("_Codecs: {e}")),
                }
            }
            chain.from_codecs = specs;
            storage.codecs = Some(t);
        }
        _ => {
            let mode = match name {
                "_QuantizeBitGroomNumberOfSignificantDigits" => QuantizeMode::BitGroom,
                "_QuantizeGranularBitRoundNumberOfSignificantDigits" => {
                    QuantizeMode::GranularBitRound
                }
                _ => QuantizeMode::BitRound,
            };
            match ints_of(items).as_deref() {
                Some([d]) if *d >= 0 && *d <= 64 => storage.quantize = Some((mode, *d as u32)),
                _ => {
                    return bad(
                        items,
                        at,
                        format!("{name} must be one non-negative integer"),
                    )
                }
            }
        }
    }
    Ok(())
}

/// Apply global special attribute `name` to the dataset.
pub(crate) fn apply_global_special(
    name: &str,
    items: &[PItem],
    at: Pos,
    ds: &mut Dataset,
) -> SpecialResult {
    match name {
        "_Format" => {
            let t = text_of(items).unwrap_or_default();
            // the spellings ncgen 4.9.0 accepts (case matters; found by experiment)
            let f = match t.as_str() {
                "classic" | "nc3" | "1" => Format::Classic,
                "64-bit offset" | "64-bit-offset" | "nc6" | "2" => Format::Offset64,
                "64-bit data" | "64-bit-data" | "cdf5" | "cdf-5" | "nc5" | "5" => Format::Cdf5,
                "netCDF-4" | "netcdf-4" | "netCDF4" | "netcdf4" | "nc4" | "hdf5" | "enhanced"
                | "3" => Format::Netcdf4,
                "netCDF-4 classic model" | "netCDF-4-classic" | "nc7" | "4" => Format::Netcdf4Classic,
                _ => {
                    return bad(
                        items,
                        at,
                        format!("_Format: illegal value \"{t}\": use \"classic\", \"64-bit offset\", \"64-bit data\", \"netCDF-4\" or \"netCDF-4 classic model\""),
                    )
                }
            };
            ds.format = Some(f);
        }
        "_NCProperties" => ds.info.nc_properties = text_of(items),
        "_IsNetcdf4" => ds.info.is_netcdf4 = bool_of(items),
        _ => {
            ds.info.superblock_version = ints_of(items)
                .and_then(|v| v.first().copied())
                .and_then(|v| u32::try_from(v).ok());
        }
    }
    Ok(())
}
