//! EFFECTS, reads only. The lake's schema history (CONTRACT.md §1.1) rebuilt from the
//! lake alone, for when `columns.json` is gone (a new machine, a deleted state root): the
//! lake, not the state root, is what carries the columns, so a lost history must neither
//! refuse the product's own table nor land without a column the lake has.
//!
//! [`from_lake`] reads the columns beyond the config's declared ones: on Delta the current
//! schema, each dated by the first version that carries it and named by that commit's
//! `commitInfo` ([`from_table`]); on hive the published files' footers, never a row, each
//! named by the manifest's owner of the earliest date whose files carry it.

use delta_kernel::SnapshotRef;
use delta_kernel::arrow::datatypes::DataType as ArrowType;
use delta_kernel::schema::{DataType, PrimitiveType};

use super::Table;
use crate::config::{Config, Lake};
use crate::contract::FieldType;
use crate::contract::added::addable_name;
use crate::error::{Error, Result};
use crate::land::columns::AddedColumn;
use crate::store::{parquet_files, state};

/// Who added a column when the lake no longer says.
pub const UNKNOWN: &str = "unknown (rebuilt from the lake)";

/// The columns the lake carries beyond `config`'s declared fields, oldest landing first.
pub fn from_lake(config: &Config) -> Result<Vec<AddedColumn>> {
    match config.lake {
        Lake::Hive(_) => from_folders(config),
        Lake::Delta { .. } => {
            let table = Table::open(config)?;
            match table.snapshot()? {
                Some(snapshot) => from_table(config, &table, &snapshot),
                None => Ok(Vec::new()),
            }
        }
    }
}

/// A lake column's name, when it is one a landing could have added to `config`'s lake.
fn beyond_declared(config: &Config, name: &str) -> bool {
    let mut declared = config.schema.clone();
    declared.fields.retain(|f| !f.added);
    addable_name(name, &declared)
}

/// The Delta table's added columns at `snapshot`, each named by the commit that added it.
pub fn from_table(
    config: &Config,
    table: &Table,
    snapshot: &SnapshotRef,
) -> Result<Vec<AddedColumn>> {
    let mut found = Vec::new();
    for field in snapshot.schema().fields() {
        let name = field.name().as_str();
        let ty = match field.data_type() {
            DataType::Primitive(p) => delta_type(p),
            _ => None,
        };
        let Some(ty) = ty.filter(|_| beyond_declared(config, name)) else {
            continue; // a declared field, or one no landing adds: the schema check decides
        };
        let version = first_version_with(table, snapshot, name)?;
        let Some((input_name, input_sha256, added_at)) = landing_of(config, table, version)? else {
            continue; // another writer's column: the schema check refuses the table
        };
        let column = AddedColumn {
            name: name.to_owned(),
            ty: ty.name().to_owned(),
            input_name,
            input_sha256,
            added_at,
        };
        found.push((version, column));
    }
    found.sort_by_key(|(version, _)| *version);
    Ok(found.into_iter().map(|(_, c)| c).collect())
}

fn delta_type(ty: &PrimitiveType) -> Option<FieldType> {
    Some(match ty {
        PrimitiveType::String => FieldType::String,
        PrimitiveType::Long => FieldType::Int,
        PrimitiveType::Double => FieldType::Float,
        PrimitiveType::Boolean => FieldType::Bool,
        PrimitiveType::Timestamp => FieldType::Timestamp,
        _ => return None,
    })
}

/// The first version whose schema has `name`: a binary search, since Wharf only adds
/// columns. A version the log no longer holds counts as without it.
fn first_version_with(table: &Table, snapshot: &SnapshotRef, name: &str) -> Result<u64> {
    let (mut low, mut high) = (0, snapshot.version());
    while low < high {
        let middle = low + (high - low) / 2;
        let has = table
            .snapshot_at(middle)
            .is_ok_and(|s| s.schema().field(name).is_some());
        if has {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Ok(high)
}

/// The landing of `config`'s product that committed `version`, from its `commitInfo`
/// (input name, SHA-256, time); [`UNKNOWN`] when the log no longer holds the commit, and
/// `None` when the commit is another writer's: only this product's landings add columns.
fn landing_of(
    config: &Config,
    table: &Table,
    version: u64,
) -> Result<Option<(String, String, String)>> {
    let Some(bytes) = table.fetch_if_stored(&format!("_delta_log/{version:020}.json"))? else {
        return Ok(Some((UNKNOWN.to_owned(), String::new(), String::new())));
    };
    let info = bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
        .find_map(|action| action.get("commitInfo").cloned());
    let Some(info) = info else {
        return Ok(None);
    };
    let parameter = |key: &str| info["operationParameters"][key].as_str().map(str::to_owned);
    let ours = parameter("product").is_some_and(|p| p == config.product);
    let (true, Some(input_name)) = (ours, parameter("inputName")) else {
        return Ok(None);
    };
    let added_at = info["timestamp"]
        .as_i64()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string())
        .unwrap_or_default();
    Ok(Some((
        input_name,
        parameter("inputSha256").unwrap_or_default(),
        added_at,
    )))
}

/// The hive lake's added columns, from the footers of the files under the publish root.
fn from_folders(config: &Config) -> Result<Vec<AddedColumn>> {
    let manifest = state::read_manifest(config)?;
    let mut found: Vec<AddedColumn> = Vec::new();
    for (date, folder) in state::list_partitions(config.lake.publish_root())? {
        for path in parquet_files::parquet_paths(&folder)? {
            let reader = parquet_files::open_reader(&path)?;
            for (name, ty) in footer_columns(&reader, &path)? {
                if !beyond_declared(config, &name) {
                    continue;
                }
                match found.iter().find(|c| c.name == name) {
                    Some(c) if c.ty != ty.name() => {
                        return Err(Error::CorruptState {
                            path,
                            detail: format!(
                                "column {name:?} is {} here and {} in an earlier date's files",
                                ty.name(),
                                c.ty
                            ),
                        });
                    }
                    Some(_) => {}
                    None => {
                        let entry = manifest.dates.get(&date.to_string());
                        found.push(AddedColumn {
                            name,
                            ty: ty.name().to_owned(),
                            input_name: entry
                                .map_or(UNKNOWN.to_owned(), |e| e.owner.input_name.clone()),
                            input_sha256: entry
                                .map(|e| e.owner.input_sha256.clone())
                                .unwrap_or_default(),
                            added_at: entry.map(|e| e.published_at.clone()).unwrap_or_default(),
                        });
                    }
                }
            }
        }
    }
    Ok(found)
}

/// A published file's columns whose types a Wharf column has, from its footer alone.
fn footer_columns(
    reader: &parquet::file::reader::SerializedFileReader<std::fs::File>,
    path: &std::path::Path,
) -> Result<Vec<(String, FieldType)>> {
    use parquet::file::reader::FileReader;
    let meta = reader.metadata().file_metadata();
    let schema =
        parquet::arrow::parquet_to_arrow_schema(meta.schema_descr(), None).map_err(|e| {
            Error::CorruptState {
                path: path.to_owned(),
                detail: e.to_string(),
            }
        })?;
    Ok(schema
        .fields()
        .iter()
        .filter_map(|f| {
            let ty = match f.data_type() {
                ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => FieldType::String,
                ArrowType::Int64 => FieldType::Int,
                ArrowType::Float64 => FieldType::Float,
                ArrowType::Boolean => FieldType::Bool,
                ArrowType::Timestamp(_, _) => FieldType::Timestamp,
                _ => return None,
            };
            Some((f.name().clone(), ty))
        })
        .collect())
}
