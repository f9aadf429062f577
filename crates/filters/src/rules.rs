//! The `nccopy -F` rule engine (pure logic).
//!
//! Option forms (netCDF filters documentation, "Using nccopy"): `none` and `*,none` (no
//! output filters), `VAR,none`, `VAR,SPECLIST`, `*,SPECLIST`, `V1&V2&...,SPECLIST`. Variable
//! names are fully qualified (`/g/var`); a plain name (no `/`) means the root group's variable
//! of that name, or, when the root has none, every variable of that name in any group. The
//! man page's `V1|V2,...` form (`|` between variables, before the first comma) is accepted
//! too.
//!
//! Each output variable's chain comes from the documented table ([`Row`]):
//!
//! | row | -F none | -F var,... | input filter | output |
//! |-----|---------|------------|--------------|--------|
//! | 1 | true | undefined | NA | unfiltered |
//! | 2 | true | none | NA | unfiltered |
//! | 3 | true | defined | NA | output filter(s) |
//! | 4 | false | undefined | defined | input filter(s) |
//! | 5 | false | none | NA | unfiltered |
//! | 6 | false | defined | undefined | output filter(s) |
//! | 7 | false | undefined | undefined | unfiltered |
//! | 8 | false | defined | defined | output filter(s) |
//!
//! `*,SPEC` counts as "defined" for every variable; a per-variable option beats it. The rows
//! apply to every variable, including deflated inputs (netCDF-C 4.9.0 ignores -F there, its
//! issue #2198) and `-F none` with a per-variable spec (row 3, which 4.9.0 gets wrong).
//!
//! `-d`/`-s` (our rule, written here and in docs/compat.md): an explicit -F choice (per-variable
//! spec or none, `*,SPEC`, `-F none`) wins; otherwise (rows 4 and 7) `-d N` (N > 0) sets the
//! deflate level of the input chain, adding deflate when absent and keeping every other input
//! filter, `-d 0` removes deflate, and `-s` adds shuffle when `-d N` (N > 0) is given (the man
//! page: "-s is ignored unless a non-zero deflation level is specified").
//!
//! Variables a filter cannot apply to (scalar, string, vlen) are left unfiltered with a
//! warning. Options naming no variable produce a warning naming them.

use crate::error::{FilterSpecError, SpecProblem};
use crate::spec::{format_spec_list, normalize_chain, split_at_sep, SpecParser};
use nc_dataset::{Dataset, FilterSpec, NcType, UserTypeKind, VarId};
use std::fmt;

/// Which variables a `-F` option names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `*` or the bare `none`.
    All,
    /// A list of names (`v1&v2`).
    Vars(Vec<String>),
}

/// What a `-F` option asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `none`: no filters.
    None,
    /// A filter chain in application order.
    Chain(Vec<FilterSpec>),
}

/// One parsed `-F` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FOption {
    /// The option text as given.
    pub text: String,
    /// Which variables.
    pub target: Target,
    /// What for them.
    pub action: Action,
}

/// All `-F` options of one command line, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FOptions {
    /// The options in command-line order.
    pub options: Vec<FOption>,
}

impl FOptions {
    /// Parse `-F` option values with filter names allowed and the parameters of well-known
    /// filters checked (deflate needs a level).
    ///
    /// # Errors
    /// The first bad option, with the offending token and its position.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<FOptions, FilterSpecError> {
        let parser = SpecParser {
            check_known: true,
            ..SpecParser::default()
        };
        FOptions::parse_with(args, &parser)
    }

    /// Parse with a given spec parser (e.g. [`SpecParser::strict`] for netCDF-C 4.9.0's
    /// numeric-only syntax).
    ///
    /// # Errors
    /// The first bad option, with the offending token and its position.
    pub fn parse_with<S: AsRef<str>>(
        args: &[S],
        parser: &SpecParser,
    ) -> Result<FOptions, FilterSpecError> {
        let mut options = Vec::new();
        for a in args {
            options.push(parse_option(a.as_ref(), parser)?);
        }
        Ok(FOptions { options })
    }
}

fn parse_option(text: &str, parser: &SpecParser) -> Result<FOption, FilterSpecError> {
    let bad = |token: &str, pos: usize, problem: SpecProblem| FilterSpecError::Bad {
        text: text.to_string(),
        token: token.to_string(),
        pos,
        problem,
    };
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("none") {
        return Ok(FOption {
            text: text.to_string(),
            target: Target::All,
            action: Action::None,
        });
    }
    let Some(comma) = text.find(',') else {
        return Err(bad(
            trimmed,
            text.len() - text.trim_start().len(),
            SpecProblem::MissingComma,
        ));
    };
    let (vars, rest) = (&text[..comma], &text[comma + 1..]);
    let target = if vars.trim() == "*" {
        Target::All
    } else {
        let mut names = Vec::new();
        for (piece, pos) in split_at_sep(vars, '&', 0) {
            for (name, npos) in split_at_sep(piece, '|', pos) {
                let n = name.trim();
                if n.is_empty() {
                    return Err(bad(n, npos, SpecProblem::EmptyVariable));
                }
                names.push(n.to_string());
            }
        }
        Target::Vars(names)
    };
    let action = if rest.trim().eq_ignore_ascii_case("none") {
        Action::None
    } else {
        Action::Chain(parser.parse_list_at(text, rest, comma + 1)?)
    };
    Ok(FOption {
        text: text.to_string(),
        target,
        action,
    })
}

/// Why a filter cannot apply to a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfilterable {
    /// A scalar (no dimensions, so no chunks).
    Scalar,
    /// Of type string.
    String,
    /// Of a variable-length type (or a compound holding one).
    Vlen,
}

impl fmt::Display for Unfilterable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unfilterable::Scalar => "scalar",
            Unfilterable::String => "string",
            Unfilterable::Vlen => "variable-length",
        })
    }
}

/// What the engine needs to know of one output variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarInfo {
    /// Fully qualified name (`/var`, `/g/var`).
    pub path: String,
    /// The input variable's filter chain (empty: unfiltered).
    pub input: Vec<FilterSpec>,
    /// Set when no filter can apply.
    pub unfilterable: Option<Unfilterable>,
}

impl VarInfo {
    /// The facts of variable `v` of `ds` (its chain from `storage.filters`).
    pub fn from_dataset(ds: &Dataset, v: VarId) -> VarInfo {
        let var = ds.var(v);
        let path = ds.var_path(v);
        let unfilterable = if var.dims.is_empty() {
            Some(Unfilterable::Scalar)
        } else {
            variable_length(ds, var.ty, 0)
        };
        VarInfo {
            path,
            input: var.storage.filters.clone(),
            unfilterable,
        }
    }
}

fn variable_length(ds: &Dataset, t: NcType, depth: usize) -> Option<Unfilterable> {
    match t {
        NcType::Atomic(nc_dataset::AtomicType::String) => Some(Unfilterable::String),
        NcType::Atomic(_) => None,
        NcType::User(id) if depth < 32 => match &ds.user_type(id).kind {
            UserTypeKind::Vlen { .. } => Some(Unfilterable::Vlen),
            UserTypeKind::Compound { fields, .. } => fields
                .iter()
                .find_map(|f| variable_length(ds, f.ty, depth + 1))
                .map(|_| Unfilterable::Vlen),
            _ => None,
        },
        NcType::User(_) => None,
    }
}

/// A row of the documented `-F` table (1-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row(pub u8);

impl Row {
    /// The row's cells: (-F none, -F var, input filter, applied output filter).
    pub fn cells(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self.0 {
            1 => ("true", "undefined", "NA", "unfiltered"),
            2 => ("true", "none", "NA", "unfiltered"),
            3 => ("true", "defined", "NA", "use output filter(s)"),
            4 => ("false", "undefined", "defined", "use input filter(s)"),
            5 => ("false", "none", "NA", "unfiltered"),
            6 => ("false", "defined", "undefined", "use output filter(s)"),
            7 => ("false", "undefined", "undefined", "unfiltered"),
            _ => ("false", "defined", "defined", "use output filter(s)"),
        }
    }
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b, c, d) = self.cells();
        write!(
            f,
            "row {} (-F none={a}, -F var={b}, input filter={c}: {d})",
            self.0
        )
    }
}

/// The `-F`, `-d` and `-s` options of one nccopy run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterRules {
    /// The `-F` options.
    pub options: FOptions,
    /// `-d N`.
    pub deflate: Option<u32>,
    /// `-s`.
    pub shuffle: bool,
}

/// The decision for one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The variable.
    pub path: String,
    /// The table row that fired.
    pub row: Row,
    /// The `-F` option that decided it (its text), if one did.
    pub option: Option<String>,
    /// `-d`/`-s` changed the chain.
    pub deflate_applied: bool,
    /// Left unfiltered because no filter can apply.
    pub unfilterable: Option<Unfilterable>,
    /// The output chain in application order (what `_Filter` will show, before working
    /// parameters are filled in).
    pub chain: Vec<FilterSpec>,
}

impl Decision {
    /// One line saying what fired and why: `/g/var: row 8 (...): 307,3 from -F "g/var,307,3"`.
    pub fn explain(&self) -> String {
        let chain = if self.chain.is_empty() {
            "unfiltered".to_string()
        } else {
            format_spec_list(&self.chain)
        };
        let mut s = format!("{}: {}: {chain}", self.path, self.row);
        if let Some(o) = &self.option {
            s.push_str(&format!(" from -F {o:?}"));
        }
        if self.deflate_applied {
            s.push_str(" (-d/-s applied)");
        }
        if let Some(u) = self.unfilterable {
            s.push_str(&format!(" (filters dropped: {u} variable)"));
        }
        s
    }
}

/// The decisions for all variables, and warnings to print.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// One decision per variable, in the order given.
    pub decisions: Vec<Decision>,
    /// Warnings: options matching no variable, overridden options, unfilterable variables.
    pub warnings: Vec<String>,
}

impl Plan {
    /// The decision for a variable path.
    pub fn get(&self, path: &str) -> Option<&Decision> {
        self.decisions.iter().find(|d| d.path == path)
    }

    /// One explanation line per variable.
    pub fn explain(&self) -> Vec<String> {
        self.decisions.iter().map(Decision::explain).collect()
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The variables an option name selects.
fn select<'a>(name: &str, vars: &'a [VarInfo]) -> Vec<&'a VarInfo> {
    let full = if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    };
    let exact: Vec<&VarInfo> = vars.iter().filter(|v| v.path == full).collect();
    if !exact.is_empty() || name.contains('/') {
        return exact;
    }
    vars.iter().filter(|v| base_name(&v.path) == name).collect()
}

impl FilterRules {
    /// Rules from `-F` options alone.
    pub fn new(options: FOptions) -> FilterRules {
        FilterRules {
            options,
            deflate: None,
            shuffle: false,
        }
    }

    /// Decide every variable's output chain.
    pub fn decide(&self, vars: &[VarInfo]) -> Plan {
        let mut warnings = Vec::new();
        let mut none_all: Option<&FOption> = None;
        let mut star: Option<&FOption> = None;
        // per variable index: the last option naming it
        let mut per_var: Vec<Option<&FOption>> = vec![None; vars.len()];
        for o in &self.options.options {
            match (&o.target, &o.action) {
                (Target::All, Action::None) => none_all = Some(o),
                (Target::All, Action::Chain(_)) => {
                    if let Some(prev) = star {
                        warnings.push(format!(
                            "-F {:?} replaces the earlier -F {:?} for all variables",
                            o.text, prev.text
                        ));
                    }
                    star = Some(o);
                }
                (Target::Vars(names), _) => {
                    for n in names {
                        let hits = select(n, vars);
                        if hits.is_empty() {
                            warnings.push(format!(
                                "-F {:?}: no variable {n:?} in the input; option ignored for it",
                                o.text
                            ));
                        }
                        for h in hits {
                            let Some(i) = vars.iter().position(|v| std::ptr::eq(v, h)) else {
                                continue;
                            };
                            if let Some(prev) = per_var[i] {
                                if !std::ptr::eq(prev, o) {
                                    warnings.push(format!(
                                        "variable {}: -F {:?} overrides the earlier -F {:?}",
                                        h.path, o.text, prev.text
                                    ));
                                }
                            }
                            per_var[i] = Some(o);
                        }
                    }
                }
            }
        }
        let mut decisions = Vec::with_capacity(vars.len());
        for (i, v) in vars.iter().enumerate() {
            let var_rule = per_var[i].or(star);
            let input_defined = !v.input.is_empty();
            let (row, option, mut chain) = match (none_all.is_some(), var_rule) {
                (true, None) => (Row(1), none_all, Vec::new()),
                (true, Some(o)) => match &o.action {
                    Action::None => (Row(2), Some(o), Vec::new()),
                    Action::Chain(c) => (Row(3), Some(o), c.clone()),
                },
                (false, None) if input_defined => (Row(4), None, v.input.clone()),
                (false, None) => (Row(7), None, Vec::new()),
                (false, Some(o)) => match &o.action {
                    Action::None => (Row(5), Some(o), Vec::new()),
                    Action::Chain(c) if input_defined => (Row(8), Some(o), c.clone()),
                    Action::Chain(c) => (Row(6), Some(o), c.clone()),
                },
            };
            let mut deflate_applied = false;
            if matches!(row, Row(4) | Row(7)) {
                if let Some(level) = self.deflate {
                    deflate_applied = true;
                    if level == 0 {
                        chain.retain(|f| f.id != 1);
                    } else {
                        match chain.iter_mut().find(|f| f.id == 1) {
                            Some(f) => f.params = vec![level],
                            None => chain.push(FilterSpec {
                                id: 1,
                                params: vec![level],
                            }),
                        }
                        if self.shuffle && !chain.iter().any(|f| f.id == 2) {
                            chain.push(FilterSpec {
                                id: 2,
                                params: Vec::new(),
                            });
                        }
                        chain = normalize_chain(&chain);
                    }
                }
            }
            let mut unfilterable = None;
            if let Some(u) = v.unfilterable {
                if !chain.is_empty() {
                    warnings.push(format!(
                        "variable {}: filters cannot apply to a {u} variable; left unfiltered",
                        v.path
                    ));
                    chain.clear();
                    unfilterable = Some(u);
                }
            }
            decisions.push(Decision {
                path: v.path.clone(),
                row,
                option: option.map(|o| o.text.clone()),
                deflate_applied,
                unfilterable,
                chain,
            });
        }
        Plan {
            decisions,
            warnings,
        }
    }
}

/// Parse `-F` options and decide (the common one-call use).
///
/// # Errors
/// A bad `-F` option.
pub fn decide<S: AsRef<str>>(
    f_options: &[S],
    deflate: Option<u32>,
    shuffle: bool,
    vars: &[VarInfo],
) -> Result<Plan, FilterSpecError> {
    let rules = FilterRules {
        options: FOptions::parse(f_options)?,
        deflate,
        shuffle,
    };
    Ok(rules.decide(vars))
}
