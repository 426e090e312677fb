//! Merge mode's copy-on-write by file on the Spark engine (CONTRACT.md §10.4–5):
//!
//! - the same merge batches on both engines, on a hive root and a local Delta table, give
//!   the same plan (every count, the files read and rewritten), the same files file by
//!   file, and carry the same files over untouched: a date several files long is partly
//!   rewritten (hive links the rest into its new generation; the Delta commit removes
//!   only the rewritten files);
//! - every file the Spark engine writes has the key column's min/max statistics and a
//!   bloom filter on it, read back through `store::key_files`, the code merges find keys by;
//! - 50 micro-batches merged one by one on Spark, on a hive root and on a Delta table,
//!   publish what the whole day landed at once does, and every key lives on exactly one
//!   date.
//!
//! Scaled down (hundreds of keys, `target_file_rows` of tens) so that a date holds many
//! files; the landings run in this process, one Spark session for a whole sequence.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::RowAccessor;
use wharf::config::Config;
use wharf::contract::Value;
use wharf::engine::spark::SparkEngine;
use wharf::engine::{Engine, LocalEngine};
use wharf::plan::{DecideOptions, Plan};
use wharf::store::key_files::{Footer, fetch_local};

use crate::delta::{Rows, commits, delta_config, delta_rows, live_files};
use crate::engines;
use crate::kit::{Product, day_of_orders, event, parquet_rows, read_rows};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Hive,
    Delta,
}

fn product(format: Format, settings: &str) -> Product {
    let settings = format!("write_mode = \"merge\"\nmax_dates = 3\n{settings}");
    match format {
        Format::Hive => Product::with_settings(&settings),
        Format::Delta => Product::with_config(&delta_config(&settings)),
    }
}

fn spark() -> SparkEngine {
    SparkEngine::connect_to(&engines::remote()).unwrap()
}

/// Lands `lines` as inbox file `name` with `engine`, in this process; its plan.
fn land(product: &Product, engine: &mut dyn Engine, name: &str, lines: &[String]) -> Plan {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let input = product.input(name, &lines);
    let config = Config::load(&product.config).unwrap();
    let options = DecideOptions::default();
    wharf::land::run(&config, engine, &input, options, &mut |_| true)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .plan
}

/// The published data files by date, as the format's readers find them.
fn files(product: &Product, format: Format) -> BTreeMap<String, Vec<PathBuf>> {
    let mut by_date: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut add = |relative: &str| {
        let (folder, _) = relative.split_once('/').unwrap();
        let date = folder.trim_start_matches("event_date=").to_owned();
        by_date
            .entry(date)
            .or_default()
            .push(product.publish.join(relative));
    };
    match format {
        Format::Hive => {
            for (date, _) in product.snapshot().rows {
                let folder = product.publish.join(format!("event_date={date}"));
                for entry in std::fs::read_dir(&folder).unwrap() {
                    let name = entry.unwrap().file_name().into_string().unwrap();
                    if name.ends_with(".parquet") {
                        add(&format!("event_date={date}/{name}"));
                    }
                }
            }
        }
        Format::Delta => live_files(&product.publish).iter().for_each(|p| add(p)),
    }
    by_date
}

/// A file's footer, as a merge reads it.
fn footer(path: &Path, config: &Config) -> Footer {
    let len = std::fs::metadata(path).unwrap().len();
    let name = path.file_name().unwrap().to_str().unwrap();
    Footer::read(name, len, &config.schema, &mut fetch_local(path)).unwrap()
}

/// Each date's files in key order (by their footers' smallest key), each as its rows in
/// file order: what the engines must write alike, file by file.
fn layout(product: &Product, format: Format) -> BTreeMap<String, Vec<Vec<String>>> {
    let config = Config::load(&product.config).unwrap();
    files(product, format)
        .into_iter()
        .map(|(date, paths)| {
            let mut keyed: Vec<(Option<Value>, Vec<String>)> = paths
                .iter()
                .map(|p| (footer(p, &config).min().cloned(), parquet_rows(p)))
                .collect();
            keyed.sort();
            (date, keyed.into_iter().map(|(_, rows)| rows).collect())
        })
        .collect()
}

/// What both engines' plans must agree on: the counts, and per date everything but when
/// its owner landed.
fn agreed(plan: &Plan) -> String {
    let dates: Vec<String> = plan
        .dates
        .iter()
        .map(|d| {
            format!(
                "{} rows {} before {:?} {:?} {:?}",
                d.event_date, d.rows, d.rows_before, d.merge, d.by_hour
            )
        })
        .collect();
    format!("{:?} {:?}\n{}", plan.action, plan.counts, dates.join("\n"))
}

fn order(key: i64) -> i64 {
    key * 3
}

/// A first day of 300 orders, then batches that update a narrow key range, move a few
/// orders to the next day, add orders past the last and one between two published keys,
/// bring a late (stale) event, and finally restate rows already published.
fn batches() -> Vec<(&'static str, Vec<String>)> {
    let at = |day: u32, hour: u32| format!("2024-03-0{day}T{hour:02}:00:00Z");
    let first = (1..=300)
        .map(|k| event(&format!("a{k}"), order(k), "PENDING", &at(1, 8)))
        .collect();
    let mut second: Vec<String> = (100..=110)
        .map(|k| event(&format!("u{k}"), order(k), "PAID", &at(1, 12)))
        .collect();
    second.extend((200..=203).map(|k| event(&format!("m{k}"), order(k), "SHIPPED", &at(2, 1))));
    second.extend((400..=420).map(|k| event(&format!("n{k}"), order(k), "PENDING", &at(1, 13))));
    let third = vec![
        event("late5", order(5), "CANCELLED", &at(1, 7)),
        event("between", order(150) + 1, "PENDING", &at(1, 14)),
        event("day2", order(201), "DELIVERED", &at(2, 5)),
    ];
    let restated = second[..5].to_vec();
    vec![
        ("b1.jsonl", first),
        ("b2.jsonl", second),
        ("b3.jsonl", third),
        ("b4.jsonl", restated),
    ]
}

/// Each file's inode by path: a file carried into a hive generation is a link to it.
fn inodes(paths: &[PathBuf]) -> BTreeSet<u64> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().ino())
        .collect()
}

fn both_engines_rewrite_the_same_files(format: Format) {
    let _server = engines::server();
    let settings = "target_file_rows = 40";
    let (local, spark_product) = (product(format, settings), product(format, settings));
    let (mut by_local, mut by_spark) = (LocalEngine::new(), spark());
    let mut partly = 0;
    for (name, lines) in batches() {
        let before = files(&spark_product, format);
        let linked: BTreeMap<&String, BTreeSet<u64>> =
            before.iter().map(|(d, paths)| (d, inodes(paths))).collect();
        let on_local = land(&local, &mut by_local, name, &lines);
        let on_spark = land(&spark_product, &mut by_spark, name, &lines);
        assert_eq!(agreed(&on_spark), agreed(&on_local), "{name}: the plans");
        assert_eq!(
            layout(&spark_product, format),
            layout(&local, format),
            "{name}: the files, file by file"
        );
        let after = files(&spark_product, format);
        for date in &on_spark.dates {
            let merge = date.merge.unwrap();
            let key = date.event_date.to_string();
            let had = before.get(&key).map_or(0, Vec::len) as u64;
            assert!(merge.files_read <= had && merge.files_rewritten <= merge.files_read);
            if merge.files_rewritten == 0 || merge.files_rewritten == had {
                continue;
            }
            partly += 1;
            // The files the batch did not rewrite are the date's still, untouched.
            let kept = had - merge.files_rewritten;
            let (old, new) = (&before[&key], &after[&key]);
            match format {
                Format::Hive => {
                    let same = linked[&key].intersection(&inodes(new)).count() as u64;
                    assert_eq!(same, kept, "{name} {key}: files carried by link");
                }
                Format::Delta => assert_eq!(
                    old.iter().filter(|p| new.contains(p)).count() as u64,
                    kept,
                    "{name} {key}: files the commit kept"
                ),
            }
        }
        if format == Format::Delta {
            let log = commits(&spark_product.publish);
            let removed = log
                .last()
                .unwrap()
                .iter()
                .filter(|a| a.get("remove").is_some());
            let rewritten: u64 = on_spark
                .dates
                .iter()
                .map(|d| d.merge.unwrap().files_rewritten)
                .sum();
            assert_eq!(
                removed.count() as u64,
                rewritten,
                "{name}: the commit removes only the rewritten files"
            );
        }
    }
    assert!(partly >= 2, "the batches rewrite dates in part: {partly}");
    assert_files_carry_stats_and_filters(&spark_product, format);
}

#[test]
fn both_engines_rewrite_the_same_files_of_a_hive_root() {
    both_engines_rewrite_the_same_files(Format::Hive);
}

#[test]
fn both_engines_rewrite_the_same_files_of_a_delta_table() {
    both_engines_rewrite_the_same_files(Format::Delta);
}

/// Every published file has the key column's min and max and a bloom filter on it that
/// holds each of its keys and rules out nearly every absent key of its range.
fn assert_files_carry_stats_and_filters(product: &Product, format: Format) {
    let config = Config::load(&product.config).unwrap();
    let (mut probed, mut passed) = (0, 0);
    for path in files(product, format).into_values().flatten() {
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let key = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.name() == "order_id")
            .unwrap();
        for group in reader.metadata().row_groups() {
            assert!(
                group.column(key).bloom_filter_offset().is_some(),
                "{}: no bloom filter on the key",
                path.display()
            );
        }
        let footer = footer(&path, &config);
        let (Some(Value::Int(min)), Some(Value::Int(max))) = (footer.min(), footer.max()) else {
            panic!("{}: no key statistics", path.display());
        };
        let (min, max) = (*min, *max);
        let held: BTreeSet<i64> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().get_long(key).unwrap())
            .collect();
        let mut fetch = fetch_local(&path);
        for key in min..=max {
            let may = footer.may_hold(&[Value::Int(key)], &mut fetch).unwrap();
            if held.contains(&key) {
                assert!(may, "{}: the filter lost key {key}", path.display());
            } else {
                probed += 1;
                passed += u64::from(may);
            }
        }
        assert!(!footer.may_hold(&[Value::Int(max + 1)], &mut fetch).unwrap());
    }
    assert!(probed > 100, "absent keys probed: {probed}");
    assert!(
        passed * 10 < probed,
        "{passed} of {probed} absent keys pass the filters"
    );
}

fn batches_equal_the_day_at_once(format: Format, batches: usize) {
    let _server = engines::server();
    let settings = "target_file_rows = 60";
    let lines = day_of_orders(400, 7);
    let mut engine = spark();
    let whole = product(format, settings);
    land(&whole, &mut engine, "day.jsonl", &lines);
    let batched = product(format, settings);
    for (n, chunk) in lines.chunks(lines.len().div_ceil(batches)).enumerate() {
        land(&batched, &mut engine, &format!("b{n:02}.jsonl"), chunk);
    }
    let (want, got) = (rows(&whole, format), rows(&batched, format));
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        ["2024-03-01", "2024-03-02"]
    );
    assert!(
        files(&whole, format)["2024-03-01"].len() > 3,
        "several files a date"
    );
    let sizes = |rows: &Rows| -> Vec<(String, usize)> {
        rows.iter().map(|(d, r)| (d.clone(), r.len())).collect()
    };
    assert_eq!(sizes(&got), sizes(&want), "{format:?}: rows per date");
    assert!(
        got == want,
        "{format:?}: {batches} batches and the day at once differ"
    );
    let mut seen = BTreeMap::new();
    for (date, day) in &got {
        for row in day {
            if let Some(other) = seen.insert(row["order_id"].clone(), date.clone()) {
                panic!("order {} on {other} and {date}", row["order_id"]);
            }
        }
    }
}

/// The published rows by date, sorted, as a reader of the format sees them.
fn rows(product: &Product, format: Format) -> Rows {
    match format {
        Format::Hive => product
            .snapshot()
            .rows
            .into_keys()
            .map(|date| {
                let mut rows = read_rows(&product.publish.join(format!("event_date={date}")));
                rows.sort();
                (date, rows)
            })
            .collect(),
        Format::Delta => delta_rows(&product.publish),
    }
}

#[test]
fn fifty_micro_batches_on_spark_equal_the_day_landed_at_once_on_hive() {
    batches_equal_the_day_at_once(Format::Hive, 50);
}

#[test]
fn fifty_micro_batches_on_spark_equal_the_day_landed_at_once_on_delta() {
    batches_equal_the_day_at_once(Format::Delta, 50);
}
