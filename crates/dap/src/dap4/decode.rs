//! The data part of a DAP4 response (DAP4 Volume 1, "The Data Response"): the top-level
//! variables in DMR order (a group's variables, then its subgroups'), each followed by its
//! CRC-32 when the response has checksums. Fixed-size values are packed in the byte order the
//! first chunk header gives; a string or opaque value is an 8-byte count and its bytes; a
//! sequence an 8-byte record count and its records; a structure its fields in order.
//!
//! Values are read as netCDF-C 4.9.0 (`d4data.c`) reads them into memory, including two of its
//! ways: an opaque value is cut or zero-padded to the one opaque size (16) — and the reading
//! goes on after the bytes kept, so the tail of a longer one is read as the next field of a
//! structure record —, and a structure
//! field with dimensions gets only its first element from the data (the rest are zero or
//! empty), the following fields being read from the bytes after that first element. (Where a
//! structure array element starts, netCDF-C computes from its in-memory size for structures
//! of fixed size; here it is where the data puts it: the same unless the structure has padding.)

use nc_dataset::{AtomicType, NcString, Values};

use super::dmr::{Dmr, Sub};

/// How reading the data failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DecodeError {
    /// The data ends early.
    Truncated {
        var: String,
        at: usize,
        wanted: u64,
        left: usize,
    },
    /// A count in the data (or a declared size) asks for more than the data can hold.
    TooMany {
        var: String,
        at: usize,
        what: &'static str,
        count: u64,
        left: usize,
    },
    /// The checksum after a variable differs from its bytes'.
    Checksum { var: String },
    /// The DMR's `_DAP4_Checksum_CRC32` differs from the data's.
    ChecksumAttribute { var: String },
    /// The DMR's types cannot be read (a bug of the builder or a type netCDF-C cannot read).
    Type { var: String, what: String },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated { var, at, wanted, left } => write!(
                f,
                "variable {var}: data ends early: {wanted} bytes needed at byte {at} of the data, {left} left"
            ),
            DecodeError::TooMany { var, at, what, count, left } => write!(
                f,
                "variable {var}: {what} {count} at byte {at} of the data is more than the {left} bytes left can hold"
            ),
            DecodeError::Checksum { var } => write!(f, "variable {var}: checksum mismatch"),
            DecodeError::ChecksumAttribute { var } => write!(
                f,
                "variable {var}: the data's checksum differs from its _DAP4_Checksum_CRC32 attribute"
            ),
            DecodeError::Type { var, what } => write!(f, "variable {var}: {what}"),
        }
    }
}

type R<T> = Result<T, DecodeError>;

/// What the decoder needs to know besides the tree.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataLayout {
    pub little_endian: bool,
    pub checksums: bool,
    pub verify: bool,
}

/// One top-level variable read: its node and values (row-major, all elements).
pub(crate) struct Decoded {
    pub var: usize,
    pub values: Values,
    /// opaque values whose length was not the opaque size
    pub resized_opaques: u64,
}

/// The top-level variables in data order.
pub(crate) fn toplevel(dmr: &Dmr) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![dmr.root];
    while let Some(g) = stack.pop() {
        out.extend(dmr.nodes[g].vars.iter().copied());
        stack.extend(dmr.nodes[g].groups.iter().rev());
    }
    out
}

/// Read every top-level variable.
pub(crate) fn decode(dmr: &Dmr, data: &[u8], layout: DataLayout) -> R<Vec<Decoded>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    for v in toplevel(dmr) {
        let name = super::dmr::make_fqn(dmr, v);
        let mut c = Cursor {
            dmr,
            data,
            pos,
            little: layout.little_endian,
            var: &name,
            resized: 0,
        };
        let node = &dmr.nodes[v];
        let ty = c.basetype(v)?;
        let n = c.dim_product(&node.dims)?;
        // the variable's extent, walking its real layout
        c.skip(ty, n)?;
        let end = c.pos;
        let attr_sum = checksum_attribute(dmr, v);
        if layout.checksums || attr_sum.is_some() {
            let b = c.take(4)?;
            let sent = if layout.little_endian {
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            } else {
                u32::from_be_bytes([b[0], b[1], b[2], b[3]])
            };
            if layout.verify {
                if super::crc32(&data[pos..end]) != sent {
                    return Err(DecodeError::Checksum { var: name });
                }
                if attr_sum.is_some_and(|a| a != sent) {
                    return Err(DecodeError::ChecksumAttribute { var: name });
                }
            }
        }
        let next = c.pos;
        // the values, element by element from the start
        c.pos = pos;
        let values = match c.fixed_atomic(ty) {
            // numbers, chars and enums in one piece
            Some(a) => {
                let b = c.take(
                    usize::try_from(n)
                        .unwrap_or(usize::MAX)
                        .saturating_mul(a.size()),
                )?;
                let v = if layout.little_endian {
                    Values::from_le_bytes(a, b)
                } else {
                    Values::from_be_bytes(a, b)
                };
                v.ok_or_else(|| c.type_err("unreadable atomic type"))?
            }
            None => {
                // each element from where the data puts it (netCDF-C walks to it), since
                // reading one may stop short of its end or run past it
                let mut values = c.empty(ty)?;
                let mut start = pos;
                for _ in 0..n {
                    c.pos = start;
                    let one = c.fill(ty)?;
                    values.extend_from(&one);
                    c.pos = start;
                    c.skip(ty, 1)?;
                    start = c.pos;
                }
                values
            }
        };
        out.push(Decoded {
            var: v,
            values,
            resized_opaques: c.resized,
        });
        pos = next;
    }
    Ok(out)
}

/// A variable's `_DAP4_Checksum_CRC32` attribute value (C's `sscanf("%u")`).
fn checksum_attribute(dmr: &Dmr, v: usize) -> Option<u32> {
    dmr.nodes[v]
        .attributes
        .iter()
        .map(|&a| &dmr.nodes[a])
        .find(|a| a.name == "_DAP4_Checksum_CRC32")
        .map(|a| {
            a.values
                .first()
                .and_then(|s| super::dmr::scan_u64(s))
                .map_or(0, |x| x as u32)
        })
}

struct Cursor<'a> {
    dmr: &'a Dmr,
    data: &'a [u8],
    pos: usize,
    little: bool,
    var: &'a str,
    resized: u64,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| DecodeError::Truncated {
                var: self.var.to_string(),
                at: self.pos,
                wanted: n as u64,
                left: self.left(),
            })?;
        let b = &self.data[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    fn counter(&mut self) -> R<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(if self.little {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        })
    }

    fn type_err(&self, what: impl Into<String>) -> DecodeError {
        DecodeError::Type {
            var: self.var.to_string(),
            what: what.into(),
        }
    }

    /// The fixed-size atomic type behind `t` (an enum's base), if it is one.
    fn fixed_atomic(&self, t: usize) -> Option<AtomicType> {
        let node = &self.dmr.nodes[t];
        match node.sub {
            Sub::Atomic(AtomicType::String) => None,
            Sub::Atomic(a) => Some(a),
            Sub::Enum => node.basetype.and_then(|b| self.fixed_atomic(b)),
            _ => None,
        }
    }

    fn basetype(&self, v: usize) -> R<usize> {
        self.dmr.nodes[v]
            .basetype
            .ok_or_else(|| self.type_err("no type"))
    }

    fn dim_product(&self, dims: &[usize]) -> R<u64> {
        dims.iter()
            .try_fold(1u64, |a, &d| a.checked_mul(self.dmr.nodes[d].dim_size))
            .ok_or_else(|| self.type_err("the product of its dimensions overflows"))
    }

    /// The fewest data bytes one value of type `t` takes (string, opaque, sequence: 8).
    fn min_size(&self, t: usize, depth: usize) -> u64 {
        if depth > 128 {
            return 0;
        }
        let n = &self.dmr.nodes[t];
        match n.sub {
            Sub::Atomic(AtomicType::String) | Sub::Opaque | Sub::Seq => 8,
            Sub::Atomic(a) => a.size() as u64,
            Sub::Enum => n.basetype.map_or(0, |b| self.min_size(b, depth + 1)),
            Sub::Struct => n
                .vars
                .iter()
                .map(|&f| {
                    let fd = &self.dmr.nodes[f];
                    let p = self.dim_product(&fd.dims).unwrap_or(u64::MAX);
                    fd.basetype
                        .map_or(0, |b| self.min_size(b, depth + 1))
                        .saturating_mul(p)
                })
                .fold(0u64, u64::saturating_add),
            Sub::None => 0,
        }
    }

    /// Refuse `count` values of type `t` when the bytes left cannot hold them (a value taking no
    /// bytes counts as one, so that work and memory stay bounded by the response's size).
    fn check_count(&self, t: usize, count: u64, what: &'static str) -> R<()> {
        let need = count.saturating_mul(self.min_size(t, 0).max(1));
        if need > self.left() as u64 {
            return Err(DecodeError::TooMany {
                var: self.var.to_string(),
                at: self.pos,
                what,
                count,
                left: self.left(),
            });
        }
        Ok(())
    }

    /// Skip `n` values of type `t`, as laid out in the data.
    fn skip(&mut self, t: usize, n: u64) -> R<()> {
        self.check_count(t, n, "element count")?;
        let node = &self.dmr.nodes[t];
        match node.sub {
            Sub::Atomic(AtomicType::String) | Sub::Opaque => {
                for _ in 0..n {
                    let c = self.counter()?;
                    let c = usize::try_from(c).unwrap_or(usize::MAX);
                    self.take(c)?;
                }
            }
            Sub::Atomic(a) => {
                let bytes = n.saturating_mul(a.size() as u64);
                self.take(usize::try_from(bytes).unwrap_or(usize::MAX))?;
            }
            Sub::Enum => {
                let b = node
                    .basetype
                    .ok_or_else(|| self.type_err("enum without base"))?;
                self.skip(b, n)?;
            }
            Sub::Struct => {
                for _ in 0..n {
                    for &f in &node.vars {
                        let fnode = &self.dmr.nodes[f];
                        let p = self.dim_product(&fnode.dims)?;
                        let ft = self.basetype(f)?;
                        self.skip(ft, p)?;
                    }
                }
            }
            Sub::Seq => {
                let rec = node
                    .basetype
                    .ok_or_else(|| self.type_err("sequence without records"))?;
                for _ in 0..n {
                    let c = self.counter()?;
                    self.check_count(rec, c, "record count")?;
                    self.skip(rec, c)?;
                }
            }
            Sub::None => return Err(self.type_err("not a type")),
        }
        Ok(())
    }

    /// An empty vector for values of type `t`.
    fn empty(&self, t: usize) -> R<Values> {
        let node = &self.dmr.nodes[t];
        Ok(match node.sub {
            Sub::Atomic(a) => Values::empty(a),
            Sub::Enum => {
                let b = node
                    .basetype
                    .ok_or_else(|| self.type_err("enum without base"))?;
                self.empty(b)?
            }
            Sub::Opaque => Values::Opaque {
                size: node.opaque_size,
                bytes: Vec::new(),
            },
            Sub::Struct => Values::Compound(Vec::new()),
            Sub::Seq => Values::Vlen(Vec::new()),
            Sub::None => return Err(self.type_err("not a type")),
        })
    }

    /// One zero value of type `t` (what netCDF-C's cleared memory holds).
    fn zero(&self, t: usize, depth: usize) -> R<Values> {
        if depth > 128 {
            return Err(self.type_err("types nested too deeply"));
        }
        let node = &self.dmr.nodes[t];
        Ok(match node.sub {
            Sub::Atomic(AtomicType::String) => Values::String(vec![None]),
            Sub::Atomic(a) => {
                Values::from_le_bytes(a, &vec![0u8; a.size()]).unwrap_or(Values::empty(a))
            }
            Sub::Enum => {
                let b = node
                    .basetype
                    .ok_or_else(|| self.type_err("enum without base"))?;
                self.zero(b, depth + 1)?
            }
            Sub::Opaque => Values::Opaque {
                size: node.opaque_size,
                bytes: vec![0; node.opaque_size],
            },
            Sub::Struct => {
                let mut rec = Vec::new();
                for &f in &node.vars {
                    let fnode = &self.dmr.nodes[f];
                    let p = self.dim_product(&fnode.dims)?;
                    let z = self.zero(self.basetype(f)?, depth + 1)?;
                    let p = usize::try_from(p).map_err(|_| self.type_err("field too large"))?;
                    rec.push(Values::repeat_first(&z, p).unwrap_or(z));
                }
                Values::Compound(vec![rec])
            }
            Sub::Seq => {
                let rec = node
                    .basetype
                    .ok_or_else(|| self.type_err("sequence without records"))?;
                Values::Vlen(vec![self.empty(rec)?])
            }
            Sub::None => return Err(self.type_err("not a type")),
        })
    }

    /// Read one value of type `t` as netCDF-C fills it into memory.
    fn fill(&mut self, t: usize) -> R<Values> {
        let node = &self.dmr.nodes[t];
        Ok(match node.sub {
            Sub::Atomic(AtomicType::String) => {
                let c = self.counter()?;
                let b = self.take(usize::try_from(c).unwrap_or(usize::MAX))?;
                Values::String(vec![Some(NcString::from(b))])
            }
            Sub::Atomic(a) => {
                let b = self.take(a.size())?;
                let v = if self.little {
                    Values::from_le_bytes(a, b)
                } else {
                    Values::from_be_bytes(a, b)
                };
                v.ok_or_else(|| self.type_err("unreadable atomic type"))?
            }
            Sub::Enum => {
                let b = node
                    .basetype
                    .ok_or_else(|| self.type_err("enum without base"))?;
                self.fill(b)?
            }
            Sub::Opaque => {
                let size = node.opaque_size;
                let c = usize::try_from(self.counter()?).unwrap_or(usize::MAX);
                if c != size {
                    self.resized += 1;
                }
                // netCDF-C moves past only the bytes it copies: a longer value leaves its
                // tail to be read as what follows it (inside a structure record)
                let b = self.take(c.min(size))?;
                let mut bytes = vec![0u8; size];
                let n = b.len().min(size);
                bytes[..n].copy_from_slice(&b[..n]);
                Values::Opaque { size, bytes }
            }
            Sub::Struct => {
                let mut rec = Vec::with_capacity(node.vars.len());
                for &f in &node.vars {
                    let fnode = &self.dmr.nodes[f];
                    let p = self.dim_product(&fnode.dims)?;
                    let ft = self.basetype(f)?;
                    // one element from the data, the others as cleared memory (netCDF-C)
                    let mut v = self.fill(ft)?;
                    if p == 0 {
                        v = v.slice(0, 0);
                    } else if p != 1 {
                        let z = self.zero(ft, 0)?;
                        let rest = usize::try_from(p.saturating_sub(1))
                            .map_err(|_| self.type_err("field too large"))?;
                        if let Some(zs) = Values::repeat_first(&z, rest) {
                            v.extend_from(&zs);
                        }
                    }
                    rec.push(v);
                }
                Values::Compound(vec![rec])
            }
            Sub::Seq => {
                let rec = node
                    .basetype
                    .ok_or_else(|| self.type_err("sequence without records"))?;
                let c = self.counter()?;
                self.check_count(rec, c, "record count")?;
                let mut records = self.empty(rec)?;
                for _ in 0..c {
                    let one = self.fill(rec)?;
                    records.extend_from(&one);
                }
                Values::Vlen(vec![records])
            }
            Sub::None => return Err(self.type_err("not a type")),
        })
    }
}
