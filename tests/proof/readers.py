#!/usr/bin/env python3
"""Four readers over one published dataset, run by tests/proof/readers.sh.

1. Generates a valid two-day input (bench/gen_events.py), lands it with the wharf CLI.
2. Reads the publish root with hive partitioning and nothing else in DuckDB, polars,
   pyarrow and PySpark; asserts identical rows and the types: order_id int64,
   updated_at UTC timestamp in microseconds, event_date the partition (a date).
3. Seed parity: PySpark row_number() over order_id ordered by the exact instant desc,
   seq desc nulls last, on the raw JSONL, picks exactly Wharf's rows.
4. A crash after staging (WHARF_FAILPOINT=after_stage) of a second input: every reader
   still sees exactly the first input's rows.

Prints a reader matrix; exits non-zero on any mismatch.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
FIELDS = ("event_id", "order_id", "status", "updated_at", "seq", "courier_id", "city", "event_date")


def micros(value) -> int | None:
    """A timestamp (aware or naive-UTC datetime, or pandas Timestamp) as µs since epoch."""
    if value is None:
        return None
    if hasattr(value, "value") and hasattr(value, "tz_localize"):  # pandas.Timestamp
        return int(value.value) // 1000
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    delta = value - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def norm(row: dict) -> tuple:
    date = row["event_date"]
    date = date.isoformat() if hasattr(date, "isoformat") else str(date)
    return (
        row["event_id"], row["order_id"], row["status"], micros(row["updated_at"]),
        row["seq"], row["courier_id"], row["city"], date[:10],
    )


def read_duckdb(root: Path):
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rel = con.sql(f"SELECT * FROM read_parquet('{root}/**/*.parquet', hive_partitioning = true)")
    types = dict(zip(rel.columns, (str(t) for t in rel.types)))
    rows = [dict(zip(rel.columns, r)) for r in rel.fetchall()]
    ok = (types["order_id"] == "BIGINT" and types["updated_at"] == "TIMESTAMP WITH TIME ZONE"
          and types["event_date"] == "DATE")
    return rows, types, ok


def read_polars(root: Path):
    import polars as pl

    df = pl.scan_parquet(str(root), hive_partitioning=True).collect()
    types = {c: str(t) for c, t in df.schema.items()}
    ok = (df.schema["order_id"] == pl.Int64
          and df.schema["updated_at"] == pl.Datetime("us", "UTC")
          and df.schema["event_date"] == pl.Date)
    return df.to_dicts(), types, ok


def read_pyarrow(root: Path):
    import pyarrow as pa
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([("event_date", pa.date32())]), flavor="hive")
    table = ds.dataset(str(root), format="parquet", partitioning=part).to_table()
    types = {f.name: str(f.type) for f in table.schema}
    ok = (table.schema.field("order_id").type == pa.int64()
          and table.schema.field("updated_at").type == pa.timestamp("us", tz="UTC")
          and table.schema.field("event_date").type == pa.date32())
    # Inferred partitioning (no schema given) must read the same rows too.
    inferred = ds.dataset(str(root), format="parquet", partitioning="hive").to_table()
    assert inferred.num_rows == table.num_rows, "pyarrow inferred partitioning differs"
    return table.to_pylist(), types, ok


def spark_session():
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("wharf-readers")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate())


def read_spark(root: Path):
    spark = spark_session()
    df = spark.read.parquet(str(root))
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    ok = (types["order_id"] == "bigint" and types["updated_at"] == "timestamp"
          and types["event_date"] == "date")
    rows = [r.asDict() for r in df.collect()]
    # Spark returns naive datetimes in the session time zone (UTC here).
    return rows, types, ok


READERS = {"duckdb": read_duckdb, "polars": read_polars, "pyarrow": read_pyarrow,
           "pyspark": read_spark}


def spark_parity(input_path: Path) -> set[tuple]:
    """The seeds' PySpark dedup: row_number over order_id by the exact instant desc, seq
    desc nulls last; the instant kept to the nanosecond (Spark timestamps stop at µs)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    spark = spark_session()
    schema = StructType([
        StructField("event_id", StringType()), StructField("order_id", LongType()),
        StructField("status", StringType()), StructField("updated_at", StringType()),
        StructField("seq", LongType()), StructField("courier_id", StringType()),
        StructField("city", StringType()),
    ])
    df = spark.read.schema(schema).option("mode", "FAILFAST").json(str(input_path))
    ts = F.col("updated_at")
    base = F.regexp_replace(F.substring(ts, 1, 19), " |t", "T")
    offset = F.upper(F.regexp_extract(ts, r"(Z|z|[+-]\d\d:\d\d)$", 1))
    frac = F.regexp_extract(ts, r"\.(\d+)", 1)
    nanos = F.coalesce(F.rpad(F.substring(frac, 1, 9), 9, "0").cast("long"), F.lit(0))
    seconds = F.unix_timestamp(F.concat(base, offset), "yyyy-MM-dd'T'HH:mm:ssXXX")
    df = (df.withColumn("_s", seconds).withColumn("_ns", nanos)
          .withColumn("_instant", F.col("_s") * F.lit(1_000_000_000) + F.col("_ns")))
    window = Window.partitionBy("order_id").orderBy(
        F.col("_instant").desc(), F.col("seq").desc_nulls_last())
    top = df.withColumn("_rn", F.row_number().over(window)).where("_rn = 1")
    top = (top.withColumn("_us", F.col("_s") * F.lit(1_000_000) + F.floor(F.col("_ns") / 1000))
           .withColumn("event_date", F.to_date(F.from_unixtime("_s"))))
    assert top.where("_s IS NULL").count() == 0, "an updated_at did not parse in Spark"
    return {
        (r.event_id, r.order_id, r.status, r._us, r.seq, r.courier_id, r.city,
         r.event_date.isoformat())
        for r in top.collect()
    }


def wharf(binary: str, config: Path, *args: str, env: dict | None = None):
    cmd = [binary, "--config", str(config), "--json", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def read_all(root: Path) -> dict:
    out = {}
    for name, reader in READERS.items():
        rows, types, ok = reader(root)
        out[name] = (sorted(norm(r) for r in rows), types, ok)
    return out


def merged_readers(binary: str, tmp: Path, first: Path) -> list[str]:
    """Merge mode (CONTRACT.md §10.4): the day landed, then a batch updating a narrow
    range of keys, so one date is partly rewritten (its other files carried over); the
    four readers must read the same rows, one per key."""
    folder = tmp / "merge"
    folder.mkdir()
    config = folder / "wharf.toml"
    text = (REPO / "samples/wharf.toml").read_text()
    text = text.replace('write_mode = "replace"', 'write_mode = "merge"\ntarget_file_rows = 2000')
    config.write_text(text)
    (folder / "inbox").mkdir()
    batch = folder / "batch.jsonl"
    lines = [json.dumps({"event_id": f"m{k}", "order_id": k, "status": "RETURNED",
                         "updated_at": "2024-03-01T23:59:59.999999Z"})
             for k in range(10_000_300, 10_000_400)]
    batch.write_text("\n".join(lines) + "\n")
    for step in (first, batch):
        run = wharf(binary, config, "run", str(step))
        if run.returncode != 0:
            return [f"merge: {step.name} exited {run.returncode}: {run.stderr}"]
    outcome = json.loads(run.stdout)
    days = [d for d in outcome["dates"] if d.get("files_rewritten")]
    partly = [d for d in days if d["files_rewritten"] < -(-d["rows_before"] // 2000)]
    seen = read_all(folder / "lake/orders")
    reference = seen["duckdb"][0]
    keys = {r[1] for r in reference}
    print(f"\nmerge: {len(reference)} rows after a batch rewrote "
          f"{[(d['event_date'], d['files_rewritten']) for d in days]} files")
    failures = [] if partly else [f"merge: no date was partly rewritten: {days}"]
    if len(keys) != len(reference):
        failures.append("merge: a key is published twice")
    for name, (rows, _, _) in seen.items():
        if rows != reference:
            failures.append(f"merge: {name} rows differ from duckdb")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wharf", default=str(REPO / "target/debug/wharf"))
    ap.add_argument("--events", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    failures = []

    with tempfile.TemporaryDirectory(prefix="wharf-readers-") as tmp:
        tmp = Path(tmp)
        config = tmp / "wharf.toml"
        config.write_text((REPO / "samples/wharf.toml").read_text())
        (tmp / "inbox").mkdir()
        first, second = tmp / "first.jsonl", tmp / "second.jsonl"
        for path, seed in ((first, a.seed), (second, a.seed + 1)):
            subprocess.run([sys.executable, str(REPO / "bench/gen_events.py"), "--events",
                            str(a.events), "--days", "2", "--seed", str(seed), "--out", str(path)],
                           check=True, capture_output=True)
        run = wharf(a.wharf, config, "run", str(first))
        if run.returncode != 0:
            print(run.stdout, run.stderr, file=sys.stderr)
            return 1
        outcome = json.loads(run.stdout)
        assert outcome["action"] == "published", outcome
        counts = outcome["counts"]
        assert counts["ties_by_arrival"] == 0 and counts["rejected"] == 0, counts
        root = tmp / "lake/orders"

        seen = read_all(root)
        reference = seen["duckdb"][0]
        print(f"\nreader matrix ({len(reference)} rows, {counts['keys']} keys, "
              f"{counts['accepted']} events, {len(outcome['dates'])} dates)")
        header = f"{'reader':<9} {'rows':>6}  {'order_id':<9} {'updated_at':<26} {'event_date':<11} same-rows types"
        print(header)
        print("-" * len(header))
        for name, (rows, types, ok) in seen.items():
            same = rows == reference
            print(f"{name:<9} {len(rows):>6}  {types['order_id']:<9} {types['updated_at']:<26} "
                  f"{types['event_date']:<11} {'yes' if same else 'NO':<9} {'ok' if ok else 'WRONG'}")
            if not same:
                failures.append(f"{name}: rows differ from duckdb")
            if not ok:
                failures.append(f"{name}: types {types}")
        if len(reference) != counts["keys"]:
            failures.append(f"{len(reference)} rows published for {counts['keys']} keys")

        parity = spark_parity(first)
        same = parity == set(reference)
        print(f"\nseed parity: PySpark row_number() picked {len(parity)} rows; "
              f"{'identical to' if same else 'DIFFERENT from'} Wharf's {len(reference)}")
        if not same:
            failures.append(f"seed parity: {len(parity - set(reference))} only in Spark, "
                            f"{len(set(reference) - parity)} only in Wharf")

        env = dict(os.environ, WHARF_FAILPOINT="after_stage")
        crash = wharf(a.wharf, config, "run", str(second), env=env)
        assert crash.returncode != 0, "the failpoint did not stop the run"
        leftovers = [p.name for p in root.parent.iterdir() if p.name != root.name]
        leftovers += [p.name for p in root.iterdir() if not p.name.startswith("event_date=")]
        after = read_all(root)
        print(f"\nafter a crash with staging left ({', '.join(leftovers) or 'none found'}):")
        for name, (rows, _, _) in after.items():
            same = rows == reference
            print(f"  {name:<9} {len(rows):>6} rows  {'still the published rows' if same else 'READ STAGING'}")
            if not same:
                failures.append(f"{name} reads the staging area")

        failures += merged_readers(a.wharf, tmp, first)

    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nall four readers agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
