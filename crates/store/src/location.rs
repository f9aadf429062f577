//! The one door: a name given to a tool, parsed once into a [`Location`].
//!
//! The forms (netCDF-C's, "NCZarr Support" and "Byte-Range Support" of its documentation,
//! and ours):
//!
//! - a plain path (`in.nc`, `dir/store.zarr`, `out.zip`); a `#` in a plain path is part of
//!   the name unless the fragment carries store mode words (`t.file#mode=nczarr,file`);
//! - a `file://` URL: `file:///abs/x`, `file://rel/x`, `file://localhost/abs/x`, with
//!   percent-escapes decoded;
//! - a remote URL: `s3://bucket/key`, the S3 `https://` forms, `gs://`, `az://`, `abfs[s]://`
//!   and plain `http(s)://` ([`crate::remote::parse_remote`]);
//! - netCDF-C's client parameters before a URL (`[mode=zarr][log]file:///x`) and after it, in
//!   the fragment (`#mode=nczarr,file&log&layout=4.9`). Both are kept as parsed key/values
//!   ([`Location::param`]), so a later kind of place (OPeNDAP's `[dap4]`, `#dap4`, a
//!   `?constraint`) is one more rule here, not a change in every caller.
//!
//! The words of every `mode=` are checked against the words netCDF-C knows
//! ([`KNOWN_MODE_WORDS`]); an unknown one is an error naming it. What the words mean for a
//! key → bytes store (`nczarr`, `zarr`, `xarray`, `noxarray`, `v3`, the storage `file`,
//! `zip`, `s3`, and `layout=`) is [`Location::store_modes`]; `bytes` and `anon` are read by
//! the remote layer. Nothing here reads a file: whether a plain path holds a file or a store
//! is found by looking ([`Location::open_source`], [`Location::open_store`]), by nc-dispatch.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::StoreError;
use crate::kv::{DirStore, Store, ZipStore};
use crate::remote::{self, MetadataRank, RemoteUrl};
use crate::source::{ByteSource, FileSource};

/// Every `mode=` word netCDF-C 4.9.0 knows: the format modes and macros of
/// `libdispatch/dinfermodel.c` and the NCZarr storage words of `libnczarr/zarr.c`, plus ours:
/// `v3` (write Zarr v3) and `anon` (no credentials: public buckets). Those that select nothing
/// here (DAP, format hints) are accepted as netCDF-C accepts them.
pub const KNOWN_MODE_WORDS: [&str; 18] = [
    "nczarr", "zarr", "xarray", "noxarray", "file", "zip", "s3", "bytes", "dap2", "dap4",
    "netcdf-3", "classic", "netcdf-4", "enhanced", "udf0", "udf1", "v3", "anon",
];

/// The mode words that make a local name a key → bytes store.
const LOCAL_STORE_WORDS: [&str; 7] = ["nczarr", "zarr", "xarray", "noxarray", "file", "zip", "s3"];

/// Where a location's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// A local file or directory.
    Local(PathBuf),
    /// An object, or the prefix of a store's objects, on object storage or a web server.
    Remote(RemoteUrl),
}

/// How a store is kept, as the mode words `file` and `zip` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// A directory tree (`mode=...,file`), or objects below a prefix.
    File,
    /// A zip archive (`mode=...,zip`).
    Zip,
}

/// What the mode words ask of a key → bytes store (netCDF-C's meanings; `v3` and `layout=`
/// are ours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreModes {
    /// `zarr` (or `v3`): pure Zarr, no NCZarr metadata written or required.
    pub pure_zarr: bool,
    /// XArray's `_ARRAY_DIMENSIONS` read and written (the default; `noxarray` turns it off).
    pub xarray: bool,
    /// `v3`: write Zarr version 3 (reading finds the version by itself).
    pub v3: bool,
    /// The fragment's `layout=` value, as given (the NCZarr metadata spelling to write).
    pub layout: Option<String>,
}

/// Where an OPeNDAP dataset's responses are ([`Location::dap_place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DapPlace {
    /// Local responses beside each other: `PATH.dds`, `PATH.das`, `PATH.dods`, `PATH.dap`.
    Files(PathBuf),
    /// A server: `BASE.dds`, `BASE.dods?...`, with the URL's own constraint (its query,
    /// without the `?`) kept apart.
    Server {
        /// The `http(s)://` URL without query and fragment.
        base: String,
        /// The constraint.
        query: Option<String>,
    },
}

/// A name given to a tool, parsed once: where its bytes are, what its mode words and client
/// parameters ask, the name to show and the dataset name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    text: String,
    place: Place,
    /// Words of every `mode=` (prefixes and fragment), lower case, in order.
    modes: Vec<String>,
    /// Client parameters: `[k=v]` prefixes, then the fragment's `k=v` parts (a bare word has
    /// an empty value), keys lower case.
    params: Vec<(String, String)>,
    /// The mode words name a key → bytes store.
    store: bool,
    /// The text the dataset name comes from (path or URL path, no fragment).
    name_part: String,
    /// The name without client parameters: no `[...]` prefixes, no fragment.
    base: String,
}

/// `[k=v][k2]rest` → the parameters and `rest`; `None` when `text` does not start with a
/// complete bracket.
fn bracket_prefixes(text: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut rest = text;
    let mut params = Vec::new();
    while let Some(r) = rest.strip_prefix('[') {
        let end = r.find(']')?;
        params.extend(key_values(&r[..end], ','));
        rest = &r[end + 1..];
    }
    (!params.is_empty() || rest.len() < text.len()).then_some((params, rest))
}

/// `k=v` parts separated by `sep` (a bare word has an empty value), keys lower case.
fn key_values(s: &str, sep: char) -> Vec<(String, String)> {
    s.split(sep)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect()
}

/// The fragment's parameters: `&`-separated `k=v` parts.
fn fragment_params(fragment: &str) -> Vec<(String, String)> {
    key_values(fragment, '&')
}

/// The words of the `mode` parameters, lower case.
fn mode_words_of(params: &[(String, String)]) -> Vec<String> {
    params
        .iter()
        .filter(|(k, _)| k == "mode")
        .flat_map(|(_, v)| {
            v.split(',')
                .map(|w| w.trim().to_ascii_lowercase())
                .filter(|w| !w.is_empty())
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of `key` among client parameters (keys lower case, as [`Location::params`]
/// gives them): the last one wins; a bare word has an empty value.
pub fn param_in<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    let key = key.to_ascii_lowercase();
    params
        .iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_str())
}

/// `file:PATH` without the `//` of a URL (`[dap4]file:/abs/x`, as netCDF-C's tests write it).
fn short_file_url(s: &str) -> bool {
    s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("file:"))
        && !s[5..].starts_with("//")
        && s.len() > 5
}

/// ncdump's dataset name of a path or URL path: its last component without the last
/// extension (`/x/tmp_misc.file` → `tmp_misc`; a leading dot is not an extension).
fn dataset_name_of(s: &str) -> String {
    let s = s.trim_end_matches('/');
    let base = s.rsplit('/').next().unwrap_or(s);
    match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_string(),
        _ => base.to_string(),
    }
}

impl Location {
    /// Parse a name as a user gives it to a tool.
    ///
    /// # Errors
    /// [`StoreError::UnknownModeWord`] for a `mode=` word netCDF-C does not know (a typo
    /// would otherwise silently choose another format or storage).
    pub fn parse(text: &str) -> Result<Location, StoreError> {
        // client parameters in brackets come before a URL only
        let (mut params, rest) = match bracket_prefixes(text) {
            Some((p, rest)) if rest.contains("://") || short_file_url(rest) => (p, rest),
            _ => (Vec::new(), text),
        };
        // netCDF-C's `file:PATH` (no `//`): `file:/abs/x` is `file:///abs/x`
        let long;
        let rest = if short_file_url(rest) {
            long = format!("file://{}", &rest[5..]);
            long.as_str()
        } else {
            rest
        };
        let (base, fragment) = match rest.split_once('#') {
            Some((b, f)) => (b, Some(f)),
            None => (rest, None),
        };
        params.extend(fragment.map(fragment_params).unwrap_or_default());
        let modes = mode_words_of(&params);
        if let Some(word) = modes
            .iter()
            .find(|w| !KNOWN_MODE_WORDS.contains(&w.as_str()))
        {
            return Err(StoreError::UnknownModeWord {
                location: text.to_string(),
                word: word.clone(),
                known: KNOWN_MODE_WORDS.join(", "),
            });
        }
        let has = |w: &str| modes.iter().any(|m| m == w);
        let local_store = LOCAL_STORE_WORDS.iter().any(|w| has(w));
        if let Some(u) = remote::parse_remote(rest) {
            // a remote store when the words say Zarr (or `s3` without `bytes`); other remote
            // names are objects read by range, or stores found by looking
            let store = ["nczarr", "zarr", "v3", "xarray", "noxarray"]
                .iter()
                .any(|w| has(w))
                || (has("s3") && !has("bytes"));
            let name_part = if u.key.is_empty() {
                u.bucket.clone()
            } else {
                u.key.clone()
            };
            return Ok(Location {
                text: text.to_string(),
                place: Place::Remote(u),
                modes,
                params,
                store,
                name_part,
                base: base.to_string(),
            });
        }
        let literal = fragment.is_some() && !local_store && !base.starts_with("file://");
        let (path, name_part) = if let Some(rest) = base.strip_prefix("file://") {
            // file:///abs → /abs ; file://rel → rel ; file://localhost/abs → /abs
            let rest = rest
                .strip_prefix("localhost/")
                .map_or(rest.to_string(), |r| format!("/{r}"));
            (PathBuf::from(percent_decode(&rest)), rest)
        } else if literal {
            // a `#` that carries no store words is part of a plain file name
            (PathBuf::from(text), text.to_string())
        } else {
            (PathBuf::from(base), base.to_string())
        };
        Ok(Location {
            text: text.to_string(),
            place: Place::Local(path),
            modes,
            params,
            store: local_store,
            name_part,
            base: if literal { text } else { base }.to_string(),
        })
    }

    /// A plain local path, with no mode words.
    pub fn local(path: &Path) -> Location {
        let name_part = path.to_string_lossy().into_owned();
        Location {
            text: name_part.clone(),
            place: Place::Local(path.to_path_buf()),
            modes: Vec::new(),
            params: Vec::new(),
            store: false,
            base: name_part.clone(),
            name_part,
        }
    }

    /// The same mode words and parameters, at another local path (the temporary name an
    /// output is written under before it is published).
    pub fn at_local(&self, path: &Path) -> Location {
        Location {
            place: Place::Local(path.to_path_buf()),
            ..self.clone()
        }
    }

    /// The name as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The name without client parameters (no `[...]` prefixes, no `#` fragment): a URL as a
    /// client outside netCDF (fsspec, a browser) takes it.
    pub fn without_parameters(&self) -> &str {
        &self.base
    }

    /// Where the bytes are.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// The local path, for a local location.
    pub fn local_path(&self) -> Option<&Path> {
        match &self.place {
            Place::Local(p) => Some(p),
            Place::Remote(_) => None,
        }
    }

    /// The remote URL, for a remote location.
    pub fn remote(&self) -> Option<&RemoteUrl> {
        match &self.place {
            Place::Remote(u) => Some(u),
            Place::Local(_) => None,
        }
    }

    /// True for a place reached over a network.
    pub fn is_remote(&self) -> bool {
        matches!(self.place, Place::Remote(_))
    }

    /// The name to show in messages: the path, or the URL without credentials, query or
    /// fragment.
    pub fn display(&self) -> String {
        match &self.place {
            Place::Local(p) => p.display().to_string(),
            Place::Remote(u) => u.display.clone(),
        }
    }

    /// The dataset name ncdump prints (`netcdf NAME {`): the last component of the path (or
    /// of the URL's path) without its last extension. The one place this rule is written.
    pub fn dataset_name(&self) -> String {
        dataset_name_of(&self.name_part)
    }

    /// True when the mode words include `word` (lower case).
    pub fn mode(&self, word: &str) -> bool {
        self.modes.iter().any(|w| w == word)
    }

    /// The words of every `mode=`, lower case, in order.
    pub fn modes(&self) -> &[String] {
        &self.modes
    }

    /// The value of client parameter `key` (from `[key=value]` prefixes or the fragment; the
    /// last one wins; a bare word has an empty value).
    pub fn param(&self, key: &str) -> Option<&str> {
        param_in(&self.params, key)
    }

    /// True when the mode words name a key → bytes store (a Zarr / NCZarr store), rather than
    /// leaving it to what is found there.
    pub fn names_store(&self) -> bool {
        self.store
    }

    /// What the mode words ask of a store.
    pub fn store_modes(&self) -> StoreModes {
        StoreModes {
            pure_zarr: self.mode("zarr") || self.mode("v3"),
            xarray: !self.mode("noxarray"),
            v3: self.mode("v3"),
            layout: self.param("layout").map(str::to_string),
        }
    }

    /// How a store here is kept: the words `zip` or `file`, else a local name ending in
    /// `.zip` that is not a directory is an archive; remote stores are objects below a prefix.
    pub fn storage_kind(&self) -> StorageKind {
        match &self.place {
            Place::Remote(_) => StorageKind::File,
            Place::Local(_) if self.mode("zip") => StorageKind::Zip,
            Place::Local(_) if self.mode("file") => StorageKind::File,
            Place::Local(p)
                if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip")) && !p.is_dir() =>
            {
                StorageKind::Zip
            }
            Place::Local(_) => StorageKind::File,
        }
    }

    /// The bytes here as a byte source: a local file (positional reads) or a remote object
    /// (ranged requests, one HEAD to open).
    ///
    /// # Errors
    /// A missing or unreadable file, a directory; remote failures (no such object, denied).
    pub fn open_source(&self) -> Result<Arc<dyn ByteSource>, StoreError> {
        Ok(match &self.place {
            Place::Local(p) => Arc::new(FileSource::open(p)?),
            Place::Remote(u) => Arc::new(remote::open_source(u)?),
        })
    }

    /// The store here, for reading: a directory, a zip archive, or objects below a prefix.
    ///
    /// # Errors
    /// A missing directory, an unreadable archive, incomplete remote settings.
    pub fn open_store(&self) -> Result<Box<dyn Store>, StoreError> {
        Ok(match &self.place {
            Place::Remote(u) => Box::new(remote::open_store(u)?),
            Place::Local(p) => match self.storage_kind() {
                StorageKind::File => Box::new(DirStore::open(p)?),
                StorageKind::Zip => Box::new(ZipStore::open(p)?),
            },
        })
    }

    /// Create the store here for writing, replacing a store there. On object storage the
    /// objects `rank` marks as metadata are written last, in its order.
    ///
    /// # Errors
    /// A path or prefix holding something other than a store; remote failures.
    pub fn create_store(&self, rank: MetadataRank) -> Result<Box<dyn Store>, StoreError> {
        Ok(match &self.place {
            Place::Remote(u) => Box::new(remote::create_store(u, rank)?),
            Place::Local(p) => match self.storage_kind() {
                StorageKind::File => Box::new(DirStore::create(p)?),
                StorageKind::Zip => Box::new(ZipStore::create(p)?),
            },
        })
    }

    /// Open the existing store here to add keys to it, replacing nothing (one part of a
    /// store written by parts). A zip archive has one writer and is refused.
    ///
    /// # Errors
    /// A zip store ([`StoreError::ReadOnly`]); a missing directory (not found); remote
    /// settings.
    pub fn open_store_writable(&self, rank: MetadataRank) -> Result<Box<dyn Store>, StoreError> {
        match &self.place {
            Place::Remote(u) => Ok(Box::new(remote::open_store_writable(u, rank)?)),
            Place::Local(p) => match self.storage_kind() {
                StorageKind::File => Ok(Box::new(DirStore::open_writable(p)?)),
                StorageKind::Zip => Err(StoreError::ReadOnly {
                    location: self.text.clone(),
                    why: "a zip store is one archive with one writer, so it cannot be written \
                          by parts: write a directory store (#mode=...,file) or object storage \
                          by parts, then zip it"
                        .into(),
                }),
            },
        }
    }
}

/// The OPeNDAP protocol a location asks for ([`Location::dap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DapProtocol {
    /// DAP2: `.dds`, `.das`, `.dods`
    Dap2,
    /// DAP4: `.dmr`, `.dap`
    Dap4,
}

/// Client parameters only an OPeNDAP client takes (netCDF-C's `libdap2` and `oc2`): one of
/// them on an `http(s)://` URL makes it a DAP URL.
const DAP_PARAMS: [&str; 24] = [
    "dap2",
    "dap4",
    "log",
    "cache",
    "nocache",
    "netcdf3",
    "show",
    "fillmismatch",
    "nofillmismatch",
    "stringlength",
    "maxstrlen",
    "limit",
    "nolimit",
    "prefetch",
    "noprefetch",
    "fetch",
    "wholevar",
    "encode",
    "cachelimit",
    "fetchlimit",
    "smallsizelimit",
    "cachecount",
    "noseqdims",
    "protocol",
];

impl Location {
    /// Client parameters: `[k=v]` prefixes, then the fragment's `k=v` parts (keys lower
    /// case, a bare word has an empty value), in order.
    pub fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// Whether this location is an OPeNDAP dataset, and which protocol, by netCDF-C 4.9.0's
    /// rules (`libdispatch/dinfermodel.c`): DAP4 when `[dap4]`, `#dap4`, `mode=dap4` or a
    /// `dap4://` / `dap4s://` scheme asks for it; DAP2 when `[dap2]`, `#dap2` or
    /// `mode=dap2` does; a `file://` URL whose path plus `.dds` exists is DAP2; an
    /// `http(s)://` URL with DAP client parameters (`[log]`, `[cache]`, ...) or a constraint
    /// (`?...`) is DAP2. `None` otherwise (a plain `http://host/x` may still be DAP2 when it
    /// holds no netCDF object and `x.dds` answers: nc-dispatch looks).
    pub fn dap(&self) -> Option<DapProtocol> {
        let lower = self.base.to_ascii_lowercase();
        let has = |k: &str| self.params.iter().any(|(p, _)| p == k);
        if has("dap4")
            || self.mode("dap4")
            || lower.starts_with("dap4://")
            || lower.starts_with("dap4s://")
        {
            return Some(DapProtocol::Dap4);
        }
        if has("dap2") || self.mode("dap2") {
            return Some(DapProtocol::Dap2);
        }
        if self.store {
            return None;
        }
        if lower.starts_with("file://") {
            let p = self.local_path()?;
            let with = |ext: &str| {
                let mut s = p.as_os_str().to_owned();
                s.push(ext);
                PathBuf::from(s)
            };
            return with(".dds").is_file().then_some(DapProtocol::Dap2);
        }
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let dap_param = self.params.iter().any(|(k, _)| {
                DAP_PARAMS.contains(&k.as_str())
                    || k.starts_with("stringlength_")
                    || k.starts_with("maxstrlen_")
            });
            if dap_param || self.base.contains('?') {
                return Some(DapProtocol::Dap2);
            }
        }
        None
    }
    /// Where this location's OPeNDAP responses are (for a location [`Location::dap`] takes
    /// for DAP): the files beside a local path, or the server URL (`dap4://` and `dap4s://`
    /// are `http://` and `https://`) apart from its constraint. `None` for another kind of
    /// place (object storage).
    pub fn dap_place(&self) -> Option<DapPlace> {
        let url = self.base.as_str();
        let lower = url.to_ascii_lowercase();
        let scheme = ["dap4s://", "dap4://"]
            .into_iter()
            .find(|s| lower.starts_with(s));
        if let (Some(p), None) = (self.local_path(), scheme) {
            return Some(DapPlace::Files(p.to_path_buf()));
        }
        let url = match scheme {
            Some("dap4s://") => format!("https://{}", &url["dap4s://".len()..]),
            Some(_) => format!("http://{}", &url["dap4://".len()..]),
            None => url.to_string(),
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return None;
        }
        let (base, query) = match url.split_once('?') {
            Some((b, q)) => (b.to_string(), Some(plain_constraint(q))),
            None => (url, None),
        };
        Some(DapPlace::Server { base, query })
    }

    /// This location read as `access` says: a remote object's source fetches by that policy
    /// ([`crate::remote::Access`]; a subset reads a small part). Other places are unchanged.
    #[must_use]
    pub fn with_access(mut self, access: crate::remote::Access) -> Location {
        if let Place::Remote(u) = &mut self.place {
            u.access = access;
        }
        self
    }

    /// This location with the client parameter `[key]` added in front, as netCDF-C's ncdump
    /// adds `[cache]` for `-w`: a URL gets it, any other place is returned as it is.
    ///
    /// # Errors
    /// None in practice (the text parsed before); as [`Location::parse`].
    pub fn with_param(&self, key: &str) -> Result<Location, StoreError> {
        if self.local_path().is_some() {
            return Ok(self.clone());
        }
        Location::parse(&format!("[{key}]{}", self.text))
    }
}

/// A DAP constraint with the characters of its syntax written plainly: `%5B`, `%5D`, `%2C`,
/// `%3A` (as browsers and netCDF-C's own requests escape them) become `[`, `]`, `,`, `:`, so
/// that its clauses can be told apart. Other escapes (in names) are kept.
fn plain_constraint(q: &str) -> String {
    let mut out = String::with_capacity(q.len());
    let mut rest = q;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3).map(str::to_ascii_uppercase);
        let plain = match code.as_deref() {
            Some("5B") => Some('['),
            Some("5D") => Some(']'),
            Some("2C") => Some(','),
            Some("3A") => Some(':'),
            _ => None,
        };
        match plain {
            Some(c) => {
                out.push(c);
                rest = &rest[i + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Location {
        Location::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn plain_paths() {
        let l = parse("dir/in.nc");
        assert_eq!(l.place(), &Place::Local(PathBuf::from("dir/in.nc")));
        assert_eq!(l.dataset_name(), "in");
        assert_eq!(l.display(), "dir/in.nc");
        assert!(!l.names_store() && !l.is_remote() && l.modes().is_empty());
        assert_eq!(parse("x.tar.gz").dataset_name(), "x.tar");
        assert_eq!(parse(".hidden").dataset_name(), ".hidden");
        assert_eq!(parse("store.zarr/").dataset_name(), "store");
        assert_eq!(parse("noext").dataset_name(), "noext");
        // a `#` without store words is part of the file name
        let l = parse("a#b.nc");
        assert_eq!(l.local_path(), Some(Path::new("a#b.nc")));
        assert_eq!(l.dataset_name(), "a#b");
        let l = parse("x.nc#mode=bytes");
        assert_eq!(l.local_path(), Some(Path::new("x.nc#mode=bytes")));
        assert!(!l.names_store());
        // store words on a plain path
        let l = parse("t.file#mode=nczarr,file");
        assert_eq!(l.local_path(), Some(Path::new("t.file")));
        assert!(l.names_store());
        assert_eq!(l.dataset_name(), "t");
        assert_eq!(Location::local(Path::new("/a/b.nc")).dataset_name(), "b");
    }

    #[test]
    fn file_urls() {
        let l = parse("file:///abs/x.file#mode=nczarr,file");
        assert_eq!(l.local_path(), Some(Path::new("/abs/x.file")));
        assert_eq!(l.storage_kind(), StorageKind::File);
        assert!(l.names_store());
        assert_eq!(
            l.store_modes(),
            StoreModes {
                pure_zarr: false,
                xarray: true,
                v3: false,
                layout: None
            }
        );
        assert_eq!(l.dataset_name(), "x");
        let l = parse("file://rel/y.zip#mode=zarr,zip");
        assert_eq!(l.local_path(), Some(Path::new("rel/y.zip")));
        assert_eq!(l.storage_kind(), StorageKind::Zip);
        assert!(l.store_modes().pure_zarr);
        let l = parse("file://t.file#mode=zarr,noxarray,file");
        let m = l.store_modes();
        assert!(m.pure_zarr && !m.xarray && !m.v3);
        let m = parse("file://t.file#mode=zarr,v3,file").store_modes();
        assert!(m.pure_zarr && m.v3);
        assert!(
            !parse("file://t.file#mode=xarray,file")
                .store_modes()
                .pure_zarr
        );
        let l = parse("file://t.zip#mode=nczarr");
        assert_eq!(l.storage_kind(), StorageKind::Zip, "from the extension");
        let l = parse("file://a%20b.file#mode=nczarr,file&log&layout=4.9");
        assert_eq!(l.local_path(), Some(Path::new("a b.file")));
        assert_eq!(l.param("log"), Some(""));
        assert_eq!(l.store_modes().layout.as_deref(), Some("4.9"));
        assert_eq!(
            parse("dap4s://h/x.nc?dap4.ce=/v").dap_place(),
            Some(DapPlace::Server {
                base: "https://h/x.nc".into(),
                query: Some("dap4.ce=/v".into())
            })
        );
        assert_eq!(
            parse("[dap2]http://h/y#log").dap_place(),
            Some(DapPlace::Server {
                base: "http://h/y".into(),
                query: None
            })
        );
        assert_eq!(parse("s3://b/k#dap2").dap_place(), None);
        // an escaped constraint reads plainly; escapes in names are kept
        assert_eq!(
            parse("http://h/x?sst%5b0:1%5D%5B1:2:4%5d%2Clat%3A,a%2Eb,%").dap_place(),
            Some(DapPlace::Server {
                base: "http://h/x".into(),
                query: Some("sst[0:1][1:2:4],lat:,a%2Eb,%".into())
            })
        );
        // -w's [cache]: added to a URL, not to a path
        assert_eq!(
            parse("http://h/x#dap2")
                .with_param("cache")
                .unwrap()
                .param("cache"),
            Some("")
        );
        assert_eq!(
            parse("/d/x.nc").with_param("cache").unwrap(),
            parse("/d/x.nc")
        );
        let l = parse("[dap4]file:/abs/t.nc");
        assert_eq!(l.place(), &Place::Local(PathBuf::from("/abs/t.nc")));
        assert_eq!(
            l.dap_place(),
            Some(DapPlace::Files(PathBuf::from("/abs/t.nc")))
        );
        assert_eq!(l.dap(), Some(DapProtocol::Dap4));
        assert_eq!(l.dataset_name(), "t");
        let l = parse("file:/abs/u.nc");
        assert_eq!(l.place(), &Place::Local(PathBuf::from("/abs/u.nc")));
        let l = parse("file://localhost/abs/z.nc");
        assert_eq!(l.local_path(), Some(Path::new("/abs/z.nc")));
        assert!(!l.names_store(), "a file URL without store words is a file");
        assert_eq!(l.dataset_name(), "z");
        // a Zarr store URL says its name in messages as the path
        assert_eq!(
            parse("file:///s/o.zarr#mode=zarr,file").display(),
            "/s/o.zarr"
        );
    }

    #[test]
    fn remote_urls() {
        let l = parse("s3://bucket/dir/x.nc");
        assert!(l.is_remote() && !l.names_store());
        assert_eq!(l.display(), "s3://bucket/dir/x.nc");
        assert_eq!(l.dataset_name(), "x");
        for u in [
            "https://s3.us-east-1.amazonaws.com/bucket/k.zarr#mode=nczarr,s3",
            "s3://bucket/key#mode=zarr",
            "http://127.0.0.1:9/b/k#mode=zarr,s3",
            "gs://b/k#mode=noxarray",
        ] {
            assert!(parse(u).names_store(), "{u}");
        }
        assert_eq!(
            parse("s3://bucket/key.zarr#mode=zarr").dataset_name(),
            "key"
        );
        let l = parse("s3://bucket/key.nc#mode=bytes,s3");
        assert!(!l.names_store() && l.remote().is_some_and(|u| u.wants_bytes()));
        let l = parse("https://user:secret@example.org/data/x.nc?sig=abc#mode=bytes");
        assert_eq!(l.display(), "https://example.org/data/x.nc");
        assert_eq!(
            l.without_parameters(),
            "https://user:secret@example.org/data/x.nc?sig=abc"
        );
        assert_eq!(l.dataset_name(), "x");
        assert!(!l.display().contains("secret"));
        let l = parse("az://cont/p/q.nc");
        assert_eq!(l.remote().map(|u| u.cloud), Some(remote::Cloud::Azure));
        assert_eq!(parse("gs://b/k.nc").dataset_name(), "k");
        assert!(parse("s3://b/k#mode=zarr,anon")
            .remote()
            .is_some_and(|u| u.anonymous));
    }

    #[test]
    fn bracket_parameters_before_a_url() {
        let l = parse("[mode=zarr,file][log]file:///s/x.zarr");
        assert!(l.names_store() && l.store_modes().pure_zarr);
        assert_eq!(l.param("log"), Some(""));
        assert_eq!(l.local_path(), Some(Path::new("/s/x.zarr")));
        assert_eq!(l.dataset_name(), "x");
        // kept as parameters for the kinds of place to come (OPeNDAP)
        let l = parse("[dap4]https://host/opendap/x.nc");
        assert_eq!(l.param("dap4"), Some(""));
        assert_eq!(l.dataset_name(), "x");
        assert_eq!(l.text(), "[dap4]https://host/opendap/x.nc");
        assert_eq!(l.without_parameters(), "https://host/opendap/x.nc");
        assert_eq!(parse("s3://bucket").dataset_name(), "bucket");
        // a plain path starting with a bracket is a path
        let l = parse("[a]b.nc");
        assert_eq!(l.local_path(), Some(Path::new("[a]b.nc")));
        assert!(l.param("a").is_none());
    }

    #[test]
    fn unknown_mode_words_are_named() {
        assert!(Location::parse("file:///x#mode=zarr,v3,file").is_ok());
        assert!(Location::parse("https://h/x#mode=bytes").is_ok());
        let e = Location::parse("file:///x#mode=nczarr,bogus").unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"file:///x#mode=nczarr,bogus\": unknown mode word \"bogus\" in #mode= (known: nczarr, zarr, xarray, noxarray, file, zip, s3, bytes, dap2, dap4, netcdf-3, classic, netcdf-4, enhanced, udf0, udf1, v3, anon)"
        );
        let e = Location::parse("[mode=fiel]file:///x").unwrap_err();
        assert!(e.to_string().contains("\"fiel\""), "{e}");
        // checked on a plain path too, as netCDF-C reads the fragment of any name
        assert!(Location::parse("t.file#mode=nczarr,nope").is_err());
    }

    #[test]
    fn stores_and_sources_open_by_kind() {
        let d = std::env::temp_dir().join(format!("nc-store-loc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("f.bin");
        std::fs::write(&f, b"abcdef").unwrap();
        let src = Location::local(&f).open_source().unwrap();
        assert_eq!(src.len(), 6);
        let Err(e) = Location::local(&d.join("missing")).open_source() else {
            panic!("a missing file opened")
        };
        assert!(e.is_not_found() && e.to_string().contains("missing"), "{e}");
        // a directory store created, then opened, by its URL
        let url = format!("file://{}#mode=zarr,file", d.join("s.zarr").display());
        let l = parse(&url);
        let st = l.create_store(|_| None).unwrap();
        st.put(".zgroup", b"{}").unwrap();
        st.close().unwrap();
        assert_eq!(
            l.open_store().unwrap().get(".zgroup").unwrap().as_deref(),
            Some(&b"{}"[..])
        );
        assert!(l.open_store_writable(|_| None).is_ok());
        // a zip store has one writer
        let z = parse(&format!(
            "file://{}#mode=zarr,zip",
            d.join("z.zip").display()
        ));
        assert_eq!(z.storage_kind(), StorageKind::Zip);
        assert!(matches!(
            z.open_store_writable(|_| None),
            Err(StoreError::ReadOnly { .. })
        ));
        let moved = l.at_local(&d.join("t.zarr"));
        assert_eq!(moved.local_path(), Some(d.join("t.zarr").as_path()));
        assert!(moved.names_store() && moved.store_modes().pure_zarr);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dap_protocols_by_netcdf_c_rules() {
        use super::DapProtocol::{Dap2, Dap4};
        let d = std::env::temp_dir().join(format!("nc-store-dap-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("t.01.dds"), "Dataset { Int32 i; } t;").unwrap();
        let base = format!("file://{}", d.join("t.01").display());
        assert_eq!(parse(&base).dap(), Some(Dap2));
        assert_eq!(parse(&format!("[log]{base}")).dap(), Some(Dap2));
        assert_eq!(parse(&format!("[dap4]{base}")).dap(), Some(Dap4));
        assert_eq!(parse(&format!("{base}#dap4")).dap(), Some(Dap4));
        assert_eq!(parse(&format!("{base}#mode=dap4")).dap(), Some(Dap4));
        // no .dds beside it: not DAP
        let other = format!("file://{}", d.join("x").display());
        assert_eq!(parse(&other).dap(), None);
        assert_eq!(parse(&format!("{other}#dap2")).dap(), Some(Dap2));
        assert_eq!(parse("http://h/x?a,b").dap(), Some(Dap2));
        assert_eq!(parse("[cache]http://h/x").dap(), Some(Dap2));
        assert_eq!(parse("http://h/x#stringlength_a=3").dap(), Some(Dap2));
        // a plain URL is left to what answers there
        assert_eq!(parse("http://h/x.nc").dap(), None);
        assert_eq!(parse("dap4://h/x").dap(), Some(Dap4));
        assert_eq!(parse("in.nc").dap(), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
