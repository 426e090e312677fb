//! The published state a decision reads, as plain data: the input's [`Checkpoint`]
//! (§7), the partition [`Manifest`] (§6.4) and [`Published`], the view of the dates that
//! exist under the publish root. `land` reads and writes them; the plan only looks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contract::Date;

/// `<state_root>/checkpoints/<input name>.json` (CONTRACT.md §7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub product: String,
    pub input_name: String,
    pub input_sha256: String,
    pub accepted_rows: u64,
    pub rejected_rows: u64,
    pub retries: u64,
    pub keys: u64,
    pub event_dates: Vec<String>,
    pub publish_root: String,
    pub published_at: String,
    pub tool_version: String,
    /// The Delta table version this landing committed (§12.4); absent for hive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_version: Option<u64>,
    /// A set's parts: name, size and SHA-256 of each (§11.3); absent for a single file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<crate::input::PartDigest>,
    /// An input from an S3 inbox: its ETag and size as landed (§13.3); absent for a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<crate::input::ObjectStamp>,
}

/// Which input published a date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub input_name: String,
    pub input_sha256: String,
}

/// One date's entry in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionEntry {
    #[serde(flatten)]
    pub owner: Owner,
    pub rows: u64,
    pub files: u64,
    pub published_at: String,
    /// Delta: the data files (paths relative to the table root) this entry's owner
    /// committed for the date; the skip rule (§12.5) checks the table still holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_files: Vec<String>,
    /// The run id of the landing that published this generation of the date; absent
    /// for a restored generation and for manifests written before run ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// `<state_root>/partitions.json`: who owns each published date.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub product: String,
    /// Keyed by `YYYY-MM-DD`.
    pub dates: BTreeMap<String, PartitionEntry>,
}

/// A date that exists under the publish root now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublishedDate {
    pub rows: u64,
    /// `None` when the manifest does not know the date (written by hand or by another tool).
    pub owner: Option<Owner>,
    /// When `owner` published it, from the manifest.
    pub published_at: Option<String>,
}

/// What a decision needs to know of the published state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Published {
    /// The checkpoint for this input's name, if one exists (a corrupt one is an error
    /// before any decision).
    pub checkpoint: Option<Checkpoint>,
    /// Every date that exists under the publish root.
    pub dates: BTreeMap<Date, PublishedDate>,
}

impl Eq for Checkpoint {}
