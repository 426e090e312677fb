//! [`Batch`]: one chunk of lines classified by a worker thread, ready for the
//! [`Tally`](crate::engine::local::Tally). Accepted records are encoded ([`row`]) into one buffer with
//! the hashes the tally compares, so the hot path allocates per chunk, not per line, and
//! the merging threads only compare.

use xxhash_rust::xxh3::{xxh3_64_with_seed, xxh3_128_with_seed};

use super::counts::LineFinding;
use super::rank::{Packed, Precedence};
use crate::contract::{LineBytes, Outcome, Schema, classify, fast, row};

/// One classified chunk of lines, built by a worker thread ([`Batch::classify`]) and
/// merged in line order by [`Tally::push_batch`](crate::engine::local::Tally::push_batch).
#[derive(Debug, Default)]
pub struct Batch {
    pub(crate) lines: u64,
    pub(crate) blank: u64,
    pub(crate) rejected: u64,
    /// Rejects and breaches of this chunk.
    pub(crate) findings: Vec<LineFinding>,
    pub(crate) events: Vec<Accepted>,
    /// Every accepted record of the chunk, encoded, back to back.
    rows: Vec<u8>,
    /// Scratch: the field offsets of the record being hashed.
    starts: Vec<u32>,
    /// Scratch: the fast path's slots.
    slots: fast::Slots,
}

/// An accepted line in a [`Batch`]: where its record is and what the merge compares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Accepted {
    pub line: u64,
    pub precedence: Packed,
    /// 128-bit hash of the event id field (retries and conflicts, §2).
    pub id: u128,
    /// 64-bit hash of the whole record: equal records, equal fingerprints.
    pub fingerprint: u64,
    pub key_hash: u64,
    /// The record, and its key field within it, in the batch's `rows`.
    pub row: (u32, u32),
    pub key: (u32, u32),
    pub short_key: ShortKey,
}

/// What a [`Batch`] knows of one accepted event, for readers outside the plan (the
/// console ranks every event of a key with it).
#[derive(Clone, Copy, Debug)]
pub struct EventFacts<'b> {
    pub line: u64,
    pub precedence: Packed,
    /// The event id's hash and the record's fingerprint, for an
    /// [`EventLog`](crate::engine::local::EventLog).
    pub id: u128,
    pub fingerprint: u64,
    /// The encoded key field ([`row`]) and its hash.
    pub key: &'b [u8],
    pub key_hash: u64,
}

/// The first bytes of an encoded key, zero-padded, and its length (saturating): keys this
/// short (an int key is 9 bytes) compare without touching their record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShortKey {
    pub prefix: [u8; 14],
    len: u16,
}

impl ShortKey {
    pub fn of(key: &[u8]) -> Self {
        let mut prefix = [0u8; 14];
        let n = key.len().min(prefix.len());
        prefix[..n].copy_from_slice(&key[..n]);
        ShortKey {
            prefix,
            len: u16::try_from(key.len()).unwrap_or(u16::MAX),
        }
    }

    /// Whether the prefix is the whole key (else two equal short keys may still be two
    /// keys, and the records tell).
    pub fn is_whole(&self) -> bool {
        usize::from(self.len) <= self.prefix.len()
    }

    /// The whole key, when the prefix is.
    pub fn whole(&self) -> Option<&[u8]> {
        self.is_whole()
            .then(|| &self.prefix[..usize::from(self.len)])
    }
}

/// The fingerprint of an encoded record's values (`row::push_record`): §2 tells a retry
/// (the first line's fingerprint) from a conflict by it, on either engine.
pub fn fingerprint(record: &[u8]) -> u64 {
    xxh3_64_with_seed(record, VALUES_SEED)
}

/// The hash §2 knows an event by: its encoded `event_id`'s, on either engine.
pub fn event_id_hash(event_id: &[u8]) -> u128 {
    xxh3_128_with_seed(event_id, ID_SEED)
}

/// The hash the ranking files an encoded key under.
pub fn key_hash(key: &[u8]) -> u64 {
    xxh3_64_with_seed(key, KEY_SEED)
}

const ID_SEED: u64 = 0x5748_4152_465f_4944; // "WHARF_ID"
const VALUES_SEED: u64 = 0x5748_4152_465f_5653;
const KEY_SEED: u64 = 0x5748_4152_465f_4b59;

impl Batch {
    /// Classifies line `line` into the batch: the fast path for the common shape, the
    /// full [`classify()`] for everything else. Lines must arrive in order.
    pub fn classify(&mut self, line: u64, bytes: LineBytes<'_>, schema: &Schema) {
        if let LineBytes::Kept(text) = bytes {
            let start = self.rows.len();
            if fast::accept(
                text,
                schema,
                &mut self.slots,
                &mut self.rows,
                &mut self.starts,
            ) {
                self.lines += 1;
                self.accepted(line, start, schema);
                return;
            }
        }
        self.push(line, classify(bytes, schema), schema);
    }

    /// Adds line `line`'s outcome. Lines must arrive in order.
    pub fn push(&mut self, line: u64, outcome: Outcome, schema: &Schema) {
        self.lines += 1;
        match outcome {
            Outcome::Blank => self.blank += 1,
            Outcome::Rejected(issue) => {
                self.rejected += 1;
                self.findings.push(LineFinding {
                    line,
                    breach: false,
                    issue,
                });
            }
            Outcome::Breach(issue) => self.findings.push(LineFinding {
                line,
                breach: true,
                issue,
            }),
            Outcome::Accepted(record) => {
                let start = self.rows.len();
                row::push_record(&mut self.rows, &record);
                row::offsets(&self.rows[start..], schema.fields.len(), &mut self.starts);
                self.accepted(line, start, schema);
            }
        }
    }

    /// Hashes the record just encoded at `start..`, its field offsets in `starts`, and
    /// records it.
    fn accepted(&mut self, line: u64, start: usize, schema: &Schema) {
        let record = &self.rows[start..];
        let field = |i: usize| (self.starts[i] as usize, self.starts[i + 1] as usize);
        let slice = |(a, b): (usize, usize)| &record[a..b];
        let (key_start, key_end) = field(schema.key);
        let precedence = Packed::from(Precedence {
            instant: row::instant(slice(field(schema.order_by))),
            tiebreak: schema.tiebreak.and_then(|i| row::int(slice(field(i)))),
        });
        let event = Accepted {
            line,
            precedence,
            id: event_id_hash(slice(field(schema.event_id))),
            fingerprint: fingerprint(record),
            key_hash: key_hash(slice((key_start, key_end))),
            row: (start as u32, self.rows.len() as u32),
            key: ((start + key_start) as u32, (start + key_end) as u32),
            short_key: ShortKey::of(slice((key_start, key_end))),
        };
        self.events.push(event);
    }

    /// Every accepted event of the batch, in line order.
    pub fn accepted_events(&self) -> impl Iterator<Item = EventFacts<'_>> {
        self.events.iter().map(|e| EventFacts {
            line: e.line,
            precedence: e.precedence,
            id: e.id,
            fingerprint: e.fingerprint,
            key: self.slice(e.key),
            key_hash: e.key_hash,
        })
    }

    /// Empties the batch, keeping its buffers for the next chunk.
    pub fn clear(&mut self) {
        self.lines = 0;
        self.blank = 0;
        self.rejected = 0;
        self.findings.clear();
        self.events.clear();
        self.rows.clear();
    }

    /// Bytes `start..end` of the batch's records.
    pub(crate) fn slice(&self, (start, end): (u32, u32)) -> &[u8] {
        &self.rows[start as usize..end as usize]
    }
}
