//! Reading back what was published: a [`Dataset`] (every partition's files and rows, as a
//! hive reader sees the publish root), one Parquet file's rows rendered as text
//! ([`parquet_rows`]) or column by column ([`read_rows`]), and helpers to compare them.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};

/// What readers see under a publish root: per date, its files' bytes and its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// `event_date=D/part-N.parquet` → bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// date → rows (each rendered field by field), in file order.
    pub rows: BTreeMap<String, Vec<String>>,
}

impl Dataset {
    /// Reads every `event_date=*` partition under `root` (entries starting with `.` or
    /// `_` skipped, as hive readers do). Panics when a partition holds anything but readable
    /// `part-NNNNN.parquet` files, or the root holds anything but partitions and
    /// hidden entries.
    pub fn read(root: &Path) -> Dataset {
        let mut data = Dataset {
            files: BTreeMap::new(),
            rows: BTreeMap::new(),
        };
        let Ok(entries) = fs::read_dir(root) else {
            return data;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            if name.starts_with(['.', '_']) {
                continue; // hidden from hive readers (Spark, pyarrow skip both prefixes)
            }
            let date = name
                .strip_prefix("event_date=")
                .unwrap_or_else(|| panic!("reader-visible stray entry {name} in the publish root"));
            assert!(
                entry.file_type().unwrap().is_dir(),
                "{name} is not a folder"
            );
            let mut parts: Vec<_> = fs::read_dir(entry.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            parts.sort();
            let mut rows = Vec::new();
            for part in parts {
                assert!(
                    part.starts_with("part-") && part.ends_with(".parquet"),
                    "stray file {name}/{part} visible to readers"
                );
                let path = entry.path().join(&part);
                let bytes = fs::read(&path).unwrap();
                rows.extend(cached_rows(&path, &bytes));
                data.files.insert(format!("{name}/{part}"), bytes);
            }
            data.rows.insert(date.to_owned(), rows);
        }
        data
    }

    pub fn row_count(&self) -> usize {
        self.rows.values().map(Vec::len).sum()
    }
}

/// The rows of a Parquet file whose bytes are `bytes`: files byte-identical to one
/// already read have its rows (the kill loop reads the same few files thousands of
/// times).
fn cached_rows(path: &Path, bytes: &[u8]) -> Vec<String> {
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Vec<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(rows) = cache.lock().unwrap().get(bytes) {
        return rows.clone();
    }
    let rows = parquet_rows(path);
    cache.lock().unwrap().insert(bytes.to_vec(), rows.clone());
    rows
}

/// Every row of one Parquet file (a panic if it does not read).
fn file_rows(path: &Path) -> Vec<Row> {
    let file = fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = SerializedFileReader::new(file)
        .unwrap_or_else(|e| panic!("{} is not readable Parquet: {e}", path.display()));
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| row.unwrap())
        .collect()
}

/// Every row of one Parquet file, rendered as text.
pub fn parquet_rows(path: &Path) -> Vec<String> {
    file_rows(path).iter().map(Row::to_string).collect()
}

/// Every row of every `*.parquet` file in `folder` (in name order), as column → text;
/// null columns left out.
pub fn read_rows(folder: &Path) -> Vec<BTreeMap<String, String>> {
    let mut files: Vec<PathBuf> = fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for file in files {
        for row in file_rows(&file) {
            let mut out = BTreeMap::new();
            for (name, field) in row.get_column_iter() {
                let text = match field {
                    Field::Null => continue,
                    Field::Str(s) => s.clone(),
                    Field::Long(n) => n.to_string(),
                    Field::TimestampMicros(us) => us.to_string(),
                    other => format!("{other:?}"),
                };
                out.insert(name.clone(), text);
            }
            rows.push(out);
        }
    }
    rows
}

/// Micros since the epoch of an RFC 3339 instant, as the published column holds it.
pub fn micros(rfc3339: &str) -> String {
    let instant = wharf::contract::timestamp::parse(rfc3339).unwrap();
    instant.micros().to_string()
}

/// (order_id, status) of each row.
pub fn statuses(rows: &[BTreeMap<String, String>]) -> Vec<(i64, String)> {
    rows.iter()
        .map(|r| (r["order_id"].parse().unwrap(), r["status"].clone()))
        .collect()
}
