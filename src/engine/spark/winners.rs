//! §3 and §4 in Spark SQL: the view [`WINNERS`], one row per key, the rank-1 event of
//! each over [`EVENTS`](super::events::EVENTS)' first occurrences (retries collapse onto
//! them; conflicting lines are never first). Its columns, which merge mode reads too:
//!
//! - every declared field under its own name, in declared order, in its published type;
//! - `event_date` DATE: the UTC date of the `partition_by_date_of` instant;
//! - `__line` BIGINT: the winning event's line;
//! - `__order_secs` BIGINT, `__order_nanos` BIGINT: the exact `order_by` instant;
//! - `__tied` BOOLEAN: the key's rank-1 and rank-2 events tie on instant and tiebreak.

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
    let ranked = format!(
        "SELECT *, row_number() OVER __r AS __rank, lead({}) OVER __r AS __next FROM {EVENTS} \
         WHERE __occurrence = 1 \
         WINDOW __r AS (PARTITION BY {key} ORDER BY {order_s} DESC NULLS LAST, \
         {order_n} DESC NULLS LAST, {tie_order}__line DESC)",
        standing
    );
    format!(
        "SELECT {}, date_from_unix_date(CAST(({date_s} - pmod({date_s}, 86400)) div 86400 AS INT)) AS event_date, \
         __line, {order_s} AS __order_secs, {order_n} AS __order_nanos, \
         __next IS NOT NULL AND __next <=> {} AS __tied \
         FROM ({ranked}) WHERE __rank = 1",
        fields.join(", "),
        standing
    )
}
