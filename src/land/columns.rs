//! EFFECTS. The lake's schema history (CONTRACT.md §1.1): the columns landings added
//! under `unknown_fields = "add"`, each with the landing that added it, kept in
//! `columns.json` in the state root beside the manifest.
//!
//! [`evolve`] gives a run its schema: the config's, then every column the lake added
//! (from then on a declared, nullable field of the lake, so a value of another type is
//! `bad_type`), then, under `add`, the columns this input adds ([`Discovery`]).
//! [`record`] writes the new ones down before the landing publishes: a crash between
//! the two leaves a column the lake's next landing carries anyway. The file only
//! remembers what the lake carries: when it is gone, [`history`] rebuilds it from the
//! lake ([`PublishRoot::added_columns`]) and [`restore`] writes it down again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::contract::added::Discovery;
use crate::contract::{FieldType, LineBytes, UnknownFields};
use crate::error::{Error, Result};
use crate::input;
use crate::plan::Plan;
use crate::store::state;
use crate::store::state_store::StateStore;

use super::root::PublishRoot;
use crate::contract::added::addable_name;

/// Who added a column when the lake no longer says.
pub const UNKNOWN: &str = "unknown (rebuilt from the lake)";

/// A lake column's name, when it is one a landing could have added to `config`'s lake.
pub(crate) fn beyond_declared(config: &Config, name: &str) -> bool {
    let mut declared = config.schema.clone();
    declared.fields.retain(|f| !f.added);
    addable_name(name, &declared)
}

/// One column a landing added.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    /// The landing that added it: its input's name and SHA-256, and when.
    pub input_name: String,
    pub input_sha256: String,
    pub added_at: String,
}

const HISTORY: &str = "columns.json";

fn history_path(config: &Config) -> PathBuf {
    match StateStore::state(config) {
        Ok(store) => store.shown(HISTORY),
        Err(_) => config.state_root.join(HISTORY),
    }
}

/// The lake's added columns, oldest first; none when no landing added one. When
/// `columns.json` is gone they are rebuilt from the lake ([`PublishRoot::added_columns`]).
pub fn history(config: &Config) -> Result<Vec<AddedColumn>> {
    match recorded(config)? {
        Some(columns) => Ok(columns),
        None => from_lake(config),
    }
}

/// The lake's added columns ([`PublishRoot::added_columns`]); none from a Delta table
/// refused for its features (§12.8), so that the plan which follows refuses it by name
/// (`table_feature`) instead of this step failing.
fn from_lake(config: &Config) -> Result<Vec<AddedColumn>> {
    match PublishRoot::added_columns(config) {
        Err(Error::TableFeature { .. }) => Ok(Vec::new()),
        other => other,
    }
}

/// The history as `columns.json` holds it, `None` when there is no such file. One that
/// cannot be read is an error, never rebuilt over: a human deletes it to rebuild.
pub fn recorded(config: &Config) -> Result<Option<Vec<AddedColumn>>> {
    let store = StateStore::state(config)?;
    match store.read(HISTORY, "read the schema history", "check its permissions")? {
        Some(text) => serde_json::from_slice(&text)
            .map(Some)
            .map_err(|e| Error::CorruptHistory {
                path: store.shown(HISTORY),
                detail: e.to_string(),
            }),
        None => Ok(None),
    }
}

/// A landing's first step (under the lock): the history, as [`history`] gives it; when
/// `columns.json` is gone and the lake carries added columns, writes them down again and
/// says so on stderr, once.
pub fn restore(config: &Config) -> Result<Vec<AddedColumn>> {
    if let Some(columns) = recorded(config)? {
        return Ok(columns);
    }
    let columns = from_lake(config)?;
    if columns.is_empty() {
        return Ok(columns);
    }
    write(config, &columns)?;
    let names: Vec<String> = columns
        .iter()
        .map(|c| format!("{} ({})", c.name, c.ty))
        .collect();
    eprintln!(
        "wharf: {} was missing; rebuilt the schema history from the lake: {}",
        history_path(config).display(),
        names.join(", ")
    );
    Ok(columns)
}

fn write(config: &Config, columns: &[AddedColumn]) -> Result<()> {
    StateStore::state(config)?.write(HISTORY, &state::pretty(&columns, "schema history")?)
}

/// The run's config: the lake's added columns (`history`) declared, and under `add` the
/// input's new ones (read once, before the engine's census), which the plan announces.
pub fn evolve(
    config: &Config,
    history: Vec<AddedColumn>,
    path: &Path,
) -> Result<(Config, Vec<(String, FieldType)>)> {
    let mut evolved = config.clone();
    for column in history {
        let ty = FieldType::parse(&column.ty).ok_or_else(|| Error::CorruptHistory {
            path: history_path(config),
            detail: format!("column {:?} has no type Wharf knows", column.name),
        })?;
        evolved.schema.add_column(&column.name, ty);
    }
    if config.schema.unknown_fields != UnknownFields::Add {
        return Ok((evolved, Vec::new()));
    }
    let input = input::open(path, &config.set_marker)?;
    let mut discovery = Discovery::default();
    let schema = &evolved.schema;
    input::scan_input(&input, config.max_line_bytes, &mut |_| true, |_, line| {
        if let LineBytes::Kept(bytes) = line {
            discovery.feed(bytes, schema);
        }
    })?;
    let added = discovery.columns(&evolved.schema);
    for (name, ty) in &added {
        evolved.schema.add_column(name, *ty);
    }
    Ok((evolved, added))
}

/// Writes the plan's added columns into the history, once each, before it publishes.
/// A publish also writes down a history rebuilt with nothing in it, so later runs read
/// the file rather than every footer of the lake again.
pub fn record(config: &Config, plan: &Plan, now: &str) -> Result<()> {
    let mut columns = match recorded(config)? {
        Some(_) if plan.added_columns.is_empty() => return Ok(()),
        Some(columns) => columns,
        None => PublishRoot::added_columns(config)?,
    };
    for (name, ty) in &plan.added_columns {
        if columns.iter().all(|c| &c.name != name) {
            columns.push(AddedColumn {
                name: name.clone(),
                ty: ty.name().to_owned(),
                input_name: plan.input_name.clone(),
                input_sha256: plan.input_sha256.clone(),
                added_at: now.to_owned(),
            });
        }
    }
    write(config, &columns)
}
