//! Merge mode on Spark (CONTRACT.md §10): for the fixtures of the merge contract tests,
//! `engine::spark::merge::merge_census` gives the counts and the new rows that
//! `plan::merge::merge` gives on the same published data and the same winners. The
//! published data is landed by the local engine; the winners are ranked here from the
//! batch's lines, by the contract's classifier and §3's order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;

use spark_connect::SparkSession;
use spark_connect::row::Value as SparkValue;
use wharf::config::Config;
use wharf::contract::{Date, FieldType, LineBytes, Outcome, Schema, Value, classify};
use wharf::engine::spark::layout::lay_out;
use wharf::engine::spark::merge::{MergeCensus, merge_census};
use wharf::engine::spark::published::{BatchKeys, Published};
use wharf::plan::merge::{Merged, PublishedRows, merge};
use wharf::plan::rank::compare;
use wharf::plan::{Event, MergeCounts};
use wharf::store::{parquet_files, state};

use crate::kit::{Events, Product, event, event_seq};

fn session() -> SparkSession {
    let remote =
        std::env::var("WHARF_SPARK_REMOTE").unwrap_or_else(|_| "sc://127.0.0.1:15002".into());
    SparkSession::builder()
        .remote(&remote)
        .get_or_create()
        .unwrap_or_else(|e| panic!("no Spark Connect server at {remote} ({e}): start one"))
}

fn merge_product(settings: &str) -> Product {
    Product::with_settings(&format!("write_mode = \"merge\"\n{settings}"))
}

/// Lands `lines` as inbox file `name` with the local engine; it must publish.
fn land(product: &Product, name: &str, lines: &[&str]) {
    let ran = product.run_json(&product.input(name, lines));
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

/// The batch's winners (§1–3): accepted lines, retries collapsed onto their first line,
/// the rank-1 event of each key.
fn winners<L: AsRef<[u8]>>(lines: &[L], schema: &Schema) -> Vec<Event> {
    let mut seen_ids = HashSet::new();
    let mut best: HashMap<Value, Event> = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        let Outcome::Accepted(record) = classify(LineBytes::Kept(line.as_ref()), schema) else {
            continue;
        };
        if !seen_ids.insert(record[schema.event_id].clone()) {
            continue;
        }
        let event = Event {
            line: i as u64 + 1,
            record,
        };
        let key = event.record[schema.key].clone();
        match best.get(&key) {
            Some(held) if compare(held, &event, schema).is_gt() => {}
            _ => {
                best.insert(key, event);
            }
        }
    }
    best.into_values().collect()
}

/// Every published partition, read by the local engine's reader.
fn published(config: &Config) -> PublishedRows {
    let mut rows = PublishedRows::default();
    for (date, folder) in state::list_partitions(config.lake.publish_root()).unwrap() {
        let read = parquet_files::read_partition(&folder, &config.schema).unwrap();
        rows.by_date.insert(date, read);
    }
    rows
}

/// The batch's keys as the Spark engine collects them from its winners.
fn batch_keys(winners: &[Event], schema: &Schema) -> BatchKeys {
    let mut batch = BatchKeys::default();
    for winner in winners {
        let key = winner.record[schema.key].clone();
        let date = winner.record[schema.date_of].instant().unwrap().utc_date();
        batch.own.entry(date).or_default().push(key.clone());
        batch.keys.push(key);
    }
    batch.keys.sort();
    batch.keys.dedup();
    batch.own.values_mut().for_each(|keys| keys.sort());
    batch
}

/// One SQL literal of `value`, typed as the winners DataFrame declares.
fn literal(value: &Value, ty: FieldType) -> String {
    match (value, ty) {
        (Value::Null, FieldType::Int) => "CAST(NULL AS BIGINT)".into(),
        (Value::Null, FieldType::String) => "CAST(NULL AS STRING)".into(),
        (Value::Null, FieldType::Timestamp) => "CAST(NULL AS TIMESTAMP)".into(),
        (Value::Int(n), _) => format!("CAST({n} AS BIGINT)"),
        (Value::Str(s), _) => {
            let hex: String = s.bytes().map(|b| format!("{b:02X}")).collect();
            format!("CAST(X'{hex}' AS STRING)")
        }
        (Value::Ts(t), _) => format!("TIMESTAMP_MICROS({})", t.micros()),
        (Value::Null, FieldType::Float) => "CAST(NULL AS DOUBLE)".into(),
        (Value::Null, FieldType::Bool) => "CAST(NULL AS BOOLEAN)".into(),
        (Value::Float(_) | Value::Bool(_), _) => value.display(),
    }
}

/// The winners as the Spark engine hands them to the merge (the interface of
/// `engine::spark::merge`), as one inline table.
fn winners_frame(
    spark: &SparkSession,
    winners: &[Event],
    schema: &Schema,
) -> spark_connect::DataFrame {
    let tuples: Vec<String> = winners
        .iter()
        .map(|event| {
            let record = &event.record;
            let instant = record[schema.order_by].instant().unwrap();
            let date = record[schema.date_of].instant().unwrap().utc_date();
            let mut values: Vec<String> = schema
                .fields
                .iter()
                .zip(record.iter())
                .map(|(field, value)| literal(value, field.ty))
                .collect();
            values.push(format!("CAST({} AS BIGINT)", instant.secs()));
            values.push(format!("CAST({} AS BIGINT)", instant.nanos()));
            values.push(format!("CAST({} AS BIGINT)", event.line));
            values.push("false".to_owned());
            values.push(format!("DATE_FROM_UNIX_DATE({})", date.0));
            format!("({})", values.join(", "))
        })
        .collect();
    let names: Vec<String> = schema
        .fields
        .iter()
        .map(|f| format!("`{}`", f.name))
        .chain(
            [
                "__order_secs",
                "__order_nanos",
                "__line",
                "__tied",
                "event_date",
            ]
            .map(String::from),
        )
        .collect();
    let query = format!(
        "SELECT * FROM VALUES {} AS winners({})",
        tuples.join(", "),
        names.join(", ")
    );
    spark.sql(&query).unwrap()
}

/// A row as column → text (nulls left out), timestamps as microseconds: the published
/// column's precision.
type Row = BTreeMap<String, String>;

fn local_row(record: &[Value], schema: &Schema) -> Row {
    let mut row = Row::new();
    for (field, value) in schema.fields.iter().zip(record) {
        let text = match value {
            Value::Null => continue,
            Value::Int(n) => n.to_string(),
            Value::Str(s) => s.to_string(),
            Value::Ts(t) => t.micros().to_string(),
            Value::Float(_) | Value::Bool(_) => value.display(),
        };
        row.insert(field.name.clone(), text);
    }
    row
}

/// Spark's new rows, per date, in key order.
fn spark_rows(census: &MergeCensus, schema: &Schema) -> BTreeMap<Date, Vec<Row>> {
    let columns = census.rows.columns().unwrap();
    let mut out: BTreeMap<Date, Vec<(SparkValue, Row)>> = BTreeMap::new();
    for spark_row in census.rows.collect().unwrap() {
        let (mut row, mut date, mut key) = (Row::new(), None, SparkValue::Null);
        for (name, value) in columns.iter().zip(spark_row.values()) {
            if name.starts_with('_') {
                continue; // the merge's own columns (`_bucket`, `_arrived`)
            }
            let text = match value {
                SparkValue::Null => continue,
                SparkValue::Date(days) if name == "event_date" => {
                    date = Some(Date(*days));
                    continue;
                }
                SparkValue::Long(n) | SparkValue::Timestamp(n) => n.to_string(),
                SparkValue::String(s) => s.clone(),
                other => panic!("column {name}: unexpected {other:?}"),
            };
            if *name == schema.fields[schema.key].name {
                key = value.clone();
            }
            row.insert(name.clone(), text);
        }
        out.entry(date.expect("every row has its event_date"))
            .or_default()
            .push((key, row));
    }
    out.into_iter()
        .map(|(date, mut rows)| {
            rows.sort_by(|a, b| match (&a.0, &b.0) {
                (SparkValue::String(x), SparkValue::String(y)) => x.as_bytes().cmp(y.as_bytes()),
                (x, y) => x.as_i64().cmp(&y.as_i64()),
            });
            (date, rows.into_iter().map(|(_, row)| row).collect())
        })
        .collect()
}

/// What the comparison needs of a merge: per date its counts and rows, stale, ties.
#[derive(Debug, PartialEq, Eq)]
struct Outcomes {
    /// Counts, rows and rows by hour.
    dates: BTreeMap<Date, (MergeCounts, u64, [u64; 24])>,
    rows: BTreeMap<Date, Vec<Row>>,
    stale: u64,
    ties_by_arrival: u64,
}

/// A date's counts and rows (its hours are compared between the engines).
fn date_of(out: &Outcomes, date: &str) -> (MergeCounts, u64) {
    let (counts, rows, _) = out.dates[&day(date)];
    (counts, rows)
}

fn local_outcomes(merged: &Merged, schema: &Schema) -> Outcomes {
    let counts = |d: &wharf::plan::merge::MergedDate| MergeCounts {
        inserted: d.inserted,
        updated: d.updated,
        moved_in: d.moved_in,
        moved_out: d.moved_out,
        ..MergeCounts::default()
    };
    Outcomes {
        dates: merged
            .dates
            .iter()
            .map(|(date, d)| {
                let hours =
                    wharf::plan::rows_by_hour(d.rows.iter().map(|e| &e.record), schema.date_of);
                (*date, (counts(d), d.rows.len() as u64, hours))
            })
            .collect(),
        rows: merged
            .dates
            .iter()
            .filter(|(_, d)| !d.rows.is_empty())
            .map(|(date, d)| {
                let rows = d
                    .rows
                    .iter()
                    .map(|e| local_row(&e.record, schema))
                    .collect();
                (*date, rows)
            })
            .collect(),
        stale: merged.stale,
        ties_by_arrival: merged.ties_by_arrival,
    }
}

/// Spark's outcomes; the files read and rewritten are left out, as `merge` reads each
/// date as one file (tests/spark/files.rs compares them with the local engine's).
fn spark_outcomes(
    census: &MergeCensus,
    dates: &BTreeMap<Date, wharf::plan::DateCensus>,
    schema: &Schema,
) -> Outcomes {
    let outcome_counts = |m: MergeCounts| MergeCounts {
        files_read: 0,
        files_rewritten: 0,
        rows_rewritten: 0,
        ..m
    };
    Outcomes {
        dates: dates
            .iter()
            .map(|(date, d)| {
                let counts = outcome_counts(d.merge.unwrap());
                (*date, (counts, d.rows, d.by_hour.unwrap()))
            })
            .collect(),
        rows: spark_rows(census, schema),
        stale: census.stale,
        ties_by_arrival: census.ties_by_arrival,
    }
}

/// Merges `batch` into the product's published data on both engines; asserts they agree
/// and returns the agreed outcome. Nothing is written to the publish root.
fn both_engines<L: AsRef<[u8]>>(product: &Product, batch: &[L]) -> Outcomes {
    let config = Config::load(&product.config).unwrap();
    let schema = &config.schema;
    let before = product.tree("lake");
    let winners = winners(batch, schema);
    let local = local_outcomes(&merge(&winners, &published(&config), schema), schema);
    let spark = session();
    let folders = wharf::store::dataset::HiveFolders(config.lake.publish_root());
    let source = Published::of(&config, &folders, batch_keys(&winners, schema)).unwrap();
    let census = merge_census(
        &spark,
        "spark test",
        &config,
        &source,
        &winners_frame(&spark, &winners, schema),
    )
    .unwrap();
    let (dates, _) = lay_out(config.target_file_rows, &source, &census, &mut |path| {
        wharf::store::dataset::Dataset::file_hours(&folders, path, schema)
    })
    .unwrap();
    let on_spark = spark_outcomes(&census, &dates, schema);
    assert_eq!(
        on_spark, local,
        "Spark's merge differs from the local engine's"
    );
    assert_eq!(
        product.tree("lake"),
        before,
        "a merge census writes nothing"
    );
    local
}

fn counts(inserted: u64, updated: u64, moved_in: u64, moved_out: u64) -> MergeCounts {
    MergeCounts {
        inserted,
        updated,
        moved_in,
        moved_out,
        ..MergeCounts::default()
    }
}

fn day(text: &str) -> Date {
    Date::parse(text).unwrap()
}

#[test]
fn a_micro_batch_updates_its_keys_and_keeps_the_rest_of_the_day() {
    let product = merge_product("");
    let at = "2024-03-01T10:00:00Z";
    land(
        &product,
        "b1.jsonl",
        &[
            &event("e1", 1, "PENDING", at),
            &event("e2", 2, "PENDING", at),
            &event("e3", 3, "PENDING", at),
        ],
    );
    let out = both_engines(
        &product,
        &[
            &event("e4", 2, "PAID", "2024-03-01T11:00:00Z"),
            &event("e5", 4, "PENDING", "2024-03-01T11:00:00Z"),
        ],
    );
    assert_eq!(date_of(&out, "2024-03-01"), (counts(1, 1, 0, 0), 4));
    let statuses: Vec<&str> = out.rows[&day("2024-03-01")]
        .iter()
        .map(|r| r["status"].as_str())
        .collect();
    assert_eq!(statuses, ["PENDING", "PAID", "PENDING", "PENDING"]);
}

#[test]
fn a_late_event_is_stale_and_rewrites_no_date() {
    let product = merge_product("");
    land(
        &product,
        "b1.jsonl",
        &[&event("e1", 1, "PAID", "2024-03-01T10:15:00Z")],
    );
    let out = both_engines(
        &product,
        &[&event("e0", 1, "PENDING", "2024-03-01T10:00:00Z")],
    );
    assert_eq!((out.stale, out.dates.len()), (1, 0));
}

#[test]
fn a_full_tie_goes_to_the_batch_and_is_counted() {
    let product = merge_product("");
    let at = "2024-03-01T10:00:00Z";
    land(&product, "b1.jsonl", &[&event_seq("e1", 1, "FIRST", at, 2)]);
    let out = both_engines(&product, &[&event_seq("e2", 1, "SECOND", at, 2)]);
    assert_eq!(out.ties_by_arrival, 1);
    assert_eq!(out.rows[&day("2024-03-01")][0]["status"], "SECOND");
}

#[test]
fn a_higher_tiebreak_wins_and_a_missing_one_loses() {
    let product = merge_product("");
    let at = "2024-03-01T10:00:00Z";
    land(
        &product,
        "b1.jsonl",
        &[
            &event_seq("e1", 1, "ONE", at, 2),
            &event("e2", 2, "TWO", at),
        ],
    );
    let out = both_engines(
        &product,
        &[
            &event_seq("e3", 1, "LOWER", at, 1),
            &event_seq("e4", 2, "SEQ", at, 0),
        ],
    );
    assert_eq!((out.stale, out.ties_by_arrival), (1, 0));
    assert_eq!(date_of(&out, "2024-03-01"), (counts(0, 1, 0, 0), 2));
}

#[test]
fn a_batch_already_published_changes_nothing() {
    let product = merge_product("");
    let lines = [
        event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
        event("e2", 2, "PAID", "2024-03-02T10:00:00Z"),
    ];
    land(&product, "b1.jsonl", &[&lines[0], &lines[1]]);
    let out = both_engines(&product, &[&lines[1], &lines[0]]);
    assert_eq!((out.dates.len(), out.stale, out.ties_by_arrival), (0, 0, 0));
}

#[test]
fn a_sub_microsecond_later_event_updates_a_published_row() {
    // The published row holds 10:00:00.000000 (its .0000004 truncated); the batch's
    // .0000009 is later, though both publish the same microsecond.
    let product = merge_product("");
    land(
        &product,
        "b1.jsonl",
        &[&event("e1", 1, "PAID", "2024-03-01T10:00:00.0000004Z")],
    );
    let out = both_engines(
        &product,
        &[&event("e2", 1, "PAID", "2024-03-01T10:00:00.0000009Z")],
    );
    assert_eq!(date_of(&out, "2024-03-01"), (counts(0, 1, 0, 0), 1));
}

#[test]
fn a_key_moves_to_its_new_date_and_an_emptied_date_is_retired() {
    let product = merge_product("");
    let late = "2024-03-01T23:00:00Z";
    land(
        &product,
        "b1.jsonl",
        &[
            &event("e1", 1, "PENDING", late),
            &event("e2", 2, "PENDING", late),
        ],
    );
    let out = both_engines(
        &product,
        &[
            &event("e3", 1, "PAID", "2024-03-02T01:00:00Z"),
            &event("e4", 2, "PAID", "2024-03-03T01:00:00Z"),
            &event("e5", 9, "NEW", "2024-03-03T02:00:00Z"),
        ],
    );
    assert_eq!(date_of(&out, "2024-03-01"), (counts(0, 0, 0, 2), 0));
    assert_eq!(date_of(&out, "2024-03-02"), (counts(0, 0, 1, 0), 1));
    assert_eq!(date_of(&out, "2024-03-03"), (counts(1, 0, 1, 0), 2));
    assert!(
        !out.rows.contains_key(&day("2024-03-01")),
        "no rows left there"
    );
}

#[test]
fn where_keys_live_comes_from_the_published_files_not_the_key_index() {
    let product = merge_product("");
    land(
        &product,
        "b1.jsonl",
        &[&event("e1", 1, "PENDING", "2024-03-01T23:00:00Z")],
    );
    // An index that lies: Spark must not read it.
    fs::write(product.state.join("keys.json"), b"{\"dates\":{}}").unwrap();
    let out = both_engines(&product, &[&event("e2", 1, "PAID", "2024-03-02T01:00:00Z")]);
    assert_eq!(date_of(&out, "2024-03-01"), (counts(0, 0, 0, 1), 0));
}

#[test]
fn a_key_left_on_two_dates_by_a_crash_is_repaired() {
    let product = merge_product("");
    land(
        &product,
        "b1.jsonl",
        &[&event("e1", 1, "PENDING", "2024-03-01T23:00:00Z")],
    );
    let moved = event("e2", 1, "PAID", "2024-03-02T01:00:00Z");
    let crashed = product
        .cmd(&[
            "run",
            product.input("b2.jsonl", &[&moved]).to_str().unwrap(),
        ])
        .env("WHARF_FAILPOINT", "after_swap_1")
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    assert_eq!(
        product.dates(),
        ["2024-03-01", "2024-03-02"],
        "the key is on both"
    );
    let out = both_engines(&product, &[&moved]);
    assert_eq!(date_of(&out, "2024-03-01"), (counts(0, 0, 0, 1), 0));
    assert!(!out.dates.contains_key(&day("2024-03-02")), "already there");
}

#[test]
fn generated_batches_over_many_dates_merge_alike() {
    // A batch over more days than the published data moves keys forward; one over fewer
    // days is mostly older: stale.
    let (mut changed, mut moved, mut stale) = (0, 0, 0);
    for (published_days, batch_days) in [(4, 5), (5, 4)] {
        let product = merge_product("max_dates = 10\nmax_rejected_lines = 1000");
        let write = |name: &str, events: Events| -> Vec<Vec<u8>> {
            let lines = events.lines();
            let mut bytes = lines.join(&b'\n');
            bytes.push(b'\n');
            product.input_bytes(name, &bytes);
            lines
        };
        write("b1.jsonl", Events::new(3_000).days(published_days).seed(7));
        let ran = product.run_json(&product.path().join("inbox/b1.jsonl"));
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        let batch = Events::new(2_000).days(batch_days).seed(8).rejects(0.01);
        let out = both_engines(&product, &write("b2.jsonl", batch));
        for (c, _, _) in out.dates.values() {
            changed += c.inserted + c.updated + c.moved_in;
            moved += c.moved_out;
        }
        stale += out.stale;
    }
    assert!(
        changed > 100 && moved > 0 && stale > 0,
        "the fixtures exercise the merge: changed {changed}, moved {moved}, stale {stale}"
    );
}

/// Rewrites every published file of `product` as another tool would write the same rows:
/// each column `types` names cast to that Arrow type (arrow's own writer, its own
/// encodings).
fn rewrite_foreign(product: &Product, types: &[(&str, arrow_schema::DataType)]) {
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let config = Config::load(&product.config).unwrap();
    for (_, folder) in state::list_partitions(config.lake.publish_root()).unwrap() {
        for path in parquet_files::parquet_paths(&folder).unwrap() {
            let reader = ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&path).unwrap())
                .unwrap()
                .build()
                .unwrap();
            let batches: Vec<_> = reader.map(Result::unwrap).collect();
            let columns = |batch: &arrow_array::RecordBatch| {
                let schema = batch.schema();
                let cast = schema.fields().iter().zip(batch.columns()).map(|(f, c)| {
                    let to = types.iter().find(|(n, _)| n == f.name()).map(|(_, t)| t);
                    let c = to.map_or(c.clone(), |t| arrow_cast::cast(c, t).unwrap());
                    (f.name().clone(), c)
                });
                arrow_array::RecordBatch::try_from_iter(cast.collect::<Vec<_>>()).unwrap()
            };
            let batches: Vec<_> = batches.iter().map(columns).collect();
            let mut writer =
                ArrowWriter::try_new(fs::File::create(&path).unwrap(), batches[0].schema(), None)
                    .unwrap();
            batches.iter().for_each(|b| writer.write(b).unwrap());
            writer.close().unwrap();
        }
    }
}

/// A table another tool wrote (dictionary, large and view strings, a 32-bit key, a 16-bit
/// integer, millisecond timestamps in another zone; issue 55): both engines read every
/// value exactly and merge alike; the same rows as before the rewrite. A zoneless
/// (NTZ) timestamp is refused by both, naming the column, before Spark reads a row.
#[test]
fn a_table_of_another_writers_types_merges_alike_and_ntz_is_refused() {
    use arrow_schema::{DataType, TimeUnit};
    let product = merge_product("");
    let at = |h: u32| format!("2024-03-01T{h:02}:00:00.123Z");
    let lines: Vec<String> = (1..=6)
        .map(|k| event_seq(&format!("e{k}"), k, "PENDING", &at(8 + k as u32), k * 10))
        .collect();
    land(
        &product,
        "b1.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let config = Config::load(&product.config).unwrap();
    let wharf_rows = published(&config);
    let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    rewrite_foreign(
        &product,
        &[
            ("event_id", dictionary),
            ("order_id", DataType::Int32),
            ("status", DataType::LargeUtf8),
            ("seq", DataType::Int16),
            ("courier_id", DataType::Utf8View),
            (
                "updated_at",
                DataType::Timestamp(TimeUnit::Millisecond, Some("+01:00".into())),
            ),
        ],
    );
    assert_eq!(
        published(&config).by_date,
        wharf_rows.by_date,
        "read exactly"
    );
    let batch = [event("e9", 2, "PAID", "2024-03-01T20:00:00Z")];
    let out = both_engines(&product, &batch);
    let statuses: Vec<&str> = out.rows[&day("2024-03-01")]
        .iter()
        .map(|r| r["status"].as_str())
        .collect();
    assert_eq!(
        statuses,
        [
            "PENDING", "PAID", "PENDING", "PENDING", "PENDING", "PENDING"
        ]
    );

    let ntz = DataType::Timestamp(TimeUnit::Microsecond, None);
    rewrite_foreign(&product, &[("updated_at", ntz)]);
    let winners = winners(&batch, &config.schema);
    let folders = wharf::store::dataset::HiveFolders(config.lake.publish_root());
    let on_spark = Published::of(&config, &folders, batch_keys(&winners, &config.schema));
    let on_local =
        wharf::store::dataset::Dataset::rows(&folders, day("2024-03-01"), &config.schema);
    for error in [on_spark.unwrap_err(), on_local.unwrap_err()] {
        let text = error.to_string();
        assert!(
            text.contains("column `updated_at`") && text.contains("TIMESTAMP_NTZ"),
            "{text}"
        );
    }
}
