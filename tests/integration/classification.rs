//! CONTRACT.md §1: one test per row of the classification table, each landed for real:
//! the quarantine record names the reason and field, the good line is the only row
//! published, and a breach publishes nothing.

use crate::kit::{Product, event};

const GOOD: &str =
    r#"{"event_id":"g1","order_id":1,"status":"PAID","updated_at":"2024-03-01T10:00:00Z"}"#;

/// Lands GOOD then `line`; asserts `line` 2 is rejected with `reason` on `field` and only
/// order 1 is published.
fn assert_rejected(line: &[u8], reason: &str, field: Option<&str>) {
    let product = Product::with_settings("");
    let mut bytes = format!("{GOOD}\n").into_bytes();
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    let input = product.input_bytes("in.jsonl", &bytes);
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let out = ran.json();
    assert_eq!(out["action"], "published");
    assert_eq!(out["counts"]["rejected"], 1);
    assert_eq!(out["counts"]["by_reason"][reason], 1, "{out}");
    let rejects = product.rejects(out["input_sha256"].as_str().unwrap());
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0]["line"], 2);
    assert_eq!(rejects[0]["reason"], reason);
    assert_eq!(rejects[0]["field"].as_str(), field, "{}", rejects[0]);
    let rows = product.rows("2024-03-01");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["order_id"], "1");
}

/// Lands GOOD then `line`; asserts the file is refused for `reason` on line 2 and nothing
/// is published.
fn assert_breach(product: &Product, line: &str, reason: &str, field: &str) {
    let input = product.input("breach.jsonl", &[GOOD, line]);
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    let out = ran.json();
    assert_eq!(
        (out["action"].as_str(), out["reason"].as_str()),
        (Some("refused"), Some(reason))
    );
    assert!(
        product.dates().is_empty(),
        "a refusal published {:?}",
        product.dates()
    );
    assert!(product.checkpoint("breach.jsonl").is_none());
    let rejects = product.rejects(out["input_sha256"].as_str().unwrap());
    assert_eq!(rejects[0]["line"], 2);
    assert_eq!(rejects[0]["field"], field);
}

#[test]
fn line_too_long() {
    let product = Product::with_settings("max_line_bytes = 120");
    let long = event("e2", 2, &"X".repeat(200), "2024-03-01T10:00:00Z");
    let input = product.input("in.jsonl", &[GOOD, &long]);
    let out = product.run_json(&input).json();
    assert_eq!(out["counts"]["by_reason"]["line_too_long"], 1);
    assert_eq!(product.rows("2024-03-01").len(), 1);
}

#[test]
fn invalid_utf8() {
    assert_rejected(b"{\"event_id\":\"e2\",\"order_id\":2,\"status\":\"P\xff\",\"updated_at\":\"2024-03-01T10:00:00Z\"}", "invalid_utf8", None);
}

#[test]
fn malformed_json() {
    assert_rejected(
        br#"{"event_id":"e2","order_id":2,}"#,
        "malformed_json",
        None,
    );
    assert_rejected(
        br#"{"event_id":"e2","order_id":NaN}"#,
        "malformed_json",
        None,
    );
    let deep = format!(
        r#"{{"event_id":"e2","city":{}1{}}}"#,
        "[".repeat(127),
        "]".repeat(127)
    );
    assert_rejected(deep.as_bytes(), "malformed_json", None);
}

#[test]
fn not_an_object() {
    assert_rejected(b"[1,2,3]", "not_an_object", None);
    assert_rejected(b"\"text\"", "not_an_object", None);
}

#[test]
fn prohibited_field_is_a_breach_even_when_null() {
    let product = Product::with_settings("");
    let line = r#"{"event_id":"e2","order_id":2,"status":"P","updated_at":"2024-03-01T10:00:00Z","payment_token":null}"#;
    assert_breach(&product, line, "prohibited_field", "payment_token");
}

#[test]
fn unknown_field_is_a_breach() {
    let product = Product::with_settings("");
    let line = r#"{"event_id":"e2","order_id":2,"status":"P","updated_at":"2024-03-01T10:00:00Z","colour":"red"}"#;
    assert_breach(&product, line, "unknown_field", "colour");
}

#[test]
fn unknown_field_is_a_reject_when_configured() {
    let product = Product::with_settings("");
    let config = std::fs::read_to_string(&product.config).unwrap();
    std::fs::write(
        &product.config,
        config.replace(
            r#"unknown_fields = "breach""#,
            r#"unknown_fields = "reject""#,
        ),
    )
    .unwrap();
    let line = r#"{"event_id":"e2","order_id":2,"status":"P","updated_at":"2024-03-01T10:00:00Z","colour":"red"}"#;
    let input = product.input("in.jsonl", &[GOOD, line]);
    let out = product.run_json(&input).json();
    assert_eq!(out["action"], "published");
    assert_eq!(out["counts"]["by_reason"]["unknown_field"], 1);
    assert_eq!(out["counts"]["rejected"], 1);
    assert_eq!(product.rows("2024-03-01").len(), 1);
}

#[test]
fn duplicate_key() {
    let line = br#"{"event_id":"e2","order_id":2,"order_id":3,"status":"P","updated_at":"2024-03-01T10:00:00Z"}"#;
    assert_rejected(line, "duplicate_key", Some("order_id"));
}

#[test]
fn missing_field_absent_or_null_before_any_type_check() {
    assert_rejected(
        br#"{"event_id":"e2","order_id":2,"updated_at":"2024-03-01T10:00:00Z"}"#,
        "missing_field",
        Some("status"),
    );
    assert_rejected(
        br#"{"event_id":"e2","order_id":2,"status":null,"updated_at":"2024-03-01T10:00:00Z"}"#,
        "missing_field",
        Some("status"),
    );
    // A missing `status` and a bad `order_id`: missing_field wins, on `status`.
    assert_rejected(
        br#"{"event_id":"e2","order_id":"2","updated_at":"2024-03-01T10:00:00Z"}"#,
        "missing_field",
        Some("status"),
    );
}

#[test]
fn bad_type() {
    for (value, field) in [
        (r#""order_id":1.0"#, "order_id"),
        (r#""order_id":"1""#, "order_id"),
        (r#""order_id":true"#, "order_id"),
        (r#""order_id":9223372036854775808"#, "order_id"),
        (r#""order_id":1e2"#, "order_id"),
        (&format!(r#""order_id":{}"#, "9".repeat(400)), "order_id"),
    ] {
        let line = format!(
            r#"{{"event_id":"e2",{value},"status":"P","updated_at":"2024-03-01T10:00:00Z"}}"#
        );
        assert_rejected(line.as_bytes(), "bad_type", Some(field));
    }
    assert_rejected(
        br#"{"event_id":"e2","order_id":2,"status":7,"updated_at":"2024-03-01T10:00:00Z"}"#,
        "bad_type",
        Some("status"),
    );
    assert_rejected(
        br#"{"event_id":"e2","order_id":2,"status":"P","updated_at":1709287200}"#,
        "bad_type",
        Some("updated_at"),
    );
}

#[test]
fn timestamp_without_offset() {
    assert_rejected(
        br#"{"event_id":"e2","order_id":2,"status":"P","updated_at":"2024-03-01 10:00:00"}"#,
        "timestamp_without_offset",
        Some("updated_at"),
    );
}

#[test]
fn bad_timestamp() {
    for at in [
        "2024-02-30T10:00:00Z",
        "2024-03-01T24:00:00Z",
        "2024-03-01T10:00:60Z",
        "2024-03-01T10:00:00+24:00",
        "yesterday",
    ] {
        let line = format!(r#"{{"event_id":"e2","order_id":2,"status":"P","updated_at":"{at}"}}"#);
        assert_rejected(line.as_bytes(), "bad_timestamp", Some("updated_at"));
    }
}

#[test]
fn accepted_with_bom_crlf_and_blank_lines() {
    let product = Product::with_settings("");
    let text = format!(
        "\u{feff}{GOOD}\r\n   \r\n\t\n{}\r\n",
        event("e2", 2, "PAID", "2024-03-01T11:00:00Z")
    );
    let input = product.input_bytes("in.jsonl", text.as_bytes());
    let out = product.run_json(&input).json();
    assert_eq!(out["counts"]["lines"], 4);
    assert_eq!(out["counts"]["blank"], 2);
    assert_eq!(out["counts"]["accepted"], 2);
    assert_eq!(out["counts"]["rejected"], 0);
    assert_eq!(product.rows("2024-03-01").len(), 2);
}

#[test]
fn a_plan_classifies_every_line_even_after_a_breach() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            r#"{"event_id":"e1","order_id":1,"status":"P","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#,
            "not json",
            r#"{"event_id":"e3","order_id":3,"status":"P","updated_at":"2024-03-01T10:00:00Z","name":"x"}"#,
        ],
    );
    let ran = product.plan_json(&input);
    assert_eq!(ran.code, 3);
    let out = ran.json();
    assert_eq!(out["counts"]["by_reason"]["prohibited_field"], 2);
    assert_eq!(out["counts"]["by_reason"]["malformed_json"], 1);
    assert_eq!(out["counts"]["rejected"], 1, "breaches are not rejects");
    assert!(
        !product.path().join("quarantine").exists(),
        "plan wrote quarantine"
    );
}
