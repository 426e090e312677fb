"""Reads one Delta table with three Delta readers and prints, per reader, its rows as
sorted JSON lines (event_date, order_id, status): Python `deltalake`, polars
`read_delta`, and DuckDB's delta extension (loaded from the pip package's file, with
httpfs for S3). Exit 1 when the readers disagree; the caller compares the rows with what
it expects. S3 settings come from the AWS_* environment.

    python delta_readers.py TABLE_URL
"""
import json
import os
import pathlib
import sys


def storage_options():
    if not os.environ.get("AWS_ENDPOINT_URL"):
        return None
    return {
        "AWS_ENDPOINT_URL": os.environ["AWS_ENDPOINT_URL"],
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_ALLOW_HTTP": os.environ.get("AWS_ALLOW_HTTP", "false"),
        "conditional_put": "etag",
    }


def rows(records):
    return sorted(
        json.dumps({"event_date": str(r["event_date"]), "order_id": int(r["order_id"]), "status": r["status"]})
        for r in records
    )


def with_deltalake(url):
    import deltalake
    table = deltalake.DeltaTable(url, storage_options=storage_options())
    if table.protocol().reader_features:
        # to_pyarrow_table refuses reader features (deletion vectors, column mapping);
        # deltalake's DataFusion scan applies them.
        query = deltalake.QueryBuilder().register("t", table)
        result = query.execute("SELECT event_date, order_id, status FROM t").read_all()
        import pyarrow
        return rows(pyarrow.table(result).to_pylist())
    return rows(table.to_pyarrow_table().to_pylist())


def with_polars(url):
    import polars
    return rows(polars.read_delta(url, storage_options=storage_options()).to_dicts())


def with_duckdb(url):
    import duckdb
    import duckdb_extension_delta
    import duckdb_extension_httpfs
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    for module, name in [(duckdb_extension_httpfs, "httpfs"), (duckdb_extension_delta, "delta")]:
        base = pathlib.Path(module.__file__).parent
        path = next(base.glob(f"extensions/*/{name}.duckdb_extension"))
        con.execute(f"LOAD '{path}'")
    if os.environ.get("AWS_ENDPOINT_URL"):
        endpoint = os.environ["AWS_ENDPOINT_URL"].split("://", 1)[1]
        con.execute(
            "CREATE SECRET s3 (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL false)",
            [os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"], os.environ.get("AWS_REGION", "us-east-1"), endpoint],
        )
    local = url.removeprefix("file://")
    cur = con.execute(f"SELECT event_date, order_id, status FROM delta_scan('{local}')")
    names = [d[0] for d in cur.description]
    return rows(dict(zip(names, r)) for r in cur.fetchall())


def main():
    url = sys.argv[1]
    results = {}
    for name, read in [("deltalake", with_deltalake), ("polars", with_polars), ("duckdb", with_duckdb)]:
        results[name] = read(url)
    print(json.dumps(results))
    first = next(iter(results.values()))
    sys.exit(0 if all(r == first for r in results.values()) else 1)


if __name__ == "__main__":
    main()
