//! Legacy and unreadable protocols, and a null date (CONTRACT.md §12.8, issue 55). A
//! legacy writer version implies features; Wharf counts one only where the table uses it
//! (a declared constraint, column mapping set, the change data feed on, a generated
//! column, an invariant). A protocol the kernel cannot read is a `table_feature` refusal in
//! Wharf's own words. Each refusal is one line naming its cause and what to do, in
//! `plan --json` (action `refuse`), `run` (exit 3) and on stderr, and no byte of the
//! table changes. The other writer's commit is written by hand, as Spark writes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{DAY, Root, delta_product, kit, run, wharf};
use kit::product::Product;

/// What another writer's commit changes: the protocol, the table's configuration and,
/// per column, metadata entries.
struct Change {
    protocol: Value,
    configuration: Value,
    columns: Vec<(String, Value)>,
}

impl Change {
    fn protocol(protocol: Value) -> Change {
        Change {
            protocol,
            configuration: json!({}),
            columns: Vec::new(),
        }
    }

    fn with(mut self, configuration: Value) -> Change {
        self.configuration = configuration;
        self
    }
}

/// A product whose table holds [`DAY`] (2024-03-01), landed by Wharf.
fn landed() -> Product {
    landed_with(delta_product("lake/orders"))
}

/// `product`, its table holding [`DAY`] (2024-03-01), landed by Wharf.
fn landed_with(product: Product) -> Product {
    let ran = run(&product, &product.input("01-day.jsonl", &DAY), false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    product
}

/// The latest `metaData` of the table at `table`.
fn metadata(table: &Path) -> Value {
    let commits = Root::local(table).commits();
    let all = commits.iter().flatten();
    all.filter_map(|a| a.get("metaData"))
        .next_back()
        .unwrap()
        .clone()
}

/// Commits `change` as another writer: the next version of the table at `table`.
fn other_writer_commits(table: &Path, change: Change) {
    let mut metadata = metadata(table);
    let config = metadata["configuration"].as_object_mut().unwrap();
    config.extend(change.configuration.as_object().unwrap().clone());
    let mut schema: Value =
        serde_json::from_str(metadata["schemaString"].as_str().unwrap()).unwrap();
    for (column, entries) in &change.columns {
        let fields = schema["fields"].as_array_mut().unwrap();
        let field = fields.iter_mut().find(|f| f["name"] == *column).unwrap();
        let meta = field["metadata"].as_object_mut().unwrap();
        meta.extend(entries.as_object().unwrap().clone());
    }
    metadata["schemaString"] = Value::String(schema.to_string());
    let info = json!({"timestamp": 1, "operation": "SET TBLPROPERTIES",
        "engineInfo": "another-writer"});
    commit(
        table,
        &[
            json!({"commitInfo": info}),
            json!({"protocol": change.protocol}),
            json!({"metaData": metadata}),
        ],
    );
}

/// Writes `actions` as the table's next commit.
fn commit(table: &Path, actions: &[Value]) {
    let version = Root::local(table).commits().len();
    let lines: Vec<String> = actions.iter().map(Value::to_string).collect();
    let path = table.join(format!("_delta_log/{version:020}.json"));
    std::fs::write(path, lines.join("\n")).unwrap();
}

/// Three orders on `date` in a new input named `name`.
fn day(product: &Product, name: &str, date: &str, status: &str) -> PathBuf {
    let lines: Vec<String> = (1..=3)
        .map(|i| {
            let at = format!("{date}T12:00:00Z");
            kit::event(&format!("{name}{i}"), 100 + i, status, &at)
        })
        .collect();
    product.input(name, &lines.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Every file under the table, by path, with its bytes.
fn bytes(product: &Product) -> BTreeMap<PathBuf, Vec<u8>> {
    kit::tree(&product.publish)
}

/// `plan --json` and `run --json` of `input` are refused for the table's protocol: action
/// `refuse`, reason `table_feature`, exit 3, one line saying each of `says`, on stderr too
/// (without `--json`), and no byte of the table changed. Returns the refusal's text.
fn refused(product: &Product, input: &Path, says: &[&str]) -> String {
    let before = bytes(product);
    let input = input.to_str().unwrap();
    let planned = wharf(product, &["plan", input, "--json"], false);
    assert_eq!(
        planned.code, 3,
        "plan: {}{}",
        planned.stdout, planned.stderr
    );
    let plan = planned.json();
    assert_eq!(plan["action"], "refuse", "plan: {plan}");
    assert_eq!(plan["reason"], "table_feature", "plan: {plan}");
    let ran = wharf(product, &["run", input, "--json"], false);
    assert_eq!(ran.code, 3, "run: {}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json()["action"], "refused", "run: {}", ran.stdout);
    assert_eq!(ran.json()["reason"], "table_feature", "run: {}", ran.stdout);
    let plain = wharf(product, &["run", input], false);
    assert_eq!(plain.code, 3, "run: {}{}", plain.stdout, plain.stderr);
    let detail = plan["detail"].as_str().unwrap().to_owned();
    for text in [&detail, ran.json()["detail"].as_str().unwrap()] {
        assert!(!text.contains('\n'), "one line: {text}");
        for part in says {
            assert!(text.contains(part), "{part:?} not in: {text}");
        }
    }
    let shown = format!("{}{}", plain.stdout, plain.stderr);
    let lines: Vec<&str> = shown.lines().filter(|l| l.contains(says[0])).collect();
    assert_eq!(lines.len(), 1, "one line without --json: {shown}");
    for part in says {
        assert!(lines[0].contains(part), "{part:?} not in: {}", lines[0]);
    }
    // A new machine (no state root) plans the same refusal from the table alone.
    std::fs::remove_dir_all(&product.state).unwrap();
    let fresh = wharf(product, &["plan", input, "--json"], false);
    assert_eq!(
        fresh.code, 3,
        "fresh plan: {}{}",
        fresh.stdout, fresh.stderr
    );
    assert_eq!(fresh.json()["reason"], "table_feature", "{}", fresh.stdout);
    assert_eq!(fresh.json()["detail"], plan["detail"]);
    let fresh = wharf(product, &["run", input, "--json"], false);
    assert_eq!(fresh.code, 3, "fresh run: {}{}", fresh.stdout, fresh.stderr);
    assert_eq!(fresh.json()["reason"], "table_feature", "{}", fresh.stdout);
    assert!(!format!("{}{shown}", ran.stdout).contains("AWS_"));
    assert_eq!(bytes(product), before, "no byte of the table changed");
    detail
}

/// The protocol the table's log states last.
fn last_protocol(table: &Path) -> Value {
    let commits = Root::local(table).commits();
    let all = commits.iter().flatten();
    all.filter_map(|a| a.get("protocol"))
        .next_back()
        .unwrap()
        .clone()
}

#[test]
fn a_legacy_writer_version_4_without_the_feed_or_a_constraint_takes_landings_as_it_is() {
    // A checkpoint due at every version: Wharf writes none of a legacy table.
    let product = landed_with(Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"delta\"\n\
         delta_checkpoint_interval = 1\n{}",
        kit::product::schema()
    )));
    let legacy = json!({"minReaderVersion": 1, "minWriterVersion": 4});
    other_writer_commits(&product.publish, Change::protocol(legacy.clone()));
    let restate = day(&product, "restate.jsonl", "2024-03-01", "SHIPPED");
    let ran = run(&product, &restate, false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json()["action"], "published");
    let new_date = day(&product, "new.jsonl", "2024-03-05", "NEW");
    assert_eq!(run(&product, &new_date, false).code, 0);
    let root = Root::local(&product.publish);
    let rows = root.rows();
    let statuses: Vec<&str> = rows["2024-03-01"]
        .iter()
        .map(|r| r["status"].as_str())
        .collect();
    assert_eq!(
        statuses, ["SHIPPED"; 3],
        "the restatement replaced the date"
    );
    assert_eq!(rows["2024-03-05"].len(), 3);
    assert_eq!(
        last_protocol(&product.publish),
        legacy,
        "the protocol as it was"
    );
    let log = kit::tree(&product.publish.join("_delta_log"));
    // A checkpoint or checksum holds the protocol: none is written of the kernel's view.
    let beyond: Vec<_> = log
        .keys()
        .filter(|p| p.extension().is_none_or(|e| e != "json"))
        .collect();
    assert!(beyond.is_empty(), "only commits in the log: {beyond:?}");
}

#[test]
fn a_legacy_writer_version_4_with_the_change_data_feed_on_is_refused_naming_the_feed() {
    let product = landed();
    let legacy = json!({"minReaderVersion": 1, "minWriterVersion": 4});
    let on = json!({"delta.enableChangeDataFeed": "true"});
    other_writer_commits(&product.publish, Change::protocol(legacy).with(on));
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    let detail = refused(
        &product,
        &again,
        &[
            "`changeDataFeed`",
            "change data feed",
            "delta.enableChangeDataFeed",
        ],
    );
    assert!(!detail.contains("checkConstraints"), "{detail}");
}

#[test]
fn a_legacy_writer_version_5_with_column_mapping_by_name_is_refused_naming_column_mapping() {
    let product = landed();
    let legacy = json!({"minReaderVersion": 2, "minWriterVersion": 5});
    let schema = metadata(&product.publish)["schemaString"]
        .as_str()
        .unwrap()
        .to_owned();
    let schema: Value = serde_json::from_str(&schema).unwrap();
    let names: Vec<String> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect();
    let mapping = json!({"delta.columnMapping.mode": "name",
        "delta.columnMapping.maxColumnId": names.len().to_string()});
    let mut change = Change::protocol(legacy).with(mapping);
    for (id, name) in names.into_iter().enumerate() {
        let entries = json!({"delta.columnMapping.id": id + 1,
            "delta.columnMapping.physicalName": format!("col-{name}")});
        change.columns.push((name, entries));
    }
    other_writer_commits(&product.publish, change);
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    let detail = refused(
        &product,
        &again,
        &[
            "`columnMapping`",
            "column mapping",
            "delta.columnMapping.mode = name",
        ],
    );
    assert!(!detail.contains("checkConstraints"), "{detail}");
}

#[test]
fn a_legacy_writer_version_3_with_a_declared_constraint_is_refused_naming_it() {
    let product = landed();
    let legacy = json!({"minReaderVersion": 1, "minWriterVersion": 3});
    let constraint = json!({"delta.constraints.positive_order": "order_id > 0"});
    other_writer_commits(&product.publish, Change::protocol(legacy).with(constraint));
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    refused(
        &product,
        &again,
        &[
            "`checkConstraints`",
            "CHECK positive_order (order_id > 0)",
            "DROP CONSTRAINT",
        ],
    );
}

#[test]
fn a_generated_identity_or_invariant_column_at_a_legacy_writer_version_is_refused_naming_it() {
    for (key, value, feature) in [
        ("delta.identity.start", "1", "`identityColumns`"),
        (
            "delta.generationExpression",
            "year(updated_at)",
            "`generatedColumns`",
        ),
        (
            "delta.invariants",
            r#"{"expression":{"expression":"order_id > 0"}}"#,
            "`invariants`",
        ),
    ] {
        let product = landed();
        let legacy = json!({"minReaderVersion": 1, "minWriterVersion": 6});
        let mut change = Change::protocol(legacy);
        change
            .columns
            .push(("order_id".into(), json!({ key: value })));
        other_writer_commits(&product.publish, change);
        let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
        refused(&product, &again, &[feature, "`order_id`"]);
    }
}

#[test]
fn a_reader_version_the_kernel_cannot_read_is_a_table_feature_refusal_in_wharfs_words() {
    let product = landed();
    let future = json!({"minReaderVersion": 99, "minWriterVersion": 7, "writerFeatures": []});
    other_writer_commits(&product.publish, Change::protocol(future));
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    refused(
        &product,
        &again,
        &["reader version 99", "reader versions 1 to 3", "publish to"],
    );
}

#[test]
fn an_unknown_reader_or_writer_feature_is_a_table_feature_refusal_naming_it() {
    for (readers, writers, name) in [
        (json!([]), json!(["someFutureFeature"]), "someFutureFeature"),
        (
            json!(["someFutureReading"]),
            json!(["someFutureReading"]),
            "someFutureReading",
        ),
    ] {
        let product = landed();
        let future = json!({"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": readers, "writerFeatures": writers});
        other_writer_commits(&product.publish, Change::protocol(future));
        let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
        refused(
            &product,
            &again,
            &[
                &format!("`{name}`"),
                "a feature Wharf does not know",
                "publish to",
            ],
        );
    }
}

#[test]
fn a_file_with_a_null_date_is_named_with_what_to_do() {
    let product = landed();
    let root = Root::local(&product.publish);
    let ours = root.live_files().into_iter().next().unwrap();
    let file = "event_date=__HIVE_DEFAULT_PARTITION__/part-00000-other.parquet";
    let target = product.publish.join(file);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(product.publish.join(&ours), &target).unwrap();
    let size = std::fs::metadata(&target).unwrap().len();
    let add = json!({"path": file, "partitionValues": {"event_date": null}, "size": size,
        "modificationTime": 1, "dataChange": true, "stats": "{\"numRecords\":3}"});
    let info = json!({"timestamp": 1, "operation": "WRITE", "engineInfo": "another-writer"});
    commit(
        &product.publish,
        &[json!({"commitInfo": info}), json!({"add": add})],
    );
    let before = bytes(&product);
    let again = day(&product, "again.jsonl", "2024-03-01", "DELIVERED");
    let input = again.to_str().unwrap();
    for args in [vec!["plan", input, "--json"], vec!["run", input, "--json"]] {
        let ran = wharf(&product, &args, false);
        assert_eq!(ran.code, 1, "{args:?}: {}{}", ran.stdout, ran.stderr);
        let error = ran.json()["error"].as_str().unwrap().to_owned();
        assert!(!error.contains('\n'), "one line: {error}");
        for part in [
            file,
            "has a null event_date",
            "DELETE",
            "nothing was written",
        ] {
            assert!(error.contains(part), "{args:?}: {part:?} not in: {error}");
        }
        assert!(!error.contains("not partitioned"), "{error}");
    }
    assert_eq!(bytes(&product), before, "no byte of the table changed");
}

#[test]
fn a_legacy_writer_version_6_without_column_mapping_or_identity_columns_takes_a_restatement() {
    let product = landed();
    let legacy = json!({"minReaderVersion": 2, "minWriterVersion": 6});
    let off = json!({"delta.columnMapping.mode": "none", "delta.enableChangeDataFeed": "false"});
    other_writer_commits(&product.publish, Change::protocol(legacy.clone()).with(off));
    let restate = day(&product, "restate.jsonl", "2024-03-01", "SHIPPED");
    let ran = run(&product, &restate, false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let rows = Root::local(&product.publish).rows();
    let statuses: Vec<&str> = rows["2024-03-01"]
        .iter()
        .map(|r| r["status"].as_str())
        .collect();
    assert_eq!(statuses, ["SHIPPED"; 3]);
    assert_eq!(last_protocol(&product.publish), legacy);
}
