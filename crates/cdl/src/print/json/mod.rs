//! `ncdump-rs -j`: a dataset as JSON, in the shape of NCO's `ncks --jsn` (`dimensions`,
//! `variables` with `shape`/`type`/`attributes`/`data`, `attributes`, `groups`) extended to the
//! whole netCDF data model, lossless and always valid. The schema is written down in
//! `docs/json.md` and `docs/ncdump-json.schema.json`.
//!
//! The header is built in a buffer; variable data streams through it in the same bounded
//! hyperslabs as the CDL printer's ([`super::data::SlabPlan`]), formatted in parallel for
//! large slabs, and the buffer goes out at least every megabyte.

mod value;

#[cfg(test)]
mod tests;

use nc_dataset::Slab;
use nc_dataset::{
    AtomicType, Attribute, DataSource, Dataset, DimId, GroupId, NcType, UserTypeKind, Values,
    VarId, ROOT,
};
use rayon::prelude::*;
use serde_json::ser::{CompactFormatter, Formatter};

use super::data::{SlabPlan, SLAB_BYTES};
use super::{special, DumpOptions, PrintError, Selection};
use value::{
    block_sizes, close_brackets, open_brackets, push_bytes, push_f32, push_f64, push_str,
    strip_nuls, ElemFmt,
};

/// Values formatted per parallel task.
const PAR_CHUNK: usize = 1 << 14;
/// The buffer is written out when it grows past this.
const FLUSH_AT: usize = 1 << 20;

/// Print `ds` as JSON, reading data through `src`. `-h`, `-c`, `-v`, `-g`, `-s`, `-F` and
/// `-Xp` (the `header_only`, `coords_only`, `vars`, `groups`, `special`, `all_filters` and
/// `no_nc_properties` fields of `opts`) choose what is shown as they do for CDL; the fields
/// about CDL layout are not used.
///
/// # Errors
/// On write errors or data read errors, or when a `-v`/`-g` name matches nothing. Output
/// written before a read error stops where the error happened (not valid JSON: the caller
/// reports the error and exits non-zero).
pub fn print_json(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &DumpOptions,
    out: &mut dyn std::io::Write,
) -> Result<(), PrintError> {
    print_json_slabbed(ds, src, opts, out, SLAB_BYTES)
}

/// [`print_json`] reading at most about `slab_bytes` of raw data per hyperslab.
fn print_json_slabbed(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &DumpOptions,
    out: &mut dyn std::io::Write,
    slab_bytes: u64,
) -> Result<(), PrintError> {
    let sel = Selection::new(ds, opts)?;
    let mut j = Json {
        ds,
        src,
        opts,
        out,
        sel,
        buf: Vec::with_capacity(1 << 16),
        open: Vec::new(),
        slab_bytes,
        format: special::effective_format(ds),
    };
    let res = j.root();
    // what was written before a failure still goes out, as in CDL mode
    let flushed = j
        .flush()
        .and_then(|()| j.out.flush().map_err(PrintError::from));
    res?;
    flushed
}

/// JSON printing state.
struct Json<'a> {
    ds: &'a Dataset,
    src: &'a dyn DataSource,
    opts: &'a DumpOptions,
    out: &'a mut dyn std::io::Write,
    sel: Selection,
    buf: Vec<u8>,
    /// one entry per open object: true while it has no member yet
    open: Vec<bool>,
    slab_bytes: u64,
    /// the effective format, worked out once (it walks every variable)
    format: nc_dataset::Format,
}

/// How an array of a variable's data is split into JSON elements.
struct Layout {
    /// the element shape (for char: without the string dimension)
    eshape: Vec<u64>,
    /// for char variables, the string (last) dimension's length
    char_len: Option<usize>,
    blocks: Vec<u64>,
}

impl Json<'_> {
    fn flush(&mut self) -> Result<(), PrintError> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn maybe_flush(&mut self) -> Result<(), PrintError> {
        if self.buf.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }

    fn newline(&mut self) {
        self.buf.push(b'\n');
        for _ in 0..self.open.len() {
            self.buf.extend_from_slice(b"  ");
        }
    }

    fn begin(&mut self) {
        self.buf.push(b'{');
        self.open.push(true);
    }

    fn key(&mut self, name: &str) -> Result<(), PrintError> {
        if let Some(first) = self.open.last_mut() {
            if !*first {
                self.buf.push(b',');
            }
            *first = false;
        }
        self.newline();
        push_str(&mut self.buf, name)?;
        self.buf.extend_from_slice(b": ");
        Ok(())
    }

    fn end(&mut self) {
        let first = self.open.pop().unwrap_or(true);
        if !first {
            self.newline();
        }
        self.buf.push(b'}');
    }

    fn root(&mut self) -> Result<(), PrintError> {
        self.begin();
        self.group(ROOT)?;
        self.end();
        self.buf.push(b'\n');
        Ok(())
    }

    /// A dimension as a variable's `shape` names it: bare when that name finds it from
    /// `from`, else its full path.
    fn dim_ref(&self, d: DimId, from: GroupId) -> String {
        let ds = self.ds;
        let dim = ds.dim(d);
        if ds.find_dim(from, &dim.name) == Some(d) {
            dim.name.clone()
        } else {
            path_in(ds, dim.group, &dim.name)
        }
    }

    /// A type name as `type` fields give it: atomic names as CDL spells them; a user type
    /// bare when that name finds it from `from` (the group, then its ancestors), else by its
    /// full path.
    fn type_ref(&self, ty: NcType, from: GroupId) -> String {
        let ds = self.ds;
        match ty {
            NcType::Atomic(a) => a.cdl_name().to_string(),
            NcType::User(t) => {
                let ut = ds.user_type(t);
                if ds.find_type(from, &ut.name) == Some(t) {
                    ut.name.clone()
                } else {
                    path_in(ds, ut.group, &ut.name)
                }
            }
        }
    }

    fn group(&mut self, g: GroupId) -> Result<(), PrintError> {
        let ds = self.ds;
        let grp = ds.group(g);
        if !grp.types.is_empty() {
            self.key("types")?;
            self.begin();
            for &t in &grp.types {
                self.key(&ds.user_type(t).name)?;
                self.type_def(t, g)?;
            }
            self.end();
        }
        if !grp.dims.is_empty() {
            self.key("dimensions")?;
            self.begin();
            for &d in &grp.dims {
                let dim = ds.dim(d);
                self.key(&dim.name)?;
                self.buf.extend_from_slice(dim.len.to_string().as_bytes());
            }
            self.end();
            let unlimited: Vec<&str> = grp
                .dims
                .iter()
                .map(|&d| ds.dim(d))
                .filter(|d| d.unlimited)
                .map(|d| d.name.as_str())
                .collect();
            if !unlimited.is_empty() {
                self.key("unlimited")?;
                self.str_list(&unlimited)?;
            }
        }
        if !grp.vars.is_empty() {
            self.key("variables")?;
            self.begin();
            for &v in &grp.vars {
                self.key(&ds.var(v).name)?;
                self.variable(v)?;
                self.maybe_flush()?;
            }
            self.end();
        }
        let mut atts: Vec<Attribute> = grp.atts.clone();
        if g == ROOT {
            add_specials(
                &mut atts,
                special::global_specials(ds, self.format, self.opts),
            );
        }
        self.attributes(&atts, g)?;
        if !grp.groups.is_empty() {
            self.key("groups")?;
            self.begin();
            for &c in &grp.groups {
                self.key(&ds.group(c).name)?;
                self.begin();
                self.group(c)?;
                self.end();
            }
            self.end();
        }
        Ok(())
    }

    fn str_list(&mut self, items: &[&str]) -> Result<(), PrintError> {
        self.buf.push(b'[');
        for (i, s) in items.iter().enumerate() {
            if i > 0 {
                self.buf.extend_from_slice(b", ");
            }
            push_str(&mut self.buf, s)?;
        }
        self.buf.push(b']');
        Ok(())
    }

    fn type_def(&mut self, t: nc_dataset::TypeId, g: GroupId) -> Result<(), PrintError> {
        let ut = self.ds.user_type(t);
        self.begin();
        self.key("class")?;
        match &ut.kind {
            UserTypeKind::Enum { base, members } => {
                push_str(&mut self.buf, "enum")?;
                self.key("base")?;
                push_str(&mut self.buf, base.cdl_name())?;
                self.key("members")?;
                self.begin();
                for m in members {
                    self.key(&m.name)?;
                    self.buf.extend_from_slice(m.value.to_string().as_bytes());
                }
                self.end();
            }
            UserTypeKind::Opaque { size } => {
                push_str(&mut self.buf, "opaque")?;
                self.key("size")?;
                self.buf.extend_from_slice(size.to_string().as_bytes());
            }
            UserTypeKind::Vlen { base } => {
                push_str(&mut self.buf, "vlen")?;
                self.key("base")?;
                let b = self.type_ref(*base, g);
                push_str(&mut self.buf, &b)?;
            }
            UserTypeKind::Compound { size, fields } => {
                push_str(&mut self.buf, "compound")?;
                self.key("size")?;
                self.buf.extend_from_slice(size.to_string().as_bytes());
                self.key("fields")?;
                self.begin();
                for f in fields {
                    self.key(&f.name)?;
                    self.buf.extend_from_slice(b"{\"type\": ");
                    let ty = self.type_ref(f.ty, g);
                    push_str(&mut self.buf, &ty)?;
                    if !f.dims.is_empty() {
                        self.buf.extend_from_slice(b", \"shape\": [");
                        let dims: Vec<String> = f.dims.iter().map(|d| d.to_string()).collect();
                        self.buf.extend_from_slice(dims.join(", ").as_bytes());
                        self.buf.push(b']');
                    }
                    self.buf
                        .extend_from_slice(format!(", \"offset\": {}}}", f.offset).as_bytes());
                }
                self.end();
            }
        }
        self.end();
        Ok(())
    }

    fn variable(&mut self, v: VarId) -> Result<(), PrintError> {
        let ds = self.ds;
        let var = ds.var(v);
        self.begin();
        if !var.dims.is_empty() {
            self.key("shape")?;
            let names: Vec<String> = var
                .dims
                .iter()
                .map(|&d| self.dim_ref(d, var.group))
                .collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            self.str_list(&names)?;
        }
        self.key("type")?;
        let ty = self.type_ref(var.ty, var.group);
        push_str(&mut self.buf, &ty)?;
        let mut atts = var.atts.clone();
        atts.extend(special::quantize_att(ds, v));
        add_specials(
            &mut atts,
            special::var_specials(ds, self.format, v, self.opts),
        );
        self.attributes(&atts, var.group)?;
        if self.sel.data_vars[v.0] {
            self.key("data")?;
            self.data(v)?;
        }
        self.end();
        Ok(())
    }

    fn attributes(&mut self, atts: &[Attribute], g: GroupId) -> Result<(), PrintError> {
        if atts.is_empty() {
            return Ok(());
        }
        self.key("attributes")?;
        self.begin();
        for a in atts {
            self.key(&a.name)?;
            self.attribute(a, g)?;
        }
        self.end();
        Ok(())
    }

    /// One attribute's value: bare where the JSON value alone tells the netCDF type (char as
    /// a string, int as integers, double as finite numbers), else `{"type": T, "data": D}`.
    /// A char attribute's trailing NULs are left out.
    fn attribute(&mut self, a: &Attribute, g: GroupId) -> Result<(), PrintError> {
        let n = a.values.len();
        let bare = match (a.ty, &a.values) {
            (NcType::Atomic(AtomicType::Char), Values::Char(b)) => {
                std::str::from_utf8(strip_nuls(b)).is_ok()
            }
            (NcType::Atomic(AtomicType::Int), Values::Int(_)) => n > 0,
            (NcType::Atomic(AtomicType::Double), Values::Double(x)) => {
                n > 0 && x.iter().all(|x| x.is_finite())
            }
            _ => false,
        };
        if !bare {
            self.buf.extend_from_slice(b"{\"type\": ");
            let ty = self.type_ref(a.ty, g);
            push_str(&mut self.buf, &ty)?;
            self.buf.extend_from_slice(b", \"data\": ");
        }
        match (a.ty, &a.values) {
            // trailing NULs are C terminators or padding, not text: ncdump, ncks and
            // netCDF4-python leave them out too (docs/json.md)
            (_, Values::Char(b)) => push_bytes(&mut self.buf, strip_nuls(b))?,
            (NcType::Atomic(_), vals) => self.atomic_att_data(vals)?,
            (NcType::User(_), vals) => ElemFmt { ds: self.ds }.list(&mut self.buf, a.ty, vals)?,
        }
        if !bare {
            self.buf.push(b'}');
        }
        Ok(())
    }

    /// Values of an atomic attribute: one value bare, several (or none) as an array.
    fn atomic_att_data(&mut self, vals: &Values) -> value::W {
        let f = ElemFmt { ds: self.ds };
        let ty = vals
            .atomic_type()
            .map_or(NcType::Atomic(AtomicType::Int), NcType::Atomic);
        if vals.len() == 1 {
            f.elem(&mut self.buf, ty, vals, 0)
        } else {
            f.list(&mut self.buf, ty, vals)
        }
    }

    /// A variable's data: nested arrays, one level per dimension (a scalar bare), streamed
    /// slab by slab.
    fn data(&mut self, v: VarId) -> Result<(), PrintError> {
        let ds = self.ds;
        let var = ds.var(v);
        let shape = ds.shape(v);
        let path = || ds.var_path(v);
        if ds.num_elements(v).is_none() {
            return Err(PrintError::TooLarge { var: path() });
        }
        let is_char = var.ty == NcType::Atomic(AtomicType::Char);
        let (eshape, char_len) = match (is_char, shape.split_last()) {
            (true, Some((&last, rest))) => (rest.to_vec(), Some(last)),
            (true, None) => (Vec::new(), Some(1)),
            (false, _) => (shape.clone(), None),
        };
        let char_len = match char_len.map(usize::try_from) {
            Some(Ok(c)) => Some(c),
            Some(Err(_)) => return Err(PrintError::TooLarge { var: path() }),
            None => None,
        };
        let lay = Layout {
            blocks: block_sizes(&eshape),
            eshape,
            char_len,
        };
        let n_elems = lay
            .eshape
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
            .ok_or_else(|| PrintError::TooLarge { var: path() })?;
        if n_elems == 0 || char_len == Some(0) {
            // nothing to read: nested empty arrays, or rows of empty strings
            return self.without_reading(&lay, n_elems, v);
        }
        let esize = (ds.type_size(var.ty).max(1)) as u64;
        let mut next = 0u64;
        for (start, count) in SlabPlan::new(&shape, is_char, esize, self.slab_bytes) {
            next = self.slab(v, &start, &count, &lay, next)?;
        }
        Ok(())
    }

    /// Data of a variable with no elements (`[]`, `[[], []]`, ...) or whose strings all have
    /// length 0.
    fn without_reading(&mut self, lay: &Layout, n_elems: u64, v: VarId) -> Result<(), PrintError> {
        let (shape, item): (&[u64], &[u8]) = if n_elems == 0 {
            let z = lay.eshape.iter().position(|&d| d == 0).unwrap_or(0);
            (&lay.eshape[..z], b"[]")
        } else {
            (&lay.eshape, b"\"\"")
        };
        let blocks = block_sizes(shape);
        // the dimensions before the first zero-length one may multiply past 2^64
        let n = shape
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
            .ok_or_else(|| PrintError::TooLarge {
                var: self.ds.var_path(v),
            })?;
        for k in 0..n {
            open_brackets(&mut self.buf, &blocks, k);
            self.buf.extend_from_slice(item);
            close_brackets(&mut self.buf, &blocks, k);
            self.maybe_flush()?;
        }
        Ok(())
    }

    /// Read and write one hyperslab whose first element is element `first` of the variable;
    /// returns the index after its last element.
    fn slab(
        &mut self,
        v: VarId,
        start: &[u64],
        count: &[u64],
        lay: &Layout,
        first: u64,
    ) -> Result<u64, PrintError> {
        let ds = self.ds;
        let var = ds.var(v);
        let want: u64 = count.iter().product();
        let vals = self
            .src
            .read(ds, v, Slab::new(start, count))
            .map_err(|e| PrintError::Read {
                var: ds.var_path(v),
                source: e,
            })?;
        let is_char = lay.char_len.is_some();
        let ok_kind = matches!(vals, Values::Char(_)) == is_char;
        if vals.len() as u64 != want || !ok_kind {
            return Err(PrintError::BadSlab {
                var: ds.var_path(v),
                got: vals.len(),
                want: want as usize,
            });
        }
        let n = match lay.char_len {
            Some(c) => vals.len() / c.max(1),
            None => vals.len(),
        };
        let fmt = SlabFmt {
            f: ElemFmt { ds },
            ty: var.ty,
            vals: &vals,
            char_len: lay.char_len,
            blocks: &lay.blocks,
            first,
        };
        if n <= PAR_CHUNK {
            fmt.run(&mut self.buf, 0..n)?;
        } else {
            let starts: Vec<usize> = (0..n).step_by(PAR_CHUNK).collect();
            let pieces: Vec<Result<Vec<u8>, std::io::Error>> = starts
                .par_iter()
                .map(|&s| {
                    let e = (s + PAR_CHUNK).min(n);
                    let mut o = Vec::with_capacity((e - s) * 12);
                    fmt.run(&mut o, s..e).map(|()| o)
                })
                .collect();
            for p in pieces {
                self.buf.extend_from_slice(&p?);
                self.maybe_flush()?;
            }
        }
        self.maybe_flush()?;
        Ok(first + n as u64)
    }
}

/// Formats elements of one slab.
struct SlabFmt<'a> {
    f: ElemFmt<'a>,
    ty: NcType,
    vals: &'a Values,
    char_len: Option<usize>,
    blocks: &'a [u64],
    /// element index (in the whole variable) of the slab's first element
    first: u64,
}

impl SlabFmt<'_> {
    /// Elements `range` of the slab, each with its separator and brackets.
    fn run(&self, out: &mut Vec<u8>, range: std::ops::Range<usize>) -> value::W {
        let blocks = self.blocks;
        let base = self.first;
        // one loop per bulk type, so the per-element work is the number formatting
        macro_rules! each {
            ($i:ident => $body:expr) => {{
                for $i in range {
                    let n = base + $i as u64;
                    open_brackets(out, blocks, n);
                    $body;
                    close_brackets(out, blocks, n);
                }
                Ok(())
            }};
        }
        let mut cf = CompactFormatter;
        match (self.vals, self.ty, self.char_len) {
            (Values::Char(b), _, Some(c)) => {
                each!(i => push_bytes(out, strip_nuls(&b[i * c..(i + 1) * c]))?)
            }
            (Values::Float(v), _, None) => each!(i => push_f32(out, v[i])?),
            (Values::Double(v), _, None) => each!(i => push_f64(out, v[i])?),
            (Values::Byte(v), NcType::Atomic(_), None) => each!(i => cf.write_i8(out, v[i])?),
            (Values::Short(v), NcType::Atomic(_), None) => each!(i => cf.write_i16(out, v[i])?),
            (Values::Int(v), NcType::Atomic(_), None) => each!(i => cf.write_i32(out, v[i])?),
            (Values::Int64(v), NcType::Atomic(_), None) => each!(i => cf.write_i64(out, v[i])?),
            (Values::UByte(v), NcType::Atomic(_), None) => each!(i => cf.write_u8(out, v[i])?),
            (Values::UShort(v), NcType::Atomic(_), None) => each!(i => cf.write_u16(out, v[i])?),
            (Values::UInt(v), NcType::Atomic(_), None) => each!(i => cf.write_u32(out, v[i])?),
            (Values::UInt64(v), NcType::Atomic(_), None) => each!(i => cf.write_u64(out, v[i])?),
            _ => each!(i => self.f.elem(out, self.ty, self.vals, i)?),
        }
    }
}

/// Append the `-s` virtual attributes, leaving out any whose name a real attribute already
/// has (a JSON object cannot hold the name twice).
fn add_specials(atts: &mut Vec<Attribute>, specials: Vec<Attribute>) {
    for s in specials {
        if !atts.iter().any(|a| a.name == s.name) {
            atts.push(s);
        }
    }
}

/// `/g/h/name` for an object of group `g` (`/name` in the root group).
fn path_in(ds: &Dataset, g: GroupId, name: &str) -> String {
    let p = ds.group_path(g);
    if p == "/" {
        format!("/{name}")
    } else {
        format!("{p}/{name}")
    }
}
