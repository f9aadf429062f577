//! The datatype message (spec IV.A.2.d): class and version in one byte, 24 class bits, the
//! element size, then the class's properties.
//!
//! Versions are those libhdf5 1.10 writes for netCDF-C 4.9.0: version 1 for atomic types,
//! strings, opaque types and references; version 3 for compounds, enums and the arrays inside
//! compounds (names not padded, member offsets in as few bytes as the size needs); a vlen takes
//! the version of its base type.

use super::{bytes_for, Put};

/// A compound member: name, byte offset, type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub name: String,
    pub offset: u32,
    pub ty: Datatype,
}

/// An HDF5 datatype as the writer needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Datatype {
    /// Two's complement or unsigned integer of `size` bytes.
    Int {
        size: u32,
        signed: bool,
        big: bool,
    },
    /// IEEE float of 4 or 8 bytes.
    Float {
        size: u32,
        big: bool,
    },
    /// Fixed-length ASCII string, NUL-terminated (netCDF's `char` and text attributes).
    FixedString {
        size: u32,
    },
    /// Variable-length UTF-8 string (netCDF's `string`).
    VarString,
    Opaque {
        size: u32,
    },
    Compound {
        size: u32,
        members: Vec<Member>,
    },
    /// Fixed-size array (a compound field with dimensions).
    Array {
        dims: Vec<u32>,
        base: Box<Datatype>,
    },
    /// Enumeration: base integer type, member names, and their values (one base element
    /// each, concatenated in the base type's byte order).
    Enum {
        base: Box<Datatype>,
        names: Vec<String>,
        values: Vec<u8>,
    },
    /// Variable-length sequence of `base`.
    Vlen {
        base: Box<Datatype>,
    },
    /// Object reference (an object header address).
    ObjectRef,
}

/// Bytes of a global heap reference in memory and on disk: sequence length, collection
/// address, object index (vlen strings and sequences).
pub(crate) const HEAP_REF: u32 = 16;

impl Datatype {
    /// Bytes of one element.
    pub fn size(&self) -> u32 {
        match self {
            Datatype::Int { size, .. }
            | Datatype::Float { size, .. }
            | Datatype::FixedString { size }
            | Datatype::Opaque { size }
            | Datatype::Compound { size, .. } => *size,
            Datatype::Array { dims, base } => {
                dims.iter().fold(base.size(), |a, &d| a.saturating_mul(d))
            }
            Datatype::Enum { base, .. } => base.size(),
            Datatype::VarString | Datatype::Vlen { .. } => HEAP_REF,
            Datatype::ObjectRef => 8,
        }
    }

    fn version(&self) -> u8 {
        match self {
            Datatype::Compound { .. } | Datatype::Enum { .. } | Datatype::Array { .. } => 3,
            Datatype::Vlen { base } => base.version(),
            _ => 1,
        }
    }

    /// Bytes of the encoded message.
    pub fn encoded(&self) -> Vec<u8> {
        let mut b = Vec::new();
        self.encode(&mut b);
        b
    }

    /// Append the encoded message.
    pub fn encode(&self, b: &mut Vec<u8>) {
        let v = self.version() << 4;
        match self {
            Datatype::Int { size, signed, big } => {
                b.u8(v);
                b.u8(u8::from(*big) | if *signed { 0x08 } else { 0 });
                b.u16(0);
                b.u32(*size);
                b.u16(0); // bit offset
                b.u16((*size * 8) as u16); // precision
            }
            Datatype::Float { size, big } => {
                b.u8(v | 1);
                // mantissa normalization "implied", sign at the top bit
                b.u8(u8::from(*big) | 0x20);
                b.u8((*size * 8 - 1) as u8);
                b.u8(0);
                b.u32(*size);
                b.u16(0);
                b.u16((*size * 8) as u16);
                if *size == 4 {
                    b.extend_from_slice(&[23, 8, 0, 23]);
                    b.u32(127);
                } else {
                    b.extend_from_slice(&[52, 11, 0, 52]);
                    b.u32(1023);
                }
            }
            Datatype::FixedString { size } => {
                b.u8(v | 3);
                b.extend_from_slice(&[0, 0, 0]); // NUL-terminated, ASCII
                b.u32(*size);
            }
            Datatype::VarString => {
                b.u8(v | 9);
                b.u8(0x01); // a string, NUL-terminated
                b.u8(0x01); // UTF-8
                b.u8(0);
                b.u32(HEAP_REF);
                // base: unsigned char
                Datatype::Int {
                    size: 1,
                    signed: false,
                    big: false,
                }
                .encode(b);
            }
            Datatype::Opaque { size } => {
                b.u8(v | 5);
                b.extend_from_slice(&[0, 0, 0]); // no tag
                b.u32(*size);
            }
            Datatype::Compound { size, members } => {
                b.u8(v | 6);
                b.u16(members.len() as u16);
                b.u8(0);
                b.u32(*size);
                let width = bytes_for(u64::from(*size));
                for m in members {
                    b.extend_from_slice(m.name.as_bytes());
                    b.u8(0);
                    b.uint(u64::from(m.offset), width);
                    m.ty.encode(b);
                }
            }
            Datatype::Array { dims, base } => {
                b.u8(v | 10);
                b.extend_from_slice(&[0, 0, 0]);
                b.u32(self.size());
                b.u8(dims.len() as u8);
                for &d in dims {
                    b.u32(d);
                }
                base.encode(b);
            }
            Datatype::Enum {
                base,
                names,
                values,
            } => {
                b.u8(v | 8);
                b.u16(names.len() as u16);
                b.u8(0);
                b.u32(base.size());
                base.encode(b);
                for n in names {
                    b.extend_from_slice(n.as_bytes());
                    b.u8(0);
                }
                b.extend_from_slice(values);
            }
            Datatype::Vlen { base } => {
                b.u8(v | 9);
                b.extend_from_slice(&[0, 0, 0]); // a sequence
                b.u32(HEAP_REF);
                base.encode(b);
            }
            Datatype::ObjectRef => {
                b.u8(v | 7);
                b.extend_from_slice(&[0, 0, 0]); // object reference
                b.u32(8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    // expected bytes: the datatype messages netCDF-C 4.9.0 (libhdf5 1.10) writes for these
    // types, read from `ncgen -4` output
    #[test]
    fn atomic_types_as_netcdf_c_writes_them() {
        let int = Datatype::Int {
            size: 4,
            signed: true,
            big: false,
        };
        assert_eq!(hex(&int.encoded()), "100800000400000000002000");
        let f = Datatype::Float {
            size: 4,
            big: false,
        };
        assert_eq!(
            hex(&f.encoded()),
            "11201f000400000000002000170800177f000000"
        );
        let fbe = Datatype::Float { size: 4, big: true };
        assert_eq!(
            hex(&fbe.encoded()),
            "11211f000400000000002000170800177f000000"
        );
        let d = Datatype::Float {
            size: 8,
            big: false,
        };
        assert_eq!(
            hex(&d.encoded()),
            "11203f000800000000004000340b0034ff030000"
        );
        assert_eq!(
            hex(&Datatype::VarString.encoded()),
            "1901010010000000100000000100000000000800"
        );
        assert_eq!(
            hex(&Datatype::FixedString { size: 2 }.encoded()),
            "1300000002000000"
        );
        assert_eq!(
            hex(&Datatype::Opaque { size: 5 }.encoded()),
            "1500000005000000"
        );
        let vl = Datatype::Vlen {
            base: Box::new(int.clone()),
        };
        assert_eq!(
            hex(&vl.encoded()),
            "1900000010000000100800000400000000002000"
        );
    }

    #[test]
    fn enum_and_compound_are_version_3() {
        let e = Datatype::Enum {
            base: Box::new(Datatype::Int {
                size: 1,
                signed: true,
                big: false,
            }),
            names: vec!["A".into(), "B".into()],
            values: vec![1, 2],
        };
        assert_eq!(
            hex(&e.encoded()),
            "38020000010000001008000001000000000008004100420001 02".replace(' ', "")
        );
        let c = Datatype::Compound {
            size: 16,
            members: vec![
                Member {
                    name: "d".into(),
                    offset: 0,
                    ty: Datatype::Float {
                        size: 8,
                        big: false,
                    },
                },
                Member {
                    name: "r".into(),
                    offset: 8,
                    ty: Datatype::ObjectRef,
                },
            ],
        };
        let b = c.encoded();
        // version 3: names not padded, offsets in one byte (the size is below 256)
        assert_eq!(&b[..8], &[0x36, 2, 0, 0, 16, 0, 0, 0]);
        assert_eq!(&b[8..11], b"d\0\0");
        assert_eq!(&b[11..15], &[0x11, 0x20, 0x3f, 0]);
        assert_eq!(&b[31..34], b"r\0\x08");
        assert_eq!(&b[34..], &[0x17, 0, 0, 0, 8, 0, 0, 0]);
        assert_eq!(c.size(), 16);
        let arr = Datatype::Array {
            dims: vec![2, 3],
            base: Box::new(Datatype::Float {
                size: 8,
                big: false,
            }),
        };
        assert_eq!(arr.size(), 48);
        assert_eq!(
            &arr.encoded()[..17],
            &[0x3a, 0, 0, 0, 48, 0, 0, 0, 2, 2, 0, 0, 0, 3, 0, 0, 0]
        );
    }
}
