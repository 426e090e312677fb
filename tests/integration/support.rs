//! A temporary product: config, inbox, roots; running the real `wharf` binary; reading
//! back Parquet rows and whole folders byte for byte.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

/// The sample product's config; its `[schema]` part is every test product's schema.
const SAMPLE: &str = include_str!("../../samples/wharf.toml");

/// The `[schema]` part of the sample config.
pub fn schema() -> &'static str {
    &SAMPLE[SAMPLE
        .find("[schema]")
        .expect("the sample config has a [schema] table")..]
}

/// A product in a temporary folder.
pub struct Product {
    pub dir: tempfile::TempDir,
}

/// A finished `wharf` process.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// stdout parsed as one JSON object.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }
}

impl Product {
    /// A product with the contract's defaults plus `settings` (TOML lines).
    pub fn new(settings: &str) -> Product {
        let dir = tempfile::tempdir().unwrap();
        let config = format!("product = \"orders\"\n{settings}\n{}", schema());
        fs::write(dir.path().join("wharf.toml"), config).unwrap();
        fs::create_dir_all(dir.path().join("inbox")).unwrap();
        Product { dir }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn config(&self) -> PathBuf {
        self.path("wharf.toml")
    }

    pub fn lake(&self) -> PathBuf {
        self.path("lake/orders")
    }

    pub fn state(&self) -> PathBuf {
        self.path("state/orders")
    }

    /// Writes `lines` (each followed by `\n`) as inbox file `name`.
    pub fn input(&self, name: &str, lines: &[&str]) -> PathBuf {
        let mut text = lines.join("\n");
        text.push('\n');
        self.input_bytes(name, text.as_bytes())
    }

    pub fn input_bytes(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path("inbox").join(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    /// Runs `wharf <args> --config <this product's config>`.
    pub fn wharf(&self, args: &[&str]) -> Ran {
        let config = self.config();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--config", config.to_str().unwrap()]);
        wharf(&all)
    }

    /// `wharf run INPUT --json`.
    pub fn run(&self, input: &Path) -> Ran {
        self.wharf(&["run", input.to_str().unwrap(), "--json"])
    }

    /// `wharf plan INPUT --json`.
    pub fn plan(&self, input: &Path) -> Ran {
        self.wharf(&["plan", input.to_str().unwrap(), "--json"])
    }

    /// Rows of one date, read back from its Parquet files, in file order.
    pub fn rows(&self, date: &str) -> Vec<BTreeMap<String, String>> {
        read_rows(&self.lake().join(format!("event_date={date}")))
    }

    /// Every file under `relative` with its bytes.
    pub fn snapshot(&self, relative: &str) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.path(relative))
    }

    /// The checkpoint of input `name`, parsed.
    pub fn checkpoint(&self, name: &str) -> Option<Value> {
        let path = self
            .state()
            .join("checkpoints")
            .join(format!("{name}.json"));
        fs::read(path)
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap())
    }

    /// The quarantine `rejects.jsonl` of hash `sha`, one JSON object per line.
    pub fn rejects(&self, sha: &str) -> Vec<Value> {
        let path = self
            .path("quarantine/orders")
            .join(sha)
            .join("rejects.jsonl");
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The published dates (folder names without `event_date=`).
    pub fn dates(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.lake()) else {
            return Vec::new();
        };
        let mut dates: Vec<String> = entries
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("event_date=")
                    .map(str::to_owned)
            })
            .collect();
        dates.sort();
        dates
    }
}

/// Runs the `wharf` binary with `args`.
pub fn wharf(args: &[&str]) -> Ran {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(args)
        .env_remove("WHARF_FAILPOINT")
        .output()
        .unwrap();
    Ran {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Every row of every `*.parquet` file in `folder`, as column → text.
pub fn read_rows(folder: &Path) -> Vec<BTreeMap<String, String>> {
    let mut files: Vec<PathBuf> = fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for file in files {
        let reader = SerializedFileReader::new(fs::File::open(&file).unwrap()).unwrap();
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap();
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

/// Every file under `root` with its bytes (empty when `root` is absent).
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(root).unwrap().to_owned(),
                    fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
}

/// One event line of the sample schema.
pub fn event(id: &str, order: i64, status: &str, at: &str) -> String {
    format!(r#"{{"event_id":"{id}","order_id":{order},"status":"{status}","updated_at":"{at}"}}"#)
}

/// One event line with a `seq`.
pub fn event_seq(id: &str, order: i64, status: &str, at: &str, seq: i64) -> String {
    format!(
        r#"{{"event_id":"{id}","order_id":{order},"status":"{status}","updated_at":"{at}","seq":{seq}}}"#
    )
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
