//! numcodecs' element-conversion filters, which map to the netCDF data model because their
//! decoded output is plain numbers of the array's dtype:
//!
//! - `astype` (`encode_dtype`, `decode_dtype`): elements stored as `encode_dtype`, decoded
//!   by NumPy's `astype` to `decode_dtype`.
//! - `quantize` (`digits`, `dtype`, `astype`) and `bitround` (`keepbits`): lossy on encode
//!   only; decoding converts `astype` back to `dtype` (bitround: nothing to undo).
//! - `fixedscaleoffset` (`scale`, `offset`, `dtype`, `astype`): stored `round((x - offset) *
//!   scale)` as `astype`; decoded `stored / scale + offset`, in double precision, then
//!   converted to `dtype`.
//!
//! - `categorize` (`labels`, `dtype`, `astype`): strings stored as the 1-based index of their
//!   label in `labels` (0: not a label, decoded as the empty string), as the integer type
//!   `astype`; decoded to fixed-length strings of `dtype` (`<Un` UCS-4 or `|Sn` bytes).
//!
//! Conversions follow NumPy's `astype`: integer to integer wraps, float to integer truncates
//! toward zero (out-of-range values saturate here; NumPy leaves them undefined), integer to
//! float rounds to nearest. Encoding (used when a Zarr store is copied with these codecs)
//! converts the other way; quantize's and bitround's rounding is not redone (the values
//! read were already rounded). Spec: numcodecs documentation, "Filters".

use super::corrupt;
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;

/// Element kind of a NumPy type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Signed,
    Unsigned,
    Float,
}

/// A numeric NumPy type string: kind, size in bytes and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Num {
    kind: Kind,
    size: usize,
    big: bool,
}

/// One element's value, before conversion.
#[derive(Debug, Clone, Copy)]
enum Val {
    Int(i128),
    Float(f64),
}

impl Num {
    /// Parse `<i4`, `>f8`, `|u1`, `u2` (native order)...; the error names the type.
    pub(crate) fn parse(s: &str) -> Result<Num, String> {
        let b = s.as_bytes();
        let (big, rest) = match b.first() {
            Some(b'<') => (false, &b[1..]),
            Some(b'>') => (true, &b[1..]),
            Some(b'|' | b'=') => (cfg!(target_endian = "big"), &b[1..]),
            _ => (cfg!(target_endian = "big"), b),
        };
        let (kind, size) = match rest {
            [b'i', n] => (Kind::Signed, *n),
            [b'u', n] => (Kind::Unsigned, *n),
            [b'f', n @ (b'4' | b'8')] => (Kind::Float, *n),
            _ => {
                return Err(format!(
                    "type {s:?} is not a netCDF number type (<i4, >f8, |u1...)"
                ))
            }
        };
        if !matches!(size, b'1' | b'2' | b'4' | b'8') {
            return Err(format!("type {s:?}: integer size must be 1, 2, 4 or 8"));
        }
        let size = usize::from(size - b'0');
        Ok(Num {
            kind,
            size,
            big: big && size > 1,
        })
    }

    fn get(&self, b: &[u8]) -> Val {
        let mut a = [0u8; 8];
        let bits = if self.big {
            a[8 - self.size..].copy_from_slice(b);
            u64::from_be_bytes(a)
        } else {
            a[..self.size].copy_from_slice(b);
            u64::from_le_bytes(a)
        };
        let width = 8 * self.size as u32;
        match self.kind {
            Kind::Unsigned => Val::Int(i128::from(bits)),
            // sign-extend from the element's width
            Kind::Signed => Val::Int(i128::from(((bits << (64 - width)) as i64) >> (64 - width))),
            Kind::Float if self.size == 4 => Val::Float(f64::from(f32::from_bits(bits as u32))),
            Kind::Float => Val::Float(f64::from_bits(bits)),
        }
    }

    fn put(&self, v: Val, out: &mut Vec<u8>) {
        let bits: u64 = match (self.kind, v) {
            (Kind::Float, v) => {
                let x = match v {
                    Val::Int(i) => i as f64,
                    Val::Float(f) => f,
                };
                if self.size == 4 {
                    u64::from((x as f32).to_bits())
                } else {
                    x.to_bits()
                }
            }
            // integer to integer wraps (the low bits), as NumPy's astype
            (_, Val::Int(i)) => i as u64,
            // float to integer truncates; saturate to the target's range
            (Kind::Signed, Val::Float(f)) => {
                let width = 8 * self.size as u32;
                let (lo, hi) = (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1);
                ((f as i128).clamp(lo, hi)) as u64
            }
            (Kind::Unsigned, Val::Float(f)) => {
                let hi = (1i128 << (8 * self.size as u32)) - 1;
                ((f as i128).clamp(0, hi)) as u64
            }
        };
        if self.big {
            out.extend_from_slice(&bits.to_be_bytes()[8 - self.size..]);
        } else {
            out.extend_from_slice(&bits.to_le_bytes()[..self.size]);
        }
    }
}

/// Element conversion from a stored type to the decoded type, with an optional linear map
/// (fixedscaleoffset).
pub(crate) struct Cast {
    name: &'static str,
    /// The type of the decoded elements (the array's).
    decoded: Num,
    /// The type of the stored elements.
    stored: Num,
    /// `(scale, offset)`: decoded = stored / scale + offset.
    linear: Option<(f64, f64)>,
}

impl Cast {
    /// A conversion filter named `name` (for messages) between these NumPy types.
    ///
    /// # Errors
    /// A type that is not a netCDF number type, or a zero or non-finite scale.
    pub(crate) fn new(
        name: &'static str,
        decoded: &str,
        stored: &str,
        linear: Option<(f64, f64)>,
    ) -> Result<Cast, String> {
        if let Some((scale, offset)) = linear {
            if scale == 0.0 || !scale.is_finite() || !offset.is_finite() {
                return Err(format!(
                    "scale {scale} and offset {offset}: the scale must be finite and non-zero"
                ));
            }
        }
        Ok(Cast {
            name,
            decoded: Num::parse(decoded)?,
            stored: Num::parse(stored)?,
            linear,
        })
    }

    fn convert(
        &self,
        chunk: &[u8],
        from: Num,
        to: Num,
        out: &mut Vec<u8>,
        decode: bool,
    ) -> Result<(), FilterError> {
        if !chunk.len().is_multiple_of(from.size) {
            return Err(corrupt(
                ID,
                self.name,
                format!(
                    "{} bytes are not a whole number of {}-byte elements",
                    chunk.len(),
                    from.size
                ),
            ));
        }
        out.clear();
        out.reserve(chunk.len() / from.size * to.size);
        for e in chunk.chunks_exact(from.size) {
            let v = from.get(e);
            let v = match self.linear {
                None => v,
                Some((scale, offset)) => {
                    let x = match v {
                        Val::Int(i) => i as f64,
                        Val::Float(f) => f,
                    };
                    if decode {
                        Val::Float(x / scale + offset)
                    } else {
                        Val::Float(((x - offset) * scale).round_ties_even())
                    }
                }
            };
            to.put(v, out);
        }
        Ok(())
    }
}

impl Filter for Cast {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        self.name
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.convert(chunk, self.decoded, self.stored, out, false)
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.convert(chunk, self.stored, self.decoded, out, true)
    }
}

/// numcodecs `packbits`: booleans (one byte each, 0 or 1) packed eight to a byte, most
/// significant bit first, after one header byte giving the number of padding bits in the
/// last byte (0 to 7).
pub(crate) struct PackBits;

const PACKBITS: &str = "packbits";

impl Filter for PackBits {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        PACKBITS
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        out.clear();
        let pad = (8 - chunk.len() % 8) % 8;
        out.push(pad as u8);
        for byte in chunk.chunks(8) {
            let mut b = 0u8;
            for (i, &x) in byte.iter().enumerate() {
                if x != 0 {
                    b |= 0x80 >> i;
                }
            }
            out.push(b);
        }
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let (&pad, bits) = chunk
            .split_first()
            .ok_or_else(|| corrupt(ID, PACKBITS, "empty chunk: no padding byte"))?;
        if pad > 7 || (bits.is_empty() && pad != 0) {
            return Err(corrupt(ID, PACKBITS, format!("padding of {pad} bits")));
        }
        out.clear();
        out.reserve(bits.len() * 8);
        for b in bits {
            out.extend((0..8).map(|i| (b >> (7 - i)) & 1));
        }
        out.truncate(out.len() - usize::from(pad));
        Ok(())
    }
}

/// numcodecs `categorize`: each element of a fixed-length string array (`<Un`, `>Un` UCS-4,
/// or `|Sn` bytes) stored as the 1-based index of its label, 0 for a string that is not one.
pub(crate) struct Categorize {
    /// Each label as one decoded element (padded or cut to the element size).
    labels: Vec<Vec<u8>>,
    /// The integer type of the stored indexes.
    stored: Num,
    /// Bytes per decoded element.
    elem: usize,
}

const CATEGORIZE: &str = "categorize";

impl Categorize {
    /// The codec for these labels, decoded type and stored type.
    ///
    /// # Errors
    /// A decoded type that is not a fixed-length string (`|O` object arrays included), a
    /// stored type that is not an integer, or more labels than the stored type can number.
    pub(crate) fn new(labels: &[String], dtype: &str, astype: &str) -> Result<Categorize, String> {
        let stored = Num::parse(astype)?;
        if stored.kind == Kind::Float {
            return Err(format!("astype \"{astype}\" is not an integer type"));
        }
        let capacity = if stored.size >= 8 {
            u64::MAX
        } else {
            let bits = 8 * stored.size as u32 - u32::from(stored.kind == Kind::Signed);
            (1u64 << bits) - 1
        };
        if labels.len() as u64 > capacity {
            return Err(format!(
                "{} labels do not fit in \"{astype}\"",
                labels.len()
            ));
        }
        let b = dtype.as_bytes();
        let (big, rest) = match b.first() {
            Some(b'>') => (true, &dtype[1..]),
            Some(b'<' | b'|' | b'=') => (false, &dtype[1..]),
            _ => (false, dtype),
        };
        let bad = || {
            format!(
                "dtype \"{dtype}\": categorize is read for fixed-length strings (<Un, |Sn); \
                 object arrays are not"
            )
        };
        let (ucs4, n) = match rest.as_bytes().first() {
            Some(b'U') => (true, rest[1..].parse::<usize>().map_err(|_| bad())?),
            Some(b'S') => (false, rest[1..].parse::<usize>().map_err(|_| bad())?),
            _ => return Err(bad()),
        };
        if n == 0 || n > 1 << 20 {
            return Err(bad());
        }
        let elem = if ucs4 { 4 * n } else { n };
        let labels = labels
            .iter()
            .map(|l| {
                let mut e = Vec::with_capacity(elem);
                if ucs4 {
                    for c in l.chars().take(n) {
                        let u = c as u32;
                        e.extend(if big {
                            u.to_be_bytes()
                        } else {
                            u.to_le_bytes()
                        });
                    }
                } else {
                    e.extend(l.bytes().take(n));
                }
                e.resize(elem, 0);
                e
            })
            .collect();
        Ok(Categorize {
            labels,
            stored,
            elem,
        })
    }
}

impl Filter for Categorize {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        CATEGORIZE
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        if !chunk.len().is_multiple_of(self.elem) {
            return Err(corrupt(
                ID,
                CATEGORIZE,
                format!(
                    "{} bytes are not a whole number of {}-byte strings",
                    chunk.len(),
                    self.elem
                ),
            ));
        }
        out.clear();
        for e in chunk.chunks_exact(self.elem) {
            let k = self.labels.iter().position(|l| l == e).map_or(0, |i| i + 1);
            self.stored.put(Val::Int(k as i128), out);
        }
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let size = self.stored.size;
        if !chunk.len().is_multiple_of(size) {
            return Err(corrupt(
                ID,
                CATEGORIZE,
                format!(
                    "{} bytes are not a whole number of {size}-byte indexes",
                    chunk.len()
                ),
            ));
        }
        out.clear();
        out.reserve(chunk.len() / size * self.elem);
        for e in chunk.chunks_exact(size) {
            match self.stored.get(e) {
                Val::Int(0) => out.extend(std::iter::repeat_n(0u8, self.elem)),
                Val::Int(k) if k > 0 && (k as u128) <= self.labels.len() as u128 => {
                    out.extend_from_slice(&self.labels[k as usize - 1]);
                }
                Val::Int(k) => {
                    return Err(corrupt(
                        ID,
                        CATEGORIZE,
                        format!("index {k} names no label (there are {})", self.labels.len()),
                    ))
                }
                Val::Float(_) => unreachable!("an integer type gives integers"),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;

    fn dec(f: &dyn Filter, b: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        f.decode(b, &mut out).unwrap();
        out
    }

    #[test]
    fn astype_and_scale_offset() {
        // stored <f4, decoded <f8
        let c = Cast::new("astype", "<f8", "<f4", None).unwrap();
        assert_eq!(dec(&c, &1.5f32.to_le_bytes()), 1.5f64.to_le_bytes());
        // stored |i1 -1 decoded >i4 (sign extended)
        let c = Cast::new("astype", ">i4", "|i1", None).unwrap();
        assert_eq!(dec(&c, &[0xff]), (-1i32).to_be_bytes());
        // fixedscaleoffset: stored |u1 7, scale 10, offset 1000 -> 1000.7
        let c = Cast::new("fixedscaleoffset", "<f8", "|u1", Some((10.0, 1000.0))).unwrap();
        assert_eq!(dec(&c, &[7]), 1000.7f64.to_le_bytes());
        let mut enc = Vec::new();
        c.encode(&1000.7f64.to_le_bytes(), &mut enc).unwrap();
        assert_eq!(enc, [7]);
        // corrupt: not whole elements; bad parameters
        let c = Cast::new("quantize", "<f8", "<f4", None).unwrap();
        assert!(c.decode(&[1, 2, 3], &mut Vec::new()).is_err());
        assert!(Cast::new("x", "<c8", "<f4", None).is_err());
        assert!(Cast::new("x", "<f8", "<i4", Some((0.0, 1.0))).is_err());
    }

    #[test]
    fn packbits() {
        let data = [1u8, 0, 1, 1, 0, 0, 0, 1, 1, 1];
        let mut enc = Vec::new();
        PackBits.encode(&data, &mut enc).unwrap();
        assert_eq!(enc, [6, 0b1011_0001, 0b1100_0000]);
        assert_eq!(dec(&PackBits, &enc), data);
        assert!(PackBits.decode(&[], &mut Vec::new()).is_err());
        assert!(PackBits.decode(&[9, 0], &mut Vec::new()).is_err());
        assert!(PackBits.decode(&[3], &mut Vec::new()).is_err());
    }

    #[test]
    fn categorize_both_ways() {
        let labels = vec!["a".to_string(), "bé".to_string(), "€".to_string()];
        let c = Categorize::new(&labels, "<U2", "|u1").unwrap();
        let ucs = |s: &str| {
            let mut v: Vec<u8> = s.chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
            v.resize(8, 0);
            v
        };
        let decoded: Vec<u8> = [ucs("bé"), ucs(""), ucs("€"), ucs("a")].concat();
        assert_eq!(dec(&c, &[2, 0, 3, 1]), decoded);
        let mut enc = Vec::new();
        c.encode(&decoded, &mut enc).unwrap();
        assert_eq!(enc, vec![2, 0, 3, 1]);
        // a string that is no label is stored as 0
        c.encode(&ucs("zz"), &mut enc).unwrap();
        assert_eq!(enc, vec![0]);
        // big-endian UCS-4 and a two-byte index
        let c = Categorize::new(&labels, ">U1", "<u2").unwrap();
        assert_eq!(dec(&c, &[3, 0, 1, 0]), [0, 0, 0x20, 0xac, 0, 0, 0, b'a']);
        // byte strings
        let c = Categorize::new(&labels, "|S2", "|u1").unwrap();
        assert_eq!(dec(&c, &[1, 0]), [b'a', 0, 0, 0]);
        // an index past the labels is corrupt, not a silent empty string
        let mut out = Vec::new();
        let e = c.decode(&[4], &mut out).unwrap_err().to_string();
        assert!(e.contains("index 4 names no label (there are 3)"), "{e}");
        // types it cannot hold
        assert!(Categorize::new(&labels, "|O", "|u1")
            .err()
            .unwrap()
            .contains("object arrays are not"));
        assert!(Categorize::new(&labels, "<U1", "<f4")
            .err()
            .unwrap()
            .contains("not an integer type"));
        let many: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        assert!(Categorize::new(&many, "<U3", "|u1")
            .err()
            .unwrap()
            .contains("300 labels do not fit"));
    }
}
