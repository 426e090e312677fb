#!/usr/bin/env bash
# One file landed three ways in one run, alternating: the hive layout on local disk, a
# local Delta table, and a Delta table on SeaweedFS over loopback (tests/s3/server.sh).
#
#   bench/delta.sh [FILE]       default bench/out/events_2000000.jsonl (generated if missing)
#
# Env: REPS=2 (runs per layout), WHARF_BIN=path (default target/release/wharf),
#      WHARF_S3_PORT=18400 (the benchmark's own S3 server, started and stopped here).
# Wall, CPU and peak RSS are the client's (GNU time); the S3 server's CPU during each S3
# run is added from /proc. The table goes to stdout and bench/out/delta.md, every run to
# bench/out/delta_runs.tsv.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
OUT=$BENCH/out
REPS=${REPS:-2}
WHARF=${WHARF_BIN:-$ROOT/target/release/wharf}
PORT=${WHARF_S3_PORT:-18400}
TIME=/usr/bin/time

case ${1:-} in -h|--help) sed -n '2,12p' "$0"; exit 0 ;; esac
FILE=${1:-$OUT/events_2000000.jsonl}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "delta.sh: REPS must be a positive integer" >&2; exit 2; }
[[ -x $TIME ]] || { echo "delta.sh: needs GNU time at $TIME (apt-get install time)" >&2; exit 2; }
[[ -x $WHARF ]] || { echo "delta.sh: $WHARF missing: cargo build --release" >&2; exit 2; }
mkdir -p "$OUT"
if [[ ! -s $FILE ]]; then
  [[ $FILE == "$OUT/events_2000000.jsonl" ]] || { echo "delta.sh: $FILE is missing" >&2; exit 2; }
  python3 "$BENCH/gen_events.py" --events 2000000 --seed 1 --out "$FILE.partial"
  mv "$FILE.partial" "$FILE"
fi

trap '"$ROOT/tests/s3/server.sh" stop --port "$PORT" >&2' EXIT
"$ROOT/tests/s3/server.sh" start --port "$PORT" >&2
s3_pid=$(<"$ROOT/tests/s3/.run-$PORT/pid")
# shellcheck disable=SC2046
export $("$ROOT/tests/s3/server.sh" env --port "$PORT" | xargs)

server_cpu() { # the S3 server's user+system CPU seconds so far, its children included
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15 + $16 + $17) / hz}' "/proc/$s3_pid/stat"
}

RUNS=$OUT/delta_runs.tsv
printf 'layout\trep\trc\twall_s\tuser_s\tsys_s\tmaxrss_kib\ts3_cpu_s\n' >"$RUNS"
run_one() { # LAYOUT REP
  local layout=$1 rep=$2 dir=$OUT/delta_run_$1 rc=0 root format=hive
  rm -rf "$dir"
  mkdir -p "$dir/inbox"
  case $layout in
    hive) root=lake/orders ;;
    local-delta) root=lake/orders; format=delta ;;
    s3-delta) root="s3://wharf/bench-$$-$rep/orders"; format=delta ;;
  esac
  sed -e "s#^publish_root = .*#publish_root = \"$root\"\ntable_format = \"$format\"#" \
      -e 's#^max_rejected_lines = .*#max_rejected_lines = 1000000#' \
      "$ROOT/samples/wharf.toml" >"$dir/wharf.toml"
  ln "$FILE" "$dir/inbox/" 2>/dev/null || cp "$FILE" "$dir/inbox/"
  sync
  local before after
  before=$(server_cpu)
  $TIME -f '%e %U %S %M' -o "$dir/time.txt" -- "$WHARF" run "$dir/inbox/$(basename "$FILE")" \
    --config "$dir/wharf.toml" >"$dir/log.txt" 2>&1 || rc=$?
  after=$(server_cpu)
  read -r wall user sys rss < <(tail -n 1 "$dir/time.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$layout" "$rep" "$rc" "$wall" "$user" "$sys" "$rss" \
    "$(awk "BEGIN{print $after - $before}")" >>"$RUNS"
  if ((rc != 0)); then
    echo "  $layout rep $rep FAILED (exit $rc):" >&2
    tail -n 5 "$dir/log.txt" | sed 's/^/    /' >&2
  else
    printf '  %-11s rep %d: %7.2f s wall\n' "$layout" "$rep" "$wall" >&2
  fi
}

for ((rep = 1; rep <= REPS; rep++)); do
  for layout in hive local-delta s3-delta; do run_one "$layout" "$rep"; done
done

python3 - "$RUNS" "$FILE" <<'EOF' | tee "$OUT/delta.md"
import csv, statistics, sys
runs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
ok = [r for r in runs if r["rc"] == "0"]
def median(layout, field):
    values = [float(r[field]) for r in ok if r["layout"] == layout]
    return statistics.median(values) if values else float("nan")
hive = median("hive", "wall_s")
print(f"{sys.argv[2]}: median of {len(ok) // 3 or 1} runs each, one machine, one run of this script\n")
print("| layout | wall s | × hive | client CPU s | peak RSS MiB | S3 server CPU s |")
print("|---|---:|---:|---:|---:|---:|")
for layout in ["hive", "local-delta", "s3-delta"]:
    wall = median(layout, "wall_s")
    cpu = median(layout, "user_s") + median(layout, "sys_s")
    rss = median(layout, "maxrss_kib") / 1024
    s3 = median(layout, "s3_cpu_s") if layout == "s3-delta" else 0
    print(f"| {layout} | {wall:.2f} | {wall / hive:.2f} | {cpu:.2f} | {rss:.0f} | {s3:.2f} |")
failed = len(runs) - len(ok)
if failed:
    print(f"\n{failed} run(s) failed: see {sys.argv[1]}")
EOF
