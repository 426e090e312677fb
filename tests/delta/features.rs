//! Table features another writer turns on (CONTRACT.md §12.8, issue 47): decided at plan
//! time from the protocol and metadata, before any row work or upload. Here the other
//! writer's commit is written by hand (as `ALTER TABLE … SET TBLPROPERTIES` or `ADD
//! CONSTRAINT` write it); tests/proof/delta_shared.sh does the same with deltalake, on S3
//! too, with the readers.

use std::path::Path;

use serde_json::{Value, json};

use super::{DAY, Root, delta_product, kit, run, wharf};

/// Commits, as another writer, the next version of the local table at `table`: the
/// protocol with `writer_features` and the metadata with `configuration` added.
pub(super) fn other_writer_commits(table: &Path, writer_features: &[&str], configuration: Value) {
    let root = Root::local(table);
    let commits = root.commits();
    let mut metadata = commits
        .iter()
        .flatten()
        .filter_map(|a| a.get("metaData"))
        .next_back()
        .unwrap()
        .clone();
    let config = metadata["configuration"].as_object_mut().unwrap();
    config.extend(configuration.as_object().unwrap().clone());
    let protocol = json!({"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": [], "writerFeatures": writer_features});
    let info =
        json!({"timestamp": 1, "operation": "SET TBLPROPERTIES", "engineInfo": "another-writer"});
    let lines: Vec<String> = [
        json!({"commitInfo": info}),
        json!({"protocol": protocol}),
        json!({"metaData": metadata}),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    let path = table.join(format!("_delta_log/{:020}.json", commits.len()));
    std::fs::write(path, lines.join("\n")).unwrap();
}

/// `args` exits 3, reason `table_feature`, saying each of `says` and nothing of S3, and
/// leaves every object of the table as it was.
fn refused(product: &kit::product::Product, args: &[&str], says: &[&str]) {
    let root = Root::local(&product.publish);
    let objects = root.objects();
    let ran = wharf(product, args, false);
    assert_eq!(ran.code, 3, "{args:?}: {}{}", ran.stdout, ran.stderr);
    let text = format!("{}{}", ran.stdout, ran.stderr);
    assert!(text.contains("table_feature"), "{args:?}: {text}");
    for part in says {
        assert!(text.contains(part), "{args:?}: {part:?} not in {text}");
    }
    assert!(!text.contains("AWS_"), "{args:?}: the S3 hint: {text}");
    assert_eq!(root.objects(), objects, "{args:?}: nothing written");
}

/// `n` orders on `date`, statuses `status`.
fn day(product: &kit::product::Product, name: &str, date: &str, status: &str) -> String {
    let lines: Vec<String> = (1..=3)
        .map(|i| {
            kit::event(
                &format!("{name}{i}"),
                100 + i,
                status,
                &format!("{date}T12:00:00Z"),
            )
        })
        .collect();
    let path = product.input(name, &lines.iter().map(String::as_str).collect::<Vec<_>>());
    path.to_str().unwrap().to_owned()
}

#[test]
fn an_append_only_table_takes_new_dates_and_refuses_a_restatement_or_restore_at_plan_time() {
    let product = delta_product("lake/orders");
    assert_eq!(
        run(&product, &product.input("01-day.jsonl", &DAY), false).code,
        0
    );
    let restate = day(&product, "restate.jsonl", "2024-03-01", "SHIPPED");
    assert_eq!(run(&product, Path::new(&restate), false).code, 0);
    other_writer_commits(
        &product.publish,
        &["appendOnly"],
        json!({"delta.appendOnly": "true"}),
    );
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    let says = ["`appendOnly`", "2024-03-01", "unset delta.appendOnly"];
    refused(&product, &["plan", &again, "--json"], &says);
    refused(&product, &["run", &again, "--json"], &says);
    refused(&product, &["diff", &again], &says);
    refused(&product, &["restore", "2024-03-01", "--yes"], &says);
    let new_date = day(&product, "new.jsonl", "2024-03-05", "NEW");
    let landed = wharf(&product, &["run", &new_date, "--json"], false);
    assert_eq!(landed.code, 0, "{}{}", landed.stdout, landed.stderr);
    assert_eq!(Root::local(&product.publish).rows()["2024-03-05"].len(), 3);
}

#[test]
fn a_check_constraint_is_refused_by_name_before_the_row_work() {
    let product = delta_product("lake/orders");
    assert_eq!(
        run(&product, &product.input("01-day.jsonl", &DAY), false).code,
        0
    );
    other_writer_commits(
        &product.publish,
        &["checkConstraints"],
        json!({"delta.constraints.positive_order": "order_id > 0"}),
    );
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    let says = ["`checkConstraints`", "CHECK positive_order (order_id > 0)"];
    refused(&product, &["plan", &again], &says);
    refused(&product, &["run", &again, "--json"], &says);
    let planned = wharf(&product, &["plan", &again, "--json"], false);
    assert_eq!(planned.json()["reason"], "table_feature");
    assert_eq!(planned.json()["action"], "refuse");
}

#[test]
fn an_unknown_feature_is_refused_naming_it() {
    let product = delta_product("lake/orders");
    assert_eq!(
        run(&product, &product.input("01-day.jsonl", &DAY), false).code,
        0
    );
    other_writer_commits(&product.publish, &["someFutureFeature"], json!({}));
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    refused(
        &product,
        &["run", &again, "--json"],
        &["`someFutureFeature`", "a feature Wharf does not know"],
    );
}
