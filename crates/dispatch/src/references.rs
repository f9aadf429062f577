//! `ncdump-rs --kerchunk`: a kerchunk reference file (virtual Zarr) for an opened classic or
//! netCDF-4 file, written by [`nc_zarr::write_references`] from the reader's
//! [`nc_dataset::DataSource::placement`]. This module only chooses the URL the references
//! point at and refuses inputs that have nothing to reference.

use std::io::Write;
use std::path::PathBuf;

use nc_store::Location;

use crate::{DispatchError, FileKind, Opened};

/// What `--kerchunk` was asked for.
#[derive(Debug, Clone, Default)]
pub struct ReferenceRequest {
    /// The URL written into the references (`--kerchunk-url`); `None`: the input's URL as given
    /// when it has a scheme (`s3://…`, `https://…`), else its absolute path.
    pub url: Option<String>,
    /// Only these variables (`-v`), names or group paths; empty: all.
    pub vars: Vec<String>,
}

/// The URL of `input` in the references: a remote URL as given (without netCDF-C's client
/// parameters, which say how we open it; fsspec takes the URL without them), a local path
/// made absolute (symbolic links resolved).
///
/// # Errors
/// When the path cannot be resolved or is not UTF-8 (JSON text must be).
pub fn reference_url(input: &Location) -> Result<String, DispatchError> {
    let shown = || PathBuf::from(input.text());
    let local = match input.place() {
        nc_store::Place::Local(p) => p,
        _ => return Ok(input.without_parameters().to_string()),
    };
    let abs = std::fs::canonicalize(local).map_err(|source| DispatchError::Io {
        path: shown(),
        source,
    })?;
    abs.to_str()
        .map(str::to_string)
        .ok_or_else(|| DispatchError::NotSupported {
            path: shown(),
            what: "a reference to a path that is not UTF-8 (JSON text must be; give the URL \
                   with --kerchunk-url)"
                .to_string(),
        })
}

/// Write the kerchunk references of `opened` (read from `input`) to `out`; returns the
/// warnings (attributes left out), one sentence each.
///
/// # Errors
/// A Zarr input (nothing to reference: it is Zarr already), a variable that cannot be
/// referenced (named, with the cure), a `-v` name that is no variable, read or output errors.
pub fn write_references(
    opened: &Opened,
    input: &Location,
    req: &ReferenceRequest,
    out: &mut dyn Write,
) -> Result<Vec<String>, DispatchError> {
    if opened.kind() == FileKind::Zarr {
        return Err(DispatchError::NotSupported {
            path: PathBuf::from(input.text()),
            what: "kerchunk references to a Zarr store (it is Zarr already: open it with \
                   zarr-python or xarray directly)"
                .to_string(),
        });
    }
    let url = match &req.url {
        Some(u) => u.clone(),
        None => reference_url(input)?,
    };
    let opts = nc_zarr::ReferenceOptions {
        url,
        vars: req.vars.clone(),
        ..Default::default()
    };
    nc_zarr::write_references(opened.dataset(), opened.source(), &opts, out)
        .map_err(DispatchError::Zarr)
}
