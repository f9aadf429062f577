//! One NC_STRING value as the bytes the file holds.
//!
//! netCDF-C stores an NC_STRING as a `char *` and never checks its encoding, so a file may hold
//! strings that are not UTF-8 (h5py's `string_dtype('ascii')`, old writers using Latin-1).
//! Keeping the bytes lets a dump or a copy reproduce them exactly instead of replacing them.

use std::borrow::Cow;
use std::fmt;

/// The bytes of one NC_STRING value, without a terminating NUL; usually, not always, UTF-8.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcString(Vec<u8>);

impl NcString {
    /// A string holding exactly `bytes`.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> NcString {
        NcString(bytes.into())
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes, consuming the string.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The text, if the bytes are UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The text with each byte sequence that is not UTF-8 replaced by U+FFFD; only for messages
    /// and for consumers (units, calendars) whose values are ASCII by convention.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&str> for NcString {
    fn from(s: &str) -> NcString {
        NcString(s.as_bytes().to_vec())
    }
}

impl From<String> for NcString {
    fn from(s: String) -> NcString {
        NcString(s.into_bytes())
    }
}

impl From<&[u8]> for NcString {
    fn from(b: &[u8]) -> NcString {
        NcString(b.to_vec())
    }
}

impl From<Vec<u8>> for NcString {
    fn from(b: Vec<u8>) -> NcString {
        NcString(b)
    }
}

impl PartialEq<str> for NcString {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for NcString {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

/// Shows the text in quotes, bytes that are not UTF-8 as `\xNN`, so test failures show them.
impl fmt::Debug for NcString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for chunk in self.0.utf8_chunks() {
            write!(f, "{}", chunk.valid().escape_debug())?;
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        f.write_str("\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bytes_that_are_not_utf8() {
        let s = NcString::from_bytes(b"x\xffy".to_vec());
        assert_eq!(s.as_bytes(), b"x\xffy");
        assert_eq!(s.as_str(), None);
        assert_eq!(s.to_str_lossy(), "x\u{fffd}y");
        assert_eq!(format!("{s:?}"), r#""x\xffy""#);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn text_round_trips() {
        let s = NcString::from("caf\u{e9}\n");
        assert_eq!(s.as_bytes(), b"caf\xc3\xa9\n");
        assert_eq!(s.as_str(), Some("caf\u{e9}\n"));
        assert_eq!(format!("{s:?}"), r#""café\n""#);
        assert!(s == "caf\u{e9}\n");
        assert!(NcString::default().is_empty());
    }
}
