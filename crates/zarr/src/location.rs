//! Where an NCZarr dataset lives: netCDF-C's URL forms (`file:///abs#mode=nczarr,file`,
//! `file://rel#mode=zarr,zip`, ...) and plain paths to a store directory or zip file.
//!
//! Mode flags (NCZarr documentation, "Client Parameters"): `nczarr`, `zarr` (pure Zarr, no
//! NCZarr keys; implies `nczarr`), `xarray` (the default), `noxarray`, and the storage
//! `file`, `zip`, `s3`.

use crate::error::ZarrError;
use crate::store::{DirStore, Store, ZipStore};
use std::path::{Path, PathBuf};

/// How the store is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// A directory tree (`mode=...,file`).
    File,
    /// A zip archive (`mode=...,zip`).
    Zip,
}

/// A parsed NCZarr location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZarrLocation {
    /// The text as given.
    pub text: String,
    /// The local path of the store (directory or zip file).
    pub path: PathBuf,
    /// Directory or zip.
    pub storage: StorageKind,
    /// `mode=zarr`: pure Zarr, no NCZarr metadata written or required.
    pub pure_zarr: bool,
    /// XArray `_ARRAY_DIMENSIONS` read and written (default; `noxarray` turns it off).
    pub xarray: bool,
    /// `Some(scheme)` for a remote store (`s3`, `gs`, `az`, `https`, ...): read and written
    /// through nc-store's object storage.
    pub remote: Option<String>,
    /// Mode word `v3`: write Zarr version 3 (reading finds the version by itself).
    pub v3: bool,
    /// Our extension `layout=4.9|4.10|documented` in the fragment: the NCZarr metadata
    /// spelling to write (see [`crate::NczarrLayout`]); `None` = netCDF-C 4.10's.
    pub layout: Option<String>,
}

const FLAGS: [&str; 7] = ["nczarr", "zarr", "xarray", "noxarray", "file", "zip", "s3"];

/// Every `mode=` word netCDF-C 4.9.0 knows: the format modes and macros of
/// `libdispatch/dinfermodel.c` and the NCZarr storage words of `libnczarr/zarr.c`. Only the
/// NCZarr ones select anything here; the others (DAP, byte ranges, format hints) are accepted
/// as netCDF-C accepts them. `v3` (write Zarr v3) and `anon` (no credentials: public
/// buckets) are ours.
pub const KNOWN_MODE_WORDS: [&str; 18] = [
    "nczarr", "zarr", "xarray", "noxarray", "file", "zip", "s3", "bytes", "dap2", "dap4",
    "netcdf-3", "classic", "netcdf-4", "enhanced", "udf0", "udf1", "v3", "anon",
];

/// Check the words of every `mode=` in the fragment of `s` (after `#`).
///
/// # Errors
/// [`ZarrError::UnknownModeWord`] naming the first word netCDF-C does not know, with the
/// list of those it does.
pub fn check_mode_words(s: &str) -> Result<(), ZarrError> {
    let Some((_, fragment)) = s.split_once('#') else {
        return Ok(());
    };
    match mode_flags(fragment)
        .into_iter()
        .find(|w| !KNOWN_MODE_WORDS.contains(&w.as_str()))
    {
        Some(word) => Err(ZarrError::UnknownModeWord {
            location: s.to_string(),
            word,
            known: KNOWN_MODE_WORDS.join(", "),
        }),
        None => Ok(()),
    }
}

/// What a directory given by a plain path holds: Zarr v2 metadata objects or a Zarr v3
/// `zarr.json` at its top.
fn is_zarr_dir(p: &Path) -> bool {
    p.is_dir()
        && [".zgroup", ".zarray", ".zattrs", "zarr.json"]
            .iter()
            .any(|k| p.join(k).is_file())
}

/// The directory holds NCZarr metadata (`.nczgroup`, or an `_nczarr_superblock` /
/// `_nczarr_group` key in its `.zgroup` or `.zattrs`), not only pure Zarr.
fn has_nczarr_metadata(p: &Path) -> bool {
    p.join(".nczgroup").is_file()
        || [".zgroup", ".zattrs"].iter().any(|k| {
            std::fs::read(p.join(k)).is_ok_and(|b| {
                let t = String::from_utf8_lossy(&b);
                t.contains("_nczarr_superblock") || t.contains("_nczarr_group")
            })
        })
}

fn mode_flags(fragment: &str) -> Vec<String> {
    let mut flags = Vec::new();
    for part in fragment.split('&') {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        if k.trim().eq_ignore_ascii_case("mode") {
            flags.extend(
                v.split(',')
                    .map(|f| f.trim().to_ascii_lowercase())
                    .filter(|f| !f.is_empty()),
            );
        }
    }
    flags
}

/// The value of fragment key `key` (last one wins), if present.
fn fragment_value(fragment: &str, key: &str) -> Option<String> {
    fragment
        .split('&')
        .filter_map(|part| part.split_once('='))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case(key))
        .map(|(_, v)| v.trim().to_string())
        .next_back()
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

fn is_zip_store(path: &Path) -> bool {
    ZipStore::open(path).is_ok_and(|z| {
        [".zgroup", "zarr.json"]
            .iter()
            .any(|k| z.get(k).is_ok_and(|g| g.is_some()))
    })
}

/// Recognise an NCZarr location: a URL with NCZarr mode flags, an `s3://` URL, or a plain
/// path to a directory holding `.zgroup` or to a zip file holding one. `None` when `s` is
/// none of these (so the caller tries other formats).
pub fn parse_location(s: &str) -> Option<ZarrLocation> {
    let (base, fragment) = match s.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (s, None),
    };
    let flags = fragment.map(mode_flags).unwrap_or_default();
    let zarr_flags = flags.iter().any(|f| FLAGS.contains(&f.as_str()));
    let mk = |path: PathBuf, remote: Option<String>| {
        let storage = if flags.iter().any(|f| f == "zip") {
            StorageKind::Zip
        } else if flags.iter().any(|f| f == "file") {
            StorageKind::File
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
            && !path.is_dir()
        {
            StorageKind::Zip
        } else {
            StorageKind::File
        };
        let remote = remote.or_else(|| flags.iter().any(|f| f == "s3").then(|| "s3".to_string()));
        ZarrLocation {
            text: s.to_string(),
            path,
            storage,
            pure_zarr: flags.iter().any(|f| f == "zarr" || f == "v3"),
            v3: flags.iter().any(|f| f == "v3"),
            xarray: !flags.iter().any(|f| f == "noxarray"),
            remote,
            layout: fragment.and_then(|f| fragment_value(f, "layout")),
        }
    };
    if nc_store::remote::parse_remote(s).is_some() {
        // a remote store when the mode words say Zarr (or `s3` without `bytes`); other remote
        // names are files read by range, or stores found by looking (nc-dispatch)
        let store_words = flags.iter().any(|f| {
            matches!(f.as_str(), "nczarr" | "zarr" | "v3" | "xarray" | "noxarray")
                || (f == "s3" && !flags.iter().any(|g| g == "bytes"))
        });
        let scheme = base.split("://").next().unwrap_or("").to_ascii_lowercase();
        return store_words.then(|| {
            let mut l = mk(PathBuf::from(base), Some(scheme));
            l.storage = StorageKind::File;
            l
        });
    }
    if let Some(rest) = base.strip_prefix("file://") {
        if !zarr_flags {
            return None;
        }
        // file:///abs → /abs ; file://rel → rel ; file://localhost/abs → /abs
        let rest = rest
            .strip_prefix("localhost/")
            .map_or(rest.to_string(), |r| format!("/{r}"));
        return Some(mk(PathBuf::from(percent_decode(&rest)), None));
    }
    if zarr_flags {
        return Some(mk(PathBuf::from(base), None));
    }
    if fragment.is_some() {
        return None;
    }
    let p = Path::new(s);
    if is_zarr_dir(p) {
        // no #mode: NCZarr when the store holds NCZarr metadata, else pure Zarr
        let mut l = mk(p.to_path_buf(), None);
        l.pure_zarr = !has_nczarr_metadata(p);
        return Some(l);
    }
    if p.is_file()
        && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"))
        && is_zip_store(p)
    {
        let mut l = mk(p.to_path_buf(), None);
        l.storage = StorageKind::Zip;
        return Some(l);
    }
    None
}

impl ZarrLocation {
    /// Parse, or explain why `s` is not an NCZarr location.
    ///
    /// # Errors
    /// [`ZarrError::BadLocation`].
    pub fn parse(s: &str) -> Result<ZarrLocation, ZarrError> {
        parse_location(s).ok_or_else(|| ZarrError::BadLocation {
            location: s.to_string(),
            reason: "expected file://PATH#mode=nczarr,file (or zarr, zip, noxarray), or a directory holding .zgroup, or a .zip of one".into(),
        })
    }

    /// The dataset name netCDF-C derives from the path: the last component without its
    /// extension (`/x/tmp_misc.file` → `tmp_misc`).
    pub fn dataset_name(&self) -> String {
        let p = if self.path.as_os_str().is_empty() {
            Path::new("dataset")
        } else {
            self.path.as_path()
        };
        p.file_stem()
            .or_else(|| p.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "dataset".into())
    }

    /// The metadata layout to write: netCDF-C 4.10's (netCDF4-python's) unless the fragment
    /// asks for `layout=4.9` (netCDF-C 4.9.0) or `layout=documented`.
    ///
    /// # Errors
    /// [`ZarrError::BadLocation`] for another `layout=` value.
    pub fn write_layout(&self) -> Result<crate::NczarrLayout, ZarrError> {
        match self
            .layout
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("4.9") => Ok(crate::NczarrLayout::NetcdfC490),
            None | Some("4.10") => Ok(crate::NczarrLayout::NetcdfC410),
            Some("documented") => Ok(crate::NczarrLayout::Documented),
            Some(other) => Err(ZarrError::BadLocation {
                location: self.text.clone(),
                reason: format!(
                    "layout={other}: use layout=4.10 (netCDF-C 4.10 and netCDF4-python, the \
                     default), layout=4.9 (netCDF-C 4.9.0) or layout=documented"
                ),
            }),
        }
    }

    /// A location for the remote store at `url` (a URL without store mode words that was
    /// found, by looking, to hold a store); `pure_zarr` when it has no NCZarr metadata.
    pub fn remote_store(url: &str, pure_zarr: bool) -> ZarrLocation {
        let base = url.split('#').next().unwrap_or(url);
        ZarrLocation {
            text: url.to_string(),
            path: PathBuf::from(base),
            storage: StorageKind::File,
            pure_zarr,
            xarray: true,
            remote: Some(base.split("://").next().unwrap_or("").to_ascii_lowercase()),
            v3: false,
            layout: None,
        }
    }

    fn remote_url(&self) -> Result<Option<nc_store::remote::RemoteUrl>, ZarrError> {
        if self.remote.is_none() {
            return Ok(None);
        }
        if self.storage == StorageKind::Zip {
            return Err(ZarrError::BadLocation {
                location: self.text.clone(),
                reason: "zip stores on object storage are not supported: drop `zip` from \
                         #mode= to write the store's objects directly, or copy the zip file as \
                         a file"
                    .into(),
            });
        }
        nc_store::remote::parse_remote(&self.text)
            .map(Some)
            .ok_or_else(|| ZarrError::BadLocation {
                location: self.text.clone(),
                reason: "not a remote location nc-store knows (s3://, gs://, az://, \
                         abfs://, http(s)://)"
                    .into(),
            })
    }

    /// Open the store for reading.
    ///
    /// # Errors
    /// Missing paths, unreadable archives, incomplete remote settings.
    pub fn open_store(&self) -> Result<Box<dyn Store>, ZarrError> {
        if let Some(u) = self.remote_url()? {
            return Ok(Box::new(nc_store::remote::open_store(&u)?));
        }
        Ok(match self.storage {
            StorageKind::File => Box::new(DirStore::open(&self.path)?),
            StorageKind::Zip => Box::new(ZipStore::open(&self.path)?),
        })
    }

    /// Open the existing store to add keys to it, replacing nothing (one part of a fan-out,
    /// see [`crate::fanout`]); on object storage metadata keys are still held back until
    /// close. A zip store has one writer and is refused.
    ///
    /// # Errors
    /// A zip store; a missing directory; remote settings.
    pub fn open_store_writable(&self) -> Result<Box<dyn Store>, ZarrError> {
        if let Some(u) = self.remote_url()? {
            return Ok(Box::new(nc_store::remote::open_store_writable(
                &u,
                metadata_rank,
            )?));
        }
        match self.storage {
            StorageKind::File => Ok(Box::new(DirStore::open_writable(&self.path)?)),
            StorageKind::Zip => Err(ZarrError::BadLocation {
                location: self.text.clone(),
                reason: "a zip store is one archive with one writer, so it cannot be written \
                         by parts: write a directory store (#mode=...,file) or object storage \
                         by parts, then zip it"
                    .into(),
            }),
        }
    }

    /// Create the store for writing (replacing an existing store there). On object storage
    /// the metadata objects are written last (see [`metadata_rank`]).
    ///
    /// # Errors
    /// A path or prefix holding something other than a store; remote failures.
    pub fn create_store(&self) -> Result<Box<dyn Store>, ZarrError> {
        if let Some(u) = self.remote_url()? {
            return Ok(Box::new(nc_store::remote::create_store(&u, metadata_rank)?));
        }
        Ok(match self.storage {
            StorageKind::File => Box::new(DirStore::create(&self.path)?),
            StorageKind::Zip => Box::new(ZipStore::create(&self.path)?),
        })
    }
}

/// The order in which a store's metadata objects are written on object storage, after all
/// chunks: `None` for a chunk (written at once). Arrays' and groups' metadata go deepest
/// first; at the top, the attributes and NCZarr keys, then last of all the objects by which
/// readers recognise a store (`.zgroup`, `.zmetadata`, `zarr.json`), so that a store whose
/// copy failed never looks complete.
pub fn metadata_rank(key: &str) -> Option<u32> {
    let last = key.rsplit('/').next().unwrap_or(key);
    if !(last.starts_with('.') || last == "zarr.json") {
        return None;
    }
    let depth = key.matches('/').count() as u32;
    Some(match (depth, last) {
        (0, ".zgroup" | ".zmetadata" | "zarr.json") => u32::MAX,
        (0, _) => u32::MAX - 1,
        (d, _) => 1_000_000u32.saturating_sub(d),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_forms() {
        let l = parse_location("file:///abs/x.file#mode=nczarr,file").unwrap();
        assert_eq!(l.path, PathBuf::from("/abs/x.file"));
        assert_eq!(l.storage, StorageKind::File);
        assert!(!l.pure_zarr && l.xarray && l.remote.is_none());
        assert_eq!(l.dataset_name(), "x");

        let l = parse_location("file://rel/y.zip#mode=zarr,zip").unwrap();
        assert_eq!(l.path, PathBuf::from("rel/y.zip"));
        assert_eq!(l.storage, StorageKind::Zip);
        assert!(l.pure_zarr);

        let l = parse_location("file://t.file#mode=zarr,noxarray,file").unwrap();
        assert!(l.pure_zarr && !l.xarray);
        let l = parse_location("file://t.file#mode=xarray,file").unwrap();
        assert!(!l.pure_zarr && l.xarray);
        let l = parse_location("file://t.zip#mode=nczarr").unwrap();
        assert_eq!(l.storage, StorageKind::Zip, "inferred from the extension");
        let l = parse_location("file://a%20b.file#mode=nczarr,file&log").unwrap();
        assert_eq!(l.path, PathBuf::from("a b.file"));
        let l = parse_location("t.file#mode=nczarr,file").unwrap();
        assert_eq!(l.path, PathBuf::from("t.file"));
    }

    #[test]
    fn not_zarr() {
        assert_eq!(parse_location("plain.nc"), None);
        assert_eq!(parse_location("file://x.nc"), None);
        assert_eq!(parse_location("https://host/x.nc#mode=bytes"), None);
        assert_eq!(parse_location("/nonexistent/dir"), None);
    }

    #[test]
    fn unknown_mode_words_are_named() {
        assert!(check_mode_words("file:///x#mode=nczarr,file").is_ok());
        assert!(check_mode_words("file:///x#mode=zarr,v3,file").is_ok());
        assert!(check_mode_words("x.nc").is_ok());
        assert!(check_mode_words("https://h/x#mode=bytes").is_ok());
        let e = check_mode_words("file:///x#mode=nczarr,bogus")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "\"file:///x#mode=nczarr,bogus\": unknown mode word \"bogus\" in #mode= (known: nczarr, zarr, xarray, noxarray, file, zip, s3, bytes, dap2, dap4, netcdf-3, classic, netcdf-4, enhanced, udf0, udf1, v3, anon)"
        );
    }

    #[test]
    fn remote_store_words() {
        for u in [
            "https://s3.us-east-1.amazonaws.com/bucket/k#mode=nczarr,s3",
            "s3://bucket/key#mode=zarr",
            "http://127.0.0.1:9/b/k#mode=zarr,s3",
        ] {
            let l = parse_location(u).unwrap();
            assert!(l.remote.is_some(), "{u}");
        }
        // files read by range, or stores found by looking: not claimed here
        assert_eq!(parse_location("s3://bucket/key"), None);
        assert_eq!(parse_location("s3://bucket/key.nc#mode=bytes,s3"), None);
        assert_eq!(metadata_rank("v/0.0"), None);
        assert_eq!(metadata_rank("v/c/0/0"), None);
        assert!(metadata_rank("g/v/.zarray") > metadata_rank("g/v/w/.zarray"));
        assert!(metadata_rank(".zgroup") > metadata_rank(".zattrs"));
        assert!(metadata_rank(".zattrs") > metadata_rank("v/zarr.json"));
    }

    #[test]
    fn plain_paths() {
        let d = std::env::temp_dir().join(format!("nc-zarr-plainpath-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let s = d.join("p.zarr");
        std::fs::create_dir_all(&s).unwrap();
        assert_eq!(parse_location(s.to_str().unwrap()), None, "no .zgroup yet");
        std::fs::write(s.join(".zgroup"), b"{\"zarr_format\": 2}").unwrap();
        let l = parse_location(s.to_str().unwrap()).unwrap();
        assert_eq!(l.storage, StorageKind::File);
        assert!(l.pure_zarr && l.xarray, "no NCZarr metadata: pure Zarr");
        std::fs::write(
            s.join(".zattrs"),
            b"{\"_nczarr_superblock\": {\"version\": \"2.0.0\"}}",
        )
        .unwrap();
        let l = parse_location(s.to_str().unwrap()).unwrap();
        assert!(!l.pure_zarr, "NCZarr metadata: NCZarr");
        // an array at the top, with no .zgroup
        let a = d.join("a.zarr");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(a.join(".zarray"), b"{}").unwrap();
        assert!(parse_location(a.to_str().unwrap()).is_some_and(|l| l.pure_zarr));
        // a zip of it
        let z = d.join("p.zip");
        let zs = ZipStore::create(&z).unwrap();
        zs.put(".zgroup", b"{\"zarr_format\": 2}").unwrap();
        zs.close().unwrap();
        let l = parse_location(z.to_str().unwrap()).unwrap();
        assert_eq!(l.storage, StorageKind::Zip);
        std::fs::write(d.join("other.zip"), b"PK not really").unwrap();
        assert_eq!(parse_location(d.join("other.zip").to_str().unwrap()), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
