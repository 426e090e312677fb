//! The History view's diff: what a past landing changed, date by date, between the
//! generation it replaced (kept in the trash) and the one it published (live, or in the
//! trash once replaced in turn), as `land::hive::generations` finds them; each date merge-joined
//! by `land::preview::diff_sources` into the Changes tab's [`Changes`], so both are drawn
//! and filtered alike. A new date is every key inserted against nothing; a date whose
//! generation the trash let go says so instead of counts. On a Delta table the two sides
//! are the date's files at the version before the landing's commit and at its commit.

use crate::config::{Config, Lake};
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::land::delta::commit;
use crate::land::delta::read::TableVersion;
use crate::land::hive::generations::{self, Replaced};
use crate::land::preview;
use crate::land::runlog::RunRecord;
use crate::store::rows::Source;

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
    if matches!(config.lake, Lake::Delta { .. }) {
        return delta_landing(config, run, progress, cancelled);
    }
    let sides = generations::sides(config, run)?;
    let generations = |i: usize| -> Result<Generations> {
        let side = &sides[i];
        let replaced = match &side.replaced {
            Replaced::Kept(folder) => Some(preview::folder_sources(folder)?),
            Replaced::NewDate => Some(Vec::new()),
            Replaced::NotKept => None,
        };
        let published = side.published.as_deref().map(preview::folder_sources);
        Ok(Generations {
            date: side.date,
            replaced,
            new_date: side.replaced == Replaced::NewDate,
            published: published.transpose()?,
        })
    };
    diff_each(config, run, sides.len(), &generations, progress, cancelled)
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
    let Some(version) = run.table_version else {
        let why = "the run log names no table version for this landing, so its two \
                   versions cannot be found";
        let mut changes = Changes::new(config, &run.input_name, Outcome::Landed);
        changes.outcome = Outcome::Unavailable { why: why.into() };
        return Ok(changes);
    };
    let after = commit::find_at(config, version)?;
    let before = match version.checked_sub(1) {
        Some(previous) => Some(commit::find_at(config, previous)?),
        None => None,
    };
    let dates: Vec<Date> = run.dates.iter().filter_map(|d| Date::parse(d)).collect();
    let generations = |i: usize| -> Result<Generations> {
        let date = dates[i];
        let replaced = match &before {
            Some(found) => TableVersion(found).sources(date)?,
            None => Some(Vec::new()),
        };
        Ok(Generations {
            date,
            new_date: replaced.as_ref().is_some_and(Vec::is_empty),
            replaced,
            published: TableVersion(&after).sources(date)?,
        })
    };
    diff_each(config, run, dates.len(), &generations, progress, cancelled)
}

/// One date's two generations as the diff reads them; `None` where one is gone.
struct Generations {
    date: Date,
    replaced: Option<Vec<Source>>,
    /// The landing created the date: nothing replaced.
    new_date: bool,
    published: Option<Vec<Source>>,
}

/// The diff of `dates` dates, the `i`th date's generations from `generations(i)`, read
/// only when its turn comes.
fn diff_each(
    config: &Config,
    run: &RunRecord,
    dates: usize,
    generations: &dyn Fn(usize) -> Result<Generations>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Changes> {
    let mut changes = Changes::new(config, &run.input_name, Outcome::Landed);
    let total = dates as u64;
    for i in 0..dates {
        if !progress(i as u64, total) || cancelled() {
            return Err(Error::Cancelled);
        }
        let sides = generations(i)?;
        let Some(replaced) = sides.replaced else {
            changes.notes.push((sides.date, NOT_KEPT));
            continue;
        };
        let Some(published) = sides.published else {
            changes.notes.push((sides.date, PUBLISHED_GONE));
            continue;
        };
        if sides.new_date {
            changes.notes.push((sides.date, NEW_DATE));
        }
        let counts = preview::diff_sources(config, sides.date, replaced, published, &mut |c| {
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
