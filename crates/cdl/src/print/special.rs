//! What `-s` shows as virtual attributes (`_Storage`, `_ChunkSizes`, `_Filter`, `_Format`, ...)
//! and the `_Quantize*` attribute kept in storage settings, as plain [`Attribute`]s, so that
//! the CDL and JSON printers show the same ones in the same order.

use nc_dataset::{
    AtomicType, Attribute, Dataset, Endianness, FilterSpec, Format, Layout, NcType, Values, VarId,
    FILTER_DEFLATE, FILTER_FLETCHER32, FILTER_SHUFFLE,
};

use super::DumpOptions;

/// The effective file format: the dataset's, else the smallest that holds it.
pub(super) fn effective_format(ds: &Dataset) -> Format {
    ds.format.unwrap_or(if ds.needs_enhanced_model() {
        Format::Netcdf4
    } else {
        Format::Classic
    })
}

/// The `_Quantize*` attribute of a variable whose storage settings quantize it and whose
/// attributes do not already say so.
pub(super) fn quantize_att(ds: &Dataset, v: VarId) -> Option<Attribute> {
    let var = ds.var(v);
    let (mode, n) = var.storage.quantize?;
    if var.att(mode.attribute_name()).is_some() {
        return None;
    }
    Some(Attribute::new(
        mode.attribute_name(),
        Values::Int(vec![n as i32]),
    ))
}

fn text(name: &str, value: &str) -> Attribute {
    Attribute::text(name, value)
}

/// A variable's virtual attributes under `-s`, in ncdump's order (none for classic files).
/// `fmt` is [`effective_format`], worked out once by the caller: it walks every variable.
pub(super) fn var_specials(
    ds: &Dataset,
    fmt: Format,
    v: VarId,
    opts: &DumpOptions,
) -> Vec<Attribute> {
    let mut out = Vec::new();
    if !opts.special || fmt.is_classic_file() {
        return out;
    }
    let var = ds.var(v);
    let st = &var.storage;
    let has_unlim = var.dims.iter().any(|&d| ds.dim(d).unlimited);
    let layout = st.layout.unwrap_or(
        if st.chunk_sizes.is_some() || !st.filters.is_empty() || has_unlim {
            Layout::Chunked
        } else {
            Layout::Contiguous
        },
    );
    out.push(text("_Storage", layout.cdl_name()));
    if layout == Layout::Chunked {
        if let Some(cs) = &st.chunk_sizes {
            let vals: Vec<i32> = cs.iter().map(|&c| c.min(i32::MAX as u64) as i32).collect();
            out.push(Attribute::new("_ChunkSizes", Values::Int(vals)));
        }
        if let Some(ss) = &st.shard_sizes {
            let vals: Vec<i32> = ss.iter().map(|&c| c.min(i32::MAX as u64) as i32).collect();
            out.push(Attribute::new("_ShardSizes", Values::Int(vals)));
        }
    }
    let elem_size = ds.type_size(var.ty);
    let spec = |f: &FilterSpec| -> String {
        let mut s = f.id.to_string();
        let mut params = f.params.clone();
        if f.id == FILTER_SHUFFLE && params.is_empty() {
            params.push(elem_size as u32);
        }
        for p in params {
            s.push(',');
            s.push_str(&p.to_string());
        }
        s
    };
    if opts.all_filters {
        if !st.filters.is_empty() {
            let all: Vec<String> = st.filters.iter().map(spec).collect();
            out.push(text("_Filter", &all.join("|")));
        }
    } else {
        if st.has_fletcher32() {
            out.push(text("_Fletcher32", "true"));
        }
        if st.has_shuffle() {
            out.push(text("_Shuffle", "true"));
        }
        if let Some(level) = st.deflate_level() {
            out.push(Attribute::new(
                "_DeflateLevel",
                Values::Int(vec![level as i32]),
            ));
        }
        let others: Vec<String> = st
            .filters
            .iter()
            .filter(|f| ![FILTER_DEFLATE, FILTER_SHUFFLE, FILTER_FLETCHER32].contains(&f.id))
            .map(spec)
            .collect();
        if !others.is_empty() {
            out.push(text("_Filter", &others.join("|")));
        }
    }
    if let Some(c) = &st.codecs {
        out.push(text("_Codecs", c));
    }
    // byte order only matters for multi-byte atomic types
    let atomic_numeric =
        matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String && a.size() > 1);
    if atomic_numeric {
        let e = match st.endianness.unwrap_or(Endianness::Little) {
            Endianness::Native => Endianness::Little,
            e => e,
        };
        out.push(text("_Endianness", e.cdl_name()));
    }
    if st.no_fill == Some(true) {
        out.push(text("_NoFill", "true"));
    }
    out
}

/// The root group's virtual attributes under `-s` (`_NCProperties` unless `-Xp`,
/// `_SuperblockVersion`, `_IsNetcdf4` for netCDF-4 files, then `_Format`).
pub(super) fn global_specials(ds: &Dataset, fmt: Format, opts: &DumpOptions) -> Vec<Attribute> {
    let mut out = Vec::new();
    if !opts.special {
        return out;
    }
    if !fmt.is_classic_file() {
        let info = &ds.info;
        if let Some(p) = &info.nc_properties {
            if !opts.no_nc_properties {
                out.push(text("_NCProperties", p));
            }
        }
        if let Some(sb) = info.superblock_version {
            out.push(Attribute::new(
                "_SuperblockVersion",
                Values::Int(vec![sb as i32]),
            ));
        }
        if let Some(n4) = info.is_netcdf4 {
            out.push(Attribute::new(
                "_IsNetcdf4",
                Values::Int(vec![i32::from(n4)]),
            ));
        }
    }
    out.push(text("_Format", fmt.kind_name()));
    out
}
