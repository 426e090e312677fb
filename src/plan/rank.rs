//! The ranking of CONTRACT.md §3 as one comparator, [`compare`], and the full per-key
//! ranking the console shows, [`rank_key`].
//!
//! Rank 1 is the greatest under [`compare`]: newest `order_by` instant, then highest
//! `tiebreak` (present above absent), then the later line. `row_number` semantics: line
//! numbers are unique, so the order is total and exactly one event ranks first.

use std::cmp::Ordering;

use crate::contract::{Instant, Record, Schema};

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

/// `Greater` when `a` ranks above `b` (§3).
pub fn compare(a: &Event, b: &Event, schema: &Schema) -> Ordering {
    Precedence::of(&a.record, schema)
        .cmp(&Precedence::of(&b.record, schema))
        .then(a.line.cmp(&b.line))
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

/// One key's events ranked, rank 1 first, each with why it lost to the one above.
pub fn rank_key(mut events: Vec<Event>, schema: &Schema) -> Vec<(Event, Option<LostBecause>)> {
    events.sort_by(|a, b| compare(b, a, schema));
    let mut ranked: Vec<(Event, Option<LostBecause>)> = Vec::with_capacity(events.len());
    for event in events {
        let why = ranked.last().map(|(above, _)| {
            let (upper, lower) = (
                Precedence::of(&above.record, schema),
                Precedence::of(&event.record, schema),
            );
            if upper.instant != lower.instant {
                LostBecause::Older
            } else if upper.tiebreak != lower.tiebreak {
                LostBecause::LowerTiebreak
            } else {
                LostBecause::EarlierArrival
            }
        });
        ranked.push((event, why));
    }
    ranked
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
        #[test]
        fn a_packed_instant_unpacks_as_it_was(a in precedence()) {
            prop_assert_eq!(Packed::from(a).instant(), a.instant);
        }
    }
}
