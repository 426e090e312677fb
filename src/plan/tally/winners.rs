//! The winners' last steps, once the input is read: [`order_by_int_key`] orders int keys
//! by a radix sort, and [`copy_in_order`] copies the winners' records in that order into
//! one [`RowSet`] on two threads.

use std::collections::BTreeMap;

use super::Best;
use crate::contract::{Date, row};
use crate::plan::rows::Rows;
use crate::plan::rowset::RowSet;

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

/// What the copy counts of the winners on its way, while each is in cache: the keys whose
/// best is tied (§3), and rows per `event_date` (§4). Counting them after the copy took
/// two more passes over every winner on one core, measured at ~50 ms at 580k keys.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Census {
    pub ties: u64,
    pub dates: BTreeMap<Date, u64>,
}

impl Census {
    fn merge(mut self, other: Census) -> Census {
        self.ties += other.ties;
        for (date, rows) in other.dates {
            *self.dates.entry(date).or_default() += rows;
        }
        self
    }
}

/// Winners [`warm`] loads ahead of their copy.
const COPY_GROUP: usize = 32;

/// Loads the entries of `group`, then the first and last bytes of their records:
/// independent loads the CPU overlaps, where the copy would wait for each entry's miss,
/// then its record's, in turn (the ranking's `warm` does the same). At 580k keys the
/// step from the read's end to the summary went ~120 → ~104 ms (medians of 9 runs), the
/// main thread's CPU in it ~95 → ~79 ms.
fn warm(rows: &Rows, best: &[Best], group: &[u32]) {
    let mut sink = 0u32;
    for &i in group {
        sink ^= best[i as usize].row.room();
    }
    for &i in group {
        let room = rows.room(best[i as usize].row);
        sink ^= u32::from(room.first().copied().unwrap_or(0) ^ room.last().copied().unwrap_or(0));
    }
    std::hint::black_box(sink);
}

/// The records of `best[order]`, copied in that order into one [`RowSet`] by two threads,
/// a half each: the copy (and the faulting-in of its pages) was the longest step after
/// the read, with one core idle. `date_of` is the field whose instant dates a row.
pub(super) fn copy_in_order(
    rows: &Rows,
    best: &[Best],
    order: &[u32],
    fields: usize,
    date_of: usize,
) -> (RowSet, Census) {
    let (first, second) = order.split_at(order.len() / 2);
    // Each half is copied into room enough for it (its slots' room: records and slack),
    // then the second moves down to follow the first.
    let room = |part: &[u32]| -> usize {
        part.iter()
            .map(|&i| best[i as usize].row.room() as usize)
            .sum()
    };
    let first_room = room(first);
    let mut bytes = vec![0u8; first_room + room(second)];
    let mut ends = vec![0usize; order.len()];
    let mut lines = vec![0u64; order.len()];
    // Each winner's entry is read here once (in key order, a cache miss each), for its
    // record, its line and its tie.
    let copy = |part: &[u32], out: &mut [u8], ends: &mut [usize], lines: &mut [u64]| {
        let mut at = 0;
        let mut census = Census::default();
        // Winners in key order tend to share a date: counted here, then in the map.
        let mut run: Option<(Date, u64)> = None;
        let winners = ends.iter_mut().zip(lines.iter_mut()).zip(part);
        for (k, ((end, line), &i)) in winners.enumerate() {
            if k % COPY_GROUP == 0 {
                warm(rows, best, &part[k..part.len().min(k + COPY_GROUP)]);
            }
            let b = &best[i as usize];
            *line = b.line();
            let record = rows.record(b.row, fields);
            out[at..at + record.len()].copy_from_slice(record);
            at += record.len();
            *end = at;
            census.ties += u64::from(b.tied());
            let (start, stop) = row::field_range(record, date_of);
            let Some(date) = row::instant(&record[start..stop]).map(|t| t.utc_date()) else {
                continue;
            };
            run = match run {
                Some((same, n)) if same == date => Some((same, n + 1)),
                Some((other, n)) => {
                    *census.dates.entry(other).or_default() += n;
                    Some((date, 1))
                }
                None => Some((date, 1)),
            };
        }
        if let Some((date, n)) = run {
            *census.dates.entry(date).or_default() += n;
        }
        (at, census)
    };
    let ((first_len, mine), (second_len, theirs)) = {
        let (first_out, second_out) = bytes.split_at_mut(first_room);
        let (first_ends, second_ends) = ends.split_at_mut(first.len());
        let (first_lines, second_lines) = lines.split_at_mut(first.len());
        std::thread::scope(|scope| {
            let other = scope.spawn(|| copy(second, second_out, second_ends, second_lines));
            let mine = copy(first, first_out, first_ends, first_lines);
            let theirs = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (mine, theirs)
        })
    };
    bytes.copy_within(first_room..first_room + second_len, first_len);
    bytes.truncate(first_len + second_len);
    for end in &mut ends[first.len()..] {
        *end += first_len;
    }
    let winners = RowSet::from_parts(fields, bytes, ends, lines);
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
            let mut rows = Rows::default();
            let best: Vec<Best> = winners
                .iter()
                .enumerate()
                .map(|(i, &(day, tied))| {
                    let stamp = day.map_or(Value::Null, |d| {
                        Value::Ts(crate::contract::Instant::from_parts(d * 86_400 + i as i64, 0))
                    });
                    let record: crate::contract::Record = vec![Value::Int(i as i64), stamp].into();
                    let mut bytes = Vec::new();
                    row::push_record(&mut bytes, &record);
                    let line = i as u64 + 1;
                    Best {
                        id: i as u64,
                        line_and_tied: if tied { line | super::super::TIED } else { line },
                        precedence: Packed::from(Precedence { instant: None, tiebreak: None }),
                        row: rows.insert(&bytes),
                        short_key: ShortKey::of(&[]),
                    }
                })
                .collect();
            let order: Vec<u32> = (0..best.len() as u32).collect();
            let (set, census) = copy_in_order(&rows, &best, &order, 2, 1);
            let mut dates = BTreeMap::new();
            for i in 0..set.len() {
                if let Some(instant) = set.instant(i, 1) {
                    *dates.entry(instant.utc_date()).or_default() += 1;
                }
            }
            let ties = winners.iter().filter(|(_, tied)| *tied).count() as u64;
            prop_assert_eq!(census, Census { ties, dates });
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
        /// copied in a shuffled order by two threads: the same rows, bytes and lines as
        /// appending them one by one.
        #[test]
        fn winners_copied_in_halves_equal_winners_appended_in_turn(
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
            let (winners, census) = copy_in_order(&rows, &best, &order, fields, 0);
            prop_assert_eq!(winners, want);
            prop_assert_eq!(census, Census::default(), "no timestamps, no ties");
        }
    }
}
