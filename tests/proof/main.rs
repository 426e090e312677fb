//! Proofs of the landing contract's promises: crashes at every step and at
//! random moments, concurrent runs, faults, privacy, hostile input, and the properties of
//! the kit's event generator those proofs rely on. Every test asserts on files, bytes
//! and rows; none on timing. The four-reader check lives in `tests/proof/readers.sh`.

// Helpers outside #[test] functions unwrap too: in a test, a panic is the report.
#![allow(clippy::unwrap_used)]

#[path = "../kit/mod.rs"]
mod kit;

mod common;
mod concurrency;
mod failpoints;
mod faults;
mod generator;
mod hostile;
mod kill_loop;
mod merge_files;
mod privacy;
mod swap_path;
