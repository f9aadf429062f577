//! A small XML parser for DMR documents: elements, attributes, text, the five predefined
//! entities and character references, comments, processing instructions, a DOCTYPE, CDATA.
//! Namespace prefixes are dropped from element names (`dap:Int32` is `Int32`), as netCDF-C's
//! DOM reader reports local names. No DTD processing; nesting is bounded.

/// Deepest element nesting accepted (a DMR nests groups and structures a few levels).
const MAX_DEPTH: usize = 256;

/// One element: its local name, attributes in document order, child elements, and its text
/// content (the character data directly inside it, entities decoded).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The child elements called `name`, in order.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> {
        self.children.iter().filter(move |c| c.name == name)
    }
}

/// Where and why the XML does not parse.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct XmlError {
    /// byte offset in the document
    pub at: usize,
    /// what is wrong
    pub what: String,
}

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "XML error at byte {}: {}", self.at, self.what)
    }
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
}

/// Parse a document and return its root element. A document whose XML declaration says
/// `encoding="ISO-8859-1"` (or `latin1`) is read as Latin-1; any other as UTF-8 (invalid
/// sequences replaced).
pub(crate) fn parse(doc: &[u8]) -> Result<Element, XmlError> {
    let latin1;
    let doc = if declares_latin1(doc) {
        latin1 = doc
            .iter()
            .map(|&b| char::from(b))
            .collect::<String>()
            .into_bytes();
        &latin1[..]
    } else {
        doc
    };
    let mut r = Reader { s: doc, pos: 0 };
    // a byte order mark
    if r.s.starts_with(&[0xef, 0xbb, 0xbf]) {
        r.pos = 3;
    }
    r.misc()?;
    if r.peek() != Some(b'<') {
        return Err(r.err("expected the root element"));
    }
    let root = r.element(0)?;
    r.misc()?;
    if r.pos < r.s.len() {
        return Err(r.err("content after the root element"));
    }
    Ok(root)
}

impl<'a> Reader<'a> {
    fn err(&self, what: impl Into<String>) -> XmlError {
        XmlError {
            at: self.pos,
            what: what.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn starts(&self, p: &[u8]) -> bool {
        self.s[self.pos..].starts_with(p)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    /// Skip to just after `end`.
    fn skip_past(&mut self, end: &[u8], what: &str) -> Result<(), XmlError> {
        match find(&self.s[self.pos..], end) {
            Some(i) => {
                self.pos += i + end.len();
                Ok(())
            }
            None => Err(self.err(format!("unterminated {what}"))),
        }
    }

    /// Whitespace, comments, processing instructions and a DOCTYPE outside the root.
    fn misc(&mut self) -> Result<(), XmlError> {
        loop {
            self.skip_ws();
            if self.starts(b"<?") {
                self.skip_past(b"?>", "processing instruction")?;
            } else if self.starts(b"<!--") {
                self.skip_past(b"-->", "comment")?;
            } else if self.starts(b"<!DOCTYPE") || self.starts(b"<!doctype") {
                self.skip_past(b">", "DOCTYPE")?;
            } else {
                return Ok(());
            }
        }
    }

    fn name(&mut self) -> Result<String, XmlError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() || matches!(c, b'=' | b'>' | b'/' | b'<' | b'"' | b'\'') {
                break;
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.err("expected a name"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    fn element(&mut self, depth: usize) -> Result<Element, XmlError> {
        if depth >= MAX_DEPTH {
            return Err(self.err(format!("elements nested deeper than {MAX_DEPTH}")));
        }
        self.pos += 1; // '<'
        let qname = self.name()?;
        let mut el = Element {
            name: local(&qname).to_string(),
            ..Element::default()
        };
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'/') => {
                    if self.s.get(self.pos + 1) != Some(&b'>') {
                        return Err(self.err("expected '/>'"));
                    }
                    self.pos += 2;
                    return Ok(el);
                }
                Some(b'>') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {
                    let an = self.name()?;
                    self.skip_ws();
                    if self.peek() != Some(b'=') {
                        return Err(self.err(format!("attribute {an} has no value")));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let q = match self.peek() {
                        Some(q @ (b'"' | b'\'')) => q,
                        _ => return Err(self.err(format!("attribute {an}: expected a quote"))),
                    };
                    self.pos += 1;
                    let start = self.pos;
                    let len = self.s[start..]
                        .iter()
                        .position(|&c| c == q)
                        .ok_or_else(|| self.err(format!("attribute {an}: unterminated value")))?;
                    self.pos = start + len + 1;
                    let v = decode(&self.s[start..start + len], start)?;
                    el.attrs.push((an, v));
                }
                None => return Err(self.err(format!("element <{qname}> is not closed"))),
            }
        }
        // content
        let mut text = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.err(format!("element <{qname}> has no end tag"))),
                Some(b'<') => {
                    if self.starts(b"</") {
                        self.pos += 2;
                        let end = self.name()?;
                        if end != qname {
                            return Err(
                                self.err(format!("end tag </{end}> does not match <{qname}>"))
                            );
                        }
                        self.skip_ws();
                        if self.peek() != Some(b'>') {
                            return Err(self.err("expected '>'"));
                        }
                        self.pos += 1;
                        el.text = String::from_utf8_lossy(&text).into_owned();
                        return Ok(el);
                    } else if self.starts(b"<!--") {
                        self.skip_past(b"-->", "comment")?;
                    } else if self.starts(b"<![CDATA[") {
                        self.pos += 9;
                        let start = self.pos;
                        self.skip_past(b"]]>", "CDATA section")?;
                        text.extend_from_slice(&self.s[start..self.pos - 3]);
                    } else if self.starts(b"<?") {
                        self.skip_past(b"?>", "processing instruction")?;
                    } else {
                        let child = self.element(depth + 1)?;
                        el.children.push(child);
                    }
                }
                Some(_) => {
                    let start = self.pos;
                    let len = self.s[start..]
                        .iter()
                        .position(|&c| c == b'<')
                        .unwrap_or(self.s.len() - start);
                    self.pos = start + len;
                    text.extend_from_slice(decode(&self.s[start..start + len], start)?.as_bytes());
                }
            }
        }
    }
}

fn declares_latin1(doc: &[u8]) -> bool {
    if !doc.starts_with(b"<?xml") {
        return false;
    }
    let end = find(doc, b"?>").unwrap_or(0);
    let decl = String::from_utf8_lossy(&doc[..end]).to_ascii_lowercase();
    ["iso-8859-1", "iso8859-1", "latin1", "latin-1"]
        .iter()
        .any(|e| {
            decl.contains(&format!("encoding=\"{e}\"")) || decl.contains(&format!("encoding='{e}'"))
        })
}

fn local(qname: &str) -> &str {
    qname.rsplit(':').next().unwrap_or(qname)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decode entity and character references in character data starting at byte `at`.
fn decode(raw: &[u8], at: usize) -> Result<String, XmlError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'&' {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        let end = raw[i..]
            .iter()
            .position(|&c| c == b';')
            .filter(|&n| n <= 12)
            .ok_or(XmlError {
                at: at + i,
                what: "'&' does not start an entity reference".into(),
            })?;
        let ent = &raw[i + 1..i + end];
        let c = match ent {
            b"lt" => Some('<'),
            b"gt" => Some('>'),
            b"amp" => Some('&'),
            b"quot" => Some('"'),
            b"apos" => Some('\''),
            [b'#', b'x' | b'X', hex @ ..] => std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32),
            [b'#', dec @ ..] => std::str::from_utf8(dec)
                .ok()
                .and_then(|d| d.parse::<u32>().ok())
                .and_then(char::from_u32),
            _ => None,
        };
        let c = c.ok_or(XmlError {
            at: at + i,
            what: format!("unknown entity &{};", String::from_utf8_lossy(ent)),
        })?;
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        i += end + 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_attributes_text() {
        let doc = br#"<?xml version="1.0"?>
<!-- c -->
<dap:Dataset name="d" xmlns:dap="x">
  <Int32 name='a&amp;b'><Dim size="2"/></Int32>
  <Attribute name="t" type="String"><Value>x &lt; y<![CDATA[<z>]]></Value></Attribute>
</dap:Dataset>
"#;
        let e = parse(doc).unwrap();
        assert_eq!(e.name, "Dataset");
        assert_eq!(e.attr("name"), Some("d"));
        assert_eq!(e.children.len(), 2);
        assert_eq!(e.children[0].attr("name"), Some("a&b"));
        assert_eq!(e.children[0].children[0].attr("size"), Some("2"));
        let v = e.children[1].children_named("Value").next().unwrap();
        assert_eq!(v.text, "x < y<z>");
        assert_eq!(
            parse("<a>&#233;&#x41;</a>".as_bytes()).unwrap().text,
            "\u{e9}A"
        );
    }

    #[test]
    fn latin1_documents_are_transcoded() {
        let doc = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a n=\"\xe9\">\xe8</a>";
        let e = parse(doc).unwrap();
        assert_eq!(e.attr("n"), Some("\u{e9}"));
        assert_eq!(e.text, "\u{e8}");
    }

    #[test]
    fn malformed_documents_are_errors() {
        for bad in [
            &b""[..],
            b"<a>",
            b"<a></b>",
            b"<a x=1/>",
            b"<a x=\"1/>",
            b"<a>&bogus;</a>",
            b"<a/><b/>",
            b"<a><!-- </a>",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let deep = "<a>".repeat(1000);
        assert!(parse(deep.as_bytes()).unwrap_err().what.contains("nested"));
    }
}
