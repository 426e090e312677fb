//! Merge mode (CONTRACT.md §10) on a Delta table (§12): the same micro-batches merged
//! into a hive root and into a Delta table, local and on S3, give the same rows per date
//! and the same counts; each landing is one commit; a date the merge empties leaves the
//! table in that commit; a rerun skips and a refusal leaves the table as it was. The
//! table's folders keep removed files for restore, so a merge that read folders rather
//! than the version would count those rows twice: the parity catches it.

use std::collections::BTreeMap;

use super::{Root, delta_product, kit, run};
use kit::product::{Product, Ran};

/// The third batch rewrites three dates (one loses its keys, one changes, one is new).
const MERGE: &str = "write_mode = \"merge\"\nmax_dates = 3";

const PII: &str = r#"{"event_id":"x1","order_id":9,"status":"PAID","updated_at":"2024-03-01T12:00:00Z","email":"a@example.com"}"#;

/// The batches, in landing order: the kit's merge batches.
fn batches() -> Vec<(&'static str, Vec<String>)> {
    kit::merge_batches()
}

fn merge_hive() -> Product {
    Product::with_settings(MERGE)
}

fn merge_delta(publish_root: &str) -> Product {
    let product = delta_product(publish_root);
    let config = std::fs::read_to_string(&product.config).unwrap();
    std::fs::write(&product.config, format!("{MERGE}\n{config}")).unwrap();
    product
}

/// The hive root's rows by date, as `Root::rows` gives the table's.
fn hive_rows(product: &Product) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&product.publish).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if let Some(date) = name.strip_prefix("event_date=") {
            out.insert(date.to_owned(), kit::read_rows(&path));
        }
    }
    out
}

fn sorted(
    mut rows: BTreeMap<String, Vec<BTreeMap<String, String>>>,
) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    for day in rows.values_mut() {
        day.sort();
    }
    rows
}

fn land(product: &Product, name: &str, lines: &[String], s3: bool) -> Ran {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    run(product, &product.input(name, &lines), s3)
}

fn merges_as_hive_does(delta: &Product, root: &Root, s3: bool) {
    let hive = merge_hive();
    for (n, (name, lines)) in batches().iter().enumerate() {
        let by_hive = land(&hive, name, lines, false);
        let by_delta = land(delta, name, lines, s3);
        assert_eq!(by_hive.code, 0, "{name}: {}", by_hive.stderr);
        assert_eq!(
            by_delta.code, 0,
            "{name}: {}{}",
            by_delta.stdout, by_delta.stderr
        );
        let (mut h, mut d) = (by_hive.json(), by_delta.json());
        // When each owner landed differs between the two products; the rest may not.
        for plan in [&mut h, &mut d] {
            for date in plan["dates"].as_array_mut().into_iter().flatten() {
                date.as_object_mut().map(|o| o.remove("owner_published_at"));
            }
        }
        assert_eq!(d["action"], "published", "{name}");
        assert_eq!(
            d["dates"], h["dates"],
            "{name}: the same plan, date by date"
        );
        assert_eq!(d["counts"], h["counts"], "{name}: the same counts");
        assert_eq!(
            sorted(root.rows()),
            sorted(hive_rows(&hive)),
            "{name}: the same rows"
        );
        assert_eq!(
            root.commits().len(),
            n + 1,
            "{name}: one commit per landing"
        );
    }
    let rows = root.rows();
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        ["2024-03-02", "2024-03-03"],
        "the emptied first day left the table"
    );
    assert_eq!(
        super::statuses(&rows["2024-03-02"]),
        super::pairs(&[("3", "PAID"), ("4", "PAID"), ("5", "PENDING")])
    );
    // The last commit removed the first day's files and added none for it.
    let last = root.commits().pop().unwrap();
    let touches = |kind: &str| {
        last.iter()
            .filter_map(|a| a[kind]["path"].as_str())
            .any(|p| p.starts_with("event_date=2024-03-01/"))
    };
    assert!(touches("remove") && !touches("add"));

    // A rerun of the same bytes skips; a refusal leaves every object as it was.
    let (name, lines) = &batches()[2];
    let again = land(delta, name, lines, s3);
    assert_eq!(again.json()["action"], "skipped", "{}", again.stderr);
    let objects = root.objects();
    let refused = run(delta, &delta.input("b4.jsonl", &[PII]), s3);
    assert_eq!(refused.code, 3, "{}{}", refused.stdout, refused.stderr);
    assert_eq!(
        root.objects(),
        objects,
        "a refusal writes nothing to the table"
    );
    assert_eq!(root.commits().len(), 3);

    // A batch whose every row is published already changes no data file, and still is
    // one commit, of commitInfo alone, so the table's history names every landing.
    let unchanged = [kit::event("e11", 4, "PAID", "2024-03-02T12:00:00Z")];
    let objects = root.objects();
    let same = run(
        delta,
        &delta.input("b5.jsonl", &[unchanged[0].as_str()]),
        s3,
    );
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    let commits = root.commits();
    assert_eq!(commits.len(), 4, "one commit for the batch");
    let last = commits.last().unwrap();
    assert!(
        last.iter()
            .all(|a| a.get("add").is_none() && a.get("remove").is_none()),
        "no file added or removed: {last:?}"
    );
    let info = last.iter().find_map(|a| a.get("commitInfo")).unwrap();
    assert_eq!(info["operationParameters"]["inputName"], "b5.jsonl");
    let data = |objects: &std::collections::BTreeSet<String>| -> Vec<String> {
        let names = objects.iter().filter(|k| k.ends_with(".parquet"));
        names
            .filter(|k| !k.contains("_delta_log"))
            .cloned()
            .collect()
    };
    assert_eq!(
        data(&root.objects()),
        data(&objects),
        "no data file written"
    );
}

#[test]
fn a_local_delta_table_merges_micro_batches_as_a_hive_root_does() {
    let product = merge_delta("lake/orders");
    let root = Root::local(&product.path().join("lake/orders"));
    merges_as_hive_does(&product, &root, false);
}

#[test]
fn a_delta_table_on_s3_merges_micro_batches_as_a_hive_root_does() {
    let prefix = format!("m-{}", std::process::id());
    let product = merge_delta(&format!("s3://wharf/{prefix}/orders"));
    let root = Root::s3(&format!("{prefix}/orders"));
    merges_as_hive_does(&product, &root, true);
}

/// §10.4 on a table: with two rows a file, a batch updating one key commits one remove
/// (the file that held it) and one add (its successor); the date's other files stay in
/// the version. `restore` brings the previous generation back, sharing those files.
#[test]
fn a_merge_commit_removes_only_the_rewritten_file_and_restore_brings_it_back() {
    let product = merge_delta("lake/orders");
    let config = std::fs::read_to_string(&product.config).unwrap();
    std::fs::write(&product.config, format!("target_file_rows = 2\n{config}")).unwrap();
    let root = Root::local(&product.path().join("lake/orders"));
    let six: Vec<String> = (1..=6)
        .map(|k| kit::event(&format!("a{k}"), k * 10, "PENDING", "2024-03-01T10:00:00Z"))
        .collect();
    assert_eq!(land(&product, "b1.jsonl", &six, false).code, 0);
    let before = root.live_files();
    assert_eq!(before.len(), 3, "{before:?}");
    let rows_before = sorted(root.rows());
    let update = [kit::event("b1", 30, "PAID", "2024-03-01T11:00:00Z")];
    let ran = land(&product, "b2.jsonl", &update, false);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let day = &ran.json()["dates"][0];
    assert_eq!(
        [
            &day["files_read"],
            &day["files_rewritten"],
            &day["rows_rewritten"]
        ],
        [1, 1, 2]
    );
    let last = root.commits().pop().unwrap();
    let paths = |kind: &str| -> Vec<String> {
        let found = last.iter().filter_map(|a| a[kind]["path"].as_str());
        found.map(str::to_owned).collect()
    };
    assert_eq!(
        (paths("remove").len(), paths("add").len()),
        (1, 1),
        "{last:?}"
    );
    let after = root.live_files();
    assert_eq!(
        before.intersection(&after).count(),
        2,
        "two files carried over"
    );
    let statuses = super::statuses(&root.rows()["2024-03-01"]);
    assert!(
        statuses.contains(&("30".into(), "PAID".into())),
        "{statuses:?}"
    );
    assert_eq!(statuses.len(), 6);

    let restored = super::wharf(&product, &["restore", "2024-03-01", "--yes"], false);
    assert_eq!(restored.code, 0, "{}{}", restored.stdout, restored.stderr);
    assert_eq!(
        root.live_files(),
        before,
        "the previous generation, files and all"
    );
    assert_eq!(sorted(root.rows()), rows_before);
}
