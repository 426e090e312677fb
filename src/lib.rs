//! Wharf lands closed JSONL event files into a Hive-partitioned Parquet dataset safely.
//!
//! Three parts: [`contract`] and [`plan`] are pure and decide (a line's outcome, §3's
//! order, §10's rules, and from an engine's [`plan::Census`] the [`plan::Plan`]); an
//! [`engine`] does the row work (reading the input into a census, staging the winners:
//! [`engine::local`] on this machine, through [`input`] and [`pipeline`], the driver-side
//! read a second engine shares); [`land`] does everything else, the same for every engine
//! (lock, quarantine, swap, trash, manifest, checkpoint, run log). Both reach the disk's
//! shared parts through [`store`] (crash-safe writes, failpoints, the published files, the
//! state), so neither imports the other's internals. The CLI ([`cli`]), the
//! operator console ([`console`]) and the unattended loop ([`watch`]) all drive
//! [`land::run`] with the engine [`engine::open`] gives; [`page`] turns what they report
//! into metrics, alerts and lineage for the on-call.

pub mod config;
pub mod contract;
pub mod diff;
pub mod engine;
pub mod error;
pub mod exit;

pub use error::{Error, Result};
pub mod cli;
pub mod console;
pub mod inbox;
pub mod input;
pub mod land;
pub mod page;
pub mod pipeline;
pub mod plan;
pub mod s3_inbox;
pub mod store;
pub mod watch;
