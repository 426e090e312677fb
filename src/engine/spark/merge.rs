//! Merge mode (CONTRACT.md §10) on Spark: [`merge_census`] meets a batch's winners with
//! the rows of the published files the batch reads and gives a [`MergeCensus`], the same
//! counts and new rows as `plan::merge::merge_files` computes on one machine.
//!
//! # The winners DataFrame (the interface)
//!
//! One row per key, the batch's rank 1 after §1–3, with these columns:
//!
//! - every declared field by its name, typed: `int` → `BIGINT`, `string` → `STRING`,
//!   `timestamp` → `TIMESTAMP` (microseconds, truncated as the published column is);
//! - `event_date` `DATE`: the UTC date of its `partition_by_date_of` instant (§4);
//! - `__order_secs` `BIGINT` and `__order_nanos` `BIGINT`: the `order_by` instant exactly
//!   (seconds since the epoch, floored, and the nanoseconds after them), since a
//!   `TIMESTAMP` holds only microseconds.
//!
//! Other columns (the winner's `__line`, `__tied`) may be present and are not read.
//!
//! # What it does
//!
//! Where the batch's keys live is found on the driver from the published files' footers
//! and bloom filters, by the local engine's rule ([`crate::engine::touched`]), and Spark
//! reads only those files ([`Published`]), each row with its file's index among its
//! date's. Each winner meets the best published copy of its key under §3's
//! order (instant, then tiebreak); a key on two dates (a crash between two swaps) leaves
//! every other copy's date. The published rows hold microseconds, so their instant is
//! that of the truncated value, as the local engine reads them back.
//!
//! An identical row changes nothing: every declared field equal and the `order_by`
//! instant equal to the nanosecond. Other timestamp fields are compared at microseconds,
//! the precision the winners carry.

use std::collections::{BTreeMap, BTreeSet};

use spark_connect::column::col;
use spark_connect::functions::expr;
use spark_connect::plan::JoinType;
use spark_connect::row::{Row, Value as SparkValue};
use spark_connect::{DataFrame, SparkError, SparkSession};

use crate::config::Config;
use crate::contract::{Date, FieldType, Schema};
use crate::error::{Error, Result};
use super::published::Published;
use super::winners::rank_order;
use crate::plan::rank::RankBy;
use crate::plan::{MergeCounts, Outcome};

/// What a batch does to the published files it reads, decided by Spark.
#[derive(Clone)]
pub struct MergeCensus {
    /// Each date the batch gains, changes or empties: how its keys change (the file
    /// counts are the layout's, [`super::layout`]).
    pub dates: BTreeMap<Date, MergeCounts>,
    /// The new rows of the files read, by (date, bucket): a read file's bucket is its
    /// index among its date's files; one past them holds new keys no read file takes.
    pub buckets: BTreeMap<(Date, usize), Bucket>,
    /// Winners older than the published row of their key (§10.3).
    pub stale: u64,
    /// Winners that tie the published row on instant and tiebreak (the batch wins).
    pub ties_by_arrival: u64,
    /// The new rows of every bucket of `buckets` of every date of `dates`: the declared
    /// fields, `event_date` and `_bucket`, unsorted; the stage writes those the layout
    /// rewrites.
    pub rows: DataFrame,
}

/// One bucket's new rows, counted by Spark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    pub rows: u64,
    /// Of those, the batch's winners (the rest are the file's own, kept).
    pub arrived: u64,
    /// By UTC hour of `partition_by_date_of`.
    pub by_hour: [u64; 24],
}

/// Merges `winners` (laid out as the module docs say) into the published files `source`
/// reads (those of `batch`'s keys, [`Published::of`]). Reads those files; writes nothing.
/// `remote` names the server in errors (`spark sc://host:port`, no token).
pub fn merge_census(
    spark: &SparkSession,
    remote: &str,
    config: &Config,
    source: &Published,
    winners: &DataFrame,
) -> Result<MergeCensus> {
    let schema = &config.schema;
    let names = Names::of(schema);
    let winners = winners.filter(expr("event_date IS NOT NULL"));
    let published = published_rows(spark, remote, config, source)?;

    let copies = ranked_copies(&published, &winners, &names, schema);
    let best = copies.filter(expr("_copy_rank = 1"));
    let extras = copies
        .filter(expr("_copy_rank > 1"))
        .select_expr(vec![&names.published_key, "_published_date"]);
    let met = winners
        .join(
            &best,
            Some(expr(&format!("{} = {}", names.key, names.published_key))),
            JoinType::LeftOuter,
        )
        .with_column("_outcome", expr(&outcome(&names, schema)));
    let met = met.with_column(
        "_tie",
        expr(&format!(
            "_outcome IN ({}) AND {} = 0",
            outcomes(Outcome::replaces),
            order(&names, schema)
        )),
    );

    let tallied = tally(remote, &met, &extras)?;
    let dates: Vec<Date> = tallied.by_date.keys().copied().collect();
    let bucket = super::layout::bucket_sql(source, &names.key, config.target_file_rows);
    let rows = new_rows(&published, &met, &extras, &names, &dates, &bucket);
    let buckets = by_bucket(remote, &rows, &names.fields[schema.date_of])?;
    Ok(MergeCensus {
        dates: tallied.by_date,
        buckets,
        stale: tallied.stale,
        ties_by_arrival: tallied.ties,
        rows,
    })
}

/// Column names as SQL identifiers: the declared fields, and their published copies
/// renamed `_published_<index>` so a join never makes a name ambiguous.
struct Names {
    fields: Vec<String>,
    published: Vec<String>,
    key: String,
    published_key: String,
}

impl Names {
    fn of(schema: &Schema) -> Self {
        let fields: Vec<String> = schema.fields.iter().map(|f| quoted(&f.name)).collect();
        let published: Vec<String> = (0..fields.len())
            .map(|i| format!("_published_{i}"))
            .collect();
        Names {
            key: fields[schema.key].clone(),
            published_key: published[schema.key].clone(),
            fields,
            published,
        }
    }
}

/// `name` as a back-quoted SQL identifier.
fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The rows of the files the batch reads, fields renamed as [`Names`] says, plus
/// `_published_date` and `_published_file`; no rows when it reads none.
fn published_rows(
    spark: &SparkSession,
    remote: &str,
    config: &Config,
    source: &Published,
) -> Result<DataFrame> {
    let schema = &config.schema;
    let names = Names::of(schema);
    let renamed: Vec<String> = names
        .fields
        .iter()
        .zip(&names.published)
        .map(|(field, published)| format!("{field} AS {published}"))
        .chain([
            "event_date AS _published_date".to_owned(),
            "_published_file".to_owned(),
        ])
        .collect();
    let columns: Vec<String> = schema
        .fields
        .iter()
        .zip(&names.fields)
        .map(|(field, name)| format!("{name} {}", sql_type(field.ty)))
        .collect();
    let frame = if let Some(read) = source.read(spark, &columns.join(", ")) {
        read
    } else {
        let nulls: Vec<String> = schema
            .fields
            .iter()
            .map(|f| format!("CAST(NULL AS {}) AS {}", sql_type(f.ty), quoted(&f.name)))
            .chain([
                "CAST(NULL AS DATE) AS event_date".to_owned(),
                "CAST(NULL AS INT) AS _published_file".to_owned(),
            ])
            .collect();
        spark
            .sql(&format!("SELECT {} WHERE false", nulls.join(", ")))
            .map_err(failed(remote, "build an empty published frame"))?
    };
    Ok(frame.select_expr(renamed.iter().map(String::as_str).collect()))
}

/// The published copies of the batch's keys, each ranked among its key's copies
/// (`_copy_rank` 1: the best by §3's order, a later date on a full tie).
fn ranked_copies(
    published: &DataFrame,
    winners: &DataFrame,
    names: &Names,
    schema: &Schema,
) -> DataFrame {
    let keys = winners.select_expr(vec![&format!("{} AS _batch_key", names.key)]);
    // Published copies have no line: a full tie goes to the later date.
    let order = rank_order(|by| match by {
        RankBy::Instant => vec![names.published[schema.order_by].clone()],
        RankBy::Tiebreak => schema
            .tiebreak
            .map(|i| names.published[i].clone())
            .into_iter()
            .collect(),
        RankBy::Line => vec![],
    });
    published
        .join(
            &keys,
            Some(expr(&format!("{} = _batch_key", names.published_key))),
            JoinType::LeftSemi,
        )
        .with_column(
            "_copy_rank",
            expr(&format!(
                "row_number() OVER (PARTITION BY {} ORDER BY {}, _published_date DESC)",
                names.published_key,
                order.join(", ")
            )),
        )
}

/// A SQL comparison of `a` and `b` (-1, 0 or 1), a null below any value as `Option`
/// orders.
fn compare(a: &str, b: &str) -> String {
    format!(
        "CASE WHEN {a} IS NULL AND {b} IS NULL THEN 0 WHEN {a} IS NULL THEN -1 \
         WHEN {b} IS NULL THEN 1 WHEN {a} > {b} THEN 1 WHEN {a} < {b} THEN -1 ELSE 0 END"
    )
}

/// How the winner stands against the published row under §3 (-1, 0 or 1): its exact
/// instant against the published microseconds, then the tiebreak. The published row has
/// no line: the batch's is the later arrival, so a full tie is 0, never stale.
fn order(names: &Names, schema: &Schema) -> String {
    let micros = format!("unix_micros({})", names.published[schema.order_by]);
    let seconds = format!("(({micros} - pmod({micros}, 1000000)) DIV 1000000)");
    let nanos = format!("(pmod({micros}, 1000000) * 1000)");
    let compared: Vec<String> = RankBy::ORDER
        .into_iter()
        .flat_map(|by| match by {
            RankBy::Instant => vec![
                compare("__order_secs", &seconds),
                compare("__order_nanos", &nanos),
            ],
            RankBy::Tiebreak => schema
                .tiebreak
                .map(|i| compare(&names.fields[i], &names.published[i]))
                .into_iter()
                .collect(),
            RankBy::Line => vec![],
        })
        .map(|c| format!("WHEN ({c}) <> 0 THEN ({c}) "))
        .collect();
    format!("(CASE {}ELSE 0 END)", compared.concat())
}

/// What the winner does: `insert` (a new key), `stale`, `same` (identical to the
/// published row), `update` (on the same date) or `move` (to another date).
fn outcome(names: &Names, schema: &Schema) -> String {
    let micros = format!("unix_micros({})", names.published[schema.order_by]);
    let identical: Vec<String> = names
        .fields
        .iter()
        .zip(&names.published)
        .map(|(field, published)| format!("{field} <=> {published}"))
        .chain([format!("__order_nanos <=> pmod({micros}, 1000000) * 1000")])
        .collect();
    // §10's outcomes in `Outcome::decide`'s order of tests.
    format!(
        "CASE WHEN _published_date IS NULL THEN '{insert}' WHEN {order} < 0 THEN '{stale}' \
         WHEN {identical} THEN '{same}' WHEN _published_date = event_date THEN '{update}' \
         ELSE '{moved}' END",
        insert = Outcome::Insert.code(),
        stale = Outcome::Stale.code(),
        same = Outcome::Same.code(),
        update = Outcome::Update.code(),
        moved = Outcome::Move.code(),
        order = order(names, schema),
        identical = identical.join(" AND "),
    )
}

/// The quoted codes of the outcomes `which` holds, for an `IN (…)`.
fn outcomes(which: fn(Outcome) -> bool) -> String {
    let codes: Vec<String> = Outcome::ALL
        .into_iter()
        .filter(|&o| which(o))
        .map(|o| format!("'{}'", o.code()))
        .collect();
    codes.join(", ")
}

/// The counts of a merge, gathered on the driver.
#[derive(Default)]
struct Tallied {
    by_date: BTreeMap<Date, MergeCounts>,
    stale: u64,
    ties: u64,
}

fn tally(remote: &str, met: &DataFrame, extras: &DataFrame) -> Result<Tallied> {
    let outcomes = met
        .group_by([
            col("event_date"),
            col("_published_date"),
            col("_outcome"),
            col("_tie"),
        ])
        .count()
        .collect()
        .map_err(failed(remote, "count the merge's outcomes"))?;
    let mut tallied = Tallied::default();
    for row in &outcomes {
        let n = count_at(row, 4)?;
        let date = date_at(row, 0)?;
        let code = row.get(2).and_then(SparkValue::as_str).unwrap_or_default();
        let outcome = Outcome::of_code(code).ok_or_else(|| {
            Error::internal(format!("the merge's query gave an unknown outcome {code:?}"))
        })?;
        if row.get(3).and_then(SparkValue::as_bool) == Some(true) {
            tallied.ties += n;
        }
        match outcome {
            Outcome::Stale => tallied.stale += n,
            Outcome::Same => {}
            Outcome::Insert => tallied.by_date.entry(date).or_default().inserted += n,
            Outcome::Update => tallied.by_date.entry(date).or_default().updated += n,
            Outcome::Move => {
                tallied.by_date.entry(date).or_default().moved_in += n;
                let old = date_at(row, 1)?;
                tallied.by_date.entry(old).or_default().moved_out += n;
            }
        }
    }
    let left = extras
        .group_by([col("_published_date")])
        .count()
        .collect()
        .map_err(failed(remote, "count the keys left on a second date"))?;
    for row in &left {
        let (date, n) = (date_at(row, 0)?, count_at(row, 1)?);
        tallied.by_date.entry(date).or_default().moved_out += n;
    }
    Ok(tallied)
}

/// The whole new rows of `dates`: the published rows the batch does not replace or
/// move away, and the winners that insert, update or move.
fn new_rows(
    published: &DataFrame,
    met: &DataFrame,
    extras: &DataFrame,
    names: &Names,
    dates: &[Date],
    bucket: &str,
) -> DataFrame {
    let dates: BTreeSet<Date> = dates.iter().copied().collect();
    let replaced = met
        .filter(expr(&format!("_outcome IN ({})", outcomes(Outcome::replaces))))
        .select_expr(vec![&names.published_key, "_published_date"])
        .union_all(extras)
        .select_expr(vec![
            &format!("{} AS _gone_key", names.published_key),
            "_published_date AS _gone_date",
        ]);
    let in_dates = |column: &str| expr(&format!("{column} IN ({})", date_list(&dates)));
    let kept_columns: Vec<String> = names
        .published
        .iter()
        .zip(&names.fields)
        .map(|(published, field)| format!("{published} AS {field}"))
        .chain([
            "_published_date AS event_date".to_owned(),
            "_published_file AS _bucket".to_owned(),
            "0 AS _arrived".to_owned(),
        ])
        .collect();
    let kept = published
        .filter(in_dates("_published_date"))
        .join(
            &replaced,
            Some(expr(&format!(
                "{} = _gone_key AND _published_date = _gone_date",
                names.published_key
            ))),
            JoinType::LeftAnti,
        )
        .select_expr(kept_columns.iter().map(String::as_str).collect());
    let bucket = format!("{bucket} AS _bucket");
    let columns: Vec<&str> = names
        .fields
        .iter()
        .map(String::as_str)
        .chain(["event_date", &bucket, "1 AS _arrived"])
        .collect();
    let incoming = met
        .filter(expr(&format!("_outcome IN ({})", outcomes(Outcome::writes))))
        .filter(in_dates("event_date"))
        .select_expr(columns);
    kept.union_by_name(&incoming)
}

/// The new rows by date and bucket: how many, how many arrived, and by UTC hour of
/// `date_of` (the session's zone is UTC). A bucket below 0 is a winner whose key the
/// driver gave no bucket: an error, before anything is written.
fn by_bucket(
    remote: &str,
    rows: &DataFrame,
    date_of: &str,
) -> Result<BTreeMap<(Date, usize), Bucket>> {
    let counted = rows
        .group_by([
            col("event_date"),
            col("_bucket"),
            expr(&format!("hour({date_of})")),
        ])
        .agg(vec![
            expr("count(1)").expression().clone(),
            expr("sum(_arrived)").expression().clone(),
        ])
        .collect()
        .map_err(failed(remote, "count the merged rows per file"))?;
    let mut buckets = BTreeMap::new();
    for row in &counted {
        let (date, hour) = (date_at(row, 0)?, count_at(row, 2)?);
        let at = row
            .get(1)
            .and_then(SparkValue::as_i64)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| Error::internal("a merged row of the batch has no file to go to"))?;
        let (n, arrived) = (count_at(row, 3)?, count_at(row, 4)?);
        let bucket: &mut Bucket = buckets.entry((date, at)).or_default();
        let slot = usize::try_from(hour).ok().and_then(|h| bucket.by_hour.get_mut(h));
        *slot.ok_or_else(|| Error::internal("Spark gave an hour past 23"))? += n;
        bucket.rows += n;
        bucket.arrived += arrived;
    }
    Ok(buckets)
}

/// `dates` as a SQL list of date literals; `NULL` (matching nothing) when empty.
pub(super) fn date_list(dates: &BTreeSet<Date>) -> String {
    if dates.is_empty() {
        return "NULL".to_owned();
    }
    let literals: Vec<String> = dates.iter().map(|d| format!("DATE'{d}'")).collect();
    literals.join(", ")
}

fn sql_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Int => "BIGINT",
        FieldType::String => "STRING",
        FieldType::Timestamp => "TIMESTAMP",
        FieldType::Float => "DOUBLE",
        FieldType::Bool => "BOOLEAN",
    }
}

fn date_at(row: &Row, index: usize) -> Result<Date> {
    match row.get(index) {
        Some(SparkValue::Date(days)) => Ok(Date(*days)),
        _ => Err(Error::internal(format!(
            "Spark gave no date in column {index} of a result row"
        ))),
    }
}

fn count_at(row: &Row, index: usize) -> Result<u64> {
    row.get(index)
        .and_then(SparkValue::as_i64)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| Error::internal("Spark gave a count that is not a count"))
}

/// Maps a Spark failure while doing `doing` to the error the operator reads: its error
/// condition where Spark gives one, since a message may quote row values.
fn failed<'r>(remote: &'r str, doing: &'static str) -> impl Fn(SparkError) -> Error + 'r {
    move |e| {
        let detail = match (e.get_condition(), e.get_sql_state()) {
            (Some(condition), Some(state)) => {
                format!("{doing}: Spark failed with {condition} (SQLSTATE {state})")
            }
            (Some(condition), None) => format!("{doing}: Spark failed with {condition}"),
            (None, _) => {
                let message: String = e
                    .message()
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .take(300)
                    .collect();
                format!("{doing}: {message}")
            }
        };
        Error::Engine {
            remote: remote.to_owned(),
            detail,
        }
    }
}
