//! Shared fixtures of the proof tests: a [`Product`] in a temp folder, the `wharf`
//! binary, the deterministic generator, a [`Dataset`] snapshot read back from Parquet
//! (rows and bytes), [`check_invariants`] after a crash, and a tiny seeded RNG.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parquet::file::reader::{FileReader, SerializedFileReader};

/// The sample config (CONTRACT.md's defaults), relative roots.
pub const CONFIG: &str = include_str!("../../samples/wharf.toml");

/// One product in its own temp folder: `wharf.toml`, `inbox/`, and the roots the
/// config names (created by wharf itself).
pub struct Product {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    pub publish: PathBuf,
    pub state: PathBuf,
    pub quarantine: PathBuf,
}

impl Product {
    /// A product with the sample config.
    pub fn new() -> Product {
        Product::with_config(CONFIG)
    }

    /// A product whose config text is `config` (roots as the sample's).
    pub fn with_config(config: &str) -> Product {
        let dir = tempfile::Builder::new()
            .prefix("wharf-proof-")
            .tempdir()
            .unwrap();
        fs::create_dir_all(dir.path().join("inbox")).unwrap();
        let path = dir.path().join("wharf.toml");
        fs::write(&path, config).unwrap();
        let root = dir.path().to_owned();
        Product {
            config: path,
            publish: root.join("lake/orders"),
            state: root.join("state/orders"),
            quarantine: root.join("quarantine/orders"),
            dir,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `wharf --config <config> <args…>`, not yet run.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wharf"));
        cmd.arg("--config").arg(&self.config).args(args);
        cmd.env_remove("WHARF_FAILPOINT").env_remove("WHARF_FAULT");
        cmd
    }

    /// Runs `wharf run <input>` to the end.
    pub fn run(&self, input: &Path) -> Output {
        self.cmd(&["run"]).arg(input).output().unwrap()
    }

    /// Runs `wharf run <input>` and asserts it published or skipped.
    pub fn land(&self, input: &Path) -> Output {
        let out = self.run(input);
        assert_eq!(
            out.status.code(),
            Some(0),
            "wharf run failed: {}",
            text(&out)
        );
        out
    }

    /// The parsed manifest, `None` when there is none.
    pub fn manifest(&self) -> Option<serde_json::Value> {
        read_json(&self.state.join("partitions.json"))
    }

    /// The parsed checkpoint of input `name`, `None` when there is none.
    pub fn checkpoint(&self, name: &str) -> Option<serde_json::Value> {
        read_json(&self.state.join("checkpoints").join(format!("{name}.json")))
    }

    /// The owner (input name) of each date in the manifest.
    pub fn owners(&self) -> BTreeMap<String, String> {
        let Some(manifest) = self.manifest() else {
            return BTreeMap::new();
        };
        manifest["dates"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(d, e)| (d.clone(), e["input_name"].as_str().unwrap().to_owned()))
            .collect()
    }

    /// Where wharf stages this product's partitions (beside the publish root).
    pub fn staging(&self) -> PathBuf {
        let config = wharf::config::Config::load(&self.config).unwrap();
        wharf::land::swap::staging_root(&config)
    }

    pub fn snapshot(&self) -> Dataset {
        Dataset::read(&self.publish)
    }
}

/// A JSON file parsed; `None` when absent; a panic when it does not parse.
pub fn read_json(path: &Path) -> Option<serde_json::Value> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("{}: {e}", path.display()),
    };
    Some(
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display())),
    )
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Writes `bench/gen_events.py --events N --days D --seed S` to `out`.
pub fn generate(out: &Path, events: u64, days: u32, seed: u64, extra: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_events.py");
    let status = Command::new("python3")
        .arg(script)
        .args(["--events", &events.to_string()])
        .args(["--days", &days.to_string()])
        .args(["--seed", &seed.to_string()])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("python3 runs bench/gen_events.py");
    assert!(status.status.success(), "generator: {}", text(&status));
}

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
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<Vec<u8>, Vec<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(rows) = cache.lock().unwrap().get(bytes) {
        return rows.clone();
    }
    let rows = parquet_rows(path);
    cache.lock().unwrap().insert(bytes.to_vec(), rows.clone());
    rows
}

/// Every row of one Parquet file, rendered as text (a panic if it does not read).
pub fn parquet_rows(path: &Path) -> Vec<String> {
    let file = fs::File::open(path).unwrap();
    let reader = SerializedFileReader::new(file)
        .unwrap_or_else(|e| panic!("{} is not readable Parquet: {e}", path.display()));
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| row.unwrap().to_string())
        .collect()
}

/// After a crash: every partition is readable and holds exactly `old`'s rows or exactly
/// `new`'s for its date (no date missing, none extra), the manifest and every checkpoint
/// parse, and the run log's complete lines parse. Returns, per date, whether it is new.
pub fn check_invariants(product: &Product, old: &Dataset, new: &Dataset) -> Vec<bool> {
    let now = product.snapshot();
    assert_eq!(
        now.rows.keys().collect::<Vec<_>>(),
        old.rows.keys().collect::<Vec<_>>(),
        "a date went missing or appeared"
    );
    let mut state = Vec::new();
    for (date, rows) in &now.rows {
        let is_old = rows == &old.rows[date];
        let is_new = rows == &new.rows[date];
        assert!(
            is_old || is_new,
            "{date} holds neither the old rows nor the new ones ({} rows)",
            rows.len()
        );
        state.push(is_new && !is_old);
    }
    product.manifest();
    if let Ok(entries) = fs::read_dir(product.state.join("checkpoints")) {
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with('.') {
                read_json(&path);
            }
        }
    }
    if let Ok(log) = fs::read_to_string(product.state.join("runs.jsonl")) {
        for line in log.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            serde_json::from_str::<serde_json::Value>(line).expect("run log line parses");
        }
    }
    state
}

/// The dataset after a rerun equals the reference: same rows, same Parquet bytes, no
/// staging left, every date owned by `owner` in the manifest, and its checkpoint there.
pub fn assert_converged(product: &Product, reference: &Dataset, owner: &str) {
    let now = product.snapshot();
    assert_eq!(
        now.rows, reference.rows,
        "rows differ from the uninterrupted run"
    );
    assert!(
        now.files == reference.files,
        "Parquet bytes differ from the uninterrupted run"
    );
    assert!(!product.staging().exists(), "staging left behind");
    let owners = product.owners();
    assert_eq!(owners.len(), reference.rows.len());
    assert!(owners.values().all(|o| o == owner), "owners {owners:?}");
    let checkpoint = product.checkpoint(owner).expect("checkpoint written");
    assert_eq!(checkpoint["input_name"], owner);
}

/// All files under `dir` (recursively), for byte-for-byte "unchanged" checks.
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            out.extend(tree(&path));
        } else {
            out.insert(path.clone(), fs::read(&path).unwrap_or_default());
        }
    }
    out
}

/// splitmix64: a seeded generator for kill moments (no `rand` dependency).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}

/// The pid holding an OS lock (flock) on `path`, from /proc/locks, without touching
/// the lock ourselves.
pub fn lock_holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let inode = fs::metadata(path).ok()?.ino();
    let locks = fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let parts: Vec<&str> = line.split_whitespace().collect();
        // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:56789 0 EOF" (blocked waiters carry "->")
        let parts: Vec<&str> = parts.into_iter().filter(|p| *p != "->").collect();
        let ino = parts.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
        (parts.get(1) == Some(&"FLOCK") && ino == inode)
            .then(|| parts.get(4)?.parse().ok())
            .flatten()
    })
}

/// Two generated inputs over the same two dates, and what each publishes when landed in
/// that order on a reference product.
pub struct TwoVersions {
    _dir: tempfile::TempDir,
    pub old: PathBuf,
    pub new: PathBuf,
    pub old_data: Dataset,
    pub new_data: Dataset,
}

impl TwoVersions {
    /// `events` events each, generated with seeds `seeds`.
    pub fn generate(events: u64, seeds: (u64, u64)) -> TwoVersions {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.jsonl");
        let new = dir.path().join("new.jsonl");
        generate(&old, events, 2, seeds.0, &[]);
        generate(&new, events, 2, seeds.1, &[]);
        let reference = Product::new();
        reference.land(&old);
        let old_data = reference.snapshot();
        reference.land(&new);
        let new_data = reference.snapshot();
        TwoVersions {
            _dir: dir,
            old,
            new,
            old_data,
            new_data,
        }
    }
}
