//! Where a published file's keys lie, for merge mode (CONTRACT.md §10.5): the index is
//! the files themselves. [`Footer`] reads a file's footer alone (its rows, and per row
//! group the key column's min and max from the Parquet statistics); [`Footer::may_hold`]
//! then probes the key column's bloom filter of each row group whose range holds one of
//! a batch's keys. A batch's reads are its candidate files' footers and filters, never a
//! list of every key, and nothing is kept beside the files: whatever the lake holds is
//! the index, so it cannot go stale or be lost.
//!
//! A file without statistics or a filter on the key (written before filters, or by
//! another writer) may hold any key: it is a candidate, read whole, never skipped.

use bytes::Bytes;
use parquet::bloom_filter::Sbbf;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use crate::contract::{FieldType, Schema, Value};
use crate::error::{Error, Result};

/// Reads `len` bytes of a file from `start`: a local file's, or a table object's by range.
pub type Fetch<'f> = dyn FnMut(u64, u64) -> Result<Bytes> + 'f;

/// Bytes read from a file's end first: its footer, most often whole.
const TAIL: u64 = 64 * 1024;

/// One published file's footer, as a merge consults it.
pub struct Footer {
    /// Relative to the publish root: `event_date=D/<name>.parquet`.
    pub path: String,
    pub rows: u64,
    /// The key column's index in the file, `None` when it lacks one.
    key_column: Option<usize>,
    /// Per row group, the key's min and max, `None` where the group has no statistics.
    ranges: Vec<Option<(Value, Value)>>,
    metadata: ParquetMetaData,
}

impl Footer {
    /// Reads the footer of the file `path` (relative to the root) of `len` bytes, its tail
    /// through `fetch`.
    pub fn read(path: &str, len: u64, schema: &Schema, fetch: &mut Fetch) -> Result<Footer> {
        let mut want = TAIL.min(len);
        let metadata = loop {
            let tail = fetch(len - want, want)?;
            let mut reader = ParquetMetaDataReader::new();
            match reader.try_parse_sized(&tail, len) {
                Ok(()) => break reader.finish().map_err(|e| corrupt(path, e))?,
                Err(ParquetError::NeedMoreData(needed)) if (needed as u64) > want => {
                    want = (needed as u64).min(len);
                }
                Err(e) => return Err(corrupt(path, e)),
            }
        };
        let field = &schema.fields[schema.key];
        let key_column = metadata
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.name() == field.name);
        let stored = key_column.map(|at| Stored::of(&metadata, at));
        let ranges = metadata
            .row_groups()
            .iter()
            .map(|group| {
                let stats = group.column(key_column?).statistics()?;
                let min = decode(field.ty, stored?, stats.min_bytes_opt()?)?;
                let max = decode(field.ty, stored?, stats.max_bytes_opt()?)?;
                Some((min, max))
            })
            .collect();
        Ok(Footer {
            path: path.to_owned(),
            rows: metadata.file_metadata().num_rows().max(0) as u64,
            key_column,
            ranges,
            metadata,
        })
    }

    /// The file's Parquet metadata.
    pub fn metadata(&self) -> &ParquetMetaData {
        &self.metadata
    }

    /// The smallest key the file may hold, `None` when a group has no statistics.
    pub fn min(&self) -> Option<&Value> {
        let mut min: Option<&Value> = None;
        for range in &self.ranges {
            let (low, _) = range.as_ref()?;
            min = Some(min.map_or(low, |m| m.min(low)));
        }
        min
    }

    /// The largest key the file may hold, `None` when a group has no statistics.
    pub fn max(&self) -> Option<&Value> {
        let mut max: Option<&Value> = None;
        for range in &self.ranges {
            let (_, high) = range.as_ref()?;
            max = Some(max.map_or(high, |m| m.max(high)));
        }
        max
    }

    /// Whether the file may hold one of `keys` (sorted ascending): a row group whose range
    /// holds one is asked its bloom filter, read through `fetch`. `false` only when the
    /// statistics and filters prove it holds none.
    pub fn may_hold(&self, keys: &[Value], fetch: &mut Fetch) -> Result<bool> {
        let Some(column) = self.key_column else {
            return Ok(!keys.is_empty());
        };
        for (group, range) in self.metadata.row_groups().iter().zip(&self.ranges) {
            let within = match range {
                Some((min, max)) => in_range(keys, min, max),
                None => keys,
            };
            if within.is_empty() {
                continue;
            }
            let chunk = group.column(column);
            let (Some(offset), Some(length)) =
                (chunk.bloom_filter_offset(), chunk.bloom_filter_length())
            else {
                return Ok(true);
            };
            let bytes = fetch(offset.max(0) as u64, length.max(0) as u64)?;
            let filter = Sbbf::from_bytes(&bytes).map_err(|e| corrupt(&self.path, e))?;
            let stored = Stored::of(&self.metadata, column);
            if within.iter().any(|key| probe(&filter, key, stored)) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// A [`Fetch`] of the local file `path`.
pub fn fetch_local(path: &std::path::Path) -> impl FnMut(u64, u64) -> Result<Bytes> + '_ {
    move |start, len| {
        use std::io::{Read, Seek, SeekFrom};
        let read = || -> std::io::Result<Bytes> {
            let mut file = std::fs::File::open(path)?;
            file.seek(SeekFrom::Start(start))?;
            let mut buf = vec![0; len as usize];
            file.read_exact(&mut buf)?;
            Ok(Bytes::from(buf))
        };
        read().map_err(|e| Error::CorruptState {
            path: path.to_owned(),
            detail: e.to_string(),
        })
    }
}

/// The keys of `keys` (sorted) within `min..=max`.
fn in_range<'k>(keys: &'k [Value], min: &Value, max: &Value) -> &'k [Value] {
    let start = keys.partition_point(|k| k < min);
    let end = keys.partition_point(|k| k <= max);
    &keys[start..end.max(start)]
}

/// Whether `filter` may hold `key`, hashed as the writer hashed the column's values.
fn probe(filter: &Sbbf, key: &Value, stored: Stored) -> bool {
    use parquet::basic::Type as Physical;
    // A filter hashes the value as the column stores it: an INT32 key another writer
    // wrote is probed as 4 bytes, never as Wharf's 8 (which would rule out keys it holds).
    match (key, stored.physical) {
        (Value::Int(n), Physical::INT64) => filter.check(n),
        (Value::Int(n), Physical::INT32) if stored.unsigned => {
            u32::try_from(*n).map_or(true, |v| filter.check(&v))
        }
        (Value::Int(n), Physical::INT32) => i32::try_from(*n).map_or(true, |v| filter.check(&v)),
        (Value::Str(s), Physical::BYTE_ARRAY) => filter.check(s.as_bytes()),
        // Any other key or storage is not ruled out.
        _ => true,
    }
}

/// How a file stores its key column: the physical type, and whether as unsigned.
#[derive(Clone, Copy, Debug)]
struct Stored {
    physical: parquet::basic::Type,
    unsigned: bool,
}

impl Stored {
    fn of(metadata: &ParquetMetaData, column: usize) -> Stored {
        use parquet::basic::{ConvertedType, LogicalType};
        let descr = metadata.file_metadata().schema_descr().column(column);
        let unsigned = match descr.logical_type_ref() {
            Some(LogicalType::Integer(int)) => !int.is_signed,
            _ => matches!(
                descr.converted_type(),
                ConvertedType::UINT_8
                    | ConvertedType::UINT_16
                    | ConvertedType::UINT_32
                    | ConvertedType::UINT_64
            ),
        };
        Stored {
            physical: descr.physical_type(),
            unsigned,
        }
    }
}

/// A statistic's bytes, as the key column stores them, as a key of type `ty`; none where
/// they do not read as one (the file is then read, never skipped).
fn decode(ty: FieldType, stored: Stored, bytes: &[u8]) -> Option<Value> {
    use parquet::basic::Type as Physical;
    match (ty, stored.physical, stored.unsigned) {
        (FieldType::Int, Physical::INT64, false) => {
            Some(Value::Int(i64::from_le_bytes(bytes.try_into().ok()?)))
        }
        (FieldType::Int, Physical::INT64, true) => Some(Value::Int(
            i64::try_from(u64::from_le_bytes(bytes.try_into().ok()?)).ok()?,
        )),
        (FieldType::Int, Physical::INT32, false) => Some(Value::Int(
            i32::from_le_bytes(bytes.try_into().ok()?).into(),
        )),
        (FieldType::Int, Physical::INT32, true) => Some(Value::Int(
            u32::from_le_bytes(bytes.try_into().ok()?).into(),
        )),
        (FieldType::String, Physical::BYTE_ARRAY, _) => {
            Some(Value::Str(std::str::from_utf8(bytes).ok()?.into()))
        }
        _ => None,
    }
}

fn corrupt(path: &str, e: parquet::errors::ParquetError) -> Error {
    Error::CorruptState {
        path: path.into(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::local::RowSet;
    use crate::engine::local::parquet::write_file;

    fn written(keys: &[i64]) -> (tempfile::TempDir, std::path::PathBuf, Schema) {
        let schema = crate::config::fixtures::orders().schema.clone();
        let events: Vec<crate::plan::Event> = keys
            .iter()
            .map(|&k| {
                let mut r = vec![Value::Null; schema.fields.len()];
                r[schema.key] = Value::Int(k);
                crate::plan::Event {
                    line: 0,
                    record: r.into_boxed_slice(),
                }
            })
            .collect();
        let rows = RowSet::from_events(schema.fields.len(), &events);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-00000.parquet");
        write_file(&path, &schema, &rows, 0..rows.len()).unwrap();
        (dir, path, schema)
    }

    /// A 32-bit key column another writer wrote, with bloom filters (DuckDB and Spark
    /// write them): its ranges read as keys, and its filters are probed as the 4-byte
    /// values they hash, so a file never looks as if it lacked a key it holds.
    #[test]
    fn a_32_bit_key_column_is_ranged_and_probed_as_it_is_stored() {
        use std::sync::Arc;
        let schema = crate::config::fixtures::orders().schema.clone();
        let name = schema.fields[schema.key].name.clone();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-0.parquet");
        let keys: Vec<i32> = (0..500).map(|k| k * 3).collect();
        let batch = arrow_array::RecordBatch::try_from_iter([(
            name.as_str(),
            Arc::new(arrow_array::Int32Array::from(keys.clone())) as arrow_array::ArrayRef,
        )])
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_bloom_filter_enabled(true)
            .build();
        let file = std::fs::File::create(&path).unwrap();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        let footer = Footer::read("p", len, &schema, &mut fetch_local(&path)).unwrap();
        assert_eq!(footer.min(), Some(&Value::Int(0)));
        assert_eq!(footer.max(), Some(&Value::Int(1497)));
        for key in [0, 3, 300, 1497] {
            let held = footer.may_hold(&[Value::Int(key)], &mut fetch_local(&path));
            assert!(held.unwrap(), "key {key} is in the file");
        }
        // The filter is consulted: most keys it lacks are ruled out (a few false positives).
        let ruled_out = (1..400)
            .step_by(3)
            .filter(|&k| {
                !footer
                    .may_hold(&[Value::Int(k)], &mut fetch_local(&path))
                    .unwrap()
            })
            .count();
        assert!(ruled_out > 100, "{ruled_out} of 133 absent keys ruled out");
    }

    #[test]
    fn a_file_holds_its_keys_by_range_and_filter_and_rules_out_others() {
        let keys: Vec<i64> = (0..2000).map(|k| k * 2).collect();
        let (_dir, path, schema) = written(&keys);
        let len = std::fs::metadata(&path).unwrap().len();
        let mut fetch = fetch_local(&path);
        let footer = Footer::read(
            "event_date=2024-03-01/part-00000.parquet",
            len,
            &schema,
            &mut fetch,
        )
        .unwrap();
        assert_eq!(footer.rows, 2000);
        assert_eq!(footer.min(), Some(&Value::Int(0)));
        assert_eq!(footer.max(), Some(&Value::Int(3998)));
        for k in [0, 2, 1000, 3998] {
            assert!(
                footer.may_hold(&[Value::Int(k)], &mut fetch).unwrap(),
                "{k}"
            );
        }
        assert!(
            !footer
                .may_hold(&[Value::Int(-1), Value::Int(4000)], &mut fetch)
                .unwrap()
        );
        // Odd keys lie within the range: the filter rules out nearly all of them.
        let hits = (0..2000)
            .filter(|k| {
                footer
                    .may_hold(&[Value::Int(k * 2 + 1)], &mut fetch)
                    .unwrap()
            })
            .count();
        assert!(hits < 100, "{hits} false positives of 2000");
    }
}
