#!/usr/bin/env bash
# §1.1 `unknown_fields = "add"` as readers see it (tests/proof/added_readers.py): lands a
# file without `eta_minutes`, then one with it (an int) under "add", into a hive lake
# and a Delta table, with the wharf CLI; then DuckDB (union_by_name), polars, pyarrow and
# PySpark (mergeSchema) read the hive lake, and deltalake, polars and DuckDB the table:
# the old date reads null, the new one its values. Uses (or makes) the venvs readers.sh
# and delta_readers.sh use. Env: WHARF_BIN (default: cargo build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/lib.sh"
wharf="$(wharf_bin)"
readers_venv
delta_readers_venv
export_java_home
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
expected='["{\"event_date\": \"2024-03-01\", \"order_id\": 101, \"eta_minutes\": null}", "{\"event_date\": \"2024-03-02\", \"order_id\": 201, \"eta_minutes\": 12}", "{\"event_date\": \"2024-03-02\", \"order_id\": 202, \"eta_minutes\": null}"]'
for format in hive delta; do
  dir="$work/$format"; mkdir -p "$dir/inbox"
  sed -e "s#^publish_root = .*#publish_root = \"lake/orders\"\ntable_format = \"$format\"#" \
      -e 's#^unknown_fields = .*#unknown_fields = "add"#' "$repo/samples/wharf.toml" > "$dir/wharf.toml"
  grep -q '^unknown_fields = "add"' "$dir/wharf.toml" || sed -i 's#^\[schema\]$#[schema]\nunknown_fields = "add"#' "$dir/wharf.toml"
  printf '%s\n' '{"event_id":"e1","order_id":101,"status":"PAID","updated_at":"2024-03-01T10:00:00Z"}' > "$dir/inbox/a.jsonl"
  printf '%s\n' '{"event_id":"e2","order_id":201,"status":"PAID","updated_at":"2024-03-02T10:00:00Z","eta_minutes":12}' \
                '{"event_id":"e3","order_id":202,"status":"PAID","updated_at":"2024-03-02T10:05:00Z"}' > "$dir/inbox/b.jsonl"
  "$wharf" run --config "$dir/wharf.toml" "$dir/inbox/a.jsonl" >/dev/null
  "$wharf" run --config "$dir/wharf.toml" "$dir/inbox/b.jsonl" >/dev/null
  if [[ $format == hive ]]; then
    got="$("$here/.venv/bin/python" "$here/added_readers.py" hive "$dir/lake/orders")"
  else
    got="$("$here/.venv-delta/bin/python" "$here/added_readers.py" delta "file://$dir/lake/orders")"
  fi
  python3 - "$got" "$expected" "$format" <<'PY'
import json, sys
got, expected, format = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
for reader, rows in got.items():
    assert rows == expected, f"{format} {reader}: {rows}"
print(f"added_readers.sh: {format}: {', '.join(got)} read the added column (old date null)")
PY
done
