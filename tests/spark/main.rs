//! The Spark suite: the Spark engine against a Spark Connect server
//! (`WHARF_SPARK_REMOTE`, default `sc://127.0.0.1:15002`; `tests/spark/server.sh start`).

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used)]

#[path = "../kit/mod.rs"]
mod kit;

mod merge;
mod outage;
