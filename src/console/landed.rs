//! The History view's diff: what a past landing changed, date by date, between the
//! generation it replaced and the one it published, as the lake keeps them
//! (`PublishRoot::past_landing`); each date merge-joined by `land::preview::diff_sources`
//! into the Changes tab's [`Changes`], so both are drawn and filtered alike. A new date is
//! every key inserted against nothing; a date whose generation the lake let go says so
//! instead of counts.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::land::lake::PastLanding;
use crate::land::preview;
use crate::land::root::PublishRoot;
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
    let landing = PublishRoot::past_landing(config, run)?;
    if let Some(why) = landing.unavailable() {
        let mut changes = Changes::new(config, &run.input_name, Outcome::Landed);
        changes.outcome = Outcome::Unavailable { why: why.into() };
        return Ok(changes);
    }
    diff_each(config, run, &landing, progress, cancelled)
}

/// The diff of each date of `landing`, its generations read only when its turn comes.
fn diff_each(
    config: &Config,
    run: &RunRecord,
    landing: &PastLanding,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Changes> {
    let mut changes = Changes::new(config, &run.input_name, Outcome::Landed);
    let dates = landing.len();
    let total = dates as u64;
    for i in 0..dates {
        if !progress(i as u64, total) || cancelled() {
            return Err(Error::Cancelled);
        }
        let sides = landing.sides(i)?;
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
