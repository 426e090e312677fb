//! EFFECTS, shared. Findings an engine writes out instead of holding them: past the first
//! [`HELD`] of an input, whatever the settings, a file of millions of bad lines costs the
//! engine a temporary file in the state root, not memory. [`Findings`] holds the first and
//! hands the rest to [`Spill`], which writes them in line order;
//! [`SpilledFindings`] (in `plan`) names the file, which goes when its last holder drops
//! it; [`each`] reads them back, for quarantine, after the held ones, and [`from_line`]
//! and [`before`] find them by line (the console's Raw tab), with a few seeks and no index.
//!
//! A line a finding: `[line, breach, "reason_code", field or null, event_id or null]`.

use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::contract::{LineIssue, LineReason};
use crate::error::{Error, Result};
use crate::plan::{LineFinding, SpilledFindings};

/// How many findings an engine holds before it spills, the same for every setting (so
/// `max_rejected_lines` cannot make memory follow the rejects): more than the thousand a
/// JSON plan lists, and a few hundred KiB at most (names and ids are cut to 200 bytes).
/// A refusal needs only the count and the first breach, which a spill keeps.
pub const HELD: usize = 4096;

/// An input's findings in line order: the first [`HELD`] held, the rest spilled.
pub struct Findings {
    kept: usize,
    held: Vec<LineFinding>,
    spill: Spill,
}

impl Findings {
    /// Findings holding the first [`HELD`], spilling the rest into `dir`.
    pub fn new(dir: &Path) -> Findings {
        Findings {
            kept: HELD,
            held: Vec::new(),
            spill: Spill::new(dir),
        }
    }

    /// Findings all held: for inputs a test or bench builds in memory.
    pub fn in_memory() -> Findings {
        Findings {
            kept: usize::MAX,
            held: Vec::new(),
            spill: Spill::new(&std::env::temp_dir()),
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
        // A tuple writes as the JSON array, without building a value per finding.
        let record = (
            finding.line,
            finding.breach,
            issue.reason.code(),
            &issue.field,
            &issue.event_id,
        );
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
    for finding in from_line(spilled, 0)? {
        found(finding?)?;
    }
    Ok(())
}

/// The spilled findings on line `first` or after, in line order: the file is sorted by
/// line, so a bisection over its bytes finds the first without reading what is before.
pub fn from_line(spilled: &SpilledFindings, first: u64) -> Result<Reader> {
    let mut reader = Reader::open(spilled)?;
    let start = reader.first_at_or_after(first)?;
    reader.seek(start)?;
    Ok(reader)
}

/// The last spilled finding on a line before `line`, if any.
pub fn before(spilled: &SpilledFindings, line: u64) -> Result<Option<LineFinding>> {
    let mut reader = Reader::open(spilled)?;
    let end = reader.first_at_or_after(line)?;
    // A record is at most a few KiB (its names are cut): back off until one starts in
    // the stretch before `end`, and keep the last.
    let mut back = 8 * 1024;
    loop {
        let from = end.saturating_sub(back);
        let start = match from {
            0 => 0,
            _ => reader.next_start(from)?,
        };
        if start < end || from == 0 {
            reader.seek(start)?;
            let mut last = None;
            while reader.at < end {
                match reader.next().transpose()? {
                    Some(finding) => last = Some(finding),
                    None => break,
                }
            }
            return Ok(last);
        }
        back *= 2;
    }
}

/// Reads a spill file's findings in order from where it was put.
pub struct Reader {
    path: PathBuf,
    file: BufReader<std::fs::File>,
    /// The offset of the next record.
    at: u64,
    len: u64,
    line: String,
}

/// Past this many bytes between the bounds, the bisection reads on instead of seeking.
const SCAN_BYTES: u64 = 64 * 1024;

impl Reader {
    fn open(spilled: &SpilledFindings) -> Result<Reader> {
        let path: &Path = &spilled.path;
        let file = std::fs::File::open(path).map_err(|e| read_error(path, e))?;
        let len = file.metadata().map_err(|e| read_error(path, e))?.len();
        Ok(Reader {
            path: path.to_owned(),
            file: BufReader::new(file),
            at: 0,
            len,
            line: String::new(),
        })
    }

    fn seek(&mut self, offset: u64) -> Result<()> {
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| read_error(&self.path, e))?;
        self.at = offset;
        Ok(())
    }

    /// The offset of the first record on line `first` or after (the file's length when
    /// there is none). Keeps `lo` a record's start with only earlier lines before it, and
    /// the answer at or before `hi`.
    fn first_at_or_after(&mut self, first: u64) -> Result<u64> {
        let (mut lo, mut hi) = (0, self.len);
        while hi - lo > SCAN_BYTES {
            let mid = lo + (hi - lo) / 2;
            let start = self.next_start(mid)?;
            if start >= hi {
                break; // one record spans the middle: read on from `lo`
            }
            self.seek(start)?;
            let Some(finding) = self.next().transpose()? else {
                break;
            };
            if finding.line < first {
                lo = self.at;
            } else {
                hi = start;
            }
        }
        self.seek(lo)?;
        loop {
            let start = self.at;
            match self.next().transpose()? {
                Some(finding) if finding.line < first => continue,
                _ => return Ok(start),
            }
        }
    }

    /// The offset of the first record starting at `offset` or after it.
    fn next_start(&mut self, offset: u64) -> Result<u64> {
        if offset == 0 {
            return Ok(0);
        }
        self.seek(offset - 1)?;
        let mut skipped = Vec::new();
        let n = self
            .file
            .read_until(b'\n', &mut skipped)
            .map_err(|e| read_error(&self.path, e))?;
        Ok(offset - 1 + n as u64)
    }

    fn parse(&self) -> Result<LineFinding> {
        let corrupt = |detail: String| Error::CorruptState {
            path: self.path.clone(),
            detail,
        };
        let (number, breach, reason, field, event_id): (
            u64,
            bool,
            String,
            Option<String>,
            Option<String>,
        ) = serde_json::from_str(&self.line).map_err(|e| corrupt(e.to_string()))?;
        let reason = LineReason::from_code(&reason)
            .ok_or_else(|| corrupt(format!("unknown reason {reason:?}")))?;
        Ok(LineFinding {
            line: number,
            breach,
            issue: LineIssue {
                reason,
                field,
                event_id,
            },
        })
    }
}

impl Iterator for Reader {
    type Item = Result<LineFinding>;

    fn next(&mut self) -> Option<Result<LineFinding>> {
        self.line.clear();
        match self.file.read_line(&mut self.line) {
            Ok(0) => None,
            Ok(n) => {
                self.at += n as u64;
                Some(self.parse())
            }
            Err(e) => Some(Err(read_error(&self.path, e))),
        }
    }
}

fn read_error(path: &Path, e: std::io::Error) -> Error {
    Error::io(path, "read spilled findings", HINT, e)
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

    /// A spill past the bisection's reach (~1.5 MB): every line's next and previous
    /// finding read from the file match the list, at its ends and between its lines.
    #[test]
    fn findings_are_found_by_line_in_a_large_spill() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::new(dir.path());
        let written: Vec<LineFinding> = (1..30_000u64)
            .map(|i| {
                let field = (i % 7 == 0).then(|| "f".repeat((i % 300) as usize));
                let reason = match i % 3 {
                    0 => LineReason::MalformedJson,
                    _ => LineReason::UnknownField,
                };
                finding(i * 3, i % 5 == 0, reason, field.as_deref())
            })
            .collect();
        for f in &written {
            spill.push(f).unwrap();
        }
        let spilled = spill.finish().unwrap().unwrap();
        let last = written.last().unwrap().line;
        for line in (0..20)
            .chain((1..4000).map(|i| i * 22 + i % 4))
            .chain(last - 5..last + 5)
        {
            let next = written.iter().find(|f| f.line >= line);
            let read = from_line(&spilled, line)
                .unwrap()
                .next()
                .transpose()
                .unwrap();
            assert_eq!(read.as_ref(), next, "from line {line}");
            let previous = written.iter().rev().find(|f| f.line < line);
            assert_eq!(
                before(&spilled, line).unwrap().as_ref(),
                previous,
                "before {line}"
            );
        }
        let tail: Vec<LineFinding> = from_line(&spilled, last - 4)
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(tail, written[written.len() - 2..]);
    }

    #[test]
    fn every_reason_code_reads_back() {
        for reason in LineReason::ALL {
            assert_eq!(LineReason::from_code(reason.code()), Some(reason));
        }
        assert_eq!(LineReason::from_code("nope"), None);
    }
}
