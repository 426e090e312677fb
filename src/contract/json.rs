//! Strict RFC 8259 parsing of one line into its top-level members, every one kept.
//!
//! `serde_json::Value` silently keeps the last of two equal keys; [`parse_object`]
//! instead returns every `(key, raw value)` pair in order, borrowing from the line, so the
//! classifier can see prohibited, unknown and duplicate keys. Values stay raw
//! ([`RawValue`]) so a 400-digit number is still JSON (it becomes `bad_type` later, not
//! `malformed_json`). Nesting 128 levels deep or more is not JSON.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Nesting at this depth or deeper is refused as not JSON (the top level is depth 1).
pub const MAX_DEPTH: usize = 128;

/// A line's top-level members, in order, duplicates included.
pub type Members<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// What a line is, as JSON.
#[derive(Debug)]
pub enum Parsed<'a> {
    Object(Members<'a>),
    NotAnObject,
    Malformed,
}

/// Parses `line` as one JSON text.
pub fn parse_object(line: &str) -> Parsed<'_> {
    let starts_object = line
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{');
    let mut de = serde_json::Deserializer::from_str(line);
    if !starts_object {
        let valid = IgnoredAny::deserialize(&mut de).is_ok()
            && de.end().is_ok()
            && max_depth(line.as_bytes()) < MAX_DEPTH;
        return if valid {
            Parsed::NotAnObject
        } else {
            Parsed::Malformed
        };
    }
    let members = match de.deserialize_map(MembersVisitor) {
        Ok(members) if de.end().is_ok() => members,
        _ => return Parsed::Malformed,
    };
    for (_, raw) in &members {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'[' | b'{') if 1 + max_depth(text.as_bytes()) >= MAX_DEPTH => {
                return Parsed::Malformed;
            }
            Some(b'"') if text.contains("\\u") && string_value(raw).is_none() => {
                return Parsed::Malformed;
            }
            _ => {}
        }
    }
    Parsed::Object(members)
}

use serde::Deserialize as _;

/// The unescaped text of a raw JSON string, borrowed when it has no escapes.
pub fn string_value(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// The deepest nesting of arrays and objects in a JSON text (0 for a scalar).
fn max_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value: &'de RawValue = map.next_value()?;
            members.push((key, value));
        }
        Ok(members)
    }
}

/// Deserializes an object key, borrowing it when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn escaped_keys_are_unescaped() {
        let Parsed::Object(members) = parse_object(r#"{"em\u0061il":1}"#) else {
            panic!("an object");
        };
        assert_eq!(members[0].0, "email");
    }

    #[test]
    fn rfc_8259_is_strict() {
        for line in [
            r#"{"a":1,}"#,
            r#"{"a":NaN}"#,
            r#"{"a":01}"#,
            r#"{'a':1}"#,
            r#"{"a":1} x"#,
            r#"{"a":"tab	inside"}"#,
            r#"{"a":"\ud800"}"#,
            "[1,]",
            "",
            "{",
        ] {
            assert_eq!(kind(line), "malformed", "{line}");
        }
        assert_eq!(
            kind(r#"{"a":1e400, "b":123456789012345678901234567890}"#),
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
        assert_eq!(kind(&arrays(1000)), "malformed");
    }

    #[test]
    fn brackets_inside_strings_do_not_count_as_nesting() {
        let line = format!(r#"{{"a":["{}"]}}"#, "[".repeat(500));
        assert_eq!(kind(&line), "object");
    }
}
