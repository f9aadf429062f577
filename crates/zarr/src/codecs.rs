//! Chunk pipelines of Zarr codec chains, shared by the reader and the writer: codecs with an
//! HDF5 equivalent go through the filter [`Registry`] (built-in codecs and plugins), the
//! Zarr-only numcodecs codecs (`gzip`, `lz4`, `delta`: no HDF5 filter id, see
//! [`nc_filters::codec_json`]) are built from their JSON.

use crate::error::ZarrError;
use nc_filters::codec_json::{
    codec_to_hdf5, hdf5_to_codec, is_zarr_only, parse_codecs, zarr_only_filter, CodecJsonError,
    ZarrCodec,
};
use nc_filters::{Filter, FilterContext, FilterSpec, Pipeline, Registry};
use serde_json::Value;

/// The pipeline decoding (and encoding) chunks of an array with this codec chain
/// (application order). `akey` is the array's `.zarray` key, `var` its netCDF path, for
/// messages.
pub(crate) fn pipeline(
    codecs: &[ZarrCodec],
    reg: &Registry,
    ctx: FilterContext,
    var: &str,
    akey: &str,
) -> Result<Pipeline, ZarrError> {
    let mut stages: Vec<Box<dyn Filter>> = Vec::with_capacity(codecs.len());
    for c in codecs {
        let stage = match &c.spec {
            Some(s) => reg
                .get(s.id)
                .ok_or_else(|| reg.not_available(s.id))
                .and_then(|f| f.build(&s.params, &ctx))
                .map_err(|e| ZarrError::Filter {
                    var: var.to_string(),
                    source: e.for_variable(var),
                })?,
            None => match zarr_only_filter(&c.json, &ctx) {
                Ok(Some(f)) => f,
                Ok(None) => return Err(unknown(reg, var, &c.json)),
                Err(e) => return Err(ZarrError::meta(akey, format!("variable \"{var}\": {e}"))),
            },
        };
        stages.push(stage);
    }
    Ok(Pipeline::from_filters(stages, ctx))
}

fn unknown(reg: &Registry, var: &str, json: &Value) -> ZarrError {
    let searched: Vec<String> = reg
        .searched_dirs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    ZarrError::UnknownCodec {
        var: var.to_string(),
        codec: crate::json::compact(json),
        searched: if searched.is_empty() {
            "none".into()
        } else {
            searched.join(":")
        },
    }
}

/// The codecs a variable is written with (application order): its HDF5 chain (`working`,
/// working parameters) as standard codecs, with the Zarr-only codecs of its `_Codecs` text
/// put back in place when that text still describes the chain (its other codecs map, in
/// order, to the ids of `working`; `nccopy -F` clears `_Codecs`). Filter 32004 (HDF5 lz4) is
/// written as numcodecs' `lz4`. HDF5 stages keep the working parameters as they are.
pub(crate) fn output_codecs(
    working: &[FilterSpec],
    codecs_text: Option<&str>,
    ctx: &FilterContext,
) -> Result<Vec<ZarrCodec>, CodecJsonError> {
    let mut std = Vec::with_capacity(working.len());
    for s in working {
        let json = hdf5_to_codec(s, ctx)?;
        let spec = (!is_zarr_only(&json)).then(|| s.clone());
        std.push(ZarrCodec { json, spec });
    }
    Ok(codecs_text
        .and_then(|t| with_zarr_only(&std, t, ctx))
        .unwrap_or(std))
}

/// The `_Codecs` list with its standard codecs replaced by those of `std`, or `None` when it
/// has no Zarr-only codec or does not match `std`.
fn with_zarr_only(std: &[ZarrCodec], text: &str, ctx: &FilterContext) -> Option<Vec<ZarrCodec>> {
    let given = parse_codecs(text).ok()?;
    if !given.iter().any(is_zarr_only) {
        return None;
    }
    let mut next = std.iter();
    let mut out = Vec::with_capacity(given.len());
    for g in given {
        if is_zarr_only(&g) {
            out.push(ZarrCodec {
                json: g,
                spec: None,
            });
            continue;
        }
        let id = codec_to_hdf5(&g, ctx).ok()??.id;
        let c = next.next()?;
        if c.spec.as_ref().map(|s| s.id) != Some(id) {
            return None;
        }
        out.push(c.clone());
    }
    // every filter of the chain is accounted for
    next.next().is_none().then_some(out)
}

/// Zarr's `(compressor, filters)` for a chain: the last codec, the others in order (JSON null
/// when absent). A chain ending with a numcodecs element codec (`delta`, `astype`, ...: see
/// [`nc_filters::codec_json::ELEMENT_CODECS`], never compressors) is all filters.
pub(crate) fn split_json(codecs: &[ZarrCodec]) -> (Value, Value) {
    let ends_with_filter = codecs.last().is_some_and(|c| {
        c.json
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(nc_filters::codec_json::is_element_codec)
    });
    match codecs.split_last() {
        None => (Value::Null, Value::Null),
        Some(_) if ends_with_filter => (
            Value::Null,
            Value::Array(codecs.iter().map(|c| c.json.clone()).collect()),
        ),
        Some((last, [])) => (last.json.clone(), Value::Null),
        Some((last, rest)) => (
            last.json.clone(),
            Value::Array(rest.iter().map(|c| c.json.clone()).collect()),
        ),
    }
}
