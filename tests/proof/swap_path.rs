//! The two ways a published date is swapped: the atomic exchange, and the two-rename
//! fallback of file systems and kernels without one, forced with `WHARF_SWAP=two_renames`
//! (see `store::failpoint`). The failpoint, fault and kill tests run on both ([`BOTH`]);
//! [`SwapPath::cmd`] runs `wharf` on one, and each test checks the run log to prove the
//! path it asked for is the one taken.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{self, Product};

/// How a run swaps published dates in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapPath {
    /// The machine's own: the exchange where its kernel and file system have one.
    Exchange,
    /// The fallback, forced.
    TwoRenames,
}

pub use SwapPath::{Exchange, TwoRenames};

/// Both paths, the exchange first.
pub const BOTH: [SwapPath; 2] = [Exchange, TwoRenames];

impl SwapPath {
    /// `wharf --config … <args>` on this path, not yet run.
    pub fn cmd(self, product: &Product, args: &[&str]) -> Command {
        let mut cmd = product.cmd(args);
        match self {
            Exchange => cmd.env_remove("WHARF_SWAP"),
            TwoRenames => cmd.env("WHARF_SWAP", "two_renames"),
        };
        cmd
    }

    /// `wharf run <input>` to the end.
    pub fn run(self, product: &Product, input: &Path) -> Output {
        self.cmd(product, &["run"]).arg(input).output().unwrap()
    }

    /// `wharf run <input>`, asserting it published or skipped.
    pub fn land(self, product: &Product, input: &Path) -> Output {
        let out = self.run(product, input);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{self:?}: {}",
            common::text(&out)
        );
        out
    }

    /// `wharf restore <date> --yes`, asserting it succeeded.
    pub fn restore(self, product: &Product, date: &str) {
        let out = self
            .cmd(product, &["restore", date, "--yes"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{self:?}: {}",
            common::text(&out)
        );
    }

    /// Asserts the last run swapped every published date it replaced on this path (an
    /// `unchanged` date was already in place, a `rename`d one was absent), and at least
    /// `swapped` dates that way.
    pub fn assert_taken(self, product: &Product, swapped: usize) {
        let swaps = last_swaps(product);
        let on_path = |s: &String| match self {
            Exchange => s == "exchange" || s == "two_renames",
            TwoRenames => s == "two_renames",
        };
        assert!(
            swaps
                .iter()
                .all(|s| on_path(s) || s == "unchanged" || s == "rename"),
            "{self:?}: the run log says {swaps:?}"
        );
        assert!(
            swaps.iter().filter(|s| on_path(s)).count() >= swapped,
            "{self:?}: the run log says {swaps:?}"
        );
    }
}

/// The `swaps` of the run log's last record.
pub fn last_swaps(product: &Product) -> Vec<String> {
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    last["swaps"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// The Parquet files of `date`'s newest trash generation, named as in a
/// [`Dataset`](common::Dataset) (`event_date=D/part-N.parquet` → bytes); empty when the
/// trash holds none.
pub fn newest_in_trash(product: &Product, date: &str) -> BTreeMap<String, Vec<u8>> {
    let folder = product
        .state
        .join("trash")
        .join(format!("event_date={date}"));
    let mut generations: Vec<_> = fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    generations.sort();
    let Some(newest) = generations.last() else {
        return BTreeMap::new();
    };
    fs::read_dir(newest)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (format!("event_date={date}/{name}"), fs::read(&p).unwrap())
        })
        .collect()
}

/// The files of `date` in `files` (a [`Dataset`](common::Dataset)'s).
pub fn files_of(files: &BTreeMap<String, Vec<u8>>, date: &str) -> BTreeMap<String, Vec<u8>> {
    let prefix = format!("event_date={date}/");
    files
        .iter()
        .filter(|(name, _)| name.starts_with(&prefix))
        .map(|(name, bytes)| (name.clone(), bytes.clone()))
        .collect()
}

/// `data` without `date`.
pub fn without(data: &common::Dataset, date: &str) -> common::Dataset {
    let prefix = format!("event_date={date}/");
    common::Dataset {
        files: data
            .files
            .iter()
            .filter(|(name, _)| !name.starts_with(&prefix))
            .map(|(n, b)| (n.clone(), b.clone()))
            .collect(),
        rows: data
            .rows
            .iter()
            .filter(|(d, _)| d.as_str() != date)
            .map(|(d, r)| (d.clone(), r.clone()))
            .collect(),
    }
}
