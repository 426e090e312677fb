//! `wharf diff`: what a run would change, key by key. Each test diffs, runs, and compares
//! the diff with the two generations read back (the replaced one from the trash).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::kit::{Product, Ran, event, event_seq, micros, read_rows, tree};

type Row = BTreeMap<String, String>;

/// The diff's JSON lines.
fn lines(ran: &Ran) -> Vec<Value> {
    ran.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A `before`/`after` object as the kit reads a Parquet row: column → text, timestamps
/// as microseconds, nulls left out.
fn as_row(value: &Value) -> Option<Row> {
    let object = value.as_object()?;
    let mut row = Row::new();
    for (name, v) in object {
        let text = match v {
            Value::Null => continue,
            Value::Number(n) => n.to_string(),
            Value::String(s) if name == "updated_at" => micros(s),
            Value::String(s) => s.clone(),
            other => panic!("{name}: {other}"),
        };
        row.insert(name.clone(), text);
    }
    Some(row)
}

/// (date, key, change, before, after) of each line.
type Changed = (String, i64, String, Option<Row>, Option<Row>);

fn changes(ran: &Ran) -> Vec<Changed> {
    lines(ran)
        .iter()
        .map(|l| {
            (
                l["event_date"].as_str().unwrap().to_owned(),
                l["key"].as_i64().unwrap(),
                l["change"].as_str().unwrap().to_owned(),
                as_row(&l["before"]),
                as_row(&l["after"]),
            )
        })
        .collect()
}

/// What changed between two generations of `date`, read back, in key order.
fn expected(date: &str, before: &[Row], after: &[Row]) -> Vec<Changed> {
    let by_key = |rows: &[Row]| -> BTreeMap<i64, Row> {
        rows.iter()
            .map(|r| (r["order_id"].parse().unwrap(), r.clone()))
            .collect()
    };
    let (before, after) = (by_key(before), by_key(after));
    let keys: std::collections::BTreeSet<i64> =
        before.keys().chain(after.keys()).copied().collect();
    let mut out = Vec::new();
    for key in keys {
        let (b, a) = (before.get(&key).cloned(), after.get(&key).cloned());
        let change = match (&b, &a) {
            (Some(b), Some(a)) if b == a => continue,
            (Some(_), Some(_)) => "updated",
            (None, _) => "inserted",
            _ => "removed",
        };
        out.push((date.to_owned(), key, change.to_owned(), b, a));
    }
    out
}

/// The newest generation of `date` in the trash.
fn trashed(product: &Product, date: &str) -> PathBuf {
    let folder = product
        .state
        .join("trash")
        .join(format!("event_date={date}"));
    let mut generations: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    generations.sort();
    generations.pop().unwrap()
}

fn live(product: &Product, date: &str) -> PathBuf {
    product.publish.join(format!("event_date={date}"))
}

fn diff(product: &Product, input: &Path, args: &[&str]) -> Ran {
    let mut cmd = product.cmd(&["diff"]);
    cmd.arg(input).args(args);
    Ran::from(cmd.output().unwrap())
}

/// A corrected file: 101 refunded, 103 gone, 104 new, 102 as it was. The diff names
/// exactly those, writes nothing, and is what the run then changed.
#[test]
fn a_diff_is_what_the_following_run_changes() {
    let product = Product::new();
    let first = product.input(
        "day.jsonl",
        &[
            &event("e1", 101, "PAID", "2024-03-01T10:15:00Z"),
            &event("e2", 102, "SHIPPED", "2024-03-01T11:00:00Z"),
            &event("e3", 103, "PENDING", "2024-03-01T10:20:00.123456789+01:00"),
        ],
    );
    product.land(&first);
    let second = product.input(
        "day-corrected.jsonl",
        &[
            &event_seq("e4", 101, "REFUNDED", "2024-03-01T12:00:00Z", 7),
            &event("e2", 102, "SHIPPED", "2024-03-01T11:00:00Z"),
            &event("e5", 104, "PENDING", "2024-03-01T13:00:00Z"),
        ],
    );
    let untouched = product.tree("");
    let ran = diff(&product, &second, &["--json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(product.tree(""), untouched, "a diff writes nothing");
    let text = diff(&product, &second, &[]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .contains("event_date=2024-03-01  inserted 1 · removed 1 · updated 1 · unchanged 1"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("~ 101  event_id e1 → e4, status PAID → REFUNDED"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("+ 104  inserted") && text.stdout.contains("- 103  removed"));
    let line = &lines(&ran)[0];
    assert_eq!(line["before"]["updated_at"], "2024-03-01T10:15:00.000000Z");
    assert_eq!(line["before"]["seq"], Value::Null);

    product.land(&second);
    let date = "2024-03-01";
    let before = read_rows(&trashed(&product, date));
    let after = read_rows(&live(&product, date));
    let want = expected(date, &before, &after);
    assert_eq!(want.len(), 3);
    assert_eq!(changes(&ran), want);
    let skipped = diff(&product, &second, &[]);
    assert_eq!(skipped.code, 0);
    assert!(
        skipped.stdout.contains("already landed") && skipped.stdout.contains("--reland"),
        "{}",
        skipped.stdout
    );
}

/// A refused input: nothing would change, and why; exit 3 as `plan`, nothing written.
#[test]
fn a_refused_input_says_nothing_would_change_and_why() {
    let product = Product::new();
    let first = product.input(
        "day.jsonl",
        &[&event("e1", 101, "PAID", "2024-03-01T10:15:00Z")],
    );
    product.land(&first);
    let leaky = product.input(
        "leaky.jsonl",
        &[r#"{"event_id":"e9","order_id":101,"status":"PAID","updated_at":"2024-03-01T12:00:00Z","email":"a@example.com"}"#],
    );
    let untouched = tree(product.path());
    let ran = diff(&product, &leaky, &["--json"]);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert!(ran.stdout.is_empty(), "{}", ran.stdout);
    assert!(ran.stderr.contains("nothing would change") && ran.stderr.contains("prohibited_field"));
    let text = diff(&product, &leaky, &[]);
    assert_eq!(text.code, 3);
    assert!(text.stdout.contains("prohibited_field"), "{}", text.stdout);
    assert_eq!(tree(product.path()), untouched);
}

/// Merge mode: the merged date against the published one, across two dates; `--date`
/// keeps one; the run then changes exactly that.
#[test]
fn a_merge_diff_is_the_merged_dates_against_the_published_ones() {
    let product = Product::with_settings("write_mode = \"merge\"");
    let first = product.input(
        "b1.jsonl",
        &[
            &event("e1", 101, "PAID", "2024-03-01T10:15:00Z"),
            &event("e2", 102, "PAID", "2024-03-01T11:00:00Z"),
        ],
    );
    product.land(&first);
    let second = product.input(
        "b2.jsonl",
        &[
            &event("e3", 102, "SHIPPED", "2024-03-02T09:00:00Z"),
            &event("e4", 103, "PENDING", "2024-03-01T12:00:00Z"),
        ],
    );
    let ran = diff(&product, &second, &["--json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let one = diff(&product, &second, &["--json", "--date", "2024-03-02"]);
    assert!(changes(&one).iter().all(|c| c.0 == "2024-03-02"));
    assert_eq!(changes(&one).len(), 1);
    product.land(&second);
    let mut want = expected(
        "2024-03-01",
        &read_rows(&trashed(&product, "2024-03-01")),
        &read_rows(&live(&product, "2024-03-01")),
    );
    want.extend(expected(
        "2024-03-02",
        &[],
        &read_rows(&live(&product, "2024-03-02")),
    ));
    let kinds: Vec<(i64, &str)> = want.iter().map(|c| (c.1, c.2.as_str())).collect();
    assert_eq!(
        kinds,
        vec![(102, "removed"), (103, "inserted"), (102, "inserted")]
    );
    assert_eq!(changes(&ran), want);
}
