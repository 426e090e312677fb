//! PURE. `unknown_fields = "add"` (CONTRACT.md §1.1): which fields an input adds as new
//! nullable columns, and their types, found in one read before the lines are classified.
//!
//! A field's type is that of its first non-null value (a string is a timestamp when
//! every string value is an RFC 3339 instant with an offset); once the schema declares
//! it, [`classify`](super::classify()) makes any line whose value disagrees `bad_type`.
//! A field whose first value is an object or an array, or that is always null, or whose
//! name is not a plain column name, is not added: it stays unknown and refuses the file.

use super::json::{self, Kind, Parsed};
use super::schema::{FieldType, Schema};
use super::timestamp;

/// Distinct unknown names followed, at most: a hostile file cannot grow the list.
const MAX_NAMES: usize = 256;

/// What one unknown field's values were, so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    /// Only nulls.
    Nothing,
    /// First a value of this type; for a string, whether every string was a timestamp.
    Typed(FieldType),
    /// First an object or an array: no column holds it.
    Unaddable,
}

/// The unknown fields of an input's lines, in order of first appearance.
#[derive(Debug, Default)]
pub struct Discovery {
    seen: Vec<(String, Seen)>,
}

impl Discovery {
    /// Takes one line's unknown members (lines that are not JSON objects add nothing).
    pub fn feed(&mut self, line: &[u8], schema: &Schema) {
        let Ok(text) = std::str::from_utf8(line) else {
            return;
        };
        let Parsed::Object(members) = json::parse_object(text) else {
            return;
        };
        for (name, raw) in &members {
            if schema.index_of(name).is_some() || schema.prohibited.iter().any(|p| p == name) {
                continue;
            }
            let at = match self.seen.iter().position(|(n, _)| n == name) {
                Some(at) => at,
                None if self.seen.len() < MAX_NAMES => {
                    self.seen.push((name.to_string(), Seen::Nothing));
                    self.seen.len() - 1
                }
                None => continue,
            };
            let seen = &mut self.seen[at].1;
            *seen = match (*seen, raw.kind()) {
                (seen, Kind::Null) => seen,
                (Seen::Nothing, Kind::String { .. }) => Seen::Typed(string_type(raw)),
                (Seen::Nothing, Kind::Number { integer: true }) => Seen::Typed(FieldType::Int),
                (Seen::Nothing, Kind::Number { integer: false }) => Seen::Typed(FieldType::Float),
                (Seen::Nothing, Kind::Bool) => Seen::Typed(FieldType::Bool),
                (Seen::Nothing, _) => Seen::Unaddable,
                // A string that is not an instant makes a timestamp column a string one.
                (Seen::Typed(FieldType::Timestamp), Kind::String { .. })
                    if string_type(raw) == FieldType::String =>
                {
                    Seen::Typed(FieldType::String)
                }
                (seen, _) => seen,
            };
        }
    }

    /// The columns the input adds, in order of first appearance: each typed field whose
    /// name can be a column of `schema`'s lake.
    pub fn columns(&self, schema: &Schema) -> Vec<(String, FieldType)> {
        self.seen
            .iter()
            .filter_map(|(name, seen)| match seen {
                Seen::Typed(ty) if addable_name(name, schema) => Some((name.clone(), *ty)),
                _ => None,
            })
            .collect()
    }
}

/// A timestamp when the string is an RFC 3339 instant with an offset, else a string.
fn string_type(raw: &json::Raw<'_>) -> FieldType {
    match json::string_value(raw).map(|s| timestamp::parse(&s).is_ok()) {
        Some(true) => FieldType::Timestamp,
        _ => FieldType::String,
    }
}

/// A name every reader takes as a column as it is (`[A-Za-z_][A-Za-z0-9_]*`, at most 128
/// bytes) that no field, prohibited field or the partition column has in any case:
/// Spark and Delta match column names case-insensitively.
pub fn addable_name(name: &str, schema: &Schema) -> bool {
    let plain = name.len() <= 128
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let taken = |other: &str| other.eq_ignore_ascii_case(name);
    plain
        && !taken("event_date")
        && !schema.fields.iter().any(|f| taken(&f.name))
        && !schema.prohibited.iter().any(|p| taken(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(lines: &[&str]) -> Vec<(String, FieldType)> {
        let schema = crate::config::fixtures::orders().schema;
        let mut discovery = Discovery::default();
        for line in lines {
            discovery.feed(line.as_bytes(), &schema);
        }
        discovery.columns(&schema)
    }

    /// §1.1: one type per new field, from its first non-null value; a string is a
    /// timestamp only when every string is one; objects, nulls and odd names add nothing.
    #[test]
    fn each_new_field_gets_its_first_values_type() {
        let got = columns(&[
            r#"{"order_id":1,"eta_minutes":null,"n":{"a":1},"Status":"x","late":true}"#,
            r#"{"eta_minutes":12,"ratio":0.5,"seen_at":"2024-03-01T10:00:00Z","label":"2024-03-01T10:00:00Z"}"#,
            r#"{"eta_minutes":"soon","label":"late","a-b":1,"only_null":null,"email":"x"}"#,
            "not json",
        ]);
        let want = [
            ("eta_minutes", FieldType::Int),
            ("late", FieldType::Bool),
            ("ratio", FieldType::Float),
            ("seen_at", FieldType::Timestamp),
            ("label", FieldType::String),
        ];
        let want: Vec<(String, FieldType)> =
            want.iter().map(|(n, t)| ((*n).to_owned(), *t)).collect();
        assert_eq!(got, want);
    }
}
