//! A small EDN reader and writer, enough for Jepsen histories.
//!
//! Fencelab carries its own rather than a crate from crates.io: the EDN crates we looked at
//! (`edn-format`, `clojure-reader`, the deprecated `edn-rs`) read nested forms recursively with no
//! limit on depth, so a file of ten thousand `[` overflows the stack and aborts the process, and
//! an importer must survive any input. This one reads maps, vectors, lists, sets, keywords,
//! strings, characters, integers (of any size: those beyond 64 bits are read as floats, which the
//! importer then refuses with a clear message where it wants a generation), floats, `nil`,
//! booleans, symbols, comments, `#_` discards and tagged values (`#inst "..."`, or a record such
//! as `#jepsen.history.Op{...}`, read as the value after the tag), to a depth of
//! [`MAX_DEPTH`]. It reads into `serde_json::Value`, so Jepsen's EDN and JSON take one path
//! after this point: keywords and symbols become strings (`:invoke` is `"invoke"`), sets and
//! lists become arrays.

use crate::error::{ImportError, Loc};
use serde_json::{Map, Number, Value};

/// The deepest nesting read.
pub const MAX_DEPTH: usize = 64;

/// One top-level form and the line it starts on.
pub(crate) struct Form {
    pub line: usize,
    pub value: Value,
}

/// Reads every top-level form of `text`.
pub(crate) fn read_all(text: &str) -> Result<Vec<Form>, ImportError> {
    let mut reader = Reader { src: text, text: text.as_bytes(), pos: 0, line: 1 };
    let mut forms = Vec::new();
    loop {
        reader.skip()?;
        if reader.pos >= reader.text.len() {
            return Ok(forms);
        }
        let line = reader.line;
        if let Some(value) = reader.form(0)? {
            forms.push(Form { line, value });
        }
    }
}

/// Whether the first form of `text` (after whitespace and comments) is a vector or a list.
pub(crate) fn starts_with_sequence(text: &str) -> bool {
    let mut reader = Reader { src: text, text: text.as_bytes(), pos: 0, line: 1 };
    reader.skip().is_ok() && matches!(reader.peek(), Some(b'[' | b'('))
}

/// Reads the elements of one top-level vector or list, each with its line: the shape of a
/// Jepsen `history.edn`.
pub(crate) fn read_elements(text: &str) -> Result<Vec<Form>, ImportError> {
    let mut reader = Reader { src: text, text: text.as_bytes(), pos: 0, line: 1 };
    reader.skip()?;
    let close = match reader.peek() {
        Some(b'[') => b']',
        Some(b'(') => b')',
        _ => return Err(reader.error("expected a vector of operations")),
    };
    reader.pos += 1;
    let mut forms = Vec::new();
    loop {
        reader.skip()?;
        match reader.peek() {
            None => return Err(reader.error("the vector of operations is not closed")),
            Some(c) if c == close => {
                reader.pos += 1;
                break;
            }
            Some(_) => {
                let line = reader.line;
                if let Some(value) = reader.form(1)? {
                    forms.push(Form { line, value });
                }
            }
        }
    }
    reader.skip()?;
    if reader.pos < reader.text.len() {
        return Err(reader.error("unexpected text after the vector of operations"));
    }
    Ok(forms)
}

struct Reader<'a> {
    src: &'a str,
    text: &'a [u8],
    pos: usize,
    line: usize,
}

fn delimiter(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(c, b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';')
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn error(&self, problem: impl Into<String>) -> ImportError {
        Loc::line(self.line).whole(format!("EDN: {}", problem.into()))
    }

    /// Skips whitespace (commas included) and comments.
    fn skip(&mut self) -> Result<(), ImportError> {
        while let Some(c) = self.peek() {
            match c {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b';' => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                c if c.is_ascii_whitespace() || c == b',' => self.pos += 1,
                _ => break,
            }
        }
        Ok(())
    }

    /// The token up to the next delimiter.
    fn token(&mut self) -> &str {
        let start = self.pos;
        while self.peek().is_some_and(|c| !delimiter(c)) {
            self.pos += 1;
        }
        // Tokens end at ASCII delimiters, so they are whole UTF-8 sequences.
        self.src.get(start..self.pos).unwrap_or("")
    }

    /// Reads one form; `None` for a form that reads as nothing (`#_ x`).
    fn form(&mut self, depth: usize) -> Result<Option<Value>, ImportError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.skip()?;
        let Some(c) = self.peek() else { return Err(self.error("unexpected end of input")) };
        let value = match c {
            b'{' => {
                self.pos += 1;
                let items = self.sequence(b'}', depth)?;
                if items.len() % 2 != 0 {
                    return Err(self.error("a map needs an even number of forms"));
                }
                let mut map = Map::new();
                let mut items = items.into_iter();
                while let (Some(k), Some(v)) = (items.next(), items.next()) {
                    let key = match k {
                        Value::String(s) => s,
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        other => {
                            return Err(self.error(format!(
                            "a map key must be a keyword, string, symbol or number, not {other}"
                        )))
                        }
                    };
                    if map.insert(key.clone(), v).is_some() {
                        return Err(self.error(format!("the key :{key} appears twice in one map")));
                    }
                }
                Value::Object(map)
            }
            b'[' | b'(' => {
                self.pos += 1;
                Value::Array(self.sequence(if c == b'[' { b']' } else { b')' }, depth)?)
            }
            b')' | b']' | b'}' => {
                return Err(self.error(format!("unexpected '{}'", c as char)));
            }
            b'"' => Value::String(self.string()?),
            b'#' => {
                self.pos += 1;
                match self.peek() {
                    Some(b'{') => {
                        self.pos += 1;
                        Value::Array(self.sequence(b'}', depth)?)
                    }
                    Some(b'_') => {
                        self.pos += 1;
                        self.form(depth + 1)?;
                        return Ok(None);
                    }
                    Some(c) if c.is_ascii_alphabetic() => {
                        // A tagged value: the tag is dropped, the value kept.
                        self.token();
                        match self.form(depth + 1)? {
                            Some(v) => v,
                            None => return Err(self.error("a tag without a value")),
                        }
                    }
                    _ => return Err(self.error("unsupported dispatch after '#'")),
                }
            }
            b'\\' => {
                self.pos += 1;
                let Some(first) = self.src.get(self.pos..).and_then(|rest| rest.chars().next())
                else {
                    return Err(self.error("a backslash at the end of input"));
                };
                let name = if first.is_ascii() && !delimiter(first as u8) {
                    self.token().to_string()
                } else {
                    self.pos += first.len_utf8();
                    first.to_string()
                };
                let text = match name.as_str() {
                    "newline" => "\n".to_string(),
                    "space" => " ".to_string(),
                    "tab" => "\t".to_string(),
                    "return" => "\r".to_string(),
                    one if one.chars().count() == 1 => one.to_string(),
                    other => return Err(self.error(format!("unknown character \\{other}"))),
                };
                Value::String(text)
            }
            b':' => {
                self.pos += 1;
                let name = self.token().trim_start_matches(':').to_string();
                if name.is_empty() {
                    return Err(self.error("an empty keyword"));
                }
                Value::String(name)
            }
            _ => {
                let token = self.token().to_string();
                if token.is_empty() {
                    // Not ASCII and not a delimiter: a symbol in another script.
                    let ch = self.src.get(self.pos..).and_then(|r| r.chars().next()).unwrap_or('?');
                    return Err(self.error(format!("unexpected character {ch:?}")));
                }
                self.atom(&token)?
            }
        };
        Ok(Some(value))
    }

    /// The forms up to `close`.
    fn sequence(&mut self, close: u8, depth: usize) -> Result<Vec<Value>, ImportError> {
        let mut items = Vec::new();
        let opened = self.line;
        let open = match close {
            b']' => '[',
            b')' => '(',
            _ => '{',
        };
        loop {
            self.skip()?;
            match self.peek() {
                None => {
                    return Err(self.error(format!(
                        "the input ends before the '{open}' opened on line {opened} is closed (is the file cut off?)"
                    )))
                }
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(_) => {
                    if let Some(v) = self.form(depth + 1)? {
                        items.push(v);
                    }
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, ImportError> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else { return Err(self.error("a string is never closed")) };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.error("a string is never closed"));
                    };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'u' => {
                            let hex = self
                                .text
                                .get(self.pos..self.pos + 4)
                                .and_then(|h| std::str::from_utf8(h).ok());
                            let ch = hex
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32);
                            let Some(ch) = ch else {
                                return Err(self.error("a bad \\u escape in a string"));
                            };
                            self.pos += 4;
                            let mut buf = [0; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        other => {
                            return Err(self
                                .error(format!("unknown escape \\{} in a string", other as char)))
                        }
                    }
                }
                b'\n' => {
                    self.line += 1;
                    out.push(c);
                }
                _ => out.push(c),
            }
        }
        // The input is UTF-8 and escapes add whole characters, so this holds.
        String::from_utf8(out).map_err(|_| self.error("a string that is not UTF-8"))
    }

    /// A number, `nil`, a boolean or a symbol.
    fn atom(&self, token: &str) -> Result<Value, ImportError> {
        match token {
            "nil" => return Ok(Value::Null),
            "true" => return Ok(Value::Bool(true)),
            "false" => return Ok(Value::Bool(false)),
            _ => {}
        }
        let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
        if !unsigned.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(Value::String(token.to_string()));
        }
        let integer = token.strip_suffix('N').unwrap_or(token);
        if integer.bytes().skip(1).all(|b| b.is_ascii_digit()) {
            if let Ok(n) = integer.parse::<i64>() {
                return Ok(Value::Number(n.into()));
            }
            if let Ok(n) = integer.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
        }
        let float = token.strip_suffix('M').unwrap_or(integer);
        match float.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(self.error(format!("{token} is not a number this reader understands"))),
        }
    }
}

/// Whether `name` can be written as a keyword.
fn keyword(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"*+!-_?<>=/.".contains(&b))
}

/// Writes `value` as EDN: object keys as keywords, strings as strings, except where `as_keyword`
/// says a string is a keyword.
pub(crate) fn write(out: &mut String, value: &Value, as_keyword: &dyn Fn(&str, &str) -> bool) {
    write_in(out, value, "", as_keyword);
}

fn write_in(out: &mut String, value: &Value, key: &str, as_keyword: &dyn Fn(&str, &str) -> bool) {
    match value {
        Value::Null => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) if keyword(s) && as_keyword(key, s) => {
            out.push(':');
            out.push_str(s);
        }
        // JSON's string syntax is EDN's, escapes included.
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_in(out, item, "", as_keyword);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if keyword(k) {
                    out.push(':');
                    out.push_str(k);
                } else {
                    out.push_str(&Value::String(k.clone()).to_string());
                }
                out.push(' ');
                write_in(out, v, k, as_keyword);
            }
            out.push('}');
        }
    }
}
