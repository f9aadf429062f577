//! The [`Registry`] of filter implementations (built-in codecs and HDF5 plugins, keyed by id
//! and by Zarr codec name) and the [`Pipeline`] that applies a chain to chunks.

use crate::error::FilterError;
use crate::filter::{Filter, FilterContext, FilterFactory, FilterId, FilterSource};
use crate::known::filter_name;
use crate::plugin::{self, PluginReport};
use crate::spec::SpecParser;
use nc_dataset::FilterSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Environment variable: `1` makes a plugin win over the built-in codec of the same id.
pub const PREFER_PLUGIN_ENV: &str = "NC_FILTERS_PREFER_PLUGIN";

/// All filter implementations known to a process.
#[derive(Clone, Default)]
pub struct Registry {
    builtins: BTreeMap<FilterId, Arc<dyn FilterFactory>>,
    plugins: BTreeMap<FilterId, Arc<dyn FilterFactory>>,
    prefer_plugins: bool,
    searched: Vec<PathBuf>,
    codecs: Vec<Arc<plugin::CodecPlugin>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("builtins", &self.builtins.keys().collect::<Vec<_>>())
            .field("plugins", &self.plugins.keys().collect::<Vec<_>>())
            .field("prefer_plugins", &self.prefer_plugins)
            .field("searched", &self.searched)
            .finish()
    }
}

impl Registry {
    /// A registry with nothing in it.
    pub fn empty() -> Registry {
        Registry::default()
    }

    /// A registry holding the built-in codecs: deflate 1, shuffle 2, fletcher32 3, szip 4,
    /// bzip2 307, blosc 32001, lz4 32004, zstd 32015. Reads
    /// [`PREFER_PLUGIN_ENV`] once.
    pub fn with_builtins() -> Registry {
        let mut r = Registry::empty();
        for f in crate::codecs::builtins() {
            r.builtins.insert(f.id(), f);
        }
        r.prefer_plugins = std::env::var(PREFER_PLUGIN_ENV).is_ok_and(|v| v == "1");
        r
    }

    /// Make plugins win over built-in codecs of the same id (or not).
    pub fn set_prefer_plugins(&mut self, prefer: bool) {
        self.prefer_plugins = prefer;
    }

    /// True when plugins win over built-in codecs.
    pub fn prefers_plugins(&self) -> bool {
        self.prefer_plugins
    }

    /// Register an implementation as a built-in (caller's own codec).
    ///
    /// # Errors
    /// [`FilterError::AlreadyRegistered`] when the id is taken and `replace` is false.
    pub fn register(
        &mut self,
        factory: Arc<dyn FilterFactory>,
        replace: bool,
    ) -> Result<(), FilterError> {
        let id = factory.id();
        if let Some(old) = self.builtins.get(&id) {
            if !replace {
                return Err(FilterError::AlreadyRegistered {
                    id,
                    existing: old.name().to_string(),
                });
            }
        }
        self.builtins.insert(id, factory);
        Ok(())
    }

    /// Load the HDF5 filter plugins of `dirs` (each `lib*.so*` file). A second library for an
    /// id already loaded from a plugin is skipped. The report lists what was loaded and what
    /// was skipped, with the reason.
    pub fn load_plugins(&mut self, dirs: &[PathBuf]) -> PluginReport {
        let mut report = PluginReport::default();
        for dir in dirs {
            self.searched.push(dir.clone());
            for found in plugin::scan_dir(dir, &mut report.skipped) {
                for c in found.codecs {
                    self.codecs.push(Arc::new(c));
                }
                let Some((info, factory)) = found.filter else {
                    continue;
                };
                let id = info.id;
                if let Some(old) = self.plugins.get(&id) {
                    let by = match old.source() {
                        FilterSource::Plugin(path) => path.display().to_string(),
                        _ => old.name().to_string(),
                    };
                    report.skipped.push(plugin::SkippedLibrary {
                        path: info.path.clone(),
                        reason: format!("filter {id} already provided by {by}"),
                    });
                    continue;
                }
                report.loaded.push(info);
                self.plugins.insert(id, factory);
            }
        }
        // a library's own codec table wins over the defaults tables, first found wins
        self.codecs.sort_by_key(|c| c.defaults);
        let mut initialized = std::collections::BTreeSet::new();
        for c in &self.codecs {
            let paired = self.is_available(c.hdf5_id);
            if paired && initialized.insert(c.codec_id.clone()) {
                c.initialize();
            }
            report.codecs.push(plugin::LoadedCodec {
                codec_id: c.codec_id.clone(),
                hdf5_id: c.hdf5_id,
                path: c.path.clone(),
                defaults: c.defaults,
                paired,
            });
        }
        report
    }

    /// Load plugins from `HDF5_PLUGIN_PATH` (`:`-separated) and then the default directory
    /// `/usr/local/hdf5/lib/plugin` (NCZarr's search order).
    pub fn load_default_plugins(&mut self) -> PluginReport {
        self.load_plugins(&plugin::default_plugin_dirs())
    }

    /// The NCZarr codec plugin for a codec id: a library's own table first, then the
    /// defaults tables.
    pub fn codec_plugin(&self, codec_id: &str) -> Option<&Arc<plugin::CodecPlugin>> {
        self.codecs.iter().find(|c| c.codec_id == codec_id)
    }

    /// The NCZarr codec plugin paired with an HDF5 filter id.
    pub fn codec_plugin_for(&self, id: FilterId) -> Option<&Arc<plugin::CodecPlugin>> {
        self.codecs.iter().find(|c| c.hdf5_id == id)
    }

    /// Directories searched for plugins so far.
    pub fn searched_dirs(&self) -> &[PathBuf] {
        &self.searched
    }

    /// The implementation used for `id`: the built-in, unless plugins are preferred and one
    /// is loaded.
    pub fn get(&self, id: FilterId) -> Option<&Arc<dyn FilterFactory>> {
        let (first, second) = if self.prefer_plugins {
            (&self.plugins, &self.builtins)
        } else {
            (&self.builtins, &self.plugins)
        };
        first.get(&id).or_else(|| second.get(&id))
    }

    /// The loaded plugin for `id`, if any (regardless of preference).
    pub fn plugin(&self, id: FilterId) -> Option<&Arc<dyn FilterFactory>> {
        self.plugins.get(&id)
    }

    /// The built-in codec for `id`, if any.
    pub fn builtin(&self, id: FilterId) -> Option<&Arc<dyn FilterFactory>> {
        self.builtins.get(&id)
    }

    /// The implementation answering to a Zarr codec id (`"zlib"`, `"bz2"`, `"blosc"`...).
    pub fn by_codec_name(&self, codec: &str) -> Option<&Arc<dyn FilterFactory>> {
        let id = self
            .builtins
            .values()
            .chain(self.plugins.values())
            .find(|f| f.codec_ids().iter().any(|c| c.eq_ignore_ascii_case(codec)))
            .map(|f| f.id())
            .or_else(|| self.codec_plugin(codec).map(|c| c.hdf5_id))
            .or_else(|| crate::known::hdf5_id_for_codec(codec))?;
        self.get(id)
    }

    /// True if some implementation of `id` is known.
    pub fn is_available(&self, id: FilterId) -> bool {
        self.get(id).is_some()
    }

    /// A "not available" error for `id` naming the directories searched.
    pub fn not_available(&self, id: FilterId) -> FilterError {
        FilterError::NotAvailable {
            id,
            name: filter_name(id).map(str::to_string),
            variable: None,
            searched: self.searched.clone(),
        }
    }

    /// A spec parser that also knows the names of loaded plugins.
    pub fn spec_parser(&self) -> SpecParser {
        let mut p = SpecParser::default();
        for f in self.plugins.values() {
            p.extra_names.push((f.name().to_string(), f.id()));
        }
        p
    }

    /// The working parameters of each filter of `chain` for this variable (what ncdump shows
    /// after HDF5's `set_local`, e.g. `2,4` for shuffle on floats).
    pub fn working_chain(&self, chain: &[FilterSpec], ctx: &FilterContext) -> Vec<FilterSpec> {
        chain
            .iter()
            .map(|s| match self.get(s.id) {
                Some(f) => FilterSpec {
                    id: s.id,
                    params: f.working_params(&s.params, ctx),
                },
                None => s.clone(),
            })
            .collect()
    }

    /// A pipeline for `chain` (in application order) on a variable described by `ctx`.
    ///
    /// # Errors
    /// [`FilterError::NotAvailable`] for an unknown id (fill in the variable with
    /// [`FilterError::for_variable`]), [`FilterError::BadParams`] for unusable parameters.
    pub fn pipeline(
        &self,
        chain: &[FilterSpec],
        ctx: FilterContext,
    ) -> Result<Pipeline, FilterError> {
        self.assemble(chain, ctx, true)
    }

    /// A pipeline for a chain whose parameters are already the working ones (as stored in a
    /// file: shuffle's element size, blosc's 7 values, szip's 4), used as they are.
    ///
    /// # Errors
    /// As [`Registry::pipeline`].
    pub fn pipeline_stored(
        &self,
        chain: &[FilterSpec],
        ctx: FilterContext,
    ) -> Result<Pipeline, FilterError> {
        self.assemble(chain, ctx, false)
    }

    /// The pipeline of `chain`, turning visible parameters into working ones when `visible`.
    fn assemble(
        &self,
        chain: &[FilterSpec],
        ctx: FilterContext,
        visible: bool,
    ) -> Result<Pipeline, FilterError> {
        let mut stages = Vec::with_capacity(chain.len());
        for s in chain {
            let f = self.get(s.id).ok_or_else(|| self.not_available(s.id))?;
            let stage = if visible {
                f.build(&f.working_params(&s.params, &ctx), &ctx)
            } else {
                f.build(&s.params, &ctx)
            };
            stages.push(stage?);
        }
        Ok(Pipeline::from_filters(stages, ctx))
    }
}

/// A chain of configured filters: encode applies them in order, decode in reverse.
pub struct Pipeline {
    stages: Vec<Box<dyn Filter>>,
    ctx: FilterContext,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field(
                "stages",
                &self.stages.iter().map(|s| s.id()).collect::<Vec<_>>(),
            )
            .field("ctx", &self.ctx)
            .finish()
    }
}

impl Pipeline {
    /// A pipeline of already configured filters (in application order); each is told which
    /// filters encode before it ([`Filter::after`]).
    pub fn from_filters(mut stages: Vec<Box<dyn Filter>>, ctx: FilterContext) -> Pipeline {
        let ids: Vec<FilterId> = stages.iter().map(|s| s.id()).collect();
        for (i, s) in stages.iter_mut().enumerate() {
            s.after(&ids[..i]);
        }
        Pipeline { stages, ctx }
    }

    /// Number of filters.
    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// True for an empty chain (encode and decode copy).
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// The context the pipeline was built for.
    pub fn context(&self) -> &FilterContext {
        &self.ctx
    }

    /// Encode one chunk through every filter in order.
    ///
    /// # Errors
    /// The first filter that fails.
    pub fn encode(&self, chunk: &[u8]) -> Result<Vec<u8>, FilterError> {
        if self.stages.is_empty() {
            return Ok(chunk.to_vec());
        }
        let mut cur = Vec::new();
        let mut out = Vec::new();
        for (i, s) in self.stages.iter().enumerate() {
            // the first stage reads the caller's slice: no copy
            s.encode(if i == 0 { chunk } else { &cur }, &mut out)?;
            std::mem::swap(&mut cur, &mut out);
        }
        Ok(cur)
    }

    /// Encode like HDF5 with optional filters: when filter `i` fails and bit `i` of
    /// `optional` is set, it is skipped and bit `i` of the returned mask is set (HDF5's
    /// per-chunk filter mask; [`Pipeline::decode_masked`] skips it again).
    ///
    /// # Errors
    /// The first mandatory filter that fails.
    pub fn encode_masked(
        &self,
        chunk: &[u8],
        optional: u32,
    ) -> Result<(Vec<u8>, u32), FilterError> {
        let mut cur = chunk.to_vec();
        let mut out = Vec::new();
        let mut mask = 0u32;
        for (i, s) in self.stages.iter().enumerate() {
            match s.encode(&cur, &mut out) {
                Ok(()) => std::mem::swap(&mut cur, &mut out),
                Err(_) if i < 32 && optional & (1 << i) != 0 => mask |= 1 << i,
                Err(e) => return Err(e),
            }
        }
        Ok((cur, mask))
    }

    /// Decode one chunk through every filter in reverse order, then check its length against
    /// the chunk shape (when known).
    ///
    /// # Errors
    /// The first filter that fails; [`FilterError::Length`] when the result is not one chunk.
    pub fn decode(&self, data: &[u8]) -> Result<Vec<u8>, FilterError> {
        self.decode_masked(data, 0)
    }

    /// Like [`Pipeline::decode`], skipping filter `i` when bit `i` of `mask` is set (HDF5's
    /// per-chunk filter mask: an optional filter that failed on write).
    ///
    /// # Errors
    /// As [`Pipeline::decode`].
    pub fn decode_masked(&self, data: &[u8], mask: u32) -> Result<Vec<u8>, FilterError> {
        let mut cur = Vec::new();
        let mut out = Vec::new();
        let mut first = true;
        for (i, s) in self.stages.iter().enumerate().rev() {
            if i < 32 && mask & (1 << i) != 0 {
                continue;
            }
            // the first stage applied reads the caller's slice: no copy
            s.decode(if first { data } else { &cur }, &mut out)?;
            first = false;
            if out.len() > self.ctx.max_decoded {
                return Err(FilterError::TooLarge {
                    id: s.id(),
                    name: "pipeline",
                    claimed: out.len() as u64,
                    limit: self.ctx.max_decoded,
                });
            }
            std::mem::swap(&mut cur, &mut out);
        }
        if first {
            cur = data.to_vec();
        }
        if let Some(expected) = self.ctx.chunk_bytes() {
            if !self.stages.is_empty() && cur.len() != expected {
                return Err(FilterError::Length {
                    id: 0,
                    name: "pipeline",
                    expected,
                    got: cur.len(),
                });
            }
        }
        Ok(cur)
    }
}
