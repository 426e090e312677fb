//! EFFECTS, shared. Findings an engine writes out instead of holding them: past the first
//! [`kept`] of an input, a file of millions of bad lines costs the engine a temporary
//! file in the state root, not memory. [`Findings`] holds the first and hands the rest to
//! [`Spill`], which writes them in line order;
//! [`SpilledFindings`] (in `plan`) names the file, which goes when its last holder drops
//! it; [`each`] reads them back, for quarantine, after the kept ones.
//!
//! A line a finding: `[line, breach, "reason_code", field or null, event_id or null]`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::contract::{LineIssue, LineReason};
use crate::error::{Error, Result};
use crate::plan::{LineFinding, SpilledFindings};

/// How many findings an engine holds before it spills: every one a run can publish with
/// (the reject cap's), one more, and at least the thousand a JSON plan lists.
pub fn kept(max_rejected_lines: u64) -> usize {
    usize::try_from(max_rejected_lines)
        .unwrap_or(usize::MAX)
        .saturating_add(1)
        .max(1000)
}

/// An input's findings in line order: the first [`kept`] held, the rest spilled.
pub struct Findings {
    kept: usize,
    held: Vec<LineFinding>,
    spill: Spill,
}

impl Findings {
    /// Findings of a run capped at `max_rejected_lines`, spilling into `dir`.
    pub fn new(max_rejected_lines: u64, dir: &Path) -> Findings {
        Findings {
            kept: kept(max_rejected_lines),
            held: Vec::new(),
            spill: Spill::new(dir),
        }
    }

    /// The next finding in line order.
    pub fn push(&mut self, finding: LineFinding) -> Result<()> {
        if self.held.len() < self.kept {
            self.held.push(finding);
            Ok(())
        } else {
            self.spill.push(&finding)
        }
    }

    /// The held findings, and the spilled ones (`None` when none were).
    pub fn finish(self) -> Result<(Vec<LineFinding>, Option<SpilledFindings>)> {
        Ok((self.held, self.spill.finish()?))
    }
}

/// Findings past the kept ones, written as they come.
pub struct Spill {
    dir: PathBuf,
    file: Option<BufWriter<tempfile::NamedTempFile>>,
    count: u64,
    first_breach: Option<LineFinding>,
}

impl Spill {
    /// A spill whose file, made on the first finding, goes in `dir`.
    pub fn new(dir: &Path) -> Spill {
        Spill {
            dir: dir.to_owned(),
            file: None,
            count: 0,
            first_breach: None,
        }
    }

    pub fn push(&mut self, finding: &LineFinding) -> Result<()> {
        if finding.breach && self.first_breach.is_none() {
            self.first_breach = Some(finding.clone());
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                crate::store::atomic::create_private_dir_all(&self.dir)?;
                let made = tempfile::Builder::new()
                    .prefix(".findings-")
                    .tempfile_in(&self.dir)
                    .map_err(|e| self.error(e))?;
                self.file.insert(BufWriter::new(made))
            }
        };
        let issue = &finding.issue;
        let record = serde_json::json!([
            finding.line,
            finding.breach,
            issue.reason.code(),
            issue.field,
            issue.event_id
        ]);
        serde_json::to_writer(&mut *file, &record).map_err(|e| Error::internal(e.to_string()))?;
        file.write_all(b"\n").map_err(|e| self.error(e))?;
        self.count += 1;
        Ok(())
    }

    /// The spilled findings, `None` when none were.
    pub fn finish(self) -> Result<Option<SpilledFindings>> {
        let Some(file) = self.file else {
            return Ok(None);
        };
        let file = file
            .into_inner()
            .map_err(|e| Error::io(&self.dir, "write spilled findings", HINT, e.into_error()))?;
        Ok(Some(SpilledFindings {
            path: Arc::new(file.into_temp_path()),
            count: self.count,
            first_breach: self.first_breach,
        }))
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(&self.dir, "write spilled findings", HINT, e)
    }
}

const HINT: &str = "check free space in the state root, then rerun";

/// Every spilled finding, in line order.
pub fn each(
    spilled: &SpilledFindings,
    mut found: impl FnMut(LineFinding) -> Result<()>,
) -> Result<()> {
    let path: &Path = &spilled.path;
    let fail = |e| Error::io(path, "read spilled findings", HINT, e);
    let corrupt = |detail: String| Error::CorruptState {
        path: path.to_owned(),
        detail,
    };
    let file = std::fs::File::open(path).map_err(fail)?;
    for line in BufReader::new(file).lines() {
        let line = line.map_err(fail)?;
        let (number, breach, reason, field, event_id): (
            u64,
            bool,
            String,
            Option<String>,
            Option<String>,
        ) = serde_json::from_str(&line).map_err(|e| corrupt(e.to_string()))?;
        let reason = LineReason::from_code(&reason)
            .ok_or_else(|| corrupt(format!("unknown reason {reason:?}")))?;
        found(LineFinding {
            line: number,
            breach,
            issue: LineIssue {
                reason,
                field,
                event_id,
            },
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(line: u64, breach: bool, reason: LineReason, field: Option<&str>) -> LineFinding {
        LineFinding {
            line,
            breach,
            issue: LineIssue {
                reason,
                field: field.map(str::to_owned),
                event_id: Some(format!("e\t\"{line}\"\n")),
            },
        }
    }

    #[test]
    fn spilled_findings_read_back_in_order_and_the_file_goes_with_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::new(dir.path());
        let written = vec![
            finding(5, false, LineReason::MalformedJson, None),
            finding(9, true, LineReason::ProhibitedField, Some("email")),
            finding(12, true, LineReason::UnknownField, Some("x\u{1b}")),
        ];
        for f in &written {
            spill.push(f).unwrap();
        }
        let spilled = spill.finish().unwrap().unwrap();
        assert_eq!(spilled.count, 3);
        assert_eq!(spilled.first_breach.as_ref(), Some(&written[1]));
        let mut read = Vec::new();
        each(&spilled, |f| {
            read.push(f);
            Ok(())
        })
        .unwrap();
        assert_eq!(read, written);
        let path = spilled.path.to_path_buf();
        assert!(path.exists());
        drop(spilled);
        assert!(!path.exists(), "the spill outlived its findings");
        assert!(Spill::new(dir.path()).finish().unwrap().is_none());
    }

    #[test]
    fn every_reason_code_reads_back() {
        for reason in LineReason::ALL {
            assert_eq!(LineReason::from_code(reason.code()), Some(reason));
        }
        assert_eq!(LineReason::from_code("nope"), None);
    }
}
