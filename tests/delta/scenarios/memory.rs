//! The lake remembers what it landed (CONTRACT.md §12.2, §12.5), on a local table and on
//! S3: every landing's commit names its input in `commitInfo` and a `txn` action; a new
//! machine's empty state root skips every landed input (superseded ones too), its first
//! run writes nothing to the table, the next new input lands, and `history` and `status`
//! say the memory came from the table. A reland is recorded as one; another product is
//! still refused; landings a log clean-up took are never guessed.
//!
//! Twenty inputs over five dates, so fifteen are superseded: the property holds at this
//! size as at thousands, and a debug run stays a few seconds.

use serde_json::Value;

use super::{Table, kit};

both!(
    a_new_state_root_skips_what_the_table_says_landed_and_lands_the_next,
    a_second_product_on_the_table_is_refused_from_an_empty_state_root,
);

const INPUTS: usize = 20;

/// Input `i`: one order on date 2024-03-0(1 + i % 5).
fn line(i: usize) -> Vec<String> {
    vec![format!(
        r#"{{"event_id":"e{i}","order_id":{},"status":"PAID","updated_at":"2024-03-0{}T10:00:00Z"}}"#,
        100 + i,
        1 + i % 5
    )]
}

fn name(i: usize) -> String {
    format!("{i:02}.jsonl")
}

/// `wharf ARGS` on the table's product, with the S3 environment when on S3.
fn wharf(table: &Table, args: &[&str]) -> kit::product::Ran {
    super::super::wharf(&table.product, args, table.s3)
}

/// `wharf run inbox/NAME ARGS…` on the table's product.
fn run_named(table: &Table, name: &str, args: &[&str]) -> kit::product::Ran {
    let input = table.product.path().join("inbox").join(name);
    let mut all = vec!["run", input.to_str().unwrap()];
    all.extend_from_slice(args);
    wharf(table, &all)
}

/// The commit of version `v`, as its actions.
fn commit(table: &Table, v: usize) -> Vec<Value> {
    table.root.commits().swap_remove(v)
}

fn info(actions: &[Value]) -> &Value {
    actions
        .iter()
        .find_map(|a| a.get("commitInfo"))
        .expect("a commitInfo")
}

fn txn(actions: &[Value]) -> Option<&Value> {
    actions.iter().find_map(|a| a.get("txn"))
}

/// The run log's records, as JSON.
fn runs(table: &Table) -> Vec<Value> {
    let text = std::fs::read_to_string(table.product.state.join("runs.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Each date's rows, owner and run id, as `status --json` shows them.
fn owners(table: &Table) -> Vec<Value> {
    let status = wharf(table, &["status", "--json"]).json();
    let keep = ["event_date", "rows", "owner", "owner_sha256", "run_id"];
    status["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| keep.iter().map(|k| (k.to_string(), d[k].clone())).collect())
        .collect()
}

fn fresh_state(table: &Table) {
    std::fs::remove_dir_all(&table.product.state).unwrap();
}

fn a_new_state_root_skips_what_the_table_says_landed_and_lands_the_next(s3: bool) {
    let table = Table::new(s3, "memory", "");
    for i in 1..=INPUTS {
        table.land(&name(i), &line(i));
    }
    // §12.2: each landing's commit names its input and carries txn (product, sequence).
    let commits = table.root.commits();
    assert_eq!(commits.len(), INPUTS);
    for (v, actions) in commits.iter().enumerate() {
        let parameters = &info(actions)["operationParameters"];
        let checkpoint = table.product.checkpoint(&name(v + 1)).unwrap();
        assert_eq!(parameters["inputName"], name(v + 1));
        assert_eq!(parameters["inputSha256"], checkpoint["input_sha256"]);
        assert_eq!(parameters["landingSequence"], (v + 1).to_string());
        assert!(parameters["runId"].as_str().is_some_and(|r| r.len() == 36));
        let txn = txn(actions).expect("a txn action");
        assert_eq!(
            (txn["appId"].as_str(), txn["version"].as_u64()),
            (Some("orders"), Some(v as u64 + 1))
        );
    }
    let owners_before = owners(&table);

    // A new machine: the state root is gone. Discovery over the same inbox relands nothing.
    fresh_state(&table);
    let status = wharf(&table, &["status"]);
    assert!(
        status
            .stdout
            .contains("memory: the table's log (20 landed inputs"),
        "{}",
        status.stdout
    );
    let stored = table.stored();
    let ran = wharf(&table, &["run"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(table.stored(), stored, "the table byte for byte as it was");
    let actions: Vec<String> = runs(&table)
        .iter()
        .map(|r| r["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(actions, vec!["skipped"; INPUTS]);
    assert!(
        runs(&table)[0]["memory"]
            .as_str()
            .unwrap()
            .contains("20 checkpoints rebuilt from versions 0–19")
    );
    for i in 1..=INPUTS {
        let rebuilt = table.product.checkpoint(&name(i)).unwrap();
        assert_eq!(rebuilt["table_version"], i as u64 - 1, "{}", name(i));
    }
    assert_eq!(
        owners(&table),
        owners_before,
        "the dates' owners, as the first machine had them"
    );
    let history = wharf(&table, &["history"]);
    assert!(
        history
            .stdout
            .contains("memory: rebuilt from the table's log (20 checkpoints"),
        "{}",
        history.stdout
    );

    // The next new input lands, as sequence 21.
    let ran = table.land("21.jsonl", &line(21));
    assert_eq!(ran.json()["dates"][0]["owner_before"], "16.jsonl");
    let last = commit(&table, INPUTS);
    assert_eq!(txn(&last).unwrap()["version"], 21);

    // Relanding an input the first machine landed is recorded as a reland.
    let ran = run_named(&table, "03.jsonl", &["--reland", "--json"]);
    assert_eq!(ran.json()["action"], "published", "{}", ran.stderr);
    let reland = commit(&table, INPUTS + 1);
    assert_eq!(info(&reland)["operationParameters"]["reland"], "true");
    assert_eq!(txn(&reland).unwrap()["version"], 22);
    // A third machine takes the reland's version as 03.jsonl's landing.
    fresh_state(&table);
    assert_eq!(wharf(&table, &["run"]).code, 0);
    assert_eq!(
        table.product.checkpoint("03.jsonl").unwrap()["table_version"],
        INPUTS as u64 + 1
    );
    assert_eq!(table.root.commits().len(), INPUTS + 2, "nothing relanded");
}

fn a_second_product_on_the_table_is_refused_from_an_empty_state_root(s3: bool) {
    let table = Table::new(s3, "owner", "");
    table.land("01.jsonl", &line(1));
    fresh_state(&table);
    let config = std::fs::read_to_string(&table.product.config).unwrap();
    std::fs::write(
        &table.product.config,
        config.replace("product = \"orders\"", "product = \"refunds\""),
    )
    .unwrap();
    let stored = table.stored();
    let input = table.input("02.jsonl", &line(2));
    let ran = wharf(&table, &["run", input.to_str().unwrap()]);
    assert!(
        ran.code == 1 || ran.code == 2,
        "{}{}",
        ran.stdout,
        ran.stderr
    );
    assert!(ran.stderr.contains("orders"), "{}", ran.stderr);
    assert_eq!(table.stored(), stored, "the table as it was");
    assert!(table.product.checkpoint("02.jsonl").is_none());
}

/// A log whose first commits another writer's clean-up removed (a checkpoint holds their
/// files, not their `commitInfo`): the landings it took are unknown, so an input with no
/// checkpoint is an error, not a guess; a landing the log still holds is skipped, and the
/// operator's `--reland` lands.
#[test]
fn landings_a_log_clean_up_took_are_never_guessed() {
    let table = Table::new(false, "cleaned", "delta_checkpoint_interval = 3");
    for i in 1..=4 {
        table.land(&name(i), &line(i));
    }
    let log = table.product.path().join("lake/orders/_delta_log");
    assert!(log.join(format!("{:020}.checkpoint.parquet", 3)).exists());
    for v in 0..3 {
        std::fs::remove_file(log.join(format!("{v:020}.json"))).unwrap();
    }
    fresh_state(&table);
    let stored = table.stored();
    let unknown = run_named(&table, "01.jsonl", &[]);
    assert_eq!(unknown.code, 1, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("no longer holds 3 landings"),
        "{}",
        unknown.stderr
    );
    let held = run_named(&table, "04.jsonl", &["--json"]);
    assert_eq!(held.json()["action"], "skipped", "{}", held.stderr);
    assert_eq!(table.stored(), stored);
    let relanded = run_named(&table, "01.jsonl", &["--reland", "--json"]);
    assert_eq!(
        relanded.json()["action"],
        "published",
        "{}",
        relanded.stderr
    );
}

/// Two machines of the product landing into one table, each with its own state root: each
/// takes in the other's landings before deciding, so neither relands the other's inputs,
/// and the sequence runs on across both.
#[test]
fn two_state_roots_take_in_each_others_landings() {
    let table = Table::new(false, "two", "");
    let other = table.product.path().join("other.toml");
    let config = std::fs::read_to_string(&table.product.config).unwrap();
    std::fs::write(&other, format!("state_root = \"state/other\"\n{config}")).unwrap();
    let on_other = |args: &[&str]| -> kit::product::Ran {
        let mut all = vec!["--config", other.to_str().unwrap()];
        all.extend_from_slice(args);
        kit::product::wharf(&all)
    };
    let first = table.input(&name(1), &line(1));
    table.land(&name(1), &line(1));
    let second = table.input(&name(2), &line(2));
    let ran = on_other(&["run", second.to_str().unwrap(), "--json"]);
    assert_eq!(ran.json()["action"], "published", "{}", ran.stderr);
    // Each now skips the other's input; nothing is committed.
    let skipped = on_other(&["run", first.to_str().unwrap(), "--json"]);
    assert_eq!(skipped.json()["action"], "skipped", "{}", skipped.stderr);
    let skipped = table.run_with(&second, &[], &[]);
    assert_eq!(skipped.json()["action"], "skipped", "{}", skipped.stderr);
    assert_eq!(table.root.commits().len(), 2);
    table.land(&name(3), &line(3));
    assert_eq!(txn(&commit(&table, 2)).unwrap()["version"], 3);
}

/// The console on a new machine (§12.5): it lists what the table's log says landed as
/// landed, as `status` does, and writes nothing while it only looks.
#[test]
fn the_console_on_a_new_state_root_shows_what_the_table_says_landed() {
    let table = Table::new(false, "console", "");
    for i in 1..=3 {
        table.land(&name(i), &line(i));
    }
    let landed = |i: usize| table.product.checkpoint(&name(i)).unwrap()["input_sha256"].clone();
    let hashes: Vec<Value> = (1..=3).map(landed).collect();
    table.input(&name(4), &line(4));
    fresh_state(&table);
    let config = wharf::config::Config::load(&table.product.config).unwrap();
    let snapshot = wharf::console::load::snapshot(&config);
    assert!(snapshot.problems.is_empty(), "{:?}", snapshot.problems);
    let known: Vec<(String, Value)> = snapshot
        .checkpoints
        .into_iter()
        .map(|(name, sha)| (name, Value::from(sha)))
        .collect();
    let expected: Vec<(String, Value)> =
        (1..=3).map(|i| (name(i), hashes[i - 1].clone())).collect();
    assert_eq!(known, expected, "the landed three, and not 04.jsonl");
    let standing: Vec<&String> = snapshot.standing.iter().map(|(n, _)| n).collect();
    assert_eq!(
        standing,
        expected.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    assert!(
        !table.product.state.exists(),
        "looking writes no state root"
    );
}
