//! [`RowSet`]: events' records kept encoded ([`row`]), back to back, with their lines —
//! how the winners travel from the tally to the Parquet writer. Decoding every winner
//! into a boxed [`Record`](crate::contract::Record) cost a fresh allocation a row and was
//! the peak of memory; the writer reads each column straight from the encoding instead.

use std::sync::Arc;

use crate::contract::{Instant, Value, row};

use crate::plan::rank::Event;

/// Encoded records in order, each with its line.
#[derive(Clone, Default)]
pub struct RowSet {
    fields: usize,
    store: Store,
    lines: Vec<u64>,
}

/// Where the records are.
#[derive(Clone)]
enum Store {
    /// Back to back: row `i` ends at `ends[i]` and starts where the previous one ends.
    Packed { bytes: Vec<u8>, ends: Vec<usize> },
    /// Left in the blocks the tally ranked them in, row `i` at `spots[i]`: the winners
    /// of a landing, which a copy into key order would fault in again as fresh pages.
    Placed {
        blocks: Arc<[Vec<u8>]>,
        spots: Vec<Spot>,
    },
}

impl Default for Store {
    fn default() -> Self {
        Store::Packed {
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }
}

/// A record in a [`Store::Placed`]'s blocks: block, offset and the bytes reserved for it
/// (its record, then slack). The record's own length is read from its encoding when it
/// is read: the step that places the winners then need not touch their records.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Spot {
    pub block: u32,
    pub offset: u32,
    pub room: u32,
}

impl RowSet {
    /// An empty set of records of `fields` fields.
    pub fn new(fields: usize) -> Self {
        RowSet {
            fields,
            ..RowSet::default()
        }
    }

    /// Rows left where they are: row `i` is `spots[i]` of `blocks`, with its line
    /// `lines[i]`.
    pub(super) fn placed(
        fields: usize,
        blocks: Arc<[Vec<u8>]>,
        spots: Vec<Spot>,
        lines: Vec<u64>,
    ) -> Self {
        debug_assert_eq!(spots.len(), lines.len());
        RowSet {
            fields,
            store: Store::Placed { blocks, spots },
            lines,
        }
    }

    /// The events' records, encoded.
    pub fn from_events<'e>(fields: usize, events: impl IntoIterator<Item = &'e Event>) -> Self {
        let mut set = RowSet::new(fields);
        for event in events {
            set.push(event);
        }
        set
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Fields in each record.
    pub fn fields(&self) -> usize {
        self.fields
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Empties the set, keeping its memory when its records are its own.
    pub fn clear(&mut self) {
        self.lines.clear();
        match &mut self.store {
            Store::Packed { bytes, ends } => {
                bytes.clear();
                ends.clear();
            }
            Store::Placed { .. } => self.store = Store::default(),
        }
    }

    /// The records back to back, for appending: a placed set is copied out first.
    fn packed_mut(&mut self) -> (&mut Vec<u8>, &mut Vec<usize>) {
        if matches!(self.store, Store::Placed { .. }) {
            let mut bytes = Vec::new();
            let mut ends = Vec::with_capacity(self.len());
            for i in 0..self.len() {
                bytes.extend_from_slice(self.encoded(i));
                ends.push(bytes.len());
            }
            self.store = Store::Packed { bytes, ends };
        }
        match &mut self.store {
            Store::Packed { bytes, ends } => (bytes, ends),
            Store::Placed { .. } => unreachable!("copied out above"),
        }
    }

    /// Appends an encoded record.
    pub fn push_encoded(&mut self, line: u64, encoded: &[u8]) {
        let (bytes, ends) = self.packed_mut();
        bytes.extend_from_slice(encoded);
        ends.push(bytes.len());
        self.lines.push(line);
    }

    /// Appends an event.
    pub fn push(&mut self, event: &Event) {
        let (bytes, ends) = self.packed_mut();
        row::push_record(bytes, &event.record);
        ends.push(bytes.len());
        self.lines.push(event.line);
    }

    /// Row `i`'s encoded record.
    pub fn encoded(&self, i: usize) -> &[u8] {
        match &self.store {
            Store::Packed { bytes, ends } => {
                let start = if i == 0 { 0 } else { ends[i - 1] };
                &bytes[start..ends[i]]
            }
            Store::Placed { blocks, spots } => {
                let Spot {
                    block,
                    offset,
                    room,
                } = spots[i];
                let start = offset as usize;
                let room = &blocks[block as usize][start..start + room as usize];
                &room[..row::record_len(room, self.fields)]
            }
        }
    }

    /// Loads the first byte of each placed record of `range`, and of its second cache line
    /// when it has one: independent loads the CPU overlaps, ahead of reading records
    /// scattered over their blocks. A packed set is already in order: nothing to do.
    pub fn warm(&self, range: std::ops::Range<usize>) {
        let Store::Placed { blocks, spots } = &self.store else {
            return;
        };
        let mut sink = 0u8;
        for spot in &spots[range] {
            let block = &blocks[spot.block as usize];
            let (start, room) = (spot.offset as usize, spot.room as usize);
            // The record's first line and, for one of more than a line, its next.
            sink ^= block.get(start).copied().unwrap_or(0);
            if room > 64 {
                sink ^= block.get(start + 64).copied().unwrap_or(0);
            }
        }
        std::hint::black_box(sink);
    }

    /// Row `i`'s line.
    pub fn line(&self, i: usize) -> u64 {
        self.lines[i]
    }

    /// The encoding of field `index` of row `i`.
    pub fn field(&self, i: usize, index: usize) -> &[u8] {
        let encoded = self.encoded(i);
        let (start, end) = row::field_range(encoded, index);
        &encoded[start..end]
    }

    /// Field `index` of row `i`.
    pub fn value(&self, i: usize, index: usize) -> Value {
        row::decode_value(self.field(i, index))
    }

    /// Field `index` of row `i`, if it is a timestamp.
    pub fn instant(&self, i: usize, index: usize) -> Option<Instant> {
        row::instant(self.field(i, index))
    }

    /// Row `i` as an event.
    pub fn event(&self, i: usize) -> Event {
        Event {
            line: self.lines[i],
            record: row::decode(self.encoded(i), self.fields),
        }
    }

    /// Every row as an event, in order.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        (0..self.len()).map(|i| self.event(i))
    }

    /// Rows `picked`, in that order, as a set of their own: placed records stay where
    /// they are (the blocks are shared), packed ones are copied.
    pub fn select(&self, picked: &[usize]) -> RowSet {
        let lines = picked.iter().map(|&i| self.lines[i]).collect();
        match &self.store {
            Store::Placed { blocks, spots } => RowSet {
                fields: self.fields,
                store: Store::Placed {
                    blocks: Arc::clone(blocks),
                    spots: picked.iter().map(|&i| spots[i]).collect(),
                },
                lines,
            },
            Store::Packed { .. } => {
                let mut set = RowSet::new(self.fields);
                for &i in picked {
                    set.push_encoded(self.lines[i], self.encoded(i));
                }
                set
            }
        }
    }

    /// Rows `range` as a set of their own.
    pub fn slice(&self, range: std::ops::Range<usize>) -> RowSet {
        self.select(&range.collect::<Vec<_>>())
    }
}

/// Equal when they hold the same records with the same lines, wherever the records are.
impl PartialEq for RowSet {
    fn eq(&self, other: &Self) -> bool {
        self.fields == other.fields
            && self.lines == other.lines
            && (0..self.len()).all(|i| self.encoded(i) == other.encoded(i))
    }
}

impl Eq for RowSet {}

impl std::fmt::Debug for RowSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..self.len()).map(|i| (self.lines[i], self.encoded(i))))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Record;

    fn event(line: u64, values: Vec<Value>) -> Event {
        let record: Record = values.into_iter().collect();
        Event { line, record }
    }

    #[test]
    fn events_go_in_and_come_out_the_same_field_by_field() {
        let events = vec![
            event(3, vec![Value::Str("e1".into()), Value::Int(7), Value::Null]),
            event(
                9,
                vec![
                    Value::Str("".into()),
                    Value::Int(-1),
                    Value::Ts(Instant::from_parts(5, 6)),
                ],
            ),
        ];
        let set = RowSet::from_events(3, &events);
        assert_eq!(set.len(), 2);
        assert_eq!(set.events().collect::<Vec<_>>(), events);
        assert_eq!(set.value(1, 1), Value::Int(-1));
        assert_eq!(set.instant(1, 2), Some(Instant::from_parts(5, 6)));
        assert_eq!(set.instant(0, 2), None);
        assert_eq!(set.line(1), 9);
        assert_eq!(set.slice(1..2).events().collect::<Vec<_>>(), events[1..]);
    }

    /// Records left in the ranking's blocks (one replaced by a shorter one, so its slot
    /// keeps slack after it) read as the same records packed; appending to a placed set
    /// copies it out first and keeps every row; clearing empties it.
    #[test]
    fn placed_rows_read_as_the_same_rows_packed() {
        let events: Vec<Event> = (0..5i64)
            .map(|i| {
                let text = "x".repeat(i as usize * 7);
                event(i as u64 + 10, vec![Value::Str(text.into()), Value::Int(i)])
            })
            .collect();
        let encode = |event: &Event| {
            let mut bytes = Vec::new();
            row::push_record(&mut bytes, &event.record);
            bytes
        };
        let mut rows = super::super::rows::Rows::default();
        let mut slots: Vec<_> = events.iter().map(|e| rows.insert(&encode(e))).collect();
        let shorter = event(99, vec![Value::Str("".into()), Value::Int(4)]);
        slots[4] = rows.replace(slots[4], &encode(&shorter));
        let order = [3usize, 0, 4, 1];
        let want: Vec<&Event> = order
            .iter()
            .map(|&i| if i == 4 { &shorter } else { &events[i] })
            .collect();
        let spots = order.iter().map(|&i| slots[i].spot()).collect();
        let lines = want.iter().map(|e| e.line).collect();
        let mut placed = RowSet::placed(2, Arc::from(rows.into_blocks()), spots, lines);
        let packed = RowSet::from_events(2, want.iter().copied());
        assert_eq!(placed, packed);
        assert_eq!(
            placed.encoded(2),
            encode(&shorter),
            "the slack is not the record's"
        );
        assert_eq!(placed.value(0, 0), Value::Str("x".repeat(21).into()));
        let picked = [2, 0];
        let want_picked = RowSet::from_events(2, picked.iter().map(|&i| want[i]));
        assert_eq!(placed.select(&picked), want_picked);
        assert!(matches!(placed.select(&picked).store, Store::Placed { .. }));
        assert_eq!(packed.select(&picked), want_picked);
        placed.warm(0..placed.len());
        placed.push(&events[2]);
        let mut more = packed.clone();
        more.push(&events[2]);
        assert_eq!(placed, more);
        assert!(matches!(placed.store, Store::Packed { .. }));
        placed.clear();
        assert_eq!(placed, RowSet::new(2));
    }
}
