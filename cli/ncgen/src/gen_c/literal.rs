//! C spellings of netCDF values and names: numeric literals that read back bit for bit,
//! escaped string literals, and the C types that hold each netCDF type in memory.

use nc_dataset::AtomicType;

/// The C type that holds one value of an atomic type in memory (netcdf.h's conventions).
pub(crate) fn c_type(t: AtomicType) -> &'static str {
    match t {
        AtomicType::Byte => "signed char",
        AtomicType::Char => "char",
        AtomicType::Short => "short",
        AtomicType::Int => "int",
        AtomicType::Float => "float",
        AtomicType::Double => "double",
        AtomicType::UByte => "unsigned char",
        AtomicType::UShort => "unsigned short",
        AtomicType::UInt => "unsigned int",
        AtomicType::Int64 => "long long",
        AtomicType::UInt64 => "unsigned long long",
        AtomicType::String => "char *",
    }
}

/// The netcdf.h constant naming an atomic type.
pub(crate) fn nc_type_const(t: AtomicType) -> &'static str {
    match t {
        AtomicType::Byte => "NC_BYTE",
        AtomicType::Char => "NC_CHAR",
        AtomicType::Short => "NC_SHORT",
        AtomicType::Int => "NC_INT",
        AtomicType::Float => "NC_FLOAT",
        AtomicType::Double => "NC_DOUBLE",
        AtomicType::UByte => "NC_UBYTE",
        AtomicType::UShort => "NC_USHORT",
        AtomicType::UInt => "NC_UINT",
        AtomicType::Int64 => "NC_INT64",
        AtomicType::UInt64 => "NC_UINT64",
        AtomicType::String => "NC_STRING",
    }
}

/// A signed integer literal of `int` width or less (the most negative `int` has no literal
/// of its own in C: `-2147483648` is the negation of a `long`).
pub(crate) fn int(v: i64) -> String {
    if v == i64::from(i32::MIN) {
        "(-2147483647-1)".to_string()
    } else {
        v.to_string()
    }
}

/// A `long long` literal.
pub(crate) fn int64(v: i64) -> String {
    if v == i64::MIN {
        "(-9223372036854775807LL-1)".to_string()
    } else {
        format!("{v}LL")
    }
}

/// An `unsigned int` literal.
pub(crate) fn uint(v: u32) -> String {
    format!("{v}U")
}

/// An `unsigned long long` literal.
pub(crate) fn uint64(v: u64) -> String {
    format!("{v}ULL")
}

/// A `float` literal: the shortest decimal that reads back as the same float (a C compiler
/// rounds a decimal literal with an `f` suffix straight to float), or NAN / INFINITY.
pub(crate) fn float(v: f32) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-NAN" } else { "NAN" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-INFINITY" } else { "INFINITY" }.to_string()
    } else {
        format!("{v:e}f")
    }
}

/// A `double` literal, as [`float`].
pub(crate) fn double(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-NAN" } else { "NAN" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-INFINITY" } else { "INFINITY" }.to_string()
    } else {
        format!("{v:e}")
    }
}

/// A C string literal holding exactly `bytes`: printable ASCII as is, everything else (and
/// `"`, `\`, `?` against trigraphs) as three-digit octal escapes, which never swallow a
/// following digit.
pub(crate) fn string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        match b {
            b'"' | b'\\' | b'?' => s.push_str(&format!("\\{b:03o}")),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\{b:03o}")),
        }
    }
    s.push('"');
    s
}

/// Text safe inside a C `/* */` comment.
pub(crate) fn comment(text: &str) -> String {
    text.replace("*/", "* /")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_have_valid_c_spellings() {
        assert_eq!(int(i64::from(i32::MIN)), "(-2147483647-1)");
        assert_eq!(int64(i64::MIN), "(-9223372036854775807LL-1)");
        assert_eq!(uint64(u64::MAX), "18446744073709551615ULL");
        assert_eq!(float(nc_dataset::FILL_FLOAT), "9.96921e36f");
        assert_eq!(double(-0.0), "-0e0");
        assert_eq!(float(f32::NEG_INFINITY), "-INFINITY");
    }

    #[test]
    fn strings_escape_quotes_controls_and_high_bytes() {
        assert_eq!(
            string(b"a\"b\\c?\n\xc3\xa9"),
            "\"a\\042b\\134c\\077\\012\\303\\251\""
        );
    }
}
