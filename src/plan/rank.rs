//! The ranking of CONTRACT.md §3 as one order, [`Standing`] (an event's [`Packed`]
//! precedence, then its line), with [`compare`] for decoded events, and the full per-key
//! ranking the console shows, [`rank_by`], with why each event lost ([`LostBecause`]).
//!
//! Rank 1 is the greatest [`Standing`]: newest `order_by` instant, then highest
//! `tiebreak` (present above absent), then the later line, as [`RankBy::ORDER`] lists
//! them for the engines that write the order out (the Spark engine's SQL). `row_number`
//! semantics: line numbers are unique, so the order is total and exactly one event ranks
//! first. The plan's ranking keeps each key's greatest as lines arrive in order,
//! comparing packed precedences alone (an equal one is a later line, so it ranks above).

use std::cmp::Ordering;

use crate::contract::{Instant, Record, Schema};

/// What §3 compares, in [`RankBy::ORDER`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankBy {
    /// The `order_by` field's exact instant.
    Instant,
    /// The `tiebreak` field, where the schema declares one.
    Tiebreak,
    /// The event's first line: the later arrival.
    Line,
}

impl RankBy {
    /// §3's order, most significant first: each ranks the greater value above and an
    /// absent value below every present one, and the next decides only a tie.
    /// [`Standing`] orders exactly so (tested).
    pub const ORDER: [RankBy; 3] = [RankBy::Instant, RankBy::Tiebreak, RankBy::Line];
}

/// An accepted event as ranking sees it: its first line and its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub line: u64,
    pub record: Record,
}

/// The part of the order that the producer controls: instant, then tiebreak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Precedence {
    pub instant: Option<Instant>,
    /// `None` (no tiebreak value) sorts below every `Some`.
    pub tiebreak: Option<i64>,
}

impl Precedence {
    /// The precedence of `record` under `schema`.
    pub fn of(record: &Record, schema: &Schema) -> Self {
        Precedence {
            instant: record[schema.order_by].instant(),
            tiebreak: schema.tiebreak.and_then(|i| record[i].int()),
        }
    }
}

/// A [`Precedence`] in 20 bytes that order the same way, for the ranking's entries of
/// one cache line: `[seconds high, seconds low, instant flag · nanos · tiebreak flag,
/// tiebreak high, tiebreak low]`, signed values biased to unsigned. An absent instant or
/// tiebreak packs below every present one, as `Option` orders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Packed([u32; 5]);

impl From<Precedence> for Packed {
    fn from(precedence: Precedence) -> Self {
        let biased = |n: i64| (n as u64) ^ (1 << 63);
        let (secs, instant_bits) = match precedence.instant {
            // Nanoseconds are below 10⁹ < 2³⁰: shifted once they stay under the flag.
            Some(t) => (
                biased(t.secs()),
                (1 << 31) | (t.nanos().min(999_999_999) << 1),
            ),
            None => (0, 0),
        };
        let (tiebreak, tiebreak_bit) = match precedence.tiebreak {
            Some(n) => (biased(n), 1),
            None => (0, 0),
        };
        Packed([
            (secs >> 32) as u32,
            secs as u32,
            instant_bits | tiebreak_bit,
            (tiebreak >> 32) as u32,
            tiebreak as u32,
        ])
    }
}

impl Packed {
    /// Whether both pack the same instant (or both none), whatever their tiebreaks.
    pub fn same_instant(&self, other: &Packed) -> bool {
        self.0[..2] == other.0[..2] && self.0[2] >> 1 == other.0[2] >> 1
    }

    /// The instant packed, if any: an entry's date without reading its record.
    pub fn instant(&self) -> Option<Instant> {
        let [high, low, bits, ..] = self.0;
        if bits >> 31 == 0 {
            return None;
        }
        let secs = ((u64::from(high) << 32 | u64::from(low)) ^ (1 << 63)) as i64;
        Some(Instant::from_parts(secs, (bits >> 1) & ((1 << 30) - 1)))
    }
}

/// An event's place in §3's order: greater ranks above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Standing {
    pub precedence: Packed,
    /// The event's first line: on equal precedences, the later line ranks above.
    pub line: u64,
}

impl Standing {
    /// The standing of `event` under `schema`.
    pub fn of(event: &Event, schema: &Schema) -> Self {
        Standing {
            precedence: Precedence::of(&event.record, schema).into(),
            line: event.line,
        }
    }

    /// Why an event standing here ranks below `above`.
    pub fn lost_to(&self, above: &Standing) -> LostBecause {
        if !self.precedence.same_instant(&above.precedence) {
            LostBecause::Older
        } else if self.precedence != above.precedence {
            LostBecause::LowerTiebreak
        } else {
            LostBecause::EarlierArrival
        }
    }
}

/// `Greater` when `a` ranks above `b` (§3).
pub fn compare(a: &Event, b: &Event, schema: &Schema) -> Ordering {
    Standing::of(a, schema).cmp(&Standing::of(b, schema))
}

/// Why an event is not rank 1, relative to the event ranked just above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LostBecause {
    /// Its `order_by` instant is older.
    Older,
    /// Same instant, lower or missing tiebreak.
    LowerTiebreak,
    /// Same instant and tiebreak: the later line won (a tie by arrival).
    EarlierArrival,
}

impl LostBecause {
    /// Short words for the console.
    pub fn describe(self) -> &'static str {
        match self {
            LostBecause::Older => "older",
            LostBecause::LowerTiebreak => "lower tiebreak",
            LostBecause::EarlierArrival => "earlier arrival on a tie",
        }
    }
}

/// Sorts one key's events rank 1 first, by `standing`.
pub fn rank_by<T>(events: &mut [T], standing: impl Fn(&T) -> Standing) {
    events.sort_unstable_by_key(|e| std::cmp::Reverse(standing(e)));
}

/// One key's events ranked, rank 1 first, each with why it lost to the one above.
pub fn rank_key(events: Vec<Event>, schema: &Schema) -> Vec<(Event, Option<LostBecause>)> {
    let mut standings: Vec<(Standing, Event)> = events
        .into_iter()
        .map(|e| (Standing::of(&e, schema), e))
        .collect();
    rank_by(&mut standings, |(s, _)| *s);
    let mut above: Option<Standing> = None;
    standings
        .into_iter()
        .map(|(standing, event)| {
            let why = above.map(|a| standing.lost_to(&a));
            above = Some(standing);
            (event, why)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn precedence() -> impl Strategy<Value = Precedence> {
        let secs = prop_oneof![any::<i64>(), -2i64..2, Just(i64::MIN), Just(i64::MAX)];
        let nanos = prop_oneof![0u32..1_000_000_000, 0u32..2, Just(999_999_999)];
        let tiebreak = prop_oneof![any::<i64>(), -2i64..2, Just(i64::MIN), Just(i64::MAX)];
        (
            prop::option::of((secs, nanos).prop_map(|(s, n)| Instant::from_parts(s, n))),
            prop::option::of(tiebreak),
        )
            .prop_map(|(instant, tiebreak)| Precedence { instant, tiebreak })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn packed_precedences_order_as_the_precedences_do(a in precedence(), b in precedence()) {
            prop_assert_eq!(Packed::from(a).cmp(&Packed::from(b)), a.cmp(&b), "{:?} {:?}", a, b);
        }

        /// The instant comes back out as it went in, present or not, whatever the
        /// tiebreak beside it.
        /// Why one lost to another reads the same off the packed precedences.
        #[test]
        fn packed_precedences_tell_the_instant_apart_from_the_tiebreak(
            a in precedence(),
            b in precedence(),
        ) {
            prop_assert_eq!(Packed::from(a).same_instant(&Packed::from(b)), a.instant == b.instant);
        }

        /// [`Standing`] is [`RankBy::ORDER`] applied criterion by criterion.
        #[test]
        fn standings_order_as_rank_by_lists(
            a in precedence(),
            b in precedence(),
            lines in (0u64..3, 0u64..3),
        ) {
            let (x, y) = (
                Standing { precedence: a.into(), line: lines.0 },
                Standing { precedence: b.into(), line: lines.1 },
            );
            let by_order = RankBy::ORDER
                .into_iter()
                .map(|by| match by {
                    RankBy::Instant => a.instant.cmp(&b.instant),
                    RankBy::Tiebreak => a.tiebreak.cmp(&b.tiebreak),
                    RankBy::Line => lines.0.cmp(&lines.1),
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal);
            prop_assert_eq!(x.cmp(&y), by_order, "{:?} {:?} {:?}", a, b, lines);
        }

        #[test]
        fn a_packed_instant_unpacks_as_it_was(a in precedence()) {
            prop_assert_eq!(Packed::from(a).instant(), a.instant);
        }
    }
}
