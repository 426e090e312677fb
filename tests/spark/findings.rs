//! Findings past what the driver holds (`store::findings::HELD`, 4,096 whatever the reject
//! cap) are written to the state root and read back into quarantine: a refused file of
//! many rejects, whose refusal is named by a breach the driver only wrote out, a file of
//! many conflicting lines, which Spark lists a page at a time, and one whose spilled
//! rejects (under a cap of 10⁸) Spark's conflicts go between, quarantine exactly the local
//! engine's records, and no spilled file outlives the run.

use std::path::Path;

use crate::kit::{Product, event};
use crate::landing::spark_run_json;

/// Lands `text` with each engine into its own product; their `--json` outputs and
/// `rejects.jsonl` bytes must agree.
fn both_engines_quarantine_alike(text: &str) -> serde_json::Value {
    both_engines_quarantine_alike_with("max_rejected_lines = 10", text)
}

/// [`both_engines_quarantine_alike`] under `settings`.
fn both_engines_quarantine_alike_with(settings: &str, text: &str) -> serde_json::Value {
    let (local, spark) = (
        Product::with_settings(settings),
        Product::with_settings(settings),
    );
    let on_local = local.run_json(&local.input_bytes("orders.jsonl", text.as_bytes()));
    let on_spark = spark_run_json(&spark, &spark.input_bytes("orders.jsonl", text.as_bytes()));
    let (a, b) = (on_local.json(), on_spark.json());
    assert_eq!(a["action"], "refused", "{}", on_local.stderr);
    assert_eq!(b["action"], "refused", "{}", on_spark.stderr);
    for field in ["reason", "findings_total", "findings"] {
        if a[field] != b[field] {
            let (x, y) = (a[field].as_array(), b[field].as_array());
            let first = x
                .zip(y)
                .and_then(|(x, y)| x.iter().zip(y).position(|(p, q)| p != q));
            let at =
                |v: Option<&Vec<serde_json::Value>>| first.and_then(|i| v.map(|v| v[i].clone()));
            panic!(
                "{field} differs between the engines, first at {first:?}: {:?} vs {:?}",
                at(x),
                at(y)
            );
        }
    }
    assert_eq!(a["counts"]["by_reason"], b["counts"]["by_reason"]);
    let rejects = |product: &Product| {
        let sha = a["input_sha256"].as_str().unwrap().to_owned();
        std::fs::read(product.quarantine.join(sha).join("rejects.jsonl")).unwrap()
    };
    let (local_rejects, spark_rejects) = (rejects(&local), rejects(&spark));
    let records = spark_rejects.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(
        records,
        b["findings_total"].as_u64().unwrap(),
        "a record a finding"
    );
    assert!(local_rejects == spark_rejects, "rejects.jsonl differs");
    assert!(
        no_spill_left(&spark.state),
        "a spilled file outlived the run"
    );
    assert!(
        spark
            .tree("lake")
            .keys()
            .all(|p| !p.to_string_lossy().contains(".parquet")),
        "a refusal published nothing"
    );
    b
}

fn no_spill_left(state: &Path) -> bool {
    std::fs::read_dir(state).unwrap().all(|e| {
        !e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".findings-")
    })
}

#[test]
fn a_breach_after_thousands_of_rejects_names_the_refusal_from_the_spill() {
    let _server = crate::engines::server();
    let mut lines: Vec<String> = (0..10_000)
        .map(|i| {
            if i % 2 == 0 {
                format!("{{\"broken\":{i}")
            } else {
                event(&format!("e{i}"), i % 40, "PAID", "2024-03-01T10:00:00Z")
            }
        })
        .collect();
    lines.push(
        r#"{"event_id":"e9","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#
            .to_owned(),
    );
    let out = both_engines_quarantine_alike(&(lines.join("\n") + "\n"));
    assert_eq!(
        out["reason"], "prohibited_field",
        "the spilled breach names it"
    );
    assert_eq!(out["findings_total"], 5001);
}

#[test]
fn conflicts_go_between_the_driver_s_spilled_rejects_in_line_order() {
    // Under a cap of 10⁸ the census reaches Spark with rejects the driver spilled: the
    // conflicts Spark lists are merged with held and spilled rejects alike.
    let _server = crate::engines::server();
    let mut lines = Vec::new();
    for i in 0..12_000 {
        if i % 2 == 0 {
            lines.push(format!("{{\"broken\":{i}"));
            continue;
        }
        let id = i % 500;
        // Each id's first line is PAID; a later one every 50 lines contradicts it.
        let status = if i > 1000 && i % 50 == 1 {
            "PENDING"
        } else {
            "PAID"
        };
        lines.push(event(&format!("e{id}"), id, status, "2024-03-01T10:00:00Z"));
    }
    let text = lines.join("\n") + "\n";
    let out = both_engines_quarantine_alike_with("max_rejected_lines = 100000000", &text);
    assert_eq!(out["reason"], "conflict");
    assert_eq!(out["counts"]["rejected"], 6000);
    assert_eq!(out["counts"]["by_reason"]["conflict"], 220);
    assert_eq!(out["findings_total"], 6220);
}

#[test]
fn thousands_of_conflicting_lines_are_listed_in_pages_and_spilled_in_line_order() {
    let _server = crate::engines::server();
    let mut lines = Vec::new();
    for i in 0..25_000 {
        let id = i % 2000;
        // Each id's first line is PAID; every later one contradicts it, by status only.
        let status = if i < 2000 { "PAID" } else { "PENDING" };
        lines.push(event(&format!("e{id}"), id, status, "2024-03-01T10:00:00Z"));
        if i % 5000 == 7 {
            lines.push("{\"broken\":1".to_owned());
        }
    }
    let out = both_engines_quarantine_alike(&(lines.join("\n") + "\n"));
    assert_eq!(out["reason"], "conflict");
    assert_eq!(out["findings_total"], 23_000 + 5);
}
