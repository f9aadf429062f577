//! numcodecs `Delta(dtype, astype)`: each element minus the previous one (the first element
//! kept), computed in `dtype` and stored as `astype`; decoding is the running sum, in
//! `dtype`, element by element (NumPy's `cumsum`). The chunk's bytes are read as `dtype`
//! whatever the array's own dtype is, as numcodecs does.
//!
//! Supported: integer (`i1`..`i8`, `u1`..`u8`, wrapping arithmetic as NumPy's) and float
//! (`f4`, `f8`) dtypes with byte order `<`, `>`, `|` or none (native); `astype` of the same
//! kind and size (its byte order may differ). Other `astype`s (numcodecs allows e.g.
//! `Delta('<i8', astype='<i2')`, which truncates) are refused when the codec is built.

use super::corrupt;
use crate::error::FilterError;
use crate::filter::{Filter, FilterId};

/// Zarr-only codecs report filter id 0 in errors.
const ID: FilterId = 0;
const NAME: &str = "delta";

/// Element kind of a NumPy type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Signed or unsigned integer: both wrap the same way.
    Int,
    Float,
}

/// A numeric NumPy type string: kind, size in bytes and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NumType {
    kind: Kind,
    size: usize,
    big: bool,
}

impl NumType {
    /// Parse `<i4`, `>f8`, `|u1`, `i2` (native order)...; `None` for anything else.
    pub(crate) fn parse(s: &str) -> Option<NumType> {
        let b = s.as_bytes();
        let (big, rest) = match b.first()? {
            b'<' => (false, &b[1..]),
            b'>' => (true, &b[1..]),
            b'|' | b'=' => (cfg!(target_endian = "big"), &b[1..]),
            _ => (cfg!(target_endian = "big"), b),
        };
        let (kind, size) = match rest {
            [b'i' | b'u', n] => (Kind::Int, *n),
            [b'f', n] => (Kind::Float, *n),
            _ => return None,
        };
        let size = match (kind, size) {
            (Kind::Int, b'1' | b'2' | b'4' | b'8') | (Kind::Float, b'4' | b'8') => {
                usize::from(size - b'0')
            }
            _ => return None,
        };
        // one-byte types have no byte order
        Some(NumType {
            kind,
            size,
            big: big && size > 1,
        })
    }

    fn get(&self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        if self.big {
            a[8 - self.size..].copy_from_slice(b);
            u64::from_be_bytes(a)
        } else {
            a[..self.size].copy_from_slice(b);
            u64::from_le_bytes(a)
        }
    }

    fn put(&self, v: u64, out: &mut Vec<u8>) {
        if self.big {
            out.extend_from_slice(&v.to_be_bytes()[8 - self.size..]);
        } else {
            out.extend_from_slice(&v.to_le_bytes()[..self.size]);
        }
    }
}

/// The numcodecs `delta` codec.
pub(crate) struct Delta {
    dtype: NumType,
    astype: NumType,
}

impl Delta {
    /// A delta codec for these NumPy type strings; the error says what is not supported.
    pub(crate) fn new(dtype: &str, astype: &str) -> Result<Delta, String> {
        let d = NumType::parse(dtype).ok_or_else(|| {
            format!("dtype {dtype:?} is not supported (integer or float: <i4, >f8, |u1...)")
        })?;
        let a = NumType::parse(astype).ok_or_else(|| {
            format!("astype {astype:?} is not supported (integer or float: <i4, >f8, |u1...)")
        })?;
        if (a.kind, a.size) != (d.kind, d.size) {
            return Err(format!(
                "astype {astype:?} differs from dtype {dtype:?}: only astype equal to dtype (byte order aside) is supported"
            ));
        }
        Ok(Delta {
            dtype: d,
            astype: a,
        })
    }

    fn check(&self, chunk: &[u8]) -> Result<(), FilterError> {
        if !chunk.len().is_multiple_of(self.dtype.size) {
            return Err(corrupt(
                ID,
                NAME,
                format!(
                    "{} bytes are not a whole number of {}-byte elements",
                    chunk.len(),
                    self.dtype.size
                ),
            ));
        }
        Ok(())
    }

    /// `a - b` (encode) or `a + b` (decode) in the dtype's arithmetic, as raw bits.
    fn op(&self, a: u64, b: u64, add: bool) -> u64 {
        match (self.dtype.kind, self.dtype.size) {
            (Kind::Float, 4) => {
                let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
                u64::from((if add { x + y } else { x - y }).to_bits())
            }
            (Kind::Float, _) => {
                let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                (if add { x + y } else { x - y }).to_bits()
            }
            // integers wrap: signed and unsigned differences are the same bits
            (Kind::Int, n) => {
                let v = if add {
                    a.wrapping_add(b)
                } else {
                    a.wrapping_sub(b)
                };
                if n == 8 {
                    v
                } else {
                    v & ((1u64 << (8 * n)) - 1)
                }
            }
        }
    }
}

impl Filter for Delta {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        NAME
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.check(chunk)?;
        out.clear();
        out.reserve(chunk.len());
        let mut prev = None;
        for e in chunk.chunks_exact(self.dtype.size) {
            let v = self.dtype.get(e);
            let d = match prev {
                None => v,
                Some(p) => self.op(v, p, false),
            };
            self.astype.put(d, out);
            prev = Some(v);
        }
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        self.check(chunk)?;
        out.clear();
        out.reserve(chunk.len());
        let mut acc = None;
        for e in chunk.chunks_exact(self.astype.size) {
            let d = self.astype.get(e);
            let v = match acc {
                None => d,
                Some(a) => self.op(a, d, true),
            };
            self.dtype.put(v, out);
            acc = Some(v);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

    use super::*;
    use crate::codecs::test_hex::hex;

    fn enc(d: &Delta, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        d.encode(data, &mut out).unwrap();
        out
    }

    fn dec(d: &Delta, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        d.decode(data, &mut out).unwrap();
        out
    }

    /// `(input, dtype, numcodecs.Delta(dtype).encode(input))`, made once with numcodecs 0.15.2.
    fn vectors() -> Vec<(Vec<u8>, &'static str, Vec<u8>)> {
        vec![
            (
                // np.arange(-6, 10, dtype='<i4') * 1000 + [3,1,4,1,5,9,2,6,5,3,5,8,9,7,9,3]
                hex("93e8ffff79ecffff64f0ffff49f4ffff35f8ffff21fcffff02000000ee030000d5070000bb0b0000a50f000090130000791700005f1b0000491f00002b230000"),
                "<i4",
                hex("93e8ffffe6030000eb030000e5030000ec030000ec030000e1030000ec030000e7030000e6030000ea030000eb030000e9030000e6030000ea030000e2030000"),
            ),
            (
                // [1.5, 2.25, -3.0, 1e300, 0.1, 0.2, 0.3] as <f8
                hex("000000000000f83f000000000000024000000000000008c09c7500883ce4377e9a9999999999b93f9a9999999999c93f333333333333d33f"),
                "<f8",
                hex("000000000000f83f000000000000e83f00000000000015c09c7500883ce4377e9c7500883ce437fe9a9999999999b93f989999999999b93f"),
            ),
            (
                // bytes 0, 10, ..., 190, 255, 0 read as >i2
                (0..200u32).step_by(10).map(|b| b as u8).chain([255, 0]).collect(),
                ">i2",
                hex("000a1414141414141414141414141414141414144a42"),
            ),
            (vec![5, 3, 250, 4, 0], "|u1", hex("05fef70afc")),
            (
                // [1.0, 0.1, 1e30, -2.5] as <f4
                [1.0f32, 0.1, 1e30, -2.5]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
                "<f4",
                hex("0000803f666666bfcaf24971caf249f1"),
            ),
        ]
    }

    #[test]
    fn byte_exact_with_numcodecs() {
        for (input, dtype, expected) in vectors() {
            let d = Delta::new(dtype, dtype).unwrap();
            assert_eq!(enc(&d, &input), expected, "{dtype}");
            let back = dec(&d, &expected);
            if dtype.contains('f') {
                // float deltas are not exactly invertible: numcodecs' cumsum gives these
                assert_eq!(back, dec(&d, &enc(&d, &input)), "{dtype}");
            } else {
                assert_eq!(back, input, "{dtype}");
            }
        }
        // numcodecs' decode of its own float encodings (Delta(dt).decode(Delta(dt).encode(x)))
        let d = Delta::new("<f8", "<f8").unwrap();
        let got: Vec<f64> = dec(&d, &vectors()[1].2)
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, [1.5, 2.25, -3.0, 1e300, 0.0, 0.1, 0.19999999999999998]);
        let d = Delta::new("<f4", "<f4").unwrap();
        assert_eq!(
            dec(&d, &vectors()[4].2),
            hex("0000803fd0cccc3dcaf2497100000000")
        );
    }

    #[test]
    fn round_trip_every_integer_type() {
        let data: Vec<u8> = (0..240u32).map(|i| (i * 37 % 251) as u8).collect();
        for t in [
            "<i1", "|i1", "|u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4", "<u4", ">u4", "<i8",
            ">i8", "<u8", ">u8", "i4",
        ] {
            let d = Delta::new(t, t).unwrap();
            let e = enc(&d, &data);
            assert_eq!(e.len(), data.len());
            assert_eq!(dec(&d, &e), data, "{t}");
        }
        // a different byte order for astype stores the same deltas swapped
        let le = Delta::new("<i4", "<i4").unwrap();
        let be = Delta::new("<i4", ">i4").unwrap();
        let a = enc(&le, &data);
        let b = enc(&be, &data);
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            assert_eq!(x, [y[3], y[2], y[1], y[0]]);
        }
        assert_eq!(dec(&be, &b), data);
    }

    #[test]
    fn floats_round_trip_when_exact() {
        // small integers in floats: every difference and sum is exact
        for t in ["<f4", ">f4", "<f8", ">f8"] {
            let d = Delta::new(t, t).unwrap();
            let vals = [3.0f64, -7.0, 12.5, 12.5, 0.0, 1024.0];
            let ty = NumType::parse(t).unwrap();
            let mut data = Vec::new();
            for v in vals {
                let bits = if ty.size == 4 {
                    u64::from((v as f32).to_bits())
                } else {
                    v.to_bits()
                };
                ty.put(bits, &mut data);
            }
            assert_eq!(dec(&d, &enc(&d, &data)), data, "{t}");
        }
    }

    #[test]
    fn refused_configurations() {
        for (dt, at) in [
            ("<i4", "<i2"),
            ("<i8", "<f8"),
            ("<f8", "<f4"),
            ("<f2", "<f2"),
            ("<c8", "<c8"),
            ("|b1", "|b1"),
            ("<U4", "<U4"),
            ("", ""),
            ("<i3", "<i3"),
        ] {
            let e = Delta::new(dt, at).err().unwrap();
            assert!(e.contains("supported"), "{dt} {at}: {e}");
        }
    }

    #[test]
    fn partial_element_is_an_error() {
        let d = Delta::new("<i4", "<i4").unwrap();
        let mut out = Vec::new();
        for n in [1, 2, 3, 5, 7] {
            assert!(matches!(
                d.decode(&vec![0u8; n], &mut out),
                Err(FilterError::Corrupt { .. })
            ));
            assert!(d.encode(&vec![0u8; n], &mut out).is_err());
        }
        assert!(dec(&d, &[]).is_empty());
    }
}
