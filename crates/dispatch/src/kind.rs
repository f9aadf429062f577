//! Format names as the tools accept them (`-k` of ncgen and nccopy) and inference from content.

use nc_dataset::{Dataset, Format};

/// Parse a `-k` kind as ncgen and nccopy accept it: names (`classic`, `nc3`, `64-bit offset`,
/// `64-bit-offset`, `nc6`, `64-bit data`, `64-bit-data`, `cdf5`, `nc5`, `netCDF-4`, `nc4`,
/// `hdf5`, `enhanced`, `netCDF-4 classic model`, `nc7`, `enhanced-nc3`, `hdf5-nc3`), the new
/// numeric codes 3, 5, 6, 4, 7 and the deprecated numbers 1 and 2 (`1` = classic, `2` = 64-bit
/// offset). In the numeric form `3` means netCDF-4 and `4` means netCDF-4 classic model, which is
/// what netCDF-C 4.9.0 does (its old numbering wins for 3 and 4).
pub fn parse_kind(text: &str) -> Option<Format> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    Some(match lower.as_str() {
        "1" | "classic" | "nc3" => Format::Classic,
        "2" | "6" | "64-bit offset" | "64-bit-offset" | "nc6" => Format::Offset64,
        "5" | "64-bit data" | "64-bit-data" | "cdf5" | "cdf-5" | "nc5" => Format::Cdf5,
        "3" | "netcdf-4" | "netcdf4" | "nc4" | "hdf5" | "enhanced" => Format::Netcdf4,
        "4"
        | "7"
        | "netcdf-4 classic model"
        | "netcdf-4-classic-model"
        | "nc7"
        | "enhanced-nc3"
        | "hdf5-nc3" => Format::Netcdf4Classic,
        _ => return None,
    })
}

/// The output format a command line asks for: `-k KIND` (if given) and then the shortcut flags
/// (`-3`, `-4`, ...) that are set, the last one winning, as netCDF-C's tools read them.
///
/// # Errors
/// An unknown `-k` value, with the accepted names.
pub fn asked_format(
    kind: Option<&str>,
    shortcuts: &[(bool, Format)],
) -> Result<Option<Format>, String> {
    let mut asked = match kind {
        Some(k) => Some(parse_kind(k).ok_or_else(|| {
            format!(
                "-k {k}: unknown format kind; use classic, '64-bit offset', cdf5, netCDF-4, 'netCDF-4 classic model', nc3, nc6, nc5, nc4, nc7 or 1..7"
            )
        })?),
        None => None,
    };
    for (set, f) in shortcuts {
        if *set {
            asked = Some(*f);
        }
    }
    Ok(asked)
}

/// Parse the value of a CDL `_Format` attribute.
pub fn parse_format_attribute(text: &str) -> Option<Format> {
    parse_kind(text)
}

/// True if any variable carries performance-related special attributes (chunking, filters,
/// endianness, no-fill, storage, quantize) that only netCDF-4 can hold.
pub fn has_special_storage(ds: &Dataset) -> bool {
    ds.vars.iter().any(|v| !v.storage.is_default())
}

/// True if the dataset uses a CDF-5 type (ubyte, ushort, uint, int64, uint64) anywhere.
pub fn uses_cdf5_types(ds: &Dataset) -> bool {
    let is5 = |t: nc_dataset::NcType| t.as_atomic().is_some_and(|a| a.is_cdf5_only());
    ds.vars
        .iter()
        .any(|v| is5(v.ty) || v.atts.iter().any(|a| is5(a.ty)))
        || ds.groups[0].atts.iter().any(|a| is5(a.ty))
}

/// True if the dataset needs the enhanced model beyond CDF-5's extra types: groups, user types,
/// strings, several unlimited dimensions, an unlimited dimension that is not first.
pub fn uses_netcdf4_constructs(ds: &Dataset) -> bool {
    let enh = |t: nc_dataset::NcType| match t {
        nc_dataset::NcType::User(_) => true,
        nc_dataset::NcType::Atomic(a) => a == nc_dataset::AtomicType::String,
    };
    ds.groups.len() > 1
        || !ds.types.is_empty()
        || ds.dims.iter().filter(|d| d.unlimited).count() > 1
        || ds.vars.iter().any(|v| {
            enh(v.ty)
                || v.atts.iter().any(|a| enh(a.ty))
                || v.dims.iter().skip(1).any(|d| ds.dims[d.0].unlimited)
        })
        || ds.groups[0].atts.iter().any(|a| enh(a.ty))
}

/// Choose the output format as ncgen's documented rules say: `-k` wins, then `_Format`, then
/// netCDF-4 constructs ⇒ netCDF-4, CDF-5 types only ⇒ CDF-5, special storage attributes ⇒
/// netCDF-4 classic model, else classic.
pub fn choose_format(ds: &Dataset, asked: Option<Format>) -> Format {
    if let Some(f) = asked.or(ds.format) {
        return f;
    }
    if uses_netcdf4_constructs(ds) {
        Format::Netcdf4
    } else if uses_cdf5_types(ds) {
        Format::Cdf5
    } else if has_special_storage(ds) {
        Format::Netcdf4Classic
    } else {
        Format::Classic
    }
}

/// Why a dataset cannot be written in `format`: the first offending construct, or None.
pub fn model_conflict(ds: &Dataset, format: Format) -> Option<String> {
    if format == Format::Netcdf4 {
        return None;
    }
    if uses_netcdf4_constructs(ds) {
        return Some(format!(
            "the CDL uses netCDF-4 enhanced-model constructs (groups, user-defined types, strings or several unlimited dimensions), which the {} format cannot hold; use -k nc4",
            format.kind_name()
        ));
    }
    if matches!(
        format,
        Format::Classic | Format::Offset64 | Format::Netcdf4Classic
    ) {
        let is5 = |t: nc_dataset::NcType| t.as_atomic().is_some_and(|a| a.is_cdf5_only());
        for v in &ds.vars {
            if is5(v.ty) {
                return Some(format!(
                    "variable \"{}\" has type {}, which the {} format cannot hold; use -k cdf5 or -k nc4",
                    v.name,
                    ds.type_name(v.ty),
                    format.kind_name()
                ));
            }
            if let Some(a) = v.atts.iter().find(|a| is5(a.ty)) {
                return Some(format!(
                    "attribute \"{}:{}\" has type {}, which the {} format cannot hold; use -k cdf5 or -k nc4",
                    v.name,
                    a.name,
                    ds.type_name(a.ty),
                    format.kind_name()
                ));
            }
        }
        if let Some(a) = ds.groups[0].atts.iter().find(|a| is5(a.ty)) {
            return Some(format!(
                "global attribute \"{}\" has type {}, which the {} format cannot hold; use -k cdf5 or -k nc4",
                a.name,
                ds.type_name(a.ty),
                format.kind_name()
            ));
        }
    }
    if format.is_classic_file() {
        if let Some(v) = ds.vars.iter().find(|v| !v.storage.is_default()) {
            return Some(format!(
                "variable \"{}\" has netCDF-4 storage attributes (_Storage, _ChunkSizes, _Filter, _DeflateLevel, _Shuffle, _Fletcher32, _Endianness, _NoFill or quantize), which the {} format cannot hold; remove them or use -k nc4 / -k nc7",
                v.name,
                format.kind_name()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_as_netcdf_c_accepts_them() {
        assert_eq!(parse_kind("classic"), Some(Format::Classic));
        assert_eq!(parse_kind("nc3"), Some(Format::Classic));
        assert_eq!(parse_kind("1"), Some(Format::Classic));
        assert_eq!(parse_kind("64-bit offset"), Some(Format::Offset64));
        assert_eq!(parse_kind("64-bit-offset"), Some(Format::Offset64));
        assert_eq!(parse_kind("2"), Some(Format::Offset64));
        assert_eq!(parse_kind("6"), Some(Format::Offset64));
        assert_eq!(parse_kind("64-bit-data"), Some(Format::Cdf5));
        assert_eq!(parse_kind("5"), Some(Format::Cdf5));
        assert_eq!(parse_kind("3"), Some(Format::Netcdf4));
        assert_eq!(parse_kind("netCDF-4"), Some(Format::Netcdf4));
        assert_eq!(parse_kind("4"), Some(Format::Netcdf4Classic));
        assert_eq!(parse_kind("7"), Some(Format::Netcdf4Classic));
        assert_eq!(
            parse_kind("netCDF-4 classic model"),
            Some(Format::Netcdf4Classic)
        );
        assert_eq!(parse_kind("foo"), None);
    }

    #[test]
    fn inference_follows_the_documented_rules() {
        use nc_dataset::{AtomicType, NcType, ROOT};
        let mut ds = Dataset::new("x");
        let d = ds.add_dim(ROOT, "d", 2, false);
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![d]);
        assert_eq!(choose_format(&ds, None), Format::Classic);
        ds.var_mut(v).storage.chunk_sizes = Some(vec![2]);
        assert_eq!(choose_format(&ds, None), Format::Netcdf4Classic);
        ds.add_var(ROOT, "w", NcType::Atomic(AtomicType::Int64), vec![d]);
        assert_eq!(choose_format(&ds, None), Format::Cdf5);
        ds.add_var(ROOT, "s", NcType::Atomic(AtomicType::String), vec![d]);
        assert_eq!(choose_format(&ds, None), Format::Netcdf4);
        assert_eq!(choose_format(&ds, Some(Format::Classic)), Format::Classic);
        assert!(model_conflict(&ds, Format::Classic).is_some());
        assert!(model_conflict(&ds, Format::Netcdf4).is_none());
    }
}
