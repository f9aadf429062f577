//! PyTables' LZO, HDF5 filter 305 ("lzo", registered by PyTables; its `src/H5Zlzo.c`).
//! Decoded here; encoding needs PyTables' own filter or an HDF5 plugin of it.
//!
//! Parameters, as PyTables sets them: `[complevel, object_version, object_type]`, zero to
//! three of them. `object_version` is the object's `VERSION` attribute times ten (a CArray of
//! VERSION "1.1" stores 11, a Table of "2.7" stores 27); `object_type` is PyTables' tag from
//! its `src/tables.h`: Table 0, Array 1, EArray 2, VLArray 3, CArray 4. With fewer than three
//! the type is unknown.
//!
//! A chunk is one LZO1X stream (PyTables compresses with `lzo1x_1_compress`). PyTables 0.6
//! and 0.7 (2003) appended 8 bytes after it, except on Tables of VERSION below 2.0 (PyTables
//! 0.5's): the Adler-32 of the decoded data (zlib's, starting at 1) and the decoded length,
//! each 4 bytes little-endian. PyTables 0.5, and every version from 0.8 (2004) on, append
//! nothing, whatever the parameters say. So the stream's own end marker tells: 0 bytes after
//! it, no trailer; 8 bytes, a trailer, whose length and checksum must match; a trailer on a
//! Table below VERSION 2.0, or any other count, is a corrupt chunk.
//!
//! The LZO1X stream (as liblzo's `lzo1x_decompress_safe` reads it) is a sequence of
//! instructions, each a byte `b` and what follows it. How `b < 16` reads depends on the
//! number of literals the previous instruction copied (the state: 0, 1 to 3, or 4 for a run of
//! 4 or more). "Extended" lengths: when the length bits are all zero, each following zero byte
//! adds 255 and the first non-zero byte adds itself plus the field's maximum (15, 31 or 7).
//! A match copies from `distance` bytes back in the output, overlapping what it writes;
//! its low two bits `S` (of `b`, or of a 16-bit little-endian word `w`) are a count of 0 to 3
//! literals copied after it, which become the state.
//! - first byte `b > 17`: `b - 17` literals, state `min(b - 17, 4)`;
//! - `0000LLLL`, state 0: a literal run of `L + 3` bytes (extended when `L` is 0), state 4;
//! - `0000DDSS`, state 1 to 3: copy 2 bytes from `(H << 2) + D + 1` back (`H` the next byte);
//! - `0000DDSS`, state 4: copy 3 bytes from `(H << 2) + D + 2049` back;
//! - `01LDDDSS` and `1LLDDDSS` (M2): copy `(b >> 5) + 1` bytes (3 to 8) from
//!   `(H << 3) + DDD + 1` back;
//! - `001LLLLL` (M3): copy `L + 2` bytes (extended when `L` is 0), then `w`: from `(w >> 2) + 1`
//!   back (up to 16384);
//! - `0001HLLL` (M4): copy `L + 2` bytes (extended when `L` is 0), then `w`: from
//!   `16384 + (H << 14) + (w >> 2)` back (up to 49151); `H` and `w >> 2` both 0 instead end the
//!   stream (liblzo writes `11 00 00`).
//!
//! Spec: liblzo's `doc/LZO.TXT` and the Linux kernel's `Documentation/staging/lzo.rst`
//! describe the format; this decoder was written from those descriptions.

use super::checksum32::adler32;
use super::{bad_params, corrupt};
use crate::error::FilterError;
use crate::filter::{Filter, FilterContext};

const ID: u32 = 305;
const NAME: &str = "lzo";
/// PyTables' object type tag of a Table (`src/tables.h`: the first of its enum).
const PYTABLES_TABLE: u32 = 0;
/// Tables of VERSION below 2.0 (stored times ten) never carry the trailer.
const TABLE_TRAILER_VERSION: u32 = 20;
/// Checksum and length, 4 bytes little-endian each.
const TRAILER_LEN: usize = 8;

pub(crate) struct Lzo {
    /// Decoded size limit: the context's bound (the chunk decoder sets it from the chunk size).
    limit: usize,
    /// False when the parameters say the chunk cannot carry PyTables' trailer.
    trailer_allowed: bool,
}

pub(crate) fn build(params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
    if params.len() > 3 {
        return Err(bad_params(
            ID,
            NAME,
            params,
            "at most 3 parameters (complevel, object version, object type)",
        ));
    }
    let old_table =
        matches!(params, [_, version, PYTABLES_TABLE] if *version < TABLE_TRAILER_VERSION);
    Ok(Box::new(Lzo {
        limit: ctx.max_decoded,
        trailer_allowed: !old_table,
    }))
}

impl Filter for Lzo {
    fn id(&self) -> u32 {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, _chunk: &[u8], _out: &mut Vec<u8>) -> Result<(), FilterError> {
        Err(FilterError::Unsupported {
            id: ID,
            name: NAME,
            what: "encoding (it decodes only)".into(),
        })
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let end = decompress(chunk, out, self.limit)?;
        check_trailer(&chunk[end..], end, out, self.trailer_allowed)
    }
}

/// Check what follows the stream's end marker (at byte `at`) against the decoded data.
fn check_trailer(rest: &[u8], at: usize, out: &[u8], allowed: bool) -> Result<(), FilterError> {
    match rest {
        [] => Ok(()),
        [s0, s1, s2, s3, n0, n1, n2, n3] if allowed => {
            let stored_len = u32::from_le_bytes([*n0, *n1, *n2, *n3]);
            if usize::try_from(stored_len).ok() != Some(out.len()) {
                return Err(FilterError::Length {
                    id: ID,
                    name: NAME,
                    expected: stored_len as usize,
                    got: out.len(),
                });
            }
            let stored = u32::from_le_bytes([*s0, *s1, *s2, *s3]);
            let computed = adler32(out);
            if stored != computed {
                return Err(FilterError::Checksum {
                    id: ID,
                    name: NAME,
                    stored,
                    computed,
                });
            }
            Ok(())
        }
        _ if rest.len() == TRAILER_LEN => Err(corrupt(
            ID,
            NAME,
            format!(
                "8 bytes follow the LZO stream's end at byte {at}, but a PyTables Table of \
                 VERSION below 2.0 (the filter's parameters) has no checksum trailer"
            ),
        )),
        _ => Err(corrupt(
            ID,
            NAME,
            format!(
                "{} bytes follow the LZO stream's end at byte {at} (PyTables' trailer is \
                 {TRAILER_LEN}: checksum and length)",
                rest.len()
            ),
        )),
    }
}

/// Where an instruction reads its bytes and writes its output.
struct Decoder<'a> {
    input: &'a [u8],
    ip: usize,
    out: &'a mut Vec<u8>,
    limit: usize,
}

impl Decoder<'_> {
    fn truncated(&self, needed: usize) -> FilterError {
        FilterError::Truncated {
            id: ID,
            name: NAME,
            needed,
            at: self.ip,
            len: self.input.len(),
        }
    }

    fn byte(&mut self) -> Result<usize, FilterError> {
        let b = *self.input.get(self.ip).ok_or_else(|| self.truncated(1))?;
        self.ip += 1;
        Ok(usize::from(b))
    }

    fn word(&mut self) -> Result<usize, FilterError> {
        match self.input.get(self.ip..self.ip + 2) {
            Some(&[lo, hi]) => {
                self.ip += 2;
                Ok(usize::from(u16::from_le_bytes([lo, hi])))
            }
            _ => Err(self.truncated(2)),
        }
    }

    /// An extended length: zero bytes add 255 each, then a non-zero byte adds itself and `max`.
    fn extended(&mut self, max: usize) -> Result<usize, FilterError> {
        let mut n = max;
        loop {
            match self.byte()? {
                0 => {
                    n = n.saturating_add(255);
                    if n > self.limit {
                        // no run this long fits the output: stop reading zeros now
                        return Err(self.over());
                    }
                }
                b => return Ok(n + b),
            }
        }
    }

    fn over(&self) -> FilterError {
        corrupt(
            ID,
            NAME,
            format!("decodes to more than {} bytes", self.limit),
        )
    }

    fn room(&self, n: usize) -> Result<(), FilterError> {
        match self.out.len().checked_add(n) {
            Some(end) if end <= self.limit => Ok(()),
            _ => Err(self.over()),
        }
    }

    fn literals(&mut self, n: usize) -> Result<(), FilterError> {
        let lit = self
            .input
            .get(self.ip..)
            .and_then(|r| r.get(..n))
            .ok_or_else(|| self.truncated(n))?;
        self.room(n)?;
        self.out.extend_from_slice(lit);
        self.ip += n;
        Ok(())
    }

    /// Copy `len` bytes from `distance` back; `at` is the instruction's position.
    fn copy(&mut self, distance: usize, len: usize, at: usize) -> Result<(), FilterError> {
        if distance > self.out.len() {
            return Err(corrupt(
                ID,
                NAME,
                format!(
                    "a match at byte {at} points {distance} bytes back, before the start \
                     ({} bytes decoded)",
                    self.out.len()
                ),
            ));
        }
        self.room(len)?;
        let from = self.out.len() - distance;
        if distance >= len {
            self.out.extend_from_within(from..from + len);
        } else {
            // overlapping: each byte may be one this copy wrote
            for k in from..from + len {
                let b = self.out[k];
                self.out.push(b);
            }
        }
        Ok(())
    }
}

/// Decode one LZO1X stream from the start of `input` into `out` (replacing it), never past
/// `limit` bytes. Returns the position just after the end marker.
fn decompress(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<usize, FilterError> {
    out.clear();
    let mut d = Decoder {
        input,
        ip: 0,
        out,
        limit,
    };
    // literals copied by the last instruction: 0 to 3, or 4 for a run of 4 or more
    let mut state = 0usize;
    if let Some(&first) = input.first() {
        if first > 17 {
            d.ip = 1;
            let n = usize::from(first) - 17;
            d.literals(n)?;
            state = n.min(4);
        }
    }
    loop {
        let at = d.ip;
        let b = d.byte()?;
        let (distance, len, tail) = match b {
            0..=15 => match state {
                0 => {
                    let n = if b == 0 { d.extended(15)? } else { b } + 3;
                    d.literals(n)?;
                    state = 4;
                    continue;
                }
                4 => (2049 + (b >> 2) + (d.byte()? << 2), 3, b & 3),
                _ => (1 + (b >> 2) + (d.byte()? << 2), 2, b & 3),
            },
            16..=31 => {
                let len = match b & 7 {
                    0 => d.extended(7)?,
                    l => l,
                } + 2;
                let w = d.word()?;
                let far = (b & 8) << 11;
                if far == 0 && w >> 2 == 0 {
                    return Ok(d.ip);
                }
                (16384 + far + (w >> 2), len, w & 3)
            }
            32..=63 => {
                let len = match b & 31 {
                    0 => d.extended(31)?,
                    l => l,
                } + 2;
                let w = d.word()?;
                ((w >> 2) + 1, len, w & 3)
            }
            _ => (1 + ((b >> 2) & 7) + (d.byte()? << 3), (b >> 5) + 1, b & 3),
        };
        d.copy(distance, len, at)?;
        d.literals(tail)?;
        state = tail;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    /// Builds an LZO1X stream instruction by instruction, and the output it decodes to.
    #[derive(Default)]
    struct Stream {
        bytes: Vec<u8>,
        expect: Vec<u8>,
        state: usize,
    }

    impl Stream {
        /// A length field of `max` with extension bytes when `v` (the length minus its base)
        /// does not fit: `head` carries the field's bits.
        fn length(&mut self, head: u8, max: usize, v: usize) {
            if v <= max {
                self.bytes.push(head | v as u8);
            } else {
                self.bytes.push(head);
                let mut rest = v - max;
                while rest > 255 {
                    self.bytes.push(0);
                    rest -= 255;
                }
                self.bytes.push(rest as u8);
            }
        }

        fn copy(&mut self, distance: usize, len: usize, tail: &[u8]) {
            assert!(tail.len() <= 3 && distance <= self.expect.len());
            for _ in 0..len {
                self.expect.push(self.expect[self.expect.len() - distance]);
            }
            self.bytes.extend_from_slice(tail);
            self.expect.extend_from_slice(tail);
            self.state = tail.len();
        }

        /// The first byte's literal form: 1 to 238 literals.
        fn first(mut self, lits: &[u8]) -> Self {
            assert!(self.bytes.is_empty() && (1..=238).contains(&lits.len()));
            self.bytes.push(lits.len() as u8 + 17);
            self.bytes.extend_from_slice(lits);
            self.expect.extend_from_slice(lits);
            self.state = lits.len().min(4);
            self
        }

        /// A literal run (state 0): 4 or more literals.
        fn run(mut self, lits: &[u8]) -> Self {
            assert!(self.state == 0 && lits.len() >= 4);
            self.length(0, 15, lits.len() - 3);
            self.bytes.extend_from_slice(lits);
            self.expect.extend_from_slice(lits);
            self.state = 4;
            self
        }

        /// `0000DDSS` after literals: 2 bytes (state 1 to 3) or 3 bytes (state 4).
        fn m1(mut self, distance: usize, tail: &[u8]) -> Self {
            let (base, len) = match self.state {
                1..=3 => (1, 2),
                4 => (2049, 3),
                _ => panic!("M1 needs literals before it"),
            };
            let d = distance - base;
            assert!(d < 1024);
            self.bytes.push(((d & 3) << 2) as u8 | tail.len() as u8);
            self.bytes.push((d >> 2) as u8);
            self.copy(distance, len, tail);
            self
        }

        fn m2(mut self, len: usize, distance: usize, tail: &[u8]) -> Self {
            assert!((3..=8).contains(&len) && (1..=2048).contains(&distance));
            let d = distance - 1;
            self.bytes
                .push((((len - 1) << 5) | ((d & 7) << 2) | tail.len()) as u8);
            self.bytes.push((d >> 3) as u8);
            self.copy(distance, len, tail);
            self
        }

        fn m3(mut self, len: usize, distance: usize, tail: &[u8]) -> Self {
            assert!(len >= 3 && (1..=16384).contains(&distance));
            self.length(32, 31, len - 2);
            let w = ((distance - 1) << 2) | tail.len();
            self.bytes.extend_from_slice(&(w as u16).to_le_bytes());
            self.copy(distance, len, tail);
            self
        }

        fn m4(mut self, len: usize, distance: usize, tail: &[u8]) -> Self {
            assert!(len >= 3 && (16385..=49151).contains(&distance));
            let d = distance - 16384;
            self.length(16 | ((d >> 14) << 3) as u8, 7, len - 2);
            let w = ((d & 0x3fff) << 2) | tail.len();
            self.bytes.extend_from_slice(&(w as u16).to_le_bytes());
            self.copy(distance, len, tail);
            self
        }

        fn end(mut self) -> (Vec<u8>, Vec<u8>) {
            self.bytes.extend_from_slice(&[0x11, 0, 0]);
            (self.bytes, self.expect)
        }
    }

    fn decode(stream: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
        let mut out = Vec::new();
        let end = decompress(stream, &mut out, limit)?;
        check_trailer(&stream[end..], end, &out, true)?;
        Ok(out)
    }

    fn filter(params: &[u32]) -> Box<dyn Filter> {
        build(params, &FilterContext::new(1, &[])).unwrap()
    }

    fn with_trailer(mut stream: Vec<u8>, data: &[u8]) -> Vec<u8> {
        stream.extend_from_slice(&adler32(data).to_le_bytes());
        stream.extend_from_slice(&(data.len() as u32).to_le_bytes());
        stream
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn the_end_marker_alone_is_empty_output() {
        assert_eq!(decode(&[0x11, 0, 0], 0).unwrap(), b"");
        let (s, e) = Stream::default().end();
        assert_eq!(decode(&s, 10).unwrap(), e);
        assert!(e.is_empty());
    }

    #[test]
    fn literal_runs() {
        // the first byte's own form, short and long
        for n in [1, 2, 3, 4, 5, 200, 238] {
            let lits = pattern(n);
            let (s, e) = Stream::default().first(&lits).end();
            assert_eq!(decode(&s, 1000).unwrap(), e, "{n}");
        }
        // 0000LLLL runs: 4 to 18 in the byte, 19 and up extended with zero bytes (each 255)
        for n in [4, 18, 19, 273, 274, 18 + 255 * 3 + 7] {
            let lits = pattern(n);
            let (s, e) = Stream::default().run(&lits).end();
            assert_eq!(decode(&s, 10_000).unwrap(), e, "{n}");
            if n > 18 {
                let zeros = s[1..].iter().take_while(|&&b| b == 0).count();
                assert_eq!(zeros, (n - 19) / 255, "{n}");
            }
        }
    }

    #[test]
    fn every_match_kind() {
        let lits = pattern(3000);
        // M1 after a run (3 bytes, 2049..3072 back) and after 1-3 literals (2 bytes, 1..1024)
        let (s, e) = Stream::default()
            .run(&lits)
            .m1(2049, b"x")
            .m1(1, b"yz")
            .m1(1024, b"abc")
            .m1(77, b"")
            .run(&lits[..100])
            .m1(3072, b"")
            .end();
        assert_eq!(decode(&s, 10_000).unwrap(), e);
        // M2: every length, shortest and longest distance, overlapping copies
        let mut st = Stream::default().run(&lits);
        for len in 3..=8 {
            st = st.m2(len, 1, b"").m2(len, 2048, b"q").m2(len, 2, b"rs");
        }
        let (s, e) = st.end();
        assert_eq!(decode(&s, 10_000).unwrap(), e);
        // M3: short and extended lengths, distances to 16384
        let big = pattern(20_000);
        let (s, e) = Stream::default()
            .run(&big)
            .m3(3, 1, b"")
            .m3(33, 16384, b"t")
            .m3(34, 500, b"")
            .m3(33 + 255 * 2 + 1, 3, b"uvw")
            .end();
        assert_eq!(decode(&s, 100_000).unwrap(), e);
        // M4: both halves of its range (the H bit), up to the longest distance 49151
        let huge = pattern(60_000);
        let (s, e) = Stream::default()
            .run(&huge)
            .m4(3, 16385, b"")
            .m4(9, 32768, b"a")
            .m4(10, 32769, b"")
            .m4(9 + 255 + 4, 49151, b"bc")
            .m4(5000, 40000, b"")
            .end();
        assert_eq!(decode(&s, 200_000).unwrap(), e);
    }

    #[test]
    fn the_filter_checks_the_trailer() {
        let data = pattern(500);
        let (s, e) = Stream::default().run(&data[..100]).m3(400, 100, b"").end();
        let lzo = filter(&[1, 11, 4]); // a PyTables CArray
        let mut out = Vec::new();
        // PyTables >= 0.8: no trailer
        lzo.decode(&s, &mut out).unwrap();
        assert_eq!(out, e);
        // PyTables 0.6 and 0.7: checksum and length
        let good = with_trailer(s.clone(), &e);
        lzo.decode(&good, &mut out).unwrap();
        assert_eq!(out, e);
        let mut bad_sum = good.clone();
        bad_sum[s.len()] ^= 1;
        let err = lzo.decode(&bad_sum, &mut out).unwrap_err().to_string();
        assert!(
            err.starts_with("filter 305 (lzo): checksum mismatch: stored "),
            "{err}"
        );
        let mut bad_len = good.clone();
        bad_len[s.len() + 4] ^= 1;
        let err = lzo.decode(&bad_len, &mut out).unwrap_err().to_string();
        assert_eq!(err, "filter 305 (lzo): decoded 500 bytes, expected 501");
        // a Table of VERSION < 2.0 never has one; other parameter counts may
        let err = filter(&[1, 10, PYTABLES_TABLE])
            .decode(&good, &mut out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Table of VERSION below 2.0"), "{err}");
        filter(&[1, 10, PYTABLES_TABLE])
            .decode(&s, &mut out)
            .unwrap();
        let others: [&[u32]; 5] = [&[], &[1], &[1, 10], &[1, 27, PYTABLES_TABLE], &[9, 24, 1]];
        for p in others {
            filter(p).decode(&good, &mut out).unwrap();
            assert_eq!(out, e, "{p:?}");
        }
        // neither 0 nor 8 bytes after the end
        let mut odd = s.clone();
        odd.extend_from_slice(&[0; 3]);
        let err = lzo.decode(&odd, &mut out).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "3 bytes follow the LZO stream's end at byte {}",
                s.len()
            )),
            "{err}"
        );
    }

    #[test]
    fn parameters_and_encoding() {
        let ctx = FilterContext::new(1, &[]);
        let err = build(&[1, 2, 3, 4], &ctx).err().unwrap().to_string();
        assert!(err.contains("at most 3 parameters"), "{err}");
        let err = filter(&[]).encode(b"abc", &mut Vec::new()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("filter 305 (lzo): encoding (it decodes only) is not supported")
                && msg.contains("HDF5_PLUGIN_PATH"),
            "{msg}"
        );
    }

    #[test]
    fn hostile_streams_are_errors() {
        let data = pattern(3000);
        let (s, _) = Stream::default()
            .first(&data[..2])
            .m1(1, b"")
            .run(&data[..2200])
            .m1(2100, b"a")
            .m2(5, 20, b"bc")
            .m3(40, 300, b"")
            .run(&data[..20])
            .m3(33 + 255 + 9, 1, b"d")
            .end();
        // every cut of the stream fails (the end marker is the last thing)
        for cut in 0..s.len() {
            let e = decode(&s[..cut], 100_000).unwrap_err();
            assert!(
                matches!(
                    e,
                    FilterError::Truncated { .. } | FilterError::Corrupt { .. }
                ),
                "{cut}: {e}"
            );
        }
        // truncated: the literal run says more than there is
        let e = decode(&[0x18, b'a'], 100).unwrap_err().to_string();
        assert_eq!(
            e,
            "filter 305 (lzo): chunk truncated: needed 7 bytes at byte 1, chunk has 2"
        );
        // no end marker
        let e = decode(&[0x15, 1, 2, 3, 4], 100).unwrap_err().to_string();
        assert!(e.contains("needed 1 bytes at byte 5"), "{e}");
        // a match before the start of the output, of each kind
        let (s, _) = Stream::default().first(b"ab").end();
        // M1 (4 back), M2 (4 back), M3 (4 back)
        for m in [&[0x0c, 0x00][..], &[0x4c, 0x00], &[0x21, 0x0c, 0x00]] {
            let mut bad = s[..3].to_vec();
            bad.extend_from_slice(m);
            bad.extend_from_slice(&[0x11, 0, 0]);
            let e = decode(&bad, 100).unwrap_err().to_string();
            assert!(e.contains("a match at byte 3 points"), "{m:?}: {e}");
            assert!(e.contains("before the start (2 bytes decoded)"), "{e}");
        }
        let e = decode(&[0x12, b'a', 0x19, 0, 0, 0x11, 0, 0], 100_000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("points 32768 bytes back"), "{e}");
        // output overrun: literals, matches and extended lengths stop at the limit
        let (s, e) = Stream::default().run(&data[..100]).m3(1000, 1, b"").end();
        assert_eq!(decode(&s, 1100).unwrap(), e);
        for limit in [0, 50, 1099] {
            let err = decode(&s, limit).unwrap_err().to_string();
            assert!(
                err.contains(&format!("decodes to more than {limit} bytes")),
                "{err}"
            );
        }
        // a run of zero bytes extending a length past any limit stops early
        let mut zeros = vec![0x12, b'a', 0x20];
        zeros.resize(1 << 20, 0);
        let e = decode(&zeros, 4096).unwrap_err().to_string();
        assert!(e.contains("decodes to more than 4096 bytes"), "{e}");
        // random garbage never panics
        let mut x = 0x9e37_79b9u32;
        for _ in 0..2000 {
            let n = (x % 64) as usize;
            let bytes: Vec<u8> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = decode(&bytes, 1000);
        }
    }
}
