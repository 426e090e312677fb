//! §2 in Spark SQL, built-in functions only: the view [`EVENTS`] over the driver's
//! [`handoff`](super::handoff) of accepted records (typed, numbered, each instant exact,
//! by Wharf's own §1), one row per accepted line, with
//!
//! - every declared field under its own name, in declared order: `string` as STRING,
//!   `int` as BIGINT, `timestamp` as TIMESTAMP (its instant truncated to microseconds);
//! - `__line`, the line number;
//! - for each timestamp field `i`, `__s{i}` and `__n{i}`: its exact instant as seconds
//!   and nanoseconds;
//! - `__occurrence` (1 for an event id's first line), `__conflict` (a later line whose
//!   values differ from the first's) and `__conflict_field` (the first field that
//!   differs).
//!
//! Values are compared as §2 says: strings and ints as typed values, timestamps as
//! instants, an absent optional as null (`<=>`, so null equals null).

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
            FieldType::Int | FieldType::String => format!("f{i} AS {}", ident(&f.name)),
        })
        .collect();
    let typed = format!(
        "SELECT line AS __line, {} FROM {parsed}",
        columns.join(", ")
    );
    let timestamps: Vec<usize> = (0..schema.fields.len())
        .filter(|&i| schema.fields[i].ty == FieldType::Timestamp)
        .collect();
    occurrences(schema, &timestamps, &typed)
}

/// §2 over `typed`: each line's occurrence of its event id and whether it contradicts
/// the first; the declared fields in their published types. The first line's values
/// come field by field, so the shuffle carries each value once.
fn occurrences(schema: &Schema, timestamps: &[usize], typed: &str) -> String {
    // Per field: (its value's columns, the first line's columns).
    let compared: Vec<Vec<(String, String)>> = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if f.ty == FieldType::Timestamp {
                let (s, n) = instant(i);
                vec![(s, format!("__fs{i}")), (n, format!("__fn{i}"))]
            } else {
                vec![(ident(&f.name), format!("__f{i}"))]
            }
        })
        .collect();
    let firsts: Vec<String> = compared
        .iter()
        .flatten()
        .map(|(value, first)| format!("first_value({value}) OVER __w AS {first}"))
        .collect();
    // Field `i` equals the first line's, as a typed value (null equals null).
    let same: Vec<String> = compared
        .iter()
        .map(|columns| {
            let parts: Vec<String> = columns
                .iter()
                .map(|(value, first)| format!("{value} <=> {first}"))
                .collect();
            format!("({})", parts.join(" AND "))
        })
        .collect();
    let differs: Vec<String> = schema
        .fields
        .iter()
        .zip(&same)
        .map(|(f, same)| format!("WHEN NOT {same} THEN {}", literal(&f.name)))
        .collect();
    let published: Vec<String> = schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| match f.ty {
            FieldType::Timestamp => {
                let (s, n) = instant(i);
                format!(
                    "timestamp_micros({s} * 1000000 + {n} div 1000) AS {}",
                    ident(&f.name)
                )
            }
            _ => ident(&f.name),
        })
        .collect();
    let instants: String = timestamps
        .iter()
        .map(|&i| {
            let (s, n) = instant(i);
            format!(", {s}, {n}")
        })
        .collect();
    // Lines are unique, so one row frame serves the row number and the first values.
    let windowed = format!(
        "SELECT *, row_number() OVER __w AS __occurrence, {} FROM ({typed}) \
         WINDOW __w AS (PARTITION BY {} ORDER BY __line \
         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
        firsts.join(", "),
        ident(&schema.fields[schema.event_id].name)
    );
    format!(
        "SELECT {}, __line{instants}, __occurrence, \
         __occurrence > 1 AND NOT ({}) AS __conflict, \
         CASE WHEN __occurrence = 1 THEN NULL {} END AS __conflict_field \
         FROM ({windowed})",
        published.join(", "),
        same.join(" AND "),
        differs.join(" ")
    )
}
