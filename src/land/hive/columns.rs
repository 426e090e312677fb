//! EFFECTS, reads only. Hive's part of the lake's schema history (CONTRACT.md §1.1)
//! rebuilt from the lake alone: the published files' footers, never a row, each column
//! beyond the config's declared ones named by the manifest's owner of the earliest date
//! whose files carry it.

use delta_kernel::arrow::datatypes::DataType as ArrowType;

use crate::config::Config;
use crate::contract::FieldType;
use crate::error::{Error, Result};
use crate::land::columns::{AddedColumn, UNKNOWN, beyond_declared};
use crate::store::{parquet_files, state};

/// The hive lake's added columns, from the footers of the files under the publish root.
pub fn from_folders(config: &Config) -> Result<Vec<AddedColumn>> {
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
