//! Numbering: the input read by Spark as text, every line given its exact 1-based number
//! and cleaned as §1 splits it, leaving the view [`LINES`] `(line BIGINT, value STRING)`
//! of the lines the driver accepted.
//!
//! Spark splits a file into blocks read in parallel; within one block lines come in
//! order, one task reading the block whole. `monotonically_increasing_id()` counts a
//! task's rows one by one, so a block's lines hold consecutive ids: a line's number is its
//! id less its block's first id, plus the lines of every earlier block. The driver learns
//! both from one small query (a row per block), and the numbering needs no shuffle. It
//! relies on Spark splitting the file alike in both queries, so a line whose id falls
//! outside its block's range fails the query instead of taking a wrong number.
//!
//! The block, the file's size and its modification time come from Spark's `_metadata`
//! columns; the size and time must be the driver's ([`FileStamp`]), so a server that sees
//! another file at the path, or a file changed since the driver read it, is an input
//! error rather than lines numbered from other bytes.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use spark_connect::row::{Row, Value};
use spark_connect::types::{DataType, StructField};

use super::session::{Session, int_at};
use crate::error::{Error, Result};

/// Every line as Spark read it: `value`, `block` (the byte its split starts at) and
/// `mid` (its task's row count before it, plus the task's own high bits).
pub const RAW: &str = "wharf_raw_lines";
/// The accepted lines, numbered and cleaned: `line`, `value`.
pub const LINES: &str = "wharf_lines";

/// The numbers of the lines the driver rejected: `line`. Sent as data (an Arrow local
/// relation), never inlined into the SQL text, whose size would grow with the reject cap.
pub const REJECTED: &str = "wharf_rejected_lines";

/// Registers [`LINES`] over the file at `path`: every line numbered, the BOM and one
/// trailing `\r` stripped, the `rejected` lines (ascending) and blank lines dropped.
/// `lines` is the driver's count; Spark must read as many, or the file changed.
/// `stamp` is the file as the driver read it; Spark must see the same size and mtime.
pub fn register(
    session: &Session,
    path: &Path,
    stamp: FileStamp,
    lines: u64,
    rejected: &[u64],
) -> Result<()> {
    let location = super::uri::read_uri(path, "the input's path")?;
    let raw = session
        .spark()
        .read()
        .format("text")
        .option("lineSep", "\n")
        .load(Some(&location))
        .select_expr(vec![
            "value",
            "_metadata.file_block_start AS block",
            "monotonically_increasing_id() AS mid",
            "_metadata.file_size AS size",
            "unix_millis(_metadata.file_modification_time) AS mtime",
        ]);
    raw.create_or_replace_temp_view(RAW)
        .map_err(|e| session.error("cannot register the input's lines", &e))?;
    let (starts, seen) = block_starts(session)?;
    let counted = starts.last().map_or(0, |b| b.before + b.lines);
    // An empty file has no block, so nothing to compare.
    if !seen.is_empty() && seen != BTreeSet::from([stamp]) {
        let spark: Vec<String> = seen.iter().map(FileStamp::to_string).collect();
        return Err(Error::Input {
            path: path.to_owned(),
            message: format!(
                "the driver read {stamp} but Spark read {}: the file changed while it was \
                 read, or the server sees another file at this path; make sure the inbox is \
                 the same file system for both, then rerun",
                spark.join(" and ")
            ),
        });
    }
    if counted != lines {
        return Err(Error::Input {
            path: path.to_owned(),
            message: format!(
                "the driver read {lines} lines but Spark read {counted}: the file changed \
                 while it was read, or the server sees another file at this path; make sure \
                 the inbox is the same file system for both, then rerun"
            ),
        });
    }
    if !rejected.is_empty() {
        register_rejected(session, rejected)?;
    }
    let query = numbered_query(&starts, !rejected.is_empty());
    session
        .frame(&query, "cannot number the input's lines")?
        .create_or_replace_temp_view(LINES)
        .map_err(|e| session.error("cannot register the numbered lines", &e))
}

/// A file's size and modification time (milliseconds since the epoch, the precision
/// Hadoop's local file system reports).
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

impl std::fmt::Display for FileStamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes modified at {} ms", self.size, self.mtime_ms)
    }
}

/// One block of the input as Spark read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    /// The byte its split starts at.
    start: i64,
    /// Lines in every earlier block.
    before: u64,
    /// Lines in it.
    lines: u64,
    /// The `mid` of its first line.
    first_mid: i64,
}

/// Every block, in file order.
fn block_starts(session: &Session) -> Result<(Vec<Block>, BTreeSet<FileStamp>)> {
    let query = format!(
        "SELECT block, count(*), min(mid), min(size), max(size), min(mtime), max(mtime) \
         FROM {RAW} GROUP BY block ORDER BY block"
    );
    let mut before = 0u64;
    let mut starts = Vec::new();
    let mut seen = BTreeSet::new();
    for row in session.rows(&query, "cannot count the input's lines per block")? {
        let (start, n, first_mid) = (int_at(&row, 0)?, int_at(&row, 1)?, int_at(&row, 2)?);
        for (size, mtime) in [(3, 5), (4, 6)] {
            seen.insert(FileStamp {
                size: int_at(&row, size)?,
                mtime_ms: int_at(&row, mtime)?,
            });
        }
        let lines = u64::try_from(n).map_err(Error::internal)?;
        starts.push(Block {
            start,
            before,
            lines,
            first_mid,
        });
        before += lines;
    }
    Ok((starts, seen))
}

/// The query of [`LINES`].
fn numbered_query(starts: &[Block], drop_rejected: bool) -> String {
    let mut offsets = String::new();
    for (i, block) in starts.iter().enumerate() {
        let comma = if i == 0 { "" } else { ", " };
        let Block {
            start,
            before,
            lines,
            first_mid,
        } = block;
        let _ = write!(offsets, "{comma}({start}L, {before}L, {lines}L, {first_mid}L)");
    }
    if offsets.is_empty() {
        offsets.push_str("(0L, 0L, 0L, 0L)");
    }
    // A fixed message: an error keeps only its condition, and this one quotes no row.
    let numbered = format!(
        "SELECT /*+ BROADCAST(o) */ CASE WHEN r.mid - o.first_mid BETWEEN 0 AND o.n - 1 \
         THEN o.lines_before + r.mid - o.first_mid + 1 \
         ELSE raise_error('Spark split the input differently between two reads') END AS line, r.value \
         FROM {RAW} r JOIN (VALUES {offsets}) AS o(blk, lines_before, n, first_mid) ON r.block = o.blk"
    );
    // §1: the byte-order mark only at the very start, then one trailing `\r`.
    let cleaned = format!(
        "SELECT line, CASE WHEN endswith(v, '\\r') THEN substr(v, 1, length(v) - 1) ELSE v END AS value \
         FROM (SELECT line, CASE WHEN line = 1 AND startswith(value, '\\uFEFF') THEN substr(value, 2) ELSE value END AS v \
         FROM ({numbered}))"
    );
    let join = if drop_rejected {
        format!("LEFT ANTI JOIN {REJECTED} x ON c.line = x.line")
    } else {
        String::new()
    };
    format!(
        "SELECT /*+ BROADCAST(x) */ c.line, c.value FROM ({cleaned}) c {join} \
         WHERE trim(BOTH ' \\t\\r' FROM c.value) <> ''"
    )
}

/// Registers [`REJECTED`] over the driver's `rejected` line numbers.
fn register_rejected(session: &Session, rejected: &[u64]) -> Result<()> {
    let name = vec!["line".to_owned()];
    let rows = rejected
        .iter()
        .map(|&n| {
            let n = i64::try_from(n).map_err(Error::internal)?;
            Ok(Row::new(name.clone(), vec![Value::Long(n)]))
        })
        .collect::<Result<Vec<Row>>>()?;
    let schema = DataType::Struct {
        fields: vec![StructField {
            name: "line".to_owned(),
            data_type: DataType::Long,
            nullable: false,
            metadata: Default::default(),
        }],
    };
    let failed = |e| session.error("cannot send the rejected lines' numbers", &e);
    let frame = session.spark().create_dataframe(rows, schema).map_err(failed)?;
    frame.create_or_replace_temp_view(REJECTED).map_err(failed)
}

