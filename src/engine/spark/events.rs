//! Parsing and §2 in Spark SQL, built-in functions only: the view [`EVENTS`] over the
//! numbered [`LINES`](super::lines::LINES), one row per accepted line, with
//!
//! - every declared field under its own name, in declared order: `string` as STRING,
//!   `int` as BIGINT, `timestamp` as TIMESTAMP (its instant truncated to microseconds);
//! - `__line`, the line number;
//! - for each timestamp field `i`, `__s{i}` and `__n{i}`: its exact instant as seconds
//!   and nanoseconds, computed from the RFC 3339 text's parts (Spark's `to_timestamp`
//!   accepts strings the contract rejects and keeps only microseconds);
//! - `__occurrence` (1 for an event id's first line), `__conflict` (a later line whose
//!   values differ from the first's) and `__conflict_field` (the first field that
//!   differs).
//!
//! Values are compared as §2 says: strings and ints as typed values, timestamps as
//! instants, an absent optional as null (`<=>`, so null equals null).

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

/// The query of [`EVENTS`] over the view `lines`.
pub fn query(schema: &Schema, lines: &str) -> String {
    let ddl: Vec<String> = schema
        .fields
        .iter()
        .map(|f| {
            let ty = match f.ty {
                FieldType::Int => "BIGINT",
                FieldType::String | FieldType::Timestamp => "STRING",
            };
            format!("{} {ty}", ident(&f.name))
        })
        .collect();
    let parsed = format!(
        "SELECT line AS __line, from_json(value, {}, map('mode', 'FAILFAST')) AS __j FROM {lines}",
        literal(&ddl.join(", "))
    );
    let timestamps: Vec<usize> = (0..schema.fields.len())
        .filter(|&i| schema.fields[i].ty == FieldType::Timestamp)
        .collect();
    let fields: Vec<String> = schema
        .fields
        .iter()
        .map(|f| format!("__j.{0} AS {0}", ident(&f.name)))
        .collect();
    let parts = format!(
        "SELECT __line, {}{} FROM ({parsed})",
        fields.join(", "),
        timestamps
            .iter()
            .map(|&i| format!(", {}", parts_of(&ident(&schema.fields[i].name), i)))
            .collect::<String>()
    );
    let civil = format!(
        "SELECT *{} FROM ({parts})",
        timestamps
            .iter()
            .map(|&i| format!(", {}", civil_of(i)))
            .collect::<String>()
    );
    let exact = format!(
        "SELECT *{} FROM ({civil})",
        timestamps
            .iter()
            .map(|&i| format!(", {}", exact_of(i)))
            .collect::<String>()
    );
    occurrences(schema, &timestamps, &exact)
}

/// The RFC 3339 parts of timestamp field `i` (`column`), at their fixed places
/// (the driver accepted the text, so every part is there and in range): the fraction's
/// digits run from the 21st character to the offset, which is `Z`, `z` or `±HH:MM`.
fn parts_of(column: &str, i: usize) -> String {
    let int = |from: u32, len: u32| format!("CAST(substr({column}, {from}, {len}) AS BIGINT)");
    let zulu = format!("substr({column}, -1) IN ('Z', 'z')");
    let zulu_len = format!("CASE WHEN {zulu} THEN 1 ELSE 6 END");
    [
        format!("{} AS __y{i}", int(1, 4)),
        format!("{} AS __mo{i}", int(6, 2)),
        format!("{} AS __d{i}", int(9, 2)),
        format!("{} AS __h{i}", int(12, 2)),
        format!("{} AS __mi{i}", int(15, 2)),
        format!("{} AS __sec{i}", int(18, 2)),
        format!(
            "CASE WHEN substr({column}, 20, 1) = '.' \
             THEN substr({column}, 21, length({column}) - 20 - {zulu_len}) ELSE '' END AS __frac{i}"
        ),
        format!(
            "CASE WHEN {zulu} THEN substr({column}, -1) ELSE substr({column}, -6) END AS __off{i}"
        ),
    ]
    .join(", ")
}

/// Days since 1970-01-01 of field `i`'s local date (Howard Hinnant's days-from-civil,
/// as `contract::timestamp` computes it) and its offset in seconds.
fn civil_of(i: usize) -> String {
    let y = format!("(__y{i} - CASE WHEN __mo{i} <= 2 THEN 1 ELSE 0 END)");
    let mp = format!("(CASE WHEN __mo{i} > 2 THEN __mo{i} - 3 ELSE __mo{i} + 9 END)");
    let era = format!("(({y} - pmod({y}, 400)) div 400)");
    let yoe = format!("pmod({y}, 400)");
    let doy = format!("((153 * {mp} + 2) div 5 + __d{i} - 1)");
    let doe = format!("({yoe} * 365 + {yoe} div 4 - {yoe} div 100 + {doy})");
    let off = format!(
        "CASE WHEN __off{i} IN ('Z', 'z') THEN 0 \
         ELSE (CASE WHEN substr(__off{i}, 1, 1) = '-' THEN -1 ELSE 1 END) \
         * (CAST(substr(__off{i}, 2, 2) AS BIGINT) * 3600 + CAST(substr(__off{i}, 5, 2) AS BIGINT) * 60) END"
    );
    format!("{era} * 146097 + {doe} - 719468 AS __days{i}, {off} AS __offs{i}")
}

/// Field `i`'s exact instant: a leap second (only ever 23:59:60 UTC once accepted)
/// counts as 23:59:59.999999999; fraction digits past the ninth are truncated.
fn exact_of(i: usize) -> String {
    let local = format!("(__days{i} * 86400 + __h{i} * 3600 + __mi{i} * 60)");
    let (s, n) = instant(i);
    format!(
        "CASE WHEN __sec{i} = 60 THEN {local} + 59 - __offs{i} ELSE {local} + __sec{i} - __offs{i} END AS {s}, \
         CASE WHEN __sec{i} = 60 THEN 999999999 WHEN __frac{i} = '' THEN 0 \
         ELSE CAST(rpad(substr(__frac{i}, 1, 9), 9, '0') AS BIGINT) END AS {n}"
    )
}

/// §2 over `exact`: each line's occurrence of its event id and whether it contradicts
/// the first; the declared fields in their published types. The first line's values
/// come field by field, so the shuffle carries each value once.
fn occurrences(schema: &Schema, timestamps: &[usize], exact: &str) -> String {
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
        "SELECT *, row_number() OVER __w AS __occurrence, {} FROM ({exact}) \
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
