//! §3 and §4 in Spark SQL, over [`EVENTS`](super::events::EVENTS) in one window by key:
//! the view [`KEYS`], one row per key that has an accepted line, and over it the view
//! [`WINNERS`], one row per key, the rank-1 event of each among the first occurrences
//! (retries collapse onto them; conflicting lines are never first).
//!
//! Every event, first occurrence or not, goes through the key's window, so the same
//! shuffle carries §2's counts to the driver: each key's row also holds how many of the
//! key's lines were parsed, were retries and were conflicts, and their sums over
//! [`KEYS`] are the file's. The events need no cache of their own.
//!
//! [`WINNERS`]' columns, which merge mode and the stage read:
//!
//! - every declared field under its own name, in declared order, in its published type;
//! - `event_date` DATE: the UTC date of the `partition_by_date_of` instant;
//! - `__line` BIGINT: the winning event's line;
//! - `__order_secs` BIGINT, `__order_nanos` BIGINT: the exact `order_by` instant;
//! - `__tied` BOOLEAN: the key's rank-1 and rank-2 events tie on instant and tiebreak.
//!
//! [`KEYS`] has these and `__winner` (whether the key has a first occurrence: a key seen
//! only on conflicting lines has none, and no winner), `__parsed`, `__retries` and
//! `__conflicts`.

use super::events::{EVENTS, ident, instant};
use crate::contract::Schema;
use crate::plan::rank::RankBy;

/// The view of every key's rank-1 line and its lines' §2 counts; the one that is cached.
pub const KEYS: &str = "wharf_keys";
/// The view of each key's winner, over [`KEYS`].
pub const WINNERS: &str = "wharf_winners";

/// The query of [`KEYS`].
pub fn keys_query(schema: &Schema) -> String {
    let (order_s, order_n) = instant(schema.order_by);
    let (date_s, _) = instant(schema.date_of);
    let key = ident(&schema.fields[schema.key].name);
    let tiebreak = schema.tiebreak.map(|i| ident(&schema.fields[i].name));
    let columns = |by: RankBy| match by {
        RankBy::Instant => vec![order_s.clone(), order_n.clone()],
        RankBy::Tiebreak => tiebreak.iter().cloned().collect(),
        RankBy::Line => vec!["__line".to_owned()],
    };
    // What §3 compares before the line (a tie on it is a tie by arrival), and whether the
    // line is a first occurrence, the only lines §3 ranks.
    let compared: Vec<String> = RankBy::ORDER
        .into_iter()
        .filter(|&by| by != RankBy::Line)
        .flat_map(columns)
        .enumerate()
        .map(|(i, column)| format!(", 'c{i}', {column}"))
        .collect();
    let standing = |first: &str| format!("named_struct('f', {first}{})", compared.concat());
    let fields: Vec<String> = schema.fields.iter().map(|f| ident(&f.name)).collect();
    // First occurrences sort before every other line of their key, so rank 1 is the
    // winner and rank 2 its runner-up whenever the key has two. One order for both
    // frames keeps them one sort of one shuffle.
    let order = format!(
        "PARTITION BY {key} ORDER BY __occurrence = 1 DESC, {}",
        rank_order(columns).join(", ")
    );
    let ranked = format!(
        "SELECT *, row_number() OVER __r AS __rank, lead({}) OVER __r AS __next, \
         count(*) OVER __all AS __parsed, \
         count(CASE WHEN __occurrence > 1 AND NOT __conflict THEN 1 END) OVER __all AS __retries, \
         count(CASE WHEN __conflict THEN 1 END) OVER __all AS __conflicts \
         FROM {EVENTS} \
         WINDOW __r AS ({order}), \
         __all AS ({order} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
        standing("__occurrence = 1")
    );
    format!(
        "SELECT {}, date_from_unix_date(CAST(({date_s} - pmod({date_s}, 86400)) div 86400 AS INT)) AS event_date, \
         __line, {order_s} AS __order_secs, {order_n} AS __order_nanos, \
         __next IS NOT NULL AND __next <=> {} AS __tied, \
         __occurrence = 1 AS __winner, __parsed, __retries, __conflicts \
         FROM ({ranked}) WHERE __rank = 1",
        fields.join(", "),
        standing("true")
    )
}

/// §3's order as Spark `ORDER BY` terms, rank 1 first: each criterion of
/// [`RankBy::ORDER`] as the `columns` a frame holds it in (none where it has none), the
/// greater value first and null below every value, as §3 ranks an absent one.
pub fn rank_order(columns: impl Fn(RankBy) -> Vec<String>) -> Vec<String> {
    RankBy::ORDER
        .into_iter()
        .flat_map(columns)
        .map(|column| format!("{column} DESC NULLS LAST"))
        .collect()
}

/// The query of [`WINNERS`].
pub fn winners_query(schema: &Schema) -> String {
    let fields: Vec<String> = schema.fields.iter().map(|f| ident(&f.name)).collect();
    format!(
        "SELECT {}, event_date, __line, __order_secs, __order_nanos, __tied FROM {KEYS} \
         WHERE __winner",
        fields.join(", ")
    )
}
