//! The value-rule matrix (CONTRACT.md §1.2), one runner for every suite: each rule
//! (`one_of` on a string, `min` on an int, `max = "now+10m"` on a timestamp) × each
//! `on_violation`, and `mostly`, landed by the engine and on the table format a suite
//! gives. A day lands first; then the same day restated with one line breaking the rule,
//! its value a secret no output may hold. A reject publishes the other rows and counts
//! the line by rule; a breach or a `rule_share` refuses with the lake byte for byte as it
//! was (on Delta the log too: no version).

use std::path::Path;

use serde_json::{Value, json};

use super::fixture::tree;
use super::product::{Product, Ran, schema};

/// One rule of the matrix.
pub struct RuleCase {
    pub rule: &'static str,
    /// The sample schema's line for the field, and the field with the rule.
    pub declared: &'static str,
    pub ruled: &'static str,
    /// The line that breaks it, and what of it no output may hold.
    pub bad: &'static str,
    pub secret: &'static str,
    pub reason: &'static str,
    pub field: &'static str,
}

pub const CASES: [RuleCase; 3] = [
    RuleCase {
        rule: "status.one_of",
        declared: r#"status     = { type = "string",    required = true }"#,
        ruled: r#"status = { type = "string", required = true, one_of = ["PENDING", "PAID", "SHIPPED"] "#,
        bad: r#"{"event_id":"b1","order_id":104,"status":"SECRET-PAYED","updated_at":"2024-03-01T12:00:00Z"}"#,
        secret: "SECRET-PAYED",
        reason: "value_not_allowed",
        field: "status",
    },
    RuleCase {
        rule: "order_id.range",
        declared: r#"order_id   = { type = "int",       required = true }"#,
        ruled: r#"order_id = { type = "int", required = true, min = 100 "#,
        bad: r#"{"event_id":"b1","order_id":-987654321,"status":"PAID","updated_at":"2024-03-01T12:00:00Z"}"#,
        secret: "987654321",
        reason: "out_of_range",
        field: "order_id",
    },
    RuleCase {
        rule: "updated_at.range",
        declared: r#"updated_at = { type = "timestamp", required = true }"#,
        ruled: r#"updated_at = { type = "timestamp", required = true, max = "now+10m" "#,
        bad: r#"{"event_id":"b1","order_id":104,"status":"PAID","updated_at":"2099-07-04T12:34:56Z"}"#,
        secret: "2099-07-04",
        reason: "out_of_range",
        field: "updated_at",
    },
];

/// The contract's reference example (§9), byte for byte.
pub const REFERENCE: [&str; 5] = [
    r#"{"event_id":"e1","order_id":101,"status":"PENDING","updated_at":"2024-03-01T10:00:00Z"}"#,
    r#"{"event_id":"e2","order_id":102,"status":"PAID","updated_at":"2024-03-01T10:05:00Z"}"#,
    r#"{"event_id":"e3","order_id":101,"status":"PAID","updated_at":"2024-03-01T10:15:00Z"}"#,
    r#"{"event_id":"e4","order_id":103,"status":"PENDING","updated_at":"2024-03-01T10:20:00Z"}"#,
    r#"{"event_id":"e5","order_id":102,"status":"SHIPPED","updated_at":"2024-03-01T11:00:00Z"}"#,
];

/// The reference day (§9) under event ids of `prefix`.
fn day(prefix: &str) -> Vec<String> {
    [
        (101, "PENDING", "10:00"),
        (102, "PAID", "10:05"),
        (101, "PAID", "10:15"),
        (103, "PENDING", "10:20"),
        (102, "SHIPPED", "11:00"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (order, status, at))| {
        super::event(
            &format!("{prefix}{i}"),
            *order,
            status,
            &format!("2024-03-01T{at}:00Z"),
        )
    })
    .collect()
}

/// The product's config: `format` (`hive` or `delta`), the case's rule with `extra`
/// (`on_violation`, `mostly`).
pub fn config(case: &RuleCase, format: &str, extra: &str) -> String {
    let ruled = format!("{}{extra} }}", case.ruled);
    format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"{format}\"\n{}",
        schema().replace(case.declared, &ruled)
    )
}

/// How one cell ended: the restated day's run.
pub struct Cell {
    pub ran: Ran,
    pub product: Product,
}

/// Lands the day, then the restated day with the case's bad line, through `land`; checks
/// what the contract says of `extra` (`on_violation = "breach"` or a `mostly` refuse,
/// anything else rejects the line) and that the secret is nowhere.
pub fn cell(
    case: &RuleCase,
    format: &str,
    extra: &str,
    land: &dyn Fn(&Product, &Path) -> Ran,
) -> Cell {
    let product = Product::with_config(&config(case, format, extra));
    let lines = day("a");
    let first = product.input(
        "01-day.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let ran = land(&product, &first);
    assert_eq!(ran.code, 0, "{}: {}{}", case.rule, ran.stdout, ran.stderr);
    let lake = tree(&product.publish);
    let mut lines = day("r");
    lines.insert(3, case.bad.to_owned());
    let second = product.input(
        "02-day.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let ran = land(&product, &second);
    let out = ran.json();
    let what = format!("{} {format} {extra}: {out}", case.rule);
    let refuses = extra.contains("breach") || extra.contains("mostly");
    if refuses {
        assert_eq!(ran.code, 3, "{what}");
        assert_eq!(
            tree(&product.publish),
            lake,
            "a refusal changes no byte: {what}"
        );
        assert!(product.checkpoint("02-day.jsonl").is_none(), "{what}");
    } else {
        assert_eq!(
            (ran.code, out["action"].as_str()),
            (0, Some("published")),
            "{what}"
        );
        assert_eq!(out["counts"]["keys"], 3, "{what}");
        assert_eq!(out["counts"]["rejected"], 1, "{what}");
    }
    if extra.contains("mostly") {
        assert_eq!(out["reason"], "rule_share", "{what}");
        let detail = out["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(case.rule) && detail.contains("16.67%"),
            "{what}"
        );
    } else if refuses {
        assert_eq!(out["reason"], case.reason, "{what}");
    }
    assert_eq!(out["counts"]["by_rule"], json!({ case.rule: 1 }), "{what}");
    assert_eq!(
        out["counts"]["by_reason"],
        json!({ case.reason: 1 }),
        "{what}"
    );
    let rejects = product.rejects(out["input_sha256"].as_str().unwrap_or_default());
    let rule = case.rule.rsplit_once('.').map(|(_, r)| r);
    assert_eq!(
        rejects,
        [
            json!({"line": 4, "reason": case.reason, "field": case.field, "event_id": "b1", "rule": rule})
        ],
        "{what}"
    );
    let everything = everything(&product, &ran);
    assert!(
        !everything.contains(case.secret),
        "the value leaked: {what}"
    );
    Cell { ran, product }
}

/// Every output of a landing: stdout, stderr, the state root's and the quarantine's files.
pub fn everything(product: &Product, ran: &Ran) -> String {
    let mut all = format!("{}{}", ran.stdout, ran.stderr);
    for root in [&product.state, &product.quarantine] {
        for (_, bytes) in tree(root) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

/// Every cell of the matrix for one engine and format: each rule × reject, breach, and
/// reject with `mostly = 0.9` (one line in six breaks it).
pub fn matrix(format: &str, land: &dyn Fn(&Product, &Path) -> Ran) -> Vec<Value> {
    let mut seen = Vec::new();
    for case in &CASES {
        for extra in [
            ", on_violation = \"reject\"",
            ", on_violation = \"breach\"",
            ", mostly = 0.9",
        ] {
            let cell = cell(case, format, extra, land);
            seen.push(cell.ran.json());
        }
    }
    seen
}
