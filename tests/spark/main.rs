//! The Spark suite: the Spark engine against a Spark Connect server
//! (`WHARF_SPARK_REMOTE`, default `sc://127.0.0.1:15002`; `tests/spark/server.sh start`).
//! For the contract's fixtures its census equals the local engine's plan (counts,
//! findings, dates) and the rows it stages equal the local engine's, file by file, read
//! back with the local reader; a server lost mid-run leaves the lake as it was.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used)]

#[path = "../kit/mod.rs"]
mod kit;

mod delta;
mod engines;
mod failure;
mod files;
mod findings;
mod landing;
mod merge;
mod outage;
mod parity;
mod rules;
mod s3_inbox;
mod sets;
mod splits;

use wharf::engine::Engine;
use wharf::engine::spark::SparkEngine;

#[test]
fn the_engine_connects_and_reads_its_settings_back() {
    let _server = engines::server();
    let engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    assert_eq!(engine.describe(), format!("spark {}", engines::remote()));
    let settings = engine.settings();
    assert_eq!(settings["spark.sql.session.timeZone"], "UTC");
    assert_eq!(settings["spark.sql.ansi.enabled"], "true");
    assert_eq!(
        settings["spark.sql.parquet.outputTimestampType"],
        "TIMESTAMP_MICROS"
    );
}

/// A landing's session ends with its engine, as `spark.stop()` ends PySpark's, so a
/// server many landings visit does not hold their sessions for its idle timeout; a
/// session the remote names is its owner's, and stays.
#[test]
fn the_engine_ends_its_own_session_and_leaves_a_named_one() {
    let _server = engines::server();
    let named = |id: &str| format!("{}/;session_id={id}", engines::remote());
    let engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    let own = engine.session().spark().session_id().to_owned();
    drop(engine);
    let Err(error) = SparkEngine::connect_to(&named(&own)) else {
        panic!("the server still serves the ended session {own}");
    };
    assert!(error.to_string().contains("SESSION_CLOSED"), "{error}");

    let id = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
    drop(SparkEngine::connect_to(&named(id)).unwrap());
    let again = SparkEngine::connect_to(&named(id)).unwrap();
    assert_eq!(again.session().spark().session_id(), id);
}

#[test]
fn an_unreachable_server_is_an_engine_error_naming_it() {
    let Err(error) = SparkEngine::connect_to("sc://127.0.0.1:1") else {
        panic!("nothing listens on port 1");
    };
    let message = error.to_string();
    assert!(message.contains("sc://127.0.0.1:1"), "{message}");
    assert!(message.contains("rerun"), "{message}");
    assert_eq!(error.exit_code(), 1);
}

#[test]
fn a_result_the_server_cuts_at_its_stream_deadline_arrives_whole() {
    use wharf::engine::spark::session::Session;
    let _server = engines::server();
    let session = Session::connect(&engines::remote()).unwrap();
    // The suite's server ends a result stream after 1 s (tests/spark/server.sh,
    // WHARF_SPARK_STREAM_DURATION): against Spark's default of 2 minutes this proves nothing.
    let deadline = session
        .spark()
        .conf()
        .get("spark.connect.execute.reattachable.senderMaxStreamDuration")
        .unwrap()
        .unwrap_or_default();
    assert!(
        ["1s", "1000ms"].contains(&deadline.as_str()),
        "run the Spark suite against a server started with WHARF_SPARK_STREAM_DURATION=1s \
         (tests/run does), not {deadline:?}"
    );
    // Each of the three rows takes a second to exist: the first stream ends before any
    // row, and the client must reattach (twice or more) to receive all three.
    let rows = session
        .rows(
            "SELECT id, reflect('java.lang.Thread', 'sleep', CAST(1000 AS BIGINT)) AS slept \
             FROM range(0, 3, 1, 1)",
            "run a query slower than the stream deadline",
        )
        .unwrap();
    assert_eq!(rows.len(), 3, "every row, not a stream cut at its deadline");
}
