//! One line → one outcome, exactly CONTRACT.md §1: checks in the table's order, each
//! check over all fields (declared order) before the next check starts.
//!
//! [`classify`] is the whole of it; [`Outcome`] is what it returns: blank, an accepted
//! [`Record`] of typed [`Value`]s in declared order, or a rejected / breaching line with
//! its [`LineReason`], the field it concerns and the event id where that parsed.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::LineReason;
use super::json::{self, Kind, Parsed, Raw};
use super::rules::Rule;
use super::schema::{FieldType, Schema, UnknownFields};
use super::timestamp::{self, Instant, TimestampError};

/// One typed field value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Null,
    Int(i64),
    /// Inline (no allocation) up to 24 bytes.
    Str(compact_str::CompactString),
    Ts(Instant),
    /// An f64 by its bits, so values stay `Eq` and `Hash` (JSON has no NaN).
    Float(u64),
    Bool(bool),
}

impl Value {
    /// A float value.
    pub fn float(x: f64) -> Value {
        Value::Float(x.to_bits())
    }

    /// The value as text for reports and the console: a key, an event id.
    pub fn display(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Int(n) => n.to_string(),
            Value::Str(s) => s.to_string(),
            Value::Ts(t) => t.to_string(),
            Value::Float(bits) => f64::from_bits(*bits).to_string(),
            Value::Bool(b) => b.to_string(),
        }
    }

    /// The instant, for a timestamp value.
    pub fn instant(&self) -> Option<Instant> {
        match self {
            Value::Ts(instant) => Some(*instant),
            _ => None,
        }
    }

    /// The integer, for an int value.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// An accepted line's values, one per declared field, in declared order.
pub type Record = Box<[Value]>;

/// A line the contract does not accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIssue {
    pub reason: LineReason,
    /// The field it concerns, where one applies.
    pub field: Option<String>,
    /// The line's event id, where it parsed.
    pub event_id: Option<String>,
}

/// What one line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Blank,
    Accepted(Record),
    Rejected(LineIssue),
    Breach(LineIssue),
}

/// The bytes of one line (terminator and trailing `\r` removed), or the fact that it
/// was longer than `max_line_bytes` and was not kept.
#[derive(Clone, Copy, Debug)]
pub enum LineBytes<'a> {
    Kept(&'a [u8]),
    TooLong,
}

/// Field names longer than this are cut in quarantine and reports.
const MAX_REPORTED_NAME: usize = 200;

/// Classifies one line.
pub fn classify(line: LineBytes<'_>, schema: &Schema) -> Outcome {
    let bytes = match line {
        LineBytes::TooLong => return reject(LineReason::LineTooLong, None, None),
        LineBytes::Kept(bytes) => bytes,
    };
    if bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return Outcome::Blank;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return reject(LineReason::InvalidUtf8, None, None);
    };
    let members = match json::parse_object(text) {
        Parsed::Object(members) => members,
        Parsed::NotAnObject => return reject(LineReason::NotAnObject, None, None),
        Parsed::Malformed => return reject(LineReason::MalformedJson, None, None),
    };
    classify_members(&members, schema)
}

fn classify_members(members: &json::Members<'_>, schema: &Schema) -> Outcome {
    let event_id = || event_id_of(members, schema);
    let issue = |reason, field: &str| LineIssue {
        reason,
        field: Some(reported_name(field)),
        event_id: event_id(),
    };

    // One pass: each member's declared field, and the first key seen twice.
    let mut slots: SmallVec<[Option<Raw<'_>>; 16]> = SmallVec::from_elem(None, schema.fields.len());
    let mut unknown: Option<&str> = None;
    let mut duplicate: Option<&str> = None;
    // §1.1 rescue: the unknown members, in the order they appear.
    let mut rescued: SmallVec<[(&str, Raw<'_>); 4]> = SmallVec::new();
    let rescuing = schema.unknown_fields == UnknownFields::Rescue;
    for (name, value) in members {
        match schema.member_index(name) {
            None if rescuing && rescued.iter().any(|(n, _)| n == name) => {
                duplicate = duplicate.or(Some(name));
            }
            None => {
                unknown = unknown.or(Some(name));
                if rescuing {
                    rescued.push((name, *value));
                }
            }
            Some(index) if slots[index].is_some() => duplicate = duplicate.or(Some(name)),
            Some(index) => slots[index] = Some(*value),
        }
    }
    // A prohibited field is never declared (the config refuses that), so it shows up here
    // as unknown: the prohibited check only needs to run when there is an unknown field.
    let prohibited = || {
        schema
            .prohibited
            .iter()
            .find(|p| members.iter().any(|(k, _)| k == *p))
    };
    if let Some(name) = unknown.and_then(|_| prohibited()) {
        return Outcome::Breach(issue(LineReason::ProhibitedField, name));
    }
    if let Some(name) = unknown {
        let unknown = issue(LineReason::UnknownField, name);
        match schema.unknown_fields {
            UnknownFields::Breach => return Outcome::Breach(unknown),
            UnknownFields::Reject => return Outcome::Rejected(unknown),
            // A field that could be added already is (`crate::contract::added`).
            UnknownFields::Add => return Outcome::Breach(unknown),
            UnknownFields::Rescue => {}
        }
    }
    if let Some(name) = duplicate {
        // Every key is declared by now, so this is the first key repeated, in line order.
        return Outcome::Rejected(issue(LineReason::DuplicateKey, name));
    }

    // Keys are now unique and all declared: one raw value (or none) per declared field.
    for slot in &mut slots {
        *slot = slot.filter(|v| v.kind() != Kind::Null);
    }
    for (field, value) in schema.fields.iter().zip(&slots) {
        if field.required && value.is_none() {
            return Outcome::Rejected(issue(LineReason::MissingField, &field.name));
        }
    }
    let mut values: SmallVec<[Value; 16]> = SmallVec::with_capacity(slots.len());
    let mut stamps: SmallVec<[(usize, Cow<'_, str>); 4]> = SmallVec::new();
    for (index, (field, value)) in schema.fields.iter().zip(&slots).enumerate() {
        let Some(value) = value else {
            values.push(Value::Null);
            continue;
        };
        let typed = match field.ty {
            FieldType::Int => int_value(value).map(Value::Int),
            FieldType::String => {
                json::string_value(value).map(|s| Value::Str(compact_str::CompactString::from(s)))
            }
            FieldType::Timestamp => json::string_value(value).map(|s| {
                stamps.push((index, s));
                Value::Null
            }),
            FieldType::Float => float_value(value).map(Value::float),
            FieldType::Bool => {
                (value.kind() == Kind::Bool).then(|| Value::Bool(value.get() == "true"))
            }
        };
        match typed {
            Some(v) => values.push(v),
            None => return Outcome::Rejected(issue(LineReason::BadType, &field.name)),
        }
    }
    let parsed: SmallVec<[(usize, Result<Instant, TimestampError>); 4]> = stamps
        .iter()
        .map(|(i, s)| (*i, timestamp::parse(s)))
        .collect();
    for (error, reason) in [
        (
            TimestampError::WithoutOffset,
            LineReason::TimestampWithoutOffset,
        ),
        (TimestampError::Invalid, LineReason::BadTimestamp),
    ] {
        if let Some((index, _)) = parsed.iter().find(|(_, r)| *r == Err(error)) {
            return Outcome::Rejected(issue(reason, schema.name(*index)));
        }
    }
    for (index, instant) in parsed {
        if let Ok(instant) = instant {
            values[index] = Value::Ts(instant);
        }
    }
    if let Some((index, rule)) = broken_rule(schema, &values) {
        let field = &schema.fields[index];
        let broken = issue(rule.reason(), &field.name);
        return match field.rules.as_ref().is_some_and(|r| r.breach) {
            true => Outcome::Breach(broken),
            false => Outcome::Rejected(broken),
        };
    }
    if let (Some(index), false) = (schema.rescue, rescued.is_empty()) {
        values[index] = Value::Str(rescued_object(&rescued).into());
    }
    Outcome::Accepted(values.into_iter().collect())
}

/// The rescued members as one compact JSON object, in the order they appeared; each
/// value's JSON text as the line wrote it.
fn rescued_object(members: &[(&str, Raw<'_>)]) -> String {
    let mut out = String::from("{");
    for (i, (name, raw)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(name).unwrap_or_default());
        out.push(':');
        out.push_str(raw.get());
    }
    out.push('}');
    out
}

/// §1.2 on a typed line: every field's `one_of` (declared order), then every field's
/// range; the first broken rule and its field. A null breaks no rule.
pub fn broken_rule(schema: &Schema, values: &[Value]) -> Option<(usize, Rule)> {
    if !schema.has_rules() {
        return None;
    }
    let ruled = || {
        schema
            .fields
            .iter()
            .zip(values)
            .enumerate()
            .filter_map(|(i, (f, v))| f.rules.as_deref().map(|r| (i, r, v)))
    };
    if let Some((i, _, _)) = ruled().find(|(_, r, v)| !r.allows(v)) {
        return Some((i, Rule::OneOf));
    }
    ruled()
        .find(|(_, r, v)| !r.in_range(v))
        .map(|(i, _, _)| (i, Rule::Range))
}

fn reject(reason: LineReason, field: Option<String>, event_id: Option<String>) -> Outcome {
    Outcome::Rejected(LineIssue {
        reason,
        field,
        event_id,
    })
}

/// A JSON integer that fits i64; `1.0`, `1e2`, `"1"`, `true` are not.
fn int_value(raw: &Raw<'_>) -> Option<i64> {
    match raw.kind() {
        Kind::Number { integer: true } => raw.get().parse().ok(),
        _ => None,
    }
}

/// A JSON number with a fraction or exponent that is a finite f64; an integer is an
/// int, another type (§1.1).
fn float_value(raw: &Raw<'_>) -> Option<f64> {
    match raw.kind() {
        Kind::Number { integer: false } => raw.get().parse().ok().filter(|x: &f64| x.is_finite()),
        _ => None,
    }
}

/// The line's event id as text, when it is present and of its declared type.
fn event_id_of(members: &json::Members<'_>, schema: &Schema) -> Option<String> {
    let field = &schema.fields[schema.event_id];
    let (_, raw) = members.iter().find(|(k, _)| *k == field.name)?;
    match field.ty {
        FieldType::Int => int_value(raw).map(|n| n.to_string()),
        _ => json::string_value(raw).map(|s| reported_name(&s)),
    }
}

/// A name from the file, cut to a bounded length for reports.
fn reported_name(name: &str) -> String {
    if name.len() <= MAX_REPORTED_NAME {
        return name.to_owned();
    }
    let mut end = MAX_REPORTED_NAME;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &name[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rescued(line: &str) -> Outcome {
        let schema = crate::config::fixtures::rescuing().schema;
        classify(LineBytes::Kept(line.as_bytes()), &schema)
    }

    /// §1.1 rescue: unknown members as one object, in their order, in the last column;
    /// a member named as the rescue column is itself unknown; prohibited still breaches.
    #[test]
    fn unknown_members_are_rescued_in_order() {
        let schema = crate::config::fixtures::rescuing().schema;
        let rescue = schema.rescue.expect("a rescue column");
        assert_eq!(schema.fields[rescue].name, "_rescued");
        let line = r#"{"zeta":1,"event_id":"e1","order_id":7,"_rescued":"x","status":"paid","updated_at":"2024-03-01T10:00:00Z","eta": {"m" : [1, 2]}}"#;
        let Outcome::Accepted(record) = rescued(line) else {
            panic!("{:?}", rescued(line));
        };
        assert_eq!(
            record[rescue],
            Value::Str(r#"{"zeta":1,"_rescued":"x","eta":{"m" : [1, 2]}}"#.into())
        );
        let plain =
            r#"{"event_id":"e1","order_id":7,"status":"paid","updated_at":"2024-03-01T10:00:00Z"}"#;
        assert!(matches!(rescued(plain), Outcome::Accepted(r) if r[rescue] == Value::Null));
        let twice = r#"{"event_id":"e1","order_id":7,"status":"paid","updated_at":"2024-03-01T10:00:00Z","x":1,"x":2}"#;
        assert!(
            matches!(rescued(twice), Outcome::Rejected(i) if i.reason == LineReason::DuplicateKey)
        );
        let leaky = r#"{"event_id":"e1","order_id":7,"status":"paid","updated_at":"2024-03-01T10:00:00Z","email":"a"}"#;
        assert!(
            matches!(rescued(leaky), Outcome::Breach(i) if i.reason == LineReason::ProhibitedField)
        );
    }
}
