//! `wharf watch` over an S3 inbox (CONTRACT.md §13.2), against the SeaweedFS bucket: an
//! object put while it runs lands once; one whose key sorts before the last key seen is
//! found by the reconcile; a set lands only once its marker exists; `--rescan` and
//! `--poll` win over the config's `rescan` and `poll`; SIGKILL while objects arrive never
//! lands one twice nor loses one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kit::product::Product;
use super::s3_env;
use super::s3_inbox::{fresh_prefix, lines, s3_product};
use super::{Root, pairs};

const PATIENCE: Duration = Duration::from_secs(60);

/// `wharf watch` on `product` with the S3 environment, its output discarded.
fn watch(product: &Product) -> Child {
    watch_with(product, &[])
}

/// [`watch`] with `flags` after `watch --json`.
fn watch_with(product: &Product, flags: &[&str]) -> Child {
    let args: Vec<&str> = ["watch", "--json"].iter().chain(flags).copied().collect();
    let mut cmd: Command = product.cmd(&args);
    s3_env(&mut cmd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "wharf watch did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for(what: &str, done: impl FnMut() -> bool) {
    wait_within(what, PATIENCE, done);
}

fn wait_within(what: &str, patience: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + patience;
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run log's records.
fn run_log(product: &Product) -> Vec<Value> {
    std::fs::read_to_string(product.state.join("runs.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Published landings per input name.
fn published(product: &Product) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for record in run_log(product) {
        if record["action"] == "published" {
            *out.entry(record["input_name"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    out
}

/// Five events of day `day` of March 2024, keys `base..base + 5`.
fn day(day: u32, base: u32) -> Vec<u8> {
    let events: Vec<String> = (0..5)
        .map(|i| {
            format!(
                r#"{{"event_id":"d{day}-{i}","order_id":{},"status":"PAID","updated_at":"2024-03-{day:02}T10:00:00Z"}}"#,
                base + i
            )
        })
        .collect();
    lines(&events.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn watch_lands_new_objects_late_keys_and_closed_sets_once() {
    let prefix = fresh_prefix("watch");
    let bucket = Root::s3(&prefix);
    let product = s3_product(&prefix, "poll = \"100ms\"\nrescan = \"3s\"");
    bucket.put("05-first.jsonl", &day(5, 500));
    let watching = watch(&product);
    wait_for("the object there at start", || {
        product.checkpoint("05-first.jsonl").is_some()
    });

    // Put while it runs: found by the listing after the last key seen.
    bucket.put("06-new.jsonl", &day(6, 600));
    let put = Instant::now();
    wait_for("the new object", || {
        product.checkpoint("06-new.jsonl").is_some()
    });
    assert!(
        put.elapsed() < Duration::from_secs(3),
        "found by a cycle, not the reconcile"
    );

    // A key before the last one seen: only the reconcile lists it.
    bucket.put("01-late.jsonl", &day(1, 100));
    wait_for("the late key", || {
        product.checkpoint("01-late.jsonl").is_some()
    });

    // A set: its parts first, its marker last.
    bucket.put("07-set/part-0000.jsonl", &day(7, 700));
    bucket.put("07-set/part-0001.jsonl", &day(8, 800));
    std::thread::sleep(Duration::from_millis(800));
    assert!(product.checkpoint("07-set").is_none(), "an open set landed");
    assert!(
        !run_log(&product)
            .iter()
            .any(|r| r["input_name"] == "07-set")
    );
    bucket.put("07-set/_SUCCESS", b"");
    wait_for("the closed set", || product.checkpoint("07-set").is_some());

    // A reconcile or two more: nothing lands again.
    std::thread::sleep(Duration::from_secs(4));
    stop(watching);
    let landed = published(&product);
    let names: Vec<(String, String)> = landed
        .iter()
        .map(|(n, c)| (n.clone(), c.to_string()))
        .collect();
    assert_eq!(
        names,
        pairs(&[
            ("01-late.jsonl", "1"),
            ("05-first.jsonl", "1"),
            ("06-new.jsonl", "1"),
            ("07-set", "1"),
        ])
    );
    assert_eq!(run_log(&product).len(), 4, "no skip or error lines either");
    assert_eq!(product.dates().len(), 5);
}

/// A watch stopped when dropped, so a failing wait does not leave it running.
struct Stopped(Option<Child>);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            stop(child);
        }
    }
}

/// Long enough for a 2 s reconcile or a 1 s poll, a debug build's landing and a loaded
/// machine; minutes short of the config's 10-minute periods the flags stand in for.
const FLAG_PATIENCE: Duration = Duration::from_secs(15);

#[test]
fn the_rescan_flag_wins_over_the_config_s_reconcile_period() {
    let prefix = fresh_prefix("rescan-flag");
    let bucket = Root::s3(&prefix);
    // `rescan` left at its 10-minute default: only the flag's reconcile finds the late key.
    let product = s3_product(&prefix, "poll = \"100ms\"");
    bucket.put("05-first.jsonl", &day(5, 500));
    let watching = Stopped(Some(watch_with(&product, &["--rescan", "2"])));
    wait_for("the object there at start", || {
        product.checkpoint("05-first.jsonl").is_some()
    });
    bucket.put("01-late.jsonl", &day(1, 100));
    wait_within(
        "the late key, by the flag's reconcile",
        FLAG_PATIENCE,
        || product.checkpoint("01-late.jsonl").is_some(),
    );
    drop(watching);
    let landed = published(&product);
    assert_eq!(
        landed.into_iter().collect::<Vec<_>>(),
        [
            ("01-late.jsonl".to_owned(), 1),
            ("05-first.jsonl".to_owned(), 1)
        ]
    );
    let rows = product.rows("2024-03-01");
    assert_eq!(rows.len(), 5, "the late key's rows: {rows:?}");
}

#[test]
fn the_poll_flag_wins_over_the_config_s_poll_period() {
    let prefix = fresh_prefix("poll-flag");
    let bucket = Root::s3(&prefix);
    // Both periods at 10 minutes: only the flag's poll finds a new key in time.
    let product = s3_product(&prefix, "poll = \"10m\"\nrescan = \"10m\"");
    bucket.put("05-first.jsonl", &day(5, 500));
    let watching = Stopped(Some(watch_with(&product, &["--poll", "1"])));
    wait_for("the object there at start", || {
        product.checkpoint("05-first.jsonl").is_some()
    });
    bucket.put("06-new.jsonl", &day(6, 600));
    wait_within("the new key, by the flag's poll", FLAG_PATIENCE, || {
        product.checkpoint("06-new.jsonl").is_some()
    });
    drop(watching);
    assert_eq!(product.rows("2024-03-06").len(), 5);
}

/// The lake's files and bytes (the owner file, which names the product's own state
/// root, left out).
fn lake(product: &Product) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut tree = product.tree("lake");
    tree.retain(|p, _| !p.to_string_lossy().contains("wharf-owner"));
    tree
}

#[test]
fn sigkill_while_objects_arrive_lands_each_once() {
    const OBJECTS: u32 = 20;
    const KILLS: usize = 25;
    let prefix = fresh_prefix("kill");
    let bucket = Root::s3(&prefix);
    let product = s3_product(&prefix, "poll = \"50ms\"\nrescan = \"2s\"");
    let names: Vec<String> = (1..=OBJECTS).map(|i| format!("{i:02}-day.jsonl")).collect();

    let uploader = {
        let prefix = prefix.clone();
        let names = names.clone();
        std::thread::spawn(move || {
            let bucket = Root::s3(&prefix);
            for (i, name) in names.iter().enumerate() {
                bucket.put(name, &day(i as u32 + 1, 100 * (i as u32 + 1)));
                std::thread::sleep(Duration::from_millis(120));
            }
        })
    };
    let mut seed = 0x5eed_u64;
    for _ in 0..KILLS {
        let mut child = watch(&product);
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::thread::sleep(Duration::from_millis(60 + (seed >> 33) % 240));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    uploader.join().unwrap();
    let last = watch(&product);
    wait_for("every object", || {
        names.iter().all(|n| product.checkpoint(n).is_some())
    });
    stop(last);

    let landed = published(&product);
    assert!(landed.values().all(|&n| n == 1), "landed twice: {landed:?}");
    let with_checkpoint: BTreeSet<&String> = names
        .iter()
        .filter(|n| product.checkpoint(n).is_some())
        .collect();
    assert_eq!(with_checkpoint.len(), OBJECTS as usize);

    // The same objects, each landed alone from a local inbox.
    let alone = Product::new();
    for (i, name) in names.iter().enumerate() {
        let path = alone.input_bytes(name, &day(i as u32 + 1, 100 * (i as u32 + 1)));
        alone.land(&path);
    }
    assert!(lake(&product) == lake(&alone), "the lakes differ");
    drop(bucket);
}
