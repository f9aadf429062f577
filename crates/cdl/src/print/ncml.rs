//! `ncdump -x`: the header as NcML 2.2 (what netCDF-C 4.9.0 prints: dimensions, attributes and
//! variables of the root group; no data).

use nc_dataset::{AtomicType, Attribute, Dataset, NcType, Values, ROOT};

use super::fmtnum::push_g;
use super::PrintError;

const HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<netcdf xmlns=\"https://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2\" location=\"";

/// XML-escape `bytes` into `out` as an attribute value (NUL as `&#0;`, other control
/// characters as `&#xN;`, as netCDF-C writes them).
fn escape(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            0 => out.extend_from_slice(b"&#0;"),
            1..=0x1f => out.extend_from_slice(format!("&#x{b:X};").as_bytes()),
            _ => out.push(b),
        }
    }
}

fn type_name(t: AtomicType) -> &'static str {
    t.cdl_name()
}

fn att_values(out: &mut Vec<u8>, v: &Values) -> Result<(), String> {
    let n = v.len();
    for i in 0..n {
        if i > 0 {
            out.push(b' ');
        }
        match v {
            Values::Float(x) => push_g(out, f64::from(x[i]), 7, true),
            Values::Double(x) => push_g(out, x[i], 15, true),
            Values::String(x) => escape(out, x[i].as_ref().map_or(&[][..], |s| s.as_bytes())),
            other => match other.get_i128(i) {
                Some(k) => out.extend_from_slice(k.to_string().as_bytes()),
                None => return Err("attribute of a user-defined type".into()),
            },
        }
    }
    Ok(())
}

fn attribute(out: &mut Vec<u8>, a: &Attribute, indent: &str) -> Result<(), String> {
    out.extend_from_slice(indent.as_bytes());
    out.extend_from_slice(b"<attribute name=\"");
    escape(out, a.name.as_bytes());
    out.push(b'"');
    match (&a.ty, &a.values) {
        (NcType::Atomic(AtomicType::Char), Values::Char(bytes)) => {
            // trailing NULs are not part of the text
            let end = bytes.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
            out.extend_from_slice(b" value=\"");
            escape(out, &bytes[..end]);
            out.push(b'"');
        }
        (NcType::Atomic(t), v) => {
            out.extend_from_slice(b" type=\"");
            out.extend_from_slice(type_name(*t).as_bytes());
            out.extend_from_slice(b"\" value=\"");
            att_values(out, v)?;
            out.push(b'"');
        }
        (NcType::User(_), _) => {
            return Err(format!("attribute \"{}\" has a user-defined type", a.name))
        }
    }
    out.extend_from_slice(b" />\n");
    Ok(())
}

/// Print the NcML header of `ds`; `location` is the path as given on the command line.
///
/// # Errors
/// On write errors, and for datasets outside the classic model (groups, user types), which
/// netCDF-C's NcML output does not cover either.
pub fn print_ncml(
    ds: &Dataset,
    location: &str,
    out: &mut dyn std::io::Write,
) -> Result<(), PrintError> {
    let bad = |what: String| PrintError::Unsupported { what };
    if ds.groups.len() > 1 || !ds.types.is_empty() {
        return Err(bad("NcML output of groups and user-defined types".into()));
    }
    let mut o = Vec::with_capacity(4096);
    o.extend_from_slice(HEAD.as_bytes());
    escape(&mut o, location.as_bytes());
    o.extend_from_slice(b"\">\n");
    let root = ds.group(ROOT);
    for &d in &root.dims {
        let dim = ds.dim(d);
        o.extend_from_slice(b"  <dimension name=\"");
        escape(&mut o, dim.name.as_bytes());
        o.extend_from_slice(format!("\" length=\"{}\"", dim.len).as_bytes());
        if dim.unlimited {
            o.extend_from_slice(b" isUnlimited=\"true\"");
        }
        o.extend_from_slice(b" />\n");
    }
    for a in &root.atts {
        attribute(&mut o, a, "  ").map_err(bad)?;
    }
    for &v in &root.vars {
        let var = ds.var(v);
        o.extend_from_slice(b"  <variable name=\"");
        escape(&mut o, var.name.as_bytes());
        if !var.dims.is_empty() {
            o.extend_from_slice(b"\" shape=\"");
            for (i, d) in var.dims.iter().enumerate() {
                if i > 0 {
                    o.push(b' ');
                }
                escape(&mut o, ds.dim(*d).name.as_bytes());
            }
        }
        o.extend_from_slice(b"\" type=\"");
        o.extend_from_slice(ds.type_name(var.ty).as_bytes());
        // netCDF-C writes an empty element only for a variable with neither attributes nor
        // values (e.g. a record variable with no records); otherwise a closing tag
        if var.atts.is_empty() && ds.num_elements(v) == Some(0) {
            o.extend_from_slice(b"\" />\n");
            continue;
        }
        o.extend_from_slice(b"\">\n");
        for a in &var.atts {
            attribute(&mut o, a, "    ").map_err(bad)?;
        }
        o.extend_from_slice(b"  </variable>\n");
    }
    o.extend_from_slice(b"</netcdf>\n");
    out.write_all(&o)?;
    Ok(())
}
