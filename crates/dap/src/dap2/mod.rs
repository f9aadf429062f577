//! DAP2: the DDS and DAS parsers, the `.dods` decoder and the mapping to the netCDF classic
//! model.

pub mod build;
pub mod parse;
pub mod xdr;

use nc_dataset::{Dataset, Slab, Values, VarId};

use crate::fetch::Target;
use crate::{DapData, DapError};
use parse::{Dds, Parsed};

/// What the client parameters ask.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// the mapping's parameters (string lengths, fill mismatches)
    pub map: build::MapOptions,
}

impl Options {
    /// The options a location's parameters ask for.
    pub fn from_location(loc: &nc_store::Location) -> Options {
        Options {
            map: build::MapOptions {
                params: loc.params().to_vec(),
                whole: None,
            },
        }
    }
}

/// A DAP2 dataset opened: its netCDF view, the values read at open, and how to read the rest.
pub struct Opened {
    /// the netCDF view
    pub dataset: Dataset,
    /// values read at open (all of them for `file://`)
    pub data: DapData,
    /// the server to fetch each variable's values from, for `http(s)://`
    pub remote: Option<Remote>,
    /// what the reader left out, one sentence each
    pub warnings: Vec<String>,
}

/// Fetching one variable's values from a DAP2 server: `URL.dods?PROJECTION`.
pub struct Remote {
    target: Target,
    leaves: Vec<(VarId, Vec<usize>)>,
    dds: Dds,
}

fn text_error(url: &str, what: String) -> DapError {
    DapError::Malformed {
        url: url.to_string(),
        what,
    }
}

fn server_error(url: &str, e: parse::DapErrorBody) -> DapError {
    DapError::Server {
        url: url.to_string(),
        code: e.code,
        message: e.message,
    }
}

fn dds_of(url: &str, bytes: &[u8]) -> Result<Dds, DapError> {
    match parse::parse_dds(bytes).map_err(|e| text_error(url, format!("DDS: {e}")))? {
        Parsed::Ok(d) => Ok(d),
        Parsed::Error(e) => Err(server_error(url, e)),
    }
}

/// Decode a `.dods` response: its DDS and the values of its declarations.
fn decode_dods(url: &str, bytes: &[u8]) -> Result<(Dds, Vec<xdr::Datum>), DapError> {
    let Some((text, body)) = parse::split_dods(bytes) else {
        // an Error body instead of data
        if let Ok(Parsed::Error(e)) = parse::parse_dds(bytes) {
            return Err(server_error(url, e));
        }
        return Err(text_error(
            url,
            "no \"Data:\" line: not a DAP2 data response".to_string(),
        ));
    };
    let dds = dds_of(url, text)?;
    let data = xdr::decode(&dds.vars, body).map_err(|e| text_error(url, e))?;
    Ok((dds, data))
}

/// Open a DAP2 dataset.
///
/// # Errors
/// See [`DapError`].
pub fn open(target: &Target, opts: &Options, name: &str) -> Result<Opened, DapError> {
    let dds_url = target.url_of("dds");
    let dds = dds_of(&dds_url, &target.get("dds", None)?)?;
    // a constrained URL's DDS holds what the constraint selects; the whole one tells which
    // DAS tables belong to variables left out
    let mut map_opts = opts.map.clone();
    if target.constrained() {
        map_opts.whole = Some(dds_of(&dds_url, &target.get_whole("dds")?)?);
    }
    let das_url = target.url_of("das");
    let das = match target.get_optional("das")? {
        Some(bytes) => {
            match parse::parse_das(&bytes).map_err(|e| text_error(&das_url, format!("DAS: {e}")))? {
                Parsed::Ok(items) => items,
                Parsed::Error(e) => return Err(server_error(&das_url, e)),
            }
        }
        None => Vec::new(),
    };
    let has_sequences = has_sequence(&dds.vars);
    // local responses are read whole at once; a server is asked for everything only when
    // sequences need counting (netCDF-C asks for their records the same way)
    let mut decoded = if target.is_local() || has_sequences {
        let url = target.url_of("dods");
        let bytes = target.get("dods", None)?;
        Some(decode_dods(&url, &bytes)?)
    } else {
        None
    };
    let mapped = build::map(
        &dds,
        &das,
        decoded.as_ref().map(|(_, d)| d.as_slice()),
        &map_opts,
        name,
    )
    .map_err(|e| match e {
        build::MapError::FillMismatch(variable) => DapError::FillMismatch {
            url: target.display(),
            variable,
        },
        build::MapError::Bad(what) => text_error(&dds_url, what),
    })?;
    let mut data = DapData::default();
    if let Some((ddds, values)) = &mut decoded {
        data.values = build::gather(&mapped.dataset, ddds, values, &mapped.leaves)
            .map_err(|e| text_error(&target.url_of("dods"), e))?;
    }
    let remote = (!target.is_local()).then(|| Remote {
        target: target.clone(),
        leaves: mapped.leaves.clone(),
        dds: dds.clone(),
    });
    Ok(Opened {
        dataset: mapped.dataset,
        data,
        remote,
        warnings: mapped.warnings,
    })
}

fn has_sequence(nodes: &[parse::DdsNode]) -> bool {
    nodes
        .iter()
        .any(|n| n.kind == parse::DdsKind::Sequence || has_sequence(&n.fields))
}

impl Remote {
    /// Fetch every value of `var`: `URL.dods?PATH` (the DDS path of its leaf), decoded from
    /// the answer's own DDS. A server that ignores the constraint (a static one) answers
    /// with the whole dataset: then every variable's values are returned, so the caller
    /// keeps them and asks no more.
    ///
    /// # Errors
    /// The request fails, or the answer is not the variable's data.
    pub fn fetch_var(&self, ds: &Dataset, var: VarId) -> Result<Vec<(VarId, Values)>, DapError> {
        let url = self.target.url_of("dods");
        let Some((_, path)) = self.leaves.iter().find(|(v, _)| *v == var) else {
            return Ok(Vec::new());
        };
        let mut names = Vec::new();
        let mut nodes = &self.dds.vars;
        for &i in path {
            let Some(n) = nodes.get(i) else { break };
            names.push(n.name.clone());
            nodes = &n.fields;
        }
        let projection: Vec<String> = names.iter().map(|n| encode_name(n)).collect();
        let bytes = self.target.get("dods", Some(&projection.join(".")))?;
        let (dds, mut data) = decode_dods(&url, &bytes)?;
        drop(bytes);
        if dds == self.dds {
            return build::gather(ds, &dds, &mut data, &self.leaves)
                .map_err(|e| text_error(&url, e));
        }
        // the variable inside its containers, found by name
        let mut here = Vec::new();
        let mut nodes = &dds.vars;
        for n in &names {
            let Some(i) = nodes.iter().position(|x| x.name == *n) else {
                return Err(text_error(
                    &url,
                    format!("the answer does not hold \"{}\"", names.join(".")),
                ));
            };
            here.push(i);
            nodes = &nodes[i].fields;
        }
        build::gather(ds, &dds, &mut data, &[(var, here)]).map_err(|e| text_error(&url, e))
    }
}

/// What [`Remote::fetch_slab`] got: the hyperslab, or every variable's values from a server
/// that ignores constraints.
pub enum Slabbed {
    /// The hyperslab asked for, row-major.
    Cut(Values),
    /// Every variable, whole.
    Whole(Vec<(VarId, Values)>),
}

impl Remote {
    /// Fetch a strided hyperslab of `var`: `URL.dods?NAME[a:s:b][..]`, the server cutting
    /// it. `None` for a variable whose netCDF dimensions are not its DAP array's (a char
    /// variable's string length, a member of a structure or grid, a sequence): those are
    /// fetched whole; and on a URL with its own constraint (whose indices are not the
    /// server's).
    ///
    /// # Errors
    /// The request fails, or the answer is not the hyperslab's data.
    pub fn fetch_slab(
        &self,
        ds: &Dataset,
        var: VarId,
        slab: Slab,
        stride: &[u64],
    ) -> Option<Result<Slabbed, DapError>> {
        if self.target.constrained() {
            return None;
        }
        let (_, path) = self.leaves.iter().find(|(v, _)| *v == var)?;
        let [top] = path.as_slice() else { return None };
        let node = self.dds.vars.get(*top)?;
        let rank = ds.var(var).dims.len();
        let plain = matches!(node.kind, parse::DdsKind::Base(_))
            && node.dims.len() == rank
            && rank > 0
            && ds.var(var).ty != nc_dataset::NcType::Atomic(nc_dataset::AtomicType::Char);
        if !plain || slab.count.contains(&0) || stride.len() != rank {
            return None;
        }
        let mut ce = encode_name(&node.name);
        for ((&a, &n), &s) in slab.start.iter().zip(slab.count).zip(stride) {
            let s = s.max(1);
            ce.push_str(&format!("[{a}:{s}:{}]", a + (n - 1) * s));
        }
        let url = self.target.url_of("dods");
        let got = (|| {
            let bytes = self.target.get("dods", Some(&ce))?;
            let (dds, mut data) = decode_dods(&url, &bytes)?;
            if dds == self.dds {
                return build::gather(ds, &dds, &mut data, &self.leaves)
                    .map(Slabbed::Whole)
                    .map_err(|e| text_error(&url, e));
            }
            let Some(i) = dds.vars.iter().position(|x| x.name == node.name) else {
                return Err(text_error(
                    &url,
                    format!("the answer to {ce} does not hold \"{}\"", node.name),
                ));
            };
            let want = slab.count.iter().product::<u64>();
            let mut got = build::gather_counted(ds, &dds, &mut data, &[(var, vec![i])], Some(want))
                .map_err(|e| text_error(&url, e))?;
            match got.pop() {
                Some((_, values)) => Ok(Slabbed::Cut(values)),
                None => Err(text_error(
                    &url,
                    format!("the answer to {ce} holds no values"),
                )),
            }
        })();
        Some(got)
    }

    /// Fetch every variable at once: `URL.dods` with the URL's own constraint, as netCDF-C's
    /// `[cache]` (ncdump `-w`) keeps whole variables on the client. `None` when the answer
    /// does not describe the dataset as opened (then each variable is asked for alone).
    ///
    /// # Errors
    /// The request fails, or the answer is not DAP2 data.
    pub fn fetch_all(&self, ds: &Dataset) -> Result<Option<Vec<(VarId, Values)>>, DapError> {
        let url = self.target.url_of("dods");
        let bytes = self.target.get("dods", None)?;
        let (dds, mut data) = decode_dods(&url, &bytes)?;
        if dds != self.dds {
            return Ok(None);
        }
        build::gather(ds, &dds, &mut data, &self.leaves)
            .map(Some)
            .map_err(|e| text_error(&url, e))
    }
}

/// A DAP2 name in a constraint: characters outside the DAP2 identifier set as `%XX`.
fn encode_name(n: &str) -> String {
    crate::fetch::percent_encode(n, b"_!~*'-\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }

    #[test]
    fn local_responses_open_with_values() {
        let dir = std::env::temp_dir().join(format!("nc-dap-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dds =
            b"Dataset {\n    UInt16 u[n = 2];\n    Sequence { Int32 i; String s; } q;\n} t;\n";
        write(&dir, "t.dds", dds);
        write(
            &dir,
            "t.das",
            b"Attributes { u { Int32 _FillValue 7; } NC_GLOBAL { String title \"a\\tb\"; } }",
        );
        let mut dods = dds.to_vec();
        dods.extend_from_slice(b"Data:\n");
        dods.extend([0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0xff, 0xff, 0, 0, 0, 1]);
        dods.extend([0x5A, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, b'h', b'i', 0, 0]);
        dods.extend([0xA5, 0, 0, 0]);
        write(&dir, "t.dods", &dods);
        let target = Target::File(dir.join("t"));
        let o = open(&target, &Options::default(), "t").unwrap();
        let ds = &o.dataset;
        let names: Vec<&str> = ds.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["u", "q.i", "q.s"]);
        // the Int32 _FillValue of a UInt16 variable becomes a short, as netCDF-C fixes it
        assert_eq!(ds.vars[0].atts[0].values, Values::Short(vec![7]));
        assert_eq!(ds.groups[0].atts[0].values, Values::Char(b"a\tb".to_vec()));
        let get = |v: usize| {
            o.data
                .values
                .iter()
                .find(|(id, _)| id.0 == v)
                .map(|(_, x)| x.clone())
                .unwrap()
        };
        assert_eq!(get(0), Values::Short(vec![-1, 1]));
        assert_eq!(get(1), Values::Int(vec![5]));
        let Values::Char(s) = get(2) else { panic!() };
        assert_eq!(&s[..3], b"hi\0");
        assert_eq!(s.len(), 64);
        // refused mismatch
        let opts = Options {
            map: build::MapOptions {
                params: vec![("nofillmismatch".into(), String::new())],
                whole: None,
            },
        };
        assert!(matches!(
            open(&target, &opts, "t"),
            Err(DapError::FillMismatch { .. })
        ));
        // a cut body
        write(&dir, "t.dods", &dods[..dods.len() - 6]);
        assert!(matches!(
            open(&target, &Options::default(), "t"),
            Err(DapError::Malformed { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
