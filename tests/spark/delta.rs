//! The Spark engine and a Delta table on a local path (CONTRACT.md §12; Spark here cannot
//! reach S3): the executors write the data files into the table's own staging folder,
//! never Wharf's state root, and Wharf commits exactly the files that run wrote, under
//! the table's names; a crash before the commit leaves only files the next landing
//! deletes; merge mode (§10) on the table equals the local engine's, batch by batch.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::engines;
use crate::kit::{Events, Product, Ran, event};
use crate::landing::{agreed, spark_run_json, without_landing_times};

pub type Rows = BTreeMap<String, Vec<BTreeMap<String, String>>>;

pub fn delta_config(settings: &str) -> String {
    format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"delta\"\n\
         {settings}\n{}",
        crate::kit::schema()
    )
}

/// The commits of a local table's log, in order, each as its actions.
pub fn commits(root: &Path) -> Vec<Vec<Value>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("_delta_log"))
        .map(|dir| dir.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|x| x == "json"));
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .collect()
}

/// The data files the latest version references (adds less removes), relative to `root`.
pub fn live_files(root: &Path) -> BTreeSet<String> {
    let mut live = BTreeSet::new();
    for action in commits(root).into_iter().flatten() {
        if let Some(path) = action["add"]["path"].as_str() {
            live.insert(path.to_owned());
        }
        if let Some(path) = action["remove"]["path"].as_str() {
            live.remove(path);
        }
    }
    live
}

/// The rows of a local table's latest version by date, its files read with the local
/// reader (each copied into a folder of its own date).
pub fn delta_rows(root: &Path) -> Rows {
    let copy = tempfile::tempdir().unwrap();
    let mut dates = BTreeSet::new();
    for path in live_files(root) {
        let (date_dir, name) = path.split_once('/').unwrap();
        std::fs::create_dir_all(copy.path().join(date_dir)).unwrap();
        std::fs::copy(root.join(&path), copy.path().join(date_dir).join(name)).unwrap();
        dates.insert(date_dir.trim_start_matches("event_date=").to_owned());
    }
    dates
        .into_iter()
        .map(|d| {
            let mut rows = crate::kit::read_rows(&copy.path().join(format!("event_date={d}")));
            rows.sort();
            (d, rows)
        })
        .collect()
}

/// Every file under `dir` with `extension`, relative to it.
fn files_under(dir: &Path, extension: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(next) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|x| x == extension) {
                let relative = path.strip_prefix(dir).unwrap();
                found.insert(relative.to_str().unwrap().to_owned());
            }
        }
    }
    found
}

fn spark_run_stopping_at(product: &Product, input: &Path, failpoint: &str) -> Ran {
    let remote = engines::remote();
    let args = [
        "run",
        input.to_str().unwrap(),
        "--json",
        "--engine",
        "spark",
    ];
    let mut cmd = product.cmd(&args);
    cmd.args(["--remote", &remote])
        .env("WHARF_FAILPOINT", failpoint);
    cmd.output().unwrap().into()
}

fn bytes_of(lines: &[Vec<u8>]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| [l.as_slice(), b"\n"].concat())
        .collect()
}

#[test]
fn the_spark_engine_lands_into_a_local_delta_table_as_the_local_engine_does() {
    let _server = engines::server();
    let config = delta_config("files_per_date = 2");
    let (local, spark) = (Product::with_config(&config), Product::with_config(&config));
    let first = Events::new(3_000).days(2).seed(11).lines();
    let restated = Events::new(2_000).days(1).seed(12).lines();
    for (index, lines) in [first, restated].iter().enumerate() {
        let name = format!("batch-{index:02}.jsonl");
        let bytes = bytes_of(lines);
        let on_local = local.run_json(&local.input_bytes(&name, &bytes));
        let on_spark = spark_run_json(&spark, &spark.input_bytes(&name, &bytes));
        assert_eq!(on_local.code, 0, "{name}: {}", on_local.stderr);
        assert_eq!(on_spark.code, 0, "{name}: {}", on_spark.stderr);
        assert_eq!(on_spark.json()["action"], "published", "{name}");
        assert_eq!(
            agreed(&on_local.json()),
            agreed(&on_spark.json()),
            "{name}: the plans"
        );
        let root = spark.path().join("lake/orders");
        let (a, b) = (
            delta_rows(&local.path().join("lake/orders")),
            delta_rows(&root),
        );
        assert!(!b.is_empty(), "{name}: the Spark landing published");
        assert_eq!(a, b, "{name}: the tables' rows");
        assert_eq!(
            spark.checkpoint(&name).unwrap()["table_version"],
            index as u64,
            "{name}: one commit a landing"
        );
        // The commit adds exactly the files under the table's names, two a date, each
        // with the rows its footer holds; nothing of the write is left beside them.
        let log = commits(&root);
        let added: Vec<&Value> = log[index].iter().filter_map(|a| a.get("add")).collect();
        let dates = b.len().min(if index == 0 { 2 } else { 1 });
        assert_eq!(
            added.len(),
            2 * dates,
            "{name}: files_per_date files a date"
        );
        for add in &added {
            let path = add["path"].as_str().unwrap();
            let name_ok = path.starts_with("event_date=") && path.contains("/part-");
            assert!(name_ok, "{name}: the table's name, not Spark's: {path}");
        }
        let staged = files_under(&root.join("_wharf-staging"), "parquet");
        assert!(
            staged.is_empty(),
            "{name}: the staging folder emptied: {staged:?}"
        );
        let in_state = files_under(&spark.state, "parquet");
        assert!(
            in_state.is_empty(),
            "{name}: no row on Wharf's disk: {in_state:?}"
        );
        let handed = files_under(&spark.path().join("lake/.orders.wharf-handoff"), "parquet");
        assert!(handed.is_empty(), "{name}: the handoff removed: {handed:?}");
    }
}

/// A table on S3 from Spark: the driver uploads its handoff into the table's staging
/// folder, where a cluster's executors read it as `s3a://`. This server's Spark has no
/// S3A, so the read fails: the run exits 1 naming the server, and the bucket holds
/// nothing of it (no version, no data file, the handoff deleted).
#[test]
fn on_s3_the_handoff_goes_to_the_table_and_is_deleted_when_spark_cannot_read_it() {
    let _server = engines::server();
    let prefix = format!("spark-handoff-{}", std::process::id());
    let config = format!(
        "product = \"orders\"\npublish_root = \"s3://wharf/{prefix}\"\n\
         table_format = \"delta\"\n{}",
        crate::kit::schema()
    );
    let product = Product::with_config(&config);
    let lines = Events::new(2_000).days(1).seed(21).lines();
    let input = product.input_bytes("batch.jsonl", &bytes_of(&lines));
    let port = std::env::var("WHARF_S3_PORT").unwrap_or_else(|_| "18300".to_owned());
    let remote = engines::remote();
    let mut cmd = product.cmd(&["run", input.to_str().unwrap(), "--engine", "spark"]);
    cmd.args(["--remote", &remote])
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        // tests/s3/server.sh's identity.
        .env("AWS_ACCESS_KEY_ID", "wharf-test-access")
        .env("AWS_SECRET_ACCESS_KEY", "wharf-test-secret-5e7a1c");
    let ran: Ran = cmd.output().unwrap().into();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        ran.stderr.contains(&remote) && ran.stderr.contains("s3a"),
        "Spark was asked to read the handoff at s3a://: {}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("wharf-test-secret"), "{}", ran.stderr);
    let (store, runtime) = test_bucket(&port);
    let under = object_store::path::Path::from(prefix.as_str());
    let left: Vec<object_store::ObjectMeta> = runtime
        .block_on(futures::TryStreamExt::try_collect(
            object_store::ObjectStore::list(&store, Some(&under)),
        ))
        .unwrap();
    let left: Vec<String> = left.iter().map(|m| m.location.to_string()).collect();
    assert!(
        left.is_empty(),
        "the bucket holds nothing of the run: {left:?}"
    );
    assert!(product.checkpoint("batch.jsonl").is_none());
}

#[test]
fn a_crash_before_the_commit_leaves_only_files_the_next_spark_landing_deletes() {
    let _server = engines::server();
    let product = Product::with_config(&delta_config(""));
    let root = product.path().join("lake/orders");
    let bytes = bytes_of(&Events::new(1_500).days(2).seed(21).lines());
    let input = product.input_bytes("day.jsonl", &bytes);
    // Stopped after the executors wrote: the files are in the table's staging folder,
    // none in the state root, no commit.
    let crashed = spark_run_stopping_at(&product, &input, "after_stage");
    assert_ne!(crashed.code, 0, "{}", crashed.stderr);
    assert!(
        crashed.stderr.contains("failpoint after_stage"),
        "{}",
        crashed.stderr
    );
    let staged = files_under(&root.join("_wharf-staging"), "parquet");
    assert_eq!(staged.len(), 2, "Spark's files, one a date: {staged:?}");
    assert!(files_under(&product.state, "parquet").is_empty());
    assert!(commits(&root).is_empty(), "no commit");
    // Stopped after the moves: the files hold the table's names, and no version has them.
    let crashed = spark_run_stopping_at(&product, &input, "after_upload");
    assert_ne!(crashed.code, 0, "{}", crashed.stderr);
    assert!(files_under(&root.join("_wharf-staging"), "parquet").is_empty());
    let orphans = files_under(&root, "parquet");
    assert_eq!(
        orphans.len(),
        2,
        "moved into place, uncommitted: {orphans:?}"
    );
    assert!(commits(&root).is_empty(), "no commit");
    // The rerun lands, and deletes what the crashes left.
    let landed = spark_run_json(&product, &input);
    assert_eq!(landed.code, 0, "{}", landed.stderr);
    assert_eq!(landed.json()["action"], "published");
    let on_disk = files_under(&root, "parquet");
    assert_eq!(
        on_disk,
        live_files(&root),
        "only the committed files remain"
    );
    assert!(orphans.is_disjoint(&on_disk), "the orphans are gone");
    let local = Product::with_config(&delta_config(""));
    let by_local = local.run_json(&local.input_bytes("day.jsonl", &bytes));
    assert_eq!(by_local.code, 0, "{}", by_local.stderr);
    assert_eq!(
        delta_rows(&root),
        delta_rows(&local.path().join("lake/orders"))
    );
}

/// The kit's merge batches (those of `tests/delta/merge.rs`), then a fourth whose every
/// row is published already, so no data file changes.
fn merge_batches() -> Vec<(&'static str, Vec<String>)> {
    let mut batches = crate::kit::merge_batches();
    let unchanged = event("e11", 4, "PAID", "2024-03-02T12:00:00Z");
    batches.push(("b4.jsonl", vec![unchanged]));
    batches
}

#[test]
fn merge_mode_on_a_delta_table_on_spark_equals_the_local_engine_batch_by_batch() {
    let _server = engines::server();
    let config = delta_config("write_mode = \"merge\"\nmax_dates = 3");
    let (local, spark) = (Product::with_config(&config), Product::with_config(&config));
    let root = spark.path().join("lake/orders");
    for (n, (name, lines)) in merge_batches().iter().enumerate() {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let by_local = local.run_json(&local.input(name, &lines));
        let by_spark = spark_run_json(&spark, &spark.input(name, &lines));
        assert_eq!(by_local.code, 0, "{name}: {}", by_local.stderr);
        assert_eq!(by_spark.code, 0, "{name}: {}", by_spark.stderr);
        let (l, s) = (by_local.json(), by_spark.json());
        assert_eq!(s["action"], l["action"], "{name}");
        assert_eq!(
            without_landing_times(&s["dates"]),
            without_landing_times(&l["dates"]),
            "{name}: the same plan, date by date"
        );
        assert_eq!(agreed(&s), agreed(&l), "{name}: the same counts");
        assert_eq!(
            delta_rows(&root),
            delta_rows(&local.path().join("lake/orders")),
            "{name}: the same rows"
        );
        assert_eq!(commits(&root).len(), n + 1, "{name}: one commit a landing");
    }
    let log = commits(&root);
    let rows = delta_rows(&root);
    assert!(
        !rows.contains_key("2024-03-01"),
        "the emptied date left the table"
    );
    // b3's commit removes the emptied date's file and adds none there.
    let b3 = &log[2];
    let adds_there = b3
        .iter()
        .filter_map(|a| a["add"]["path"].as_str())
        .any(|p| p.starts_with("event_date=2024-03-01/"));
    let removes_there = b3
        .iter()
        .filter_map(|a| a["remove"]["path"].as_str())
        .any(|p| p.starts_with("event_date=2024-03-01/"));
    assert!(removes_there && !adds_there, "b3: {b3:?}");
    // b4 changes no row: its commit holds only commitInfo, naming it.
    let b4 = &log[3];
    assert!(
        b4.iter()
            .all(|a| a.get("add").is_none() && a.get("remove").is_none())
    );
    let info = b4.iter().find_map(|a| a.get("commitInfo")).unwrap();
    assert_eq!(info["operationParameters"]["inputName"], "b4.jsonl");
    // A rerun of the same bytes skips, with no commit.
    let again = spark_run_json(&spark, &spark.path().join("inbox/b3.jsonl"));
    assert_eq!(again.json()["action"], "skipped", "{}", again.stderr);
    assert_eq!(commits(&root).len(), 4);
}

/// The S3 server's test bucket (tests/s3/server.sh's identity) at `port`, and a runtime
/// to drive it.
pub fn test_bucket(port: &str) -> (object_store::aws::AmazonS3, tokio::runtime::Runtime) {
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(format!("http://127.0.0.1:{port}"))
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name("wharf")
        .with_access_key_id("wharf-test-access")
        .with_secret_access_key("wharf-test-secret-5e7a1c")
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    (store, runtime)
}
