//! `unknown_fields = "rescue"` (CONTRACT.md §1.1) on the local engine: unknown fields
//! are published with their row in `_rescued`, one JSON object in the order they
//! appeared; the rescued object takes part in §2's comparison, so two lines of one event
//! differing only in an unknown field are a conflict; prohibited fields still refuse.

use crate::kit::{Product, schema};

fn rescuing(format: &str) -> Product {
    Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"{format}\"\n{}",
        schema().replace("unknown_fields = \"breach\"", "unknown_fields = \"rescue\"")
    ))
}

const LINES: [&str; 3] = [
    r#"{"event_id":"e1","order_id":101,"status":"PENDING","updated_at":"2024-03-01T10:00:00Z","eta_minutes":12}"#,
    r#"{"event_id":"e2","order_id":101,"status":"PAID","eta_minutes":7,"updated_at":"2024-03-01T10:15:00Z","app":{"v":"2.1"}}"#,
    r#"{"event_id":"e3","order_id":102,"status":"PAID","updated_at":"2024-03-01T10:20:00Z"}"#,
];

#[test]
fn unknown_fields_are_rescued_ranked_and_published_with_their_row() {
    let product = rescuing("hive");
    let ran = product.run_json(&product.input("day.jsonl", &LINES));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let rows = product.rows("2024-03-01");
    let rescued: Vec<(String, Option<String>)> = rows
        .iter()
        .map(|r| (r["order_id"].clone(), r.get("_rescued").cloned()))
        .collect();
    assert_eq!(
        rescued,
        [
            (
                "101".into(),
                Some(r#"{"eta_minutes":7,"app":{"v":"2.1"}}"#.into())
            ),
            ("102".into(), None),
        ]
    );
}

#[test]
fn a_delta_table_publishes_the_rescue_column() {
    let product = rescuing("delta");
    let ran = product.run_json(&product.input("day.jsonl", &LINES));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let folder = product.publish.join("event_date=2024-03-01");
    let rows = crate::kit::read_rows(&folder);
    assert!(
        rows.iter().any(|r| r.get("_rescued").map(String::as_str)
            == Some(r#"{"eta_minutes":7,"app":{"v":"2.1"}}"#)),
        "{rows:?}"
    );
    let log = std::fs::read_to_string(product.publish.join("_delta_log/00000000000000000000.json"))
        .unwrap();
    assert!(
        log.contains(r#"\"name\":\"_rescued\",\"type\":\"string\",\"nullable\":true"#),
        "{log}"
    );
}

/// §2 with rescue: the rescued object is compared as a field. The same event twice with
/// the same unknown fields is a retry; with a different unknown value, a conflict.
#[test]
fn an_event_repeated_with_another_unknown_value_is_a_conflict() {
    let product = rescuing("hive");
    let same = product.input("same.jsonl", &[LINES[0], LINES[0]]);
    let out = product.plan_json(&same).json();
    assert_eq!(
        (out["action"].as_str(), out["counts"]["retries"].as_u64()),
        (Some("publish"), Some(1))
    );
    let other = LINES[0].replace(r#""eta_minutes":12"#, r#""eta_minutes":13"#);
    let differs = product.input("differs.jsonl", &[LINES[0], &other]);
    let ran = product.plan_json(&differs);
    assert_eq!(ran.code, 3);
    assert_eq!(ran.json()["reason"], "conflict");
}

#[test]
fn prohibited_fields_still_refuse_when_rescuing() {
    let product = rescuing("hive");
    let leaky = LINES[2].replace('}', r#","email":"a@example.com"}"#);
    let ran = product.run_json(&product.input("leaky.jsonl", &[LINES[0], &leaky]));
    assert_eq!(
        (ran.code, ran.json()["reason"].as_str()),
        (3, Some("prohibited_field"))
    );
    assert!(!product.publish.exists());
}

/// A product that starts rescuing after landings without it: on hive, files written
/// before lack the column and read as null (merge mode carries their rows over); a
/// Delta table's schema is never changed, so its landing errors with nothing written.
#[test]
fn switching_to_rescue_later_keeps_old_rows_and_never_changes_a_delta_schema() {
    for format in ["hive", "delta"] {
        let product = Product::with_config(&format!(
            "product = \"orders\"\nwrite_mode = \"merge\"\ntable_format = \"{format}\"\n{}",
            schema()
        ));
        assert_eq!(
            product
                .run_json(&product.input("a.jsonl", &[LINES[2]]))
                .code,
            0
        );
        let before = crate::kit::tree(&product.publish);
        let text = std::fs::read_to_string(&product.config).unwrap();
        std::fs::write(&product.config, text.replace("\"breach\"", "\"rescue\"")).unwrap();
        let ran = product.run_json(&product.input("b.jsonl", &[LINES[0]]));
        if format == "delta" {
            assert_eq!(ran.code, 1, "{}", ran.stdout);
            assert!(
                ran.stderr.contains("never changes a table's schema"),
                "{}",
                ran.stderr
            );
            assert_eq!(crate::kit::tree(&product.publish), before);
            continue;
        }
        assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
        let rows = product.rows("2024-03-01");
        let rescued: Vec<Option<&str>> = rows
            .iter()
            .map(|r| r.get("_rescued").map(String::as_str))
            .collect();
        assert_eq!(rescued, [Some(r#"{"eta_minutes":12}"#), None]);
    }
}
