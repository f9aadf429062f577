//! The XDR body of a `.dods` response (DAP 2.0 section 7.3.2, as netCDF-C's `oc2/occompile.c`
//! walks it): big-endian, 4-byte units; an array is preceded by its element count twice (once
//! for strings and structures); bytes are packed and padded to 4; Int16/UInt16 take 4 bytes;
//! strings are counted and padded; sequence records start with a 0x5A unit and the sequence
//! ends with a 0xA5 unit.

use super::parse::{BaseType, DdsKind, DdsNode};

/// The values of one atomic variable instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Atoms {
    /// Byte
    U8(Vec<u8>),
    /// Int16
    I16(Vec<i16>),
    /// UInt16
    U16(Vec<u16>),
    /// Int32
    I32(Vec<i32>),
    /// UInt32
    U32(Vec<u32>),
    /// Float32
    F32(Vec<f32>),
    /// Float64
    F64(Vec<f64>),
    /// String, Url
    Str(Vec<Vec<u8>>),
}

impl Atoms {
    /// The values, leaving an empty array of the same type in their place.
    pub fn take(&mut self) -> Atoms {
        let empty = match self {
            Atoms::U8(_) => Atoms::U8(Vec::new()),
            Atoms::I16(_) => Atoms::I16(Vec::new()),
            Atoms::U16(_) => Atoms::U16(Vec::new()),
            Atoms::I32(_) => Atoms::I32(Vec::new()),
            Atoms::U32(_) => Atoms::U32(Vec::new()),
            Atoms::F32(_) => Atoms::F32(Vec::new()),
            Atoms::F64(_) => Atoms::F64(Vec::new()),
            Atoms::Str(_) => Atoms::Str(Vec::new()),
        };
        std::mem::replace(self, empty)
    }
}

/// A decoded instance of a DDS declaration.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// an atomic variable's values (one for a scalar)
    Atomic(Atoms),
    /// a scalar structure or a grid: one datum per field
    Fields(Vec<Datum>),
    /// a structure array: per element (row-major), one datum per field
    Elements(Vec<Vec<Datum>>),
    /// a sequence: per record, one datum per field
    Records(Vec<Vec<Datum>>),
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

type XResult<T> = Result<T, String>;

impl Cursor<'_> {
    fn left(&self) -> usize {
        self.b.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> XResult<&[u8]> {
        if n > self.left() {
            return Err(format!(
                "{what}: needs {n} bytes at byte {} of the data, only {} are left (response cut short?)",
                self.pos,
                self.left()
            ));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> XResult<u32> {
        let s = self.take(4, what)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
}

/// Decode the body for the top-level declarations `vars`.
///
/// # Errors
/// The body is shorter than the declarations need, a count differs from the declared size,
/// a sequence marker is missing.
pub fn decode(vars: &[DdsNode], body: &[u8]) -> XResult<Vec<Datum>> {
    let mut c = Cursor { b: body, pos: 0 };
    vars.iter()
        .map(|v| node(v, &mut c, v.name.as_str()))
        .collect()
}

fn declared_count(n: &DdsNode) -> XResult<u64> {
    n.dims
        .iter()
        .try_fold(1u64, |a, d| a.checked_mul(d.size))
        .ok_or_else(|| format!("variable \"{}\": its element count overflows", n.name))
}

/// The fewest bytes one instance of `n` takes (to bound counts by the bytes present).
fn min_size(n: &DdsNode) -> usize {
    if !n.dims.is_empty() {
        return 4;
    }
    match &n.kind {
        DdsKind::Base(_) => 4,
        DdsKind::Sequence => 4,
        DdsKind::Structure | DdsKind::Grid => n.fields.iter().map(min_size).sum(),
    }
}

fn fields(n: &DdsNode, c: &mut Cursor, path: &str) -> XResult<Vec<Datum>> {
    n.fields
        .iter()
        .map(|f| node(f, c, &format!("{path}.{}", f.name)))
        .collect()
}

fn node(n: &DdsNode, c: &mut Cursor, path: &str) -> XResult<Datum> {
    match &n.kind {
        DdsKind::Base(bt) => atomic(n, *bt, c, path).map(Datum::Atomic),
        DdsKind::Grid => fields(n, c, path).map(Datum::Fields),
        DdsKind::Structure if n.dims.is_empty() => fields(n, c, path).map(Datum::Fields),
        DdsKind::Structure => {
            let count = declared_count(n)?;
            let got = c.u32(&format!("structure \"{path}\": element count"))?;
            if u64::from(got) != count {
                return Err(format!(
                    "structure \"{path}\": the data holds {got} elements, the DDS declares {count}"
                ));
            }
            let per = min_size(&DdsNode {
                dims: Vec::new(),
                ..n.clone()
            });
            let bound = c.left().checked_div(per).unwrap_or(1 << 20);
            if count as usize > bound {
                return Err(format!(
                    "structure \"{path}\": {count} elements declared, the data cannot hold them"
                ));
            }
            let mut out = Vec::with_capacity(count as usize);
            for _ in 0..count {
                out.push(fields(n, c, path)?);
            }
            Ok(Datum::Elements(out))
        }
        DdsKind::Sequence => {
            let mut recs = Vec::new();
            loop {
                let mark = c.take(4, &format!("sequence \"{path}\": record marker"))?;
                match mark[0] {
                    0x5A => recs.push(fields(n, c, path)?),
                    0xA5 => break,
                    m => {
                        return Err(format!(
                            "sequence \"{path}\": expected a record marker (0x5A or 0xA5) at byte {}, found 0x{m:02x}",
                            c.pos - 4
                        ))
                    }
                }
            }
            Ok(Datum::Records(recs))
        }
    }
}

fn atomic(n: &DdsNode, bt: BaseType, c: &mut Cursor, path: &str) -> XResult<Atoms> {
    let scalar = n.dims.is_empty();
    let count = if scalar {
        1
    } else {
        let count = declared_count(n)?;
        let what = format!("variable \"{path}\": element count");
        let first = c.u32(&what)?;
        if u64::from(first) != count {
            return Err(format!(
                "variable \"{path}\": the data holds {first} elements, the DDS declares {count}"
            ));
        }
        if !bt.is_string() {
            let second = c.u32(&what)?;
            if second != first {
                return Err(format!(
                    "variable \"{path}\": its two element counts differ ({first} and {second})"
                ));
            }
        }
        count as usize
    };
    let what = format!("variable \"{path}\"");
    let unit = match bt {
        BaseType::Byte if !scalar => 1,
        BaseType::Float64 => 8,
        _ => 4,
    };
    if count.checked_mul(unit).is_none_or(|need| need > c.left()) {
        return Err(format!(
            "{what}: {count} elements declared, only {} bytes of data are left (response cut short?)",
            c.left()
        ));
    }
    // each array decoded big-endian straight into its element type, in one pass
    fn be4<T>(s: &[u8], f: impl Fn([u8; 4]) -> T) -> Vec<T> {
        s.chunks_exact(4)
            .map(|w| f([w[0], w[1], w[2], w[3]]))
            .collect()
    }
    Ok(match bt {
        BaseType::Byte if scalar => {
            let s = c.take(4, &what)?;
            Atoms::U8(vec![s[3]])
        }
        BaseType::Byte => {
            let padded = count.div_ceil(4) * 4;
            let s = c.take(padded, &what)?;
            Atoms::U8(s[..count].to_vec())
        }
        // Int16 and UInt16 travel as 4-byte words: their low 2 bytes hold the value
        BaseType::Int16 => Atoms::I16(be4(c.take(count * 4, &what)?, |w| {
            i16::from_be_bytes([w[2], w[3]])
        })),
        BaseType::UInt16 => Atoms::U16(be4(c.take(count * 4, &what)?, |w| {
            u16::from_be_bytes([w[2], w[3]])
        })),
        BaseType::Int32 => Atoms::I32(be4(c.take(count * 4, &what)?, i32::from_be_bytes)),
        BaseType::UInt32 => Atoms::U32(be4(c.take(count * 4, &what)?, u32::from_be_bytes)),
        BaseType::Float32 => Atoms::F32(be4(c.take(count * 4, &what)?, f32::from_be_bytes)),
        BaseType::Float64 => {
            let s = c.take(count * 8, &what)?;
            Atoms::F64(
                s.chunks_exact(8)
                    .map(|w| f64::from_be_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
                    .collect(),
            )
        }
        BaseType::String | BaseType::Url => {
            let mut out = Vec::with_capacity(count);
            for _ in 0..count {
                let len = c.u32(&what)? as usize;
                let s = c.take(len.div_ceil(4) * 4, &what)?;
                out.push(s[..len].to_vec());
            }
            Atoms::Str(out)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse::{parse_dds, Parsed};
    use super::*;

    fn dds(t: &str) -> Vec<DdsNode> {
        match parse_dds(t.as_bytes()).unwrap() {
            Parsed::Ok(d) => d.vars,
            Parsed::Error(e) => panic!("{e:?}"),
        }
    }

    #[test]
    fn scalars_arrays_strings() {
        let vars = dds("Dataset { Byte b; Int16 s[2]; Byte a[5]; String t; Float64 d; } x;");
        let mut body = vec![0, 0, 0, 7];
        body.extend([0, 0, 0, 2, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 3]);
        body.extend([0, 0, 0, 5, 0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0]);
        body.extend([0, 0, 0, 2, b'h', b'i', 0, 0]);
        body.extend(2.5f64.to_be_bytes());
        let got = decode(&vars, &body).unwrap();
        assert_eq!(got[0], Datum::Atomic(Atoms::U8(vec![7])));
        assert_eq!(got[1], Datum::Atomic(Atoms::I16(vec![-2, 3])));
        assert_eq!(got[2], Datum::Atomic(Atoms::U8(vec![1, 2, 3, 4, 5])));
        assert_eq!(got[3], Datum::Atomic(Atoms::Str(vec![b"hi".to_vec()])));
        assert_eq!(got[4], Datum::Atomic(Atoms::F64(vec![2.5])));
    }

    #[test]
    fn sequences_and_structure_arrays() {
        let vars = dds("Dataset { Sequence { Int32 i; } q; Structure { UInt32 u; } s[2]; } x;");
        let mut body = vec![
            0x5A, 0, 0, 0, 0, 0, 0, 1, 0x5A, 0, 0, 0, 0, 0, 0, 2, 0xA5, 0, 0, 0,
        ];
        body.extend([0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0, 8]);
        let got = decode(&vars, &body).unwrap();
        assert_eq!(
            got[0],
            Datum::Records(vec![
                vec![Datum::Atomic(Atoms::I32(vec![1]))],
                vec![Datum::Atomic(Atoms::I32(vec![2]))]
            ])
        );
        assert_eq!(
            got[1],
            Datum::Elements(vec![
                vec![Datum::Atomic(Atoms::U32(vec![9]))],
                vec![Datum::Atomic(Atoms::U32(vec![8]))]
            ])
        );
    }

    #[test]
    fn short_or_inconsistent_bodies_are_errors() {
        let vars = dds("Dataset { Int32 a[x = 1000000000]; } x;");
        let e = decode(&vars, &[0x3b, 0x9a, 0xca, 0, 0x3b, 0x9a, 0xca, 0]).unwrap_err();
        assert!(e.contains("cut short"), "{e}");
        let e = decode(&vars, &[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]).unwrap_err();
        assert!(e.contains("DDS declares"), "{e}");
        let vars = dds("Dataset { Sequence { Int32 i; } q; } x;");
        assert!(decode(&vars, &[0x11, 0, 0, 0]).is_err());
        assert!(decode(&vars, &[0x5A, 0, 0, 0, 0, 0]).is_err());
    }
}
