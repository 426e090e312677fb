"""Tables in the orders shape written by other tools (issue 55, CONTRACT.md §12.9), and
each row's hash as three readers read it.

    python foreign_writers.py write KIND ROOT     makes ROOT: a Delta table or a hive root
    python foreign_writers.py hashes KIND ROOT    {reader: {order_id: sha256 of the row}}
    python foreign_writers.py kinds               the kinds, one a line: KIND read|refuse
    python foreign_writers.py check KIND ROOT BEFORE   after a merge of order 5 (LANDED):
        every reader reads every other row's hash as BEFORE held it, and order 5 as landed

Every table holds orders 1..40 on 2024-03-01 (and 101..110 on 2024-03-02). A row's hash
is over its values as the reader returns them, normalised only so far as readers differ
(a timestamp as its UTC instant in microseconds, a date as ISO text): a rewrite that
keeps every value keeps every hash, whatever Arrow type it stores the value in.
"""
import datetime as dt
import hashlib
import json
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq

UTC = dt.timezone.utc
COLUMNS = ["event_id", "order_id", "status", "updated_at", "seq", "courier_id", "city"]

# KIND: (what Wharf must do, how it is written)
KINDS = {
    "delta-polars": "read",        # polars write_delta: large_string columns
    "delta-rs-history": "read",    # delta-rs DELETE / UPDATE / MERGE rewrites: string_view
    "hive-dictionary": "read",     # dictionary-encoded strings, large strings
    "hive-int8-16-32": "read",     # narrower integers
    "hive-uint": "read",           # unsigned integers that fit i64
    "hive-int32-bloom": "read",    # a 32-bit key with bloom filters (probed as it hashes)
    "hive-seconds": "read",        # timestamp[s, UTC]
    "hive-millis": "read",         # timestamp[ms, +01:00]
    "hive-nanos": "read",          # timestamp[ns, UTC], whole microseconds
    "hive-int96": "read",          # Spark's INT96
    "hive-binary": "read",         # strings as binary (valid UTF-8)
    "hive-ntz": "refuse",          # timestamp without a zone
    "hive-nanos-past-micros": "refuse",
    "hive-uint-beyond-i64": "refuse",
    "hive-binary-not-utf8": "refuse",
}


def base_rows():
    rows = []
    for day, keys in [(1, range(1, 41)), (2, range(101, 111))]:
        for k in keys:
            rows.append({
                "event_id": f"e{k}",
                "order_id": k,
                "status": ["PAID", "SHIPPED", "PENDING"][k % 3],
                "updated_at": dt.datetime(2024, 3, day, 8 + k % 10, k % 60, k % 60, (k * 7919) % 1_000_000, tzinfo=UTC),
                "seq": k * 3,
                "courier_id": None if k % 4 == 0 else f"c{k % 5}",
                "city": None if k % 5 == 0 else ["Lagos", "Accra", "Nairobi"][k % 3],
            })
    return rows


def arrow_table(rows, types):
    arrays = {}
    for name in COLUMNS:
        values = [r[name] for r in rows]
        arrays[name] = pa.array(values, type=types.get(name, default_type(name)))
    return pa.table(arrays)


def default_type(name):
    return {
        "order_id": pa.int64(), "seq": pa.int64(), "updated_at": pa.timestamp("us", "UTC"),
    }.get(name, pa.string())


def hive(root, rows, types, **write):
    for day in sorted({r["updated_at"].date() for r in rows}):
        part = [r for r in rows if r["updated_at"].date() == day]
        folder = pathlib.Path(root) / f"event_date={day.isoformat()}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(arrow_table(part, types), folder / "part-0.parquet", **write)


def write(kind, root):
    rows = base_rows()
    if kind == "delta-polars":
        import polars as pl
        frame = pl.DataFrame(rows).with_columns(
            pl.col("updated_at").dt.replace_time_zone("UTC").dt.cast_time_unit("us"),
            pl.col("updated_at").dt.date().alias("event_date"),
        )
        frame.write_delta(root, delta_write_options={"partition_by": ["event_date"]})
    elif kind == "delta-rs-history":
        import deltalake
        rows_one = [r for r in rows if r["order_id"] != 40]
        table = arrow_table(rows_one, {})
        dates = pa.array([r["updated_at"].date() for r in rows_one], pa.date32())
        deltalake.write_deltalake(root, table.append_column("event_date", dates), partition_by=["event_date"])
        t = deltalake.DeltaTable(root)
        t.delete("order_id = 39")
        t.update(updates={"status": "'SHIPPED'"}, predicate="order_id = 7")
        # MERGE: order 39 back, order 40 new (both on 2024-03-01), every value as base_rows.
        source = [r for r in rows if r["order_id"] in (39, 40)]
        src = arrow_table(source, {}).append_column(
            "event_date", pa.array([r["updated_at"].date() for r in source], pa.date32()))
        (t.merge(src, predicate="t.order_id = s.order_id", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
    elif kind == "hive-dictionary":
        hive(root, rows, {"status": pa.dictionary(pa.int32(), pa.string()), "city": pa.dictionary(pa.int8(), pa.large_string()),
                          "event_id": pa.large_string(), "courier_id": pa.string_view()})
    elif kind == "hive-int8-16-32":
        hive(root, rows, {"order_id": pa.int32(), "seq": pa.int16()})
    elif kind == "hive-int32-bloom":
        hive(root, rows, {"order_id": pa.int32()}, bloom_filter_options={"order_id": {"ndv": 64, "fpp": 0.01}})
    elif kind == "hive-uint":
        hive(root, rows, {"order_id": pa.uint32(), "seq": pa.uint64()})
    elif kind == "hive-seconds":
        for r in rows:
            r["updated_at"] = r["updated_at"].replace(microsecond=0)
        hive(root, rows, {"updated_at": pa.timestamp("s", "UTC")})
    elif kind == "hive-millis":
        for r in rows:
            r["updated_at"] = r["updated_at"].replace(microsecond=r["updated_at"].microsecond // 1000 * 1000)
        hive(root, rows, {"updated_at": pa.timestamp("ms", "+01:00")})
    elif kind == "hive-nanos":
        hive(root, rows, {"updated_at": pa.timestamp("ns", "UTC")})
    elif kind == "hive-int96":
        hive(root, rows, {"updated_at": pa.timestamp("ns", "UTC")}, use_deprecated_int96_timestamps=True)
    elif kind == "hive-binary":
        for r in rows:
            r["status"] = r["status"].encode()
        hive(root, rows, {"status": pa.binary()})
    elif kind == "hive-ntz":
        for r in rows:
            r["updated_at"] = r["updated_at"].replace(tzinfo=None)
        hive(root, rows, {"updated_at": pa.timestamp("us")})
    elif kind == "hive-nanos-past-micros":
        hive(root, rows, {})
        folder = pathlib.Path(root) / "event_date=2024-03-01"
        t = pq.read_table(folder / "part-0.parquet")
        ns = [v.value // 1000 * 1000 + (1 if i == 5 else 0) if hasattr(v, "value") else
              int(v.as_py().timestamp()) * 10**9 + v.as_py().microsecond * 1000 + (1 if i == 5 else 0)
              for i, v in enumerate(t["updated_at"])]
        at = t.schema.get_field_index("updated_at")
        t = t.set_column(at, "updated_at", pa.array(ns, pa.int64()).cast(pa.timestamp("ns", "UTC")))
        pq.write_table(t, folder / "part-0.parquet")
    elif kind == "hive-uint-beyond-i64":
        for r in rows:
            r["seq"] = 2**63 + r["seq"] if r["order_id"] == 17 else r["seq"]
        hive(root, rows, {"seq": pa.uint64()})
    elif kind == "hive-binary-not-utf8":
        for r in rows:
            r["city"] = b"\xff\xfe" if r["order_id"] == 11 else (r["city"] or "").encode() or None
        hive(root, rows, {"city": pa.binary()})
    else:
        raise SystemExit(f"unknown kind {kind}")


def canonical(value):
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode()
    return value


def hashed(records):
    out = {}
    for r in records:
        values = {k: canonical(r[k]) for k in COLUMNS}
        values["event_date"] = str(canonical(r["event_date"]))
        key = str(int(r["order_id"]))
        assert key not in out, f"order {key} is in the table twice"
        out[key] = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()
    return out


def hashes(kind, root):
    import duckdb
    import polars as pl
    if kind.startswith("delta"):
        import deltalake
        import duckdb_extension_delta
        got = {"deltalake": hashed(deltalake.DeltaTable(root).to_pyarrow_table().to_pylist()),
               "polars": hashed(pl.read_delta(root).to_dicts())}
        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        base = pathlib.Path(duckdb_extension_delta.__file__).parent
        con.execute(f"LOAD '{next(base.glob('extensions/*/delta.duckdb_extension'))}'")
        got["duckdb"] = hashed(con.execute(f"SELECT * FROM delta_scan('{root}')").to_arrow_table().to_pylist())
    else:
        import pyarrow.dataset as ds
        files = f"{root}/event_date=*/*.parquet"
        got = {"pyarrow": hashed(ds.dataset(root, format="parquet", partitioning="hive").to_table().to_pylist()),
               # File by file: polars will not union a file's categorical with another's string.
               "polars": hashed([{**r, "event_date": f.parent.name.split("=")[1]}
                                 for f in sorted(pathlib.Path(root).glob("event_date=*/*.parquet"))
                                 for r in pl.read_parquet(f).to_dicts()])}
        con = duckdb.connect()
        got["duckdb"] = hashed(con.execute(f"SELECT * FROM read_parquet('{files}', hive_partitioning=1)").to_arrow_table().to_pylist())
    return got


# The one record the proof lands (merge mode), as the readers must read it back.
LANDED = {"event_id": "new5", "order_id": 5, "status": "LANDED", "seq": 999, "courier_id": None, "city": None,
          "updated_at": dt.datetime(2024, 3, 1, 23, 0, tzinfo=UTC), "event_date": dt.date(2024, 3, 1)}


def check(kind, root, before):
    after = hashes(kind, root)
    landed = hashed([LANDED])["5"]
    for reader, rows in after.items():
        was = before[reader]
        assert set(rows) == set(was), f"{kind} {reader}: keys {sorted(set(rows) ^ set(was))} came or went"
        changed = [k for k in rows if k != "5" and rows[k] != was[k]]
        assert not changed, f"{kind} {reader}: rows {changed} changed"
        assert rows["5"] == landed, f"{kind} {reader}: order 5 is not the landed record"
    print(f"{kind}: {', '.join(after)} read {len(rows) - 1} other rows as before and order 5 as landed")


if __name__ == "__main__":
    if sys.argv[1] == "kinds":
        print("\n".join(f"{k} {v}" for k, v in KINDS.items()))
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
    elif sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        print(json.dumps(hashes(sys.argv[2], sys.argv[3]), sort_keys=True))
