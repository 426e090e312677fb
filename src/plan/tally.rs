//! [`Tally`]: the streaming accumulator of one input's classified [`Batch`]es, in line
//! order. It counts, keeps every reject and breach (for quarantine), collapses identical
//! retries and flags conflicts (§2, stage one: [`Retries`]), and keeps the best event per
//! key so far (§3) with whether the runner-up ties it (stage two: [`Ranking`]).
//! [`Tally::finish`] turns it into a [`Summary`] whose winners are sorted by key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::batch::{Accepted, Batch, ShortKey};
use super::rank::Precedence;
use super::rowset::RowSet;
use super::tables::{EventTable, KeyTable, Seen};
use crate::contract::{Date, LineIssue, LineReason, Outcome, Schema, Value, row};

/// The line counts of CONTRACT.md §8. A count missing from a stored record is 0: run-log
/// lines written before a count existed (`stale` came with merge mode) still read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    /// Lines in the file (blank included).
    pub lines: u64,
    pub blank: u64,
    /// Accepted lines, identical retries included, conflicting lines not.
    pub accepted: u64,
    /// Reject outcomes only (breaching lines are counted in `by_reason`).
    pub rejected: u64,
    /// Accepted lines that collapsed onto an earlier identical event.
    pub retries: u64,
    /// Distinct keys among the accepted events: the rows a publish writes.
    pub keys: u64,
    /// Keys whose rank-1 and rank-2 events tie on instant and tiebreak (in merge mode,
    /// also winners that tie the published row).
    pub ties_by_arrival: u64,
    /// Merge mode: winners older than their key's published row, dropped (§10.3).
    pub stale: u64,
    /// Every rejected or breaching line by its reason code.
    pub by_reason: BTreeMap<LineReason, u64>,
}

impl Counts {
    /// `code n · code n …` for every reason with lines, for reports.
    pub fn reasons_text(&self) -> String {
        let parts: Vec<String> = self
            .by_reason
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        parts.join(" · ")
    }
}

/// A rejected or breaching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineFinding {
    pub line: u64,
    /// Whether it refuses the whole file.
    pub breach: bool,
    pub issue: LineIssue,
}

/// Events warmed ahead of their merge: enough misses in flight, few enough lines to stay
/// in cache until used.
const WARM_GROUP: usize = 64;

/// The best event of one key so far; its record lives in [`Rows`].
#[derive(Clone, Copy)]
struct Best {
    key_hash: u64,
    line: u64,
    precedence: Precedence,
    /// The runner-up ties the best on instant and tiebreak.
    tied: bool,
    row: Slot,
    /// The key field within the row.
    key: (u32, u32),
    short_key: ShortKey,
}

/// Where a record sits in [`Rows`]: block, offset, length and room.
#[derive(Clone, Copy, Debug)]
struct Slot {
    block: u32,
    offset: u32,
    len: u32,
    room: u32,
}

/// Each key's best record, encoded, in blocks that never move or grow: filling them
/// touches each page of memory once (fresh pages are slow to fault in on these
/// machines). A new best overwrites its key's slot when it fits, which it nearly always
/// does, since a slot has room for 16 more bytes than its first record.
#[derive(Default)]
struct Rows {
    blocks: Vec<Vec<u8>>,
}

const ROW_BLOCK: usize = 4 << 20;
const ROW_SLACK: usize = 16;

impl Rows {
    fn get(&self, slot: Slot) -> &[u8] {
        let start = slot.offset as usize;
        &self.blocks[slot.block as usize][start..start + slot.len as usize]
    }

    fn insert(&mut self, row: &[u8]) -> Slot {
        let room = row.len() + ROW_SLACK;
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.capacity() - b.len() >= room);
        if !fits {
            self.blocks.push(Vec::with_capacity(room.max(ROW_BLOCK)));
        }
        let block = self.blocks.len() - 1;
        let bytes = &mut self.blocks[block];
        let offset = bytes.len();
        bytes.extend_from_slice(row);
        bytes.resize(offset + room, 0);
        Slot {
            block: block as u32,
            offset: offset as u32,
            len: row.len() as u32,
            room: room as u32,
        }
    }

    /// `row` in place of `slot`'s record: the same slot when it has room.
    fn replace(&mut self, slot: Slot, row: &[u8]) -> Slot {
        if row.len() > slot.room as usize {
            return self.insert(row);
        }
        let start = slot.offset as usize;
        self.blocks[slot.block as usize][start..start + row.len()].copy_from_slice(row);
        Slot {
            len: row.len() as u32,
            ..slot
        }
    }
}

/// Accumulates outcomes in line order, in two stages that can run on two threads, one
/// batch behind the other: [`Retries`] tells new events from identical retries and
/// conflicts (§2), [`Ranking`] keeps the best event per key (§3) with the counts and
/// findings. Memory grows with distinct events by 24 bytes each (a 128-bit id hash and a
/// 64-bit fingerprint), not by the events' size, and with keys by their best record.
pub struct Tally<'s> {
    retries: Retries,
    ranking: Ranking<'s>,
}

/// Stage one: every distinct event seen, by id hash, with its values fingerprint.
#[derive(Default)]
pub struct Retries {
    events: EventTable,
    accepted: u64,
    retries: u64,
}

/// What stage one found an accepted line to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    New,
    /// The same event again, values identical: counted, then dropped.
    Retry,
    /// The same event id with other values: a breach, named by stage two.
    Conflict,
}

/// Stage two: the best event of each key, the line counts and the findings.
pub struct Ranking<'s> {
    schema: &'s Schema,
    counts: Counts,
    findings: Vec<LineFinding>,
    /// The best event of each key, by the key's hash: indexes into `best`, so the table
    /// stays small and growing it moves 4 bytes a key.
    by_key: KeyTable,
    best: Vec<Best>,
    rows: Rows,
}

impl Retries {
    /// The verdict on each accepted event of `batch`, in order.
    pub fn mark(&mut self, batch: &Batch) -> Vec<Verdict> {
        let mut verdicts = Vec::with_capacity(batch.events.len());
        for group in batch.events.chunks(WARM_GROUP) {
            // Independent loads the CPU overlaps, where `offer` would wait for each miss.
            let mut sink = 0u64;
            for event in group {
                sink ^= self.events.touch(event.id);
            }
            std::hint::black_box(sink);
            for event in group {
                let verdict = match self.events.offer(event.id, event.fingerprint) {
                    Seen::New => Verdict::New,
                    Seen::Before(f) if f == event.fingerprint => Verdict::Retry,
                    Seen::Before(_) => Verdict::Conflict,
                };
                match verdict {
                    Verdict::New => self.accepted += 1,
                    Verdict::Retry => {
                        self.accepted += 1;
                        self.retries += 1;
                    }
                    Verdict::Conflict => {}
                }
                verdicts.push(verdict);
            }
        }
        verdicts
    }
}

/// The classified and ranked input, before any decision.
#[derive(Debug)]
pub struct Summary {
    pub counts: Counts,
    /// Rejects and breaches, in line order.
    pub findings: Vec<LineFinding>,
    /// The rank-1 event of each key, sorted by key.
    pub winners: RowSet,
    /// Rows per `event_date` among the winners.
    pub dates: BTreeMap<Date, u64>,
}

impl Summary {
    /// The breach on the earliest line, which names a refusal (§5.5).
    pub fn first_breach(&self) -> Option<&LineFinding> {
        self.findings.iter().find(|f| f.breach)
    }
}

impl<'s> Tally<'s> {
    pub fn new(schema: &'s Schema) -> Self {
        Tally {
            retries: Retries::default(),
            ranking: Ranking {
                schema,
                counts: Counts::default(),
                findings: Vec::new(),
                by_key: KeyTable::default(),
                best: Vec::new(),
                rows: Rows::default(),
            },
        }
    }

    /// Expects about `events` distinct events (saves growing the tables as they fill).
    /// Untouched room costs address space, not memory.
    pub fn reserve(&mut self, events: usize) {
        self.retries.events = EventTable::with_capacity(events);
        // Keys are fewer than events: a third is a guess the table may grow past.
        self.ranking.by_key = KeyTable::with_capacity(events / 3);
        self.ranking.best.reserve(events);
    }

    /// Records line `line`'s outcome. Lines must arrive in increasing order.
    pub fn push(&mut self, line: u64, outcome: Outcome) {
        let mut batch = Batch::default();
        batch.push(line, outcome, self.ranking.schema);
        self.push_batch(&batch);
    }

    /// Records a batch classified by [`Batch::classify`]. Batches must arrive in order.
    pub fn push_batch(&mut self, batch: &Batch) {
        let verdicts = self.retries.mark(batch);
        self.ranking.push(batch, &verdicts);
    }

    /// The two stages, to run on two threads: every batch goes through
    /// [`Retries::mark`], then, in the same order, with its verdicts, [`Ranking::push`].
    pub fn into_stages(self) -> (Retries, Ranking<'s>) {
        (self.retries, self.ranking)
    }

    pub fn from_stages(retries: Retries, ranking: Ranking<'s>) -> Self {
        Tally { retries, ranking }
    }

    /// The summary: counts completed, winners sorted by key, dates of the winners.
    pub fn finish(self) -> Summary {
        self.ranking.finish(self.retries)
    }
}

impl Ranking<'_> {
    /// Records a batch and the verdicts [`Retries::mark`] gave its events.
    pub fn push(&mut self, batch: &Batch, verdicts: &[Verdict]) {
        self.counts.lines += batch.lines;
        self.counts.blank += batch.blank;
        self.counts.rejected += batch.rejected;
        for finding in batch.findings.iter().cloned() {
            self.find(finding);
        }
        for (group, verdicts) in batch
            .events
            .chunks(WARM_GROUP)
            .zip(verdicts.chunks(WARM_GROUP))
        {
            self.warm(group);
            for (event, verdict) in group.iter().zip(verdicts) {
                match verdict {
                    Verdict::New => self.accept(event, batch),
                    Verdict::Retry => {}
                    Verdict::Conflict => {
                        let issue = self.conflict(event, batch);
                        self.find(LineFinding {
                            line: event.line,
                            breach: true,
                            issue,
                        });
                    }
                }
            }
        }
    }

    /// Loads, for each event of `group`, its key's slot, then its key's entry: independent
    /// loads the CPU overlaps, where `accept` would wait for each cache miss in turn (the
    /// ranking thread's main cost, measured). The best record itself is not loaded: it is
    /// only written, on a replace, and a store's miss does not stall (loading it too
    /// measured ~4 % slower).
    fn warm(&self, group: &[Accepted]) {
        let mut sink = 0u64;
        for event in group {
            sink ^= self.by_key.touch(event.key_hash);
        }
        for event in group {
            let found = self.by_key.find(event.key_hash, |i| {
                self.best[i as usize].key_hash == event.key_hash
            });
            if let Some(i) = found {
                sink ^= self.best[i as usize].line;
            }
        }
        std::hint::black_box(sink);
    }

    fn find(&mut self, finding: LineFinding) {
        *self
            .counts
            .by_reason
            .entry(finding.issue.reason)
            .or_default() += 1;
        self.findings.push(finding);
    }

    /// A new event: it becomes its key's best, or ties or loses to it.
    fn accept(&mut self, event: &Accepted, batch: &Batch) {
        let key = batch.slice(event.key);
        let row = batch.slice(event.row);
        let relative = (event.key.0 - event.row.0, event.key.1 - event.row.0);
        let key_hash = event.key_hash;
        let (best, rows) = (&mut self.best, &mut self.rows);
        let short_key = event.short_key;
        let found = self.by_key.find(key_hash, |i| {
            let b = &best[i as usize];
            b.key_hash == key_hash
                && b.short_key == short_key
                && (short_key.is_whole() || key_of(rows, b) == key)
        });
        match found {
            None => {
                let index = best.len() as u32;
                best.push(Best {
                    key_hash,
                    line: event.line,
                    precedence: event.precedence,
                    tied: false,
                    row: rows.insert(row),
                    key: relative,
                    short_key,
                });
                self.by_key
                    .insert(key_hash, index, |i| best[i as usize].key_hash);
            }
            Some(index) => {
                let b = &mut best[index as usize];
                let same = event.precedence == b.precedence;
                if (event.precedence, event.line) > (b.precedence, b.line) {
                    *b = Best {
                        line: event.line,
                        precedence: event.precedence,
                        tied: same,
                        row: rows.replace(b.row, row),
                        key: relative,
                        ..*b
                    };
                } else {
                    b.tied |= same;
                }
            }
        }
    }

    /// The conflict issue for `event`, naming the first differing field when the earlier
    /// event is still at hand (it is its key's best so far).
    fn conflict(&self, event: &Accepted, batch: &Batch) -> LineIssue {
        let schema = self.schema;
        let fields = schema.fields.len();
        let record = row::decode(batch.slice(event.row), fields);
        let key = batch.slice(event.key);
        let event_id = &record[schema.event_id];
        let earlier = self
            .by_key
            .find(event.key_hash, |i| {
                key_of(&self.rows, &self.best[i as usize]) == key
            })
            .map(|i| row::decode(self.rows.get(self.best[i as usize].row), fields))
            .filter(|r| r[schema.event_id] == *event_id);
        let field = earlier
            .and_then(|r| r.iter().zip(record.iter()).position(|(a, b)| a != b))
            .map(|i| schema.name(i).to_owned());
        LineIssue {
            reason: LineReason::Conflict,
            field,
            event_id: Some(display_value(event_id)),
        }
    }

    /// The summary, with stage one's counts: winners sorted by key, their dates.
    fn finish(self, retries: Retries) -> Summary {
        let schema = self.schema;
        let fields = schema.fields.len();
        let mut counts = self.counts;
        counts.accepted = retries.accepted;
        counts.retries = retries.retries;
        counts.keys = self.best.len() as u64;
        counts.ties_by_arrival = self.best.iter().filter(|b| b.tied).count() as u64;
        drop(retries);
        drop(self.by_key);
        let (rows, best) = (self.rows, self.best);
        // Sort by key, then copy the winners' encoded records in key order (sequential
        // for the column writers): no record is decoded here. Int keys (the usual case)
        // sort as i64 straight from the entries' inline key bytes.
        let int_keys: Option<Vec<(i64, u32)>> = best
            .iter()
            .enumerate()
            .map(|(i, b)| row::int(&b.short_key.prefix).map(|k| (k, i as u32)))
            .collect();
        let order: Vec<u32> = match int_keys {
            Some(mut keys) => {
                keys.sort_unstable();
                keys.into_iter().map(|(_, i)| i).collect()
            }
            None => {
                let mut keys: Vec<(Value, u32)> = best
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (row::decode_value(key_of(&rows, b)), i as u32))
                    .collect();
                keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                keys.into_iter().map(|(_, i)| i).collect()
            }
        };
        let bytes = best.iter().map(|b| b.row.len as usize).sum();
        let mut winners = RowSet::with_capacity(fields, order.len(), bytes);
        for i in order {
            let b = &best[i as usize];
            winners.push_encoded(b.line, rows.get(b.row));
        }
        drop(best);
        drop(rows);
        let mut dates = BTreeMap::new();
        for i in 0..winners.len() {
            if let Some(instant) = winners.instant(i, schema.date_of) {
                *dates.entry(instant.utc_date()).or_default() += 1;
            }
        }
        let mut findings = self.findings;
        // Conflicts are found after their batch's other findings.
        findings.sort_by_key(|f| f.line);
        Summary {
            counts,
            findings,
            winners,
            dates,
        }
    }
}

/// The encoded key field of `best`'s record.
fn key_of<'r>(rows: &'r Rows, best: &Best) -> &'r [u8] {
    &rows.get(best.row)[best.key.0 as usize..best.key.1 as usize]
}

/// A key or event id as text for reports.
pub fn display_value(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Int(n) => n.to_string(),
        Value::Str(s) => s.to_string(),
        Value::Ts(t) => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::contract::{LineBytes, classify};
    use proptest::prelude::*;
    use std::path::Path;

    fn config() -> Config {
        crate::config::fixtures::orders()
    }

    fn summarise(lines: &[String], schema: &Schema) -> Summary {
        let mut tally = Tally::new(schema);
        for (i, line) in lines.iter().enumerate() {
            tally.push(
                i as u64 + 1,
                classify(LineBytes::Kept(line.as_bytes()), schema),
            );
        }
        tally.finish()
    }

    /// (key, status) of each winner.
    fn winners(summary: &Summary) -> Vec<(Value, Value)> {
        summary
            .winners
            .events()
            .map(|w| (w.record[1].clone(), w.record[2].clone()))
            .collect()
    }

    /// Events of few keys with few instants and seqs, so ties are common; every event
    /// has a distinct id and status, so a winner names exactly one event.
    fn events() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec((0i64..4, 0u32..3, prop::option::of(0i64..3), 0usize..3), 1..25).prop_map(
            |specs| {
                let offsets = ["Z", "+05:30", "-04:00"];
                specs
                    .iter()
                    .enumerate()
                    .map(|(i, (key, minute, seq, offset))| {
                        let (hour, off) = match offsets[*offset] {
                            "Z" => (10, "Z"),
                            "+05:30" => (15, "+05:30"),
                            _ => (6, "-04:00"),
                        };
                        let minute = if *offset == 1 { minute + 30 } else { *minute };
                        let seq = seq.map(|s| format!(r#","seq":{s}"#)).unwrap_or_default();
                        format!(
                            r#"{{"event_id":"e{i}","order_id":{key},"status":"S{i}","updated_at":"2024-03-01T{hour:02}:{minute:02}:00{off}"{seq}}}"#
                        )
                    })
                    .collect()
            },
        )
    }

    proptest! {
        #[test]
        fn winners_ignore_line_order_except_declared_ties(lines in events(), seed in any::<u64>()) {
            let config = config();
            let schema = &config.schema;
            let original = summarise(&lines, schema);
            let mut shuffled = lines.clone();
            let mut state = seed | 1;
            for i in (1..shuffled.len()).rev() {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                shuffled.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let reordered = summarise(&shuffled, schema);
            prop_assert_eq!(original.counts.keys, reordered.counts.keys);
            prop_assert_eq!(&original.dates, &reordered.dates);
            if original.counts.ties_by_arrival == 0 {
                prop_assert_eq!(reordered.counts.ties_by_arrival, 0);
                prop_assert_eq!(winners(&original), winners(&reordered));
            }
        }

        #[test]
        fn retries_collapse_idempotently(lines in events(), copies in 1usize..4) {
            let config = config();
            let schema = &config.schema;
            let once = summarise(&lines, schema);
            let mut repeated = lines.clone();
            for _ in 0..copies {
                repeated.extend(lines.iter().cloned());
            }
            let many = summarise(&repeated, schema);
            prop_assert_eq!(many.counts.retries, (copies * lines.len()) as u64);
            prop_assert_eq!(many.counts.keys, once.counts.keys);
            prop_assert_eq!(winners(&many), winners(&once));
            prop_assert_eq!(many.findings.len(), 0);
        }

        #[test]
        fn classification_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let config = config();
            let _ = classify(LineBytes::Kept(&bytes), &config.schema);
        }

        #[test]
        fn classification_never_panics_on_json_shaped_text(text in r#"\{("[a-z_]{1,10}":("[^"]{0,12}"|-?[0-9]{1,25}|null|true|\[\]|\{\}|"20[0-9]{2}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,12})?(Z|[+-][0-9]{2}:[0-9]{2})?"),?){0,8}\}"#) {
            let config = config();
            let _ = classify(LineBytes::Kept(text.as_bytes()), &config.schema);
        }
    }

    /// The winners' keys (field 1) come out in the order `Value` sorts them.
    fn assert_sorted_by_key(lines: &[String], schema: &Schema, mut keys: Vec<Value>) {
        let summary = summarise(lines, schema);
        let got: Vec<Value> = summary
            .winners
            .events()
            .map(|e| e.record[1].clone())
            .collect();
        keys.sort();
        assert_eq!(got, keys);
    }

    #[test]
    fn winners_come_out_sorted_by_key_int_or_string() {
        let ints = [i64::MAX, -5, 3, -1, 0, i64::MIN, 256];
        let lines: Vec<String> = ints
            .iter()
            .map(|k| format!(r#"{{"event_id":"e{k}","order_id":{k},"status":"S","updated_at":"2024-03-01T10:00:00Z"}}"#))
            .collect();
        let keys = ints.iter().map(|&k| Value::Int(k)).collect();
        assert_sorted_by_key(&lines, &config().schema, keys);

        let text = r#"
product = "orders"
[schema]
key = "order_id"
order_by = "updated_at"
event_id = "event_id"
partition_by_date_of = "updated_at"
[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "string",    required = true }
updated_at = { type = "timestamp", required = true }
"#;
        let config = Config::parse(text, Path::new("/w.toml"), Path::new("/")).unwrap();
        let strings = [
            "b",
            "a",
            "ab",
            "",
            "B",
            "ä",
            "a long key that does not fit inline",
        ];
        let lines: Vec<String> = strings
            .iter()
            .map(|k| {
                format!(
                    r#"{{"event_id":"e{k}","order_id":"{k}","updated_at":"2024-03-01T10:00:00Z"}}"#
                )
            })
            .collect();
        let keys = strings.iter().map(|&k| Value::Str(k.into())).collect();
        assert_sorted_by_key(&lines, &config.schema, keys);
    }

    #[test]
    fn counts_written_before_stale_existed_still_read() {
        let old = r#"{"lines":5,"blank":0,"accepted":5,"rejected":0,"retries":0,"keys":3,"ties_by_arrival":0,"by_reason":{}}"#;
        let counts: Counts = serde_json::from_str(old).expect("an older run-log line reads");
        assert_eq!((counts.lines, counts.keys, counts.stale), (5, 3, 0));
    }

    #[test]
    fn ties_by_arrival_counts_keys_not_events() {
        let config = config();
        let lines: Vec<String> = (0..3)
            .map(|i| format!(r#"{{"event_id":"e{i}","order_id":1,"status":"S","updated_at":"2024-03-01T10:00:00Z"}}"#))
            .collect();
        let summary = summarise(&lines, &config.schema);
        assert_eq!(summary.counts.ties_by_arrival, 1);
        assert_eq!(summary.winners.line(0), 3, "the later line wins a full tie");
    }
}
