//! `wharf status`: every published date, its owner and rows.

use super::emit;
use super::report::{self, inert};
use crate::config::{Config, TableFormat};
use crate::error::Result;
use crate::exit;
use crate::input::PartDigest;
use crate::land::commit;
use crate::store::state;
use std::collections::BTreeMap;

pub fn status(config: &Config, json: bool) -> Result<u8> {
    let manifest = state::read_manifest(config)?;
    // A Delta table's dates are its current version's, read from its log.
    let (published, table) = match config.table_format {
        TableFormat::Hive => (state::published(config, None, &manifest)?, None),
        TableFormat::Delta => {
            let found = commit::find(config)?;
            let version = found.snapshot.as_ref().map(|s| s.version());
            let url = found.table.url().to_owned();
            (
                commit::published(&found, None, &manifest),
                Some((url, version)),
            )
        }
    };
    let format = match config.table_format {
        TableFormat::Hive => "hive",
        TableFormat::Delta => "delta",
    };
    // Which parts each owning set had (§11.3), from its checkpoint.
    let mut parts: BTreeMap<String, Vec<PartDigest>> = BTreeMap::new();
    for owner in published.dates.values().filter_map(|p| p.owner.as_ref()) {
        if !parts.contains_key(&owner.input_name) {
            // A corrupt checkpoint is the landing's to report; status still shows the dates.
            let checkpoint = state::read_checkpoint(config, &owner.input_name)
                .ok()
                .flatten();
            let held = checkpoint
                .filter(|c| c.input_sha256 == owner.input_sha256)
                .map(|c| c.parts)
                .unwrap_or_default();
            parts.insert(owner.input_name.clone(), held);
        }
    }
    let parts_of = |name: &str| parts.get(name).filter(|p| !p.is_empty());
    if json {
        let dates: Vec<serde_json::Value> = published
            .dates
            .iter()
            .map(|(date, p)| {
                let entry = manifest.dates.get(&date.to_string());
                serde_json::json!({
                    "event_date": date,
                    "rows": p.rows,
                    "owner": p.owner.as_ref().map(|o| &o.input_name),
                    "owner_sha256": p.owner.as_ref().map(|o| &o.input_sha256),
                    "published_at": entry.map(|e| &e.published_at),
                    "owner_parts": p.owner.as_ref().and_then(|o| parts_of(&o.input_name)),
                })
            })
            .collect();
        let (url, version) = table.clone().unzip();
        let object = serde_json::json!({
            "product": config.product,
            "publish_root": url.unwrap_or_else(|| config.publish_root.display().to_string()),
            "table_format": format,
            "table_version": version.flatten(),
            "dates": dates,
        });
        emit(&object.to_string())?;
        return Ok(exit::SUCCESS);
    }
    if let Some((url, version)) = &table {
        let version = version.map_or("no commit yet".to_owned(), |v| format!("table version {v}"));
        emit(&report::table_line(&config.product, url, &version))?;
    }
    if published.dates.is_empty() {
        let root = table
            .as_ref()
            .map_or(config.publish_root.display().to_string(), |(url, _)| {
                url.clone()
            });
        emit(&format!(
            "{}: nothing published under {}",
            config.product,
            inert(&root)
        ))?;
    }
    for (date, p) in &published.dates {
        let owner = p
            .owner
            .as_ref()
            .map_or("unknown (not in the manifest)".to_owned(), |o| {
                format!(
                    "{} ({})",
                    inert(&o.input_name),
                    &o.input_sha256[..o.input_sha256.len().min(12)]
                )
            });
        let set = p
            .owner
            .as_ref()
            .and_then(|o| parts_of(&o.input_name))
            .map_or(String::new(), |parts| {
                format!("  set of {} parts", parts.len())
            });
        emit(&format!(
            "event_date={date}  {:>10} rows  {owner}{set}",
            p.rows
        ))?;
    }
    Ok(exit::SUCCESS)
}
