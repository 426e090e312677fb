//! The rows the driver's pass accepted, typed as Wharf's own §1 parsed them, written as
//! one Parquet file where the executors read it: Spark starts from columns, not text, so
//! it never scans, parses or numbers the input, and never computes an instant in SQL.
//!
//! - [`Columns`]: the file's columns. `line` (INT64: the line's number, on through a
//!   set's parts, §11.4); `fp` (INT64: the fingerprint of the record's typed values, as
//!   the local engine computes it for §2); declared field `i` as `f{i}` (`int` INT64, `string` UTF8), a
//!   `timestamp` as its exact instant, `s{i}` (INT64 seconds since the epoch) and `n{i}`
//!   (INT64 nanoseconds). Named by position, so no declared name needs quoting. Last,
//!   `seen` (BOOLEAN): an earlier line had the line's event, as far as the driver's
//!   [`RecentEvents`](super::recent::RecentEvents) remember.
//! - [`ChunkRows`]: one chunk's accepted records as an Arrow batch, built on the worker
//!   that classified them.
//! - [`Handoff`]: the file, written batch by batch as the pass delivers them, in order.
//!
//! Where it lives, a place the executors already read for the landing: beside a local
//! publish root (hive or a Delta path) in `.<name>.wharf-handoff/<id>/`, on the file
//! system the executors share with Wharf for the stage; under a table on S3 in
//! `_wharf-staging/handoff-<id>/`, uploaded once the pass ends. Removed when the landing
//! is done with it; one a killed process left is removed by a later landing a day on.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, Float64Builder, Int64Builder};
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, StringArray};
use delta_kernel::arrow::datatypes::{DataType, Field as ArrowField, Schema as ArrowSchema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::config::Config;
use crate::contract::{FieldType, Record, Schema, row};
use super::key_sketch::KeySketch;
use crate::plan::batch::{event_id_hash, fingerprint, key_hash};
use crate::error::{Error, Result};
use crate::store::objects::{Objects, TABLE_STAGING};

/// Rows per row group: Spark splits the file at row groups, so a cluster's tasks share
/// the read; small enough that the writer's buffer stays a few MB.
const ROW_GROUP_ROWS: usize = 128 * 1024;

/// How long a handoff a killed process left is kept: no landing runs for a day.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The file's name in its folder.
const FILE: &str = "rows.parquet";

/// How a handoff's folder under a table's staging folder starts.
const HANDOFF: &str = "handoff-";

/// The handoff file's columns for a schema.
#[derive(Clone)]
pub struct Columns {
    types: Vec<FieldType>,
    /// The declared field that is the event id.
    event_id: usize,
    /// The declared field that is the key.
    key: usize,
    /// A chunk's columns, as a worker builds them: all but `seen`, which the sink adds.
    chunk: Arc<ArrowSchema>,
    /// The file's.
    arrow: Arc<ArrowSchema>,
}

impl Columns {
    pub fn of(schema: &Schema) -> Columns {
        let long = |name: String| ArrowField::new(name, DataType::Int64, true);
        let mut fields = vec![
            ArrowField::new("line", DataType::Int64, false),
            ArrowField::new("fp", DataType::Int64, false),
        ];
        for (i, field) in schema.fields.iter().enumerate() {
            match field.ty {
                FieldType::Int => fields.push(long(format!("f{i}"))),
                FieldType::String => fields.push(ArrowField::new(format!("f{i}"), DataType::Utf8, true)),
                FieldType::Float => {
                    fields.push(ArrowField::new(format!("f{i}"), DataType::Float64, true))
                }
                FieldType::Bool => {
                    fields.push(ArrowField::new(format!("f{i}"), DataType::Boolean, true))
                }
                FieldType::Timestamp => {
                    let (s, n) = instant_columns(i);
                    fields.push(long(s));
                    fields.push(long(n));
                }
            }
        }
        let chunk = ArrowSchema::new(fields.clone());
        fields.push(ArrowField::new(SEEN, DataType::Boolean, false));
        Columns {
            types: schema.fields.iter().map(|f| f.ty).collect(),
            event_id: schema.event_id,
            key: schema.key,
            chunk: Arc::new(chunk),
            arrow: Arc::new(ArrowSchema::new(fields)),
        }
    }

    /// An empty batch of this schema's rows.
    pub fn rows(&self) -> ChunkRows {
        ChunkRows {
            line: Int64Builder::new(),
            fingerprint: Int64Builder::new(),
            encoded: Vec::new(),
            event_id: self.event_id,
            events: Vec::new(),
            key: self.key,
            keys: KeySketch::default(),
            fields: self
                .types
                .iter()
                .map(|ty| match ty {
                    FieldType::Int => Builder::Int(Int64Builder::new()),
                    FieldType::String => Builder::Str(BinaryBuilder::new()),
                    FieldType::Timestamp => Builder::Ts(Int64Builder::new(), Int64Builder::new()),
                    FieldType::Float => Builder::Float(Float64Builder::new()),
                    FieldType::Bool => Builder::Bool(BooleanBuilder::new()),
                })
                .collect(),
            schema: Arc::clone(&self.chunk),
        }
    }
}

/// The column that marks a line whose event an earlier line had.
pub const SEEN: &str = "seen";

/// The columns of timestamp field `i`'s instant: seconds, nanoseconds.
pub fn instant_columns(i: usize) -> (String, String) {
    (format!("s{i}"), format!("n{i}"))
}

enum Builder {
    Int(Int64Builder),
    /// Bytes, checked as UTF-8 once for the whole chunk when it is finished: §1 wrote
    /// them from checked UTF-8, and one check of the chunk costs less than one a value.
    Str(BinaryBuilder),
    Ts(Int64Builder, Int64Builder),
    Float(Float64Builder),
    Bool(BooleanBuilder),
}

/// Accepted records of one chunk, in line order.
pub struct ChunkRows {
    line: Int64Builder,
    fingerprint: Int64Builder,
    /// One record encoded, to fingerprint it.
    encoded: Vec<u8>,
    event_id: usize,
    /// Each row's event and fingerprint ([`ChunkBatch::events`]).
    events: Vec<(u128, u64)>,
    key: usize,
    /// The rows' keys ([`ChunkBatch::keys`]).
    keys: KeySketch,
    fields: Vec<Builder>,
    schema: Arc<ArrowSchema>,
}

impl ChunkRows {
    /// Appends line `line`'s record. Its values are the schema's types, as §1 typed
    /// them (an absent optional is null).
    pub fn push(&mut self, line: u64, record: &Record) {
        let mut encoded = std::mem::take(&mut self.encoded);
        encoded.clear();
        row::push_record(&mut encoded, record);
        self.push_encoded(line, &encoded);
        self.encoded = encoded;
    }

    /// Appends line `line`'s record in its [`row`] encoding (as the classifier's fast
    /// path writes it).
    pub fn push_encoded(&mut self, line: u64, record: &[u8]) {
        self.line.append_value(line as i64);
        let fingerprint = fingerprint(record);
        // The bits as they are: Spark compares them, never orders them.
        self.fingerprint.append_value(fingerprint as i64);
        let mut at = 0;
        for (i, builder) in self.fields.iter_mut().enumerate() {
            let field = &record[at..at + row::field_len(&record[at..])];
            at += field.len();
            if i == self.event_id {
                self.events.push((event_id_hash(field), fingerprint));
            }
            if i == self.key {
                self.keys.add(key_hash(field));
            }
            match builder {
                Builder::Int(b) => b.append_option(row::int(field)),
                Builder::Str(b) => b.append_option(row::str_bytes(field)),
                Builder::Ts(s, n) => {
                    let instant = row::instant(field);
                    s.append_option(instant.map(|t| t.secs()));
                    n.append_option(instant.map(|t| i64::from(t.nanos())));
                }
                Builder::Float(b) => b.append_option(row::float(field)),
                Builder::Bool(b) => b.append_option(row::boolean(field)),
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.line.values_slice().is_empty()
    }

    pub fn finish(mut self) -> Result<ChunkBatch> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.line.finish()),
            Arc::new(self.fingerprint.finish()),
        ];
        for builder in &mut self.fields {
            match builder {
                Builder::Int(b) => columns.push(Arc::new(b.finish())),
                Builder::Str(b) => {
                    let text = StringArray::try_from_binary(b.finish()).map_err(Error::internal)?;
                    columns.push(Arc::new(text));
                }
                Builder::Ts(s, n) => {
                    columns.push(Arc::new(s.finish()));
                    columns.push(Arc::new(n.finish()));
                }
                Builder::Float(b) => columns.push(Arc::new(b.finish())),
                Builder::Bool(b) => columns.push(Arc::new(b.finish())),
            }
        }
        let rows = RecordBatch::try_new(self.schema, columns).map_err(Error::internal)?;
        Ok(ChunkBatch {
            rows,
            events: self.events,
            keys: self.keys,
        })
    }
}

/// One chunk's rows for the handoff, each row's event (its id's hash) and fingerprint
/// for the driver's [`Ledger`](super::ledger::Ledger), and a sketch of its keys.
pub struct ChunkBatch {
    pub rows: RecordBatch,
    pub events: Vec<(u128, u64)>,
    pub keys: KeySketch,
}

/// Where the handoff is stored.
enum Place {
    /// A folder of its own on a local file system the executors share.
    Folder(PathBuf),
    /// Written locally at `local`, then uploaded to `relative` under a table on S3.
    Table {
        objects: Box<Objects>,
        local: PathBuf,
        relative: String,
    },
}

impl Place {
    /// Snappy where the file crosses the network; none on a local disk, where it cost the
    /// driver more time than it saved Spark (docs/performance.md).
    fn compression(&self) -> Compression {
        match self {
            Place::Folder(_) => Compression::UNCOMPRESSED,
            Place::Table { .. } => Compression::SNAPPY,
        }
    }
}

/// One census's handoff file: being written, then read by Spark, then removed.
pub struct Handoff {
    columns: Columns,
    place: Place,
    writer: Option<ArrowWriter<File>>,
    /// Where the writer writes.
    path: PathBuf,
    /// The file as Spark reads it.
    uri: String,
    rows: u64,
}

impl Handoff {
    /// A new, empty handoff of `config`'s schema for its publish root.
    pub fn create(config: &Config) -> Result<Handoff> {
        let columns = Columns::of(&config.schema);
        let id = unique_id();
        let (place, path, uri) = match config.lake.table_url() {
            Some(url) if !url.starts_with("file:") => {
                let objects = Box::new(Objects::open(url)?);
                remove_stale_objects(&objects);
                let relative = format!("{TABLE_STAGING}/{HANDOFF}{id}/{FILE}");
                let scratch = crate::store::state_store::scratch(config);
                crate::store::atomic::create_private_dir_all(&scratch)?;
                let local = scratch.join(format!(".spark-handoff-{id}.parquet"));
                let uri = super::uri::table_read_uri(config, &relative)?;
                let path = local.clone();
                (
                    Place::Table {
                        objects,
                        local,
                        relative,
                    },
                    path,
                    uri,
                )
            }
            _ => {
                let root = handoff_root(config);
                remove_stale_folders(&root);
                let folder = root.join(&id);
                std::fs::create_dir_all(&folder).map_err(|e| {
                    Error::io(
                        &folder,
                        "create the Spark engine's handoff folder",
                        "check that the publish root's parent is writable",
                        e,
                    )
                })?;
                let path = folder.join(FILE);
                let uri = super::uri::read_uri(&path, "the handoff file")?;
                (Place::Folder(folder), path, uri)
            }
        };
        let file = File::create(&path).map_err(|e| {
            Error::io(&path, "create the Spark engine's handoff file", "check free space", e)
        })?;
        let properties = WriterProperties::builder()
            .set_compression(place.compression())
            .set_statistics_enabled(EnabledStatistics::None)
            .set_dictionary_enabled(false)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .build();
        let writer = ArrowWriter::try_new(file, Arc::clone(&columns.arrow), Some(properties))
            .map_err(|e| write_error(&path, e))?;
        let handoff = Handoff {
            columns,
            place,
            writer: Some(writer),
            path,
            uri,
            rows: 0,
        };
        Ok(handoff)
    }

    /// The file's columns, to build batches of it.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }

    /// Appends a chunk's rows, each marked whether an earlier line had its event.
    pub fn write(&mut self, rows: &RecordBatch, seen: Vec<bool>) -> Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::internal("rows handed over after the handoff was closed"))?;
        let mut columns = rows.columns().to_vec();
        columns.push(Arc::new(BooleanArray::from(seen)));
        let rows = RecordBatch::try_new(Arc::clone(&self.columns.arrow), columns)
            .map_err(Error::internal)?;
        writer.write(&rows).map_err(|e| write_error(&self.path, e))?;
        self.rows += rows.num_rows() as u64;
        Ok(())
    }

    /// Closes the file and puts it where Spark reads it; its rows.
    pub fn close(&mut self) -> Result<u64> {
        if let Some(writer) = self.writer.take() {
            writer.close().map_err(|e| write_error(&self.path, e))?;
            if let Place::Table {
                objects,
                local,
                relative,
            } = &self.place
            {
                objects.put_file(local, relative)?;
                let _ = std::fs::remove_file(local);
            }
        }
        Ok(self.rows)
    }

    /// The file as Spark reads it: an explicit, glob-escaped URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        drop(self.writer.take());
        match &self.place {
            Place::Folder(folder) => {
                let _ = std::fs::remove_dir_all(folder);
            }
            Place::Table {
                objects,
                local,
                relative,
            } => {
                let _ = std::fs::remove_file(local);
                let _ = objects.delete(relative);
            }
        }
    }
}

/// `<parent of publish_root>/.<publish_root name>.wharf-handoff`: beside the root, never
/// inside it, hidden by name, as the hive staging folder is.
pub fn handoff_root(config: &Config) -> PathBuf {
    crate::store::state::beside_publish_root(config, "wharf-handoff")
}

/// A name no other census takes: the process and the time.
fn unique_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos}-{}", std::process::id())
}

/// Removes the folders under `root` a killed process left a day ago or more. Best effort:
/// a folder that cannot be removed is left for the next landing.
fn remove_stale_folders(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// [`remove_stale_folders`] for a table on S3: the handoffs a day old. The staging
/// folder's other entries are landings' (`land::delta`'s to clean).
fn remove_stale_objects(objects: &Objects) {
    let handoffs = format!("{TABLE_STAGING}/{HANDOFF}");
    if let Ok(listed) = objects.list_older(TABLE_STAGING, STALE_AFTER) {
        for relative in listed.iter().filter(|r| r.starts_with(&handoffs)) {
            let _ = objects.delete(relative);
        }
    }
}

fn write_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::io(
        path,
        "write the Spark engine's handoff file",
        "check free space and the disk, then rerun",
        std::io::Error::other(e),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{LineBytes, Outcome, classify};

    #[test]
    fn a_chunk_sketches_its_keys_not_its_lines() {
        let schema = crate::config::fixtures::orders().schema;
        let mut rows = Columns::of(&schema).rows();
        // 1,000 keys, 12 events each: about 1,000 keys, whatever the lines.
        let mut line = 0;
        for event in 0..12 {
            for key in 0..1_000 {
                line += 1;
                let text = format!(
                    r#"{{"event_id":"e{event}-{key}","order_id":{key},"status":"S","updated_at":"2024-03-01T10:00:{:02}Z"}}"#,
                    event
                );
                let Outcome::Accepted(record) = classify(LineBytes::Kept(text.as_bytes()), &schema)
                else {
                    panic!("line {line} is not accepted");
                };
                rows.push(line, &record);
            }
        }
        let batch = rows.finish().unwrap();
        assert_eq!(batch.rows.num_rows(), 12_000);
        let keys = batch.keys.estimate();
        assert!((keys - 1_000.0).abs() < 50.0, "1,000 keys estimated as {keys:.0}");
    }
}
