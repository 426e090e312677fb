//! The Changes tab's data: what a landing of the selected input would change, key by
//! key, against the partitions published now (the History view's diff of a past landing
//! is kept in the same [`Changes`], by `super::landed`). It is `wharf diff` (`land::preview`, then
//! `diff::diff_date` per date) kept for the screen: each changed key with only the fields
//! the screen shows (every field of an inserted or removed row, the differing ones of an
//! updated row), encoded in one arena, so a day of a million changed keys stays ~150
//! bytes a key.

use std::path::Path;

use crate::config::Config;
use crate::contract::{Date, Value};
use crate::diff::{Change, DateDiff, Kind, json};
use crate::engine::{self, Progress};
use crate::error::Result;
use crate::land::preview;
use crate::plan::{Action, DecideOptions, Refusal};

/// What a run of the input would do, as the tab introduces the changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It publishes: the changes are what it writes.
    Publishes,
    /// It is refused for `shrink` unless the operator confirms; the changes are what it
    /// writes then.
    IfShrinkConfirmed,
    /// The same for `growth` (§5.10).
    IfGrowthConfirmed,
    /// It is refused: nothing would change.
    Refused { code: &'static str, why: String },
    /// Already published, every date still its own: nothing would change.
    Skipped,
    /// A past landing (the History view): the changes are what it did.
    Landed,
    /// No diff can be made here (`why` says why; a Delta table's landings).
    Unavailable { why: String },
}

/// One changed key; its fields are kept encoded in [`Changes`]'s arena (a day of 966k
/// changed keys held as values took ~450 bytes a key; encoded, ~100).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub event_date: Date,
    pub kind: Kind,
    /// Where its fields are in the arena (its key's text is in `keys_text`).
    at: u32,
    len: u32,
}

/// One field as the tab shows it: for an insert the new row's non-null fields (`after`),
/// for a removal the old row's (`before`), for an update the fields that differ; the side
/// that does not exist is `Null`.
pub type FieldChange = (u16, Value, Value);

/// Appends `change`'s fields to `arena`, each as its index and both sides.
fn encode(change: &Change, arena: &mut Vec<u8>) {
    fn side(row: &Option<crate::contract::Record>, i: usize) -> &Value {
        row.as_ref().and_then(|r| r.get(i)).unwrap_or(&Value::Null)
    }
    for i in change.changed_fields() {
        let (before, after) = (side(&change.before, i), side(&change.after, i));
        // An inserted or removed row's null fields say nothing: they are left out.
        if *before == Value::Null && *after == Value::Null {
            continue;
        }
        arena.extend_from_slice(&u16::try_from(i).unwrap_or(u16::MAX).to_le_bytes());
        encode_value(before, arena);
        encode_value(after, arena);
    }
}

fn encode_value(value: &Value, arena: &mut Vec<u8>) {
    match value {
        Value::Null => arena.push(0),
        Value::Int(n) => {
            arena.push(1);
            arena.extend_from_slice(&n.to_le_bytes());
        }
        Value::Str(s) => {
            arena.push(2);
            let len = u32::try_from(s.len()).unwrap_or(u32::MAX);
            arena.extend_from_slice(&len.to_le_bytes());
            arena.extend_from_slice(&s.as_bytes()[..len as usize]);
        }
        // Published instants are whole microseconds.
        Value::Ts(instant) => {
            arena.push(3);
            arena.extend_from_slice(&instant.micros().to_le_bytes());
        }
        Value::Float(bits) => {
            arena.push(4);
            arena.extend_from_slice(&bits.to_le_bytes());
        }
        Value::Bool(b) => arena.push(if *b { 6 } else { 5 }),
    }
}

/// Reads one value [`encode_value`] wrote at `bytes[*at..]`, moving `at` past it.
fn decode_value(bytes: &[u8], at: &mut usize) -> Value {
    let mut take = |n: usize| {
        let slice = bytes.get(*at..*at + n).unwrap_or_default();
        *at += n;
        slice
    };
    let word = |slice: &[u8]| i64::from_le_bytes(slice.try_into().unwrap_or_default());
    match take(1).first() {
        Some(1) => Value::Int(word(take(8))),
        Some(2) => {
            let len = u32::from_le_bytes(take(4).try_into().unwrap_or_default());
            Value::Str(String::from_utf8_lossy(take(len as usize)).as_ref().into())
        }
        Some(3) => Value::Ts(crate::contract::Instant::from_micros(word(take(8)))),
        Some(4) => Value::Float(word(take(8)) as u64),
        Some(5) => Value::Bool(false),
        Some(6) => Value::Bool(true),
        _ => Value::Null,
    }
}

/// Which kinds of change the tab lists (`f` cycles them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shown {
    #[default]
    All,
    Only(Kind),
}

impl Shown {
    /// The next in the cycle all → inserted → updated → removed → all.
    pub fn next(self) -> Shown {
        match self {
            Shown::All => Shown::Only(Kind::Inserted),
            Shown::Only(Kind::Inserted) => Shown::Only(Kind::Updated),
            Shown::Only(Kind::Updated) => Shown::Only(Kind::Removed),
            Shown::Only(Kind::Removed) => Shown::All,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Shown::All => "all",
            Shown::Only(kind) => kind.code(),
        }
    }

    fn lets(self, kind: Kind) -> bool {
        self == Shown::All || self == Shown::Only(kind)
    }
}

/// Every change a landing of one input would make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changes {
    pub input_name: String,
    pub outcome: Outcome,
    /// Per date the plan writes, its counts (unchanged included).
    pub dates: Vec<DateDiff>,
    /// What a date's counts alone do not say (a History diff's "new date"), or why a date
    /// has none ("no earlier generation kept"), in date order.
    pub notes: Vec<(Date, &'static str)>,
    /// The changed keys, date by date, each date in key order.
    pub items: Vec<Item>,
    /// The items' fields, encoded.
    arena: Vec<u8>,
    /// Every item's key as text, each followed by `\n`, and where each starts (one more,
    /// the end): `/` searches them without formatting a key.
    keys_text: String,
    key_starts: Vec<u32>,
    /// The schema's field names, by index, and the key's.
    pub fields: Vec<String>,
    pub key_field: usize,
    /// The event id, `order_by` and tiebreak fields: they change with every newer event,
    /// so the row lists them after the fields that say what happened.
    pub bookkeeping: Vec<usize>,
}

impl Changes {
    /// No changes yet, for `input_name` with `outcome`, over `config`'s schema.
    pub fn new(config: &Config, input_name: &str, outcome: Outcome) -> Changes {
        let schema = &config.schema;
        Changes {
            input_name: input_name.to_owned(),
            outcome,
            dates: Vec::new(),
            notes: Vec::new(),
            items: Vec::new(),
            arena: Vec::new(),
            keys_text: String::new(),
            key_starts: vec![0],
            fields: schema.fields.iter().map(|f| f.name.clone()).collect(),
            key_field: schema.key,
            bookkeeping: [schema.event_id, schema.order_by]
                .into_iter()
                .chain(schema.tiebreak)
                .collect(),
        }
    }

    /// Keeps one changed key (its dates' counts go to `dates`).
    pub fn push(&mut self, change: &Change) {
        let at = self.arena.len();
        encode(change, &mut self.arena);
        let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        // A key's own line breaks would join two keys for the search.
        let text = json::text(&change.key).replace('\n', " ");
        self.keys_text.push_str(&text);
        self.keys_text.push('\n');
        self.key_starts.push(offset(self.keys_text.len()));
        self.items.push(Item {
            event_date: change.event_date,
            kind: change.kind,
            at: offset(at),
            len: offset(self.arena.len() - at),
        });
    }

    /// Every change pushed: the buffers lose their spare room.
    pub fn done(mut self) -> Changes {
        self.items.shrink_to_fit();
        self.arena.shrink_to_fit();
        self.keys_text.shrink_to_fit();
        self.key_starts.shrink_to_fit();
        self
    }

    /// The indexes of the items `shown` and whose key contains `filter`.
    pub fn select(&self, shown: Shown, filter: &str) -> Vec<u32> {
        // One search per key's text: one search through all of them measured slower,
        // a frequent needle matching several times in most keys.
        self.narrow(0..self.items.len() as u32, shown, filter)
    }

    /// Those of `rows` that are `shown` and whose key contains `filter` (a filter typed
    /// on from the one `rows` passed need only look at them).
    pub fn narrow(&self, rows: impl Iterator<Item = u32>, shown: Shown, filter: &str) -> Vec<u32> {
        let finder = memchr::memmem::Finder::new(filter.as_bytes());
        rows.filter(|&i| {
            let item = &self.items[i as usize];
            shown.lets(item.kind)
                && (filter.is_empty() || finder.find(self.key_bytes(i as usize)).is_some())
        })
        .collect()
    }

    fn key_bytes(&self, i: usize) -> &[u8] {
        self.key_text(i).as_bytes()
    }

    /// Item `i`'s key as the tab shows it and `/` matches it.
    pub fn key_text(&self, i: usize) -> &str {
        let (start, end) = (self.key_starts[i] as usize, self.key_starts[i + 1] as usize);
        // Less the separator after it.
        self.keys_text.get(start..end - 1).unwrap_or_default()
    }

    /// `item`'s fields, decoded.
    pub fn fields_of(&self, item: &Item) -> Vec<FieldChange> {
        let (start, end) = (item.at as usize, (item.at + item.len) as usize);
        let bytes = self.arena.get(start..end).unwrap_or_default();
        let mut at = 0;
        let mut out = Vec::new();
        while at + 2 <= bytes.len() {
            let field = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            at += 2;
            let before = decode_value(bytes, &mut at);
            let after = decode_value(bytes, &mut at);
            out.push((field, before, after));
        }
        out
    }

    pub fn field_name(&self, index: u16) -> &str {
        self.fields
            .get(usize::from(index))
            .map_or("?", |f| f.as_str())
    }
}

/// Diffs a landing of `path`: plans it (with the configured engine, which stages the
/// dates into a temporary folder outside the publish root) and merge-joins each date it
/// writes with the published partition. A `shrink` refusal is diffed as if confirmed, since
/// what it would delete is the question before confirming it. `progress` reports the
/// reads and stages; `cancelled` stops the work (also mid-diff). With `reland`, landed
/// bytes are diffed as a rerun would land them (§5.4).
pub fn build(
    config: &Config,
    (path, reland): (&Path, bool),
    progress: &mut dyn FnMut(Progress) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Changes> {
    let mut engine = engine::open(config)?;
    let options = DecideOptions {
        reland,
        ..DecideOptions::default()
    };
    let plan = preview::preview(config, engine.as_mut(), path, options, progress)?;
    let (preview, outcome) = match (&plan.plan.action, &plan.plan.refusal) {
        (Action::Publish, _) => (plan, Outcome::Publishes),
        (Action::Skip, _) => (plan, Outcome::Skipped),
        (Action::Refuse, Some(refusal @ (Refusal::Shrink { .. } | Refusal::Growth { .. }))) => {
            let allowed = DecideOptions {
                reland,
                ..DecideOptions::confirming(refusal).unwrap_or_default()
            };
            let outcome = match refusal {
                Refusal::Growth { .. } => Outcome::IfGrowthConfirmed,
                _ => Outcome::IfShrinkConfirmed,
            };
            let confirmed = preview::preview(config, engine.as_mut(), path, allowed, progress)?;
            (confirmed, outcome)
        }
        (Action::Refuse, refusal) => {
            let code = plan.plan.reason().unwrap_or("refused");
            let why = refusal
                .as_ref()
                .map(|r| r.explain(&plan.plan))
                .unwrap_or_default();
            (plan, Outcome::Refused { code, why })
        }
    };
    let mut changes = Changes::new(config, &preview.plan.input_name, outcome);
    if preview.plan.action != Action::Publish {
        return Ok(changes);
    }
    for date in preview.dates(None) {
        let counts = preview.diff(config, date, &mut |change| {
            changes.push(&change);
            !cancelled()
        })?;
        if cancelled() {
            return Err(crate::Error::Cancelled);
        }
        changes.dates.push(counts);
    }
    Ok(changes.done())
}
