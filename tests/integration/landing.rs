//! The landing (CONTRACT.md §6–7): what a publish, a refusal, a skip and a restore leave
//! on disk, byte for byte.

use std::fs;

use crate::kit::{Product, event, event_seq, statuses};

#[test]
fn a_refusal_leaves_the_published_day_and_checkpoint_byte_for_byte() {
    let product = Product::with_settings("");
    let good = product.input(
        "good.jsonl",
        &[
            &event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "PAID", "2024-03-01T11:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&good).code, 0);
    let (lake, checkpoints) = (
        product.tree("lake"),
        product.tree("state/orders/checkpoints"),
    );
    let manifest = fs::read(product.state.join("partitions.json")).unwrap();
    let leaky = product.input(
        "leaky.jsonl",
        &[r#"{"event_id":"e3","order_id":1,"status":"REFUNDED","updated_at":"2024-03-01T12:00:00Z","email":"zq-secret@example.com"}"#],
    );
    let ran = product.run_json(&leaky);
    assert_eq!(ran.code, 3);
    assert_eq!(product.tree("lake"), lake);
    assert_eq!(product.tree("state/orders/checkpoints"), checkpoints);
    assert_eq!(
        fs::read(product.state.join("partitions.json")).unwrap(),
        manifest
    );
    let sha = ran.json()["input_sha256"].as_str().unwrap().to_owned();
    let folder = product.path().join("quarantine/orders").join(&sha);
    let rejects = fs::read_to_string(folder.join("rejects.jsonl")).unwrap();
    let summary = fs::read_to_string(folder.join("summary.json")).unwrap();
    assert!(rejects.contains("\"prohibited_field\"") && rejects.contains("\"email\""));
    for text in [
        &rejects,
        &summary,
        &fs::read_to_string(product.state.join("runs.jsonl")).unwrap(),
    ] {
        assert!(
            !text.contains("zq-secret") && !text.contains("REFUNDED"),
            "a value leaked: {text}"
        );
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(folder.join("rejects.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn dates_not_in_the_input_are_never_touched() {
    let product = Product::with_settings("");
    let both = product.input(
        "both.jsonl",
        &[
            &event("e1", 1, "A", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "A", "2024-03-02T10:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&both).code, 0);
    let second_day = product.tree("lake/orders/event_date=2024-03-02");
    let one = product.input("one.jsonl", &[&event("e3", 1, "B", "2024-03-01T11:00:00Z")]);
    assert_eq!(product.run_json(&one).code, 0);
    assert_eq!(
        product.tree("lake/orders/event_date=2024-03-02"),
        second_day
    );
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "B".into())]);
    assert_eq!(product.dates(), ["2024-03-01", "2024-03-02"]);
}

/// A file over two dates, its keys interleaved across them and out of order: each date's
/// file holds exactly that date's winners, in key order (the winners are split by date
/// without being copied, then gathered for the writer).
#[test]
fn each_date_of_a_file_gets_its_own_winners_in_key_order() {
    let product = Product::with_settings("");
    let mixed = product.input(
        "mixed.jsonl",
        &[
            &event("e1", 5, "A", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "B", "2024-03-02T10:00:00Z"),
            &event("e3", 3, "C", "2024-03-01T09:00:00Z"),
            &event("e4", 9, "D", "2024-03-02T08:00:00Z"),
            &event("e5", 1, "E", "2024-03-01T23:00:00Z"),
            &event("e6", 2, "F", "2024-03-02T11:00:00Z"),
            &event("e7", 7, "G", "2024-03-02T01:00:00Z"),
            &event("e8", 3, "H", "2024-03-01T09:30:00Z"),
        ],
    );
    assert_eq!(product.run_json(&mixed).code, 0);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "E".into()), (3, "H".into()), (5, "A".into())]
    );
    assert_eq!(
        statuses(&product.rows("2024-03-02")),
        [(2, "F".into()), (7, "G".into()), (9, "D".into())]
    );
}

#[test]
fn a_date_deleted_by_hand_is_a_skip_until_the_operator_relands() {
    let product = Product::with_settings("");
    let input = product.input("in.jsonl", &[&event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    assert_eq!(product.run_json(&input).code, 0);
    fs::remove_dir_all(product.publish.join("event_date=2024-03-01")).unwrap();
    // §5.4: the checkpoint holds these bytes; whatever became of the date, a skip.
    let ran = product.run_json(&input).json();
    assert_eq!(ran["action"], "skipped");
    assert_eq!(ran["landed"]["state"], "dates_gone", "{ran}");
    assert!(product.dates().is_empty(), "a skip publishes nothing");
    let text = product.wharf(&["run", input.to_str().unwrap()]).stdout;
    assert!(
        text.contains("dates gone: 2024-03-01") && text.contains("--reland"),
        "{text}"
    );
    let relanded = product.wharf(&["run", input.to_str().unwrap(), "--reland", "--json"]);
    assert_eq!(
        relanded.json()["action"],
        "published",
        "{}",
        relanded.stderr
    );
    assert_eq!(relanded.json()["reland"], true);
    assert_eq!(product.rows("2024-03-01").len(), 1);
}

#[test]
fn a_date_re_owned_by_another_input_is_a_skip_and_a_reland_names_what_it_replaces() {
    let product = Product::with_settings("");
    let first = product.input(
        "first.jsonl",
        &[&event("e1", 1, "FIRST", "2024-03-01T10:00:00Z")],
    );
    let second = product.input(
        "second.jsonl",
        &[&event("e2", 1, "SECOND", "2024-03-01T11:00:00Z")],
    );
    assert_eq!(product.run_json(&first).code, 0);
    assert_eq!(product.run_json(&second).code, 0);
    let lake = product.tree("lake");
    let plan = product.plan_json(&first).json();
    assert_eq!(plan["action"], "skip");
    assert_eq!(plan["landed"]["state"], "superseded");
    assert_eq!(plan["landed"]["dates"][0]["by"], "second.jsonl");
    assert_eq!(product.run_json(&first).json()["action"], "skipped");
    assert_eq!(product.tree("lake"), lake, "a skip leaves the lake's bytes");

    let path = first.to_str().unwrap();
    let text = product.wharf(&["plan", path, "--reland"]).stdout;
    assert!(text.contains("would publish"), "{text}");
    assert!(
        text.contains("reland: replaces 2024-03-01 from second.jsonl, landed 20"),
        "{text}"
    );
    let ran = product.wharf(&["run", path, "--reland", "--json"]);
    assert_eq!(ran.json()["action"], "published", "{}", ran.stderr);
    assert_eq!(ran.json()["dates"][0]["owner_before"], "second.jsonl");
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "FIRST".into())]);
    assert_eq!(product.run_json(&first).json()["action"], "skipped");
    assert_eq!(product.run_json(&second).json()["action"], "skipped");
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "FIRST".into())]);
}

#[test]
fn a_reland_meets_every_guard_of_a_new_input() {
    let product = Product::with_settings("");
    let small = product.input(
        "small.jsonl",
        &[&event("e1", 1, "A", "2024-03-01T10:00:00Z")],
    );
    assert_eq!(product.run_json(&small).code, 0);
    let lines: Vec<String> = (0..4)
        .map(|i| event(&format!("b{i}"), i, "B", "2024-03-01T11:00:00Z"))
        .collect();
    let big = product.input(
        "big.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(product.run_json(&big).code, 0);
    let (lake, state) = (product.tree("lake"), product.checkpoint("small.jsonl"));
    // small.jsonl again would shrink the date from 4 rows to 1: refused, nothing written.
    let ran = product.wharf(&["run", small.to_str().unwrap(), "--reland", "--json"]);
    assert_eq!(
        (ran.code, ran.json()["reason"].as_str()),
        (3, Some("shrink"))
    );
    assert_eq!(product.tree("lake"), lake);
    assert_eq!(product.checkpoint("small.jsonl"), state);
    // Discovery never relands: `--reland` needs an input.
    let discovery = product.wharf(&["run", "--reland"]);
    assert_eq!(discovery.code, 2, "{}", discovery.stderr);
    assert_eq!(product.tree("lake"), lake);
}

#[test]
fn manifest_and_checkpoint_describe_the_publish() {
    let product = Product::with_settings("files_per_date = 2");
    let lines: Vec<String> = (0..5)
        .map(|i| event(&format!("e{i}"), i, "A", "2024-03-01T10:00:00Z"))
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let input = product.input("in.jsonl", &refs);
    let out = product.run_json(&input).json();
    let checkpoint = product.checkpoint("in.jsonl").unwrap();
    for field in [
        "product",
        "input_name",
        "input_sha256",
        "accepted_rows",
        "rejected_rows",
        "retries",
        "keys",
        "event_dates",
        "publish_root",
        "published_at",
        "tool_version",
    ] {
        assert!(checkpoint.get(field).is_some(), "checkpoint lacks {field}");
    }
    assert_eq!(checkpoint["input_sha256"], out["input_sha256"]);
    assert_eq!(checkpoint["event_dates"], serde_json::json!(["2024-03-01"]));
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(product.state.join("partitions.json")).unwrap()).unwrap();
    let entry = &manifest["dates"]["2024-03-01"];
    assert_eq!(
        (
            entry["input_name"].as_str(),
            entry["rows"].as_u64(),
            entry["files"].as_u64()
        ),
        (Some("in.jsonl"), Some(5), Some(2))
    );
    let files = product.tree("lake/orders/event_date=2024-03-01");
    assert_eq!(files.len(), 2);
    let rows = product.rows("2024-03-01");
    let keys: Vec<&str> = rows.iter().map(|r| r["order_id"].as_str()).collect();
    assert_eq!(keys, ["0", "1", "2", "3", "4"], "split evenly in key order");
    assert!(
        !product.path().join("lake/.orders.wharf-staging").exists(),
        "staging is cleaned up"
    );
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        (record["action"].as_str(), record["swaps"][0].as_str()),
        (Some("published"), Some("rename"))
    );
}

#[test]
fn replacing_a_date_exchanges_it_and_keeps_generations_in_the_trash() {
    let product = Product::with_settings("keep_generations = 2");
    for (i, status) in ["V1", "V2", "V3", "V4"].iter().enumerate() {
        let input = product.input(
            &format!("v{i}.jsonl"),
            &[&event(&format!("e{i}"), 1, status, "2024-03-01T10:00:00Z")],
        );
        assert_eq!(product.run_json(&input).code, 0);
    }
    let trash = product.state.join("trash/event_date=2024-03-01");
    let generations: Vec<_> = fs::read_dir(&trash).unwrap().collect();
    assert_eq!(generations.len(), 2, "keep_generations");
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert!(matches!(
        last["swaps"][0].as_str(),
        Some("exchange" | "two_renames")
    ));
}

#[test]
fn restore_brings_back_the_exact_previous_bytes_and_ownership() {
    let product = Product::with_settings("");
    let first = product.input(
        "first.jsonl",
        &[
            &event("e1", 1, "FIRST", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "FIRST", "2024-03-01T10:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&first).code, 0);
    let first_bytes = product.tree("lake");
    let second = product.input(
        "second.jsonl",
        &[
            &event("e3", 1, "SECOND", "2024-03-01T11:00:00Z"),
            &event("e4", 2, "SECOND", "2024-03-01T11:00:00Z"),
        ],
    );
    assert_eq!(product.run_json(&second).code, 0);
    assert_ne!(product.tree("lake"), first_bytes);

    let unconfirmed = product.wharf(&["restore", "2024-03-01"]);
    assert_eq!(unconfirmed.code, 2);
    assert!(unconfirmed.stderr.contains("--yes"));
    let ran = product.wharf(&["restore", "2024-03-01", "--yes", "--json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.json()["owner"], "first.jsonl");
    assert_eq!(product.tree("lake"), first_bytes);
    // The manifest names the restored owner; both have landed, so both skip (§5.4), and
    // second's standing says first owns the date again.
    assert_eq!(product.run_json(&first).json()["action"], "skipped");
    let again = product.run_json(&second).json();
    assert_eq!(again["action"], "skipped");
    assert_eq!(again["landed"]["dates"][0]["by"], "first.jsonl", "{again}");
    assert_eq!(product.tree("lake"), first_bytes);
    let relanded = product.wharf(&["run", second.to_str().unwrap(), "--reland", "--json"]);
    assert_eq!(
        relanded.json()["action"],
        "published",
        "{}",
        relanded.stderr
    );
    assert_eq!(statuses(&product.rows("2024-03-01"))[0].1, "SECOND");
}

#[test]
fn restore_without_a_generation_says_so() {
    let product = Product::with_settings("");
    let ran = product.wharf(&["restore", "2024-03-01", "--yes"]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains("no earlier generation of 2024-03-01"),
        "{}",
        ran.stderr
    );
}

#[test]
fn run_without_input_lands_the_inbox_oldest_first_past_a_refusal() {
    let product = Product::with_settings("");
    let a = product.input("a.jsonl", &[&event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let bad = product.input("b.jsonl", &[r#"{"event_id":"e2","order_id":2,"status":"B","updated_at":"2024-03-02T10:00:00Z","name":"x"}"#]);
    let c = product.input("c.jsonl", &[&event("e3", 3, "C", "2024-03-03T10:00:00Z")]);
    product.input_bytes(".hidden.jsonl", b"junk\n");
    product.input_bytes("d.jsonl.part", b"junk\n");
    std::os::unix::fs::symlink("/etc/hostname", product.path().join("inbox/link.jsonl")).unwrap();
    for (path, age) in [(&c, 10), (&bad, 20), (&a, 30)] {
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    let ran = product.wharf(&["run", "--json"]);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    let actions: Vec<(String, String)> = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| {
            (
                v["input_name"].as_str().unwrap().to_owned(),
                v["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("a.jsonl".into(), "published".into()),
            ("b.jsonl".into(), "refused".into()),
            ("c.jsonl".into(), "published".into())
        ]
    );
    assert_eq!(product.dates(), ["2024-03-01", "2024-03-03"]);
}

#[test]
fn status_history_and_quarantine_report_from_the_files() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[&event("e1", 1, "A", "2024-03-01T10:00:00Z"), "oops"],
    );
    let sha = product.run_json(&input).json()["input_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = product.wharf(&["status", "--json"]).json();
    assert_eq!(status["dates"][0]["rows"], 1);
    assert_eq!(status["dates"][0]["owner"], "in.jsonl");
    let history = product.wharf(&["history", "--json"]);
    let record: serde_json::Value =
        serde_json::from_str(history.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(record["input_sha256"], sha.as_str());
    let one = product.wharf(&["quarantine", &sha[..8], "--json"]).json();
    assert_eq!(
        one["rejects"][0],
        serde_json::json!({"line": 2, "reason": "malformed_json"})
    );
    let listed = product.wharf(&["quarantine", "--json"]).json();
    assert_eq!(listed["entries"][0]["input_sha256"], sha.as_str());
}

#[test]
fn the_same_input_lands_as_the_same_bytes() {
    // Over 1 MiB of lines, so several chunks go through the classifying threads and both
    // tally stages, and two dates of two files each, with retries and late events: the
    // published files must not depend on how the threads were scheduled.
    let mut lines: Vec<String> = (0..24_000u32)
        .map(|i| {
            let order = i64::from(i % 5_000);
            let day = 1 + (i % 2);
            let at = format!("2024-03-0{day}T{:02}:{:02}:00Z", i / 1_000 % 24, i % 60);
            event_seq(
                &format!("e{i}"),
                order,
                &format!("S{}", i % 5),
                &at,
                i64::from(i % 3),
            )
        })
        .collect();
    let retries: Vec<String> = lines.iter().step_by(7).cloned().collect();
    lines.extend(retries);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let landed: Vec<_> = (0..2)
        .map(|_| {
            let product = Product::with_settings("files_per_date = 2");
            let input = product.input("burst.jsonl", &lines);
            let ran = product.run_json(&input);
            assert_eq!(ran.code, 0, "{}", ran.stderr);
            assert_eq!(ran.json()["counts"]["retries"], 24_000 / 7 + 1);
            product.tree("lake/orders")
        })
        .collect();
    assert_eq!(landed[0].len(), 4, "two dates of two files each");
    assert!(landed[0].values().all(|bytes| bytes.len() > 1_000));
    assert_eq!(landed[0], landed[1]);
}

#[test]
fn a_run_log_written_before_stale_existed_still_reads() {
    // The first merge-mode release added `stale` to the counts; a line written before
    // it must stay history, not become a corrupt run log.
    let product = Product::with_settings("");
    fs::create_dir_all(&product.state).unwrap();
    let old = r#"{"time":"2026-11-29T10:18:42.282957Z","product":"orders","input_name":"old.jsonl","input_sha256":"81bff791818e96293dbe1e918bad4da236eb8d1d292e7e9c78f39e0b014180de","action":"published","reason":null,"dates":["2024-03-01"],"counts":{"lines":5,"blank":0,"accepted":5,"rejected":0,"retries":0,"keys":3,"ties_by_arrival":0,"by_reason":{}},"duration_ms":6,"tool_version":"0.1.0","swaps":["rename"]}"#;
    fs::write(product.state.join("runs.jsonl"), format!("{old}\n")).unwrap();
    let input = product.input("in.jsonl", &[&event("e1", 1, "A", "2024-03-02T10:00:00Z")]);
    assert_eq!(product.run_json(&input).code, 0);
    let history = product.wharf(&["history", "--json"]);
    assert_eq!(history.code, 0, "{}", history.stderr);
    let names: Vec<String> = history
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["input_name"].to_string())
        .collect();
    assert_eq!(names.len(), 2, "{}", history.stdout);
    assert!(names.iter().any(|n| n.contains("old.jsonl")), "{names:?}");
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    assert!(log.starts_with(old), "the old line is kept as it was");
}
