#!/usr/bin/env bash
# Other writers' files (CONTRACT.md §12.9, issue 55): tables in the orders shape written
# by Python `deltalake` (a DELETE / UPDATE / MERGE history: string views), polars
# (`write_delta`) and pyarrow (hive roots: dictionary, large and view strings, int16/32,
# unsigned, timestamps in s/ms/ns, INT96, binary), made by tests/proof/foreign_writers.py.
# On each, merge mode: `status` counts the rows, `plan` and `diff` read the rows as they
# are (diff's "before" is the other writer's value, not null), and a landing of one key
# (order 5) publishes; then delta-rs or pyarrow, polars and DuckDB read every other row
# with the hash it had before, and order 5 as landed. Values Wharf cannot read exactly
# (NTZ, nanoseconds past microseconds, an unsigned beyond i64, bytes not UTF-8): plan,
# diff and the landing exit 1 naming the column, and no byte of the table changes.
# With WHARF_SPARK_REMOTE set, every kind is landed again on the Spark engine: the same
# checks, except that unsigned integers, nanosecond timestamps and binary strings, which
# Spark's Parquet reader cannot read exactly, are refused by column naming the local engine.
# Creates tests/proof/.venv-delta (gitignored) on first use. Env: WHARF_BIN,
# WHARF_SPARK_REMOTE, FOREIGN_KINDS (a grep pattern of the kinds to run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv-delta"
source "$here/lib.sh"
delta_readers_venv
wharf="$(wharf_bin)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
py() { "$venv/bin/python" -W ignore "$here/foreign_writers.py" "$@"; }
fail() { echo "foreign_writers.sh: $kind: $*" >&2; exit 1; }
printf '%s\n' '{"event_id":"new5","order_id":5,"status":"LANDED","updated_at":"2024-03-01T23:00:00Z","seq":999}' > "$work/in.jsonl"
printf '%s\n' '{"event_id":"move9","order_id":9,"status":"MOVED","updated_at":"2024-03-03T23:00:00Z"}' > "$work/move.jsonl"
# tree: every file of the root with its content's hash (a refusal must change none).
tree() { (cd "$root" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# prove KIND EXPECT [ENGINE_ARGS…]: write KIND afresh, then status, plan, diff and a merge.
prove() {
  local kind="$1" expect="$2"; shift 2
  local engine=("$@") label="$kind${1:+-on-spark}"
  root="$work/$label/root"; config="$work/$label/wharf.toml"; mkdir -p "$work/$label"
  py write "$kind" "$root"
  format=""; [[ $kind == delta-* ]] && format='table_format = "delta"'
  sed -e "s#^publish_root = .*#publish_root = \"$root\"\n$format#" \
    -e "s#^state_root = .*#state_root = \"state\"#" -e "s#^quarantine_root = .*#quarantine_root = \"quarantine\"#" \
    -e 's#^write_mode = .*#write_mode = "merge"#' -e 's#^max_shrink = .*#max_shrink = 1.0#' \
    "$repo/samples/wharf.toml" > "$config"
  w() { "$wharf" "$@" --config "$config"; }
  rows="$(w status --json | python3 -c 'import json,sys; print(sum(d["rows"] for d in json.load(sys.stdin)["dates"] if d["event_date"]=="2024-03-01"))')" ||
    fail "status failed"
  [[ $rows == 40 ]] || fail "status counts $rows rows on 2024-03-01, not 40"
  if [[ $expect == read ]]; then
    before="$(py hashes "$kind" "$root")"
    py_agree='import json,sys; h=json.loads(sys.argv[1]); v=list(h.values()); assert all(x==v[0] for x in v), "the readers disagree before"'
    "$venv/bin/python" -c "$py_agree" "$before" || fail "the readers disagree on the table as written"
    w plan "${engine[@]}" "$work/in.jsonl" | grep -q "would publish" || fail "plan does not publish"
    out="$(w diff "${engine[@]}" "$work/in.jsonl")" || fail "diff failed: $out"
    grep -q "~ 5  event_id e5 → new5, status .* → LANDED" <<<"$out" || fail "diff's before row of order 5 is not the written one: $out"
    grep -q "updated 1 · unchanged 39" <<<"$out" || fail "diff: $out"
    w run --json "${engine[@]}" "$work/in.jsonl" >/dev/null || fail "the merge landing failed"
    py check "$kind" "$root" "$before" | sed "s/^$kind:/$label:/"
    if [[ $kind == hive-int32-bloom ]]; then
      # On a fresh copy, a key moving to a new date: only the bloom filter says the old
      # date's file holds it (probed as the column stores it), or it is on both dates.
      py write "$kind" "$root-move"
      sed "s#$root#$root-move#; s#^state_root = .*#state_root = \"state-move\"#" "$config" > "$config.move"
      "$wharf" run "${engine[@]}" --config "$config.move" "$work/move.jsonl" >/dev/null || fail "the move failed"
      py hashes "$kind" "$root-move" >/dev/null || fail "order 9 is on two dates"
      echo "$label: order 9 moved to a new date and is in the table once"
    fi
  else
    was="$(tree)"
    for cmd in plan diff run; do
      set +e; out="$(w "$cmd" "${engine[@]}" "$work/in.jsonl" 2>&1)"; code=$?; set -e
      [[ $code == 1 ]] || fail "$cmd exits $code, not 1: $out"
      grep -q "part-0.parquet: column \`[a-z_]*\` (.*, row group 0) holds .* nothing was written. To land: " <<<"$out" ||
        fail "$cmd: the error does not name the file, column, row group and what to do: $out"
      [[ $expect != spark-refuse ]] || grep -q -- "--engine local" <<<"$out" || fail "$cmd: the local engine is not named: $out"
    done
    [[ $(tree) == "$was" ]] || fail "a refusal changed the table"
    echo "$label: plan, diff and the landing exit 1 naming $(grep -o 'column `[a-z_]*`' <<<"$out"), the table unchanged"
  fi
}

while read -r kind expect; do
  prove "$kind" "$expect"
  if [[ -n ${WHARF_SPARK_REMOTE:-} ]]; then
    case $kind in hive-uint|hive-nanos|hive-binary) expect=spark-refuse ;; esac
    prove "$kind" "$expect" --engine spark --remote "$WHARF_SPARK_REMOTE"
  fi
done < <(py kinds | grep "${FOREIGN_KINDS:-.}")
