//! Object-storage wildcards: a bucket cannot be globbed by the shell, so a name such as
//! `s3://bucket/run/day*.nc` is split here into the place to list, the pattern its objects'
//! names must match and the fragment each match keeps. Listing and matching are the caller's.

use crate::location::Location;
use crate::remote::Cloud;
use crate::StoreError;

/// True when `c` makes a wildcard.
fn is_wild(c: char) -> bool {
    c == '*' || c == '?'
}

/// An object-storage name with a wildcard (`*` or `?`) in its last path segment.
#[derive(Debug, Clone)]
pub struct Wildcard {
    /// The place holding the objects to match (the name up to its last `/`), to be listed.
    pub prefix: Location,
    /// The last path segment: the pattern the objects' names must match.
    pub pattern: String,
    /// The name's fragment (`#mode=...`, with its `#`; empty when there is none), which every
    /// matched object keeps.
    pub fragment: String,
    /// The prefix as given, to which a matched name is joined.
    prefix_text: String,
}

impl Wildcard {
    /// The location of the object `name` (a key listed below [`Wildcard::prefix`]), with the
    /// wildcard's fragment.
    ///
    /// # Errors
    /// The name does not parse as a location (an unknown mode word cannot occur: the
    /// wildcard's own parsed).
    pub fn object(&self, name: &str) -> Result<Location, StoreError> {
        Location::parse(&format!("{}/{name}{}", self.prefix_text, self.fragment))
    }
}

impl Location {
    /// The wildcard of an object-storage name: `None` for a name without `*` or `?`, and for
    /// a local or web name (a path is globbed by the shell; `?` begins a URL's query).
    ///
    /// # Errors
    /// [`StoreError::WildcardPlace`] when the wildcard is in the bucket or before the last
    /// `/`; the prefix's own parse errors.
    pub fn wildcard(&self) -> Result<Option<Wildcard>, StoreError> {
        let name = self.text();
        let Some(at) = self
            .remote()
            .filter(|u| u.cloud != Cloud::Http)
            .and(name.find(is_wild))
        else {
            return Ok(None);
        };
        let misplaced = || StoreError::WildcardPlace {
            name: name.to_string(),
        };
        let cut = name[..at].rfind('/').ok_or_else(misplaced)?;
        let (prefix, rest) = (&name[..cut], &name[cut + 1..]);
        let (pattern, fragment) = match rest.split_once('#') {
            Some((s, f)) => (s, format!("#{f}")),
            None => (rest, String::new()),
        };
        // the bucket itself must be named: scheme://bucket/...
        let bucket_named = prefix
            .split_once("://")
            .is_some_and(|(_, b)| !b.is_empty() && !b.contains(is_wild));
        if pattern.contains('/') || !bucket_named {
            return Err(misplaced());
        }
        Ok(Some(Wildcard {
            prefix: Location::parse(prefix)?,
            pattern: pattern.to_string(),
            fragment,
            prefix_text: prefix.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wild(name: &str) -> Result<Option<Wildcard>, StoreError> {
        Location::parse(name).unwrap().wildcard()
    }

    #[test]
    fn a_wildcard_splits_into_prefix_pattern_and_fragment() {
        let w = wild("s3://bucket/run/day*.nc#mode=bytes,anon")
            .unwrap()
            .unwrap();
        assert_eq!(w.prefix.text(), "s3://bucket/run");
        assert_eq!(w.prefix.remote().unwrap().key, "run");
        assert_eq!(w.pattern, "day*.nc");
        assert_eq!(w.fragment, "#mode=bytes,anon");
        let o = w.object("day1.nc").unwrap();
        assert_eq!(o.text(), "s3://bucket/run/day1.nc#mode=bytes,anon");
        assert_eq!(o.remote().unwrap().key, "run/day1.nc");
        assert!(o.remote().unwrap().anonymous);

        // at the bucket's top, `?` as a wildcard, another cloud
        let w = wild("gs://b/x?.nc").unwrap().unwrap();
        assert_eq!(
            (w.prefix.text(), w.pattern.as_str(), w.fragment.as_str()),
            ("gs://b", "x?.nc", "")
        );
        assert_eq!(w.object("x1.nc").unwrap().text(), "gs://b/x1.nc");
    }

    #[test]
    fn names_without_a_wildcard_to_list() {
        for name in [
            "s3://bucket/run/day1.nc",
            "/data/*.nc",
            "day?.nc",
            "http://server/file.nc?x=1",
            "https://server/a*.nc",
        ] {
            assert!(wild(name).unwrap().is_none(), "{name}");
        }
    }

    #[test]
    fn a_wildcard_before_the_last_segment_or_in_the_bucket_is_refused() {
        for name in ["s3://buck*/x.nc", "s3://b/run*/x.nc", "s3://b*"] {
            let e = wild(name).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{name}: a wildcard is supported in the last path segment only (s3://bucket/run/*.nc)"),
            );
        }
    }
}
