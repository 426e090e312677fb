"""delta-rs's own MERGE of a Wharf micro-batch into a Wharf Delta table (bench/merge_scale.sh).

    python merge_scale_deltars.py TABLE_PATH BATCH.jsonl

The batch's latest event per order (updated_at, then seq: the rank-1 rows Wharf merges)
is merged with `merge(...).when_matched_update_all().when_not_matched_insert_all()` on the
key and the date. Prints the MERGE call's own wall seconds and its metrics as JSON.
"""
import json
import sys
import time
from datetime import date, datetime, timezone

import pyarrow as pa
from deltalake import DeltaTable

FIELDS = ["event_id", "order_id", "status", "updated_at", "seq", "courier_id", "city"]


def winners(path):
    best = {}
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            at = datetime.fromisoformat(e["updated_at"].replace("Z", "+00:00")).astimezone(timezone.utc)
            rank = (at, e.get("seq") or 0)
            key = e["order_id"]
            if key not in best or rank > best[key][0]:
                best[key] = (rank, e, at)
    cols = {name: [] for name in FIELDS + ["event_date"]}
    for _, e, at in best.values():
        for name in FIELDS:
            cols[name].append(at if name == "updated_at" else e.get(name))
        cols["event_date"].append(date(at.year, at.month, at.day))
    schema = pa.schema([
        ("event_id", pa.string()), ("order_id", pa.int64()), ("status", pa.string()),
        ("updated_at", pa.timestamp("us", tz="UTC")), ("seq", pa.int64()),
        ("courier_id", pa.string()), ("city", pa.string()), ("event_date", pa.date32()),
    ])
    return pa.table(cols, schema=schema)


def main():
    table, batch = sys.argv[1], sys.argv[2]
    source = winners(batch)
    dt = DeltaTable(table)
    started = time.monotonic()
    metrics = (
        dt.merge(source=source, predicate="t.order_id = s.order_id AND t.event_date = s.event_date",
                 source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    print(json.dumps({"merge_s": round(time.monotonic() - started, 3), "source_rows": source.num_rows,
                      "metrics": {k: metrics.get(k) for k in ("num_target_rows_updated", "num_target_rows_inserted",
                                                             "num_target_files_added", "num_target_files_removed")}}))


if __name__ == "__main__":
    main()
