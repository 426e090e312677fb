//! A file Spark reads in many splits still numbers every line exactly: a reject on the
//! last line of each split is dropped at its number, and line-dependent tiebreaks across
//! split edges pick the same winners as the local engine.

use wharf::engine::spark::{SparkEngine, lines};
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
    let blocks = engine
        .session()
        .rows(
            &format!("SELECT count(DISTINCT block) FROM {}", lines::RAW),
            "count the blocks",
        )
        .unwrap();
    let blocks = blocks[0].get(0).and_then(|v| v.as_i64()).unwrap();
    assert!(blocks > 10, "Spark read the file in {blocks} blocks");
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
