//! The DMR (DAP4 Volume 1, "The DMR") read into a tree of nodes the way netCDF-C 4.9.0's
//! `d4parser.c` builds it, because what it builds decides names and order in the netCDF view:
//!
//! - a group is filled in this order: `<Dimension>`s, `<Enumeration>`s, variables, `<Group>`s,
//!   then its `<Attribute>`s;
//! - a `<Dim size="N"/>` without a name is the root dimension `_AnonymousN` (made on first use,
//!   shared by every later use of that size, even by a named dimension of that name);
//! - a `<Structure>` variable V gets a compound type named (later) `V_t`, a nested one `V_F_t`;
//!   a `<Sequence>` V gets a compound `V_base` and a vlen `V_t` of it (no `_edu.ucar.isvlen`
//!   shortcut: netCDF-C's default translation ignores the `_edu.ucar.*` hints);
//! - every `<Opaque>` variable has one fixed-size opaque type, `opaque16_t` (the size is
//!   netCDF-C's default `[opaquesize]`, 16; `_edu.ucar.opaque.size` is ignored);
//! - element names are matched without regard to case; names in `name=` references are
//!   fully qualified (`/g/d`; a leading `/` is optional), `\` escapes a character.

use std::collections::HashMap;

use nc_dataset::AtomicType;

use super::xml::Element;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Sort {
    Group,
    Dim,
    Type,
    Var,
    Attr,
}

/// What a type or variable node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sub {
    None,
    Atomic(AtomicType),
    Enum,
    Opaque,
    Struct,
    Seq,
}

/// One enumeration constant: its name, its value as the base type holds it, and the value as
/// written (both as netCDF-C keeps them).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnumConst {
    pub name: String,
    pub value: i128,
    pub written: i128,
}

/// A node of the DMR tree: a group, dimension, type, variable (or structure field) or
/// attribute. Lists hold node indexes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub sort: Sort,
    pub sub: Sub,
    pub name: String,
    pub container: Option<usize>,
    /// group: everything defined directly in it, in order
    pub elements: Vec<usize>,
    pub groups: Vec<usize>,
    /// group: variables; compound type: fields
    pub vars: Vec<usize>,
    pub types: Vec<usize>,
    /// group: dimensions defined; variable: dimensions referenced
    pub dims: Vec<usize>,
    pub attributes: Vec<usize>,
    pub mapnames: Vec<String>,
    pub maps: Vec<usize>,
    pub basetype: Option<usize>,
    pub dim_size: u64,
    pub unlimited: bool,
    pub econsts: Vec<EnumConst>,
    pub opaque_size: usize,
    /// attribute: its value strings
    pub values: Vec<String>,
}

impl Node {
    fn new(sort: Sort, sub: Sub, container: Option<usize>) -> Node {
        Node {
            sort,
            sub,
            name: String::new(),
            container,
            elements: Vec::new(),
            groups: Vec::new(),
            vars: Vec::new(),
            types: Vec::new(),
            dims: Vec::new(),
            attributes: Vec::new(),
            mapnames: Vec::new(),
            maps: Vec::new(),
            basetype: None,
            dim_size: 0,
            unlimited: false,
            econsts: Vec::new(),
            opaque_size: 0,
            values: Vec::new(),
        }
    }
}

/// The DMR tree. `nodes` is in creation order (netCDF-C's `allnodes`); the atomic types come
/// first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dmr {
    pub nodes: Vec<Node>,
    pub root: usize,
    /// `<Dataset name=...>`, `dapVersion`, `dmrVersion`
    pub dataset_name: Option<String>,
    pub dap_version: Option<String>,
    pub dmr_version: Option<String>,
    /// every variable node (fields too), in creation order
    pub all_vars: Vec<usize>,
    /// every user type node, in creation order
    pub all_types: Vec<usize>,
}

/// The atomic type names netCDF-C knows (compared without regard to case).
const ATOMIC_NAMES: [(&str, AtomicType); 15] = [
    ("Byte", AtomicType::Byte),
    ("Char", AtomicType::Char),
    ("Float32", AtomicType::Float),
    ("Float64", AtomicType::Double),
    ("Int16", AtomicType::Short),
    ("Int32", AtomicType::Int),
    ("Int64", AtomicType::Int64),
    ("Int8", AtomicType::Byte),
    ("String", AtomicType::String),
    ("UByte", AtomicType::UByte),
    ("UInt16", AtomicType::UShort),
    ("UInt32", AtomicType::UInt),
    ("UInt64", AtomicType::UInt64),
    ("UInt8", AtomicType::UByte),
    ("Url", AtomicType::String),
];

/// What an element name means inside a group or structure.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Keyword {
    /// a variable of this kind (`Sub::Atomic` carries the type)
    Var(Sub),
    /// known, handled elsewhere (Attribute, Dimension, Enumeration, Group, Map, Dim, ...)
    Other,
}

fn keyword(tag: &str) -> Option<Keyword> {
    const OTHER: [&str; 9] = [
        "Attribute",
        "Dataset",
        "Dim",
        "Dimension",
        "Enumconst",
        "Enumeration",
        "Group",
        "Map",
        "OtherXML",
    ];
    if OTHER.iter().any(|k| k.eq_ignore_ascii_case(tag)) {
        return Some(Keyword::Other);
    }
    let sub = match tag.to_ascii_lowercase().as_str() {
        "enum" => Sub::Enum,
        "opaque" => Sub::Opaque,
        "structure" => Sub::Struct,
        "sequence" => Sub::Seq,
        "url" => Sub::Atomic(AtomicType::String),
        _ => Sub::Atomic(atomic_by_name(tag)?),
    };
    Some(Keyword::Var(sub))
}

fn atomic_by_name(name: &str) -> Option<AtomicType> {
    ATOMIC_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, t)| t)
}

/// The last part of a fully qualified name (what netCDF-C's `NCD4_makeName` gives): the names
/// from the node up to its group, each escaped, joined by `sep`.
pub(crate) fn make_name(dmr: &Dmr, node: usize, sep: &str) -> String {
    let mut path = Vec::new();
    let mut n = node;
    while dmr.nodes[n].sort != Sort::Group {
        path.push(n);
        match dmr.nodes[n].container {
            Some(c) => n = c,
            None => break,
        }
    }
    path.reverse();
    path.iter()
        .map(|&n| backslash_escape(&dmr.nodes[n].name))
        .collect::<Vec<_>>()
        .join(sep)
}

/// netCDF-C's `backslashEscape`: each of `\ / . @` becomes two backslashes, and the character
/// itself is lost (so it is in 4.9.0, and so are the type names it makes).
pub(crate) fn backslash_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '/' | '.' | '@' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// The fully qualified name of a variable (`/g/v`, `/v`), as the `_edu.ucar.maps` attribute
/// lists map variables.
pub(crate) fn make_fqn(dmr: &Dmr, node: usize) -> String {
    let mut path = Vec::new();
    let mut n = Some(node);
    while let Some(x) = n {
        path.push(x);
        n = dmr.nodes[x].container;
    }
    path.reverse();
    let mut fqn = String::new();
    let mut i = 1;
    while i < path.len() && dmr.nodes[path[i]].sort == Sort::Group {
        fqn.push('/');
        fqn.push_str(&backslash_escape(&dmr.nodes[path[i]].name));
        i += 1;
    }
    if i < path.len() {
        fqn.push('/');
        fqn.push_str(&make_name(dmr, node, "."));
    }
    fqn
}

/// Split a fully qualified name at unescaped `/` into its pieces, the first being the root
/// (`"/"`), escapes removed.
fn parse_fqn(fqn: &str) -> Vec<String> {
    let s = fqn.strip_prefix('/').unwrap_or(fqn);
    let mut pieces = vec!["/".to_string()];
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '/' => pieces.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    pieces.push(cur);
    pieces
}

/// Remove backslash escapes (`\x` is `x`).
pub(crate) fn deescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// netCDF-C's `NCD4_entityescape`, applied to `<Value>` text after the XML parser decoded it.
fn entity_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// C's `strtoll`/`sscanf("%lld")` on a decimal integer prefix: leading white space, a sign,
/// digits; saturates on overflow. `None` when there are no digits.
pub(crate) fn scan_i64(s: &str) -> Option<i64> {
    let (neg, mag) = scan_magnitude(s)?;
    Some(if neg {
        if mag > i64::MAX as u64 + 1 {
            i64::MIN
        } else {
            (mag as i64).wrapping_neg()
        }
    } else {
        i64::try_from(mag).unwrap_or(i64::MAX)
    })
}

/// C's `strtoull`/`sscanf("%llu")`: as [`scan_i64`], a minus sign negates modulo 2^64.
pub(crate) fn scan_u64(s: &str) -> Option<u64> {
    let (neg, mag) = scan_magnitude(s)?;
    Some(if neg { mag.wrapping_neg() } else { mag })
}

fn scan_magnitude(s: &str) -> Option<(bool, u64)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: &str = &t[..t.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() {
        return None;
    }
    let mag = digits
        .bytes()
        .try_fold(0u64, |a, d| {
            a.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(u64::MAX);
    Some((neg, mag))
}

/// C's `sscanf("%lf")`: the longest prefix that reads as a decimal number, `inf`, `infinity`
/// or `nan` (after white space and a sign). `None` when there is none.
pub(crate) fn scan_f64(s: &str) -> Option<f64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, u) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = u.to_ascii_lowercase();
    let v = if lower.starts_with("inf") {
        f64::INFINITY
    } else if lower.starts_with("nan") {
        f64::NAN
    } else {
        let b = u.as_bytes();
        let mut i = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut digits = i;
        if b.get(i) == Some(&b'.') {
            let frac = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            digits += frac;
            i += 1 + frac;
        }
        if digits == 0 {
            return None;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let e = b[j.min(b.len())..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if e > 0 {
                i = j + e;
            }
        }
        u[..i].parse::<f64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// A DMR that netCDF-C would refuse, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DmrError(pub String);

type R<T> = Result<T, DmrError>;

fn fail<T>(what: impl Into<String>) -> R<T> {
    Err(DmrError(what.into()))
}

/// Options of the translation (netCDF-C URL parameters).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParseOptions {
    /// `[opaquesize]`: the size of the one opaque type (default 16)
    pub opaque_size: usize,
}

struct Parser<'o> {
    dmr: Dmr,
    opts: &'o ParseOptions,
    /// the first element of each (group, sort, name), as netCDF-C's linear `lookFor` finds it
    index: HashMap<(usize, Sort, String), usize>,
}

/// Build the DMR tree from a parsed `<Dataset>` element.
pub(crate) fn build_tree(root: &Element, opts: &ParseOptions) -> R<Dmr> {
    if root.name != "Dataset" {
        return fail(format!(
            "the root element is <{}>, not <Dataset>",
            root.name
        ));
    }
    let mut p = Parser {
        dmr: Dmr {
            nodes: Vec::new(),
            root: 0,
            dataset_name: root.attr("name").map(str::to_string),
            dap_version: root.attr("dapVersion").map(str::to_string),
            dmr_version: root.attr("dmrVersion").map(str::to_string),
            all_vars: Vec::new(),
            all_types: Vec::new(),
        },
        opts,
        index: HashMap::new(),
    };
    for (name, t) in ATOMIC_NAMES {
        let mut n = Node::new(Sort::Type, Sub::Atomic(t), None);
        n.name = name.to_string();
        p.dmr.nodes.push(n);
    }
    let mut r = Node::new(Sort::Group, Sub::None, None);
    r.name = "/".to_string();
    p.dmr.root = p.push(r);
    let root_id = p.dmr.root;
    p.fill_group(root_id, root, 0)?;
    p.forwards()?;
    Ok(p.dmr)
}

impl Parser<'_> {
    fn push(&mut self, n: Node) -> usize {
        let id = self.dmr.nodes.len();
        match n.sort {
            Sort::Var => self.dmr.all_vars.push(id),
            Sort::Type => self.dmr.all_types.push(id),
            _ => {}
        }
        self.dmr.nodes.push(n);
        id
    }

    /// A node named by the element's `name` attribute (required).
    fn named(&mut self, sort: Sort, sub: Sub, container: usize, x: &Element) -> R<usize> {
        let Some(name) = x.attr("name") else {
            return fail(format!("<{}> has no name", x.name));
        };
        let mut n = Node::new(sort, sub, Some(container));
        n.name = name.to_string();
        Ok(self.push(n))
    }

    /// netCDF-C's `classify`: list `node` in its container.
    fn classify(&mut self, container: usize, node: usize) {
        let sort = self.dmr.nodes[node].sort;
        let c = &mut self.dmr.nodes[container];
        if c.sort == Sort::Group {
            c.elements.push(node);
            let name = self.dmr.nodes[node].name.clone();
            self.index.entry((container, sort, name)).or_insert(node);
        }
        let c = &mut self.dmr.nodes[container];
        match sort {
            Sort::Group => c.groups.push(node),
            Sort::Dim => c.dims.push(node),
            Sort::Type => c.types.push(node),
            Sort::Var => c.vars.push(node),
            Sort::Attr => c.attributes.push(node),
        }
    }

    fn group_for(&self, mut n: usize) -> usize {
        while self.dmr.nodes[n].sort != Sort::Group {
            match self.dmr.nodes[n].container {
                Some(c) => n = c,
                None => break,
            }
        }
        n
    }

    fn fill_group(&mut self, g: usize, x: &Element, depth: usize) -> R<()> {
        if depth > 64 {
            return fail("groups nested deeper than 64");
        }
        for d in x.children_named("Dimension") {
            let Some(size) = d.attr("size") else {
                return fail(format!(
                    "<Dimension name=\"{}\"> has no size",
                    d.attr("name").unwrap_or("")
                ));
            };
            let size = scan_u64(size).unwrap_or(0);
            let id = self.named(Sort::Dim, Sub::None, g, d)?;
            self.dmr.nodes[id].dim_size = size;
            self.dmr.nodes[id].unlimited = d.attr("_edu.ucar.isunlimited").is_some();
            self.classify(g, id);
        }
        for e in x.children_named("Enumeration") {
            self.enumeration(g, e)?;
        }
        for v in &x.children {
            match keyword(&v.name) {
                None => return fail(format!("unexpected element <{}>", v.name)),
                Some(Keyword::Other) => {}
                Some(Keyword::Var(sub)) => {
                    self.variable(g, v, sub, depth)?;
                }
            }
        }
        for c in x.children_named("Group") {
            let id = self.named(Sort::Group, Sub::None, g, c)?;
            self.classify(g, id);
            self.fill_group(id, c, depth + 1)?;
        }
        self.attributes(g, x)
    }

    fn enumeration(&mut self, g: usize, x: &Element) -> R<()> {
        let base_name = x.attr("basetype").unwrap_or("");
        let Some(base) = self.lookup_fqn(base_name, Sort::Type) else {
            return fail(format!(
                "<Enumeration name=\"{}\"> has an unknown basetype \"{base_name}\"",
                x.attr("name").unwrap_or("")
            ));
        };
        let id = self.named(Sort::Type, Sub::Enum, g, x)?;
        self.dmr.nodes[id].basetype = Some(base);
        let base_t = match self.dmr.nodes[base].sub {
            Sub::Atomic(t) => t,
            _ => {
                return fail(format!(
                    "enumeration {}: base type is not atomic",
                    x.attr("name").unwrap_or("")
                ))
            }
        };
        let mut consts = Vec::new();
        for c in x.children_named("EnumConst") {
            let Some(name) = c.attr("name") else {
                return fail("<EnumConst> has no name");
            };
            let Some(sv) = c.attr("value") else {
                return fail(format!("enumeration constant {name} has no value"));
            };
            let written = if matches!(
                base_t,
                AtomicType::UByte | AtomicType::UShort | AtomicType::UInt | AtomicType::UInt64
            ) {
                scan_u64(sv).map(i128::from)
            } else {
                scan_i64(sv).map(i128::from)
            };
            let Some(written) = written else {
                return fail(format!("non-numeric enumeration constant {name} = {sv}"));
            };
            consts.push(EnumConst {
                name: name.to_string(),
                value: truncate(written, base_t),
                written,
            });
        }
        if consts.is_empty() {
            return fail(format!(
                "enumeration {} has no values",
                x.attr("name").unwrap_or("")
            ));
        }
        self.dmr.nodes[id].econsts = consts;
        self.classify(g, id);
        Ok(())
    }

    fn variable(&mut self, container: usize, x: &Element, sub: Sub, depth: usize) -> R<usize> {
        if depth > 64 {
            return fail("structures nested deeper than 64");
        }
        match sub {
            Sub::Struct => self.structure(container, x, depth),
            Sub::Seq => self.sequence(container, x, depth),
            _ => self.atomic_var(container, x, sub),
        }
    }

    fn structure(&mut self, container: usize, x: &Element, depth: usize) -> R<usize> {
        let g = self.group_for(container);
        let var = self.named(Sort::Var, Sub::Struct, container, x)?;
        self.classify(container, var);
        let ty = self.named(Sort::Type, Sub::Struct, g, x)?;
        self.classify(g, ty);
        self.dmr.nodes[var].basetype = Some(ty);
        self.dmr.nodes[ty].name = make_name(&self.dmr, var, "_");
        self.fields(ty, x, depth)?;
        self.metadata(var, x)?;
        Ok(var)
    }

    fn sequence(&mut self, container: usize, x: &Element, depth: usize) -> R<usize> {
        let g = self.group_for(container);
        let var = self.named(Sort::Var, Sub::Seq, container, x)?;
        self.classify(container, var);
        let fqn = make_name(&self.dmr, var, "_");
        let st = self.named(Sort::Type, Sub::Struct, g, x)?;
        self.classify(g, st);
        self.dmr.nodes[st].name = format!("{fqn}_base");
        self.fields(st, x, depth)?;
        let vt = self.named(Sort::Type, Sub::Seq, g, x)?;
        self.classify(g, vt);
        self.dmr.nodes[vt].name = format!("{fqn}_t");
        self.dmr.nodes[vt].basetype = Some(st);
        self.dmr.nodes[var].basetype = Some(vt);
        self.metadata(var, x)?;
        Ok(var)
    }

    fn fields(&mut self, ty: usize, x: &Element, depth: usize) -> R<()> {
        for f in &x.children {
            match keyword(&f.name) {
                None => return fail(format!("unexpected element <{}> in <{}>", f.name, x.name)),
                Some(Keyword::Other) => {}
                Some(Keyword::Var(sub)) => {
                    self.variable(ty, f, sub, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    fn atomic_var(&mut self, container: usize, x: &Element, sub: Sub) -> R<usize> {
        let g = self.group_for(container);
        let base = match sub {
            Sub::Enum => x.attr("enum").and_then(|e| self.lookup_fqn(e, Sort::Type)),
            Sub::Opaque => Some(self.opaque_type(g)),
            Sub::Atomic(t) => self
                .dmr
                .nodes
                .iter()
                .position(|n| n.sort == Sort::Type && n.sub == Sub::Atomic(t)),
            _ => None,
        };
        let Some(base) = base.filter(|&b| self.dmr.nodes[b].sort == Sort::Type) else {
            return fail(format!(
                "variable {}: unknown type <{}{}>",
                x.attr("name").unwrap_or(""),
                x.name,
                x.attr("enum")
                    .map(|e| format!(" enum=\"{e}\""))
                    .unwrap_or_default()
            ));
        };
        let bsub = self.dmr.nodes[base].sub;
        let var = self.named(Sort::Var, bsub, container, x)?;
        self.classify(container, var);
        self.dmr.nodes[var].basetype = Some(base);
        self.metadata(var, x)?;
        Ok(var)
    }

    /// The one opaque type of the configured size, made in `g` on first use (netCDF-C's
    /// `getOpaque` with fixed-size opaques; the type is not listed in its group).
    fn opaque_type(&mut self, g: usize) -> usize {
        let size = self.opts.opaque_size;
        if let Some(&t) = self.dmr.all_types.iter().find(|&&t| {
            self.dmr.nodes[t].sub == Sub::Opaque && self.dmr.nodes[t].opaque_size == size
        }) {
            return t;
        }
        let mut n = Node::new(Sort::Type, Sub::Opaque, Some(g));
        n.name = format!("opaque{size}_t");
        n.opaque_size = size;
        self.push(n)
    }

    fn metadata(&mut self, var: usize, x: &Element) -> R<()> {
        for d in x.children_named("Dim") {
            let dim = if let Some(name) = d.attr("name") {
                match self.lookup_fqn(name, Sort::Dim) {
                    Some(dim) => dim,
                    None => return fail(format!("cannot locate dimension {name}")),
                }
            } else if let Some(size) = d.attr("size") {
                self.anonymous_dim(size)?
            } else {
                return fail(format!(
                    "variable {}: <Dim> has no name and no size",
                    self.dmr.nodes[var].name
                ));
            };
            self.dmr.nodes[var].dims.push(dim);
        }
        self.attributes(var, x)?;
        for m in x.children_named("Map") {
            let Some(name) = m.attr("name") else {
                return fail(format!(
                    "variable {}: <Map> has no name",
                    self.dmr.nodes[var].name
                ));
            };
            self.dmr.nodes[var].mapnames.push(name.to_string());
        }
        Ok(())
    }

    fn anonymous_dim(&mut self, size: &str) -> R<usize> {
        let Some(n) = scan_i64(size).filter(|&n| n > i64::MIN && n < i64::MAX) else {
            return fail(format!(
                "cannot make an anonymous dimension of size \"{size}\""
            ));
        };
        let name = format!("_Anonymous{n}");
        if let Some(d) = self.lookup_fqn(&format!("/{name}"), Sort::Dim) {
            return Ok(d);
        }
        let root = self.dmr.root;
        let mut node = Node::new(Sort::Dim, Sub::None, Some(root));
        node.name = name;
        // netCDF-C keeps the size as a signed 64-bit number and passes it on as size_t
        node.dim_size = n as u64;
        let id = self.push(node);
        self.classify(root, id);
        Ok(id)
    }

    fn attributes(&mut self, container: usize, x: &Element) -> R<()> {
        for a in x.children_named("Attribute") {
            let Some(name) = a.attr("name") else {
                return fail("<Attribute> has no name");
            };
            // an attribute container (no type, or Hyrax's `type="Container"`): netCDF-C
            // does not show them
            let Some(tname) = a
                .attr("type")
                .filter(|t| !matches!(*t, "container" | "Container"))
            else {
                continue;
            };
            let Some(base) = self.lookup_fqn(tname, Sort::Type) else {
                return fail(format!("attribute {name} has an unknown type \"{tname}\""));
            };
            let mut n = Node::new(Sort::Attr, Sub::None, Some(container));
            n.name = name.to_string();
            n.basetype = Some(base);
            n.values = if let Some(v) = a.attr("value") {
                vec![v.to_string()]
            } else {
                a.children_named("Value")
                    .map(|v| {
                        let s = v.attr("value").unwrap_or(&v.text);
                        deescape(&entity_escape(s))
                    })
                    .collect()
            };
            let id = self.push(n);
            self.dmr.nodes[container].attributes.push(id);
        }
        Ok(())
    }

    /// `<Map>` names may refer to variables defined later: resolved once all are read.
    fn forwards(&mut self) -> R<()> {
        for i in 0..self.dmr.all_vars.len() {
            let v = self.dmr.all_vars[i];
            let names = self.dmr.nodes[v].mapnames.clone();
            for m in names {
                let Some(target) = self.lookup_fqn(&m, Sort::Var) else {
                    return fail(format!("<Map> name does not refer to a variable: {m}"));
                };
                self.dmr.nodes[v].maps.push(target);
            }
        }
        Ok(())
    }

    fn look_for(&self, group: usize, name: &str, sort: Sort) -> Option<usize> {
        self.index.get(&(group, sort, name.to_string())).copied()
    }

    /// netCDF-C's `lookupFQN`: atomic type names first (for types), then the groups of the
    /// name, then the object in the last group (or fields of a compound variable).
    fn lookup_fqn(&self, fqn: &str, sort: Sort) -> Option<usize> {
        if sort == Sort::Type {
            let short = fqn.strip_prefix('/').unwrap_or(fqn);
            if let Some(t) = atomic_by_name(short) {
                return self
                    .dmr
                    .nodes
                    .iter()
                    .position(|n| n.sort == Sort::Type && n.sub == Sub::Atomic(t));
            }
        }
        let pieces = parse_fqn(fqn);
        let n = pieces.len();
        let mut current = self.dmr.root;
        let mut i = 1;
        while i < n {
            match self.look_for(current, &pieces[i], Sort::Group) {
                Some(g) => current = g,
                None => break,
            }
            i += 1;
        }
        if i == n {
            return None;
        }
        if i == n - 1 {
            return self.look_for(current, &pieces[i], sort);
        }
        let var = self.look_for(current, &pieces[i], Sort::Var)?;
        let mut ty = self.dmr.nodes[var].basetype?;
        if !matches!(self.dmr.nodes[ty].sub, Sub::Struct | Sub::Seq) {
            return None;
        }
        i += 1;
        loop {
            let field = self.dmr.nodes[ty]
                .vars
                .iter()
                .copied()
                .find(|&f| self.dmr.nodes[f].name == pieces[i])?;
            if i == n - 1 {
                return Some(field);
            }
            ty = self.dmr.nodes[field].basetype?;
            if !matches!(self.dmr.nodes[ty].sub, Sub::Struct | Sub::Seq) {
                return None;
            }
            i += 1;
        }
    }
}

/// `v` cast to the integer type `t` as C's conversion does (truncation, two's complement).
pub(crate) fn truncate(v: i128, t: AtomicType) -> i128 {
    let x = v as i64;
    match t {
        AtomicType::Byte | AtomicType::Char => i128::from(x as i8),
        AtomicType::UByte => i128::from(x as u8),
        AtomicType::Short => i128::from(x as i16),
        AtomicType::UShort => i128::from(x as u16),
        AtomicType::Int => i128::from(x as i32),
        AtomicType::UInt => i128::from(x as u32),
        AtomicType::Int64 => i128::from(x),
        AtomicType::UInt64 => i128::from(x as u64),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dap4::xml;

    fn tree(doc: &str) -> R<Dmr> {
        let e = xml::parse(doc.as_bytes()).map_err(|e| DmrError(e.to_string()))?;
        build_tree(&e, &ParseOptions { opaque_size: 16 })
    }

    #[test]
    fn scanning_numbers_as_c_does() {
        assert_eq!(scan_i64(" -12abc"), Some(-12));
        assert_eq!(scan_i64("x"), None);
        assert_eq!(scan_i64("99999999999999999999"), Some(i64::MAX));
        assert_eq!(scan_u64("-1"), Some(u64::MAX));
        assert_eq!(scan_f64("1.5e3x"), Some(1500.0));
        assert_eq!(scan_f64(".5"), Some(0.5));
        assert_eq!(scan_f64("1e"), Some(1.0));
        assert!(scan_f64("-nan").is_some_and(f64::is_nan));
        assert_eq!(scan_f64("e5"), None);
        assert_eq!(truncate(300, AtomicType::Byte), 44);
        assert_eq!(truncate(-1, AtomicType::UShort), 65535);
    }

    #[test]
    fn names_as_netcdf_c_makes_them() {
        assert_eq!(backslash_escape("a.b/c"), "a\\\\b\\\\c");
        assert_eq!(deescape("a\\/b\\"), "a/b");
        assert_eq!(parse_fqn("/g/a\\/b"), ["/", "g", "a/b"]);
        let d = tree(
            r#"<Dataset name="x"><Group name="g"><Structure name="s"><Structure name="t"><Int32 name="i"/></Structure></Structure><Float32 name="m"/></Group></Dataset>"#,
        )
        .unwrap();
        let names: Vec<&str> = d
            .all_types
            .iter()
            .map(|&t| d.nodes[t].name.as_str())
            .collect();
        assert_eq!(names, ["s", "s_t"]);
        let m = *d.all_vars.last().unwrap();
        assert_eq!(make_fqn(&d, m), "/g/m");
    }

    #[test]
    fn anonymous_dimensions_are_shared_in_the_root() {
        let d = tree(
            r#"<Dataset name="x"><Group name="g"><Int32 name="a"><Dim size="3"/></Int32></Group><Int16 name="b"><Dim size="3"/><Dim size="2"/></Int16></Dataset>"#,
        )
        .unwrap();
        let root = &d.nodes[d.root];
        let dims: Vec<&str> = root
            .dims
            .iter()
            .map(|&x| d.nodes[x].name.as_str())
            .collect();
        assert_eq!(dims, ["_Anonymous3", "_Anonymous2"]);
    }

    #[test]
    fn refusals() {
        for (doc, why) in [
            (r#"<Error/>"#, "not <Dataset>"),
            (
                r#"<Dataset><Int32 name="a"><Dim name="/nod"/></Int32></Dataset>"#,
                "nod",
            ),
            (r#"<Dataset><Bogus name="a"/></Dataset>"#, "Bogus"),
            (r#"<Dataset><Dimension name="d"/></Dataset>"#, "no size"),
            (
                r#"<Dataset><Int32 name="a"><Map name="/zz"/></Int32></Dataset>"#,
                "zz",
            ),
            (
                r#"<Dataset><Enum name="e" enum="/nope"/></Dataset>"#,
                "unknown type",
            ),
            (
                r#"<Dataset><Enumeration name="e" basetype="Int8"/></Dataset>"#,
                "no values",
            ),
            (r#"<Dataset><Int32/></Dataset>"#, "no name"),
            (
                r#"<Dataset><Attribute name="a" type="Foo"/></Dataset>"#,
                "unknown type",
            ),
        ] {
            let e = tree(doc).unwrap_err();
            assert!(e.0.contains(why), "{doc}: {}", e.0);
        }
    }
}
