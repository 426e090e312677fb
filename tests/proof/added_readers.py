"""§1.1 `unknown_fields = "add"` as readers see it: a lake where the first landing
(2024-03-01) has no `eta_minutes` and the second (2024-03-02) adds it as an int. Prints
per reader the rows (event_date, order_id, eta_minutes) as sorted JSON lines; the caller
compares them with the expected rows (old date null, new date values).

    python added_readers.py hive ROOT     # DuckDB union_by_name, polars, pyarrow, PySpark mergeSchema
    python added_readers.py delta URL     # deltalake, polars read_delta, DuckDB delta_scan
"""
import json
import pathlib
import sys


def rows(records):
    return sorted(
        json.dumps({
            "event_date": str(r["event_date"]),
            "order_id": int(r["order_id"]),
            "eta_minutes": None if r.get("eta_minutes") is None else int(r["eta_minutes"]),
        })
        for r in records
    )


def dicts(cursor):
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def hive(root):
    import duckdb
    import polars
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq
    import pyarrow as pa
    glob = f"{root}/*/*.parquet"
    out = {}
    con = duckdb.connect()
    out["duckdb"] = rows(dicts(con.execute(
        f"SELECT event_date, order_id, eta_minutes FROM read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
    )))
    files = sorted(pathlib.Path(root).glob("*/*.parquet"))
    schema = pa.unify_schemas([pq.read_schema(f) for f in files])
    # polars takes the first file's schema for a glob unless told the merged one.
    merged = polars.from_arrow(schema.empty_table()).schema
    out["polars"] = rows(polars.read_parquet(
        glob, hive_partitioning=True, schema=merged, missing_columns="insert",
    ).to_dicts())
    # pyarrow too: the merged schema, with the partition column.
    partitioning = ds.partitioning(pa.schema([("event_date", pa.string())]), flavor="hive")
    with_date = schema.append(pa.field("event_date", pa.string()))
    out["pyarrow"] = rows(ds.dataset(root, schema=with_date, partitioning=partitioning).to_table().to_pylist())
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    out["pyspark"] = rows(r.asDict() for r in spark.read.option("mergeSchema", "true").parquet(root).collect())
    spark.stop()
    return out


def delta(url):
    import deltalake
    import polars
    import duckdb
    import duckdb_extension_delta
    out = {"deltalake": rows(deltalake.DeltaTable(url).to_pyarrow_table().to_pylist())}
    out["polars"] = rows(polars.read_delta(url).to_dicts())
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    base = pathlib.Path(duckdb_extension_delta.__file__).parent
    con.execute(f"LOAD '{next(base.glob('extensions/*/delta.duckdb_extension'))}'")
    out["duckdb"] = rows(dicts(con.execute(f"SELECT event_date, order_id, eta_minutes FROM delta_scan('{url}')")))
    return out


if __name__ == "__main__":
    kind, where = sys.argv[1], sys.argv[2]
    print(json.dumps(hive(where) if kind == "hive" else delta(where)))
