#!/usr/bin/env bash
# Three landings of one file, in one run: wharf's local engine, wharf's Spark engine on a
# local[2] Spark Connect server, and the PySpark job a Spark team would write
# (bench/pyspark_land.py) on the same server.
#
#   bench/spark.sh [FILE]       default bench/out/events_2000000.jsonl (generated if missing)
#
# Env: REPS=3 (runs per tool, alternating local, spark, pyspark, local, ...)
#      WARMUP=1 (untimed runs of each tool first, rep 0 in the raw figures: the server's
#        first queries compile and JIT what every later one reuses, a cost that would
#        otherwise fall on whichever tool runs first)
#      WHARF_BIN=path (default target/release/wharf; built with --features spark if missing)
#      SKIP="spark" (tools to leave out: local, spark, pyspark)
#      WHARF_BASE=path (a second wharf, e.g. the commit before a change: the tool "base",
#        its Spark engine on the same server, alternating with the others)
#      WHARF_SPARK_PORT=15022 (the benchmark's own server, started and stopped here)
#      SPARK_DRIVER_MEMORY=2g (the server's heap)
# Each run lands into fresh folders. Wall and CPU are the client's (GNU time); for the two
# Spark tools the server's CPU during the run is added from /proc. The table goes to
# stdout and bench/out/spark.md, every run's raw figures to bench/out/spark_runs.tsv.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
OUT=$BENCH/out
REPS=${REPS:-3}
export WARMUP=${WARMUP:-1}
WHARF=${WHARF_BIN:-$ROOT/target/release/wharf}
PORT=${WHARF_SPARK_PORT:-15022}
REMOTE=sc://127.0.0.1:$PORT
TIME=/usr/bin/time
export SPARK_DRIVER_MEMORY=${SPARK_DRIVER_MEMORY:-2g}

case ${1:-} in -h|--help) sed -n '2,20p' "$0"; exit 0 ;; esac
FILE=${1:-$OUT/events_2000000.jsonl}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "spark.sh: REPS must be a positive integer" >&2; exit 2; }
[[ $WARMUP =~ ^[0-9]+$ ]] || { echo "spark.sh: WARMUP must be a whole number" >&2; exit 2; }
[[ -x $TIME ]] || { echo "spark.sh: needs GNU time at $TIME (apt-get install time)" >&2; exit 2; }
tools=()
for tool in local spark base pyspark; do
  [[ $tool != base || -n ${WHARF_BASE:-} ]] || continue
  [[ " ${SKIP:-} " == *" $tool "* ]] || tools+=("$tool")
done
[[ -z ${WHARF_BASE:-} || -x $WHARF_BASE ]] || { echo "spark.sh: WHARF_BASE=$WHARF_BASE is not an executable" >&2; exit 2; }
((${#tools[@]})) || { echo "spark.sh: SKIP leaves no tool to run" >&2; exit 2; }
mkdir -p "$OUT"

if [[ ! -s $FILE ]]; then
  [[ $FILE == "$OUT/events_2000000.jsonl" ]] || { echo "spark.sh: $FILE is missing" >&2; exit 2; }
  echo "== generating $FILE" >&2
  python3 "$BENCH/gen_events.py" --events 2000000 --seed 1 --out "$FILE.partial"
  mv "$FILE.partial" "$FILE"
fi
if [[ " ${tools[*]} " =~ " local " || " ${tools[*]} " =~ " spark " ]] && [[ ! -x $WHARF ]]; then
  echo "spark.sh: $WHARF missing: cargo build --release --features spark" >&2
  (cd "$ROOT" && cargo build --release --features spark)
fi

# --- the server ---------------------------------------------------------------------
server=(env WHARF_SPARK_SERVER_DIR="$OUT/spark-server" "$ROOT/tests/spark/server.sh")
server_pid=
if [[ " ${tools[*]} " =~ " spark " || " ${tools[*]} " =~ " base " || " ${tools[*]} " =~ " pyspark " ]]; then
  trap '"${server[@]}" stop --port "$PORT" >&2' EXIT
  "${server[@]}" start --port "$PORT" >&2
  server_pid=$(<"$OUT/spark-server/server.pid")
fi
# The PySpark job's client: the python whose pyspark the server runs.
pyspark_python=python3
if [[ " ${tools[*]} " =~ " pyspark " ]]; then
  pyspark_python=$("${server[@]}" python)
fi
# CPU seconds (user + system) the server has used so far.
server_cpu() {
  [[ -n $server_pid ]] || { echo 0; return; }
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$server_pid/stat"
}

write_config() { # $1 = run folder
  cat >"$1/wharf.toml" <<'EOF'
product = "orders"
inbox = "inbox"
publish_root = "lake/orders"
quarantine_root = "quarantine/orders"
state_root = "state/orders"
max_rejected_lines = 1000000
max_dates = 2

[schema]
key = "order_id"
order_by = "updated_at"
tiebreak = "seq"
event_id = "event_id"
partition_by_date_of = "updated_at"
prohibited = ["email", "name", "payment_token"]

[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "int",       required = true }
status     = { type = "string",    required = true }
updated_at = { type = "timestamp", required = true }
seq        = { type = "int",       required = false }
courier_id = { type = "string",    required = false }
city       = { type = "string",    required = false }
EOF
}

RUNS=$OUT/spark_runs.tsv
printf 'tool\trep\trc\twall_s\tuser_s\tsys_s\tmaxrss_kib\tserver_cpu_s\n' >"$RUNS"

# run_one TOOL REP: fresh folders, one timed run, one row in spark_runs.tsv.
run_one() {
  local tool=$1 rep=$2 dir=$OUT/spark_run_$1 rc=0
  rm -rf "$dir"
  mkdir -p "$dir/inbox"
  local -a cmd
  case $tool in
    local | spark | base)
      write_config "$dir"
      # The input lives in the inbox; a hard link costs nothing and keeps the cache safe.
      ln "$FILE" "$dir/inbox/" 2>/dev/null || cp "$FILE" "$dir/inbox/"
      local bin=$WHARF
      [[ $tool != base ]] || bin=$WHARF_BASE
      cmd=("$bin" run "$dir/inbox/$(basename "$FILE")" --config "$dir/wharf.toml")
      [[ $tool == local ]] || cmd+=(--engine spark --remote "$REMOTE") ;;
    pyspark)
      cmd=("$pyspark_python" "$BENCH/pyspark_land.py" "$FILE" "$dir/lake/orders" --remote "$REMOTE") ;;
  esac
  sync
  local before after
  before=$(server_cpu)
  $TIME -f '%e %U %S %M' -o "$dir/time.txt" -- "${cmd[@]}" >"$dir/log.txt" 2>&1 || rc=$?
  after=$(server_cpu)
  read -r wall user sys rss < <(tail -n 1 "$dir/time.txt")
  local scpu
  scpu=$(awk "BEGIN{print $after - $before}")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$rep" "$rc" "$wall" "$user" "$sys" "$rss" "$scpu" >>"$RUNS"
  if ((rc != 0)); then
    echo "  $tool rep $rep FAILED (exit $rc); last lines of $dir/log.txt:" >&2
    tail -n 5 "$dir/log.txt" | sed 's/^/    /' >&2
  else
    printf '  %-7s rep %d: %7.2f s wall, %7.2f s server CPU%s\n' "$tool" "$rep" "$wall" "$scpu" \
      "$( ((rep > 0)) || echo ' (warm-up, not counted)')" >&2
  fi
}

# Did the tools publish the same rows? (first rep; informative only; needs duckdb from
# bench/compare.sh's bench/.venv)
check_same() {
  local py=$BENCH/.venv/bin/python
  "$py" -c 'import duckdb' 2>/dev/null || { echo "  check: skipped (no $BENCH/.venv with duckdb: run bench/compare.sh once)" >&2; return 0; }
  "$py" - "$OUT" "${tools[@]}" >&2 <<'EOF' || echo "  check: could not compare outputs" >&2
import os, sys, duckdb
out, tools = sys.argv[1], sys.argv[2:]
c = duckdb.connect()
c.execute("SET TimeZone = 'UTC'")
cols = ("event_id, order_id::BIGINT, status, epoch_us(updated_at::TIMESTAMPTZ), seq::BIGINT, "
        "courier_id, city, event_date::DATE")
def rel(tool):
    return (f"SELECT {cols} FROM read_parquet('{out}/spark_run_{tool}/lake/orders/event_date=*/*.parquet', "
            "hive_partitioning = true)")
present = [t for t in tools if os.path.isdir(f"{out}/spark_run_{t}/lake/orders")]
base = present[0] if present else None
for t in present:
    n = c.execute(f"SELECT count(*) FROM ({rel(t)})").fetchone()[0]
    if t == base:
        print(f"  check: {t} {n} rows")
        continue
    a = c.execute(f"SELECT count(*) FROM ({rel(t)} EXCEPT ALL {rel(base)})").fetchone()[0]
    b = c.execute(f"SELECT count(*) FROM ({rel(base)} EXCEPT ALL {rel(t)})").fetchone()[0]
    verdict = "same rows" if a == b == 0 else f"DIFFER: {a} only in {t}, {b} only in {base}"
    print(f"  check: {t} {n} rows: {verdict} as {base}")
EOF
}

echo "== $FILE ($(du -h "$FILE" | cut -f1)): ${tools[*]} x $REPS" >&2
cat "$FILE" >/dev/null # page cache warm for every tool alike
for ((warm = 1; warm <= WARMUP; warm++)); do
  for tool in "${tools[@]}"; do
    run_one "$tool" 0
  done
done
for ((rep = 1; rep <= REPS; rep++)); do
  for tool in "${tools[@]}"; do
    run_one "$tool" "$rep"
  done
  if ((rep == 1)); then check_same; fi
done

# --- table --------------------------------------------------------------------------
wharf_version="$("$WHARF" --version 2>/dev/null || echo '?') (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
spark_version=$("$pyspark_python" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || echo '?')
python3 - "$RUNS" "$FILE" "$REPS" "$wharf_version" "$spark_version" "$SPARK_DRIVER_MEMORY" <<'EOF' | tee "$OUT/spark.md"
import csv, os, statistics, sys, time
runs, path, reps, wv, sv, heap = sys.argv[1:7]
rows = [r for r in csv.DictReader(open(runs), delimiter="\t") if r["rep"] != "0"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"# Wharf local, Wharf on Spark, PySpark ({time.strftime('%Y-%m-%d %H:%M')})\n")
print(f"{os.cpu_count()} cores ({cpu}); REPS={reps}, medians; {os.path.basename(path)} "
      f"({os.path.getsize(path) / 2**20:,.0f} MiB, page cache); wharf {wv}; Spark {sv} "
      f"Connect server, local[2], {heap} heap, started before the runs and warmed by "
      f"{os.environ.get('WARMUP', '1')} untimed run(s) of each tool.\n")
names = {"local": "wharf, local engine", "spark": "wharf --engine spark",
         "base": "WHARF_BASE --engine spark", "pyspark": "pyspark_land.py (Spark Connect)"}
print("| tool | wall s | client CPU s | server CPU s | client peak RSS MiB | wall ÷ local | wall ÷ PySpark |")
print("|---|---:|---:|---:|---:|---:|---:|")
med = {}
for tool in names:
    rs = [r for r in rows if r["tool"] == tool]
    if not rs:
        continue
    ok = [r for r in rs if r["rc"] == "0"]
    if len(ok) < len(rs):
        print(f"| {names[tool]} | FAILED {len(rs) - len(ok)}/{len(rs)} runs (exit {rs[0]['rc']}) | | | | | |")
        continue
    med[tool] = (statistics.median(float(r["wall_s"]) for r in ok),
                 statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in ok),
                 statistics.median(float(r["server_cpu_s"]) for r in ok),
                 statistics.median(int(r["maxrss_kib"]) for r in ok) / 1024)
for tool, (w, c, s, m) in med.items():
    ratio = f"{w / med['local'][0]:.2f}" if "local" in med else ""
    to_pyspark = f"{w / med['pyspark'][0]:.2f}" if "pyspark" in med else ""
    print(f"| {names[tool]} | {w:.2f} | {c:.2f} | {s:.2f} | {m:.0f} | {ratio} | {to_pyspark} |")
EOF
