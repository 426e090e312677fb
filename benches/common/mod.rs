//! Deterministic, in-process input for the benches, from the test kit's generator
//! (`tests/kit/events.rs`, shaped like `bench/gen_events.py`'s): [`lines`] gives JSONL
//! order events over one UTC day with 3% rejects spread evenly over eight reject kinds.
//! [`config`] is the sample product's config; [`accepted`] classifies lines and keeps the
//! accepted outcomes with their 1-based line numbers.

// Each bench target compiles this module (and the kit's generator) on its own and uses
// only part of it.
#![allow(dead_code)]

use std::path::Path;

use wharf::config::Config;
use wharf::contract::{LineBytes, Outcome, Schema, classify};

#[path = "../../tests/kit/events.rs"]
mod events;
#[path = "../../tests/kit/rng.rs"]
mod rng;

/// The sample product's config: one source for the samples, the tests and the benches.
const CONFIG: &str = include_str!("../../samples/wharf.toml");

/// The sample config, resolved against `/bench`.
pub fn config() -> Config {
    Config::parse(CONFIG, Path::new("/bench/wharf.toml"), Path::new("/bench"))
        .expect("the bench config is valid")
}

/// Classifies `lines`; the accepted outcomes with their 1-based line numbers.
pub fn accepted(lines: &[Vec<u8>], schema: &Schema) -> Vec<(u64, Outcome)> {
    lines
        .iter()
        .zip(1u64..)
        .map(|(line, number)| (number, classify(LineBytes::Kept(line), schema)))
        .filter(|(_, outcome)| matches!(outcome, Outcome::Accepted(_)))
        .collect()
}

/// `count` JSONL lines (no terminators), the same on every call and machine.
pub fn lines(count: usize) -> Vec<Vec<u8>> {
    events::Events::new(count)
        .seed(0x5748_4152_465f_4245) // "WHARF_BE"
        .rejects(0.03)
        .lines()
}
