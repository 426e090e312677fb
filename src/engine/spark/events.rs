//! §2 in Spark SQL, for a file whose events conflict (the driver's
//! [`Ledger`](super::ledger::Ledger) counts a clean file's), built-in functions only:
//! the view [`EVENTS`] over the driver's
//! [`handoff`](super::handoff) of accepted records (typed, numbered, each instant exact,
//! by Wharf's own §1), one row per accepted line, with
//!
//! - every declared field under its own name, in declared order: `string` as STRING,
//!   `int` as BIGINT, `timestamp` as TIMESTAMP (its instant truncated to microseconds);
//! - `__line`, the line number;
//! - for each timestamp field `i`, `__s{i}` and `__n{i}`: its exact instant as seconds
//!   and nanoseconds;
//! - `__occurrence` (1 for an event id's first line) and `__conflict` (a later line whose
//!   values differ from the first's, by the fingerprint of its typed values, which the
//!   local engine compares too; [`first_difference`] names the field).

use super::handoff::instant_columns;
use crate::contract::{FieldType, Schema};

/// The view of accepted events.
pub const EVENTS: &str = "wharf_events";

/// `name` as a Spark SQL identifier.
pub fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `text` as a Spark SQL string literal.
pub(super) fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Every declared field in its published type, named as declared: a timestamp from its
/// exact instant's `instant(i)` columns, in microseconds with the nanoseconds truncated
/// (as the local engine writes it); any other field from `column(i)`.
pub fn published_fields(
    schema: &Schema,
    column: impl Fn(usize) -> String,
    instant: impl Fn(usize) -> (String, String),
) -> Vec<String> {
    schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let value = match f.ty {
                FieldType::Timestamp => {
                    let (s, n) = instant(i);
                    format!("timestamp_micros({s} * 1000000 + {n} div 1000)")
                }
                FieldType::Int | FieldType::String | FieldType::Float | FieldType::Bool => {
                    column(i)
                }
            };
            format!("{value} AS {}", ident(&f.name))
        })
        .collect()
}

/// The exact instant of timestamp field `i`: `(seconds, nanoseconds)` expressions.
pub fn instant(i: usize) -> (String, String) {
    (format!("__s{i}"), format!("__n{i}"))
}

/// The query of [`EVENTS`] over the view `parsed`, the driver's
/// [`handoff`](super::handoff) of accepted records.
pub fn query(schema: &Schema, parsed: &str) -> String {
    let columns: Vec<String> = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| match f.ty {
            FieldType::Timestamp => {
                let (secs, nanos) = instant_columns(i);
                let (s, n) = instant(i);
                format!("{secs} AS {s}, {nanos} AS {n}")
            }
            FieldType::Int | FieldType::String | FieldType::Float | FieldType::Bool => {
                format!("f{i} AS {}", ident(&f.name))
            }
        })
        .collect();
    let typed = format!(
        "SELECT line AS __line, fp AS __fp, {} FROM {parsed}",
        columns.join(", ")
    );
    let timestamps: Vec<usize> = (0..schema.fields.len())
        .filter(|&i| schema.fields[i].ty == FieldType::Timestamp)
        .collect();
    occurrences(schema, &timestamps, &typed)
}

/// §2 over `typed`: each line's occurrence of its event id and whether it contradicts
/// the first, by the values' fingerprint the driver computed as the local engine does
/// (`plan::batch::fingerprint`), so both engines tell a retry from a conflict alike; the
/// declared fields in their published types.
fn occurrences(schema: &Schema, timestamps: &[usize], typed: &str) -> String {
    let published = published_fields(schema, |i| ident(&schema.fields[i].name), instant);
    let instants: String = timestamps
        .iter()
        .map(|&i| {
            let (s, n) = instant(i);
            format!(", {s}, {n}")
        })
        .collect();
    // Lines are unique, so one row frame serves the row number and the first value.
    let windowed = format!(
        "SELECT *, row_number() OVER __w AS __occurrence, first_value(__fp) OVER __w AS __first_fp \
         FROM ({typed}) \
         WINDOW __w AS (PARTITION BY {} ORDER BY __line \
         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
        ident(&schema.fields[schema.event_id].name)
    );
    format!(
        "SELECT {}, __line{instants}, __occurrence, \
         __occurrence > 1 AND __fp <> __first_fp AS __conflict \
         FROM ({windowed})",
        published.join(", ")
    )
}

/// The first declared field in which row `c` differs from row `f` (both of [`EVENTS`]),
/// as a string literal: values compared as §2 says (timestamps as instants, null equal
/// to null).
pub fn first_difference(schema: &Schema) -> String {
    let differs: Vec<String> = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let same = if f.ty == FieldType::Timestamp {
                let (s, n) = instant(i);
                format!("c.{s} <=> f.{s} AND c.{n} <=> f.{n}")
            } else {
                let column = ident(&f.name);
                format!("c.{column} <=> f.{column}")
            };
            format!("WHEN NOT ({same}) THEN {}", literal(&f.name))
        })
        .collect();
    format!("CASE {} END", differs.join(" "))
}
