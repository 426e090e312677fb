//! [`EventLog`]: §2 (identical retries, conflicts) in memory that does not grow with the
//! input. Every accepted event's id hash, values fingerprint and line go to one of 256
//! buckets by id hash; a bucket's records beyond [`BUCKET_RECORDS`] move out to a
//! [`Scratch`] the caller supplies (the landing gives an unlinked file). Once the input is
//! read, [`EventLog::resolve`] reads the buckets back one at a time, each small enough to
//! stay in cache, and tells first occurrences from retries and conflicts.
//!
//! Records of one event id all land in one bucket, in line order, so the first record of
//! an id in its bucket is the event's first occurrence.
//!
//! The resolve reports to a [`Verdicts`]: the plan's is [`Resolved`] (counts and the
//! conflicting lines), the console's [`Collapsed`] also names the line each retry or
//! conflict repeats. One rule, two reports.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::tables::{EventTable, Seen};
use crate::plan::batch::Batch;
use crate::plan::keyed::Collapsed;

/// Where buckets spill: appended in whole segments, read back at the offsets returned.
pub trait Scratch: Send + Sync {
    /// Appends `bytes`, returning the offset they start at.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<u64>;
    /// Makes every append readable; called once, after the last append.
    fn seal(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Fills `buf` from `offset` (a range [`Scratch::append`] wrote), once sealed.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

/// A scratch in memory: for inputs a test builds, and for plans that never spill.
#[derive(Default)]
pub struct MemoryScratch(Vec<u8>);

impl Scratch for MemoryScratch {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        let offset = self.0.len() as u64;
        self.0.extend_from_slice(bytes);
        Ok(offset)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let start = offset as usize;
        let bytes = self.0.get(start..start + buf.len()).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "past the scratch's end")
        })?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

const BUCKETS: usize = 256;

/// Records a bucket holds in memory before they spill: 256 buckets of 2,048 records of 32
/// bytes are 16 MiB, whatever the input's size.
pub const BUCKET_RECORDS: usize = 2048;

/// The most ids a bucket's table is sized for ahead (6 MiB of slots); more grow it.
const TABLE_PRESIZED_AT_MOST: usize = 1 << 18;

/// `[id low, id high, fingerprint, line]`.
type Record = [u64; 4];
const RECORD_BYTES: usize = 32;

/// Every accepted event, bucketed by id hash, for [`EventLog::resolve`].
pub struct EventLog {
    buckets: Vec<Vec<Record>>,
    /// Per bucket, the scratch offsets of its spilled segments, oldest first.
    spilled: Vec<Vec<u64>>,
    bucket_records: usize,
    scratch: Box<dyn Scratch>,
    /// Encoding buffer for one segment.
    bytes: Vec<u8>,
    events: u64,
    /// The first scratch error: the log is incomplete and must not resolve.
    failed: Option<std::io::Error>,
}

/// Told, for each later record of an event id, whether it is a retry or a conflict of
/// the id's first record.
pub trait Verdicts: Default + Send {
    /// What the table keeps of an id's first record for its later ones.
    type First: Copy + Default + Send;
    fn first(line: u64) -> Self::First;
    /// Line `line` is an identical retry of the event first seen as `first`.
    fn retry(&mut self, line: u64, first: Self::First);
    /// Line `line` reuses the id of `first` with other values.
    fn conflict(&mut self, line: u64, first: Self::First);
    /// Adds another thread's verdicts.
    fn merge(&mut self, other: Self);
}

/// What §2 made of the accepted events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// Accepted events: first occurrences and identical retries, conflicts not.
    pub accepted: u64,
    pub retries: u64,
    /// Lines that reuse an earlier event's id with other values, in line order.
    pub conflicts: Vec<u64>,
}

impl Verdicts for Resolved {
    type First = ();

    fn first(_: u64) {}

    fn retry(&mut self, _: u64, (): ()) {
        self.retries += 1;
    }

    fn conflict(&mut self, line: u64, (): ()) {
        self.conflicts.push(line);
    }

    fn merge(&mut self, other: Self) {
        self.retries += other.retries;
        self.conflicts.extend(other.conflicts);
    }
}

impl Collapsed {
    /// The plan's report of the same verdicts, of `events` logged.
    pub fn resolved(&self, events: u64) -> Resolved {
        Resolved {
            accepted: events - self.conflicts.len() as u64,
            retries: self.retries.len() as u64,
            conflicts: self.conflicts.iter().map(|&(line, _)| line).collect(),
        }
    }
}

impl Verdicts for Collapsed {
    type First = u64;

    fn first(line: u64) -> u64 {
        line
    }

    fn retry(&mut self, line: u64, first: u64) {
        self.retries.push((line, first));
    }

    fn conflict(&mut self, line: u64, first: u64) {
        self.conflicts.push((line, first));
    }

    fn merge(&mut self, other: Self) {
        self.retries.extend(other.retries);
        self.conflicts.extend(other.conflicts);
    }
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new(Box::<MemoryScratch>::default(), BUCKET_RECORDS)
    }
}

impl EventLog {
    /// A log spilling to `scratch` once a bucket holds `bucket_records` records.
    pub fn new(scratch: Box<dyn Scratch>, bucket_records: usize) -> Self {
        let bucket_records = bucket_records.max(1);
        EventLog {
            // Full room from the start: grown by doubling, each bucket would be copied
            // and faulted in eleven times over.
            buckets: (0..BUCKETS)
                .map(|_| Vec::with_capacity(bucket_records))
                .collect(),
            spilled: vec![Vec::new(); BUCKETS],
            bucket_records,
            scratch,
            bytes: Vec::new(),
            events: 0,
            failed: None,
        }
    }

    /// Logs every accepted event of `batch`. Batches must arrive in order.
    pub fn push_batch(&mut self, batch: &Batch) {
        for event in &batch.events {
            self.push(event.id, event.fingerprint, event.line);
        }
    }

    /// Logs an accepted event. Lines must arrive in increasing order.
    pub fn push(&mut self, id: u128, fingerprint: u64, line: u64) {
        // The id's top byte picks the bucket; tables inside a bucket hash its low bits.
        let b = (id >> 120) as usize;
        let bucket = &mut self.buckets[b];
        bucket.push([id as u64, (id >> 64) as u64, fingerprint, line]);
        self.events += 1;
        if bucket.len() == self.bucket_records {
            self.spill(b);
        }
    }

    fn spill(&mut self, b: usize) {
        self.bytes.clear();
        self.bytes.reserve(self.buckets[b].len() * RECORD_BYTES);
        for record in &self.buckets[b] {
            for word in record {
                self.bytes.extend_from_slice(&word.to_le_bytes());
            }
        }
        self.buckets[b].clear();
        if self.failed.is_some() {
            return;
        }
        match self.scratch.append(&self.bytes) {
            Ok(offset) => self.spilled[b].push(offset),
            Err(e) => self.failed = Some(e),
        }
    }

    /// Events logged so far.
    pub fn len(&self) -> u64 {
        self.events
    }

    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    /// Reads every bucket back, on `threads` threads, and resolves §2: an id's first
    /// record is its event; a later one is a retry if its fingerprint is the first's, a
    /// conflict if not.
    pub fn resolve(self, threads: usize) -> std::io::Result<Resolved> {
        let events = self.events;
        let mut resolved: Resolved = self.resolve_with(threads)?;
        resolved.conflicts.sort_unstable();
        resolved.accepted = events - resolved.conflicts.len() as u64;
        Ok(resolved)
    }

    /// [`EventLog::resolve`], each retry and conflict with the line it repeats, by line.
    pub fn collapse(self, threads: usize) -> std::io::Result<Collapsed> {
        let mut collapsed: Collapsed = self.resolve_with(threads)?;
        collapsed.retries.sort_unstable();
        collapsed.conflicts.sort_unstable();
        Ok(collapsed)
    }

    /// The resolve, reporting to `V`.
    fn resolve_with<V: Verdicts>(mut self, threads: usize) -> std::io::Result<V> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.scratch.seal()?;
        let next = AtomicUsize::new(0);
        let parts: Vec<std::io::Result<V>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| scope.spawn(|| self.resolve_buckets::<V>(&next)))
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut verdicts = V::default();
        for part in parts {
            verdicts.merge(part?);
        }
        Ok(verdicts)
    }

    /// Resolves buckets taken from `next` until none is left.
    fn resolve_buckets<V: Verdicts>(&self, next: &AtomicUsize) -> std::io::Result<V> {
        let mut part = V::default();
        let mut table = EventTable::<V::First>::default();
        let mut bytes = vec![0u8; self.bucket_records * RECORD_BYTES];
        loop {
            let b = next.fetch_add(1, Ordering::Relaxed);
            if b >= BUCKETS {
                return Ok(part);
            }
            let records = self.spilled[b].len() * self.bucket_records + self.buckets[b].len();
            // Sized for its records up to a cap: a bucket's records may all be retries of
            // one id, and the table holds ids, growing past the cap when they are many.
            table.reset(records.min(TABLE_PRESIZED_AT_MOST));
            let mut offer = |record: &Record| {
                let id = u128::from(record[0]) | (u128::from(record[1]) << 64);
                match table.offer(id, record[2], V::first(record[3])) {
                    Seen::New => {}
                    Seen::Before(fingerprint, first) if fingerprint == record[2] => {
                        part.retry(record[3], first)
                    }
                    Seen::Before(_, first) => part.conflict(record[3], first),
                }
            };
            for &offset in &self.spilled[b] {
                self.scratch.read_at(&mut bytes, offset)?;
                for chunk in bytes.chunks_exact(RECORD_BYTES) {
                    let word = |i: usize| {
                        let mut w = [0u8; 8];
                        w.copy_from_slice(&chunk[i * 8..i * 8 + 8]);
                        u64::from_le_bytes(w)
                    };
                    offer(&[word(0), word(1), word(2), word(3)]);
                }
            }
            self.buckets[b].iter().for_each(&mut offer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// §2 by brute force: every id's first fingerprint, then each later line's verdict.
    fn model(events: &[(u128, u64)]) -> Resolved {
        let mut first: HashMap<u128, u64> = HashMap::new();
        let mut resolved = Resolved::default();
        for (line, &(id, fingerprint)) in events.iter().enumerate() {
            match first.get(&id) {
                None => {
                    first.insert(id, fingerprint);
                    resolved.accepted += 1;
                }
                Some(&f) if f == fingerprint => {
                    resolved.accepted += 1;
                    resolved.retries += 1;
                }
                Some(_) => resolved.conflicts.push(line as u64 + 1),
            }
        }
        resolved
    }

    /// Ids spread over buckets by their top byte, as real hashes do.
    fn spread(events: Vec<(u128, u64)>) -> Vec<(u128, u64)> {
        events
            .into_iter()
            .map(|(id, f)| {
                (
                    id.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835),
                    f,
                )
            })
            .collect()
    }

    proptest! {
        /// Spilling at every size, from every record to never, changes nothing.
        #[test]
        fn the_log_resolves_as_the_first_occurrence_rule_does(
            events in prop::collection::vec((0u128..40, 0u64..3), 0..300),
            bucket_records in 1usize..6,
            threads in 1usize..3,
        ) {
            let events = spread(events);
            let mut log = EventLog::new(Box::<MemoryScratch>::default(), bucket_records);
            for (line, &(id, fingerprint)) in events.iter().enumerate() {
                log.push(id, fingerprint, line as u64 + 1);
            }
            prop_assert_eq!(log.len(), events.len() as u64);
            prop_assert_eq!(log.resolve(threads).unwrap(), model(&events));
        }

        /// The console's report names, for each retry and conflict, the id's first line,
        /// and agrees with the plan's on which lines are which.
        #[test]
        fn the_collapse_names_the_first_occurrence(
            events in prop::collection::vec((0u128..40, 0u64..3), 0..300),
            bucket_records in 1usize..6,
            threads in 1usize..3,
        ) {
            let events = spread(events);
            let mut log = EventLog::new(Box::<MemoryScratch>::default(), bucket_records);
            let mut first: HashMap<u128, (u64, u64)> = HashMap::new();
            let mut want = Collapsed::default();
            for (line, &(id, fingerprint)) in events.iter().enumerate() {
                let line = line as u64 + 1;
                log.push(id, fingerprint, line);
                match first.get(&id) {
                    None => { first.insert(id, (fingerprint, line)); }
                    Some(&(f, at)) if f == fingerprint => want.retries.push((line, at)),
                    Some(&(_, at)) => want.conflicts.push((line, at)),
                }
            }
            let collapsed = log.collapse(threads).unwrap();
            let plan = model(&events);
            prop_assert_eq!(&collapsed, &want);
            prop_assert_eq!(collapsed.retries.len() as u64, plan.retries);
            let lines: Vec<u64> = collapsed.conflicts.iter().map(|c| c.0).collect();
            prop_assert_eq!(lines, plan.conflicts);
        }
    }

    struct FullDisk;

    impl Scratch for FullDisk {
        fn append(&mut self, _: &[u8]) -> std::io::Result<u64> {
            Err(std::io::Error::other("no space left on device"))
        }
        fn read_at(&self, _: &mut [u8], _: u64) -> std::io::Result<()> {
            unreachable!("nothing was appended")
        }
    }

    #[test]
    fn a_scratch_that_fails_fails_the_resolve_not_the_verdicts() {
        let mut log = EventLog::new(Box::new(FullDisk), 1);
        log.push(1, 1, 1);
        log.push(1, 1, 2);
        let error = log
            .resolve(2)
            .expect_err("an incomplete log must not resolve");
        assert!(error.to_string().contains("no space"), "{error}");
    }
}
