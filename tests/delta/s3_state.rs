//! The state and quarantine roots on S3 (CONTRACT.md §13.4), against SeaweedFS: every
//! state document is an object written with a conditional put, the run log one object
//! per run, the quarantine beside them; nothing of the product is written to the local
//! disk's state or quarantine folders. There is no run lock file: two machines racing on
//! the same state and table are decided by the Delta commit, every input lands exactly
//! once, and the table holds what landing each alone gives. A crash mid-landing leaves
//! the state consistent and the rerun converges.
//!
//! Each input is one order on a date of its own, so the table's rows do not depend on
//! which machine landed first; twenty inputs prove the skip at this size as at thousands
//! and keep a debug run to seconds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use serde_json::Value;

mod console;
mod race;

use super::{Root, kit, s3_env};
use kit::product::{Product, Ran, schema};

/// A product ("machine") whose table, state and quarantine are under `s3://wharf/PREFIX/`.
struct Machine {
    product: Product,
    s3: Shared,
}

/// What the machines share, as read independently of Wharf.
struct Shared {
    table: Root,
    state: Root,
    quarantine: Root,
}

impl Shared {
    fn new(prefix: &str) -> Shared {
        Shared {
            table: Root::s3(&format!("{prefix}/orders")),
            state: Root::s3(&format!("{prefix}/state")),
            quarantine: Root::s3(&format!("{prefix}/quarantine")),
        }
    }

    /// The run log: every run's record, in the order the objects' names sort.
    fn runs(&self) -> Vec<Value> {
        let names: Vec<String> = under(&self.state, "runs/").into_iter().collect();
        names
            .iter()
            .map(|n| serde_json::from_slice(&self.state.get(n).unwrap()).unwrap())
            .collect()
    }

    fn checkpoint(&self, name: &str) -> Option<Value> {
        let bytes = self.state.get(&format!("checkpoints/{name}.json"))?;
        Some(serde_json::from_slice(&bytes).unwrap())
    }

    /// Each landing's commit version and `commitInfo` parameters, from the table's log.
    fn parameters(&self) -> Vec<(usize, Value)> {
        let commits = self.table.commits();
        commits
            .into_iter()
            .enumerate()
            .filter_map(|(v, actions)| {
                let info = actions
                    .into_iter()
                    .find_map(|mut a| a.get_mut("commitInfo").map(Value::take))?;
                let p = info["operationParameters"].clone();
                p["inputName"].is_string().then_some((v, p))
            })
            .collect()
    }

    /// Every landing the table's log records: (version, input name, input SHA-256).
    fn landings(&self) -> Vec<(usize, String, String)> {
        let text = |p: &Value, key: &str| p[key].as_str().unwrap_or_default().to_owned();
        self.parameters()
            .into_iter()
            .map(|(v, p)| (v, text(&p, "inputName"), text(&p, "inputSha256")))
            .collect()
    }

    /// The run id of each input's landing, from its commit.
    fn run_ids(&self) -> BTreeMap<String, String> {
        let text = |p: &Value, key: &str| p[key].as_str().unwrap_or_default().to_owned();
        self.parameters()
            .into_iter()
            .map(|(_, p)| (text(&p, "inputName"), text(&p, "runId")))
            .collect()
    }

    /// The quarantine's summaries, by input name.
    fn summaries(&self) -> BTreeMap<String, Value> {
        self.quarantine
            .objects()
            .into_iter()
            .filter(|p| p.ends_with("/summary.json"))
            .map(|p| {
                let summary: Value =
                    serde_json::from_slice(&self.quarantine.get(&p).unwrap()).unwrap();
                (summary["input_name"].as_str().unwrap().to_owned(), summary)
            })
            .collect()
    }

    /// The table's rows by date, each as (order id, status).
    fn rows(&self) -> BTreeMap<String, Vec<(String, String)>> {
        self.table
            .rows()
            .into_iter()
            .map(|(date, rows)| (date, super::statuses(&rows)))
            .collect()
    }
}

impl Machine {
    fn new(prefix: &str) -> Machine {
        let product = Product::with_config(&format!(
            "product = \"orders\"\npublish_root = \"s3://wharf/{prefix}/orders\"\n\
             table_format = \"delta\"\nstate_root = \"s3://wharf/{prefix}/state\"\n\
             quarantine_root = \"s3://wharf/{prefix}/quarantine\"\n{}",
            schema()
        ));
        Machine {
            product,
            s3: Shared::new(prefix),
        }
    }

    /// `wharf ARGS` with the S3 environment and a scratch folder (`TMPDIR`) of the
    /// machine's own, gone with the test's folder.
    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let scratch = self.product.path().join("tmp");
        std::fs::create_dir_all(&scratch).unwrap();
        let mut cmd = self.product.cmd(args);
        s3_env(&mut cmd).env("TMPDIR", scratch);
        cmd
    }

    fn wharf(&self, args: &[&str]) -> Ran {
        self.cmd(args).output().unwrap().into()
    }

    /// `wharf run inbox/NAME --json`.
    fn run(&self, name: &str) -> Ran {
        let input = self.product.path().join("inbox").join(name);
        self.wharf(&["run", input.to_str().unwrap(), "--json"])
    }

    fn put(&self, i: usize) {
        self.product.input(&name(i), &[&line(i)]);
    }

    /// Nothing of the product in the local state or quarantine folders.
    fn assert_nothing_local(&self) {
        for folder in ["state", "quarantine"] {
            let path = self.product.path().join(folder);
            assert!(!path.exists(), "{} was written", path.display());
        }
    }
}

/// The objects under `root` whose relative names start with `prefix`.
fn under(root: &Root, prefix: &str) -> BTreeSet<String> {
    let all = root.objects();
    all.into_iter().filter(|p| p.starts_with(prefix)).collect()
}

fn name(i: usize) -> String {
    format!("{i:02}.jsonl")
}

/// The date of input `i`: one of its own.
fn date(i: usize) -> String {
    format!("2024-{:02}-{:02}", 1 + (i - 1) / 28, 1 + (i - 1) % 28)
}

fn line(i: usize) -> String {
    format!(
        r#"{{"event_id":"e{i}","order_id":{},"status":"PAID","updated_at":"{}T10:00:00Z"}}"#,
        100 + i,
        date(i)
    )
}

/// The table landing each of `inputs` alone gives: each date its one order.
fn alone(inputs: impl Iterator<Item = usize>) -> BTreeMap<String, Vec<(String, String)>> {
    inputs
        .map(|i| (date(i), vec![((100 + i).to_string(), "PAID".to_owned())]))
        .collect()
}

fn prefix(tag: &str) -> String {
    format!("st-{}-{tag}", std::process::id())
}

#[test]
fn twenty_landings_with_state_on_s3_then_a_rerun_skips_them_and_a_new_input_lands() {
    let m = Machine::new(&prefix("twenty"));
    for i in 1..=20 {
        m.put(i);
        let ran = m.run(&name(i));
        assert_eq!(ran.code, 0, "{}: {}{}", name(i), ran.stdout, ran.stderr);
        assert_eq!(ran.json()["action"], "published");
    }
    let s3 = &m.s3;
    // Each landing's checkpoint is an object naming its commit and its input's hash.
    for (version, input, sha) in s3.landings() {
        let checkpoint = s3.checkpoint(&input).expect("a checkpoint object");
        assert_eq!(checkpoint["input_sha256"], sha.as_str(), "{input}");
        assert_eq!(checkpoint["table_version"], version, "{input}");
    }
    let state = s3.state.objects();
    for document in ["partitions.json", "table-memory.json"] {
        assert!(state.contains(document), "{document}: {state:?}");
    }
    let manifest: Value =
        serde_json::from_slice(&s3.state.get("partitions.json").unwrap()).unwrap();
    assert_eq!(manifest["dates"].as_object().unwrap().len(), 20);
    assert_eq!(s3.runs().len(), 20, "one run log object per run");
    assert_eq!(s3.rows(), alone(1..=20));
    m.assert_nothing_local();

    // A rerun over the whole inbox skips everything and writes nothing to the table.
    let stored: BTreeMap<String, Vec<u8>> = s3
        .table
        .objects()
        .into_iter()
        .map(|p| {
            let bytes = s3.table.get(&p).unwrap();
            (p, bytes)
        })
        .collect();
    let rerun = m.wharf(&["run"]);
    assert_eq!(rerun.code, 0, "{}{}", rerun.stdout, rerun.stderr);
    let after: BTreeMap<String, Vec<u8>> = stored
        .keys()
        .map(|p| (p.clone(), s3.table.get(p).unwrap()))
        .collect();
    assert_eq!(after, stored, "the table byte for byte as it was");
    assert_eq!(s3.table.objects().len(), stored.len(), "no object added");
    let runs = s3.runs();
    let actions: Vec<&str> = runs[20..]
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, vec!["skipped"; 20]);

    // The next new input lands; the commands that read state read it from S3.
    m.put(21);
    let new = m.product.path().join("inbox/21.jsonl");
    let diff = m.wharf(&["diff", new.to_str().unwrap()]);
    assert_eq!(diff.code, 0, "{}{}", diff.stdout, diff.stderr);
    let plan = m.wharf(&["plan", new.to_str().unwrap()]);
    assert_eq!(plan.code, 0, "{}{}", plan.stdout, plan.stderr);
    let ran = m.wharf(&["run", "--json"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(s3.landings().len(), 21);
    assert_eq!(s3.rows(), alone(1..=21));
    let status = m.wharf(&["status", "--json"]).json();
    assert_eq!(status["dates"].as_array().unwrap().len(), 21, "{status}");
    let history = m.wharf(&["history", "--limit", "3"]);
    assert_eq!(history.code, 0, "{}", history.stderr);
    assert!(history.stdout.contains("21.jsonl"), "{}", history.stdout);
    m.assert_nothing_local();
}

#[test]
fn a_refusal_writes_quarantine_objects_on_s3_and_nothing_in_the_table() {
    let m = Machine::new(&prefix("refuse"));
    m.put(1);
    assert_eq!(m.run(&name(1)).code, 0);
    let s3 = &m.s3;
    let (objects, state) = (s3.table.objects(), s3.state.objects());
    let quarantined = s3.quarantine.objects();
    let leaky = line(2).replace("\"status\"", "\"email\":\"a@example.com\",\"status\"");
    m.product.input("02-leaky.jsonl", &[&leaky]);
    let ran = m.run("02-leaky.jsonl");
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json()["action"], "refused");
    let sha = ran.json()["input_sha256"].as_str().unwrap().to_owned();
    assert_eq!(s3.table.objects(), objects, "nothing written to the table");
    assert_eq!(s3.landings().len(), 1);
    assert!(s3.checkpoint("02-leaky.jsonl").is_none(), "no checkpoint");
    let added: BTreeSet<String> = s3.state.objects().difference(&state).cloned().collect();
    assert!(
        added.iter().all(|p| p.starts_with("runs/")),
        "only the run log grew: {added:?}"
    );
    // The quarantine: its two objects, reason codes and line numbers, never a value.
    let written: BTreeSet<String> = s3
        .quarantine
        .objects()
        .difference(&quarantined)
        .cloned()
        .collect();
    assert_eq!(
        written,
        BTreeSet::from([
            format!("{sha}/rejects.jsonl"),
            format!("{sha}/summary.json")
        ])
    );
    let rejects = s3.quarantine.get(&format!("{sha}/rejects.jsonl")).unwrap();
    let text = String::from_utf8(rejects).unwrap();
    assert!(!text.contains("example.com"), "{text}");
    let record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        (record["line"].as_u64(), record["field"].as_str()),
        (Some(1), Some("email"))
    );
    let listed = m.wharf(&["quarantine", "--json"]).json();
    let entries = listed["entries"].as_array().unwrap();
    assert!(
        entries.iter().any(|e| e["input_sha256"] == sha.as_str()),
        "{listed}"
    );
    let shown = m.wharf(&["quarantine", &sha[..12], "--json"]).json();
    assert_eq!(shown["rejects"][0]["field"], "email", "{shown}");

    // A restatement replaces the date; its generation is kept in the trash record on S3
    // and `restore` brings it back.
    let restated = line(1)
        .replace("PAID", "SHIPPED")
        .replace("\"e1\"", "\"f1\"");
    m.product.input("03-restated.jsonl", &[&restated]);
    assert_eq!(m.run("03-restated.jsonl").code, 0);
    assert_eq!(
        s3.rows()[&date(1)],
        vec![("101".to_owned(), "SHIPPED".to_owned())]
    );
    assert!(s3.state.objects().contains("delta-trash.json"));
    let restored = m.wharf(&["restore", &date(1), "--yes"]);
    assert_eq!(restored.code, 0, "{}{}", restored.stdout, restored.stderr);
    assert_eq!(s3.rows(), alone(1..=1));
    m.assert_nothing_local();
}

/// A `wharf` process paused at failpoint `point` (`WHARF_PAUSE`).
struct Paused {
    child: std::process::Child,
    file: PathBuf,
}

impl Paused {
    fn start(m: &Machine, args: &[&str], point: &str) -> Paused {
        let file = m.product.path().join("paused");
        let mut cmd = m.cmd(args);
        cmd.env("WHARF_PAUSE", format!("{point}:{}", file.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while !file.exists() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("wharf ended ({status}) before pausing");
            }
            assert!(Instant::now() < deadline, "wharf never paused");
            std::thread::sleep(Duration::from_millis(10));
        }
        Paused { child, file }
    }

    fn release(self) -> Ran {
        std::fs::remove_file(&self.file).unwrap();
        self.child.wait_with_output().unwrap().into()
    }
}

/// Puts `bytes` at `relative` under `root` unconditionally (another machine's write).
fn overwrite(root: &Root, relative: &str, bytes: &[u8]) {
    let path = StorePath::from(format!("{}/{relative}", root.prefix));
    let put = root.store.put(&path, PutPayload::from(bytes.to_vec()));
    root.runtime.block_on(put).unwrap();
}

#[test]
fn a_state_object_changed_since_it_was_read_is_never_overwritten() {
    let m = Machine::new(&prefix("stale"));
    let s3 = &m.s3;
    // SeaweedFS itself honours the conditions: a stale If-Match and an If-None-Match on
    // an existing key are refused.
    overwrite(&s3.state, "probe", b"one");
    let path = StorePath::from(format!("{}/probe", s3.state.prefix));
    let put = |mode: PutMode| {
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let put = s3
            .state
            .store
            .put_opts(&path, PutPayload::from_static(b"two"), options);
        s3.state.runtime.block_on(put)
    };
    let stale = UpdateVersion {
        e_tag: Some("\"00000000000000000000000000000000\"".to_owned()),
        version: None,
    };
    assert!(matches!(
        put(PutMode::Update(stale)),
        Err(object_store::Error::Precondition { .. })
    ));
    assert!(matches!(
        put(PutMode::Create),
        Err(object_store::Error::AlreadyExists { .. })
    ));
    assert_eq!(s3.state.get("probe").unwrap(), b"one");

    // Wharf read the manifest, then another machine replaced it: the landing's commit
    // stands, its manifest write is refused (busy, naming the object), the other's bytes
    // stay; the rerun takes the landing in from the table's log.
    m.put(1);
    m.put(2);
    assert_eq!(m.run(&name(1)).code, 0);
    let input = m.product.path().join("inbox").join(name(2));
    let paused = Paused::start(&m, &["run", input.to_str().unwrap()], "after_upload");
    let theirs = b"{\"product\":\"orders\",\"dates\":{}}\n";
    overwrite(&s3.state, "partitions.json", theirs);
    let lost = paused.release();
    assert_eq!(lost.code, 4, "{}{}", lost.stdout, lost.stderr);
    assert!(
        lost.stderr.contains("partitions.json") && lost.stderr.contains("another wharf"),
        "{}",
        lost.stderr
    );
    assert_eq!(s3.state.get("partitions.json").unwrap(), theirs);
    assert_eq!(s3.landings().len(), 2, "the commit stands");
    let rerun = m.run(&name(2));
    assert_eq!(rerun.code, 0, "{}{}", rerun.stdout, rerun.stderr);
    assert_eq!(rerun.json()["action"], "skipped");
    assert_eq!(s3.checkpoint(&name(2)).unwrap()["table_version"], 1);

    // Wharf found no checkpoint of the input, then another machine wrote one: the
    // landing's put-if-absent is refused and the other's checkpoint stays.
    m.put(3);
    let input = m.product.path().join("inbox").join(name(3));
    std::fs::remove_file(m.product.path().join("paused")).ok();
    let paused = Paused::start(&m, &["run", input.to_str().unwrap()], "after_upload");
    let other = s3
        .state
        .get(&format!("checkpoints/{}.json", name(1)))
        .unwrap();
    overwrite(&s3.state, &format!("checkpoints/{}.json", name(3)), &other);
    let lost = paused.release();
    assert_eq!(lost.code, 4, "{}{}", lost.stdout, lost.stderr);
    assert!(
        lost.stderr.contains("checkpoints/03.jsonl.json"),
        "{}",
        lost.stderr
    );
    assert_eq!(
        s3.state
            .get(&format!("checkpoints/{}.json", name(3)))
            .unwrap(),
        other
    );
    assert_eq!(s3.rows(), alone(1..=3));
}

#[test]
fn a_crash_mid_landing_with_state_on_s3_leaves_it_consistent_and_the_rerun_converges() {
    let m = Machine::new(&prefix("crash"));
    let s3 = &m.s3;
    m.put(1);
    assert_eq!(m.run(&name(1)).code, 0);
    for (i, point) in [
        (2, "after_upload"),
        (3, "after_commit"),
        (4, "after_manifest"),
    ] {
        m.put(i);
        let input = m.product.path().join("inbox").join(name(i));
        let crashed: Ran = m
            .cmd(&["run", input.to_str().unwrap()])
            .env("WHARF_FAILPOINT", point)
            .output()
            .unwrap()
            .into();
        assert!(
            crashed.stderr.contains(&format!("failpoint {point}")),
            "{point}: {}",
            crashed.stderr
        );
        let committed = s3.landings().len();
        assert_eq!(
            committed,
            if point == "after_upload" { i - 1 } else { i },
            "{point}"
        );
        // The state never names a landing that did not commit.
        if point == "after_upload" {
            assert!(s3.checkpoint(&name(i)).is_none(), "{point}");
        }
        let rerun = m.run(&name(i));
        assert_eq!(rerun.code, 0, "{point}: {}{}", rerun.stdout, rerun.stderr);
        let action = if point == "after_upload" {
            "published"
        } else {
            "skipped"
        };
        assert_eq!(rerun.json()["action"], action, "{point}");
        assert_eq!(s3.landings().len(), i, "{point}: landed once");
        let (version, _, sha) = s3.landings().pop().unwrap();
        let checkpoint = s3.checkpoint(&name(i)).unwrap();
        assert_eq!(checkpoint["table_version"], version, "{point}");
        assert_eq!(checkpoint["input_sha256"], sha.as_str(), "{point}");
        assert_eq!(s3.rows(), alone(1..=i), "{point}");
    }
    // The crashes before their clean-up left their pending records (another landing's
    // is taken only after the grace period): the one after the uploads names files no
    // version references, the one after the commit its live files. Nothing else is there.
    let pending: Vec<String> = under(&s3.state, "delta-pending/").into_iter().collect();
    assert_eq!(pending.len(), 2, "{pending:?}");
    let mut named = BTreeSet::new();
    for record in &pending {
        let paths: Vec<String> = serde_json::from_slice(&s3.state.get(record).unwrap()).unwrap();
        named.extend(paths);
    }
    let live = s3.table.live_files();
    assert!(named.iter().any(|p| !live.contains(p)), "{named:?}");
    let data = under(&s3.table, "event_date=");
    assert_eq!(data, live.union(&named).cloned().collect::<BTreeSet<_>>());
    m.assert_nothing_local();
}
