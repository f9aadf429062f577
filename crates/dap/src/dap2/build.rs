//! A DDS and a DAS mapped to the netCDF classic model as netCDF-C 4.9.0 maps them in its
//! default "nc3 + ncdap" translation (`libdap2/ncd2dispatch.c`, `cdf.c`, `dapattr.c`,
//! `oc2/ocnode.c`):
//!
//! - variables are the atomic leaves: top-level ones first, then grid arrays, then the rest,
//!   each in DDS order; grid maps are not variables (their names name the array's
//!   dimensions); a leaf inside structures or sequences is named by its path (`S.f`), grids
//!   elided (a grid's array takes the grid's name);
//! - a variable's dimensions are its containers' dimensions, then its own, then a string
//!   length dimension (`maxStrlenN`) for String/Url, and a sequence's record count for the
//!   fields of a usable sequence (one not nested in another or in a structure array);
//! - dimensions of one name and size are one dimension; an anonymous one is named
//!   `VAR_i`; same-named ones of different sizes get `_1`, `_2`, ...; they are defined sorted
//!   by name, the `DODS_EXTRA.Unlimited_Dimension` one first and unlimited;
//! - types keep their size: Byte → byte, UInt16 → short, UInt32 → int, String → char;
//! - DAS containers matching a leaf give it their attributes; `*global` containers give
//!   global attributes; `DODS*` containers give `DODS_EXTRA.name` global attributes; other
//!   containers become global attributes named by their path (`Facility.PI`).

use std::collections::HashMap;

use nc_dataset::{AtomicType, Attribute, Dataset, DimId, NcType, Values, VarId, ROOT};

use super::parse::{BaseType, DasAttr, DasItem, Dds, DdsKind, DdsNode};
use super::xdr::{Atoms, Datum};

/// What the client parameters ask of the mapping.
#[derive(Debug, Clone, Default)]
pub struct MapOptions {
    /// Client parameters (keys lower case), `[k=v]` prefixes and fragment.
    pub params: Vec<(String, String)>,
    /// For a constrained DDS: the whole dataset's DDS. A DAS table of one of its variables
    /// that the constraint left out is dropped, not made global attributes (netCDF-C merges
    /// the DAS with the whole DDS first).
    pub whole: Option<Dds>,
}

impl MapOptions {
    fn param(&self, key: &str) -> Option<&str> {
        nc_store::param_in(&self.params, key)
    }

    fn fill_mismatch(&self) -> bool {
        // on by default; `fillmismatch` keeps it on, `nofillmismatch` turns it off
        self.param("fillmismatch").is_some() || self.param("nofillmismatch").is_none()
    }

    fn number(&self, key: &str) -> Option<usize> {
        let v = self.param(key)?;
        let digits: String = v
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse::<usize>().ok().filter(|&n| n > 0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Nk {
    Dataset,
    Structure,
    Sequence,
    Grid,
    Atomic(BaseType),
}

#[derive(Debug, Clone)]
struct Node {
    /// the DDS name (after netCDF-C's repair of `.` and `/`)
    ocname: String,
    /// the DDS name as parsed
    origname: String,
    kind: Nk,
    dims0: Vec<usize>,
    parent: Option<usize>,
    children: Vec<usize>,
    attrs: Vec<DasAttr>,
    basename: String,
    fullname: String,
    usesequence: bool,
    seqdim: Option<usize>,
    stringdim: Option<usize>,
    dimsetall: Vec<usize>,
    dimsetplus: Vec<usize>,
    dods_strlen: usize,
    dods_dimname: Option<String>,
    maxstringlength: usize,
    invisible: bool,
    basevar: Option<usize>,
}

#[derive(Debug, Clone)]
struct Dim {
    ocname: Option<String>,
    size: u64,
    array: usize,
    basedim: Option<usize>,
    index1: usize,
    name: String,
}

struct Tree {
    nodes: Vec<Node>,
    dims: Vec<Dim>,
}

/// The mapping's result: the dataset and, per variable, the DDS leaf that holds its values.
pub struct Mapped {
    /// the netCDF view
    pub dataset: Dataset,
    /// for each variable: the path of field indices from the top-level declarations to its
    /// DDS leaf (the first index is the top-level declaration's)
    pub leaves: Vec<(VarId, Vec<usize>)>,
    /// what was left out, one sentence each
    pub warnings: Vec<String>,
}

/// Mapping failed: the message and whether it is a `_FillValue` mismatch.
#[derive(Debug)]
pub enum MapError {
    /// a `_FillValue` whose type differs from its variable's, with mismatches refused
    FillMismatch(String),
    /// the DDS cannot be mapped (the message says why)
    Bad(String),
}

fn legal(name: &str) -> String {
    name.strip_prefix('/').unwrap_or(name).replace('/', "%2f")
}

fn repair(name: &str) -> String {
    name.replace('.', "%2e").replace('/', "%2f")
}

impl Tree {
    /// The DDS's nodes, the dataset (node 0) first.
    fn of(dds: &Dds) -> Tree {
        let mut t = Tree {
            nodes: Vec::new(),
            dims: Vec::new(),
        };
        let root = t.push_node(&dds.name, Nk::Dataset, None);
        for v in &dds.vars {
            let c = t.add(v, Some(root));
            t.nodes[root].children.push(c);
        }
        t
    }

    fn add(&mut self, d: &DdsNode, parent: Option<usize>) -> usize {
        let kind = match &d.kind {
            DdsKind::Base(b) => Nk::Atomic(*b),
            DdsKind::Structure => Nk::Structure,
            DdsKind::Sequence => Nk::Sequence,
            DdsKind::Grid => Nk::Grid,
        };
        let id = self.push_node(&d.name, kind, parent);
        for dd in &d.dims {
            let di = self.dims.len();
            self.dims.push(Dim {
                ocname: dd.name.as_ref().map(|n| repair(n)),
                size: dd.size,
                array: id,
                basedim: None,
                index1: 0,
                name: String::new(),
            });
            self.nodes[id].dims0.push(di);
        }
        for f in &d.fields {
            let c = self.add(f, Some(id));
            self.nodes[id].children.push(c);
        }
        id
    }

    fn push_node(&mut self, name: &str, kind: Nk, parent: Option<usize>) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            ocname: repair(name),
            origname: name.to_string(),
            kind,
            dims0: Vec::new(),
            parent,
            children: Vec::new(),
            attrs: Vec::new(),
            basename: legal(name),
            fullname: String::new(),
            usesequence: false,
            seqdim: None,
            stringdim: None,
            dimsetall: Vec::new(),
            dimsetplus: Vec::new(),
            dods_strlen: 0,
            dods_dimname: None,
            maxstringlength: 0,
            invisible: false,
            basevar: None,
        });
        id
    }

    /// The path from below the root to `n`, root excluded.
    fn path(&self, n: usize) -> Vec<usize> {
        let mut p = vec![n];
        let mut at = n;
        while let Some(up) = self.nodes[at].parent {
            if up == 0 {
                break;
            }
            p.push(up);
            at = up;
        }
        p.reverse();
        p
    }

    fn oc_fullname(&self, n: usize) -> String {
        let names: Vec<&str> = self
            .path(n)
            .iter()
            .map(|&i| self.nodes[i].origname.as_str())
            .collect();
        names.join(".")
    }

    /// netCDF-C's `makecdfpathstring`: base names from below the dataset, `.`-joined.
    fn cdf_path(&self, n: usize, elide_grids: bool) -> String {
        let names: Vec<&str> = self
            .path(n)
            .iter()
            .filter(|&&i| !(elide_grids && self.nodes[i].kind == Nk::Grid))
            .map(|&i| self.nodes[i].basename.as_str())
            .collect();
        names.join(".")
    }

    fn new_dim(&mut self, ocname: &str, size: u64, array: usize) -> usize {
        let id = self.dims.len();
        self.dims.push(Dim {
            ocname: Some(ocname.to_string()),
            size,
            array,
            basedim: None,
            index1: 0,
            name: legal(ocname),
        });
        id
    }
}

/// A DAS table flattened: its path name, its own name, its direct attributes and nested
/// tables (for orphan attributes).
struct Table<'a> {
    /// its position in the list of tables
    id: usize,
    /// the table holding it (None for the outer one) and its item index there
    parent: Option<usize>,
    child: Option<usize>,
    fullname: String,
    name: Option<&'a str>,
    items: &'a [DasItem],
    prefix: String,
}

/// The tables below `items` in the order netCDF-C's parser creates them (each after the
/// tables it holds), appended to `out`; returns the ids of the tables directly in `items`.
fn tables<'a>(items: &'a [DasItem], prefix: &str, out: &mut Vec<Table<'a>>) -> Vec<usize> {
    let mut mine = Vec::new();
    for (k, it) in items.iter().enumerate() {
        if let DasItem::Table { name, items } = it {
            let full = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let kids = tables(items, &full, out);
            let id = out.len();
            for kid in kids {
                out[kid].parent = Some(id);
            }
            out.push(Table {
                id,
                parent: None,
                child: Some(k),
                fullname: full.clone(),
                name: Some(name),
                items,
                prefix: full,
            });
            mine.push(id);
        }
    }
    mine
}

fn direct_attrs(items: &[DasItem]) -> impl Iterator<Item = &DasAttr> {
    items.iter().filter_map(|i| match i {
        DasItem::Attr(a) => Some(a),
        DasItem::Table { .. } => None,
    })
}

fn put(attrs: &mut Vec<DasAttr>, a: DasAttr) {
    match attrs.iter_mut().find(|x| x.name == a.name) {
        Some(x) => *x = a,
        None => attrs.push(a),
    }
}

/// The names a DAS table may give a leaf of `dds`: its full name and its own name.
fn leaf_names(dds: &Dds) -> Vec<String> {
    let t = Tree::of(dds);
    let mut names = Vec::new();
    for i in 0..t.nodes.len() {
        if matches!(t.nodes[i].kind, Nk::Atomic(_)) {
            names.push(t.oc_fullname(i));
            names.push(t.nodes[i].origname.clone());
        }
    }
    names
}

/// `ocddsdasmerge`: attach the DAS's attributes to the DDS leaves and the root; a table
/// naming one of `elsewhere` (variables a constraint left out) is dropped.
fn merge_das(t: &mut Tree, das: &[DasItem], elsewhere: &[String]) {
    let mut all = Vec::new();
    let top = tables(das, "", &mut all);
    // the unnamed outer table comes last, as netCDF-C's parser creates it last
    let outer = all.len();
    for id in top {
        all[id].parent = Some(outer);
    }
    all.push(Table {
        id: outer,
        parent: None,
        child: None,
        fullname: String::new(),
        name: None,
        items: das,
        prefix: String::new(),
    });
    let mut globals = Vec::new();
    let mut dods = Vec::new();
    let mut vars = Vec::new();
    for (i, tb) in all.iter().enumerate() {
        match tb.name {
            None => globals.push(i),
            Some(n) if n.len() >= 6 && n[n.len() - 6..].eq_ignore_ascii_case("global") => {
                globals.push(i)
            }
            Some(n) if n.starts_with("DODS") => dods.push(i),
            Some(_) if direct_attrs(tb.items).next().is_some() => vars.push(i),
            Some(_) => {}
        }
    }
    let leaves: Vec<usize> = (0..t.nodes.len())
        .filter(|&i| matches!(t.nodes[i].kind, Nk::Atomic(_)))
        .collect();
    let fullnames: Vec<String> = leaves.iter().map(|&i| t.oc_fullname(i)).collect();
    // attributes given to a variable, so orphans skip them: (table, item) positions
    let mut merged: Vec<(usize, usize)> = Vec::new();
    let mut unmatched = Vec::new();
    for &ti in &vars {
        let tb = &all[ti];
        let name = tb.name.unwrap_or("");
        let mut hit = false;
        for (k, &leaf) in leaves.iter().enumerate() {
            if tb.fullname == fullnames[k] || name == fullnames[k] || name == t.nodes[leaf].origname
            {
                hit = true;
                for (k, it) in tb.items.iter().enumerate() {
                    if let DasItem::Attr(a) = it {
                        merged.push((tb.id, k));
                        t.nodes[leaf].attrs.push(a.clone());
                    }
                }
            }
        }
        if !hit && !elsewhere.iter().any(|n| *n == tb.fullname || n == name) {
            unmatched.push(ti);
        }
    }
    let mut root = Vec::new();
    for &ti in &globals {
        for a in direct_attrs(all[ti].items) {
            put(&mut root, a.clone());
        }
    }
    for &ti in &dods {
        let tb = &all[ti];
        for a in direct_attrs(tb.items) {
            put(
                &mut root,
                DasAttr {
                    name: format!("{}.{}", tb.name.unwrap_or(""), a.name),
                    ..a.clone()
                },
            );
        }
    }
    fn orphans(
        tb: &Table,
        all: &[Table],
        prefix: &str,
        merged: &[(usize, usize)],
        root: &mut Vec<DasAttr>,
    ) {
        for (k, it) in tb.items.iter().enumerate() {
            match it {
                DasItem::Attr(a) => {
                    if merged.contains(&(tb.id, k)) {
                        continue;
                    }
                    put(
                        root,
                        DasAttr {
                            name: format!("{prefix}.{}", a.name),
                            ..a.clone()
                        },
                    );
                }
                DasItem::Table { name, .. } => {
                    // the nested table's own entry (its id) tells which items were merged
                    if let Some(sub) = all
                        .iter()
                        .find(|s| s.parent == Some(tb.id) && s.child == Some(k))
                    {
                        orphans(sub, all, &format!("{prefix}.{name}"), merged, root);
                    }
                }
            }
        }
    }
    for &ti in &unmatched {
        orphans(&all[ti], &all, &all[ti].prefix, &merged, &mut root);
    }
    t.nodes[0].attrs = root;
}

/// `fixgrid`: name a grid array's dimensions after its maps; the array takes the grid's name.
fn fix_grid(t: &mut Tree, g: usize) {
    let kids = t.nodes[g].children.clone();
    let Some(&array) = kids.first() else { return };
    t.nodes[array].basename = t.nodes[g].basename.clone();
    if kids.len() - 1 != t.nodes[array].dims0.len() {
        return;
    }
    for (i, &map) in kids.iter().enumerate().skip(1) {
        let adim = t.nodes[array].dims0[i - 1];
        if t.nodes[map].dims0.len() != 1 {
            return;
        }
        let mapname = t.nodes[map].ocname.clone();
        if t.dims[adim].ocname.as_ref().is_some_and(|n| *n != mapname) {
            return;
        }
        let mdim = t.nodes[map].dims0[0];
        if t.dims[mdim].ocname.as_ref().is_some_and(|n| *n != mapname) {
            return;
        }
        if t.dims[mdim].ocname.is_none() {
            t.dims[mdim].ocname = Some(mapname.clone());
        }
        if t.dims[adim].ocname.is_none() {
            t.dims[adim].ocname = Some(mapname);
        }
    }
}

/// `sequencecheckr`: mark the usable sequences; Err when nothing below is usable.
fn sequence_check(t: &mut Tree, n: usize, top: Option<usize>, leaves: &[usize]) -> bool {
    if top.is_none() && !t.nodes[n].dims0.is_empty() {
        return false;
    }
    if t.nodes[n].kind == Nk::Sequence {
        let mut ok = false;
        for c in t.nodes[n].children.clone() {
            if sequence_check(t, c, Some(n), leaves) {
                ok = true;
            }
        }
        let usable = top.is_none() && ok;
        t.nodes[n].usesequence = usable;
        return usable;
    }
    if leaves.contains(&n) {
        return true;
    }
    let mut ok = false;
    for c in t.nodes[n].children.clone() {
        if sequence_check(t, c, top, leaves) {
            ok = true;
        }
    }
    ok
}

/// The datum of node `n` in the decoded data, when only scalar structures lead to it.
fn scalar_datum<'d>(t: &Tree, data: &'d [Datum], n: usize) -> Option<&'d Datum> {
    let path = t.path(n);
    let first = path.first()?;
    let idx = t.nodes[0].children.iter().position(|c| c == first)?;
    let mut d = data.get(idx)?;
    for w in path.windows(2) {
        let pos = t.nodes[w[0]].children.iter().position(|c| *c == w[1])?;
        match d {
            Datum::Fields(f) => d = f.get(pos)?,
            _ => return None,
        }
    }
    Some(d)
}

/// Map a parsed DDS and DAS to a dataset. `data` (the decoded `.dods`) gives the record
/// counts of sequences; without it sequences have no usable dimension.
///
/// # Errors
/// A `_FillValue` mismatch refused by `[nofillmismatch]`; two variables of one name.
pub fn map(
    dds: &Dds,
    das: &[DasItem],
    data: Option<&[Datum]>,
    opts: &MapOptions,
    name: &str,
) -> Result<Mapped, MapError> {
    let mut t = Tree::of(dds);
    let elsewhere = opts.whole.as_ref().map(leaf_names).unwrap_or_default();
    merge_das(&mut t, das, &elsewhere);
    let mut warnings = Vec::new();

    // special DODS attributes
    let mut record_name: Option<String> = None;
    for n in 0..t.nodes.len() {
        for a in t.nodes[n].attrs.clone() {
            let first = a.values.first().cloned();
            match a.name.as_str() {
                "DODS.strlen" | "DODS_EXTRA.strlen" => {
                    t.nodes[n].dods_strlen = first
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0)
                }
                "DODS.dimName" | "DODS_EXTRA.dimName" => t.nodes[n].dods_dimname = first,
                "DODS.Unlimited_Dimension" | "DODS_EXTRA.Unlimited_Dimension"
                    if record_name.is_none() =>
                {
                    record_name = first;
                }
                _ => {}
            }
        }
    }

    // cdf full names (before grids rename their arrays)
    for n in 1..t.nodes.len() {
        t.nodes[n].fullname = t.cdf_path(n, false);
    }
    let atomic: Vec<usize> = (1..t.nodes.len())
        .filter(|&i| matches!(t.nodes[i].kind, Nk::Atomic(_)))
        .collect();
    let parent_kind = |t: &Tree, i: usize| t.nodes[i].parent.map(|p| t.nodes[p].kind);
    let is_grid_field = |t: &Tree, i: usize| parent_kind(t, i) == Some(Nk::Grid);
    let is_grid_array = |t: &Tree, i: usize| {
        is_grid_field(t, i)
            && t.nodes[i]
                .parent
                .is_some_and(|p| t.nodes[p].children.first() == Some(&i))
    };
    let mut varnodes: Vec<usize> = atomic
        .iter()
        .copied()
        .filter(|&i| t.nodes[i].parent == Some(0))
        .collect();
    varnodes.extend(atomic.iter().copied().filter(|&i| is_grid_array(&t, i)));
    varnodes.extend(
        atomic
            .iter()
            .copied()
            .filter(|&i| t.nodes[i].parent != Some(0) && !is_grid_field(&t, i)),
    );

    let grids: Vec<usize> = (0..t.nodes.len())
        .filter(|&i| t.nodes[i].kind == Nk::Grid)
        .collect();
    for g in grids {
        fix_grid(&mut t, g);
    }

    sequence_check(&mut t, 0, None, &varnodes);
    // suppress variables under unusable sequences
    varnodes.retain(|&v| {
        !t.path(v)
            .iter()
            .any(|&n| t.nodes[n].kind == Nk::Sequence && !t.nodes[n].usesequence)
    });

    // string lengths
    let default_len = opts
        .number("stringlength")
        .or_else(|| opts.number("maxstrlen"))
        .unwrap_or(64);
    for &v in &varnodes {
        let path = t.oc_fullname(v);
        t.nodes[v].maxstringlength = opts
            .number(&format!("stringlength_{path}"))
            .or_else(|| opts.number(&format!("maxstrlen_{path}")))
            .unwrap_or(0);
    }
    let global_sdim = t.new_dim(&format!("maxStrlen{default_len}"), default_len as u64, 0);
    for &v in &varnodes {
        let Nk::Atomic(bt) = t.nodes[v].kind else {
            continue;
        };
        if !bt.is_string() {
            continue;
        }
        let size = if t.nodes[v].dods_strlen > 0 {
            t.nodes[v].dods_strlen
        } else {
            t.nodes[v].maxstringlength
        };
        let sdim = if size == 0 {
            global_sdim
        } else {
            let name = t.nodes[v]
                .dods_dimname
                .clone()
                .unwrap_or_else(|| format!("maxStrlen{size}"));
            t.new_dim(&name, size as u64, v)
        };
        t.nodes[v].stringdim = Some(sdim);
    }

    // sequence dimensions
    let seqs: Vec<usize> = (0..t.nodes.len())
        .filter(|&i| t.nodes[i].kind == Nk::Sequence)
        .collect();
    for s in seqs {
        let mut usable = true;
        let mut up = t.nodes[s].parent;
        while let Some(c) = up {
            match t.nodes[c].kind {
                Nk::Dataset => break,
                Nk::Structure if t.nodes[c].dims0.is_empty() => {}
                _ => {
                    usable = false;
                    break;
                }
            }
            up = t.nodes[c].parent;
        }
        let count = if usable {
            match data.and_then(|d| scalar_datum(&t, d, s)) {
                Some(Datum::Records(r)) => Some(r.len() as u64),
                _ => None,
            }
        } else {
            None
        };
        t.nodes[s].usesequence = count.is_some();
        if let Some(count) = count {
            let name = t.nodes[s].ocname.clone();
            let d = t.new_dim(&name, count, s);
            t.nodes[s].seqdim = Some(d);
        } else if usable {
            warnings.push(format!(
                "sequence \"{}\": its records could not be counted; its fields are left out",
                t.oc_fullname(s)
            ));
        }
    }
    varnodes.retain(|&v| {
        !t.path(v)
            .iter()
            .any(|&n| t.nodes[n].kind == Nk::Sequence && !t.nodes[n].usesequence)
    });

    // dimension sets: own (+ string, + sequence), then all = the container's (cloned) + own
    let order: Vec<usize> = (0..t.nodes.len()).collect();
    for n in order {
        let mut plus = t.nodes[n].dims0.clone();
        plus.extend(t.nodes[n].stringdim);
        plus.extend(t.nodes[n].seqdim);
        let mut all = Vec::new();
        if let Some(p) = t.nodes[n].parent {
            for d in t.nodes[p].dimsetall.clone() {
                let mut c = t.dims[d].clone();
                c.array = n;
                all.push(t.dims.len());
                t.dims.push(c);
            }
        }
        all.extend(plus.iter().copied());
        t.nodes[n].dimsetplus = plus;
        t.nodes[n].dimsetall = all;
    }

    // computecdfdimnames
    let mut alldims: Vec<usize> = Vec::new();
    for &v in &varnodes {
        for &d in &t.nodes[v].dimsetall {
            if !alldims.contains(&d) {
                alldims.push(d);
            }
        }
    }
    for &v in &varnodes {
        for (j, &d) in t.nodes[v].dimsetall.clone().iter().enumerate() {
            if t.dims[d].ocname.is_none() {
                t.dims[d].index1 = j + 1;
            }
        }
    }
    for i in 0..alldims.len() {
        let b = alldims[i];
        if t.dims[b].basedim.is_some() {
            continue;
        }
        for &dup in &alldims[i + 1..] {
            if dup == b || t.dims[dup].basedim.is_some() {
                continue;
            }
            let (x, y) = (&t.dims[b], &t.dims[dup]);
            if x.size == y.size && x.ocname.is_some() && x.ocname == y.ocname {
                t.dims[dup].basedim = Some(b);
            }
        }
    }
    for i in 0..alldims.len() {
        let b = alldims[i];
        if t.dims[b].basedim.is_some() {
            continue;
        }
        let mut conflicts = Vec::new();
        for &d in &alldims[i + 1..] {
            let (x, y) = (&t.dims[b], &t.dims[d]);
            if y.basedim.is_some() || x.ocname.is_none() || y.ocname.is_none() {
                continue;
            }
            if x.ocname != y.ocname || x.size == y.size {
                continue;
            }
            conflicts.push(d);
        }
        for (j, d) in conflicts.into_iter().enumerate() {
            t.dims[d].index1 = j + 1;
        }
    }
    for &v in &varnodes {
        let all: Vec<usize> = t.nodes[v]
            .dimsetall
            .iter()
            .map(|&d| t.dims[d].basedim.unwrap_or(d))
            .collect();
        t.nodes[v].dimsetall = all;
    }
    let mut basedims: Vec<usize> = Vec::new();
    for &d in &alldims {
        if t.dims[d].basedim.is_none() && !basedims.contains(&d) {
            basedims.push(d);
        }
    }
    for &d in &basedims {
        let dim = &t.dims[d];
        let name = match &dim.ocname {
            None => legal(&format!(
                "{}_{}",
                t.nodes[dim.array].fullname,
                dim.index1.saturating_sub(1)
            )),
            Some(n) if dim.index1 > 0 => format!("{}_{}", legal(n), dim.index1),
            Some(n) => legal(n),
        };
        t.dims[d].name = name;
    }
    // duplicate names: the later ones are dropped (netCDF-C complains and suppresses them)
    let mut i = 0;
    while i < basedims.len() {
        let name = t.dims[basedims[i]].name.clone();
        let mut j = basedims.len();
        while j > i + 1 {
            j -= 1;
            if t.dims[basedims[j]].name == name {
                warnings.push(format!(
                    "two dimensions are named \"{name}\" (sizes {} and {}); the second is dropped",
                    t.dims[basedims[i]].size, t.dims[basedims[j]].size
                ));
                let gone = basedims.remove(j);
                let keep = basedims[i];
                for n in t.nodes.iter_mut() {
                    for d in n.dimsetall.iter_mut() {
                        if *d == gone {
                            *d = keep;
                        }
                    }
                }
            }
        }
        i += 1;
    }

    // zero-size dimensions hide their variables
    for &v in &varnodes {
        if t.nodes[v].dimsetplus.iter().any(|&d| t.dims[d].size == 0) {
            t.nodes[v].invisible = true;
        }
    }

    // the record dimension
    let record = record_name.as_ref().and_then(|r| {
        basedims
            .iter()
            .copied()
            .find(|&d| t.dims[d].ocname.as_deref() == Some(r.as_str()))
    });
    if record.is_some() && (0..t.nodes.len()).any(|i| t.nodes[i].kind == Nk::Sequence) {
        return Err(MapError::Bad(
            "an unlimited dimension is named (DODS_EXTRA.Unlimited_Dimension) but the DDS has sequences"
                .to_string(),
        ));
    }

    // variable names (grids elided)
    for &v in &varnodes {
        t.nodes[v].fullname = t.cdf_path(v, false);
    }
    for i in 0..varnodes.len() {
        let v = varnodes[i];
        for &w in &varnodes[..i] {
            if t.nodes[w].basevar.is_some() || t.nodes[w].fullname != t.nodes[v].fullname {
                continue;
            }
            let (a, b) = (&t.nodes[w].dimsetall, &t.nodes[v].dimsetall);
            if a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(&x, &y)| t.dims[x].size == t.dims[y].size)
            {
                t.nodes[w].basevar = Some(v);
            }
        }
    }
    for i in 0..varnodes.len() {
        let v = varnodes[i];
        if t.nodes[v].basevar.is_some() {
            continue;
        }
        for &w in &varnodes[..i] {
            if t.nodes[w].basevar.is_none() && t.nodes[w].fullname == t.nodes[v].fullname {
                return Err(MapError::Bad(format!(
                    "two variables are named \"{}\"",
                    t.nodes[v].fullname
                )));
            }
        }
    }

    // the dataset: dimensions sorted by name, the record dimension first
    let mut ds = Dataset::new(name);
    ds.format = Some(nc_dataset::Format::Classic);
    let mut sorted = basedims.clone();
    sorted.sort_by(|&a, &b| t.dims[a].name.as_bytes().cmp(t.dims[b].name.as_bytes()));
    let mut dim_ids: HashMap<usize, DimId> = HashMap::new();
    if let Some(r) = record {
        let id = ds.add_dim(ROOT, t.dims[r].name.clone(), t.dims[r].size, true);
        dim_ids.insert(r, id);
    }
    for &d in &sorted {
        if Some(d) == record {
            continue;
        }
        let id = ds.add_dim(ROOT, t.dims[d].name.clone(), t.dims[d].size, false);
        dim_ids.insert(d, id);
    }

    for a in &t.nodes[0].attrs {
        put_att(&mut ds.groups[0].atts, attribute(a, a.ty));
    }

    let mut leaves = Vec::new();
    for &v in &varnodes {
        let node = &t.nodes[v];
        if node.invisible || node.basevar.is_some() {
            continue;
        }
        let Nk::Atomic(bt) = node.kind else { continue };
        let name = t.cdf_path(v, true);
        let dims: Vec<DimId> = node
            .dimsetall
            .iter()
            .filter_map(|d| dim_ids.get(d).copied())
            .collect();
        let vid = ds.add_var(ROOT, name.clone(), NcType::Atomic(nc_type(bt)), dims);
        // a Byte variable with an Int16 _FillValue and `_Unsigned = false` passes a signed
        // byte through DAP2: its fill becomes a byte and `_Unsigned` reads "false"
        let signed_fill = signed_byte_case(node, bt);
        let mut atts = Vec::new();
        for a in &node.attrs {
            let att = if signed_fill && a.name == "_FillValue" && a.ty == BaseType::Int16 {
                attribute(a, BaseType::Byte)
            } else if signed_fill && a.name == "_Unsigned" {
                Attribute::text("_Unsigned", "false")
            } else if a.name == "_FillValue" && dap_etype(a.ty) != dap_etype(bt) {
                if !opts.fill_mismatch() {
                    return Err(MapError::FillMismatch(name));
                }
                attribute(a, bt)
            } else {
                attribute(a, a.ty)
            };
            put_att(&mut atts, att);
        }
        ds.var_mut(vid).atts = atts;
        let path = leaf_path(&t, v);
        leaves.push((vid, path));
    }
    Ok(Mapped {
        dataset: ds,
        leaves,
        warnings,
    })
}

fn signed_byte_case(node: &Node, bt: BaseType) -> bool {
    bt == BaseType::Byte
        && node
            .attrs
            .iter()
            .any(|a| a.name == "_FillValue" && a.ty == BaseType::Int16)
        && node
            .attrs
            .iter()
            .find(|a| a.name == "_Unsigned")
            .and_then(|a| a.values.first())
            .is_some_and(|s| s.eq_ignore_ascii_case("false") || s == "0")
}

fn leaf_path(t: &Tree, v: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = v;
    while let Some(p) = t.nodes[at].parent {
        let pos = t.nodes[p]
            .children
            .iter()
            .position(|&c| c == at)
            .unwrap_or(0);
        out.push(pos);
        at = p;
    }
    out.reverse();
    out
}

fn put_att(atts: &mut Vec<Attribute>, a: Attribute) {
    match atts.iter_mut().find(|x| x.name == a.name) {
        Some(x) => *x = a,
        None => atts.push(a),
    }
}

/// netCDF-C's `octypetonc`, compared for `_FillValue` mismatches (String and Url are one).
fn dap_etype(b: BaseType) -> u8 {
    match b {
        BaseType::Byte => 1,
        BaseType::Int16 => 2,
        BaseType::UInt16 => 3,
        BaseType::Int32 => 4,
        BaseType::UInt32 => 5,
        BaseType::Float32 => 6,
        BaseType::Float64 => 7,
        BaseType::String | BaseType::Url => 8,
    }
}

/// The netCDF type of a DAP base type (`nctypeconvert`: sizes kept, signedness dropped).
pub fn nc_type(b: BaseType) -> AtomicType {
    match b {
        BaseType::Byte => AtomicType::Byte,
        BaseType::Int16 | BaseType::UInt16 => AtomicType::Short,
        BaseType::Int32 | BaseType::UInt32 => AtomicType::Int,
        BaseType::Float32 => AtomicType::Float,
        BaseType::Float64 => AtomicType::Double,
        BaseType::String | BaseType::Url => AtomicType::Char,
    }
}

/// netCDF-C's `dapexpandescapes`.
pub fn expand_escapes(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        i += 1;
        let Some(&c) = s.get(i) else {
            out.push(b'\\');
            break;
        };
        match c {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'\\' => out.push(b'\\'),
            b'?' => out.push(0x7f),
            b'x' => {
                i += 1;
                let start = i;
                while i < s.len() && s[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let v = std::str::from_utf8(&s[start..i])
                    .ok()
                    .and_then(|h| u64::from_str_radix(h, 16).ok())
                    .unwrap_or(0);
                out.push(v as u8);
                continue;
            }
            b'0'..=b'7' => {
                let oct = s
                    .get(i..i + 3)
                    .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
                match oct {
                    Some(d) => {
                        let v = (u32::from(d[0] - b'0') << 6)
                            | (u32::from(d[1] - b'0') << 3)
                            | u32::from(d[2] - b'0');
                        out.push(v as u8);
                        i += 3;
                        continue;
                    }
                    None => {
                        // not three octal digits: the backslash stays
                        out.push(b'\\');
                        continue;
                    }
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    out
}

/// `cvtnumconst`: an integer when the whole text is one, else a double when the whole text
/// is one, else the integer prefix (0 if none).
enum Num {
    Int(i64),
    Dbl(f64),
}

fn num(s: &str) -> Num {
    let t = s.trim_start();
    if let Ok(v) = t.parse::<i64>() {
        return Num::Int(v);
    }
    if let Ok(v) = t.parse::<f64>() {
        return Num::Dbl(v);
    }
    let b = t.as_bytes();
    let mut end = 0;
    if end < b.len() && (b[end] == b'-' || b[end] == b'+') {
        end += 1;
    }
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    Num::Int(t[..end].parse::<i64>().unwrap_or(0))
}

/// A DAS attribute as a netCDF attribute, its values converted to `ty` as netCDF-C does.
fn attribute(a: &DasAttr, ty: BaseType) -> Attribute {
    if ty.is_string() {
        let mut text = Vec::new();
        for (i, v) in a.values.iter().enumerate() {
            if i > 0 {
                text.push(b'\n');
            }
            text.extend_from_slice(v.as_bytes());
        }
        let mut text = expand_escapes(&text);
        if let Some(z) = text.iter().position(|&c| c == 0) {
            text.truncate(z);
        }
        if text.is_empty() {
            text.push(0);
        }
        return Attribute::new(a.name.clone(), Values::Char(text));
    }
    let at = nc_type(ty);
    let ints = |f: &dyn Fn(i64) -> i64| -> Vec<i64> {
        a.values
            .iter()
            .map(|s| match num(s) {
                Num::Int(v) => f(v),
                Num::Dbl(d) => {
                    let v = d as i64;
                    if v < i64::from(i32::MIN) || v > i64::from(i32::MAX) {
                        0
                    } else {
                        f(v)
                    }
                }
            })
            .collect()
    };
    let dbls = || -> Vec<f64> {
        a.values
            .iter()
            .map(|s| match num(s) {
                Num::Int(v) => v as f64,
                Num::Dbl(d) => d,
            })
            .collect()
    };
    let values = match at {
        AtomicType::Byte => Values::Byte(ints(&|v| v).into_iter().map(|v| v as i8).collect()),
        AtomicType::Short => Values::Short(ints(&|v| v).into_iter().map(|v| v as i16).collect()),
        AtomicType::Int => Values::Int(ints(&|v| v).into_iter().map(|v| v as i32).collect()),
        AtomicType::Float => Values::Float(dbls().into_iter().map(|v| v as f32).collect()),
        _ => Values::Double(dbls()),
    };
    Attribute::new(a.name.clone(), values)
}

/// The values of every variable, gathered from the decoded data: each leaf's instances in
/// the order the data holds them (row-major over its containers' and its own dimensions).
///
/// The decoded arrays are moved out of `data` (a leaf's array left empty), not copied: a
/// variable whose values are one array (a top-level array, a Grid's array or map) gets that
/// array itself.
///
/// # Errors
/// A variable whose gathered values do not fill its dimensions (the data and the DDS
/// disagree).
pub fn gather(
    ds: &Dataset,
    dds: &Dds,
    data: &mut [Datum],
    leaves: &[(VarId, Vec<usize>)],
) -> Result<Vec<(VarId, Values)>, String> {
    gather_counted(ds, dds, data, leaves, None)
}

/// [`gather`], with `count` values of each leaf when given (a hyperslab the server was asked
/// for) instead of its variable's every element.
///
/// # Errors
/// As [`gather`].
pub fn gather_counted(
    ds: &Dataset,
    dds: &Dds,
    data: &mut [Datum],
    leaves: &[(VarId, Vec<usize>)],
    count: Option<u64>,
) -> Result<Vec<(VarId, Values)>, String> {
    let mut out = Vec::new();
    for (k, (vid, path)) in leaves.iter().enumerate() {
        let Some((&top, rest)) = path.split_first() else {
            continue;
        };
        let (Some(node), Some(datum)) = (dds.vars.get(top), data.get_mut(top)) else {
            continue;
        };
        // a path named again by a later leaf keeps its arrays for it
        let take = !leaves[k + 1..].iter().any(|(_, p)| p == path);
        let mut acc: Vec<Atoms> = Vec::new();
        collect(node, datum, rest, take, &mut acc);
        let var = ds.var(*vid);
        let Some(want) = count.or_else(|| ds.num_elements(*vid)) else {
            continue;
        };
        let values = if var.ty == NcType::Atomic(AtomicType::Char) {
            let strlen = var.dims.last().map_or(1, |d| ds.dim(*d).len) as usize;
            let mut bytes = Vec::new();
            for a in &acc {
                if let Atoms::Str(ss) = a {
                    for s in ss {
                        let mut e = expand_escapes(s);
                        if let Some(z) = e.iter().position(|&c| c == 0) {
                            e.truncate(z);
                        }
                        e.resize(strlen, 0);
                        bytes.extend_from_slice(&e);
                    }
                }
            }
            Values::Char(bytes)
        } else {
            let ty = match var.ty {
                NcType::Atomic(a) => a,
                NcType::User(_) => continue,
            };
            if acc.len() == 1 {
                acc.pop().map_or_else(|| Values::empty(ty), atoms_values)
            } else {
                let mut v = Values::empty(ty);
                for a in acc {
                    v.extend_from(&atoms_values(a));
                }
                v
            }
        };
        if values.len() as u64 != want {
            return Err(format!(
                "variable \"{}\": the data holds {} values, its dimensions {want}",
                var.name,
                values.len()
            ));
        }
        out.push((*vid, values));
    }
    Ok(out)
}

fn atoms_values(a: Atoms) -> Values {
    match a {
        Atoms::U8(v) => Values::Byte(v.into_iter().map(|x| x as i8).collect()),
        Atoms::I16(v) => Values::Short(v),
        Atoms::U16(v) => Values::Short(v.into_iter().map(|x| x as i16).collect()),
        Atoms::I32(v) => Values::Int(v),
        Atoms::U32(v) => Values::Int(v.into_iter().map(|x| x as i32).collect()),
        Atoms::F32(v) => Values::Float(v),
        Atoms::F64(v) => Values::Double(v),
        Atoms::Str(v) => Values::Char(v.concat()),
    }
}

/// The arrays of the leaf at `rest` below `d`, in data order: moved out of `d` (left empty)
/// when `take`, else cloned.
fn collect(node: &DdsNode, d: &mut Datum, rest: &[usize], take: bool, acc: &mut Vec<Atoms>) {
    match d {
        Datum::Atomic(a) => {
            if rest.is_empty() {
                acc.push(if take { a.take() } else { a.clone() });
            }
        }
        Datum::Fields(f) => {
            if let Some((&i, more)) = rest.split_first() {
                if let (Some(n), Some(fd)) = (node.fields.get(i), f.get_mut(i)) {
                    collect(n, fd, more, take, acc);
                }
            }
        }
        Datum::Elements(els) | Datum::Records(els) => {
            if let Some((&i, more)) = rest.split_first() {
                if let Some(n) = node.fields.get(i) {
                    for e in els {
                        if let Some(fd) = e.get_mut(i) {
                            collect(n, fd, more, take, acc);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::{parse_das, parse_dds, Parsed};
    use super::*;

    fn mapped(dds: &str, das: &str) -> Mapped {
        let Parsed::Ok(dds) = parse_dds(dds.as_bytes()).unwrap() else {
            panic!()
        };
        let Parsed::Ok(das) = parse_das(das.as_bytes()).unwrap() else {
            panic!()
        };
        map(&dds, &das, None, &MapOptions::default(), "t")
            .map_err(|e| format!("{e:?}"))
            .unwrap()
    }

    #[test]
    fn structures_grids_and_strings() {
        let m = mapped(
            "Dataset { Structure { Int32 i[3]; Grid { ARRAY: Float64 a[10]; MAPS: Float64 x[10]; } G; } exp; String s; } d;",
            "Attributes { s { String u \"m\"; } Facility { String pi \"a\", \"b\"; } }",
        );
        let ds = &m.dataset;
        let names: Vec<&str> = ds.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["s", "exp.G", "exp.i"]);
        let dims: Vec<&str> = ds.dims.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(dims, ["exp.i_0", "maxStrlen64", "x"]);
        assert_eq!(ds.vars[0].atts[0].values, Values::Char(b"m".to_vec()));
        assert_eq!(ds.groups[0].atts[0].name, "Facility.pi");
        assert_eq!(ds.groups[0].atts[0].values, Values::Char(b"a\nb".to_vec()));
    }

    #[test]
    fn escapes_expand_as_netcdf_c_does() {
        assert_eq!(expand_escapes(br"a\nb\\012\x41\101\q"), b"a\nb\\012AAq");
    }

    #[test]
    fn numeric_attributes_truncate_to_the_type() {
        let a = DasAttr {
            name: "x".into(),
            ty: BaseType::Byte,
            values: vec!["200".into(), "1.5".into()],
        };
        assert_eq!(attribute(&a, a.ty).values, Values::Byte(vec![-56, 1]));
        let a = DasAttr {
            name: "x".into(),
            ty: BaseType::Float32,
            values: vec!["3".into()],
        };
        assert_eq!(attribute(&a, a.ty).values, Values::Float(vec![3.0]));
    }
}
