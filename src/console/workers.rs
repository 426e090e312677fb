//! The long work, each on its own thread, reporting [`Report`]s: hashing inbox files,
//! planning (`land::plan_input`), landing (`land::run`), restoring
//! (`land::restore::restore`), indexing lines, ranking keys, diffing a landing
//! (`land::preview`, for the Changes tab), diffing a past landing (`super::landed`, for
//! the History view), and fetching one raw line for the quarantine view. Each job
//! watches a cancel flag through the core's progress callback and ends with exactly one
//! final message.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::app::Stamp;
use super::mask;
use super::msg::{Landed, Report};
use super::ranked;
use super::raw::LineIndex;
use crate::config::Config;
use crate::contract::{Date, LineBytes};

use crate::engine::{self, Progress};
use crate::error::Error;
use crate::input;
use crate::land;
use crate::land::runlog::RunRecord;
use crate::plan::DecideOptions;

/// Where a worker sends its reports (to the event loop); `false` once nobody listens.
pub type Sink<'a> = &'a dyn Fn(Report) -> bool;

/// Progress that is worth a message: at most about 200 per job.
fn worth(bytes: u64, total: u64, last: &mut u64) -> bool {
    let step = (total / 200).max(1 << 20);
    if bytes >= total || bytes >= *last + step {
        *last = bytes;
        true
    } else {
        false
    }
}

/// The input's current size and time, as the inbox lists them (a set's over its parts).
pub fn stamp_of(path: &Path, marker: &str) -> Option<Stamp> {
    let name = crate::input::name_of(path.file_name()?);
    let entry = crate::inbox::describe(path, name, marker)?;
    Some(Stamp {
        size: entry.size,
        modified: entry.modified,
    })
}

/// Hashes each file whose stamp still matches.
pub fn hash(
    id: u64,
    marker: &str,
    files: Vec<(std::path::PathBuf, Stamp)>,
    cancel: &AtomicBool,
    report: Sink,
) -> Report {
    for (path, stamp) in files {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let hashed = input::identity(&path, marker, &|| !cancel.load(Ordering::Relaxed));
        // A cancelled read is no finding; a file changed under the read is hashed again.
        if cancel.load(Ordering::Relaxed) || stamp_of(&path, marker) != Some(stamp) {
            continue;
        }
        let sha256 = hashed.map_err(|e| short_error(&e.to_string(), &path));
        report(Report::Hashed {
            path,
            stamp,
            sha256,
        });
    }
    Report::HashingDone { id }
}

/// An error short enough for an inbox row: paths inside the input (a set's parts) and
/// inside the inbox are named from there.
fn short_error(error: &str, path: &Path) -> String {
    let error = error.strip_prefix("input ").unwrap_or(error);
    let within = |dir: &Path| format!("{}/", dir.display());
    let error = error.replace(&within(path), "");
    match path.parent() {
        Some(inbox) => error.replace(&within(inbox), ""),
        None => error,
    }
}

/// Plans `path` with the core's `plan_input`. With `rank`, a local engine's plan also
/// keeps every key's events, and the Ranked tab's data follows the plan: `Ranked`, or
/// `RankLater` when the plan kept none (the tab then reads the input itself).
pub fn plan(
    config: &Config,
    (id, rank, reland): (u64, bool, bool),
    path: &Path,
    cancel: &AtomicBool,
    report: Sink,
) -> Report {
    let mut last = 0;
    let options = DecideOptions {
        reland,
        ..DecideOptions::default()
    };
    let mut progress = |progress| {
        if let Progress::Reading { bytes, total } = progress
            && worth(bytes, total, &mut last)
        {
            report(Report::PlanProgress { id, bytes, total });
        }
        !cancel.load(Ordering::Relaxed)
    };
    let opened = if rank {
        engine::open_for_ranked_plan(config)
    } else {
        engine::open_for_plan(config)
    };
    let (result, events) = match opened {
        Ok(mut engine) => {
            let plan = land::plan_input(config, engine.as_mut(), path, options, &mut progress);
            (plan, engine.take_events_by_key())
        }
        Err(e) => (Err(e), None),
    };
    let planned = result.is_ok();
    let planned_report = Report::Planned {
        id,
        path: path.to_owned(),
        result: result.map(Arc::new).map_err(|e| e.to_string()),
        ranks_next: rank,
    };
    if !rank {
        return planned_report;
    }
    report(planned_report);
    match events.filter(|_| planned) {
        Some(events) => {
            let result = ranked::Ranked::new(config, path, events, &mut |_, _| {
                !cancel.load(Ordering::Relaxed)
            });
            Report::Ranked {
                id,
                result: result.map(Arc::new).map_err(|e| e.to_string()),
            }
        }
        None => Report::RankLater { id },
    }
}

/// Lands `path` with the core's `run`, if it still has the bytes the operator confirmed.
pub fn land(
    config: &Config,
    id: u64,
    (path, stamp): (&Path, Stamp),
    options: DecideOptions,
    cancel: &AtomicBool,
    report: Sink,
) -> Report {
    if stamp_of(path, &config.set_marker) != Some(stamp) {
        let error = format!(
            "{} changed after you confirmed; nothing was written. Read its new plan and run it again",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        );
        return Report::Landed {
            id,
            result: Err(error),
        };
    }
    let mut last = 0;
    let result = engine::open(config).and_then(|mut engine| {
        land::run(config, engine.as_mut(), path, options, &mut |progress| {
            let reading = matches!(progress, Progress::Reading { .. });
            let send = match progress {
                Progress::Reading { bytes, total } => worth(bytes, total, &mut last),
                _ => true,
            };
            if send {
                report(Report::LandProgress { id, progress });
            }
            !(reading && cancel.load(Ordering::Relaxed))
        })
    });
    let result = result
        .map(|outcome| Landed {
            status: outcome.status,
            plan: Arc::new(outcome.plan),
            duration_ms: outcome.duration_ms,
            allowed_shrink: options.allow_shrink,
        })
        .map_err(|e| e.to_string());
    Report::Landed { id, result }
}

/// Restores `date`'s previous generation with the core's `restore`.
pub fn restore(config: &Config, id: u64, date: Date) -> Report {
    let result = land::restore::restore(config, date).map_err(|e| e.to_string());
    Report::Restored { id, result }
}

/// Indexes the lines of `path`, with the lines §2 finds repeating an earlier event (the
/// Raw tab names the line each repeats): those the Ranked tab's data already holds, or
/// else a read of the input as the plan reads it.
pub fn index(
    config: &Config,
    id: u64,
    (path, ranked): (&Path, Option<Arc<ranked::Ranked>>),
    cancel: &AtomicBool,
    report: Sink,
) -> Report {
    let mut last = 0;
    let mut progress = |bytes, total| {
        if worth(bytes, total, &mut last) {
            report(Report::IndexProgress { id, bytes, total });
        }
        !cancel.load(Ordering::Relaxed)
    };
    if let Some(ranked) = ranked {
        let result = LineIndex::build(path, &config.set_marker, &mut progress).map(|mut index| {
            index.repeats = ranked.index().repeats.clone();
            index
        });
        return Report::Indexed {
            id,
            result: result.map(Arc::new).map_err(|e| e.to_string()),
        };
    }
    // The line index is a fast pass: an eighth of the bar.
    let result = LineIndex::build(path, &config.set_marker, &mut |bytes, total| {
        progress(bytes / 8, total)
    })
    .and_then(|mut index| {
        index.repeats = engine::repeats(config, path, &mut |bytes, total| {
            progress(total / 8 + bytes / 8 * 7, total)
        })?;
        Ok(index)
    });
    Report::Indexed {
        id,
        result: result.map(Arc::new).map_err(|e| e.to_string()),
    }
}

/// Ranks every key of `path`.
pub fn rank(config: &Config, id: u64, path: &Path, cancel: &AtomicBool, report: Sink) -> Report {
    let mut last = 0;
    let mut progress = |bytes, total| {
        if worth(bytes, total, &mut last) {
            report(Report::RankProgress { id, bytes, total });
        }
        !cancel.load(Ordering::Relaxed)
    };
    // The plan kept no events by key: the input read here, then the line index (a fast
    // pass, the last eighth of the bar).
    let result = engine::events_by_key(config, path, &mut |bytes, total| {
        progress(bytes / 8 * 7, total)
    })
    .and_then(|events| {
        ranked::Ranked::new(config, path, events, &mut |bytes, total| {
            progress(total / 8 * 7 + bytes / 8, total)
        })
    });
    Report::Ranked {
        id,
        result: result.map(Arc::new).map_err(|e| e.to_string()),
    }
}

/// What a landing of `path` would change, key by key (the Changes tab).
pub fn changes(
    config: &Config,
    (id, reland): (u64, bool),
    path: &Path,
    cancel: &AtomicBool,
    report: Sink,
) -> Report {
    let mut last = 0;
    let mut progress = |progress| {
        if let Progress::Reading { bytes, total } = progress
            && worth(bytes, total, &mut last)
        {
            report(Report::ChangesProgress { id, bytes, total });
        }
        !cancel.load(Ordering::Relaxed)
    };
    let cancelled = || cancel.load(Ordering::Relaxed);
    changed(
        id,
        super::changes::build(config, (path, reland), &mut progress, &cancelled),
    )
}

/// A diff's report, the Changes tab's or the History view's.
fn changed(id: u64, built: crate::error::Result<super::changes::Changes>) -> Report {
    Report::Changed {
        id,
        result: built.map(Arc::new).map_err(|e| e.to_string()),
    }
}

/// `dates` as published now, by hour (the Plan tab's picture of each day).
pub fn published_hours(config: &Config, id: u64, dates: &[Date], cancel: &AtomicBool) -> Report {
    let cancelled = || cancel.load(Ordering::Relaxed);
    let result = crate::land::hours::published_by_hour(config, dates, &cancelled);
    Report::PublishedHours {
        id,
        result: result.map_err(|e| e.to_string()),
    }
}

/// What the landing `run` changed, date by date (the History view's diff); its progress
/// counts the dates read.
pub fn history_diff(
    config: &Config,
    id: u64,
    run: &RunRecord,
    cancel: &AtomicBool,
    report: Sink,
) -> Report {
    let mut progress = |bytes, total| {
        report(Report::ChangesProgress { id, bytes, total });
        !cancel.load(Ordering::Relaxed)
    };
    let cancelled = || cancel.load(Ordering::Relaxed);
    changed(
        id,
        super::landed::build(config, run, &mut progress, &cancelled),
    )
}

/// Line `line` of `path` (of its part `file` in a set, as quarantine rows number them,
/// §11.4), masked, if the input still hashes to `sha256` (the quarantined bytes); read
/// with the core's `input::scan_input` so numbering matches the rejects.
pub fn raw_line(
    config: &Config,
    id: u64,
    path: &Path,
    (file, line): (Option<&str>, u64),
    sha256: &str,
    cancel: &AtomicBool,
) -> Report {
    let result = (|| {
        let keep_going = || !cancel.load(Ordering::Relaxed);
        let identity = input::identity(path, &config.set_marker, &keep_going);
        if identity.map_err(|e| e.to_string())? != sha256 {
            return Err(format!(
                "{} in the inbox no longer holds the quarantined bytes (its hash differs); the line is not shown",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        let mut opened = input::open(path, &config.set_marker).map_err(|e| e.to_string())?;
        if let Some(file) = file {
            // Only the part holding the line, read as a file of its own: its numbers.
            opened.parts.retain(|p| p.name == file);
            opened.set = false;
            if opened.parts.is_empty() {
                return Err(format!("{} has no part {file}", opened.name));
            }
        }
        let mut found = None;
        let prohibited = &config.schema.prohibited;
        input::scan_input(
            &opened,
            config.max_line_bytes,
            &mut |_| keep_going(),
            |number, bytes| {
                if number == line {
                    found = Some(match bytes {
                        LineBytes::Kept(bytes) => mask::masked_line(bytes, true, prohibited),
                        LineBytes::TooLong => "‹longer than max_line_bytes; not shown›".to_owned(),
                    });
                }
            },
        )
        .map_err(|e: Error| e.to_string())?;
        found.ok_or_else(|| format!("{} has no line {line}", opened.name))
    })();
    Report::RawLine { id, result }
}
