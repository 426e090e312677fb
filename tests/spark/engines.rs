//! Both engines over one product: the local engine's plan (`land::plan_input`) and the
//! Spark engine's census, and the rows each stages, read back with the local reader.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use parquet::basic::Encoding;

use wharf::config::Config;
use wharf::contract::{Date, Record};
use wharf::engine::spark::SparkEngine;
use wharf::engine::{Engine, LocalEngine};
use wharf::plan::{Census, DecideOptions, Manifest, Plan};
use wharf::store::parquet_files;

/// The Spark Connect server the suite runs against.
pub fn remote() -> String {
    std::env::var("WHARF_SPARK_REMOTE").unwrap_or_else(|_| "sc://127.0.0.1:15002".into())
}

/// One test at a time talks to the server: a `local[2]` server runs one job well, and
/// a test that changes a session setting must not race another's census.
static SERVER: Mutex<()> = Mutex::new(());

pub fn server() -> MutexGuard<'static, ()> {
    SERVER.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn config(product: &Path) -> Config {
    Config::load(&product.join("wharf.toml")).unwrap()
}

/// The local engine's plan of `input`, and the engine holding its rows for the stage.
pub fn local_plan(config: &Config, input: &Path) -> (Plan, LocalEngine) {
    let mut engine = LocalEngine::new();
    let plan = wharf::land::plan_input(
        config,
        &mut engine,
        input,
        DecideOptions::default(),
        &mut |_| true,
    )
    .unwrap();
    (plan, engine)
}

/// The Spark engine's census of `input`.
pub fn spark_census(engine: &mut SparkEngine, config: &Config, input: &Path) -> Census {
    let input = wharf::input::open(input, wharf::input::SET_MARKER).unwrap();
    engine
        .census(
            config,
            &input,
            &Manifest::default(),
            &wharf::store::dataset::HiveFolders(config.lake.publish_root()),
            &mut |_| true,
        )
        .unwrap()
}

/// What `engine` staged for `plan` into `staging`, read back file by file.
pub fn staged_rows(
    engine: &mut dyn Engine,
    config: &Config,
    plan: &Plan,
    staging: &Path,
) -> Vec<(Date, Vec<Vec<Record>>)> {
    let staged = engine.stage(config, plan, staging, &mut |_| true).unwrap();
    let want: Vec<Date> = plan.dates_with_rows().map(|d| d.event_date).collect();
    assert_eq!(
        staged.files.keys().copied().collect::<Vec<_>>(),
        want,
        "the dates staged"
    );
    read_staged(config, plan, staging)
}

/// What is staged for `plan`'s dates with rows under `staging`, read back file by file.
pub fn read_staged(config: &Config, plan: &Plan, staging: &Path) -> Vec<(Date, Vec<Vec<Record>>)> {
    plan.dates_with_rows()
        .map(|d| d.event_date)
        .map(|date| {
            let dir = staging.join(format!("event_date={date}"));
            (
                date,
                read_files(config, &parquet_files::parquet_paths(&dir).unwrap()),
            )
        })
        .collect()
}

/// The columns each staged file under `staging` dictionary-encodes, file by file in
/// date and name order: the engines write by one rule, not only the same rows.
pub fn dictionary_columns(staging: &Path) -> Vec<Vec<String>> {
    let mut dates: Vec<PathBuf> = std::fs::read_dir(staging)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dates.sort();
    let mut files = Vec::new();
    for date in dates {
        for path in parquet_files::parquet_paths(&date).unwrap() {
            let file = std::fs::File::open(&path).unwrap();
            let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
            let meta = parquet::file::reader::FileReader::metadata(&reader);
            let mut columns: Vec<String> = meta
                .row_groups()
                .iter()
                .flat_map(|group| group.columns())
                .filter(|column| {
                    column
                        .encodings()
                        .any(|e| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY))
                })
                .map(|column| column.column_path().string())
                .collect();
            columns.sort();
            columns.dedup();
            files.push(columns);
        }
    }
    files
}

fn read_files(config: &Config, paths: &[PathBuf]) -> Vec<Vec<Record>> {
    paths
        .iter()
        .map(|path| {
            // The reader reads a folder: each file alone in one.
            let one = tempfile::tempdir().unwrap();
            std::fs::copy(path, one.path().join("part.parquet")).unwrap();
            parquet_files::read_partition(one.path(), &config.schema).unwrap()
        })
        .collect()
}

/// The census's counts, findings and dates against the plan's.
pub fn assert_census_matches(census: &Census, plan: &Plan, what: &str) {
    assert_eq!(census.sha256, plan.input_sha256, "{what}: sha256");
    assert_eq!(census.counts, plan.counts, "{what}: counts");
    assert_eq!(census.findings, plan.findings, "{what}: findings");
    // Rows per date, and by hour (the console's picture of the day).
    let dates: Vec<_> = census
        .dates
        .iter()
        .map(|(d, c)| (*d, c.rows, c.by_hour))
        .collect();
    let want: Vec<_> = plan
        .dates
        .iter()
        .map(|d| (d.event_date, d.rows, d.by_hour))
        .collect();
    assert_eq!(dates, want, "{what}: dates");
}
