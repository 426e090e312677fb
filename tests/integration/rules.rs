//! Value rules (CONTRACT.md §1.2) on the local engine: the matrix of `kit::rules` on a
//! hive lake and a Delta table, and the contract's reference example under rules it
//! keeps.

use crate::kit::rules::{self, CASES};
use crate::kit::{Product, schema};

fn local(product: &Product, input: &std::path::Path) -> crate::kit::Ran {
    product.run_json(input)
}

#[test]
fn each_rule_and_violation_on_a_hive_lake() {
    assert_eq!(rules::matrix("hive", &local).len(), 9);
}

/// The text report names the rule and its count, not the value.
#[test]
fn the_text_plan_counts_by_rule() {
    let case = &CASES[0];
    let product = Product::with_config(&rules::config(case, "hive", ""));
    let mut lines: Vec<&str> = rules::REFERENCE.to_vec();
    lines.push(case.bad);
    let input = product.input("day.jsonl", &lines);
    let ran = product.wharf(&["plan", input.to_str().unwrap()]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stdout.contains("by rule: status.one_of 1"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("value_not_allowed 1"), "{}", ran.stdout);
    assert!(!ran.stdout.contains(case.secret), "{}", ran.stdout);
}

#[test]
fn each_rule_and_violation_on_a_delta_table() {
    assert_eq!(rules::matrix("delta", &local).len(), 9);
}

/// §9 with every rule it keeps: still exactly its three rows.
#[test]
fn the_reference_example_keeps_its_rules_and_publishes_three_rows() {
    let mut text = schema().to_owned();
    for case in &CASES {
        text = text.replace(
            case.declared,
            &format!(
                "{}, on_violation = \"breach\", mostly = 0.99 }}",
                case.ruled
            ),
        );
    }
    let product = Product::with_config(&format!("product = \"orders\"\n{text}"));
    let input = product.input("day.jsonl", &rules::REFERENCE);
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let rows = product.rows("2024-03-01");
    assert_eq!(
        crate::kit::statuses(&rows),
        [
            (101, "PAID".to_owned()),
            (102, "SHIPPED".to_owned()),
            (103, "PENDING".to_owned())
        ]
    );
    assert!(
        ran.json()["counts"].get("by_rule").is_none(),
        "no rule broken, none counted"
    );
}

/// A rule relative to the run's start is resolved at each run: the same line passes a
/// rule `now-…` it was within and fails once the bound passes it, on the same config.
#[test]
fn a_timestamp_bound_in_the_past_refuses_what_it_passes_in_the_future() {
    let case = &CASES[2];
    let ruled = |bound: &str| {
        format!(
            "product = \"orders\"\n{}",
            schema().replace(
                case.declared,
                &format!(
                    r#"updated_at = {{ type = "timestamp", required = true, min = "{bound}", on_violation = "breach" }}"#
                )
            )
        )
    };
    let line = crate::kit::event("e1", 1, "PAID", "2024-03-01T10:00:00Z");
    for (bound, code) in [
        ("2024-03-01T10:00:00Z", 0),
        ("now-100000d", 0),
        ("now-1d", 3),
    ] {
        let product = Product::with_config(&ruled(bound));
        let ran = product.run_json(&product.input("a.jsonl", &[&line]));
        assert_eq!(ran.code, code, "{bound}: {}", ran.stdout);
    }
}
