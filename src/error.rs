//! [`Error`]: everything that can stop a command, each message naming the path, the
//! reason and what to do next. [`Error::exit_code`] maps it to CONTRACT.md §8.

use std::path::{Path, PathBuf};

use crate::exit;

/// Wharf's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The config file is missing, unreadable or invalid. Nothing was touched.
    #[error("config {path}: {message}")]
    Config { path: PathBuf, message: String },

    /// The command line asks for something that cannot be done as asked.
    #[error("{0}")]
    Usage(String),

    /// An input path that cannot be landed as given.
    #[error("input {path}: {message}")]
    Input { path: PathBuf, message: String },

    /// A file-system operation failed.
    #[error("{path}: could not {action}: {source}; {hint}")]
    Io {
        path: PathBuf,
        action: &'static str,
        hint: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// The checkpoint exists but is not a valid checkpoint: a human must look (§5.3).
    #[error(
        "checkpoint {path} is corrupt ({detail}); nothing was touched. Inspect it, then \
         move it aside to land the input again"
    )]
    CorruptCheckpoint { path: PathBuf, detail: String },

    /// A state file (manifest, run log, trash record) cannot be read.
    #[error(
        "state file {path} is corrupt ({detail}); nothing was touched. Inspect it or restore it from a backup"
    )]
    CorruptState { path: PathBuf, detail: String },

    /// The schema history (§1.1) exists but cannot be read: it is never guessed over.
    #[error(
        "schema history {path} is corrupt ({detail}); nothing was touched. Delete it: the \
         next command rebuilds it from the lake"
    )]
    CorruptHistory { path: PathBuf, detail: String },

    /// Another process holds one of the product's locks: a run's (§5.2) or a watch's.
    #[error(
        "busy: another wharf process of this product holds {path}; nothing was touched. Retry when it ends"
    )]
    Busy { path: PathBuf },

    /// Another writer (another machine's Wharf, or any Delta writer) committed the
    /// version this landing planned to commit (§12.2). Busy exactly as [`Error::Busy`]
    /// is: exit 4, `busy` in `--json`, retried by `watch`; a rerun plans afresh.
    #[error(
        "busy: another writer committed version {version} of the Delta table {url} first; \
         nothing of this landing is visible. Rerun to plan against the new version"
    )]
    TableBusy { url: String, version: u64 },

    /// The state or quarantine root on S3 (§13.4) could not be reached, read or written.
    #[error("state store {url}: could not {action}: {detail}; {hint}", hint = crate::store::objects::HINT)]
    State {
        url: String,
        action: &'static str,
        detail: String,
    },

    /// Another machine wrote a state object on S3 since this one read it (a conditional
    /// put failed, §13.4): nothing of it was overwritten. Busy, as [`Error::TableBusy`].
    #[error(
        "busy: {object} was written by another wharf since this one read it; nothing of it \
         was overwritten. Rerun: the next run reads what the other one wrote (and takes in \
         the table's log)"
    )]
    StateRace { object: String },

    /// A Delta table could not be reached, read or written, or is not this product's.
    #[error("Delta table {url}: could not {action}: {detail}; {hint}")]
    Table {
        url: String,
        action: &'static str,
        detail: String,
        hint: String,
    },

    /// A Delta table's schema is not the config's (§12.9): one line naming each differing
    /// column and both its types; the two schemas whole only with `--verbose`.
    #[error(
        "Delta table {url}: could not use the table: its schema is not the config's: {differences}; {hint}"
    )]
    SchemaDiffers {
        url: String,
        differences: String,
        hint: &'static str,
        /// Both schemas whole, for `--verbose`.
        schemas: String,
    },

    /// The Delta table uses a feature Wharf cannot keep (§12.8): refused (exit 3),
    /// nothing written, with no advice about endpoints or credentials.
    #[error("Delta table {url}: refused (table_feature): {refusal}")]
    TableFeature {
        url: String,
        refusal: crate::plan::TableFeatureRefusal,
    },

    /// A restore would re-add a file no longer stored (another writer's VACUUM deleted
    /// it, §12.6): refused (exit 3), nothing committed.
    #[error(
        "Delta table {url}: restore of {date} refused: its file {path} is no longer stored \
         ({removed_by}); nothing was committed, the table stays at version {version}. That \
         generation cannot come back: land its input again (wharf run INPUT --reland)"
    )]
    Vacuumed {
        url: String,
        date: String,
        path: String,
        removed_by: String,
        version: u64,
    },

    /// A published file (another writer's) holds a value the declared field cannot read
    /// exactly (§12.9): an error, never a null in its place; nothing was written.
    #[error("{0}")]
    ForeignValue(Box<crate::store::conform::Unreadable>),

    /// The operator cancelled the work.
    #[error("cancelled; nothing was written")]
    Cancelled,

    /// The engine that does the row work failed or could not be reached (a Spark
    /// Connect server's error, a lost connection). Nothing published changed: the swap
    /// runs only after staging succeeds, and a failed stage removes what it wrote.
    #[error(
        "engine {remote}: {detail}; nothing published changed. Check that the server is up \
         and reachable (and its log for the failed job), then rerun"
    )]
    Engine { remote: String, detail: String },

    /// Wharf itself failed (a thread panicked, a schema or record it builds did not
    /// encode): not the input's fault nor the disk's, so the message asks for a report.
    #[error(
        "internal error: {0}; this is a bug in wharf {version}: please report it with this \
         message",
        version = env!("CARGO_PKG_VERSION")
    )]
    Internal(String),
}

impl Error {
    /// An I/O error on `path` with what was being done and the next step.
    pub fn io(
        path: &Path,
        action: &'static str,
        hint: &'static str,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            path: path.to_owned(),
            action,
            hint,
            source,
        }
    }

    /// The process exit code for this error (CONTRACT.md §8).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Config { .. } | Error::Usage(_) | Error::Input { .. } => exit::USAGE,
            Error::Busy { .. } | Error::TableBusy { .. } | Error::StateRace { .. } => exit::BUSY,
            Error::TableFeature { .. } | Error::Vacuumed { .. } => exit::REFUSED,
            Error::Io { .. }
            | Error::CorruptCheckpoint { .. }
            | Error::CorruptState { .. }
            | Error::CorruptHistory { .. }
            | Error::ForeignValue(_)
            | Error::Cancelled
            | Error::Engine { .. }
            | Error::Table { .. }
            | Error::SchemaDiffers { .. }
            | Error::State { .. }
            | Error::Internal(_) => exit::ERROR,
        }
    }

    /// Whether this is CONTRACT.md §8's busy (exit 4): the product's lock is held, or
    /// another writer won the race to commit the table's next version.
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            Error::Busy { .. } | Error::TableBusy { .. } | Error::StateRace { .. }
        )
    }

    /// What `--verbose` adds to the one-line message, where there is more to say.
    pub fn verbose(&self) -> Option<&str> {
        match self {
            Error::SchemaDiffers { schemas, .. } => Some(schemas),
            _ => None,
        }
    }

    /// An internal failure: `what` failed (see [`Error::Internal`]).
    pub fn internal(what: impl std::fmt::Display) -> Self {
        Error::Internal(what.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> Error {
        Error::io(Path::new("x"), "read", "check", std::io::Error::other("e"))
    }

    #[test]
    fn every_error_exits_with_its_contract_code() {
        let path = PathBuf::from("p");
        let cases = [
            (
                Error::Config {
                    path: path.clone(),
                    message: "m".into(),
                },
                2,
            ),
            (Error::Usage("u".into()), 2),
            (
                Error::Input {
                    path: path.clone(),
                    message: "m".into(),
                },
                2,
            ),
            (io(), 1),
            (
                Error::CorruptCheckpoint {
                    path: path.clone(),
                    detail: "d".into(),
                },
                1,
            ),
            (
                Error::CorruptState {
                    path: path.clone(),
                    detail: "d".into(),
                },
                1,
            ),
            (Error::Busy { path }, 4),
            (
                Error::TableBusy {
                    url: "s3://b/t".into(),
                    version: 7,
                },
                4,
            ),
            (Error::Cancelled, 1),
            (
                Error::Engine {
                    remote: "spark sc://h:15002".into(),
                    detail: "d".into(),
                },
                1,
            ),
            (Error::internal("the reader thread panicked"), 1),
        ];
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error}");
            assert_eq!(error.is_busy(), code == exit::BUSY, "{error}");
        }
        assert_eq!(exit::ERROR, 1, "CONTRACT.md §8: 1 is any other error");
    }

    #[test]
    fn an_internal_error_says_what_failed_and_to_report_it() {
        let message = Error::internal("cannot encode the run log record: x").to_string();
        assert!(
            message.contains("cannot encode the run log record: x"),
            "{message}"
        );
        assert!(message.contains("report"), "{message}");
        assert!(message.contains(env!("CARGO_PKG_VERSION")), "{message}");
    }
}
