//! The Spark engine's stage: the rows of the plan's dates (the [`WINNERS`](super::winners::WINNERS) view, over
//! the cached keys, in replace mode; the merge's [`MERGED`] view in merge mode) written by Spark
//! into a hidden folder of the staging area, then moved by the driver into the
//! contract's layout: `staging/event_date=D/part-NNNNN.parquet`, rows sorted by key and
//! split into `files_per_date` files exactly as `parquet_files::write_partition` splits
//! them, every file and folder fsynced. Anything else Spark leaves (`_SUCCESS`, `.crc`)
//! goes with the hidden folder. A failed stage removes what it wrote.
//!
//! Spark writes one file per (date, file index) group: the rows are distributed by the
//! group, so each lands whole in one task (a landing of one file, one date's, is gathered
//! into one task without a shuffle), and sorted by it then the key, so the writer keeps
//! the key order.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::events::ident;
use super::session::Session;
use crate::config::Config;
use crate::contract::Date;
use crate::engine::{Staged, WrittenFile};
use crate::error::{Error, Result};
use crate::store::atomic;

/// The view of a merge's whole new rows of its dates, cached for the stage.
pub const MERGED: &str = "wharf_merged";

/// Where Spark writes inside the staging folder: a name hive readers ignore.
const SPARK_OUTPUT: &str = ".wharf-spark-output";

/// Writes the rows of `dates` (each with its row count) from the view `source` into
/// `staging`.
pub fn stage(
    session: &Session,
    config: &Config,
    source: &str,
    dates: &BTreeMap<Date, u64>,
    staging: &Path,
) -> Result<Staged> {
    let output = staging.join(SPARK_OUTPUT);
    let result = write_and_place(session, config, source, dates, staging, &output);
    let cleaned = remove(&output);
    if result.is_err() {
        for date in dates.keys() {
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
    source: &str,
    dates: &BTreeMap<Date, u64>,
    staging: &Path,
    output: &Path,
) -> Result<Staged> {
    if dates.is_empty() {
        return Ok(Staged::default());
    }
    let location = super::uri::file_uri(output, "the staging folder")?;
    remove(output)?;
    write(session, config, source, dates, &location)?;
    let mut staged = Staged::default();
    for (date, rows) in dates {
        let files = place(
            output,
            staging,
            *date,
            files_of(config.files_per_date, *rows),
        )?;
        staged.files.insert(*date, files);
    }
    atomic::sync_dir(staging)?;
    Ok(staged)
}

/// Spark's write of the rows of `dates` from `source` to `location`: one file per
/// `event_date=D/__file=N/` folder.
fn write(
    session: &Session,
    config: &Config,
    source: &str,
    dates: &BTreeMap<Date, u64>,
    location: &str,
) -> Result<()> {
    let mut writer = session
        .frame(&query(config, source, dates), "cannot plan the write")?
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
    writer
        .parquet(location)
        .map_err(|e| session.error("cannot write the staged partitions", &e))
}

/// Parquet's setting of dictionary encoding, for the whole file or (`#column`) a column.
const DICTIONARY: &str = "parquet.enable.dictionary";

/// Writes the rows of `dates` from the view `source` into the table folder at
/// `location` (a URI the executors reach): one file per `event_date=D/__file=N/`, which
/// [`written_files`] finds in the folder's listing.
pub fn stage_in_table(
    session: &Session,
    config: &Config,
    source: &str,
    dates: &BTreeMap<Date, u64>,
    location: &str,
) -> Result<()> {
    if dates.is_empty() {
        return Ok(());
    }
    write(session, config, source, dates, location)
}

/// The data files of `listed` (a table folder's listing after [`stage_in_table`]), each
/// the `N`th file of its date: exactly one Parquet file in every `event_date=D/__file=N/`
/// the split of `dates` calls for, and none elsewhere. Spark's other files (`_SUCCESS`,
/// `.crc`, a failed attempt's `_temporary/`) are not data.
pub fn written_files(
    listed: &[String],
    files_per_date: usize,
    dates: &BTreeMap<Date, u64>,
) -> Result<Vec<WrittenFile>> {
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
    for (date, rows) in dates {
        let (files, _) = files_of(files_per_date, *rows);
        for n in 0..files {
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

/// The files a date of `rows` rows is written as, and the rows in each but the last
/// (`parquet_files::write_partition`'s split).
fn files_of(files_per_date: usize, rows: u64) -> (u64, u64) {
    let files = (files_per_date as u64).clamp(1, rows.max(1));
    let per_file = rows.div_ceil(files).max(1);
    (rows.div_ceil(per_file).max(1), per_file)
}

/// The write's query: the declared fields in order, `event_date` and `__file` (the
/// file index by key order) as partition columns.
fn query(config: &Config, source: &str, dates: &BTreeMap<Date, u64>) -> String {
    let schema = &config.schema;
    let key = ident(&schema.fields[schema.key].name);
    let fields: Vec<String> = schema.fields.iter().map(|f| ident(&f.name)).collect();
    let per_file: Vec<String> = dates
        .iter()
        .map(|(date, rows)| {
            let (_, per_file) = files_of(config.files_per_date, *rows);
            format!("WHEN DATE'{date}' THEN {per_file}")
        })
        .collect();
    let listed: Vec<String> = dates.keys().map(|d| format!("DATE'{d}'")).collect();
    let listed = listed.join(", ");
    // One file per date needs no row number, which would sort each date in one task.
    let one_file = dates
        .values()
        .all(|rows| files_of(config.files_per_date, *rows).0 == 1);
    let numbered = if one_file {
        format!("SELECT *, 0 AS __file FROM {source} WHERE event_date IN ({listed})")
    } else {
        format!(
            "SELECT *, CAST((__k - 1) div (CASE event_date {per_file} END) AS INT) AS __file \
             FROM (SELECT *, row_number() OVER (PARTITION BY event_date ORDER BY {key}) AS __k \
             FROM {source} WHERE event_date IN ({listed}))",
            per_file = per_file.join(" "),
        )
    };
    // A single file (one date, one file: a day's landing) is one task anyway: gathered
    // without a shuffle. Else each (date, file) goes whole to one task.
    let (gather, distribute) = if one_file && dates.len() == 1 {
        ("/*+ COALESCE(1) */ ", "")
    } else {
        ("", "DISTRIBUTE BY event_date, __file ")
    };
    format!(
        "SELECT * FROM (SELECT {gather}{fields}, event_date, __file FROM ({numbered})) \
         {distribute}SORT BY event_date, __file, {key}",
        fields = fields.join(", "),
    )
}

/// Moves date `date`'s Spark files into `staging/event_date=D/part-NNNNN.parquet`;
/// returns how many.
fn place(output: &Path, staging: &Path, date: Date, (files, _): (u64, u64)) -> Result<u64> {
    let folder = staging.join(format!("event_date={date}"));
    atomic::create_dir_all(&folder)?;
    for index in 0..files {
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
        let target = folder.join(format!("part-{index:05}.parquet"));
        atomic::rename(part, &target).map_err(|e| io(&target, "move a staged file into place", e))?;
        File::open(&target)
            .and_then(|f| atomic::sync_file(&f))
            .map_err(|e| io(&target, "fsync a staged file", e))?;
    }
    atomic::sync_dir(&folder)?;
    Ok(files)
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
        let written = written_files(&listed, 2, &dates).unwrap();
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
            let error = written_files(&wrong, 2, &dates).expect_err("not the plan's files");
            assert!(error.to_string().contains("Spark wrote"), "{error}");
        }
    }
}
