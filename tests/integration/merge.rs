//! Merge mode (CONTRACT.md §10): the latest row per key across batches, read back from
//! the published files after each batch.

use std::fs;

use crate::kit::{Product, event, event_seq, statuses};

fn merge_product(settings: &str) -> Product {
    Product::with_settings(&format!("write_mode = \"merge\"\n{settings}"))
}

fn date_plan<'a>(out: &'a serde_json::Value, date: &str) -> &'a serde_json::Value {
    out["dates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["event_date"] == date)
        .unwrap()
}

#[test]
fn a_micro_batch_updates_its_keys_and_keeps_the_rest_of_the_day() {
    let product = merge_product("");
    let first = product.input(
        "b1.jsonl",
        &[
            &event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "PENDING", "2024-03-01T10:00:00Z"),
            &event("e3", 3, "PENDING", "2024-03-01T10:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&first).code, 0);
    let second = product.input(
        "b2.jsonl",
        &[
            &event("e4", 2, "PAID", "2024-03-01T11:00:00Z"),
            &event("e5", 4, "PENDING", "2024-03-01T11:00:00Z"),
        ],
    );
    let ran = product.run_json(&second);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let out = ran.json();
    let day = date_plan(&out, "2024-03-01");
    assert_eq!(
        (day["rows_before"].as_u64(), day["rows"].as_u64()),
        (Some(3), Some(4))
    );
    assert_eq!(
        (day["inserted"].as_u64(), day["updated"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [
            (1, "PENDING".into()),
            (2, "PAID".into()),
            (3, "PENDING".into()),
            (4, "PENDING".into())
        ]
    );
}

#[test]
fn a_late_event_is_stale_and_never_moves_an_order_backwards() {
    let product = merge_product("");
    assert_eq!(
        product
            .run_json(&product.input(
                "b1.jsonl",
                &[&event("e1", 1, "PAID", "2024-03-01T10:15:00Z")]
            ))
            .code,
        0
    );
    let lake = product.tree("lake");
    let late = product.input(
        "b2.jsonl",
        &[&event("e0", 1, "PENDING", "2024-03-01T10:00:00Z")],
    );
    let out = product.run_json(&late).json();
    assert_eq!(out["action"], "published");
    assert_eq!(out["counts"]["stale"], 1);
    assert_eq!(
        out["dates"].as_array().unwrap().len(),
        0,
        "a stale batch rewrites no date"
    );
    assert_eq!(product.tree("lake"), lake, "no partition file changes");
    assert_eq!(product.run_json(&late).json()["action"], "skipped");
}

#[test]
fn a_full_tie_goes_to_the_batch_and_is_counted() {
    let product = merge_product("");
    let at = "2024-03-01T10:00:00Z";
    assert_eq!(
        product
            .run_json(&product.input("b1.jsonl", &[&event_seq("e1", 1, "FIRST", at, 2)]))
            .code,
        0
    );
    let out = product
        .run_json(&product.input("b2.jsonl", &[&event_seq("e2", 1, "SECOND", at, 2)]))
        .json();
    assert_eq!(out["counts"]["ties_by_arrival"], 1);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "SECOND".into())]
    );
}

#[test]
fn a_batch_already_published_changes_no_file() {
    let product = merge_product("");
    let lines = [
        event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
        event("e2", 2, "PAID", "2024-03-02T10:00:00Z"),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(product.run_json(&product.input("b1.jsonl", &refs)).code, 0);
    let (lake, manifest) = (
        product.tree("lake"),
        fs::read(product.state.join("partitions.json")).unwrap(),
    );
    let again = product.input("b2.jsonl", &[refs[1], refs[0]]);
    let out = product.run_json(&again).json();
    assert_eq!(
        (
            out["action"].as_str(),
            out["dates"].as_array().unwrap().len()
        ),
        (Some("published"), 0)
    );
    assert_eq!(product.tree("lake"), lake);
    assert_eq!(
        fs::read(product.state.join("partitions.json")).unwrap(),
        manifest
    );
}

#[test]
fn a_key_moves_to_its_new_date_and_both_dates_count_toward_max_dates() {
    let product = merge_product("max_dates = 2");
    let first = product.input(
        "b1.jsonl",
        &[
            &event("e1", 1, "PENDING", "2024-03-01T23:00:00Z"),
            &event("e2", 2, "PENDING", "2024-03-01T23:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&first).code, 0);
    let moved = product.input(
        "b2.jsonl",
        &[&event("e3", 1, "PAID", "2024-03-02T01:00:00Z")],
    );
    let out = product.run_json(&moved).json();
    assert_eq!(out["action"], "published");
    let (old, new) = (date_plan(&out, "2024-03-01"), date_plan(&out, "2024-03-02"));
    assert_eq!(
        (old["moved_out"].as_u64(), old["rows"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (new["moved_in"].as_u64(), new["rows"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(2, "PENDING".into())]
    );
    assert_eq!(statuses(&product.rows("2024-03-02")), [(1, "PAID".into())]);

    // A move plus a third date is three dates rewritten: more than max_dates.
    let lake = product.tree("lake");
    let three = product.input(
        "b3.jsonl",
        &[
            &event("e4", 2, "PAID", "2024-03-02T02:00:00Z"),
            &event("e5", 9, "NEW", "2024-03-03T02:00:00Z"),
        ],
    );
    let ran = product.run_json(&three);
    assert_eq!(
        (ran.code, ran.json()["reason"].as_str()),
        (3, Some("too_many_dates"))
    );
    assert_eq!(product.tree("lake"), lake);
}

/// A lake from before per-file filters kept `keys.json`: it is no longer read, so a
/// corrupt one changes nothing, and a moved key is still found from the files alone.
#[test]
fn a_key_is_found_from_the_published_files_whatever_keys_json_says() {
    let product = merge_product("");
    assert_eq!(
        product
            .run_json(&product.input(
                "b1.jsonl",
                &[&event("e1", 1, "PENDING", "2024-03-01T23:00:00Z")]
            ))
            .code,
        0
    );
    fs::write(product.state.join("keys.json"), b"{not json").unwrap();
    let moved = product.input(
        "b2.jsonl",
        &[&event("e2", 1, "PAID", "2024-03-02T01:00:00Z")],
    );
    let ran = product.run_json(&moved);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(product.dates(), ["2024-03-02"], "the key left its old date");
    assert_eq!(statuses(&product.rows("2024-03-02")), [(1, "PAID".into())]);
}

#[test]
fn a_rerun_of_an_early_batch_skips_even_after_later_batches_rewrote_its_date() {
    let product = merge_product("");
    let first = product.input(
        "b1.jsonl",
        &[&event("e1", 1, "PENDING", "2024-03-01T10:00:00Z")],
    );
    assert_eq!(product.run_json(&first).code, 0);
    assert_eq!(
        product
            .run_json(&product.input(
                "b2.jsonl",
                &[&event("e2", 2, "PAID", "2024-03-01T11:00:00Z")]
            ))
            .code,
        0
    );
    assert_eq!(product.run_json(&first).json()["action"], "skipped");
    assert_eq!(product.rows("2024-03-01").len(), 2);
}

#[test]
fn a_crash_between_swaps_leaves_a_moved_key_on_both_dates_and_the_rerun_repairs() {
    let product = merge_product("");
    assert_eq!(
        product
            .run_json(&product.input(
                "b1.jsonl",
                &[&event("e1", 1, "PENDING", "2024-03-01T23:00:00Z")]
            ))
            .code,
        0
    );
    let moved = product.input(
        "b2.jsonl",
        &[&event("e2", 1, "PAID", "2024-03-02T01:00:00Z")],
    );
    let crashed = std::process::Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args([
            "run",
            moved.to_str().unwrap(),
            "--config",
            product.config.to_str().unwrap(),
        ])
        .env("WHARF_FAILPOINT", "after_swap_1")
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    assert_eq!(
        statuses(&product.rows("2024-03-02")),
        [(1, "PAID".into())],
        "new date first"
    );
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "PENDING".into())],
        "old date not yet"
    );
    assert_eq!(product.run_json(&moved).json()["action"], "published");
    assert_eq!(
        product.dates(),
        ["2024-03-02"],
        "the emptied date left the dataset"
    );
    assert_eq!(statuses(&product.rows("2024-03-02")), [(1, "PAID".into())]);
    let manifest = fs::read_to_string(product.state.join("partitions.json")).unwrap();
    assert!(!manifest.contains("2024-03-01"), "{manifest}");
    let restored = product.wharf(&["restore", "2024-03-01", "--yes"]);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "PENDING".into())]
    );
}
