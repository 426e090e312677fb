//! A lost race for the table's next version (CONTRACT.md §12.2) is busy exactly as a held
//! product lock is (§8): exit 4, `busy` in `--json`, and `watch` tries again. The race is
//! provoked, not hoped for: the loser pauses after its upload (`WHARF_PAUSE`) while
//! another machine's Wharf (a state root of its own) commits; released, it finds the
//! version taken. It leaves no version and none of its uploads, and its rerun re-plans
//! against the new version and lands.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Root, delta_product, kit, run, s3_env, two_dates, wharf};
use kit::product::{Product, Ran};

/// How long any wait here may take: the machine is shared and the binary a debug build.
const PATIENCE: Duration = Duration::from_secs(120);

/// Three orders on each of two dates, every status `status`: each input replaces both.
fn input(product: &Product, name: &str, status: &str) -> PathBuf {
    let lines = two_dates(3, status);
    product.input(name, &lines.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The statuses the table's latest version holds, per date.
fn statuses(root: &Root) -> BTreeMap<String, BTreeSet<String>> {
    root.rows()
        .into_iter()
        .map(|(date, rows)| (date, rows.iter().map(|r| r["status"].clone()).collect()))
        .collect()
}

/// Both dates holding only `status`.
fn only(status: &str) -> BTreeMap<String, BTreeSet<String>> {
    ["2024-03-01", "2024-03-02"]
        .into_iter()
        .map(|d| (d.to_owned(), BTreeSet::from([status.to_owned()])))
        .collect()
}

/// The data objects under the table root (not its log).
fn data_objects(root: &Root) -> BTreeSet<String> {
    root.objects()
        .into_iter()
        .filter(|p| p.starts_with("event_date="))
        .collect()
}

/// Every path some commit of the table adds.
fn ever_added(root: &Root) -> BTreeSet<String> {
    root.commits()
        .iter()
        .flatten()
        .filter_map(|a| a["add"]["path"].as_str().map(str::to_owned))
        .collect()
}

/// A `wharf` process paused after uploading its data files, before its commit.
struct Paused {
    child: Child,
    file: PathBuf,
}

impl Paused {
    /// Starts `wharf ARGS` on `product` and waits until it has paused.
    fn start(product: &Product, args: &[&str], s3: bool) -> Paused {
        let file = product.path().join("paused");
        let mut cmd = product.cmd(args);
        if s3 {
            s3_env(&mut cmd);
        }
        cmd.env("WHARF_PAUSE", format!("after_upload:{}", file.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().unwrap();
        let mut paused = Paused { child, file };
        paused.wait_until_paused();
        paused
    }

    fn wait_until_paused(&mut self) {
        let deadline = Instant::now() + PATIENCE;
        while !self.file.exists() {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut said = String::new();
                if let Some(mut stderr) = self.child.stderr.take() {
                    stderr.read_to_string(&mut said).unwrap();
                }
                panic!("wharf ended ({status}) before pausing: {said}");
            }
            assert!(Instant::now() < deadline, "wharf never paused");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Lets it commit, and waits for it to end.
    fn release(self) -> Ran {
        std::fs::remove_file(&self.file).unwrap();
        self.child.wait_with_output().unwrap().into()
    }
}

fn pending(product: &Product) -> Option<BTreeSet<String>> {
    let bytes = std::fs::read(product.state.join("delta-pending.json")).ok()?;
    Some(serde_json::from_slice(&bytes).unwrap())
}

/// `b` plans against a version, uploads, and pauses; `a` commits the next version; `b`
/// is busy, leaves nothing, and its rerun over the whole inbox lands.
fn a_lost_commit_race_is_busy_and_its_rerun_lands(url: &str, root: &Root, s3: bool) {
    let (a, b) = (delta_product(url), delta_product(url));
    assert_eq!(run(&a, &input(&a, "00-seed.jsonl", "S"), s3).code, 0);

    // `wharf run INPUT --json` loses.
    let before = data_objects(root);
    let b1 = input(&b, "b1.jsonl", "B1");
    let loser = Paused::start(&b, &["run", b1.to_str().unwrap(), "--json"], s3);
    let uploads: BTreeSet<String> = data_objects(root).difference(&before).cloned().collect();
    assert!(!uploads.is_empty(), "the loser uploaded before its commit");
    assert_eq!(
        pending(&b).as_ref(),
        Some(&uploads),
        "recorded before upload"
    );
    let won = run(&a, &input(&a, "a1.jsonl", "A1"), s3);
    assert_eq!(won.code, 0, "{}", won.stderr);
    assert_eq!(won.json()["action"], "published");
    let lost = loser.release();
    assert_eq!(lost.code, 4, "{}{}", lost.stdout, lost.stderr);
    let object = lost.json();
    assert_eq!(object["action"], "busy", "{object}");
    assert_eq!(object["input_name"], "b1.jsonl");
    let detail = object["detail"].as_str().unwrap();
    assert!(
        detail.contains(url) && detail.contains("version 1"),
        "{detail}"
    );
    assert_eq!(root.commits().len(), 2, "the loser committed no version");
    assert_eq!(statuses(root), only("A1"), "the winner's landing, whole");
    let left = data_objects(root);
    assert!(
        uploads.is_disjoint(&left),
        "the loser's uploads stayed: {left:?}"
    );
    assert_eq!(
        pending(&b),
        None,
        "nothing left pending: the uploads are gone"
    );
    assert!(
        b.checkpoint("b1.jsonl").is_none(),
        "a busy landing checkpoints nothing"
    );

    // `wharf run` over the whole inbox loses: busy, exit 4, as a held lock is.
    let loser = Paused::start(&b, &["run"], s3);
    let won = run(&a, &input(&a, "a2.jsonl", "A2"), s3);
    assert_eq!(won.code, 0, "{}", won.stderr);
    let lost = loser.release();
    assert_eq!(lost.code, 4, "{}{}", lost.stdout, lost.stderr);
    assert!(lost.stderr.contains("busy"), "{}", lost.stderr);
    assert_eq!(root.commits().len(), 3, "the loser committed no version");
    assert_eq!(statuses(root), only("A2"));

    // The rerun plans against the winner's version and lands.
    let rerun = wharf(&b, &["run"], s3);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(root.commits().len(), 4);
    assert_eq!(statuses(root), only("B1"));
    assert_eq!(b.checkpoint("b1.jsonl").unwrap()["table_version"], 3);
    let stray: Vec<String> = data_objects(root)
        .difference(&ever_added(root))
        .cloned()
        .collect();
    assert!(stray.is_empty(), "files no version ever added: {stray:?}");
}

#[test]
fn a_lost_commit_race_on_a_local_table_is_busy_and_its_rerun_lands() {
    let shared = tempfile::tempdir().unwrap();
    let table = shared.path().join("orders");
    let root = Root::local(&table);
    a_lost_commit_race_is_busy_and_its_rerun_lands(table.to_str().unwrap(), &root, false);
}

#[test]
fn a_lost_commit_race_on_s3_is_busy_and_its_rerun_lands() {
    let prefix = format!("busy-{}/orders", std::process::id());
    let root = Root::s3(&prefix);
    a_lost_commit_race_is_busy_and_its_rerun_lands(&format!("s3://wharf/{prefix}"), &root, true);
}

#[test]
fn watch_retries_a_lost_commit_race_and_lands() {
    let shared = tempfile::tempdir().unwrap();
    let table = shared.path().join("orders");
    let root = Root::local(&table);
    let (a, b) = (
        delta_product(table.to_str().unwrap()),
        delta_product(table.to_str().unwrap()),
    );
    assert_eq!(run(&a, &input(&a, "00-seed.jsonl", "S"), false).code, 0);
    input(&b, "b1.jsonl", "B1");
    let mut watch = Paused::start(&b, &["watch", "--json", "--rescan", "1"], false);
    let stdout = watch.child.stdout.take().unwrap();
    let (tx, lines) = channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(serde_json::from_str(&line).unwrap());
        }
    });
    let won = run(&a, &input(&a, "a1.jsonl", "A1"), false);
    assert_eq!(won.code, 0, "{}", won.stderr);
    std::fs::remove_file(&watch.file).unwrap();

    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    while !seen.iter().any(|v: &Value| v["action"] == "published") {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no landing of b1.jsonl from wharf watch; lines: {seen:?}"),
        }
    }
    let said: Vec<(&str, &str)> = seen
        .iter()
        .map(|v| {
            (
                v["input_name"].as_str().unwrap(),
                v["action"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(said, [("b1.jsonl", "busy"), ("b1.jsonl", "published")]);
    assert_eq!(root.commits().len(), 3, "seed, winner, the watch's retry");
    assert_eq!(statuses(&root), only("B1"));
    assert_eq!(b.checkpoint("b1.jsonl").unwrap()["table_version"], 2);

    let term = std::process::Command::new("kill")
        .args(["-TERM", &watch.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert!(
        watch.child.wait().unwrap().success(),
        "watch exits 0 on SIGTERM"
    );
}
