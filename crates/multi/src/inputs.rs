//! The names a user gave, as locations: an object-storage name with a wildcard in its last
//! path segment is listed and sorted by name (a bucket cannot be globbed by the shell); any
//! other name is one input.

use nc_dispatch::{DispatchError, Location};

use crate::JoinError;

/// True when `c` makes a wildcard.
fn is_wild(c: char) -> bool {
    c == '*' || c == '?'
}

/// Does `name` match the pattern `pat` (`*`: any run of characters, `?`: any one)?
fn glob(pat: &[char], name: &[char]) -> bool {
    // the usual two-pointer match, with one star to fall back to
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() && (pat[p] == '?' || pat[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pat.len() && pat[p] == '*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == '*')
}

/// Where the wildcard of an object-storage name begins (an HTTP name's `?` is its query).
fn wildcard_at(loc: &Location, name: &str) -> Option<usize> {
    loc.remote()
        .filter(|u| u.cloud != nc_store::remote::Cloud::Http)
        .and(name.find(is_wild))
}

/// True when `name` is an object-storage name with a wildcard, which [`expand`] lists.
pub fn is_wildcard(name: &str) -> bool {
    Location::parse(name).is_ok_and(|l| wildcard_at(&l, name).is_some())
}

/// Every input the names stand for, in order: each name parsed as a location, and a remote
/// name with `*` or `?` in its last segment replaced by the objects it matches, sorted.
///
/// # Errors
/// A name that cannot be parsed, a wildcard before the last segment, a listing that fails,
/// a wildcard that matches nothing.
pub fn expand(names: &[String]) -> Result<Vec<Location>, JoinError> {
    let mut out = Vec::new();
    for name in names {
        let loc = Location::parse(name).map_err(|e| JoinError::Open(DispatchError::Store(e)))?;
        let Some(at) = wildcard_at(&loc, name) else {
            out.push(loc);
            continue;
        };
        let pattern = || name.clone();
        let cut = name[..at]
            .rfind('/')
            .ok_or_else(|| JoinError::WildcardPlace { pattern: pattern() })?;
        let (prefix, rest) = (&name[..cut], &name[cut + 1..]);
        let (seg, fragment) = match rest.split_once('#') {
            Some((s, f)) => (s, format!("#{f}")),
            None => (rest, String::new()),
        };
        // the bucket itself must be named: scheme://bucket/...
        let bucket_named = prefix
            .split_once("://")
            .is_some_and(|(_, b)| !b.is_empty() && !b.contains(is_wild));
        if seg.contains('/') || !bucket_named {
            return Err(JoinError::WildcardPlace { pattern: pattern() });
        }
        let store = Location::parse(prefix)
            .and_then(|l| l.open_store())
            .map_err(|source| JoinError::List {
                pattern: pattern(),
                source,
            })?;
        let keys = store.list("").map_err(|source| JoinError::List {
            pattern: pattern(),
            source,
        })?;
        let pat: Vec<char> = seg.chars().collect();
        let mut matched: Vec<String> = keys
            .into_iter()
            .filter(|k| !k.contains('/') && glob(&pat, &k.chars().collect::<Vec<_>>()))
            .collect();
        if matched.is_empty() {
            return Err(JoinError::EmptyWildcard { pattern: pattern() });
        }
        matched.sort();
        for k in matched {
            let text = format!("{prefix}/{k}{fragment}");
            out.push(Location::parse(&text).map_err(|e| JoinError::Open(DispatchError::Store(e)))?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        glob(
            &p.chars().collect::<Vec<_>>(),
            &n.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn wildcards_match_as_a_shell_does() {
        assert!(m("*.nc", "day1.nc"));
        assert!(!m("*.nc", "day1.nc4"));
        assert!(m("day?.nc", "day1.nc"));
        assert!(!m("day?.nc", "day10.nc"));
        assert!(m("d*1*.nc", "day10_1.nc"));
        assert!(m("*", ""));
        assert!(!m("a*b", "ac"));
    }

    #[test]
    fn local_names_are_not_expanded() {
        let got = expand(&["/no/such/*.nc".to_string(), "b.nc".to_string()]).unwrap();
        let texts: Vec<&str> = got.iter().map(|l| l.text()).collect();
        assert_eq!(texts, ["/no/such/*.nc", "b.nc"]);
    }

    #[test]
    fn a_wildcard_in_the_bucket_is_refused() {
        let e = expand(&["s3://buck*/x.nc".to_string()]).unwrap_err();
        assert!(matches!(e, JoinError::WildcardPlace { .. }), "{e}");
    }
}
