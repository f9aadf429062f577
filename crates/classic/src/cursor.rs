//! The one bounds-checked cursor over header bytes. Every read names what it reads, so errors
//! say where the header ended early.

use crate::ClassicError;

/// A read position in a byte slice that is a prefix of a file of `file_len` bytes.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    file_len: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`; `file_len` is reported in errors.
    pub(crate) fn new(buf: &'a [u8], file_len: u64) -> Cursor<'a> {
        Cursor {
            buf,
            pos: 0,
            file_len,
        }
    }

    /// Current offset.
    pub(crate) fn pos(&self) -> u64 {
        self.pos as u64
    }

    /// Bytes left in the buffer.
    pub(crate) fn remaining(&self) -> u64 {
        (self.buf.len() - self.pos) as u64
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], ClassicError> {
        let err = || ClassicError::Truncated {
            what,
            at: self.pos as u64,
            wanted: n,
            len: self.file_len,
        };
        let n_us = usize::try_from(n).map_err(|_| err())?;
        let end = self
            .pos
            .checked_add(n_us)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(err)?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// A big-endian 32-bit unsigned integer.
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, ClassicError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A big-endian 64-bit unsigned integer.
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, ClassicError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }

    /// An unsigned integer of `width` bytes (4 or 8).
    pub(crate) fn uint(&mut self, width: usize, what: &'static str) -> Result<u64, ClassicError> {
        if width == 8 {
            self.u64(what)
        } else {
            self.u32(what).map(u64::from)
        }
    }

    /// Check that `count` elements of at least `min_size` bytes each can follow; returns the
    /// count as usize for allocation. The error reports the bytes left in the whole file.
    pub(crate) fn check_count(
        &self,
        count: u64,
        min_size: u64,
        what: &'static str,
    ) -> Result<usize, ClassicError> {
        let needed = count.saturating_mul(min_size);
        let err = || ClassicError::CountTooLarge {
            what,
            count,
            at: self.pos(),
            needed,
            remaining: self.file_len.saturating_sub(self.pos()),
        };
        if needed > self.remaining() {
            return Err(err());
        }
        usize::try_from(count).map_err(|_| err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_reports_truncation() {
        let bytes = [0, 0, 0, 10, 1, 2];
        let mut c = Cursor::new(&bytes, 6);
        assert_eq!(c.u32("tag").ok(), Some(10));
        assert_eq!(c.pos(), 4);
        let err = c.u32("count").err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("header ends early while reading count: needed 4 bytes at byte 4, the file has 6 bytes (truncated copy?)")
        );
        assert_eq!(c.take(2, "x").ok(), Some(&[1u8, 2][..]));
        assert_eq!(c.remaining(), 0);
    }

    #[test]
    fn absurd_counts_are_refused_before_allocating() {
        let bytes = [0u8; 16];
        let c = Cursor::new(&bytes, 16);
        assert_eq!(c.check_count(4, 4, "dims").ok(), Some(4));
        let e = c.check_count(u64::MAX, 8, "dims");
        assert!(matches!(
            e,
            Err(ClassicError::CountTooLarge {
                count: u64::MAX,
                needed: u64::MAX,
                remaining: 16,
                ..
            })
        ));
    }
}
