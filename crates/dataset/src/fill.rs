//! Default fill values (netcdf.h `NC_FILL_*`).

use crate::{AtomicType, NcString, Values};

/// NC_FILL_BYTE
pub const FILL_BYTE: i8 = -127;
/// NC_FILL_CHAR
pub const FILL_CHAR: u8 = 0;
/// NC_FILL_SHORT
pub const FILL_SHORT: i16 = -32767;
/// NC_FILL_INT
pub const FILL_INT: i32 = -2147483647;
/// NC_FILL_FLOAT
pub const FILL_FLOAT: f32 = 9.969_21e36;
/// NC_FILL_DOUBLE
pub const FILL_DOUBLE: f64 = 9.969_209_968_386_869e36;
/// NC_FILL_UBYTE
pub const FILL_UBYTE: u8 = 255;
/// NC_FILL_USHORT
pub const FILL_USHORT: u16 = 65535;
/// NC_FILL_UINT
pub const FILL_UINT: u32 = 4_294_967_295;
/// NC_FILL_INT64
pub const FILL_INT64: i64 = -9_223_372_036_854_775_806;
/// NC_FILL_UINT64
pub const FILL_UINT64: u64 = 18_446_744_073_709_551_614;

/// A one-element vector holding the default fill value of `t`.
pub fn default_fill(t: AtomicType) -> Values {
    match t {
        AtomicType::Byte => Values::Byte(vec![FILL_BYTE]),
        AtomicType::Char => Values::Char(vec![FILL_CHAR]),
        AtomicType::Short => Values::Short(vec![FILL_SHORT]),
        AtomicType::Int => Values::Int(vec![FILL_INT]),
        AtomicType::Float => Values::Float(vec![FILL_FLOAT]),
        AtomicType::Double => Values::Double(vec![FILL_DOUBLE]),
        AtomicType::UByte => Values::UByte(vec![FILL_UBYTE]),
        AtomicType::UShort => Values::UShort(vec![FILL_USHORT]),
        AtomicType::UInt => Values::UInt(vec![FILL_UINT]),
        AtomicType::Int64 => Values::Int64(vec![FILL_INT64]),
        AtomicType::UInt64 => Values::UInt64(vec![FILL_UINT64]),
        AtomicType::String => Values::String(vec![Some(NcString::default())]),
    }
}
