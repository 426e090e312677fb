//! Other writers' columns read as the declared field's type (CONTRACT.md §12.9): [`column`]
//! converts one Arrow column with arrow's own cast kernels, and [`Loss`] is what it
//! refuses. A column Wharf wrote (Int64, Utf8, Timestamp(µs, zoned), Float64, Boolean) is
//! returned as it is; any other encoding a declared field may have (large, view,
//! dictionary and binary strings; every integer width; timestamps from seconds to
//! nanoseconds and Spark's INT96) is cast, and every present value comes back exactly or
//! the column is refused naming the first row that would not: **a present value is never
//! read as null**. [`FileAt`] names a file's row groups, so a refusal names the group.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampNanosecondType;
use arrow_array::{Array, ArrayRef, new_null_array};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType, TimeUnit};

use crate::contract::{Field, FieldType};
use crate::error::{Error, Result};

/// Why a column cannot be read as its declared field: the row (of the array) where it
/// shows first, what is wrong, and what the operator can do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    pub row: usize,
    pub reason: &'static str,
    pub advice: &'static str,
}

/// The Arrow type a field's values are read in: the type Wharf writes.
pub fn read_type(ty: FieldType) -> DataType {
    match ty {
        FieldType::String => DataType::Utf8,
        FieldType::Int => DataType::Int64,
        FieldType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        FieldType::Float => DataType::Float64,
        FieldType::Bool => DataType::Boolean,
    }
}

/// Whether `found` is read as `ty` with no conversion: the types Wharf writes (a zoned
/// microsecond timestamp in any zone, as every zone names the same instants).
fn is_read_type(found: &DataType, ty: FieldType) -> bool {
    match (found, ty) {
        (DataType::Timestamp(TimeUnit::Microsecond, Some(_)), FieldType::Timestamp) => true,
        _ => *found == read_type(ty),
    }
}

/// `array` as `field`'s read type ([`read_type`]); `int96` when the file stores the
/// column as INT96 (Spark's instant, read by parquet as a zoneless nanosecond timestamp).
pub fn column(array: &ArrayRef, field: &Field, int96: bool) -> Result<ArrayRef, Loss> {
    let found = array.data_type();
    if is_read_type(found, field.ty) {
        return Ok(array.clone());
    }
    let whole = |(reason, advice)| Loss {
        row: first_present(array).unwrap_or(0),
        reason,
        advice,
    };
    if *found == DataType::Null {
        return Ok(new_null_array(&read_type(field.ty), array.len()));
    }
    // A dictionary's values are checked as the values they are, unpacked (lossless).
    if let DataType::Dictionary(_, values) = found
        && let Ok(unpacked) = arrow_cast::cast(array.as_ref(), values)
    {
        return column(&unpacked, field, int96);
    }
    if let Some(why) = refused(found, field.ty, int96) {
        return Err(whole(why));
    }
    let target = read_type(field.ty);
    let options = CastOptions {
        safe: true,
        ..CastOptions::default()
    };
    // A safe cast turns what it cannot convert into null: each new null is a loss.
    let cast =
        cast_with_options(array.as_ref(), &target, &options).map_err(|_| whole(OTHER_TYPE))?;
    if let Some(row) = first_lost(array.as_ref(), cast.as_ref()) {
        return Err(Loss {
            row,
            reason: out_of_range(field.ty),
            advice: advice_range(field.ty),
        });
    }
    if let DataType::Timestamp(TimeUnit::Nanosecond, _) = found
        && let Some(row) = first_sub_micro(array.as_ref())
    {
        return Err(Loss {
            row,
            reason: "a timestamp with nanoseconds past the microseconds Wharf keeps",
            advice: "truncate the column to microseconds with the tool that wrote it \
                     (Spark: spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS), then rerun",
        });
    }
    Ok(cast)
}

/// A type the field cannot be read from, and what to do.
const OTHER_TYPE: (&str, &str) = (
    "values of a type the field cannot be read from",
    "rewrite the column in a type the config's field reads (docs/delta.md, \
                           \"Other writers' files\") with the tool that wrote it, or declare the \
                           field's type to match, then rerun",
);

/// Why a column of type `found` cannot hold `ty`'s values, and what to do; none when it
/// can.
fn refused(found: &DataType, ty: FieldType, int96: bool) -> Option<(&'static str, &'static str)> {
    use DataType as D;
    let ok = match (found, ty) {
        (D::Dictionary(_, values), _) => return refused(values, ty, int96),
        (
            D::Utf8 | D::LargeUtf8 | D::Utf8View | D::Binary | D::LargeBinary | D::BinaryView,
            FieldType::String,
        ) => true,
        (
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64,
            FieldType::Int,
        ) => true,
        (D::Timestamp(_, Some(_)), FieldType::Timestamp) => true,
        (D::Timestamp(TimeUnit::Nanosecond, None), FieldType::Timestamp) if int96 => true,
        (D::Timestamp(_, None), FieldType::Timestamp) => {
            return Some((
                "a timestamp without a time zone (TIMESTAMP_NTZ): a wall-clock reading, not \
                 the instant the field declares",
                "rewrite the column as a UTC-adjusted timestamp with the tool that wrote it \
                 (or land into a table whose column is one), then rerun",
            ));
        }
        (D::Float16 | D::Float32 | D::Float64, FieldType::Float) => true,
        (D::Boolean, FieldType::Bool) => true,
        _ => false,
    };
    if ok { None } else { Some(OTHER_TYPE) }
}

fn out_of_range(ty: FieldType) -> &'static str {
    match ty {
        FieldType::String => "bytes that are not valid UTF-8",
        FieldType::Int => "an integer beyond the 64-bit range the field holds",
        FieldType::Timestamp => "a timestamp beyond the microsecond range the field holds",
        FieldType::Float | FieldType::Bool => "a value the field's type cannot hold",
    }
}

fn advice_range(ty: FieldType) -> &'static str {
    match ty {
        FieldType::String => {
            "rewrite the column as UTF-8 strings with the tool that wrote it (or correct the \
             value), then rerun"
        }
        _ => "correct the value with the tool that wrote it, then rerun",
    }
}

/// The first row `array` holds a value at.
fn first_present(array: &ArrayRef) -> Option<usize> {
    let nulls = array.logical_nulls();
    (0..array.len()).find(|&i| nulls.as_ref().is_none_or(|n| n.is_valid(i)))
}

/// The first row `from` holds a value at and `to` does not.
fn first_lost(from: &dyn Array, to: &dyn Array) -> Option<usize> {
    let lost_none = from.logical_null_count() == to.logical_null_count();
    if lost_none {
        return None;
    }
    let (before, after) = (from.logical_nulls(), to.logical_nulls());
    (0..from.len()).find(|&i| {
        before.as_ref().is_none_or(|n| n.is_valid(i))
            && after.as_ref().is_some_and(|n| n.is_null(i))
    })
}

/// The first row of a nanosecond timestamp column whose value is not a whole microsecond
/// (the cast divides, dropping them: checked, not trusted).
fn first_sub_micro(array: &dyn Array) -> Option<usize> {
    let ns = array.as_primitive_opt::<TimestampNanosecondType>()?;
    (0..ns.len()).find(|&i| ns.is_valid(i) && ns.value(i) % 1000 != 0)
}

/// Checks, from its footer alone, a file another engine's reader (Spark's) will read:
/// each declared field's column must be of a type Wharf's rules read ([`column`]) and one
/// that reader reads exactly; Spark's Parquet reader fails on unsigned integers and on
/// nanosecond timestamps (INT96 aside) and does not check binary is UTF-8, so those are
/// refused here by name, before the job.
pub fn check_for_spark(
    path: &Path,
    metadata: &parquet::file::metadata::ParquetMetaData,
    fields: &[Field],
) -> Result<()> {
    let file = metadata.file_metadata();
    let arrow =
        parquet::arrow::parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata())
            .map_err(|e| Error::CorruptState {
                path: path.to_owned(),
                detail: e.to_string(),
            })?;
    let at = FileAt::new(path, metadata, None);
    for field in fields {
        let Some(column) = arrow
            .fields()
            .iter()
            .rev()
            .find(|c| *c.name() == field.name)
        else {
            continue;
        };
        let found = column.data_type();
        let int96 = at.int96.contains(&field.name);
        let why = refused(found, field.ty, int96).or_else(|| spark_cannot_read(found, int96));
        if let Some((reason, advice)) = why {
            let loss = Loss {
                row: 0,
                reason,
                advice,
            };
            return Err(at.refusal(field, found, int96, 0, loss));
        }
    }
    Ok(())
}

/// Why Spark's Parquet reader cannot read a column of `found` exactly, if it cannot.
fn spark_cannot_read(found: &DataType, int96: bool) -> Option<(&'static str, &'static str)> {
    use DataType as D;
    let found = match found {
        D::Dictionary(_, values) => values.as_ref(),
        other => other,
    };
    let unreadable = match found {
        D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => true,
        D::Timestamp(TimeUnit::Nanosecond, _) => !int96,
        // Spark passes binary through as text without checking it is UTF-8.
        D::Binary | D::LargeBinary | D::BinaryView => true,
        _ => false,
    };
    unreadable.then_some((
        "a type the Spark engine's Parquet reader cannot read exactly (unsigned integers, \
         nanosecond timestamps, binary it does not check is UTF-8)",
        "land this batch with the local engine (--engine local), which reads it exactly, or \
         rewrite the column as a signed integer, a microsecond timestamp or a UTF-8 string \
         with the tool that wrote it",
    ))
}

/// A column of a published file the declared field cannot read exactly, as
/// [`Error::ForeignValue`] reports it.
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: column `{column}` ({found}, row group {row_group}) holds {reason}; the config \
     declares `{column}` {declared} and Wharf reads every value exactly or not at all, so \
     nothing was written. To land: {advice}",
    path = path.display()
)]
pub struct Unreadable {
    pub path: PathBuf,
    pub column: String,
    pub row_group: usize,
    pub found: String,
    pub declared: &'static str,
    pub reason: &'static str,
    pub advice: &'static str,
}

/// One file being read: its name for errors, the rows of its row groups in the order
/// they are read, and which of its Arrow columns are stored as INT96.
#[derive(Clone, Debug)]
pub struct FileAt {
    pub path: PathBuf,
    /// (row group, rows) in reading order.
    pub groups: Vec<(usize, u64)>,
    pub int96: Vec<String>,
}

impl FileAt {
    /// The file at `path` of `metadata`, reading `groups` (all when `None`).
    pub fn new(
        path: &Path,
        metadata: &parquet::file::metadata::ParquetMetaData,
        groups: Option<&[usize]>,
    ) -> FileAt {
        let all: Vec<usize> = (0..metadata.num_row_groups()).collect();
        let groups = groups.unwrap_or(&all);
        let int96 = metadata
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .filter(|c| {
                c.path().parts().len() == 1 && c.physical_type() == parquet::basic::Type::INT96
            })
            .map(|c| c.name().to_owned())
            .collect();
        FileAt {
            path: path.to_owned(),
            groups: groups
                .iter()
                .map(|&g| (g, metadata.row_group(g).num_rows().max(0) as u64))
                .collect(),
            int96,
        }
    }

    /// The row group holding row `row` of what is read (counted from its first row).
    pub fn group_of(&self, row: u64) -> usize {
        let mut end = 0;
        for &(group, rows) in &self.groups {
            end += rows;
            if row < end {
                return group;
            }
        }
        self.groups.last().map_or(0, |&(g, _)| g)
    }

    /// `batch`'s columns as `fields`' read types: `at[i]` is field `i`'s column in the
    /// batch (none when the file lacks it), `first_row` the batch's first row's place.
    pub fn conform(
        &self,
        batch: &arrow_array::RecordBatch,
        fields: &[Field],
        at: &[Option<usize>],
        first_row: u64,
    ) -> Result<Vec<Option<ArrayRef>>> {
        fields
            .iter()
            .zip(at)
            .map(|(field, at)| {
                let Some(at) = *at else { return Ok(None) };
                let array = batch.column(at);
                let int96 = self.int96.contains(&field.name);
                column(array, field, int96)
                    .map(Some)
                    .map_err(|loss| self.refusal(field, array.data_type(), int96, first_row, loss))
            })
            .collect()
    }

    fn refusal(
        &self,
        field: &Field,
        found: &DataType,
        int96: bool,
        first_row: u64,
        loss: Loss,
    ) -> Error {
        Error::ForeignValue(Box::new(Unreadable {
            path: self.path.clone(),
            column: field.name.clone(),
            row_group: self.group_of(first_row + loss.row as u64),
            found: if int96 {
                "INT96 timestamp".to_owned()
            } else {
                found.to_string()
            },
            declared: field.ty.name(),
            reason: loss.reason,
            advice: loss.advice,
        }))
    }
}

#[cfg(test)]
mod tests;
