//! §5.4: a landed input is never landed again by discovery. A busy feed's inputs, all
//! landed, are skipped by `run` and by a `watch` that lost its state, leaving the lake's
//! bytes as they were; an older input whose newer one moved away stays superseded; a
//! merge-mode skip reads no Parquet (its peak memory says so).

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::kit::{Product, event, statuses};
use crate::watching::{Watching, events_from, poll, run_log};

/// Inputs of the busy feed, events in each, and the dates they cycle through.
const INPUTS: usize = 1000;
const EVENTS: usize = 200;
const DATES: usize = 10;

/// Writes input `i` of the feed: `EVENTS` events on date `i % DATES`, keys 1..=EVENTS,
/// each input a later restatement of its date than the one before.
fn feed_input(inbox: &Path, i: usize) {
    let date = format!("2024-03-{:02}", 1 + i % DATES);
    let lines = events_from(&format!("i{i}"), 1 + i / DATES, EVENTS, &date, "S");
    let mut text = lines.join("\n");
    text.push('\n');
    fs::write(inbox.join(format!("delivery-{i:04}.jsonl")), text).unwrap();
}

#[test]
fn a_thousand_landed_inputs_are_skipped_by_run_and_by_a_watch_without_its_state() {
    let product = Product::with_settings("");
    let inbox = product.path().join("inbox");
    for i in 0..INPUTS {
        feed_input(&inbox, i);
    }
    // Landed with one `run` of the inbox: every input lands once, oldest first, each
    // superseding its date's previous one.
    let landed = product.wharf(&["run"]);
    assert_eq!(landed.code, 0, "{}", landed.stderr);
    assert_eq!(run_log(&product).len(), INPUTS);
    assert_eq!(product.dates().len(), DATES);
    let lake = product.tree("lake");
    let manifest = product.manifest();

    // Nothing new: every input is a skip, the lake byte-identical.
    let again = product.wharf(&["run", "--json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let outcomes: Vec<serde_json::Value> = again
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(outcomes.len(), INPUTS);
    assert!(
        outcomes.iter().all(|o| o["action"] == "skipped"),
        "{:?}",
        outcomes.iter().find(|o| o["action"] != "skipped")
    );
    // Only the newest input of each date still owns it.
    let owning = outcomes
        .iter()
        .filter(|o| o["landed"]["state"] == "owns")
        .count();
    assert_eq!(owning, DATES);
    assert_eq!(
        product.tree("lake"),
        lake,
        "a run of landed inputs wrote the lake"
    );
    assert_eq!(product.manifest(), manifest);

    // A watch that lost its state: the checkpoints decide, nothing is published.
    let _ = fs::remove_file(product.state.join("watch.json"));
    let _ = fs::remove_file(product.state.join("watch.jsonl"));
    let mut watch = Watching::start(&product);
    poll("the watch to skip every input", || {
        watch.collect().len() >= INPUTS
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(watch.collect().iter().all(|o| o["action"] == "skipped"));
    assert!(watch.stop().success());
    assert_eq!(
        product.tree("lake"),
        lake,
        "a watch start relanded an input"
    );
    assert_eq!(product.manifest(), manifest);
}

#[test]
fn an_older_input_stays_superseded_when_the_newer_one_is_moved_away() {
    let product = Product::with_settings("");
    let a = product.input(
        "a.jsonl",
        &[&event("e1", 1, "PAID", "2024-03-01T10:00:00Z")],
    );
    assert_eq!(product.run_json(&a).code, 0);
    let b = product.input(
        "b.jsonl",
        &[&event("e2", 1, "DELIVERED", "2024-03-01T12:00:00Z")],
    );
    assert_eq!(product.run_json(&b).code, 0);
    let lake = product.tree("lake");
    fs::rename(&b, product.path().join("b.jsonl.moved-away")).unwrap();

    let ran = product.wharf(&["run", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let outcome: serde_json::Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(outcome["action"], "skipped");
    assert_eq!(outcome["landed"]["dates"][0]["by"], "b.jsonl", "{outcome}");
    assert_eq!(product.tree("lake"), lake);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "DELIVERED".into())]
    );
    let status = product.wharf(&["status", "--json"]).json();
    let a_now = &status["inputs"][0];
    assert_eq!(a_now["input_name"], "a.jsonl");
    assert_eq!(a_now["landed"]["state"], "superseded", "{status}");
    let text = product.wharf(&["status"]).stdout;
    assert!(
        text.contains("a.jsonl") && text.contains("superseded: 2024-03-01 by b.jsonl"),
        "{text}"
    );
    // diff names nothing to change, and with --reland what the rerun would undo.
    let a_path = a.to_str().unwrap();
    let skipped = product.wharf(&["diff", a_path]).stdout;
    assert!(
        skipped.contains("already landed") && skipped.contains("--reland"),
        "{skipped}"
    );
    let relanded = product.wharf(&["diff", a_path, "--reland"]).stdout;
    assert!(relanded.contains("updated 1"), "{relanded}");
    assert!(relanded.contains("DELIVERED → PAID"), "{relanded}");
    assert_eq!(product.tree("lake"), lake, "diff writes nothing");
}

/// Rows of the published date a merge-mode skip must not read.
const DATE_ROWS: usize = 290_000;

/// The peak resident memory (KiB) and output of `wharf <args>` under GNU time.
fn peak_kib(product: &Product, args: &[&str]) -> (u64, String) {
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "maxrss_kb=%M"])
        .arg(env!("CARGO_BIN_EXE_wharf"))
        .arg("--config")
        .arg(&product.config)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib = stderr
        .rsplit("maxrss_kb=")
        .next()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak from /usr/bin/time: {stderr}"));
    (kib, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_merge_skip_against_a_large_date_reads_no_parquet() {
    let product = Product::with_settings("write_mode = \"merge\"");
    let inbox = product.path().join("inbox");
    let mut day = events_from("big", 1, DATE_ROWS, "2024-03-01", "OLD").join("\n");
    day.push('\n');
    fs::write(inbox.join("day.jsonl"), day).unwrap();
    let big = inbox.join("day.jsonl");
    assert_eq!(product.run_json(&big).code, 0);
    let batch = product.input(
        "batch.jsonl",
        &events_from("b", 1, EVENTS, "2024-03-01", "NEW")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(product.run_json(&batch).code, 0);
    assert_eq!(product.rows("2024-03-01").len(), DATE_ROWS);
    let lake = product.tree("lake");
    let (kib, out) = peak_kib(&product, &["run", batch.to_str().unwrap(), "--json"]);
    let outcome: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(outcome["action"], "skipped", "{outcome}");
    eprintln!("peak RSS of a merge-mode skip against {DATE_ROWS} rows: {kib} KiB");
    assert!(kib < 60 * 1024, "a skip used {kib} KiB: it read the date");
    assert_eq!(product.tree("lake"), lake);
}

#[test]
fn a_merge_reland_merges_again_and_its_rows_lose_to_newer_ones() {
    let product = Product::with_settings("write_mode = \"merge\"");
    let early = product.input(
        "b1.jsonl",
        &[
            &event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "PAID", "2024-03-01T10:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&early).code, 0);
    let late = product.input(
        "b2.jsonl",
        &[&event("e3", 1, "DELIVERED", "2024-03-01T12:00:00Z")],
    );
    assert_eq!(product.run_json(&late).code, 0);
    // The date deleted by hand: a skip all the same, until the operator relands.
    fs::remove_dir_all(product.publish.join("event_date=2024-03-01")).unwrap();
    assert_eq!(product.run_json(&early).json()["action"], "skipped");
    assert!(product.dates().is_empty());
    let ran = product.wharf(&["run", early.to_str().unwrap(), "--reland", "--json"]);
    assert_eq!(ran.json()["action"], "published", "{}", ran.stderr);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "PAID".into()), (2, "PAID".into())]
    );
    // b2 relanded over it: its newer row wins key 1; b1 again loses key 1 (stale).
    let ran = product.wharf(&["run", late.to_str().unwrap(), "--reland", "--json"]);
    assert_eq!(ran.json()["action"], "published", "{}", ran.stderr);
    let again = product.wharf(&["run", early.to_str().unwrap(), "--reland", "--json"]);
    assert_eq!(again.json()["counts"]["stale"], 1, "{}", again.stdout);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "DELIVERED".into()), (2, "PAID".into())]
    );
}
