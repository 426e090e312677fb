//! `classify`: lines per second over 100k realistic lines (see `common`: mostly valid
//! order events, 3% rejects of eight kinds), two ways:
//!
//! - `lines_100k`: [`wharf::contract::classify`], the full classifier, every line, its
//!   [`wharf::contract::Outcome`] dropped (the record's allocation included).
//! - `batch_100k`: [`wharf::plan::Batch::classify`], what the classifying threads run:
//!   the fast path, the full classifier for the lines it declines, the records encoded
//!   and hashed into one batch per 8,192 lines (buffers reused, as `land` does).
//!
//! Not timed: generating the lines.
//!
//! `cargo bench --bench classify -- --warm-up-time 1 --measurement-time 5`

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wharf::contract::{LineBytes, classify};
use wharf::plan::Batch;

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
    group.bench_function("batch_100k", |b| {
        let mut batch = Batch::default();
        b.iter(|| {
            for (chunk, start) in lines.chunks(8192).zip((1u64..).step_by(8192)) {
                batch.clear();
                for (line, number) in chunk.iter().zip(start..) {
                    batch.classify(number, LineBytes::Kept(black_box(line)), schema);
                }
                black_box(&batch);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_classify);
criterion_main!(benches);
