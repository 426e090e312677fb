//! A file Spark reads in many splits still numbers every line exactly: a reject on the
//! last line of each split is dropped at its number, and line-dependent tiebreaks across
//! split edges pick the same winners as the local engine.

use wharf::engine::spark::{SparkEngine, lines};

use crate::engines::{self, assert_census_matches};
use crate::kit::{Product, event};

/// Bytes per split.
const SPLIT: usize = 1024;

#[test]
fn a_file_over_many_splits_numbers_every_line_exactly() {
    let _server = engines::server();
    // 3,000 lines of varied length; keys repeat every 40 lines with equal instants, so
    // each key's winner is its latest line (a tie by arrival).
    let mut lines: Vec<String> = (0..3000)
        .map(|i| {
            event(
                &format!("e{i}"),
                i % 40,
                &"s".repeat(1 + i as usize % 17),
                "2024-03-01T10:00:00Z",
            )
        })
        .collect();
    // The line holding the last byte before each split edge ends that split.
    let mut at = 0usize;
    let mut last_of_split = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let end = at + line.len() + 1;
        if at / SPLIT != (end - 1) / SPLIT || end.is_multiple_of(SPLIT) {
            last_of_split.push(i);
        }
        at = end;
    }
    for &i in &last_of_split {
        lines[i] = format!("{{\"broken\":{i}");
    }
    let product = Product::with_settings(&format!("max_rejected_lines = {}", lines.len()));
    let input = product.input(
        "orders.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let config = engines::config(product.path());
    let (plan, mut local_engine) = engines::local_plan(&config, &input);
    let rejected: Vec<u64> = plan.findings.iter().map(|f| f.line).collect();
    let want: Vec<u64> = last_of_split.iter().map(|&i| i as u64 + 1).collect();
    assert_eq!(
        rejected, want,
        "the local engine finds the rejects where they are"
    );
    assert!(want.len() > 100, "{} splits", want.len());

    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    engine
        .set("spark.sql.files.maxPartitionBytes", &SPLIT.to_string())
        .unwrap();
    let census = engines::spark_census(&mut engine, &config, &input);
    let blocks = engine
        .session()
        .rows(
            &format!("SELECT count(DISTINCT block) FROM {}", lines::RAW),
            "count the blocks",
        )
        .unwrap();
    let blocks = blocks[0].get(0).and_then(|v| v.as_i64()).unwrap();
    assert!(blocks > 100, "Spark read the file in {blocks} blocks");
    assert_census_matches(&census, &plan, "census over many splits");
    assert!(census.counts.ties_by_arrival > 0);

    let local = engines::staged_rows(
        &mut local_engine,
        &config,
        &plan,
        &product.path().join("local"),
    );
    let staging = product.path().join("lake/.staging");
    let spark = engines::staged_rows(&mut engine, &config, &plan, &staging);
    assert_eq!(spark, local, "the winners, whose tiebreak is their line");
}

/// Spark's own view of the file (`_metadata`'s size and modification time) must be the
/// driver's: a file that differs is an input error naming it, never a numbering of other
/// bytes.
#[test]
fn a_file_spark_sees_otherwise_than_the_driver_is_an_input_error() {
    let _server = engines::server();
    let product = Product::new();
    let input = product.input(
        "orders.jsonl",
        &[&event("e1", 1, "A", "2024-03-01T10:00:00Z")],
    );
    let file = std::fs::File::open(&input).unwrap();
    let stamp = lines::FileStamp::of(&file, &input).unwrap();
    let engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    let path = std::fs::canonicalize(&input).unwrap();
    let register = |stamp| {
        let part = lines::PartFile {
            path: path.clone(),
            stamp,
            lines: 1,
            first_line: 0,
        };
        lines::register(engine.session(), &[part], &[])
    };
    register(stamp).expect("the driver's own stamp is Spark's");
    for other in [
        lines::FileStamp {
            size: stamp.size + 1,
            ..stamp
        },
        lines::FileStamp {
            mtime_ms: stamp.mtime_ms - 1000,
            ..stamp
        },
    ] {
        let error = register(other).expect_err("another stamp must fail");
        let text = error.to_string();
        assert!(matches!(error, wharf::Error::Input { .. }), "{text}");
        assert!(
            text.contains("orders.jsonl") && text.contains("changed"),
            "{text}"
        );
    }
}
