//! Writing one store by parts: fan-out of a copy over calls that any job system runs
//! (`nccopy-rs --part`; `docs/scale-out.md`, design in `docs/design.md`, "Fan-out").
//!
//! - **init** writes every metadata object except the root's (`.zgroup`, `.zattrs`,
//!   `zarr.json`: what makes a store look complete) and the plan marker [`PLAN_KEY`], which
//!   holds a digest of the plan: every metadata object the whole copy writes, plus facts the
//!   caller adds (which variables get data).
//! - **part I of N** recomputes the plan, refuses a store whose plan marker differs, writes
//!   its share of the units (chunks, or shards; [`ChunkScope::Part`]), then its marker
//!   `.nccopy-parts/.I-of-N` — after every chunk is in place (on object storage it is held
//!   back to the store's close, as metadata is). A part whose marker is there already writes
//!   nothing; a part that failed is rerun alone and rewrites the same bytes.
//! - **finish** checks the plan marker and that the markers of parts 0 to N-1 are all there
//!   with the same plan, writes the root metadata last (for pure Zarr it holds the
//!   consolidated metadata: `.zmetadata`, or the v3 root `zarr.json`'s inline
//!   `consolidated_metadata`, so a store is consolidated only once complete), then removes the
//!   markers (the part markers first, the plan marker last). Run again, or on a complete store, it changes
//!   nothing.
//!
//! Parts never read each other's keys; the only order is init, then parts, then finish.

use std::collections::BTreeMap;

use nc_dataset::{DataSource, Dataset};
use serde_json::{json, Value};

use crate::error::ZarrError;
use crate::modes::ZarrModes;
use crate::store::metadata_rank;
use crate::store::{MemStore, ObjectWriter, Store};
use crate::write::{write_into, ChunkScope, ZarrWriteOptions};
use nc_store::{Location, StorageKind};

/// The plan marker init writes at the top of the store (a key readers ignore; top-level and
/// dotted, so a store holding it is one a new init may replace).
pub const PLAN_KEY: &str = ".nccopy-fanout";
/// Where the parts' markers live: `.nccopy-parts/.I-of-N`.
pub const PARTS_DIR: &str = ".nccopy-parts";

/// One call of a copy written by parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FanoutStep {
    /// Create the store: metadata except the root's, and the plan marker.
    Init,
    /// Write part `index` (0-based) of `count`.
    Part {
        /// This part, `0..count`.
        index: u64,
        /// How many parts.
        count: u64,
    },
    /// Check every part is there, write the root metadata, remove the markers; `count`, when
    /// given, is the part count the markers must show.
    Finish {
        /// The expected part count, if the caller knows it.
        count: Option<u64>,
    },
}

/// What a step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FanoutOutcome {
    /// The step wrote what it writes.
    Written,
    /// Nothing was written: the step had been done already (the sentence says why).
    Unchanged(String),
}

/// The key of part `index` of `count`'s marker.
pub fn part_key(index: u64, count: u64) -> String {
    format!("{PARTS_DIR}/.{index}-of-{count}")
}

/// Run one step of a copy of `ds` (data from `src`) written by parts into the store at
/// `location` (opened through nc-store, read as `modes` say). `facts` are plan facts the metadata does not show (such as which variables get
/// data); every step must be given the same.
///
/// # Errors
/// A zip store; a store whose plan marker differs from this call's plan (other options or
/// input); a part or finish with no init before it; finish with parts missing (named); the
/// writer's and the store's own errors.
pub fn write_step(
    location: &Location,
    modes: &ZarrModes,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ZarrWriteOptions,
    step: FanoutStep,
    facts: &[u8],
) -> Result<FanoutOutcome, ZarrError> {
    if location.storage_kind() == StorageKind::Zip {
        return Err(fail(
            location,
            "a zip store is one archive with one writer, so it cannot be written by parts: \
             write a directory store (#mode=...,file) or object storage by parts, then zip it",
        ));
    }
    let mut opts = opts.clone();
    opts.v3 |= modes.v3;
    let pure = modes.pure_zarr || opts.v3;
    let plan = Plan::new(ds, src, pure, modes.xarray, &opts, facts)?;
    match step {
        FanoutStep::Init => init(location, &plan),
        FanoutStep::Part { index, count } => {
            let store = open_existing(location)?;
            part(location, store.as_ref(), &plan, index, count, |sieve| {
                opts.chunks = ChunkScope::Part { index, count };
                write_into(sieve, ds, src, pure, modes.xarray, &opts)
            })
        }
        FanoutStep::Finish { count } => {
            let store = open_existing(location)?;
            finish(location, store.as_ref(), &plan, count)
        }
    }
}

/// Every metadata object of the whole copy, and their digest.
struct Plan {
    meta: BTreeMap<String, Vec<u8>>,
    digest: String,
}

impl Plan {
    fn new(
        ds: &Dataset,
        src: &dyn DataSource,
        pure: bool,
        xarray: bool,
        opts: &ZarrWriteOptions,
        facts: &[u8],
    ) -> Result<Plan, ZarrError> {
        let mem = MemStore::new();
        let mut o = opts.clone();
        o.chunks = ChunkScope::Nothing;
        write_into(&mem, ds, src, pure, xarray, &o)?;
        let mut meta = BTreeMap::new();
        for k in mem.list("")? {
            if let Some(v) = mem.get(&k)? {
                meta.insert(k, v);
            }
        }
        let mut h = ring::digest::Context::new(&ring::digest::SHA256);
        h.update(b"nccopy-fanout plan 1\n");
        h.update(&(facts.len() as u64).to_le_bytes());
        h.update(facts);
        for (k, v) in &meta {
            h.update(k.as_bytes());
            h.update(&[0]);
            h.update(&(v.len() as u64).to_le_bytes());
            h.update(v);
        }
        let digest = h
            .finish()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Plan { meta, digest })
    }

    fn marker(&self) -> Vec<u8> {
        text(&json!({"nccopy_fanout": 1, "plan": self.digest}))
    }

    fn part_marker(&self, index: u64, count: u64) -> Vec<u8> {
        text(&json!({"nccopy_fanout": 1, "plan": self.digest, "part": index, "parts": count}))
    }

    /// The root's metadata objects, in the order readers should find them written (the one
    /// that makes the store look complete last).
    fn root(&self) -> Vec<(&String, &Vec<u8>)> {
        let mut r: Vec<_> = self.meta.iter().filter(|(k, _)| !k.contains('/')).collect();
        r.sort_by_key(|(k, _)| metadata_rank(k));
        r
    }
}

fn text(v: &Value) -> Vec<u8> {
    let mut t = v.to_string();
    t.push('\n');
    t.into_bytes()
}

fn fail(location: &Location, why: impl Into<String>) -> ZarrError {
    ZarrError::Fanout {
        location: location.text().to_string(),
        why: why.into(),
    }
}

/// The plan digest a marker holds (`None`: not a marker we wrote).
fn marker_plan(bytes: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    v.get("plan")?.as_str().map(str::to_string)
}

const MISMATCH: &str = "was started (--part init) with other copy options or another input \
                        than this call's: run every step with the same options and input, or \
                        start over with --part init";

fn init(location: &Location, plan: &Plan) -> Result<FanoutOutcome, ZarrError> {
    let store = location.create_store(metadata_rank)?;
    let written = (|| {
        for (k, v) in &plan.meta {
            if k.contains('/') {
                store.put(k, v)?;
            }
        }
        // after the other metadata (on object storage: held back to close, ranked after it)
        store.put(PLAN_KEY, &plan.marker())?;
        Ok::<(), ZarrError>(store.close()?)
    })();
    crate::write::given_up_on_error(store.as_ref(), written)?;
    Ok(FanoutOutcome::Written)
}

/// The store a part or finish adds to; a missing local directory says to run init.
fn open_existing(location: &Location) -> Result<Box<dyn Store>, ZarrError> {
    match location.open_store_writable(metadata_rank) {
        // no directory there (object storage has no directories: a missing store shows as
        // missing markers)
        Err(nc_store::StoreError::Io { .. }) => Err(fail(
            location,
            "no store here yet: run nccopy-rs --part init (with the same options) first",
        )),
        r => Ok(r?),
    }
}

/// The first metadata object of the plan that the store lacks or holds otherwise (the root's
/// first), `None` when the store holds the whole plan's metadata.
fn first_difference(store: &dyn Store, plan: &Plan) -> Result<Option<String>, ZarrError> {
    let root = plan.root();
    let rest = plan.meta.iter().filter(|(k, _)| k.contains('/'));
    for (k, v) in root.into_iter().rev().chain(rest) {
        if store.get(k)?.as_ref() != Some(v) {
            return Ok(Some(k.clone()));
        }
    }
    Ok(None)
}

/// The plan marker's digest, or — with no marker — `Unchanged` when the store is this plan's
/// complete output, else an error saying init comes first.
fn plan_state(
    location: &Location,
    store: &dyn Store,
    plan: &Plan,
    step: &str,
) -> Result<Result<(), FanoutOutcome>, ZarrError> {
    match store.get(PLAN_KEY)? {
        Some(b) if marker_plan(&b).as_deref() == Some(plan.digest.as_str()) => Ok(Ok(())),
        Some(_) => Err(fail(location, format!("this store {MISMATCH}"))),
        None => match first_difference(store, plan)? {
            None => Ok(Err(FanoutOutcome::Unchanged(format!(
                "the store is already complete, with this copy's metadata; {step} wrote nothing"
            )))),
            Some(k) => Err(fail(
                location,
                format!(
                    "no copy by parts is under way here (no {PLAN_KEY}), and the store is not \
                     this copy's complete output ({k} differs or is missing): run nccopy-rs \
                     --part init (with the same options) first"
                ),
            )),
        },
    }
}

fn part(
    location: &Location,
    store: &dyn Store,
    plan: &Plan,
    index: u64,
    count: u64,
    write: impl FnOnce(&dyn Store) -> Result<(), ZarrError>,
) -> Result<FanoutOutcome, ZarrError> {
    let step = format!("part {index}/{count}");
    if let Err(done) = plan_state(location, store, plan, &step)? {
        return Ok(done);
    }
    let key = part_key(index, count);
    match store.get(&key)? {
        Some(b) if marker_plan(&b).as_deref() == Some(plan.digest.as_str()) => {
            return Ok(FanoutOutcome::Unchanged(format!(
                "{step} is done already ({key} is there); it wrote nothing"
            )));
        }
        _ => {}
    }
    write(&Sieve { inner: store })?;
    // the marker comes after every chunk: on object storage it is held back to close (its
    // last segment is dotted, so the Zarr rank makes it metadata), and close uploads the
    // held-back objects only after every chunk upload has succeeded
    debug_assert!(metadata_rank(&key).is_some());
    store.put(&key, &plan.part_marker(index, count))?;
    store.close()?;
    Ok(FanoutOutcome::Written)
}

/// At most this many missing parts are named in an error.
const MAX_NAMED: usize = 20;

fn finish(
    location: &Location,
    store: &dyn Store,
    plan: &Plan,
    count: Option<u64>,
) -> Result<FanoutOutcome, ZarrError> {
    if let Err(done) = plan_state(location, store, plan, "finish")? {
        // a finish cut short after the root metadata: markers may be left
        remove_markers(store)?;
        return Ok(done);
    }
    let root_done = plan
        .root()
        .iter()
        .map(|(k, v)| store.get(k).map(|got| got.as_ref() == Some(*v)))
        .collect::<Result<Vec<bool>, _>>()?
        .into_iter()
        .all(|same| same);
    if !root_done {
        check_parts(location, store, plan, count)?;
        for (k, v) in plan.root() {
            store.put(k, v)?;
        }
        store.close()?;
    }
    remove_markers(store)?;
    Ok(FanoutOutcome::Written)
}

/// Every part 0..N-1 has its marker, all with this plan and the same N.
fn check_parts(
    location: &Location,
    store: &dyn Store,
    plan: &Plan,
    count: Option<u64>,
) -> Result<(), ZarrError> {
    let mut done: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for k in store.list(PARTS_DIR)? {
        let name = k.rsplit('/').next().unwrap_or(&k);
        let parsed = name
            .strip_prefix('.')
            .and_then(|n| n.split_once("-of-"))
            .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
        let Some((i, n)) = parsed else {
            continue;
        };
        let same = store
            .get(&k)?
            .is_some_and(|b| marker_plan(&b).as_deref() == Some(plan.digest.as_str()));
        if !same {
            return Err(fail(
                location,
                format!(
                    "part {i}/{n} was written with other copy options or another input than \
                     this call's ({k} holds another plan): rerun it with the same options and \
                     input, then finish again"
                ),
            ));
        }
        done.entry(n).or_default().push(i);
    }
    let n = match (count, done.keys().collect::<Vec<_>>().as_slice()) {
        (_, [a, b, ..]) => {
            return Err(fail(
                location,
                format!(
                    "parts were run with different part counts ({a} and {b}): run every part \
                     with the same N, or start over with --part init"
                ),
            ))
        }
        (Some(c), [n]) if c != **n => {
            return Err(fail(
                location,
                format!("finish was asked for {c} parts, but the parts done were of {n}"),
            ))
        }
        (_, [n]) => **n,
        (Some(c), []) => c,
        (None, []) => {
            return Err(fail(
                location,
                "no part has finished yet (no marker under .nccopy-parts/): run every part \
                 (--part I/N for I = 0 to N-1), then finish",
            ))
        }
    };
    let have = done.get(&n).cloned().unwrap_or_default();
    let missing: Vec<u64> = (0..n).filter(|i| !have.contains(i)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut names: Vec<String> = missing.iter().take(MAX_NAMED).map(u64::to_string).collect();
    if missing.len() > MAX_NAMED {
        names.push(format!("and {} more", missing.len() - MAX_NAMED));
    }
    Err(fail(
        location,
        format!(
            "{} of {n} parts have not finished: {} (0-based; no {PARTS_DIR}/.I-of-{n} marker): \
             run them (a part can be rerun safely), then finish again; the store does not look \
             complete until then",
            missing.len(),
            names.join(", ")
        ),
    ))
}

/// Remove the part markers, then the plan marker (so a cut-short cleanup is finished by the
/// next finish).
fn remove_markers(store: &dyn Store) -> Result<(), ZarrError> {
    for k in store.list(PARTS_DIR)? {
        store.delete(&k)?;
    }
    store.delete(PLAN_KEY)?;
    // a directory store would leave the empty marker directory behind
    store.prune(PARTS_DIR)?;
    Ok(())
}

/// A part's view of the store: chunks go through, metadata (written by init and finish) is
/// dropped.
struct Sieve<'a> {
    inner: &'a dyn Store,
}

impl Store for Sieve<'_> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, nc_store::StoreError> {
        self.inner.get(key)
    }
    fn put(&self, key: &str, value: &[u8]) -> Result<(), nc_store::StoreError> {
        if metadata_rank(key).is_some() {
            return Ok(());
        }
        self.inner.put(key, value)
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, nc_store::StoreError> {
        self.inner.list(prefix)
    }
    fn delete(&self, key: &str) -> Result<(), nc_store::StoreError> {
        self.inner.delete(key)
    }
    fn writer<'b>(&'b self, key: &str) -> Result<Box<dyn ObjectWriter + 'b>, nc_store::StoreError> {
        self.inner.writer(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_held_back_as_metadata() {
        // the order a part relies on: its marker after every chunk
        assert!(metadata_rank(&part_key(3, 8)).is_some());
        assert_eq!(metadata_rank(PLAN_KEY), Some(u32::MAX - 1));
        assert_eq!(part_key(0, 2), ".nccopy-parts/.0-of-2");
    }

    #[test]
    fn round_robin_covers_every_unit_once() {
        for count in [1u64, 2, 3, 7] {
            for unit in 0..50u64 {
                let owners = (0..count)
                    .filter(|&index| ChunkScope::Part { index, count }.takes(unit))
                    .count();
                assert_eq!(owners, 1, "unit {unit} of {count} parts");
            }
        }
        assert!(!ChunkScope::Nothing.takes(0));
    }
}
