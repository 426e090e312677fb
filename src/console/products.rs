//! The Products screen's model (`wharf console --config a.toml --config b.toml`): one
//! [`ProductRow`] per config given, its [`Summary`] as a reader thread last found it, and
//! [`warnings`], the refusals and errors the header bar names on every screen. Pure: the
//! reads are [`super::summary`]'s, the configs are loaded by [`super::open`].

use std::path::PathBuf;
use std::sync::Arc;

use std::time::Duration;

use crate::config::Config;
use crate::page::freshness::span;

/// One config the console was opened with: loaded, or why it did not load.
#[derive(Clone, Debug)]
pub struct ProductEntry {
    pub file: PathBuf,
    pub config: Result<Arc<Config>, String>,
}

/// Which of the product's locks are held, by this process or another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Locks {
    /// `<state_root>/.lock`: a run (or a console's landing or restore) may be writing.
    pub run: bool,
    /// `<state_root>/.watch.lock`: a `wharf watch` is running.
    pub watch: bool,
}

/// The newest run in the product's run log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastRun {
    /// `published`, `skipped` or `refused`.
    pub action: String,
    pub reason: Option<String>,
    /// Seconds since the run's `time`, when it parses.
    pub age_secs: Option<u64>,
}

/// What the Products screen shows of one product.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Closed inputs in the inbox with no checkpoint under their name.
    pub waiting: usize,
    /// Sets whose marker is not there yet.
    pub open_sets: usize,
    pub last: Option<LastRun>,
    /// Refused runs since the newest publish (of the newest [`REFUSALS_READ`] runs).
    pub refusals: usize,
    pub newest_date: Option<String>,
    pub locks: Locks,
    /// Parts of the state that could not be read (the rest still shows).
    pub problems: Vec<String>,
    /// Seconds since the last publish, when that is longer than `max_silence`.
    pub stale_secs: Option<u64>,
}

/// How many of the newest runs are read to count refusals since the last publish.
pub const REFUSALS_READ: usize = 1000;

/// One row of the Products screen.
#[derive(Clone, Debug)]
pub struct ProductRow {
    pub entry: ProductEntry,
    /// `None` until the first read of it reports.
    pub summary: Option<Summary>,
}

impl ProductRow {
    /// The product's name, or its config file's name when it did not load.
    pub fn name(&self) -> String {
        match &self.entry.config {
            Ok(config) => config.product.clone(),
            Err(_) => file_name(&self.entry.file),
        }
    }
}

/// The config file's name, as a row names a config that did not load.
pub fn file_name(file: &std::path::Path) -> String {
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string())
}

/// The Products screen.
#[derive(Clone, Debug)]
pub struct ProductsState {
    pub rows: Vec<ProductRow>,
    pub cursor: usize,
    /// The row whose console is open, if one is.
    pub open: Option<usize>,
}

impl ProductsState {
    pub fn new(entries: Vec<ProductEntry>) -> ProductsState {
        let rows = entries
            .into_iter()
            .map(|entry| ProductRow {
                entry,
                summary: None,
            })
            .collect();
        ProductsState {
            rows,
            cursor: 0,
            open: None,
        }
    }
}

/// What the header bar warns of: per product, its refusals since the last publish, a
/// config that did not load, or state that could not be read (`payments: refused 2`).
pub fn warnings(products: &ProductsState) -> Vec<String> {
    products
        .rows
        .iter()
        .filter_map(|row| {
            let name = row.name();
            if row.entry.config.is_err() {
                return Some(format!("{name}: config error"));
            }
            let summary = row.summary.as_ref()?;
            let stale = summary
                .stale_secs
                .map(|secs| format!("stale {}", span(Duration::from_secs(secs))));
            let what = match (summary.refusals, summary.problems.is_empty()) {
                (0, true) => None,
                (0, false) => Some("error".to_owned()),
                (n, _) => Some(format!("refused {n}")),
            };
            let said: Vec<String> = what.into_iter().chain(stale).collect();
            (!said.is_empty()).then(|| format!("{name}: {}", said.join(", ")))
        })
        .collect()
}

/// The config the App holds on a Products screen where no config loaded: it names no
/// product and nothing reads its (nonexistent) roots, since no row can be opened.
pub fn stand_in() -> Arc<Config> {
    const NONE: &str = r#"product = "(none)"
[schema]
key = "id"
order_by = "at"
event_id = "id"
partition_by_date_of = "at"
[schema.fields]
id = { type = "string", required = true }
at = { type = "timestamp", required = true }
"#;
    let folder = std::path::Path::new("/nonexistent/wharf-no-product");
    let parsed = Config::parse(NONE, &folder.join("none.toml"), folder);
    Arc::new(parsed.expect("the stand-in config is valid (a unit test parses it)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_in_config_parses() {
        assert_eq!(stand_in().product, "(none)");
    }

    #[test]
    fn warnings_name_refusals_errors_and_bad_configs_only() {
        let loaded = stand_in();
        let row = |config: Result<Arc<Config>, String>, summary: Option<Summary>| ProductRow {
            entry: ProductEntry {
                file: PathBuf::from("/x/b.toml"),
                config,
            },
            summary,
        };
        let refused = Summary {
            refusals: 2,
            ..Summary::default()
        };
        let problem = Summary {
            problems: vec!["cannot read".into()],
            ..Summary::default()
        };
        let stale = Summary {
            refusals: 1,
            stale_secs: Some(3 * 3600 + 5),
            ..Summary::default()
        };
        let state = ProductsState {
            rows: vec![
                row(Ok(loaded.clone()), Some(Summary::default())),
                row(Ok(loaded.clone()), Some(refused)),
                row(Ok(loaded.clone()), Some(problem)),
                row(Ok(loaded.clone()), Some(stale)),
                row(Err("bad".into()), None),
                row(Ok(loaded), None),
            ],
            cursor: 0,
            open: None,
        };
        assert_eq!(
            warnings(&state),
            [
                "(none): refused 2",
                "(none): error",
                "(none): refused 1, stale 3h 5s",
                "b.toml: config error"
            ]
        );
    }
}
