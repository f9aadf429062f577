//! Getting a DAP response: for `file://`, the files `PATH.dds`, `PATH.das`, `PATH.dods`
//! (DAP2) and `PATH.dap` (DAP4); for `http(s)://`, a GET of `URL.dds`, `URL.das` and
//! `URL.dods?PROJECTION` (DAP2), or of `URL.dmr.xml` and `URL.dap?dap4.ce=CE` (DAP4).

use std::path::PathBuf;

use crate::DapError;

/// Where a dataset's responses come from.
#[derive(Debug, Clone)]
pub enum Target {
    /// local files next to each other: `base.dds`, `base.das`, ...
    File(PathBuf),
    /// a server: `base.dds`, ... with the URL's own constraint (`?...`) kept
    Http {
        /// the URL without query and fragment
        base: String,
        /// the URL's constraint, without the `?`
        query: Option<String>,
    },
}

impl Target {
    /// The target of a location: its local path, or its URL.
    ///
    /// # Errors
    /// A location that is neither a local path nor an `http(s)://` URL.
    pub fn of(loc: &nc_store::Location) -> Result<Target, DapError> {
        match loc.dap_place() {
            Some(nc_store::DapPlace::Files(p)) => Ok(Target::File(p)),
            Some(nc_store::DapPlace::Server { base, query }) => Ok(Target::Http { base, query }),
            None => Err(DapError::Unsupported {
                url: loc.without_parameters().to_string(),
                what: "OPeNDAP is read from file:// and http(s):// URLs only".to_string(),
            }),
        }
    }

    /// True for local files.
    pub fn is_local(&self) -> bool {
        matches!(self, Target::File(_))
    }

    /// The name to show in messages.
    pub fn display(&self) -> String {
        match self {
            Target::File(p) => format!("file://{}", p.display()),
            Target::Http { base, .. } => base.clone(),
        }
    }

    /// The URL (or path) of the response with extension `ext`.
    pub fn url_of(&self, ext: &str) -> String {
        match self {
            Target::File(p) => format!("{}.{ext}", p.display()),
            Target::Http { base, .. } => format!("{base}.{ext}"),
        }
    }

    /// The response `ext` (`dds`, `das`, `dods`), with `projection` added to the URL's
    /// constraint for a server (a local file takes none).
    ///
    /// # Errors
    /// A missing or unreadable file; a failed request.
    pub fn get(&self, ext: &str, projection: Option<&str>) -> Result<Vec<u8>, DapError> {
        match self {
            Target::File(_) => {
                let path = self.url_of(ext);
                std::fs::read(&path).map_err(|source| DapError::Io { url: path, source })
            }
            Target::Http { base, query } => {
                let mut url = format!("{base}.{ext}");
                // the DDS of a constrained URL describes what the constraint selects, as
                // netCDF-C asks for it; the DAS is the whole dataset's
                let ce = match ext {
                    "dods" => merge_constraint(query.as_deref(), projection),
                    "dds" => query.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                if !ce.is_empty() {
                    url.push('?');
                    url.push_str(&ce);
                }
                crate::http::get(&url)
            }
        }
    }

    /// True for a server URL with a constraint (`?...`).
    pub fn constrained(&self) -> bool {
        matches!(self, Target::Http { query: Some(q), .. } if !q.is_empty())
    }

    /// The response `ext` without the URL's constraint (the whole dataset's DDS).
    ///
    /// # Errors
    /// As [`Target::get`].
    pub fn get_whole(&self, ext: &str) -> Result<Vec<u8>, DapError> {
        match self {
            Target::File(_) => self.get(ext, None),
            Target::Http { base, .. } => crate::http::get(&format!("{base}.{ext}")),
        }
    }

    /// The response `ext`, or `None` when there is none (a missing DAS is no error).
    ///
    /// # Errors
    /// A file or answer that exists but cannot be read.
    pub fn get_optional(&self, ext: &str) -> Result<Option<Vec<u8>>, DapError> {
        match self.get(ext, None) {
            Ok(b) => Ok(Some(b)),
            Err(DapError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Ok(None)
            }
            Err(DapError::Http { what, .. }) if what.starts_with("HTTP 404") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The DAP4 response: `PATH.dap`, or `URL.dap`.
    ///
    /// # Errors
    /// A missing file, a failed request.
    pub fn get_dap4(&self) -> Result<Vec<u8>, DapError> {
        match self {
            Target::File(_) => self.get("dap", None),
            Target::Http { base, query } => {
                let mut url = format!("{base}.dap");
                if let Some(q) = query {
                    url.push('?');
                    url.push_str(q);
                }
                crate::http::get(&url)
            }
        }
    }
}

impl Target {
    /// The DMR of a server's whole dataset, `URL.dmr.xml` (the name netCDF-C 4.9.0 asks for;
    /// the DAP4 servers it reads answer it).
    ///
    /// # Errors
    /// A failed request; local files have no DMR of their own (`Unsupported`).
    pub fn get_dmr(&self) -> Result<Vec<u8>, DapError> {
        match self {
            Target::File(_) => Err(DapError::Unsupported {
                url: self.display(),
                what: "a local DAP4 response has no separate DMR".to_string(),
            }),
            Target::Http { base, .. } => crate::http::get(&format!("{base}.dmr.xml")),
        }
    }

    /// The DAP4 data response to the constraint expression `ce` (DAP4 Volume 2):
    /// `URL.dap?dap4.ce=CE`, the brackets escaped (`[` as `%5B`) and `/`, `:`, `;` left as
    /// netCDF-C leaves them. A local file takes no constraint: its whole response.
    ///
    /// # Errors
    /// A missing file, a failed request.
    pub fn get_dap4_ce(&self, ce: &str) -> Result<Vec<u8>, DapError> {
        match self {
            Target::File(_) => self.get_dap4(),
            Target::Http { base, .. } => {
                crate::http::get(&format!("{base}.dap?dap4.ce={}", escape_ce(ce)))
            }
        }
    }
}

/// A DAP4 constraint as a query value: every byte but unreserved ones and `/ : ;` as `%XX`.
fn escape_ce(ce: &str) -> String {
    percent_encode(ce, b"-._~/:;")
}

/// `s` with every byte but ASCII letters, digits and those in `keep` as `%XX`.
pub(crate) fn percent_encode(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || keep.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The URL's constraint with one more projection: `proj` alone, the URL's projections
/// replaced by it (its selections kept), as netCDF-C merges a variable's fetch with the
/// user's constraint.
fn merge_constraint(query: Option<&str>, proj: Option<&str>) -> String {
    let (uproj, usel) = match query {
        Some(q) => match q.find('&') {
            Some(i) => (&q[..i], &q[i..]),
            None => (q, ""),
        },
        None => ("", ""),
    };
    match proj {
        Some(p) => {
            // keep the user's slicing of the same variable, or of the Grid or Structure
            // that holds it, when the constraint names it
            let chosen = uproj
                .split(',')
                .find(|u| {
                    let name = u.split('[').next().unwrap_or("");
                    name == p
                        || p.strip_prefix(name)
                            .is_some_and(|rest| rest.starts_with('.'))
                })
                .unwrap_or(p);
            format!("{chosen}{usel}")
        }
        None => format!("{uproj}{usel}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_merge() {
        assert_eq!(merge_constraint(None, Some("a.b")), "a.b");
        assert_eq!(merge_constraint(Some("x[0:2],y"), Some("x")), "x[0:2]");
        assert_eq!(merge_constraint(Some("x,y&x>1"), Some("y")), "y&x>1");
        assert_eq!(merge_constraint(Some("x"), None), "x");
        // a Grid's map fetched with the Grid's slicing
        assert_eq!(
            merge_constraint(Some("g[0:1][2],y"), Some("g.lat")),
            "g[0:1][2]"
        );
        assert_eq!(merge_constraint(Some("gg[0:1],y"), Some("g.lat")), "g.lat");
    }

    #[test]
    fn dap4_constraints_escape_brackets() {
        assert_eq!(
            escape_ce("/g/sst[0:2:4][1:1:1];/lat"),
            "/g/sst%5B0:2:4%5D%5B1:1:1%5D;/lat"
        );
        assert_eq!(escape_ce("/a b"), "/a%20b");
    }
}
