//! Every line keeps its exact number on Spark: the driver numbers the lines as the local
//! engine does and hands Spark the accepted records, so a reject on the last line of
//! each would-be split is dropped at its number, line-dependent tiebreaks pick the same
//! winners as the local engine, and Spark never reads the input itself.

use wharf::engine::spark::{SparkEngine, handoff};
use wharf::plan::{Census, Plan};

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
    let mut text = lines.join("\n");
    text.push('\n');
    let (plan, census) = agree_over_splits(&product, text.as_bytes(), SPLIT);
    let rejected: Vec<u64> = plan.findings.iter().map(|f| f.line).collect();
    let want: Vec<u64> = last_of_split.iter().map(|&i| i as u64 + 1).collect();
    assert_eq!(
        rejected, want,
        "the local engine finds the rejects where they are"
    );
    assert!(want.len() > 100, "{} splits", want.len());
    assert!(census.counts.ties_by_arrival > 0);
}

/// Lands `bytes` with the local engine and with Spark reading it in splits of `split`
/// bytes (many of them), and requires the same census and staged rows.
fn agree_over_splits(product: &Product, bytes: &[u8], split: usize) -> (Plan, Census) {
    let input = product.input_bytes("orders.jsonl", bytes);
    let config = engines::config(product.path());
    let (plan, mut local_engine) = engines::local_plan(&config, &input);
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    engine
        .set("spark.sql.files.maxPartitionBytes", &split.to_string())
        .unwrap();
    let census = engines::spark_census(&mut engine, &config, &input);
    assert_census_matches(&census, &plan, "census over many splits");
    let local = engines::staged_rows(
        &mut local_engine,
        &config,
        &plan,
        &product.path().join("local"),
    );
    let staging = product.path().join("lake/.staging");
    let spark = engines::staged_rows(&mut engine, &config, &plan, &staging);
    assert_eq!(spark, local, "the winners, whose tiebreak is their line");
    (plan, census)
}

/// The places where a split layout could misnumber a line: a line starting exactly on a
/// split's first byte (its `\n` the last byte before), a `\n` that is a split's first
/// byte, lines longer than a split, a reject, a blank line and a `\r\n` on an edge, a
/// BOM on the first line, and the file's end both on an edge (its size a multiple of the
/// split) and with no trailing newline. Keys repeat at one instant, so every winner is
/// decided by its line number.
#[test]
fn lines_on_and_across_split_edges_keep_their_numbers() {
    let _server = engines::server();
    const EDGE: usize = 128;
    for ending in ["size a multiple of the split", "no trailing newline"] {
        let mut bytes: Vec<u8> = "\u{FEFF}".as_bytes().to_vec();
        let mut n = 0usize;
        // One event whose `\n` is the byte at `newline`, padded through its status.
        let mut event_to = |bytes: &mut Vec<u8>, newline: usize| {
            n += 1;
            let line = event(&format!("e{n}"), (n % 7) as i64, "", "2024-03-01T10:00:00Z");
            let pad = newline - bytes.len() - line.len();
            let line = event(
                &format!("e{n}"),
                (n % 7) as i64,
                &"s".repeat(pad),
                "2024-03-01T10:00:00Z",
            );
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        };
        for i in 0..36 {
            // The first edge with room for an event before it.
            let edge = (bytes.len() + 100).div_ceil(EDGE) * EDGE;
            match i % 6 {
                // The next line starts on the edge.
                0 => event_to(&mut bytes, edge - 1),
                // The edge is a `\n`.
                1 => event_to(&mut bytes, edge),
                // A line over three splits, ending just past an edge.
                2 => event_to(&mut bytes, edge + 2 * EDGE + 5),
                // A reject starting on the edge.
                3 => {
                    event_to(&mut bytes, edge - 1);
                    bytes.extend_from_slice(b"{\"broken\":1\n");
                }
                // A blank line whose `\n` is the edge.
                4 => {
                    event_to(&mut bytes, edge - 1);
                    bytes.push(b'\n');
                }
                // A `\r\n` whose `\r` is the edge.
                _ => {
                    event_to(&mut bytes, edge);
                    let at = bytes.len() - 1;
                    bytes.insert(at, b'\r');
                }
            }
        }
        if ending == "no trailing newline" {
            let newline = bytes.len() + 200;
            event_to(&mut bytes, newline);
            bytes.pop();
        } else {
            let end = (bytes.len() + 100).div_ceil(EDGE) * EDGE;
            event_to(&mut bytes, end - 1);
            assert_eq!(bytes.len() % EDGE, 0);
        }
        let product = Product::with_settings("max_rejected_lines = 100");
        let (plan, census) = agree_over_splits(&product, &bytes, EDGE);
        assert!(
            plan.counts.rejected > 3 && plan.counts.blank > 3,
            "{ending}"
        );
        assert!(census.counts.ties_by_arrival > 0, "{ending}");
    }
}

/// Spark reads only what the driver handed over: the input deleted after the census
/// still stages the same rows, and the handoff beside the publish root is gone once the
/// engine is done with it.
#[test]
fn spark_never_reads_the_input_and_the_handoff_goes_with_the_engine() {
    let _server = engines::server();
    let product = Product::new();
    let lines: Vec<String> = (0..500)
        .map(|i| event(&format!("e{i}"), i % 50, "PAID", "2024-03-01T10:00:00Z"))
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let input = product.input("orders.jsonl", &refs);
    let config = engines::config(product.path());
    let (plan, mut local_engine) = engines::local_plan(&config, &input);
    let local = engines::staged_rows(
        &mut local_engine,
        &config,
        &plan,
        &product.path().join("local"),
    );
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    let census = engines::spark_census(&mut engine, &config, &input);
    assert_census_matches(&census, &plan, "census");
    let root = handoff::handoff_root(&config);
    let handed: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
    assert_eq!(handed.len(), 1, "one handoff while the rows are cached");
    std::fs::remove_file(&input).unwrap();
    let staging = product.path().join("lake/.staging");
    let spark = engines::staged_rows(&mut engine, &config, &plan, &staging);
    assert_eq!(
        spark, local,
        "staged from the handoff, not the deleted input"
    );
    drop(engine);
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
    assert!(left.is_empty(), "the handoff outlived its engine: {left:?}");
}
