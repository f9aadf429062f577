//! netCDF types: the 12 atomic types and user-defined types (enum, opaque, vlen, compound).

use crate::{GroupId, TypeId};

/// One of the 12 atomic netCDF types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AtomicType {
    /// NC_BYTE, signed 8-bit.
    Byte,
    /// NC_CHAR, 8-bit character.
    Char,
    /// NC_SHORT, signed 16-bit.
    Short,
    /// NC_INT, signed 32-bit.
    Int,
    /// NC_FLOAT, IEEE 754 single.
    Float,
    /// NC_DOUBLE, IEEE 754 double.
    Double,
    /// NC_UBYTE, unsigned 8-bit.
    UByte,
    /// NC_USHORT, unsigned 16-bit.
    UShort,
    /// NC_UINT, unsigned 32-bit.
    UInt,
    /// NC_INT64, signed 64-bit.
    Int64,
    /// NC_UINT64, unsigned 64-bit.
    UInt64,
    /// NC_STRING, variable-length string.
    String,
}

impl AtomicType {
    /// All atomic types in netCDF type-code order (1..=12).
    pub const ALL: [AtomicType; 12] = [
        AtomicType::Byte,
        AtomicType::Char,
        AtomicType::Short,
        AtomicType::Int,
        AtomicType::Float,
        AtomicType::Double,
        AtomicType::UByte,
        AtomicType::UShort,
        AtomicType::UInt,
        AtomicType::Int64,
        AtomicType::UInt64,
        AtomicType::String,
    ];

    /// The CDL keyword (`byte`, `char`, `short`, `int`, `float`, `double`, `ubyte`, ...).
    pub fn cdl_name(self) -> &'static str {
        match self {
            AtomicType::Byte => "byte",
            AtomicType::Char => "char",
            AtomicType::Short => "short",
            AtomicType::Int => "int",
            AtomicType::Float => "float",
            AtomicType::Double => "double",
            AtomicType::UByte => "ubyte",
            AtomicType::UShort => "ushort",
            AtomicType::UInt => "uint",
            AtomicType::Int64 => "int64",
            AtomicType::UInt64 => "uint64",
            AtomicType::String => "string",
        }
    }

    /// The netCDF type code (NC_BYTE = 1 ... NC_STRING = 12).
    pub fn code(self) -> u32 {
        match self {
            AtomicType::Byte => 1,
            AtomicType::Char => 2,
            AtomicType::Short => 3,
            AtomicType::Int => 4,
            AtomicType::Float => 5,
            AtomicType::Double => 6,
            AtomicType::UByte => 7,
            AtomicType::UShort => 8,
            AtomicType::UInt => 9,
            AtomicType::Int64 => 10,
            AtomicType::UInt64 => 11,
            AtomicType::String => 12,
        }
    }

    /// The type for a netCDF type code, if it is an atomic one.
    pub fn from_code(code: u32) -> Option<AtomicType> {
        AtomicType::ALL
            .get((code as usize).checked_sub(1)?)
            .copied()
    }

    /// The integer type of `size` bytes (1, 2, 4 or 8), signed or not; `None` for another size.
    pub fn integer(size: usize, signed: bool) -> Option<AtomicType> {
        Some(match (size, signed) {
            (1, true) => AtomicType::Byte,
            (1, false) => AtomicType::UByte,
            (2, true) => AtomicType::Short,
            (2, false) => AtomicType::UShort,
            (4, true) => AtomicType::Int,
            (4, false) => AtomicType::UInt,
            (8, true) => AtomicType::Int64,
            (8, false) => AtomicType::UInt64,
            _ => return None,
        })
    }

    /// Size in bytes of one element in memory and in files (strings: size of a pointer, 8).
    pub fn size(self) -> usize {
        match self {
            AtomicType::Byte | AtomicType::Char | AtomicType::UByte => 1,
            AtomicType::Short | AtomicType::UShort => 2,
            AtomicType::Int | AtomicType::UInt | AtomicType::Float => 4,
            AtomicType::Double | AtomicType::Int64 | AtomicType::UInt64 | AtomicType::String => 8,
        }
    }

    /// True for the integer types (not char).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            AtomicType::Byte
                | AtomicType::Short
                | AtomicType::Int
                | AtomicType::UByte
                | AtomicType::UShort
                | AtomicType::UInt
                | AtomicType::Int64
                | AtomicType::UInt64
        )
    }

    /// True for the types of the classic data model (byte, char, short, int, float, double).
    pub fn is_classic(self) -> bool {
        matches!(
            self,
            AtomicType::Byte
                | AtomicType::Char
                | AtomicType::Short
                | AtomicType::Int
                | AtomicType::Float
                | AtomicType::Double
        )
    }

    /// True for the types CDF-5 adds to the classic ones (ubyte .. uint64).
    pub fn is_cdf5_only(self) -> bool {
        matches!(
            self,
            AtomicType::UByte
                | AtomicType::UShort
                | AtomicType::UInt
                | AtomicType::Int64
                | AtomicType::UInt64
        )
    }
}

/// A variable's or attribute's type: atomic, or a user-defined type by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NcType {
    /// One of the 12 atomic types.
    Atomic(AtomicType),
    /// A user-defined type, index into [`crate::Dataset::types`].
    User(TypeId),
}

impl From<AtomicType> for NcType {
    fn from(t: AtomicType) -> Self {
        NcType::Atomic(t)
    }
}

impl NcType {
    /// The atomic type, if this is one.
    pub fn as_atomic(self) -> Option<AtomicType> {
        match self {
            NcType::Atomic(a) => Some(a),
            NcType::User(_) => None,
        }
    }
}

/// One member of an enum type.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMember {
    /// Member name.
    pub name: String,
    /// Member value (fits the base type; i128 holds every int64 and uint64).
    pub value: i128,
}

/// One field of a compound type.
#[derive(Debug, Clone, PartialEq)]
pub struct CompoundField {
    /// Field name.
    pub name: String,
    /// Field type.
    pub ty: NcType,
    /// Array dimensions of the field (empty for a scalar field).
    pub dims: Vec<usize>,
    /// Byte offset of the field inside the compound, as the file or native layout says.
    pub offset: usize,
}

/// The kind of a user-defined type.
#[derive(Debug, Clone, PartialEq)]
pub enum UserTypeKind {
    /// `base enum Name { a = 1, b = 2 }`
    Enum {
        /// The integer base type.
        base: AtomicType,
        /// Members in definition order.
        members: Vec<EnumMember>,
    },
    /// `opaque(size) Name`
    Opaque {
        /// Size in bytes of one value.
        size: usize,
    },
    /// `base(*) Name`
    Vlen {
        /// Element type.
        base: NcType,
    },
    /// `compound Name { ... }`
    Compound {
        /// Total size in bytes (native layout with alignment).
        size: usize,
        /// Fields in definition order.
        fields: Vec<CompoundField>,
    },
}

/// A user-defined type and the group that defines it.
#[derive(Debug, Clone, PartialEq)]
pub struct UserType {
    /// Type name.
    pub name: String,
    /// The group whose `types:` section defines it.
    pub group: GroupId,
    /// What it is.
    pub kind: UserTypeKind,
}
