//! [`DriverPass`]: the one read of an input's bytes on the driver. It hashes every part
//! (as stored) and classifies every line, decoded, with Wharf's own §1 classifier, so
//! reason codes, fields and line numbers are exactly the local engine's: a set's lines
//! are numbered on through its parts (§11.4). Spark later only parses lines this pass
//! accepted.

use std::collections::BTreeMap;

use super::lines::FileStamp;
use crate::contract::{LineBytes, LineReason, Outcome, Schema, classify};
use crate::error::{Error, Result};
use crate::input::{Input, PartDigest};
use crate::pipeline;
use crate::plan::LineFinding;

/// What the driver learnt of an input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// Rejects and breaches, in line order.
    pub findings: Vec<LineFinding>,
    /// Each part's stored size and mtime, the same before and after this read.
    pub stamps: Vec<FileStamp>,
}

impl DriverPass {
    /// Whether a prohibited or unknown field was found.
    pub fn has_breach(&self) -> bool {
        self.findings.iter().any(|f| f.breach)
    }

    /// The rejected lines' numbers, ascending: the lines Spark drops.
    pub fn rejected_lines(&self) -> Vec<u64> {
        self.findings
            .iter()
            .filter(|f| !f.breach)
            .map(|f| f.line)
            .collect()
    }
}

/// One line as the pass keeps it: no record, so memory stays the findings'.
enum Seen {
    Blank,
    Accepted,
    Finding(LineFinding),
}

/// Reads `input` once, every part in order (decoding `.gz`): SHA-256 and §1 on every
/// line, `progress` getting the stored bytes read (returning `false` cancels).
pub fn read(
    input: &Input,
    schema: &Schema,
    max_line_bytes: usize,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<DriverPass> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let see = |line: u64, bytes: LineBytes<'_>| match classify(bytes, schema) {
        Outcome::Blank => Seen::Blank,
        Outcome::Accepted(_) => Seen::Accepted,
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
    };
    let stamps = stamps_of(input)?;
    let mut pass = DriverPass::default();
    let parts =
        pipeline::scan_input_lines(input, max_line_bytes, threads, &see, progress, |seen| {
            pass.lines += 1;
            match seen {
                Seen::Blank => pass.blank += 1,
                Seen::Accepted => pass.accepted += 1,
                Seen::Finding(finding) => {
                    pass.rejected += u64::from(!finding.breach);
                    *pass.by_reason.entry(finding.issue.reason).or_default() += 1;
                    pass.findings.push(finding);
                }
            }
        })?;
    // Each part's reader checked its own size and time; Spark is checked against these.
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
    pass.stamps = stamps;
    Ok(pass)
}

fn stamps_of(input: &Input) -> Result<Vec<FileStamp>> {
    input
        .parts
        .iter()
        .map(|p| FileStamp::of(&p.file, &p.path))
        .collect()
}
