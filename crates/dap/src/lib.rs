//! OPeNDAP client backend: a DAP2 or DAP4 response mapped to the netCDF classic data model as
//! netCDF-C 4.9.0 maps it (`libdap2/`, `oc2/`; `libdap4/`).
//!
//! [`DapFile::open`] takes a location nc-store parsed and the protocol it chose
//! ([`nc_store::DapProtocol`]): for `file://` it reads `PATH.dds`, `PATH.das` and `PATH.dods`
//! (DAP2) or `PATH.dap` (DAP4) once and keeps every variable's values; for `http(s)://` it
//! fetches `URL.dds` and `URL.das` (DAP2) or `URL.dmr.xml` (DAP4) at open, and the values
//! when they are first read: `URL.dods?VAR` per variable (DAP2), `URL.dap` for the whole
//! dataset or `URL.dap?dap4.ce=/VAR` per variable under a subset (DAP4); a strided hyperslab
//! is the server's constraint in both (`VAR[a:s:b]`). The result is a [`Dataset`] and a
//! [`DataSource`].

mod cookies;
pub mod dap2;
pub mod dap4;
pub mod fetch;
mod http;
mod netrc;
mod rc;
mod slab;

use std::collections::HashMap;
use std::sync::Mutex;

use nc_dataset::{DataError, DataSource, Dataset, Slab, Values, VarId};

use dap2::Slabbed;

/// The decoded values of a response's variables, in the dataset returned with it.
///
/// `values` holds one entry per variable that has data, keyed by its [`VarId`] in that
/// dataset: every element of the variable in row-major order (the last dimension fastest),
/// exactly `Dataset::num_elements(var)` of them, as the [`Values`] variant of the variable's
/// type (`char` variables: `Values::Char`, one byte per element). A variable without an
/// entry reads as its fill value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DapData {
    /// (variable, all its values row-major), at most one entry per variable.
    pub values: Vec<(VarId, Values)>,
}

/// Reading an OPeNDAP response failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DapError {
    /// The response text or bytes are not what the protocol says (a DDS, DAS or DMR that does
    /// not parse, a data body cut short or inconsistent with its description).
    #[error("{url}: malformed DAP response: {what}")]
    Malformed {
        /// the URL (or file) of the response
        url: String,
        /// what is wrong, and where
        what: String,
    },
    /// A DAP4 chunk's checksum does not match its bytes.
    #[error("{url}: variable \"{variable}\": DAP4 checksum mismatch (data corrupted in transit or at the server)")]
    Checksum {
        /// the URL (or file) of the response
        url: String,
        /// the variable whose checksum failed
        variable: String,
    },
    /// The server answered with a DAP `Error { code = ...; message = ...; }` response.
    #[error("{url}: the server answered with an error: code {code}: {message}")]
    Server {
        /// the URL asked
        url: String,
        /// the DAP error code (may be empty)
        code: String,
        /// the server's message
        message: String,
    },
    /// An HTTP request failed (status 4xx/5xx, or no answer).
    #[error("{url}: {what}")]
    Http {
        /// the URL asked
        url: String,
        /// the status or transport failure
        what: String,
    },
    /// A local response file could not be read.
    #[error("{url}")]
    Io {
        /// the file
        url: String,
        /// the OS error
        #[source]
        source: std::io::Error,
    },
    /// A `_FillValue` of another type than its variable, with `[nofillmismatch]` asked.
    #[error("{url}: variable \"{variable}\": NetCDF: Not a valid data type or _FillValue type mismatch (the _FillValue attribute's type differs from the variable's; drop [nofillmismatch] to convert it as netCDF-C does by default)")]
    FillMismatch {
        /// the dataset's URL
        url: String,
        /// the variable
        variable: String,
    },
    /// Something this reader does not do (yet).
    #[error("{url}: {what}")]
    Unsupported {
        /// the dataset's URL
        url: String,
        /// what is missing
        what: String,
    },
}

/// Where lazily read values come from.
enum Remote {
    Dap2(dap2::Remote),
    Dap4(dap4::Remote),
}

impl Remote {
    fn fetch_all(&self, ds: &Dataset) -> Result<Option<Vec<(VarId, Values)>>, DapError> {
        match self {
            Remote::Dap2(r) => r.fetch_all(ds),
            Remote::Dap4(r) => r.fetch_all(ds).map(Some),
        }
    }

    fn fetch_var(&self, ds: &Dataset, var: VarId) -> Result<Vec<(VarId, Values)>, DapError> {
        match self {
            Remote::Dap2(r) => r.fetch_var(ds, var),
            Remote::Dap4(r) => r.fetch_var(ds, var),
        }
    }

    fn fetch_slab(
        &self,
        ds: &Dataset,
        var: VarId,
        slab: Slab,
        stride: &[u64],
    ) -> Option<Result<Slabbed, DapError>> {
        match self {
            Remote::Dap2(r) => r.fetch_slab(ds, var, slab, stride),
            Remote::Dap4(r) => r.fetch_slab(ds, var, slab, stride),
        }
    }
}

/// Fetching variables lazily over HTTP: the server and the values fetched so far.
struct Lazy {
    remote: Remote,
    cache: Mutex<HashMap<VarId, Values>>,
    /// the first read fetches every variable in one request: `[cache]` (ncdump `-w`) over
    /// DAP2; every DAP4 read but a subset's (a dump or copy of everything: one `URL.dap`)
    whole: std::sync::atomic::AtomicBool,
}

/// An open OPeNDAP dataset: its metadata, the values read so far, and what the reader left out.
pub struct DapFile {
    ds: Dataset,
    values: HashMap<VarId, Values>,
    lazy: Option<Lazy>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for DapFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DapFile")
            .field("name", &self.ds.name)
            .field("vars", &self.ds.vars.len())
            .finish()
    }
}

/// The DAP4 choices a location's client parameters make, as netCDF-C reads them:
/// `checksummode=ignore` (or `none`) skips the CRC-32 checks, `opaquesize=N` sizes the one
/// opaque type.
fn dap4_options(loc: &nc_store::Location) -> dap4::Dap4Options {
    let mut opts = dap4::Dap4Options::default();
    for (k, v) in loc.params() {
        match k.as_str() {
            "checksummode" => {
                opts.verify_checksums =
                    !(v.eq_ignore_ascii_case("ignore") || v.eq_ignore_ascii_case("none"));
            }
            "opaquesize" => {
                if let Ok(n) = v.parse::<usize>() {
                    if n > 0 {
                        opts.opaque_size = n;
                    }
                }
            }
            _ => {}
        }
    }
    opts
}

impl DapFile {
    /// Open the OPeNDAP dataset at `loc` with `protocol` (as [`nc_store::Location::dap`] chose).
    ///
    /// # Errors
    /// A response that cannot be fetched or read, a server error response, a malformed
    /// response, a `_FillValue` type mismatch with `[nofillmismatch]`.
    pub fn open(
        loc: &nc_store::Location,
        protocol: nc_store::DapProtocol,
    ) -> Result<DapFile, DapError> {
        let target = fetch::Target::of(loc)?;
        match protocol {
            nc_store::DapProtocol::Dap4 => {
                let opts = dap4_options(loc);
                if let Some(lazy) = open_dap4_lazy(loc, &target, &opts)? {
                    return Ok(lazy);
                }
                let bytes = target.get_dap4()?;
                let (mut ds, data, warnings) =
                    dap4::open_response_with(&bytes, &target.display(), &opts)?;
                ds.name = loc.dataset_name();
                // `ncdump -k` says netCDF-4 for DAP4 (4.9.0)
                ds.format.get_or_insert(nc_dataset::Format::Netcdf4);
                Ok(DapFile {
                    ds,
                    values: data.values.into_iter().collect(),
                    lazy: None,
                    warnings,
                })
            }
            nc_store::DapProtocol::Dap2 => {
                let opts = dap2::Options::from_location(loc);
                let opened = dap2::open(&target, &opts, &loc.dataset_name())?;
                let whole = loc.param("cache").is_some();
                let lazy = opened.remote.map(|remote| Lazy {
                    remote: Remote::Dap2(remote),
                    cache: Mutex::new(HashMap::new()),
                    whole: whole.into(),
                });
                Ok(DapFile {
                    ds: opened.dataset,
                    values: opened.data.values.into_iter().collect(),
                    lazy,
                    warnings: opened.warnings,
                })
            }
        }
    }

    /// The dataset's metadata.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// What the reader left out or shows differently, one sentence each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// A DAP4 dataset on a server opened from its DMR alone (`URL.dmr.xml`), its values fetched
/// when first read. `None` (read everything from one `URL.dap` now, as before) for a URL with
/// its own `dap4.ce` constraint or `[cache]`, and when the server answers no DMR (an HTTP
/// error status, or an answer that is not a DMR).
///
/// A subset ([`DataSource::will_read_parts`]) fetches each variable, or each strided
/// hyperslab, alone; anything else fetches the whole dataset in one `URL.dap` at the first
/// read, so a dump costs the DMR and one data request.
///
/// # Errors
/// A DMR request that failed without an HTTP status (no answer), a server error document.
fn open_dap4_lazy(
    loc: &nc_store::Location,
    target: &fetch::Target,
    opts: &dap4::Dap4Options,
) -> Result<Option<DapFile>, DapError> {
    if target.is_local() || target.constrained() || loc.param("cache").is_some() {
        return Ok(None);
    }
    let dmr_url = target.url_of("dmr.xml");
    let ds = match target.get_dmr() {
        Ok(bytes) => match dap4::open_dmr(&bytes, &dmr_url, opts) {
            Ok(ds) => ds,
            // an HTML page, a DAP2 answer: not a DMR, try the data response
            Err(DapError::Malformed { .. }) => return Ok(None),
            Err(e) => return Err(e),
        },
        Err(DapError::Http { what, .. }) if what.starts_with("HTTP ") => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut ds = ds;
    ds.name = loc.dataset_name();
    ds.format.get_or_insert(nc_dataset::Format::Netcdf4);
    Ok(Some(DapFile {
        ds,
        values: HashMap::new(),
        lazy: Some(Lazy {
            remote: Remote::Dap4(dap4::Remote::new(target.clone(), *opts)),
            cache: Mutex::new(HashMap::new()),
            whole: true.into(),
        }),
        warnings: Vec::new(),
    }))
}

impl DataSource for DapFile {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        if let Some(all) = self.values.get(&var) {
            return Ok(slab::cut(ds, var, all, slab)?);
        }
        if let Some(lazy) = &self.lazy {
            let mut cache = lazy
                .cache
                .lock()
                .map_err(|_| "a thread reading DAP data panicked")?;
            if lazy.whole.swap(false, std::sync::atomic::Ordering::Relaxed) {
                for (v, values) in lazy.remote.fetch_all(ds)?.unwrap_or_default() {
                    cache.entry(v).or_insert(values);
                }
            }
            if !cache.contains_key(&var) {
                for (v, values) in lazy.remote.fetch_var(ds, var)? {
                    cache.entry(v).or_insert(values);
                }
                // every DAP4 variable has data: an answer without it is the server's fault,
                // not a variable to show as fill values
                if matches!(lazy.remote, Remote::Dap4(_)) && !cache.contains_key(&var) {
                    return Err(format!(
                        "variable {}: the DAP4 server's answer holds no values of it as the DMR \
                         describes it",
                        ds.var_path(var)
                    )
                    .into());
                }
            }
            // a read of the whole variable takes its values out of the cache: no copy, and
            // the memory is the caller's (nccopy reads each variable once, whole). A later
            // read of the same variable asks the server again; reads of parts (ncdump's rows,
            // nccopy's smaller buffers) cut copies and keep the values for the next part.
            let whole = slab::covers(ds, var, slab)
                && cache
                    .get(&var)
                    .is_some_and(|all| Some(all.len() as u64) == ds.num_elements(var));
            if whole {
                if let Some(all) = cache.remove(&var) {
                    return Ok(all);
                }
            }
            if let Some(all) = cache.get(&var) {
                return Ok(slab::cut(ds, var, all, slab)?);
            }
        }
        // no data: the fill value everywhere
        nc_dataset::InMemory.read(ds, var, slab)
    }

    fn will_read_parts(&self) {
        // DAP4: each variable alone, not the whole dataset at the first read. DAP2 asks for
        // each variable alone anyway, and `[cache]` there keeps its one request.
        if let Some(lazy) = &self.lazy {
            if matches!(lazy.remote, Remote::Dap4(_)) {
                lazy.whole
                    .store(false, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    fn read_strided(
        &self,
        ds: &Dataset,
        var: VarId,
        slab: Slab,
        stride: &[u64],
    ) -> Option<Result<Values, DataError>> {
        // values at hand (a local response, `[cache]`, a variable already fetched) are cut
        // here by `read`; otherwise the server cuts the hyperslab
        if self.values.contains_key(&var) {
            return None;
        }
        let lazy = self.lazy.as_ref()?;
        if lazy.whole.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        if lazy.cache.lock().ok()?.contains_key(&var) {
            return None;
        }
        match lazy.remote.fetch_slab(ds, var, slab, stride)? {
            Ok(Slabbed::Cut(values)) => Some(Ok(values)),
            // a server that ignores constraints answered with everything: kept, and cut by `read`
            Ok(Slabbed::Whole(all)) => {
                let mut cache = lazy.cache.lock().ok()?;
                for (v, values) in all {
                    cache.entry(v).or_insert(values);
                }
                None
            }
            Err(e) => Some(Err(e.into())),
        }
    }
}

/// True when `loc` is an `http(s)://` URL whose `URL.dds` answers with a DDS: a DAP2
/// server's dataset (netCDF-C asks for the same when a URL holds no netCDF object).
///
/// The DDS is kept, so the open that follows does not ask for it again.
pub fn answers_dap2(loc: &nc_store::Location) -> bool {
    match fetch::Target::of(loc) {
        Ok(fetch::Target::Http { base, .. }) => {
            let url = format!("{base}.dds");
            match http::get(&url) {
                Ok(b) if matches!(dap2::parse::parse_dds(&b), Ok(dap2::parse::Parsed::Ok(_))) => {
                    http::keep(url, b);
                    true
                }
                _ => false,
            }
        }
        _ => false,
    }
}
