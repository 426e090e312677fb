//! The `wharf diff --json` line of a [`Change`]: `{"event_date", "key", "change",
//! "before", "after"}`, each row an object of its fields as published (timestamps
//! RFC 3339 in UTC with microseconds), `null` for the side that does not exist.

use serde_json::{Map, Value as Json, json};

use super::Change;
use crate::contract::{Record, Schema, Value};

/// The JSON line of `change`.
pub fn change(change: &Change, schema: &Schema) -> Json {
    json!({
        "event_date": change.event_date.to_string(),
        "key": value(&change.key),
        "change": change.kind.code(),
        "before": change.before.as_ref().map(|r| row(r, schema)),
        "after": change.after.as_ref().map(|r| row(r, schema)),
    })
}

/// A row as `{field: value}` in the schema's order.
pub fn row(record: &Record, schema: &Schema) -> Json {
    let fields: Map<String, Json> = schema
        .fields
        .iter()
        .zip(record.iter())
        .map(|(field, v)| (field.name.clone(), value(v)))
        .collect();
    Json::Object(fields)
}

/// One value as published: a timestamp at microseconds, UTC.
pub fn value(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Int(n) => json!(n),
        Value::Str(s) => json!(s.as_str()),
        Value::Ts(_) => json!(text(v)),
        Value::Float(bits) => json!(f64::from_bits(*bits)),
        Value::Bool(b) => json!(b),
    }
}

/// A value as text: strings bare, timestamps `YYYY-MM-DDTHH:MM:SS.ffffffZ`, null `null`.
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Int(n) => n.to_string(),
        Value::Str(s) => s.to_string(),
        Value::Ts(instant) => {
            let full = instant.to_string(); // nanoseconds: cut to the published microseconds
            format!("{}Z", &full[..full.len().saturating_sub(4)])
        }
        Value::Float(_) | Value::Bool(_) => v.display(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Instant;

    #[test]
    fn timestamps_print_at_microseconds_in_utc() {
        let v = Value::Ts(Instant::from_micros(1_709_287_200_123_456));
        assert_eq!(text(&v), "2024-03-01T10:00:00.123456Z");
        assert_eq!(value(&Value::Int(7)), json!(7));
        assert_eq!(value(&Value::Null), Json::Null);
    }
}
