//! The `data:` section: variables read in bounded hyperslabs, values formatted (in parallel for
//! large slabs), then laid out sequentially with ncdump's line wrapping and index comments.

use nc_dataset::Slab;
use nc_dataset::{AtomicType, NcType, Values, VarId};
use rayon::prelude::*;

use super::time::TimeConv;
use super::values::{push_char_data, push_float, push_name, ValueFmt};
use super::{Annotation, IndexStyle, PrintError, Printer};

/// Bytes of raw data read per slab.
pub(super) const SLAB_BYTES: u64 = 4 << 20;
/// Values formatted per parallel task.
const PAR_CHUNK: usize = 1 << 14;

/// What ncdump compares values with to print `_`.
fn fill_for(p: &Printer<'_>, v: VarId) -> Option<Values> {
    let ds = p.ds;
    let var = ds.var(v);
    // a `_FillValue` of another type than the variable's (NCO leaves a float one on a short
    // variable) is passed over as if absent, as ncdump does
    if let Some(a) = var.att("_FillValue").filter(|a| a.ty == var.ty) {
        if !a.values.is_empty() {
            return Some(a.values.slice(0, 1));
        }
        return None;
    }
    match var.ty {
        // no default fill for bytes: "too risky", as ncdump says
        NcType::Atomic(AtomicType::Byte | AtomicType::UByte | AtomicType::Char) => None,
        NcType::Atomic(a) => Some(nc_dataset::default_fill(a)),
        NcType::User(_) => None,
    }
}

fn is_fill(vals: &Values, i: usize, fill: &Values) -> bool {
    match (vals, fill) {
        (Values::Float(a), Values::Float(f)) => a[i] == f[0] || (f[0].is_nan() && a[i].is_nan()),
        (Values::Double(a), Values::Double(f)) => a[i] == f[0] || (f[0].is_nan() && a[i].is_nan()),
        (Values::Byte(a), Values::Byte(f)) => a[i] == f[0],
        (Values::Short(a), Values::Short(f)) => a[i] == f[0],
        (Values::Int(a), Values::Int(f)) => a[i] == f[0],
        (Values::UByte(a), Values::UByte(f)) => a[i] == f[0],
        (Values::UShort(a), Values::UShort(f)) => a[i] == f[0],
        (Values::UInt(a), Values::UInt(f)) => a[i] == f[0],
        (Values::Int64(a), Values::Int64(f)) => a[i] == f[0],
        (Values::UInt64(a), Values::UInt64(f)) => a[i] == f[0],
        (Values::String(a), Values::String(f)) => a[i] == f[0],
        (Values::Opaque { size, bytes }, Values::Opaque { bytes: fb, .. }) => {
            bytes[i * size..(i + 1) * size] == fb[..]
        }
        (Values::Vlen(a), Values::Vlen(f)) => a[i] == f[0],
        (Values::Compound(a), Values::Compound(f)) => a[i] == f[0],
        _ => false,
    }
}

/// Formatted text of a slab: chunks of text with each element's end offset.
type Pieces = Vec<(Vec<u8>, Vec<u32>)>;

/// Formats one slab's values into text pieces.
struct Formatter<'a> {
    vf: ValueFmt<'a>,
    ty: NcType,
    fill: Option<Values>,
    time: Option<TimeConv>,
    /// For char variables: the string length (last dimension); elements are strings.
    char_len: Option<usize>,
    /// Indentation of continuation lines of strings split at newlines.
    split: Vec<u8>,
    /// The variable's `C_format` attribute, for float and double data (ncdump's `get_fmt`;
    /// `-p` overrides it).
    cfmt: Option<CFormat>,
}

/// A `C_format` attribute ncdump formats float and double data with: `%[#][.P](f|e|E|g|G)`
/// (other forms are ignored: the default format is used).
#[derive(Debug, Clone, Copy)]
struct CFormat {
    conv: u8,
    prec: usize,
    alt: bool,
}

impl CFormat {
    fn parse(text: &[u8]) -> Option<CFormat> {
        let t = std::str::from_utf8(text).ok()?;
        let t = t.trim_end_matches('\0');
        let rest = t.strip_prefix('%')?;
        let (alt, rest) = match rest.strip_prefix('#') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let (prec, rest) = match rest.strip_prefix('.') {
            Some(r) => {
                let n = r.bytes().take_while(u8::is_ascii_digit).count();
                (r[..n].parse::<usize>().unwrap_or(0), &r[n..])
            }
            None => (6, rest),
        };
        let rest = rest.strip_prefix('l').unwrap_or(rest);
        match rest.as_bytes() {
            [c @ (b'f' | b'e' | b'E' | b'g' | b'G')] => Some(CFormat {
                conv: *c,
                prec: prec.min(100),
                alt,
            }),
            _ => None,
        }
    }

    fn push(&self, out: &mut Vec<u8>, v: f64) {
        if !v.is_finite() {
            let s: &[u8] = if v.is_nan() {
                b"nan"
            } else if v < 0.0 {
                b"-inf"
            } else {
                b"inf"
            };
            out.extend_from_slice(s);
            return;
        }
        match self.conv {
            b'f' => out.extend_from_slice(format!("{v:.*}", self.prec).as_bytes()),
            b'e' | b'E' => {
                let s = format!("{v:.*e}", self.prec);
                let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                let e: i32 = e.parse().unwrap_or(0);
                let sign = if e < 0 { '-' } else { '+' };
                let mark = if self.conv == b'E' { 'E' } else { 'e' };
                out.extend_from_slice(format!("{m}{mark}{sign}{:02}", e.abs()).as_bytes());
            }
            _ => {
                let at = out.len();
                super::fmtnum::push_g(out, v, self.prec, self.alt);
                if self.conv == b'G' {
                    out[at..].make_ascii_uppercase();
                }
            }
        }
    }
}

impl Formatter<'_> {
    /// Format elements `range` of `vals` into `out`, recording each element's end offset.
    fn run(
        &self,
        vals: &Values,
        range: std::ops::Range<usize>,
        out: &mut Vec<u8>,
        ends: &mut Vec<u32>,
    ) {
        // fast loops for the bulk types
        if self.char_len.is_none() && self.time.is_none() {
            match (vals, &self.fill) {
                (Values::Float(v), fill) => {
                    let fill = match fill {
                        Some(Values::Float(f)) => Some(f[0]),
                        _ => None,
                    };
                    for &x in &v[range] {
                        match (fill, self.cfmt) {
                            (Some(f), _) if x == f || (f.is_nan() && x.is_nan()) => {
                                out.push(b'_')
                            }
                            (_, Some(c)) => c.push(out, f64::from(x)),
                            _ => push_float(out, f64::from(x), self.vf.float_digits, true, false),
                        }
                        ends.push(out.len() as u32);
                    }
                    return;
                }
                (Values::Double(v), fill) => {
                    let fill = match fill {
                        Some(Values::Double(f)) => Some(f[0]),
                        _ => None,
                    };
                    for &x in &v[range] {
                        match (fill, self.cfmt) {
                            (Some(f), _) if x == f || (f.is_nan() && x.is_nan()) => {
                                out.push(b'_')
                            }
                            (_, Some(c)) => c.push(out, x),
                            _ => push_float(out, x, self.vf.double_digits, false, false),
                        }
                        ends.push(out.len() as u32);
                    }
                    return;
                }
                _ => {}
            }
        }
        for i in range {
            self.one(vals, i, out);
            ends.push(out.len() as u32);
        }
    }

    fn one(&self, vals: &Values, i: usize, out: &mut Vec<u8>) {
        if let Some(n) = self.char_len {
            if let Values::Char(bytes) = vals {
                let row = &bytes[i * n..(i + 1) * n];
                let len = row.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                push_char_data(out, &row[..len], &self.split);
            }
            return;
        }
        if let Some(f) = &self.fill {
            if is_fill(vals, i, f) {
                out.push(b'_');
                return;
            }
        }
        if let Some(t) = &self.time {
            if let Some(x) = vals.get_f64(i) {
                t.push(out, x);
                return;
            }
        }
        self.vf.data(out, self.ty, vals, i);
    }

    /// Format a whole slab, in parallel when it is large; returns the pieces in order.
    fn slab(&self, vals: &Values, n: usize) -> Pieces {
        if n <= PAR_CHUNK {
            let mut out = Vec::with_capacity(n * 8);
            let mut ends = Vec::with_capacity(n);
            self.run(vals, 0..n, &mut out, &mut ends);
            return vec![(out, ends)];
        }
        let chunks: Vec<usize> = (0..n).step_by(PAR_CHUNK).collect();
        chunks
            .par_iter()
            .map(|&s| {
                let e = (s + PAR_CHUNK).min(n);
                let mut out = Vec::with_capacity((e - s) * 10);
                let mut ends = Vec::with_capacity(e - s);
                self.run(vals, s..e, &mut out, &mut ends);
                (out, ends)
            })
            .collect()
    }
}

/// Sequential layout state of one variable's values.
struct Lay {
    /// escaped variable name, for index comments
    name: Vec<u8>,
    ind: usize,
    /// true when each row starts a new line (rank >= 2; for char, rank >= 2)
    multi_row: bool,
    /// elements per row
    rowlen: u64,
    /// total elements
    n: u64,
    /// the element shape (for char: without the string dimension)
    shape: Vec<u64>,
    /// for char variables, the string dimension's length
    char_len: Option<u64>,
    annotate: Annotation,
    limit: usize,
    idx: u64,
    /// position of `idx` in its row
    col: u64,
    /// element counts of the blocks that ncdump wraps in braces: one per unlimited dimension
    /// after the first (the block spans that dimension and all faster ones)
    brace_blocks: Vec<u64>,
    scratch: Vec<u8>,
    linep: usize,
    strings_direct: bool,
}

impl Lay {
    fn lput(&mut self, out: &mut Vec<u8>, piece: &[u8], extra: &[u8]) {
        let nn = piece.len() + extra.len();
        if !self.strings_direct && nn > 2 && self.linep + nn > self.limit {
            out.push(b'\n');
            out.extend(std::iter::repeat_n(b' ', self.ind + 4));
            self.linep = self.ind + 4;
        }
        out.extend_from_slice(piece);
        out.extend_from_slice(extra);
        self.linep += nn;
    }

    /// Indices of element `idx` in the element shape.
    fn indices(&self, mut idx: u64) -> Vec<u64> {
        let mut ix = vec![0u64; self.shape.len()];
        for k in (0..self.shape.len()).rev() {
            let d = self.shape[k].max(1);
            ix[k] = idx % d;
            idx /= d;
        }
        ix
    }

    fn brief_comment(&self, out: &mut Vec<u8>, style: IndexStyle) {
        let ix = self.indices(self.idx);
        // the row's outer indices, then the range of the last (or string) dimension
        let (outer, last_len) = match self.char_len {
            Some(c) => (&ix[..], c),
            None => (&ix[..ix.len() - 1], self.rowlen),
        };
        out.extend_from_slice(b"// ");
        out.extend_from_slice(&self.name);
        out.push(b'(');
        // a range `0-(n-1)` for the last dimension, or just its index when it has length 1
        match style {
            IndexStyle::C => {
                for i in outer {
                    out.extend_from_slice(format!("{i},").as_bytes());
                }
                if last_len == 1 {
                    out.extend_from_slice(b"0)\n");
                } else {
                    out.extend_from_slice(
                        format!(" 0-{})\n", last_len.saturating_sub(1)).as_bytes(),
                    );
                }
            }
            IndexStyle::Fortran => {
                if last_len == 1 {
                    out.push(b'1');
                } else {
                    out.extend_from_slice(format!("1-{} ", last_len).as_bytes());
                }
                for i in outer.iter().rev() {
                    out.extend_from_slice(format!(",{}", i + 1).as_bytes());
                }
                out.extend_from_slice(b")\n");
            }
        }
    }

    fn full_comment(&self, out: &mut Vec<u8>, style: IndexStyle) {
        let mut ix = self.indices(self.idx);
        if let Some(c) = self.char_len {
            ix.push(c.saturating_sub(1));
        }
        out.extend_from_slice(b"// ");
        out.extend_from_slice(&self.name);
        out.push(b'(');
        let parts: Vec<String> = match style {
            IndexStyle::C => ix.iter().map(|i| i.to_string()).collect(),
            IndexStyle::Fortran => ix.iter().rev().map(|i| (i + 1).to_string()).collect(),
        };
        out.extend_from_slice(parts.join(",").as_bytes());
        if ix.is_empty() {
            // a scalar is shown as its only element: 0 in C, 1 in Fortran (4.9.0 prints an
            // uninitialised number there under -f f; see docs/compat.md)
            out.push(if style == IndexStyle::C { b'0' } else { b'1' });
        }
        out.extend_from_slice(b")\n    ");
    }

    /// Lay out the next element, whose text is `val`.
    fn emit(&mut self, out: &mut Vec<u8>, val: &[u8]) {
        if self.brace_blocks.is_empty() {
            return self.emit_text(out, val, 0);
        }
        let opens = self
            .brace_blocks
            .iter()
            .filter(|&&b| self.idx.checked_rem(b) == Some(0))
            .count();
        let closes = self
            .brace_blocks
            .iter()
            .filter(|&&b| (self.idx + 1).checked_rem(b) == Some(0))
            .count();
        if closes == 0 {
            return self.emit_text(out, val, opens);
        }
        let mut text = std::mem::take(&mut self.scratch);
        text.clear();
        text.extend_from_slice(val);
        text.extend(std::iter::repeat_n(b'}', closes));
        self.emit_text(out, &text, opens);
        self.scratch = text;
    }

    /// Lay out one element; `opens` braces start at it (they always start a row).
    fn emit_text(&mut self, out: &mut Vec<u8>, val: &[u8], opens: usize) {
        let col = self.col;
        let last_in_row = col + 1 == self.rowlen;
        self.col = if last_in_row { 0 } else { col + 1 };
        let last = self.idx + 1 == self.n;
        match self.annotate {
            Annotation::Full(style) => {
                if self.multi_row && self.idx == 0 {
                    out.extend_from_slice(b"  ");
                }
                out.extend(std::iter::repeat_n(b'{', opens));
                out.extend_from_slice(val);
                if last {
                    out.extend_from_slice(b";  ");
                } else if last_in_row && self.multi_row {
                    out.extend_from_slice(b",  ");
                } else {
                    out.extend_from_slice(b",   ");
                }
                self.full_comment(out, style);
            }
            Annotation::None | Annotation::Brief(_) => {
                if self.multi_row && col == 0 {
                    match self.annotate {
                        Annotation::Brief(style) => {
                            out.extend_from_slice(b"  ");
                            out.extend(std::iter::repeat_n(b'{', opens));
                            self.brief_comment(out, style);
                            out.extend(std::iter::repeat_n(b' ', self.ind + 4));
                            self.linep = self.ind + 4;
                        }
                        _ => {
                            out.extend_from_slice(b"  ");
                            out.extend(std::iter::repeat_n(b'{', opens));
                            self.linep = self.ind + 2 + opens;
                        }
                    }
                }
                if !last_in_row {
                    self.lput(out, val, b", ");
                } else {
                    self.lput(out, val, b"");
                    out.extend_from_slice(if last { b" ;\n" } else { b",\n" });
                }
            }
        }
        self.idx += 1;
    }
}

/// The hyperslabs, in row-major order, that read a variable of `shape` at most about
/// `slab_bytes` at a time: the first dimension whose inner block fits the budget is split, the
/// dimensions before it are stepped one index at a time. A char variable never splits its
/// string (last) dimension. Shared by the CDL and JSON data writers.
pub(super) struct SlabPlan {
    shape: Vec<u64>,
    /// the dimension that is split
    level: usize,
    /// indices of the dimensions before `level`
    outer: Vec<u64>,
    /// next start along `level`
    s: u64,
    /// indices along `level` per slab
    step: u64,
    /// a scalar (or a scalar string): one slab of everything
    whole: bool,
    done: bool,
}

impl SlabPlan {
    /// The plan for a variable of `shape` with elements of `esize` bytes.
    pub(super) fn new(shape: &[u64], is_char: bool, esize: u64, slab_bytes: u64) -> SlabPlan {
        let rank = shape.len();
        let budget = (slab_bytes / esize.max(1)).max(1);
        let max_level = if is_char {
            rank.saturating_sub(2)
        } else {
            rank.saturating_sub(1)
        };
        let mut level = 0;
        let mut inner: u64 = shape.iter().skip(1).product();
        while level < max_level && inner > budget {
            level += 1;
            inner /= shape[level].max(1);
        }
        let whole = rank == 0 || (is_char && rank == 1);
        SlabPlan {
            shape: shape.to_vec(),
            level,
            outer: vec![0; level],
            s: 0,
            step: (budget / inner.max(1)).max(1),
            whole,
            done: false,
        }
    }
}

impl Iterator for SlabPlan {
    /// `(start, count)` of the next hyperslab.
    type Item = (Vec<u64>, Vec<u64>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.whole {
            self.done = true;
            return Some((vec![0; self.shape.len()], self.shape.clone()));
        }
        let rank = self.shape.len();
        let level = self.level;
        loop {
            if self.s < self.shape[level] {
                let c = self.step.min(self.shape[level] - self.s);
                let mut start = self.outer.clone();
                start.push(self.s);
                start.extend(std::iter::repeat_n(0, rank - level - 1));
                let mut count = vec![1u64; level];
                count.push(c);
                count.extend_from_slice(&self.shape[level + 1..]);
                self.s += c;
                return Some((start, count));
            }
            // next outer index
            self.s = 0;
            let mut k = level;
            let mut more = false;
            while k > 0 {
                k -= 1;
                self.outer[k] += 1;
                if self.outer[k] < self.shape[k] {
                    more = true;
                    break;
                }
                self.outer[k] = 0;
            }
            if !more {
                self.done = true;
                return None;
            }
        }
    }
}

impl Printer<'_> {
    pub(super) fn var_data(&mut self, v: VarId, depth: usize) -> Result<(), PrintError> {
        let ds = self.ds;
        let var = ds.var(v);
        let shape = ds.shape(v);
        match ds.num_elements(v) {
            Some(0) => return Ok(()),
            Some(_) => {}
            None => {
                return Err(PrintError::TooLarge {
                    var: var.name.clone(),
                })
            }
        }
        let ind = 2 * depth;
        let is_char = var.ty == NcType::Atomic(AtomicType::Char);
        let rank = shape.len();
        // element shape: for char the strings along the last dimension are the elements
        let (eshape, char_len) = if is_char && rank >= 1 {
            (shape[..rank - 1].to_vec(), Some(shape[rank - 1]))
        } else if is_char {
            (Vec::new(), Some(1))
        } else {
            (shape.clone(), None)
        };
        let n_elems: u64 = eshape.iter().product();
        let multi_row = rank >= 2;
        let rowlen = if is_char || rank == 0 {
            1
        } else if multi_row {
            shape[rank - 1]
        } else {
            n_elems
        };
        let mut name = Vec::new();
        push_name(&mut name, &var.name);
        let annotate = if multi_row {
            self.opts.annotate
        } else {
            match self.opts.annotate {
                Annotation::Brief(_) => Annotation::None,
                a => a,
            }
        };
        // (for char variables the string dimension counts too: each string is one element)
        let brace_blocks: Vec<u64> = (1..rank)
            .filter(|&k| ds.dim(var.dims[k]).unlimited)
            .map(|k| {
                eshape
                    .get(k..)
                    .map_or(1, |s| s.iter().product::<u64>())
                    .max(1)
            })
            .collect();
        let mut lay = Lay {
            name: name.clone(),
            ind,
            multi_row,
            rowlen,
            n: n_elems,
            shape: eshape,
            char_len,
            annotate,
            limit: self.opts.line_len().saturating_sub(2),
            idx: 0,
            col: 0,
            brace_blocks,
            scratch: Vec::new(),
            linep: 0,
            strings_direct: is_char,
        };
        // the variable's heading (taken back when its first slab cannot be read)
        let heading_at = self.buf.len();
        self.s("\n");
        self.indent(depth);
        self.s(" ");
        self.buf.extend_from_slice(&name);
        if multi_row {
            self.s(" =\n");
        } else {
            self.s(" = ");
            lay.linep = ind + 4 + name.len();
        }
        let mut split = Vec::new();
        split.extend(std::iter::repeat_n(b' ', ind + 4));
        let time = match self.opts.time {
            super::TimeMode::Off => None,
            mode => TimeConv::for_var(ds, v, mode),
        };
        let fmt = Formatter {
            vf: self.value_fmt(),
            ty: var.ty,
            fill: fill_for(self, v),
            time,
            char_len: char_len.map(|c| c as usize),
            split,
            cfmt: match (var.ty, &self.opts.float_digits, &self.opts.double_digits) {
                (NcType::Atomic(AtomicType::Float), None, _)
                | (NcType::Atomic(AtomicType::Double), _, None) => var
                    .att("C_format")
                    .and_then(|a| match &a.values {
                        Values::Char(t) if !t.is_empty() && t.len() < 100 => CFormat::parse(t),
                        _ => None,
                    }),
                _ => None,
            },
        };

        let esize = (ds.type_size(var.ty).max(1)) as u64;
        // formatted text of the previous slab, laid out while the next one is formatted
        let mut pending: Option<Pieces> = None;
        for (k, (start, count)) in
            SlabPlan::new(&shape, is_char, esize, self.slab_bytes).enumerate()
        {
            match self.slab(v, &start, &count, &fmt, &mut lay, &mut pending) {
                // nothing of it printed yet (a filter with no codec, a chunk that cannot be
                // read): the variable is left out of the data section, the others printed, and
                // its error returned at the end
                Err(e @ PrintError::Read { .. }) if k == 0 => {
                    self.buf.truncate(heading_at);
                    self.unread.push(e);
                    return Ok(());
                }
                r => r?,
            }
        }
        if let Some(p) = pending.take() {
            self.emit_pieces(&mut lay, &p)?;
        }
        self.flush()
    }

    fn slab(
        &mut self,
        v: VarId,
        start: &[u64],
        count: &[u64],
        fmt: &Formatter<'_>,
        lay: &mut Lay,
        pending: &mut Option<Pieces>,
    ) -> Result<(), PrintError> {
        let ds = self.ds;
        let want: u64 = count.iter().product();
        let vals = self
            .src
            .read(ds, v, Slab::new(start, count))
            .map_err(|e| PrintError::Read {
                var: ds.var(v).name.clone(),
                source: e,
            })?;
        let n_elems = match fmt.char_len {
            Some(c) if c > 0 => want / c as u64,
            Some(_) => 0,
            None => want,
        };
        let ok_kind = match (&vals, ds.var(v).ty) {
            (Values::Char(_), NcType::Atomic(AtomicType::Char)) => true,
            (_, NcType::Atomic(AtomicType::Char)) => false,
            (Values::Char(_), _) => false,
            _ => true,
        };
        if vals.len() as u64 != want || !ok_kind {
            return Err(PrintError::BadSlab {
                var: ds.var(v).name.clone(),
                got: vals.len(),
                want: want as usize,
            });
        }
        let n = n_elems as usize;
        if n <= PAR_CHUNK {
            if let Some(p) = pending.take() {
                self.emit_pieces(lay, &p)?;
            }
            *pending = Some(fmt.slab(&vals, n));
            return Ok(());
        }
        // format this slab on another thread (itself fanning out over rayon) while the
        // previous one is laid out and written here
        let (formatted, emitted) = std::thread::scope(|sc| {
            let worker = sc.spawn(|| fmt.slab(&vals, n));
            let emitted = match pending.take() {
                Some(p) => self.emit_pieces(lay, &p),
                None => Ok(()),
            };
            (worker.join(), emitted)
        });
        emitted?;
        match formatted {
            Ok(p) => *pending = Some(p),
            // a panic while formatting is a bug here: pass it on unchanged
            Err(payload) => std::panic::resume_unwind(payload),
        }
        Ok(())
    }

    fn emit_pieces(&mut self, lay: &mut Lay, pieces: &Pieces) -> Result<(), PrintError> {
        for (text, ends) in pieces {
            let mut s = 0usize;
            for &e in ends {
                let e = e as usize;
                lay.emit(&mut self.buf, &text[s..e]);
                s = e;
            }
            if self.buf.len() > (1 << 20) {
                self.flush()?;
            }
        }
        Ok(())
    }
}
