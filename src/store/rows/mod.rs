//! [`Rows`]: a partition's published rows, one at a time, in file-name order (each file
//! is sorted by key and the files split the keys in order, so the whole is in key order).
//! Only one batch of one file is decoded at a time, whatever the partition's size.
//! The files are a hive folder's, or a Delta version's fetched through its store; they
//! are decoded a batch of columns at a time ([`BATCH_ROWS`] rows).

use std::path::{Path, PathBuf};

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatchReader, StringArray,
    TimestampMicrosecondArray,
};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};

use super::conform::FileAt;
use super::parquet_files;
use crate::contract::{Instant, Record, Schema, Value};
use crate::error::{Error, Result};

/// One published file: a local path, or one already fetched (its name for errors).
pub enum Source {
    Path(PathBuf),
    Fetched(PathBuf, bytes::Bytes),
}

/// Rows decoded at a time: a batch of columns, not a row of named fields each.
const BATCH_ROWS: usize = 8192;

/// The rows of every `*.parquet` file of a folder, as records of a schema.
pub struct Rows<'s> {
    schema: &'s Schema,
    files: std::vec::IntoIter<Source>,
    /// The file being read, its batches, and the rows it has read.
    current: Option<(FileAt, ParquetRecordBatchReader, u64)>,
    /// The batch being read, its columns as the schema's fields (none where the file
    /// lacks one), and the next row.
    batch: Option<(Vec<Option<ArrayRef>>, usize, usize)>,
    /// Field index in the schema → its column in the file's batches.
    columns: Vec<Option<usize>>,
}

impl<'s> Rows<'s> {
    /// The rows of `folder`; none when it does not exist (a date not published yet).
    pub fn open(folder: &Path, schema: &'s Schema) -> Result<Rows<'s>> {
        let files = if folder.is_dir() {
            parquet_files::parquet_paths(folder)?
        } else {
            Vec::new()
        };
        Ok(Rows::of(
            files.into_iter().map(Source::Path).collect(),
            schema,
        ))
    }

    /// The rows of `files`, in their order (which must be key order).
    pub fn of(files: Vec<Source>, schema: &'s Schema) -> Rows<'s> {
        Rows {
            schema,
            files: files.into_iter(),
            current: None,
            batch: None,
            columns: Vec::new(),
        }
    }

    fn next_file(&mut self) -> Result<bool> {
        let Some(source) = self.files.next() else {
            return Ok(false);
        };
        let (file, reader) = open(source, None)?;
        self.columns = field_columns(self.schema, &reader.schema());
        self.current = Some((file, reader, 0));
        Ok(true)
    }

    /// The next batch of the current file, conformed; false at the file's end.
    fn next_batch(&mut self) -> Result<bool> {
        let Some((file, batches, read)) = &mut self.current else {
            return Ok(false);
        };
        match batches.next() {
            Some(Ok(batch)) => {
                let columns = file.conform(&batch, &self.schema.fields, &self.columns, *read)?;
                *read += batch.num_rows() as u64;
                self.batch = Some((columns, batch.num_rows(), 0));
                Ok(true)
            }
            Some(Err(e)) => Err(Error::CorruptState {
                path: file.path.clone(),
                detail: e.to_string(),
            }),
            None => {
                self.current = None;
                Ok(false)
            }
        }
    }
}

/// Each of `schema`'s fields' column in a file of `file`'s columns (the last of a name).
fn field_columns(schema: &Schema, file: &arrow_schema::Schema) -> Vec<Option<usize>> {
    schema
        .fields
        .iter()
        .map(|f| file.fields().iter().rposition(|c| c.name() == &f.name))
        .collect()
}

/// A reader of `source`'s batches (of `groups` only, when given), and the file it reads.
fn open(source: Source, groups: Option<&[usize]>) -> Result<(FileAt, ParquetRecordBatchReader)> {
    match source {
        Source::Path(path) => {
            let file = open_file(&path)?;
            reader_of(path, file, groups)
        }
        Source::Fetched(path, bytes) => reader_of(path, bytes, groups),
    }
}

/// A published file, opened to read; one that cannot be is the state's corruption.
fn open_file(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|e| Error::CorruptState {
        path: path.to_owned(),
        detail: e.to_string(),
    })
}

fn reader_of<R: parquet::file::reader::ChunkReader + 'static>(
    path: PathBuf,
    input: R,
    groups: Option<&[usize]>,
) -> Result<(FileAt, ParquetRecordBatchReader)> {
    let corrupt = |e: parquet::errors::ParquetError| Error::CorruptState {
        path: path.clone(),
        detail: e.to_string(),
    };
    let mut builder = ParquetRecordBatchReaderBuilder::try_new(input)
        .map_err(corrupt)?
        .with_batch_size(BATCH_ROWS);
    if let Some(groups) = groups {
        builder = builder.with_row_groups(groups.to_vec());
    }
    let file = FileAt::new(&path, builder.metadata(), groups);
    let reader = builder.build().map_err(corrupt)?;
    Ok((file, reader))
}

/// The rows of `source` by UTC hour of `schema`'s `partition_by_date_of` instant, reading
/// that column alone (conformed as every read is).
pub fn hours(source: Source, schema: &Schema) -> Result<[u64; 24]> {
    match source {
        Source::Path(path) => {
            let file = open_file(&path)?;
            hours_of(&path, file, schema)
        }
        Source::Fetched(path, bytes) => hours_of(&path, bytes, schema),
    }
}

fn hours_of<R: parquet::file::reader::ChunkReader + 'static>(
    path: &Path,
    input: R,
    schema: &Schema,
) -> Result<[u64; 24]> {
    let field = &schema.fields[schema.date_of];
    let corrupt = |detail: String| Error::CorruptState {
        path: path.to_owned(),
        detail,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(input).map_err(|e| corrupt(e.to_string()))?;
    let root = builder
        .parquet_schema()
        .root_schema()
        .get_fields()
        .iter()
        .rposition(|c| c.name() == field.name)
        .ok_or_else(|| corrupt(format!("no column {}", field.name)))?;
    let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), [root]);
    let file = FileAt::new(path, builder.metadata(), None);
    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .with_projection(mask)
        .build()
        .map_err(|e| corrupt(e.to_string()))?;
    let (mut hours, mut read) = ([0; 24], 0);
    for batch in reader {
        let batch = batch.map_err(|e| corrupt(e.to_string()))?;
        let conformed = file.conform(&batch, std::slice::from_ref(field), &[Some(0)], read)?;
        read += batch.num_rows() as u64;
        if let Some(Some(array)) = conformed.first()
            && let Column::Ts(us) = Column::of(array.as_ref(), &file)?
        {
            for at in us.iter().flatten() {
                hours[Instant::from_micros(at).hour_of_day()] += 1;
            }
        }
    }
    Ok(hours)
}

/// One file's rows encoded back to back ([`crate::contract::row`]): row `i` is
/// `bytes[ends[i - 1]..ends[i]]` (from 0 for the first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    pub ends: Vec<usize>,
}

/// Every row of `source`, encoded as [`Rows`] would read it then
/// [`row::push_record`](crate::contract::row::push_record) would encode it, but a column
/// of a batch at a time and with no record a row: a merge reads a whole file this way.
/// A file of several row groups is decoded in two halves on two threads, then joined.
pub fn encoded(source: Source, schema: &Schema) -> Result<Encoded> {
    let (path, input) = bytes_of(source)?;
    let corrupt = |e: parquet::errors::ParquetError| Error::CorruptState {
        path: path.clone(),
        detail: e.to_string(),
    };
    let metadata =
        ArrowReaderMetadata::load(&input, ArrowReaderOptions::default()).map_err(corrupt)?;
    let groups: Vec<usize> = (0..metadata.metadata().num_row_groups()).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let halves: Vec<&[usize]> = if threads > 1 && groups.len() > 1 {
        let (first, second) = groups.split_at(groups.len() / 2);
        vec![first, second]
    } else {
        vec![&groups]
    };
    let rows_of = |part: &[usize]| -> usize {
        let rows: i64 = part
            .iter()
            .map(|&g| metadata.metadata().row_group(g).num_rows())
            .sum();
        // A footer is trusted only so far: a corrupt count must not reserve the machine.
        usize::try_from(rows).unwrap_or(0).min(1 << 24)
    };
    // The first half's buffer has room for the whole file: the second joins it uncopied
    // but once.
    let decode = |part: &[usize], room: usize| -> Result<Encoded> {
        let reader =
            ParquetRecordBatchReaderBuilder::new_with_metadata(input.clone(), metadata.clone())
                .with_batch_size(BATCH_ROWS)
                .with_row_groups(part.to_vec())
                .build()
                .map_err(corrupt)?;
        let file = FileAt::new(&path, metadata.metadata(), Some(part));
        encode_batches(reader, &file, schema, room)
    };
    let mut parts = std::thread::scope(|scope| {
        let later: Vec<_> = halves[1..]
            .iter()
            .map(|part| scope.spawn(|| decode(part, rows_of(part))))
            .collect();
        let mut parts = vec![decode(halves[0], rows_of(&groups))];
        for thread in later {
            parts.push(
                thread
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        parts
    })
    .into_iter();
    let mut out = parts.next().unwrap_or(Ok(Encoded::default()))?;
    for part in parts {
        out.append(part?);
    }
    Ok(out)
}

/// `source`'s bytes, whole, and its name for errors.
fn bytes_of(source: Source) -> Result<(PathBuf, bytes::Bytes)> {
    match source {
        Source::Path(path) => match std::fs::read(&path) {
            Ok(bytes) => Ok((path, bytes.into())),
            Err(e) => Err(Error::CorruptState {
                path,
                detail: e.to_string(),
            }),
        },
        Source::Fetched(path, bytes) => Ok((path, bytes)),
    }
}

/// The rows of `reader`'s batches (of `file`), encoded, in buffers with room for `rows`
/// rows.
fn encode_batches(
    reader: ParquetRecordBatchReader,
    file: &FileAt,
    schema: &Schema,
    rows: usize,
) -> Result<Encoded> {
    let fields = field_columns(schema, &reader.schema());
    let mut out = Encoded {
        bytes: Vec::new(),
        ends: Vec::with_capacity(rows),
    };
    let mut sized = false;
    let mut read = 0;
    for batch in reader {
        let batch = batch.map_err(|e| Error::CorruptState {
            path: file.path.clone(),
            detail: e.to_string(),
        })?;
        let arrays = file.conform(&batch, &schema.fields, &fields, read)?;
        read += batch.num_rows() as u64;
        let columns = arrays
            .iter()
            .map(|a| a.as_deref().map(|a| Column::of(a, file)).transpose())
            .collect::<Result<Vec<_>>>()?;
        for row in 0..batch.num_rows() {
            for column in &columns {
                match column {
                    Some(column) => column.push(row, &mut out.bytes),
                    None => crate::contract::row::push_null(&mut out.bytes),
                }
            }
            out.ends.push(out.bytes.len());
        }
        // Sized once from the first batch's rows (a tenth spare): grown by doubling, the
        // buffer was copied and its fresh pages faulted in at every step.
        if !sized && !out.ends.is_empty() {
            sized = true;
            let estimate = out.bytes.len() / out.ends.len() * rows / 10 * 11;
            out.bytes.reserve(estimate.saturating_sub(out.bytes.len()));
        }
    }
    Ok(out)
}

impl Encoded {
    /// `next`'s rows after these.
    fn append(&mut self, next: Encoded) {
        let base = self.bytes.len();
        self.bytes.extend_from_slice(&next.bytes);
        self.ends
            .extend(next.ends.into_iter().map(|end| base + end));
    }

    /// Row `i`'s encoded record.
    pub fn row(&self, i: usize) -> &[u8] {
        &self.bytes[self.start(i)..self.ends[i]]
    }

    /// Where row `i` starts.
    pub fn start(&self, i: usize) -> usize {
        if i == 0 { 0 } else { self.ends[i - 1] }
    }
}

impl crate::plan::merge::ReadRows for Encoded {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn key(&self, row: usize, schema: &Schema) -> Value {
        let record = self.row(row);
        let (start, end) = crate::contract::row::field_range(record, schema.key);
        crate::contract::row::decode_value(&record[start..end])
    }

    fn record(&self, row: usize, schema: &Schema) -> Record {
        crate::contract::row::decode(self.row(row), schema.fields.len())
    }
}

/// A batch's column conformed to its field's type ([`FileAt::conform`]), downcast once a
/// batch.
enum Column<'b> {
    Int(&'b Int64Array),
    Str(&'b StringArray),
    Ts(&'b TimestampMicrosecondArray),
    Float(&'b Float64Array),
    Bool(&'b BooleanArray),
}

impl<'b> Column<'b> {
    /// `array`, of a read type ([`super::conform::read_type`]); any other is Wharf's bug, never a
    /// column read as null.
    fn of(array: &'b dyn Array, file: &FileAt) -> Result<Self> {
        let any = array.as_any();
        if let Some(ints) = any.downcast_ref::<Int64Array>() {
            Ok(Column::Int(ints))
        } else if let Some(texts) = any.downcast_ref::<StringArray>() {
            Ok(Column::Str(texts))
        } else if let Some(us) = any.downcast_ref::<TimestampMicrosecondArray>() {
            Ok(Column::Ts(us))
        } else if let Some(xs) = any.downcast_ref::<Float64Array>() {
            Ok(Column::Float(xs))
        } else if let Some(bs) = any.downcast_ref::<BooleanArray>() {
            Ok(Column::Bool(bs))
        } else {
            Err(Error::internal(format!(
                "{}: a column of {} was not conformed to its field's type",
                file.path.display(),
                array.data_type()
            )))
        }
    }

    /// Row `row`'s value.
    fn value(&self, row: usize) -> Value {
        match self {
            Column::Int(a) if a.is_valid(row) => Value::Int(a.value(row)),
            Column::Str(a) if a.is_valid(row) => Value::Str(a.value(row).into()),
            Column::Ts(a) if a.is_valid(row) => Value::Ts(Instant::from_micros(a.value(row))),
            Column::Float(a) if a.is_valid(row) => Value::float(a.value(row)),
            Column::Bool(a) if a.is_valid(row) => Value::Bool(a.value(row)),
            _ => Value::Null,
        }
    }

    /// Appends row `row`'s value, encoded, to `out`.
    fn push(&self, row: usize, out: &mut Vec<u8>) {
        use crate::contract::row;
        match self {
            Column::Int(a) if a.is_valid(row) => row::push_int(out, a.value(row)),
            Column::Str(a) if a.is_valid(row) => row::push_str(out, a.value(row).as_bytes()),
            Column::Ts(a) if a.is_valid(row) => {
                row::push_ts(out, Instant::from_micros(a.value(row)))
            }
            Column::Float(_) | Column::Bool(_) => row::push_value(out, &self.value(row)),
            _ => row::push_null(out),
        }
    }
}

/// Row `row` of a batch's conformed `columns` as a record (a field the file lacks reads as
/// null).
fn record(columns: &[Option<ArrayRef>], file: &FileAt, row: usize) -> Result<Record> {
    columns
        .iter()
        .map(|column| match column {
            Some(array) => Ok(Column::of(array.as_ref(), file)?.value(row)),
            None => Ok(Value::Null),
        })
        .collect::<Result<Vec<_>>>()
        .map(Vec::into_boxed_slice)
}

impl Iterator for Rows<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if let (Some((columns, rows, row)), Some((file, ..))) = (&mut self.batch, &self.current)
                && *row < *rows
            {
                *row += 1;
                return Some(record(columns, file, *row - 1));
            }
            self.batch = None;
            // A file's end moves on to the next file; the last file's end is the end.
            let more = match self.current {
                Some(_) => self.next_batch().map(|_| true),
                None => self.next_file(),
            };
            match more {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.current = None;
                    self.files = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
