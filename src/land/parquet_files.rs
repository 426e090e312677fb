//! Parquet files of one partition: [`write_partition`] writes a date's rows (sorted by
//! key) as `files_per_date` files, one column per declared field (`int` → INT64, `string`
//! → UTF8, `timestamp` → TIMESTAMP(MICROS, UTC)), snappy, with statistics and dictionary
//! encoding, each file fsynced. The partition column lives only in the folder name.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;

use parquet::basic::{Compression, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::column::writer::{ColumnCloseResult, get_column_writer, get_typed_column_writer_mut};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesPtr};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnPath;
use parquet::schema::types::{ColumnDescPtr, Type, TypePtr};

use crate::contract::{Field, FieldType, Schema, Value, row};
use crate::error::{Error, Result};
use crate::land::atomic;
use crate::land::failpoint::{self, Op};
use crate::plan::RowSet;

/// Rows per row group, at most.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Bytes gathered before each write to a Parquet file.
const WRITE_BUFFER: usize = 1 << 20;

/// The Parquet schema of the published files.
pub fn parquet_schema(schema: &Schema) -> Result<TypePtr> {
    let columns = schema
        .fields
        .iter()
        .map(|field| {
            let (physical, logical) = match field.ty {
                FieldType::Int => (Physical::INT64, None),
                FieldType::String => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                FieldType::Timestamp => (
                    Physical::INT64,
                    Some(LogicalType::timestamp(true, TimeUnit::MICROS)),
                ),
            };
            Type::primitive_type_builder(&field.name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()
        .and_then(|fields| {
            Type::group_type_builder("schema")
                .with_fields(fields)
                .build()
        });
    columns
        .map(Arc::new)
        .map_err(|e| Error::Usage(format!("cannot build the Parquet schema: {e}")))
}

/// Writes `rows` into `folder` as `files` files `part-NNNNN.parquet` split evenly in
/// order; returns the paths written. Each file is fsynced; the folder is not.
pub fn write_partition(
    folder: &Path,
    schema: &Schema,
    rows: &RowSet,
    files: usize,
) -> Result<Vec<PathBuf>> {
    let parquet_schema = parquet_schema(schema)?;
    let properties = Arc::new(writer_properties(schema));
    let files = files.clamp(1, rows.len().max(1));
    let per_file = rows.len().div_ceil(files).max(1);
    let mut written = Vec::with_capacity(files);
    for (index, chunk) in ranges_or_empty(rows.len(), per_file)
        .into_iter()
        .enumerate()
    {
        let path = folder.join(format!("part-{index:05}.parquet"));
        let io = |e: std::io::Error| {
            Error::io(
                &path,
                "write a Parquet file",
                "check free space and the disk, then rerun",
                e,
            )
        };
        let file = atomic::create(&path, 0o644).map_err(io)?;
        failpoint::fault(Op::Write).map_err(io)?; // stands for the writes below failing
        // The writer copies each column chunk through an 8 KiB buffer: one write call
        // each, ~1,400 for 580k rows, where this buffer makes them a dozen.
        let buffered = BufWriter::with_capacity(WRITE_BUFFER, file);
        let mut writer =
            SerializedFileWriter::new(buffered, parquet_schema.clone(), properties.clone())
                .map_err(|e| parquet_error(&path, e))?;
        for group in ranges_or_empty(chunk.len(), ROW_GROUP_ROWS) {
            let group = chunk.start + group.start..chunk.start + group.end;
            write_row_group(&mut writer, schema, &properties, rows, group)
                .map_err(|e| parquet_error(&path, e))?;
        }
        let buffered = writer.into_inner().map_err(|e| parquet_error(&path, e))?;
        let file = buffered.into_inner().map_err(|e| io(e.into_error()))?;
        atomic::sync_file(&file).map_err(io)?;
        written.push(path);
    }
    Ok(written)
}

/// Snappy, chunk statistics, and dictionary encoding only where values repeat: string
/// columns other than the key and the event id (statuses, cities, couriers). A dictionary
/// on a column of unique values is built, overflows and is thrown away for nothing.
fn writer_properties(schema: &Schema) -> WriterProperties {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_dictionary_enabled(false)
        .set_created_by(format!("wharf {}", env!("CARGO_PKG_VERSION")));
    for (index, field) in schema.fields.iter().enumerate() {
        let repeats =
            field.ty == FieldType::String && index != schema.key && index != schema.event_id;
        if repeats {
            builder =
                builder.set_column_dictionary_enabled(ColumnPath::from(field.name.as_str()), true);
        }
    }
    builder.build()
}

/// `0..len` in ranges of `size`, or one empty range when `len` is 0.
fn ranges_or_empty(len: usize, size: usize) -> Vec<Range<usize>> {
    if len == 0 {
        return std::iter::once(0..0).collect();
    }
    (0..len)
        .step_by(size)
        .map(|start| start..(start + size).min(len))
        .collect()
}

/// One row group, its columns encoded in parallel (one thread per core, each taking the
/// next column) and appended in order as they finish: column encoding is the publish's
/// CPU cost.
fn write_row_group<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    schema: &Schema,
    properties: &WriterPropertiesPtr,
    rows: &RowSet,
    group: Range<usize>,
) -> parquet::errors::Result<()> {
    let descriptor = writer.schema_descr();
    let columns: Vec<ColumnDescPtr> = (0..schema.fields.len())
        .map(|i| descriptor.column(i))
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(columns.len());
    let located = FieldStarts::locate(rows, group.clone(), threads);
    // Strings first: they take the longest, and the ints then even out the threads' ends.
    let mut order: Vec<usize> = (0..columns.len()).collect();
    order.sort_by_key(|&i| schema.fields[i].ty != FieldType::String);
    let next = AtomicUsize::new(0);
    let (done, encoded) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let encoders: Vec<_> = (0..threads)
            .map(|_| {
                let done = done.clone();
                let (order, next, columns, located) = (&order, &next, &columns, &located);
                let group = group.clone();
                scope.spawn(move || {
                    while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let field = &schema.fields[index];
                        let result = encode_column(
                            &columns[index],
                            properties,
                            field,
                            index,
                            located,
                            group.clone(),
                        );
                        if done.send((index, result)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        drop(done);
        // Each column is appended as soon as those before it are: the file's writes
        // overlap the encoding of the columns still to come.
        let appended = append_in_order(writer, columns.len(), &encoded);
        drop(encoded); // an encoder still at work stops at its next column
        // Every encoder is joined (a panic in one is an error here, not a panic of the
        // scope's).
        let panicked = encoders
            .into_iter()
            .map(|e| e.join().is_err())
            .fold(false, |any, this| any | this);
        match appended {
            Ok(n) if n == columns.len() => Ok(()),
            Ok(_) if panicked => Err(ParquetError::General(
                "a column encoding thread panicked".into(),
            )),
            Ok(_) => Err(ParquetError::General("a column was not encoded".into())),
            Err(e) => Err(e),
        }
    })
}

/// Appends the encoded columns `0..columns` to one new row group of `writer` in order, as
/// they arrive in any order; returns how many were appended (fewer if an encoder quit).
fn append_in_order<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    columns: usize,
    encoded: &Receiver<(usize, parquet::errors::Result<EncodedColumn>)>,
) -> parquet::errors::Result<usize> {
    let mut group = writer.next_row_group()?;
    let mut ready: Vec<Option<EncodedColumn>> = (0..columns).map(|_| None).collect();
    let mut appended = 0;
    for (index, column) in encoded {
        ready[index] = Some(column?);
        while let Some((bytes, close)) = ready.get_mut(appended).and_then(Option::take) {
            group.append_column(&bytes::Bytes::from(bytes), close)?;
            appended += 1;
        }
        if appended == columns {
            group.close()?;
            break;
        }
    }
    Ok(appended)
}

/// Where each field of each row of a row group starts, found by one walk over each record
/// (on every core) before the columns are encoded: a column task then reads its field in
/// place, where walking each record up to it made the walks ~28 field steps a row, a
/// third of the encoders' CPU (measured). Two bytes a field of a row; a group with a
/// record of 64 KiB or more keeps no table and walks.
struct FieldStarts<'r> {
    rows: &'r RowSet,
    first: usize,
    fields: usize,
    starts: Option<Vec<u16>>,
}

impl<'r> FieldStarts<'r> {
    fn locate(rows: &'r RowSet, group: Range<usize>, threads: usize) -> Self {
        let fields = rows.fields();
        let first = group.start;
        let short = group
            .clone()
            .all(|i| rows.encoded(i).len() <= usize::from(u16::MAX));
        let starts = (short && fields > 0).then(|| {
            let mut starts = vec![0u16; group.len() * fields];
            let per_thread = group.len().div_ceil(threads.max(1)).max(1);
            std::thread::scope(|scope| {
                for (part, starts) in starts.chunks_mut(per_thread * fields).enumerate() {
                    let from = first + part * per_thread;
                    scope.spawn(move || {
                        for (i, starts) in (from..).zip(starts.chunks_exact_mut(fields)) {
                            let record = rows.encoded(i);
                            let mut at = 0;
                            for start in starts {
                                *start = at as u16;
                                at += row::field_len(&record[at..]);
                            }
                        }
                    });
                }
            });
            starts
        });
        FieldStarts {
            rows,
            first,
            fields,
            starts,
        }
    }

    /// The encoding of field `index` of row `i`.
    fn field(&self, i: usize, index: usize) -> &'r [u8] {
        let Some(starts) = &self.starts else {
            return self.rows.field(i, index);
        };
        let record = self.rows.encoded(i);
        let at = (i - self.first) * self.fields + index;
        let start = usize::from(starts[at]);
        let end = if index + 1 < self.fields {
            usize::from(starts[at + 1])
        } else {
            record.len()
        };
        &record[start..end]
    }
}

/// A column chunk encoded into memory, and what appending it needs.
type EncodedColumn = (Vec<u8>, ColumnCloseResult);

/// Rows a column is handed to its writer in at a time: the buffers stay in cache and are
/// reused, where whole-column vectors were faulted in afresh for every column (a
/// measured cost: over a third of a landing's page faults).
const ENCODE_ROWS: usize = 4096;

/// Encodes column `index` of `rows` `group` (pages, statistics, dictionary, snappy) into
/// memory, reading the values straight from the rows' encoding, [`ENCODE_ROWS`] at a time.
fn encode_column(
    column: &ColumnDescPtr,
    properties: &WriterPropertiesPtr,
    field: &Field,
    index: usize,
    rows: &FieldStarts<'_>,
    group: Range<usize>,
) -> parquet::errors::Result<EncodedColumn> {
    let mut sink = TrackedWrite::new(Vec::new());
    let pages = Box::new(SerializedPageWriter::new(&mut sink));
    let mut writer = get_column_writer(column.clone(), properties.clone(), pages);
    let mut definition: Vec<i16> = Vec::with_capacity(ENCODE_ROWS);
    let chunks = group
        .clone()
        .step_by(ENCODE_ROWS)
        .map(|start| start..(start + ENCODE_ROWS).min(group.end));
    match field.ty {
        FieldType::Int | FieldType::Timestamp => {
            let mut values: Vec<i64> = Vec::with_capacity(ENCODE_ROWS);
            for chunk in chunks {
                definition.clear();
                values.clear();
                for i in chunk {
                    let f = rows.field(i, index);
                    definition.push(i16::from(!row::is_null(f)));
                    values.extend(row::int(f).or_else(|| row::instant(f).map(|t| t.micros())));
                }
                get_typed_column_writer_mut::<Int64Type>(&mut writer).write_batch(
                    &values,
                    Some(&definition),
                    None,
                )?;
            }
        }
        FieldType::String => {
            let mut spans: Vec<Range<usize>> = Vec::with_capacity(ENCODE_ROWS);
            let mut values: Vec<ByteArray> = Vec::with_capacity(ENCODE_ROWS);
            for chunk in chunks {
                definition.clear();
                spans.clear();
                values.clear();
                // One buffer a chunk, sliced per value: no allocation per row. A
                // dictionary keeps slices of it, so it is not reused.
                let mut text = Vec::new();
                for i in chunk {
                    let f = rows.field(i, index);
                    definition.push(i16::from(!row::is_null(f)));
                    if let Some(s) = row::str_bytes(f) {
                        spans.push(text.len()..text.len() + s.len());
                        text.extend_from_slice(s);
                    }
                }
                let text = bytes::Bytes::from(text);
                values.extend(
                    spans
                        .drain(..)
                        .map(|span| ByteArray::from(text.slice(span))),
                );
                get_typed_column_writer_mut::<ByteArrayType>(&mut writer).write_batch(
                    &values,
                    Some(&definition),
                    None,
                )?;
            }
        }
    }
    let close = writer.close()?;
    Ok((sink.into_inner()?, close))
}

fn parquet_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::io(
        path,
        "write a Parquet file",
        "check free space and the disk, then rerun",
        std::io::Error::other(e),
    )
}

/// The rows in every `*.parquet` file of `folder`, from the footers.
pub fn count_rows(folder: &Path) -> Result<u64> {
    let mut rows = 0;
    for path in parquet_paths(folder)? {
        rows += open_reader(&path)?.metadata().file_metadata().num_rows() as u64;
    }
    Ok(rows)
}

/// A reader of the published file `path`; one that cannot be read is corrupt state.
fn open_reader(path: &Path) -> Result<SerializedFileReader<File>> {
    let fail = |detail: String| Error::CorruptState {
        path: path.to_owned(),
        detail,
    };
    let file = File::open(path).map_err(|e| fail(e.to_string()))?;
    SerializedFileReader::new(file).map_err(|e| fail(e.to_string()))
}

/// The `*.parquet` files directly in `folder`, sorted by name.
pub fn parquet_paths(folder: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(folder)
        .map_err(|e| Error::io(folder, "list the partition", "check that it is readable", e))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Every row of every `*.parquet` file in `folder`, as records of `schema` (a column the
/// files lack reads as null). Timestamps come back at the published microsecond precision.
pub fn read_partition(folder: &Path, schema: &Schema) -> Result<Vec<crate::contract::Record>> {
    use parquet::record::Field;
    let mut rows = Vec::new();
    for path in parquet_paths(folder)? {
        let reader = open_reader(&path)?;
        let fail = |e: parquet::errors::ParquetError| Error::CorruptState {
            path: path.clone(),
            detail: e.to_string(),
        };
        for row in reader.get_row_iter(None).map_err(fail)? {
            let row = row.map_err(fail)?;
            let mut record = vec![Value::Null; schema.fields.len()];
            for (name, field) in row.get_column_iter() {
                let Some(index) = schema.index_of(name) else {
                    continue;
                };
                record[index] = match field {
                    Field::Long(n) => Value::Int(*n),
                    Field::TimestampMicros(us) => {
                        Value::Ts(crate::contract::Instant::from_micros(*us))
                    }
                    Field::Str(s) => Value::Str(s.as_str().into()),
                    _ => Value::Null,
                };
            }
            rows.push(record.into_boxed_slice());
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Instant, Record};
    use crate::plan::rank::Event;

    /// `records` as the winners of lines 1, 2, …
    fn row_set(records: &[Record], schema: &Schema) -> RowSet {
        let events: Vec<Event> = records
            .iter()
            .enumerate()
            .map(|(i, record)| Event {
                line: i as u64 + 1,
                record: record.clone(),
            })
            .collect();
        RowSet::from_events(schema.fields.len(), &events)
    }

    /// 10,001 rows, in one file and in three, cross the encoders' 4,096-row chunks in
    /// every column; optional fields are null in runs and alone, strings of every length up
    /// to 40 bytes and repeating (the dictionary columns keep slices of each chunk).
    #[test]
    fn rows_read_back_as_written_across_encoding_chunks() {
        let config = crate::config::fixtures::orders();
        let schema = &config.schema;
        let records: Vec<Record> = (0..10_001i64)
            .map(|i| {
                let seq = if i % 7 == 0 || (4090..4100).contains(&i) {
                    Value::Null
                } else {
                    Value::Int(i * 3 - 5_000)
                };
                let city = match i % 5 {
                    0 => Value::Null,
                    1 => Value::Str("".into()),
                    _ => Value::Str("x".repeat((i % 41) as usize).into()),
                };
                vec![
                    Value::Str(format!("e{i}").into()),
                    Value::Int(i),
                    Value::Str(["PAID", "PENDING", "DELIVERED"][i as usize % 3].into()),
                    Value::Ts(Instant::from_parts(
                        1_709_251_200 + i,
                        (i as u32 % 1000) * 1000,
                    )),
                    seq,
                    city,
                ]
                .into()
            })
            .collect();
        let rows = row_set(&records, schema);
        for files in [1, 3] {
            let dir = tempfile::tempdir().unwrap();
            let written = write_partition(dir.path(), schema, &rows, files).unwrap();
            assert_eq!(written.len(), files);
            assert_eq!(count_rows(dir.path()).unwrap(), 10_001);
            assert_eq!(
                read_partition(dir.path(), schema).unwrap(),
                records,
                "{files} files"
            );
        }
    }

    /// A record of 64 KiB or more is beyond the two-byte field starts: its row group is
    /// read by walking each record, and its rows still read back as written.
    #[test]
    fn a_record_past_64_kib_reads_back_too() {
        let config = crate::config::fixtures::orders();
        let schema = &config.schema;
        let records: Vec<Record> = [70_000usize, 3, 65_400]
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let mut record = vec![Value::Null; schema.fields.len()];
                record[schema.event_id] = Value::Str(format!("e{i}").into());
                record[schema.key] = Value::Int(i as i64);
                record[schema.index_of("status").unwrap()] = Value::Str("PAID".into());
                record[schema.order_by] = Value::Ts(Instant::from_parts(1_709_251_200, 0));
                record[schema.fields.len() - 1] = Value::Str("x".repeat(len).into());
                record.into()
            })
            .collect();
        let rows = row_set(&records, schema);
        assert!(FieldStarts::locate(&rows, 0..3, 2).starts.is_none());
        assert!(FieldStarts::locate(&rows, 1..3, 2).starts.is_some());
        let dir = tempfile::tempdir().unwrap();
        write_partition(dir.path(), schema, &rows, 1).unwrap();
        assert_eq!(read_partition(dir.path(), schema).unwrap(), records);
    }
}
