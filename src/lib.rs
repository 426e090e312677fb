//! Wharf lands closed JSONL event files into a Hive-partitioned Parquet dataset safely.
//!
//! The seam is between deciding and acting: [`contract`] and [`plan`] are pure and compute
//! a [`plan::Plan`]; [`land`] executes it (hash, stage, swap, quarantine, checkpoint).
//! The CLI ([`cli`]), the operator console ([`console`]) and the unattended loop
//! ([`watch`]) all drive the same core.

pub mod config;
pub mod contract;
pub mod engine;
pub mod error;
pub mod exit;

pub use error::{Error, Result};
pub mod cli;
pub mod console;
pub mod inbox;
pub mod input;
pub mod land;
pub mod pipeline;
pub mod plan;
pub mod watch;
