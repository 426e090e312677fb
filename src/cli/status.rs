//! `wharf status`: every published date, its owner and rows.

use super::{emit, report::inert};
use crate::config::Config;
use crate::error::Result;
use crate::exit;
use crate::input::PartDigest;
use crate::store::state;
use std::collections::BTreeMap;

pub fn status(config: &Config, json: bool) -> Result<u8> {
    let manifest = state::read_manifest(config)?;
    let published = state::published(config, None, &manifest)?;
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
        let object = serde_json::json!({ "product": config.product, "publish_root": config.publish_root, "dates": dates });
        emit(&object.to_string())?;
        return Ok(exit::SUCCESS);
    }
    if published.dates.is_empty() {
        emit(&format!(
            "{}: nothing published under {}",
            config.product,
            config.publish_root.display()
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
