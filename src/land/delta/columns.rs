//! EFFECTS, reads only. A Delta table's part of the lake's schema history (CONTRACT.md
//! §1.1) rebuilt from the lake alone ([`crate::land::columns::history`]): the columns of the
//! current schema beyond the config's declared ones, each dated by the first version that
//! carries it and named by that commit's `commitInfo` ([`from_table`]).

use delta_kernel::SnapshotRef;
use delta_kernel::schema::{DataType, PrimitiveType};

use super::Table;
use crate::config::Config;
use crate::contract::FieldType;
use crate::error::Result;
use crate::land::columns::{AddedColumn, UNKNOWN, beyond_declared};

/// The table at `url`'s added columns, oldest landing first (none before its first
/// commit).
pub fn from_lake(config: &Config, url: &str) -> Result<Vec<AddedColumn>> {
    let table = Table::open(url)?;
    match table.snapshot()? {
        Some(snapshot) => from_table(config, &table, &snapshot),
        None => Ok(Vec::new()),
    }
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
