//! The History view's diff: what a past landing changed, date by date, between the
//! generation it replaced (kept in the trash) and the one it published (live, or in the
//! trash once replaced in turn), as `land::generations` finds them; each date merge-joined
//! by `land::preview::diff_folders` into the Changes tab's [`Changes`], so both are drawn
//! and filtered alike. A new date is every key inserted against nothing; a date whose
//! generation the trash let go says so instead of counts.

use crate::config::{Config, TableFormat};
use crate::error::{Error, Result};
use crate::land::generations::{self, Replaced};
use crate::land::preview;
use crate::land::runlog::RunRecord;

use super::changes::{Changes, Outcome};

/// The note of a date created by the landing.
pub const NEW_DATE: &str = "new date: no earlier generation";
/// The note of a date whose replaced generation the trash no longer holds.
pub const NOT_KEPT: &str = "no earlier generation kept";
/// The note of a date whose published generation is neither live nor kept.
pub const PUBLISHED_GONE: &str = "the generation it published is no longer kept";

/// Diffs each date `run` published; `progress(done, dates)` after each date, returning
/// `false` to stop; `cancelled` also stops a date mid-way.
pub fn build(
    config: &Config,
    run: &RunRecord,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Changes> {
    let outcome = if config.table_format == TableFormat::Delta {
        let why = "a diff of Delta landings is not available yet: the table keeps its \
                   generations as files of the table, not folders";
        Outcome::Unavailable { why: why.into() }
    } else {
        Outcome::Landed
    };
    let mut changes = Changes::new(config, &run.input_name, outcome);
    if matches!(changes.outcome, Outcome::Unavailable { .. }) {
        return Ok(changes);
    }
    let sides = generations::sides(config, run)?;
    let total = sides.len() as u64;
    for (done, side) in sides.into_iter().enumerate() {
        if !progress(done as u64, total) || cancelled() {
            return Err(Error::Cancelled);
        }
        let before = match &side.replaced {
            Replaced::Kept(folder) => Some(folder.as_path()),
            Replaced::NewDate => None,
            Replaced::NotKept => {
                changes.notes.push((side.date, NOT_KEPT));
                continue;
            }
        };
        let Some(after) = &side.published else {
            changes.notes.push((side.date, PUBLISHED_GONE));
            continue;
        };
        if side.replaced == Replaced::NewDate {
            changes.notes.push((side.date, NEW_DATE));
        }
        let counts = preview::diff_folders(config, side.date, before, Some(after), &mut |c| {
            changes.push(&c);
            !cancelled()
        })?;
        if cancelled() {
            return Err(Error::Cancelled);
        }
        changes.dates.push(counts);
    }
    progress(total, total);
    Ok(changes.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Delta table's generations are files of the table: the diff says it is not
    /// available rather than read folders that are not there.
    #[test]
    fn a_delta_landing_is_not_diffed() {
        let mut config = crate::config::fixtures::orders();
        config.table_format = TableFormat::Delta;
        let run: RunRecord = serde_json::from_value(serde_json::json!({
            "time": "2024-03-01T10:00:00.000000Z", "product": "orders",
            "input_name": "a.jsonl", "input_sha256": "a".repeat(64), "action": "published",
            "reason": null, "dates": ["2024-03-01"], "counts": {}, "duration_ms": 1,
            "tool_version": "t",
        }))
        .expect("a run record");
        let changes = build(&config, &run, &mut |_, _| true, &|| false).expect("built");
        assert!(
            matches!(&changes.outcome, Outcome::Unavailable { why } if why.contains("Delta")),
            "{:?}",
            changes.outcome
        );
        assert!(changes.items.is_empty() && changes.dates.is_empty());
    }
}
