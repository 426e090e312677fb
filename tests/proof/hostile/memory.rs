//! Memory bounded by configuration, not by the input (issue 48): a compressed file of
//! millions of rejected lines, and one event retried a million times, cost `plan` and
//! `run` about what a one-line file costs. Peaks are the child's own (GNU time's wait4
//! rusage), never a timing. The inputs are scaled down so that a debug build reads them
//! in seconds; docs/operations.md ("Hostile input") gives the full-size figures.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{peak_rss_kib, valid};
use crate::common::Product;

/// The bound on a run's peak, whatever the input.
const BOUND_KIB: u64 = 200 * 1024;

fn gzip(product: &Product, name: &str, line: &[u8], times: usize) -> PathBuf {
    let path = product.path().join("inbox").join(name);
    let file = std::fs::File::create(&path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let block: Vec<u8> = line.repeat(4096);
    for _ in 0..times / 4096 {
        gz.write_all(&block).unwrap();
    }
    gz.write_all(&line.repeat(times % 4096)).unwrap();
    gz.finish().unwrap();
    path
}

/// The peak of `wharf <command> <input>`.
fn peak(product: &Product, command: &str, input: &Path) -> u64 {
    peak_rss_kib(product, &[command], input)
        .expect("GNU time (/usr/bin/time) reports the child's peak: install the `time` package")
}

/// `plan` and `run` of `input` peak under [`BOUND_KIB`] and within `over_mib` of a plan
/// of the one-line `small` (the chunks in flight and the tables' fixed room).
fn assert_bounded(product: &Product, input: &Path, small: &Path, over_mib: u64) {
    let base = peak(product, "plan", small);
    for command in ["plan", "run"] {
        let kib = peak(product, command, input);
        eprintln!("{command}: {kib} KiB peak (one line: {base} KiB)");
        assert!(kib < BOUND_KIB, "{command}: {kib} KiB");
        assert!(
            kib < base + over_mib * 1024,
            "{command}: {kib} KiB over {base}"
        );
    }
}

#[test]
fn two_million_rejected_lines_of_a_gzip_cost_what_one_line_costs() {
    // Two million `{}` lines (6 MB, a 12 KB gzip): every line a `missing_field` reject,
    // each held in memory before (about 130 bytes a line: 290 MiB here, 4.2 GB and an
    // abort for the 10 GB).
    let product = Product::new();
    let small = product.input_bytes("one.jsonl", &[valid(1), b"\n".to_vec()].concat());
    let input = gzip(&product, "empty.jsonl.gz", b"{}\n", 2_000_000);
    assert_bounded(&product, &input, &small, 64);
    // The counts still cover the whole file, and quarantine holds every reject.
    let plan = product.plan_json(&input).json();
    assert_eq!(plan["counts"]["rejected"], 2_000_000);
    assert_eq!(plan["counts"]["by_reason"]["missing_field"], 2_000_000);
    let sha = plan["input_sha256"].as_str().unwrap().to_owned();
    let rejects = std::fs::read(product.quarantine.join(&sha).join("rejects.jsonl")).unwrap();
    assert_eq!(rejects.iter().filter(|&&b| b == b'\n').count(), 2_000_000);
}

#[test]
fn an_event_retried_a_million_times_costs_what_one_line_costs() {
    // One valid line, 1.5 million times (one key, one event): §2's table was sized for
    // every record of the id's bucket (35 bytes a retry: 874 MB for 25M retries).
    let product = Product::new();
    let mut line = valid(1);
    line.push(b'\n');
    let small = product.input_bytes("one.jsonl", &line);
    let input = gzip(&product, "retries.jsonl.gz", &line, 1_500_000);
    assert_bounded(&product, &input, &small, 40);
    let rows = product.rows("2024-03-01");
    assert_eq!(rows.len(), 1, "one key, one row");
    let checkpoint = product.checkpoint("retries.jsonl.gz").unwrap();
    assert_eq!(checkpoint["retries"], 1_499_999, "{checkpoint}");
}
