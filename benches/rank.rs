//! `rank`: the best event per key over the same ~300k accepted events (~90k keys, 15%
//! identical retries, 2% same-instant ties), two ways, in one criterion group:
//!
//! - `wharf_tally`: `Tally::new` + `reserve` (as `land` does) + `push_batch` of every
//!   batch + `finish`: the merging thread's work. Timed: collapsing retries (and checking
//!   conflicts); the best-per-key table, built from empty; the line counts; sorting the
//!   winners by key and decoding their records; the per-date row counts. Single-threaded.
//!   Input: the accepted events in batches of 8,192, encoded and hashed beforehand (the
//!   classifying threads' work, outside the timing).
//! - `polars_sort_unique`: `row_number() = 1` semantics in polars 0.55. Timed: building
//!   the `DataFrame` from four owned column `Vec`s (order_id i64, updated_at i64 ns, seq
//!   `Option<i64>`, line u64) — included because Wharf's timing builds its tables too —
//!   then sorting by order_id asc, updated_at desc, seq desc nulls last, line desc, then
//!   `unique_stable` keep First on order_id. Polars' own thread pool (every core) is
//!   used. Input: the column `Vec`s, cloned per iteration outside the timing. It does
//!   less work than Wharf: no retry or conflict check, no counts, four columns only.
//!
//! Both give the winners sorted by key; the setup checks they agree on (key, instant,
//! seq) for every key. Throughput is in accepted events.
//!
//! `cargo bench --bench rank -- --warm-up-time 1 --measurement-time 5`

mod common;

use std::hint::black_box;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use polars::prelude::*;
use wharf::contract::{Outcome, Schema};
use wharf::engine::local::{Finish, Summary, Tally};
use wharf::plan::Batch;

/// Lines generated; 3% are rejects, leaving ~300k accepted events over ~90k keys.
const LINES: usize = 310_000;

/// The ranking columns of the accepted events.
#[derive(Clone)]
struct Columns {
    order_id: Vec<i64>,
    updated_at: Vec<i64>,
    seq: Vec<Option<i64>>,
    line: Vec<u64>,
}

fn columns(accepted: &[(u64, Outcome)], schema: &Schema) -> Columns {
    let mut columns = Columns {
        order_id: Vec::with_capacity(accepted.len()),
        updated_at: Vec::with_capacity(accepted.len()),
        seq: Vec::with_capacity(accepted.len()),
        line: Vec::with_capacity(accepted.len()),
    };
    for (line, outcome) in accepted {
        let Outcome::Accepted(record) = outcome else {
            continue;
        };
        let at = record[schema.order_by]
            .instant()
            .expect("updated_at is a timestamp");
        columns
            .order_id
            .push(record[schema.key].int().expect("order_id is an int"));
        columns
            .updated_at
            .push(at.secs() * 1_000_000_000 + i64::from(at.nanos()));
        columns
            .seq
            .push(schema.tiebreak.and_then(|i| record[i].int()));
        columns.line.push(*line);
    }
    columns
}

/// The accepted events in batches of 8,192, encoded and hashed as the classifying
/// threads hand them over.
fn batches(accepted: &[(u64, Outcome)], schema: &Schema) -> Vec<Batch> {
    accepted
        .chunks(8192)
        .map(|chunk| {
            let mut batch = Batch::default();
            for (line, outcome) in chunk {
                batch.push(*line, outcome.clone(), schema);
            }
            batch
        })
        .collect()
}

fn wharf_rank(batches: &[Batch], events: usize, schema: &Schema) -> Summary {
    let mut tally = Tally::new(schema);
    tally.reserve(events);
    for batch in batches {
        tally.push_batch(batch);
    }
    let Ok(Finish::Done(summary)) = tally.finish() else {
        panic!("generated lines have no conflicts, and memory scratch cannot fail");
    };
    *summary
}

fn polars_rank(columns: Columns) -> PolarsResult<DataFrame> {
    let height = columns.line.len();
    let frame = DataFrame::new(
        height,
        vec![
            Column::new("order_id".into(), columns.order_id),
            Column::new("updated_at".into(), columns.updated_at),
            Column::new("seq".into(), columns.seq),
            Column::new("line".into(), columns.line),
        ],
    )?;
    let sorted = frame.sort(
        ["order_id", "updated_at", "seq", "line"],
        SortMultipleOptions::default()
            .with_order_descending_multi([false, true, true, true])
            .with_nulls_last(true),
    )?;
    sorted.unique_stable(Some(&["order_id".into()]), UniqueKeepStrategy::First, None)
}

/// (key, instant ns, seq) of each winner, in output order.
type Winners = Vec<(i64, i64, Option<i64>)>;

fn wharf_winners(summary: &Summary, schema: &Schema) -> Winners {
    let winners: Vec<(u64, Outcome)> = summary
        .winners
        .events()
        .map(|w| (w.line, Outcome::Accepted(w.record)))
        .collect();
    let c = columns(&winners, schema);
    (0..c.line.len())
        .map(|i| (c.order_id[i], c.updated_at[i], c.seq[i]))
        .collect()
}

fn polars_winners(frame: &DataFrame) -> PolarsResult<Winners> {
    let order_id = frame.column("order_id")?.i64()?;
    let updated_at = frame.column("updated_at")?.i64()?;
    let seq = frame.column("seq")?.i64()?;
    Ok(order_id
        .iter()
        .zip(updated_at.iter())
        .zip(seq.iter())
        .map(|((k, t), s)| (k.unwrap_or_default(), t.unwrap_or_default(), s))
        .collect())
}

fn bench_rank(c: &mut Criterion) {
    let config = common::config();
    let schema = &config.schema;
    let accepted = common::accepted(&common::lines(LINES), schema);
    let cols = columns(&accepted, schema);

    let batched = batches(&accepted, schema);
    let summary = wharf_rank(&batched, accepted.len(), schema);
    let frame = polars_rank(cols.clone()).expect("polars ranks the events");
    let (ours, theirs) = (
        wharf_winners(&summary, schema),
        polars_winners(&frame).expect("polars columns are i64"),
    );
    assert_eq!(ours, theirs, "Wharf and polars pick the same winners");
    eprintln!(
        "rank: {} accepted events, {} keys, {} retries, {} ties by arrival",
        accepted.len(),
        summary.counts.keys,
        summary.counts.retries,
        summary.counts.ties_by_arrival
    );
    drop((summary, frame));

    let mut group = c.benchmark_group("rank");
    group.throughput(Throughput::Elements(accepted.len() as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(20);
    group.bench_function("wharf_tally", |b| {
        b.iter(|| black_box(wharf_rank(&batched, accepted.len(), schema)))
    });
    group.bench_function("polars_sort_unique", |b| {
        b.iter_batched(
            || cols.clone(),
            |input| black_box(polars_rank(input).expect("polars ranks the events")),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_rank);
criterion_main!(benches);
