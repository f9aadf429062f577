//! Streaming CDL tokenizer over a [`Read`] source (grammar: `cdl-grammar/cdl.ebnf`, "Lexical").
//!
//! The lexer keeps a window of the input in a large buffer and refills it as tokens are consumed,
//! so a 200 MiB data section never sits in memory. Positions are 1-based line and byte column.

use std::io::Read;

use super::literal::{classify_number, Number};
use super::CdlError;

/// Size of one refill read.
const CHUNK: usize = 1 << 20;
/// Longest name or number token we accept (longer input is an error, not an allocation).
const MAX_TOKEN: usize = 1 << 16;

/// A token of CDL.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// A name (backslash escapes removed); keywords are names too, told apart by the parser.
    Name(String),
    /// A numeric literal.
    Num(Number),
    /// A double-quoted string (escapes decoded, raw bytes).
    Str(Vec<u8>),
    /// A single-quoted character constant.
    Char(u8),
    /// A hex opaque constant `0x...` (its bytes, two hex digits each).
    Opaque(Vec<u8>),
    /// One of `{ } ( ) , ; : = *`.
    Punct(u8),
    /// End of input.
    Eof,
}

impl Tok {
    /// How the token looks in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("'{n}'"),
            Tok::Num(n) => format!("number '{}'", n.text()),
            Tok::Str(s) => format!("string \"{}\"", String::from_utf8_lossy(s)),
            Tok::Char(c) => format!("character constant '{}'", char::from(*c).escape_default()),
            Tok::Opaque(_) => "opaque constant".to_string(),
            Tok::Punct(p) => format!("'{}'", char::from(*p)),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

/// Start position of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based byte column.
    pub col: usize,
}

/// The tokenizer.
pub(crate) struct Lexer<R: Read> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    line: usize,
    line_start: u64,
    consumed: u64,
    /// File name for messages.
    pub file: String,
    peeked: std::collections::VecDeque<(Tok, Pos)>,
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 || c == b'\\'
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'@' | b'+' | b'-' | b'\\') || c >= 0x80
}

impl<R: Read> Lexer<R> {
    /// A lexer over `src`; `file` names it in messages.
    pub(crate) fn new(src: R, file: &str) -> Self {
        Lexer {
            src,
            buf: vec![0; CHUNK],
            pos: 0,
            end: 0,
            eof: false,
            line: 1,
            line_start: 0,
            consumed: 0,
            file: file.to_string(),
            peeked: std::collections::VecDeque::new(),
        }
    }

    fn io_err(&self, e: &std::io::Error) -> CdlError {
        CdlError::Io {
            file: self.file.clone(),
            msg: e.to_string(),
        }
    }

    /// Make at least `n` bytes available from `pos` unless the input ends first.
    fn fill(&mut self, n: usize) -> Result<(), CdlError> {
        if self.end - self.pos >= n || self.eof {
            return Ok(());
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.consumed += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < n + CHUNK / 2 {
            self.buf.resize(n + CHUNK, 0);
        }
        while self.end < n && !self.eof {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_err(&e)),
            }
        }
        Ok(())
    }

    #[inline]
    fn peek_byte(&mut self) -> Result<Option<u8>, CdlError> {
        if self.pos >= self.end {
            self.fill(1)?;
            if self.pos >= self.end {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos]))
    }

    #[inline]
    fn byte_at(&mut self, k: usize) -> Result<Option<u8>, CdlError> {
        if self.pos + k >= self.end {
            self.fill(k + 1)?;
            if self.pos + k >= self.end {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos + k]))
    }

    /// Current position.
    pub(crate) fn here(&self) -> Pos {
        let abs = self.consumed + self.pos as u64;
        Pos {
            line: self.line,
            col: (abs - self.line_start) as usize + 1,
        }
    }

    fn newline_at(&mut self, idx: usize) {
        self.line += 1;
        self.line_start = self.consumed + idx as u64 + 1;
    }

    /// An error at `pos`.
    pub(crate) fn err_at(&self, pos: Pos, msg: impl Into<String>) -> CdlError {
        CdlError::Syntax {
            file: self.file.clone(),
            line: pos.line,
            col: pos.col,
            msg: msg.into(),
        }
    }

    /// Skip blanks and `//` comments.
    fn skip_ws(&mut self) -> Result<(), CdlError> {
        loop {
            while self.pos < self.end {
                let c = self.buf[self.pos];
                match c {
                    b'\n' => {
                        self.newline_at(self.pos);
                        self.pos += 1;
                    }
                    b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                    b'/' => {
                        if self.pos + 1 >= self.end && !self.eof {
                            break;
                        }
                        if self.pos + 1 < self.end && self.buf[self.pos + 1] == b'/' {
                            // comment to end of line
                            loop {
                                match self.buf[self.pos..self.end]
                                    .iter()
                                    .position(|&b| b == b'\n')
                                {
                                    Some(k) => {
                                        self.pos += k;
                                        break;
                                    }
                                    None => {
                                        self.pos = self.end;
                                        self.fill(1)?;
                                        if self.pos >= self.end {
                                            return Ok(());
                                        }
                                    }
                                }
                            }
                        } else {
                            return Ok(());
                        }
                    }
                    _ => return Ok(()),
                }
            }
            if self.eof && self.pos >= self.end {
                return Ok(());
            }
            self.fill(2)?;
            if self.pos >= self.end {
                return Ok(());
            }
        }
    }

    /// Look at the next token without consuming it.
    pub(crate) fn peek(&mut self) -> Result<&(Tok, Pos), CdlError> {
        self.peek_nth(0)
    }

    /// Look at the token `k` places ahead (0 = next) without consuming anything.
    pub(crate) fn peek_nth(&mut self, k: usize) -> Result<&(Tok, Pos), CdlError> {
        while self.peeked.len() <= k {
            let t = self.lex()?;
            self.peeked.push_back(t);
        }
        match self.peeked.get(k) {
            Some(t) => Ok(t),
            None => Err(self.err_at(self.here(), "internal: lost peeked token")),
        }
    }

    /// Consume and return the next token.
    #[inline]
    pub(crate) fn next(&mut self) -> Result<(Tok, Pos), CdlError> {
        match self.peeked.pop_front() {
            Some(t) => Ok(t),
            None => self.lex(),
        }
    }

    /// Fast path for data sections: a plain decimal number (`-12`, `271.3456`) read in one
    /// pass. Returns None (consuming nothing but blanks) for anything else, which the caller
    /// then reads with [`Lexer::next`].
    #[inline]
    pub(crate) fn fast_number(&mut self) -> Result<Option<Number>, CdlError> {
        if !self.peeked.is_empty() {
            return Ok(None);
        }
        self.skip_ws()?;
        if self.end - self.pos < 64 {
            self.fill(64)?;
        }
        let b = &self.buf[self.pos..self.end];
        let neg = b.first() == Some(&b'-');
        let start = usize::from(neg);
        let mut i = start;
        let mut mant: u64 = 0;
        let mut nd = 0u32;
        while i < b.len() && b[i].is_ascii_digit() {
            if nd >= 18 {
                return Ok(None);
            }
            mant = mant * 10 + u64::from(b[i] - b'0');
            nd += 1;
            i += 1;
        }
        let int_digits = i - start;
        if int_digits == 0 || (int_digits > 1 && b[start] == b'0') {
            return Ok(None);
        }
        let mut frac = 0usize;
        let is_float = i < b.len() && b[i] == b'.';
        if is_float {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                if nd >= 18 {
                    return Ok(None);
                }
                mant = mant * 10 + u64::from(b[i] - b'0');
                nd += 1;
                frac += 1;
                i += 1;
            }
        }
        if i >= b.len() {
            if !self.eof {
                return Ok(None);
            }
        } else if is_name_char(b[i]) || b[i] == b'.' {
            return Ok(None);
        }
        let num = if is_float {
            // exact mantissa (< 10^18 < 2^60 may round; only < 2^53 is exact) divided by an
            // exact power of ten: one correctly rounded IEEE operation
            if mant >= (1u64 << 53) || frac > 22 {
                return Ok(None);
            }
            let v = mant as f64 / POW10[frac];
            Number::double(if neg { -v } else { v })
        } else {
            let bits = if neg { -(mant as i64) } else { mant as i64 };
            Number::Int {
                bits,
                ty: super::literal::int_natural_type(bits),
            }
        };
        self.pos += i;
        Ok(Some(num))
    }

    /// Fast path: the separator `,` or `;` after a data value. None if something else follows.
    #[inline]
    pub(crate) fn fast_sep(&mut self) -> Result<Option<u8>, CdlError> {
        if !self.peeked.is_empty() {
            return Ok(None);
        }
        self.skip_ws()?;
        match self.peek_byte()? {
            Some(c @ (b',' | b';')) => {
                self.pos += 1;
                Ok(Some(c))
            }
            _ => Ok(None),
        }
    }

    fn lex(&mut self) -> Result<(Tok, Pos), CdlError> {
        self.skip_ws()?;
        let p = self.here();
        let Some(c) = self.peek_byte()? else {
            return Ok((Tok::Eof, p));
        };
        let tok = match c {
            b'{' | b'}' | b'(' | b')' | b',' | b';' | b':' | b'=' | b'*' => {
                self.pos += 1;
                Tok::Punct(c)
            }
            b'"' => {
                self.pos += 1;
                Tok::Str(self.string_body(p)?)
            }
            b'\'' => {
                self.pos += 1;
                self.char_const(p)?
            }
            b'0'..=b'9' | b'.' | b'-' | b'+' => self.number(p)?,
            b'/' => self.path(p)?,
            c if is_name_start(c) => self.name(p)?,
            _ => {
                let shown = self.invalid_char_text()?;
                return Err(self.err_at(p, format!("invalid character {shown}")));
            }
        };
        Ok((tok, p))
    }

    fn invalid_char_text(&mut self) -> Result<String, CdlError> {
        self.fill(4)?;
        let s = &self.buf[self.pos..self.end.min(self.pos + 4)];
        let txt = String::from_utf8_lossy(s);
        Ok(match txt.chars().next() {
            Some(ch) => format!("'{}'", ch.escape_default()),
            None => "at end of file".to_string(),
        })
    }

    /// One escape after a backslash (already consumed); returns the byte.
    fn escape(&mut self, p: Pos, in_string: bool) -> Result<u8, CdlError> {
        let Some(c) = self.peek_byte()? else {
            return Err(self.err_at(p, "unterminated escape at end of file"));
        };
        self.pos += 1;
        Ok(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'v' => 0x0b,
            b'0'..=b'9' => {
                // ncgen takes exactly three octal digits; in a string anything shorter is
                // "Bad octal constant", in a character constant the digit stands for itself
                let d1 = self.byte_at(0)?;
                let d2 = self.byte_at(1)?;
                match (c, d1, d2) {
                    (b'0'..=b'7', Some(x @ b'0'..=b'7'), Some(y @ b'0'..=b'7')) => {
                        self.pos += 2;
                        let v = u32::from(c - b'0') * 64
                            + u32::from(x - b'0') * 8
                            + u32::from(y - b'0');
                        (v & 0xff) as u8
                    }
                    _ if in_string => {
                        return Err(self.err_at(
                            p,
                            "bad octal constant: an octal escape needs three digits, e.g. \\000",
                        ));
                    }
                    _ => c,
                }
            }
            b'x' | b'X' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match self.peek_byte()? {
                        Some(d) if d.is_ascii_hexdigit() => {
                            v = v * 16 + hexval(d);
                            self.pos += 1;
                            n += 1;
                        }
                        _ => break,
                    }
                }
                if n == 0 {
                    b'x'
                } else {
                    v as u8
                }
            }
            b'\n' => {
                self.newline_at(self.pos - 1);
                b'\n'
            }
            other => other,
        })
    }

    fn string_body(&mut self, p: Pos) -> Result<Vec<u8>, CdlError> {
        let mut out = Vec::new();
        loop {
            let start = self.pos;
            let mut i = self.pos;
            while i < self.end {
                let b = self.buf[i];
                if b == b'"' || b == b'\\' || b == b'\n' {
                    break;
                }
                i += 1;
            }
            out.extend_from_slice(&self.buf[start..i]);
            self.pos = i;
            let Some(c) = self.peek_byte()? else {
                return Err(self.err_at(p, "unterminated string: end of file before closing '\"'"));
            };
            self.pos += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let b = self.escape(p, true)?;
                    out.push(b);
                }
                b'\n' => {
                    self.newline_at(self.pos - 1);
                    out.push(b'\n');
                }
                _ => out.push(c),
            }
            if out.len() > (1usize << 31) {
                return Err(self.err_at(p, "string constant longer than 2 GiB"));
            }
        }
    }

    fn char_const(&mut self, p: Pos) -> Result<Tok, CdlError> {
        let Some(c) = self.peek_byte()? else {
            return Err(self.err_at(p, "unterminated character constant"));
        };
        self.pos += 1;
        let v = match c {
            b'\\' => self.escape(p, false)?,
            b'\'' => return Err(self.err_at(p, "empty character constant ''")),
            b'\n' => return Err(self.err_at(p, "unterminated character constant")),
            other => other,
        };
        match self.peek_byte()? {
            Some(b'\'') => {
                self.pos += 1;
                Ok(Tok::Char(v))
            }
            _ => Err(self.err_at(
                p,
                "character constant must hold exactly one character and end with '",
            )),
        }
    }

    /// Scan a maximal run of bytes satisfying `f`, starting `skip` bytes ahead; returns its length.
    fn run_len(&mut self, skip: usize, f: impl Fn(u8) -> bool) -> Result<usize, CdlError> {
        let mut k = skip;
        loop {
            while self.pos + k < self.end {
                if !f(self.buf[self.pos + k]) {
                    return Ok(k);
                }
                k += 1;
            }
            if self.eof {
                return Ok(k);
            }
            if k > MAX_TOKEN {
                return Ok(k);
            }
            self.fill(k + 64)?;
            if self.pos + k >= self.end {
                return Ok(k);
            }
        }
    }

    fn name(&mut self, p: Pos) -> Result<Tok, CdlError> {
        let mut out: Vec<u8> = Vec::new();
        let mut first = true;
        while let Some(c) = self.peek_byte()? {
            if c == b'\\' {
                self.pos += 1;
                match self.peek_byte()? {
                    Some(e) if e != b'\n' => {
                        self.pos += 1;
                        out.push(e);
                    }
                    _ => return Err(self.err_at(p, "backslash at end of name")),
                }
            } else if (first && is_name_start(c)) || (!first && is_name_char(c)) {
                // fast copy of plain name bytes
                let n = self.run_len(0, |b| is_name_char(b) && b != b'\\')?;
                let n = n.max(1);
                out.extend_from_slice(&self.buf[self.pos..self.pos + n]);
                self.pos += n;
            } else {
                break;
            }
            first = false;
            if out.len() > MAX_TOKEN {
                return Err(self.err_at(p, "name longer than 64 KiB"));
            }
        }
        match String::from_utf8(out) {
            Ok(s) if s.is_ascii() => Ok(Tok::Name(s)),
            // ncgen stores names in Unicode NFC
            Ok(s) => Ok(Tok::Name(
                unicode_normalization::UnicodeNormalization::nfc(s.as_str()).collect(),
            )),
            Err(_) => Err(self.err_at(p, "name is not valid UTF-8")),
        }
    }

    /// A group path `/g/h/name` (rule `path`).
    fn path(&mut self, p: Pos) -> Result<Tok, CdlError> {
        let mut out = String::new();
        while self.peek_byte()? == Some(b'/') {
            self.pos += 1;
            out.push('/');
            match self.peek_byte()? {
                Some(c) if is_name_start(c) => match self.name(p)? {
                    Tok::Name(n) => out.push_str(&n),
                    _ => return Err(self.err_at(p, "malformed path")),
                },
                _ => return Err(self.err_at(p, "expected a name after '/' in a path")),
            }
        }
        Ok(Tok::Name(out))
    }

    /// Skip a UTF-8 byte order mark; reject UTF-16/32 ones as ncgen does.
    pub(crate) fn skip_bom(&mut self) -> Result<(), CdlError> {
        self.fill(4)?;
        let head = &self.buf[self.pos..self.end];
        if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.pos += 3;
            self.line_start += 3;
        } else if head.starts_with(&[0xFE, 0xFF]) || head.starts_with(&[0xFF, 0xFE]) {
            return Err(self.err_at(
                Pos { line: 1, col: 1 },
                "input file contains a BOM indicating a non-UTF8 encoding; convert it to UTF-8",
            ));
        }
        Ok(())
    }

    fn number(&mut self, p: Pos) -> Result<Tok, CdlError> {
        let c0 = self.buf[self.pos];
        // signs: only before a digit, '.', or the names Infinity / Infinityf
        let mut skip = 0;
        if c0 == b'-' || c0 == b'+' {
            skip = 1;
            match self.byte_at(1)? {
                Some(b'0'..=b'9') | Some(b'.') => {}
                Some(b'I') => {
                    self.fill(10)?;
                    let rest = &self.buf[self.pos + 1..self.end];
                    for (word, f) in [("Infinityf", true), ("Infinity", false)] {
                        if rest.starts_with(word.as_bytes())
                            && !rest.get(word.len()).is_some_and(|&b| is_name_char(b))
                        {
                            let neg = c0 == b'-';
                            self.pos += 1 + word.len();
                            let v = if neg {
                                f64::NEG_INFINITY
                            } else {
                                f64::INFINITY
                            };
                            return Ok(Tok::Num(if f {
                                Number::float(v)
                            } else {
                                Number::double(v)
                            }));
                        }
                    }
                    return Err(self.err_at(p, format!("unexpected '{}'", char::from(c0))));
                }
                _ => return Err(self.err_at(p, format!("unexpected '{}'", char::from(c0)))),
            }
        }
        // hex opaque constant
        if c0 == b'0' && matches!(self.byte_at(1)?, Some(b'x') | Some(b'X')) {
            let n = self.run_len(2, |b| b.is_ascii_hexdigit())?;
            if n <= 2 {
                return Err(self.err_at(p, "hex constant '0x' needs digits"));
            }
            // hex digits followed by an integer suffix make an integer constant
            let suf = self.run_len(n, |b| matches!(b, b's' | b'S' | b'l' | b'L' | b'u' | b'U'))?;
            if suf > n {
                let mut text = Vec::with_capacity(suf);
                text.extend_from_slice(&self.buf[self.pos..self.pos + suf]);
                let num = super::literal::classify_hex(&text).map_err(|m| self.err_at(p, m))?;
                self.pos += suf;
                self.check_token_end(p)?;
                return Ok(Tok::Num(num));
            }
            let digits = &self.buf[self.pos + 2..self.pos + n];
            let mut bytes = Vec::with_capacity(digits.len().div_ceil(2));
            for pair in digits.chunks(2) {
                let hi = hexval(pair[0]);
                let lo = pair.get(1).map_or(0, |&d| hexval(d));
                bytes.push((hi * 16 + lo) as u8);
            }
            self.pos += n;
            self.check_token_end(p)?;
            return Ok(Tok::Opaque(bytes));
        }
        // number body: digits, '.', exponent with sign, suffix letters
        let n = self.run_len(skip, |b| {
            b.is_ascii_alphanumeric() || b == b'.' || b == b'_'
        })?;
        let mut n = n;
        // an exponent sign: 1e-5, 1.5E+3
        loop {
            let last = self.buf[self.pos + n - 1];
            if (last == b'e' || last == b'E') && n > skip {
                if let Some(s @ (b'-' | b'+')) = self.byte_at(n)? {
                    let _ = s;
                    let m = self.run_len(n + 1, |b| b.is_ascii_alphanumeric() || b == b'.')?;
                    if m > n + 1 {
                        n = m;
                        continue;
                    }
                }
            }
            break;
        }
        if n > MAX_TOKEN {
            return Err(self.err_at(p, "numeric constant too long"));
        }
        let text = &self.buf[self.pos..self.pos + n];
        let num = match classify_number(text) {
            Ok(num) => num,
            Err(msg) => {
                let shown = String::from_utf8_lossy(text).into_owned();
                return Err(self.err_at(p, format!("{msg}: '{shown}'")));
            }
        };
        self.pos += n;
        Ok(Tok::Num(num))
    }

    fn check_token_end(&mut self, p: Pos) -> Result<(), CdlError> {
        match self.peek_byte()? {
            Some(b) if is_name_char(b) => Err(self.err_at(p, "malformed constant")),
            _ => Ok(()),
        }
    }
}

/// Exact powers of ten representable in f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

fn hexval(d: u8) -> u32 {
    match d {
        b'0'..=b'9' => u32::from(d - b'0'),
        b'a'..=b'f' => u32::from(d - b'a' + 10),
        b'A'..=b'F' => u32::from(d - b'A' + 10),
        _ => 0,
    }
}
