//! §3 and §4 in Spark SQL: the view [`KEYS`], one row per key that has an accepted line,
//! and over it the view [`WINNERS`], one row per key, the rank-1 event of each among the
//! first occurrences (retries collapse onto them; conflicting lines are never first).
//! A [`Ranking`] chooses the query that makes [`KEYS`]:
//!
//! - [`top_keys_query`], for a file the driver found free of conflicts and whose every
//!   retry it marked: straight over the handoff's first occurrences, one shuffle (of
//!   every event, or of each task's top events when keys have many);
//! - [`keys_query`], for any other file: over [`EVENTS`](super::events::EVENTS)
//!   in one window by key. Every event, first occurrence or not, goes through the key's
//!   window, so the same shuffle carries §2's counts to the driver: each key's row also
//!   holds how many of the key's lines were parsed, were retries and were conflicts, and
//!   their sums over [`KEYS`] are the file's. The events need no cache of their own.
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
//! only on conflicting lines has none, and no winner); [`keys_query`]'s also
//! `__parsed`, `__retries` and `__conflicts`.

use super::events::{EVENTS, ident, instant, published_fields};
use super::handoff::{SEEN, instant_columns};
use crate::contract::Schema;
use crate::plan::rank::RankBy;

// Every query ranks by every criterion but the line, then by the line: it must be last.
const _: () = assert!(matches!(RankBy::ORDER[RankBy::ORDER.len() - 1], RankBy::Line));

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
    // The standing, and whether the line is a first occurrence, the only lines §3 ranks.
    let compared = standing_fields(columns).join(", ");
    let standing = |first: &str| format!("named_struct('f', {first}, {compared})");
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
        "SELECT {}, {} AS event_date, __line, {order_s} AS __order_secs, {order_n} AS __order_nanos, \
         __next IS NOT NULL AND __next <=> {} AS __tied, \
         __occurrence = 1 AS __winner, __parsed, __retries, __conflicts \
         FROM ({ranked}) WHERE __rank = 1",
        fields.join(", "),
        utc_date(&date_s),
        standing("true")
    )
}

/// The UTC date of the instant whose seconds since the epoch `secs` holds (a floor, also
/// before 1970).
fn utc_date(secs: &str) -> String {
    format!("date_from_unix_date(CAST(({secs} - pmod({secs}, 86400)) div 86400 AS INT))")
}

/// Events a key from which [`TopKeys::Limited`] is chosen: at 2.9 events a key (the
/// 2M-line file) the one sort was about 0.1 s faster; at 6.3, 17 and 85 the limit was
/// 0.2, 0.4 and 0.7 s faster (docs/performance.md).
pub const LIMIT_FROM_EVENTS_PER_KEY: f64 = 4.0;

/// The ways Spark ranks a file's keys, the same rows every way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// Over the first occurrences alone ([`top_keys_query`]): a file free of conflicts
    /// whose every retry the driver marked.
    Top(TopKeys),
    /// §2 too, over every accepted line ([`keys_query`]): a file with conflicts, or one
    /// with a retry the driver no longer remembered the event of.
    Exact,
}

/// The two ways [`top_keys_query`] ranks first occurrences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopKeys {
    /// Every event crosses the shuffle and is sorted once ([`sorted_query`]): few events
    /// a key.
    Sorted,
    /// Each task keeps only its keys' top events before the shuffle, at the price of a
    /// sort on each side of it ([`limited_query`]): many events a key.
    Limited,
}

impl TopKeys {
    /// The faster way for a file of `events_per_key` events a key (about: a sketch's).
    pub fn for_events_per_key(events_per_key: f64) -> TopKeys {
        if events_per_key >= LIMIT_FROM_EVENTS_PER_KEY {
            TopKeys::Limited
        } else {
            TopKeys::Sorted
        }
    }
}

/// The query of [`KEYS`] for a file whose lines the driver's
/// [`Ledger`](super::ledger::Ledger) found free of conflicts and whose every retry it
/// marked `seen`, straight over the handoff `parsed` (columns in [`super::handoff`]):
/// the unmarked lines are the first occurrences, one line an event, with one shuffle and
/// no §2 window.
///
/// Every key has a winner: `__winner` is true.
pub fn top_keys_query(schema: &Schema, parsed: &str, how: TopKeys) -> String {
    let firsts = format!("SELECT * FROM {parsed} WHERE NOT {SEEN}");
    match how {
        TopKeys::Sorted => sorted_query(schema, &firsts),
        TopKeys::Limited => limited_query(schema, &firsts),
    }
}

/// [`TopKeys::Sorted`]: each key's events sorted once by §3's order, line included, so
/// the first is the winner, and the key is tied by arrival when the second equals it on
/// every criterion but the line.
fn sorted_query(schema: &Schema, firsts: &str) -> String {
    let key = format!("f{}", schema.key);
    let columns = |by| match by {
        RankBy::Line => vec!["line".to_owned()],
        by => handed_criterion(schema, by),
    };
    // Compared null-safe: a tiebreak may be absent, and an absent one ties with an
    // absent one.
    let standing = format!("named_struct({})", standing_fields(columns).join(", "));
    let ranked = format!(
        "SELECT *, row_number() OVER __w AS __rank, lead({standing}) OVER __w AS __next \
         FROM ({firsts}) WINDOW __w AS (PARTITION BY {key} ORDER BY {})",
        rank_order(columns).join(", ")
    );
    handed_winners(
        schema,
        &ranked,
        "__rank = 1",
        &format!("__next IS NOT NULL AND __next <=> {standing}"),
    )
}

/// [`TopKeys::Limited`]:
///
/// 1. `rank() = 1` by §3's order but the line keeps each key's top standing (Spark
///    keeps only those of each task before the shuffle, `WindowGroupLimit`);
/// 2. the winner is its latest line, and the key is tied by arrival when the top
///    standing has two events.
fn limited_query(schema: &Schema, firsts: &str) -> String {
    let key = format!("f{}", schema.key);
    let standing = rank_order(|by| handed_criterion(schema, by));
    let top = format!(
        "SELECT * FROM (SELECT *, rank() OVER (PARTITION BY {key} ORDER BY {}) AS __top \
         FROM ({firsts})) WHERE __top = 1",
        standing.join(", ")
    );
    let keyed = format!(
        "SELECT *, max(line) OVER __k AS __latest, count(*) OVER __k AS __events \
         FROM ({top}) WINDOW __k AS (PARTITION BY {key})"
    );
    handed_winners(schema, &keyed, "line = __latest", "__events > 1")
}

/// The handoff's columns of §3 criterion `by`; none for the line, which each query
/// places itself.
fn handed_criterion(schema: &Schema, by: RankBy) -> Vec<String> {
    match by {
        RankBy::Instant => {
            let (secs, nanos) = instant_columns(schema.order_by);
            vec![secs, nanos]
        }
        RankBy::Tiebreak => schema.tiebreak.map(|i| format!("f{i}")).into_iter().collect(),
        RankBy::Line => Vec::new(),
    }
}

/// [`KEYS`]' columns from `ranked`, handed-over lines: the rows where `winner` holds,
/// `tied` as `__tied`.
fn handed_winners(schema: &Schema, ranked: &str, winner: &str, tied: &str) -> String {
    let (order_s, order_n) = instant_columns(schema.order_by);
    let (date_s, _) = instant_columns(schema.date_of);
    let published = published_fields(schema, |i| format!("f{i}"), instant_columns);
    format!(
        "SELECT {}, {} AS event_date, line AS __line, {order_s} AS __order_secs, \
         {order_n} AS __order_nanos, {tied} AS __tied, true AS __winner \
         FROM ({ranked}) WHERE {winner}",
        published.join(", "),
        utc_date(&date_s),
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

/// A key's standing, what §3 compares before the line (a tie on it is a tie by
/// arrival), as `named_struct` arguments: `'c0', column, 'c1', column, …` of each
/// criterion but the line, as `columns` holds it.
fn standing_fields(columns: impl Fn(RankBy) -> Vec<String>) -> Vec<String> {
    RankBy::ORDER
        .into_iter()
        .filter(|&by| by != RankBy::Line)
        .flat_map(columns)
        .enumerate()
        .map(|(i, column)| format!("'c{i}', {column}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_events_a_key_limit_before_the_shuffle_few_sort_once() {
        assert_eq!(TopKeys::for_events_per_key(1.0), TopKeys::Sorted);
        assert_eq!(TopKeys::for_events_per_key(2.9), TopKeys::Sorted);
        assert_eq!(TopKeys::for_events_per_key(LIMIT_FROM_EVENTS_PER_KEY), TopKeys::Limited);
        assert_eq!(TopKeys::for_events_per_key(85.0), TopKeys::Limited);
    }
}
