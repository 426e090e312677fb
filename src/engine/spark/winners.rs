//! §3 and §4 in Spark SQL: the view [`WINNERS`], one row per key, the rank-1 event of
//! each over [`EVENTS`](super::events::EVENTS)' first occurrences (retries collapse onto
//! them; conflicting lines are never first). The events are not cached: the one window
//! over each key ranks its first occurrences and counts its lines, so §2's counts come
//! from the cached winners too. Its columns, which merge mode reads too:
//!
//! - every declared field under its own name, in declared order, in its published type;
//! - `event_date` DATE: the UTC date of the `partition_by_date_of` instant;
//! - `__line` BIGINT: the winning event's line;
//! - `__order_secs` BIGINT, `__order_nanos` BIGINT: the exact `order_by` instant;
//! - `__tied` BOOLEAN: the key's rank-1 and rank-2 events tie on instant and tiebreak;
//! - `__lines`, `__retries`, `__conflicts` BIGINT: the key's accepted lines, identical
//!   retries and conflicting lines (a key whose every line conflicts has no winner, so
//!   its lines are missing from these sums: `census` counts them as conflicts).

use super::events::{EVENTS, ident, instant};
use crate::contract::Schema;

/// The view of each key's winner.
pub const WINNERS: &str = "wharf_winners";

/// The query of [`WINNERS`].
pub fn query(schema: &Schema) -> String {
    let (order_s, order_n) = instant(schema.order_by);
    let (date_s, _) = instant(schema.date_of);
    let key = ident(&schema.fields[schema.key].name);
    let tiebreak = schema.tiebreak.map(|i| ident(&schema.fields[i].name));
    let tie_order = tiebreak
        .as_ref()
        .map(|t| format!("{t} DESC NULLS LAST, "))
        .unwrap_or_default();
    // What §3 compares before the line: a tie on it is a tie by arrival.
    let standing = format!(
        "named_struct('s', {order_s}, 'n', {order_n}{})",
        tiebreak
            .as_ref()
            .map(|t| format!(", 't', {t}"))
            .unwrap_or_default()
    );
    let fields: Vec<String> = schema.fields.iter().map(|f| ident(&f.name)).collect();
    // First occurrences rank above every retry and conflict, so rank 1 is the winner
    // and the next row a rival only when it is a first occurrence too.
    let ranked = format!(
        "SELECT *, row_number() OVER __r AS __rank, \
         lead(CASE WHEN __occurrence = 1 THEN {standing} END) OVER __r AS __next, \
         count(*) OVER __k AS __lines, \
         count_if(__occurrence > 1 AND NOT __conflict) OVER __k AS __retries, \
         count_if(__conflict) OVER __k AS __conflicts FROM {EVENTS} \
         WINDOW __r AS (PARTITION BY {key} ORDER BY __occurrence = 1 DESC, \
         {order_s} DESC NULLS LAST, {order_n} DESC NULLS LAST, {tie_order}__line DESC), \
         __k AS (PARTITION BY {key})"
    );
    format!(
        "SELECT {}, date_from_unix_date(CAST(({date_s} - pmod({date_s}, 86400)) div 86400 AS INT)) AS event_date, \
         __line, {order_s} AS __order_secs, {order_n} AS __order_nanos, \
         __next IS NOT NULL AND __next <=> {standing} AS __tied, \
         __lines, __retries, __conflicts \
         FROM ({ranked}) WHERE __rank = 1 AND __occurrence = 1",
        fields.join(", "),
    )
}
