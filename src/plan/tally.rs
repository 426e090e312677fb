//! [`Tally`]: the streaming accumulator of one input's outcomes, in line order. It counts,
//! keeps every reject and breach (for quarantine), collapses identical retries and flags
//! conflicts (§2), and keeps the best event per key so far (§3) with whether the runner-up
//! ties it. [`Tally::finish`] turns it into a [`Summary`] whose winners are sorted by key.

use std::collections::BTreeMap;
use std::hash::Hash;

use hashbrown::{HashTable, hash_table};
use xxhash_rust::xxh3::{Xxh3, xxh3_64_with_seed, xxh3_128_with_seed};

use serde::{Deserialize, Serialize};

use super::rank::{self, Event, Precedence};
use crate::contract::{Date, LineIssue, LineReason, Outcome, Record, Schema, Value};

/// The line counts of CONTRACT.md §8.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// The best event of one key so far.
struct Best {
    key_hash: u64,
    event: Event,
    /// The runner-up ties the best on instant and tiebreak.
    tied: bool,
}

/// Hashes for the identity of events (their id), their sameness (all values) and their
/// key, computed by the threads that classify lines so the merging thread only compares.
/// Ids are kept as 128-bit xxh3 hashes and values as 64-bit fingerprints, so memory grows
/// with distinct events by ~24 bytes each, not by the events' size.
#[derive(Clone, Debug, Default)]
pub struct Hashers;

/// A classified line with the hashes the tally needs.
#[derive(Clone, Debug)]
pub struct Prepared {
    outcome: Outcome,
    /// For an accepted line: its hashes.
    identity: Option<Identity>,
}

#[derive(Clone, Copy, Debug)]
struct Identity {
    event: u128,
    fingerprint: u64,
    key: u64,
}

const ID_SEED: u64 = 0x5748_4152_465f_4944; // "WHARF_ID"
const VALUES_SEED: u64 = 0x5748_4152_465f_5653;
const KEY_SEED: u64 = 0x5748_4152_465f_4b59;

/// A 64-bit hash of one value, distinct across variants (a string "1" is not the int 1).
fn value_hash(seed: u64, value: &Value) -> u64 {
    match value {
        Value::Null => xxh3_64_with_seed(b"", seed ^ 1),
        Value::Int(n) => xxh3_64_with_seed(&n.to_le_bytes(), seed ^ 2),
        Value::Str(s) => xxh3_64_with_seed(s.as_bytes(), seed ^ 3),
        Value::Ts(t) => {
            let mut bytes = [0u8; 12];
            bytes[..8].copy_from_slice(&t.secs().to_le_bytes());
            bytes[8..].copy_from_slice(&t.nanos().to_le_bytes());
            xxh3_64_with_seed(&bytes, seed ^ 4)
        }
    }
}

fn hash_with<T: Hash + ?Sized>(seed: u64, value: &T) -> Xxh3 {
    let mut hasher = Xxh3::with_seed(seed);
    value.hash(&mut hasher);
    hasher
}

impl Hashers {
    /// Attaches the hashes to an accepted outcome.
    pub fn prepare(&self, outcome: Outcome, schema: &Schema) -> Prepared {
        let identity = match &outcome {
            Outcome::Accepted(record) => Some(self.identity(record, schema)),
            _ => None,
        };
        Prepared { outcome, identity }
    }

    fn identity(&self, record: &Record, schema: &Schema) -> Identity {
        let fingerprint = record.iter().fold(VALUES_SEED, |acc, value| {
            acc.rotate_left(5) ^ value_hash(acc, value)
        });
        Identity {
            event: match &record[schema.event_id] {
                Value::Str(s) => xxh3_128_with_seed(s.as_bytes(), ID_SEED),
                other => hash_with(ID_SEED, other).digest128(),
            },
            fingerprint,
            key: value_hash(KEY_SEED, &record[schema.key]),
        }
    }
}

/// Accumulates outcomes in line order.
pub struct Tally<'s> {
    schema: &'s Schema,
    hashers: Hashers,
    counts: Counts,
    findings: Vec<LineFinding>,
    /// Every distinct event seen: (id hash, values fingerprint).
    fingerprints: HashTable<(u128, u64)>,
    /// The best event of each key, found by the key's hash.
    best: HashTable<Best>,
}

/// The classified and ranked input, before any decision.
#[derive(Debug)]
pub struct Summary {
    pub counts: Counts,
    /// Rejects and breaches, in line order.
    pub findings: Vec<LineFinding>,
    /// The rank-1 event of each key, sorted by key.
    pub winners: Vec<Event>,
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
            schema,
            hashers: Hashers,
            counts: Counts::default(),
            findings: Vec::new(),
            fingerprints: HashTable::new(),
            best: HashTable::new(),
        }
    }

    /// Expects about `events` distinct events (saves rehashing a large table).
    pub fn reserve(&mut self, events: usize) {
        self.fingerprints.reserve(events, |(id, _)| *id as u64);
    }

    /// The hashers to prepare lines with (see [`Tally::push_prepared`]).
    pub fn hashers(&self) -> &Hashers {
        &self.hashers
    }

    /// Records line `line`'s outcome. Lines must arrive in increasing order.
    pub fn push(&mut self, line: u64, outcome: Outcome) {
        let prepared = self.hashers.prepare(outcome, self.schema);
        self.push_prepared(line, prepared);
    }

    /// Records a line prepared with [`Tally::hashers`]. Lines must arrive in order.
    pub fn push_prepared(&mut self, line: u64, prepared: Prepared) {
        self.counts.lines += 1;
        match (prepared.outcome, prepared.identity) {
            (Outcome::Blank, _) => self.counts.blank += 1,
            (Outcome::Rejected(issue), _) => {
                self.counts.rejected += 1;
                self.find(line, false, issue);
            }
            (Outcome::Breach(issue), _) => self.find(line, true, issue),
            (Outcome::Accepted(record), identity) => {
                let identity =
                    identity.unwrap_or_else(|| self.hashers.identity(&record, self.schema));
                self.accept(line, record, identity)
            }
        }
    }

    fn find(&mut self, line: u64, breach: bool, issue: LineIssue) {
        *self.counts.by_reason.entry(issue.reason).or_default() += 1;
        self.findings.push(LineFinding {
            line,
            breach,
            issue,
        });
    }

    fn accept(&mut self, line: u64, record: Record, identity: Identity) {
        let schema = self.schema;
        let Identity {
            event: id,
            fingerprint,
            key: key_hash,
        } = identity;
        match self
            .fingerprints
            .entry(id as u64, |(seen, _)| *seen == id, |(seen, _)| *seen as u64)
        {
            hash_table::Entry::Occupied(seen) if seen.get().1 == fingerprint => {
                self.counts.accepted += 1;
                self.counts.retries += 1;
                return;
            }
            hash_table::Entry::Occupied(_) => {
                let issue = self.conflict(&record, key_hash);
                self.find(line, true, issue);
                return;
            }
            hash_table::Entry::Vacant(slot) => {
                slot.insert((id, fingerprint));
            }
        }
        self.counts.accepted += 1;
        let event = Event { line, record };
        let same_key = |b: &Best| {
            b.key_hash == key_hash && b.event.record[schema.key] == event.record[schema.key]
        };
        match self.best.find_mut(key_hash, same_key) {
            None => {
                self.best.insert_unique(
                    key_hash,
                    Best {
                        key_hash,
                        event,
                        tied: false,
                    },
                    |b| b.key_hash,
                );
            }
            Some(best) => {
                let same = Precedence::of(&event.record, schema)
                    == Precedence::of(&best.event.record, schema);
                if rank::compare(&event, &best.event, schema).is_gt() {
                    *best = Best {
                        key_hash,
                        event,
                        tied: same,
                    };
                } else {
                    best.tied |= same;
                }
            }
        }
    }

    /// The conflict issue for `record`, naming the first differing field when the earlier
    /// event is still at hand (it is its key's best so far).
    fn conflict(&self, record: &Record, key_hash: u64) -> LineIssue {
        let schema = self.schema;
        let event_id = &record[schema.event_id];
        let earlier = self
            .best
            .find(key_hash, |b| {
                b.event.record[schema.key] == record[schema.key]
            })
            .map(|b| &b.event.record)
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

    /// The summary: counts completed, winners sorted by key, dates of the winners.
    pub fn finish(self) -> Summary {
        let schema = self.schema;
        let mut counts = self.counts;
        counts.keys = self.best.len() as u64;
        counts.ties_by_arrival = self.best.iter().filter(|b| b.tied).count() as u64;
        drop(self.fingerprints);
        let mut keyed: Vec<(Value, Event)> = self
            .best
            .into_iter()
            .map(|b| (b.event.record[schema.key].clone(), b.event))
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let winners: Vec<Event> = keyed.into_iter().map(|(_, event)| event).collect();
        let mut dates = BTreeMap::new();
        for winner in &winners {
            if let Some(instant) = winner.record[schema.date_of].instant() {
                *dates.entry(instant.utc_date()).or_default() += 1;
            }
        }
        Summary {
            counts,
            findings: self.findings,
            winners,
            dates,
        }
    }
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
        let text = r#"
product = "orders"
[schema]
key = "order_id"
order_by = "updated_at"
tiebreak = "seq"
event_id = "event_id"
partition_by_date_of = "updated_at"
[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "int",       required = true }
status     = { type = "string",    required = true }
updated_at = { type = "timestamp", required = true }
seq        = { type = "int" }
"#;
        Config::parse(text, Path::new("/w.toml"), Path::new("/")).unwrap()
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
            .iter()
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

    #[test]
    fn ties_by_arrival_counts_keys_not_events() {
        let config = config();
        let lines: Vec<String> = (0..3)
            .map(|i| format!(r#"{{"event_id":"e{i}","order_id":1,"status":"S","updated_at":"2024-03-01T10:00:00Z"}}"#))
            .collect();
        let summary = summarise(&lines, &config.schema);
        assert_eq!(summary.counts.ties_by_arrival, 1);
        assert_eq!(summary.winners[0].line, 3, "the later line wins a full tie");
    }
}
