//! Memory bounded whatever the input and the settings (issues 48 and 60): a compressed
//! file of millions of rejected lines, and one event retried a million times, cost `plan`
//! and `run` about what a one-line file costs, and a reject cap of 10⁸ costs what the
//! default cap costs. Peaks are the child's own (GNU time's wait4
//! rusage), never a timing. The inputs are scaled down so that a debug build reads them
//! in seconds; docs/operations.md ("Hostile input") gives the full-size figures.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{peak_rss_kib, valid};
use crate::common::{CONFIG, Product};

/// The bound on a run's peak, whatever the input.
const BOUND_KIB: u64 = 200 * 1024;

fn gzip(product: &Product, name: &str, line: &[u8], times: usize) -> PathBuf {
    gzip_then(product, name, line, times, b"")
}

/// [`gzip`] with `last` after the repeated lines.
fn gzip_then(product: &Product, name: &str, line: &[u8], times: usize, last: &[u8]) -> PathBuf {
    let path = product.path().join("inbox").join(name);
    let file = std::fs::File::create(&path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let block: Vec<u8> = line.repeat(4096);
    for _ in 0..times / 4096 {
        gz.write_all(&block).unwrap();
    }
    gz.write_all(&line.repeat(times % 4096)).unwrap();
    gz.write_all(last).unwrap();
    gz.finish().unwrap();
    path
}

/// Rows in `product`'s quarantine of the input `sha`.
fn quarantined(product: &Product, sha: &str) -> usize {
    let rejects = std::fs::read(product.quarantine.join(sha).join("rejects.jsonl")).unwrap();
    rejects.iter().filter(|&&b| b == b'\n').count()
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
    assert_eq!(quarantined(&product, &sha), 2_000_000);
}

#[test]
fn a_reject_cap_of_a_hundred_million_costs_what_the_default_cap_costs() {
    // Two million rejects under a cap of 10⁸: the findings were held up to the cap
    // (about 130 bytes each: 829 MiB for 8M lines in a release build), so an operator who
    // never wants a file refused for its rejects let one file take gigabytes.
    const REJECTS: usize = 2_000_000;
    let capped = Product::new();
    let uncapped_config = CONFIG.replace(
        "max_rejected_lines = 100\n",
        "max_rejected_lines = 100000000\n",
    );
    assert_ne!(uncapped_config, CONFIG, "the sample's cap moved");
    let uncapped = Product::with_config(&uncapped_config);
    let input = |product: &Product| gzip(product, "empty.jsonl.gz", b"{}\n", REJECTS);
    let (at_default, at_most) = (input(&capped), input(&uncapped));
    for command in ["plan", "run"] {
        let default_kib = peak(&capped, command, &at_default);
        let uncapped_kib = peak(&uncapped, command, &at_most);
        eprintln!("{command}: cap 10^8 {uncapped_kib} KiB peak, cap 100 {default_kib} KiB");
        assert!(uncapped_kib < BOUND_KIB, "{command}: {uncapped_kib} KiB");
        assert!(
            uncapped_kib < default_kib + 16 * 1024,
            "{command}: {uncapped_kib} KiB under a cap of 10^8, {default_kib} KiB under 100"
        );
    }
    // Under the cap, so not refused for its rejects; the quarantine lists every one.
    let plan = uncapped.plan_json(&at_most).json();
    assert_eq!(plan["counts"]["rejected"], REJECTS);
    assert_ne!(plan["reason"], "reject_cap", "{plan}");
    let sha = plan["input_sha256"].as_str().unwrap();
    assert_eq!(quarantined(&uncapped, sha), REJECTS);
}

#[test]
fn a_breach_after_millions_of_spilled_rejects_names_its_line() {
    // The held findings are the first few thousand: the breach is in the spill, which
    // keeps the first one for the refusal.
    const REJECTS: usize = 1_000_000;
    let config = CONFIG.replace(
        "max_rejected_lines = 100\n",
        "max_rejected_lines = 100000000\n",
    );
    let product = Product::with_config(&config);
    let mut breach = valid(9);
    breach.truncate(breach.len() - 1);
    breach.extend_from_slice(b",\"email\":\"x\"}\n");
    let input = gzip_then(&product, "late.jsonl.gz", b"{}\n", REJECTS, &breach);
    let plan = product.plan_json(&input).json();
    assert_eq!(plan["reason"], "prohibited_field", "{plan}");
    let line = (REJECTS + 1).to_string();
    let detail = plan["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(&format!("line {line}")), "{plan}");
    let ran = product.wharf(&["run", input.to_str().unwrap()]);
    assert_eq!(ran.code, 3, "refused: {}", ran.stderr);
    let sha = plan["input_sha256"].as_str().unwrap();
    assert_eq!(quarantined(&product, sha), REJECTS + 1);
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
