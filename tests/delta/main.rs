//! The Delta suite (CONTRACT.md §12): landings into a Delta table on a local path and on a
//! real S3 server (SeaweedFS, started by `tests/s3/server.sh`; its port in
//! `WHARF_S3_PORT`, 18300 by default). The table is read back independently of Wharf's
//! code: the `_delta_log` commits replayed here (add/remove), the files they name fetched
//! through `object_store` and their rows compared.

#![allow(clippy::unwrap_used)]

mod busy;
mod fault_proxy;
mod features;
mod foreign;
mod guards;
#[path = "../kit/mod.rs"]
mod kit;
mod lineage;
mod merge;
mod protocols;
mod s3_console;
mod s3_faults;
mod s3_inbox;
mod s3_state;
mod s3_watch;
mod scenarios;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use futures::TryStreamExt;
use kit::product::{Product, Ran, schema};
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use serde_json::Value;

const ACCESS: &str = "wharf-test-access";
const SECRET: &str = "wharf-test-secret-5e7a1c";

fn port() -> u16 {
    std::env::var("WHARF_S3_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(18300)
}

fn endpoint() -> String {
    format!("http://127.0.0.1:{}", port())
}

/// The SeaweedFS bucket, as a client with the test identity sees it.
fn bucket() -> Arc<dyn ObjectStore> {
    Arc::new(
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(endpoint())
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_bucket_name("wharf")
            .with_access_key_id(ACCESS)
            .with_secret_access_key(SECRET)
            .build()
            .unwrap(),
    )
}

/// A table root: its store, prefix and the one runtime its store's connections live on
/// (a pooled connection reused from another runtime panics).
struct Root {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    runtime: tokio::runtime::Runtime,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

impl Root {
    fn s3(prefix: &str) -> Root {
        Root {
            store: bucket(),
            prefix: prefix.to_owned(),
            runtime: runtime(),
        }
    }

    fn local(path: &Path) -> Root {
        Root {
            store: Arc::new(object_store::local::LocalFileSystem::new()),
            prefix: path.to_str().unwrap().trim_start_matches('/').to_owned(),
            runtime: runtime(),
        }
    }

    fn get(&self, relative: &str) -> Option<Vec<u8>> {
        let path = StorePath::from(format!("{}/{relative}", self.prefix));
        let got = self.runtime.block_on(async {
            match self.store.get(&path).await {
                Ok(got) => got.bytes().await.map(Some),
                Err(e) => Err(e),
            }
        });
        match got {
            Ok(bytes) => bytes.map(|b| b.to_vec()),
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => panic!("{relative}: {e}"),
        }
    }

    /// Every object under the root, relative, with its bytes' length.
    fn objects(&self) -> BTreeSet<String> {
        let prefix = StorePath::from(self.prefix.as_str());
        let listed: Vec<_> = self
            .runtime
            .block_on(self.store.list(Some(&prefix)).try_collect())
            .unwrap();
        listed
            .into_iter()
            .map(|m| {
                m.location
                    .as_ref()
                    .strip_prefix(&format!("{}/", self.prefix))
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    /// The commits `_delta_log/N.json`, in order, each as its actions.
    fn commits(&self) -> Vec<Vec<Value>> {
        let mut out = Vec::new();
        for version in 0.. {
            let Some(bytes) = self.get(&format!("_delta_log/{version:020}.json")) else {
                break;
            };
            let text = String::from_utf8(bytes).unwrap();
            out.push(
                text.lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect(),
            );
        }
        out
    }

    /// The files of the latest version: the commits replayed.
    fn live_files(&self) -> BTreeSet<String> {
        self.live_files_at(usize::MAX - 1)
    }

    /// The files of version `version`: the commits up to it replayed.
    fn live_files_at(&self, version: usize) -> BTreeSet<String> {
        let mut live = BTreeSet::new();
        for commit in self.commits().into_iter().take(version + 1) {
            for action in commit {
                if let Some(path) = action["add"]["path"].as_str() {
                    live.insert(path.to_owned());
                }
                if let Some(path) = action["remove"]["path"].as_str() {
                    live.remove(path);
                }
            }
        }
        live
    }

    /// The rows of the latest version by date, each row column → text, files in order.
    fn rows(&self) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
        self.rows_at(usize::MAX - 1)
    }

    /// The rows of version `version` by date, as [`Root::rows`].
    fn rows_at(&self, version: usize) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
        let dir = tempfile::tempdir().unwrap();
        let mut out = BTreeMap::new();
        for path in self.live_files_at(version) {
            let date = path
                .strip_prefix("event_date=")
                .and_then(|p| p.split('/').next())
                .unwrap()
                .to_owned();
            let folder = dir.path().join(&date);
            std::fs::create_dir_all(&folder).unwrap();
            let name = path.rsplit('/').next().unwrap();
            std::fs::write(folder.join(name), self.get(&path).unwrap()).unwrap();
            out.insert(date, Vec::new());
        }
        for (date, rows) in out.iter_mut() {
            *rows = kit::read_rows(&dir.path().join(date));
        }
        out
    }
}

fn s3_env(cmd: &mut Command) -> &mut Command {
    cmd.env("AWS_ENDPOINT_URL", endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", ACCESS)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
}

fn delta_product(publish_root: &str) -> Product {
    Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"{publish_root}\"\ntable_format = \"delta\"\n{}",
        schema()
    ))
}

fn run(product: &Product, input: &Path, s3: bool) -> Ran {
    let mut cmd = product.cmd(&["run", input.to_str().unwrap(), "--json"]);
    if s3 {
        s3_env(&mut cmd);
    }
    cmd.output().unwrap().into()
}

const DAY: [&str; 5] = [
    r#"{"event_id":"e1","order_id":101,"status":"PENDING","updated_at":"2024-03-01T10:00:00Z"}"#,
    r#"{"event_id":"e2","order_id":102,"status":"PAID","updated_at":"2024-03-01T10:05:00Z"}"#,
    r#"{"event_id":"e3","order_id":101,"status":"PAID","updated_at":"2024-03-01T10:15:00Z"}"#,
    r#"{"event_id":"e4","order_id":103,"status":"PENDING","updated_at":"2024-03-01T10:20:00Z"}"#,
    r#"{"event_id":"e5","order_id":102,"status":"SHIPPED","updated_at":"2024-03-01T11:00:00Z"}"#,
];

fn statuses(rows: &[BTreeMap<String, String>]) -> Vec<(String, String)> {
    rows.iter()
        .map(|r| (r["order_id"].clone(), r["status"].clone()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Every output a landing produced, for the secret check: stdout, stderr, the run log,
/// the state root's files.
fn everything(product: &Product, outputs: &[&Ran]) -> String {
    let mut all = String::new();
    for ran in outputs {
        all.push_str(&ran.stdout);
        all.push_str(&ran.stderr);
    }
    for root in [&product.state, &product.quarantine] {
        for (_, bytes) in kit::tree(root) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

/// The scenario of §12 on one table: first landing creates it, a rerun skips, a breach
/// refuses with the table untouched, a restatement replaces the date in one commit.
fn lands_skips_refuses_and_replaces(product: &Product, root: &Root, s3: bool) {
    let first = product.input("01-day.jsonl", &DAY);
    let ran = run(product, &first, s3);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json()["action"], "published");
    let rows = root.rows();
    assert_eq!(rows.keys().collect::<Vec<_>>(), ["2024-03-01"]);
    assert_eq!(
        statuses(&rows["2024-03-01"]),
        pairs(&[("101", "PAID"), ("102", "SHIPPED"), ("103", "PENDING")])
    );
    let commits = root.commits();
    assert_eq!(commits.len(), 1, "one landing, one commit");
    let info = commits[0]
        .iter()
        .find_map(|a| a.get("commitInfo"))
        .expect("a commitInfo");
    assert_eq!(info["operationParameters"]["product"], "orders");
    assert_eq!(info["operationParameters"]["inputName"], "01-day.jsonl");
    let sha = ran.json()["input_sha256"].as_str().unwrap().to_owned();
    assert_eq!(info["operationParameters"]["inputSha256"], sha.as_str());
    assert_eq!(info["operationMetrics"]["acceptedRows"], "5");
    assert!(
        commits[0]
            .iter()
            .any(|a| a["metaData"]["partitionColumns"] == serde_json::json!(["event_date"])),
        "partitioned by event_date: {commits:?}"
    );
    let live = root.live_files();
    assert!(
        live.iter()
            .all(|p| p.starts_with("event_date=2024-03-01/part-") && p.ends_with("-00000.parquet")),
        "{live:?}"
    );
    let checkpoint = product.checkpoint("01-day.jsonl").unwrap();
    assert_eq!(checkpoint["table_version"], 0);

    // §5.4 / §12.5: the same bytes again, the version still holding its files: a skip.
    let again = run(product, &first, s3);
    assert_eq!(again.code, 0);
    assert_eq!(again.json()["action"], "skipped");
    assert_eq!(root.commits().len(), 1, "a skip commits nothing");

    // A breach: refused, the table's version and files as they were.
    let objects = root.objects();
    let mut leaky: Vec<String> = DAY.iter().map(|l| l.to_string()).collect();
    leaky[2] = leaky[2].replace("\"status\"", "\"email\":\"a@example.com\",\"status\"");
    let leaky: Vec<&str> = leaky.iter().map(String::as_str).collect();
    let refused = run(product, &product.input("02-leaky.jsonl", &leaky), s3);
    assert_eq!(refused.code, 3, "{}", refused.stderr);
    assert_eq!(
        root.objects(),
        objects,
        "a refusal writes nothing to the table"
    );

    // A restatement of the date: one commit removes every old file and adds the new one.
    let restated = [
        r#"{"event_id":"f1","order_id":101,"status":"DELIVERED","updated_at":"2024-03-01T12:00:00Z"}"#,
        r#"{"event_id":"f2","order_id":102,"status":"DELIVERED","updated_at":"2024-03-01T12:05:00Z"}"#,
        r#"{"event_id":"f3","order_id":103,"status":"CANCELLED","updated_at":"2024-03-01T12:10:00Z"}"#,
        r#"{"event_id":"f4","order_id":104,"status":"PAID","updated_at":"2024-03-01T12:20:00Z"}"#,
    ];
    let ran = run(product, &product.input("03-restated.jsonl", &restated), s3);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let commits = root.commits();
    assert_eq!(commits.len(), 2);
    let removed: BTreeSet<String> = commits[1]
        .iter()
        .filter_map(|a| a["remove"]["path"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(removed, live, "every file of the replaced date removed");
    assert_eq!(
        statuses(&root.rows()["2024-03-01"]),
        pairs(&[
            ("101", "DELIVERED"),
            ("102", "DELIVERED"),
            ("103", "CANCELLED"),
            ("104", "PAID")
        ])
    );
    // The replaced files stay in storage for restore and readers of the old version.
    for path in &live {
        assert!(root.get(path).is_some(), "{path} kept");
    }
    assert_eq!(
        product.checkpoint("03-restated.jsonl").unwrap()["table_version"],
        1
    );
    // The first input is no longer what the version holds: still a skip (§5.4), which
    // names the restatement; the operator's --reland lands it again.
    let skipped = run(product, &first, s3);
    assert_eq!(skipped.json()["action"], "skipped", "{}", skipped.stderr);
    assert_eq!(
        skipped.json()["landed"]["dates"][0]["by"],
        "03-restated.jsonl"
    );
    assert_eq!(root.commits().len(), 2, "a skip commits nothing");
    let path = first.to_str().unwrap();
    let back = wharf(product, &["run", path, "--reland", "--json"], s3);
    assert_eq!(back.json()["action"], "published", "{}", back.stderr);
    assert_eq!(root.commits().len(), 3);

    // §12.6: restore is one commit re-adding the previous generation (the restatement's).
    let restated_files = root.live_files_at(1);
    let back_files = root.live_files();
    let status = wharf(product, &["status", "--json"], s3);
    assert_eq!(status.json()["table_format"], "delta");
    assert_eq!(status.json()["table_version"], 2);
    assert_eq!(status.json()["dates"][0]["owner"], "01-day.jsonl");
    let restored = wharf(product, &["restore", "2024-03-01", "--yes", "--json"], s3);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    let commits = root.commits();
    assert_eq!(commits.len(), 4, "a restore is one commit");
    assert_eq!(
        root.live_files(),
        restated_files,
        "the restatement's own files, re-added"
    );
    assert_eq!(
        statuses(&root.rows()["2024-03-01"]),
        pairs(&[
            ("101", "DELIVERED"),
            ("102", "DELIVERED"),
            ("103", "CANCELLED"),
            ("104", "PAID")
        ])
    );
    let status = wharf(product, &["status", "--json"], s3);
    assert_eq!(status.json()["table_version"], 3);
    assert_eq!(status.json()["dates"][0]["owner"], "03-restated.jsonl");
    // The restatement owns the date again: its rerun is a skip.
    let rerun = run(product, &product.input("03-restated.jsonl", &restated), s3);
    assert_eq!(rerun.json()["action"], "skipped", "{}", rerun.stderr);
    // A restore is undone by another: the generation it replaced comes back.
    let undone = wharf(product, &["restore", "2024-03-01", "--yes"], s3);
    assert_eq!(undone.code, 0, "{}", undone.stderr);
    assert_eq!(root.live_files(), back_files);
    // The text of status and history names the table: its URL, format and version.
    let url = wharf::config::Config::load(&product.config)
        .unwrap()
        .lake
        .table_url()
        .unwrap()
        .to_owned();
    let status = wharf(product, &["status"], s3);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert_eq!(
        status.stdout.lines().next().unwrap(),
        format!("orders  publish root {url}  format delta  table version 4"),
        "{}",
        status.stdout
    );
    let history = wharf(product, &["history"], s3);
    assert_eq!(history.code, 0, "{}", history.stderr);
    let lines: Vec<&str> = history.stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("orders  publish root {url}  format delta  last logged table version 4"),
        "{}",
        history.stdout
    );
    assert!(
        lines.last().unwrap().ends_with("table version 4"),
        "{}",
        history.stdout
    );
    assert!(
        !everything(
            product,
            &[&ran, &refused, &again, &back, &restored, &status, &history]
        )
        .contains(SECRET),
        "no secret in any output"
    );
}

/// `wharf ARGS` against `product`, with the S3 environment when `s3`.
fn wharf(product: &Product, args: &[&str], s3: bool) -> Ran {
    let mut cmd = product.cmd(args);
    if s3 {
        s3_env(&mut cmd);
    }
    cmd.output().unwrap().into()
}

#[test]
fn replaced_generations_beyond_keep_generations_are_deleted_and_the_rest_restorable() {
    let product = Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"delta\"\n\
         keep_generations = 1\n{}",
        schema()
    ));
    let root = Root::local(&product.path().join("lake/orders"));
    let mut generations = Vec::new();
    for n in 0..3 {
        let line = DAY[0].replace("PENDING", &format!("S{n}"));
        let ran = run(
            &product,
            &product.input(&format!("{n:02}.jsonl"), &[&line]),
            false,
        );
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        generations.push(root.live_files());
    }
    let objects = root.objects();
    // The newest removed generation (the second landing's) stays; the first is deleted.
    for path in &generations[1] {
        assert!(objects.contains(path), "{path} kept for restore");
    }
    for path in &generations[0] {
        assert!(!objects.contains(path), "{path} vacuumed");
    }
    let restored = wharf(&product, &["restore", "2024-03-01", "--yes"], false);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert_eq!(root.live_files(), generations[1]);
    assert_eq!(
        statuses(&root.rows()["2024-03-01"]),
        pairs(&[("101", "S1")])
    );
    // The restore put the third landing's generation in the trash: a second one brings
    // it back.
    let again = wharf(&product, &["restore", "2024-03-01", "--yes"], false);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(root.live_files(), generations[2]);
    // A date with no removed generation: a usage error naming the trash, no commit.
    let commits = root.commits().len();
    let none = wharf(&product, &["restore", "2024-03-02", "--yes"], false);
    assert_eq!(none.code, 2, "{}", none.stderr);
    assert!(none.stderr.contains("delta-trash.json"), "{}", none.stderr);
    assert_eq!(root.commits().len(), commits);
}

/// `wharf diff` on a Delta table: the published side is the version's own files. The
/// diff writes nothing, and is what the following run changes, both versions read back.
fn a_diff_is_what_the_run_then_changes(product: &Product, root: &Root, s3: bool) {
    let first = product.input("01-day.jsonl", &DAY);
    assert_eq!(run(product, &first, s3).code, 0);
    let corrected = product.input(
        "02-corrected.jsonl",
        &[
            r#"{"event_id":"f1","order_id":101,"status":"REFUNDED","updated_at":"2024-03-01T12:00:00Z"}"#,
            DAY[4],
            r#"{"event_id":"f2","order_id":104,"status":"PENDING","updated_at":"2024-03-01T13:00:00Z"}"#,
        ],
    );
    let objects = root.objects();
    let mut cmd = product.cmd(&["diff", corrected.to_str().unwrap(), "--json"]);
    if s3 {
        s3_env(&mut cmd);
    }
    let diffed: Ran = cmd.output().unwrap().into();
    assert_eq!(diffed.code, 0, "{}", diffed.stderr);
    assert_eq!(
        root.objects(),
        objects,
        "a diff writes nothing to the table"
    );
    let side = |v: &Value| v["status"].as_str().map(str::to_owned);
    let said: Vec<(String, String, Option<String>, Option<String>)> = diffed
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|l| {
            (
                l["key"].to_string(),
                l["change"].as_str().unwrap().to_owned(),
                side(&l["before"]),
                side(&l["after"]),
            )
        })
        .collect();

    assert_eq!(run(product, &corrected, s3).code, 0);
    let by_key = |version: usize| -> BTreeMap<String, String> {
        statuses(&root.rows_at(version)["2024-03-01"])
            .into_iter()
            .collect()
    };
    let (before, after) = (by_key(0), by_key(1));
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut want = Vec::new();
    for key in keys {
        let (b, a) = (before.get(key).cloned(), after.get(key).cloned());
        let change = match (&b, &a) {
            (Some(b), Some(a)) if b == a => continue,
            (Some(_), Some(_)) => "updated",
            (None, _) => "inserted",
            _ => "removed",
        };
        want.push((key.clone(), change.to_owned(), b, a));
    }
    assert_eq!(
        want.len(),
        3,
        "101 updated, 103 removed, 104 inserted: {want:?}"
    );
    assert_eq!(said, want);
}

#[test]
fn a_diff_of_a_local_delta_table_is_what_the_run_then_changes() {
    let product = delta_product("lake/orders");
    let root = Root::local(&product.path().join("lake/orders"));
    a_diff_is_what_the_run_then_changes(&product, &root, false);
}

#[test]
fn a_diff_of_a_delta_table_on_s3_is_what_the_run_then_changes() {
    let prefix = format!("d-{}", std::process::id());
    let product = delta_product(&format!("s3://wharf/{prefix}/orders"));
    let root = Root::s3(&format!("{prefix}/orders"));
    a_diff_is_what_the_run_then_changes(&product, &root, true);
}

#[test]
fn a_local_delta_table_lands_skips_refuses_and_replaces() {
    let product = delta_product("lake/orders");
    let root = Root::local(&product.path().join("lake/orders"));
    lands_skips_refuses_and_replaces(&product, &root, false);
}

#[test]
fn a_delta_table_on_s3_lands_skips_refuses_and_replaces() {
    let prefix = format!("t-{}", std::process::id());
    let product = delta_product(&format!("s3://wharf/{prefix}/orders"));
    let root = Root::s3(&format!("{prefix}/orders"));
    lands_skips_refuses_and_replaces(&product, &root, true);
}

#[test]
fn the_s3_server_creates_an_object_only_if_absent() {
    // The commit's conditional put: a second create of the same key is refused (412).
    let store = bucket();
    let runtime = runtime();
    let path = StorePath::from(format!("cas-{}/00.json", std::process::id()));
    let create = || {
        runtime.block_on(store.put_opts(
            &path,
            PutPayload::from_static(b"{}"),
            PutMode::Create.into(),
        ))
    };
    create().unwrap();
    let second = create().expect_err("the key exists");
    assert!(
        matches!(second, object_store::Error::AlreadyExists { .. }),
        "{second}"
    );
}

#[test]
fn unreachable_or_refused_s3_exits_1_naming_the_url_and_no_secret() {
    let cases = [
        ("wrong secret", "wharf", endpoint(), "not-the-secret-0000"),
        ("missing bucket", "no-such-bucket", endpoint(), SECRET),
        (
            "unreachable",
            "wharf",
            "http://127.0.0.1:9".to_owned(),
            SECRET,
        ),
    ];
    for (what, bucket, endpoint, secret) in cases {
        let url = format!("s3://{bucket}/refused/orders");
        let product = delta_product(&url);
        let input = product.input("01-day.jsonl", &DAY);
        let mut cmd = product.cmd(&["run", input.to_str().unwrap()]);
        s3_env(&mut cmd)
            .env("AWS_ENDPOINT_URL", &endpoint)
            .env("AWS_SECRET_ACCESS_KEY", secret)
            // An unreachable endpoint fails after the store's retries; keep them short.
            .env("AWS_RETRY_TIMEOUT", "2s")
            .env("AWS_MAX_RETRIES", "1");
        let ran: Ran = cmd.output().unwrap().into();
        assert_eq!(ran.code, 1, "{what}: {}", ran.stderr);
        assert!(ran.stderr.contains(&url), "{what}: {}", ran.stderr);
        assert!(
            ran.stderr.contains("AWS_SECRET_ACCESS_KEY"),
            "{what}: names what to set: {}",
            ran.stderr
        );
        let all = everything(&product, &[&ran]);
        assert!(!all.contains(secret), "{what}: the secret leaked: {all}");
        assert!(product.checkpoint("01-day.jsonl").is_none(), "{what}");
    }
}

#[test]
fn an_s3_root_needs_table_format_delta() {
    let product = Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"s3://wharf/x/orders\"\n{}",
        schema()
    ));
    let input = product.input("01-day.jsonl", &DAY);
    let ran = run(&product, &input, true);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("table_format = \"delta\""),
        "{}",
        ran.stderr
    );
}

/// The `commitInfo` input name of each commit.
fn committed_inputs(commits: &[Vec<Value>]) -> Vec<String> {
    commits
        .iter()
        .map(|c| {
            c.iter()
                .find_map(|a| a["commitInfo"]["operationParameters"]["inputName"].as_str())
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn two_writers_racing_for_one_date_leave_one_of_them() {
    // Two machines (state roots of their own) landing the same date into one S3 table at
    // the same moment, until one of them loses the race for a version (at most ROUNDS).
    const ROUNDS: usize = 20;
    let prefix = format!("race-{}/orders", std::process::id());
    let url = format!("s3://wharf/{prefix}");
    let (a, b) = (delta_product(&url), delta_product(&url));
    let root = Root::s3(&prefix);
    // The table exists first, so both plan against the same version.
    assert_eq!(run(&a, &a.input("00-seed.jsonl", &DAY[..1]), true).code, 0);
    let mut outcomes = BTreeMap::new();
    let mut lost = None;
    for round in 0..ROUNDS {
        let before = root.commits().len();
        let status = |writer: &str| format!("{writer}{round}");
        let racers = [(&a, "a", status("A")), (&b, "b", status("B"))].map(|(product, tag, s)| {
            let name = format!("{tag}{round}.jsonl");
            let input = product.input(&name, &[&DAY[1].replace("PAID", &s)]);
            let mut cmd =
                product.cmd(&["run", input.to_str().unwrap(), "--allow-shrink", "--json"]);
            let child = s3_env(&mut cmd)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (product, input, name, s, child)
        });
        let mut landed = Vec::new();
        for (product, input, name, s, child) in racers {
            let ran: Ran = child.wait_with_output().unwrap().into();
            *outcomes.entry(ran.code).or_insert(0) += 1;
            let action = match ran.code {
                0 => "published",
                4 => "busy",
                code => panic!("round {round}: {name} exited {code}: {}", ran.stderr),
            };
            assert_eq!(ran.json()["action"], action, "round {round}: {name}");
            if ran.code == 0 {
                landed.push((name, s));
            } else {
                assert!(product.checkpoint(&name).is_none(), "round {round}: {name}");
                lost = Some((product, input));
            }
        }
        // One commit per landing that exited 0 and none for a busy one: where both raced
        // for the same version, exactly one of them committed it.
        let commits = root.commits();
        let mut committed = committed_inputs(&commits[before..]);
        let last = committed.last().cloned();
        let mut exited_0: Vec<String> = landed.iter().map(|(n, _)| n.clone()).collect();
        committed.sort();
        exited_0.sort();
        assert_eq!(
            committed, exited_0,
            "round {round}: the commits are the landings"
        );
        // The table is one of the landings, whole: the one committed last.
        let last = last.unwrap_or_else(|| panic!("round {round}: neither landed"));
        let (_, status) = landed.iter().find(|(n, _)| *n == last).unwrap();
        assert_eq!(
            statuses(&root.rows()["2024-03-01"]),
            pairs(&[("102", status.as_str())]),
            "round {round}: the table is {last}'s"
        );
        if lost.is_some() {
            break;
        }
    }
    eprintln!("race outcomes (exit code: count): {outcomes:?}");
    let (loser, input) = lost.unwrap_or_else(|| {
        panic!("no writer lost the race in {ROUNDS} rounds ({outcomes:?}): nothing was proved")
    });
    // The loser's rerun lands; every data file named for its input is one that rerun's
    // commit added: its lost try left none, referenced or not.
    let rerun = run(loser, &input, true);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(rerun.json()["action"], "published");
    let sha = rerun.json()["input_sha256"].as_str().unwrap().to_owned();
    let mark = format!("-{}-", &sha[..12]);
    let commits = root.commits();
    let added: BTreeSet<String> = commits
        .last()
        .unwrap()
        .iter()
        .filter_map(|a| a["add"]["path"].as_str().map(str::to_owned))
        .collect();
    let named: BTreeSet<String> = root
        .objects()
        .into_iter()
        .filter(|p| p.contains(&mark))
        .collect();
    assert!(!added.is_empty());
    assert_eq!(named, added, "the loser's files are its rerun's only");
    for commit in &commits[..commits.len() - 1] {
        for action in commit {
            let path = action["add"]["path"].as_str().unwrap_or_default();
            assert!(
                !path.contains(&mark),
                "an earlier version adds the loser's {path}"
            );
        }
    }
}

/// Two dates of `keys` orders each, every status `status`.
fn two_dates(keys: u64, status: &str) -> Vec<String> {
    (0..keys * 2)
        .map(|n| {
            let day = 1 + n % 2;
            format!(
                r#"{{"event_id":"{status}{n}","order_id":{n},"status":"{status}","updated_at":"2024-03-0{day}T10:{:02}:00Z"}}"#,
                n % 60
            )
        })
        .collect()
}

#[test]
fn sigkill_during_landings_on_s3_leaves_each_date_old_or_new_and_reruns_converge() {
    // WHARF_KILLS=N asks for more; every kill is followed by a full rerun.
    let kills: usize = std::env::var("WHARF_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(50);
    let prefix = format!("kill-{}/orders", std::process::id());
    let product = delta_product(&format!("s3://wharf/{prefix}"));
    let root = Root::s3(&prefix);
    let lines = |status: &str| two_dates(200, status);
    let (a, b) = (lines("A"), lines("B"));
    let input_a = product.input("a.jsonl", &a.iter().map(String::as_str).collect::<Vec<_>>());
    let input_b = product.input("b.jsonl", &b.iter().map(String::as_str).collect::<Vec<_>>());
    let started = std::time::Instant::now();
    assert_eq!(run(&product, &input_a, true).code, 0);
    let duration = started.elapsed();
    let rows_a = root.rows();
    assert_eq!(run(&product, &input_b, true).code, 0);
    let rows_b = root.rows();
    assert_eq!(rows_a.len(), 2);
    assert_ne!(rows_a, rows_b);

    let mut rng = kit::Rng::new(0x5eed_de17a);
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    for kill in 0..kills {
        // Alternate the target, so every kill interrupts a landing that changes both dates.
        let (input, target, other) = if kill % 2 == 0 {
            (&input_a, &rows_a, &rows_b)
        } else {
            (&input_b, &rows_b, &rows_a)
        };
        // Each input has landed: the operator relands it (§5.4), killed or not.
        let mut cmd = product.cmd(&["run", input.to_str().unwrap(), "--reland"]);
        let mut child = s3_env(&mut cmd)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(duration.mul_f64(rng.unit() * 1.2));
        let killed = child.try_wait().unwrap().is_none();
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        *outcomes
            .entry(if killed { "killed" } else { "finished" })
            .or_default() += 1;
        let now = root.rows();
        for date in ["2024-03-01", "2024-03-02"] {
            let seen = now.get(date);
            assert!(
                seen == target.get(date) || seen == other.get(date),
                "kill {kill}: {date} is neither whole old nor whole new"
            );
        }
        let path = input.to_str().unwrap();
        let rerun = wharf(&product, &["run", path, "--reland", "--json"], true);
        assert_eq!(rerun.code, 0, "kill {kill}: rerun: {}", rerun.stderr);
        assert_eq!(&root.rows(), target, "kill {kill}: the rerun converges");
    }
    eprintln!("S3 kill loop: {outcomes:?} over {kills} runs");
    // §12.4: what the kills left, the reruns deleted; every data object is one a kept
    // version references, nothing is staged in the table or the state root.
    scenarios::assert_no_orphans(&product, &root);
    // Most kills must land mid-run, or the loop proves little.
    assert!(
        outcomes.get("killed").copied().unwrap_or(0) >= kills / 4,
        "{outcomes:?}"
    );
}
