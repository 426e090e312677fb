//! Paging with the real binary: one run id per landing everywhere the landing writes
//! (run log, `run --json`, quarantine summary, Delta commitInfo,
//! `history RUN_ID`), an `[alerts]` document per event kind (refused, error, busy, stale,
//! fresh), hooks that hang or fail costing a log line only, OpenLineage START and
//! COMPLETE/FAIL per landing, `run --metrics-file`, and no row value in any of it.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::kit::{Product, event};
use crate::prometheus::{get, receiver, watch_with_metrics};

/// A row value no output may carry.
const SECRET: &str = "hunter2-SECRET-7f3a";

/// `[alerts]` appending each document to `alerts.ndjson` in the product's folder.
fn alerts_settings(extra: &str) -> String {
    format!(
        "lineage = \"file:lineage.ndjson\"\n{extra}\n[alerts]\n\
         command = [\"sh\", \"-c\", \"cat >> alerts.ndjson; echo >> alerts.ndjson\"]\n\
         timeout = \"5s\"\nbusy_alert_after = \"1s\"\n"
    )
}

fn ndjson(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn alerts(product: &Product) -> Vec<Value> {
    ndjson(&product.path().join("alerts.ndjson"))
}

fn good(id: &str, order: i64) -> String {
    event(id, order, "A", "2024-03-01T10:00:00Z")
}

/// A line that leaks: a prohibited field carrying [`SECRET`], and a bad type with it.
fn leaky() -> Vec<String> {
    vec![
        good("e1", 1),
        format!(
            r#"{{"event_id":"e2","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z","email":"{SECRET}"}}"#
        ),
        format!(
            r#"{{"event_id":"e3","order_id":"{SECRET}","status":"A","updated_at":"2024-03-01T10:00:00Z"}}"#
        ),
    ]
}

fn input(product: &Product, name: &str, lines: &[String]) -> std::path::PathBuf {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    product.input(name, &lines)
}

/// Runs `wharf` from the product's folder (the alert command writes there).
fn wharf_in(product: &Product, args: &[&str]) -> std::process::Output {
    product
        .cmd(args)
        .current_dir(product.path())
        .output()
        .unwrap()
}

fn uuid_v4(id: &str) -> bool {
    id.len() == 36
        && id.as_bytes()[14] == b'4'
        && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

#[test]
fn one_run_id_per_landing_in_everything_it_writes() {
    let product = Product::with_settings("");
    let path = input(&product, "a.jsonl", &[good("e1", 1)]);
    let ran = product.run_json(&path).json();
    let id = ran["run_id"].as_str().unwrap().to_owned();
    assert!(uuid_v4(&id), "{id}");
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let record: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(record["run_id"], id.as_str());
    let sha = ran["input_sha256"].as_str().unwrap();
    let summary: Value = serde_json::from_slice(
        &fs::read(product.quarantine.join(sha).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["run_id"], id.as_str());
    // Not in the Parquet footer: a rerun after a crash must stage the same bytes to see
    // that a date is already swapped in (land/swap.rs), so a file names no run.
    let file = product
        .publish
        .join("event_date=2024-03-01/part-00000.parquet");
    assert_eq!(parquet_run_id(&file), None);
    // The manifest names the run that published the date instead, and so does status.
    let manifest: Value =
        serde_json::from_slice(&fs::read(product.state.join("partitions.json")).unwrap()).unwrap();
    assert_eq!(manifest["dates"]["2024-03-01"]["run_id"], id.as_str());
    let status = product.wharf(&["status", "--json"]).json();
    assert_eq!(status["dates"][0]["run_id"], id.as_str());
    // history finds it by a prefix, and shows it.
    let found = product.wharf(&["history", &id[..8]]);
    assert_eq!(found.code, 0, "{}", found.stderr);
    assert!(
        found.stdout.contains(&id) && found.stdout.contains("a.jsonl"),
        "{}",
        found.stdout
    );
    let json = product.wharf(&["history", &id, "--json"]).json();
    assert_eq!(json["run_id"], id.as_str());
    let missing = product.wharf(&["history", "ffffffff"]);
    assert_eq!(missing.code, 2, "{}", missing.stdout);
    // A second landing has a run id of its own.
    let again = input(&product, "b.jsonl", &[good("e9", 9)]);
    let other = product.run_json(&again).json();
    assert_ne!(other["run_id"], id.as_str());
}

fn parquet_run_id(path: &Path) -> Option<String> {
    use parquet::file::reader::FileReader;
    let reader =
        parquet::file::reader::SerializedFileReader::new(fs::File::open(path).unwrap()).unwrap();
    let metadata = reader.metadata().file_metadata().key_value_metadata()?;
    metadata
        .iter()
        .find(|kv| kv.key == "wharf.run_id")
        .and_then(|kv| kv.value.clone())
}

#[test]
fn a_delta_commit_names_the_run_id() {
    let product = Product::with_settings("table_format = \"delta\"");
    let path = input(&product, "a.jsonl", &[good("e1", 1)]);
    let ran = product.run_json(&path).json();
    let id = ran["run_id"].as_str().unwrap();
    let commit =
        fs::read_to_string(product.publish.join("_delta_log/00000000000000000000.json")).unwrap();
    let info: Value = commit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|a| a.get("commitInfo").is_some())
        .unwrap();
    assert_eq!(
        info["commitInfo"]["operationParameters"]["runId"], id,
        "{info}"
    );
}

#[test]
fn refused_and_error_alerts_name_the_input_and_the_run() {
    let product = Product::with_settings(&alerts_settings(""));
    let refused = input(&product, "leaky.jsonl", &leaky());
    let out = wharf_in(&product, &["run", refused.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    // A corrupt checkpoint is an error that must page a human (§5.3).
    fs::create_dir_all(product.state.join("checkpoints")).unwrap();
    fs::write(
        product.state.join("checkpoints/broken.jsonl.json"),
        "{not json",
    )
    .unwrap();
    let broken = input(&product, "broken.jsonl", &[good("e5", 5)]);
    let out = wharf_in(&product, &["run"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = alerts(&product);
    let kinds: Vec<&str> = got.iter().map(|a| a["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["refused", "refused", "error"], "{got:?}");
    let first = &got[0];
    assert_eq!(first["product"], "orders");
    assert_eq!(first["input"], "leaky.jsonl");
    assert_eq!(first["sha256"], run["input_sha256"]);
    assert_eq!(first["run_id"], run["run_id"]);
    assert_eq!(first["reason"], "prohibited_field");
    assert_eq!(first["counts"]["by_reason"]["prohibited_field"], 1);
    let console = first["console"].as_str().unwrap();
    assert!(console.contains("console") && console.contains(product.config.to_str().unwrap()));
    let error = &got[2];
    assert_eq!(error["input"], "broken.jsonl");
    assert!(uuid_v4(error["run_id"].as_str().unwrap()));
    assert!(
        error["detail"].as_str().unwrap().contains("broken.jsonl"),
        "{error}"
    );
    assert!(broken.exists());
    // Lineage: a START and a FAIL per landing, sharing its run id.
    let lineage = ndjson(&product.path().join("lineage.ndjson"));
    let of_run: Vec<&Value> = lineage
        .iter()
        .filter(|e| e["run"]["runId"] == run["run_id"])
        .collect();
    let types: Vec<&str> = of_run
        .iter()
        .map(|e| e["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["START", "FAIL"]);
    assert_eq!(of_run[1]["job"]["name"], "orders");
    // The refusal's sentence: its code, the field and the line, never the value.
    assert_eq!(
        of_run[1]["run"]["facets"]["errorMessage"]["message"],
        "prohibited_field `email` on line 2: the file carries a prohibited field; ask the producer to drop it"
    );
    assert_eq!(of_run[1]["job"]["namespace"], "wharf");
    // Both landings' events hold to the spec; the error's FAIL says what stderr said.
    let runs = crate::kit::lineage::check_events(&lineage);
    let error = runs.iter().find(|r| r.action.is_none()).unwrap();
    assert!(
        error
            .message
            .as_deref()
            .unwrap()
            .contains("broken.jsonl.json is corrupt"),
        "{error:?}"
    );
    assert!(
        of_run[1]["inputs"][0]["name"]
            .as_str()
            .unwrap()
            .ends_with("inbox/leaky.jsonl")
    );
}

#[test]
fn busy_stale_and_fresh_alerts_come_from_the_watch() {
    let product = Product::with_settings(&alerts_settings("max_silence = \"2s\""));
    fs::create_dir_all(&product.state).unwrap();
    // Another process holds the product's lock: the watch is busy.
    let lock = product.state.join(".lock");
    fs::write(&lock, "").unwrap();
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "4"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    input(&product, "a.jsonl", &[good("e1", 1)]);
    let mut watch = product
        .cmd(&["watch", "--rescan", "1"])
        .current_dir(product.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let want = ["busy", "stale", "fresh"];
    let seen = loop {
        let kinds: Vec<String> = alerts(&product)
            .iter()
            .map(|a| a["event"].as_str().unwrap().to_owned())
            .collect();
        if want.iter().all(|w| kinds.iter().any(|k| k == w)) || Instant::now() > deadline {
            break kinds;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = holder.wait();
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(want.iter().all(|w| seen.iter().any(|k| k == w)), "{seen:?}");
    let got = alerts(&product);
    let busy = got.iter().find(|a| a["event"] == "busy").unwrap();
    assert_eq!(busy["input"], "a.jsonl");
    let stale = got.iter().find(|a| a["event"] == "stale").unwrap();
    assert_eq!(stale["reason"], "max_silence");
    assert!(stale["silence_seconds"].as_u64().unwrap() >= 2, "{stale}");
    // Fresh again only once a.jsonl published, after the lock was let go.
    let fresh = got.iter().position(|a| a["event"] == "fresh").unwrap();
    let stale_at = got.iter().position(|a| a["event"] == "stale").unwrap();
    assert!(stale_at < fresh, "{seen:?}");
    assert_eq!(product.dates(), ["2024-03-01"]);
    // The watch's landing reports lineage as `run` does, to the spec.
    let runs = crate::kit::lineage::check_events(&ndjson(&product.path().join("lineage.ndjson")));
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].action.as_deref(), Some("published"));
}

#[test]
fn a_webhook_and_an_http_lineage_endpoint_get_the_same_documents() {
    let (port, posted) = receiver();
    let product = Product::with_settings(&format!(
        "lineage = \"http://127.0.0.1:{port}/api/v1/lineage\"\n\
         [alerts]\nwebhook = \"http://127.0.0.1:{port}/hook\"\ntimeout = \"5s\""
    ));
    let refused = input(&product, "leaky.jsonl", &leaky());
    let ran = product.run_json(&refused);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    let run_id = ran.json()["run_id"].clone();
    let got: Vec<Value> = (0..3)
        .map(|_| posted.recv_timeout(Duration::from_secs(30)).unwrap())
        .collect();
    let alert = got.iter().find(|d| d.get("event").is_some()).unwrap();
    assert_eq!(alert["event"], "refused");
    assert_eq!(alert["input"], "leaky.jsonl");
    assert_eq!(alert["run_id"], run_id);
    let kinds: Vec<&str> = got.iter().filter_map(|d| d["eventType"].as_str()).collect();
    assert_eq!(kinds, ["START", "FAIL"]);
    assert!(got.iter().all(|d| !d.to_string().contains(SECRET)));
}

#[test]
fn a_hook_that_hangs_or_fails_costs_a_log_line_only() {
    for (command, says) in [
        ("[\"sleep\", \"30\"]", "killed"),
        ("[\"sh\", \"-c\", \"exit 7\"]", "exit status: 7"),
    ] {
        let product =
            Product::with_settings(&format!("[alerts]\ncommand = {command}\ntimeout = \"1s\""));
        let refused = input(&product, "leaky.jsonl", &leaky());
        let fine = input(&product, "fine.jsonl", &[good("e1", 1)]);
        let started = Instant::now();
        let out = product.cmd(&["run"]).output().unwrap();
        let took = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(took < Duration::from_secs(20), "{took:?}");
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("alert refused"))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].contains(says) && lines[0].contains("landing is unaffected"),
            "{stderr}"
        );
        // The other input published all the same.
        assert!(product.checkpoint("fine.jsonl").is_some());
        assert!(product.checkpoint("leaky.jsonl").is_none());
        assert!(refused.exists() && fine.exists());
    }
}

#[test]
fn no_output_carries_a_row_value() {
    let product = Product::with_settings(&alerts_settings("max_silence = \"1h\""));
    input(&product, "leaky.jsonl", &leaky());
    let metrics_file = product.path().join("wharf.prom");
    let out = wharf_in(
        &product,
        &["run", "--metrics-file", metrics_file.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(3));
    let (watch, addr) = watch_with_metrics(&product);
    let scrape = get(&addr, "/metrics");
    drop(watch);
    let texts = [
        ("stdout", String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr", String::from_utf8_lossy(&out.stderr).into_owned()),
        ("metrics file", fs::read_to_string(&metrics_file).unwrap()),
        ("scrape", scrape),
        (
            "alerts",
            fs::read_to_string(product.path().join("alerts.ndjson")).unwrap(),
        ),
        (
            "lineage",
            fs::read_to_string(product.path().join("lineage.ndjson")).unwrap(),
        ),
        (
            "run log",
            fs::read_to_string(product.state.join("runs.jsonl")).unwrap(),
        ),
        ("quarantine", quarantine_text(&product)),
    ];
    for (what, text) in &texts {
        assert!(*what == "stderr" || !text.is_empty(), "{what} is empty");
        assert!(!text.contains(SECRET), "{what} carries a row value: {text}");
    }
    assert!(
        texts[2]
            .1
            .contains("wharf_landings_total{product=\"orders\",action=\"refused\"} 1")
    );
    assert!(
        texts[2].1.contains("reason=\"prohibited_field\"} 1"),
        "{}",
        texts[2].1
    );
}

#[test]
fn the_metrics_file_keeps_the_last_publish_across_runs() {
    let product = Product::with_settings("");
    let file = product.path().join("wharf.prom");
    let args = |p: &Path| {
        vec![
            "run".to_owned(),
            p.display().to_string(),
            "--metrics-file".into(),
            file.display().to_string(),
        ]
    };
    let first = input(&product, "a.jsonl", &[good("e1", 1)]);
    let out = product
        .cmd(&args(&first).iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let published = metric(
        &file,
        "wharf_last_publish_timestamp_seconds{product=\"orders\"}",
    );
    assert!(published > 1.6e9, "{published}");
    let refused = input(&product, "leaky.jsonl", &leaky());
    let out = product
        .cmd(
            &args(&refused)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        metric(
            &file,
            "wharf_last_publish_timestamp_seconds{product=\"orders\"}"
        ),
        published
    );
    assert_eq!(
        metric(
            &file,
            "wharf_landings_total{product=\"orders\",action=\"published\"}"
        ),
        1.0
    );
    assert_eq!(
        metric(
            &file,
            "wharf_landings_total{product=\"orders\",action=\"refused\"}"
        ),
        1.0
    );
    assert!(
        !fs::read_dir(product.path())
            .unwrap()
            .any(|e| { e.unwrap().file_name().to_string_lossy().contains(".tmp") })
    );
}

/// Every quarantine file's text.
fn quarantine_text(product: &Product) -> String {
    let mut text = String::new();
    for folder in fs::read_dir(&product.quarantine).unwrap() {
        for file in fs::read_dir(folder.unwrap().path()).unwrap() {
            text.push_str(&fs::read_to_string(file.unwrap().path()).unwrap());
        }
    }
    text
}

fn metric(file: &Path, series: &str) -> f64 {
    let text = fs::read_to_string(file).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series))
        .unwrap_or_else(|| panic!("no {series} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn status_says_when_a_product_is_stale() {
    let product = Product::with_settings("max_silence = \"1s\"");
    let fresh = product.wharf(&["status", "--json"]).json();
    assert_eq!(fresh["freshness"]["breach"], false, "{fresh}");
    assert_eq!(fresh["freshness"]["last_publish"], Value::Null);
    product.land(&input(&product, "a.jsonl", &[good("e1", 1)]));
    let now = product.wharf(&["status", "--json"]).json();
    assert_eq!(now["freshness"]["breach"], false, "{now}");
    std::thread::sleep(Duration::from_millis(2100));
    let later = product.wharf(&["status", "--json"]).json();
    assert_eq!(later["freshness"]["breach"], true, "{later}");
    assert_eq!(later["freshness"]["max_silence_seconds"], 1);
    assert!(later["freshness"]["age_seconds"].as_u64().unwrap() >= 2);
    let text = product.wharf(&["status"]).stdout;
    assert!(text.contains("freshness: STALE: last publish "), "{text}");
    assert!(text.contains(" ago (max_silence 1s)"), "{text}");
}
