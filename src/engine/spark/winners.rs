//! §3 and §4 in Spark SQL: the view [`KEYS`], one row per key that has an accepted line,
//! and over it the view [`WINNERS`], one row per key, the rank-1 event of each among the
//! first occurrences (retries collapse onto them; conflicting lines are never first).
//! Two queries make [`KEYS`]:
//!
//! - [`top_keys_query`], for a file the driver found free of conflicts: straight over the
//!   handoff, one shuffle (of every line, or of each task's top lines when keys have
//!   many);
//! - [`keys_query`], for a file with conflicts: over [`EVENTS`](super::events::EVENTS)
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
use super::handoff::instant_columns;
use crate::contract::Schema;
use crate::plan::rank::RankBy;

// Both queries rank by every criterion but the line, then by the line: it must be last.
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

/// Lines a key from which [`TopKeys::Limited`] is chosen: on the 2M-line file (3.4 lines
/// a key) and at 7.4 lines a key the one sort of every line was 0.3–1 s faster; at 20
/// and 100 the limit was 0.4 and 0.8 s faster (docs/performance.md).
pub const LIMIT_FROM_LINES_PER_KEY: f64 = 12.0;

/// The two ways [`top_keys_query`] ranks, the same rows either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopKeys {
    /// Every line crosses the shuffle and is sorted once ([`sorted_query`]): few lines a key.
    Sorted,
    /// Each task keeps only its keys' top lines before the shuffle, at the price of a sort
    /// on each side of it ([`limited_query`]): many lines a key.
    Limited,
}

impl TopKeys {
    /// The faster way for a file of `lines_per_key` accepted lines a key (about: a sketch's).
    pub fn for_lines_per_key(lines_per_key: f64) -> TopKeys {
        if lines_per_key >= LIMIT_FROM_LINES_PER_KEY {
            TopKeys::Limited
        } else {
            TopKeys::Sorted
        }
    }
}

/// The query of [`KEYS`] for a file whose lines the driver's
/// [`Ledger`](super::ledger::Ledger) found free of conflicts, straight over the handoff
/// `parsed` (columns in [`super::handoff`]), with one shuffle and no §2 window: a retry
/// has its first occurrence's values (its fingerprint, its key, its place in §3's order),
/// and only the key's top events matter.
///
/// Every key has a winner: `__winner` is true.
pub fn top_keys_query(schema: &Schema, parsed: &str, how: TopKeys) -> String {
    match how {
        TopKeys::Sorted => sorted_query(schema, parsed),
        TopKeys::Limited => limited_query(schema, parsed),
    }
}

/// [`TopKeys::Sorted`]: each key's lines sorted once.
///
/// 1. each key's lines are sorted by §3's order but the line, then by fingerprint and
///    line: the top standing comes first, and in it each event's lines together, its
///    first line first;
/// 2. a line is in the top standing when it equals the key's first line on every
///    criterion, and is its event's first line there when the line before it has
///    another fingerprint (or there is none);
/// 3. of those first lines the latest is the winner, and the key is tied by arrival when
///    there are two or more (two events share the top standing).
fn sorted_query(schema: &Schema, parsed: &str) -> String {
    let key = format!("f{}", schema.key);
    let columns = |by| handed_criterion(schema, by);
    let standing: Vec<String> = RankBy::ORDER.into_iter().flat_map(columns).collect();
    let mut order = rank_order(columns);
    order.extend(["fp".to_owned(), "line".to_owned()]);
    // Each criterion's column, numbered: its top value is `__best{i}`.
    let each = |term: fn(usize, &str) -> String| -> String {
        standing.iter().enumerate().map(|(i, column)| term(i, column)).collect()
    };
    let sorted = format!(
        "SELECT *, {}lag(fp) OVER __w AS __previous FROM {parsed} \
         WINDOW __w AS (PARTITION BY {key} ORDER BY {})",
        each(|i, column| format!("first_value({column}) OVER __w AS __best{i}, ")),
        order.join(", ")
    );
    // Null-safe: a tiebreak may be absent, and an absent one ties with an absent one.
    let firsts = format!(
        "SELECT * FROM ({sorted}) WHERE {}(__previous IS NULL OR __previous <> fp)",
        each(|i, column| format!("{column} <=> __best{i} AND "))
    );
    let keyed = format!(
        "SELECT *, max(line) OVER __k AS __latest, count(*) OVER __k AS __events \
         FROM ({firsts}) WINDOW __k AS (PARTITION BY {key})"
    );
    handed_winners(schema, &keyed, "__events > 1")
}

/// [`TopKeys::Limited`]:
///
/// 1. `rank() = 1` by §3's order but the line keeps every line of each key's top
///    standing (Spark keeps only those of each task before the shuffle,
///    `WindowGroupLimit`);
/// 2. an event's first line is the least of its fingerprint's lines there;
/// 3. the winner is the top standing's event of the latest first line, and the key is
///    tied by arrival when the top standing has two events (two first lines).
fn limited_query(schema: &Schema, parsed: &str) -> String {
    let key = format!("f{}", schema.key);
    let standing = rank_order(|by| handed_criterion(schema, by));
    let top = format!(
        "SELECT * FROM (SELECT *, rank() OVER (PARTITION BY {key} ORDER BY {}) AS __top \
         FROM {parsed}) WHERE __top = 1",
        standing.join(", ")
    );
    let first = format!("SELECT *, min(line) OVER (PARTITION BY {key}, fp) AS __first FROM ({top})");
    let keyed = format!(
        "SELECT *, max(__first) OVER __k AS __latest, min(__first) OVER __k AS __earliest \
         FROM ({first}) WINDOW __k AS (PARTITION BY {key})"
    );
    handed_winners(schema, &keyed, "__earliest <> __latest")
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

/// [`KEYS`]' columns from `keyed`, handed-over lines with `__latest`, the winning line of
/// each key: its row where `line` is it, `tied` as `__tied`.
fn handed_winners(schema: &Schema, keyed: &str, tied: &str) -> String {
    let (order_s, order_n) = instant_columns(schema.order_by);
    let (date_s, _) = instant_columns(schema.date_of);
    let published = published_fields(schema, |i| format!("f{i}"), instant_columns);
    format!(
        "SELECT {}, {} AS event_date, line AS __line, {order_s} AS __order_secs, \
         {order_n} AS __order_nanos, {tied} AS __tied, true AS __winner \
         FROM ({keyed}) WHERE line = __latest",
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
    fn many_lines_a_key_limit_before_the_shuffle_few_sort_once() {
        assert_eq!(TopKeys::for_lines_per_key(1.0), TopKeys::Sorted);
        assert_eq!(TopKeys::for_lines_per_key(3.4), TopKeys::Sorted);
        assert_eq!(TopKeys::for_lines_per_key(LIMIT_FROM_LINES_PER_KEY), TopKeys::Limited);
        assert_eq!(TopKeys::for_lines_per_key(100.0), TopKeys::Limited);
    }
}
