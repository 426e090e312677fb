//! PURE. Merge mode (CONTRACT.md §10): a batch's winners meet the published rows.
//!
//! [`merge`] takes the batch's rank-1 events and the published rows of every date they
//! touch (with where each of their keys lives), and returns only the dates that gain,
//! change or lose a row, each rewritten whole and sorted by key, with the counts §10.6
//! asks for. A winner that loses to the published row under §3's order is `stale`; a full
//! tie goes to the batch (the later arrival) and is counted; an identical row changes
//! nothing. Moves only go forward in time (a winner must be newer), so swapping dates
//! newest first puts a moved key on its new date before it leaves the old one.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};

use super::rank::{Event, Precedence};
use super::split::Split;
use crate::contract::{Date, Record, Schema, Value};

/// The published rows a merge reads, whole: each date of the batch as one file read
/// ([`merge`]; the Spark engine's parity tests).
#[derive(Clone, Debug, Default)]
pub struct PublishedRows {
    /// Rows of each date read, any order.
    pub by_date: BTreeMap<Date, Vec<Record>>,
}

/// One published file a merge meets, as its footer describes it (CONTRACT.md §10.5).
#[derive(Clone, Debug, Default)]
pub struct PublishedFile<R = Vec<Record>> {
    /// Relative to the publish root.
    pub path: String,
    pub rows: u64,
    /// Its smallest and largest key, `None` where the statistics do not say.
    pub min: Option<Value>,
    pub max: Option<Value>,
    /// Its rows, when the batch read it: it may hold one of the batch's keys, or a new
    /// key of its date falls in its range.
    pub read: Option<R>,
}

impl<R> PublishedFile<R> {
    /// The same file as its footer describes it, its rows not read (of any row type).
    pub fn unread<T>(file: PublishedFile<T>) -> PublishedFile<R> {
        PublishedFile {
            path: file.path,
            rows: file.rows,
            min: file.min,
            max: file.max,
            read: None,
        }
    }
}

/// The published files of the dates a merge meets, each date's in key order.
#[derive(Clone, Debug, Default)]
pub struct PublishedFiles<R = Vec<Record>> {
    pub by_date: BTreeMap<Date, Vec<PublishedFile<R>>>,
}

/// The rows of a file a merge read, in the file's order: `Vec<Record>`, or the local
/// engine's rows kept encoded, so that no row but those of the batch's keys becomes a
/// record.
pub trait ReadRows {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Row `row`'s key.
    fn key(&self, row: usize, schema: &Schema) -> Value;
    /// Row `row` whole.
    fn record(&self, row: usize, schema: &Schema) -> Record;
}

impl ReadRows for Vec<Record> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn key(&self, row: usize, schema: &Schema) -> Value {
        self[row][schema.key].clone()
    }

    fn record(&self, row: usize, _schema: &Schema) -> Record {
        self[row].clone()
    }
}

/// A row of a file a merge writes: row `row` of the date's read file `file`, or a winner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    Read { file: usize, row: usize },
    Winner(Event),
}

/// One file of a date after a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOut {
    /// A published file carried over unchanged (its path).
    Kept(String),
    /// A new file: these rows of [`MergedDate::rows`].
    Written(std::ops::Range<usize>),
}

/// One date a merge rewrites; its rows are events, or [`Row`]s from [`merge_read`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedDate<T = Event> {
    pub rows_before: u64,
    pub inserted: u64,
    pub updated: u64,
    pub moved_in: u64,
    pub moved_out: u64,
    /// Rows the date holds after.
    pub rows_after: u64,
    /// Files of the date the batch read, and of those, rewritten.
    pub files_read: u64,
    pub files_rewritten: u64,
    /// The rows of the files written, sorted by key (the whole new partition when every
    /// file of the date is rewritten).
    pub rows: Vec<T>,
    /// The date's files after the merge, in key order.
    pub files: Vec<FileOut>,
}

/// What a batch does to the published dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged<T = Event> {
    /// Only the dates that gain, change or lose a row.
    pub dates: BTreeMap<Date, MergedDate<T>>,
    /// Winners older than the published row of their key.
    pub stale: u64,
    /// Winners that tie the published row on instant and tiebreak (the batch wins).
    pub ties_by_arrival: u64,
}

/// What §10 does with one winner of a batch, against its key's published row. The one
/// definition: the local engine decides it here, and the Spark engine's SQL writes and
/// reads back these codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No published row for the key: it joins its date.
    Insert,
    /// Older than the published row under §3's order: dropped (§10.3).
    Stale,
    /// The very row published: nothing changes.
    Same,
    /// Newer, on the same date: replaces the row there.
    Update,
    /// Newer, on another date: leaves the old date and joins the new one.
    Move,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Insert,
        Outcome::Stale,
        Outcome::Same,
        Outcome::Update,
        Outcome::Move,
    ];

    /// Its code, as the Spark engine's queries carry it.
    pub fn code(self) -> &'static str {
        match self {
            Outcome::Insert => "insert",
            Outcome::Stale => "stale",
            Outcome::Same => "same",
            Outcome::Update => "update",
            Outcome::Move => "move",
        }
    }

    /// The outcome of `code`, `None` for any other text.
    pub fn of_code(code: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.code() == code)
    }

    /// Whether the winner is written (it takes its key's row).
    pub fn writes(self) -> bool {
        self == Outcome::Insert || self.replaces()
    }

    /// Whether the key's published row is replaced or moved away.
    pub fn replaces(self) -> bool {
        matches!(self, Outcome::Update | Outcome::Move)
    }

    /// §10.2–3 for a winner dated `date`, against the key's published `row` on
    /// `old_date`, if any.
    pub fn decide(
        winner: &Record,
        date: Date,
        published: Option<(Date, &Record)>,
        schema: &Schema,
    ) -> Outcome {
        let Some((old_date, row)) = published else {
            return Outcome::Insert;
        };
        if Precedence::of(winner, schema) < Precedence::of(row, schema) {
            Outcome::Stale
        } else if winner == row {
            Outcome::Same
        } else if old_date == date {
            Outcome::Update
        } else {
            Outcome::Move
        }
    }
}

/// Merges `winners` (the batch's rank-1 events) into `published`, each date read whole
/// and written as one file.
pub fn merge(winners: &[Event], published: &PublishedRows, schema: &Schema) -> Merged {
    let files = PublishedFiles {
        by_date: published
            .by_date
            .iter()
            .map(|(date, rows)| {
                let file = PublishedFile {
                    rows: rows.len() as u64,
                    read: Some(rows.clone()),
                    ..PublishedFile::default()
                };
                (*date, vec![file])
            })
            .collect(),
    };
    merge_files(winners, files, schema, u64::MAX)
}

/// A published row a merge meets: its date, and its file and row there.
type Place = (Date, usize, usize);

/// Merges `winners` into the `published` files: a read file that loses or gains a row is
/// rewritten, split into files of at most `target_file_rows` rows; every other file is
/// kept. A new key goes to the file whose key range it falls in, or past the last one.
/// The read rows move into the rewritten files: none is copied.
pub fn merge_files(
    winners: &[Event],
    mut published: PublishedFiles,
    schema: &Schema,
    target_file_rows: u64,
) -> Merged {
    let merged = merge_read(winners, &published, schema, target_file_rows);
    let dates = merged
        .dates
        .into_iter()
        .map(|(date, plan)| {
            let mut files = published.by_date.remove(&date).unwrap_or_default();
            let (plan, rows) = plan.with_rows(Vec::<Event>::new());
            let rows = rows
                .into_iter()
                .map(|row| match row {
                    Row::Winner(event) => event,
                    Row::Read { file, row } => Event {
                        line: 0,
                        record: files[file]
                            .read
                            .as_mut()
                            .map(|rows| std::mem::take(&mut rows[row]))
                            .unwrap_or_default(),
                    },
                })
                .collect();
            (date, plan.with_rows(rows).0)
        })
        .collect();
    Merged {
        dates,
        stale: merged.stale,
        ties_by_arrival: merged.ties_by_arrival,
    }
}

impl<T> Default for MergedDate<T> {
    fn default() -> Self {
        MergedDate {
            rows_before: 0,
            inserted: 0,
            updated: 0,
            moved_in: 0,
            moved_out: 0,
            rows_after: 0,
            files_read: 0,
            files_rewritten: 0,
            rows: Vec::new(),
            files: Vec::new(),
        }
    }
}

impl<T> Default for Merged<T> {
    fn default() -> Self {
        Merged {
            dates: BTreeMap::new(),
            stale: 0,
            ties_by_arrival: 0,
        }
    }
}

impl<T> MergedDate<T> {
    /// The same date with `rows` for its rows, and the rows it had.
    pub fn with_rows<U>(self, rows: Vec<U>) -> (MergedDate<U>, Vec<T>) {
        let MergedDate {
            rows_before,
            inserted,
            updated,
            moved_in,
            moved_out,
            rows_after,
            files_read,
            files_rewritten,
            rows: had,
            files,
        } = self;
        let date = MergedDate {
            rows_before,
            inserted,
            updated,
            moved_in,
            moved_out,
            rows_after,
            files_read,
            files_rewritten,
            rows,
            files,
        };
        (date, had)
    }
}

/// [`merge_files`] over read rows of any kind, each written row named by its place
/// ([`Row`]): only the rows of the winners' keys become records.
pub fn merge_read<R: ReadRows>(
    winners: &[Event],
    published: &PublishedFiles<R>,
    schema: &Schema,
    target_file_rows: u64,
) -> Merged<Row> {
    let date_of = |record: &Record| record[schema.date_of].instant().map(|i| i.utc_date());
    let mut merged = Merged::default();
    // The published rows of the winners' keys (no other row becomes a record), by place.
    let live = live_rows(winners, published, schema);
    let mut gone: FxHashSet<Place> = FxHashSet::default();
    let mut incoming: BTreeMap<Date, Vec<Event>> = BTreeMap::new();
    for winner in winners {
        let Some(date) = date_of(&winner.record) else {
            continue;
        };
        let key = &winner.record[schema.key];
        let copies = live.get(key).map(Vec::as_slice).unwrap_or_default();
        // The published row is the best copy; any other copy is crash residue. A crash
        // between two swaps can leave a moved key on two dates; the batch that moved it
        // repairs that on its rerun.
        let Some((old, row)) = copies
            .iter()
            .max_by_key(|((d, _, _), r)| (Precedence::of(r, schema), *d))
        else {
            entry(&mut merged, published, date).inserted += 1;
            incoming.entry(date).or_default().push(winner.clone());
            continue;
        };
        let old_date = old.0;
        for (extra, _) in copies.iter().filter(|((d, _, _), _)| *d != old_date) {
            gone.insert(*extra);
            entry(&mut merged, published, extra.0).moved_out += 1;
        }
        let outcome = Outcome::decide(&winner.record, date, Some((old_date, row)), schema);
        if outcome == Outcome::Stale {
            merged.stale += 1;
            continue;
        }
        if !outcome.replaces() {
            continue;
        }
        if Precedence::of(&winner.record, schema) == Precedence::of(row, schema) {
            merged.ties_by_arrival += 1;
        }
        // Every copy on the date it leaves: the row, and any duplicate beside it.
        for (place, _) in copies.iter().filter(|((d, _, _), _)| *d == old_date) {
            gone.insert(*place);
        }
        if outcome == Outcome::Update {
            entry(&mut merged, published, date).updated += 1;
        } else {
            entry(&mut merged, published, old_date).moved_out += 1;
            entry(&mut merged, published, date).moved_in += 1;
        }
        incoming.entry(date).or_default().push(winner.clone());
    }
    for (date, plan) in merged.dates.iter_mut() {
        let files = published
            .by_date
            .get(date)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let arriving = incoming.remove(date).unwrap_or_default();
        lay_out(
            plan,
            files,
            arriving,
            |file, row| gone.contains(&(*date, file, row)),
            schema,
            target_file_rows,
        );
    }
    merged
}

/// Where each of the winners' keys is published, and its row: every copy in a read file.
fn live_rows<R: ReadRows>(
    winners: &[Event],
    published: &PublishedFiles<R>,
    schema: &Schema,
) -> FxHashMap<Value, Vec<(Place, Record)>> {
    let keys: FxHashSet<&Value> = winners.iter().map(|w| &w.record[schema.key]).collect();
    let mut live: FxHashMap<Value, Vec<(Place, Record)>> = FxHashMap::default();
    for (date, files) in &published.by_date {
        for (at, file) in files.iter().enumerate() {
            let Some(read) = &file.read else { continue };
            for row in 0..read.len() {
                let key = read.key(row, schema);
                if keys.contains(&key) {
                    let record = read.record(row, schema);
                    live.entry(key)
                        .or_default()
                        .push(((*date, at, row), record));
                }
            }
        }
    }
    live
}

/// Lays the date's rows out in files: each read file keeps its rows but those `gone`
/// (by file and row), takes the `arriving` rows of its key range, and is rewritten if
/// either changed it.
fn lay_out<R: ReadRows>(
    plan: &mut MergedDate<Row>,
    files: &[PublishedFile<R>],
    arriving: Vec<Event>,
    gone: impl Fn(usize, usize) -> bool,
    schema: &Schema,
    target_file_rows: u64,
) {
    // One bucket per file, and one past them for keys no file's range takes.
    let mut buckets: Vec<Vec<(Value, Event)>> = vec![Vec::new(); files.len() + 1];
    let arrived = arriving.len() as u64;
    for event in arriving {
        let key = event.record[schema.key].clone();
        let at = bucket(files, &key, target_file_rows, |i| files[i].read.is_some());
        buckets[at].push((key, event));
    }
    let mut removed = 0u64;
    for (i, mut bucket) in buckets.into_iter().enumerate() {
        let read = files.get(i).and_then(|f| f.read.as_ref());
        plan.files_read += u64::from(read.is_some());
        bucket.sort_by(|a, b| a.0.cmp(&b.0));
        let start = plan.rows.len();
        let changed = !bucket.is_empty();
        let dropped = match read {
            Some(read) => merge_rows(
                &mut plan.rows,
                (i, read),
                |row| gone(i, row),
                bucket,
                schema,
            ),
            None => {
                plan.rows
                    .extend(bucket.into_iter().map(|(_, e)| Row::Winner(e)));
                0
            }
        };
        removed += dropped;
        if !changed && dropped == 0 {
            plan.rows.truncate(start);
            if let Some(file) = files.get(i) {
                plan.files.push(FileOut::Kept(file.path.clone()));
            }
            continue;
        }
        plan.files_rewritten += u64::from(i < files.len());
        let rows = (plan.rows.len() - start) as u64;
        for range in Split::by_target(rows, target_file_rows).ranges(rows) {
            plan.files
                .push(FileOut::Written(start + range.start..start + range.end));
        }
    }
    plan.rows_after = plan.rows_before + arrived - removed;
}

/// Appends to `out` the rows of file `file` but those `gone`, and the `arriving` rows
/// (sorted by key), in key order, a file's row before an arriving one of an equal key;
/// returns the rows left out. A file in key order (as Wharf writes them) takes one merge;
/// one out of order (another writer's) is sorted whole, which orders rows the same way.
fn merge_rows<R: ReadRows>(
    out: &mut Vec<Row>,
    (file, read): (usize, &R),
    gone: impl Fn(usize) -> bool,
    arriving: Vec<(Value, Event)>,
    schema: &Schema,
) -> u64 {
    let start = out.len();
    out.reserve(read.len() + arriving.len());
    let mut arriving = arriving.into_iter().peekable();
    let (mut dropped, mut last) = (0, None::<Value>);
    for row in 0..read.len() {
        if gone(row) {
            dropped += 1;
            continue;
        }
        let key = read.key(row, schema);
        if last.as_ref().is_some_and(|last| *last > key) {
            let mut taken: Vec<(Value, Event)> = Vec::new();
            for row in out.drain(start..) {
                if let Row::Winner(event) = row {
                    taken.push((event.record[schema.key].clone(), event));
                }
            }
            taken.extend(arriving);
            return sort_rows(out, (file, read), gone, taken, schema);
        }
        while let Some((_, event)) = arriving.next_if(|(at, _)| *at < key) {
            out.push(Row::Winner(event));
        }
        out.push(Row::Read { file, row });
        last = Some(key);
    }
    out.extend(arriving.map(|(_, event)| Row::Winner(event)));
    dropped
}

/// [`merge_rows`] for a file out of key order: every row with its key, sorted (stably, so
/// a file's row comes before an arriving one of an equal key).
fn sort_rows<R: ReadRows>(
    out: &mut Vec<Row>,
    (file, read): (usize, &R),
    gone: impl Fn(usize) -> bool,
    arriving: Vec<(Value, Event)>,
    schema: &Schema,
) -> u64 {
    let kept: Vec<usize> = (0..read.len()).filter(|&row| !gone(row)).collect();
    let dropped = (read.len() - kept.len()) as u64;
    let mut rows: Vec<(Value, Row)> = kept
        .into_iter()
        .map(|row| (read.key(row, schema), Row::Read { file, row }))
        .chain(arriving.into_iter().map(|(key, e)| (key, Row::Winner(e))))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    out.extend(rows.into_iter().map(|(_, row)| row));
    dropped
}

/// The bucket a new `key` of the date joins: [`file_for`] when the batch `read` that file,
/// else the bucket past every file. Bucket `i` below `files.len()` is file `i`'s.
pub fn bucket<R>(
    files: &[PublishedFile<R>],
    key: &Value,
    target_file_rows: u64,
    read: impl Fn(usize) -> bool,
) -> usize {
    file_for(files, key, target_file_rows)
        .filter(|&i| read(i))
        .unwrap_or(files.len())
}

/// The file (of a date's, in key order) whose key range takes a new `key`: the last
/// starting at or below it, else the first; `None` past a full last file, or with none.
pub fn file_for<R>(
    files: &[PublishedFile<R>],
    key: &Value,
    target_file_rows: u64,
) -> Option<usize> {
    let at = files
        .iter()
        .rposition(|f| f.min.as_ref().is_none_or(|min| min <= key))
        .unwrap_or(0);
    let file = files.get(at)?;
    let beyond = file.max.as_ref().is_some_and(|max| key > max);
    let full = file.rows >= target_file_rows;
    (!(at + 1 == files.len() && beyond && full)).then_some(at)
}

fn entry<'m, T, R>(
    merged: &'m mut Merged<T>,
    published: &PublishedFiles<R>,
    date: Date,
) -> &'m mut MergedDate<T> {
    merged.dates.entry(date).or_insert_with(|| MergedDate {
        rows_before: published
            .by_date
            .get(&date)
            .map_or(0, |files| files.iter().map(|f| f.rows).sum()),
        ..MergedDate::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Instant;

    /// An order event of `key` at `secs` past a day's start, told apart by `line`.
    fn event(schema: &Schema, key: i64, secs: i64, line: u64) -> Event {
        let mut r = vec![Value::Null; schema.fields.len()];
        r[schema.event_id] = Value::Str(format!("e{key}-{line}").into());
        r[schema.key] = Value::Int(key);
        r[schema.order_by] = Value::Ts(Instant::from_parts(1_709_251_200 + secs, 0));
        Event {
            line,
            record: r.into_boxed_slice(),
        }
    }

    /// A rewritten file holds its kept rows and the arriving ones in key order, a
    /// duplicate key's rows in the file's order: by one merge for a file in key order, by
    /// a sort for one out of it (another writer's), to the same rows either way.
    #[test]
    fn a_rewritten_file_is_in_key_order_whether_or_not_its_rows_were() {
        let schema = crate::config::fixtures::orders().schema.clone();
        let date = Instant::from_parts(1_709_251_200, 0).utc_date();
        let winners: Vec<Event> = [(4, 1), (9, 50), (2, 2), (10, 3), (0, 4)]
            .iter()
            .map(|&(key, secs)| event(&schema, key, secs, 100 + key as u64))
            .collect();
        let merged = |keys: &[i64]| {
            let rows: Vec<Record> = keys
                .iter()
                .enumerate()
                .map(|(line, &key)| event(&schema, key, 10, line as u64).record)
                .collect();
            let mut published = PublishedFiles::default();
            let file = PublishedFile {
                path: "event_date=2024-03-01/part-00000.parquet".into(),
                rows: rows.len() as u64,
                min: Some(Value::Int(1)),
                max: Some(Value::Int(9)),
                read: Some(rows),
            };
            published.by_date.insert(date, vec![file]);
            let merged = merge_files(&winners, published, &schema, 1_000_000);
            let day = &merged.dates[&date];
            assert_eq!((day.inserted, day.updated, day.rows_after), (4, 1, 9));
            let ids: Vec<String> = day
                .rows
                .iter()
                .map(|e| match &e.record[schema.event_id] {
                    Value::Str(id) => id.to_string(),
                    other => panic!("event id {other:?}"),
                })
                .collect();
            (ids, day.files.clone())
        };
        let want: Vec<&str> = ["e0-100", "e1-0", "e2-102", "e3-1", "e3-2", "e4-104", "e5-3"]
            .into_iter()
            .chain(["e9-109", "e10-110"])
            .collect();
        let (in_order, files) = merged(&[1, 3, 3, 5, 9]);
        assert_eq!(in_order, want);
        assert_eq!(files, [FileOut::Written(0..9)]);
        let (out_of_order, files) = merged(&[5, 3, 9, 1, 3]);
        let want: Vec<&str> = want
            .iter()
            .map(|id| match *id {
                "e1-0" => "e1-3",
                "e3-1" => "e3-1",
                "e3-2" => "e3-4",
                "e5-3" => "e5-0",
                other => other,
            })
            .collect();
        assert_eq!(out_of_order, want);
        assert_eq!(files, [FileOut::Written(0..9)]);
    }

    #[test]
    fn every_outcome_reads_back_from_its_code_and_no_other_text_does() {
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::of_code(outcome.code()), Some(outcome));
        }
        assert_eq!(Outcome::of_code("moved"), None);
        assert_eq!(Outcome::of_code(""), None);
    }

    #[test]
    fn only_a_newer_different_row_replaces_and_only_those_and_inserts_write() {
        let replacing: Vec<Outcome> = Outcome::ALL.into_iter().filter(|o| o.replaces()).collect();
        assert_eq!(replacing, [Outcome::Update, Outcome::Move]);
        let writing: Vec<Outcome> = Outcome::ALL.into_iter().filter(|o| o.writes()).collect();
        assert_eq!(writing, [Outcome::Insert, Outcome::Update, Outcome::Move]);
    }
}
