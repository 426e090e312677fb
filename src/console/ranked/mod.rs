//! The Ranked tab's data: [`build`] re-reads an input with the core's own `input::scan`
//! and `contract::classify`, collapses retries as §2 does, groups accepted events by key
//! and ranks each key with `plan::rank::rank_key` (§3), keeping why each event lost.
//! The console adds nothing to the contract here; it only keeps what the plan discards.

use std::collections::HashMap;
use std::path::Path;

use crate::config::Config;
use crate::contract::{self, Instant, Outcome, Value};
use crate::error::Result;
use crate::input;
use crate::plan::rank::{self, Event, LostBecause};
use crate::plan::tally::display_value;

/// Why a row is where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// Rank 1: the published row.
    Kept,
    /// Ranked below the event above it.
    Lost(LostBecause),
    /// An identical retry of the event on line `of` (collapsed onto it).
    Retry { of: u64 },
    /// Same event id as line `of` with different values: a breach.
    Conflict { of: u64 },
}

/// One event of a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankedRow {
    /// 1-based; `None` for retries and conflicts, which are not ranked.
    pub rank: Option<u32>,
    pub line: u64,
    pub event_id: String,
    pub instant: String,
    pub tiebreak: Option<i64>,
    /// The other declared fields as `name=value`, for telling events apart.
    pub fields: String,
    pub note: Note,
}

/// One key's events, rank 1 first, then retries and conflicts by line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub key: String,
    pub rows: Vec<RankedRow>,
    /// Rank 1 and rank 2 tie on instant and tiebreak (decided by arrival).
    pub tie: bool,
    pub conflict: bool,
}

/// Every key of an input, sorted by key as published.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranked {
    pub groups: Vec<Group>,
    /// The tiebreak field's name, for the column header.
    pub tiebreak: Option<String>,
    pub order_by: String,
}

/// Reads `path` and ranks every key; `progress(bytes, total)` returns `false` to cancel.
pub fn build(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Ranked> {
    let schema = &config.schema;
    let mut opened = input::open(path)?;
    let total = opened.size;
    let mut events: Vec<Event> = Vec::new();
    let mut by_event_id: HashMap<Value, usize> = HashMap::new();
    let mut by_key: HashMap<Value, Vec<usize>> = HashMap::new();
    let mut extra: HashMap<Value, Vec<(u64, Note, contract::Record)>> = HashMap::new();
    input::scan(
        &mut opened.file,
        path,
        config.max_line_bytes,
        &mut |bytes| progress(bytes, total),
        |line, bytes| {
            let Outcome::Accepted(record) = contract::classify(bytes, schema) else {
                return;
            };
            let event_id = record[schema.event_id].clone();
            if let Some(&first) = by_event_id.get(&event_id) {
                let earlier = &events[first];
                let note = if earlier.record == record {
                    Note::Retry { of: earlier.line }
                } else {
                    Note::Conflict { of: earlier.line }
                };
                extra
                    .entry(record[schema.key].clone())
                    .or_default()
                    .push((line, note, record));
                return;
            }
            by_event_id.insert(event_id, events.len());
            by_key
                .entry(record[schema.key].clone())
                .or_default()
                .push(events.len());
            events.push(Event { line, record });
        },
    )?;
    let mut slots: Vec<Option<Event>> = events.into_iter().map(Some).collect();
    let mut keys: Vec<Value> = by_key.keys().chain(extra.keys()).cloned().collect();
    keys.sort_unstable();
    keys.dedup();
    let groups = keys
        .into_iter()
        .map(|key| {
            let mine: Vec<Event> = by_key
                .remove(&key)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|i| slots[i].take())
                .collect();
            let mut rows: Vec<RankedRow> = rank::rank_key(mine, schema)
                .into_iter()
                .enumerate()
                .map(|(i, (event, lost))| {
                    let note = lost.map_or(Note::Kept, Note::Lost);
                    row(config, Some(i as u32 + 1), event.line, &event.record, note)
                })
                .collect();
            let tie = rows
                .get(1)
                .is_some_and(|r| r.note == Note::Lost(LostBecause::EarlierArrival));
            let mut others = extra.remove(&key).unwrap_or_default();
            others.sort_by_key(|(line, _, _)| *line);
            let conflict = others
                .iter()
                .any(|(_, n, _)| matches!(n, Note::Conflict { .. }));
            rows.extend(
                others
                    .iter()
                    .map(|(line, note, record)| row(config, None, *line, record, *note)),
            );
            Group {
                key: display_value(&key),
                rows,
                tie,
                conflict,
            }
        })
        .collect();
    Ok(Ranked {
        groups,
        tiebreak: schema.tiebreak.map(|i| schema.name(i).to_owned()),
        order_by: schema.name(schema.order_by).to_owned(),
    })
}

fn row(
    config: &Config,
    rank: Option<u32>,
    line: u64,
    record: &contract::Record,
    note: Note,
) -> RankedRow {
    let schema = &config.schema;
    let roles = [
        Some(schema.key),
        Some(schema.order_by),
        schema.tiebreak,
        Some(schema.event_id),
    ];
    let fields = schema
        .fields
        .iter()
        .enumerate()
        .filter(|(i, _)| !roles.contains(&Some(*i)) && record[*i] != Value::Null)
        .map(|(i, f)| format!("{}={}", f.name, short_value(&record[i])))
        .collect::<Vec<_>>()
        .join(" ");
    RankedRow {
        rank,
        line,
        event_id: display_value(&record[schema.event_id]),
        instant: record[schema.order_by]
            .instant()
            .map(short_instant)
            .unwrap_or_default(),
        tiebreak: schema.tiebreak.and_then(|i| record[i].int()),
        fields,
        note,
    }
}

fn short_value(value: &Value) -> String {
    match value {
        Value::Ts(instant) => short_instant(*instant),
        other => display_value(other),
    }
}

/// `2024-03-01T10:15:00Z`, with a fraction only when there is one.
pub fn short_instant(instant: Instant) -> String {
    let full = instant.to_string();
    let Some((head, fraction)) = full.trim_end_matches('Z').split_once('.') else {
        return full;
    };
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        format!("{head}Z")
    } else {
        format!("{head}.{fraction}Z")
    }
}

impl Note {
    /// Short words for the table.
    pub fn describe(self) -> String {
        match self {
            Note::Kept => "kept (published)".into(),
            Note::Lost(why) => why.describe().into(),
            Note::Retry { of } => format!("identical retry of line {of}"),
            Note::Conflict { of } => format!("conflict with line {of} (breach)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_courier_burst_ranks_with_reasons() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let config = Config::load(&root.join("wharf.toml")).unwrap();
        let ranked = build(
            &config,
            &root.join("inbox/02-courier-burst.jsonl"),
            &mut |_, _| true,
        )
        .unwrap();
        let keys: Vec<&str> = ranked.groups.iter().map(|g| g.key.as_str()).collect();
        assert_eq!(keys, ["201", "202", "205"]);
        let notes: Vec<(Option<u32>, u64, Note)> = ranked.groups[0]
            .rows
            .iter()
            .map(|r| (r.rank, r.line, r.note))
            .collect();
        assert_eq!(
            notes,
            [
                (Some(1), 2, Note::Kept),
                (Some(2), 3, Note::Lost(LostBecause::Older)),
                (Some(3), 1, Note::Lost(LostBecause::Older)),
                (None, 4, Note::Retry { of: 2 }),
            ]
        );
        assert_eq!(
            ranked.groups[1].rows[1].note,
            Note::Lost(LostBecause::LowerTiebreak)
        );
        assert_eq!(ranked.groups[0].rows[0].instant, "2024-03-02T08:15:00Z");
        assert!(ranked.groups[0].rows[0].fields.contains("status=DELIVERED"));
    }
}
