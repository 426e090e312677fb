//! Merge mode rewrites files, not dates (CONTRACT.md §10.4–5): a date is split into
//! files of `target_file_rows` rows by key range; a batch reads only the files whose
//! footers and bloom filters may hold its keys (or whose range takes its new keys),
//! rewrites only those that change, and links the others into the date's new generation.
//! The plan says how many files it read and rewrote, and the rows it wrote.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::kit::{Product, event, statuses};

/// Two rows a file: six keys make three files.
fn product() -> Product {
    Product::with_settings("write_mode = \"merge\"\ntarget_file_rows = 2")
}

/// Each Parquet file of the date's folder, by name, with its inode.
fn files(product: &Product, date: &str) -> BTreeMap<String, u64> {
    let folder = product.publish.join(format!("event_date={date}"));
    fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().ino(),
            )
        })
        .collect()
}

fn day<'a>(out: &'a serde_json::Value, date: &str) -> &'a serde_json::Value {
    let dates = out["dates"].as_array().unwrap();
    dates.iter().find(|d| d["event_date"] == date).unwrap()
}

fn counts(out: &serde_json::Value, date: &str) -> [u64; 3] {
    let d = day(out, date);
    ["files_read", "files_rewritten", "rows_rewritten"].map(|k| d[k].as_u64().unwrap())
}

fn land(product: &Product, name: &str, lines: &[&str]) -> serde_json::Value {
    let ran = product.run_json(&product.input(name, lines));
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    ran.json()
}

fn six_keys(product: &Product) {
    let lines: Vec<String> = (1..=6)
        .map(|k| event(&format!("a{k}"), k * 10, "PENDING", "2024-03-01T10:00:00Z"))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let out = land(product, "b1.jsonl", &lines);
    assert_eq!(counts(&out, "2024-03-01"), [0, 0, 6]);
}

#[test]
fn a_batch_rewrites_only_the_file_that_holds_its_key_and_links_the_others() {
    let product = product();
    six_keys(&product);
    let before = files(&product, "2024-03-01");
    assert_eq!(before.len(), 3, "{before:?}");
    // Key 30 lives in the second file (30, 40).
    let plan = product.plan_json(&product.input(
        "b2.jsonl",
        &[&event("b1", 30, "PAID", "2024-03-01T11:00:00Z")],
    ));
    assert_eq!(
        counts(&plan.json(), "2024-03-01"),
        [1, 1, 2],
        "the plan says it"
    );
    let out = land(
        &product,
        "b2.jsonl",
        &[&event("b1", 30, "PAID", "2024-03-01T11:00:00Z")],
    );
    assert_eq!(counts(&out, "2024-03-01"), [1, 1, 2]);
    let after = files(&product, "2024-03-01");
    assert_eq!(after.len(), 3);
    let names: Vec<&String> = after.keys().collect();
    assert_eq!(
        after[names[0]], before[names[0]],
        "the first file is carried over, linked"
    );
    assert_ne!(after[names[1]], before[names[1]], "the second is rewritten");
    assert_eq!(
        after[names[2]], before[names[2]],
        "the third is carried over"
    );
    let got = statuses(&product.rows("2024-03-01"));
    assert_eq!(got.len(), 6);
    assert!(got.contains(&(30, "PAID".into())));
    assert!(
        got.windows(2).all(|w| w[0].0 < w[1].0),
        "rows in key order, file by file"
    );
}

#[test]
fn new_keys_past_a_full_last_file_get_a_new_file_and_rewrite_nothing() {
    let product = product();
    six_keys(&product);
    let before = files(&product, "2024-03-01");
    let out = land(
        &product,
        "b2.jsonl",
        &[
            &event("c1", 70, "PENDING", "2024-03-01T12:00:00Z"),
            &event("c2", 80, "PENDING", "2024-03-01T12:00:00Z"),
            &event("c3", 90, "PENDING", "2024-03-01T12:00:00Z"),
        ],
    );
    assert_eq!(counts(&out, "2024-03-01"), [0, 0, 3]);
    assert_eq!(day(&out, "2024-03-01")["rows"], 9);
    let after = files(&product, "2024-03-01");
    assert_eq!(after.len(), 5, "{after:?}");
    for (name, inode) in &before {
        assert_eq!(after.get(name), Some(inode), "{name} carried over");
    }
    assert_eq!(product.rows("2024-03-01").len(), 9);
}

#[test]
fn a_key_that_moves_date_is_found_by_the_files_filters_and_lives_on_one_date() {
    let product = product();
    six_keys(&product);
    let out = land(
        &product,
        "b2.jsonl",
        &[&event("m1", 50, "PAID", "2024-03-02T01:00:00Z")],
    );
    let old = day(&out, "2024-03-01");
    assert_eq!(
        (old["moved_out"].as_u64(), old["files_rewritten"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(day(&out, "2024-03-02")["moved_in"], 1);
    let on = |date: &str| {
        statuses(&product.rows(date))
            .iter()
            .filter(|(k, _)| *k == 50)
            .count()
    };
    assert_eq!((on("2024-03-01"), on("2024-03-02")), (0, 1));
    // A batch of keys no file holds reads no file of the other date.
    let out = land(
        &product,
        "b3.jsonl",
        &[&event("n1", 1000, "PENDING", "2024-03-02T02:00:00Z")],
    );
    assert!(
        out["dates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["event_date"] == "2024-03-02")
    );
    assert_eq!(
        counts(&out, "2024-03-02")[0],
        1,
        "only its own date's file, where 1000 goes"
    );
    assert_eq!(restored_rows(&product.publish), 7);
}

/// Every row of every date.
fn restored_rows(publish: &Path) -> usize {
    fs::read_dir(publish)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("event_date=")
        })
        .map(|p| crate::kit::read_rows(&p).len())
        .sum()
}

/// `wharf diff` of a batch that rewrites one file of three names its one change and
/// counts the carried files' rows as unchanged; then the run changes exactly that.
#[test]
fn a_diff_of_a_partial_rewrite_names_its_change_and_counts_the_rest_unchanged() {
    let product = product();
    six_keys(&product);
    let batch = product.input(
        "b2.jsonl",
        &[&event("b1", 30, "PAID", "2024-03-01T11:00:00Z")],
    );
    let out = product.cmd(&["diff"]).arg(&batch).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("event_date=2024-03-01  inserted 0 · removed 0 · updated 1 · unchanged 5"),
        "{text}"
    );
    let json = product
        .cmd(&["diff", "--json"])
        .arg(&batch)
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|l: &serde_json::Value| l.get("key").is_some())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        (&lines[0]["key"], &lines[0]["change"]),
        (&30.into(), &"updated".into())
    );
}
