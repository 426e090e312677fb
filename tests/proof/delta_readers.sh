#!/usr/bin/env bash
# Lands the sample's reference file (CONTRACT.md §9) into a local Delta table and into one
# on the S3 server at WHARF_S3_PORT, then reads both with Python deltalake, polars
# read_delta and DuckDB 1.5.5's delta extension (tests/proof/delta_readers.py); each
# must return exactly the three reference rows. Then a local table of 1,000 landings (one
# `wharf run` of an inbox of 1,000 one-line files, the same date restated each time, as
# `watch` makes 288 a day): its Delta checkpoints keep the load short (each stage's time
# per landing and per `status` is printed), and the three readers still agree on the last
# landing's row. Creates tests/proof/.venv-delta
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

# --- 1,000 commits --------------------------------------------------------------------
long="$work/long"
mkdir -p "$long/inbox" "$long/pending" "$long/landed"
sed "s#^publish_root = .*#publish_root = \"lake/orders\"\ntable_format = \"delta\"#" "$repo/samples/wharf.toml" > "$long/wharf.toml"
python3 - "$long/pending" <<'PY'
import os, sys
folder = sys.argv[1]
for n in range(1, 1001):
    path = os.path.join(folder, f"c{n:04}.jsonl")
    with open(path, "w") as f:
        f.write('{"event_id":"e%d","order_id":101,"status":"S%d","updated_at":"2024-03-01T00:%02d:%02d.%03dZ"}\n'
                % (n, n, n // 60 % 60, n % 60, n % 1000))
    os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))  # oldest first = numbered order
PY
landed=0
for upto in 10 100 1000; do
  # Landed files leave the inbox, as a producer's archive step would: an input that no
  # longer owns its date lands again when it is still there (§12.5).
  find "$long/inbox" -name '*.jsonl' -exec mv {} "$long/landed/" \;
  for ((n = landed + 1; n <= upto; n++)); do mv "$long/pending/$(printf 'c%04d.jsonl' "$n")" "$long/inbox/"; done
  start=$(date +%s%N)
  "$wharf" run --config "$long/wharf.toml" >/dev/null
  run_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  start=$(date +%s%N)
  "$wharf" status --config "$long/wharf.toml" --json >/dev/null
  status_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "delta_readers.sh: 1000 commits: versions $landed..$((upto - 1)): $(( run_ms / (upto - landed) )) ms a landing, then status in $status_ms ms"
  landed=$upto
done
log="$long/lake/orders/_delta_log"
[[ -f $log/00000000000000000999.json && ! -e $log/00000000000000001000.json ]] || { echo "delta_readers.sh: 1000 commits: expected versions 0..999 in $log" >&2; exit 1; }
python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["version"]; sys.exit(v != 990)' "$log/_last_checkpoint" || { echo "delta_readers.sh: 1000 commits: _last_checkpoint is not version 990: $(cat "$log/_last_checkpoint")" >&2; exit 1; }
got="$("$venv/bin/python" "$here/delta_readers.py" "file://$long/lake/orders")"
"$venv/bin/python" - "$got" <<'PY'
import json, sys
expected = [json.dumps({"event_date": "2024-03-01", "order_id": 101, "status": "S1000"})]
for reader, rows in json.loads(sys.argv[1]).items():
    assert rows == expected, f"1000 commits {reader}: {rows}"
print("delta_readers.sh: 1000 commits: deltalake, polars and duckdb read the last landing's row")
PY
