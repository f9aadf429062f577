//! DAP4: a `.dap` response (DMR and chunked data, DAP4 Volume 1) or a `.dmr` alone, mapped to
//! the netCDF enhanced data model as netCDF-C 4.9.0's `libdap4` maps it.
//!
//! - `chunk` splits the chunked framing; `xml` parses the DMR text; `dmr` builds the
//!   DMR tree as netCDF-C's parser does (names of anonymous dimensions and of the types made
//!   for structures, sequences and opaques); `build` defines the netCDF view in netCDF-C's
//!   order; `decode` reads the data (byte order, checksums, strings, opaques, structures,
//!   sequences).
//!
//! Checked byte for byte against netCDF-C 4.9.0's ncdump on the corpus's 42 responses and on
//! hand-made ones (`tests/dap4_baselines.rs`). Where this reader differs from it:
//! - it checks what netCDF-C trusts: a response cut short, a count or a dimension larger than
//!   the bytes left, a name that resolves to nothing are errors naming the variable (netCDF-C
//!   reads past its buffer or crashes). It never crashes where netCDF-C does: an `<Attribute>`
//!   container without a type is skipped; a structure field of strings with dimensions gives
//!   null strings for the elements netCDF-C leaves unset (its ncdump crashes on them);
//! - an element of an array of fixed-size structures starts where the data puts it (netCDF-C
//!   multiplies the in-memory size, which differs when the structure has padding);
//! - a bare DMR (a `.dmr`) gives the dataset without values and a warning (netCDF-C reports
//!   an XML answer to a data request as an error);
//! - an enumeration constant written as a number matches by its 64-bit value (netCDF-C
//!   compares union bytes, so `255` may miss an Int8 constant `-1`).

mod build;
mod chunk;
mod decode;
mod dmr;
mod remote;
mod xml;

pub use remote::Remote;

use crate::{DapData, DapError};

/// CRC-32 (IEEE 802.3, zlib's `crc32(0, buf, len)`): the checksum a DAP4 server appends to
/// each top-level variable's data (DAP4 Volume 1, "Checksums"; netCDF-C uses zlib's).
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(bytes);
    c.sum()
}

/// Choices netCDF-C takes from URL parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dap4Options {
    /// Check each variable's CRC-32 (netCDF-C: `checksummode=ignore` turns it off; the DAP4
    /// server parameter `dap4.checksum=false` sends none).
    pub verify_checksums: bool,
    /// The size of the one opaque type (`[opaquesize]`, 16 by default).
    pub opaque_size: usize,
}

impl Default for Dap4Options {
    fn default() -> Self {
        Dap4Options {
            verify_checksums: true,
            opaque_size: 16,
        }
    }
}

/// Decode a DAP4 response (the bytes of `PATH.dap`: the DMR, then the chunked data) into a
/// dataset, the values of its top-level variables and the warnings to show, with the default
/// options.
///
/// # Errors
/// See [`open_response_with`].
pub fn open_response(
    bytes: &[u8],
    display_name: &str,
) -> Result<(nc_dataset::Dataset, DapData, Vec<String>), DapError> {
    open_response_with(bytes, display_name, &Dap4Options::default())
}

/// [`open_response`] with options. A response that is a bare DMR (it starts with `<?xml` or
/// `<Dataset`, as a `.dmr` does) gives the dataset without values, and a warning.
///
/// # Errors
/// [`DapError::Malformed`] for a truncated or inconsistent response, a DMR that does not parse
/// or that netCDF-C refuses; [`DapError::Server`] for an error chunk or an `<Error>` document;
/// [`DapError::Checksum`] when a variable's data does not match its checksum.
pub fn open_response_with(
    bytes: &[u8],
    display_name: &str,
    opts: &Dap4Options,
) -> Result<(nc_dataset::Dataset, DapData, Vec<String>), DapError> {
    let malformed = |what: String| DapError::Malformed {
        url: display_name.to_string(),
        what,
    };
    if bytes.starts_with(b"<?xml") || bytes.starts_with(b"<Dataset") || bytes.starts_with(b"<Error")
    {
        let root = xml::parse(bytes).map_err(|e| malformed(format!("DMR: {e}")))?;
        if root.name == "Error" {
            return Err(server_error(display_name, &root));
        }
        let (ds, _, _) = metadata(&root, display_name, opts)?;
        let warnings = vec![format!(
            "{display_name}: the response is a DMR without data: every variable reads as its fill value"
        )];
        return Ok((ds, DapData::default(), warnings));
    }
    let d = chunk::dechunk(bytes).map_err(|e| match e {
        chunk::ChunkError::ErrorChunk(text) => match xml::parse(&text) {
            Ok(root) if root.name == "Error" => server_error(display_name, &root),
            _ => DapError::Server {
                url: display_name.to_string(),
                code: String::new(),
                message: String::from_utf8_lossy(&text).trim().to_string(),
            },
        },
        e => malformed(e.to_string()),
    })?;
    let root = xml::parse(&d.dmr).map_err(|e| malformed(format!("DMR: {e}")))?;
    if root.name == "Error" {
        return Err(server_error(display_name, &root));
    }
    let (ds, tree, built) = metadata(&root, display_name, opts)?;
    let layout = decode::DataLayout {
        little_endian: d.little_endian,
        checksums: d.checksums,
        verify: opts.verify_checksums,
    };
    let decoded = decode::decode(&tree, &d.data, layout).map_err(|e| match e {
        decode::DecodeError::Checksum { var } | decode::DecodeError::ChecksumAttribute { var } => {
            DapError::Checksum {
                url: display_name.to_string(),
                variable: var,
            }
        }
        e => malformed(e.to_string()),
    })?;
    let mut warnings = Vec::new();
    let mut values = Vec::with_capacity(decoded.len());
    for dv in decoded {
        let Some(&v) = built.get(&dv.var) else {
            continue;
        };
        if dv.resized_opaques > 0 {
            warnings.push(format!(
                "variable {}: {} opaque value(s) not of {} bytes were cut or zero-padded to {} bytes, as netCDF-C does",
                ds.var_path(v),
                dv.resized_opaques,
                opts.opaque_size,
                opts.opaque_size
            ));
        }
        values.push((v, dv.values));
    }
    Ok((ds, DapData { values }, warnings))
}

/// The dataset a DMR alone describes (the answer to `URL.dmr.xml`), without values.
///
/// # Errors
/// [`DapError::Malformed`] for a DMR that does not parse or that netCDF-C refuses;
/// [`DapError::Server`] for an `<Error>` document.
pub fn open_dmr(
    bytes: &[u8],
    display_name: &str,
    opts: &Dap4Options,
) -> Result<nc_dataset::Dataset, DapError> {
    let root = xml::parse(bytes).map_err(|e| DapError::Malformed {
        url: display_name.to_string(),
        what: format!("DMR: {e}"),
    })?;
    if root.name == "Error" {
        return Err(server_error(display_name, &root));
    }
    Ok(metadata(&root, display_name, opts)?.0)
}

type Metadata = (
    nc_dataset::Dataset,
    dmr::Dmr,
    std::collections::HashMap<usize, nc_dataset::VarId>,
);

fn metadata(
    root: &xml::Element,
    display_name: &str,
    opts: &Dap4Options,
) -> Result<Metadata, DapError> {
    let malformed = |what: String| DapError::Malformed {
        url: display_name.to_string(),
        what,
    };
    let tree = dmr::build_tree(
        root,
        &dmr::ParseOptions {
            opaque_size: opts.opaque_size.max(1),
        },
    )
    .map_err(|e| malformed(format!("DMR: {}", e.0)))?;
    let built = build::build(&tree, &dataset_name(display_name))
        .map_err(|e| malformed(format!("DMR: {}", e.0)))?;
    Ok((built.ds, tree, built.var_ids))
}

/// ncdump's dataset name of a URL: its last path component without its last extension.
fn dataset_name(display: &str) -> String {
    let s = display.split(['#', '?']).next().unwrap_or(display);
    let s = s.trim_end_matches('/');
    let base = s.rsplit('/').next().unwrap_or(s);
    match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_string(),
        _ => base.to_string(),
    }
}

/// An `<Error>` document: `httpcode`, `<Message>`, `<Context>`, `<OtherInformation>`.
fn server_error(display_name: &str, e: &xml::Element) -> DapError {
    let text = |n: &str| {
        e.children_named(n)
            .next()
            .map(|c| c.text.trim().to_string())
    };
    let mut message = text("Message").unwrap_or_default();
    for extra in ["Context", "OtherInformation"] {
        if let Some(t) = text(extra).filter(|t| !t.is_empty()) {
            message.push_str(&format!(" ({t})"));
        }
    }
    DapError::Server {
        url: display_name.to_string(),
        code: e.attr("httpcode").unwrap_or("400").to_string(),
        message,
    }
}

#[cfg(test)]
mod tests;
