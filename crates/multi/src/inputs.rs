//! The names a user gave, as locations: an object-storage name with a wildcard in its last
//! path segment (split by nc-store's [`Location::wildcard`]) is listed, matched and sorted by
//! name (a bucket cannot be globbed by the shell); any other name is one input.

use nc_dispatch::{DispatchError, Location};

use crate::JoinError;

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

/// True when `name` is an object-storage name with a wildcard, which [`expand`] lists.
pub fn is_wildcard(name: &str) -> bool {
    Location::parse(name).is_ok_and(|l| !matches!(l.wildcard(), Ok(None)))
}

/// Every input the names stand for, in order: each name parsed as a location, and a remote
/// name with `*` or `?` in its last segment replaced by the objects it matches, sorted.
///
/// # Errors
/// A name that cannot be parsed, a wildcard before the last segment, a listing that fails,
/// a wildcard that matches nothing.
pub fn expand(names: &[String]) -> Result<Vec<Location>, JoinError> {
    let open = |e| JoinError::Open(DispatchError::Store(e));
    let mut out = Vec::new();
    for name in names {
        let loc = Location::parse(name).map_err(open)?;
        let Some(wild) = loc.wildcard().map_err(open)? else {
            out.push(loc);
            continue;
        };
        let listing = |source| JoinError::List {
            pattern: name.clone(),
            source,
        };
        let keys = wild
            .prefix
            .open_store()
            .and_then(|store| store.list(""))
            .map_err(listing)?;
        let pat: Vec<char> = wild.pattern.chars().collect();
        let mut matched: Vec<String> = keys
            .into_iter()
            .filter(|k| !k.contains('/') && glob(&pat, &k.chars().collect::<Vec<_>>()))
            .collect();
        if matched.is_empty() {
            return Err(JoinError::EmptyWildcard {
                pattern: name.clone(),
            });
        }
        matched.sort();
        for k in matched {
            out.push(wild.object(&k).map_err(open)?);
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
        assert!(
            matches!(
                e,
                JoinError::Open(DispatchError::Store(
                    nc_store::StoreError::WildcardPlace { .. }
                ))
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "s3://buck*/x.nc: a wildcard is supported in the last path segment only (s3://bucket/run/*.nc)"
        );
    }
}
