//! The rc files netCDF-C 4.9.0 reads for its HTTP settings (`libdispatch/drc.c`, described in
//! its `docs/auth.md`): `.ncrc`, `.daprc` and `.dodsrc`, lines `KEY=VALUE`, each optionally
//! led by `[URL]` so that it applies only to matching URLs.
//!
//! Search: `NCRCENV_IGNORE` set: no file at all. `NCRCENV_RC` set: that file alone.
//! Otherwise, merged in this order, a later file's entry winning over an earlier one's:
//! `$HOME/.ncrc`, `$HOME/.daprc`, `$HOME/.dodsrc`, `./.ncrc`, `./.daprc`, `./.dodsrc`,
//! where `NCRCENV_HOME` replaces `$HOME`.

use std::path::PathBuf;

use reqwest::Url;

/// Environment variable: no rc file is read when it is set.
pub const IGNORE_ENV: &str = "NCRCENV_IGNORE";
/// Environment variable: the one rc file to read.
pub const RC_ENV: &str = "NCRCENV_RC";
/// Environment variable: the directory searched instead of `$HOME`.
pub const HOME_ENV: &str = "NCRCENV_HOME";

/// The names of rc files, in the order they are merged within one directory.
const NAMES: [&str; 3] = [".ncrc", ".daprc", ".dodsrc"];

/// The part of a URL a `[...]` prefix names: host, and port and path when given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Prefix {
    host: String,
    port: Option<u16>,
    path: String,
}

impl Prefix {
    /// `http://host:port/path`, `host:port` or `host` (a scheme and user are ignored).
    fn parse(text: &str) -> Option<Prefix> {
        let rest = text.split_once("://").map_or(text, |(_, r)| r);
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p.parse::<u16>().ok()?)),
            None => (authority, None),
        };
        if host.is_empty() {
            return None;
        }
        Some(Prefix {
            host: host.to_ascii_lowercase(),
            port,
            path: path.trim_end_matches('/').to_string(),
        })
    }

    fn matches(&self, url: &Url) -> bool {
        url.host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(&self.host))
            && self
                .port
                .is_none_or(|p| url.port_or_known_default() == Some(p))
            && (self.path.is_empty()
                || url.path() == self.path
                || url
                    .path()
                    .strip_prefix(&self.path)
                    .is_some_and(|r| r.starts_with('/')))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    prefix: Option<Prefix>,
    key: String,
    value: String,
}

/// A value found for a key, and whether a `[URL]` line matching the URL gave it (such a value
/// was meant for that host; an unprefixed one for any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found<'a> {
    /// the value after `=`, trimmed
    pub value: &'a str,
    /// true when the line had a `[URL]` prefix
    pub prefixed: bool,
}

/// The merged entries of the rc files, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rc {
    entries: Vec<Entry>,
}

impl Rc {
    /// The entries of one file's text: blank lines and lines starting with `#` are skipped,
    /// as are lines without `=` and lines whose `[...]` prefix is not a URL or host.
    #[cfg(test)]
    pub fn parse(text: &str) -> Rc {
        let mut rc = Rc::default();
        rc.add(text);
        rc
    }

    fn add(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (prefix, rest) = match line.strip_prefix('[') {
                Some(r) => match r.split_once(']') {
                    Some((p, rest)) => match Prefix::parse(p.trim()) {
                        Some(p) => (Some(p), rest),
                        None => continue,
                    },
                    None => continue,
                },
                None => (None, line),
            };
            let Some((key, value)) = rest.split_once('=') else {
                continue;
            };
            let key = key.trim();
            if key.is_empty() {
                continue;
            }
            self.entries.push(Entry {
                prefix,
                key: key.to_ascii_uppercase(),
                value: value.trim().to_string(),
            });
        }
    }

    /// Read the rc files as netCDF-C 4.9.0 finds them (see the module doc). A file that
    /// does not exist or cannot be read is skipped.
    pub fn load() -> Rc {
        let mut rc = Rc::default();
        if std::env::var_os(IGNORE_ENV).is_some() {
            return rc;
        }
        let files: Vec<PathBuf> = match std::env::var_os(RC_ENV) {
            Some(p) if !p.is_empty() => vec![PathBuf::from(p)],
            _ => {
                let home = std::env::var_os(HOME_ENV)
                    .filter(|h| !h.is_empty())
                    .or_else(|| std::env::var_os("HOME"))
                    .map(PathBuf::from);
                let cwd = std::env::current_dir().ok();
                [home, cwd]
                    .into_iter()
                    .flatten()
                    .flat_map(|d| NAMES.iter().map(move |n| d.join(n)))
                    .collect()
            }
        };
        for f in files {
            if let Ok(text) = std::fs::read_to_string(&f) {
                rc.add(&text);
            }
        }
        rc
    }

    /// The value of `key` (any case) for `url`: the last line whose `[URL]` prefix matches
    /// `url`, else the last line without a prefix.
    pub fn lookup(&self, key: &str, url: &Url) -> Option<Found<'_>> {
        let key = key.to_ascii_uppercase();
        let mut plain = None;
        for e in self.entries.iter().rev().filter(|e| e.key == key) {
            match &e.prefix {
                Some(p) if p.matches(url) => {
                    return Some(Found {
                        value: &e.value,
                        prefixed: true,
                    })
                }
                Some(_) => {}
                None => {
                    plain = plain.or(Some(Found {
                        value: &e.value,
                        prefixed: false,
                    }))
                }
            }
        }
        plain
    }

    /// [`Rc::lookup`]'s value alone.
    pub fn value(&self, key: &str, url: &Url) -> Option<&str> {
        self.lookup(key, url).map(|f| f.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn plain_and_prefixed_lines() {
        let rc = Rc::parse(
            "# comment\n\
             HTTP.TIMEOUT=30\n\
             \n\
             [remotetest.unidata.ucar.edu]HTTP.TIMEOUT=5\n\
             [http://fake.ucar.edu:9090/dts]HTTP.TIMEOUT = 7 \n\
             [https://other.org]http.useragent=me/1\n\
             no equals sign\n\
             [broken HTTP.TIMEOUT=1\n",
        );
        let t = |u: &str| rc.value("HTTP.TIMEOUT", &url(u)).map(str::to_string);
        assert_eq!(t("http://elsewhere.org/x"), Some("30".into()));
        assert_eq!(
            t("http://remotetest.unidata.ucar.edu/thredds/x"),
            Some("5".into())
        );
        assert_eq!(t("http://fake.ucar.edu:9090/dts/test.01"), Some("7".into()));
        // the port and the path must match
        assert_eq!(
            t("http://fake.ucar.edu:9091/dts/test.01"),
            Some("30".into())
        );
        assert_eq!(t("http://fake.ucar.edu:9090/other"), Some("30".into()));
        assert_eq!(t("http://fake.ucar.edu:9090/dtsx"), Some("30".into()));
        // keys are matched in any case
        assert_eq!(
            rc.lookup("HTTP.USERAGENT", &url("https://other.org/a")),
            Some(Found {
                value: "me/1",
                prefixed: true
            })
        );
        assert_eq!(rc.value("HTTP.USERAGENT", &url("https://else.org/a")), None);
        assert_eq!(rc.entries.len(), 4);
    }

    #[test]
    fn later_lines_win() {
        let rc =
            Rc::parse("HTTP.DEFLATE=1\n[h]HTTP.DEFLATE=2\nHTTP.DEFLATE=0\n[h]HTTP.DEFLATE=3\n");
        assert_eq!(rc.value("HTTP.DEFLATE", &url("http://x/")), Some("0"));
        assert_eq!(rc.value("HTTP.DEFLATE", &url("http://h/")), Some("3"));
        // a prefixed line wins over a later plain one
        let rc = Rc::parse("[h:80]HTTP.DEFLATE=2\nHTTP.DEFLATE=0\n");
        assert_eq!(rc.value("HTTP.DEFLATE", &url("http://h/")), Some("2"));
        assert_eq!(rc.value("HTTP.DEFLATE", &url("https://h/")), Some("0"));
    }
}
