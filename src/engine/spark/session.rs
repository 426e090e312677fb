//! [`Session`]: one Spark Connect session for one engine, the settings Wharf needs set on
//! it, and every Spark error turned into an [`Error::Engine`] naming the remote.
//!
//! Spark's messages can quote the data they failed on (a cast's input, a parse's line),
//! so an error keeps only its condition and SQL state when it has them; only errors
//! without one (a refused connection, a lost stream) keep their message, which then
//! holds no row data.
//!
//! The client retries an unreachable server for about ten minutes before it gives up,
//! so [`Session::guarded`] runs each phase of Spark work on a thread of its own and, while
//! it waits, checks that the server still accepts connections: a server gone for
//! [`LOST_AFTER`] ends the phase with an error at once (the abandoned thread ends with the
//! client's retries, or with the process).

use std::collections::BTreeMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use spark_connect::row::{Row, Value};
use spark_connect::{DataFrame, SparkError, SparkSession};

use crate::error::{Error, Result};

/// Session settings a landing relies on, set on connect and read back for the run log:
/// UTC dates and times, ANSI arithmetic and casts (an overflow fails, never wraps),
/// microsecond timestamps in the written Parquet, cached rows kept in as many
/// partitions as their size needs (else a cached query keeps every one of
/// `spark.sql.shuffle.partitions`, and each later shuffle writes that many files per task),
/// and the cache (one row per key, read twice) not compressed: compressing it cost more
/// than it saved (docs/performance.md).
pub const SETTINGS: [(&str, &str); 5] = [
    ("spark.sql.session.timeZone", "UTC"),
    ("spark.sql.ansi.enabled", "true"),
    ("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS"),
    (
        "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning",
        "true",
    ),
    ("spark.sql.inMemoryColumnarStorage.compressed", "false"),
];

/// Characters of a connection error's message kept in an [`Error::Engine`].
const MESSAGE_CHARS: usize = 300;

/// How long the server may refuse connections before a phase gives up on it.
const LOST_AFTER: Duration = Duration::from_secs(10);
/// How often a waiting phase checks the server.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// A connected session and the name of the server it talks to.
#[derive(Clone)]
pub struct Session {
    spark: SparkSession,
    /// `spark sc://host:port`: the remote without a token or other parameters.
    describe: String,
    /// [`SETTINGS`] as the server resolved them on connect, for the run log.
    settings: BTreeMap<String, String>,
    /// Whether the session is Wharf's own, to end when done: not when the remote names
    /// one (`;session_id=…`), which its owner may use again.
    owned: bool,
}

impl Session {
    /// Connects to `remote` (`sc://host:port[/;token=…]`) and sets [`SETTINGS`].
    pub fn connect(remote: &str) -> Result<Session> {
        let describe = format!("spark {}", strip_parameters(remote));
        // The channel opens lazily: the first setting is where a dead server shows.
        let owned = (remote.to_owned(), describe.clone());
        let connect = move || {
            let (remote, describe) = owned;
            let spark = SparkSession::builder()
                .remote(&remote)
                .get_or_create()
                .map_err(|e| engine_error(&describe, "cannot connect", &e))?;
            let owned = !names_a_session(&remote);
            let mut session = Session {
                spark,
                describe,
                settings: BTreeMap::new(),
                owned,
            };
            for (key, value) in SETTINGS {
                session.set(key, value)?;
            }
            session.settings = session.resolved_settings()?;
            Ok(session)
        };
        let session = watched(&describe, "cannot connect", connect)?;
        Ok(session)
    }

    /// What the console and the run log call the engine.
    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// The Spark Connect session itself, for the engine's other modules.
    pub fn spark(&self) -> &SparkSession {
        &self.spark
    }

    /// Sets one session setting.
    pub fn set(&self, key: &str, value: &str) -> Result<()> {
        self.spark
            .conf()
            .set(key, value)
            .map_err(|e| self.error("cannot set a session setting", &e))
    }

    /// The resolved value of every setting in [`SETTINGS`], as the server reported it on
    /// connect (asking again after a lost connection would wait out the client's retries).
    pub fn settings(&self) -> &BTreeMap<String, String> {
        &self.settings
    }

    fn resolved_settings(&self) -> Result<BTreeMap<String, String>> {
        let mut resolved = BTreeMap::new();
        for (key, _) in SETTINGS {
            let value = self
                .spark
                .conf()
                .get(key)
                .map_err(|e| self.error("cannot read a session setting", &e))?;
            resolved.insert(key.to_owned(), value.unwrap_or_default());
        }
        Ok(resolved)
    }

    /// Runs `job` (one phase of Spark work) on its own thread and waits for it, unless the
    /// server stops accepting connections for [`LOST_AFTER`]: then an error naming the
    /// remote, while the client would still be retrying.
    pub fn guarded<T: Send + 'static>(
        &self,
        doing: &'static str,
        job: impl FnOnce(&Session) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let session = self.clone();
        watched(&self.describe, doing, move || job(&session))
    }

    /// Ends the session on the server, as `spark.stop()` does: else the server keeps it,
    /// with its views and its compiled code, for its idle timeout (an hour by default),
    /// and a server that many landings visit fills its memory with them. Skipped when
    /// the server takes no connection: there is nothing to end then, and nothing to wait
    /// for.
    pub fn end(&self) {
        if !self.owned || !accepts_connections(address_of(&self.describe)) {
            return;
        }
        let _ = self.guarded("ending the session", |session| {
            session
                .spark
                .stop()
                .map_err(|e| session.error("cannot end the session", &e))
        });
    }

    /// The rows of `query`, which must be small (aggregates, line numbers).
    pub fn rows(&self, query: &str, doing: &'static str) -> Result<Vec<Row>> {
        self.frame(query, doing)?
            .collect()
            .map_err(|e| self.error(doing, &e))
    }

    /// `query` as a DataFrame, not yet run.
    pub fn frame(&self, query: &str, doing: &'static str) -> Result<DataFrame> {
        self.spark.sql(query).map_err(|e| self.error(doing, &e))
    }

    /// `e`, met while `doing`, as an [`Error::Engine`].
    pub fn error(&self, doing: &str, e: &SparkError) -> Error {
        engine_error(&self.describe, doing, e)
    }
}

/// Runs `job` on a thread of its own, checking every [`PROBE_EVERY`] that the server of
/// `describe` accepts connections; see [`Session::guarded`].
fn watched<T: Send + 'static>(
    describe: &str,
    doing: &'static str,
    job: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (done, outcome) = mpsc::channel();
    std::thread::Builder::new()
        .name("wharf-spark".into())
        .spawn(move || {
            let _ = done.send(job());
        })
        .map_err(|e| Error::internal(format!("cannot start the Spark thread: {e}")))?;
    let address = address_of(describe);
    let mut unreachable_since: Option<Instant> = None;
    loop {
        match outcome.recv_timeout(PROBE_EVERY) {
            Ok(result) => return result,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::internal("the Spark thread ended without a result"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if accepts_connections(address) {
            unreachable_since = None;
            continue;
        }
        let since = *unreachable_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= LOST_AFTER {
            return Err(Error::Engine {
                remote: describe.to_owned(),
                detail: format!(
                    "{doing}: the server stopped accepting connections ({} s without one)",
                    LOST_AFTER.as_secs()
                ),
            });
        }
    }
}

/// Whether a Spark Connect remote names its session (`;session_id=…`).
fn names_a_session(remote: &str) -> bool {
    remote
        .split(';')
        .skip(1)
        .any(|parameter| parameter.trim().starts_with("session_id="))
}

/// The `host[:port]` of a session's description (`spark sc://host:port`).
fn address_of(describe: &str) -> &str {
    describe.trim_start_matches("spark ").trim_start_matches("sc://")
}

/// Whether `host[:port]` (Spark Connect's default port 15002) takes a TCP connection.
fn accepts_connections(address: &str) -> bool {
    let with_port = if address.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
        address.to_owned()
    } else {
        format!("{address}:15002")
    };
    let Ok(mut addresses) = with_port.to_socket_addrs() else {
        return false;
    };
    addresses.any(|a| TcpStream::connect_timeout(&a, PROBE_EVERY).is_ok())
}

/// `e` as an [`Error::Engine`] for `describe`, without any message that may quote data.
pub fn engine_error(describe: &str, doing: &str, e: &SparkError) -> Error {
    let detail = match e.get_condition() {
        Some(condition) => match e.get_sql_state() {
            Some(state) => format!("{doing}: Spark failed with {condition} (SQLSTATE {state})"),
            None => format!("{doing}: Spark failed with {condition}"),
        },
        None => {
            let message: String = e
                .message()
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .take(MESSAGE_CHARS)
                .collect();
            format!("{doing}: {message}")
        }
    };
    Error::Engine {
        remote: describe.to_owned(),
        detail,
    }
}

/// `sc://host:port` of a remote, without its path and `;key=value` parameters (a token
/// must never reach a log).
pub fn strip_parameters(remote: &str) -> &str {
    let after_scheme = remote.find("://").map_or(0, |i| i + 3);
    let end = remote[after_scheme..]
        .find(['/', ';', '?'])
        .map_or(remote.len(), |i| after_scheme + i);
    &remote[..end]
}

/// Column `index` of `row` as an integer (counts, line numbers), or an internal error.
pub fn int_at(row: &Row, index: usize) -> Result<i64> {
    match row.get(index) {
        Some(value) => value.as_i64().ok_or_else(|| unexpected(value)),
        None => Err(Error::internal(
            "a Spark result row is shorter than queried",
        )),
    }
}

/// Column `index` of `row` as an optional string.
pub fn str_at(row: &Row, index: usize) -> Result<Option<String>> {
    match row.get(index) {
        Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(value) => Err(unexpected(value)),
        None => Err(Error::internal(
            "a Spark result row is shorter than queried",
        )),
    }
}

/// Column `index` of `row` as a date's day number.
pub fn date_at(row: &Row, index: usize) -> Result<i32> {
    match row.get(index) {
        Some(Value::Date(days)) => Ok(*days),
        Some(value) => Err(unexpected(value)),
        None => Err(Error::internal(
            "a Spark result row is shorter than queried",
        )),
    }
}

fn unexpected(value: &Value) -> Error {
    let kind = match value {
        Value::Null => "null",
        Value::String(_) => "string",
        Value::Date(_) => "date",
        Value::Timestamp(_) => "timestamp",
        _ => "other",
    };
    Error::internal(format!(
        "a Spark result column holds a {kind} where the query made another type"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_is_described_without_its_token() {
        assert_eq!(strip_parameters("sc://h:15002"), "sc://h:15002");
        assert_eq!(
            strip_parameters("sc://h:15002/;token=secret;use_ssl=true"),
            "sc://h:15002"
        );
        assert_eq!(
            strip_parameters("sc://h:15002;token=secret"),
            "sc://h:15002"
        );
    }

    #[test]
    fn a_session_the_remote_names_is_its_owner_s_to_end() {
        assert!(!names_a_session("sc://h:15002"));
        assert!(!names_a_session("sc://h:15002/;token=session_id="));
        assert!(names_a_session(
            "sc://h:15002/;token=t;session_id=550e8400-e29b-41d4-a716-446655440000"
        ));
        assert_eq!(address_of("spark sc://h:15002"), "h:15002");
    }
}
