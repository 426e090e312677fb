//! Numbering: the input read by Spark as text, every line given its exact 1-based number
//! and cleaned as §1 splits it, leaving the view [`LINES`] `(line BIGINT, value STRING)`
//! of the lines the driver accepted.
//!
//! Each part is one read of its explicit, glob-escaped URI; a set is the union of its
//! parts' reads, and a row's part is the file `_metadata.file_path` names, never a
//! position in the union. Spark splits a plain file into blocks read in parallel (a `.gz`
//! is one block: gzip does not split); within one block lines come in order, one task
//! reading the block whole. `monotonically_increasing_id()` counts a task's rows one by
//! one, so a block's lines hold consecutive ids: a line's number is its id less its
//! block's first id, plus the lines of every earlier block of its part, plus the lines
//! of every earlier part (§11.4, as the driver numbers them). The driver learns the blocks
//! from one small query (a row per block), and the numbering needs no shuffle. It relies
//! on Spark splitting the files alike in both queries, so a line whose id falls outside
//! its block's range fails the query instead of taking a wrong number.
//!
//! The block, the file's stored size and its modification time come from Spark's
//! `_metadata` columns; each part's size and time must be the driver's ([`FileStamp`]),
//! and its line count too, so a server that sees another file at the path, or a file
//! changed since the driver read it, is an input error rather than lines numbered from
//! other bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use spark_connect::DataFrame;
use spark_connect::row::{Row, Value};
use spark_connect::types::{DataType, StructField};

use super::session::{Session, int_at, str_at};
use crate::error::{Error, Result};

/// Every line as Spark read it: `value`, `file` (its part's URI as Spark names it),
/// `block` (the byte its split starts at) and `mid` (its task's row count before it, plus
/// the task's own high bits).
pub const RAW: &str = "wharf_raw_lines";
/// The accepted lines, numbered and cleaned: `line`, `value`.
pub const LINES: &str = "wharf_lines";

/// The numbers of the lines the driver rejected: `line`. Sent as data (an Arrow local
/// relation), never inlined into the SQL text, whose size would grow with the reject cap.
pub const REJECTED: &str = "wharf_rejected_lines";

/// Every block with its part and the offsets of its lines: sent as data too, a row per
/// block.
pub const BLOCKS: &str = "wharf_blocks";

/// One part as the driver read it, for Spark to read the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartFile {
    /// Absolute and resolved: Spark's `_metadata.file_path` must name this file.
    pub path: PathBuf,
    /// Its stored size and mtime.
    pub stamp: FileStamp,
    /// Its lines, as the driver split them.
    pub lines: u64,
    /// Lines in every earlier part.
    pub first_line: u64,
}

/// Registers [`LINES`] over `parts` (in part order): every line numbered on through the
/// parts, each part's BOM and one trailing `\r` per line stripped, the `rejected` lines
/// (ascending) and blank lines dropped. Spark must read each part with the driver's stamp
/// and line count, or the part changed.
pub fn register(session: &Session, parts: &[PartFile], rejected: &[u64]) -> Result<()> {
    let raw = raw_lines(session, parts)?;
    raw.create_or_replace_temp_view(RAW)
        .map_err(|e| session.error("cannot register the input's lines", &e))?;
    let layout = layout(session, parts)?;
    register_blocks(session, &layout.blocks)?;
    if !rejected.is_empty() {
        register_rejected(session, rejected)?;
    }
    let query = numbered_query(&layout.files, !rejected.is_empty());
    session
        .frame(&query, "cannot number the input's lines")?
        .create_or_replace_temp_view(LINES)
        .map_err(|e| session.error("cannot register the numbered lines", &e))
}

/// Every part's lines as one frame: a union of one read per part, paired as a balanced
/// tree so the plan's depth grows with the log of the parts, not their count.
fn raw_lines(session: &Session, parts: &[PartFile]) -> Result<DataFrame> {
    let mut reads = Vec::with_capacity(parts.len());
    for part in parts {
        let location = super::uri::read_uri(&part.path, "the input's path")?;
        let read = session
            .spark()
            .read()
            .format("text")
            .option("lineSep", "\n")
            .load(Some(&location))
            .select_expr(vec![
                "value",
                "_metadata.file_path AS file",
                "_metadata.file_block_start AS block",
                "monotonically_increasing_id() AS mid",
                "_metadata.file_size AS size",
                "unix_millis(_metadata.file_modification_time) AS mtime",
            ]);
        reads.push(read);
    }
    match super::union::union_all(reads) {
        Some(raw) => Ok(raw),
        // A closed set with no parts: no line to read.
        None => session.frame(
            "SELECT CAST(NULL AS STRING) AS value, CAST(NULL AS STRING) AS file, 0L AS block, \
             0L AS mid, 0L AS size, 0L AS mtime WHERE false",
            "cannot plan an empty input's lines",
        ),
    }
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

/// One block of a part as Spark read it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Block {
    /// Its part's index, in part order.
    part: usize,
    /// The byte its split starts at.
    start: i64,
    /// Lines in every earlier block, of this part and of every earlier part.
    before: u64,
    /// Lines in it.
    lines: u64,
    /// The `mid` of its first line.
    first_mid: i64,
    /// The number of its part's first line, whose BOM §1 skips.
    part_first: u64,
}

/// What Spark read of one part: each block's (start, lines, first mid), and every
/// (size, mtime) it saw.
#[derive(Default)]
struct Seen {
    file: String,
    blocks: Vec<(i64, u64, i64)>,
    stamps: BTreeSet<FileStamp>,
}

/// How Spark read the input.
struct Layout {
    /// Every block, in part order then file order.
    blocks: Vec<Block>,
    /// Each part's URI as Spark names it (`_metadata.file_path`), and the part's index:
    /// the parts with lines only.
    files: Vec<(String, usize)>,
}

/// How Spark read `parts`, checked against what the driver read of each.
fn layout(session: &Session, parts: &[PartFile]) -> Result<Layout> {
    let query = format!(
        "SELECT file, block, count(*), min(mid), min(size), max(size), min(mtime), max(mtime) \
         FROM {RAW} GROUP BY file, block"
    );
    let index: BTreeMap<&Path, usize> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.path.as_path(), i))
        .collect();
    let mut seen: Vec<Seen> = parts.iter().map(|_| Seen::default()).collect();
    for row in session.rows(&query, "cannot count the input's lines per block")? {
        let file = str_at(&row, 0)?
            .ok_or_else(|| Error::internal("Spark read a line of no file"))?;
        let at = part_of(&file, &index)?;
        let part = &mut seen[at];
        for (size, mtime) in [(4, 6), (5, 7)] {
            part.stamps.insert(FileStamp {
                size: int_at(&row, size)?,
                mtime_ms: int_at(&row, mtime)?,
            });
        }
        let lines = u64::try_from(int_at(&row, 2)?).map_err(Error::internal)?;
        part.blocks.push((int_at(&row, 1)?, lines, int_at(&row, 3)?));
        if !part.file.is_empty() && part.file != file {
            return Err(Error::internal("Spark named one part by two URIs"));
        }
        part.file = file;
    }
    let (mut blocks, mut files) = (Vec::new(), Vec::new());
    for (at, (part, mut seen)) in parts.iter().zip(seen).enumerate() {
        check_part(part, &seen)?;
        if !seen.blocks.is_empty() {
            files.push((std::mem::take(&mut seen.file), at));
        }
        seen.blocks.sort_unstable();
        let mut before = part.first_line;
        for (start, lines, first_mid) in seen.blocks {
            blocks.push(Block {
                part: at,
                start,
                before,
                lines,
                first_mid,
                part_first: part.first_line + 1,
            });
            before += lines;
        }
    }
    Ok(Layout { blocks, files })
}

/// The part `file` (a URI from `_metadata.file_path`) is, or an input error: Spark read
/// a file the driver did not.
fn part_of(file: &str, index: &BTreeMap<&Path, usize>) -> Result<usize> {
    let path = url::Url::parse(file)
        .ok()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok());
    path.as_deref()
        .and_then(|p| index.get(p).copied())
        .ok_or_else(|| Error::Input {
            path: PathBuf::from(file),
            message: "Spark read this file, which is not one the driver read as the input; \
                      nothing was written. Make sure the inbox is the same file system for \
                      Wharf and the server, then rerun"
                .to_owned(),
        })
}

/// The part as Spark read it must be the part as the driver read it: the same stored size
/// and time (an empty part has no row to tell them), and as many lines.
fn check_part(part: &PartFile, seen: &Seen) -> Result<()> {
    let stamp = part.stamp;
    if !seen.stamps.is_empty() && seen.stamps != BTreeSet::from([stamp]) {
        let spark: Vec<String> = seen.stamps.iter().map(FileStamp::to_string).collect();
        return Err(Error::Input {
            path: part.path.clone(),
            message: format!(
                "the driver read {stamp} but Spark read {}: the file changed while it was \
                 read, or the server sees another file at this path; make sure the inbox is \
                 the same file system for both, then rerun",
                spark.join(" and ")
            ),
        });
    }
    let counted: u64 = seen.blocks.iter().map(|b| b.1).sum();
    if counted != part.lines {
        return Err(Error::Input {
            path: part.path.clone(),
            message: format!(
                "the driver read {} lines but Spark read {counted}: the file changed while it \
                 was read, or the server sees another file at this path; make sure the inbox \
                 is the same file system for both, then rerun",
                part.lines
            ),
        });
    }
    Ok(())
}

/// The query of [`LINES`], over [`RAW`], [`BLOCKS`] and the parts' `files` (each URI as
/// Spark names it, and its part's index): a row per part, not per line or block.
fn numbered_query(files: &[(String, usize)], drop_rejected: bool) -> String {
    let files: Vec<String> = files
        .iter()
        .map(|(file, part)| format!("({}, {part}L)", super::events::literal(file)))
        .collect();
    let files = if files.is_empty() {
        "(VALUES ('', -1L))".to_owned()
    } else {
        format!("(VALUES {})", files.join(", "))
    };
    // A fixed message: an error keeps only its condition, and this one quotes no row.
    let numbered = format!(
        "SELECT /*+ BROADCAST(p), BROADCAST(o) */ \
         CASE WHEN r.mid - o.first_mid BETWEEN 0 AND o.n - 1 \
         THEN o.lines_before + r.mid - o.first_mid + 1 \
         ELSE raise_error('Spark split the input differently between two reads') END AS line, \
         o.part_first, r.value \
         FROM {RAW} r JOIN {files} AS p(file, part) ON r.file = p.file \
         JOIN {BLOCKS} o ON p.part = o.part AND r.block = o.blk"
    );
    // §1: the byte-order mark only at the very start of each part, then one trailing `\r`.
    let cleaned = format!(
        "SELECT line, CASE WHEN endswith(v, '\\r') THEN substr(v, 1, length(v) - 1) ELSE v END AS value \
         FROM (SELECT line, CASE WHEN line = part_first AND startswith(value, '\\uFEFF') THEN substr(value, 2) ELSE value END AS v \
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

/// Registers [`BLOCKS`] over `blocks`.
fn register_blocks(session: &Session, blocks: &[Block]) -> Result<()> {
    let names: Vec<String> = ["part", "blk", "lines_before", "n", "first_mid", "part_first"]
        .iter()
        .map(|&n| n.to_owned())
        .collect();
    let long = |n: u64| i64::try_from(n).map(Value::Long).map_err(Error::internal);
    let rows = blocks
        .iter()
        .map(|b| {
            let values = vec![
                long(b.part as u64)?,
                Value::Long(b.start),
                long(b.before)?,
                long(b.lines)?,
                Value::Long(b.first_mid),
                long(b.part_first)?,
            ];
            Ok(Row::new(names.clone(), values))
        })
        .collect::<Result<Vec<Row>>>()?;
    let fields = names
        .iter()
        .map(|name| StructField {
            name: name.clone(),
            data_type: DataType::Long,
            nullable: false,
            metadata: Default::default(),
        })
        .collect();
    let failed = |e| session.error("cannot send the input's blocks", &e);
    let frame = session
        .spark()
        .create_dataframe(rows, DataType::Struct { fields })
        .map_err(failed)?;
    frame.create_or_replace_temp_view(BLOCKS).map_err(failed)
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


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_found_from_the_uri_spark_names_it_by() {
        let names = ["/in/set/part[1].jsonl", "/in/set/a b%20+.jsonl", "/in/é.gz"];
        let paths: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
        let index: BTreeMap<&Path, usize> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_path(), i))
            .collect();
        // As Hadoop's Path.toUri spells them: percent-encoded, `+` left as it is.
        let spelt = [
            "file:/in/set/part%5B1%5D.jsonl",
            "file:/in/set/a%20b%2520+.jsonl",
            "file:///in/%C3%A9.gz",
        ];
        for (i, uri) in spelt.iter().enumerate() {
            assert_eq!(part_of(uri, &index).unwrap(), i, "{uri}");
        }
        for other in ["file:/in/set/part1.jsonl", "hdfs:/in/é.gz", "not a uri"] {
            let error = part_of(other, &index).unwrap_err();
            assert!(matches!(error, Error::Input { .. }), "{other}: {error}");
        }
    }
}
