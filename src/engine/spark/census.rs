//! The Spark engine's census: the driver pass, which hands Spark every accepted record
//! typed and tells §2's counts (its [`Ledger`](super::ledger::Ledger)), then (when it
//! does not already refuse) §3 and §4 in Spark, and the aggregates back to the driver.
//! Only a file whose events conflict has Spark do §2 too, the exact way, to list the
//! conflicting lines. Events never come back; the ranked keys stay cached in Spark for
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
use super::winners::{self, KEYS, TopKeys, WINNERS};
use crate::config::Config;
use crate::contract::{Date, LineIssue, LineReason};
use crate::engine::Progress;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::plan::{Census, Counts, LineFinding};
use crate::store::findings::Findings;

/// The view of the rows the driver handed over (columns in [`super::handoff`]).
pub const PARSED: &str = "wharf_parsed";

/// Reads `input`: the census, and what it left cached in Spark when Spark ran.
///
/// `top_keys` forces one way of ranking a file free of conflicts (tests run both); else it
/// is chosen by the file's lines a key.
pub fn read(
    session: &Session,
    config: &Config,
    input: &Input,
    top_keys: Option<TopKeys>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(Census, Option<Ranked>)> {
    let total = input.size;
    let mut handoff = Handoff::create(config)?;
    let pass = driver::read(
        input,
        config,
        &mut handoff,
        &mut |bytes| progress(Progress::Reading { bytes, total }),
    )?;
    let events = pass.events;
    let lines_per_key = events.lines as f64 / pass.keys.estimate().max(1.0);
    let top_keys = top_keys.unwrap_or(TopKeys::for_lines_per_key(lines_per_key));
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
        ranked(session, &config, &uri, events, top_keys, census)
    })?;
    let ranked = Ranked {
        keys,
        winners,
        handoff,
    };
    Ok((census, Some(ranked)))
}

/// Spark's part of the census: the handed-over rows, the cached key rows, the winners over
/// them, and §3–4's aggregates. §2 is the driver's [`Events`] unless they conflict: then
/// Spark ranks the exact way, over the events (a view, not cached) with §2's counts, and
/// lists the conflicting lines.
fn ranked(
    session: &Session,
    config: &Config,
    uri: &str,
    events: Events,
    top_keys: TopKeys,
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
    let keys_query = if events.conflicted {
        session
            .frame(&events::query(&config.schema, PARSED), "cannot plan the events")?
            .create_or_replace_temp_view(EVENTS)
            .map_err(|e| session.error("cannot register the events", &e))?;
        winners::keys_query(&config.schema)
    } else {
        winners::top_keys_query(&config.schema, PARSED, top_keys)
    };
    let keys = session
        .frame(&keys_query, "cannot plan the ranking")?
        .cache()
        .map_err(|e| session.error("cannot cache the ranked keys", &e))?;
    keys.create_or_replace_temp_view(KEYS)
        .map_err(|e| session.error("cannot register the ranked keys", &e))?;
    let winners = register(session, &winners::winners_query(&config.schema), WINNERS)?;
    let ranking = if events.conflicted {
        rank_exactly(session, config, events.lines, &mut census)
    } else {
        census.counts.retries = events.repeats();
        rank(session, config, false, &mut census).map(|_| ())
    };
    match ranking {
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

/// `census`'s findings (rejects, which the driver held whole: the census reached Spark
/// under the reject cap) merged in line order with the conflicting lines Spark found.
fn add_conflicts(session: &Session, config: &Config, census: &mut Census) -> Result<()> {
    let mut rejects = std::mem::take(&mut census.findings).into_iter().peekable();
    let mut ordered = Findings::new(config.max_rejected_lines, &config.state_root);
    let mut conflicts = 0u64;
    conflict_findings(session, config, &mut |conflict| {
        while let Some(reject) = rejects.next_if(|r| r.line < conflict.line) {
            ordered.push(reject)?;
        }
        conflicts += 1;
        ordered.push(conflict)
    })?;
    for reject in rejects {
        ordered.push(reject)?;
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
