#!/usr/bin/env bash
# A Delta table shared with another writer (CONTRACT.md §12.6, §12.8; issue 47), on a
# local table and on the S3 server at WHARF_S3_PORT. The other writer is Python
# `deltalake` (tests/proof/delta_shared.py): OPTIMIZE, VACUUM, constraints and table
# features; deletion vectors are built by that script as the protocol lays them out
# (deltalake 1.6 writes none). After every step the three Delta readers agree
# (delta_shared.py readers; polars cannot read a column-mapped table and is named, not
# compared there), and every refusal leaves the table's version and objects as they were.
#
#   1. OPTIMIZE compacts Wharf's files; status counts them, a restatement lands and a
#      restore brings back the compacted generation.
#   2. VACUUM deletes a removed generation; its restore is refused (exit 3) naming the
#      missing file and the version that removed it, the version unchanged.
#   3. Rows deleted with a deletion vector: status counts what the readers see; plan,
#      replace, merge, diff and restore are refused (exit 3, table_feature); no deleted
#      row comes back.
#   4. checkConstraints, generatedColumns, identityColumns, columnMapping (name) and
#      appendOnly (on a restatement; a new date still lands): refused at plan time, no
#      S3 hint in the message.
#   5. A table deltalake made at a legacy protocol: the change data feed on (writer
#      version 4) is refused naming the feed; turned off, the table lands as it is.
#
# Env: WHARF_BIN (default: cargo run), WHARF_S3_PORT.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv-delta"
source "$here/lib.sh"
delta_readers_venv
wharf="$(wharf_bin)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
port="${WHARF_S3_PORT:-18300}"

other() { (cd "$here" && "$venv/bin/python" delta_shared.py "$@"); }
fail() { echo "delta_shared.sh: $where: $*" >&2; exit 1; }

# inputs DIR: day1 (2024-03-01, orders 101-103), day2 (2024-03-02, 201-206), restate
# (2024-03-01 again, new statuses), day3 (2024-03-03, a new date).
inputs() {
  python3 - "$1" <<'PY'
import json, os, sys
def event(i, order, status, day, hour=10):
    return json.dumps({"event_id": f"e{i}", "order_id": order, "status": status, "updated_at": f"2024-03-0{day}T{hour}:00:00Z"})
files = {
    "day1": [event(i, 100 + i, "PAID", 1) for i in range(1, 4)],
    "day2": [event(10 + i, 200 + i, "PAID", 2) for i in range(1, 7)],
    "restate": [event(20 + i, 100 + i, "SHIPPED", 1, 12) for i in range(1, 4)],
    "day2b": [event(30 + i, 200 + i, "SHIPPED", 2, 12) for i in range(1, 7)],
    "day3": [event(40 + i, 300 + i, "NEW", 3) for i in range(1, 3)],
}
for name, lines in files.items():
    with open(os.path.join(sys.argv[1], f"{name}.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
}

# product NAME [MODE] [FILES_PER_DATE]: a config under $work/$where/NAME for one table;
# sets $dir, $config, $url.
product() {
  dir="$work/$where/$1"; mkdir -p "$dir/in"; inputs "$dir/in"
  if [[ $where == local ]]; then root="$dir/table"; url="file://$dir/table"; else root="s3://wharf/shared-$$-$1/orders"; url="$root"; fi
  config="$dir/${2:-replace}.toml"
  sed -e "s#^publish_root = .*#publish_root = \"$root\"\ntable_format = \"delta\"#" \
    -e "s#^state_root = .*#state_root = \"state-${2:-replace}\"#" -e "s#^quarantine_root = .*#quarantine_root = \"quarantine\"#" \
    -e "s#^write_mode = .*#write_mode = \"${2:-replace}\"#" -e "s#^max_shrink = .*#max_shrink = 1.0#" \
    -e "s#^files_per_date = .*#files_per_date = ${3:-1}#" "$repo/samples/wharf.toml" > "$config"
}
w() { "$wharf" "$@"; }
land() { w run --config "$config" "$dir/in/$1.jsonl" >/dev/null || fail "landing $1 failed"; }
version() { other "$url" version; }
# objects: every object of the table, with its size (a refusal must change none).
objects() {
  if [[ $where == local ]]; then (cd "$dir/table" && find . -type f -printf '%p %s\n' | sort); else other "$url" objects; fi
}
# rows_are STEP EXPECTED_ROWS_JSON: the readers agree and read exactly these rows.
rows_are() {
  local got; got="$(other "$url" readers)" || fail "$1: $got"
  "$venv/bin/python" - "$got" "$2" "$where $1" <<'PY'
import json, sys
got, want, what = json.loads(sys.argv[1]), sorted(json.loads(sys.argv[2])), sys.argv[3]
assert got["rows"] == want, f"{what}: the readers read {got['rows']}, expected {want}"
PY
}
# expect ROWS_SPEC: the rows of the inputs named, as the readers print them.
rows_of() {
  python3 - "$dir/in" "$@" <<'PY'
import json, sys
folder, names = sys.argv[1], sys.argv[2:]
drop = {int(n[1:]) for n in names if n.startswith("-")}
rows = {}
for name in (n for n in names if not n.startswith("-")):
    for line in open(f"{folder}/{name}.jsonl"):
        e = json.loads(line)
        rows[e["order_id"]] = {"event_date": e["updated_at"][:10], "order_id": e["order_id"], "status": e["status"]}
print(json.dumps([json.dumps(r) for k, r in sorted(rows.items()) if k not in drop]))
PY
}
# refused STEP CODE_REASON CMD...: exits 3, reason as given (JSON or text), no S3 hint,
# the table's version and objects unchanged.
refused() {
  local step="$1" reason="$2"; shift 2
  local v0 o0 out code
  v0="$(version)"; o0="$(objects)"
  set +e; out="$(w "$@" 2>&1)"; code=$?; set -e
  [[ $code == 3 ]] || fail "$step: exit $code, not 3: $out"
  grep -q -- "$reason" <<<"$out" || fail "$step: '$reason' not in: $out"
  ! grep -q "AWS_ENDPOINT_URL" <<<"$out" || fail "$step: the S3 hint in a refusal: $out"
  [[ $(version) == "$v0" ]] || fail "$step: the version moved from $v0"
  [[ $(objects) == "$o0" ]] || fail "$step: an object was written or deleted"
}
status_rows() { # DATE: the rows status --json counts for DATE
  w status --config "$config" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(x["rows"] for x in d["dates"] if x["event_date"]==sys.argv[1]))' "$1"
}

# The local and the S3 table side by side (each in its own folder of $work): the
# readers' start-up is most of the time.
pids=()
for where in local s3; do
  (
    [[ $where == s3 ]] && export $("$repo/tests/s3/server.sh" env --port "$port" | xargs)

    # 1. OPTIMIZE, then land and restore.
    product optimize replace 3
    land day1; land day2
    other "$url" optimize >/dev/null
    rows_are "optimize" "$(rows_of day1 day2)"
    [[ $(status_rows 2024-03-01) == 3 ]] || fail "optimize: status does not count 3 rows on 2024-03-01"
    land restate
    rows_are "optimize, restatement" "$(rows_of day1 day2 restate)"
    w restore 2024-03-01 --yes --config "$config" >/dev/null || fail "optimize: restore failed"
    rows_are "optimize, restore" "$(rows_of day1 day2)"
    echo "delta_shared.sh: $where: OPTIMIZE, then a restatement and its restore: the readers agree at each step"

    # 2. VACUUM, then restore: refused, the table unchanged.
    product vacuum
    land day1; land restate
    other "$url" vacuum >/dev/null
    refused "vacuum, restore" "is no longer stored (removed from the table by version 1" \
      restore 2024-03-01 --yes --config "$config"
    rows_are "vacuum, restore refused" "$(rows_of day1 restate)"
    echo "delta_shared.sh: $where: VACUUM, then a restore is refused naming the vacuumed file; version unchanged, readers read"

    # 3. Rows deleted with a deletion vector.
    product vectors
    land day1; land restate; land day2
    # One vector on the restated 2024-03-01 (whose trash holds day1), one on 2024-03-02.
    [[ $(other "$url" delete-dv 2024-03-01 102) == 1 ]] || fail "vectors: the first vector is not 1 row"
    [[ $(other "$url" delete-dv 2024-03-02 202 204) == 2 ]] || fail "vectors: the second vector is not 2 rows"
    want="$(rows_of day1 restate day2 -102 -202 -204)"
    rows_are "vectors" "$want"
    for date_rows in 2024-03-01:2 2024-03-02:4; do
      date="${date_rows%:*}"
      [[ $(status_rows "$date") == "${date_rows#*:}" && $(other "$url" count "$date") == "${date_rows#*:}" ]] ||
        fail "vectors: status counts $(status_rows "$date") rows on $date, the readers $(other "$url" count "$date")"
    done
    refused "vectors, plan" "would refuse (table_feature)" plan --config "$config" "$dir/in/day2b.jsonl"
    refused "vectors, replace" '"reason":"table_feature"' run --json --config "$config" "$dir/in/day2b.jsonl"
    refused "vectors, diff" "refused (table_feature)" diff --config "$config" "$dir/in/day2b.jsonl"
    refused "vectors, restore" "refused (table_feature)" restore 2024-03-01 --yes --config "$config"
    config_replace="$config"
    product vectors merge
    refused "vectors, merge" '"reason":"table_feature"' run --json --config "$config" "$dir/in/day2b.jsonl"
    config="$config_replace"
    rows_are "vectors, after every refusal" "$want"
    echo "delta_shared.sh: $where: a deletion vector: status counts what the readers see; plan, replace, merge, diff and restore refused; no deleted row came back"

    # 4. Features refused at plan time.
    for feature in checkConstraints generatedColumns identityColumns columnMapping appendOnly; do
      product "feature-$feature"
      land day1
      other "$url" feature "$feature" >/dev/null
      refused "$feature, plan" "\`$feature\`" plan --config "$config" "$dir/in/restate.jsonl"
      refused "$feature, run" '"reason":"table_feature"' run --json --config "$config" "$dir/in/restate.jsonl"
      if [[ $feature == appendOnly ]]; then
        land day3 # a new date removes nothing: it lands
        rows_are "$feature" "$(rows_of day1 day3)"
      else
        rows_are "$feature" "$(rows_of day1)"
      fi
    done
    echo "delta_shared.sh: $where: checkConstraints, generatedColumns, identityColumns, columnMapping and appendOnly refused at plan time (appendOnly: a new date landed)"

    # 5. The change data feed on a table deltalake made (a legacy protocol, as Spark 3.x
    #    makes): turned on (writer version 4), refused naming the feed, not the
    #    checkConstraints the version implies; turned off (still writer version 4), it lands.
    product change-data-feed
    other "$url" create
    other "$url" feature changeDataFeed
    [[ $(other "$url" protocol) == "1 4 None" ]] || fail "the feed: protocol $(other "$url" protocol)"
    refused "the feed on, plan" "\`changeDataFeed\` (the change data feed is on" plan --config "$config" "$dir/in/day1.jsonl"
    refused "the feed on, run" '"reason":"table_feature"' run --json --config "$config" "$dir/in/day1.jsonl"
    other "$url" feature changeDataFeedOff
    land day1
    land restate
    rows_are "the feed off, at writer version 4" "$(rows_of day1 restate)"
    [[ $(other "$url" protocol) == "1 4 None" ]] || fail "the feed off: protocol $(other "$url" protocol)"
    echo "delta_shared.sh: $where: deltalake's legacy table (writer version 4): the change data feed on refused by name; off, a landing and a restatement landed, the protocol as it was"
  ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
