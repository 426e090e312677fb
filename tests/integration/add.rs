//! `unknown_fields = "add"` (CONTRACT.md §1.1) on the local engine, hive and Delta,
//! replace and merge: a new field of one type becomes a nullable column, announced by the
//! plan and kept in the lake's schema history; old dates read null, new ones the values;
//! a value of another type is `bad_type`; a refused input changes no byte.

use crate::kit::{Product, micros, schema};

fn adding(format: &str, mode: &str) -> Product {
    Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"{format}\"\n\
         write_mode = \"{mode}\"\n{}",
        schema().replace("unknown_fields = \"breach\"", "unknown_fields = \"add\"")
    ))
}

const OLD: &str =
    r#"{"event_id":"e1","order_id":101,"status":"PAID","updated_at":"2024-03-01T10:00:00Z"}"#;
const NEW: [&str; 2] = [
    r#"{"event_id":"e2","order_id":201,"status":"PAID","updated_at":"2024-03-02T10:00:00Z","eta_minutes":12,"ratio":0.5,"late":true,"promised_at":"2024-03-02T11:00:00+01:00"}"#,
    r#"{"event_id":"e3","order_id":202,"status":"PAID","updated_at":"2024-03-02T10:05:00Z","eta_minutes":null,"ratio":1e0,"late":false}"#,
];

#[test]
fn a_new_field_becomes_a_column_old_dates_null_new_dates_values() {
    for format in ["hive", "delta"] {
        let product = adding(format, "replace");
        assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
        let second = product.input("b.jsonl", &NEW);
        let planned = product.wharf(&["plan", second.to_str().unwrap()]);
        assert!(
            planned
                .stdout
                .contains("adds column `eta_minutes` (int), column `ratio` (float), column `late` (bool), column `promised_at` (timestamp)"),
            "{}",
            planned.stdout
        );
        let ran = product.run_json(&second);
        assert_eq!(ran.code, 0, "{format}: {}{}", ran.stdout, ran.stderr);
        assert_eq!(ran.json()["added_columns"][0]["name"], "eta_minutes");
        let old = product.rows("2024-03-01");
        assert_eq!(old.len(), 1);
        assert!(!old[0].contains_key("eta_minutes"), "{format}: {old:?}");
        let new = product.rows("2024-03-02");
        let got: Vec<[Option<&str>; 4]> = new
            .iter()
            .map(|r| {
                ["eta_minutes", "ratio", "late", "promised_at"]
                    .map(|c| r.get(c).map(String::as_str))
            })
            .collect();
        let promised = micros("2024-03-02T10:00:00Z");
        assert_eq!(
            got,
            [
                [
                    Some("12"),
                    Some("Double(0.5)"),
                    Some("Bool(true)"),
                    Some(promised.as_str())
                ],
                [None, Some("Double(1.0)"), Some("Bool(false)"), None],
            ],
            "{format}"
        );
        // The schema history names the landing; status lists it.
        let history = std::fs::read_to_string(product.state.join("columns.json")).unwrap();
        assert!(
            history.contains("\"eta_minutes\"") && history.contains("b.jsonl"),
            "{history}"
        );
        let status = product.wharf(&["status"]).stdout;
        assert!(
            status.contains("column eta_minutes (int)  added by b.jsonl"),
            "{status}"
        );
        if format == "delta" {
            // The schema change and the files, one commit.
            let log = std::fs::read_to_string(
                product.publish.join("_delta_log/00000000000000000001.json"),
            )
            .unwrap();
            assert!(
                log.contains("metaData") && log.contains("eta_minutes"),
                "{log}"
            );
            assert!(log.contains("\"add\""), "{log}");
        }
        // From now on a declared field: another type is bad_type, even without "add".
        let other = product.input(
            "c.jsonl",
            &[&NEW[0]
                .replace("e2", "e4")
                .replace("\"eta_minutes\":12", "\"eta_minutes\":\"soon\"")],
        );
        let out = product.plan_json(&other).json();
        assert_eq!(out["findings"][0]["reason"], "bad_type", "{out}");
        assert_eq!(out["findings"][0]["field"], "eta_minutes", "{out}");
    }
}

/// Two types in one input: `bad_type` on each line that disagrees with the first.
#[test]
fn two_types_in_one_input_are_bad_type_after_the_first() {
    let product = adding("hive", "replace");
    let soon = NEW[1].replace("\"eta_minutes\":null", "\"eta_minutes\":\"soon\"");
    let out = product
        .plan_json(&product.input("mixed.jsonl", &[NEW[0], &soon]))
        .json();
    assert_eq!(out["counts"]["rejected"], 1, "{out}");
    assert_eq!(out["findings"][0]["line"], 2, "{out}");
    assert_eq!(out["findings"][0]["reason"], "bad_type", "{out}");
    assert_eq!(out["findings"][0]["field"], "eta_minutes", "{out}");
}

/// A refused input (a prohibited field; a nested unknown field) adds nothing anywhere.
#[test]
fn a_refused_input_changes_no_byte() {
    for format in ["hive", "delta"] {
        let product = adding(format, "merge");
        assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
        let before = crate::kit::tree(&product.publish);
        let history = || std::fs::read(product.state.join("columns.json")).ok();
        let recorded = history();
        let leaky = NEW[0].replace('}', r#","email":"a@example.com"}"#);
        let nested = NEW[1].replace("\"late\":false", "\"app\":{\"v\":3}");
        for (name, line, reason) in [
            ("leaky.jsonl", leaky.as_str(), "prohibited_field"),
            ("nested.jsonl", nested.as_str(), "unknown_field"),
        ] {
            let ran = product.run_json(&product.input(name, &[NEW[0], line]));
            assert_eq!((ran.code, ran.json()["reason"].as_str()), (3, Some(reason)));
            assert_eq!(
                crate::kit::tree(&product.publish),
                before,
                "{format} {name}"
            );
            assert_eq!(history(), recorded, "{format} {name}: no column recorded");
        }
    }
}

/// Merge mode carries the old rows of a date the new column's landing rewrites: null.
#[test]
fn merge_keeps_old_rows_of_a_rewritten_date_as_null() {
    for format in ["hive", "delta"] {
        let product = adding(format, "merge");
        assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
        let same_day = NEW[0].replace("2024-03-02T10:00:00Z", "2024-03-01T11:00:00Z");
        let ran = product.run_json(&product.input("b.jsonl", &[&same_day]));
        assert_eq!(ran.code, 0, "{format}: {}{}", ran.stdout, ran.stderr);
        // A Delta table's removed files stay in the folder: read the version's files.
        let rows = match format {
            "delta" => delta_rows(&product),
            _ => product.rows("2024-03-01"),
        };
        let eta: Vec<(String, Option<&str>)> = rows
            .iter()
            .map(|r| {
                (
                    r["order_id"].clone(),
                    r.get("eta_minutes").map(String::as_str),
                )
            })
            .collect();
        assert_eq!(
            eta,
            [("101".into(), None), ("201".into(), Some("12"))],
            "{format}"
        );
    }
}

/// The rows of the files the table's version 1 adds.
fn delta_rows(product: &Product) -> Vec<std::collections::BTreeMap<String, String>> {
    let log = std::fs::read_to_string(product.publish.join("_delta_log/00000000000000000001.json"))
        .unwrap();
    let mut rows = Vec::new();
    for action in log.lines() {
        let action: serde_json::Value = serde_json::from_str(action).unwrap();
        if let Some(path) = action["add"]["path"].as_str() {
            let dir = tempfile::tempdir().unwrap();
            std::fs::copy(product.publish.join(path), dir.path().join("f.parquet")).unwrap();
            rows.extend(crate::kit::read_rows(dir.path()));
        }
    }
    rows
}

/// §1.1: the schema history is the lake's. With `columns.json` deleted, or the whole
/// state root, it is rebuilt from the lake (the Delta log, or the hive files' footers):
/// status lists the column again, the next landing publishes its values, and a value of
/// another type is still `bad_type`.
#[test]
fn a_lost_schema_history_is_rebuilt_from_the_lake() {
    for (format, whole_state_root) in [
        ("hive", false),
        ("hive", true),
        ("delta", false),
        ("delta", true),
    ] {
        let case = format!("{format}, whole state root {whole_state_root}");
        let product = adding(format, "replace");
        assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
        assert_eq!(product.run_json(&product.input("b.jsonl", &NEW)).code, 0);
        if whole_state_root {
            std::fs::remove_dir_all(&product.state).unwrap();
        } else {
            std::fs::remove_file(product.state.join("columns.json")).unwrap();
        }
        // The hive manifest went with the state root: who added it is unknown then.
        let by = match (format, whole_state_root) {
            ("hive", true) => "unknown (rebuilt from the lake)",
            _ => "b.jsonl",
        };
        let status = product.wharf(&["status"]);
        assert!(
            status
                .stdout
                .contains(&format!("column eta_minutes (int)  added by {by}")),
            "{case}: {}{}",
            status.stdout,
            status.stderr
        );
        let later = NEW[0]
            .replace("e2", "e5")
            .replace("\"order_id\":201", "\"order_id\":301")
            .replace("2024-03-02T10:00:00Z", "2024-03-03T10:00:00Z")
            .replace("\"eta_minutes\":12", "\"eta_minutes\":30");
        let ran = product.run_json(&product.input("c.jsonl", &[&later]));
        assert_eq!(ran.code, 0, "{case}: {}{}", ran.stdout, ran.stderr);
        assert!(
            ran.stderr
                .contains("rebuilt the schema history from the lake"),
            "{case}: {}",
            ran.stderr
        );
        let announced = ran.json()["added_columns"].as_array().map_or(0, Vec::len);
        assert_eq!(announced, 0, "{case}: declared again, not added anew");
        let rows = product.rows("2024-03-03");
        assert_eq!(rows.len(), 1, "{case}");
        assert_eq!(rows[0].get("eta_minutes").map(String::as_str), Some("30"));
        let history = std::fs::read_to_string(product.state.join("columns.json")).unwrap();
        assert!(
            history.contains("\"eta_minutes\"") && history.contains("\"int\""),
            "{case}: {history}"
        );
        let other = product.input(
            "d.jsonl",
            &[&later
                .replace("e5", "e6")
                .replace("\"eta_minutes\":30", "\"eta_minutes\":\"soon\"")],
        );
        let out = product.plan_json(&other).json();
        assert_eq!(out["findings"][0]["reason"], "bad_type", "{case}: {out}");
        assert_eq!(out["findings"][0]["field"], "eta_minutes", "{case}: {out}");
    }
}

/// A corrupt schema history is an error naming the file and what to do, never rebuilt
/// over: nothing lands.
#[test]
fn a_corrupt_schema_history_is_an_error() {
    let product = adding("hive", "replace");
    assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
    let history = product.state.join("columns.json");
    std::fs::write(&history, "[{").unwrap();
    let before = crate::kit::tree(&product.publish);
    let ran = product.run_json(&product.input("b.jsonl", &NEW));
    assert_eq!(ran.code, 1, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains("columns.json") && ran.stderr.contains("Delete it"),
        "{}",
        ran.stderr
    );
    assert_eq!(crate::kit::tree(&product.publish), before);
    assert_eq!(std::fs::read_to_string(&history).unwrap(), "[{");
}

/// A lake that never added a column gets an empty history written by its next publish,
/// so later runs read the file, not every footer of the lake again.
#[test]
fn a_rebuilt_empty_history_is_written_down_by_a_publish() {
    for format in ["hive", "delta"] {
        let product = adding(format, "replace");
        assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
        std::fs::remove_dir_all(&product.state).unwrap();
        let next = OLD.replace("e1", "e7").replace("2024-03-01", "2024-03-04");
        let ran = product.run_json(&product.input("b.jsonl", &[&next]));
        assert_eq!(ran.code, 0, "{format}: {}{}", ran.stdout, ran.stderr);
        let history = std::fs::read_to_string(product.state.join("columns.json"));
        assert_eq!(history.unwrap_or_default().trim(), "[]", "{format}");
        assert_eq!(product.rows("2024-03-04").len(), 1, "{format}");
    }
}

/// `wharf diff` previews with the schema `plan` and `run` use: the lake's added columns
/// and the input's new ones declared, never an `unknown_field` refusal the run would not
/// make.
#[test]
fn diff_previews_an_input_that_adds_a_column_as_the_run_lands_it() {
    for format in ["hive", "delta"] {
        let product = adding(format, "replace");
        assert_eq!(product.run_json(&product.input("a.jsonl", &[OLD])).code, 0);
        let second = product.input("b.jsonl", &NEW);
        let diff = product.wharf(&["diff", second.to_str().unwrap()]);
        assert_eq!(diff.code, 0, "{format}: {}{}", diff.stdout, diff.stderr);
        assert!(
            diff.stdout.contains("event_date=2024-03-02  inserted 2"),
            "{format}: {}",
            diff.stdout
        );
        assert!(!diff.stdout.contains("unknown_field"), "{}", diff.stdout);
        // Once landed, a later input that carries the column again diffs against it.
        assert_eq!(product.run_json(&second).code, 0);
        let third = product.input(
            "c.jsonl",
            &[r#"{"event_id":"e4","order_id":201,"status":"SHIPPED","updated_at":"2024-03-02T12:00:00Z","eta_minutes":5}"#],
        );
        let diff = product.wharf(&["diff", third.to_str().unwrap(), "--allow-shrink"]);
        assert_eq!(diff.code, 0, "{format}: {}{}", diff.stdout, diff.stderr);
        assert!(
            diff.stdout.contains("status PAID → SHIPPED"),
            "{}",
            diff.stdout
        );
    }
}
