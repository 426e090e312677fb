//! [`DriverPass`]: the one read of an input's bytes on the driver. It hashes every part
//! (as stored) and classifies every line, decoded, with Wharf's own §1 classifier, so
//! reason codes, fields and line numbers are exactly the local engine's: a set's lines
//! are numbered on through its parts (§11.4). Each accepted record goes, typed, to the
//! [`Handoff`] Spark reads: Spark never sees the text. Its event and fingerprint go to the
//! [`Ledger`], which tells §2's counts and whether Spark must list conflicts, and to the
//! [`RecentEvents`], which mark the lines whose event an earlier line had; its key to a
//! [`KeySketch`], which tells about how many keys there are, so how Spark should rank.

use std::collections::BTreeMap;
use std::path::Path;

use super::handoff::{ChunkBatch, Handoff};
use super::key_sketch::KeySketch;
use super::ledger::{self, Events, Ledger};
use super::recent::RecentEvents;
use crate::config::Config;
use crate::contract::{LineBytes, LineReason, Outcome, classify, fast};
use crate::error::{Error, Result};
use crate::input::{Input, PartDigest};
use crate::pipeline::{self, Lines};
use crate::plan::{LineFinding, SpilledFindings};
use crate::store::findings::Findings;

/// What the driver learnt of an input.
#[derive(Debug, Default)]
pub struct DriverPass {
    /// The input's identity: a file's SHA-256, or a set's (§11.3).
    pub sha256: String,
    /// Every part's digest (lines, and where they sit among the input's), in part order.
    pub parts: Vec<PartDigest>,
    pub lines: u64,
    pub blank: u64,
    /// Lines classified accepted (§2 has not run yet).
    pub accepted: u64,
    /// Reject outcomes.
    pub rejected: u64,
    /// Rejected and breaching lines by reason code.
    pub by_reason: BTreeMap<LineReason, u64>,
    /// Lines that broke a value rule, by rule (§1.2).
    pub by_rule: BTreeMap<String, u64>,
    /// Rejects and breaches, in line order: the first [`HELD`](crate::store::findings::HELD).
    pub findings: Vec<LineFinding>,
    /// The rest, written out.
    pub spilled: Option<SpilledFindings>,
    /// §2 over the accepted lines, as far as the driver tells it.
    pub events: Events,
    /// Lines handed over marked `seen`: an earlier line had their event.
    pub marked: u64,
    /// The accepted lines' keys, sketched: about how many there are.
    pub keys: KeySketch,
}

/// One line as the pass keeps it: no record (that went to the handoff), so memory stays
/// the findings'.
enum Seen {
    Blank,
    Accepted,
    Finding(LineFinding),
}

/// One chunk as a worker classified it: each line, and the accepted records typed, with
/// each one's event and fingerprint.
struct Classified {
    seen: Vec<Seen>,
    rows: Option<Result<ChunkBatch>>,
}

/// Reads `input` once, every part in order (decoding `.gz` and `.zst`): SHA-256 and §1
/// on every line, each accepted record appended to `handoff` in line order, findings past
/// the first [`HELD`](crate::store::findings::HELD) spilled into the state root, `progress` getting the
/// stored bytes read (returning `false` cancels). Lines repeating one of the last
/// `remembered` events are marked `seen`.
pub fn read(
    input: &Input,
    config: &Config,
    handoff: &mut Handoff,
    remembered: usize,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<DriverPass> {
    let (schema, max_line_bytes) = (&config.schema, config.max_line_bytes);
    let mut findings = Findings::new(&crate::store::state_store::scratch(config));
    let mut ledger = Ledger::new(&crate::store::state_store::scratch(config), ledger::HELD);
    let mut keys = KeySketch::default();
    let mut recent = RecentEvents::new(remembered);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The workers build batches while the sink writes them: each needs its own access.
    let columns = handoff.columns().clone();
    let classify_chunk = |lines: Lines<'_>| {
        let mut rows = columns.rows();
        // The classifier's fast path, as the local engine's workers run it: a common line
        // is encoded without a record in between.
        let (mut slots, mut encoded, mut starts) = (fast::Slots::default(), Vec::new(), Vec::new());
        let seen = lines
            .iter()
            .map(|(line, bytes)| {
                if let LineBytes::Kept(text) = bytes {
                    encoded.clear();
                    if fast::accept(text, schema, &mut slots, &mut encoded, &mut starts) {
                        rows.push_encoded(line, &encoded);
                        return Seen::Accepted;
                    }
                }
                match classify(bytes, schema) {
                    Outcome::Blank => Seen::Blank,
                    Outcome::Accepted(record) => {
                        rows.push(line, &record);
                        Seen::Accepted
                    }
                    Outcome::Rejected(issue) => Seen::Finding(LineFinding {
                        line,
                        breach: false,
                        issue,
                    }),
                    Outcome::Breach(issue) => Seen::Finding(LineFinding {
                        line,
                        breach: true,
                        issue,
                    }),
                }
            })
            .collect();
        let rows = (!rows.is_empty()).then(|| rows.finish());
        Classified { seen, rows }
    };
    let stamps = stamps_of(input)?;
    let mut pass = DriverPass::default();
    // The sink cannot fail: the first error stops the handoff and is returned after.
    let mut failed: Option<Error> = None;
    let sink = |chunk: Classified| {
        for seen in chunk.seen {
            pass.lines += 1;
            match seen {
                Seen::Blank => pass.blank += 1,
                Seen::Accepted => pass.accepted += 1,
                Seen::Finding(finding) => {
                    pass.rejected += u64::from(!finding.breach);
                    let (by_reason, by_rule) = (&mut pass.by_reason, &mut pass.by_rule);
                    crate::plan::counts::count_finding(by_reason, by_rule, &finding.issue);
                    if failed.is_none()
                        && let Err(e) = findings.push(finding)
                    {
                        failed = Some(e);
                    }
                }
            }
        }
        if let (Some(rows), None) = (chunk.rows, &failed)
            && let Err(e) = rows.and_then(|chunk| {
                let seen: Vec<bool> = chunk.events.iter().map(|&(event, _)| recent.seen(event)).collect();
                pass.marked += seen.iter().filter(|&&seen| seen).count() as u64;
                handoff.write(&chunk.rows, seen)?;
                keys.merge(&chunk.keys);
                chunk
                    .events
                    .into_iter()
                    .try_for_each(|(event, fingerprint)| ledger.push(event, fingerprint))
            })
        {
            failed = Some(e);
        }
    };
    let parts = pipeline::scan_input(input, max_line_bytes, threads, &classify_chunk, progress, sink)?;
    if let Some(error) = failed {
        return Err(error);
    }
    // Each part's reader checked its own size and time; the whole read is checked here.
    if stamps_of(input)? != stamps {
        return Err(Error::Input {
            path: input.path.clone(),
            message: "the input changed while it was read (a part's size or modification \
                      time moved); let its producer finish, then rerun"
                .into(),
        });
    }
    pass.sha256 = input.identity(&parts);
    pass.parts = parts;
    (pass.findings, pass.spilled) = findings.finish()?;
    pass.events = ledger.finish()?;
    pass.keys = keys;
    Ok(pass)
}

fn stamps_of(input: &Input) -> Result<Vec<FileStamp>> {
    input
        .parts
        .iter()
        .map(|p| match &p.source {
            crate::input::Source::File(file) => FileStamp::of(file, &p.path),
            // Every GET of an object asks for the ETag first seen (§13.3): its reader
            // fails rather than read other bytes.
            crate::input::Source::Object(_) => Ok(FileStamp {
                size: i64::try_from(p.size).map_err(Error::internal)?,
                mtime_ms: 0,
            }),
        })
        .collect()
}

/// A file's size and modification time (milliseconds since the epoch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileStamp {
    pub size: i64,
    pub mtime_ms: i64,
}

impl FileStamp {
    /// The stamp of an open file.
    pub fn of(file: &std::fs::File, path: &Path) -> Result<FileStamp> {
        let fail = |e| Error::io(path, "read the input's size and time", "check the file", e);
        let meta = file.metadata().map_err(fail)?;
        let modified = meta.modified().map_err(fail)?;
        let mtime_ms = match modified.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).map_err(Error::internal)?,
            Err(before) => -i64::try_from(before.duration().as_millis()).map_err(Error::internal)?,
        };
        Ok(FileStamp {
            size: i64::try_from(meta.len()).map_err(Error::internal)?,
            mtime_ms,
        })
    }
}
