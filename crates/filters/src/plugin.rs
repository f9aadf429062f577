//! HDF5 filter plugins loaded with libloading: one of the two modules with `unsafe` code (the
//! other is `codecs/inflate.rs`, one call into the bundled libdeflate).
//!
//! Search order (netCDF filters documentation, "Plugin directory"): the directories of
//! `HDF5_PLUGIN_PATH` (`:`-separated), then `/usr/local/hdf5/lib/plugin`. In each, every file
//! named `lib*.so*` is loaded; `H5PLget_plugin_type` must return `H5PL_TYPE_FILTER` (0) and
//! `H5PLget_plugin_info` an `H5Z_class2_t` of version 1 with a filter function. The filter
//! function is called as HDF5 does: flags 0 to encode, `H5Z_FLAG_REVERSE` to decode, with a
//! `malloc`'d buffer it may `realloc` or `free` and replace.
#![allow(unsafe_code)]

use crate::error::FilterError;
use crate::filter::{Filter, FilterContext, FilterFactory, FilterId, FilterSource};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The default plugin directory on Unix.
pub const DEFAULT_PLUGIN_DIR: &str = "/usr/local/hdf5/lib/plugin";
/// `H5Z_FLAG_REVERSE`: the filter function decodes.
pub const H5Z_FLAG_REVERSE: c_uint = 0x0100;
/// `H5PL_TYPE_FILTER`.
pub const H5PL_TYPE_FILTER: c_int = 0;
/// `H5Z_CLASS_T_VERS`: the version of `H5Z_class2_t`.
pub const H5Z_CLASS_T_VERS: c_int = 1;

/// `size_t (*)(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
/// size_t *buf_size, void **buf)`
type H5ZFunc = unsafe extern "C" fn(
    c_uint,
    libc::size_t,
    *const c_uint,
    libc::size_t,
    *mut libc::size_t,
    *mut *mut c_void,
) -> libc::size_t;

/// `H5Z_class2_t` (HDF5 1.8+ layout; `hid_t` is 64-bit since 1.10, only pointers here).
#[repr(C)]
struct H5ZClass2 {
    version: c_int,
    id: c_int,
    encoder_present: c_uint,
    decoder_present: c_uint,
    name: *const c_char,
    can_apply: *const c_void,
    set_local: *const c_void,
    filter: Option<H5ZFunc>,
}

/// A library that was loaded and verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedPlugin {
    /// Filter id it implements.
    pub id: FilterId,
    /// The name it gives itself.
    pub name: String,
    /// The library file.
    pub path: PathBuf,
    /// It can encode.
    pub encoder: bool,
    /// It can decode.
    pub decoder: bool,
}

/// A library that was not used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLibrary {
    /// The file (or directory, when it cannot be read).
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
}

/// What loading plugin directories found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginReport {
    /// Libraries registered.
    pub loaded: Vec<LoadedPlugin>,
    /// Libraries skipped, with the reason (for `--verbose` / diagnostics).
    pub skipped: Vec<SkippedLibrary>,
    /// NCZarr codecs found (`NCZ_get_codec_info` / `NCZ_codec_info_defaults`).
    pub codecs: Vec<LoadedCodec>,
}

/// An NCZarr codec a library describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedCodec {
    /// The codec id (`"zstd"`).
    pub codec_id: String,
    /// The HDF5 filter id it pairs with.
    pub hdf5_id: FilterId,
    /// The library.
    pub path: PathBuf,
    /// From the defaults table.
    pub defaults: bool,
    /// An implementation (built-in or plugin) of `hdf5_id` is available: "NCZarr usable".
    pub paired: bool,
}

/// `HDF5_PLUGIN_PATH`'s directories (`:`-separated, empty items dropped), then
/// [`DEFAULT_PLUGIN_DIR`].
pub fn default_plugin_dirs() -> Vec<PathBuf> {
    plugin_dirs_from(std::env::var_os("HDF5_PLUGIN_PATH").as_deref())
}

/// The search path for a given `HDF5_PLUGIN_PATH` value.
pub fn plugin_dirs_from(env: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = env
        .map(|v| {
            std::env::split_paths(v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    let def = PathBuf::from(DEFAULT_PLUGIN_DIR);
    if !dirs.contains(&def) {
        dirs.push(def);
    }
    dirs
}

/// True for names HDF5 considers on Linux: `lib*.so*`.
pub fn is_plugin_file_name(name: &str) -> bool {
    name.starts_with("lib") && name[3..].contains(".so")
}

pub(crate) struct Found {
    pub(crate) filter: Option<(LoadedPlugin, Arc<dyn FilterFactory>)>,
    pub(crate) codecs: Vec<CodecPlugin>,
}

/// Load every plugin library of `dir`, in file-name order.
pub(crate) fn scan_dir(dir: &Path, skipped: &mut Vec<SkippedLibrary>) -> Vec<Found> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            if dir.exists() {
                skipped.push(SkippedLibrary {
                    path: dir.to_path_buf(),
                    reason: format!("cannot read directory: {e}"),
                });
            }
            return out;
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_plugin_file_name)
        })
        .collect();
    files.sort();
    for path in files {
        match load_library(&path) {
            Ok(f) => out.push(f),
            Err(reason) => skipped.push(SkippedLibrary { path, reason }),
        }
    }
    out
}

/// Load one library and verify its HDF5 filter API and/or NCZarr codec API.
fn load_library(path: &Path) -> Result<Found, String> {
    // RTLD_NODELETE: a library is never unmapped. Plugins linked against libhdf5 pull it in,
    // and unloading it again runs HDF5's terminators, which crash outside HDF5.
    let flags = libc::RTLD_LAZY | libc::RTLD_LOCAL | libc::RTLD_NODELETE;
    // SAFETY: loading a library runs its initialisers; we only load files the user placed in
    // a plugin directory, which is the trust model of HDF5's own plugin loader.
    let lib = unsafe { libloading::os::unix::Library::open(Some(path), flags) }
        .map_err(|e| format!("cannot load: {e}"))?;
    let lib = Arc::new(libloading::Library::from(lib));
    let codecs = load_codecs(&lib, path)?;
    let filter = match load_filter(&lib, path) {
        Ok(f) => Some(f),
        Err(e) if codecs.is_empty() => return Err(e),
        Err(_) => None, // a codec-only library
    };
    Ok(Found { filter, codecs })
}

fn load_filter(
    lib: &Arc<libloading::Library>,
    path: &Path,
) -> Result<(LoadedPlugin, Arc<dyn FilterFactory>), String> {
    // SAFETY: the symbol's type is the one the HDF5 plugin API documents:
    // `H5PL_type_t H5PLget_plugin_type(void)`, an enum returned as int.
    let ty = unsafe {
        let f: libloading::Symbol<unsafe extern "C" fn() -> c_int> = lib
            .get(b"H5PLget_plugin_type\0")
            .map_err(|_| "no H5PLget_plugin_type nor NCZarr codec API: not a plugin".to_string())?;
        f()
    };
    if ty != H5PL_TYPE_FILTER {
        return Err(format!(
            "H5PLget_plugin_type returned {ty}, not a filter plugin (0)"
        ));
    }
    // SAFETY: `const void *H5PLget_plugin_info(void)`, documented to return a pointer to a
    // static `H5Z_class2_t` that lives as long as the library (kept alive by `lib`).
    let info = unsafe {
        let f: libloading::Symbol<unsafe extern "C" fn() -> *const c_void> = lib
            .get(b"H5PLget_plugin_info\0")
            .map_err(|_| "no H5PLget_plugin_info".to_string())?;
        f() as *const H5ZClass2
    };
    if info.is_null() {
        return Err("H5PLget_plugin_info returned NULL".into());
    }
    // SAFETY: non-null, points to the plugin's static class struct whose layout is
    // `H5Z_class2_t`; we read its fields once and copy them.
    let (version, id, enc, dec, name_ptr, filter) = unsafe {
        let c = &*info;
        (
            c.version,
            c.id,
            c.encoder_present,
            c.decoder_present,
            c.name,
            c.filter,
        )
    };
    if version != H5Z_CLASS_T_VERS {
        return Err(format!(
            "H5Z_class_t version {version}, expected {H5Z_CLASS_T_VERS} (H5Z_class2_t)"
        ));
    }
    let id = FilterId::try_from(id)
        .ok()
        .filter(|&i| (1..=65535).contains(&i))
        .ok_or_else(|| format!("invalid filter id {id}"))?;
    let filter = filter.ok_or_else(|| format!("filter {id}: no filter function"))?;
    let name = if name_ptr.is_null() {
        format!("filter{id}")
    } else {
        // SAFETY: a NUL-terminated static string of the plugin (non-null checked).
        unsafe { CStr::from_ptr(name_ptr) }
            .to_string_lossy()
            .into_owned()
    };
    let info = LoadedPlugin {
        id,
        name,
        path: path.to_path_buf(),
        encoder: enc != 0,
        decoder: dec != 0,
    };
    let factory = Arc::new(PluginFactory {
        info: info.clone(),
        func: filter,
        _lib: Arc::clone(lib),
    });
    Ok((info, factory))
}

/// `NCZ_codec_t` (netCDF-C 4.9 `netcdf_filter_build.h`).
#[repr(C)]
struct NczCodecT {
    version: c_int,
    sort: c_int,
    codecid: *const c_char,
    hdf5id: c_uint,
    initialize: Option<unsafe extern "C" fn()>,
    finalize: Option<unsafe extern "C" fn()>,
    codec_to_hdf5: Option<NczToHdf5>,
    hdf5_to_codec: Option<NczToCodec>,
    modify_parameters: *const c_void,
}

/// `int (*)(const char* codec, size_t* nparamsp, unsigned** paramsp)`
type NczToHdf5 = unsafe extern "C" fn(*const c_char, *mut libc::size_t, *mut *mut c_uint) -> c_int;
/// `int (*)(size_t nparams, const unsigned* params, char** codecp)`
type NczToCodec = unsafe extern "C" fn(libc::size_t, *const c_uint, *mut *mut c_char) -> c_int;

/// `NCZ_CODEC_CLASS_VER` and `NCZ_CODEC_HDF5`.
const NCZ_CODEC_CLASS_VER: c_int = 1;
const NCZ_CODEC_HDF5: c_int = 1;

/// Read the codec tables a library exports: `NCZ_get_codec_info` (one codec) and
/// `NCZ_codec_info_defaults` (a NULL-terminated list, used only for codecs no other library
/// describes).
fn load_codecs(lib: &Arc<libloading::Library>, path: &Path) -> Result<Vec<CodecPlugin>, String> {
    let mut ptrs: Vec<(*const NczCodecT, bool)> = Vec::new();
    // SAFETY: `void* NCZ_get_codec_info(void)` returns a pointer to a static NCZ_codec_t.
    unsafe {
        if let Ok(f) = lib.get::<unsafe extern "C" fn() -> *const c_void>(b"NCZ_get_codec_info\0") {
            let p = f() as *const NczCodecT;
            if !p.is_null() {
                ptrs.push((p, false));
            }
        }
    }
    // SAFETY: `void* NCZ_codec_info_defaults(void)` returns a NULL-terminated static array of
    // NCZ_codec_t pointers; we stop at NULL and at 256 entries.
    unsafe {
        if let Ok(f) =
            lib.get::<unsafe extern "C" fn() -> *const c_void>(b"NCZ_codec_info_defaults\0")
        {
            let list = f() as *const *const NczCodecT;
            if !list.is_null() {
                for i in 0..256 {
                    let p = *list.add(i);
                    if p.is_null() {
                        break;
                    }
                    ptrs.push((p, true));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (p, defaults) in ptrs {
        // SAFETY: non-null pointer to a static NCZ_codec_t of the (still loaded) library.
        let c = unsafe { &*p };
        if c.version != NCZ_CODEC_CLASS_VER || c.sort != NCZ_CODEC_HDF5 || c.codecid.is_null() {
            return Err(format!(
                "NCZ_codec_t version {} sort {}: expected version {NCZ_CODEC_CLASS_VER}, sort {NCZ_CODEC_HDF5}",
                c.version, c.sort
            ));
        }
        // SAFETY: NUL-terminated static string (non-null checked).
        let codec_id = unsafe { CStr::from_ptr(c.codecid) }
            .to_string_lossy()
            .into_owned();
        out.push(CodecPlugin {
            codec_id,
            hdf5_id: c.hdf5id,
            path: path.to_path_buf(),
            defaults,
            initialize: c.initialize,
            to_hdf5: c.codec_to_hdf5,
            to_codec: c.hdf5_to_codec,
            _lib: Arc::clone(lib),
        });
    }
    Ok(out)
}

/// An NCZarr codec described by a plugin library: converts between the codec's JSON and the
/// HDF5 filter's visible parameters. `NCZ_modify_parameters` is not called (it needs
/// netCDF-C's own ncid/varid); working parameters come from [`FilterFactory::working_params`].
pub struct CodecPlugin {
    /// The numcodecs codec id (`"zstd"`).
    pub codec_id: String,
    /// The HDF5 filter id it pairs with.
    pub hdf5_id: FilterId,
    /// The library.
    pub path: PathBuf,
    /// From `NCZ_codec_info_defaults` (used only when no other library describes the codec).
    pub defaults: bool,
    initialize: Option<unsafe extern "C" fn()>,
    to_hdf5: Option<NczToHdf5>,
    to_codec: Option<NczToCodec>,
    _lib: Arc<libloading::Library>,
}

impl std::fmt::Debug for CodecPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodecPlugin")
            .field("codec_id", &self.codec_id)
            .field("hdf5_id", &self.hdf5_id)
            .field("path", &self.path)
            .field("defaults", &self.defaults)
            .finish()
    }
}

impl CodecPlugin {
    fn failed(&self, what: &str, code: c_int) -> FilterError {
        FilterError::CodecPluginFailed {
            codec: self.codec_id.clone(),
            library: self.path.clone(),
            what: what.to_string(),
            code,
        }
    }

    /// Call the codec's `NCZ_codec_initialize`, if it has one (once, when paired).
    pub(crate) fn initialize(&self) {
        if let Some(f) = self.initialize {
            // SAFETY: `void (*)(void)` from the codec table; the library stays loaded.
            unsafe { f() }
        }
    }

    /// The HDF5 visible parameters for a codec's JSON text (`NCZ_codec_to_hdf5`).
    ///
    /// # Errors
    /// [`FilterError::CodecPluginFailed`] when the function is missing or fails.
    pub fn codec_to_hdf5(&self, json: &str) -> Result<Vec<u32>, FilterError> {
        let f = self
            .to_hdf5
            .ok_or_else(|| self.failed("has no NCZ_codec_to_hdf5", 0))?;
        let text =
            std::ffi::CString::new(json).map_err(|_| self.failed("JSON holds a NUL byte", 0))?;
        let mut n: libc::size_t = 0;
        let mut params: *mut c_uint = std::ptr::null_mut();
        // SAFETY: `text` is NUL-terminated and outlives the call; `n` and `params` are valid
        // out-pointers (a zeroed size_t also reads right if the plugin stores an int).
        let rc = unsafe { f(text.as_ptr(), &mut n, &mut params) };
        let out = if rc == 0 && (n == 0 || !params.is_null()) && n <= 4096 {
            // SAFETY: the plugin returned `n` unsigned values at `params`.
            Ok(unsafe { std::slice::from_raw_parts(params, n) }.to_vec())
        } else {
            Err(self.failed("NCZ_codec_to_hdf5 failed", rc))
        };
        if !params.is_null() {
            // SAFETY: the caller frees the vector the plugin malloc'd (documented).
            unsafe { libc::free(params.cast()) };
        }
        out
    }

    /// The codec JSON text for HDF5 visible parameters (`NCZ_hdf5_to_codec`).
    ///
    /// # Errors
    /// [`FilterError::CodecPluginFailed`] when the function is missing or fails.
    pub fn hdf5_to_codec(&self, params: &[u32]) -> Result<String, FilterError> {
        let f = self
            .to_codec
            .ok_or_else(|| self.failed("has no NCZ_hdf5_to_codec", 0))?;
        let mut text: *mut c_char = std::ptr::null_mut();
        // SAFETY: `params` outlives the call; `text` is a valid out-pointer.
        let rc = unsafe { f(params.len(), params.as_ptr(), &mut text) };
        let out = if rc == 0 && !text.is_null() {
            // SAFETY: a NUL-terminated string the plugin malloc'd.
            Ok(unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned())
        } else {
            Err(self.failed("NCZ_hdf5_to_codec failed", rc))
        };
        if !text.is_null() {
            // SAFETY: the caller frees the string (documented: "caller must free").
            unsafe { libc::free(text.cast()) };
        }
        out
    }
}

/// The factory of one plugin filter.
struct PluginFactory {
    info: LoadedPlugin,
    func: H5ZFunc,
    _lib: Arc<libloading::Library>,
}

impl FilterFactory for PluginFactory {
    fn id(&self) -> FilterId {
        self.info.id
    }
    fn name(&self) -> &str {
        &self.info.name
    }
    fn source(&self) -> FilterSource {
        FilterSource::Plugin(self.info.path.clone())
    }
    fn working_params(&self, visible: &[u32], ctx: &FilterContext) -> Vec<u32> {
        crate::codecs::working_for(self.info.id, visible, ctx)
    }
    fn build(&self, params: &[u32], _ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
        Ok(Box::new(PluginFilter {
            info: self.info.clone(),
            func: self.func,
            params: params.to_vec(),
            _lib: Arc::clone(&self._lib),
        }))
    }
}

/// One plugin filter with its parameters.
struct PluginFilter {
    info: LoadedPlugin,
    func: H5ZFunc,
    params: Vec<c_uint>,
    _lib: Arc<libloading::Library>,
}

impl PluginFilter {
    fn call(&self, decode: bool, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        if (decode && !self.info.decoder) || (!decode && !self.info.encoder) {
            return Err(FilterError::NoCoder {
                id: self.info.id,
                name: self.info.name.clone(),
                decode,
            });
        }
        let fail = || FilterError::PluginFailed {
            id: self.info.id,
            name: self.info.name.clone(),
            library: self.info.path.clone(),
            nbytes: chunk.len(),
            decode,
        };
        let alloc = chunk.len().max(1);
        // SAFETY: malloc of a non-zero size; checked for NULL below.
        let mut buf = unsafe { libc::malloc(alloc) };
        if buf.is_null() {
            return Err(fail());
        }
        // SAFETY: `buf` has `alloc >= chunk.len()` writable bytes and does not overlap `chunk`.
        unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), buf.cast::<u8>(), chunk.len()) };
        let mut buf_size: libc::size_t = alloc;
        let flags = if decode { H5Z_FLAG_REVERSE } else { 0 };
        // SAFETY: the call follows the H5Z_func_t contract: `params` outlives the call,
        // `buf` is a malloc'd block of `buf_size` bytes holding `nbytes` valid bytes; the
        // filter may free/realloc it and store the new block and size through the pointers.
        // The library stays loaded (`_lib`).
        let n = unsafe {
            (self.func)(
                flags,
                self.params.len(),
                self.params.as_ptr(),
                chunk.len(),
                &mut buf_size,
                &mut buf,
            )
        };
        if n == 0 || buf.is_null() || n > buf_size {
            if !buf.is_null() {
                // SAFETY: `buf` is the filter's current malloc'd block (or ours); freed once.
                unsafe { libc::free(buf) };
            }
            return Err(fail());
        }
        out.clear();
        // SAFETY: the filter returned `n <= buf_size` valid bytes at `buf`.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) });
        // SAFETY: `buf` is the malloc'd block the filter left us; freed once.
        unsafe { libc::free(buf) };
        Ok(())
    }
}

impl Filter for PluginFilter {
    fn id(&self) -> FilterId {
        self.info.id
    }
    fn name(&self) -> &str {
        &self.info.name
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.call(false, chunk, out)
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.call(true, chunk, out)
    }
}
