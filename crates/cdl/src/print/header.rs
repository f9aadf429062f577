//! The header: `types:`, `dimensions:`, `variables:` with attributes, group attributes, and the
//! `-s` special virtual attributes.

use nc_dataset::{AtomicType, Attribute, Format, GroupId, NcType, UserTypeKind, Values, VarId};

use super::values::{push_name, push_quoted, ValueFmt};
use super::Printer;

/// Variable names ncdump 4.9.0 writes as `name :att` in ordinary attribute lines, so that
/// ncgen does not read them as the start of a CDL section.
const CDL_SECTION_KEYWORDS: [&str; 5] = ["data", "dimensions", "group", "types", "variables"];

impl<'a> Printer<'a> {
    /// The effective file format: the dataset's, else the smallest that holds it.
    pub(super) fn format(&self) -> Format {
        self.format
    }

    pub(super) fn value_fmt(&self) -> ValueFmt<'a> {
        ValueFmt {
            ds: self.ds,
            float_digits: self.opts.float_digits.unwrap_or(7),
            double_digits: self.opts.double_digits.unwrap_or(15),
        }
    }

    /// A type's name as used in declarations: bare when the type is defined in `from` or one
    /// of its ancestors, else qualified by its group path (ncdump's rule: a type of an
    /// ancestor is printed bare even when `from` has a type of the same name).
    pub(super) fn push_type_name(&mut self, ty: NcType, from: GroupId) {
        match ty {
            NcType::Atomic(a) => self.s(a.cdl_name()),
            NcType::User(t) => {
                let ut = self.ds.user_type(t);
                let mut in_scope = false;
                let mut g = Some(from);
                while let Some(x) = g {
                    if x == ut.group {
                        in_scope = true;
                        break;
                    }
                    g = self.ds.group(x).parent;
                }
                if !in_scope {
                    let path = self.ds.group_path(ut.group);
                    if path != "/" {
                        self.s(&path);
                    }
                    self.s("/");
                }
                push_name(&mut self.buf, &ut.name);
            }
        }
    }

    pub(super) fn header(&mut self, g: GroupId, depth: usize) {
        let ds = self.ds;
        let grp = ds.group(g);
        if !grp.types.is_empty() {
            self.indent(depth);
            self.s("types:\n");
            for &t in &grp.types {
                self.type_def(t, g, depth + 1);
            }
        }
        if !grp.dims.is_empty() {
            self.indent(depth);
            self.s("dimensions:\n");
            for &d in &grp.dims {
                let dim = ds.dim(d);
                self.indent(depth);
                self.s("\t");
                push_name(&mut self.buf, &dim.name);
                if dim.unlimited {
                    self.s(&format!(" = UNLIMITED ; // ({} currently)\n", dim.len));
                } else {
                    self.s(&format!(" = {} ;\n", dim.len));
                }
            }
        }
        if !grp.vars.is_empty() {
            self.indent(depth);
            self.s("variables:\n");
            for &v in &grp.vars {
                self.var_decl(v, depth);
            }
        }
        let specials = g.0 == 0 && self.opts.special;
        // under -s ncdump writes the attributes heading for every group, even an empty one
        if !grp.atts.is_empty() || self.opts.special {
            self.s("\n");
            self.indent(depth);
            self.s(if g.0 == 0 {
                "// global attributes:\n"
            } else {
                "// group attributes:\n"
            });
            for a in &grp.atts {
                self.attribute(None, g, a, depth);
            }
            if specials {
                self.global_specials(depth);
            }
        }
    }

    fn type_def(&mut self, t: nc_dataset::TypeId, g: GroupId, depth: usize) {
        let ds = self.ds;
        let ut = ds.user_type(t);
        self.indent(depth);
        match &ut.kind {
            UserTypeKind::Enum { base, members } => {
                // as ncdump's lput: every piece, the `base enum name {` opening included,
                // goes to a new continuation line when it would pass `-l` minus 2 columns;
                // the last piece's fit test counts its `} ;` and newline
                let mut head = Vec::new();
                head.extend_from_slice(base.cdl_name().as_bytes());
                head.extend_from_slice(b" enum ");
                push_name(&mut head, &ut.name);
                head.extend_from_slice(b" {");
                if members.is_empty() {
                    head.extend_from_slice(b"} ;\n");
                }
                let limit = self.opts.line_len().saturating_sub(2);
                self.lput(&head, depth, limit);
                for (i, m) in members.iter().enumerate() {
                    let mut piece = Vec::new();
                    push_name(&mut piece, &m.name);
                    piece.extend_from_slice(format!(" = {}", m.value).as_bytes());
                    piece.extend_from_slice(if i + 1 < members.len() {
                        b", "
                    } else {
                        b"} ;\n"
                    });
                    self.lput(&piece, depth, limit);
                }
            }
            UserTypeKind::Opaque { size } => {
                self.s(&format!("opaque({size}) "));
                push_name(&mut self.buf, &ut.name);
                self.s(" ;\n");
            }
            UserTypeKind::Vlen { base } => {
                self.push_type_name(*base, g);
                self.s("(*) ");
                push_name(&mut self.buf, &ut.name);
                self.s(" ;\n");
            }
            UserTypeKind::Compound { fields, .. } => {
                self.s("compound ");
                push_name(&mut self.buf, &ut.name);
                self.s(" {\n");
                for f in fields {
                    self.indent(depth + 1);
                    self.push_type_name(f.ty, g);
                    self.s(" ");
                    push_name(&mut self.buf, &f.name);
                    if !f.dims.is_empty() {
                        let dims: Vec<String> = f.dims.iter().map(|d| d.to_string()).collect();
                        self.s(&format!("({})", dims.join(", ")));
                    }
                    self.s(" ;\n");
                }
                self.indent(depth);
                self.s("}; // ");
                push_name(&mut self.buf, &ut.name);
                self.s("\n");
            }
        }
    }

    /// ncdump's `lput` for enum declarations: wrap before `piece` when it would pass `limit`
    /// (pieces of 2 bytes or fewer never wrap); a piece ending in a newline resets the
    /// position to the indentation.
    fn lput(&mut self, piece: &[u8], depth: usize, limit: usize) {
        if piece.len() > 2 && self.enum_col + piece.len() > limit {
            self.s("\n");
            self.indent(depth);
            self.s("    ");
            self.enum_col = 2 * depth + 4;
        }
        self.buf.extend_from_slice(piece);
        if piece.ends_with(b"\n") {
            self.enum_col = 2 * depth;
        } else {
            self.enum_col += piece.len();
        }
    }

    fn var_decl(&mut self, v: VarId, depth: usize) {
        let ds = self.ds;
        let var = ds.var(v);
        self.indent(depth);
        self.s("\t");
        self.push_type_name(var.ty, var.group);
        self.s(" ");
        push_name(&mut self.buf, &var.name);
        if !var.dims.is_empty() {
            self.s("(");
            for (i, &d) in var.dims.iter().enumerate() {
                if i > 0 {
                    self.s(", ");
                }
                let dim = ds.dim(d);
                if ds.find_dim(var.group, &dim.name) != Some(d) {
                    let path = ds.group_path(dim.group);
                    if path != "/" {
                        self.s(&path);
                    }
                    self.s("/");
                }
                push_name(&mut self.buf, &dim.name);
            }
            self.s(")");
        }
        self.s(" ;\n");
        for a in &var.atts {
            self.attribute(Some(v), var.group, a, depth);
        }
        if let Some(a) = super::special::quantize_att(ds, v) {
            self.attribute(Some(v), var.group, &a, depth);
        }
        for a in super::special::var_specials(ds, self.format, v, self.opts) {
            self.attribute_line(Some(v), var.group, &a, depth, true);
        }
    }

    /// `\t\t[type ]var:name = values ;`
    pub(super) fn attribute(
        &mut self,
        var: Option<VarId>,
        group: GroupId,
        a: &Attribute,
        depth: usize,
    ) {
        self.attribute_line(var, group, a, depth, false);
    }

    /// An attribute line; `special` for the special attributes (`_Storage`, ...), which
    /// ncdump prints without the gap it leaves after a variable named as a CDL section keyword.
    fn attribute_line(
        &mut self,
        var: Option<VarId>,
        group: GroupId,
        a: &Attribute,
        depth: usize,
        special: bool,
    ) {
        self.indent(depth);
        self.s("\t\t");
        // ncdump shows the values of an attribute of none, whatever its type, as ""
        let empty = a.values.is_empty();
        let typed = match a.ty {
            NcType::Atomic(AtomicType::String) | NcType::User(_) => true,
            // -XF (netCDF-C 4.9.3): a variable's _FillValue always shows its type
            NcType::Atomic(_) => {
                self.opts.fill_value_type && var.is_some() && a.name == "_FillValue"
            }
        };
        if typed {
            self.push_type_name(a.ty, group);
            self.s(" ");
        }
        let ds = self.ds;
        if let Some(v) = var {
            let name = &ds.var(v).name;
            push_name(&mut self.buf, name);
            if !special && CDL_SECTION_KEYWORDS.contains(&name.as_str()) {
                // ncdump keeps `data :att` apart so ncgen does not read the `data:` keyword
                // (and likewise the other section keywords); not for the special attributes,
                // which 4.9.0 prints as `data:_Storage`
                self.s(" ");
            }
        }
        self.s(":");
        push_name(&mut self.buf, &a.name);
        self.s(" = ");
        if empty {
            self.s("\"\"");
        } else if let nc_dataset::Values::Char(bytes) = &a.values {
            // trailing NULs are not shown
            let bytes = &bytes[..bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1)];
            // classic-model files break char attributes after each newline
            let split = self.format().is_classic_model().then_some(&b"\t\t\t"[..]);
            push_quoted(&mut self.buf, bytes, split);
        } else {
            let vf = self.value_fmt();
            let mut tmp = Vec::new();
            if let NcType::User(_) = a.ty {
                // user-typed values go through ncdump's line wrapper (its column count starts
                // afresh for each attribute)
                let limit = self.opts.line_len();
                let mut linep = 0usize;
                let mut piece = Vec::new();
                for i in 0..a.values.len() {
                    piece.clear();
                    vf.att(&mut piece, a.ty, &a.values, i);
                    if i + 1 < a.values.len() {
                        piece.extend_from_slice(b", ");
                    }
                    if piece.len() > 2 && linep + piece.len() > limit {
                        tmp.extend_from_slice(b"\n    ");
                        linep = 4;
                    }
                    tmp.extend_from_slice(&piece);
                    linep += piece.len();
                }
            } else {
                for i in 0..a.values.len() {
                    if i > 0 {
                        tmp.extend_from_slice(b", ");
                    }
                    vf.att(&mut tmp, a.ty, &a.values, i);
                }
            }
            self.buf.extend_from_slice(&tmp);
        }
        self.s(" ;");
        if let Some(v) = var {
            self.time_comment(v, a);
        }
        self.s("\n");
    }

    /// Under `-t`/`-i`, numeric attributes of a time variable get their values as date-time
    /// comments: on the same line when it fits 80 columns, else on following `//` lines.
    fn time_comment(&mut self, v: VarId, a: &Attribute) {
        if self.opts.time == super::TimeMode::Off
            || self.ds.var(v).att("units").is_none()
            || matches!(a.values, Values::Char(_) | Values::String(_))
            || a.ty.as_atomic().is_none()
        {
            return;
        }
        let Some(tc) = super::time::TimeConv::for_var(self.ds, v, self.opts.time) else {
            return;
        };
        let items: Vec<Vec<u8>> = (0..a.values.len())
            .filter_map(|i| a.values.get_f64(i))
            .map(|x| {
                let mut o = Vec::new();
                tc.push(&mut o, x);
                o
            })
            .collect();
        let line_start = self
            .buf
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        // columns as a terminal shows them: tabs to the next multiple of 8
        let col = self.buf[line_start..].iter().fold(0usize, |c, &b| {
            if b == b'\t' {
                (c / 8 + 1) * 8
            } else {
                c + 1
            }
        });
        let joined_len: usize =
            items.iter().map(Vec::len).sum::<usize>() + 2 * items.len().saturating_sub(1);
        if col + 4 + joined_len <= 80 {
            self.s(" // ");
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    self.s(", ");
                }
                self.buf.extend_from_slice(it);
            }
            return;
        }
        self.s("\n\t\t  // ");
        let mut col = 21;
        for (i, it) in items.iter().enumerate() {
            let last = i + 1 == items.len();
            let need = it.len() + usize::from(!last) + usize::from(col > 21);
            if col > 21 && col + need > 80 {
                self.s("\n\t\t  // ");
                col = 21;
            }
            if col > 21 {
                self.s(" ");
                col += 1;
            }
            self.buf.extend_from_slice(it);
            col += it.len();
            if !last {
                self.s(",");
                col += 1;
            }
        }
    }

    fn global_specials(&mut self, depth: usize) {
        for a in super::special::global_specials(self.ds, self.format, self.opts) {
            match &a.values {
                Values::Char(text) => self.special_text_global(&a.name, text, depth),
                _ => self.attribute(None, nc_dataset::ROOT, &a, depth),
            }
        }
    }

    fn special_text_global(&mut self, name: &str, value: &[u8], depth: usize) {
        // virtual attributes never split at newlines
        self.indent(depth);
        self.s("\t\t:");
        self.s(name);
        self.s(" = ");
        push_quoted(&mut self.buf, value, None);
        self.s(" ;\n");
    }
}
