//! JSON in and out: parsing metadata objects (tolerating the bare `NaN`, `Infinity` and
//! `-Infinity` Python's json module writes), and netCDF-C's compact JSON text
//! (`{"id": "bz2","level": 9}`), which `_Codecs` and JSON-valued char attributes show.

use crate::error::ZarrError;
use serde_json::Value;

/// Largest metadata object parsed (64 MiB).
pub const MAX_METADATA_SIZE: usize = 64 << 20;

/// Strings standing for the non-finite numbers inside parsed JSON (a NUL never occurs in
/// real metadata text, so these cannot collide with a string value).
pub(crate) const NAN: &str = "\u{0}NaN";
pub(crate) const INF: &str = "\u{0}Infinity";
pub(crate) const NEG_INF: &str = "\u{0}-Infinity";

/// The float a parsed value stands for: a JSON number, a non-finite marker, or the
/// strings `"NaN"`, `"Infinity"`, `"-Infinity"` (Zarr's `fill_value` spelling).
pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            NAN | "NaN" | "nan" => Some(f64::NAN),
            INF | "Infinity" | "inf" => Some(f64::INFINITY),
            NEG_INF | "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// True for a non-finite marker produced by [`parse`].
pub(crate) fn is_nonfinite_marker(v: &Value) -> bool {
    matches!(v, Value::String(s) if s == NAN || s == INF || s == NEG_INF)
}

/// Replace bare `NaN`, `Infinity`, `-Infinity` tokens outside strings by marker strings.
fn rewrite_nonfinite(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut i = 0;
    let mut last = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        let mut matched = false;
        for (tok, marker) in [("-Infinity", NEG_INF), ("Infinity", INF), ("NaN", NAN)] {
            if b[i..].starts_with(tok.as_bytes()) {
                let o = out.get_or_insert_with(String::new);
                o.push_str(&text[last..i]);
                o.push_str(&Value::String(marker.to_string()).to_string());
                i += tok.len();
                last = i;
                matched = true;
                break;
            }
        }
        if !matched {
            i += 1;
        }
    }
    out.map(|mut o| {
        o.push_str(&text[last..]);
        o
    })
}

/// Parse a metadata object's bytes (the key names it in errors).
///
/// # Errors
/// [`ZarrError::Json`] for invalid UTF-8 or JSON, or text over [`MAX_METADATA_SIZE`].
pub fn parse(key: &str, bytes: &[u8]) -> Result<Value, ZarrError> {
    if bytes.len() > MAX_METADATA_SIZE {
        return Err(ZarrError::TooLarge {
            key: key.to_string(),
            limit: MAX_METADATA_SIZE as u64,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ZarrError::Json {
        key: key.to_string(),
        msg: format!("not UTF-8: {e}"),
    })?;
    let err = |e: serde_json::Error| ZarrError::Json {
        key: key.to_string(),
        msg: e.to_string(),
    };
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(first) => match rewrite_nonfinite(text) {
            Some(t) => serde_json::from_str(&t).map_err(err),
            None => Err(err(first)),
        },
    }
}

/// netCDF-C's compact JSON text as `_Codecs` shows it: `{"k": v,"k2": v2}`, `[a,b]`, strings
/// escaped as JSON.
pub fn compact(v: &Value) -> String {
    let mut s = String::new();
    write_compact(v, ",", &mut s);
    s
}

/// netCDF-C's text for a JSON-valued attribute: object members separated by `, `
/// (`{"k": v, "k2": v2}`), arrays compact (`[a,b]`).
pub fn attribute_text(v: &Value) -> String {
    let mut s = String::new();
    write_compact(v, ", ", &mut s);
    s
}

fn write_compact(v: &Value, member_sep: &str, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(member_sep);
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_compact(x, member_sep, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(x, member_sep, out);
            }
            out.push(']');
        }
        Value::String(s) if s == NAN => out.push_str("NaN"),
        Value::String(s) if s == INF => out.push_str("Infinity"),
        Value::String(s) if s == NEG_INF => out.push_str("-Infinity"),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON number for a float, or a marker that [`to_text`] writes as a bare `NaN`,
/// `Infinity` or `-Infinity` (as netCDF-C and Python's json module write attributes).
pub(crate) fn float_attr_value(x: f64) -> Value {
    if x.is_nan() {
        Value::String(NAN.into())
    } else if x == f64::INFINITY {
        Value::String(INF.into())
    } else if x == f64::NEG_INFINITY {
        Value::String(NEG_INF.into())
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// Compact JSON text with the non-finite markers written as bare tokens.
pub(crate) fn to_text(v: &Value) -> String {
    let s = v.to_string();
    if !s.contains("\\u0000") {
        return s;
    }
    s.replace("\"\\u0000NaN\"", "NaN")
        .replace("\"\\u0000-Infinity\"", "-Infinity")
        .replace("\"\\u0000Infinity\"", "Infinity")
}

/// A JSON number for a float, or the Zarr spelling of a non-finite one.
pub(crate) fn float_value(x: f64) -> Value {
    if x.is_nan() {
        Value::String("NaN".into())
    } else if x == f64::INFINITY {
        Value::String("Infinity".into())
    } else if x == f64::NEG_INFINITY {
        Value::String("-Infinity".into())
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonfinite_tokens() {
        let v = parse(
            "k",
            br#"{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN in text"}"#,
        )
        .unwrap();
        assert!(as_f64(&v["a"]).unwrap().is_nan());
        assert_eq!(as_f64(&v["b"][0]), Some(f64::INFINITY));
        assert_eq!(as_f64(&v["b"][1]), Some(f64::NEG_INFINITY));
        assert_eq!(v["s"], Value::String("NaN in text".into()));
        assert_eq!(
            compact(&v),
            r#"{"a": NaN,"b": [Infinity,-Infinity],"s": "NaN in text"}"#
        );
    }

    #[test]
    fn compact_keeps_order_and_escapes() {
        let v = parse("k", br#"{"id": "bz2", "level": "9", "q": "a\"b"}"#).unwrap();
        assert_eq!(compact(&v), r#"{"id": "bz2","level": "9","q": "a\"b"}"#);
    }

    #[test]
    fn bare_nonfinite_out() {
        let v = serde_json::json!({"a": [float_attr_value(f64::NAN), float_attr_value(f64::NEG_INFINITY), float_attr_value(1.5)], "s": "x"});
        let t = to_text(&v);
        assert_eq!(t, r#"{"a":[NaN,-Infinity,1.5],"s":"x"}"#);
        let back = parse("k", t.as_bytes()).unwrap();
        assert!(as_f64(&back["a"][0]).unwrap().is_nan());
    }

    #[test]
    fn bad_json_names_the_key() {
        let e = parse("g/.zattrs", b"{\"a\": ").unwrap_err().to_string();
        assert!(e.starts_with("g/.zattrs: invalid JSON"), "{e}");
        assert!(parse("k", &[0xff, 0xfe]).is_err());
    }
}
