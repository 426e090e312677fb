//! The hive suite's refusal, replace and crash scenarios (CONTRACT.md §5, §6) on a Delta
//! table (§12), each run on a local table and on one on S3 by one function taking the
//! kind of root (`both!`). A refusal leaves the table's version and every object byte
//! for byte as they were, writes quarantine and no checkpoint; a replace commit removes
//! and adds only its own date's files. On S3, a data file above `PART_BYTES` is uploaded
//! in parts and holds what the commit says. The crashes are in [`crashes`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;
use serde_json::Value;

use super::{DAY, Root, delta_product, kit, pairs, run, s3_env, statuses, two_dates};
use kit::product::{Product, Ran};

/// One scenario's table: a fresh product whose publish root is a local Delta table or
/// one on S3 (its own prefix), and the root as read independently of Wharf.
struct Table {
    product: Product,
    root: Root,
    s3: bool,
}

impl Table {
    /// A table for scenario `tag`, its config the suite's plus `settings` (TOML lines).
    fn new(s3: bool, tag: &str, settings: &str) -> Table {
        let (product, root) = if s3 {
            let prefix = format!("sc-{}-{tag}/orders", std::process::id());
            let product = delta_product(&format!("s3://wharf/{prefix}"));
            (product, Root::s3(&prefix))
        } else {
            let product = delta_product("lake/orders");
            let root = Root::local(&product.path().join("lake/orders"));
            (product, root)
        };
        let table = Table { product, root, s3 };
        table.configure(settings);
        table
    }

    /// Adds `settings` (top-level TOML lines) to the config.
    fn configure(&self, settings: &str) {
        let config = std::fs::read_to_string(&self.product.config).unwrap();
        std::fs::write(&self.product.config, format!("{settings}\n{config}")).unwrap();
    }

    fn input(&self, name: &str, lines: &[String]) -> PathBuf {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        self.product.input(name, &lines)
    }

    /// `wharf run INPUT --json ARGS…` with the S3 environment when on S3, and `env` set.
    fn run_with(&self, input: &Path, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = self
            .product
            .cmd(&["run", input.to_str().unwrap(), "--json"]);
        cmd.args(args);
        if self.s3 {
            s3_env(&mut cmd);
        }
        cmd.envs(env.iter().copied());
        cmd.output().unwrap().into()
    }

    /// `wharf run INPUT` stopped by `failpoint`: it must abort there, not fail otherwise.
    fn crash_at(&self, input: &Path, failpoint: &str) -> Ran {
        let crashed = self.run_with(input, &[], &[("WHARF_FAILPOINT", failpoint)]);
        assert_ne!(crashed.code, 0, "{}", crashed.stderr);
        assert!(
            crashed.stderr.contains(&format!("failpoint {failpoint}")),
            "{}",
            crashed.stderr
        );
        crashed
    }

    fn land(&self, name: &str, lines: &[String]) -> Ran {
        let ran = run(&self.product, &self.input(name, lines), self.s3);
        assert_eq!(ran.code, 0, "{name}: {}{}", ran.stdout, ran.stderr);
        assert_eq!(ran.json()["action"], "published", "{name}");
        ran
    }

    /// Every object under the table root with its bytes.
    fn stored(&self) -> BTreeMap<String, Vec<u8>> {
        self.root
            .objects()
            .into_iter()
            .map(|path| {
                let bytes = self.root.get(&path).unwrap();
                (path, bytes)
            })
            .collect()
    }

    /// The state root's files but the run log (which every run appends to) and the
    /// run lock's empty file.
    fn state(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut state = kit::tree(&self.product.state);
        state.remove(Path::new("runs.jsonl"));
        state.remove(Path::new(wharf::land::lock::RUN));
        state
    }

    /// Lands `lines` as `name` and asserts the refusal `reason` (exit 3) left the table
    /// as it was: its version, every object byte for byte, the state root but the run
    /// log; no checkpoint for the input, and its quarantine written.
    fn refused(&self, name: &str, lines: &[String], reason: &str) -> Ran {
        let (objects, state, version) = (self.stored(), self.state(), self.root.commits().len());
        let ran = run(&self.product, &self.input(name, lines), self.s3);
        assert_eq!(ran.code, 3, "{name}: {}{}", ran.stdout, ran.stderr);
        let out = ran.json();
        assert_eq!(
            (out["action"].as_str(), out["reason"].as_str()),
            (Some("refused"), Some(reason)),
            "{name}"
        );
        assert_eq!(self.root.commits().len(), version, "{name}: no commit");
        assert!(
            self.stored() == objects,
            "{name}: the refusal changed the table's objects"
        );
        assert_eq!(self.state(), state, "{name}: the state root changed");
        assert!(
            self.product.checkpoint(name).is_none(),
            "{name}: checkpoint"
        );
        let sha = out["input_sha256"].as_str().unwrap();
        let summary = kit::read_json(&self.product.quarantine.join(sha).join("summary.json"))
            .unwrap_or_else(|| panic!("{name}: no quarantine summary"));
        assert_eq!(summary["action"], "refused", "{name}");
        assert_eq!(summary["reason"], reason, "{name}");
        assert!(
            self.product
                .quarantine
                .join(sha)
                .join("rejects.jsonl")
                .exists(),
            "{name}: no rejects.jsonl"
        );
        ran
    }
}

/// Each scenario as two tests, `<scenario>::local` and `<scenario>::s3`, so one function
/// holds the scenario and the kind of root is its argument.
macro_rules! both {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[test]
            fn local() {
                super::$scenario(false);
            }

            #[test]
            fn s3() {
                super::$scenario(true);
            }
        }
    )*};
}

mod crashes;
mod memory;
pub(crate) use crashes::assert_no_orphans;

both!(
    refusals_leave_the_table_as_it_was,
    a_shrink_is_refused_unless_allowed,
    an_empty_input_is_refused_unless_publish_empty,
    a_replace_commit_touches_only_its_dates_files,
);

/// `keys` orders on 2024-03-01, every status `status`, event ids prefixed `status`.
fn day(keys: u64, status: &str) -> Vec<String> {
    (0..keys)
        .map(|n| {
            kit::event(
                &format!("{status}{n}"),
                n as i64 + 100,
                status,
                &format!("2024-03-01T10:{:02}:00Z", n % 60),
            )
        })
        .collect()
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// §5.5–5.7: a conflict, the reject cap, too many dates; first against no table (nothing
/// is created), then against a table with one version.
fn refusals_leave_the_table_as_it_was(s3: bool) {
    let table = Table::new(s3, "refusals", "max_rejected_lines = 2");
    let three_dates = owned(&[
        r#"{"event_id":"d1","order_id":1,"status":"PAID","updated_at":"2024-03-01T10:00:00Z"}"#,
        r#"{"event_id":"d2","order_id":2,"status":"PAID","updated_at":"2024-03-02T10:00:00Z"}"#,
        r#"{"event_id":"d3","order_id":3,"status":"PAID","updated_at":"2024-03-03T10:00:00Z"}"#,
    ]);
    table.refused("00-dates.jsonl", &three_dates, "too_many_dates");
    assert!(
        table.root.objects().is_empty(),
        "a refusal creates no table"
    );

    table.land("01-day.jsonl", &owned(&DAY));
    let rows = table.root.rows();

    // A retry of e3 (same event_id) whose status contradicts it.
    let mut conflicting = owned(&DAY);
    conflicting.push(DAY[2].replace("\"PAID\"", "\"REFUNDED\""));
    table.refused("02-conflict.jsonl", &conflicting, "conflict");

    // Three rejects against a cap of two (exactly two would publish: the hive suite's).
    let mut over = owned(&DAY);
    over.extend(owned(&["not json", "{\"event_id\":\"x\"}", "[1]"]));
    table.refused("03-rejects.jsonl", &over, "reject_cap");
    let mut distinct = three_dates.clone();
    distinct[0] = DAY[0].to_owned();
    table.refused("04-dates.jsonl", &distinct, "too_many_dates");

    assert_eq!(table.root.commits().len(), 1);
    assert_eq!(table.root.rows(), rows, "readers see the first landing");
    // Refusals are not landings: the first input still owns its version, a skip.
    let again = run(
        &table.product,
        &table.input("01-day.jsonl", &owned(&DAY)),
        s3,
    );
    assert_eq!(again.json()["action"], "skipped", "{}", again.stderr);
}

/// §5.9: a late fragment against a full day is refused (exit 3, table as it was); with
/// `--allow-shrink` the same bytes publish one new version holding the fragment alone.
fn a_shrink_is_refused_unless_allowed(s3: bool) {
    let table = Table::new(s3, "shrink", "");
    table.land("01-full.jsonl", &day(10, "PAID"));
    let full = table.root.live_files();
    let fragment = day(1, "REFUNDED");
    let refused = table.refused("02-fragment.jsonl", &fragment, "shrink");
    assert_eq!(refused.json()["dates"][0]["rows_before"], 10);
    assert_eq!(refused.json()["dates"][0]["rows"], 1);

    let input = table.input("02-fragment.jsonl", &fragment);
    let allowed = table.run_with(&input, &["--allow-shrink"], &[]);
    assert_eq!(allowed.code, 0, "{}", allowed.stderr);
    assert_eq!(allowed.json()["action"], "published");
    let commits = table.root.commits();
    assert_eq!(commits.len(), 2, "one new version");
    let (added, removed) = adds_and_removes(&commits[1]);
    assert_eq!(removed, full, "the day's files, every one");
    assert_eq!(table.root.live_files(), added);
    assert_eq!(
        statuses(&table.root.rows()["2024-03-01"]),
        pairs(&[("100", "REFUNDED")])
    );
    assert_eq!(
        table.product.checkpoint("02-fragment.jsonl").unwrap()["table_version"],
        1
    );
}

/// §5.8: an input with no accepted row is refused (`empty_input`) with the table as it
/// was; with `publish_empty = true` it is published with nothing in it: exit 0, no data
/// file added or removed (its commit, one per landing, adds and removes nothing, and on
/// a new table creates it with the config's schema), its checkpoint naming no date, and
/// its rerun a skip.
fn an_empty_input_is_refused_unless_publish_empty(s3: bool) {
    let table = Table::new(s3, "empty", "");
    let blank = owned(&["", "   "]);
    table.refused("00-blank.jsonl", &blank, "empty_input");
    assert!(
        table.root.objects().is_empty(),
        "a refusal creates no table"
    );
    table.land("01-day.jsonl", &owned(&DAY));
    let rejects_only = owned(&["not json", "[2]"]);
    table.refused("02-rejects.jsonl", &rejects_only, "empty_input");

    // publish_empty = true, on the table: nothing published, the data as it was.
    table.configure("publish_empty = true");
    let data = |t: &Table| -> BTreeMap<String, Vec<u8>> {
        let mut stored = t.stored();
        stored.retain(|p, _| !p.starts_with("_delta_log/"));
        stored
    };
    let (before, live, rows) = (data(&table), table.root.live_files(), table.root.rows());
    let ran = table.land("03-blank.jsonl", &blank);
    assert_eq!(ran.json()["counts"]["accepted"], 0);
    assert_eq!(ran.json()["dates"], serde_json::json!([]));
    let commits = table.root.commits();
    assert_eq!(commits.len(), 2, "one landing, one commit");
    let (added, removed) = adds_and_removes(&commits[1]);
    assert!(added.is_empty() && removed.is_empty(), "{:?}", commits[1]);
    assert!(data(&table) == before, "no data object written or deleted");
    assert_eq!(table.root.live_files(), live);
    assert_eq!(table.root.rows(), rows);
    let checkpoint = table.product.checkpoint("03-blank.jsonl").unwrap();
    assert_eq!(checkpoint["event_dates"], serde_json::json!([]));
    assert_eq!(checkpoint["table_version"], 1);
    let again = run(&table.product, &table.input("03-blank.jsonl", &blank), s3);
    assert_eq!(again.json()["action"], "skipped", "{}", again.stderr);
    assert_eq!(table.root.commits().len(), 2, "a skip commits nothing");

    // publish_empty = true as a table's first landing: it creates the table, empty, and
    // the next landing adds to it.
    let fresh = Table::new(s3, "empty-fresh", "publish_empty = true");
    let ran = fresh.land("00-blank.jsonl", &blank);
    assert_eq!(ran.json()["dates"], serde_json::json!([]));
    let commits = fresh.root.commits();
    assert_eq!(commits.len(), 1);
    assert!(
        commits[0]
            .iter()
            .any(|a| a["metaData"]["partitionColumns"] == serde_json::json!(["event_date"])),
        "{commits:?}"
    );
    assert_eq!(adds_and_removes(&commits[0]), Default::default());
    assert!(data(&fresh).is_empty(), "no data object");
    let again = run(&fresh.product, &fresh.input("00-blank.jsonl", &blank), s3);
    assert_eq!(again.json()["action"], "skipped", "{}", again.stderr);
    fresh.land("01-day.jsonl", &owned(&DAY));
    assert_eq!(fresh.root.commits().len(), 2);
    assert_eq!(
        statuses(&fresh.root.rows()["2024-03-01"]),
        pairs(&[("101", "PAID"), ("102", "SHIPPED"), ("103", "PENDING")])
    );
}

/// §6.3 / §12.3: replacing one date commits `remove` for that date's files and `add` for
/// its new ones only; the other date's files, their bytes and its rows are untouched.
fn a_replace_commit_touches_only_its_dates_files(s3: bool) {
    let table = Table::new(s3, "replace", "files_per_date = 2");
    table.land("01-both.jsonl", &two_dates(6, "A"));
    let before = table.root.live_files();
    let stored = table.stored();
    let rows = table.root.rows();
    let on = |files: &BTreeSet<String>, date: &str| -> BTreeSet<String> {
        let prefix = format!("event_date={date}/");
        files
            .iter()
            .filter(|p| p.starts_with(&prefix))
            .cloned()
            .collect()
    };
    assert_eq!(on(&before, "2024-03-01").len(), 2, "{before:?}");
    assert_eq!(on(&before, "2024-03-02").len(), 2, "{before:?}");

    let restated: Vec<String> = two_dates(6, "B")
        .into_iter()
        .filter(|l| l.contains("2024-03-01T"))
        .collect();
    table.land("02-first.jsonl", &restated);
    let commits = table.root.commits();
    assert_eq!(commits.len(), 2);
    let (added, removed) = adds_and_removes(&commits[1]);
    assert_eq!(
        removed,
        on(&before, "2024-03-01"),
        "only 03-01's files removed"
    );
    assert_eq!(added.len(), 2);
    assert_eq!(on(&added, "2024-03-01"), added, "only 03-01's files added");
    assert!(added.is_disjoint(&before), "new names");
    let after = table.root.live_files();
    assert_eq!(on(&after, "2024-03-02"), on(&before, "2024-03-02"));
    for path in on(&before, "2024-03-02") {
        assert_eq!(table.root.get(&path), stored.get(&path).cloned(), "{path}");
    }
    let now = table.root.rows();
    assert_eq!(now["2024-03-02"], rows["2024-03-02"], "03-02 as it was");
    let statuses: BTreeSet<&str> = now["2024-03-01"]
        .iter()
        .map(|r| r["status"].as_str())
        .collect();
    assert_eq!(statuses, BTreeSet::from(["B"]));
}

/// The `add` and `remove` paths of one commit.
pub(super) fn adds_and_removes(commit: &[Value]) -> (BTreeSet<String>, BTreeSet<String>) {
    let paths = |kind: &str| -> BTreeSet<String> {
        commit
            .iter()
            .filter_map(|a| a[kind]["path"].as_str().map(str::to_owned))
            .collect()
    };
    (paths("add"), paths("remove"))
}

/// §12.1 on S3: a data file above `PART_BYTES` goes up in parts (its ETag the multipart
/// `<md5>-<parts>`), and the object holds the committed `add.size` bytes and every row.
#[test]
fn a_data_file_above_the_part_size_is_uploaded_in_parts_on_s3() {
    let table = Table::new(true, "multipart", "files_per_date = 1");
    // One event per key: every line a winner. Padding from a 64-letter alphabet, which
    // Snappy barely compresses: ~20 MB of Parquet, three parts.
    const KEYS: usize = 20_000;
    const PAD: usize = 1_000;
    let alphabet: Vec<char> = ('a'..='z')
        .chain('A'..='Z')
        .chain('0'..='9')
        .chain(['-', '_'])
        .collect();
    let mut rng = kit::Rng::new(0x6d75_6c74);
    let mut pads = BTreeMap::new();
    let lines: Vec<String> = (0..KEYS)
        .map(|n| {
            let pad: String = (0..PAD)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            pads.insert(n.to_string(), pad.clone());
            format!(
                r#"{{"event_id":"m{n}","order_id":{n},"status":"PAID","updated_at":"2024-03-01T10:{:02}:00Z","courier_id":"{pad}"}}"#,
                n % 60
            )
        })
        .collect();
    let ran = table.land("big.jsonl", &lines);
    assert_eq!(ran.json()["counts"]["keys"], KEYS);
    let commits = table.root.commits();
    let adds: Vec<&Value> = commits[0].iter().filter_map(|a| a.get("add")).collect();
    assert_eq!(adds.len(), 1, "files_per_date = 1");
    let path = adds[0]["path"].as_str().unwrap();
    let size = adds[0]["size"].as_u64().unwrap();
    assert!(
        size > 2 * wharf::store::objects::PART_BYTES as u64,
        "{size} bytes: not above two parts"
    );
    let head = table
        .root
        .runtime
        .block_on(
            table
                .root
                .store
                .head(&StorePath::from(format!("{}/{path}", table.root.prefix))),
        )
        .unwrap();
    assert_eq!(head.size, size, "the object is the committed size");
    let etag = head.e_tag.unwrap_or_default();
    assert!(
        etag.trim_matches('"').ends_with("-3"),
        "a three-part upload's ETag: {etag}"
    );
    let rows = &table.root.rows()["2024-03-01"];
    assert_eq!(rows.len(), KEYS, "every winner read back");
    let read: BTreeMap<String, String> = rows
        .iter()
        .map(|r| (r["order_id"].clone(), r["courier_id"].clone()))
        .collect();
    assert!(read == pads, "the rows read back are the input's");
}
