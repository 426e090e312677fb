//! [`Rows`]: a partition's published rows, one at a time, in file-name order (each file
//! is sorted by key and the files split the keys in order, so the whole is in key order).
//! Only one row group of one file is decoded at a time, whatever the partition's size.
//! The files are a hive folder's, or a Delta version's fetched through its store.

use std::path::{Path, PathBuf};

use parquet::file::reader::FileReader;
use parquet::record::reader::RowIter;
use parquet::record::{Field, Row};

use crate::contract::{Instant, Record, Schema, Value};
use crate::error::{Error, Result};
use crate::store::parquet_files;

/// One published file: a local path, or one already fetched (its name for errors).
pub enum Source {
    Path(PathBuf),
    Fetched(PathBuf, Box<dyn FileReader>),
}

/// The rows of every `*.parquet` file of a folder, as records of a schema.
pub struct Rows<'s> {
    schema: &'s Schema,
    files: std::vec::IntoIter<Source>,
    current: Option<(PathBuf, RowIter<'static>)>,
    /// Column position in the files → field index in the schema, per file.
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
            columns: Vec::new(),
        }
    }

    fn next_file(&mut self) -> Result<bool> {
        let (path, reader): (PathBuf, Box<dyn FileReader>) = match self.files.next() {
            None => return Ok(false),
            Some(Source::Path(path)) => {
                let reader = parquet_files::open_reader(&path)?;
                (path, Box::new(reader))
            }
            Some(Source::Fetched(path, reader)) => (path, reader),
        };
        let descr = reader.metadata().file_metadata().schema_descr_ptr();
        self.columns = descr
            .columns()
            .iter()
            .map(|c| self.schema.index_of(c.name()))
            .collect();
        let rows = RowIter::from_file_into(reader);
        self.current = Some((path, rows));
        Ok(true)
    }

    fn record(&self, row: &Row) -> Record {
        let mut record = vec![Value::Null; self.schema.fields.len()];
        for (at, (_, field)) in row.get_column_iter().enumerate() {
            let Some(Some(index)) = self.columns.get(at) else {
                continue;
            };
            record[*index] = match field {
                Field::Long(n) => Value::Int(*n),
                Field::TimestampMicros(us) => Value::Ts(Instant::from_micros(*us)),
                Field::Str(s) => Value::Str(s.as_str().into()),
                _ => Value::Null,
            };
        }
        record.into_boxed_slice()
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if let Some((path, rows)) = &mut self.current {
                match rows.next() {
                    Some(Ok(row)) => return Some(Ok(self.record(&row))),
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
