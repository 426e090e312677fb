"""The DuckDB baseline for compare.sh: latest event per order_id, Hive-partitioned by UTC date.

  bench/.venv/bin/python bench/duckdb_land.py FILE OUT_DIR

Reads FILE with explicit columns, keeps row_number() = 1 over (partition by order_id
order by updated_at desc, seq desc nulls last), and COPYs to OUT_DIR/event_date=YYYY-MM-DD/.
Prints the number of rows written. Threads: DuckDB's default (all cores).
DUCKDB_SORT=1 also orders rows by order_id (Wharf writes each partition sorted by key).
"""

import os
import sys

import duckdb


def main() -> int:
    src, out = sys.argv[1], sys.argv[2]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")  # so CAST(timestamptz AS DATE) is the UTC date
    sort = os.environ.get("DUCKDB_SORT") == "1"  # rows by key inside each file, as Wharf's
    if not sort:
        con.execute("SET preserve_insertion_order = false")
    q = """
    COPY (
      SELECT event_id, order_id, status, updated_at, seq, courier_id, city,
             CAST(updated_at AS DATE) AS event_date
      FROM read_json(?, format = 'newline_delimited', columns = {
             event_id: 'VARCHAR', order_id: 'BIGINT', status: 'VARCHAR',
             updated_at: 'TIMESTAMPTZ', seq: 'BIGINT', courier_id: 'VARCHAR', city: 'VARCHAR'})
      QUALIFY row_number() OVER (PARTITION BY order_id
                                 ORDER BY updated_at DESC, seq DESC NULLS LAST) = 1
      {order}
    ) TO '{out}' (FORMAT PARQUET, PARTITION_BY (event_date))
    """.replace("{out}", out.replace("'", "''")).replace("{order}", "ORDER BY order_id" if sort else "")
    rows = con.execute(q, [src]).fetchone()
    print(f"duckdb {duckdb.__version__}: wrote {rows[0] if rows else '?'} rows to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
