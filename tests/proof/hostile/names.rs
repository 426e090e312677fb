//! Input names that are not UTF-8 are identities byte for byte (issue 48): two files
//! whose names differ only in a bad byte get two checkpoints and land once each, where
//! a lossy name made them one input that republished on every run.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::common::Product;

fn event(id: &str, order: u32, status: &str) -> Vec<u8> {
    format!(
        "{{\"event_id\":\"{id}\",\"order_id\":{order},\"status\":\"{status}\",\"updated_at\":\"2024-03-0{order}T10:00:00Z\"}}\n"
    )
    .into_bytes()
}

#[test]
fn names_differing_in_a_bad_byte_are_two_inputs_landed_once_each() {
    let product = Product::with_settings("max_dates = 5");
    let inbox = product.path().join("inbox");
    let ff = inbox.join(OsStr::from_bytes(b"c\xff.jsonl"));
    let fe = inbox.join(OsStr::from_bytes(b"c\xfe.jsonl"));
    std::fs::write(&ff, event("a", 1, "PAID")).unwrap();
    std::fs::write(&fe, event("b", 2, "SHIPPED")).unwrap();
    let first = product.wharf(&["--json", "run"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let actions: Vec<String> = first
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| format!("{} {}", v["input_name"].as_str().unwrap(), v["action"]))
        .collect();
    assert_eq!(actions.len(), 2, "{actions:?}");
    assert!(
        actions.iter().all(|a| a.ends_with("\"published\"")),
        "{actions:?}"
    );
    for _ in 0..2 {
        let again = product.wharf(&["--json", "run"]);
        assert_eq!(again.code, 0, "{}", again.stderr);
        for line in again.stdout.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["action"], "skipped", "{line}");
        }
    }
    assert!(product.checkpoint("c\u{FFFD}FF.jsonl").is_some());
    assert!(product.checkpoint("c\u{FFFD}FE.jsonl").is_some());
    let owners = product.owners();
    assert_eq!(owners["2024-03-01"], "c\u{FFFD}FF.jsonl");
    assert_eq!(owners["2024-03-02"], "c\u{FFFD}FE.jsonl");
}
