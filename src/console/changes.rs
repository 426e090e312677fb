//! The Changes tab's data: what a landing of the selected input would change, key by
//! key, against the partitions published now. It is `wharf diff` (`land::preview`, then
//! `diff::diff_date` per date) kept for the screen: each changed key with only the fields
//! the screen shows (every field of an inserted or removed row, the differing ones of an
//! updated row), so a day of 580k changed keys stays a few hundred bytes a key.

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
    /// It is refused: nothing would change.
    Refused { code: &'static str, why: String },
    /// Already published, every date still its own: nothing would change.
    Skipped,
}

/// One changed key: for an insert the new row's non-null fields (`after`), for a removal
/// the old row's (`before`), for an update only the fields that differ, both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub event_date: Date,
    pub kind: Kind,
    pub key: Value,
    /// (field index, before, after); the side that does not exist is `Null`.
    pub fields: Box<[(u16, Value, Value)]>,
}

impl Item {
    fn from_change(change: Change) -> Item {
        let fields = change.changed_fields();
        let side = |row: &Option<crate::contract::Record>, i: usize| {
            row.as_ref()
                .and_then(|r| r.get(i).cloned())
                .unwrap_or(Value::Null)
        };
        // An inserted or removed row's null fields say nothing: they are left out.
        let fields = fields
            .into_iter()
            .map(|i| {
                let field = u16::try_from(i).unwrap_or(u16::MAX);
                (field, side(&change.before, i), side(&change.after, i))
            })
            .filter(|(_, before, after)| *before != Value::Null || *after != Value::Null)
            .collect();
        Item {
            event_date: change.event_date,
            kind: change.kind,
            key: change.key,
            fields,
        }
    }

    /// The key as the tab shows it and `/` matches it.
    pub fn key_text(&self) -> String {
        json::text(&self.key)
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
    /// The changed keys, date by date, each date in key order.
    pub items: Vec<Item>,
    /// The schema's field names, by index, and the key's.
    pub fields: Vec<String>,
    pub key_field: usize,
    /// The event id, `order_by` and tiebreak fields: they change with every newer event,
    /// so the row lists them after the fields that say what happened.
    pub bookkeeping: Vec<usize>,
}

impl Changes {
    /// The indexes of the items `shown` and whose key contains `filter`.
    pub fn select(&self, shown: Shown, filter: &str) -> Vec<u32> {
        let wanted = |item: &Item| {
            shown.lets(item.kind) && (filter.is_empty() || item.key_text().contains(filter))
        };
        (0..self.items.len())
            .filter(|&i| wanted(&self.items[i]))
            .map(|i| i as u32)
            .collect()
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
/// reads and stages; `cancelled` stops the work (also mid-diff).
pub fn build(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(Progress) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Changes> {
    let mut engine = engine::open(config)?;
    let plan = preview::preview(
        config,
        engine.as_mut(),
        path,
        DecideOptions::default(),
        progress,
    )?;
    let (preview, outcome) = match (&plan.plan.action, &plan.plan.refusal) {
        (Action::Publish, _) => (plan, Outcome::Publishes),
        (Action::Skip, _) => (plan, Outcome::Skipped),
        (Action::Refuse, Some(Refusal::Shrink { .. })) => {
            let allowed = DecideOptions { allow_shrink: true };
            let confirmed = preview::preview(config, engine.as_mut(), path, allowed, progress)?;
            (confirmed, Outcome::IfShrinkConfirmed)
        }
        (Action::Refuse, refusal) => {
            let code = refusal.as_ref().map_or("refused", Refusal::code);
            let why = refusal
                .as_ref()
                .map(|r| r.explain(&plan.plan))
                .unwrap_or_default();
            (plan, Outcome::Refused { code, why })
        }
    };
    let mut changes = Changes {
        input_name: preview.plan.input_name.clone(),
        outcome,
        dates: Vec::new(),
        items: Vec::new(),
        fields: config
            .schema
            .fields
            .iter()
            .map(|f| f.name.clone())
            .collect(),
        key_field: config.schema.key,
        bookkeeping: [config.schema.event_id, config.schema.order_by]
            .into_iter()
            .chain(config.schema.tiebreak)
            .collect(),
    };
    if preview.plan.action != Action::Publish {
        return Ok(changes);
    }
    for date in preview.dates(None) {
        let counts = preview.diff(config, date, &mut |change| {
            changes.items.push(Item::from_change(change));
            !cancelled()
        })?;
        if cancelled() {
            return Err(crate::Error::Cancelled);
        }
        changes.dates.push(counts);
    }
    Ok(changes)
}
