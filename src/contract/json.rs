//! Strict RFC 8259 parsing of one line into its top-level members, every one kept.
//!
//! `serde_json::Value` silently keeps the last of two equal keys; [`parse_object`]
//! instead returns every `(key, raw value)` pair in order, borrowing from the line, so the
//! classifier can see prohibited, unknown and duplicate keys. Values stay raw ([`Raw`]) so
//! a 400-digit number is still JSON (it becomes `bad_type` later, not `malformed_json`).
//! Nesting 128 levels deep or more is not JSON; neither is a lone surrogate escape.
//!
//! A hand-written scanner rather than serde: it is the hot path (one call per line) and
//! runs at a fraction of serde's instructions. Its verdicts are tested against
//! serde_json's on generated inputs.

use std::borrow::Cow;

use smallvec::SmallVec;

/// Nesting at this depth or deeper is refused as not JSON (the top level is depth 1).
pub const MAX_DEPTH: usize = 128;

/// The text of one JSON value, as it appears in the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw<'a> {
    text: &'a str,
    kind: Kind,
}

/// What kind of JSON value a [`Raw`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string; `escaped` when it holds a backslash escape.
    String {
        escaped: bool,
    },
    /// A number; `integer` when it has no fraction and no exponent.
    Number {
        integer: bool,
    },
    Null,
    Bool,
    Array,
    Object,
}

impl<'a> Raw<'a> {
    /// The value's JSON text.
    pub fn get(&self) -> &'a str {
        self.text
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }
}

/// A line's top-level members, in order, duplicates included.
pub type Members<'a> = SmallVec<[(Cow<'a, str>, Raw<'a>); 16]>;

/// What a line is, as JSON.
// Members live inline (no heap allocation per line); the enum is returned once per line
// and never stored, so its size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Parsed<'a> {
    Object(Members<'a>),
    NotAnObject,
    Malformed,
}

/// Parses `line` as one JSON text.
pub fn parse_object(line: &str) -> Parsed<'_> {
    let mut scanner = Scanner {
        text: line,
        bytes: line.as_bytes(),
        pos: 0,
    };
    scanner.skip_ws();
    if scanner.peek() != Some(b'{') {
        let valid = scanner.value(1).is_some() && scanner.at_end();
        return if valid {
            Parsed::NotAnObject
        } else {
            Parsed::Malformed
        };
    }
    match scanner.members() {
        Some(members) if scanner.at_end() => Parsed::Object(members),
        _ => Parsed::Malformed,
    }
}

/// The unescaped text of a raw JSON string, borrowed when it has no escapes.
pub fn string_value<'a>(raw: &Raw<'a>) -> Option<Cow<'a, str>> {
    let Kind::String { escaped } = raw.kind else {
        return None;
    };
    let inner = &raw.text[1..raw.text.len() - 1];
    if !escaped {
        return Some(Cow::Borrowed(inner));
    }
    unescape(inner).map(Cow::Owned)
}

/// Decodes the escapes of a string body the scanner has already validated.
fn unescape(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let high = hex4(&mut chars)?;
                if (0xD800..0xDC00).contains(&high) {
                    let (Some('\\'), Some('u')) = (chars.next(), chars.next()) else {
                        return None;
                    };
                    let low = hex4(&mut chars)?;
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low.checked_sub(0xDC00)?))?
                } else {
                    char::from_u32(high)?
                }
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    (0..4).try_fold(0u32, |acc, _| Some(acc * 16 + chars.next()?.to_digit(16)?))
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos == self.bytes.len()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        (self.peek() == Some(byte)).then(|| self.pos += 1)
    }

    /// The top-level object's members (the cursor is on `{`).
    fn members(&mut self) -> Option<Members<'a>> {
        self.pos += 1;
        let mut members = Members::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Some(members);
        }
        loop {
            self.skip_ws();
            let key = self.string()?;
            let key = string_value(&key)?;
            self.eat(b':')?;
            self.skip_ws();
            let value = self.value(2)?;
            members.push((key, value));
            self.skip_ws();
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(members);
                }
                _ => return None,
            }
        }
    }

    /// One value at nesting `depth` (the cursor is on its first byte).
    fn value(&mut self, depth: usize) -> Option<Raw<'a>> {
        let start = self.pos;
        let kind = match self.peek()? {
            b'"' => return self.string(),
            b'{' | b'[' => {
                self.container(depth)?;
                if self.bytes[start] == b'{' {
                    Kind::Object
                } else {
                    Kind::Array
                }
            }
            b't' => self.literal("true", Kind::Bool)?,
            b'f' => self.literal("false", Kind::Bool)?,
            b'n' => self.literal("null", Kind::Null)?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        };
        Some(Raw {
            text: &self.text[start..self.pos],
            kind,
        })
    }

    fn literal(&mut self, word: &str, kind: Kind) -> Option<Kind> {
        let end = self.pos + word.len();
        (self.bytes.get(self.pos..end)? == word.as_bytes()).then(|| {
            self.pos = end;
            kind
        })
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Option<Kind> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.require_digits()?;
            integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.require_digits()?;
            integer = false;
        }
        Some(Kind::Number { integer })
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn require_digits(&mut self) -> Option<()> {
        let start = self.pos;
        self.digits();
        (self.pos > start).then_some(())
    }

    /// A string (the cursor is on `"`): no raw control characters, valid escapes, no
    /// lone surrogates.
    fn string(&mut self) -> Option<Raw<'a>> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return None;
        }
        self.pos += 1;
        let mut escaped = false;
        loop {
            let offset = memchr::memchr2(b'"', b'\\', &self.bytes[self.pos..]);
            let end = offset.map_or(self.bytes.len(), |o| self.pos + o);
            if self.bytes[self.pos..end].iter().any(|&b| b < 0x20) {
                return None;
            }
            self.pos = end;
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(Raw {
                        text: &self.text[start..self.pos],
                        kind: Kind::String { escaped },
                    });
                }
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// One escape (the cursor is on `\`).
    fn escape(&mut self) -> Option<()> {
        self.pos += 1;
        match self.peek()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.pos += 1;
                Some(())
            }
            b'u' => {
                let unit = self.hex_unit()?;
                if (0xDC00..0xE000).contains(&unit) {
                    return None;
                }
                if (0xD800..0xDC00).contains(&unit) {
                    if self.bytes.get(self.pos..self.pos + 2)? != b"\\u" {
                        return None;
                    }
                    self.pos += 1;
                    let low = self.hex_unit()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    /// `uXXXX` (the cursor is on `u`).
    fn hex_unit(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.pos + 1..self.pos + 5)?;
        let unit = digits
            .iter()
            .try_fold(0u32, |acc, &b| Some(acc * 16 + (b as char).to_digit(16)?))?;
        self.pos += 5;
        Some(unit)
    }

    /// An array or object at nesting `depth`, validated iteratively (the cursor is on
    /// its opening bracket). Deeper than [`MAX_DEPTH`] is not JSON.
    fn container(&mut self, depth: usize) -> Option<()> {
        let mut open: SmallVec<[u8; 16]> = SmallVec::new();
        loop {
            // At the start of a value.
            match self.peek()? {
                bracket @ (b'{' | b'[') => {
                    if depth + open.len() >= MAX_DEPTH {
                        return None;
                    }
                    open.push(bracket);
                    self.pos += 1;
                    self.skip_ws();
                    let close = if bracket == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        open.pop();
                    } else {
                        if bracket == b'{' {
                            self.object_key()?;
                        }
                        self.skip_ws();
                        continue;
                    }
                }
                _ => {
                    self.value(depth + open.len())?;
                }
            }
            // After a value: close containers or move to the next element.
            loop {
                let Some(&top) = open.last() else {
                    return Some(());
                };
                self.skip_ws();
                match (top, self.peek()?) {
                    (_, b',') => {
                        self.pos += 1;
                        if top == b'{' {
                            self.skip_ws();
                            self.object_key()?;
                        }
                        self.skip_ws();
                        break;
                    }
                    (b'{', b'}') | (b'[', b']') => {
                        self.pos += 1;
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// `"key" :` inside a nested object.
    fn object_key(&mut self) -> Option<()> {
        self.string()?;
        self.eat(b':')?;
        self.skip_ws();
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kind(line: &str) -> &'static str {
        match parse_object(line) {
            Parsed::Object(_) => "object",
            Parsed::NotAnObject => "not_an_object",
            Parsed::Malformed => "malformed",
        }
    }

    #[test]
    fn keeps_every_member_including_duplicates() {
        let Parsed::Object(members) = parse_object(r#"{"a":1,"b":"x","a":[2]}"#) else {
            panic!("an object");
        };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["a", "b", "a"]);
        assert_eq!(members[2].1.get(), "[2]");
        assert_eq!(members[0].1.kind(), Kind::Number { integer: true });
    }

    #[test]
    fn escaped_keys_and_strings_are_unescaped() {
        let Parsed::Object(members) = parse_object(r#"{"em\u0061il":"a\"b\\\/\n\ud83d\ude00"}"#)
        else {
            panic!("an object");
        };
        assert_eq!(members[0].0, "email");
        assert_eq!(string_value(&members[0].1).unwrap(), "a\"b\\/\n😀");
    }

    #[test]
    fn rfc_8259_is_strict() {
        for line in [
            r#"{"a":1,}"#,
            r#"{"a":NaN}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":+1}"#,
            r#"{'a':1}"#,
            r#"{"a":1} x"#,
            "{\"a\":\"tab\tinside\"}",
            "{\"a\":\"nul\u{0}inside\"}",
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\udc00"}"#,
            r#"{"a":"\ud800\u0041"}"#,
            r#"{"a":"\x41"}"#,
            r#"{"a":tru}"#,
            r#"{"a" 1}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":{"b"}}"#,
            r#"{"a":{"b":1,}}"#,
            "[1,]",
            "",
            "{",
            "\u{feff}{}",
        ] {
            assert_eq!(kind(line), "malformed", "{line:?}");
        }
        assert_eq!(
            kind(r#"{"a":1e400, "b":123456789012345678901234567890}"#),
            "object"
        );
        assert_eq!(
            kind(r#" { "a" : [ 1 , { "b" : [ ] } , "x" ] , "c" : { } } "#),
            "object"
        );
        assert_eq!(kind("[1,2]"), "not_an_object");
        assert_eq!(kind("1e400"), "not_an_object");
        assert_eq!(kind(r#""text""#), "not_an_object");
        assert_eq!(kind("null"), "not_an_object");
    }

    #[test]
    fn nesting_of_128_is_not_json_but_127_is() {
        let nested = |depth: usize| {
            format!(
                r#"{{"a":{}1{}}}"#,
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            )
        };
        assert_eq!(kind(&nested(127)), "object");
        assert_eq!(kind(&nested(128)), "malformed");
        let arrays = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(kind(&arrays(127)), "not_an_object");
        assert_eq!(kind(&arrays(128)), "malformed");
        assert_eq!(kind(&arrays(100_000)), "malformed");
    }

    #[test]
    fn brackets_inside_strings_do_not_count_as_nesting() {
        let line = format!(r#"{{"a":["{}"]}}"#, "[".repeat(500));
        assert_eq!(kind(&line), "object");
    }

    /// serde_json's verdict (its `Value` unescapes strings, so lone surrogates fail too).
    fn serde_kind(line: &str) -> &'static str {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(_)) => "object",
            Ok(_) => "not_an_object",
            Err(e) if e.to_string().contains("number out of range") => "skip",
            Err(_) => "malformed",
        }
    }

    fn json_like() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            Just("1".to_owned()),
            Just("-0.5e+3".to_owned()),
            Just("01".to_owned()),
            Just("1.".to_owned()),
            Just("true".to_owned()),
            Just("nul".to_owned()),
            Just(r#""s""#.to_owned()),
            Just(r#""\u00e9\n""#.to_owned()),
            Just(r#""\ud83d\ude00""#.to_owned()),
            Just(r#""\ud83d""#.to_owned()),
            Just("\"a\tb\"".to_owned()),
            Just(r#""\q""#.to_owned()),
        ];
        let leaf = prop::collection::vec(
            (atom, prop_oneof![Just(","), Just(":"), Just(" "), Just("")]),
            0..6,
        )
        .prop_map(|parts| {
            parts
                .into_iter()
                .map(|(a, s)| format!("{a}{s}"))
                .collect::<String>()
        });
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop::collection::vec(
                (
                    inner,
                    prop_oneof![Just("[{}]"), Just("{\"k\":}"), Just("[]"), Just("{}")],
                ),
                0..4,
            )
            .prop_map(|parts| {
                parts
                    .into_iter()
                    .map(|(body, wrap)| match wrap {
                        "[{}]" => format!("[{body}]"),
                        "{\"k\":}" => format!("{{\"k\":{body}}}"),
                        "[]" => format!("[{body},{body}]"),
                        _ => format!("{{\"k\":{body},\"j\":[{body}]}}"),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn verdicts_match_serde_json(body in json_like(), wrap in 0..3u8) {
            let line = match wrap {
                0 => format!("{{\"x\":{body}}}"),
                1 => format!("[{body}]"),
                _ => body,
            };
            let theirs = serde_kind(&line);
            if theirs != "skip" {
                prop_assert_eq!(kind(&line), theirs, "{}", line);
            }
        }

        #[test]
        fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(text) = std::str::from_utf8(&bytes) {
                let _ = parse_object(text);
            }
        }
    }
}
