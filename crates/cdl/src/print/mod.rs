//! ncdump-style CDL printer: writes a [`Dataset`] as the text netCDF-C 4.9.0's `ncdump` prints,
//! byte for byte, reading variable data through a [`DataSource`] in bounded slabs.
//!
//! Layout rules (line wrapping at `-l` columns, `_` for fill values, char rows as strings,
//! `-b`/`-f` index comments, `-s` virtual attributes) were determined by running the reference
//! `ncdump` on files made with the reference `ncgen`; the fixtures in
//! `testdata/expected/print/` record them.

mod data;
mod fmtnum;
mod header;
mod json;
mod ncml;
mod special;
mod time;
mod values;

#[cfg(test)]
mod tests;

use nc_dataset::{DataSource, Dataset, Format, GroupId, VarId};

pub use json::print_json;
pub use ncml::print_ncml;

/// How `-b` / `-f` index comments number elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexStyle {
    /// C order, 0-based (`-b c`, `-f c`).
    #[default]
    C,
    /// Fortran order, 1-based (`-b f`, `-f f`).
    Fortran,
}

/// Index annotations in the data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Annotation {
    /// No comments (the default).
    #[default]
    None,
    /// `-b`: one `// var(i,j, 0-n)` comment line before each row.
    Brief(IndexStyle),
    /// `-f`: a `// var(i,j,k)` comment after every value.
    Full(IndexStyle),
}

/// How `-t` / `-i` show CF time values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeMode {
    /// Numbers as stored (the default).
    #[default]
    Off,
    /// `-t`: `"2000-01-01 12:30"`, a space between date and time.
    Iso,
    /// `-i`: `"2000-01-01T12:30"`, a `T` between date and time.
    IsoT,
}

/// ncdump options (a plain `Default` struct; the binary maps its flags onto it).
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {
    /// `-h`: header only, no `data:` section.
    pub header_only: bool,
    /// `-c`: data only for coordinate variables (variables named like a dimension visible from
    /// their group, whatever their shape: ncdump's rule).
    pub coords_only: bool,
    /// `-v v1,v2`: data only for these variables (plain names match in any group; names with a
    /// `/` are full paths such as `/g/v` or `g/v`). Empty: all variables.
    pub vars: Vec<String>,
    /// `-g g1,g2`: data only for variables in groups with these names (or full paths).
    /// Empty: all groups.
    pub groups: Vec<String>,
    /// `-b` / `-f` index comments.
    pub annotate: Annotation,
    /// `-l len`: maximum line length for wrapped data lines; 0 means ncdump's default, 80.
    pub max_line_len: usize,
    /// `-p fdig`: significant digits for float values (default 7).
    pub float_digits: Option<usize>,
    /// `-p ,ddig`: significant digits for double values (default 15).
    pub double_digits: Option<usize>,
    /// `-s`: show special virtual attributes (`_Storage`, `_ChunkSizes`, `_Format`, ...).
    pub special: bool,
    /// `-F`: with `-s`, show every filter of a chain as `_Filter` (deflate, shuffle and
    /// fletcher32 included) instead of `_DeflateLevel`/`_Shuffle`/`_Fletcher32`.
    pub all_filters: bool,
    /// `-t` / `-i`: CF time variables' data as date-time strings.
    pub time: TimeMode,
    /// `-Xp`: leave out `_NCProperties` under `-s`.
    pub no_nc_properties: bool,
    /// `-XF` (netCDF-C 4.9.3 and later): print the type before every variable's `_FillValue`
    /// attribute (`\t\tint v:_FillValue = -1 ;`), not only for string and user types.
    pub fill_value_type: bool,
    /// `-n name`: the name printed after `netcdf` (default: `Dataset::name`).
    pub name: Option<String>,
}

impl DumpOptions {
    fn line_len(&self) -> usize {
        if self.max_line_len == 0 {
            80
        } else {
            self.max_line_len
        }
    }
}

/// Each error of [`PrintError::Unreadable`] with its causes, one a line.
fn unreadable_text(errors: &[PrintError]) -> String {
    let mut lines = Vec::with_capacity(errors.len());
    for e in errors {
        let mut line = e.to_string();
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            line.push_str(&format!(": {c}"));
            cause = c.source();
        }
        lines.push(line);
    }
    format!(
        "the data of {} variables cannot be read:\n  {}",
        errors.len(),
        lines.join("\n  ")
    )
}

/// Printing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrintError {
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
    /// Reading a variable's data failed.
    #[error("reading data of variable \"{var}\"")]
    Read {
        /// full path of the variable
        var: String,
        /// the data source's error
        #[source]
        source: nc_dataset::DataError,
    },
    /// Several variables' data could not be read; every other variable was printed.
    #[error("{}", unreadable_text(.0))]
    Unreadable(Vec<PrintError>),
    /// The data source returned the wrong number or kind of values.
    #[error("variable \"{var}\": data source returned {got} values of the wrong shape or type, expected {want} (reader bug)")]
    BadSlab {
        /// full path of the variable
        var: String,
        /// values returned
        got: usize,
        /// values expected
        want: usize,
    },
    /// A variable's element count overflows 64 bits (a corrupt header).
    #[error(
        "variable \"{var}\": its dimension lengths multiply past 2^64 elements (corrupt header?)"
    )]
    TooLarge {
        /// the variable's name
        var: String,
    },
    /// The output asked for cannot show this dataset.
    #[error("{what} is not supported")]
    Unsupported {
        /// what cannot be shown
        what: String,
    },
    /// A `-v` name matches no variable.
    #[error("{name}: No such variable")]
    NoSuchVariable {
        /// the name as given
        name: String,
    },
    /// A `-g` name matches no group.
    #[error("{name}: No such group")]
    NoSuchGroup {
        /// the name as given
        name: String,
    },
}

/// Print `ds` as CDL, reading data through `src`.
///
/// # Errors
/// On write errors or data read errors, or when a `-v`/`-g` name matches nothing.
pub fn print(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &DumpOptions,
    out: &mut dyn std::io::Write,
) -> Result<(), PrintError> {
    print_slabbed(ds, src, opts, out, data::SLAB_BYTES)
}

/// [`print`] reading at most about `slab_bytes` of raw data per hyperslab.
fn print_slabbed(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &DumpOptions,
    out: &mut dyn std::io::Write,
    slab_bytes: u64,
) -> Result<(), PrintError> {
    let sel = Selection::new(ds, opts)?;
    let mut p = Printer {
        ds,
        src,
        opts,
        out,
        sel,
        buf: Vec::with_capacity(1 << 16),
        slab_bytes,
        enum_col: 0,
        format: special::effective_format(ds),
        unread: Vec::new(),
    };
    if let Err(e) = p.group(nc_dataset::ROOT, 0) {
        // as ncdump, everything printed before the failure (the header, the variables before
        // it, the failing variable's values so far) still reaches the output; the error is the
        // one to report even when this write fails too. (A variable none of whose data can
        // be read is left out instead, in `unread`.)
        let _ = p
            .flush()
            .and_then(|()| p.out.flush().map_err(PrintError::from));
        return Err(e);
    }
    p.flush()?;
    p.out.flush()?;
    match p.unread.len() {
        0 => Ok(()),
        1 => Err(p.unread.remove(0)),
        _ => Err(PrintError::Unreadable(p.unread)),
    }
}

/// Which variables get their data printed.
struct Selection {
    data_vars: Vec<bool>,
}

impl Selection {
    fn new(ds: &Dataset, opts: &DumpOptions) -> Result<Selection, PrintError> {
        let n = ds.vars.len();
        let mut data_vars = vec![!opts.header_only; n];
        if opts.header_only {
            return Ok(Selection { data_vars });
        }
        if !opts.vars.is_empty() {
            let mut chosen = vec![false; n];
            for name in &opts.vars {
                let mut found = false;
                for (i, v) in ds.vars.iter().enumerate() {
                    if var_matches(ds, VarId(i), &v.name, name) {
                        chosen[i] = true;
                        found = true;
                    }
                }
                if !found {
                    return Err(PrintError::NoSuchVariable { name: name.clone() });
                }
            }
            for (d, c) in data_vars.iter_mut().zip(chosen) {
                *d &= c;
            }
        }
        if opts.coords_only {
            for (i, v) in ds.vars.iter().enumerate() {
                // as ncdump decides it: not a scalar, and a dimension of its name is visible from its group
                let is_coord = !v.dims.is_empty() && ds.find_dim(v.group, &v.name).is_some();
                // -c prints coordinate variables plus any asked for by -v
                let asked = opts
                    .vars
                    .iter()
                    .any(|name| var_matches(ds, VarId(i), &v.name, name));
                data_vars[i] &= is_coord || asked;
            }
        }
        if !opts.groups.is_empty() {
            let mut any = vec![false; opts.groups.len()];
            for (i, v) in ds.vars.iter().enumerate() {
                let hit = opts.groups.iter().enumerate().any(|(k, name)| {
                    let m = group_matches(ds, v.group, name);
                    if m {
                        any[k] = true;
                    }
                    m
                });
                data_vars[i] &= hit;
            }
            for (k, name) in opts.groups.iter().enumerate() {
                let exists =
                    any[k] || (0..ds.groups.len()).any(|g| group_matches(ds, GroupId(g), name));
                if !exists {
                    return Err(PrintError::NoSuchGroup { name: name.clone() });
                }
            }
        }
        Ok(Selection { data_vars })
    }
}

fn var_matches(ds: &Dataset, id: VarId, vname: &str, want: &str) -> bool {
    if want.contains('/') {
        let full = ds.var_path(id);
        let want = if want.starts_with('/') {
            want.to_string()
        } else {
            format!("/{want}")
        };
        full == want
    } else {
        vname == want
    }
}

fn group_matches(ds: &Dataset, g: GroupId, want: &str) -> bool {
    if want.contains('/') {
        let want = if want.starts_with('/') {
            want.to_string()
        } else {
            format!("/{want}")
        };
        ds.group_path(g) == want.trim_end_matches('/') || (want == "/" && g.0 == 0)
    } else {
        g.0 != 0 && ds.group(g).name == want
    }
}

/// Printing state: the output and a buffer flushed at group and slab boundaries.
struct Printer<'a> {
    ds: &'a Dataset,
    src: &'a dyn DataSource,
    opts: &'a DumpOptions,
    out: &'a mut dyn std::io::Write,
    sel: Selection,
    buf: Vec<u8>,
    /// raw bytes read per hyperslab
    slab_bytes: u64,
    /// ncdump's line position for `types:` enum declarations: it does not count the
    /// indentation of a declaration's first line and carries over from one enum to the next
    enum_col: usize,
    /// The effective file format, worked out once: deciding whether a dataset without one
    /// needs the enhanced model looks at every variable and attribute, and the printer asks
    /// for each variable it prints
    format: Format,
    /// Variables whose data could not be read at all (a filter with no codec): left out of
    /// the data section, the rest printed, the errors returned at the end
    unread: Vec<PrintError>,
}

impl Printer<'_> {
    fn flush(&mut self) -> Result<(), PrintError> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn s(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.buf.extend_from_slice(b"  ");
        }
    }

    /// One group: header, data, then subgroups.
    fn group(&mut self, g: GroupId, depth: usize) -> Result<(), PrintError> {
        let ds = self.ds;
        if g.0 == 0 {
            let name = self.opts.name.clone().unwrap_or_else(|| ds.name.clone());
            self.s("netcdf ");
            values::push_name(&mut self.buf, &name);
            self.s(" {\n");
        } else {
            self.indent(depth - 1);
            self.s("group: ");
            values::push_name(&mut self.buf, &ds.group(g).name);
            self.s(" {\n");
        }
        self.header(g, depth);
        let grp = ds.group(g);
        let shown: Vec<VarId> = grp
            .vars
            .iter()
            .copied()
            .filter(|v| self.sel.data_vars[v.0])
            .collect();
        // ncdump opens a data section in every group with variables, except under -g, where
        // only the chosen groups get one
        let group_chosen = self.opts.groups.is_empty()
            || self
                .opts
                .groups
                .iter()
                .any(|name| group_matches(ds, g, name));
        if !self.opts.header_only && !grp.vars.is_empty() && group_chosen {
            self.indent(depth);
            self.s("data:\n");
            for v in shown {
                self.var_data(v, depth)?;
            }
        }
        self.flush()?;
        for &c in &grp.groups {
            self.s("\n");
            self.group(c, depth + 1)?;
        }
        if g.0 == 0 {
            self.s("}\n");
        } else {
            self.indent(depth);
            self.s("} // group ");
            values::push_name(&mut self.buf, &ds.group(g).name);
            self.s("\n");
        }
        Ok(())
    }
}
