#!/usr/bin/env bash
# Lands the sample's reference file (CONTRACT.md §9) into a local Delta table and into one
# on the S3 server at WHARF_S3_PORT, then reads both with Python deltalake, polars
# read_delta and DuckDB 1.5.5's delta extension (tests/proof/delta_readers.py); each
# must return exactly the three reference rows. Creates tests/proof/.venv-delta
# (gitignored) on first use. Env: WHARF_BIN (default: cargo run), WHARF_S3_PORT.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv-delta"
if ! "$venv/bin/python" -c "import deltalake, polars, pyarrow, duckdb, duckdb_extension_delta, duckdb_extension_httpfs" 2>/dev/null; then
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install --quiet deltalake polars pyarrow duckdb==1.5.5 duckdb-extension-delta==1.5.5 duckdb-extension-httpfs==1.5.5
fi
wharf="${WHARF_BIN:-}"
[[ -n $wharf ]] || { (cd "$repo" && cargo build --quiet --bin wharf); wharf="${CARGO_TARGET_DIR:-$repo/target}/debug/wharf"; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
expected='["{\"event_date\": \"2024-03-01\", \"order_id\": 101, \"status\": \"PAID\"}", "{\"event_date\": \"2024-03-01\", \"order_id\": 102, \"status\": \"SHIPPED\"}", "{\"event_date\": \"2024-03-01\", \"order_id\": 103, \"status\": \"PENDING\"}"]'
port="${WHARF_S3_PORT:-18300}"
for where in local s3; do
  mkdir -p "$work/$where/inbox"
  cp "$repo/samples/inbox/01-orders-2024-03-01.jsonl" "$work/$where/inbox/"
  if [[ $where == local ]]; then root="lake/orders"; url="file://$work/local/lake/orders"; else root="s3://wharf/readers-$$/orders"; url="$root"; fi
  sed "s#^publish_root = .*#publish_root = \"$root\"\ntable_format = \"delta\"#" "$repo/samples/wharf.toml" > "$work/$where/wharf.toml"
  (
    [[ $where == s3 ]] && export $("$repo/tests/s3/server.sh" env --port "$port" | xargs)
    "$wharf" run --config "$work/$where/wharf.toml" "$work/$where/inbox/01-orders-2024-03-01.jsonl" >/dev/null
    got="$("$venv/bin/python" "$here/delta_readers.py" "$url")"
    "$venv/bin/python" - "$got" "$expected" "$where" <<'PY'
import json, sys
got, expected, where = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
for reader, rows in got.items():
    assert rows == expected, f"{where} {reader}: {rows}"
print(f"delta_readers.sh: {where}: {', '.join(got)} read the reference rows")
PY
  )
done
