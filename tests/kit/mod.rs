//! The test kit every test binary includes (`#[path = "../kit/mod.rs"] mod kit;`): one
//! [`Product`] in a temporary folder with the `wharf` binary run against it, one
//! [`Dataset`] read back from Parquet, one [`tree`] snapshot of a folder, one seeded
//! [`Rng`], and one event generator, [`Events`] (also the benches'), so `cargo test`
//! needs nothing outside Rust.

// Each binary compiles the whole kit and uses only part of it.
#![allow(dead_code, unused_imports)]
// Helpers outside #[test] functions unwrap too: in a test, a panic is the report.
#![allow(clippy::unwrap_used)]

pub mod dataset;
pub mod events;
pub mod fixture;
pub mod lineage;
pub mod product;
pub mod rng;
pub mod rules;

pub use dataset::{Dataset, micros, parquet_rows, read_rows, statuses};
pub use events::{
    Events, day_of_orders, event, event_seq, generate, merge_batches, one_day, tricky_lines,
};
pub use fixture::tree;
pub use product::{CONFIG, Product, Ran, read_json, schema, text, wharf};
pub use rng::Rng;
