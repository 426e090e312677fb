//! Whole landings through the CLI on both engines: the same inputs, one after another,
//! into two products alike but for `--engine`. After every input the two give the same
//! plan (status, reason, every count, every date) and publish the same rows; a refusal
//! leaves both lakes byte for byte as they were.

use std::path::PathBuf;

use serde_json::Value;

use crate::engines;
use crate::kit::{Events, Product, event, event_seq};

/// `wharf run INPUT --json` on the Spark engine at the suite's remote.
pub fn spark_run_json(product: &Product, input: &std::path::Path) -> crate::kit::Ran {
    let remote = engines::remote();
    product.wharf(&[
        "run",
        input.to_str().unwrap(),
        "--json",
        "--engine",
        "spark",
        "--remote",
        &remote,
    ])
}

/// What a landing's `--json` says that both engines must agree on. A refusal found by
/// the driver's own pass (a breach, the reject cap) compares only what that pass counts:
/// the Spark engine refuses it before any Spark job, so never counts keys or retries.
pub fn agreed(out: &Value) -> Value {
    let mut counts = out["counts"].clone();
    let driver_refusal = matches!(
        out["reason"].as_str(),
        Some(
            "prohibited_field"
                | "unknown_field"
                | "reject_cap"
                | "value_not_allowed"
                | "out_of_range"
        )
    );
    if driver_refusal && let Some(map) = counts.as_object_mut() {
        for only_ranked in ["accepted", "retries", "keys", "ties_by_arrival", "stale"] {
            map.remove(only_ranked);
        }
    }
    serde_json::json!({
        "action": out["action"],
        "reason": out["reason"],
        "counts": counts,
        "dates": if driver_refusal { Value::Null } else { without_landing_times(&out["dates"]) },
    })
}

/// A plan's dates without `owner_published_at`: when each owner landed is the clock's,
/// different in two products; every other field must agree.
pub fn without_landing_times(dates: &Value) -> Value {
    let mut dates = dates.clone();
    for date in dates.as_array_mut().into_iter().flatten() {
        date.as_object_mut().map(|o| o.remove("owner_published_at"));
    }
    dates
}

/// Lands each batch on both engines in turn and compares after each.
fn both_engines_land_alike(settings: &str, batches: &[Vec<Vec<u8>>]) {
    let _server = engines::server();
    let local = Product::with_settings(settings);
    let spark = Product::with_settings(settings);
    for (index, lines) in batches.iter().enumerate() {
        let name = format!("batch-{index:02}.jsonl");
        let bytes: Vec<u8> = lines
            .iter()
            .flat_map(|l| [l.as_slice(), b"\n"].concat())
            .collect();
        let (a, b): (PathBuf, PathBuf) = (
            local.input_bytes(&name, &bytes),
            spark.input_bytes(&name, &bytes),
        );
        let before = (local.snapshot(), spark.snapshot());
        let on_local = local.run_json(&a);
        let on_spark = spark_run_json(&spark, &b);
        assert_eq!(
            on_local.code, on_spark.code,
            "{name}: exit codes\nlocal: {}\nspark: {}",
            on_local.stderr, on_spark.stderr
        );
        let (plan_local, plan_spark) = (on_local.json(), on_spark.json());
        assert_eq!(
            agreed(&plan_local),
            agreed(&plan_spark),
            "{name}: the plans"
        );
        let after = (local.snapshot(), spark.snapshot());
        assert_eq!(after.0.rows, after.1.rows, "{name}: the published rows");
        if plan_local["action"] == "refused" {
            assert_eq!(
                before.0.files, after.0.files,
                "{name}: a refusal changed the local lake"
            );
            assert_eq!(
                before.1.files, after.1.files,
                "{name}: a refusal changed the Spark lake"
            );
        }
        assert!(
            !spark.staging().exists(),
            "{name}: the Spark engine left staging behind"
        );
    }
}

fn lines(events: &[String]) -> Vec<Vec<u8>> {
    events.iter().map(|e| e.clone().into_bytes()).collect()
}

#[test]
fn replace_mode_landings_publish_the_same_rows() {
    let generated = Events::new(4_000).days(3).seed(7).rejects(0.01).lines();
    let restated = Events::new(2_500).days(2).seed(8).lines();
    let breach = lines(&[
        event("p1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        r#"{"event_id":"p2","order_id":2,"status":"PAID","updated_at":"2024-03-01T10:00:00Z","email":"a@b.c"}"#.to_owned(),
    ]);
    both_engines_land_alike(
        "max_dates = 5\nmax_rejected_lines = 1000\nmax_shrink = 1.0",
        &[generated.clone(), generated, breach, restated],
    );
}

#[test]
fn merge_mode_micro_batches_publish_the_same_rows() {
    let first = lines(&[
        event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        event("e2", 2, "PENDING", "2024-03-01T10:00:00Z"),
        event("e3", 3, "PENDING", "2024-03-01T10:00:00Z"),
    ]);
    let second = lines(&[
        event("e4", 2, "PAID", "2024-03-01T11:00:00Z"),
        event("e5", 4, "PENDING", "2024-03-01T11:00:00Z"),
        event("e6", 1, "PENDING", "2024-03-01T09:00:00Z"),
        event("e7", 3, "SHIPPED", "2024-03-02T08:00:00Z"),
        event_seq("e8", 5, "PENDING", "2024-03-02T08:00:00Z", 2),
    ]);
    let generated = Events::new(3_000).days(3).seed(9).lines();
    both_engines_land_alike(
        "write_mode = \"merge\"\nmax_dates = 5",
        &[first, second, generated],
    );
}

/// A refusal found by the driver's pass runs no Spark job, so the counts only the row
/// work makes are unknown: `null` in `--json`, said in words in the text report, and
/// never a `keys 0` that looks counted. The lake and the checkpoint stay as they were.
#[test]
fn a_refusal_before_the_row_work_reports_unknown_counts_not_zero() {
    let _server = engines::server();
    let remote = engines::remote();
    let product = Product::new();
    let leak = [
        event("p1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        r#"{"event_id":"p2","order_id":2,"status":"PAID","updated_at":"2024-03-01T10:00:00Z","email":"a@b.c"}"#.to_owned(),
    ]
    .join("\n");
    let input = product.input_bytes("leak.jsonl", leak.as_bytes());
    let before = product.snapshot();
    let path = input.to_str().unwrap();
    let spark = ["--engine", "spark", "--remote", &remote];
    let plan = product.wharf(&[&["plan", path, "--json"][..], &spark].concat());
    assert_eq!(plan.code, 3, "{}", plan.stderr);
    let out = plan.json();
    assert_eq!(out["reason"], "prohibited_field");
    for unknown in ["retries", "keys", "ties_by_arrival", "stale"] {
        assert!(out["counts"][unknown].is_null(), "{unknown}: {out}");
    }
    assert!(out["dates"].is_null(), "{out}");
    assert_eq!(
        out["counts"]["lines"], 2,
        "what the driver counted stays a count"
    );
    let text = product.wharf(&[&["run", path], &spark[..]].concat());
    assert_eq!(text.code, 3, "{}", text.stderr);
    assert!(
        text.stdout.contains(wharf::plan::NOT_RANKED),
        "the text report: {}",
        text.stdout
    );
    assert!(!text.stdout.contains("keys 0"), "{}", text.stdout);
    assert_eq!(product.snapshot().files, before.files, "a refusal wrote");
    assert!(product.checkpoint("leak.jsonl").is_none());
    let history = product.wharf(&["history", "--json"]);
    let record: serde_json::Value =
        serde_json::from_str(history.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        record["unranked"], true,
        "the run log says its zeros are not counts"
    );
}

/// An input named with Hadoop's glob characters is read as that one file: a name Spark
/// took as a pattern would read the decoy beside it (which the pattern matches) instead.
#[test]
fn an_input_named_like_a_glob_is_read_as_that_one_file() {
    let _server = engines::server();
    let product = Product::new();
    let named = [
        event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        event("e2", 2, "PAID", "2024-03-01T10:05:00Z"),
        event("e3", 3, "SHIPPED", "2024-03-01T10:10:00Z"),
    ]
    .join("\n");
    let decoy = [
        event("d1", 7, "PENDING", "2024-03-01T10:00:00Z"),
        event("d2", 8, "PENDING", "2024-03-01T10:00:00Z"),
    ]
    .join("\n");
    let input = product.input_bytes("o[1]*{a,b}?.jsonl", named.as_bytes());
    product.input_bytes("o1-a-.jsonl", decoy.as_bytes());
    let out = spark_run_json(&product, &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["counts"]["keys"], 3);
    let keys: Vec<String> = product
        .rows("2024-03-01")
        .iter()
        .map(|row| row["order_id"].clone())
        .collect();
    assert_eq!(
        keys,
        ["1", "2", "3"],
        "the rows of the named file, not the decoy's"
    );
}
