//! The Spark engine's stage: the rows of the plan's dates (the [`WINNERS`](super::winners::WINNERS) view, over
//! the cached keys, in replace mode; the merge's [`MERGED`] view in merge mode) written by Spark
//! into a hidden folder of the staging area, then moved by the driver into the
//! contract's layout: `staging/event_date=D/part-NNNNN.parquet`, rows sorted by key and
//! cut into files by [`Split`] (the local engine's one rule: `files_per_date` files in
//! replace mode; in merge mode only the rewritten buckets, each by `target_file_rows`,
//! numbered by their place among the date's files), every file and folder fsynced.
//! Anything else Spark leaves (`_SUCCESS`, `.crc`) goes with the hidden folder. A failed
//! stage removes what it wrote.
//!
//! Spark writes one file per (date, file number) group: the rows are distributed by the
//! group, so each lands whole in one task (a landing of one file, one date's, is gathered
//! into one task without a shuffle), and sorted by it then the key, so the writer keeps
//! the key order. Every file carries the key column's min/max statistics and a bloom
//! filter on it, which merge mode finds keys by (§10.5).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::events::ident;
use super::session::Session;
use crate::config::Config;
use crate::contract::Date;
use crate::engine::local::parquet::part_name;
use crate::engine::{Staged, WrittenFile};
use crate::error::{Error, Result};
use crate::plan::split::Split;
use crate::store::atomic;

/// The view of a merge's new rows of the files it reads, cached for the stage.
pub const MERGED: &str = "wharf_merged";

/// Where Spark writes inside the staging folder: a name hive readers ignore.
const SPARK_OUTPUT: &str = ".wharf-spark-output";

/// A run of a date's rows written as files: the rows of bucket `bucket` (in replace mode
/// the date's every row, bucket 0), in key order, cut by `split` into files numbered from
/// `first` (their places among the date's files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub bucket: usize,
    pub first: u64,
    pub split: Split,
}

impl Run {
    /// The numbers of its files.
    fn files(&self) -> std::ops::Range<u64> {
        self.first..self.first + self.split.files
    }
}

/// What a stage writes: from the view `source`, whose SQL expression `bucket` gives each
/// row's bucket, each date's runs (a date with none gets an empty folder: merge mode's
/// date whose every file carries over or empties).
#[derive(Clone, Debug)]
pub struct Job {
    pub source: &'static str,
    pub bucket: &'static str,
    pub runs: BTreeMap<Date, Vec<Run>>,
}

impl Job {
    /// Replace mode: each date's rows (each with its count) whole, in `files_per_date`
    /// files.
    pub fn whole(source: &'static str, dates: &BTreeMap<Date, u64>, files_per_date: usize) -> Job {
        let runs = dates
            .iter()
            .map(|(date, rows)| {
                let split = Split::into_files(*rows, files_per_date as u64);
                let run = Run {
                    bucket: 0,
                    first: 0,
                    split,
                };
                (*date, vec![run])
            })
            .collect();
        Job {
            source,
            bucket: "0",
            runs,
        }
    }
}

/// Writes `job` into `staging`; the files written per date.
pub fn stage(session: &Session, config: &Config, job: &Job, staging: &Path) -> Result<Staged> {
    let output = staging.join(SPARK_OUTPUT);
    let result = write_and_place(session, config, job, staging, &output);
    let cleaned = remove(&output);
    if result.is_err() {
        for date in job.runs.keys() {
            let _ = remove(&staging.join(format!("event_date={date}")));
        }
    }
    let staged = result?;
    cleaned?;
    Ok(staged)
}

fn write_and_place(
    session: &Session,
    config: &Config,
    job: &Job,
    staging: &Path,
    output: &Path,
) -> Result<Staged> {
    if job.runs.is_empty() {
        return Ok(Staged::default());
    }
    let location = super::uri::file_uri(output, "the staging folder")?;
    remove(output)?;
    if job.runs.values().flatten().any(|run| run.split.files > 0) {
        write(session, config, job, &location)?;
    }
    let mut staged = Staged::default();
    for (date, runs) in &job.runs {
        staged.files.insert(*date, place(output, staging, *date, runs)?);
    }
    atomic::sync_dir(staging)?;
    Ok(staged)
}

/// Spark's write of `job` to `location`: one file per `event_date=D/__file=N/` folder,
/// each with the key column's statistics and bloom filter.
fn write(session: &Session, config: &Config, job: &Job, location: &str) -> Result<()> {
    let mut writer = session
        .frame(&query(config, job), "cannot plan the write")?
        .write()
        .mode("errorifexists")
        .partition_by(["event_date", "__file"])
        // Parquet's own per-column setting (`name#column`): dictionaries only where the
        // local engine has them, which also spares the one task of a date the work of
        // building and dropping them on unique values.
        .option(DICTIONARY, "false");
    let schema = &config.schema;
    for (index, field) in schema.fields.iter().enumerate() {
        if schema.dictionary_encoded(index) {
            writer = writer.option(&format!("{DICTIONARY}#{}", field.name), "true");
        }
    }
    // The filter is sized for the largest file: one setting serves the whole write.
    let key = &schema.fields[schema.key].name;
    let largest = job.runs.values().flatten().map(|r| r.split.per).max();
    writer
        .option(&format!("{BLOOM_FILTER}#{key}"), "true")
        .option(
            &format!("{BLOOM_FILTER_NDV}#{key}"),
            &largest.unwrap_or(1).to_string(),
        )
        .option(
            &format!("{BLOOM_FILTER_FPP}#{key}"),
            &crate::engine::local::parquet::KEY_FILTER_FPP.to_string(),
        )
        .parquet(location)
        .map_err(|e| session.error("cannot write the staged partitions", &e))
}

/// Parquet's setting of dictionary encoding, for the whole file or (`#column`) a column.
const DICTIONARY: &str = "parquet.enable.dictionary";
/// Parquet's settings of a column's bloom filter (`#column`): on, the distinct values
/// it is sized for, and its false-positive rate.
const BLOOM_FILTER: &str = "parquet.bloom.filter.enabled";
const BLOOM_FILTER_NDV: &str = "parquet.bloom.filter.expected.ndv";
const BLOOM_FILTER_FPP: &str = "parquet.bloom.filter.fpp";

/// Writes `job` into the table folder at `location` (a URI the executors reach): one file
/// per `event_date=D/__file=N/`, which [`written_files`] finds in the folder's listing.
pub fn stage_in_table(session: &Session, config: &Config, job: &Job, location: &str) -> Result<()> {
    if !job.runs.values().flatten().any(|run| run.split.files > 0) {
        return Ok(());
    }
    write(session, config, job, location)
}

/// The data files of `listed` (a table folder's listing after [`stage_in_table`]), each
/// the `N`th file of its date: exactly one Parquet file in every `event_date=D/__file=N/`
/// the runs of `job` call for, and none elsewhere. Spark's other files (`_SUCCESS`,
/// `.crc`, a failed attempt's `_temporary/`) are not data.
pub fn written_files(listed: &[String], job: &Job) -> Result<Vec<WrittenFile>> {
    let mut found: BTreeMap<(Date, u64), Vec<&str>> = BTreeMap::new();
    for path in listed {
        let mut segments = path.split('/');
        let (Some(date), Some(file), Some(name), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            continue;
        };
        if !name.ends_with(".parquet") || name.starts_with(['.', '_']) {
            continue;
        }
        let date = date.strip_prefix("event_date=").and_then(Date::parse);
        let file = file.strip_prefix("__file=").and_then(|n| n.parse().ok());
        let (Some(date), Some(file)) = (date, file) else {
            continue;
        };
        found.entry((date, file)).or_default().push(path);
    }
    let mut written = Vec::new();
    for (date, runs) in &job.runs {
        for n in runs.iter().flat_map(Run::files) {
            let paths = found.remove(&(*date, n)).unwrap_or_default();
            let [path] = paths.as_slice() else {
                return Err(Error::internal(format!(
                    "Spark wrote {} files for file {n} of {date}, one expected",
                    paths.len()
                )));
            };
            written.push(WrittenFile {
                date: *date,
                n,
                path: (*path).to_owned(),
            });
        }
    }
    if let Some(((date, n), _)) = found.into_iter().next() {
        return Err(Error::internal(format!(
            "Spark wrote file {n} of {date}, which the plan does not call for"
        )));
    }
    Ok(written)
}

/// The write's query: the declared fields in order, `event_date` and `__file` (the file's
/// number among its date's, by [`Split::file_of`] over each row's place in its bucket's key
/// order) as partition columns; rows of a bucket no run writes are left out.
fn query(config: &Config, job: &Job) -> String {
    let schema = &config.schema;
    let key = ident(&schema.fields[schema.key].name);
    let fields: Vec<String> = schema.fields.iter().map(|f| ident(&f.name)).collect();
    let runs = || job.runs.iter().flat_map(|(d, runs)| runs.iter().map(move |r| (d, r)));
    // One file a bucket needs no row number, which would sort each bucket in one task.
    let one_file = runs().all(|(_, run)| run.split.files <= 1);
    let cases: Vec<String> = runs()
        .filter(|(_, run)| run.split.files > 0)
        .map(|(date, run)| {
            let file = match one_file {
                true => run.first.to_string(),
                false => format!("{} + (__k - 1) div {}", run.first, run.split.per),
            };
            format!(
                "WHEN event_date = DATE'{date}' AND __bucket = {} THEN {file} ",
                run.bucket
            )
        })
        .collect();
    let listed: Vec<String> = job.runs.keys().map(|d| format!("DATE'{d}'")).collect();
    let bucketed = format!(
        "SELECT *, {} AS __bucket FROM {} WHERE event_date IN ({})",
        job.bucket,
        job.source,
        listed.join(", ")
    );
    let numbered = match one_file {
        true => bucketed,
        false => format!(
            "SELECT *, row_number() OVER (PARTITION BY event_date, __bucket ORDER BY {key}) \
             AS __k FROM ({bucketed})"
        ),
    };
    let filed = format!(
        "SELECT *, CAST(CASE {}END AS INT) AS __file FROM ({numbered})",
        cases.concat()
    );
    // A single file (one date, one file: a day's landing) is one task anyway: gathered
    // without a shuffle. Else each (date, file) goes whole to one task.
    let (gather, distribute) = if one_file && cases.len() == 1 {
        ("/*+ COALESCE(1) */ ", "")
    } else {
        ("", "DISTRIBUTE BY event_date, __file ")
    };
    format!(
        "SELECT * FROM (SELECT {gather}{fields}, event_date, __file FROM ({filed}) \
         WHERE __file IS NOT NULL) {distribute}SORT BY event_date, __file, {key}",
        fields = fields.join(", "),
    )
}

/// Moves date `date`'s Spark files of `runs` into `staging/event_date=D/`, each under its
/// number's contract name; returns how many.
fn place(output: &Path, staging: &Path, date: Date, runs: &[Run]) -> Result<u64> {
    let folder = staging.join(format!("event_date={date}"));
    atomic::create_dir_all(&folder)?;
    let mut placed = 0;
    for index in runs.iter().flat_map(Run::files) {
        let written = output
            .join(format!("event_date={date}"))
            .join(format!("__file={index}"));
        let parts = parquet_files_in(&written)?;
        let [part] = parts.as_slice() else {
            return Err(Error::internal(format!(
                "Spark wrote {} files for file {index} of {date}, one expected",
                parts.len()
            )));
        };
        let target = folder.join(part_name(index));
        atomic::rename(part, &target).map_err(|e| io(&target, "move a staged file into place", e))?;
        File::open(&target)
            .and_then(|f| atomic::sync_file(&f))
            .map_err(|e| io(&target, "fsync a staged file", e))?;
        placed += 1;
    }
    atomic::sync_dir(&folder)?;
    Ok(placed)
}

/// The Parquet files Spark wrote in `folder` (not its hidden `.crc` companions).
fn parquet_files_in(folder: &Path) -> Result<Vec<PathBuf>> {
    let entries = fs::read_dir(folder).map_err(|e| io(folder, "list what Spark wrote", e))?;
    let mut parts = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| io(folder, "list what Spark wrote", e))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or(".");
        if name.ends_with(".parquet") && !name.starts_with(['.', '_']) {
            parts.push(path);
        }
    }
    Ok(parts)
}

/// Removes `path` and everything in it; absent is fine.
fn remove(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io(path, "remove what the stage wrote", e))
        }
        _ => Ok(()),
    }
}

fn io(path: &Path, action: &'static str, e: std::io::Error) -> Error {
    Error::io(
        path,
        action,
        "check that the staging folder is on a file system Wharf and the Spark executors share, and writable",
        e,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> Date {
        Date::parse(text).unwrap()
    }

    #[test]
    fn the_written_files_are_one_a_split_and_spark_s_other_files_are_not_data() {
        let dates = BTreeMap::from([(date("2024-03-01"), 5), (date("2024-03-02"), 1)]);
        let listed: Vec<String> = [
            "_SUCCESS",
            "event_date=2024-03-01/__file=0/part-00000-a.c000.parquet",
            "event_date=2024-03-01/__file=0/.part-00000-a.c000.parquet.crc",
            "event_date=2024-03-01/__file=1/part-00001-a.c000.parquet",
            "event_date=2024-03-02/__file=0/part-00002-a.c000.parquet",
            "_temporary/0/_temporary/attempt_1/event_date=2024-03-02/__file=0/part-9.parquet",
        ]
        .map(str::to_owned)
        .to_vec();
        let job = Job::whole(MERGED, &dates, 2);
        let written = written_files(&listed, &job).unwrap();
        let got: Vec<(String, u64, &str)> = written
            .iter()
            .map(|f| (f.date.to_string(), f.n, f.path.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("2024-03-01".into(), 0, listed[1].as_str()),
                ("2024-03-01".into(), 1, listed[3].as_str()),
                ("2024-03-02".into(), 0, listed[4].as_str()),
            ]
        );
        // A missing split file, a second file in one, or a file the plan does not call
        // for: the run wrote other than the plan, and nothing is committed.
        for (drop, add) in [
            (Some(3), None),
            (None, Some("event_date=2024-03-02/__file=0/part-00003-b.c000.parquet")),
            (None, Some("event_date=2024-03-03/__file=0/part-00004-b.c000.parquet")),
        ] {
            let mut wrong = listed.clone();
            if let Some(index) = drop {
                wrong.remove(index);
            }
            wrong.extend(add.map(str::to_owned));
            let error = written_files(&wrong, &job).expect_err("not the plan's files");
            assert!(error.to_string().contains("Spark wrote"), "{error}");
        }
    }
}
