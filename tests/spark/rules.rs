//! Value rules (CONTRACT.md §1.2) on the Spark engine: the classification is the
//! driver's, the same contract code as the local engine's, so `kit::rules`' matrix holds
//! cell for cell on a hive lake and a Delta table; and both engines agree on a file with
//! every rule broken somewhere.

use crate::engines;
use crate::kit::rules::{self, CASES};
use crate::kit::{Product, Ran};
use crate::landing::{agreed, spark_run_json};

/// `lines` as input `name` landed by the local engine on `local` and by Spark on
/// `on_spark`, both published.
fn land_on_both(
    (local, on_spark): (&Product, &Product),
    name: &str,
    lines: &[&str],
    format: &str,
) -> (Ran, Ran) {
    let a = local.run_json(&local.input(name, lines));
    let b = spark(on_spark, &on_spark.input(name, lines));
    let codes = (a.code, b.code);
    assert_eq!(codes, (0, 0), "{format}: {}{}", b.stdout, b.stderr);
    (a, b)
}

/// The rows published under `event_date=date`, sorted.
fn sorted_rows(product: &Product, date: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut rows = crate::kit::read_rows(&product.publish.join(format!("event_date={date}")));
    rows.sort();
    rows
}

fn spark(product: &Product, input: &std::path::Path) -> Ran {
    spark_run_json(product, input)
}

#[test]
fn each_rule_and_violation_on_a_hive_lake_on_spark() {
    let _server = engines::server();
    assert_eq!(rules::matrix("hive", &spark).len(), 9);
}

#[test]
fn each_rule_and_violation_on_a_delta_table_on_spark() {
    let _server = engines::server();
    assert_eq!(rules::matrix("delta", &spark).len(), 9);
}

/// Each rule's cell lands the same on both engines (action, reason, every count).
#[test]
fn both_engines_agree_on_every_rule() {
    let _server = engines::server();
    for case in &CASES {
        for extra in [", on_violation = \"breach\"", ""] {
            let local = rules::cell(case, "hive", extra, &|p, i| p.run_json(i));
            let spark = rules::cell(case, "hive", extra, &spark);
            assert_eq!(
                agreed(&local.ran.json()),
                agreed(&spark.ran.json()),
                "{} {extra}",
                case.rule
            );
        }
    }
}

/// `unknown_fields = "rescue"` (§1.1): the driver rescues, Spark ranks and writes the
/// rescue column; both engines publish the same rows, hive and Delta.
#[test]
fn both_engines_publish_the_same_rescued_rows() {
    let _server = engines::server();
    let lines = [
        r#"{"event_id":"e1","order_id":101,"status":"PENDING","updated_at":"2024-03-01T10:00:00Z","eta_minutes":12}"#,
        r#"{"event_id":"e2","order_id":101,"status":"PAID","eta_minutes":7,"updated_at":"2024-03-01T10:15:00Z","app":{"v":"2.1"}}"#,
        r#"{"event_id":"e3","order_id":102,"status":"PAID","updated_at":"2024-03-01T10:20:00Z"}"#,
        r#"{"event_id":"e3","order_id":102,"status":"PAID","updated_at":"2024-03-01T10:20:00Z"}"#,
    ];
    for format in ["hive", "delta"] {
        let config = format!(
            "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"{format}\"\n{}",
            crate::kit::schema()
                .replace("unknown_fields = \"breach\"", "unknown_fields = \"rescue\"")
        );
        let (local, on_spark) = (Product::with_config(&config), Product::with_config(&config));
        let (a, b) = land_on_both((&local, &on_spark), "day.jsonl", &lines, format);
        assert_eq!(agreed(&a.json()), agreed(&b.json()), "{format}");
        let rows = |p: &Product| sorted_rows(p, "2024-03-01");
        let published = rows(&on_spark);
        assert_eq!(rows(&local), published, "{format}");
        assert!(
            published
                .iter()
                .any(|r| r.get("_rescued").map(String::as_str)
                    == Some(r#"{"eta_minutes":7,"app":{"v":"2.1"}}"#)),
            "{format}: {published:?}"
        );
    }
}

/// The growth guard (§5.10) is the decision's, on the driver: a doubled day refuses on
/// the Spark engine with the lake byte for byte as it was, and `--allow-growth` lands it.
#[test]
fn a_doubled_day_refuses_growth_on_spark() {
    let _server = engines::server();
    let product = Product::with_settings("max_growth = 1.5");
    let day = |prefix: &str, n: i64| -> Vec<String> {
        (0..n)
            .map(|i| crate::kit::event(&format!("{prefix}{i}"), i, "PAID", "2024-03-01T10:00:00Z"))
            .collect()
    };
    let first = day("a", 2);
    let first = product.input(
        "a.jsonl",
        &first.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(spark(&product, &first).code, 0);
    let lake = crate::kit::tree(&product.publish);
    let doubled = day("b", 4);
    let doubled = product.input(
        "b.jsonl",
        &doubled.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let ran = spark(&product, &doubled);
    assert_eq!(
        (ran.code, ran.json()["reason"].as_str()),
        (3, Some("growth")),
        "{}",
        ran.stdout
    );
    assert_eq!(crate::kit::tree(&product.publish), lake);
    let remote = engines::remote();
    let allowed = product.wharf(&[
        "run",
        doubled.to_str().unwrap(),
        "--allow-growth",
        "--json",
        "--engine",
        "spark",
        "--remote",
        &remote,
    ]);
    assert_eq!(allowed.code, 0, "{}{}", allowed.stdout, allowed.stderr);
    assert_eq!(product.rows("2024-03-01").len(), 4);
}

/// `unknown_fields = "add"` (§1.1): the driver finds and types the new columns, the
/// handoff carries them, Spark ranks, merges and writes them; both engines publish the
/// same rows, hive and Delta, replace and merge (old rows of a rewritten date: null).
#[test]
fn both_engines_publish_the_same_added_columns() {
    let _server = engines::server();
    let old =
        r#"{"event_id":"e1","order_id":101,"status":"PAID","updated_at":"2024-03-01T10:00:00Z"}"#;
    let new = [
        r#"{"event_id":"e2","order_id":201,"status":"PAID","updated_at":"2024-03-01T11:00:00Z","eta_minutes":12,"ratio":0.5,"late":true,"promised_at":"2024-03-02T11:00:00+01:00"}"#,
        r#"{"event_id":"e3","order_id":202,"status":"PAID","updated_at":"2024-03-01T11:05:00Z","eta_minutes":"soon","ratio":1e0,"late":false}"#,
    ];
    for (format, mode) in [("hive", "merge"), ("delta", "replace"), ("hive", "replace")] {
        let config = format!(
            "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"{format}\"\n\
             write_mode = \"{mode}\"\n{}",
            crate::kit::schema().replace("unknown_fields = \"breach\"", "unknown_fields = \"add\"")
        );
        let (local, on_spark) = (Product::with_config(&config), Product::with_config(&config));
        for p in [&local, &on_spark] {
            assert_eq!(p.run_json(&p.input("a.jsonl", &[old])).code, 0);
        }
        let (a, b) = land_on_both((&local, &on_spark), "b.jsonl", &new, format);
        assert_eq!(agreed(&a.json()), agreed(&b.json()), "{format} {mode}");
        assert_eq!(b.json()["added_columns"].as_array().map(Vec::len), Some(4));
        assert_eq!(b.json()["findings"][0]["reason"], "bad_type");
        let rows = |p: &Product| sorted_rows(p, "2024-03-01");
        let published = rows(&on_spark);
        assert_eq!(rows(&local), published, "{format} {mode}");
        assert!(
            published
                .iter()
                .any(|r| r.get("eta_minutes").map(String::as_str) == Some("12")
                    && r.get("late").map(String::as_str) == Some("Bool(true)")),
            "{format} {mode}: {published:?}"
        );
    }
}
