//! CONTRACT.md §5 steps 4–10 as one pure function, [`decide`]: a [`Summary`] and the
//! [`Published`] state in, a [`Plan`] out. Steps 1–3 (config, lock, corrupt checkpoint)
//! are errors raised before a decision exists.

use std::collections::BTreeMap;

use super::rowset::RowSet;
use super::state::{Owner, Published};
use super::{Action, DatePlan, MergeCounts, Merged, Plan, Refusal, Summary};
use crate::config::{Config, WriteMode};
use crate::contract::Date;

/// What the operator allows for this run.
#[derive(Clone, Copy, Debug, Default)]
pub struct DecideOptions {
    /// Publish even where a date would lose more than `max_shrink` of its rows.
    pub allow_shrink: bool,
}

/// Decides what a run does with the input `owner` (its name and hash). In merge mode,
/// `merged` is what the batch does to the published rows (§10); in replace mode `None`.
pub fn decide(
    mut summary: Summary,
    owner: Owner,
    config: &Config,
    published: &Published,
    merged: Option<Merged>,
    options: DecideOptions,
) -> Plan {
    let date_plan = |event_date: Date, rows: u64, merge: Option<MergeCounts>| {
        let before = published.dates.get(&event_date);
        DatePlan {
            event_date,
            rows,
            rows_before: before.map(|b| b.rows),
            owner_before: before
                .and_then(|b| b.owner.as_ref())
                .map(|o| o.input_name.clone()),
            merge,
        }
    };
    let mut counts = summary.counts.clone();
    let fields = config.schema.fields.len();
    let (dates, partitions): (Vec<DatePlan>, BTreeMap<Date, RowSet>) = match merged {
        None => {
            let dates = summary
                .dates
                .iter()
                .map(|(&d, &rows)| date_plan(d, rows, None))
                .collect();
            let winners = std::mem::replace(&mut summary.winners, RowSet::new(fields));
            (dates, by_date(winners, &summary.dates, config))
        }
        Some(merged) => {
            counts.stale = merged.stale;
            counts.ties_by_arrival += merged.ties_by_arrival;
            let dates = merged
                .dates
                .iter()
                .map(|(&d, m)| {
                    let change = MergeCounts {
                        inserted: m.inserted,
                        updated: m.updated,
                        moved_in: m.moved_in,
                        moved_out: m.moved_out,
                    };
                    date_plan(d, m.rows.len() as u64, Some(change))
                })
                .collect();
            (
                dates,
                merged
                    .dates
                    .into_iter()
                    .map(|(d, m)| (d, RowSet::from_events(fields, &m.rows)))
                    .collect(),
            )
        }
    };
    let mut plan = Plan {
        product: config.product.clone(),
        input_name: owner.input_name.clone(),
        input_sha256: owner.input_sha256.clone(),
        action: Action::Publish,
        refusal: None,
        allowed_shrink: Vec::new(),
        counts,
        dates,
        findings: Vec::new(),
        partitions: BTreeMap::new(),
    };
    if is_skip(&owner, config, published) {
        plan.action = Action::Skip;
        plan.findings = summary.findings;
        return plan;
    }
    let shrinking: Vec<_> = plan
        .dates
        .iter()
        .filter(|d| loses_too_much(d, config.max_shrink))
        .map(|d| d.event_date)
        .collect();
    let refusal = if let Some(breach) = summary.first_breach() {
        Some(Refusal::Breach {
            reason: breach.issue.reason,
            line: breach.line,
            field: breach.issue.field.clone(),
        })
    } else if summary.counts.rejected > config.max_rejected_lines {
        Some(Refusal::RejectCap {
            rejected: summary.counts.rejected,
            max: config.max_rejected_lines,
        })
    } else if plan.dates.len() > config.max_dates {
        // Replace: the winners' dates. Merge: the dates that gain, change or lose a row.
        Some(Refusal::TooManyDates {
            dates: plan.dates.iter().map(|d| d.event_date).collect(),
            max: config.max_dates,
        })
    } else if summary.counts.keys == 0 && !config.publish_empty {
        Some(Refusal::EmptyInput)
    } else if config.write_mode == WriteMode::Replace && !shrinking.is_empty() {
        if options.allow_shrink {
            plan.allowed_shrink = shrinking;
            None
        } else {
            Some(Refusal::Shrink { dates: shrinking })
        }
    } else {
        None
    };
    plan.action = if refusal.is_some() {
        Action::Refuse
    } else {
        Action::Publish
    };
    plan.refusal = refusal;
    plan.findings = summary.findings;
    plan.partitions = partitions;
    plan
}

/// §5.4: the checkpoint holds this hash, every date it lists exists, and (replace mode)
/// each is still owned by this input.
fn is_skip(owner: &Owner, config: &Config, published: &Published) -> bool {
    let Some(checkpoint) = &published.checkpoint else {
        return false;
    };
    checkpoint.input_sha256 == owner.input_sha256
        && checkpoint.event_dates.iter().all(|text| {
            let date = crate::contract::Date::parse(text);
            match date.and_then(|d| published.dates.get(&d)) {
                None => false,
                Some(_) if config.write_mode == WriteMode::Merge => true,
                Some(now) => now.owner.as_ref() == Some(owner),
            }
        })
}

/// §5.9: the date exists and would lose more than `max_shrink` of its rows.
fn loses_too_much(date: &DatePlan, max_shrink: f64) -> bool {
    match date.rows_before {
        Some(before) if before > date.rows => {
            (before - date.rows) as f64 / before as f64 > max_shrink
        }
        _ => false,
    }
}

/// The winners grouped by `event_date`, each group still sorted by key; `counted` is
/// their rows per date (the tally's census). A file whose winners are all counted on one
/// date (the common case) keeps its set as it is, without a pass over them.
fn by_date(
    winners: RowSet,
    counted: &BTreeMap<Date, u64>,
    config: &Config,
) -> BTreeMap<Date, RowSet> {
    if let Some((&only, &rows)) = counted.first_key_value()
        && counted.len() == 1
        && rows == winners.len() as u64
    {
        return BTreeMap::from([(only, winners)]);
    }
    let mut picked: BTreeMap<Date, Vec<usize>> = BTreeMap::new();
    for i in 0..winners.len() {
        if let Some(date) = winners
            .instant(i, config.schema.date_of)
            .map(|t| t.utc_date())
        {
            picked.entry(date).or_default().push(i);
        }
    }
    picked
        .into_iter()
        .map(|(date, rows)| (date, winners.select(&rows)))
        .collect()
}
