//! The run log (CONTRACT.md §6.5): `<state_root>/runs.jsonl`, one line per run with
//! time, product, input, hash, action, reason, dates, counts, duration, tool version and
//! the engine (with its session settings).
//! No row data.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::plan::Counts;
use crate::store::atomic;
use crate::store::state_store::StateStore;

/// One run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub time: String,
    pub product: String,
    pub input_name: String,
    pub input_sha256: String,
    pub action: String,
    pub reason: Option<String>,
    pub dates: Vec<String>,
    pub counts: Counts,
    /// The engine refused before the row work: `retries`, `keys`, `ties_by_arrival`,
    /// `stale` and the dates were never counted (their zeros are not counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unranked: bool,
    pub duration_ms: u64,
    pub tool_version: String,
    /// How dates were swapped in: `rename`, `exchange`, `two_renames` or `unchanged`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub swaps: Vec<String>,
    /// The engine that did the row work, as it describes itself (`local`,
    /// `spark sc://host:15002`); a record written before engines existed reads `local`.
    #[serde(default = "local_engine")]
    pub engine: String,
    /// The engine's resolved session settings (the Spark engine's), when it has any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_settings: BTreeMap<String, String>,
    /// The Delta table version the landing committed (§12.4); absent for hive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_version: Option<u64>,
    /// A set's parts, by name in part order (§11.2); absent for a single file. The
    /// checkpoint keeps each one's size and SHA-256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
    /// The landing's run id (a UUID v4), the one its alerts, lineage events, quarantine
    /// summary, Parquet files and Delta commit carry; empty in records written before.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
    /// What the run took from the Delta table's log into the state root before deciding
    /// (§12.5: checkpoints rebuilt on a new machine); absent when the state root knew all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

fn local_engine() -> String {
    "local".to_owned()
}

fn path(config: &Config) -> PathBuf {
    config.state_root.join("runs.jsonl")
}

/// With the state root on S3, the run log is one object per run under `runs/`.
const ENTRIES: &str = "runs";

/// Appends `record` and fsyncs the log.
pub fn append(config: &Config, record: &RunRecord) -> Result<()> {
    let mut line = serde_json::to_vec(record)
        .map_err(|e| Error::internal(format!("cannot encode the run log record: {e}")))?;
    line.push(b'\n');
    let store = StateStore::state(config)?;
    if store.on_s3() {
        return store.append_entry(ENTRIES, &line);
    }
    let path = path(config);
    atomic::create_private_dir_all(&config.state_root)?;
    std::os::unix::fs::OpenOptionsExt::mode(&mut std::fs::OpenOptions::new(), 0o600)
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| {
            atomic::write_all(&mut file, &line)?;
            atomic::sync_file(&file)
        })
        .map_err(|e| {
            Error::io(
                &path,
                "append to the run log",
                "check free space and the disk; everything else of this run was written",
                e,
            )
        })
}

/// Every run, oldest first. A torn last line (a crash mid-append) is skipped.
pub fn read(config: &Config) -> Result<Vec<RunRecord>> {
    let store = StateStore::state(config)?;
    if store.on_s3() {
        return entries(&store, None);
    }
    let path = path(config);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&path, "read the run log", "check permissions", e)),
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut records = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(record) => records.push(record),
            Err(_) if index + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(Error::CorruptState {
                    path,
                    detail: format!("line {}: {e}", index + 1),
                });
            }
        }
    }
    Ok(records)
}

/// Bytes read per step from the end of the run log.
const BLOCK: u64 = 64 * 1024;

/// The newest `n` runs, newest first, read from the end of the log: what a screen or
/// `history --limit` shows costs the same on a log of years as on a log of a day. Memory
/// stays bounded by the records kept plus one block and the line that crosses it. A torn
/// last line (a crash mid-append) is skipped, as [`read`] does.
pub fn newest(config: &Config, n: usize) -> Result<Vec<RunRecord>> {
    let store = StateStore::state(config)?;
    if store.on_s3() {
        let mut records = entries(&store, Some(n))?;
        records.reverse();
        return Ok(records);
    }
    let path = path(config);
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&path, "read the run log", "check permissions", e)),
    };
    let io = |e| Error::io(&path, "read the run log", "check permissions", e);
    let mut lines = ReverseLines::new(&mut file).map_err(io)?;
    let mut records = Vec::with_capacity(n.min(4096));
    let mut first = true;
    while records.len() < n {
        let Some((line, terminated)) = lines.next_line().map_err(io)? else {
            break;
        };
        let last = std::mem::replace(&mut first, false);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(&line) {
            Ok(record) => records.push(record),
            Err(_) if last && !terminated => {}
            Err(e) => {
                return Err(Error::CorruptState {
                    path: path.clone(),
                    detail: format!("{} bytes from the end: {e}", lines.read_back()),
                });
            }
        }
    }
    Ok(records)
}

/// The run log's records on S3, oldest first (the newest `limit` when given).
fn entries(store: &StateStore, limit: Option<usize>) -> Result<Vec<RunRecord>> {
    let mut records = Vec::new();
    for (path, bytes) in store.entries(ENTRIES, limit)? {
        let record = serde_json::from_slice(&bytes).map_err(|e| Error::CorruptState {
            path,
            detail: e.to_string(),
        })?;
        records.push(record);
    }
    Ok(records)
}

/// Lines of a file from its end to its start, read a block at a time.
struct ReverseLines<'a, R> {
    file: &'a mut R,
    /// Where the unread part of the file ends.
    pos: u64,
    len: u64,
    /// Bytes read but not yet split off, from `pos` on.
    buf: Vec<u8>,
    /// Whether the next line returned is the file's last one.
    at_end: bool,
}

impl<'a, R: std::io::Read + std::io::Seek> ReverseLines<'a, R> {
    fn new(file: &'a mut R) -> std::io::Result<Self> {
        let len = file.seek(std::io::SeekFrom::End(0))?;
        Ok(ReverseLines {
            file,
            pos: len,
            len,
            buf: Vec::new(),
            at_end: true,
        })
    }

    /// How far from the file's end the reader is, for an error message.
    fn read_back(&self) -> u64 {
        self.len - self.pos
    }

    /// The previous line (without its `\n`) and whether a `\n` ended it.
    fn next_line(&mut self) -> std::io::Result<Option<(Vec<u8>, bool)>> {
        let mut terminated = true;
        if std::mem::replace(&mut self.at_end, false) {
            self.fill_once()?;
            if self.buf.last() == Some(&b'\n') {
                self.buf.pop();
            } else {
                terminated = false;
            }
            if self.buf.is_empty() && self.pos == 0 {
                return Ok(None);
            }
        } else if self.buf.is_empty() && self.pos == 0 {
            return Ok(None);
        }
        loop {
            if let Some(i) = self.buf.iter().rposition(|&b| b == b'\n') {
                let line = self.buf.split_off(i + 1);
                self.buf.pop();
                return Ok(Some((line, terminated)));
            }
            if self.pos == 0 {
                return Ok(Some((std::mem::take(&mut self.buf), terminated)));
            }
            self.fill_once()?;
        }
    }

    /// Reads the block before `pos` in front of `buf`.
    fn fill_once(&mut self) -> std::io::Result<()> {
        let start = self.pos.saturating_sub(BLOCK);
        let mut block = vec![0; (self.pos - start) as usize];
        self.file.seek(std::io::SeekFrom::Start(start))?;
        self.file.read_exact(&mut block)?;
        block.extend_from_slice(&self.buf);
        self.buf = block;
        self.pos = start;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ReverseLines;

    fn lines(text: &[u8]) -> Vec<(String, bool)> {
        let mut cursor = std::io::Cursor::new(text.to_vec());
        let mut reader = ReverseLines::new(&mut cursor).unwrap();
        let mut out = Vec::new();
        while let Some((line, terminated)) = reader.next_line().unwrap() {
            out.push((String::from_utf8(line).unwrap(), terminated));
        }
        out
    }

    #[test]
    fn reads_lines_newest_first() {
        let t = |s: &str| (s.to_owned(), true);
        assert_eq!(lines(b"a\nbb\nccc\n"), vec![t("ccc"), t("bb"), t("a")]);
        assert_eq!(lines(b""), vec![]);
        assert_eq!(lines(b"\n"), vec![]);
        assert_eq!(lines(b"a\n\nb\n"), vec![t("b"), t(""), t("a")]);
        let torn = lines(b"a\nb");
        assert_eq!(torn, vec![("b".to_owned(), false), t("a")]);
    }

    #[test]
    fn lines_crossing_blocks_come_back_whole() {
        let long = "x".repeat(super::BLOCK as usize * 2 + 17);
        let text = format!("first\n{long}\nlast\n");
        let got = lines(text.as_bytes());
        let got: Vec<_> = got.into_iter().map(|(l, _)| l).collect();
        assert_eq!(got, vec!["last".to_owned(), long, "first".to_owned()]);
        // Every split of many short lines over block edges.
        let many: String = (0..50_000).map(|i| format!("{i}\n")).collect();
        let got = lines(many.as_bytes());
        assert_eq!(got.len(), 50_000);
        assert!(
            got.iter()
                .rev()
                .enumerate()
                .all(|(i, (l, t))| *l == i.to_string() && *t)
        );
    }
}
