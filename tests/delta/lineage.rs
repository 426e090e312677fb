//! Lineage from a Delta table, validated against OpenLineage's JSON Schema and Wharf's
//! facet schema (tests/kit/lineage.rs): a local table's publish and its `table_feature`
//! refusal, and an inbox and a table on the SeaweedFS bucket (publish, skip, refusal),
//! each START strictly before its end and each dataset named as the Naming spec says:
//! `s3://wharf` and the key without a leading or trailing slash.

use serde_json::json;

use super::kit::lineage::{check_events, read_events};
use super::kit::product::Product;
use super::s3_inbox::{fresh_prefix, lines, s3_product, wharf_s3};
use super::{DAY, Root, delta_product, features, run};

#[test]
fn a_local_tables_publish_and_table_feature_refusal_validate() {
    let product = delta_product("lake/orders");
    let config = std::fs::read_to_string(&product.config).unwrap();
    let config = config.replacen('\n', "\nlineage = \"file:lineage.ndjson\"\n", 1);
    std::fs::write(&product.config, config).unwrap();
    let first = product.input("01-day.jsonl", &DAY);
    assert_eq!(run(&product, &first, false).code, 0);
    features::other_writer_commits(&product.publish, &["someFutureFeature"], json!({}));
    let again = product.input("02-day.jsonl", &DAY[..2]);
    let ran = run(&product, &again, false);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    let runs = check_events(&read_events(&product.path().join("lineage.ndjson")));
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let refused = runs.iter().find(|r| r.end == "FAIL").unwrap();
    let message = refused.message.as_deref().unwrap();
    assert!(
        message.starts_with("table_feature: ") && message.contains("`someFutureFeature`"),
        "{message}"
    );
    for run in &runs {
        // The table's URL is `file:///…/orders/`: named by its path, no trailing slash.
        let output = &run.event["outputs"][0];
        assert_eq!(output["namespace"], "file");
        assert_eq!(output["name"], product.publish.to_str().unwrap());
    }
}

#[test]
fn an_s3_inbox_and_table_validate_and_name_bucket_and_key() {
    let prefix = fresh_prefix("lineage");
    let bucket = Root::s3(&prefix);
    let product: Product = s3_product(
        &prefix,
        &format!(
            "publish_root = \"s3://wharf/{prefix}-lake/orders/\"\ntable_format = \"delta\"\nlineage = \"file:lineage.ndjson\""
        ),
    );
    bucket.put("01-day.jsonl", &lines(&DAY));
    let landed = wharf_s3(&product, &["run", "--json"]);
    assert_eq!(landed.code, 0, "{}", landed.stderr);
    let skipped = wharf_s3(&product, &["run", "--json"]);
    assert_eq!(skipped.json()["action"], "skipped", "{}", skipped.stderr);
    bucket.put(
        "02-leaky.jsonl",
        &lines(&[r#"{"event_id":"x","order_id":9,"status":"P","updated_at":"2024-03-02T10:00:00Z","email":"e"}"#]),
    );
    let ran = wharf_s3(
        &product,
        &[
            "run",
            &format!("s3://wharf/{prefix}/02-leaky.jsonl"),
            "--json",
        ],
    );
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    let runs = check_events(&read_events(&product.path().join("lineage.ndjson")));
    let ends: Vec<(&str, Option<&str>)> = runs
        .iter()
        .map(|r| (r.end.as_str(), r.action.as_deref()))
        .collect();
    assert_eq!(ends.len(), 3, "{runs:#?}");
    for (end, action) in [
        ("COMPLETE", "published"),
        ("COMPLETE", "skipped"),
        ("FAIL", "refused"),
    ] {
        assert!(ends.contains(&(end, Some(action))), "{ends:?}");
    }
    for run in &runs {
        let input = &run.event["inputs"][0];
        assert_eq!(input["namespace"], "s3://wharf");
        let name = input["name"].as_str().unwrap();
        assert!(
            name.starts_with(&format!("{prefix}/0")) && name.ends_with(".jsonl"),
            "{name}"
        );
        let output = &run.event["outputs"][0];
        assert_eq!(
            output,
            &json!({"namespace": "s3://wharf", "name": format!("{prefix}-lake/orders"), "facets": {}})
        );
    }
}
