//! `ncdump-rs --kerchunk`: a kerchunk reference file (virtual Zarr) for an opened classic or
//! netCDF-4 file, written by [`nc_zarr::write_references`] from the reader's
//! [`nc_dataset::DataSource::placement`], or the same references in fsspec's Parquet layout
//! ([`write_references_parquet`], a directory written under a temporary name and renamed into
//! place, or a prefix on object storage). This module only chooses the URL the references
//! point at, refuses inputs that have nothing to reference, and publishes the output.

use std::io::Write;
use std::path::PathBuf;

use nc_runtime::Failure;
use nc_store::Location;

use crate::dest::{check_destination, OutputKind};
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
    let opts = reference_options(opened, input, req)?;
    nc_zarr::write_references(opened.dataset(), opened.source(), &opts, out)
        .map_err(DispatchError::Zarr)
}

/// [`write_references`] of a view of `opened`: `ds` and `src` are its dataset and source
/// (a `--dimension` subset, whose source says which of the input's chunks it keeps whole and
/// which values the references carry), or `opened`'s own.
///
/// # Errors
/// As [`write_references`].
pub fn write_view_references(
    opened: &Opened,
    ds: &nc_dataset::Dataset,
    src: &dyn nc_dataset::DataSource,
    input: &Location,
    req: &ReferenceRequest,
    out: &mut dyn Write,
) -> Result<Vec<String>, DispatchError> {
    let opts = reference_options(opened, input, req)?;
    nc_zarr::write_references(ds, src, &opts, out).map_err(DispatchError::Zarr)
}

/// [`write_references_parquet`] of a view of `opened` (see [`write_view_references`]).
///
/// # Errors
/// As [`write_references_parquet`].
pub fn write_view_references_parquet(
    opened: &Opened,
    ds: &nc_dataset::Dataset,
    src: &dyn nc_dataset::DataSource,
    input: &Location,
    req: &ReferenceRequest,
    layout: &nc_zarr::ParquetLayout,
    out: &Location,
) -> Result<Vec<String>, Failure> {
    let opts = reference_options(opened, input, req).map_err(Failure::input)?;
    publish_parquet(out, &|store| {
        nc_zarr::write_references_parquet(ds, src, &opts, layout, store)
    })
}

/// Write the references of `opened` (read from `input`) in fsspec's Parquet layout to the
/// directory (or object-storage prefix) `out`; returns the warnings. A local directory is
/// written under a temporary name beside `out` and renamed into place when complete (it
/// replaces only an empty directory or an earlier output, whose `.zmetadata` marks it); on
/// object storage the record files go first and `.zmetadata` last.
///
/// # Errors
/// As [`write_references`], marked as the input's; a destination that must not be replaced
/// or cannot be written, marked as the output's.
pub fn write_references_parquet(
    opened: &Opened,
    input: &Location,
    req: &ReferenceRequest,
    layout: &nc_zarr::ParquetLayout,
    out: &Location,
) -> Result<Vec<String>, Failure> {
    write_view_references_parquet(
        opened,
        opened.dataset(),
        opened.source(),
        input,
        req,
        layout,
        out,
    )
}

/// Write the references of many inputs as one dataset (`ds`, the joined dataset, its values
/// read through `src`; `inputs`, nc-multi's join) to `out` as one kerchunk JSON file; returns
/// the warnings. `req.url` must be `None`: every input's references carry its own URL.
///
/// # Errors
/// As [`write_references`]; an input whose chunks cannot continue the joined chunk grid.
pub fn write_joined_references(
    ds: &nc_dataset::Dataset,
    src: &dyn nc_dataset::DataSource,
    inputs: &dyn nc_zarr::JoinedInputs,
    req: &ReferenceRequest,
    out: &mut dyn Write,
) -> Result<Vec<String>, DispatchError> {
    let opts = joined_options(req);
    nc_zarr::write_joined_references(ds, src, inputs, &opts, out).map_err(DispatchError::Zarr)
}

/// [`write_joined_references`] in fsspec's Parquet layout, published as
/// [`write_references_parquet`] publishes it.
///
/// # Errors
/// As [`write_joined_references`], marked as the input's; the destination's errors, marked
/// as the output's.
pub fn write_joined_references_parquet(
    ds: &nc_dataset::Dataset,
    src: &dyn nc_dataset::DataSource,
    inputs: &dyn nc_zarr::JoinedInputs,
    req: &ReferenceRequest,
    layout: &nc_zarr::ParquetLayout,
    out: &Location,
) -> Result<Vec<String>, Failure> {
    let opts = joined_options(req);
    publish_parquet(out, &|store| {
        nc_zarr::write_joined_references_parquet(ds, src, inputs, &opts, layout, store)
    })
}

fn joined_options(req: &ReferenceRequest) -> nc_zarr::ReferenceOptions {
    nc_zarr::ReferenceOptions {
        url: String::new(),
        vars: req.vars.clone(),
        ..Default::default()
    }
}

/// A writer of references into a store, returning its warnings.
type EmitInto<'a> = dyn Fn(&dyn nc_zarr::Store) -> Result<Vec<String>, nc_zarr::ZarrError> + 'a;

/// Run `emit` into the store at `out`: a local directory under a temporary name, renamed
/// into place when complete, or an object-storage prefix.
fn publish_parquet(out: &Location, emit: &EmitInto<'_>) -> Result<Vec<String>, Failure> {
    // the zarr writer's own output failures are the destination's; the rest (a variable
    // that cannot be referenced, a read error) the input's
    let side = |e: DispatchError| match e {
        e @ DispatchError::Zarr(nc_zarr::ZarrError::Output { .. }) => Failure::output(e),
        e @ DispatchError::Zarr(_) => Failure::input(e),
        e => Failure::output(e),
    };
    let write = |at: &Location| {
        let store = at
            .create_store(nc_zarr::metadata_rank)
            .map_err(|e| match e {
                nc_store::StoreError::Io { source, .. } => DispatchError::Io {
                    path: PathBuf::from(out.text()),
                    source,
                },
                e => DispatchError::Store(e),
            })
            .map_err(Failure::output)?;
        let w = emit(store.as_ref()).map_err(|e| side(DispatchError::Zarr(e)));
        match w {
            Ok(warnings) => store
                .close()
                .map(|()| warnings)
                .map_err(|e| Failure::output(DispatchError::Store(e))),
            Err(e) => {
                if let Some(left) = store.abort() {
                    eprintln!("ncdump: {left}");
                }
                Err(e)
            }
        }
    };
    let path = match out.place() {
        nc_store::Place::Local(p) if out.storage_kind() == nc_store::StorageKind::File => p,
        nc_store::Place::Local(_) => {
            return Err(Failure::usage(DispatchError::NotSupported {
                path: PathBuf::from(out.text()),
                what: "Parquet references in a zip archive (give a directory name)".into(),
            }))
        }
        _ => return write(out),
    };
    let target = check_destination(path, OutputKind::Directory, false).map_err(Failure::output)?;
    let dest = nc_store::Destination::local(&target);
    dest.remove_stale();
    let _guard = nc_runtime::register_temp(dest.temp());
    let warnings = match write(&out.at_local(dest.temp())) {
        Ok(w) => w,
        Err(f) => {
            dest.discard();
            return Err(f);
        }
    };
    crate::open::finish(&dest, None, Ok(())).map_err(Failure::output)?;
    Ok(warnings)
}

/// The options of the references of `opened`: its URL, the variables asked for.
fn reference_options(
    opened: &Opened,
    input: &Location,
    req: &ReferenceRequest,
) -> Result<nc_zarr::ReferenceOptions, DispatchError> {
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
    Ok(nc_zarr::ReferenceOptions {
        url,
        vars: req.vars.clone(),
        ..Default::default()
    })
}
