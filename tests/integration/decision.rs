//! CONTRACT.md §5, one test per step, each checking what was (not) written.

use std::fs;

use crate::kit::{self, Product, event};

fn day(n: usize, date: &str, prefix: &str) -> Vec<String> {
    kit::one_day(n, date, prefix, "PAID")
}

fn refs(lines: &[String]) -> Vec<&str> {
    lines.iter().map(String::as_str).collect()
}

#[test]
fn step1_an_invalid_config_touches_nothing() {
    let product = Product::with_settings("max_dates = 0");
    let input = product.input("in.jsonl", &[&event("e1", 1, "P", "2024-03-01T10:00:00Z")]);
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains("max_dates = 0 must be at least 1"),
        "{}",
        ran.stderr
    );
    assert!(!product.path().join("lake").exists() && !product.path().join("state").exists());
    assert!(!product.path().join("quarantine").exists());
}

#[test]
fn step2_a_held_lock_is_busy_and_touches_nothing() {
    let product = Product::with_settings("");
    fs::create_dir_all(&product.state).unwrap();
    let lock = fs::File::create(product.state.join(".lock")).unwrap();
    lock.try_lock().unwrap();
    let input = product.input("in.jsonl", &[&event("e1", 1, "P", "2024-03-01T10:00:00Z")]);
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 4, "{}", ran.stderr);
    assert_eq!(ran.json()["action"], "busy");
    assert!(!product.path().join("lake").exists() && !product.path().join("quarantine").exists());
    assert!(!product.state.join("runs.jsonl").exists());
    drop(lock);
    assert_eq!(
        product.run_json(&input).code,
        0,
        "the lock is released with its holder"
    );
}

#[test]
fn step3_a_corrupt_checkpoint_is_an_error_that_touches_nothing() {
    let product = Product::with_settings("");
    let input = product.input("in.jsonl", &[&event("e1", 1, "P", "2024-03-01T10:00:00Z")]);
    assert_eq!(product.run_json(&input).code, 0);
    let checkpoint = product.state.join("checkpoints/in.jsonl.json");
    fs::write(&checkpoint, "{\"product\": \"orders\", trunc").unwrap();
    let before = (
        product.tree("lake"),
        product.tree("state"),
        product.tree("quarantine"),
    );
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("corrupt") && ran.stderr.contains("in.jsonl.json"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        before,
        (
            product.tree("lake"),
            product.tree("state"),
            product.tree("quarantine")
        )
    );
}

#[test]
fn step4_the_same_bytes_again_skip_and_write_only_the_run_log() {
    let product = Product::with_settings("");
    let input = product.input("in.jsonl", &[&event("e1", 1, "P", "2024-03-01T10:00:00Z")]);
    assert_eq!(product.run_json(&input).code, 0);
    let lake = product.tree("lake");
    let quarantine = product.tree("quarantine");
    let mut state = product.tree("state");
    let plan = product.plan_json(&input).json();
    assert_eq!(plan["action"], "skip");
    let ran = product.run_json(&input);
    assert_eq!(
        (ran.code, ran.json()["action"].as_str()),
        (0, Some("skipped"))
    );
    assert_eq!(product.tree("lake"), lake);
    assert_eq!(product.tree("quarantine"), quarantine);
    let mut after = product.tree("state");
    let log = std::path::PathBuf::from("orders/runs.jsonl");
    let (old_log, new_log) = (state.remove(&log).unwrap(), after.remove(&log).unwrap());
    assert_eq!(state, after, "only the run log changes on a skip");
    assert!(
        new_log.len() > old_log.len(),
        "the skip appends to the run log"
    );
}

#[test]
fn step5_the_earliest_breach_names_the_refusal() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "P", "2024-03-01T10:00:00Z"),
            &event("e1", 1, "Q", "2024-03-01T10:00:00Z"),
            r#"{"event_id":"e3","order_id":3,"status":"P","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#,
        ],
    );
    let ran = product.plan_json(&input);
    assert_eq!(ran.code, 3);
    let out = ran.json();
    assert_eq!(out["reason"], "conflict");
    assert!(out["detail"].as_str().unwrap().contains("line 2"));
}

#[test]
fn step6_exactly_the_reject_cap_publishes_one_more_refuses() {
    let product = Product::with_settings("max_rejected_lines = 2");
    let good = event("e1", 1, "P", "2024-03-01T10:00:00Z");
    let at_cap = product.input("cap.jsonl", &[&good, "x", "y"]);
    assert_eq!(product.run_json(&at_cap).code, 0);
    assert_eq!(product.rows("2024-03-01").len(), 1);
    let lake = product.tree("lake");
    let over = product.input(
        "over.jsonl",
        &[&event("e2", 2, "P", "2024-03-01T10:00:00Z"), "x", "y", "z"],
    );
    let ran = product.run_json(&over);
    assert_eq!(
        (ran.code, ran.json()["reason"].as_str()),
        (3, Some("reject_cap"))
    );
    assert_eq!(product.tree("lake"), lake);
}

#[test]
fn step7_too_many_dates_refuses_and_lists_each() {
    let product = Product::with_settings("max_dates = 2");
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "P", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "P", "2024-03-02T10:00:00Z"),
            &event("e3", 3, "P", "2024-03-03T10:00:00Z"),
        ],
    );
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 3);
    let out = ran.json();
    assert_eq!(out["reason"], "too_many_dates");
    assert_eq!(out["dates"].as_array().unwrap().len(), 3);
    assert!(
        out["detail"]
            .as_str()
            .unwrap()
            .contains("2024-03-01, 2024-03-02, 2024-03-03")
    );
    assert!(product.dates().is_empty());
    assert!(
        product
            .path()
            .join("quarantine/orders")
            .join(out["input_sha256"].as_str().unwrap())
            .join("summary.json")
            .exists()
    );
}

#[test]
fn step8_an_all_blank_file_refuses_empty_input() {
    let product = Product::with_settings("");
    let input = product.input_bytes("blank.jsonl", b"\n   \n\t\r\n");
    let ran = product.run_json(&input);
    assert_eq!(
        (ran.code, ran.json()["reason"].as_str()),
        (3, Some("empty_input"))
    );
    assert_eq!(ran.json()["counts"]["blank"], 3);
    assert!(product.checkpoint("blank.jsonl").is_none());
}

#[test]
fn step8_publish_empty_publishes_nothing_and_checkpoints() {
    let product = Product::with_settings("publish_empty = true");
    let input = product.input_bytes("blank.jsonl", b"\n");
    let ran = product.run_json(&input);
    assert_eq!(
        (ran.code, ran.json()["action"].as_str()),
        (0, Some("published"))
    );
    assert!(product.dates().is_empty());
    assert_eq!(
        product.checkpoint("blank.jsonl").unwrap()["event_dates"],
        serde_json::json!([])
    );
    assert_eq!(product.run_json(&input).json()["action"], "skipped");
}

#[test]
fn step9_a_fragment_refuses_shrink_unless_allowed() {
    let product = Product::with_settings("");
    let full = product.input("full.jsonl", &refs(&day(3, "2024-03-01", "a")));
    assert_eq!(product.run_json(&full).code, 0);
    let lake = product.tree("lake");
    let fragment = product.input(
        "fragment.jsonl",
        &[&event("f1", 1, "REFUNDED", "2024-03-01T12:00:00Z")],
    );
    let ran = product.run_json(&fragment);
    assert_eq!(ran.code, 3);
    let out = ran.json();
    assert_eq!(out["reason"], "shrink");
    assert!(
        out["detail"].as_str().unwrap().contains("2024-03-01 3 → 1"),
        "{out}"
    );
    assert_eq!(out["dates"][0]["rows_before"], 3);
    assert_eq!(out["dates"][0]["owner_before"], "full.jsonl");
    assert_eq!(product.tree("lake"), lake);
    assert!(product.checkpoint("fragment.jsonl").is_none());

    let allowed = product.wharf(&[
        "run",
        fragment.to_str().unwrap(),
        "--allow-shrink",
        "--json",
    ]);
    assert_eq!(
        (allowed.code, allowed.json()["action"].as_str()),
        (0, Some("published"))
    );
    assert_eq!(product.rows("2024-03-01").len(), 1);
}

#[test]
fn step9_losing_exactly_max_shrink_is_allowed() {
    let product = Product::with_settings("max_shrink = 0.5");
    assert_eq!(
        product
            .run_json(&product.input("full.jsonl", &refs(&day(4, "2024-03-01", "a"))))
            .code,
        0
    );
    let half = product.input("half.jsonl", &refs(&day(2, "2024-03-01", "b")));
    assert_eq!(
        product.run_json(&half).code,
        0,
        "losing exactly half is not more than max_shrink"
    );
}

#[test]
fn step10_publish_reports_rows_before_and_owner() {
    let product = Product::with_settings("");
    assert_eq!(
        product
            .run_json(&product.input("a.jsonl", &refs(&day(2, "2024-03-01", "a"))))
            .code,
        0
    );
    let b = product.input("b.jsonl", &refs(&day(2, "2024-03-01", "b")));
    let mut plan = product.plan_json(&b).json();
    assert_eq!(plan["action"], "publish");
    // When the owner landed it, as the manifest records it.
    let landed = plan["dates"][0]["owner_published_at"].take();
    assert!(landed.as_str().is_some_and(|t| t.ends_with('Z')), "{plan}");
    plan["dates"][0]
        .as_object_mut()
        .unwrap()
        .remove("owner_published_at");
    assert_eq!(
        plan["dates"][0],
        serde_json::json!({"event_date": "2024-03-01", "rows": 2, "rows_before": 2, "owner_before": "a.jsonl"})
    );
}

#[test]
fn step10_a_doubled_delivery_refuses_growth_unless_allowed() {
    let product = Product::with_settings("max_growth = 2.0");
    let full = product.input("full.jsonl", &refs(&day(3, "2024-03-01", "a")));
    assert_eq!(product.run_json(&full).code, 0);
    let lake = product.tree("lake");
    let state = product.tree("state");
    // The day delivered with a second copy of other keys beside it: 3 → 7 rows.
    let doubled = product.input("doubled.jsonl", &refs(&day(7, "2024-03-01", "b")));
    let ran = product.run_json(&doubled);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    let out = ran.json();
    assert_eq!(out["reason"], "growth");
    assert!(
        out["detail"].as_str().unwrap().contains("2024-03-01 3 → 7"),
        "{out}"
    );
    assert_eq!(product.tree("lake"), lake, "a refusal changes no byte");
    let state_after: Vec<_> = product
        .tree("state")
        .into_iter()
        .filter(|(p, _)| !p.ends_with("runs.jsonl"))
        .collect();
    let state_before: Vec<_> = state
        .into_iter()
        .filter(|(p, _)| !p.ends_with("runs.jsonl"))
        .collect();
    assert_eq!(state_after, state_before, "no checkpoint or manifest moves");

    // Exactly max_growth times is not past it.
    let twice = product.input("twice.jsonl", &refs(&day(6, "2024-03-01", "c")));
    assert_eq!(product.plan_json(&twice).json()["action"], "publish");

    let allowed = product.wharf(&["run", doubled.to_str().unwrap(), "--allow-growth", "--json"]);
    let out = allowed.json();
    assert_eq!(
        (allowed.code, out["action"].as_str()),
        (0, Some("published"))
    );
    assert_eq!(out["allowed_growth"], serde_json::json!(["2024-03-01"]));
    assert_eq!(product.rows("2024-03-01").len(), 7);
}

#[test]
fn step10_growth_is_off_by_default_and_in_merge_mode() {
    for settings in ["", "max_growth = 2.0\nwrite_mode = \"merge\""] {
        let product = Product::with_settings(settings);
        let one = product.input("one.jsonl", &refs(&day(1, "2024-03-01", "a")));
        assert_eq!(product.run_json(&one).code, 0);
        let many = product.input("many.jsonl", &refs(&day(9, "2024-03-01", "b")));
        let ran = product.run_json(&many);
        assert_eq!(ran.code, 0, "{settings}: {}", ran.stdout);
    }
}
