//! `wharf diff INPUT`: what a run of INPUT would change, key by key, against the
//! partitions published now; writes nothing under the publish or state roots.

use std::path::Path;

use super::progress::Bar;
use super::report::inert;
use super::{emit, plan::input_name};
use crate::config::Config;
use crate::contract::Date;
use crate::diff::{Change, Kind, json};
use crate::engine;
use crate::error::{Error, Result};
use crate::exit;
use crate::land::preview;
use crate::plan::{Action, DecideOptions};

/// Changes the text report prints per date; the counts cover them all.
const SHOWN: usize = 10;

pub fn diff(
    config: &Config,
    input: &Path,
    date: Option<&str>,
    options: DecideOptions,
    json: bool,
) -> Result<u8> {
    let only = match date {
        Some(text) => Some(Date::parse(text).ok_or_else(|| {
            Error::Usage(format!("--date {text:?} is not a date: give YYYY-MM-DD"))
        })?),
        None => None,
    };
    let mut engine = engine::open(config)?;
    let mut bar = Bar::new(&input_name(input), json);
    let preview = preview::preview(config, engine.as_mut(), input, options, &mut |p| {
        bar.update(p)
    });
    bar.clear();
    let preview = preview?;
    let plan = &preview.plan;
    let name = inert(&plan.input_name);
    match plan.action {
        Action::Refuse => {
            let why = plan
                .refusal
                .as_ref()
                .map(|r| r.explain(plan))
                .unwrap_or_default();
            let code = plan.reason().unwrap_or("refused");
            let line = format!(
                "{name}: nothing would change: it would be refused ({code}): {}",
                inert(&why)
            );
            if json {
                super::say(&line)
            } else {
                emit(&line)?
            }
            return Ok(exit::REFUSED);
        }
        Action::Skip => {
            let line = format!(
                "{name}: nothing would change: already landed ({}); \
                 wharf diff {name} --reland shows what landing it again would change",
                plan.landed
                    .as_ref()
                    .map_or("owns its dates".into(), |l| inert(&l.describe()))
            );
            if json {
                super::say(&line)
            } else {
                emit(&line)?
            }
            return Ok(exit::SUCCESS);
        }
        Action::Publish => {}
    }
    let dates = preview.dates(only);
    if let (Some(only), true) = (only, dates.is_empty()) {
        let line = format!("{name} writes no rows of {only}: nothing would change there");
        if json {
            super::say(&line)
        } else {
            emit(&line)?
        }
        return Ok(exit::SUCCESS);
    }
    let schema = &config.schema;
    let mut failed = None;
    for date in dates {
        if json {
            preview.diff(config, date, &mut |change| match emit(
                &json::change(&change, schema).to_string(),
            ) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            })?;
            if let Some(e) = failed.take() {
                return Err(e);
            }
            continue;
        }
        let mut shown = Vec::new();
        let counts = preview.diff(config, date, &mut |change| {
            shown.push(change_line(&change, config));
            shown.len() < SHOWN
        })?;
        let mut out = format!(
            "event_date={date}  inserted {} · removed {} · updated {} · unchanged {}",
            counts.inserted, counts.removed, counts.updated, counts.unchanged
        );
        for line in &shown {
            out.push_str("\n  ");
            out.push_str(line);
        }
        if counts.changes() > shown.len() as u64 {
            out.push_str(&format!(
                "\n  … {} more (wharf diff --json --date {date} lists every one)",
                counts.changes() - shown.len() as u64
            ));
        }
        emit(&out)?;
    }
    Ok(exit::SUCCESS)
}

/// One change for a person: `+ key`, `- key`, or `~ key  field before → after, …`.
fn change_line(change: &Change, config: &Config) -> String {
    let key = inert(&json::text(&change.key));
    let schema = &config.schema;
    match (change.kind, &change.before, &change.after) {
        (Kind::Updated, Some(before), Some(after)) => {
            let fields: Vec<String> = change
                .changed_fields()
                .into_iter()
                .map(|i| {
                    format!(
                        "{} {} → {}",
                        schema.fields[i].name,
                        inert(&json::text(&before[i])),
                        inert(&json::text(&after[i]))
                    )
                })
                .collect();
            format!("~ {key}  {}", fields.join(", "))
        }
        (Kind::Inserted, ..) => format!("+ {key}  inserted"),
        _ => format!("- {key}  removed"),
    }
}
