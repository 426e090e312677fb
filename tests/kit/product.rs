//! [`Product`]: one product in a temporary folder (its `wharf.toml`, `inbox/` and the
//! roots the config names), the real `wharf` binary run against it ([`Product::cmd`],
//! [`Product::wharf`], [`Product::run`]), and what it wrote read back: manifest,
//! checkpoints, quarantine records, Parquet rows, folders byte for byte.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::dataset::{Dataset, read_rows};
use super::fixture;

/// The sample config (CONTRACT.md's defaults written out), relative roots.
pub const CONFIG: &str = include_str!("../../samples/wharf.toml");

/// The `[schema]` part of the sample config: every test product's schema.
pub fn schema() -> &'static str {
    &CONFIG[CONFIG
        .find("[schema]")
        .expect("the sample config has a [schema] table")..]
}

/// A product in a temporary folder. The roots are the sample's, relative to the folder.
pub struct Product {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    pub publish: PathBuf,
    pub state: PathBuf,
    pub quarantine: PathBuf,
}

/// A finished `wharf` process, its output as text.
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

impl From<Output> for Ran {
    fn from(out: Output) -> Ran {
        Ran {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Product {
    /// A product with the sample config and an empty inbox.
    pub fn new() -> Product {
        Product::with_config(CONFIG)
    }

    /// A product with the contract's defaults plus `settings` (TOML lines).
    pub fn with_settings(settings: &str) -> Product {
        Product::with_config(&format!("product = \"orders\"\n{settings}\n{}", schema()))
    }

    /// A product whose config text is `config` (the fields assume the sample's roots).
    pub fn with_config(config: &str) -> Product {
        let product = Product::empty();
        fs::write(&product.config, config).unwrap();
        product
    }

    /// A product with the sample config and a copy of the sample inbox, its inputs'
    /// modification times an hour apart in name order.
    pub fn samples() -> Product {
        let product = Product::empty();
        fixture::copy_samples(product.path());
        product
    }

    /// The folder with an empty inbox and no config yet.
    fn empty() -> Product {
        let dir = tempfile::Builder::new()
            .prefix("wharf-test-")
            .tempdir()
            .unwrap();
        fs::create_dir_all(dir.path().join("inbox")).unwrap();
        let root = dir.path().to_owned();
        Product {
            config: root.join("wharf.toml"),
            publish: root.join("lake/orders"),
            state: root.join("state/orders"),
            quarantine: root.join("quarantine/orders"),
            dir,
        }
    }

    /// The product's folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `lines` (each followed by `\n`) as inbox file `name`.
    pub fn input(&self, name: &str, lines: &[&str]) -> PathBuf {
        let mut text = lines.join("\n");
        text.push('\n');
        self.input_bytes(name, text.as_bytes())
    }

    pub fn input_bytes(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join("inbox").join(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    /// `wharf --config <config> <args…>`, not yet run.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = bin();
        cmd.arg("--config").arg(&self.config).args(args);
        cmd
    }

    /// Runs `wharf <args> --config <config>` to the end.
    pub fn wharf(&self, args: &[&str]) -> Ran {
        let mut cmd = bin();
        cmd.args(args).arg("--config").arg(&self.config);
        cmd.output().unwrap().into()
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

    /// `wharf run INPUT --json`.
    pub fn run_json(&self, input: &Path) -> Ran {
        self.wharf(&["run", input.to_str().unwrap(), "--json"])
    }

    /// `wharf plan INPUT --json`.
    pub fn plan_json(&self, input: &Path) -> Ran {
        self.wharf(&["plan", input.to_str().unwrap(), "--json"])
    }

    /// The parsed manifest, `None` when there is none.
    pub fn manifest(&self) -> Option<Value> {
        read_json(&self.state.join("partitions.json"))
    }

    /// The parsed checkpoint of input `name`, `None` when there is none.
    pub fn checkpoint(&self, name: &str) -> Option<Value> {
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
        wharf::land::hive::swap::staging_root(&config)
    }

    /// The published dataset as readers see it.
    pub fn snapshot(&self) -> Dataset {
        Dataset::read(&self.publish)
    }

    /// Rows of one date, read back from its Parquet files, in file order.
    pub fn rows(&self, date: &str) -> Vec<BTreeMap<String, String>> {
        read_rows(&self.publish.join(format!("event_date={date}")))
    }

    /// Every file under `relative` (a path in the product's folder) with its bytes.
    pub fn tree(&self, relative: &str) -> BTreeMap<PathBuf, Vec<u8>> {
        fixture::tree(&self.path().join(relative))
    }

    /// The quarantine `rejects.jsonl` of hash `sha`, one JSON object per line.
    pub fn rejects(&self, sha: &str) -> Vec<Value> {
        let path = self.quarantine.join(sha).join("rejects.jsonl");
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The published dates (folder names without `event_date=`), sorted.
    pub fn dates(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.publish) else {
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

/// The `wharf` binary, with no failpoint or fault from the test's own environment.
fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wharf"));
    cmd.env_remove("WHARF_FAILPOINT").env_remove("WHARF_FAULT");
    cmd
}

/// Runs the `wharf` binary with `args` (no product).
pub fn wharf(args: &[&str]) -> Ran {
    bin().args(args).output().unwrap().into()
}

/// A JSON file parsed; `None` when absent; a panic when it does not parse.
pub fn read_json(path: &Path) -> Option<Value> {
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
