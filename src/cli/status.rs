//! `wharf status`: every published date, its owner and rows.

use super::{emit, report::inert};
use crate::config::Config;
use crate::error::Result;
use crate::exit;
use crate::store::state;

pub fn status(config: &Config, json: bool) -> Result<u8> {
    let manifest = state::read_manifest(config)?;
    let published = state::published(config, None, &manifest)?;
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
        emit(&format!("event_date={date}  {:>10} rows  {owner}", p.rows))?;
    }
    Ok(exit::SUCCESS)
}
