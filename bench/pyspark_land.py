"""The PySpark baseline for spark.sh: one input landed in replace mode the straightforward
way a Spark team writes it.

  python3 bench/pyspark_land.py FILE OUT_DIR [--remote sc://127.0.0.1:15002 | --master 'local[2]']

First hashes FILE on the driver (SHA-256 with hashlib, 1 MiB reads: the identity a
landing job records so that it can tell a redelivery), then reads FILE as JSON lines on
the declared schema (PERMISSIVE, malformed lines into a corrupt-record column), drops the
lines Spark cannot use (malformed, a required field missing, an updated_at Spark's own
parser rejects), keeps row_number() = 1 per order_id ordered by updated_at desc then seq
desc nulls last, and writes Parquet partitioned by event_date (the UTC date of
updated_at) to OUT_DIR with dynamic partition overwrite
(spark.sql.sources.partitionOverwriteMode=dynamic): the dates the input has are
replaced, the others under OUT_DIR stay, as in Wharf's replace mode. The hash is only
printed: no checkpoint, no skip of a file landed before. No retry or conflict check, no
prohibited or unknown fields, no reject cap, no date or shrink guard, no quarantine, no
atomic swap: what the contract adds is what this job leaves out.

--remote runs it through a Spark Connect server (the default, the server of spark.sh);
--master starts a classic in-process Spark instead (the JVM's start-up is then in the
time). Prints the input's SHA-256, the Spark version and where it wrote; counts nothing,
since a count is one more pass over the data.
"""

import argparse
import hashlib
import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

SCHEMA = StructType([
    StructField("event_id", StringType()),
    StructField("order_id", LongType()),
    StructField("status", StringType()),
    StructField("updated_at", StringType()),
    StructField("seq", LongType()),
    StructField("courier_id", StringType()),
    StructField("city", StringType()),
    StructField("_corrupt_record", StringType()),
])


def session(args: argparse.Namespace) -> SparkSession:
    builder = SparkSession.builder.appName("pyspark_land")
    if args.master:
        builder = builder.master(args.master)
    else:
        builder = builder.remote(args.remote)
    spark = builder.getOrCreate()
    spark.conf.set("spark.sql.session.timeZone", "UTC")  # event_date is the UTC date
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    # An overwrite replaces only the event_date partitions it writes, not all of OUT_DIR.
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    return spark


def sha256(path: str) -> str:
    """The file's SHA-256 in lower-case hex, read on the driver 1 MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def land(spark: SparkSession, src: str, out: str) -> None:
    lines = (spark.read.schema(SCHEMA)
             .option("mode", "PERMISSIVE")
             .option("columnNameOfCorruptRecord", "_corrupt_record")
             .json(src))
    at = F.try_to_timestamp(F.col("updated_at"))
    valid = (lines.withColumn("updated_at", at)
             .where(F.col("_corrupt_record").isNull())
             .where(F.col("event_id").isNotNull() & F.col("order_id").isNotNull()
                    & F.col("status").isNotNull() & F.col("updated_at").isNotNull()))
    latest = Window.partitionBy("order_id").orderBy(
        F.col("updated_at").desc(), F.col("seq").desc_nulls_last())
    winners = (valid.withColumn("_rn", F.row_number().over(latest))
               .where(F.col("_rn") == 1)
               .select("event_id", "order_id", "status", "updated_at", "seq", "courier_id",
                       "city", F.to_date("updated_at").alias("event_date")))
    winners.write.mode("overwrite").partitionBy("event_date").parquet(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("out_dir")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--remote", default="sc://127.0.0.1:15002",
                       help="a Spark Connect server (default %(default)s)")
    where.add_argument("--master", help="a classic Spark master instead, e.g. 'local[2]'")
    args = ap.parse_args()
    print(f"sha256 {sha256(args.file)}  {args.file}", flush=True)
    spark = session(args)
    land(spark, args.file, args.out_dir)
    print(f"pyspark {spark.version}: wrote {args.out_dir} via {args.master or args.remote}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
