//! The Spark engine's census: the driver pass, which hands Spark every accepted record
//! typed and tells §2's counts (its [`Ledger`](super::ledger::Ledger)), then (when it
//! does not already refuse) §3 and §4 in Spark, and the aggregates back to the driver.
//! A clean file whose every retry the driver marked is ranked over its first occurrences
//! alone; any other file has Spark do §2 too, the exact way ([`Ranking::Exact`]), which
//! lists conflicting lines. Events never come back; the ranked keys stay cached in Spark for
//! the stage.
//!
//! A census refused by the driver pass (a breach, or more rejects than
//! `max_rejected_lines`) starts no Spark job, so what only Spark counts is unknown in it
//! (`Census::unranked`): `retries`, `keys`, `ties_by_arrival` and the dates; `accepted`
//! is the lines §1 accepted, conflicts not yet told apart.

use std::collections::BTreeMap;

use spark_connect::DataFrame;
use spark_connect::row::Row;

use super::driver::{self, DriverPass};
use super::ledger::Events;
use super::events::{self, EVENTS, ident};
use super::handoff::Handoff;
use super::session::{Session, date_at, int_at, str_at};
use super::recent;
use super::winners::{self, KEYS, Ranking, TopKeys, WINNERS};
use crate::config::Config;
use crate::contract::{Date, LineIssue, LineReason};
use crate::engine::Progress;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::plan::{Census, Counts, LineFinding};
use crate::store::findings::Findings;

/// The view of the rows the driver handed over (columns in [`super::handoff`]).
pub const PARSED: &str = "wharf_parsed";

/// How a census ranks: tests force each way, and shrink the driver's memory of events.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// A way of ranking forced where the file allows it; else it is chosen by the file.
    pub ranking: Option<Ranking>,
    /// Events a generation of the driver's [`RecentEvents`](recent::RecentEvents) holds.
    pub remembered: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            ranking: None,
            remembered: recent::GENERATION,
        }
    }
}

/// Reads `input`: the census, and what it left cached in Spark when Spark ran.
pub fn read(
    session: &Session,
    config: &Config,
    input: &Input,
    tuning: Tuning,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Census, Option<Ranked>)> {
    let total = input.size;
    let mut handoff = Handoff::create(config)?;
    let pass = driver::read(
        input,
        config,
        &mut handoff,
        tuning.remembered,
        &mut |bytes| progress(Progress::Reading { bytes, total }),
    )?;
    let ranking = ranking(&pass, tuning.ranking);
    let events = pass.events;
    let mut census = driver_census(input, pass);
    if census.first_breach().is_some() || census.counts.rejected > config.max_rejected_lines {
        census.unranked = true;
        return Ok((census, None));
    }
    let (handed, accepted) = (handoff.close()?, census.counts.accepted);
    if handed != accepted {
        return Err(Error::internal(format!(
            "the driver handed Spark {handed} rows where it accepted {accepted}"
        )));
    }
    let uri = handoff.uri().to_owned();
    let config = config.clone();
    let (census, keys, winners) = session.guarded("reading the input", move |session| {
        ranked(session, &config, &uri, events, ranking, census)
    })?;
    let ranked = Ranked {
        keys,
        winners,
        handoff,
    };
    Ok((census, Some(ranked)))
}

/// How Spark ranks the file the driver `pass` read: over the first occurrences when
/// they are known, the driver's marks being every repeat of a file free of conflicts
/// (`forced` there, or by its events a key); else the exact way.
fn ranking(pass: &DriverPass, forced: Option<Ranking>) -> Ranking {
    let events = &pass.events;
    if events.conflicted || pass.marked != events.repeats() {
        return Ranking::Exact;
    }
    let events_per_key = events.events as f64 / pass.keys.estimate().max(1.0);
    forced.unwrap_or(Ranking::Top(TopKeys::for_events_per_key(events_per_key)))
}

/// Spark's part of the census: the handed-over rows, the cached key rows, the winners over
/// them, and §3–4's aggregates. §2 is the driver's [`Events`] when Spark ranks the first
/// occurrences; ranking the exact way, Spark counts §2 over the events (a view, not
/// cached) and lists any conflicting lines.
fn ranked(
    session: &Session,
    config: &Config,
    uri: &str,
    events: Events,
    ranking: Ranking,
    mut census: Census,
) -> Result<(Census, DataFrame, DataFrame)> {
    session
        .spark()
        .read()
        .format("parquet")
        .load(Some(uri))
        .create_or_replace_temp_view(PARSED)
        .map_err(|e| {
            let doing = format!(
                "cannot read the rows the driver handed over at {uri} (the executors must \
                 reach it: on S3, through the cluster's S3 file system; see the README's \
                 \"A lake on S3\")"
            );
            session.error(&doing, &e)
        })?;
    let keys_query = match ranking {
        Ranking::Exact => {
            session
                .frame(&events::query(&config.schema, PARSED), "cannot plan the events")?
                .create_or_replace_temp_view(EVENTS)
                .map_err(|e| session.error("cannot register the events", &e))?;
            winners::keys_query(&config.schema)
        }
        Ranking::Top(how) => winners::top_keys_query(&config.schema, PARSED, how),
    };
    let keys = session
        .frame(&keys_query, "cannot plan the ranking")?
        .cache()
        .map_err(|e| session.error("cannot cache the ranked keys", &e))?;
    keys.create_or_replace_temp_view(KEYS)
        .map_err(|e| session.error("cannot register the ranked keys", &e))?;
    let winners = register(session, &winners::winners_query(&config.schema), WINNERS)?;
    let ranked = match ranking {
        Ranking::Exact => rank_exactly(session, config, events.lines, &mut census),
        Ranking::Top(_) => {
            census.counts.retries = events.repeats();
            rank(session, config, false, &mut census).map(|_| ())
        }
    };
    match ranked {
        Ok(()) => Ok((census, keys, winners)),
        Err(error) => {
            let _ = keys.unpersist(false);
            Err(error)
        }
    }
}

/// What a census that reached Spark leaves there for the stage.
pub struct Ranked {
    /// The cached [`KEYS`], released when the landing is done with it.
    pub keys: DataFrame,
    /// [`WINNERS`], over it.
    pub winners: DataFrame,
    /// The rows Spark read, kept until the cache is released: Spark reads them again
    /// for any cached block it loses.
    pub handoff: Handoff,
}

/// What the driver pass alone tells.
fn driver_census(input: &Input, pass: DriverPass) -> Census {
    Census {
        sha256: pass.sha256,
        // A set's parts name its lines in reports (§11.4); a single file has none.
        parts: if input.set { pass.parts } else { Vec::new() },
        counts: Counts {
            lines: pass.lines,
            blank: pass.blank,
            accepted: pass.accepted,
            rejected: pass.rejected,
            by_reason: pass.by_reason,
            by_rule: pass.by_rule,
            ..Counts::default()
        },
        findings: pass.findings,
        spilled: pass.spilled,
        dates: BTreeMap::new(),
        unranked: false,
    }
}

/// `query` registered as `view`.
fn register(session: &Session, query: &str, view: &str) -> Result<DataFrame> {
    let frame = session.frame(query, "cannot plan the landing's query")?;
    frame
        .create_or_replace_temp_view(view)
        .map_err(|e| session.error("cannot register the landing's rows", &e))?;
    Ok(frame)
}

/// Conflicting lines collected a page at a time, so the driver holds one page.
const CONFLICT_PAGE: usize = 10_000;

/// The view of the conflicting lines, cached while they are paged through.
const CONFLICTS: &str = "wharf_conflicts";

/// Every conflicting line, to `found` in line order: its number, event id and the first
/// field that differs from the id's first line. Line numbers and ids only, never a value.
fn conflict_findings(
    session: &Session,
    config: &Config,
    found: &mut dyn FnMut(LineFinding) -> Result<()>,
) -> Result<()> {
    let event_id = ident(&config.schema.fields[config.schema.event_id].name);
    // Each conflicting line against its event id's first line, field by field: only
    // when the file has conflicts, and it is then refused.
    let listing = format!(
        "SELECT c.__line, CAST(c.{event_id} AS STRING) AS __id, {} AS __conflict_field \
         FROM (SELECT * FROM {EVENTS} WHERE __conflict) c \
         JOIN (SELECT * FROM {EVENTS} WHERE __occurrence = 1) f ON c.{event_id} = f.{event_id}",
        events::first_difference(&config.schema)
    );
    let cached = session
        .frame(&listing, "cannot list the conflicting lines")?
        .cache()
        .map_err(|e| session.error("cannot cache the conflicting lines", &e))?;
    cached
        .create_or_replace_temp_view(CONFLICTS)
        .map_err(|e| session.error("cannot register the conflicting lines", &e))?;
    let paged = (|| {
        let mut after = 0;
        loop {
            let query = format!(
                "SELECT __line, __id, __conflict_field FROM {CONFLICTS} WHERE __line > {after} \
                 ORDER BY __line LIMIT {CONFLICT_PAGE}"
            );
            let rows = session.rows(&query, "cannot list the conflicting lines")?;
            for row in &rows {
                let line = u64::try_from(int_at(row, 0)?).map_err(Error::internal)?;
                after = line;
                found(LineFinding {
                    line,
                    breach: true,
                    issue: LineIssue {
                        reason: LineReason::Conflict,
                        field: str_at(row, 2)?,
                        event_id: str_at(row, 1)?,
                    },
                })?;
            }
            if rows.len() < CONFLICT_PAGE {
                return Ok(());
            }
        }
    })();
    let _ = cached.unpersist(false);
    paged
}

/// `census`'s findings (the driver's rejects, held then spilled) merged in line order
/// with the conflicting lines Spark found, into findings held then spilled afresh.
fn add_conflicts(session: &Session, config: &Config, census: &mut Census) -> Result<()> {
    let held = std::mem::take(&mut census.findings).into_iter().map(Ok);
    // The driver's spill stays until its findings are copied.
    let driver_spill = census.spilled.take();
    let spilled = driver_spill
        .as_ref()
        .map(|spilled| crate::store::findings::from_line(spilled, 0))
        .transpose()?;
    let mut rejects = held.chain(spilled.into_iter().flatten()).peekable();
    let mut ordered = Findings::new(&crate::store::state_store::scratch(config));
    let mut conflicts = 0u64;
    let mut next_reject = |before: Option<u64>| -> Option<Result<LineFinding>> {
        rejects.next_if(|r| match (r, before) {
            (Ok(r), Some(line)) => r.line < line,
            _ => true,
        })
    };
    conflict_findings(session, config, &mut |conflict| {
        while let Some(reject) = next_reject(Some(conflict.line)) {
            ordered.push(reject?)?;
        }
        conflicts += 1;
        ordered.push(conflict)
    })?;
    while let Some(reject) = next_reject(None) {
        ordered.push(reject?)?;
    }
    *census
        .counts
        .by_reason
        .entry(LineReason::Conflict)
        .or_default() += conflicts;
    (census.findings, census.spilled) = ordered.finish()?;
    Ok(())
}

/// §3 and §4's aggregates: keys, ties by arrival and rows per date, by hour of the
/// date's instant (the session's time zone is UTC), in one query over [`KEYS`], which
/// materialises its cache; with [`KEYS`]' sums of its §2 counts, (parsed, retries,
/// conflicts), which only the exact ranking fills.
fn rank(session: &Session, config: &Config, exact: bool, census: &mut Census) -> Result<[u64; 3]> {
    let date_of = ident(&config.schema.fields[config.schema.date_of].name);
    let counted = if exact {
        "sum(__parsed), sum(__retries), sum(__conflicts)"
    } else {
        "0, 0, 0"
    };
    let query = format!(
        "SELECT event_date, hour({date_of}), count_if(__winner), count_if(__winner AND __tied), \
         {counted} FROM {KEYS} GROUP BY event_date, hour({date_of})"
    );
    let count = |row: &Row, at: usize| u64::try_from(int_at(row, at)?).map_err(Error::internal);
    let mut sums = [0; 3];
    for row in session.rows(&query, "cannot count the winners per date")? {
        for (at, sum) in sums.iter_mut().enumerate() {
            *sum += count(&row, 4 + at)?;
        }
        let rows = count(&row, 2)?;
        if rows == 0 {
            // Keys seen only on conflicting lines: counted above, and no winner.
            continue;
        }
        let date = Date(date_at(&row, 0)?);
        let hour = usize::try_from(int_at(&row, 1)?).map_err(Error::internal)?;
        census.counts.keys += rows;
        census.counts.ties_by_arrival += count(&row, 3)?;
        let date = census.dates.entry(date).or_default();
        date.rows += rows;
        let by_hour = date.by_hour.get_or_insert([0; 24]);
        *by_hour.get_mut(hour).ok_or_else(|| Error::internal("an hour past 23"))? += rows;
    }
    Ok(sums)
}

/// [`rank`] over the exact ranking's [`KEYS`], with §2's counts from Spark, and the
/// conflict findings.
fn rank_exactly(session: &Session, config: &Config, accepted: u64, census: &mut Census) -> Result<()> {
    let [parsed, retries, conflicts] = rank(session, config, true, census)?;
    if parsed != accepted {
        return Err(Error::internal(format!(
            "Spark read {parsed} accepted lines where the driver accepted {accepted}"
        )));
    }
    census.counts.accepted = parsed - conflicts;
    census.counts.retries = retries;
    if conflicts > 0 {
        add_conflicts(session, config, census)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver pass over 5 accepted lines of 3 events (so 2 repeats), `marked` of them.
    fn pass(marked: u64, conflicted: bool) -> DriverPass {
        DriverPass {
            events: Events {
                lines: 5,
                events: 3,
                conflicted,
            },
            marked,
            ..DriverPass::default()
        }
    }

    #[test]
    fn the_first_occurrences_are_ranked_alone_only_when_every_repeat_is_marked() {
        let sorted = Ranking::Top(TopKeys::Sorted);
        let limited = Ranking::Top(TopKeys::Limited);
        // No keys sketched: about one, so 3 events a key, below the limit.
        assert_eq!(ranking(&pass(2, false), None), sorted);
        assert_eq!(ranking(&pass(2, false), Some(limited)), limited);
        assert_eq!(ranking(&pass(2, false), Some(Ranking::Exact)), Ranking::Exact);
        // A repeat unmarked, or a conflict: whatever is forced, the exact way.
        assert_eq!(ranking(&pass(1, false), Some(limited)), Ranking::Exact);
        assert_eq!(ranking(&pass(0, false), None), Ranking::Exact);
        assert_eq!(ranking(&pass(2, true), Some(limited)), Ranking::Exact);
    }
}
