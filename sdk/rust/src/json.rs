//! A small JSON value type, parser and encoder: enough for a skill's arguments and result and
//! for the fetch reply's head, without a dependency.
//!
//! Skills that want typed structs can use `serde_json` instead (see the crate's README); the SDK
//! does not depend on it.
//!
//! ```
//! use skillbox::json::Value;
//!
//! let args = Value::parse(br#"{"name": "Ada", "count": 3}"#).unwrap();
//! assert_eq!(args.get("name").and_then(Value::as_str), Some("Ada"));
//! assert_eq!(args.get("count").and_then(Value::as_i64), Some(3));
//!
//! let result = Value::object([("greeting", Value::from("Hello, \"Ada\"!"))]);
//! assert_eq!(result.to_string(), r#"{"greeting":"Hello, \"Ada\"!"}"#);
//! ```

use std::fmt::{self, Write as _};
use std::str::FromStr;

/// A JSON value.
///
/// Objects keep their members in order, duplicates included; [`Value::get`] returns the last
/// member of a name, as Go's and serde's decoders do. Numbers keep their text, so that integers
/// beyond 2^53 survive a round trip.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, as written.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object's members, in order.
    Object(Vec<(String, Value)>),
}

/// A JSON number, holding its text. Build one with `Value::from(42)` or `Value::from(1.5)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Number(String); // always valid JSON number syntax

impl Number {
    /// The number as an `i64`, if it is an integer in range (`3`, not `3.0`).
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }

    /// The number as a `u64`, if it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The number as an `f64` (the nearest one, for integers beyond 2^53).
    pub fn as_f64(&self) -> f64 {
        // JSON number syntax is a subset of what f64's parser accepts.
        self.0.parse().unwrap_or(f64::NAN)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Value {
    /// Parses one JSON text. Invalid UTF-8 inside strings becomes U+FFFD, and so do unpaired
    /// surrogate escapes, as in Go's decoder.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] with the byte offset of the first problem; nesting deeper than 256
    /// arrays and objects is refused.
    pub fn parse(input: &[u8]) -> Result<Value, ParseError> {
        let mut p = Parser {
            b: input,
            i: 0,
            depth: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != input.len() {
            return Err(p.err("unexpected data after the value"));
        }
        Ok(v)
    }

    /// Builds an object from `(name, value)` pairs, in order.
    pub fn object<K, V, I>(members: I) -> Value
    where
        K: Into<String>,
        V: Into<Value>,
        I: IntoIterator<Item = (K, V)>,
    {
        Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The member `name` of an object (the last one, if repeated); `None` for other values.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as an `i64`, if this is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The number as a `u64`, if this is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The number as an `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(n.as_f64()),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// Compact JSON: `{"a":[1,"x"]}`. `to_string()` gives the encoded text.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Number(n) => f.write_str(&n.0),
            Value::String(s) => write_quoted(f, s),
            Value::Array(a) => {
                f.write_char('[')?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    fmt::Display::fmt(v, f)?;
                }
                f.write_char(']')
            }
            Value::Object(m) => {
                f.write_char('{')?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write_quoted(f, k)?;
                    f.write_char(':')?;
                    fmt::Display::fmt(v, f)?;
                }
                f.write_char('}')
            }
        }
    }
}

impl FromStr for Value {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Value, ParseError> {
        Value::parse(s.as_bytes())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

macro_rules! from_integer {
    ($($t:ty)*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number(n.to_string()))
            }
        }
    )*};
}
from_integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

/// A finite `f64` is a number; NaN and the infinities, which JSON cannot spell, are `null`.
impl From<f64> for Value {
    fn from(n: f64) -> Value {
        if !n.is_finite() {
            return Value::Null;
        }
        // Rust prints finite floats without exponent and never as "inf"/"NaN": valid JSON, but
        // "1" for 1.0, which JSON does not distinguish anyway.
        Value::Number(Number(format!("{}", n)))
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

/// Returns `s` as a JSON string literal, quotes included: `"say \"hi\"\n"`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    let _ = write_quoted(&mut out, s); // writing to a String cannot fail
    out
}

/// Writes `s` as a JSON string literal. `"` and `\` are escaped, and so are the control
/// characters U+0000 to U+001F, which JSON forbids raw (`\n`, `\t`, ... or `\u00XX`); everything
/// else, non-ASCII included, is written as is.
pub fn write_quoted<W: fmt::Write + ?Sized>(w: &mut W, s: &str) -> fmt::Result {
    w.write_char('"')?;
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // Only ASCII bytes are escaped, so i and start are always char boundaries.
        w.write_str(&s[start..i])?;
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            w.write_str("\\u00")?;
            w.write_char(HEX[(b >> 4) as usize] as char)?;
            w.write_char(HEX[(b & 0xf) as usize] as char)?;
        } else {
            w.write_str(esc)?;
        }
        start = i + 1;
    }
    w.write_str(&s[start..])?;
    w.write_char('"')
}

/// Why a text is not JSON, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The byte offset of the problem in the input.
    pub offset: usize,
    /// What is wrong there.
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

/// How deep arrays and objects may nest: the parser recurses, and a guest's stack is small.
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, message: &'static str) -> ParseError {
        ParseError {
            offset: self.i,
            message,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        self.ws();
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => self.nested(Parser::array),
            Some(b'{') => self.nested(Parser::object),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn literal(&mut self, word: &'static str, v: Value) -> Result<Value, ParseError> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("unexpected character"))
        }
    }

    fn nested(
        &mut self,
        f: fn(&mut Parser<'a>) -> Result<Value, ParseError>,
    ) -> Result<Value, ParseError> {
        if self.depth == MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        self.i += 1; // [
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        self.i += 1; // {
        let mut members = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a member name"));
            }
            let name = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.i += 1;
            members.push((name, self.value()?));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("expected a digit"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("expected a digit"));
            }
        }
        // The bytes matched the ASCII number grammar above.
        let text = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
        Ok(Value::Number(Number(text)))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.i += 1; // "
        let mut buf = Vec::new();
        loop {
            let start = self.i;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            buf.extend_from_slice(&self.b[start..self.i]);
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut buf)?;
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
        Ok(match String::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Decodes the escape after a backslash into buf.
    fn escape(&mut self, buf: &mut Vec<u8>) -> Result<(), ParseError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.i += 1;
                let hi = self.hex4()?;
                let c = if (0xD800..0xDC00).contains(&hi) && self.b[self.i..].starts_with(b"\\u") {
                    // A high surrogate: a low one must follow to make a character.
                    let save = self.i;
                    self.i += 2;
                    let lo = self.hex4()?;
                    if (0xDC00..0xE000).contains(&lo) {
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                    } else {
                        self.i = save; // not a pair: the second escape stands on its own
                        None
                    }
                } else {
                    char::from_u32(hi)
                };
                let mut tmp = [0u8; 4];
                buf.extend_from_slice(c.unwrap_or('\u{FFFD}').encode_utf8(&mut tmp).as_bytes());
                return Ok(());
            }
            _ => return Err(self.err("invalid escape")),
        };
        self.i += 1;
        buf.push(c as u8); // every simple escape is ASCII
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut n = 0;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.err("expected 4 hex digits")),
            };
            n = n * 16 + u32::from(d);
            self.i += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Value, ParseError> {
        Value::parse(s.as_bytes())
    }

    #[test]
    fn round_trips() {
        for (input, want) in [
            ("null", "null"),
            (" true ", "true"),
            ("false", "false"),
            ("0", "0"),
            ("-12.5e+3", "-12.5e+3"),
            ("18446744073709551615", "18446744073709551615"),
            (r#""a\"b\\c\/d\u00e9\ud83d\ude00""#, "\"a\\\"b\\\\c/dé😀\""),
            ("[1, [], {}, \"x\"]", "[1,[],{},\"x\"]"),
            (
                r#"{"a": {"b": [null]}, "c": 1}"#,
                r#"{"a":{"b":[null]},"c":1}"#,
            ),
        ] {
            let v = parse(input).unwrap_or_else(|e| panic!("{}: {}", input, e));
            assert_eq!(v.to_string(), want, "{}", input);
            assert_eq!(parse(&v.to_string()).unwrap(), v, "{}", input);
        }
    }

    #[test]
    fn rejects() {
        for (input, offset) in [
            ("", 0),
            ("nul", 0),
            ("[1,]", 3),
            ("{\"a\" 1}", 5),
            ("{1: 2}", 1),
            ("01", 1),
            ("1.", 2),
            ("-", 1),
            ("1e", 2),
            ("\"abc", 4),
            ("\"a\nb\"", 2),
            ("\"\\x\"", 2),
            ("\"\\u12\"", 5),
            ("[1] 2", 4),
            ("{\"a\":1,}", 7),
        ] {
            let e = parse(input).expect_err(input);
            assert_eq!(e.offset, offset, "{}: {}", input, e);
        }
    }

    #[test]
    fn depth_is_bounded() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep).unwrap_err().message, "nested too deeply");
        assert!(parse(&"[".repeat(100_000)).is_err());
    }

    #[test]
    fn bad_unicode_becomes_replacement() {
        assert_eq!(parse(r#""\ud800x""#).unwrap(), Value::from("\u{FFFD}x"));
        assert_eq!(parse(r#""\udc00""#).unwrap(), Value::from("\u{FFFD}"));
        assert_eq!(
            parse(r#""\ud800\u0041""#).unwrap(),
            Value::from("\u{FFFD}A")
        );
        assert_eq!(
            Value::parse(b"\"a\xffb\"").unwrap(),
            Value::from("a\u{FFFD}b")
        );
    }

    #[test]
    fn quotes() {
        assert_eq!(quote(""), r#""""#);
        assert_eq!(quote("plain é 😀"), "\"plain é 😀\"");
        assert_eq!(quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(quote("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(quote("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
        // Every escaped string parses back to itself.
        let all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        assert_eq!(parse(&quote(&all)).unwrap(), Value::String(all));
    }

    #[test]
    fn accessors() {
        let v = parse(r#"{"s":"x","n":-3,"f":1.5,"b":true,"a":[1],"z":null,"s":"last"}"#).unwrap();
        assert_eq!(v.get("s").and_then(Value::as_str), Some("last"));
        assert_eq!(v.get("n").and_then(Value::as_i64), Some(-3));
        assert_eq!(v.get("n").and_then(Value::as_u64), None);
        assert_eq!(v.get("f").and_then(Value::as_f64), Some(1.5));
        assert_eq!(v.get("f").and_then(Value::as_i64), None);
        assert_eq!(v.get("b").and_then(Value::as_bool), Some(true));
        assert_eq!(
            v.get("a").and_then(Value::as_array).map(<[Value]>::len),
            Some(1)
        );
        assert!(v.get("z").unwrap().is_null());
        assert!(v.get("missing").is_none());
        assert!(Value::from(1).get("s").is_none());
    }

    #[test]
    fn builds() {
        let v = Value::object([
            ("i", Value::from(-7i64)),
            ("u", Value::from(u64::MAX)),
            ("f", Value::from(0.25)),
            ("nan", Value::from(f64::NAN)),
            ("none", Value::from(None::<&str>)),
            ("list", Value::from(vec!["a", "b"])),
        ]);
        assert_eq!(
            v.to_string(),
            r#"{"i":-7,"u":18446744073709551615,"f":0.25,"nan":null,"none":null,"list":["a","b"]}"#
        );
    }
}
