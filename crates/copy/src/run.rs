//! The copy itself: prepare the output (selection, storage, quantization, explanation), then
//! hand it with the mapped source to the writer of the output format.

use nc_dataset::subset::{subset, SubsetSource};
use nc_dataset::{DataSource, Dataset, Format, VarId};
use nc_dispatch::{create, CreateOptions, Failure, Location, Opened};

use crate::chunkspec::check_chunk_specs;
use crate::explain::explain_lines;
use crate::progress::Progress;
use crate::select::{drop_user_typed, plan};
use crate::source::MappedSource;
use crate::storage::{apply_shards, apply_storage_options, output_format};
use crate::{CopyOptions, CopyReport, InputReadError};

/// The output dataset and where its data comes from, with the report so far.
struct Prepared {
    out: Dataset,
    map: Vec<Option<VarId>>,
    format: Format,
    report: CopyReport,
}

/// Everything but the writing: selection, storage options, explanation lines. Its errors are
/// the command line's: a name the input lacks, an option the output cannot take.
fn prepare(in_ds: &Dataset, dest: &Location, opts: &CopyOptions) -> Result<Prepared, Failure> {
    check_chunk_specs(in_ds, &opts.chunks).map_err(Failure::usage)?;
    let (mut out, mut map) = plan(in_ds, opts).map_err(Failure::usage)?;
    let to_zarr = nc_dispatch::is_zarr_output(dest);
    let format = output_format(in_ds.format, opts);
    let mut report = CopyReport::default();
    if to_zarr {
        report.warnings.extend(drop_user_typed(&mut out, &mut map));
    }
    let decisions = apply_storage_options(&mut out, format, to_zarr, opts, &mut report)
        .map_err(Failure::usage)?;
    apply_shards(&mut out, nc_dispatch::is_zarr_v3_output(dest), &opts.shards)
        .map_err(Failure::usage)?;
    let notes = crate::quantize::apply_specs(&mut out, &opts.quantize).map_err(Failure::usage)?;
    report.warnings.extend(notes);
    report.explain = explain_lines(&out, format, to_zarr, decisions.as_ref());
    Ok(Prepared {
        out,
        map,
        format,
        report,
    })
}
/// What [`copy`] would do with these options, without writing anything: the report's
/// `explain` holds one line per output variable — the `-F` rule row that fired, the filter
/// chain, the chunk shape and the storage layout. `dest` only tells whether the output
/// would be an NCZarr store.
///
/// # Errors
/// When the options do not fit the input (marked [`nc_dispatch::Side::Usage`]).
pub fn explain(input: &Opened, dest: &Location, opts: &CopyOptions) -> Result<CopyReport, Failure> {
    explain_view(input.dataset(), input.source(), dest, opts)
}

/// [`explain`] of a view of the input (a dataset and its source, such as nc-multi's join of
/// several files).
///
/// # Errors
/// As [`explain`].
pub fn explain_view(
    dataset: &Dataset,
    source: &dyn DataSource,
    dest: &Location,
    opts: &CopyOptions,
) -> Result<CopyReport, Failure> {
    let view = subset_view(dataset, source, opts)?;
    let in_ds = view.as_ref().map_or(dataset, |(d, _)| d);
    Ok(prepare(in_ds, dest, opts)?.report)
}

/// The input as `--dimension` shows it, or `None` when it is copied whole. Its errors are the
/// input's: the options are well formed but do not fit the data.
fn subset_view<'a>(
    dataset: &'a Dataset,
    source: &'a dyn DataSource,
    opts: &CopyOptions,
) -> Result<Option<(Dataset, SubsetSource<'a>)>, Failure> {
    if opts.dimensions.is_empty() {
        return Ok(None);
    }
    subset(dataset, source, &opts.dimensions)
        .map(Some)
        .map_err(Failure::input)
}

/// Copy `input` to `dest` as `opts` says; the output is written atomically.
///
/// # Errors
/// Marked with the side that failed: [`nc_dispatch::Side::Usage`] when the options do not fit the
/// input, [`nc_dispatch::Side::Input`] when reading its data fails (an [`InputReadError`] with the
/// reader's message), else [`nc_dispatch::Side::Output`] (creating, writing or committing it, or a
/// dataset the output format cannot hold).
pub fn copy(input: &Opened, dest: &Location, opts: &CopyOptions) -> Result<CopyReport, Failure> {
    copy_view(input.dataset(), input.source(), dest, opts)
}

/// [`copy`] of a view of the input (a dataset and its source, such as nc-multi's join of
/// several files): read as an opened input is, with every option.
///
/// # Errors
/// As [`copy`].
pub fn copy_view(
    dataset: &Dataset,
    source: &dyn DataSource,
    dest: &Location,
    opts: &CopyOptions,
) -> Result<CopyReport, Failure> {
    if opts.part.is_some() {
        check_part_output(dest)?;
    }
    // a subset is a view of the input: the copy reads it as it would the input
    let view = subset_view(dataset, source, opts)?;
    let (in_ds, in_src): (&Dataset, &dyn DataSource) = match &view {
        Some((d, s)) => (d, s),
        None => (dataset, source),
    };
    let Prepared {
        out: out_ds,
        map,
        format,
        mut report,
    } = prepare(in_ds, dest, opts)?;
    // what the output's metadata does not show but every part must agree on: which
    // variables get data, and from where
    let facts: String = map
        .iter()
        .enumerate()
        .map(|(o, i)| {
            let from = i.map_or("-".to_string(), |i| in_ds.var_path(i));
            format!("{} <- {from}\n", out_ds.var_path(VarId(o)))
        })
        .collect();
    let progress = opts.progress.clone().map(|cb| Progress::new(cb, &out_ds));
    if let Some(p) = &progress {
        (p.cb.0)(p.event(false));
    }
    let src = MappedSource {
        input: in_ds,
        src: in_src,
        map,
        progress,
        input_error: std::sync::Mutex::new(None),
    };
    // netCDF-C's nccopy writes with fill off: padding is zeros, data is all copied.
    let create_opts = CreateOptions {
        format,
        fill: false,
        only_given_data: false,
        force: opts.force,
    };
    let written = match opts.part {
        None => create(dest, &out_ds, &src, &create_opts),
        Some(step) => {
            nc_dispatch::create_part(dest, &out_ds, &src, &create_opts, step, facts.as_bytes()).map(
                |outcome| {
                    if let nc_dispatch::FanoutOutcome::Unchanged(why) = outcome {
                        report.unchanged = Some(why);
                    }
                },
            )
        }
    };
    if let Err(e) = written {
        let read = src
            .input_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        return Err(match read.or_else(|| e.input_read_message()) {
            Some(msg) => Failure::input(InputReadError(msg)),
            None => Failure::output(e),
        });
    }
    if let Some(p) = &src.progress {
        (p.cb.0)(p.event(true));
    }
    Ok(report)
}

/// `--part` writes an NCZarr / Zarr store in a directory or on object storage, nothing else.
fn check_part_output(dest: &Location) -> Result<(), Failure> {
    match nc_dispatch::zarr_output(dest) {
        Some(loc) if loc.storage == nc_dispatch::StorageKind::Zip => Err(Failure::usage(format!(
            "--part: {}: a zip store is one archive with one writer, so it cannot be written \
             by parts: write a directory store (#mode=...,file) or object storage by parts, \
             then zip it",
            dest.text()
        ))),
        Some(_) => Ok(()),
        None => Err(Failure::usage(format!(
            "--part: {}: only an NCZarr / Zarr store can be written by parts: name the output \
             as a directory store (file://PATH#mode=zarr,file, #mode=nczarr,file or \
             #mode=zarr,v3,file) or a store on object storage (s3://bucket/key#mode=zarr); a \
             netCDF-4 or classic file has one writer: copy it in one call without --part",
            dest.text()
        ))),
    }
}

#[cfg(test)]
mod progress_tests {
    use super::*;
    use crate::{ProgressEvent, ProgressFn};
    use nc_dataset::{AtomicType, ROOT};
    use nc_dataset::{InMemory, NcType, Values};
    use std::sync::Arc;
    use std::sync::Mutex;

    /// Write `ds` in `format`, copy the data of `a` only to netCDF-4, and return every
    /// progress event of the copy.
    fn events_of_copy(ds: &Dataset, format: Format) -> Vec<ProgressEvent> {
        let dir = tempfile::tempdir().unwrap();
        let src = Location::local(&dir.path().join("in.nc"));
        let input_opts = CreateOptions {
            format,
            ..CreateOptions::default()
        };
        create(&src, ds, &InMemory, &input_opts).unwrap();
        let input = nc_dispatch::open(&src).unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let opts = CopyOptions {
            format: Some(Format::Netcdf4),
            data_vars: Some(vec!["a".into()]),
            progress: Some(ProgressFn(Arc::new(move |e| {
                sink.lock().unwrap().push(e);
            }))),
            ..CopyOptions::default()
        };
        let out = Location::local(&dir.path().join("out.nc"));
        copy(&input, &out, &opts).unwrap();
        let ev = events.lock().unwrap().clone();
        ev
    }

    #[test]
    fn progress_counts_every_byte_and_variable() {
        let mut ds = Dataset::new("p");
        let n = ds.add_dim(ROOT, "n", 1000, false);
        let a = ds.add_var(ROOT, "a", NcType::Atomic(AtomicType::Double), vec![n]);
        ds.var_mut(a).data = Some(Values::Double((0..1000).map(f64::from).collect()));
        ds.add_var(ROOT, "b", NcType::Atomic(AtomicType::Short), vec![n]);
        ds.add_var(ROOT, "s", NcType::Atomic(AtomicType::Int), vec![]);
        let ev = events_of_copy(&ds, Format::Classic);
        let total = 8000 + 2000 + 4;
        assert_eq!(
            ev.first(),
            Some(&ProgressEvent {
                bytes_done: 0,
                bytes_total: total,
                vars_done: 0,
                vars_total: 3,
                finished: false,
            })
        );
        assert_eq!(
            ev.last(),
            Some(&ProgressEvent {
                bytes_done: total,
                bytes_total: total,
                vars_done: 3,
                vars_total: 3,
                finished: true,
            })
        );
    }

    /// Chunks left unwritten (a variable not copied, chunked) are asked about twice, while
    /// planning and while writing: the bar still ends at exactly 100 %, never past it.
    #[test]
    fn progress_never_counts_past_the_total() {
        let mut ds = Dataset::new("p");
        let n = ds.add_dim(ROOT, "n", 1000, false);
        let a = ds.add_var(ROOT, "a", NcType::Atomic(AtomicType::Double), vec![n]);
        ds.var_mut(a).data = Some(Values::Double((0..1000).map(f64::from).collect()));
        let b = ds.add_var(ROOT, "b", NcType::Atomic(AtomicType::Short), vec![n]);
        ds.var_mut(b).storage.layout = Some(nc_dataset::Layout::Chunked);
        ds.var_mut(b).storage.chunk_sizes = Some(vec![100]);
        let ev = events_of_copy(&ds, Format::Netcdf4);
        let total = 8000 + 2000;
        assert!(
            ev.iter().all(|e| e.bytes_done <= total && e.vars_done <= 2),
            "{ev:?}"
        );
        let last = ev.last().unwrap();
        assert_eq!(
            (last.bytes_done, last.vars_done, last.finished),
            (total, 2, true)
        );
    }
}
