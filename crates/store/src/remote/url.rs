//! Remote locations as users write them: `s3://bucket/key`, netCDF-C's S3 URL forms
//! (`https://s3.<region>.amazonaws.com/bucket/key`, virtual-host style
//! `https://bucket.s3.<region>.amazonaws.com/key`, any host with `#mode=...,s3`), `gs://`,
//! `az://` / `abfs://`, and plain `http(s)://` (read-only, by byte range).
//!
//! The fragment (`#mode=...`) is netCDF-C's; of its words this module reads `s3` (the host is
//! an S3-compatible server), `bytes` (a file read by range) and our `anon` (no credentials:
//! public buckets).

/// The kind of service a remote location is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// Amazon S3 or an S3-compatible server.
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage / Data Lake Gen2.
    Azure,
    /// A plain web server, read by range (read-only).
    Http,
}

/// A parsed remote location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    /// The service.
    pub cloud: Cloud,
    /// The location as given, fragment included.
    pub text: String,
    /// The location for messages: no user name, password, query or fragment.
    pub display: String,
    /// The bucket or container (empty for plain HTTP).
    pub bucket: String,
    /// The object key, or the prefix of a store's keys, without leading or trailing `/`.
    pub key: String,
    /// The server to talk to when the URL names one (`scheme://host[:port]`): an
    /// S3-compatible server, or the web server of a plain HTTP location.
    pub endpoint: Option<String>,
    /// The region the URL names (`s3.<region>.amazonaws.com`).
    pub region: Option<String>,
    /// S3 virtual-host style (`bucket.s3.<region>.amazonaws.com`).
    pub virtual_host: bool,
    /// The Azure storage account the URL names.
    pub account: Option<String>,
    /// Mode word `anon`: no credentials are sent (public buckets).
    pub anonymous: bool,
    /// The words of every `mode=` in the fragment, lower case.
    pub modes: Vec<String>,
    /// How the object will be read (set by the tool, not by the URL's text).
    pub access: Access,
}

/// How a tool reads a remote object: the read-ahead of its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Access {
    /// All or most of it (a copy, a dump): metadata by 512 KiB blocks, large reads with
    /// read-ahead windows, close ranges merged.
    #[default]
    Whole,
    /// A small part (a subset: the header and the chunks it touches): small pieces, no
    /// read-ahead, only near ranges merged, so that the bytes received are about the bytes
    /// wanted.
    Sparse,
}

/// The words of every `mode=` key of a URL fragment, lower case.
pub fn mode_words(fragment: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in fragment.split('&') {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        if k.trim().eq_ignore_ascii_case("mode") {
            out.extend(
                v.split(',')
                    .map(|w| w.trim().to_ascii_lowercase())
                    .filter(|w| !w.is_empty()),
            );
        }
    }
    out
}

/// Split `scheme://authority/path` into its parts (scheme lower case).
fn split_url(base: &str) -> Option<(String, &str, &str)> {
    let (scheme, rest) = base.split_once("://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    Some((scheme.to_ascii_lowercase(), authority, path))
}

/// The authority without `user:password@`.
fn host_of(authority: &str) -> &str {
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

fn trim_key(path: &str) -> String {
    // a query never names an object here (signed URLs are not supported); drop it
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    path.trim_matches('/').to_string()
}

/// Recognise a remote location; `None` for local paths and `file://` URLs.
pub fn parse_remote(text: &str) -> Option<RemoteUrl> {
    let (base, fragment) = match text.split_once('#') {
        Some((b, f)) => (b, f),
        None => (text, ""),
    };
    let modes = mode_words(fragment);
    let (scheme, authority, path) = split_url(base)?;
    let host = host_of(authority);
    let lower_host = host.to_ascii_lowercase();
    let mut u = RemoteUrl {
        cloud: Cloud::Http,
        text: text.to_string(),
        display: String::new(),
        bucket: String::new(),
        key: String::new(),
        endpoint: None,
        region: None,
        virtual_host: false,
        account: None,
        anonymous: modes.iter().any(|w| w == "anon"),
        modes,
        access: Access::Whole,
    };
    let first_and_rest = |p: &str| -> (String, String) {
        let p = trim_key(p);
        match p.split_once('/') {
            Some((b, k)) => (b.to_string(), k.trim_matches('/').to_string()),
            None => (p, String::new()),
        }
    };
    match scheme.as_str() {
        "s3" | "s3a" => {
            u.cloud = Cloud::S3;
            u.bucket = host.to_string();
            u.key = trim_key(path);
        }
        "gs" | "gcs" => {
            u.cloud = Cloud::Gcs;
            u.bucket = host.to_string();
            u.key = trim_key(path);
        }
        "az" | "azure" | "adl" => {
            u.cloud = Cloud::Azure;
            u.bucket = host.to_string();
            u.key = trim_key(path);
        }
        "abfs" | "abfss" => {
            // abfs[s]://container@account.dfs.core.windows.net/key
            u.cloud = Cloud::Azure;
            let (container, acct_host) = authority.split_once('@').unwrap_or((authority, ""));
            u.bucket = container.to_string();
            u.account = acct_host
                .split('.')
                .next()
                .filter(|a| !a.is_empty())
                .map(str::to_string);
            u.key = trim_key(path);
        }
        "http" | "https" => {
            let labels: Vec<&str> = lower_host.split(':').next()?.split('.').collect();
            let aws = lower_host.split(':').next()?.ends_with(".amazonaws.com");
            if aws
                && labels
                    .first()
                    .is_some_and(|l| *l == "s3" || l.starts_with("s3-"))
            {
                // path style: s3.<region>.amazonaws.com/bucket/key
                u.cloud = Cloud::S3;
                u.region = region_of(labels.first().copied(), labels.get(1).copied());
                (u.bucket, u.key) = first_and_rest(path);
            } else if aws && labels.len() >= 3 {
                // virtual-host style: bucket.s3.<region>.amazonaws.com/key (bucket may hold dots)
                let s3 = labels
                    .iter()
                    .position(|l| *l == "s3" || l.starts_with("s3-"))?;
                u.cloud = Cloud::S3;
                u.virtual_host = true;
                u.bucket = host
                    .split(':')
                    .next()?
                    .split('.')
                    .take(s3)
                    .collect::<Vec<_>>()
                    .join(".");
                u.region = region_of(labels.get(s3).copied(), labels.get(s3 + 1).copied());
                u.key = trim_key(path);
            } else if lower_host.ends_with(".blob.core.windows.net")
                || lower_host.ends_with(".dfs.core.windows.net")
            {
                u.cloud = Cloud::Azure;
                u.account = labels.first().map(|s| s.to_string());
                (u.bucket, u.key) = first_and_rest(path);
            } else if lower_host == "storage.googleapis.com" {
                u.cloud = Cloud::Gcs;
                (u.bucket, u.key) = first_and_rest(path);
            } else if u.modes.iter().any(|w| w == "s3") {
                // an S3-compatible server named by its address (MinIO, Ceph, a local test server)
                u.cloud = Cloud::S3;
                u.endpoint = Some(format!("{scheme}://{host}"));
                (u.bucket, u.key) = first_and_rest(path);
            } else {
                u.cloud = Cloud::Http;
                u.endpoint = Some(format!("{scheme}://{host}"));
                u.key = trim_key(path);
            }
        }
        _ => return None,
    }
    if u.cloud != Cloud::Http && u.bucket.is_empty() {
        return None;
    }
    u.display = match u.cloud {
        Cloud::S3 => format!("s3://{}/{}", u.bucket, u.key),
        Cloud::Gcs => format!("gs://{}/{}", u.bucket, u.key),
        Cloud::Azure => format!("az://{}/{}", u.bucket, u.key),
        Cloud::Http => format!("{scheme}://{host}/{}", u.key),
    };
    if let (Cloud::S3, Some(ep)) = (u.cloud, &u.endpoint) {
        u.display = format!("{ep}/{}/{}", u.bucket, u.key);
    }
    Some(u)
}

/// The region of an S3 host: `s3.<region>` or the older `s3-<region>`; none for `s3` alone
/// (us-east-1) or the dual-stack and FIPS forms (`s3.dualstack.<region>`).
fn region_of(s3_label: Option<&str>, next: Option<&str>) -> Option<String> {
    if let Some(r) = s3_label.and_then(|l| l.strip_prefix("s3-")) {
        return (!r.is_empty()).then(|| r.to_string());
    }
    match next {
        Some("amazonaws") | None => None,
        Some("dualstack") => None,
        Some(r) => Some(r.to_string()),
    }
}

impl RemoteUrl {
    /// The URL of `key` below this location, for messages (a store's object).
    pub fn display_key(&self, key: &str) -> String {
        if key.is_empty() {
            self.display.clone()
        } else {
            format!("{}/{key}", self.display.trim_end_matches('/'))
        }
    }

    /// True when the location asks for bytes by range (`#mode=bytes`).
    pub fn wants_bytes(&self) -> bool {
        self.modes.iter().any(|w| w == "bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_forms() {
        let u = parse_remote("s3://bucket/dir/x.nc").unwrap();
        assert_eq!(
            (u.cloud, u.bucket.as_str(), u.key.as_str()),
            (Cloud::S3, "bucket", "dir/x.nc")
        );
        assert_eq!(u.display, "s3://bucket/dir/x.nc");
        let u =
            parse_remote("https://s3.eu-west-1.amazonaws.com/bkt/a/b.zarr#mode=nczarr,s3").unwrap();
        assert_eq!(
            (u.cloud, u.bucket.as_str(), u.key.as_str()),
            (Cloud::S3, "bkt", "a/b.zarr")
        );
        assert_eq!(u.region.as_deref(), Some("eu-west-1"));
        assert_eq!(u.modes, vec!["nczarr", "s3"]);
        let u =
            parse_remote("https://my.bucket.s3.us-west-2.amazonaws.com/k/x.nc#mode=bytes").unwrap();
        assert_eq!((u.bucket.as_str(), u.key.as_str()), ("my.bucket", "k/x.nc"));
        assert!(u.virtual_host && u.wants_bytes());
        assert_eq!(u.region.as_deref(), Some("us-west-2"));
        let u = parse_remote("https://s3.amazonaws.com/b/k#mode=zarr,s3").unwrap();
        assert_eq!((u.bucket.as_str(), u.region), ("b", None));
        let u = parse_remote("http://127.0.0.1:9000/b/store#mode=zarr,s3,anon").unwrap();
        assert_eq!(u.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!((u.bucket.as_str(), u.key.as_str()), ("b", "store"));
        assert!(u.anonymous);
        assert_eq!(
            u.display_key(".zgroup"),
            "http://127.0.0.1:9000/b/store/.zgroup"
        );
    }

    #[test]
    fn other_clouds_and_http() {
        let u = parse_remote("gs://b/k.nc").unwrap();
        assert_eq!((u.cloud, u.bucket.as_str()), (Cloud::Gcs, "b"));
        let u = parse_remote("az://cont/p/q").unwrap();
        assert_eq!(
            (u.cloud, u.bucket.as_str(), u.key.as_str()),
            (Cloud::Azure, "cont", "p/q")
        );
        let u = parse_remote("abfss://cont@acct.dfs.core.windows.net/p").unwrap();
        assert_eq!(
            (u.bucket.as_str(), u.account.as_deref()),
            ("cont", Some("acct"))
        );
        let u =
            parse_remote("https://user:secret@example.org/data/x.nc?sig=abc#mode=bytes").unwrap();
        assert_eq!(u.cloud, Cloud::Http);
        assert_eq!(u.display, "https://example.org/data/x.nc");
        assert!(!u.display.contains("secret") && !u.display.contains("sig"));
        assert_eq!(parse_remote("/local/path"), None);
        assert_eq!(parse_remote("file:///x#mode=nczarr,file"), None);
        assert_eq!(parse_remote("s3:///nobucket"), None);
    }
}
