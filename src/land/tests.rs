//! Landings whose event log spills from its first record
//! ([`ReadOptions::log_bucket_records`] = 1): §2 through the scratch file, read back from
//! the published Parquet.

use super::*;
use crate::contract::{Instant, Record, Value};
use crate::engine::local::{LocalEngine, ReadOptions};
use crate::store::parquet_files;

const KEYS: u64 = 3_000;

/// 3,000 keys, six events each (one a minute), every event sent twice, shuffled (36,000
/// lines: their log records pass the scratch's 1 MiB write buffer); when
/// `contradict`, one more line reuses an event id with another status. The event log
/// spills from its first record.
fn land(contradict: bool) -> (tempfile::TempDir, Config, RunOutcome, u64) {
    land_reading(contradict, SPILL_AT_ONCE)
}

/// Every event-log record goes through the scratch file.
const SPILL_AT_ONCE: ReadOptions = ReadOptions {
    log_bucket_records: 1,
};

/// The orders fixture's product in a folder of its own.
fn product() -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::config::fixtures::orders();
    config.inbox = dir.path().join("inbox");
    config.lake = crate::config::Lake::Hive(dir.path().join("lake"));
    config.quarantine_root = dir.path().join("quarantine");
    config.state_root = dir.path().join("state");
    (dir, config)
}

fn land_reading(
    contradict: bool,
    read: ReadOptions,
) -> (tempfile::TempDir, Config, RunOutcome, u64) {
    let (dir, config) = product();
    let line = |key: u64, minute: u64, status: &str| {
        format!(
            r#"{{"event_id":"e{key}-{minute}","order_id":{key},"status":"{status}","updated_at":"2024-03-01T10:{minute:02}:00Z"}}"#
        )
    };
    let mut lines: Vec<String> = (0..KEYS)
        .flat_map(|key| (0..12u64).map(move |n| (key, n / 2)))
        .map(|(key, minute)| line(key, minute, &format!("S{minute}")))
        .collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..lines.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lines.swap(i, (state % (i as u64 + 1)) as usize);
    }
    if contradict {
        lines.push(line(7, 3, "CHANGED"));
    }
    std::fs::create_dir_all(&config.inbox).unwrap();
    let input = config.inbox.join("events.jsonl");
    std::fs::write(&input, lines.join("\n")).unwrap();
    let options = DecideOptions::default();
    let mut engine = LocalEngine::reading(read);
    let outcome = run(&config, &mut engine, &input, options, &mut |_| true).unwrap();
    (dir, config, outcome, lines.len() as u64)
}

#[test]
fn retries_spilled_to_the_scratch_file_land_each_key_once_at_its_latest_event() {
    let (_dir, config, outcome, lines) = land(false);
    assert_eq!(outcome.status, RunStatus::Published);
    let counts = &outcome.plan.counts;
    assert_eq!((counts.lines, counts.accepted), (lines, lines));
    assert_eq!((counts.retries, counts.keys), (lines / 2, KEYS));
    let folder = config.lake.publish_root().join("event_date=2024-03-01");
    let want: Vec<Record> = (0..KEYS as i64)
        .map(|key| {
            vec![
                Value::Str(format!("e{key}-5").into()),
                Value::Int(key),
                Value::Str("S5".into()),
                // 2024-03-01T10:05:00Z
                Value::Ts(Instant::from_parts(1_709_287_500, 0)),
                Value::Null, // seq
                Value::Null, // city
            ]
            .into()
        })
        .collect();
    let got = parquet_files::read_partition(&folder, &config.schema).unwrap();
    assert_eq!(got, want);
}

#[test]
fn a_conflict_spilled_to_the_scratch_file_refuses_and_publishes_nothing() {
    let (_dir, config, outcome, lines) = land(true);
    assert_eq!(outcome.status, RunStatus::Refused);
    assert_eq!(outcome.plan.reason(), Some("conflict"));
    let breach = outcome.plan.findings.iter().find(|f| f.breach).unwrap();
    assert_eq!(breach.line, lines, "the contradicting line is the last");
    assert!(
        !config
            .lake
            .publish_root()
            .join("event_date=2024-03-01")
            .exists(),
        "a refused file publishes nothing"
    );
}

#[test]
fn the_shipped_bucket_size_lands_the_same_bytes_as_spilling_at_once() {
    let (_spilled_dir, spilled, _, _) = land(false);
    let (_shipped_dir, shipped, outcome, _) = land_reading(false, ReadOptions::default());
    assert_eq!(outcome.status, RunStatus::Published);
    let part = |config: &Config| {
        std::fs::read(
            config
                .lake
                .publish_root()
                .join("event_date=2024-03-01/part-00000.parquet"),
        )
        .unwrap()
    };
    assert!(part(&spilled) == part(&shipped), "the Parquet bytes differ");
}

/// A planning engine keeps no rows: a landing through one is a bug that stops before
/// anything is published, not an empty partition.
#[test]
fn a_planning_engine_publishes_nothing() {
    let (_dir, config) = product();
    std::fs::create_dir_all(&config.inbox).unwrap();
    let input = config.inbox.join("events.jsonl");
    let line = r#"{"event_id":"e1","order_id":1,"status":"P","updated_at":"2024-03-01T10:00:00Z"}"#;
    std::fs::write(&input, line).unwrap();
    let mut engine = LocalEngine::planning(false);
    let options = DecideOptions::default();
    let err = run(&config, &mut engine, &input, options, &mut |_| true).unwrap_err();
    assert!(matches!(err, crate::Error::Internal { .. }), "{err}");
    let left: Vec<_> = std::fs::read_dir(config.lake.publish_root())
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "nothing published, no staging left: {left:?}"
    );
    let checkpoint = config.state_root.join("checkpoints/events.jsonl.json");
    assert!(!checkpoint.exists(), "no checkpoint");
}
