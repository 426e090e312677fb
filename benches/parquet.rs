//! `parquet`: rows per second of `write_partition` for one date's ~290k winner rows
//! (1M generated lines, ranked by `Tally`), `files_per_date` 1, into a temp folder.
//!
//! Timed: building the Parquet schema, encoding the seven columns (snappy, statistics,
//! dictionaries), writing the file and its fsync, as a publish does for each date. Not
//! timed: generating, classifying and ranking the input. The same file is rewritten
//! (truncated) on every iteration; the temp folder is on the machine's disk.
//!
//! `cargo bench --bench parquet -- --warm-up-time 1 --measurement-time 5`

mod common;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use wharf::engine::local::parquet::write_partition;
use wharf::engine::local::{Finish, Tally};

/// Lines generated: ~0.29 keys per line gives ~290k winners.
const LINES: usize = 1_000_000;

fn bench_parquet(c: &mut Criterion) {
    let config = common::config();
    let schema = &config.schema;
    let mut tally = Tally::new(schema);
    for (line, outcome) in common::accepted(&common::lines(LINES), schema) {
        tally.push(line, outcome);
    }
    let Ok(Finish::Done(summary)) = tally.finish() else {
        panic!("generated lines have no conflicts, and memory scratch cannot fail");
    };
    assert_eq!(summary.dates.len(), 1, "every winner is on one UTC date");
    let rows = &summary.winners;
    let folder = tempfile::tempdir().expect("a temp folder for the Parquet file");
    let written = write_partition(folder.path(), schema, rows, config.files_per_date)
        .expect("the partition is written");
    let size = std::fs::metadata(&written[0]).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "parquet: {} rows, {} file(s), {size} bytes",
        rows.len(),
        written.len()
    );

    let mut group = c.benchmark_group("parquet");
    group.throughput(Throughput::Elements(rows.len() as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.bench_function("write_partition", |b| {
        b.iter(|| {
            write_partition(folder.path(), schema, rows, config.files_per_date)
                .expect("the partition is written")
        })
    });
    group.finish();
}

criterion_group!(benches, bench_parquet);
criterion_main!(benches);
