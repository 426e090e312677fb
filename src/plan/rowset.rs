//! [`RowSet`]: events' records kept encoded ([`row`]), back to back, with their lines —
//! how the winners travel from the tally to the Parquet writer. Decoding every winner
//! into a boxed [`Record`](crate::contract::Record) cost a fresh allocation a row and was
//! the peak of memory; the writer reads each column straight from the encoding instead.

use crate::contract::{Instant, Value, row};

use super::rank::Event;

/// Encoded records in order, each with its line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowSet {
    fields: usize,
    bytes: Vec<u8>,
    /// Where each row ends in `bytes` (it starts where the previous one ends).
    ends: Vec<usize>,
    lines: Vec<u64>,
}

impl RowSet {
    /// An empty set of records of `fields` fields.
    pub fn new(fields: usize) -> Self {
        RowSet {
            fields,
            ..RowSet::default()
        }
    }

    /// Rows already laid out: `bytes` holds the encoded records back to back, row `i`
    /// ending at `ends[i]`, with its line `lines[i]`.
    pub(super) fn from_parts(
        fields: usize,
        bytes: Vec<u8>,
        ends: Vec<usize>,
        lines: Vec<u64>,
    ) -> Self {
        debug_assert_eq!(ends.len(), lines.len());
        debug_assert!(ends.is_sorted() && ends.last().is_none_or(|&end| end == bytes.len()));
        RowSet {
            fields,
            bytes,
            ends,
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

    /// Appends an encoded record.
    pub fn push_encoded(&mut self, line: u64, encoded: &[u8]) {
        self.bytes.extend_from_slice(encoded);
        self.ends.push(self.bytes.len());
        self.lines.push(line);
    }

    /// Appends an event.
    pub fn push(&mut self, event: &Event) {
        row::push_record(&mut self.bytes, &event.record);
        self.ends.push(self.bytes.len());
        self.lines.push(event.line);
    }

    /// Row `i`'s encoded record.
    pub fn encoded(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
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

    /// Rows `range` as a set of their own.
    pub fn slice(&self, range: std::ops::Range<usize>) -> RowSet {
        let mut set = RowSet::new(self.fields);
        for i in range {
            set.push_encoded(self.lines[i], self.encoded(i));
        }
        set
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
}
