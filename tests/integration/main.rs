//! Wharf's integration tests: one binary, one module per concern. Every test lands real
//! files in a temporary product and reads back what was written: Parquet rows, quarantine
//! records, checkpoints and the run log.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used)]

#[path = "../kit/mod.rs"]
mod kit;

mod add;
mod classification;
mod cli;
mod decision;
mod diff;
mod engine;
mod landing;
mod lineage;
mod merge;
mod merge_files;
mod metrics_file;
mod paging;
mod progress;
mod prometheus;
mod quiet_logs;
mod ranking;
mod readers;
mod rerun;
mod rescue;
mod rules;
mod sets;
mod textfile_collector;
mod watch;
mod watching;
