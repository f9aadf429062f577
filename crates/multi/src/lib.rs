//! Many files as one: the inputs joined along a dimension, as NCO's `ncrcat` joins records,
//! shown as one [`Dataset`] and a [`DataSource`] that maps each read onto the files — a view
//! that nccopy-rs copies like any input, with every copy option.
//!
//! - [`expand`] turns the names a user gave into locations: an object-storage name with a
//!   wildcard in its last segment (`s3://bucket/run/*.nc`) is listed through nc-store and
//!   sorted by name (a local wildcard is the shell's).
//! - [`Join::open`] opens each input once, checks it against the first (dimensions other
//!   than the join one, variables, types, dimensions of each variable), rebases the join
//!   coordinate's CF time units to the first file's, checks the joined coordinate is
//!   monotonic, and builds the joined dataset: join dimensions as long as the sum, every
//!   other variable from the first file. Nothing is written before all of it passes.
//! - [`JoinSource`] reads the view, keeping at most [`JoinOptions::max_open`] files open.

mod error;
mod inputs;
mod kept;
mod plan;
mod references;
mod source;
pub mod units;

pub use error::JoinError;
pub use inputs::{expand, is_wildcard};
pub use source::JoinSource;

use nc_dataset::{DataSource, Dataset};
use nc_dispatch::Location;
use rayon::prelude::*;

/// How to join.
#[derive(Debug, Clone)]
pub struct JoinOptions {
    /// The dimension to join along (a name, found in every group); `None`: the record
    /// (unlimited) dimension.
    pub dim: Option<String>,
    /// At most this many inputs are kept open at once (at least 1).
    pub max_open: usize,
    /// Refuse a join in which a chunk of a joined variable along the join dimension would
    /// straddle two files, or a file chunks a joined variable unlike the first: what
    /// references of the join as one chunk grid need (`ncdump-rs --kerchunk IN1 IN2 ...`).
    pub whole_chunks: bool,
    /// Keep each input's chunk index from the plan, so a copy reads stored chunks without
    /// opening the inputs again (see `kept.rs`); a writer of references, which asks each
    /// input for its chunks itself, does without.
    pub keep_chunk_index: bool,
}

impl Default for JoinOptions {
    fn default() -> JoinOptions {
        JoinOptions {
            dim: None,
            max_open: 64,
            whole_chunks: false,
            keep_chunk_index: true,
        }
    }
}

/// The joined view: its dataset and its source.
#[derive(Debug)]
pub struct Join {
    dataset: Dataset,
    source: JoinSource,
    warnings: Vec<String>,
}

impl Join {
    /// Open and check every input, in order, and plan the join.
    ///
    /// # Errors
    /// An input that cannot be opened, or that does not agree with the first (each
    /// [`JoinError`] names the file and the variable or dimension); coordinates that cannot
    /// be rebased or are not monotonic across the join.
    pub fn open(inputs: &[Location], opts: &JoinOptions) -> Result<Join, JoinError> {
        let Some(first_loc) = inputs.first() else {
            return Err(JoinError::EmptyWildcard {
                pattern: String::new(),
            });
        };
        let max_open = opts.max_open.max(1);
        let first = nc_dispatch::open(first_loc).map_err(JoinError::Open)?;
        let mut warnings: Vec<String> = first
            .warnings()
            .iter()
            .map(|w| format!("{}: {w}", first_loc.display()))
            .collect();
        let mut planner = plan::Planner::new(&first, &first_loc.display(), opts.dim.as_deref())?;
        planner.keep_chunk_index(opts.keep_chunk_index);
        if opts.whole_chunks {
            planner.check_whole_chunks();
        }
        planner.check_repeats()?;
        planner.add(&first, &first_loc.display(), None)?;
        let mut kept = vec![(0, first)];
        // inputs are opened (their metadata parsed, their joined coordinates read) a batch
        // at a time on every thread, while this thread checks the batch before, in order: at
        // most two batches (eight inputs per thread, at most 64) are open beyond the kept
        // ones: the one checked, and the next, opened meanwhile and handed over when this
        // thread is ready for it
        let batch = (rayon::current_num_threads() * 8).clamp(1, 64);
        let rest: Vec<(usize, &Location)> = inputs.iter().enumerate().skip(1).collect();
        let coords = planner.coordinate_paths();
        std::thread::scope(|s| -> Result<(), JoinError> {
            let (tx, rx) = std::sync::mpsc::sync_channel(0);
            let (rest, coords) = (&rest, &coords);
            s.spawn(move || {
                for group in rest.chunks(batch) {
                    let opened: Vec<_> = group
                        .par_iter()
                        .map(|(_, loc)| {
                            let input = nc_dispatch::open(loc)?;
                            let values = plan::read_coordinates(&input, coords, &loc.display());
                            Ok((input, values))
                        })
                        .collect();
                    // the checks stopped at an error: open no more
                    if tx.send(opened).is_err() {
                        break;
                    }
                }
            });
            for (group, opened) in rest.chunks(batch).zip(rx) {
                for (&(i, loc), opened) in group.iter().zip(opened) {
                    let (input, values) = opened.map_err(JoinError::Open)?;
                    warnings.extend(
                        input
                            .warnings()
                            .iter()
                            .map(|w| format!("{}: {w}", loc.display())),
                    );
                    planner.add(&input, &loc.display(), Some(values))?;
                    // the first files stay open for the copy; the rest are closed now
                    if kept.len() < max_open {
                        kept.push((i, input));
                    }
                }
            }
            Ok(())
        })?;
        let (dataset, plan) = planner.finish(inputs.to_vec());
        Ok(Join {
            dataset,
            source: JoinSource::new(plan, max_open, kept),
            warnings,
        })
    }

    /// The joined dataset.
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// Its data.
    pub fn source(&self) -> &dyn DataSource {
        &self.source
    }

    /// The join's source with its own methods ([`JoinSource::open_inputs`]).
    pub fn join_source(&self) -> &JoinSource {
        &self.source
    }

    /// The join in words, for `--explain`: one line per joined dimension (its length and the
    /// number of inputs), then one line per input with the indices it gives each joined
    /// dimension, and the rebase of its coordinate's values when its units differ from the
    /// first input's (`v * scale + offset`).
    pub fn describe(&self) -> Vec<String> {
        let plan = self.source.plan();
        let mut lines = Vec::new();
        for j in &plan.joins {
            let total = j.offsets.last().copied().unwrap_or(0);
            lines.push(format!(
                "join along {}: {total} in all, from {} inputs{}",
                j.path,
                plan.inputs.len(),
                if j.rebases() {
                    "; coordinate values rebased to the first input's units"
                } else {
                    ""
                }
            ));
        }
        for (i, loc) in plan.inputs.iter().enumerate() {
            let parts: Vec<String> = plan
                .joins
                .iter()
                .map(|j| {
                    let (lo, hi) = (j.offsets[i], j.offsets[i + 1]);
                    let span = match hi - lo {
                        0 => "none".to_string(),
                        1 => format!("{lo}"),
                        _ => format!("{lo}-{}", hi - 1),
                    };
                    match j.rebase.get(i).copied().flatten() {
                        Some(r) => {
                            format!("{} {span} (values * {} + {})", j.path, r.scale, r.offset)
                        }
                        None => format!("{} {span}", j.path),
                    }
                })
                .collect();
            lines.push(format!("  {}: {}", loc.display(), parts.join(", ")));
        }
        lines
    }

    /// What the readers of the inputs left out or show differently, one line each naming
    /// the file.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nc_dataset::{AtomicType, Attribute, ChunkRequest, NcType, Slab, Values, ROOT};
    use nc_dispatch::{create, CreateOptions};
    use std::io::Read;

    /// A classic file of `n` records: `time` from `first` in `units`, `v(time, x)` with x = 2.
    fn write(dir: &std::path::Path, name: &str, first: i32, n: usize, units: &str) -> Location {
        let mut ds = Dataset::new(name);
        let t = ds.add_dim(ROOT, "time", n as u64, true);
        let x = ds.add_dim(ROOT, "x", 2, false);
        let time = ds.add_var(ROOT, "time", NcType::Atomic(AtomicType::Int), vec![t]);
        ds.var_mut(time).atts.push(Attribute::text("units", units));
        ds.var_mut(time).data = Some(Values::Int((0..n as i32).map(|k| first + k).collect()));
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![t, x]);
        ds.var_mut(v).data = Some(Values::Int(
            (0..2 * n as i32).map(|k| 100 * first + k).collect(),
        ));
        let loc = Location::local(&dir.join(format!("{name}.nc")));
        let opts = CreateOptions {
            format: nc_dataset::Format::Classic,
            ..CreateOptions::default()
        };
        create(&loc, &ds, &nc_dataset::InMemory, &opts).unwrap();
        loc
    }

    #[test]
    fn reads_across_files_keep_few_open_and_rebase_the_coordinate() {
        let dir = tempfile::tempdir().unwrap();
        let locs: Vec<Location> = (0..5)
            .map(|i| {
                let units = if i == 3 {
                    "days since 2000-01-02"
                } else {
                    "days since 2000-01-01"
                };
                let first = if i == 3 { 2 * i - 1 } else { 2 * i };
                write(
                    dir.path(),
                    &format!("f{i}"),
                    first,
                    if i == 2 { 0 } else { 2 },
                    units,
                )
            })
            .collect();
        let opts = JoinOptions {
            dim: None,
            max_open: 2,
            ..JoinOptions::default()
        };
        let join = Join::open(&locs, &opts).unwrap();
        let ds = join.dataset();
        assert_eq!(ds.dims[0].len, 8);
        let time = ds.find_var(ROOT, "time").unwrap();
        let v = ds.find_var(ROOT, "v").unwrap();
        let got = join.source().read(ds, time, Slab::new(&[0], &[8])).unwrap();
        assert_eq!(got, Values::Int(vec![0, 1, 2, 3, 6, 7, 8, 9]));
        // a slab across three files (one of them empty), a column only
        let got = join
            .source()
            .read(ds, v, Slab::new(&[1, 1], &[4, 1]))
            .unwrap();
        assert_eq!(got, Values::Int(vec![3, 201, 203, 501]));
        let bytes = join
            .source()
            .read_le_bytes(ds, v, Slab::new(&[3, 0], &[2, 2]))
            .unwrap()
            .unwrap();
        let want: Vec<u8> = [202i32, 203, 500, 501]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(bytes, want);
        assert!(join.join_source().open_inputs() <= 2);
    }

    /// Classic inputs of one record layout hand their records over whole, the rebased
    /// coordinate among them or not; a join that rebases reads variable by variable.
    #[test]
    fn records_of_classic_inputs_are_handed_over_whole() {
        let dir = tempfile::tempdir().unwrap();
        let units = "days since 2000-01-01";
        let locs: Vec<Location> = (0..3)
            .map(|i| write(dir.path(), &format!("f{i}"), 2 * i, 2, units))
            .collect();
        let join = Join::open(&locs, &JoinOptions::default()).unwrap();
        let ds = join.dataset();
        let time = ds.find_var(ROOT, "time").unwrap();
        let v = ds.find_var(ROOT, "v").unwrap();
        let layout = nc_dataset::RecordLayout {
            recsize: 12,
            vars: vec![(time, 4), (v, 8)],
        };
        // records 1..5 cross all three files
        let mut out = Vec::new();
        join.source()
            .stored_records(ds, 1, 4, &layout, &mut out)
            .unwrap()
            .unwrap();
        let mut want = Vec::new();
        for r in 1..5i32 {
            let f = r / 2;
            want.extend_from_slice(&r.to_be_bytes());
            for k in 0..2 {
                want.extend_from_slice(&(100 * 2 * f + 2 * (r % 2) + k).to_be_bytes());
            }
        }
        assert_eq!(out, want);
        // a layout the files do not have
        let other = nc_dataset::RecordLayout {
            recsize: 12,
            vars: vec![(v, 8), (time, 4)],
        };
        let mut out = vec![9];
        assert!(join
            .source()
            .stored_records(ds, 0, 2, &other, &mut out)
            .is_none());
        assert_eq!(out, [9]);
        // rebased time: not the files' bytes
        let rebased = write(dir.path(), "g", 10, 2, "days since 2000-01-02");
        let join = Join::open(&[locs[0].clone(), rebased], &JoinOptions::default()).unwrap();
        let mut out = Vec::new();
        assert!(join
            .source()
            .stored_records(join.dataset(), 0, 4, &layout, &mut out)
            .is_none());
    }

    /// netCDF-4 inputs: the plan keeps each input's chunk index and coordinate values, so
    /// raw chunks, unwritten regions and the coordinate are read without opening any input
    /// again, whatever `max_open`; the values are the inputs'.
    #[test]
    fn a_netcdf4_join_reads_chunks_and_coordinates_without_reopening_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let deflate = nc_dataset::FilterSpec {
            id: nc_dataset::FILTER_DEFLATE,
            params: vec![1],
        };
        let locs: Vec<Location> = (0..5)
            .map(|i| {
                let mut ds = Dataset::new("n");
                let t = ds.add_dim(ROOT, "time", 2, true);
                let x = ds.add_dim(ROOT, "x", 3, false);
                let time = ds.add_var(ROOT, "time", NcType::Atomic(AtomicType::Double), vec![t]);
                ds.var_mut(time).data =
                    Some(Values::Double(vec![2.0 * i as f64, 2.0 * i as f64 + 1.0]));
                let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![t, x]);
                ds.var_mut(v).storage.chunk_sizes = Some(vec![1, 3]);
                ds.var_mut(v).storage.filters = vec![deflate.clone()];
                ds.var_mut(v).data = Some(Values::Int((0..6).map(|k| 10 * i + k).collect()));
                let loc = Location::local(&dir.path().join(format!("n{i}.nc")));
                let opts = CreateOptions {
                    format: nc_dataset::Format::Netcdf4,
                    ..CreateOptions::default()
                };
                create(&loc, &ds, &nc_dataset::InMemory, &opts).unwrap();
                loc
            })
            .collect();
        let opts = JoinOptions {
            dim: None,
            max_open: 1,
            ..JoinOptions::default()
        };
        let join = Join::open(&locs, &opts).unwrap();
        let ds = join.dataset();
        let src = join.join_source();
        let time = ds.find_var(ROOT, "time").unwrap();
        let v = ds.find_var(ROOT, "v").unwrap();
        let got = src.read(ds, time, Slab::new(&[0], &[10])).unwrap();
        assert_eq!(got, Values::Double((0..10).map(f64::from).collect()));
        assert!(src
            .read_le_bytes(ds, time, Slab::new(&[0], &[10]))
            .is_none());
        let chain = [deflate];
        for r in 0..10u64 {
            let raw = src
                .raw_chunk(
                    ds,
                    v,
                    ChunkRequest {
                        offsets: &[r, 0],
                        shape: &[1, 3],
                        chain: &chain,
                    },
                )
                .unwrap();
            let mut dec = Vec::new();
            flate2::read::ZlibDecoder::new(&raw[..])
                .read_to_end(&mut dec)
                .unwrap();
            let (i, k) = ((r / 2) as i32, (r % 2) as i32);
            let want: Vec<u8> = (0..3)
                .flat_map(|c| (10 * i + 3 * k + c).to_le_bytes())
                .collect();
            assert_eq!(dec, want, "record {r}");
            assert!(!src.unwritten(ds, v, Slab::new(&[r, 0], &[1, 3])));
        }
        // another chunk shape or chain: not offered, still without opening an input
        let other = ChunkRequest {
            offsets: &[4, 0],
            shape: &[2, 3],
            chain: &chain,
        };
        assert!(src.raw_chunk(ds, v, other).is_none());
        assert_eq!(src.reopened(), 0);
        // values read through the inputs: opened again, as many as are needed
        let got = src.read(ds, v, Slab::new(&[3, 1], &[4, 1])).unwrap();
        assert_eq!(got, Values::Int(vec![14, 21, 24, 31]));
        assert!(src.reopened() > 0);
    }

    #[test]
    fn a_join_along_a_fixed_dimension_interleaves_rows() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a", 0, 2, "days since 2000-01-01");
        let opts = JoinOptions {
            dim: Some("x".into()),
            max_open: 1,
            ..JoinOptions::default()
        };
        let join = Join::open(&[a.clone(), a], &opts).unwrap();
        let ds = join.dataset();
        let v = ds.find_var(ROOT, "v").unwrap();
        let got = join
            .source()
            .read(ds, v, Slab::new(&[0, 0], &[2, 4]))
            .unwrap();
        assert_eq!(got, Values::Int(vec![0, 1, 0, 1, 2, 3, 2, 3]));
    }
}
