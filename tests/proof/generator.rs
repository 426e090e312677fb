//! The kit's event generator gives the proofs what they rely on: the exact line count,
//! the same bytes for the same seed, only accepted lines, good instants on exactly the
//! requested UTC days, identical retries (also re-written in another offset) and
//! same-instant ties decided by `seq`; landed, one row per order over those days.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wharf::contract::timestamp;

use crate::common::{self, Product};
use crate::kit::Events;

/// A line parsed, with its instant as (seconds, nanoseconds).
type Parsed = (Value, (i64, u32));

fn parsed(lines: &[Vec<u8>]) -> Vec<Parsed> {
    lines
        .iter()
        .map(|line| {
            let value: Value = serde_json::from_slice(line).expect("a JSON object");
            let at = timestamp::parse(value["updated_at"].as_str().expect("updated_at"))
                .expect("an RFC 3339 instant");
            (value, (at.secs(), at.nanos()))
        })
        .collect()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let events = Events::new(3000).days(2).seed(11);
    assert_eq!(events.lines().len(), 3000);
    assert_eq!(events.lines(), events.lines());
    assert_ne!(events.lines(), events.seed(12).lines());
    assert_eq!(Events::new(1).lines().len(), 1);
}

#[test]
fn lines_are_accepted_on_the_requested_days_with_retries_and_ties() {
    let config = wharf::config::Config::parse(
        common::CONFIG,
        std::path::Path::new("wharf.toml"),
        std::path::Path::new("/tmp"),
    )
    .unwrap();
    let lines = Events::new(3000).days(2).seed(11).lines();
    for (n, line) in lines.iter().enumerate() {
        let outcome =
            wharf::contract::classify(wharf::contract::LineBytes::Kept(line), &config.schema);
        assert!(
            matches!(outcome, wharf::contract::Outcome::Accepted(_)),
            "line {} is not accepted: {outcome:?}",
            n + 1
        );
    }
    let events = parsed(&lines);
    let dates: BTreeSet<String> = events
        .iter()
        .map(|(_, (secs, _))| {
            timestamp::Instant::from_parts(*secs, 0)
                .utc_date()
                .to_string()
        })
        .collect();
    assert_eq!(
        dates.into_iter().collect::<Vec<_>>(),
        ["2024-03-01", "2024-03-02"]
    );

    // Retries: one event id on several lines, always with the same values and instant,
    // some of them written in another offset.
    let mut by_id: BTreeMap<&str, Vec<&Parsed>> = BTreeMap::new();
    for event in &events {
        by_id
            .entry(event.0["event_id"].as_str().unwrap())
            .or_default()
            .push(event);
    }
    let retried: Vec<_> = by_id.values().filter(|v| v.len() > 1).collect();
    assert!(retried.len() > 100, "{} retried events", retried.len());
    let mut reoffset = 0;
    for copies in &retried {
        let (first, at) = copies[0];
        for (other, other_at) in &copies[1..] {
            assert_eq!(at, other_at, "a retry moved in time: {first} / {other}");
            for field in ["order_id", "status", "seq", "courier_id", "city"] {
                assert_eq!(first[field], other[field], "a retry changed {field}");
            }
            reoffset += usize::from(first["updated_at"] != other["updated_at"]);
        }
    }
    assert!(reoffset > 0, "no retry re-written in another offset");

    // Ties: two events of one order at one instant, both with a `seq`, which decides.
    let mut by_key_instant: BTreeMap<(i64, (i64, u32)), BTreeSet<&str>> = BTreeMap::new();
    for (value, at) in &events {
        by_key_instant
            .entry((value["order_id"].as_i64().unwrap(), *at))
            .or_default()
            .insert(value["event_id"].as_str().unwrap());
    }
    let ties = by_key_instant.values().filter(|ids| ids.len() > 1).count();
    assert!(ties > 0, "no same-instant tie");
}

#[test]
fn landed_it_publishes_one_row_per_order_over_the_days() {
    let product = Product::new();
    let input = product.path().join("events.jsonl");
    common::generate(&input, 3000, 2, 11);
    product.land(&input);
    let lines: Vec<Vec<u8>> = std::fs::read(&input)
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    assert_eq!(lines, Events::new(3000).days(2).seed(11).lines());
    let orders: BTreeSet<i64> = parsed(&lines)
        .iter()
        .map(|(v, _)| v["order_id"].as_i64().unwrap())
        .collect();
    let data = product.snapshot();
    assert_eq!(
        data.rows.keys().collect::<Vec<_>>(),
        ["2024-03-01", "2024-03-02"]
    );
    assert_eq!(data.row_count(), orders.len(), "one latest row per order");
}
