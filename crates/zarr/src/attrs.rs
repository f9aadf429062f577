//! Attribute values ↔ JSON, following NCZarr's "JSON Attribute Convention" (Appendix G):
//! typed values through `_nczarr_attr`'s types, char attributes whose text is a JSON object
//! or array stored as that JSON, any other JSON read back as char text.

use crate::json::{self, as_f64, is_nonfinite_marker};
use nc_dataset::{AtomicType, Attribute, NcString, NcType, Values};
use serde_json::Value;

/// The attribute `name` from its JSON value and its type when known.
pub(crate) fn from_json(name: &str, v: &Value, ty: Option<AtomicType>) -> Attribute {
    let values = match ty {
        Some(AtomicType::Char) => Values::Char(char_text(v).into_bytes()),
        Some(AtomicType::String) => strings(v),
        Some(t) => numbers(v, t).unwrap_or_else(|| Values::Char(char_text(v).into_bytes())),
        None => infer(v),
    };
    let ty = values.atomic_type().unwrap_or(AtomicType::Char);
    Attribute {
        name: name.to_string(),
        ty: NcType::Atomic(ty),
        values,
    }
}

fn char_text(v: &Value) -> String {
    match v {
        Value::String(s) if is_nonfinite_marker(v) => json::compact(&Value::String(s.clone())),
        Value::String(s) => s.clone(),
        other => json::attribute_text(other),
    }
}

fn strings(v: &Value) -> Values {
    let one = |x: &Value| Some(NcString::from(char_text(x)));
    match v {
        Value::Array(a) => Values::String(a.iter().map(one).collect()),
        x => Values::String(vec![one(x)]),
    }
}

fn elements(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        x => vec![x],
    }
}

fn as_i128(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i128)),
        Value::Bool(b) => Some(i128::from(*b)),
        Value::String(s) => s.trim().parse::<i128>().ok(),
        _ => None,
    }
}

fn as_float(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::String(s) => as_f64(v).or_else(|| s.trim().parse().ok()),
        _ => as_f64(v),
    }
}

/// Convert numbers to type `t` (None when an element is not a number).
pub(crate) fn numbers(v: &Value, t: AtomicType) -> Option<Values> {
    let el = elements(v);
    macro_rules! ints {
        ($variant:ident, $ty:ty) => {{
            let mut out = Vec::with_capacity(el.len());
            for x in &el {
                let n = as_i128(x).or_else(|| as_float(x).map(|f| f as i128))?;
                out.push(n as $ty);
            }
            Values::$variant(out)
        }};
    }
    Some(match t {
        AtomicType::Byte => ints!(Byte, i8),
        AtomicType::UByte => ints!(UByte, u8),
        AtomicType::Short => ints!(Short, i16),
        AtomicType::UShort => ints!(UShort, u16),
        AtomicType::Int => ints!(Int, i32),
        AtomicType::UInt => ints!(UInt, u32),
        AtomicType::Int64 => ints!(Int64, i64),
        AtomicType::UInt64 => ints!(UInt64, u64),
        AtomicType::Float => Values::Float(
            el.iter()
                .map(|x| as_float(x).map(|f| f as f32))
                .collect::<Option<_>>()?,
        ),
        AtomicType::Double => {
            Values::Double(el.iter().map(|x| as_float(x)).collect::<Option<_>>()?)
        }
        AtomicType::Char => Values::Char(char_text(v).into_bytes()),
        AtomicType::String => strings(v),
    })
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Number(_) | Value::Bool(_)) || is_nonfinite_marker(v)
}

/// Type inference for untyped (pure Zarr) attributes: integers take the smallest signed
/// type holding all values (then uint64), any fraction makes double, text makes char.
fn infer(v: &Value) -> Values {
    let el = elements(v);
    if el.is_empty() {
        return Values::Char(Vec::new());
    }
    if el.iter().all(|x| is_number(x)) {
        let all_int = el
            .iter()
            .all(|x| matches!(x, Value::Number(n) if n.is_i64() || n.is_u64()) || x.is_boolean());
        if all_int {
            let (mut lo, mut hi) = (i128::MAX, i128::MIN);
            for x in &el {
                let n = as_i128(x).unwrap_or(0);
                lo = lo.min(n);
                hi = hi.max(n);
            }
            let fits = |a: i128, b: i128| lo >= a && hi <= b;
            let t = if fits(i8::MIN.into(), i8::MAX.into()) {
                AtomicType::Byte
            } else if fits(i16::MIN.into(), i16::MAX.into()) {
                AtomicType::Short
            } else if fits(i32::MIN.into(), i32::MAX.into()) {
                AtomicType::Int
            } else if fits(i64::MIN.into(), i64::MAX.into()) {
                AtomicType::Int64
            } else {
                AtomicType::UInt64
            };
            if let Some(vals) = numbers(v, t) {
                return vals;
            }
        }
        if let Some(vals) = numbers(v, AtomicType::Double) {
            return vals;
        }
    }
    match v {
        Value::String(_) => Values::Char(char_text(v).into_bytes()),
        Value::Array(a) if a.iter().all(|x| x.is_string() && !is_nonfinite_marker(x)) => {
            if a.len() == 1 {
                Values::Char(char_text(&a[0]).into_bytes())
            } else {
                strings(v)
            }
        }
        other => Values::Char(json::attribute_text(other).into_bytes()),
    }
}

/// A float as JSON: shortest text of the value in its own precision.
fn float_json(x: f64, single: bool) -> Value {
    if !x.is_finite() {
        return json::float_attr_value(x);
    }
    let shortest = if single {
        format!("{}", x as f32).parse::<f64>().unwrap_or(x)
    } else {
        x
    };
    json::float_value(shortest)
}

/// The JSON of one value vector (a scalar for one element, else an array); `None` for user
/// types and for strings that are not UTF-8 (JSON text must be).
pub(crate) fn values_to_json(v: &Values) -> Option<Value> {
    let n = v.len();
    let mut items: Vec<Value> = Vec::with_capacity(n);
    for i in 0..n {
        items.push(match v {
            Values::Float(x) => float_json(f64::from(x[i]), true),
            Values::Double(x) => float_json(x[i], false),
            Values::Int64(x) => Value::from(x[i]),
            Values::UInt64(x) => Value::from(x[i]),
            Values::String(x) => Value::String(
                x[i].as_ref()
                    .map_or(Some(""), NcString::as_str)?
                    .to_string(),
            ),
            Values::Char(_) => return None,
            other => Value::from(i64::try_from(other.get_i128(i)?).ok()?),
        });
    }
    Some(if n == 1 {
        items.pop().unwrap_or(Value::Null)
    } else {
        Value::Array(items)
    })
}

/// The JSON of a char attribute: its JSON when the text is a JSON object or array,
/// else a JSON string; `None` when the bytes are not UTF-8 (JSON text must be).
pub(crate) fn char_to_json(bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(bytes).ok()?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            if v.is_object() || v.is_array() {
                return Some(v);
            }
        }
    }
    Some(Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vals(v: Value, t: Option<AtomicType>) -> Values {
        from_json("a", &v, t).values
    }

    #[test]
    fn inference() {
        assert_eq!(vals(json!(68), None), Values::Byte(vec![68]));
        assert_eq!(vals(json!([1, 300]), None), Values::Short(vec![1, 300]));
        assert_eq!(vals(json!(70000), None), Values::Int(vec![70000]));
        assert_eq!(vals(json!(1u64 << 40), None), Values::Int64(vec![1 << 40]));
        assert_eq!(vals(json!(u64::MAX), None), Values::UInt64(vec![u64::MAX]));
        assert_eq!(vals(json!(1.5), None), Values::Double(vec![1.5]));
        assert_eq!(vals(json!([1, 2.5]), None), Values::Double(vec![1.0, 2.5]));
        assert_eq!(vals(json!("abc"), None), Values::Char(b"abc".to_vec()));
        assert_eq!(
            vals(json!(["a", "bc"]), None),
            Values::String(vec![Some("a".into()), Some("bc".into())])
        );
        assert_eq!(
            vals(json!({"k": [1, 2]}), None),
            Values::Char(br#"{"k": [1,2]}"#.to_vec())
        );
        let nan = crate::json::parse("k", b"{\"x\": NaN}").unwrap();
        match vals(nan["x"].clone(), None) {
            Values::Double(d) => assert!(d[0].is_nan()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn typed() {
        assert_eq!(
            vals(json!(17), Some(AtomicType::Int)),
            Values::Int(vec![17])
        );
        assert_eq!(
            vals(json!([1, 2]), Some(AtomicType::Float)),
            Values::Float(vec![1.0, 2.0])
        );
        assert_eq!(vals(json!("NaN"), Some(AtomicType::Double)).len(), 1);
        assert_eq!(
            vals(json!({"a": 1}), Some(AtomicType::Char)),
            Values::Char(br#"{"a": 1}"#.to_vec())
        );
        assert_eq!(
            vals(json!("x"), Some(AtomicType::String)),
            Values::String(vec![Some("x".into())])
        );
    }

    #[test]
    fn to_json() {
        assert_eq!(values_to_json(&Values::Float(vec![0.1])), Some(json!(0.1)));
        assert_eq!(
            values_to_json(&Values::Int(vec![1, 2])),
            Some(json!([1, 2]))
        );
        assert_eq!(
            values_to_json(&Values::Double(vec![f64::NAN])).map(|v| crate::json::to_text(&v)),
            Some("NaN".to_string())
        );
        assert_eq!(
            values_to_json(&Values::UInt64(vec![u64::MAX])),
            Some(json!(u64::MAX))
        );
        assert_eq!(char_to_json(b"{\"a\": [1]}"), Some(json!({"a": [1]})));
        assert_eq!(char_to_json(b"17"), Some(json!("17")));
        assert_eq!(char_to_json(b"{not json"), Some(json!("{not json")));
        assert_eq!(char_to_json(b"caf\xe9"), None, "JSON text must be UTF-8");
        assert_eq!(
            values_to_json(&Values::String(vec![Some("a".into()), None])),
            Some(json!(["a", ""]))
        );
        let bad = NcString::from_bytes(b"x\xffy".to_vec());
        assert_eq!(values_to_json(&Values::String(vec![Some(bad)])), None);
    }
}
