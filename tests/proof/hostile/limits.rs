//! Careless inputs and configs (issue 48): instants whose UTC date leaves years
//! 0001–9999 are `bad_timestamp`; a `too_many_dates` refusal names the first 20 of its
//! dates and their count, in the plan, `--json`, the run log and the quarantine; a state
//! root inside the inbox, a credential in any URL and a second product on one publish
//! root are refused before anything is written, never echoing the secret.

use std::fs;

use super::valid;
use crate::common::{self, Product};

fn line(id: u32, at: &str) -> String {
    format!(r#"{{"event_id":"d{id}","order_id":{id},"status":"PAID","updated_at":"{at}"}}"#)
}

#[test]
fn instants_past_year_9999_or_before_year_1_are_bad_timestamps() {
    let product = Product::new();
    let text = [
        line(1, "2024-03-01T10:00:00Z"),
        line(2, "9999-12-31T23:59:59-23:59"),
        line(3, "0001-01-01T00:00:00+00:01"),
        line(4, "9999-12-31T23:59:59+23:59"),
    ]
    .join("\n");
    let input = product.input_bytes("edge.jsonl", format!("{text}\n").as_bytes());
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let json = ran.json();
    assert_eq!(json["counts"]["by_reason"]["bad_timestamp"], 2, "{json}");
    assert_eq!(product.dates(), ["2024-03-01", "9999-12-31"]);
    let sha = json["input_sha256"].as_str().unwrap();
    let lines: Vec<u64> = product
        .rejects(sha)
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3]);
}

#[test]
fn too_many_dates_name_the_first_twenty_and_the_count() {
    let product = Product::new();
    let text: Vec<String> = (0..150u32)
        .map(|i| {
            line(
                i + 1,
                &format!("2020-{:02}-{:02}T10:00:00Z", i / 28 + 1, i % 28 + 1),
            )
        })
        .collect();
    let input = product.input_bytes("dates.jsonl", format!("{}\n", text.join("\n")).as_bytes());
    let plan = product.wharf(&["plan", input.to_str().unwrap()]);
    assert_eq!(plan.code, 3, "{}", plan.stderr);
    assert!(
        plan.stdout
            .contains("150 dates > max_dates 2 (the first 20: 2020-01-01, 2020-01-02,"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("2020-01-21"), "{}", plan.stdout);
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 3);
    let json = ran.json();
    assert_eq!(json["reason"], "too_many_dates");
    assert_eq!(json["dates_total"], 150);
    assert_eq!(json["dates"].as_array().unwrap().len(), 20);
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["dates"].as_array().unwrap().len(), 20, "{last}");
    let sha = json["input_sha256"].as_str().unwrap();
    let summary = fs::read_to_string(product.quarantine.join(sha).join("summary.json")).unwrap();
    assert!(!summary.contains("2020-01-21"), "{summary}");
}

#[test]
fn a_state_root_inside_the_inbox_is_refused_and_nothing_is_written() {
    for setting in [
        "state_root = \"inbox/state\"",
        "quarantine_root = \"inbox/quarantine\"",
    ] {
        let product = Product::with_settings(setting);
        let input = product.input_bytes("a.jsonl", &[valid(1), b"\n".to_vec()].concat());
        let before = common::tree(&product.path().join("inbox"));
        let ran = product.wharf(&["run"]);
        assert_eq!(ran.code, 2, "{setting}: {}", ran.stderr);
        assert!(ran.stderr.contains("inbox"), "{}", ran.stderr);
        assert_eq!(
            before,
            common::tree(&product.path().join("inbox")),
            "{setting}"
        );
        assert!(input.exists());
    }
}

#[test]
fn a_credential_in_any_url_is_refused_without_echoing_it() {
    for field in ["inbox", "state_root", "quarantine_root", "publish_root"] {
        for url in [
            "s3://AKIAQQ:s3cr3tKEY@b/x",
            "S3://AKIAQQ:s3cr3tKEY@b/x",
            "s3a://AKIAQQ:s3cr3tKEY@b/x",
        ] {
            let product = Product::with_settings(&format!("{field} = \"{url}\""));
            for args in [&["status"][..], &["--json", "run"]] {
                let ran = product.wharf(args);
                assert_eq!(ran.code, 2, "{field} {url}: {}", ran.stderr);
                let all = format!("{}{}", ran.stdout, ran.stderr);
                assert!(all.contains("credentials"), "{all}");
                assert!(!all.contains("s3cr3t") && !all.contains("AKIAQQ"), "{all}");
            }
        }
    }
}

#[test]
fn a_second_product_on_the_same_publish_root_is_refused() {
    let first = Product::new();
    let input = first.input_bytes("a.jsonl", &[valid(1), b"\n".to_vec()].concat());
    first.land(&input);
    let lake = common::tree(&first.publish);
    // Another product: its own state root, the first's publish root.
    let config = first.path().join("second.toml");
    let text = common::CONFIG
        .replace("product = \"orders\"", "product = \"orders2\"")
        .replace(
            "state_root = \"state/orders\"",
            "state_root = \"state/orders2\"",
        )
        .replace(
            "quarantine_root = \"quarantine/orders\"",
            "quarantine_root = \"quarantine/orders2\"",
        );
    fs::write(&config, text).unwrap();
    let other = first.input_bytes("b.jsonl", &[valid(2), b"\n".to_vec()].concat());
    for args in [&["plan"][..], &["run"]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_wharf"))
            .arg("--config")
            .arg(&config)
            .args(args)
            .arg(&other)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("belongs to product \"orders\""), "{stderr}");
    }
    assert_eq!(
        lake,
        common::tree(&first.publish),
        "the second product wrote"
    );
    assert!(!first.path().join("state/orders2/checkpoints").exists());
    // The first product goes on landing.
    let ran = first.run(&other);
    assert_eq!(ran.status.code(), Some(0), "{}", common::text(&ran));
}
