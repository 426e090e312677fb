//! A table this product's config did not make is refused (CONTRACT.md §12, issue 24):
//! another schema, or another partitioning than `event_date` alone, even with no data
//! file to give it away. The table is made here by delta-kernel-rs, not by Wharf; the
//! landing exits 1 naming the table and what to do, and the table's version, its objects
//! and the state root are as they were.

use std::path::Path;
use std::sync::Arc;

use delta_kernel::committer::FileSystemCommitter;
use delta_kernel::schema::{DataType, StructField, StructType};
use delta_kernel::transaction::CommitResult;
use delta_kernel::transaction::create_table::create_table;
use delta_kernel::transaction::data_layout::DataLayout;
use delta_kernel_default_engine::DefaultEngineBuilder;

use super::{DAY, Root, delta_product, kit, run};

/// An empty table at `table` (version 0, no data file) with `schema` and `partitions`.
fn foreign_table(table: &Path, schema: StructType, partitions: &[&str]) {
    std::fs::create_dir_all(table).unwrap();
    let url = url::Url::from_directory_path(table).unwrap();
    let store = Arc::new(object_store::local::LocalFileSystem::new());
    let engine = DefaultEngineBuilder::new(store).build();
    let mut builder = create_table(url.as_str(), Arc::new(schema), "another-writer/1", true);
    if !partitions.is_empty() {
        builder = builder.with_data_layout(DataLayout::partitioned(partitions.iter().copied()));
    }
    let txn = builder
        .build(&engine, Box::new(FileSystemCommitter::new()))
        .unwrap();
    assert!(matches!(
        txn.commit(&engine).unwrap(),
        CommitResult::Committed(_)
    ));
}

/// The table Wharf would make for `product`'s config.
fn wharf_schema(product: &kit::product::Product) -> StructType {
    let config = wharf::config::Config::load(&product.config).unwrap();
    wharf::land::delta::table_schema(&config).unwrap()
}

/// Lands into the foreign table at `table` and checks it was refused, nothing written.
fn refused(product: &kit::product::Product, table: &Path, what: &str, says: &str) {
    let root = Root::local(table);
    let (commits, objects) = (root.commits(), root.objects());
    assert_eq!(commits.len(), 1, "{what}: the foreign table, version 0");
    let written = || {
        let mut all = kit::tree(&product.state);
        all.remove(Path::new(".lock")); // the product's lock, taken before the table is read
        all.extend(kit::tree(&product.quarantine));
        all
    };
    let before = written();
    let ran = run(product, &product.input("01-day.jsonl", &DAY), false);
    assert_eq!(ran.code, 1, "{what}: {}{}", ran.stdout, ran.stderr);
    let url = url::Url::from_directory_path(table).unwrap().to_string();
    let error = ran.json()["error"].as_str().unwrap().to_owned();
    for part in [url.as_str(), says, "nothing was written", "publish_root"] {
        assert!(error.contains(part), "{what}: {part:?} not in: {error}");
    }
    assert_eq!(root.commits(), commits, "{what}: no version added");
    assert_eq!(root.objects(), objects, "{what}: no object written");
    assert_eq!(written(), before, "{what}: state and quarantine untouched");
    assert!(product.checkpoint("01-day.jsonl").is_none(), "{what}");
}

#[test]
fn a_table_of_another_schema_is_refused_and_left_as_it_was() {
    let product = delta_product("lake/orders");
    let mut fields: Vec<StructField> = wharf_schema(&product).fields().cloned().collect();
    fields.insert(0, StructField::nullable("email", DataType::STRING));
    let table = product.path().join("lake/orders");
    foreign_table(
        &table,
        StructType::try_new(fields).unwrap(),
        &["event_date"],
    );
    refused(&product, &table, "an extra column", "schema");
}

/// With no schema history (§1.1), a column another writer added is not rebuilt as one of
/// the product's: only a commit whose `commitInfo` names this product adds a column.
#[test]
fn another_writers_column_is_not_taken_for_an_added_one() {
    for config in ["breach", "add"] {
        let product = delta_product("lake/orders");
        if config == "add" {
            let text = std::fs::read_to_string(&product.config).unwrap();
            let text = text.replace("unknown_fields = \"breach\"", "unknown_fields = \"add\"");
            assert!(text.contains("\"add\""), "{text}");
            std::fs::write(&product.config, text).unwrap();
        }
        let mut fields: Vec<StructField> = wharf_schema(&product).fields().cloned().collect();
        fields.push(StructField::nullable("courier", DataType::STRING));
        let table = product.path().join("lake/orders");
        foreign_table(
            &table,
            StructType::try_new(fields).unwrap(),
            &["event_date"],
        );
        assert!(!product.state.join("columns.json").exists());
        refused(
            &product,
            &table,
            &format!("another writer's column, {config}"),
            "schema",
        );
    }
}

#[test]
fn a_table_partitioned_otherwise_is_refused_even_with_no_files() {
    for partitions in [&[][..], &["status"], &["event_date", "status"]] {
        let product = delta_product("lake/orders");
        let table = product.path().join("lake/orders");
        foreign_table(&table, wharf_schema(&product), partitions);
        let what = format!("partitioned by {partitions:?}");
        refused(&product, &table, &what, "partitioned by");
    }
}

/// The config's table schema with `name`'s column replaced by `column`.
fn with_column(product: &kit::product::Product, name: &str, column: StructField) -> StructType {
    let schema = wharf_schema(product);
    let fields = schema.fields().map(|f| {
        if f.name() == name {
            column.clone()
        } else {
            f.clone()
        }
    });
    StructType::try_new(fields.collect::<Vec<_>>()).unwrap()
}

/// A schema difference is refused in one line naming each differing column and both its
/// types (issue 55, §12.9), never the two schemas whole, with advice that can be followed.
#[test]
fn a_schema_difference_names_each_column_and_both_types_in_one_line() {
    let cases = [
        (
            "order_id",
            StructField::nullable("order_id", DataType::INTEGER),
            "`order_id`: table integer vs config int (long)",
        ),
        (
            "updated_at",
            StructField::nullable("updated_at", DataType::TIMESTAMP_NTZ),
            "`updated_at`: table timestamp_ntz vs config timestamp (timestamp)",
        ),
        (
            "event_date",
            StructField::nullable("event_date", DataType::STRING),
            "`event_date`: table string vs config the date partition (date)",
        ),
        (
            "courier_id",
            StructField::not_null("courier_id", DataType::STRING),
            "`courier_id`: table string NOT NULL vs config optional string",
        ),
    ];
    for (name, column, says) in cases {
        let product = delta_product("lake/orders");
        let table = product.path().join("lake/orders");
        foreign_table(&table, with_column(&product, name, column), &["event_date"]);
        refused(&product, &table, name, says);
        let ran = run(&product, &product.input("01-day.jsonl", &DAY), false);
        let error = ran.json()["error"].as_str().unwrap().to_owned();
        assert!(!error.contains('\n'), "{name}: not one line: {error}");
        assert!(
            !error.contains("struct<"),
            "{name}: a whole schema: {error}"
        );
        assert_eq!(ran.stderr.lines().count(), 1, "{name}: {}", ran.stderr);
        assert!(ran.stderr.contains(says), "{name}: {}", ran.stderr);
        // --verbose adds both schemas whole, on stderr and in the JSON's detail.
        let input = product.input("01-day.jsonl", &DAY);
        let verbose: kit::product::Ran = product
            .cmd(&["run", input.to_str().unwrap(), "--json", "--verbose"])
            .output()
            .unwrap()
            .into();
        assert_eq!(verbose.code, 1);
        let detail = verbose.json()["detail"].as_str().unwrap().to_owned();
        for part in ["the table's schema: ", "the config's: ", name] {
            assert!(detail.contains(part), "{name}: {part:?} not in {detail}");
        }
        assert!(
            verbose.stderr.contains(&format!("\nwharf: {detail}")),
            "{}",
            verbose.stderr
        );
    }
}

/// A NOT NULL column whose field is required is the config's: the landing writes a value
/// in every row (issue 55).
#[test]
fn a_not_null_column_of_a_required_field_is_accepted() {
    let product = delta_product("lake/orders");
    let table = product.path().join("lake/orders");
    let column = StructField::not_null("order_id", DataType::LONG);
    foreign_table(
        &table,
        with_column(&product, "order_id", column),
        &["event_date"],
    );
    let ran = run(&product, &product.input("01-day.jsonl", &DAY), false);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        Root::local(&table).commits().len(),
        2,
        "the landing committed"
    );
}
