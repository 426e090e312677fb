//! The History view's diff: what a past landing changed, date by date, between the
//! generation it replaced (kept in the trash) and the one it published (live, or in the
//! trash once replaced in turn), as `land::generations` finds them; each date merge-joined
//! by `land::preview::diff_folders` into the Changes tab's [`Changes`], so both are drawn
//! and filtered alike. A new date is every key inserted against nothing; a date whose
//! generation the trash let go says so instead of counts. On a Delta table the two sides
//! are the date's files at the version before the landing's commit and at its commit.

use crate::config::{Config, TableFormat};
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::commit;
use crate::land::delta_read::TableVersion;
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
    if config.table_format == TableFormat::Delta {
        return delta_landing(config, run, progress, cancelled);
    }
    let mut changes = Changes::new(config, &run.input_name, Outcome::Landed);
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

/// A Delta landing: each date's files at the version before its commit against those at
/// its commit, fetched through the table's store. A file the vacuum let go is a
/// generation no longer kept.
fn delta_landing(
    config: &Config,
    run: &RunRecord,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Changes> {
    let mut changes = Changes::new(config, &run.input_name, Outcome::Landed);
    let Some(version) = run.table_version else {
        let why = "the run log names no table version for this landing, so its two \
                   versions cannot be found";
        changes.outcome = Outcome::Unavailable { why: why.into() };
        return Ok(changes);
    };
    let after = commit::find_at(config, version)?;
    let before = match version.checked_sub(1) {
        Some(previous) => Some(commit::find_at(config, previous)?),
        None => None,
    };
    let dates: Vec<Date> = run.dates.iter().filter_map(|d| Date::parse(d)).collect();
    let total = dates.len() as u64;
    for (done, date) in dates.into_iter().enumerate() {
        if !progress(done as u64, total) || cancelled() {
            return Err(Error::Cancelled);
        }
        let replaced = match &before {
            Some(found) => TableVersion(found).sources(date)?,
            None => Some(Vec::new()),
        };
        let Some(replaced) = replaced else {
            changes.notes.push((date, NOT_KEPT));
            continue;
        };
        let Some(published) = TableVersion(&after).sources(date)? else {
            changes.notes.push((date, PUBLISHED_GONE));
            continue;
        };
        if replaced.is_empty() {
            changes.notes.push((date, NEW_DATE));
        }
        let counts = preview::diff_sources(config, date, replaced, published, &mut |c| {
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
