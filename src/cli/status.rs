//! `wharf status`: every published date, its owner and rows.

use super::emit;
use super::report::{self, inert};
use crate::config::Config;
use crate::error::Result;
use crate::exit;
use crate::input::PartDigest;
use crate::land::root::PublishRoot;
use crate::page::freshness::{self, Freshness};
use crate::plan::{self, Checkpoint, Landed, LandedState, Owner};
use crate::store::state;
use std::collections::BTreeMap;

pub fn status(config: &Config, json: bool) -> Result<u8> {
    // A Delta table's dates are its current version's, read from its log; what landed is
    // the state root's memory and, where it has none, the log's (§12.5).
    let root = PublishRoot::open(config)?;
    let recalled = root.recall(config, false)?;
    let memory = recalled.describe(config)?;
    let manifest = recalled.manifest.clone();
    let published = root.published(config, None, &manifest)?;
    let table = root.table();
    let format = root.format();
    // Which parts each owning set had (§11.3), from its checkpoint; by identity too: a
    // date still owned by an earlier landing of the same name was not published by the
    // parts the checkpoint now lists.
    let key = |o: &Owner| (o.input_name.clone(), o.input_sha256.clone());
    let mut parts: BTreeMap<(String, String), Vec<PartDigest>> = BTreeMap::new();
    for owner in published.dates.values().filter_map(|p| p.owner.as_ref()) {
        parts
            .entry(key(owner))
            .or_insert_with(|| state::owner_parts(config, owner));
    }
    let parts_of = |o: &Owner| parts.get(&key(o)).filter(|p| !p.is_empty());
    let fresh = freshness::of(config);
    // Every landed input's standing (§5.4), from its checkpoint and the manifest.
    let inputs: Vec<(Checkpoint, Landed)> = recalled
        .checkpoints(config)?
        .into_iter()
        .map(|c| {
            let standing = plan::landed(&c, &published);
            (c, standing)
        })
        .collect();
    let added = crate::land::columns::history(config)?; // §1.1
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
                    "run_id": entry.and_then(|e| e.run_id.as_ref()),
                    "owner_parts": p.owner.as_ref().and_then(parts_of),
                })
            })
            .collect();
        let (url, version) = table.clone().unzip();
        let object = serde_json::json!({
            "product": config.product,
            "publish_root": url.unwrap_or_else(|| config.lake.location()),
            "table_format": format,
            "table_version": version.flatten(),
            "dates": dates,
            "freshness": freshness_json(&fresh),
            "inputs": inputs.iter().map(|(c, landed)| serde_json::json!({
                "input_name": c.input_name,
                "input_sha256": c.input_sha256,
                "landed": landed,
            })).collect::<Vec<_>>(),
            "added_columns": added,
            "memory": memory,
        });
        emit(&object.to_string())?;
        return Ok(exit::SUCCESS);
    }
    if let Some((url, version)) = &table {
        let version = version.map_or("no commit yet".to_owned(), |v| format!("table version {v}"));
        emit(&report::table_line(&config.product, url, &version))?;
    }
    if let Some(memory) = &memory {
        emit(memory)?;
    }
    if published.dates.is_empty() {
        let root = table
            .as_ref()
            .map_or(config.lake.location(), |(url, _)| url.clone());
        emit(&format!(
            "{}: nothing published under {}",
            config.product,
            inert(&root)
        ))?;
    }
    // Each owning set once, after the dates: its parts are the same on every date it owns.
    let mut sets: Vec<(&Owner, &Vec<PartDigest>)> = Vec::new();
    for (date, p) in &published.dates {
        let owner = p
            .owner
            .as_ref()
            .map_or("unknown (not in the manifest)".to_owned(), |o| {
                format!("{} ({})", inert(&o.input_name), short(&o.input_sha256))
            });
        let set = p.owner.as_ref().and_then(|o| Some((o, parts_of(o)?)));
        if let Some((o, parts)) = set
            && !sets.iter().any(|(seen, _)| *seen == o)
        {
            sets.push((o, parts));
        }
        let set = set.map_or(String::new(), |(_, parts)| {
            format!("  set of {} parts", parts.len())
        });
        emit(&format!(
            "event_date={date}  {:>10} rows  {owner}{set}",
            p.rows
        ))?;
    }
    for (owner, parts) in sets {
        emit(&parts_text(owner, parts))?;
    }
    for column in &added {
        emit(&format!(
            "column {} ({})  added by {} ({}) at {}",
            inert(&column.name),
            column.ty,
            inert(&column.input_name),
            short(&column.input_sha256),
            column.added_at
        ))?;
    }
    emit(&inputs_text(&inputs))?;
    if fresh.max_silence.is_some() || fresh.last_publish.is_some() {
        let stale = if fresh.breached() { "STALE: " } else { "" };
        emit(&format!("freshness: {stale}{}", fresh.describe()))?;
    }
    Ok(exit::SUCCESS)
}

fn freshness_json(fresh: &Freshness) -> serde_json::Value {
    serde_json::json!({
        "last_publish": fresh.last_publish,
        "age_seconds": fresh.age.map(|a| a.as_secs()),
        "max_silence_seconds": fresh.max_silence.map(|m| m.as_secs()),
        "breach": fresh.breached(),
    })
}

/// Landed inputs a text status names; `--json` has them all.
const INPUTS_LISTED: usize = 20;

/// How many landed inputs own their dates, and each that does not: superseded (by which
/// input, when) or its dates gone.
fn inputs_text(inputs: &[(Checkpoint, Landed)]) -> String {
    let owning = inputs
        .iter()
        .filter(|(_, l)| l.state == LandedState::Owns)
        .count();
    let mut out = format!(
        "landed inputs: {}  ({owning} own their dates, {} do not)",
        inputs.len(),
        inputs.len() - owning
    );
    let others: Vec<&(Checkpoint, Landed)> = inputs
        .iter()
        .filter(|(_, l)| l.state != LandedState::Owns)
        .collect();
    for (c, landed) in others.iter().take(INPUTS_LISTED) {
        out.push_str(&format!(
            "\n  {}  landed {}  {}",
            inert(&c.input_name),
            plan::landed::short_time(&landed.published_at),
            inert(&landed.describe())
        ));
    }
    if others.len() > INPUTS_LISTED {
        out.push_str(&format!(
            "\n  … and {} more (wharf status --json lists them all)",
            others.len() - INPUTS_LISTED
        ));
    }
    out
}

/// The parts a text status lists of one set; the rest are counted (`--json` has all).
const PARTS_LISTED: usize = 20;

/// A hash as the text status shows it.
fn short(sha256: &str) -> &str {
    &sha256[..sha256.len().min(12)]
}

/// The parts of set `owner`: a heading with their number and bytes, then one line per part
/// (name, size, short hash) up to [`PARTS_LISTED`], then how many more.
fn parts_text(owner: &Owner, parts: &[PartDigest]) -> String {
    let bytes: u64 = parts.iter().map(|p| p.size).sum();
    let listed = &parts[..parts.len().min(PARTS_LISTED)];
    let names: Vec<String> = listed.iter().map(|p| inert(&p.name)).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let mut out = format!(
        "{} ({}): set of {} parts, {bytes} bytes",
        inert(&owner.input_name),
        short(&owner.input_sha256),
        parts.len()
    );
    for (name, part) in names.iter().zip(listed) {
        out.push_str(&format!(
            "\n  {name:<width$}  {:>12} bytes  {}",
            part.size,
            short(&part.sha256)
        ));
    }
    if parts.len() > listed.len() {
        out.push_str(&format!(
            "\n  … and {} more (wharf status --json lists them all)",
            parts.len() - listed.len()
        ));
    }
    out
}
