//! A Spark-side failure during the stage is an engine error naming the remote, and the
//! staging folder keeps nothing the stage wrote; an I/O error at any rename or fsync of a
//! Spark landing, its stage's own included, loses nothing.

use wharf::Error;
use wharf::engine::Engine;
use wharf::engine::spark::{SparkEngine, winners};

use crate::engines;
use crate::kit::{Product, event};

#[test]
fn a_spark_error_while_staging_leaves_staging_empty() {
    let _server = engines::server();
    let product = Product::with_settings("");
    let input = product.input(
        "orders.jsonl",
        &[
            &event("e1", 1, "A", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "B", "2024-03-02T10:00:00Z"),
        ],
    );
    let config = engines::config(product.path());
    let (plan, _local) = engines::local_plan(&config, &input);
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    engines::spark_census(&mut engine, &config, &input);
    // The winners vanish from the session: the write's query fails in Spark.
    engine
        .session()
        .rows(
            &format!("DROP VIEW {}", winners::WINNERS),
            "drop the winners",
        )
        .unwrap();
    let staging = product.path().join("lake/.staging");
    std::fs::create_dir_all(&staging).unwrap();
    let error = engine
        .stage(&config, &plan, &staging, &mut |_| true)
        .expect_err("the winners are gone");
    assert!(matches!(error, Error::Engine { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains(&engines::remote()), "{message}");
    assert_eq!(error.exit_code(), 1);
    let left: Vec<_> = std::fs::read_dir(&staging).unwrap().collect();
    assert!(left.is_empty(), "staging keeps {left:?}");
}

/// EIO injected into each rename and fsync a Spark landing makes (`WHARF_FAULT`, the
/// same hook as the local engine's): the Spark stage's own moves and fsyncs go through
/// `store`, so they fail like any other. After each: exit 1, every date whole old or
/// whole new, no staging left; a rerun without the fault publishes the new rows.
#[test]
fn an_io_error_at_any_rename_or_fsync_of_a_spark_landing_loses_nothing() {
    let _server = engines::server();
    let remote = engines::remote();
    let old = [
        event("o1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        event("o2", 2, "PENDING", "2024-03-02T10:00:00Z"),
    ]
    .join("\n");
    let new = [
        event("n1", 1, "PAID", "2024-03-01T11:00:00Z"),
        event("n2", 2, "PAID", "2024-03-02T11:00:00Z"),
    ]
    .join("\n");
    let land = |product: &Product, input: &std::path::Path, engine: &str, fault: Option<&str>| {
        let mut cmd = product.cmd(&[
            "run",
            input.to_str().unwrap(),
            "--engine",
            engine,
            "--remote",
            &remote,
        ]);
        if let Some(spec) = fault {
            cmd.env("WHARF_FAULT", spec);
        }
        cmd.output().unwrap()
    };
    // What the new input publishes, uninterrupted (the engines publish alike).
    let reference = Product::new();
    let first = reference.input_bytes("old.jsonl", old.as_bytes());
    assert_eq!(
        land(&reference, &first, "local", None).status.code(),
        Some(0)
    );
    let old_rows = reference.snapshot().rows;
    let second = reference.input_bytes("new.jsonl", new.as_bytes());
    assert_eq!(
        land(&reference, &second, "local", None).status.code(),
        Some(0)
    );
    let new_rows = reference.snapshot().rows;
    assert_ne!(old_rows, new_rows);
    let (mut staged_faults, mut runs) = (0, 0);
    for op in ["rename", "fsync"] {
        for nth in 1.. {
            assert!(nth <= 60, "{op}: more than 60 calls in one run?");
            let product = Product::new();
            let first = product.input_bytes("old.jsonl", old.as_bytes());
            assert_eq!(land(&product, &first, "local", None).status.code(), Some(0));
            let input = product.input_bytes("new.jsonl", new.as_bytes());
            let spec = format!("{op}:EIO:{nth}");
            let out = land(&product, &input, "spark", Some(&spec));
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            runs += 1;
            if !stderr.contains("WHARF_FAULT injected") {
                assert_eq!(out.status.code(), Some(0), "{spec}: {stderr}");
                break;
            }
            assert_eq!(out.status.code(), Some(1), "{spec}: {stderr}");
            assert!(stderr.contains("Input/output error"), "{spec}: {stderr}");
            // A fault in the Spark stage's own files is rerun on Spark; the rest of the
            // landing is the engines' shared code, rerun on the local engine for speed.
            let in_stage = stderr.contains("staged");
            staged_faults += usize::from(in_stage);
            assert!(!product.staging().exists(), "{spec}: staging left behind");
            for (date, rows) in &product.snapshot().rows {
                assert!(
                    old_rows.get(date) == Some(rows) || new_rows.get(date) == Some(rows),
                    "{spec}: {date} is neither whole old nor whole new"
                );
            }
            let engine = if in_stage { "spark" } else { "local" };
            let rerun = land(&product, &input, engine, None);
            assert_eq!(rerun.status.code(), Some(0), "{spec}: rerun");
            assert_eq!(
                product.snapshot().rows,
                new_rows,
                "{spec}: the rerun converges"
            );
        }
    }
    assert!(
        staged_faults > 0,
        "no fault reached the Spark stage's own files in {runs} runs"
    );
}
