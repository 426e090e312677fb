//! `wharf restore DATE`: brings back a date's newest trash generation, under the
//! product's lock, through [`PublishRoot::restore`]: on hive folders its files are swapped
//! in like a landing's ([`crate::land::hive::restore`]), on a Delta table one commit
//! re-adds them ([`crate::land::delta::restore`]). Either way the generation it replaces
//! enters the trash first (so a restore can be undone by another restore, and a failed
//! one loses nothing), and the manifest names the restored generation's owner, so the
//! next rerun of either input does the right thing (§5.4).

use crate::config::Config;
use crate::contract::Date;
use crate::error::Result;
use crate::land::root::PublishRoot;
use crate::land::{lock, runlog};
use crate::plan::Counts;

/// What a restore brought back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    pub date: Date,
    pub owner: Option<String>,
    pub rows: u64,
}

/// Restores `date`'s newest trash generation.
pub fn restore(config: &Config, date: Date) -> Result<Restored> {
    let started = std::time::Instant::now();
    let _lock = lock::acquire(config)?;
    PublishRoot::open(config)?.restore(config, date, started)
}

/// The run log's line of a restore of `date` to `owner`'s generation of `rows` rows.
pub(crate) fn log_restore(
    config: &Config,
    date: Date,
    owner: &Option<String>,
    rows: u64,
    now: String,
    started: std::time::Instant,
    table_version: Option<u64>,
) -> Result<()> {
    runlog::append(
        config,
        &runlog::RunRecord {
            time: now,
            product: config.product.clone(),
            input_name: owner.clone().unwrap_or_default(),
            input_sha256: String::new(),
            action: "restored".into(),
            reason: None,
            dates: vec![date.to_string()],
            counts: Counts {
                keys: rows,
                ..Counts::default()
            },
            unranked: false,
            duration_ms: started.elapsed().as_millis() as u64,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            swaps: Vec::new(),
            // A restore moves published files: no engine reads rows.
            engine: "local".to_owned(),
            engine_settings: Default::default(),
            table_version,
            parts: Vec::new(),
            run_id: crate::land::new_run_id(),
            memory: None,
        },
    )
}
