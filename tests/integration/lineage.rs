//! Every kind of lineage run a local landing emits (a publish, a skip, each refusal a
//! local hive lake can meet, an error), validated against OpenLineage's JSON Schema and
//! Wharf's own facet schema (tests/kit/lineage.rs): each START strictly before its end,
//! each FAIL carrying its refusal's or error's sentence, the datasets named as the
//! Naming spec says, and the job in the configured namespace. The Delta suite does the
//! same for `table_feature` and on S3 (tests/delta/lineage.rs).

use std::fs;

use crate::kit::lineage::{LineageRun, check_events, read_events};
use crate::kit::{self, Product, event, schema};

/// A row value no lineage event may carry.
const SECRET: &str = "hunter2-LINEAGE-4b1d";

/// Lineage to a file, a job namespace of its own, a cap on rejects, dates and growth,
/// and two value rules: `order_id >= 0` breaches, `status` refuses beyond a share.
fn product() -> Product {
    let schema = schema()
        .replace(
            r#"order_id   = { type = "int",       required = true }"#,
            r#"order_id = { type = "int", required = true, min = 0, on_violation = "breach" }"#,
        )
        .replace(
            r#"status     = { type = "string",    required = true }"#,
            r#"status = { type = "string", required = true, one_of = ["P"], mostly = 0.5 }"#,
        );
    Product::with_config(&format!(
        "product = \"orders\"\nlineage = \"file:lineage.ndjson\"\n\
         lineage_namespace = \"prod-lake\"\nmax_rejected_lines = 2\nmax_dates = 2\n\
         max_growth = 2.0\n{schema}"
    ))
}

fn day(n: usize, date: &str, prefix: &str) -> Vec<String> {
    kit::one_day(n, date, prefix, "P")
}

/// Each refused input by the reason code it must be refused with.
fn refusals() -> Vec<(&'static str, &'static str, Vec<String>)> {
    let at = |d: &str| format!("2024-03-{d}T10:00:00Z");
    let leak = format!(
        r#"{{"event_id":"l1","order_id":1,"status":"P","updated_at":"{}","email":"{SECRET}"}}"#,
        at("05")
    );
    let unknown = format!(
        r#"{{"event_id":"u1","order_id":1,"status":"P","updated_at":"{}","zzz":"{SECRET}"}}"#,
        at("05")
    );
    let good = event("g1", 1, "P", &at("07"));
    vec![
        ("prohibited_field", "02-leaky.jsonl", vec![leak]),
        ("unknown_field", "03-unknown.jsonl", vec![unknown]),
        (
            "conflict",
            "04-conflict.jsonl",
            vec![
                event("c1", 1, "P", &at("05")),
                event("c1", 2, "P", &at("05")),
            ],
        ),
        (
            "out_of_range",
            "05-range.jsonl",
            vec![event("r1", -7, "P", &at("05"))],
        ),
        (
            "rule_share",
            "06-share.jsonl",
            vec![
                event("s1", 1, "P", &at("06")),
                event("s2", 2, SECRET, &at("06")),
                event("s3", 3, SECRET, &at("06")),
            ],
        ),
        (
            "reject_cap",
            "07-cap.jsonl",
            vec![good, "x".into(), "y".into(), SECRET.into()],
        ),
        (
            "too_many_dates",
            "08-dates.jsonl",
            vec![
                event("d1", 1, "P", &at("08")),
                event("d2", 2, "P", &at("09")),
                event("d3", 3, "P", &at("10")),
            ],
        ),
        (
            "empty_input",
            "09-blank.jsonl",
            vec![String::new(), "  ".into()],
        ),
        ("shrink", "10-fragment.jsonl", day(1, "2024-03-01", "f")),
        ("growth", "11-doubled.jsonl", day(7, "2024-03-01", "b")),
    ]
}

#[test]
fn every_lineage_event_of_a_local_landing_validates_against_the_spec() {
    let product = product();
    let full = product.input(
        "01-full.jsonl",
        &day(3, "2024-03-01", "a")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(product.run_json(&full).code, 0);
    assert_eq!(product.run_json(&full).json()["action"], "skipped");
    let mut expected: Vec<(String, String)> = Vec::new();
    for (reason, name, lines) in refusals() {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let ran = product.run_json(&product.input(name, &lines));
        assert_eq!(ran.code, 3, "{name}: {}{}", ran.stdout, ran.stderr);
        assert_eq!(ran.json()["reason"], reason, "{name}");
        expected.push((
            ran.json()["run_id"].as_str().unwrap().to_owned(),
            reason.to_owned(),
        ));
    }
    // A corrupt checkpoint: an error, which must page a human (§5.3).
    let broken = product.input(
        "12-broken.jsonl",
        &[&event("k1", 1, "P", "2024-03-11T10:00:00Z")],
    );
    fs::write(
        product.state.join("checkpoints/12-broken.jsonl.json"),
        "{not json",
    )
    .unwrap();
    let ran = product.run_json(&broken);
    assert_eq!(ran.code, 1, "{}", ran.stderr);

    let lineage = product.path().join("lineage.ndjson");
    let text = fs::read_to_string(&lineage).unwrap();
    assert!(!text.contains(SECRET), "a row value in lineage: {text}");
    let runs = check_events(&read_events(&lineage));
    assert_eq!(runs.len(), 2 + refusals().len() + 1, "{runs:#?}");
    let action = |a: &str| {
        runs.iter()
            .filter(|r| r.action.as_deref() == Some(a))
            .count()
    };
    assert_eq!((action("published"), action("skipped")), (1, 1));
    for (run_id, reason) in &expected {
        let run = runs.iter().find(|r| &r.run_id == run_id).unwrap();
        assert_eq!(run.end, "FAIL", "{reason}");
        assert_eq!(
            run.event["run"]["facets"]["wharf_landing"]["reason"],
            reason.as_str()
        );
        let message = run.message.as_deref().unwrap();
        // The refusal's own sentence, as `wharf run` prints it, not the bare code.
        assert!(message.starts_with(reason.as_str()), "{message}");
        assert!(message.len() > reason.len() + 20, "{message}");
    }
    let error: &LineageRun = runs.iter().find(|r| r.action.is_none()).unwrap();
    assert_eq!(error.end, "FAIL");
    let message = error.message.as_deref().unwrap();
    assert!(
        message.contains("checkpoint")
            && message.contains("12-broken.jsonl.json")
            && message.contains("corrupt"),
        "{message}"
    );
    assert!(
        ran.stderr.contains(message),
        "the FAIL says what stderr said: {message}"
    );
    for run in &runs {
        let event = &run.event;
        assert_eq!(
            event["job"],
            serde_json::json!({"namespace": "prod-lake", "name": "orders"})
        );
        assert_eq!(event["outputs"][0]["namespace"], "file");
        assert_eq!(
            event["outputs"][0]["name"],
            product.publish.to_str().unwrap()
        );
        let input = event["inputs"][0]["name"].as_str().unwrap();
        assert!(
            input.starts_with(product.path().join("inbox/").to_str().unwrap()),
            "{input}"
        );
    }
}
