//! EFFECTS. The publish root as a Delta table (CONTRACT.md §12), on a local path or S3.
//!
//! delta-kernel-rs writes the protocol (the commit's `add`/`remove`/`commitInfo`, the
//! table's creation, its checkpoints); its default engine reads and commits through
//! `object_store`, whose commit is a put-if-absent (`If-None-Match: *` on S3), so a writer
//! that committed the version first makes this landing [`Error::TableBusy`]. Wharf only
//! uploads the data files the engine staged locally (multipart above
//! [`PART_BYTES`](crate::store::objects::PART_BYTES), so
//! memory stays bounded) under names no version references yet, and says which to add and
//! which to remove.
//!
//! [`Table`] is one opened table; [`Table::files`] what its current version holds;
//! [`Table::commit`] one landing's commit.
//!
//! This folder is the Delta half of [`crate::land::root::PublishRoot`]: a landing's
//! publish ([`commit`]), a version's reads ([`read`]), the pending record and the trash
//! ([`pending`], [`trash`]), [`restore`], the table's memory of the landings ([`memory`],
//! [`identity`]), its features ([`features`], [`protocol`], [`legacy`],
//! [`kernel_refusal`]), its schema's fit to the config ([`schema_fit`]), and what status
//! and the console show ([`describe`], [`columns`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use delta_kernel::arrow::array::{
    Array, ArrayRef, Int64Array, MapBuilder, MapFieldNames, RecordBatch, StringArray,
    StringBuilder, StructArray,
};
use delta_kernel::arrow::datatypes::{DataType as ArrowType, Field as ArrowField, Schema};
use delta_kernel::committer::FileSystemCommitter;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::schema::{DataType, StructField, StructType};
use delta_kernel::transaction::create_table::create_table;
use delta_kernel::transaction::data_layout::DataLayout;
use delta_kernel::transaction::{CommitResult, UpdateTableOperation};
use delta_kernel::{Engine, EngineData, FilteredEngineData, Snapshot, SnapshotRef};
use delta_kernel_default_engine::DefaultEngineBuilder;
use delta_kernel_default_engine::executor::tokio::TokioMultiThreadExecutor;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::config::Config;
use crate::contract::{Date, FieldType};
use crate::error::{Error, Result};
use crate::store::objects::{HINT, Objects, scrub};

pub mod columns;
pub mod commit;
pub mod describe;
pub mod features;
pub mod folder;
pub mod identity;
pub mod kernel_refusal;
pub mod legacy;
pub mod memory;
pub mod pending;
pub mod protocol;
pub mod read;
pub mod restore;
pub mod schema_fit;
pub mod trash;
pub mod vacuumed;

/// The partition column, as in the hive layout.
const PARTITION: &str = "event_date";

/// A scan file as listed: path, partition values, size, rows, rows its deletion vector
/// removes.
type Listed = (
    String,
    HashMap<String, String>,
    u64,
    Option<u64>,
    Option<u64>,
);

/// One data file of the table's current version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableFile {
    /// Relative to the table root: `event_date=D/part-<generation>-<n>.parquet`.
    pub path: String,
    pub date: Date,
    pub rows: u64,
    pub size: u64,
    /// The rows its deletion vector removes, when another writer gave it one (§12.8).
    pub deleted: Option<u64>,
}

impl TableFile {
    /// The rows a reader sees: the file's, less those its deletion vector removes.
    pub fn visible_rows(&self) -> u64 {
        self.rows.saturating_sub(self.deleted.unwrap_or(0))
    }
}

/// A data file staged locally, to add under `path`.
pub struct NewFile<'a> {
    pub local: &'a Path,
    pub path: String,
    pub date: Date,
    pub rows: u64,
}

/// A file a commit adds: uploaded by this landing, or a removed generation's (restore).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddFile {
    pub path: String,
    pub date: Date,
    pub rows: u64,
    pub size: u64,
}

/// What a commit says of the landing, for `commitInfo`.
pub struct CommitNote<'a> {
    pub product: &'a str,
    pub input_name: &'a str,
    pub input_sha256: &'a str,
    /// The landing's (or restore's) run id.
    pub run_id: &'a str,
    pub metrics: Vec<(&'static str, u64)>,
    /// A landing's identity beyond name and hash, and its `txn` (§12.2); `None` for a
    /// restore, which lands no input.
    pub landing: Option<identity::Mark<'a>>,
}

/// An opened Delta table: its URL, its store and the kernel's engine over it.
pub struct Table {
    /// The table's objects through Wharf's own store and runtime.
    objects: Objects,
    /// The kernel's engine, over a second store (a pool of its own).
    engine: Box<dyn Engine>,
}

impl Table {
    /// Opens the table at `url` (it need not exist yet). S3's endpoint, region and
    /// credentials come from the environment (`AWS_*`), never the config.
    pub fn open(url: &str) -> Result<Table> {
        let fail = |detail: String| Error::Table {
            url: url.to_owned(),
            action: "open the table",
            detail: scrub(&detail),
            hint: HINT.to_owned(),
        };
        let objects = Objects::open(url)?;
        // Two stores, two connection pools: a connection opened on one runtime and reused
        // from the other stalls until its timeout (measured: 30 s per landing).
        let store = crate::store::objects::connect(&objects.root).map_err(fail)?;
        // The multi-threaded executor: writing a checkpoint pulls the log replay from
        // inside the write task, which deadlocks the default one-thread executor (the
        // kernel's `Snapshot::checkpoint` asks for it; met at the tenth commit).
        let executor = TokioMultiThreadExecutor::new_owned_runtime(Some(2), None)
            .map_err(|e| fail(format!("cannot start the table's I/O runtime: {e}")))?;
        let engine = DefaultEngineBuilder::new(store)
            .with_task_executor(Arc::new(executor))
            .build();
        Ok(Table {
            objects,
            engine: Box::new(engine),
        })
    }

    pub fn url(&self) -> &str {
        &self.objects.url
    }

    fn error(&self, action: &'static str, detail: impl std::fmt::Display) -> Error {
        self.objects.error(action, detail)
    }

    /// A table this product's config did not make: refused as it is, never altered.
    fn not_ours(&self, detail: String) -> Error {
        Error::Table {
            url: self.objects.url.clone(),
            action: "use the table",
            detail: scrub(&detail),
            hint: NOT_OURS.to_owned(),
        }
    }

    /// Why the version's file `path` (with `partitions`) is not one Wharf can
    /// count, the table being partitioned by `event_date` alone: a null date (the
    /// kernel's partition values omit a null), a value that is no date, or else no row
    /// count.
    fn unlandable_file(&self, path: &str, partitions: &HashMap<String, String>) -> Error {
        let what = match partitions.get(PARTITION) {
            Some(value) if Date::parse(value).is_none() => {
                format!("has {PARTITION} {value:?}, which is not a date")
            }
            Some(_) => {
                return self.not_ours(format!(
                    "file {path} has no row count (numRecords) in the table's log"
                ));
            }
            None => {
                format!("has a null {PARTITION} (a {PARTITION}=__HIVE_DEFAULT_PARTITION__ file)")
            }
        };
        Error::Table {
            url: self.objects.url.clone(),
            action: "use the table",
            detail: scrub(&format!("file {path} {what}")),
            hint: NULL_DATE.to_owned(),
        }
    }

    /// The object-store path of `relative` under the table root.
    fn store_path(&self, relative: &str) -> Result<StorePath> {
        self.objects.path(relative)
    }

    /// `relative` under a local table's root as a path; `None` on S3.
    fn local_path(&self, relative: &str) -> Option<std::path::PathBuf> {
        let url = self.objects.root.join(relative).ok()?;
        (url.scheme() == "file").then(|| url.to_file_path().ok())?
    }

    /// The current version, `None` when the table has no commit yet. A missing bucket, a
    /// refused credential or an unreachable endpoint is an error, never "no table".
    pub fn snapshot(&self) -> Result<Option<SnapshotRef>> {
        if !self.has_log()? {
            return Ok(None);
        }
        Snapshot::builder_for(self.objects.url.as_str())
            .build(self.engine.as_ref())
            .map(Some)
            .map_err(|e| self.log_error(e))
    }

    /// Whether the table has a log. A checkpoint's pointer or the first commit answers
    /// with one request; only a log with neither is listed. A listing of a local store
    /// stats every file it reads, and a long log has thousands.
    fn has_log(&self) -> Result<bool> {
        for first in [
            "_delta_log/_last_checkpoint",
            "_delta_log/00000000000000000000.json",
        ] {
            let path = self.store_path(first)?;
            match self
                .objects
                .runtime
                .block_on(self.objects.store.head(&path))
            {
                Ok(_) => return Ok(true),
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.error("read the table's log", e)),
            }
        }
        let log = self.store_path("_delta_log/")?;
        let listed = self.objects.runtime.block_on(async {
            use futures::TryStreamExt;
            self.objects.store.list(Some(&log)).try_next().await
        });
        listed
            .map(|first| first.is_some())
            .map_err(|e| self.error("list the table's log", e))
    }

    /// Version `version`, for reading what a past landing replaced and published.
    pub fn snapshot_at(&self, version: u64) -> Result<SnapshotRef> {
        Snapshot::builder_for(self.objects.url.as_str())
            .at_version(version)
            .build(self.engine.as_ref())
            .map_err(|e| self.log_error(e))
    }

    /// A failed read of the log: the kernel's refusal of the protocol names it (§12.8).
    fn log_error(&self, e: delta_kernel::KernelError) -> Error {
        kernel_refusal::kernel_error(&self.objects.url, e, |e| {
            self.error("read the table's log", e)
        })
    }

    /// The version's data files, by path. Refuses a table not partitioned by
    /// `event_date` alone or whose schema is not the config's, files or none: nothing is
    /// written to it.
    pub fn files(&self, config: &Config, snapshot: &SnapshotRef) -> Result<Vec<TableFile>> {
        protocol::check(&self.objects.url, snapshot)?; // §12.8, before any other check
        let partitions = snapshot
            .table_configuration()
            .logical_partition_columns()
            .to_vec();
        if partitions != [PARTITION] {
            return Err(self.not_ours(format!(
                "it is partitioned by {partitions:?}, and this product's tables by \
                 [\"{PARTITION}\"] alone"
            )));
        }
        let wanted = table_schema(config)?;
        let history = match crate::land::columns::recorded(config)? {
            Some(history) => history,
            None => crate::land::delta::columns::from_table(config, self, snapshot)?,
        };
        let differences =
            schema_fit::differences(snapshot.schema().as_ref(), &wanted, config, &history);
        if !differences.is_empty() {
            return Err(Error::SchemaDiffers {
                url: self.objects.url.clone(),
                differences: scrub(&differences.join("; ")),
                hint: schema_fit::advice(&differences),
                schemas: scrub(&format!(
                    "the table's schema: {}; the config's: {wanted}",
                    snapshot.schema()
                )),
            });
        }
        let scan = snapshot
            .clone()
            .scan_builder()
            .build()
            .map_err(|e| self.error("list the table's files", e))?;
        let mut found: Vec<Listed> = Vec::new();
        let metadata = scan
            .scan_metadata(self.engine.as_ref())
            .map_err(|e| self.error("list the table's files", e))?;
        for batch in metadata {
            let batch = batch.map_err(|e| self.error("list the table's files", e))?;
            found = batch
                .visit_scan_files(found, |found, file| {
                    found.push((
                        file.path,
                        file.partition_values,
                        file.size.max(0) as u64,
                        file.stats.map(|s| s.num_records),
                        file.dv_info
                            .has_vector()
                            .then(|| file.dv_info.cardinality().ok().flatten().unwrap_or(0)),
                    ))
                })
                .map_err(|e| self.error("list the table's files", e))?;
        }
        let mut files = Vec::with_capacity(found.len());
        for (path, partitions, size, rows, deleted) in found {
            let date = partitions.get(PARTITION).and_then(|d| Date::parse(d));
            let (Some(date), 1, Some(rows)) = (date, partitions.len(), rows) else {
                return Err(self.unlandable_file(&path, &partitions));
            };
            files.push(TableFile {
                path,
                date,
                rows,
                size,
                deleted,
            });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// Uploads `file` to its table path, invisible until a commit adds it.
    pub fn upload(&self, file: &NewFile) -> Result<u64> {
        if let Some(size) = self.link_into_place(file)? {
            return Ok(size);
        }
        let target = self.store_path(&file.path)?;
        let put = crate::store::objects::put_file(&*self.objects.store, &target, file.local);
        self.objects
            .runtime
            .block_on(put)
            .map_err(|e| self.error("upload a data file", e))
    }

    /// [`Table::upload`] by a hard link, for a local table on the staged file's
    /// filesystem: the file is written and fsynced already, and a copy through the store
    /// would write every byte again. `None` when it cannot be linked: the caller copies.
    fn link_into_place(&self, file: &NewFile) -> Result<Option<u64>> {
        let target = match self.objects.root.join(&file.path) {
            Ok(url) if url.scheme() == "file" => url.to_file_path().ok(),
            _ => None,
        };
        let Some((target, folder)) = target.and_then(|t| Some((t.clone(), t.parent()?.to_owned())))
        else {
            return Ok(None);
        };
        crate::store::atomic::create_dir_all(&folder)?;
        if std::fs::hard_link(file.local, &target).is_err() {
            return Ok(None); // another filesystem, or a leftover of this name: copied over
        }
        crate::store::atomic::sync_dir(&folder)?;
        let size = std::fs::metadata(&target)
            .map_err(|e| self.error("upload a data file", e))?
            .len();
        Ok(Some(size))
    }

    /// Deletes data files no version references (a crashed or conflicted landing's).
    pub fn delete(&self, paths: &[String]) -> Result<()> {
        for path in paths {
            let target = self.store_path(path)?;
            let deleted = self
                .objects
                .runtime
                .block_on(self.objects.store.delete(&target));
            match deleted {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.error("delete an unreferenced data file", e)),
            }
        }
        Ok(())
    }

    /// The bytes of the data file `path` (relative to the root), whole: a merge reads
    /// every row of the dates it meets anyway.
    pub fn fetch(&self, path: &str) -> Result<bytes::Bytes> {
        let fetched = self.fetch_if_stored(path)?;
        fetched.ok_or_else(|| self.error("read a data file", format!("{path} is not stored")))
    }

    /// `len` bytes of the data file `path` from `start`: a footer or a bloom filter, read
    /// without the rest of the file (merge mode's index, CONTRACT.md §10.5).
    pub fn fetch_range(&self, path: &str, start: u64, len: u64) -> Result<bytes::Bytes> {
        let target = self.store_path(path)?;
        let got = self
            .objects
            .runtime
            .block_on(self.objects.store.get_range(&target, start..start + len));
        got.map_err(|e| self.error("read a data file", e))
    }

    /// [`Table::fetch`], `None` when the file is no longer stored: a removed file is
    /// kept until Wharf's vacuum lets it go.
    pub fn fetch_if_stored(&self, path: &str) -> Result<Option<bytes::Bytes>> {
        let target = self.store_path(path)?;
        let fetched = self.objects.runtime.block_on(async {
            match self.objects.store.get(&target).await {
                Ok(got) => got.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        fetched.map_err(|e| self.error("read a data file", e))
    }

    /// One commit: removes `remove` (paths of the current version), adds `add` (uploaded),
    /// creating the table on its first landing. Returns the committed version; another
    /// writer's commit of that version first is [`Error::TableBusy`].
    pub fn commit(
        &self,
        config: &Config,
        snapshot: Option<&SnapshotRef>,
        remove: &BTreeSet<String>,
        add: &[AddFile],
        note: &CommitNote,
    ) -> Result<u64> {
        let engine = self.engine.as_ref();
        let engine_info = format!("wharf/{}", env!("CARGO_PKG_VERSION"));
        let mut parameters = vec![
            ("product", Some(note.product.to_owned())),
            ("inputName", Some(note.input_name.to_owned())),
            ("inputSha256", Some(note.input_sha256.to_owned())),
            ("toolVersion", Some(env!("CARGO_PKG_VERSION").to_owned())),
            ("runId", Some(note.run_id.to_owned())),
        ];
        parameters.extend(note.landing.iter().flat_map(|m| m.parameters()));
        let app_txn = note
            .landing
            .map(|m| (note.product.to_owned(), m.sequence as i64));
        let metrics: Vec<(&str, Option<String>)> = note
            .metrics
            .iter()
            .map(|(k, v)| (*k, Some(v.to_string())))
            .collect();
        let adds = add_files(add, self.now_ms())?;
        let fail = |e: delta_kernel::KernelError| {
            kernel_refusal::kernel_error(&self.objects.url, e, |e| {
                self.error("commit the landing", e)
            })
        };
        let result = match snapshot {
            None => {
                // The kernel creates a local table only in an existing folder, and a first
                // landing with no data file (publish_empty) uploaded nothing that made it.
                if let Some(folder) = self.local_path("") {
                    crate::store::atomic::create_dir_all(&folder)?;
                }
                let mut create = create_table(
                    self.objects.url.as_str(),
                    Arc::new(table_schema(config)?),
                    engine_info,
                    true,
                )
                .with_data_layout(DataLayout::partitioned([PARTITION]))
                .with_operation_parameters(parameters);
                if let Some((app, version)) = app_txn {
                    create = create.with_transaction_id(app, version);
                }
                let built = create
                    .with_operation_metrics(metrics)
                    .build(engine, Box::new(FileSystemCommitter::new()));
                let mut txn = match built {
                    Ok(txn) => txn,
                    // Another writer created the table since this landing found none.
                    Err(_) if self.snapshot().is_ok_and(|s| s.is_some()) => {
                        return Err(Error::TableBusy {
                            url: self.objects.url.clone(),
                            version: 0,
                        });
                    }
                    Err(e) => return Err(fail(e)),
                };
                txn.add_files(adds);
                match txn.commit(engine).map_err(fail)? {
                    CommitResult::Committed(done) => Ok(done.commit_version()),
                    CommitResult::Conflicted(c) => Err(c.conflict_version()),
                    CommitResult::Retryable(_) => Err(0),
                }
            }
            Some(snapshot) => {
                // A legacy writer version through the kernel's view of it (§12.8).
                let writable = legacy::writable(snapshot).map_err(fail)?;
                let mut builder =
                    writable.update_table(UpdateTableOperation::Write, engine_info, true);
                // §1.1: the columns this landing adds, in the same commit as its files.
                for column in new_columns(snapshot.schema().as_ref(), config)? {
                    builder = builder.add_column(column);
                }
                builder = builder.with_operation_parameters(parameters);
                if let Some((app, version)) = app_txn {
                    builder = builder.with_transaction_id(app, version);
                }
                let mut txn = builder
                    .with_operation_metrics(metrics)
                    .build(engine, Box::new(FileSystemCommitter::new()))
                    .map_err(fail)?;
                for removal in self.removals(snapshot, remove)? {
                    txn.remove_files(removal);
                }
                txn.add_files(adds);
                match txn.commit(engine).map_err(fail)? {
                    CommitResult::Committed(done) => Ok(done.commit_version()),
                    CommitResult::Conflicted(c) => Err(c.conflict_version()),
                    CommitResult::Retryable(_) => Err(snapshot.version() + 1),
                }
            }
        };
        result.map_err(|version| Error::TableBusy {
            url: self.objects.url.clone(),
            version,
        })
    }

    /// The current version's scan rows selected down to the files of `remove`.
    fn removals(
        &self,
        snapshot: &SnapshotRef,
        remove: &BTreeSet<String>,
    ) -> Result<Vec<FilteredEngineData>> {
        let fail = |e: delta_kernel::KernelError| self.error("select the replaced files", e);
        let scan = snapshot.clone().scan_builder().build().map_err(fail)?;
        let mut out = Vec::new();
        for batch in scan.scan_metadata(self.engine.as_ref()).map_err(fail)? {
            let (data, selected) = batch.map_err(fail)?.scan_files.into_parts();
            let paths = {
                let arrow = data
                    .any_ref()
                    .downcast_ref::<ArrowEngineData>()
                    .ok_or_else(|| Error::internal("scan rows are not Arrow"))?;
                arrow
                    .record_batch()
                    .column_by_name("path")
                    .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
                    .ok_or_else(|| Error::internal("scan rows have no path column"))?
            };
            let selection: Vec<bool> = (0..paths.len())
                .map(|i| {
                    selected.get(i).copied().unwrap_or(true) && remove.contains(paths.value(i))
                })
                .collect();
            if selection.iter().any(|s| *s) {
                out.push(FilteredEngineData::try_new(data, selection).map_err(fail)?);
            }
        }
        Ok(out)
    }

    /// Writes a Delta checkpoint of `version` when it falls on the config's interval, so
    /// loading the table stays fast after thousands of landings.
    pub fn checkpoint_if_due(&self, config: &Config, version: u64) -> Result<bool> {
        if version == 0 || !version.is_multiple_of(config.delta_checkpoint_interval) {
            return Ok(false);
        }
        let snapshot = Snapshot::builder_for(self.objects.url.as_str())
            .at_version(version)
            .build(self.engine.as_ref())
            .map_err(|e| self.error("read the committed version", e))?;
        if legacy::is_legacy_writer(&snapshot) {
            // The kernel checkpoints no such version as it is, and a checkpoint of
            // [`legacy::writable`]'s view would write the view's protocol into the table:
            // the table's other writers checkpoint it.
            return Ok(false);
        }
        snapshot
            .checkpoint(self.engine.as_ref(), None)
            .map_err(|e| self.error("write a checkpoint", e))?;
        Ok(true)
    }

    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// What to do about a table partitioned otherwise than this product's tables.
const NOT_OURS: &str = "nothing was written. Wharf never changes a table's partitioning: \
                        point publish_root at this product's own table (or a new path, where \
                        the first landing creates one)";

/// What to do about another writer's file with a null (or unreadable) date.
const NULL_DATE: &str = "nothing was written. Wharf lands and replaces rows by their date, \
                         and these have none it can read: have the writer that wrote them \
                         DELETE those rows (DELETE FROM … WHERE event_date IS NULL) or give \
                         them a date, then land again";

/// The table's schema: the config's fields (nullable, as a Parquet reader widens them)
/// and the `event_date` partition column.
pub fn table_schema(config: &Config) -> Result<StructType> {
    let mut fields: Vec<StructField> = config
        .schema
        .fields
        .iter()
        .map(|f| {
            let ty = match f.ty {
                FieldType::String => DataType::STRING,
                FieldType::Int => DataType::LONG,
                FieldType::Timestamp => DataType::TIMESTAMP,
                FieldType::Float => DataType::DOUBLE,
                FieldType::Bool => DataType::BOOLEAN,
            };
            StructField::nullable(f.name.clone(), ty)
        })
        .collect();
    fields.push(StructField::nullable(PARTITION, DataType::DATE));
    StructType::try_new(fields).map_err(|e| Error::Config {
        path: config.path.clone(),
        message: format!("the schema cannot be a Delta table's: {e}"),
    })
}

/// The config's added columns (§1.1) that the table `table` does not have yet.
fn new_columns(table: &StructType, config: &Config) -> Result<Vec<StructField>> {
    Ok(table_schema(config)?
        .fields()
        .filter(|w| table.field(w.name()).is_none())
        .cloned()
        .collect())
}

/// The `add` rows of `files`, as the kernel's `add_files_schema` wants them: path,
/// partition values, size, time, stats.
fn add_files(files: &[AddFile], now_ms: i64) -> Result<Box<dyn EngineData>> {
    let names = MapFieldNames {
        entry: "key_value".to_owned(),
        key: "key".to_owned(),
        value: "value".to_owned(),
    };
    let mut partitions = MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new());
    for file in files {
        partitions.keys().append_value(PARTITION);
        partitions.values().append_value(file.date.to_string());
        partitions
            .append(true)
            .map_err(|e| Error::internal(format!("add rows: {e}")))?;
    }
    let path: ArrayRef = Arc::new(StringArray::from_iter_values(
        files.iter().map(|f| f.path.as_str()),
    ));
    let size: ArrayRef = Arc::new(Int64Array::from_iter_values(
        files.iter().map(|f| f.size as i64),
    ));
    let time: ArrayRef = Arc::new(Int64Array::from_iter_values(files.iter().map(|_| now_ms)));
    let rows: ArrayRef = Arc::new(Int64Array::from_iter_values(
        files.iter().map(|f| f.rows as i64),
    ));
    let stats = StructArray::from(vec![(
        Arc::new(ArrowField::new("numRecords", ArrowType::Int64, true)),
        rows,
    )]);
    let key_value = ArrowType::Struct(
        vec![
            ArrowField::new("key", ArrowType::Utf8, false),
            ArrowField::new("value", ArrowType::Utf8, true),
        ]
        .into(),
    );
    let schema = Schema::new(vec![
        ArrowField::new("path", ArrowType::Utf8, false),
        ArrowField::new(
            "partitionValues",
            ArrowType::Map(
                Arc::new(ArrowField::new("key_value", key_value, false)),
                false,
            ),
            false,
        ),
        ArrowField::new("size", ArrowType::Int64, false),
        ArrowField::new("modificationTime", ArrowType::Int64, false),
        ArrowField::new("stats", stats.data_type().clone(), true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            path,
            Arc::new(partitions.finish()),
            size,
            time,
            Arc::new(stats),
        ],
    )
    .map_err(|e| Error::internal(format!("add rows: {e}")))?;
    Ok(Box::new(ArrowEngineData::new(batch)))
}

/// Per date, the rows and files of the table's current version.
pub fn by_date(files: &[TableFile]) -> BTreeMap<Date, (u64, Vec<String>)> {
    let mut out: BTreeMap<Date, (u64, Vec<String>)> = BTreeMap::new();
    for file in files {
        let entry = out.entry(file.date).or_default();
        entry.0 += file.visible_rows();
        entry.1.push(file.path.clone());
    }
    out
}
