//! [`Rows`]: a partition's published rows, one at a time, in file-name order (each file
//! is sorted by key and the files split the keys in order, so the whole is in key order).
//! Only one batch of one file is decoded at a time, whatever the partition's size.
//! The files are a hive folder's, or a Delta version's fetched through its store; they
//! are decoded a batch of columns at a time ([`BATCH_ROWS`] rows).

use std::path::{Path, PathBuf};

use arrow_array::{
    Array, BooleanArray, Float64Array, Int64Array, RecordBatch, RecordBatchReader, StringArray,
    TimestampMicrosecondArray,
};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

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
    /// The file being read, its batches, and the batch being read with the next row.
    current: Option<(PathBuf, ParquetRecordBatchReader)>,
    batch: Option<(RecordBatch, usize)>,
    /// Column position in the batch → field index in the schema, per file.
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
        let corrupt = |path: &Path, e: parquet::errors::ParquetError| Error::CorruptState {
            path: path.to_owned(),
            detail: e.to_string(),
        };
        let (path, builder) = match self.files.next() {
            None => return Ok(false),
            Some(Source::Path(path)) => {
                let file = std::fs::File::open(&path).map_err(|e| Error::CorruptState {
                    path: path.clone(),
                    detail: e.to_string(),
                })?;
                let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                    .map_err(|e| corrupt(&path, e))?
                    .with_batch_size(BATCH_ROWS)
                    .build();
                (path, builder)
            }
            Some(Source::Fetched(path, bytes)) => {
                let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
                    .map_err(|e| corrupt(&path, e))?
                    .with_batch_size(BATCH_ROWS)
                    .build();
                (path, builder)
            }
        };
        let reader = builder.map_err(|e| corrupt(&path, e))?;
        self.columns = reader
            .schema()
            .fields()
            .iter()
            .map(|f| self.schema.index_of(f.name()))
            .collect();
        self.current = Some((path, reader));
        Ok(true)
    }
}

/// Row `row` of `batch` as a record of `schema`, `columns` mapping the batch's columns to
/// its fields (a column the files lack, or of another type, reads as null).
fn record(schema: &Schema, columns: &[Option<usize>], batch: &RecordBatch, row: usize) -> Record {
    let mut record = vec![Value::Null; schema.fields.len()];
    for (at, column) in batch.columns().iter().enumerate() {
        let Some(Some(index)) = columns.get(at) else {
            continue;
        };
        if column.is_null(row) {
            continue;
        }
        let any = column.as_any();
        record[*index] = if let Some(ints) = any.downcast_ref::<Int64Array>() {
            Value::Int(ints.value(row))
        } else if let Some(texts) = any.downcast_ref::<StringArray>() {
            Value::Str(texts.value(row).into())
        } else if let Some(us) = any.downcast_ref::<TimestampMicrosecondArray>() {
            Value::Ts(Instant::from_micros(us.value(row)))
        } else if let Some(xs) = any.downcast_ref::<Float64Array>() {
            Value::float(xs.value(row))
        } else if let Some(bs) = any.downcast_ref::<BooleanArray>() {
            Value::Bool(bs.value(row))
        } else {
            Value::Null
        };
    }
    record.into_boxed_slice()
}

impl Iterator for Rows<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if let Some((batch, row)) = &mut self.batch {
                if *row < batch.num_rows() {
                    *row += 1;
                    return Some(Ok(record(self.schema, &self.columns, batch, *row - 1)));
                }
                self.batch = None;
            }
            if let Some((path, batches)) = &mut self.current {
                match batches.next() {
                    Some(Ok(batch)) => {
                        self.batch = Some((batch, 0));
                        continue;
                    }
                    Some(Err(e)) => {
                        let error = Error::CorruptState {
                            path: path.clone(),
                            detail: e.to_string(),
                        };
                        self.current = None;
                        self.files = Vec::new().into_iter();
                        return Some(Err(error));
                    }
                    None => self.current = None,
                }
            }
            match self.next_file() {
                Ok(true) => continue,
                Ok(false) => return None,
                Err(e) => {
                    self.files = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
    }
}
