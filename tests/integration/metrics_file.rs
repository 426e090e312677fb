//! `wharf run --metrics-file` over eight landings (two publishes, a skip, refusals of two
//! kinds, two errors, a last publish): after each, the textfile passes `promtool check
//! metrics` (Prometheus's own Go parser and linter) and is read with the
//! `prometheus-parse` crate: every counter, histogram count, sum and bucket only grows,
//! each landing's action gains one landing and one observed duration (an error's is
//! real, not 0), every series carries the product, and the last refusal and last error
//! survive later runs until a newer one replaces them, on one `_info` series each.
//! A file an older version wrote, or a damaged one, is warned about and started afresh.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use prometheus_parse::{Scrape, Value as Sampled};
use serde_json::Value;

use crate::kit::{Product, event};
use crate::prometheus::{check_metrics, tool};

/// A series' name and its labels, sorted.
type Series = (String, BTreeMap<String, String>);

/// Every sample of a textfile, histograms' buckets as `<name>_bucket` with an `le` label.
pub fn samples(text: &str) -> BTreeMap<Series, f64> {
    let lines = text.lines().map(|l| Ok(l.to_owned()));
    let scrape = Scrape::parse(lines).unwrap();
    let mut all = BTreeMap::new();
    for s in scrape.samples {
        let labels: BTreeMap<String, String> = s
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        match s.value {
            Sampled::Counter(v) | Sampled::Gauge(v) | Sampled::Untyped(v) => {
                all.insert((s.metric, labels), v);
            }
            Sampled::Histogram(buckets) => {
                for b in buckets {
                    let mut labels = labels.clone();
                    labels.insert("le".into(), b.less_than.to_string());
                    all.insert((format!("{}_bucket", s.metric), labels), b.count);
                }
            }
            Sampled::Summary(_) => panic!("wharf writes no summary: {}", s.metric),
        }
    }
    all
}

/// The value of `name` with exactly `labels` besides the product's.
pub fn value(all: &BTreeMap<Series, f64>, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut want: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    want.insert("product".into(), "orders".into());
    all.get(&(name.to_owned(), want)).copied()
}

fn named<'a>(all: &'a BTreeMap<Series, f64>, name: &str) -> Vec<&'a Series> {
    all.keys().filter(|(n, _)| n == name).collect()
}

fn good(id: &str, order: i64) -> String {
    event(id, order, "A", "2024-03-01T10:00:00Z")
}

/// Lines refused for a prohibited field (a row value in it must go nowhere).
fn leaky() -> Vec<String> {
    vec![
        good("e1", 1),
        r#"{"event_id":"e2","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#.into(),
    ]
}

/// Whether a series only grows across runs: counters and the histograms' parts.
fn cumulative(name: &str) -> bool {
    ["_total", "_count", "_sum", "_bucket"]
        .iter()
        .any(|end| name.ends_with(end))
}

struct Landing {
    name: &'static str,
    lines: Vec<String>,
    action: &'static str,
}

fn landings() -> Vec<Landing> {
    let landing = |name, lines, action| Landing {
        name,
        lines,
        action,
    };
    vec![
        landing("a.jsonl", vec![good("e1", 1)], "published"),
        landing("a.jsonl", vec![good("e1", 1)], "skipped"),
        landing("leaky.jsonl", leaky(), "refused"),
        landing("b.jsonl", vec![good("e2", 2)], "published"),
        landing("nothing.jsonl", vec!["not json".into()], "refused"),
        landing("broken1.jsonl", vec![good("e3", 3)], "error"),
        landing("broken2.jsonl", vec![good("e4", 4)], "error"),
        landing("c.jsonl", vec![good("e5", 5)], "published"),
    ]
}

/// Lands `landing` with `--metrics-file file`; its `--json` report (`null` for an error).
fn land(product: &Product, landing: &Landing, file: &Path) -> Value {
    let lines: Vec<&str> = landing.lines.iter().map(String::as_str).collect();
    let input = product.input(landing.name, &lines);
    if landing.action == "error" {
        // A corrupt checkpoint under its name: an error that must page (§5.3).
        let checkpoints = product.state.join("checkpoints");
        fs::create_dir_all(&checkpoints).unwrap();
        fs::write(
            checkpoints.join(format!("{}.json", landing.name)),
            "{not json",
        )
        .unwrap();
    }
    let out = product
        .cmd(&["run", input.to_str().unwrap(), "--json", "--metrics-file"])
        .arg(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("afresh"), "{stderr}");
    let want = match landing.action {
        "refused" => 3,
        "error" => 1,
        _ => 0,
    };
    assert_eq!(out.status.code(), Some(want), "{}: {stderr}", landing.name);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn eight_runs_keep_every_series_of_the_metrics_file() {
    let promtool = tool(
        &["promtool"],
        "promtool (Debian: apt-get install prometheus)",
    );
    let product = Product::with_settings("max_silence = \"1h\"");
    let file = product.path().join("orders.prom");
    let mut before: BTreeMap<Series, f64> = BTreeMap::new();
    let mut refusal: Option<(f64, Series)> = None;
    let mut reasons = Vec::new();
    for (n, landing) in landings().iter().enumerate() {
        let report = land(&product, landing, &file);
        let text = fs::read_to_string(&file).unwrap();
        if let Some(promtool) = &promtool {
            check_metrics(promtool, &text);
        }
        let now = samples(&text);
        let step = format!("landing {} ({} {})", n + 1, landing.name, landing.action);
        for ((name, labels), v) in &now {
            assert_eq!(
                labels.get("product").map(String::as_str),
                Some("orders"),
                "{step}: {name}"
            );
            assert!(v.is_finite(), "{step}: {name} {labels:?} {v}");
        }
        for (series, old) in before.iter().filter(|((name, _), _)| cumulative(name)) {
            let new = now
                .get(series)
                .unwrap_or_else(|| panic!("{step}: {series:?} went"));
            assert!(new >= old, "{step}: {series:?} fell from {old} to {new}");
        }
        let action = [("action", landing.action)];
        let grew = |name: &str| {
            value(&now, name, &action).unwrap() - value(&before, name, &action).unwrap_or(0.0)
        };
        assert_eq!(grew("wharf_landings_total"), 1.0, "{step}");
        assert_eq!(grew("wharf_landing_duration_seconds_count"), 1.0, "{step}");
        // Whole milliseconds for a landing, so a skip may take 0; an error is timed from
        // its start, never 0.
        let took = grew("wharf_landing_duration_seconds_sum");
        let least = if landing.action == "error" {
            f64::MIN_POSITIVE
        } else {
            0.0
        };
        assert!(took >= least && took < 120.0, "{step}: took {took}");
        let observed: f64 = ["published", "skipped", "refused", "error"]
            .iter()
            .map(|a| {
                value(
                    &now,
                    "wharf_landing_duration_seconds_count",
                    &[("action", a)],
                )
                .unwrap()
            })
            .sum();
        assert_eq!(observed, (n + 1) as f64, "{step}: one duration per landing");
        // The last refusal: one series naming it, kept until a newer one.
        let infos = named(&now, "wharf_last_refusal_info");
        let at = value(&now, "wharf_last_refusal_timestamp_seconds", &[]);
        if landing.action == "refused" {
            let reason = report["reason"].as_str().unwrap().to_owned();
            assert_eq!(infos.len(), 1, "{step}: {infos:?}");
            assert_eq!(infos[0].1["input"], landing.name, "{step}");
            assert_eq!(infos[0].1["reason"], reason, "{step}");
            reasons.push(reason);
            refusal = Some((at.unwrap(), infos[0].clone()));
        } else if let Some((was_at, was_info)) = &refusal {
            assert_eq!(at, Some(*was_at), "{step}: the last refusal's time changed");
            assert_eq!(infos, [was_info], "{step}: the last refusal went");
        }
        let errors = named(&now, "wharf_last_error_info");
        if landing.action == "error" {
            assert_eq!(errors.len(), 1, "{step}: {errors:?}");
            assert_eq!(errors[0].1["input"], landing.name, "{step}");
        }
        let build = named(&now, "wharf_build_info");
        assert_eq!(build.len(), 1, "{step}");
        assert!(build[0].1.contains_key("version"), "{step}");
        assert!(value(&now, "wharf_waiting_bytes", &[]).is_some(), "{step}");
        assert_eq!(
            value(&now, "wharf_max_silence_seconds", &[]),
            Some(3600.0),
            "{step}"
        );
        before = now;
    }
    assert_eq!(reasons.len(), 2);
    assert_ne!(reasons[0], reasons[1], "two kinds of refusal: {reasons:?}");
    assert_eq!(
        value(
            &before,
            "wharf_last_error_info",
            &[("input", "broken2.jsonl"), ("reason", "error")]
        ),
        Some(1.0)
    );
    let text = fs::read_to_string(&file).unwrap();
    for old in ["wharf_bytes_waiting", "input=\"", "reason=\""] {
        let on_timestamps = text
            .lines()
            .filter(|l| l.contains("_timestamp_seconds{"))
            .any(|l| l.contains(old));
        assert!(!on_timestamps, "{old} on a timestamp gauge: {text}");
    }
    assert!(!text.contains("wharf_bytes_waiting"), "{text}");
}

#[test]
fn an_older_or_damaged_metrics_file_is_warned_about_and_started_afresh() {
    let product = Product::with_settings("");
    let file = product.path().join("orders.prom");
    let older = "# TYPE wharf_landings_total counter\n\
                 wharf_landings_total{product=\"orders\",action=\"published\"} 7\n";
    for (text, says) in [
        (older, "not written by this version"),
        ("\u{0}\u{1}garbage", "not written"),
    ] {
        fs::write(&file, text).unwrap();
        let input = product.input("a.jsonl", &[&good("e1", 1)]);
        let out = product
            .cmd(&["run", input.to_str().unwrap(), "--metrics-file"])
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("afresh"),
            "{stderr}"
        );
        let now = samples(&fs::read_to_string(&file).unwrap());
        let landings = |action| value(&now, "wharf_landings_total", &[("action", action)]);
        // The first run publishes, the second skips; neither adds the old file's 7.
        let published = landings("published").unwrap() + landings("skipped").unwrap();
        assert_eq!(published, 1.0, "{now:?}");
    }
}
