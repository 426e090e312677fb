#!/usr/bin/env bash
# Lands the sample's reference file (CONTRACT.md §9) into a local Delta table and into one
# on the S3 server at WHARF_S3_PORT, then reads both with Python deltalake, polars
# read_delta and DuckDB 1.5.5's delta extension (tests/proof/delta_readers.py); each
# must return exactly the three reference rows. Then replace and merge scenarios, step by
# step, local and on S3, each step's rows as a hive root of the same steps holds them. Then
# a local table of 1,000 landings (one
# `wharf run` of an inbox of 1,000 one-line files, the same date restated each time, as
# `watch` makes 288 a day): its Delta checkpoints keep the load short (each stage's time
# per landing and per `status` is printed), and the three readers still agree on the last
# landing's row. Creates tests/proof/.venv-delta
# (gitignored) on first use. Env: WHARF_BIN (default: cargo run), WHARF_S3_PORT.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv-delta"
source "$here/lib.sh"
delta_readers_venv
wharf="$(wharf_bin)"
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

# --- scenarios: every step read by the three readers, against the same steps on hive ---
# A replace product (two dates, a restatement of one, a refused PII file, a restore) and
# a merge product (four micro-batches, one moving a key to a later date, one rewriting
# one file of a date split into files of 4 rows, the others carried over), each landed
# step by step into a hive root and into a Delta table (local and on S3); after every
# step the three Delta readers must return exactly the hive root's rows (pyarrow).
scenario_inputs() { # $1 = folder: step-NN.jsonl files
  python3 - "$1" <<'PY'
import json, os, sys
folder = sys.argv[1]
def event(i, order, status, at):
    return json.dumps({"event_id": f"e{i}", "order_id": order, "status": status, "updated_at": at})
steps = {
    # Two dates, retries and out-of-order updates.
    1: [event(i, i % 40, "PAID" if i % 3 else "PENDING", f"2024-03-0{1 + i % 2}T{10 + i % 9:02}:00:00Z") for i in range(200)]
       + [event(i, i % 40, "PAID" if i % 3 else "PENDING", f"2024-03-0{1 + i % 2}T{10 + i % 9:02}:00:00Z") for i in range(0, 200, 7)],
    # A restatement of 2024-03-02: the same keys, new statuses.
    2: [event(1000 + i, 2 * i + 1, "SHIPPED", "2024-03-02T20:00:00Z") for i in range(20)],
    # Refused: a prohibited field; nothing may change.
    3: [event(2000, 1, "PAID", "2024-03-01T23:00:00Z")[:-1] + ', "email": "x"}'],
    # Merge batches: new keys on the 3rd, then key 1 moved to the 4th.
    11: [event(3000 + i, 100 + i, "NEW", "2024-03-03T08:00:00Z") for i in range(10)],
    12: [event(3100, 1, "MOVED", "2024-03-04T08:00:00Z")],
    # Two keys of one file of the 1st updated: the date's other files carry over (§10.4).
    13: [event(3200, 10, "UPDATED", "2024-03-01T23:30:00Z"), event(3201, 12, "UPDATED", "2024-03-01T23:30:00Z")],
}
for n, lines in steps.items():
    with open(os.path.join(folder, f"step-{n:02}.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
}
hive_rows() { # $1 = hive root
  "$venv/bin/python" - "$1" <<'PY'
import json, os, sys
import pyarrow.dataset as ds
root = sys.argv[1]
rows = []
if os.path.isdir(root):
    table = ds.dataset(root, format="parquet", partitioning="hive").to_table(columns=["event_date", "order_id", "status"])
    rows = [json.dumps({"event_date": str(r["event_date"]), "order_id": int(r["order_id"]), "status": r["status"]}) for r in table.to_pylist()]
print(json.dumps(sorted(rows)))
PY
}
for where in local s3; do
  for mode in replace merge; do
    dir="$work/scenario-$where-$mode"
    mkdir -p "$dir/steps"
    scenario_inputs "$dir/steps"
    if [[ $where == local ]]; then root="lake/delta"; url="file://$dir/lake/delta"; else root="s3://wharf/scenario-$$-$mode/orders"; url="$root"; fi
    for kind in hive delta; do
      mkdir -p "$dir/$kind"
      if [[ $kind == hive ]]; then publish="publish_root = \"lake/hive\""; else publish="publish_root = \"$root\"\ntable_format = \"delta\""; fi
      sed -e "s#^publish_root = .*#$publish#" -e "s#^write_mode = .*#write_mode = \"$mode\"#" \
        -e "s#^state_root = .*#state_root = \"state/$kind\"#" -e "s#^quarantine_root = .*#quarantine_root = \"quarantine/$kind\"#" \
        -e "s#^max_shrink = .*#max_shrink = 1.0\ntarget_file_rows = 4#" "$repo/samples/wharf.toml" > "$dir/$kind.toml"
    done
    if [[ $mode == replace ]]; then steps="step-01 step-02 step-03 restore"; else steps="step-01 step-11 step-12 step-13"; fi
    (
      [[ $where == s3 ]] && export $("$repo/tests/s3/server.sh" env --port "$port" | xargs)
      for step in $steps; do
        for kind in hive delta; do
          set +e
          if [[ $step == restore ]]; then
            "$wharf" restore 2024-03-02 --yes --config "$dir/$kind.toml" >/dev/null 2>"$dir/$kind.err"
          else
            "$wharf" run --config "$dir/$kind.toml" "$dir/steps/$step.jsonl" >/dev/null 2>"$dir/$kind.err"
          fi
          echo $? > "$dir/$kind.code"
          set -e
        done
        [[ $(<"$dir/hive.code") == $(<"$dir/delta.code") ]] || { echo "delta_readers.sh: $where $mode $step: hive exited $(<"$dir/hive.code"), delta $(<"$dir/delta.code"): $(cat "$dir/delta.err")" >&2; exit 1; }
        want="$(hive_rows "$dir/lake/hive")"
        got="$("$venv/bin/python" "$here/delta_readers.py" "$url")" || { echo "delta_readers.sh: $where $mode $step: the Delta readers disagree: $got" >&2; exit 1; }
        "$venv/bin/python" - "$got" "$want" "$where $mode $step (exit $(<"$dir/delta.code"))" <<'PY'
import json, sys
got, want, what = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
assert want, f"{what}: the hive root holds no rows"
for reader, rows in got.items():
    assert rows == want, f"{what}: {reader} read {len(rows)} rows, hive holds {len(want)}"
PY
      done
      echo "delta_readers.sh: $where $mode: deltalake, polars and duckdb read every step's rows as hive holds them ($steps)"
    )
  done
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
