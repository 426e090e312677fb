//! The winners' last steps, once the input is read: [`order_by_int_key`] orders int keys
//! by a radix sort, and [`place_in_order`] makes the winners one [`RowSet`] in that order,
//! their records left where the ranking kept them, on two threads.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Best;
use crate::contract::{Date, row};
use crate::engine::local::rows::Rows;
use crate::engine::local::rowset::{RowSet, Spot};
use crate::store::dataset::add_hours;

/// Bits of a key sorted per pass of [`radix_sort`]: 2,048 counters stay in L1.
const RADIX_BITS: u32 = 11;

/// `0..n` ordered by `key` (ties by index), or `None` if a key is not an int. An LSD
/// radix sort on each key's offset from the smallest, with only as many passes as the
/// keys' span needs (two for order ids a million apart). Offsets under 2³² ride in the
/// top half of one `u64` with the index below: 8 bytes an entry, not 16.
pub(super) fn order_by_int_key(n: usize, key: impl Fn(usize) -> Option<i64>) -> Option<Vec<u32>> {
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    for i in 0..n {
        let k = key(i)?;
        (min, max) = (min.min(k), max.max(k));
    }
    let offset = |i: usize| key(i).map_or(0, |k| k.wrapping_sub(min) as u64);
    let bits = u64::BITS - max.wrapping_sub(min).cast_unsigned().leading_zeros();
    let bits = if n == 0 { 0 } else { bits };
    if bits <= 32 {
        let packed: Vec<u64> = (0..n).map(|i| offset(i) << 32 | i as u64).collect();
        let sorted = radix_sort(packed, bits, |v, shift| v >> 32 >> shift);
        Some(sorted.into_iter().map(|v| v as u32).collect())
    } else {
        let pairs: Vec<(u64, u32)> = (0..n).map(|i| (offset(i), i as u32)).collect();
        let sorted = radix_sort(pairs, bits, |(k, _), shift| k >> shift);
        Some(sorted.into_iter().map(|(_, i)| i).collect())
    }
}

/// `items` sorted by their `bits`-bit keys (`key(item, shift)`: the key shifted right by
/// `shift`), stably, [`RADIX_BITS`] a pass.
fn radix_sort<T: Copy + Default>(
    mut items: Vec<T>,
    bits: u32,
    key: impl Fn(T, u32) -> u64,
) -> Vec<T> {
    let digit = |item: T, shift: u32| (key(item, shift) & ((1 << RADIX_BITS) - 1)) as usize;
    let mut out = vec![T::default(); items.len()];
    let mut shift = 0;
    while shift < bits {
        let mut starts = vec![0usize; 1 << RADIX_BITS];
        for &item in &items {
            starts[digit(item, shift)] += 1;
        }
        let mut next = 0;
        for start in &mut starts {
            let count = *start;
            *start = next;
            next += count;
        }
        for &item in &items {
            let at = &mut starts[digit(item, shift)];
            out[*at] = item;
            *at += 1;
        }
        std::mem::swap(&mut items, &mut out);
        shift += RADIX_BITS;
    }
    items
}

/// What the placing counts of the winners on its way, while each entry is in cache: the
/// keys whose best is tied (§3), and rows per `event_date` (§4) and per hour of it,
/// instead of more passes over every winner on one core.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Census {
    pub ties: u64,
    pub dates: BTreeMap<Date, u64>,
    /// Rows per `event_date` by UTC hour of their date's instant.
    pub hours: BTreeMap<Date, [u64; 24]>,
}

/// Winners of one date in a row: winners in key order tend to share a date, so the maps
/// are touched once a run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    date: Date,
    rows: u64,
    hours: [u64; 24],
}

impl Census {
    /// Counts a winner whose date's instant is `instant`, in `run` first.
    fn add(&mut self, run: &mut Option<Run>, instant: crate::contract::Instant) {
        let date = instant.utc_date();
        let hour = instant.hour_of_day();
        match run {
            Some(same) if same.date == date => {
                same.rows += 1;
                same.hours[hour] += 1;
            }
            _ => {
                self.end(run.take());
                let mut hours = [0; 24];
                hours[hour] = 1;
                *run = Some(Run {
                    date,
                    rows: 1,
                    hours,
                });
            }
        }
    }

    fn end(&mut self, run: Option<Run>) {
        if let Some(run) = run {
            *self.dates.entry(run.date).or_default() += run.rows;
            add_hours(self.hours.entry(run.date).or_insert([0; 24]), run.hours);
        }
    }

    fn merge(mut self, other: Census) -> Census {
        self.ties += other.ties;
        for (date, rows) in other.dates {
            *self.dates.entry(date).or_default() += rows;
        }
        for (date, by_hour) in other.hours {
            add_hours(self.hours.entry(date).or_insert([0; 24]), by_hour);
        }
        self
    }
}

/// Winners [`warm`] loads ahead of their placing.
const PLACE_GROUP: usize = 32;

/// Where a winner's `event_date` comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum DateOf {
    /// The `order_by` instant in its entry (the date field is the `order_by` field): its
    /// record is not read at all.
    Precedence,
    /// Field `index` of its record.
    Field(usize),
}

/// The census alone, for a plan that keeps no records: each date is its winner's
/// `order_by` instant's ([`DateOf::Precedence`]), and the entries are read in place.
pub(super) fn count(best: &[Best]) -> Census {
    let mut census = Census::default();
    let mut run = None;
    for b in best {
        census.ties += u64::from(b.tied());
        if let Some(instant) = b.precedence.instant() {
            census.add(&mut run, instant);
        }
    }
    census.end(run);
    census
}

/// Loads the entries of `group`, then (when `records`) the first bytes of their records:
/// independent loads the CPU overlaps, where the placing would wait for each entry's
/// miss, then its record's, in turn (the ranking's `warm` does the same).
fn warm(rows: &Rows, best: &[Best], group: &[u32], records: bool) {
    let mut sink = 0u32;
    for &i in group {
        sink ^= best[i as usize].row.room();
    }
    if records {
        for &i in group {
            let room = rows.room(best[i as usize].row);
            sink ^= u32::from(room.first().copied().unwrap_or(0));
        }
    }
    std::hint::black_box(sink);
}

/// The winners `best[order]` as a [`RowSet`] in that order, their records left in `rows`'
/// blocks (no copy: the encoders gather them a block at a time), with the census. Two
/// threads take a half each: each winner's entry is a cache miss in key order, and its
/// record another unless its date comes from its entry ([`DateOf::Precedence`]).
pub(super) fn place_in_order(
    rows: Rows,
    best: &[Best],
    order: &[u32],
    fields: usize,
    date_of: DateOf,
) -> (RowSet, Census) {
    let (first, second) = order.split_at(order.len() / 2);
    let mut spots = vec![Spot::default(); order.len()];
    let mut lines = vec![0u64; order.len()];
    let place = |part: &[u32], spots: &mut [Spot], lines: &mut [u64]| {
        let mut census = Census::default();
        // Winners in key order tend to share a date: counted here, then in the map.
        let mut run: Option<Run> = None;
        let winners = spots.iter_mut().zip(lines.iter_mut()).zip(part);
        for (k, ((spot, line), &i)) in winners.enumerate() {
            if k % PLACE_GROUP == 0 {
                let group = &part[k..part.len().min(k + PLACE_GROUP)];
                warm(&rows, best, group, matches!(date_of, DateOf::Field(_)));
            }
            let b = &best[i as usize];
            *line = b.line();
            *spot = b.row.spot();
            census.ties += u64::from(b.tied());
            let instant = match date_of {
                DateOf::Precedence => b.precedence.instant(),
                DateOf::Field(index) => {
                    let record = rows.record(b.row, fields);
                    let (start, stop) = row::field_range(record, index);
                    row::instant(&record[start..stop])
                }
            };
            if let Some(instant) = instant {
                census.add(&mut run, instant);
            }
        }
        census.end(run);
        census
    };
    let (mine, theirs) = {
        let (first_spots, second_spots) = spots.split_at_mut(first.len());
        let (first_lines, second_lines) = lines.split_at_mut(first.len());
        std::thread::scope(|scope| {
            let other = scope.spawn(|| place(second, second_spots, second_lines));
            let mine = place(first, first_spots, first_lines);
            let theirs = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (mine, theirs)
        })
    };
    let blocks = Arc::from(rows.into_blocks());
    let winners = RowSet::placed(fields, blocks, spots, lines);
    (winners, mine.merge(theirs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Value, row};
    use crate::plan::batch::ShortKey;
    use crate::plan::rank::{Packed, Precedence};
    use proptest::prelude::*;

    proptest! {
        /// Ties and rows per date, counted on the way by both threads, equal a count over
        /// the winners afterwards: dates in runs and alone, null dates, tied and not.
        #[test]
        fn the_census_counts_what_a_pass_over_the_winners_counts(
            winners in prop::collection::vec((prop::option::of(0i64..4), any::<bool>()), 0..300),
        ) {
            // The order_by instant is the record's, so both date sources must agree.
            let tally = || {
                let mut rows = Rows::default();
                let best: Vec<Best> = winners
                    .iter()
                    .enumerate()
                    .map(|(i, &(day, tied))| {
                        let instant = day.map(|d| {
                            crate::contract::Instant::from_parts(d * 86_400 + i as i64 * 997, 0)
                        });
                        let stamp = instant.map_or(Value::Null, Value::Ts);
                        let record: crate::contract::Record =
                            vec![Value::Int(i as i64), stamp].into();
                        let mut bytes = Vec::new();
                        row::push_record(&mut bytes, &record);
                        let line = i as u64 + 1;
                        Best {
                            id: i as u64,
                            line_and_tied: if tied { line | super::super::TIED } else { line },
                            precedence: Packed::from(Precedence { instant, tiebreak: None }),
                            row: rows.insert(&bytes),
                            short_key: ShortKey::of(&[]),
                        }
                    })
                    .collect::<Vec<_>>();
                (rows, best)
            };
            let (rows, best) = tally();
            let order: Vec<u32> = (0..best.len() as u32).collect();
            let (set, census) = place_in_order(rows, &best, &order, 2, DateOf::Field(1));
            let (mut dates, mut hours) = (BTreeMap::new(), BTreeMap::new());
            for i in 0..set.len() {
                if let Some(instant) = set.instant(i, 1) {
                    *dates.entry(instant.utc_date()).or_default() += 1;
                    hours.entry(instant.utc_date()).or_insert([0u64; 24])[instant.hour_of_day()] += 1;
                }
            }
            let ties = winners.iter().filter(|(_, tied)| *tied).count() as u64;
            prop_assert_eq!(&census, &Census { ties, dates, hours });
            let (rows, best) = tally();
            let (_, from_entries) = place_in_order(rows, &best, &order, 2, DateOf::Precedence);
            prop_assert_eq!(from_entries, census);
        }

        #[test]
        fn int_keys_are_ordered_as_a_comparison_sort_orders_them(
            keys in prop::collection::vec(
                prop_oneof![any::<i64>(), -3i64..3, Just(i64::MIN), Just(i64::MAX), 1_000_000i64..1_003_000],
                0..3000,
            ),
            narrow in any::<bool>(),
        ) {
            // Narrow: every key within 2³² of the others (the packed path); wide: any.
            let keys: Vec<i64> = if narrow { keys.iter().map(|k| k >> 33).collect() } else { keys };
            let mut want: Vec<u32> = (0..keys.len() as u32).collect();
            want.sort_by_key(|&i| (keys[i as usize], i));
            prop_assert_eq!(order_by_int_key(keys.len(), |i| Some(keys[i])), Some(want));
        }

        #[test]
        fn a_key_that_is_not_an_int_orders_nothing(at in 0usize..10) {
            prop_assert_eq!(order_by_int_key(10, |i| (i != at).then_some(i as i64)), None);
        }

        /// Records of mixed lengths, some replaced by shorter ones (their slots keep slack),
        /// placed in a shuffled order by two threads: the same rows, bytes and lines as
        /// appending them one by one.
        #[test]
        fn winners_placed_in_halves_equal_winners_appended_in_turn(
            texts in prop::collection::vec(("[a-z]{0,40}", prop::option::of("[a-z]{0,8}")), 0..200),
            seed in any::<u64>(),
        ) {
            let fields = 2;
            let encode = |text: &str, n: i64| {
                let record: crate::contract::Record = vec![Value::Int(n), Value::Str(text.into())].into();
                let mut bytes = Vec::new();
                row::push_record(&mut bytes, &record);
                bytes
            };
            let mut rows = Rows::default();
            let best: Vec<Best> = texts
                .iter()
                .enumerate()
                .map(|(i, (text, shorter))| {
                    let mut slot = rows.insert(&encode(text, i as i64));
                    if let Some(shorter) = shorter {
                        slot = rows.replace(slot, &encode(shorter, i as i64));
                    }
                    Best {
                        id: i as u64,
                        line_and_tied: i as u64 + 1,
                        precedence: Packed::from(Precedence {
                            instant: None,
                            tiebreak: None,
                        }),
                        row: slot,
                        short_key: ShortKey::of(&[]),
                    }
                })
                .collect();
            let mut order: Vec<u32> = (0..best.len() as u32).collect();
            let mut state = seed | 1;
            for i in (1..order.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                order.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let mut want = RowSet::new(fields);
            for &i in &order {
                let b = &best[i as usize];
                want.push_encoded(b.line(), rows.record(b.row, fields));
            }
            let (winners, census) = place_in_order(rows, &best, &order, fields, DateOf::Field(0));
            prop_assert_eq!(winners, want);
            prop_assert_eq!(census, Census::default(), "no timestamps, no ties");
        }
    }
}
