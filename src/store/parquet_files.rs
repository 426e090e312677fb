//! Reading the published Parquet files: [`count_rows`] from the footers, [`parquet_paths`]
//! of a partition, [`read_partition`] as records, and [`hours_of`] a file's rows by hour (the console's picture of a day). The files are written by an engine (`crate::engine::local::parquet`).

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::contract::{Schema, Value};
use crate::error::{Error, Result};

/// The rows in every `*.parquet` file of `folder`, from the footers.
pub fn count_rows(folder: &Path) -> Result<u64> {
    let mut rows = 0;
    for path in parquet_paths(folder)? {
        rows += open_reader(&path)?.metadata().file_metadata().num_rows() as u64;
    }
    Ok(rows)
}

/// A reader of the published file `path`; one that cannot be read is corrupt state.
pub fn open_reader(path: &Path) -> Result<SerializedFileReader<File>> {
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
    let mut rows = Vec::new();
    for path in parquet_paths(folder)? {
        rows.extend(read_records(open_reader(&path)?, &path, schema)?);
    }
    Ok(rows)
}

/// The rows of one published file, read by `reader` (a local file, or an object's bytes
/// fetched from a table's store); `path` names it in errors.
pub fn read_records<R: parquet::file::reader::ChunkReader + 'static>(
    reader: SerializedFileReader<R>,
    path: &Path,
    schema: &Schema,
) -> Result<Vec<crate::contract::Record>> {
    use parquet::record::Field;
    let fail = |e: parquet::errors::ParquetError| Error::CorruptState {
        path: path.to_owned(),
        detail: e.to_string(),
    };
    let mut rows = Vec::new();
    for row in reader.get_row_iter(None).map_err(fail)? {
        let row = row.map_err(fail)?;
        let mut record = vec![Value::Null; schema.fields.len()];
        for (name, field) in row.get_column_iter() {
            let Some(index) = schema.index_of(name) else {
                continue;
            };
            record[index] = match field {
                Field::Long(n) => Value::Int(*n),
                Field::TimestampMicros(us) => Value::Ts(crate::contract::Instant::from_micros(*us)),
                Field::Str(s) => Value::Str(s.as_str().into()),
                Field::Double(x) => Value::float(*x),
                Field::Bool(b) => Value::Bool(*b),
                _ => Value::Null,
            };
        }
        rows.push(record.into_boxed_slice());
    }
    Ok(rows)
}

/// The rows of one published file by UTC hour of `schema`'s `partition_by_date_of`
/// instant, reading that column alone; `path` names the file in errors.
pub fn hours_of<R: parquet::file::reader::ChunkReader + 'static>(
    reader: SerializedFileReader<R>,
    path: &Path,
    schema: &Schema,
) -> Result<[u64; 24]> {
    use parquet::record::Field;
    use parquet::schema::types::Type;
    let fail = |detail: String| Error::CorruptState {
        path: path.to_owned(),
        detail,
    };
    let name = &schema.fields[schema.date_of].name;
    let file_schema = reader.metadata().file_metadata().schema();
    let column = file_schema
        .get_fields()
        .iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| fail(format!("no column {name}")))?;
    let projection = Type::group_type_builder(file_schema.name())
        .with_fields(vec![column.clone()])
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let mut hours = [0; 24];
    let rows = reader
        .get_row_iter(Some(projection))
        .map_err(|e| fail(e.to_string()))?;
    for row in rows {
        let row = row.map_err(|e| fail(e.to_string()))?;
        if let Some((_, Field::TimestampMicros(us))) = row.get_column_iter().next() {
            hours[crate::contract::Instant::from_micros(*us).hour_of_day()] += 1;
        }
    }
    Ok(hours)
}
