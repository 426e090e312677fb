//! `classify`: lines per second of [`wharf::contract::classify`] over 100k realistic
//! lines (see `common`: mostly valid order events, 3% rejects of eight kinds).
//!
//! Timed: classifying every line and dropping its [`wharf::contract::Outcome`] (the
//! record's allocation included). Not timed: generating the lines.
//!
//! `cargo bench --bench classify -- --warm-up-time 1 --measurement-time 5`

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wharf::contract::{LineBytes, classify};

const LINES: usize = 100_000;

fn bench_classify(c: &mut Criterion) {
    let config = common::config();
    let schema = &config.schema;
    let lines = common::lines(LINES);
    let accepted = common::accepted(&lines, schema).len();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    eprintln!(
        "classify: {LINES} lines, {accepted} accepted, {bytes} bytes ({:.1} bytes/line)",
        bytes as f64 / LINES as f64
    );

    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(LINES as u64));
    group.bench_function("lines_100k", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(classify(LineBytes::Kept(black_box(line)), schema));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_classify);
criterion_main!(benches);
