//! Parquet files of one partition: [`write_partition`] writes a date's rows (sorted by
//! key) as `files_per_date` files, one column per declared field (`int` → INT64, `string`
//! → UTF8, `timestamp` → TIMESTAMP(MICROS, UTC)), snappy, with statistics and dictionary
//! encoding, each file fsynced. The partition column lives only in the folder name. A
//! file of 65,536 rows or more has an even number of equal row groups, encoded side by
//! side, one per core.

use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;

use parquet::basic::{Compression, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::column::writer::{
    ColumnCloseResult, ColumnWriter, get_column_writer, get_typed_column_writer_mut,
};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnPath;
use parquet::schema::types::{ColumnDescPtr, Type, TypePtr};

use crate::contract::{Field, FieldType, Schema, row};
use crate::engine::local::rowset::RowSet;
use crate::error::{Error, Result};
use crate::store::atomic;
use crate::store::failpoint::{self, Op};

/// Rows per row group, at most.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Files of at least this many rows get an even number of row groups, so two cores can
/// encode them side by side (each group on one thread) and end together.
const SPLIT_FROM_ROWS: usize = 1 << 16;

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
                FieldType::Float => (Physical::DOUBLE, None),
                FieldType::Bool => (Physical::BOOLEAN, None),
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
        .map_err(|e| Error::internal(format!("cannot build the Parquet schema: {e}")))
}

/// Writes `rows` into `folder` as `files` files `part-NNNNN.parquet` split evenly in
/// order; returns the paths written. Each file is fsynced; the folder is not.
pub fn write_partition(
    folder: &Path,
    schema: &Schema,
    rows: &RowSet,
    files: usize,
) -> Result<Vec<PathBuf>> {
    let split = crate::plan::split::Split::into_files(rows.len() as u64, files as u64);
    let mut written = Vec::with_capacity(split.files as usize);
    for (index, chunk) in split.ranges(rows.len() as u64).enumerate() {
        let path = folder.join(part_name(index as u64));
        write_file(&path, schema, rows, chunk)?;
        written.push(path);
    }
    Ok(written)
}

/// The name of a date's `n`th file in key order.
pub fn part_name(n: u64) -> String {
    format!("part-{n:05}.parquet")
}

/// Writes the rows `chunk` of `rows` as the one Parquet file `path`, fsynced.
pub fn write_file(path: &Path, schema: &Schema, rows: &RowSet, chunk: Range<usize>) -> Result<()> {
    let parquet_schema = parquet_schema(schema)?;
    let properties = Arc::new(writer_properties(schema, chunk.len()));
    let io = |e: std::io::Error| {
        Error::io(
            path,
            "write a Parquet file",
            "check free space and the disk, then rerun",
            e,
        )
    };
    let file = atomic::create(path, 0o644).map_err(io)?;
    failpoint::fault(Op::Write).map_err(io)?; // stands for the writes below failing
    // The writer copies each column chunk through an 8 KiB buffer, a write call
    // each; this buffer gathers them into a few large writes.
    let buffered = BufWriter::with_capacity(WRITE_BUFFER, file);
    let mut writer = SerializedFileWriter::new(buffered, parquet_schema, properties.clone())
        .map_err(|e| parquet_error(path, e))?;
    let groups: Vec<Range<usize>> = row_groups(chunk.len())
        .into_iter()
        .map(|group| chunk.start + group.start..chunk.start + group.end)
        .collect();
    write_row_groups(&mut writer, schema, &properties, rows, &groups)
        .map_err(|e| parquet_error(path, e))?;
    let buffered = writer.into_inner().map_err(|e| parquet_error(path, e))?;
    let file = buffered.into_inner().map_err(|e| io(e.into_error()))?;
    atomic::sync_file(&file).map_err(io)
}

/// False positives the key column's bloom filter allows: a merge reads a file it names
/// for a key it lacks about once in a hundred keys probed.
pub const KEY_FILTER_FPP: f64 = 0.01;

/// Snappy, chunk statistics, dictionary encoding only where values repeat
/// ([`Schema::dictionary_encoded`]), and a bloom filter on the key column sized for the
/// file's `rows` (merge mode finds a key's file by it, CONTRACT.md §10.5).
fn writer_properties(schema: &Schema, rows: usize) -> WriterProperties {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_dictionary_enabled(false)
        .set_created_by(format!("wharf {}", env!("CARGO_PKG_VERSION")));
    for (index, field) in schema.fields.iter().enumerate() {
        if schema.dictionary_encoded(index) {
            builder =
                builder.set_column_dictionary_enabled(ColumnPath::from(field.name.as_str()), true);
        }
    }
    let key = ColumnPath::from(schema.fields[schema.key].name.as_str());
    builder
        .set_column_bloom_filter_enabled(key.clone(), true)
        .set_column_bloom_filter_fpp(key.clone(), KEY_FILTER_FPP)
        .set_column_bloom_filter_max_ndv(key, (rows as u64).max(1))
        .build()
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

/// The row groups of a file of `len` rows: as few as [`ROW_GROUP_ROWS`] allows, made even
/// from [`SPLIT_FROM_ROWS`] rows, and equal in size to a row. The split depends on the rows alone,
/// never on the machine, so the same input writes the same bytes everywhere.
fn row_groups(len: usize) -> Vec<Range<usize>> {
    let mut groups = len.div_ceil(ROW_GROUP_ROWS).max(1);
    if len >= SPLIT_FROM_ROWS {
        groups = groups.next_multiple_of(2);
    }
    ranges_or_empty(len, len.div_ceil(groups).max(1))
}

/// Encoded row groups, each a column chunk per field in order.
type EncodedGroup = Vec<EncodedColumn>;

/// Encodes `groups` of `rows` on one thread per core, each thread taking the next whole
/// group, and appends them to `writer` in order as they finish: column encoding is the
/// publish's CPU cost.
fn write_row_groups<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    schema: &Schema,
    properties: &WriterPropertiesPtr,
    rows: &RowSet,
    groups: &[Range<usize>],
) -> parquet::errors::Result<()> {
    let descriptor = writer.schema_descr();
    let columns: Vec<ColumnDescPtr> = (0..schema.fields.len())
        .map(|i| descriptor.column(i))
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(groups.len());
    let next = AtomicUsize::new(0);
    let (done, encoded) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let encoders: Vec<_> = (0..threads)
            .map(|_| {
                let done = done.clone();
                let (next, columns) = (&next, &columns);
                scope.spawn(move || {
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(group) = groups.get(at) else {
                            return;
                        };
                        let result = encode_group(columns, properties, schema, rows, group.clone());
                        if done.send((at, result)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        drop(done);
        // Each group is appended as soon as those before it are: the file's writes
        // overlap the encoding of the groups still to come.
        let appended = append_in_order(writer, groups.len(), &encoded);
        drop(encoded); // an encoder still at work stops at its next group
        // Every encoder is joined (a panic in one is an error here, not a panic of the
        // scope's).
        let panicked = encoders
            .into_iter()
            .map(|e| e.join().is_err())
            .fold(false, |any, this| any | this);
        match appended {
            Ok(n) if n == groups.len() => Ok(()),
            Ok(_) if panicked => Err(ParquetError::General(
                "a row group encoding thread panicked".into(),
            )),
            Ok(_) => Err(ParquetError::General("a row group was not encoded".into())),
            Err(e) => Err(e),
        }
    })
}

/// Appends the encoded row groups `0..groups` to `writer` in order, as they arrive in any
/// order; returns how many were appended (fewer if an encoder quit).
fn append_in_order<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    groups: usize,
    encoded: &Receiver<(usize, parquet::errors::Result<EncodedGroup>)>,
) -> parquet::errors::Result<usize> {
    let mut ready: Vec<Option<EncodedGroup>> = (0..groups).map(|_| None).collect();
    let mut appended = 0;
    for (at, group) in encoded {
        ready[at] = Some(group?);
        while let Some(columns) = ready.get_mut(appended).and_then(Option::take) {
            let mut row_group = writer.next_row_group()?;
            for (bytes, close) in columns {
                row_group.append_column(&bytes::Bytes::from(bytes), close)?;
            }
            row_group.close()?;
            appended += 1;
        }
        if appended == groups {
            break;
        }
    }
    Ok(appended)
}

/// Where each field of each row of a block starts, found by one walk over each record
/// before the block's columns are encoded: a column then reads its field in place, where
/// walking each record up to it would cost a column's every preceding field, a row at a
/// time. Two bytes a field of a row; a block with a record of 64 KiB or more keeps no
/// table and walks.
#[derive(Default)]
struct FieldStarts {
    fields: usize,
    starts: Vec<u16>,
    walk: bool,
}

impl FieldStarts {
    /// Locates the fields of every row of `block`, replacing the previous block's.
    fn locate(&mut self, block: &RowSet) {
        let fields = block.fields();
        self.fields = fields;
        self.walk =
            fields == 0 || (0..block.len()).any(|i| block.encoded(i).len() > usize::from(u16::MAX));
        if self.walk {
            return;
        }
        self.starts.clear();
        self.starts.resize(block.len() * fields, 0);
        for (i, starts) in self.starts.chunks_exact_mut(fields).enumerate() {
            let record = block.encoded(i);
            let mut at = 0;
            for start in starts {
                *start = at as u16;
                at += row::field_len(&record[at..]);
            }
        }
    }

    /// The encoding of field `index` of row `i` of the located `block`.
    fn field<'b>(&self, block: &'b RowSet, i: usize, index: usize) -> &'b [u8] {
        if self.walk {
            return block.field(i, index);
        }
        let record = block.encoded(i);
        let at = i * self.fields + index;
        let start = usize::from(self.starts[at]);
        let end = if index + 1 < self.fields {
            usize::from(self.starts[at + 1])
        } else {
            record.len()
        };
        &record[start..end]
    }
}

/// A column chunk encoded into memory, and what appending it needs.
type EncodedColumn = (Vec<u8>, ColumnCloseResult);

/// Rows gathered into a block and handed to the column writers at a time: the block's
/// records, field starts and value buffers stay in cache and are reused from block to
/// block, and each record is read from its place once.
const ENCODE_ROWS: usize = 4096;

/// Rows [`RowSet::warm`] loads ahead of their gathering.
const GATHER_GROUP: usize = 32;

/// Encodes the rows `group` of `rows` as one row group (pages, statistics, dictionary,
/// snappy) into memory, one column chunk per field: [`ENCODE_ROWS`] rows at a time are
/// gathered into a block, then each column takes its values from the block.
fn encode_group(
    columns: &[ColumnDescPtr],
    properties: &WriterPropertiesPtr,
    schema: &Schema,
    rows: &RowSet,
    group: Range<usize>,
) -> parquet::errors::Result<EncodedGroup> {
    let mut sinks: Vec<TrackedWrite<Vec<u8>>> = columns
        .iter()
        .map(|_| TrackedWrite::new(Vec::new()))
        .collect();
    let mut writers: Vec<ColumnWriter<'_>> = sinks
        .iter_mut()
        .zip(columns)
        .map(|(sink, column)| {
            let pages = Box::new(SerializedPageWriter::new(sink));
            get_column_writer(column.clone(), properties.clone(), pages)
        })
        .collect();
    let mut block = RowSet::new(rows.fields());
    let mut located = FieldStarts::default();
    let mut buffers = Buffers::default();
    for range in ranges_or_empty(group.len(), ENCODE_ROWS) {
        block.clear();
        let range = group.start + range.start..group.start + range.end;
        for i in range.clone() {
            if (i - range.start) % GATHER_GROUP == 0 {
                rows.warm(i..range.end.min(i + GATHER_GROUP));
            }
            block.push_encoded(rows.line(i), rows.encoded(i));
        }
        located.locate(&block);
        for (index, (field, writer)) in schema.fields.iter().zip(&mut writers).enumerate() {
            buffers.write_block(writer, field, index, &block, &located)?;
        }
    }
    let closes = writers
        .into_iter()
        .map(ColumnWriter::close)
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    sinks
        .into_iter()
        .zip(closes)
        .map(|(sink, close)| Ok((sink.into_inner()?, close)))
        .collect()
}

/// A block's values on their way to a column writer, reused from column to column.
#[derive(Default)]
struct Buffers {
    definition: Vec<i16>,
    ints: Vec<i64>,
    spans: Vec<Range<usize>>,
    strings: Vec<ByteArray>,
    floats: Vec<f64>,
    bools: Vec<bool>,
}

impl Buffers {
    /// Hands field `index` of every row of `block` to its column's `writer`.
    fn write_block(
        &mut self,
        writer: &mut ColumnWriter<'_>,
        field: &Field,
        index: usize,
        block: &RowSet,
        located: &FieldStarts,
    ) -> parquet::errors::Result<()> {
        self.definition.clear();
        match field.ty {
            FieldType::Int | FieldType::Timestamp => {
                self.ints.clear();
                for i in 0..block.len() {
                    let f = located.field(block, i, index);
                    self.definition.push(i16::from(!row::is_null(f)));
                    self.ints
                        .extend(row::int(f).or_else(|| row::instant(f).map(|t| t.micros())));
                }
                get_typed_column_writer_mut::<Int64Type>(writer).write_batch(
                    &self.ints,
                    Some(&self.definition),
                    None,
                )?;
            }
            FieldType::String => {
                self.spans.clear();
                self.strings.clear();
                // One buffer a block, sliced per value: no allocation per row. A
                // dictionary keeps slices of it, so it is not reused.
                let mut text = Vec::new();
                for i in 0..block.len() {
                    let f = located.field(block, i, index);
                    self.definition.push(i16::from(!row::is_null(f)));
                    if let Some(s) = row::str_bytes(f) {
                        self.spans.push(text.len()..text.len() + s.len());
                        text.extend_from_slice(s);
                    }
                }
                let text = bytes::Bytes::from(text);
                self.strings.extend(
                    self.spans
                        .drain(..)
                        .map(|span| ByteArray::from(text.slice(span))),
                );
                get_typed_column_writer_mut::<ByteArrayType>(writer).write_batch(
                    &self.strings,
                    Some(&self.definition),
                    None,
                )?;
            }
            FieldType::Float => {
                self.floats.clear();
                for i in 0..block.len() {
                    let f = located.field(block, i, index);
                    self.definition.push(i16::from(!row::is_null(f)));
                    self.floats.extend(row::float(f));
                }
                get_typed_column_writer_mut::<DoubleType>(writer).write_batch(
                    &self.floats,
                    Some(&self.definition),
                    None,
                )?;
            }
            FieldType::Bool => {
                self.bools.clear();
                for i in 0..block.len() {
                    let f = located.field(block, i, index);
                    self.definition.push(i16::from(!row::is_null(f)));
                    self.bools.extend(row::boolean(f));
                }
                get_typed_column_writer_mut::<BoolType>(writer).write_batch(
                    &self.bools,
                    Some(&self.definition),
                    None,
                )?;
            }
        }
        Ok(())
    }
}

fn parquet_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::io(
        path,
        "write a Parquet file",
        "check free space and the disk, then rerun",
        std::io::Error::other(e),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Instant, Record, Value};
    use crate::plan::rank::Event;
    use crate::store::parquet_files::{count_rows, open_reader, read_partition};
    use parquet::file::reader::FileReader;

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

    /// Row groups: one up to the split, then an even number of equal groups, never more
    /// than a million rows each, covering every row once in order.
    #[test]
    fn row_groups_are_even_from_the_split_and_cover_every_row() {
        assert_eq!(row_groups(0), vec![0..0]);
        assert_eq!(
            row_groups(SPLIT_FROM_ROWS - 1),
            vec![0..SPLIT_FROM_ROWS - 1]
        );
        assert_eq!(row_groups(SPLIT_FROM_ROWS).len(), 2);
        assert_eq!(row_groups(580_000), vec![0..290_000, 290_000..580_000]);
        for len in [
            SPLIT_FROM_ROWS,
            580_001,
            ROW_GROUP_ROWS * 2 + 1,
            ROW_GROUP_ROWS * 5,
        ] {
            let groups = row_groups(len);
            assert_eq!(groups.len() % 2, 0, "{len} rows");
            assert!(
                groups.iter().all(|g| g.len() <= ROW_GROUP_ROWS),
                "{len} rows"
            );
            let ends: Vec<usize> = groups.iter().map(|g| g.end).collect();
            let starts: Vec<usize> = groups.iter().skip(1).map(|g| g.start).collect();
            assert_eq!(starts, ends[..ends.len() - 1], "{len} rows: contiguous");
            assert_eq!((groups[0].start, ends[ends.len() - 1]), (0, len));
        }
    }

    /// Past the split, a file has two row groups encoded on two threads, and its rows
    /// read back in order (the second group after the first, nothing lost or doubled).
    #[test]
    fn a_file_past_the_split_has_two_row_groups_in_order() {
        let config = crate::config::fixtures::orders();
        let schema = &config.schema;
        let records: Vec<Record> = (0..SPLIT_FROM_ROWS as i64 + 3)
            .map(|i| {
                let mut record = vec![Value::Null; schema.fields.len()];
                record[schema.event_id] = Value::Str(format!("e{i}").into());
                record[schema.key] = Value::Int(i);
                record[schema.index_of("status").unwrap()] = Value::Str("PAID".into());
                record[schema.order_by] = Value::Ts(Instant::from_parts(1_709_251_200 + i, 0));
                record.into()
            })
            .collect();
        let rows = row_set(&records, schema);
        let dir = tempfile::tempdir().unwrap();
        let written = write_partition(dir.path(), schema, &rows, 1).unwrap();
        let groups = open_reader(&written[0])
            .unwrap()
            .metadata()
            .num_row_groups();
        assert_eq!(groups, 2);
        assert_eq!(read_partition(dir.path(), schema).unwrap(), records);
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
        let mut located = FieldStarts::default();
        located.locate(&rows);
        assert!(located.walk);
        located.locate(&rows.slice(1..3));
        assert!(!located.walk);
        let dir = tempfile::tempdir().unwrap();
        write_partition(dir.path(), schema, &rows, 1).unwrap();
        assert_eq!(read_partition(dir.path(), schema).unwrap(), records);
    }
}
