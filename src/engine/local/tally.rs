//! [`Tally`]: the streaming accumulator of one input's classified [`Batch`]es, in line
//! order. It counts, keeps every reject and breach (for quarantine), logs every accepted
//! event for §2 (stage one: an [`EventLog`], resolved once the input is read) and keeps
//! the best event per key so far (§3) with whether the runner-up ties it (stage two:
//! [`Ranking`]). [`Tally::finish`] turns it into a [`Summary`] whose winners are sorted by
//! key, or asks for one more pass when §2 found conflicts (see [`Finish`]).

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashSet;

use super::events::{EventLog, Resolved};
use super::key_index::KeyIndex;
use super::rows::{Rows, Slot};
use super::rowset::RowSet;
use super::trail::{KeyNames, KeysInOrder, Trail};
use crate::contract::{Date, LineIssue, LineReason, Outcome, Schema, Value, row};
use crate::plan::batch::{self, Accepted, Batch, ShortKey};
use crate::plan::keyed::EventsByKey;
use crate::plan::rank::Packed;
use crate::plan::{Counts, LineFinding, SpilledFindings};
use crate::store::findings::Findings;

/// Events warmed ahead of their merge: enough misses in flight, few enough lines to stay
/// in cache until used.
const WARM_GROUP: usize = 64;

/// The best event of one key so far, in one cache line (a miss per event is the ranking's
/// main cost); its record lives in [`Rows`]. The key's hash is not kept: the key table
/// holds a tag of it, the short key settles the rest, and growing the table hashes again.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Best {
    /// The event id's hash (low half): tells a retry of the best from another event.
    id: u64,
    /// The line, and in the top bit ([`TIED`]) whether the runner-up ties the best on
    /// instant and tiebreak.
    line_and_tied: u64,
    precedence: Packed,
    row: Slot,
    short_key: ShortKey,
}

const _: () = assert!(std::mem::size_of::<Best>() == 64);

/// [`Best::line_and_tied`]'s flag: line numbers stay below 2⁶³.
const TIED: u64 = 1 << 63;

impl Best {
    fn line(&self) -> u64 {
        self.line_and_tied & !TIED
    }

    fn tied(&self) -> bool {
        self.line_and_tied & TIED != 0
    }
}

/// Accumulates outcomes in line order, in two stages that can run on two threads, one
/// batch behind the other: the [`EventLog`] records every accepted event for §2, the
/// [`Ranking`] keeps the best event per key (§3) with the counts and findings. Memory grows
/// with keys (their best record), not with lines: the log holds at most 16 MiB and spills
/// the rest to its scratch.
pub struct Tally<'s> {
    log: EventLog,
    ranking: Ranking<'s>,
}

/// Stage two: the best event of each key, the line counts and the findings.
///
/// It ranks before §2 is resolved, so it must not let a retry count as another event. A
/// retry has its event's key and precedence and a later line: it can only matter when it
/// ties its key's best, and then its event is among the events tied at the top, whose
/// ids the ranking keeps. Conflicts are only known once the log resolves: a file with
/// any is ranked again with their lines given ([`Tally::rescan`]).
pub struct Ranking<'s> {
    schema: &'s Schema,
    counts: Counts,
    /// The first findings held, the rest spilled: memory does not grow with rejects.
    findings: Findings,
    /// The first error spilling findings: the summary must not be made without them.
    spill_failed: Option<crate::Error>,
    /// The best event of each key, by the key's value (int keys close together) or hash:
    /// indexes into `best`, so the index stays small and growing it moves 4 bytes a key.
    by_key: KeyIndex,
    best: Vec<Best>,
    rows: Rows,
    /// For a key whose best is tied: the ids of the other events tied with it, a set so
    /// that a key with many ties costs one lookup per event, not a scan of its ties.
    tied_ids: HashMap<u32, FxHashSet<u64>>,
    /// Lines known to be conflicts (a rescan), in order; `next_conflict` is the cursor.
    conflicts: Vec<u64>,
    next_conflict: usize,
    /// Whether every best record is kept (for the winners' rows); a plan keeps only those
    /// whose key its short key does not hold whole ([`Tally::plan_only`]).
    keep_records: bool,
    /// Every accepted event's key and line, when asked for ([`Tally::keep_trail`]).
    trail: Option<Trail>,
}

/// The most keys [`Tally::reserve`] makes room for ahead.
const KEYS_RESERVED_AT_MOST: usize = 4 << 20;

/// How a tally ends.
#[derive(Debug)]
pub enum Finish {
    Done(Box<Summary>),
    /// §2 found conflicts on these lines: push the same batches again into
    /// [`Tally::rescan`] with them, so that the ranking leaves them out.
    Rescan(Vec<u64>),
}

/// The classified and ranked input, before any decision.
#[derive(Debug)]
pub struct Summary {
    pub counts: Counts,
    /// Rejects and breaches, in line order: the first ones of an input with more than
    /// the tally holds ([`Tally::spill_findings`]).
    pub findings: Vec<LineFinding>,
    /// The findings after `findings`, written out.
    pub spilled: Option<SpilledFindings>,
    /// The rank-1 event of each key, sorted by key (empty after [`Tally::plan_only`]).
    pub winners: RowSet,
    /// Rows per `event_date` among the winners.
    pub dates: BTreeMap<Date, u64>,
    /// Those rows by UTC hour of their date's instant.
    pub hours: BTreeMap<Date, [u64; 24]>,
    /// Every key's events, when a trail was kept and the input fits one (no conflicts,
    /// lines below 2³¹).
    pub events_by_key: Option<Box<EventsByKey>>,
}

impl Summary {
    /// The breach on the earliest line, which names a refusal (§5.5).
    pub fn first_breach(&self) -> Option<&LineFinding> {
        let spilled = self.spilled.as_ref().and_then(|s| s.first_breach.as_ref());
        self.findings.iter().find(|f| f.breach).or(spilled)
    }
}

impl<'s> Tally<'s> {
    /// A tally whose event log spills to memory: for inputs a test or bench builds.
    pub fn new(schema: &'s Schema) -> Self {
        Self::with_log(schema, EventLog::default())
    }

    pub fn with_log(schema: &'s Schema, log: EventLog) -> Self {
        Tally {
            log,
            ranking: Ranking {
                schema,
                counts: Counts::default(),
                findings: Findings::in_memory(),
                spill_failed: None,
                by_key: KeyIndex::new(int_keys(schema), 0),
                best: Vec::new(),
                rows: Rows::default(),
                tied_ids: HashMap::new(),
                conflicts: Vec::new(),
                next_conflict: 0,
                keep_records: true,
                trail: None,
            },
        }
    }

    /// For a plan, which stages nothing: the winners' records are not kept (most of a
    /// census's memory), only a key's that its short key does not hold. Takes effect where
    /// nothing else needs them: the date is the `order_by` instant's, and no conflict is
    /// known (a rescan names the field that differs from the earlier record).
    pub fn plan_only(&mut self) {
        let schema = self.ranking.schema;
        self.ranking.keep_records =
            schema.date_of != schema.order_by || !self.ranking.conflicts.is_empty();
    }

    /// Holds the first [`HELD`](crate::store::findings::HELD) findings and writes the rest
    /// to a file in `dir` ([`crate::store::findings`]): a file of millions of bad lines
    /// costs disk, not memory, whatever the reject cap.
    pub fn spill_findings(&mut self, dir: &std::path::Path) {
        self.ranking.findings = Findings::new(dir);
    }

    /// Keeps every accepted event's key and line (8 bytes an event) for
    /// [`Summary::events_by_key`].
    pub fn keep_trail(&mut self) {
        self.ranking.trail = Some(Trail::default());
    }

    /// The second pass over an input whose first found `conflicts` (see [`Finish`]).
    pub fn rescan(schema: &'s Schema, log: EventLog, conflicts: Vec<u64>) -> Self {
        let mut tally = Self::with_log(schema, log);
        tally.ranking.conflicts = conflicts;
        tally
    }

    /// Expects about `events` events (saves growing the key table as it fills): keys are
    /// fewer, a third is a guess the table may grow past, capped so that the guess costs
    /// at most ~47 MiB whatever the input's size, and high enough that a large file does
    /// not rehash every key into a table twice the size. Untouched room costs address
    /// space only.
    pub fn reserve(&mut self, events: usize) {
        let keys = (events / 3).min(KEYS_RESERVED_AT_MOST);
        self.ranking.by_key = KeyIndex::new(int_keys(self.ranking.schema), keys);
        self.ranking.best.reserve(keys);
        // A trail grown by doubling would hold its old and new copies at once.
        if let Some(trail) = &mut self.ranking.trail {
            trail.reserve(events);
        }
    }

    /// Records line `line`'s outcome. Lines must arrive in increasing order.
    pub fn push(&mut self, line: u64, outcome: Outcome) {
        let mut batch = Batch::default();
        batch.push(line, outcome, self.ranking.schema);
        self.push_batch(&batch);
    }

    /// Records a batch classified by [`Batch::classify`]. Batches must arrive in order.
    pub fn push_batch(&mut self, batch: &Batch) {
        self.log.push_batch(batch);
        self.ranking.push(batch);
    }

    /// The two stages, to run on two threads: every batch goes to
    /// [`EventLog::push_batch`] and, in the same order, to [`Ranking::push`].
    pub fn into_stages(self) -> (EventLog, Ranking<'s>) {
        (self.log, self.ranking)
    }

    pub fn from_stages(log: EventLog, ranking: Ranking<'s>) -> Self {
        Tally { log, ranking }
    }

    /// Resolves §2 (fails only when the log's scratch does), then: the summary, with
    /// counts completed, winners sorted by key and the winners' dates; or a request to
    /// rank again without the conflicting lines.
    pub fn finish(self) -> std::io::Result<Finish> {
        let (log, ranking) = (self.log, self.ranking);
        let known = ranking.conflicts.clone();
        let events = log.len();
        let trail = ranking.trail.is_some();
        let (resolved, collapsed, summary) = if trail {
            // A trail wants the line each retry repeats, a list as long as the retries:
            // made once the ranking's entries are freed, on both cores.
            let summary = ranking.finish();
            let collapsed = log.collapse(2)?;
            (collapsed.resolved(events), Some(collapsed), summary)
        } else {
            // §2 resolves on another thread while the winners are sorted and copied.
            let (resolved, summary) = std::thread::scope(|scope| {
                let resolving = scope.spawn(move || log.resolve(1));
                let summary = ranking.finish();
                let resolved = resolving
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (resolved, summary)
            });
            (resolved?, None, summary)
        };
        let Resolved {
            accepted,
            retries,
            conflicts,
        } = resolved;
        if conflicts != known {
            return Ok(Finish::Rescan(conflicts));
        }
        let (mut summary, trail) = summary?;
        summary.counts.accepted = accepted;
        summary.counts.retries = retries;
        if let (Some((trail, keys)), Some(collapsed)) = (trail, collapsed) {
            summary.events_by_key = trail.arrange(keys, collapsed).map(Box::new);
        }
        Ok(Finish::Done(Box::new(summary)))
    }
}

impl Ranking<'_> {
    /// Records a batch.
    pub fn push(&mut self, batch: &Batch) {
        self.counts.lines += batch.lines;
        self.counts.blank += batch.blank;
        self.counts.rejected += batch.rejected;
        let mut conflicts = Vec::new();
        for group in batch.events.chunks(WARM_GROUP) {
            self.warm(group);
            for event in group {
                if self.conflicts.get(self.next_conflict) == Some(&event.line) {
                    self.next_conflict += 1;
                    let issue = self.conflict(event, batch);
                    conflicts.push(LineFinding {
                        line: event.line,
                        breach: true,
                        issue,
                    });
                } else {
                    self.accept(event, batch);
                }
            }
        }
        // Findings leave in line order (a spill is written as it comes): the batch's
        // conflicts go between its other findings.
        let mut conflicts = conflicts.into_iter().peekable();
        for finding in batch.findings.iter() {
            while let Some(c) = conflicts.next_if(|c| c.line < finding.line) {
                self.find(c);
            }
            self.find(finding.clone());
        }
        conflicts.for_each(|c| self.find(c));
    }

    /// Loads, for each event of `group`, its key's slot, then its key's entry: independent
    /// loads the CPU overlaps, where `accept` would wait for each cache miss in turn (the
    /// ranking thread's main cost). The best record itself is not loaded: it is only
    /// written, on a replace, and a store's miss does not stall.
    fn warm(&self, group: &[Accepted]) {
        let mut sink = 0u64;
        for event in group {
            sink ^= self.by_key.touch(event.key_hash, &event.short_key);
        }
        for event in group {
            let found = self.by_key.find(event.key_hash, &event.short_key, |i| {
                self.best[i as usize].short_key == event.short_key
            });
            if let Some(i) = found {
                sink ^= self.best[i as usize].line_and_tied;
            }
        }
        std::hint::black_box(sink);
    }

    fn find(&mut self, finding: LineFinding) {
        self.counts.count_finding(&finding.issue);
        if self.spill_failed.is_none()
            && let Err(e) = self.findings.push(finding)
        {
            self.spill_failed = Some(e);
        }
    }

    /// An accepted event: it becomes its key's best, ties it, loses to it, or is a retry
    /// of an event tied at the top (which changes nothing).
    fn accept(&mut self, event: &Accepted, batch: &Batch) {
        let key = batch.slice(event.key);
        let row = batch.slice(event.row);
        let id = event.id as u64;
        let line = event.line;
        debug_assert!(line & TIED == 0);
        let (best, rows, schema) = (&mut self.best, &mut self.rows, self.schema);
        let short_key = event.short_key;
        // A key its short key holds whole needs no record to be told apart.
        let keep = self.keep_records || !short_key.is_whole();
        let found = self.by_key.find(event.key_hash, &short_key, |i| {
            let b = &best[i as usize];
            b.short_key == short_key && (short_key.is_whole() || key_of(rows, b, schema) == key)
        });
        if let Some(trail) = &mut self.trail {
            trail.push(found.unwrap_or(best.len() as u32), line);
        }
        let Some(index) = found else {
            let index = best.len() as u32;
            best.push(Best {
                id,
                line_and_tied: line,
                precedence: event.precedence,
                row: if keep { rows.insert(row) } else { Slot::NONE },
                short_key,
            });
            self.by_key.insert(event.key_hash, &short_key, index, |i| {
                let b = &best[i as usize];
                batch::key_hash(key_bytes(rows, b, schema))
            });
            return;
        };
        let b = &mut best[index as usize];
        let tied = match event.precedence.cmp(&b.precedence) {
            // Below the best, whatever it is: it changes nothing (lines only grow, so
            // an equal precedence is a tie the later line wins).
            std::cmp::Ordering::Less => return,
            std::cmp::Ordering::Greater => {
                if b.tied() {
                    self.tied_ids.remove(&index);
                }
                false
            }
            std::cmp::Ordering::Equal => {
                let seen = b.id == id
                    || (b.tied()
                        && self
                            .tied_ids
                            .get(&index)
                            .is_some_and(|ids| ids.contains(&id)));
                if seen {
                    return; // a retry of an event tied at the top (§2 counts it)
                }
                self.tied_ids.entry(index).or_default().insert(b.id);
                true
            }
        };
        *b = Best {
            id,
            line_and_tied: if tied { line | TIED } else { line },
            precedence: event.precedence,
            row: if keep {
                rows.replace(b.row, row)
            } else {
                b.row
            },
            short_key,
        };
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
            .find(event.key_hash, &event.short_key, |i| {
                key_of(&self.rows, &self.best[i as usize], schema) == key
            })
            .map(|i| row::decode(self.rows.record(self.best[i as usize].row, fields), fields))
            .filter(|r| r[schema.event_id] == *event_id);
        let field = earlier
            .and_then(|r| r.iter().zip(record.iter()).position(|(a, b)| a != b))
            .map(|i| schema.name(i).to_owned());
        LineIssue {
            reason: LineReason::Conflict,
            field,
            event_id: Some(event_id.display()),
        }
    }

    /// The summary, without §2's counts: winners sorted by key, their dates; and, with a
    /// trail, the trail and its keys to arrange once §2 is resolved.
    fn finish(self) -> std::io::Result<(Summary, Option<(Trail, KeysInOrder)>)> {
        if let Some(e) = self.spill_failed {
            return Err(std::io::Error::other(e.to_string()));
        }
        let schema = self.schema;
        let fields = schema.fields.len();
        let mut counts = self.counts;
        counts.keys = self.best.len() as u64;
        drop(self.tied_ids);
        let (rows, best) = (self.rows, self.best);
        // Sort by key, then list the winners' encoded records in key order, where they
        // are: no record is decoded or copied here. Int keys filed by value are
        // in key order already; other int keys sort straight from the entries' inline key
        // bytes.
        let int_key = |i: usize| row::int(&best[i].short_key.prefix);
        let in_order = self.by_key.in_key_order();
        drop(self.by_key);
        let order: Vec<u32> =
            match in_order.or_else(|| winners::order_by_int_key(best.len(), int_key)) {
                Some(order) => order,
                None => {
                    let mut keys: Vec<(Value, u32)> = best
                        .iter()
                        .enumerate()
                        .map(|(i, b)| (row::decode_value(key_bytes(&rows, b, schema)), i as u32))
                        .collect();
                    keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    keys.into_iter().map(|(_, i)| i).collect()
                }
            };
        let trail = self.trail.filter(|t| !t.overflowed());
        let date_of = if schema.date_of == schema.order_by {
            winners::DateOf::Precedence
        } else {
            winners::DateOf::Field(schema.date_of)
        };
        let (winners, census, trail) = if self.keep_records {
            let trail = trail.map(|t| (t, keys_in_order(&rows, &best, order.clone(), schema)));
            let (winners, census) = winners::place_in_order(rows, &best, &order, fields, date_of);
            (winners, census, trail)
        } else {
            let census = winners::count(&best);
            let trail = trail.map(|t| (t, keys_in_order(&rows, &best, order, schema)));
            (RowSet::new(fields), census, trail)
        };
        drop(best);
        counts.ties_by_arrival = census.ties;
        let (dates, hours) = (census.dates, census.hours);
        let (findings, spilled) = self
            .findings
            .finish()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let summary = Summary {
            counts,
            findings,
            spilled,
            winners,
            dates,
            hours,
            events_by_key: None,
        };
        Ok((summary, trail))
    }
}

/// The keys of `order` as the trail arranges them: each key's winner line (flagged when
/// tied), by key number, and the keys in order.
fn keys_in_order(rows: &Rows, best: &[Best], order: Vec<u32>, schema: &Schema) -> KeysInOrder {
    let winners = best
        .iter()
        .map(|b| b.line() | if b.tied() { KeysInOrder::TIED } else { 0 })
        .collect();
    let key = |i: u32| key_bytes(rows, &best[i as usize], schema);
    let ints: Option<Vec<i64>> = if int_keys(schema) {
        order.iter().map(|&i| row::int(key(i))).collect()
    } else {
        None
    };
    let names = match ints {
        Some(ints) => KeyNames::Ints(ints),
        None => {
            let mut names = String::new();
            let mut ends = Vec::with_capacity(order.len());
            for &i in &order {
                names.push_str(&(row::decode_value(key(i))).display());
                ends.push(names.len());
            }
            names.shrink_to_fit();
            KeyNames::Text { names, ends }
        }
    };
    KeysInOrder {
        order,
        winners,
        names,
    }
}

/// Tallies batches already in memory (tests, benches), ranking them again when §2 finds
/// conflicts. Fails only if a scratch does, which a memory one never does.
pub fn summarise(schema: &Schema, batches: &[Batch]) -> std::io::Result<Summary> {
    let tally_all = |conflicts: Vec<u64>| {
        let mut tally = Tally::rescan(schema, EventLog::default(), conflicts);
        for batch in batches {
            tally.push_batch(batch);
        }
        tally.finish()
    };
    let conflicts = match tally_all(Vec::new())? {
        Finish::Done(summary) => return Ok(*summary),
        Finish::Rescan(conflicts) => conflicts,
    };
    match tally_all(conflicts)? {
        Finish::Done(summary) => Ok(*summary),
        Finish::Rescan(_) => Err(std::io::Error::other(
            "§2 found other conflicts on a second pass over the same batches",
        )),
    }
}

/// Whether the schema's keys are ints (a [`KeyIndex`] may then file them by value).
fn int_keys(schema: &Schema) -> bool {
    schema.fields[schema.key].ty == crate::contract::FieldType::Int
}

/// The encoded key of `best`: its short key when whole, else its record's key field.
fn key_bytes<'r>(rows: &'r Rows, best: &'r Best, schema: &Schema) -> &'r [u8] {
    best.short_key
        .whole()
        .unwrap_or_else(|| key_of(rows, best, schema))
}

/// The encoded key field of `best`'s record.
fn key_of<'r>(rows: &'r Rows, best: &Best, schema: &Schema) -> &'r [u8] {
    // One walk, to the key field: the record's length is not needed.
    let record = rows.room(best.row);
    let (start, end) = row::field_range(record, schema.key);
    &record[start..end]
}

mod winners;

#[cfg(test)]
mod tests;
