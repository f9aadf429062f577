//! DDS, DAS and Error text (DAP 2.0, sections 6.1 and 7.1; netCDF-C's `oc2/dap.y` grammar and
//! `oc2/daplex.c` word rules): one tokenizer, three recursive-descent parsers.

/// A DAP2 base type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseType {
    /// unsigned 8-bit
    Byte,
    /// signed 16-bit (4 bytes in XDR)
    Int16,
    /// unsigned 16-bit (4 bytes in XDR)
    UInt16,
    /// signed 32-bit
    Int32,
    /// unsigned 32-bit
    UInt32,
    /// IEEE single
    Float32,
    /// IEEE double
    Float64,
    /// counted string
    String,
    /// counted string holding a URL
    Url,
}

impl BaseType {
    fn from_keyword(w: &str) -> Option<BaseType> {
        Some(match w.to_ascii_lowercase().as_str() {
            "byte" => BaseType::Byte,
            "int16" => BaseType::Int16,
            "uint16" => BaseType::UInt16,
            "int32" => BaseType::Int32,
            "uint32" => BaseType::UInt32,
            "float32" => BaseType::Float32,
            "float64" => BaseType::Float64,
            "string" => BaseType::String,
            "url" => BaseType::Url,
            _ => return None,
        })
    }

    /// True for String and Url.
    pub fn is_string(self) -> bool {
        matches!(self, BaseType::String | BaseType::Url)
    }
}

/// What a DDS declaration declares.
#[derive(Debug, Clone, PartialEq)]
pub enum DdsKind {
    /// an atomic variable (array or scalar)
    Base(BaseType),
    /// a structure (array or scalar)
    Structure,
    /// a sequence (no dimensions)
    Sequence,
    /// a grid: `fields[0]` is the array, the rest its maps
    Grid,
}

/// One dimension of a DDS declaration: `[name = size]` or `[size]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DdsDim {
    /// its name, if given
    pub name: Option<String>,
    /// its size
    pub size: u64,
}

/// A DDS declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct DdsNode {
    /// the name (partly %-decoded as netCDF-C decodes it)
    pub name: String,
    /// what it is
    pub kind: DdsKind,
    /// array dimensions, slowest first
    pub dims: Vec<DdsDim>,
    /// fields of a structure, sequence or grid
    pub fields: Vec<DdsNode>,
}

/// A parsed DDS.
#[derive(Debug, Clone, PartialEq)]
pub struct Dds {
    /// the dataset name after the closing brace
    pub name: String,
    /// top-level declarations
    pub vars: Vec<DdsNode>,
}

/// An attribute of a DAS: its DAP type and its values as written.
#[derive(Debug, Clone, PartialEq)]
pub struct DasAttr {
    /// the name
    pub name: String,
    /// the DAP type
    pub ty: BaseType,
    /// the values as text (strings: without the quotes, backslashes kept)
    pub values: Vec<String>,
}

/// An item of a DAS container.
#[derive(Debug, Clone, PartialEq)]
pub enum DasItem {
    /// an attribute
    Attr(DasAttr),
    /// a nested container
    Table {
        /// the container name
        name: String,
        /// its items
        items: Vec<DasItem>,
    },
}

/// A server's `Error { code = ...; message = ...; }` response.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DapErrorBody {
    /// the code, as written
    pub code: String,
    /// the message
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Punct(u8),
    Word(String),
    Str(String),
}

const DELIMS: &[u8] = b"{}[]:;=,";

fn word_char(c: u8, das: bool) -> bool {
    c.is_ascii_alphanumeric()
        || b"-+_/%\\.*!~'\"".contains(&c)
        || (das && (c == b'#' || c == b':'))
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
    das: bool,
    line: usize,
}

impl<'a> Lexer<'a> {
    fn new(s: &'a [u8]) -> Lexer<'a> {
        Lexer {
            s,
            pos: 0,
            das: false,
            line: 1,
        }
    }

    fn next(&mut self) -> Option<Tok> {
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            if c == b'\n' {
                self.line += 1;
                self.pos += 1;
            } else if c <= b' ' || c == 0x7f {
                self.pos += 1;
            } else if c == b'#' {
                while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else if DELIMS.contains(&c) {
                self.pos += 1;
                return Some(Tok::Punct(c));
            } else if c == b'"' {
                self.pos += 1;
                let mut out = Vec::new();
                while self.pos < self.s.len() {
                    let c = self.s[self.pos];
                    self.pos += 1;
                    if c == b'"' {
                        break;
                    }
                    if c == b'\\' {
                        // the backslash is kept with the next character: escapes are
                        // expanded later, as netCDF-C does
                        out.push(c);
                        if self.pos < self.s.len() {
                            if self.s[self.pos] == b'\n' {
                                self.line += 1;
                            }
                            out.push(self.s[self.pos]);
                            self.pos += 1;
                        }
                        continue;
                    }
                    if c == b'\n' {
                        self.line += 1;
                    }
                    out.push(c);
                }
                return Some(Tok::Str(String::from_utf8_lossy(&out).into_owned()));
            } else if word_char(c, false) {
                let start = self.pos;
                self.pos += 1;
                while self.pos < self.s.len() && word_char(self.s[self.pos], self.das) {
                    self.pos += 1;
                }
                return Some(Tok::Word(
                    String::from_utf8_lossy(&self.s[start..self.pos]).into_owned(),
                ));
            } else {
                // a character no rule takes: skipped, as netCDF-C's lexer does
                self.pos += 1;
            }
        }
        None
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    peeked: Vec<Tok>,
}

type PResult<T> = Result<T, String>;

impl<'a> Parser<'a> {
    fn new(s: &'a [u8]) -> Parser<'a> {
        Parser {
            lex: Lexer::new(s),
            peeked: Vec::new(),
        }
    }

    fn peek_n(&mut self, n: usize) -> Option<&Tok> {
        while self.peeked.len() <= n {
            let t = self.lex.next()?;
            self.peeked.push(t);
        }
        self.peeked.get(n)
    }

    fn peek(&mut self) -> Option<&Tok> {
        self.peek_n(0)
    }

    fn bump(&mut self) -> Option<Tok> {
        if self.peeked.is_empty() {
            self.lex.next()
        } else {
            Some(self.peeked.remove(0))
        }
    }

    fn err(&self, what: &str) -> String {
        format!("line {}: {what}", self.lex.line)
    }

    fn expect(&mut self, p: u8) -> PResult<()> {
        match self.bump() {
            Some(Tok::Punct(c)) if c == p => Ok(()),
            Some(t) => Err(self.err(&format!("expected '{}', found {}", p as char, show(&t)))),
            None => Err(self.err(&format!("expected '{}', found the end", p as char))),
        }
    }

    fn keyword(&mut self, kw: &str) -> PResult<()> {
        match self.bump() {
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw) => Ok(()),
            Some(t) => Err(self.err(&format!("expected \"{kw}\", found {}", show(&t)))),
            None => Err(self.err(&format!("expected \"{kw}\", found the end"))),
        }
    }

    /// A name: a word, %-decoded for the characters DAP2 allows.
    fn name(&mut self) -> PResult<String> {
        match self.bump() {
            Some(Tok::Word(w)) => Ok(decode_name(&w)),
            Some(t) => Err(self.err(&format!("expected a name, found {}", show(&t)))),
            None => Err(self.err("expected a name, found the end")),
        }
    }

    fn is_punct(&mut self, p: u8) -> bool {
        matches!(self.peek(), Some(Tok::Punct(c)) if *c == p)
    }

    fn is_word(&mut self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Punct(c) => format!("'{}'", *c as char),
        Tok::Word(w) => format!("\"{w}\""),
        Tok::Str(s) => format!("string \"{s}\""),
    }
}

/// netCDF-C's partial %-decoding of identifiers: `%XX` becomes its character only when that
/// character is one DAP2 allows in a name (letters, digits, `_!~*'-"`).
pub fn decode_name(w: &str) -> String {
    let b = w.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(c) = hex {
                if c.is_ascii_alphanumeric() || b"_!~*'-\"".contains(&c) {
                    out.push(c);
                    i += 3;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a response text turned out to be.
#[derive(Debug)]
pub enum Parsed<T> {
    /// the expected thing
    Ok(T),
    /// an Error body
    Error(DapErrorBody),
}

fn parse_int(w: &str) -> Option<i64> {
    // strtol with base 0: 0x hex, leading 0 octal, else decimal
    let (neg, t) = match w.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, w.strip_prefix('+').unwrap_or(w)),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Parse a DDS (or the DDS part of a `.dods`, up to `Data:`).
///
/// # Errors
/// The text does not follow the DDS grammar (the message says the line and what was found).
pub fn parse_dds(text: &[u8]) -> PResult<Parsed<Dds>> {
    let mut p = Parser::new(text);
    if p.is_word("error") {
        return parse_error_body(&mut p).map(Parsed::Error);
    }
    p.keyword("dataset")?;
    p.expect(b'{')?;
    let vars = declarations(&mut p)?;
    p.expect(b'}')?;
    let name = p.name()?;
    p.expect(b';')?;
    check_unique(&vars, &name)?;
    Ok(Parsed::Ok(Dds { name, vars }))
}

fn check_unique(nodes: &[DdsNode], scope: &str) -> PResult<()> {
    for (i, a) in nodes.iter().enumerate() {
        if nodes[..i].iter().any(|b| b.name == a.name) {
            return Err(format!("duplicate field name \"{}\" in {scope}", a.name));
        }
    }
    Ok(())
}

fn declarations(p: &mut Parser) -> PResult<Vec<DdsNode>> {
    let mut out = Vec::new();
    while !p.is_punct(b'}') {
        if p.peek().is_none() {
            return Err(p.err("the declarations end without '}'"));
        }
        out.push(declaration(p)?);
    }
    Ok(out)
}

fn declaration(p: &mut Parser) -> PResult<DdsNode> {
    let word = match p.bump() {
        Some(Tok::Word(w)) => w,
        Some(t) => return Err(p.err(&format!("expected a type, found {}", show(&t)))),
        None => return Err(p.err("expected a type, found the end")),
    };
    if let Some(bt) = BaseType::from_keyword(&word) {
        let name = p.name()?;
        let dims = array_decls(p)?;
        p.expect(b';')?;
        return Ok(DdsNode {
            name,
            kind: DdsKind::Base(bt),
            dims,
            fields: Vec::new(),
        });
    }
    match word.to_ascii_lowercase().as_str() {
        "structure" | "sequence" => {
            let seq = word.eq_ignore_ascii_case("sequence");
            p.expect(b'{')?;
            let fields = declarations(p)?;
            p.expect(b'}')?;
            let name = p.name()?;
            check_unique(&fields, &name)?;
            let dims = if seq { Vec::new() } else { array_decls(p)? };
            p.expect(b';')?;
            Ok(DdsNode {
                name,
                kind: if seq {
                    DdsKind::Sequence
                } else {
                    DdsKind::Structure
                },
                dims,
                fields,
            })
        }
        "grid" => {
            p.expect(b'{')?;
            p.keyword("array")?;
            p.expect(b':')?;
            let array = declaration(p)?;
            p.keyword("maps")?;
            p.expect(b':')?;
            let maps = declarations(p)?;
            p.expect(b'}')?;
            let name = p.name()?;
            p.expect(b';')?;
            check_unique(&maps, &name)?;
            let mut fields = vec![array];
            fields.extend(maps);
            Ok(DdsNode {
                name,
                kind: DdsKind::Grid,
                dims: Vec::new(),
                fields,
            })
        }
        _ => Err(p.err(&format!("unrecognized type \"{word}\""))),
    }
}

fn array_decls(p: &mut Parser) -> PResult<Vec<DdsDim>> {
    let mut dims = Vec::new();
    while p.is_punct(b'[') {
        p.bump();
        let mut name = None;
        if p.is_punct(b'=') {
            p.bump();
        } else if matches!(p.peek_n(1), Some(Tok::Punct(b'='))) {
            name = Some(p.name()?);
            p.expect(b'=')?;
        }
        let size = match p.bump() {
            Some(Tok::Word(w)) => parse_int(&w)
                .filter(|v| (0..=i64::from(i32::MAX)).contains(v))
                .ok_or_else(|| p.err(&format!("dimension size \"{w}\" is not an integer")))?,
            Some(t) => {
                return Err(p.err(&format!("expected a dimension size, found {}", show(&t))))
            }
            None => return Err(p.err("expected a dimension size, found the end")),
        };
        p.expect(b']')?;
        dims.push(DdsDim {
            name,
            size: size as u64,
        });
    }
    Ok(dims)
}

fn parse_error_body(p: &mut Parser) -> PResult<DapErrorBody> {
    p.keyword("error")?;
    p.expect(b'{')?;
    let mut body = DapErrorBody::default();
    while !p.is_punct(b'}') {
        let key = match p.bump() {
            Some(Tok::Word(w)) => w.to_ascii_lowercase(),
            Some(t) => return Err(p.err(&format!("expected code or message, found {}", show(&t)))),
            None => return Err(p.err("the Error body ends early")),
        };
        p.expect(b'=')?;
        let value = match p.bump() {
            Some(Tok::Word(w)) | Some(Tok::Str(w)) => w,
            Some(t) => return Err(p.err(&format!("expected a value, found {}", show(&t)))),
            None => return Err(p.err("the Error body ends early")),
        };
        p.expect(b';')?;
        match key.as_str() {
            "code" => body.code = value,
            "message" => body.message = value,
            _ => {}
        }
    }
    Ok(body)
}

/// Parse a DAS.
///
/// # Errors
/// The text does not follow the DAS grammar, or a container holds two items of one name.
pub fn parse_das(text: &[u8]) -> PResult<Parsed<Vec<DasItem>>> {
    let mut p = Parser::new(text);
    if p.is_word("error") {
        return parse_error_body(&mut p).map(Parsed::Error);
    }
    p.keyword("attributes")?;
    p.lex.das = true;
    p.expect(b'{')?;
    let items = attr_list(&mut p)?;
    p.expect(b'}')?;
    Ok(Parsed::Ok(items))
}

fn item_name(i: &DasItem) -> &str {
    match i {
        DasItem::Attr(a) => &a.name,
        DasItem::Table { name, .. } => name,
    }
}

fn attr_list(p: &mut Parser) -> PResult<Vec<DasItem>> {
    let mut items: Vec<DasItem> = Vec::new();
    while !p.is_punct(b'}') {
        if p.peek().is_none() {
            return Err(p.err("the attribute table ends without '}'"));
        }
        if let Some(item) = attribute(p)? {
            if items.iter().any(|i| item_name(i) == item_name(&item)) {
                return Err(p.err(&format!(
                    "duplicate attribute name \"{}\" in one scope",
                    item_name(&item)
                )));
            }
            items.push(item);
        }
    }
    Ok(items)
}

fn attribute(p: &mut Parser) -> PResult<Option<DasItem>> {
    // `name {` is a container, whatever the name
    if matches!(p.peek_n(1), Some(Tok::Punct(b'{'))) {
        let name = p.name()?;
        p.expect(b'{')?;
        let items = attr_list(p)?;
        p.expect(b'}')?;
        return Ok(Some(DasItem::Table { name, items }));
    }
    if p.is_word("alias") {
        p.bump();
        p.bump();
        p.bump();
        p.expect(b';')?;
        return Ok(None);
    }
    let word = match p.bump() {
        Some(Tok::Word(w)) => w,
        Some(t) => return Err(p.err(&format!("expected an attribute type, found {}", show(&t)))),
        None => return Err(p.err("the attribute table ends early")),
    };
    let ty = BaseType::from_keyword(&word)
        .ok_or_else(|| p.err(&format!("illegal attribute: unknown type \"{word}\"")))?;
    let name = p.name()?;
    let mut values = Vec::new();
    loop {
        let v = match p.bump() {
            Some(Tok::Word(w)) if ty.is_string() => decode_name(&w),
            Some(Tok::Word(w)) => w,
            Some(Tok::Str(s)) if ty.is_string() => s,
            Some(t) => {
                return Err(p.err(&format!(
                    "attribute \"{name}\": expected a value, found {}",
                    show(&t)
                )))
            }
            None => return Err(p.err(&format!("attribute \"{name}\" ends early"))),
        };
        values.push(v);
        if p.is_punct(b',') {
            p.bump();
            continue;
        }
        p.expect(b';')?;
        break;
    }
    Ok(Some(DasItem::Attr(DasAttr { name, ty, values })))
}

/// Split a `.dods` response into its DDS text and its XDR body (after the `Data:` line).
/// `None` when there is no `Data:` line.
pub fn split_dods(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut from = 0;
    while let Some(i) = find(&bytes[from..], b"Data:") {
        let at = from + i;
        let line_start = at == 0 || bytes[at - 1] == b'\n';
        let rest = &bytes[at + 5..];
        if line_start {
            if rest.first() == Some(&b'\n') {
                return Some((&bytes[..at], &rest[1..]));
            }
            if rest.starts_with(b"\r\n") {
                return Some((&bytes[..at], &rest[2..]));
            }
        }
        from = at + 5;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dds_with_grid_structure_and_sequence() {
        let t = b"Dataset {\n  Int32 a[x = 3][4];\n  Structure { Float64 f; String s[2]; } st[n = 2];\n  Sequence { Byte b; } seq;\n  Grid { ARRAY: Float32 g[lat = 2]; MAPS: Float32 lat[lat = 2]; } g;\n} d%2eds;\n";
        let Parsed::Ok(dds) = parse_dds(t).unwrap() else {
            panic!("error body")
        };
        assert_eq!(dds.name, "d%2eds");
        assert_eq!(dds.vars.len(), 4);
        assert_eq!(
            dds.vars[0].dims,
            vec![
                DdsDim {
                    name: Some("x".into()),
                    size: 3
                },
                DdsDim {
                    name: None,
                    size: 4
                }
            ]
        );
        assert_eq!(dds.vars[1].kind, DdsKind::Structure);
        assert_eq!(dds.vars[1].fields[1].kind, DdsKind::Base(BaseType::String));
        assert_eq!(dds.vars[2].kind, DdsKind::Sequence);
        assert_eq!(dds.vars[3].kind, DdsKind::Grid);
        assert_eq!(dds.vars[3].fields[1].name, "lat");
    }

    #[test]
    fn das_nested_and_escapes() {
        let t = br#"Attributes {
    NC_GLOBAL { String title "a \"q\"", "b"; Int16 n 1, -2; }
    v { Float64 f 1.5; inner { Url u http://x/y; } }
}"#;
        let Parsed::Ok(items) = parse_das(t).unwrap() else {
            panic!("error body")
        };
        let DasItem::Table { name, items: g } = &items[0] else {
            panic!("table")
        };
        assert_eq!(name, "NC_GLOBAL");
        assert_eq!(
            g[0],
            DasItem::Attr(DasAttr {
                name: "title".into(),
                ty: BaseType::String,
                values: vec![r#"a \"q\""#.into(), "b".into()]
            })
        );
        let DasItem::Table { items: v, .. } = &items[1] else {
            panic!("table")
        };
        let DasItem::Table { items: inner, .. } = &v[1] else {
            panic!("table")
        };
        assert_eq!(
            inner[0],
            DasItem::Attr(DasAttr {
                name: "u".into(),
                ty: BaseType::Url,
                values: vec!["http://x/y".into()]
            })
        );
    }

    #[test]
    fn error_body_and_bad_text() {
        let t = b"Error {\n code = 1001;\n message = \"No such file\";\n};";
        let Parsed::Error(e) = parse_dds(t).unwrap() else {
            panic!("not an error body")
        };
        assert_eq!(e.code, "1001");
        assert_eq!(e.message, "No such file");
        assert!(parse_dds(b"Dataset { Int32 a[x = y]; } d;").is_err());
        assert!(parse_dds(b"Dataset { Int32 a;").is_err());
        assert!(parse_das(b"Attributes { a { Int32 x 1; Int32 x 2; } }").is_err());
    }

    #[test]
    fn names_decode_only_legal_characters() {
        assert_eq!(decode_name("a%41b%2ec%20"), "aAb%2ec%20");
    }

    #[test]
    fn dods_splits_at_the_data_line() {
        let b = b"Dataset { Int32 a; } d;\nData:\n\x00\x00\x00\x07";
        let (dds, body) = split_dods(b).unwrap();
        assert!(dds.ends_with(b"d;\n"));
        assert_eq!(body, &[0, 0, 0, 7]);
    }
}
