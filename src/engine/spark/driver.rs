//! [`DriverPass`]: the one read of an input's bytes on the driver. It hashes the file and
//! classifies every line with Wharf's own §1 classifier, so reason codes, fields and line
//! numbers are exactly the local engine's; Spark later only parses lines this pass
//! accepted.

use std::collections::BTreeMap;

use crate::contract::{LineBytes, LineReason, Outcome, Schema, classify};
use super::lines::FileStamp;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::pipeline;
use crate::plan::LineFinding;

/// What the driver learnt of an input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverPass {
    pub sha256: String,
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
    /// The file's size and mtime, the same before and after this read.
    pub stamp: FileStamp,
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

/// Reads `input` once: SHA-256 and §1 on every line, `progress` getting the bytes read
/// (returning `false` cancels).
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
    // The engine refuses sets and compressed files before this: one plain part.
    let [part] = input.parts.as_slice() else {
        return Err(Error::internal("the Spark driver pass was given a set"));
    };
    let mut pass = DriverPass {
        stamp: FileStamp::of(&part.file, &input.path)?,
        ..DriverPass::default()
    };
    pass.sha256 = pipeline::scan(
        &part.file,
        &part.path,
        max_line_bytes,
        threads,
        &see,
        progress,
        |seen| {
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
        },
    )?;
    if FileStamp::of(&part.file, &input.path)? != pass.stamp {
        return Err(Error::Input {
            path: input.path.clone(),
            message: "the file changed while it was read (its size or modification time \
                      moved); let its producer finish, then rerun"
                .into(),
        });
    }
    Ok(pass)
}
