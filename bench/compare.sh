#!/usr/bin/env bash
# Wharf vs DuckDB vs a read+SHA-256 floor, on generated order-status JSONL files.
#
#   bench/compare.sh [--sizes "N M ..."] [N ...]      default sizes: 1000000 2000000 8000000 8000000@580000
#
# A size N@K is N events over K distinct keys (default: 0.29 keys an event), to show how
# memory grows with keys and not with lines: e.g. 2000000 8000000@580000.
#
# Env: REPS=3 (runs per tool, alternating wharf, duckdb, floor, wharf, ...)
#      WHARF_SKIP=1 (leave Wharf out)   WHARF_BIN=path (default target/release/wharf)
#      DUCKDB_SORT=1 (DuckDB also sorts rows by key, as Wharf's partitions are)
# Inputs are cached in bench/out/events_N.jsonl (seed 1); the tables go to stdout and
# bench/out/results.md, every run's raw figures to bench/out/runs.tsv.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
OUT=$BENCH/out
VENV=$BENCH/.venv
REPS=${REPS:-3}
WHARF_SKIP=${WHARF_SKIP:-0}
WHARF=${WHARF_BIN:-$ROOT/target/release/wharf}
TIME=/usr/bin/time

sizes=()
while (($#)); do
  case $1 in
    --sizes) shift; read -ra more <<<"${1:-}"; sizes+=("${more[@]}") ;;
    --sizes=*) read -ra more <<<"${1#--sizes=}"; sizes+=("${more[@]}") ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) sizes+=("$1") ;;
  esac
  shift
done
((${#sizes[@]})) || sizes=(1000000 2000000 8000000 8000000@580000)
for n in "${sizes[@]}"; do
  [[ $n =~ ^[1-9][0-9]*(@[1-9][0-9]*)?$ ]] || { echo "compare.sh: size '$n' is not N or N@KEYS (positive integers)" >&2; exit 2; }
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: REPS must be a positive integer" >&2; exit 2; }
[[ -x $TIME ]] || { echo "compare.sh: needs GNU time at $TIME (apt-get install time)" >&2; exit 2; }
mkdir -p "$OUT"

# --- tools --------------------------------------------------------------------------
if [[ $WHARF_SKIP == 1 ]]; then
  echo "compare.sh: WHARF_SKIP=1: Wharf is left out of this run" >&2
elif [[ ! -x $WHARF ]]; then
  echo "compare.sh: $WHARF missing: cargo build --release" >&2
  (cd "$ROOT" && cargo build --release)
fi
if ! "$VENV/bin/python" -c 'import duckdb' 2>/dev/null; then
  echo "compare.sh: creating $VENV with duckdb" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q duckdb
fi
PY=$VENV/bin/python

tools=()
[[ $WHARF_SKIP == 1 ]] || tools+=(wharf)
tools+=(duckdb floor)

# The floor: reading the file and its SHA-256 at the speed of the CPU's SHA instructions,
# which OpenSSL uses (coreutils' sha256sum here does not: ~7x slower, slower than Wharf's
# whole landing, so no floor at all); sha256sum where there is no openssl.
if command -v openssl >/dev/null; then
  floor_cmd=(openssl dgst -sha256)
else
  floor_cmd=(sha256sum)
fi
FLOOR_NAME="${floor_cmd[*]}"

RUNS=$OUT/runs.tsv
printf 'size\ttool\trep\trc\twall_s\tuser_s\tsys_s\tmaxrss_kib\n' >"$RUNS"

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

# run_one SIZE TOOL REP FILE: fresh folders, one timed run, one row in runs.tsv.
run_one() {
  local n=$1 tool=$2 rep=$3 file=$4 dir=$OUT/run_$2_$1 rc=0
  rm -rf "$dir"
  mkdir -p "$dir"
  local -a cmd
  case $tool in
    wharf)
      write_config "$dir"
      mkdir -p "$dir/inbox"
      # The input lives in the inbox; a hard link costs nothing and keeps the cache safe.
      ln "$file" "$dir/inbox/" 2>/dev/null || cp "$file" "$dir/inbox/"
      cmd=("$WHARF" run "$dir/inbox/$(basename "$file")" --config "$dir/wharf.toml") ;;
    duckdb)
      cmd=("$PY" "$BENCH/duckdb_land.py" "$file" "$dir/lake") ;;
    floor)
      cmd=("${floor_cmd[@]}" "$file") ;;
  esac
  sync
  $TIME -f '%e %U %S %M' -o "$dir/time.txt" -- "${cmd[@]}" >"$dir/log.txt" 2>&1 || rc=$?
  read -r wall user sys rss < <(tail -n 1 "$dir/time.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$tool" "$rep" "$rc" "$wall" "$user" "$sys" "$rss" >>"$RUNS"
  if ((rc != 0)); then
    echo "  $tool rep $rep FAILED (exit $rc); last lines of $dir/log.txt:" >&2
    tail -n 5 "$dir/log.txt" | sed 's/^/    /' >&2
  else
    printf '  %-6s rep %d: %6.2f s wall, %7.1f MiB peak\n' "$tool" "$rep" "$wall" "$(awk "BEGIN{print $rss/1024}")" >&2
  fi
  return 0
}

# Do Wharf and DuckDB publish the same rows? (first rep of each size; informative only)
check_same() {
  local n=$1 w=$OUT/run_wharf_$1/lake/orders d=$OUT/run_duckdb_$1/lake
  [[ -d $w && -d $d ]] || return 0
  "$PY" - "$w" "$d" >&2 <<'EOF' || echo "  check: could not compare outputs" >&2
import sys, duckdb
w, d = sys.argv[1], sys.argv[2]
c = duckdb.connect()
c.execute("SET TimeZone = 'UTC'")
cols = ("event_id, order_id::BIGINT, status, epoch_us(updated_at::TIMESTAMPTZ), seq::BIGINT, "
        "courier_id, city, event_date::DATE")
def rel(p):
    return f"SELECT {cols} FROM read_parquet('{p}/event_date=*/*.parquet', hive_partitioning = true)"
nw = c.execute(f"SELECT count(*) FROM ({rel(w)})").fetchone()[0]
nd = c.execute(f"SELECT count(*) FROM ({rel(d)})").fetchone()[0]
a = c.execute(f"SELECT count(*) FROM ({rel(w)} EXCEPT ALL {rel(d)})").fetchone()[0]
b = c.execute(f"SELECT count(*) FROM ({rel(d)} EXCEPT ALL {rel(w)})").fetchone()[0]
verdict = "same rows" if a == b == 0 and nw == nd else f"DIFFER: {a} only in wharf, {b} only in duckdb"
print(f"  check: wharf {nw} rows, duckdb {nd} rows: {verdict}")
EOF
}

# --- runs ---------------------------------------------------------------------------
for n in "${sizes[@]}"; do
  file=$OUT/events_$n.jsonl
  if [[ ! -s $file ]]; then
    echo "== generating $file" >&2
    keys_ratio=()
    if [[ $n == *@* ]]; then
      keys_ratio=(--keys-ratio "$(python3 -c "print(${n#*@} / ${n%@*})")")
    fi
    python3 "$BENCH/gen_events.py" --events "${n%@*}" "${keys_ratio[@]}" --seed 1 --out "$file.partial"
    mv "$file.partial" "$file"
  fi
  echo "== $n lines ($(du -h "$file" | cut -f1)): ${tools[*]} x $REPS" >&2
  cat "$file" >/dev/null # page cache warm for every tool alike
  for ((rep = 1; rep <= REPS; rep++)); do
    for tool in "${tools[@]}"; do
      run_one "$n" "$tool" "$rep" "$file"
    done
    if ((rep == 1)); then check_same "$n"; fi
  done
done

# --- table --------------------------------------------------------------------------
duckdb_version=$("$PY" -c 'import duckdb; print(duckdb.__version__)')
wharf_version=skipped
if [[ $WHARF_SKIP != 1 ]]; then
  wharf_version="$("$WHARF" --version 2>/dev/null || echo '?') (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
fi
python3 - "$RUNS" "$OUT" "$REPS" "$duckdb_version" "$wharf_version" "${DUCKDB_SORT:-0}" "$FLOOR_NAME" <<'EOF' | tee "$OUT/results.md"
import csv, os, platform, statistics, sys, time
runs, out, reps, ddv, wv, dsort, floor = sys.argv[1:8]
rows = list(csv.DictReader(open(runs), delimiter="\t"))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = next((int(l.split()[1]) // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
print(f"# Wharf vs DuckDB ({time.strftime('%Y-%m-%d %H:%M')})\n")
print(f"{os.cpu_count()} cores ({cpu}), {mem / 1024:.0f} GiB RAM, {platform.system()}; "
      f"REPS={reps}, medians; wharf {wv}; duckdb {ddv}{' (sorted by key)' if dsort == '1' else ''}; "
      f"input in page cache; floor = `{floor}` of the input.\n")
names = {"wharf": "wharf", "duckdb": "duckdb", "floor": f"floor ({floor})"}
for size in dict.fromkeys(r["size"] for r in rows):
    path = os.path.join(out, f"events_{size}.jsonl")
    mib = os.path.getsize(path) / 2**20 if os.path.exists(path) else float("nan")
    lines, _, keys = size.partition("@")
    over = f" over {int(keys):,} keys" if keys else ""
    print(f"## {int(lines):,} lines{over} ({mib:,.0f} MiB)\n")
    print("| tool | wall s | CPU s (user+sys) | peak RSS MiB | wall ÷ duckdb | RSS ÷ duckdb |")
    print("|---|---:|---:|---:|---:|---:|")
    med = {}
    for tool in ("wharf", "duckdb", "floor"):
        rs = [r for r in rows if r["size"] == size and r["tool"] == tool]
        if not rs:
            continue
        ok = [r for r in rs if r["rc"] == "0"]
        if len(ok) < len(rs):
            print(f"| {names[tool]} | FAILED {len(rs) - len(ok)}/{len(rs)} runs (exit {rs[0]['rc']}) | | | | |")
            continue
        med[tool] = (
            statistics.median(float(r["wall_s"]) for r in ok),
            statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in ok),
            statistics.median(int(r["maxrss_kib"]) for r in ok) / 1024,
        )
    for tool, (w, c, m) in med.items():
        dw, dm = (f"{w / med['duckdb'][0]:.2f}", f"{m / med['duckdb'][2]:.2f}") if "duckdb" in med else ("", "")
        print(f"| {names[tool]} | {w:.2f} | {c:.2f} | {m:.0f} | {dw} | {dm} |")
    if "wharf" in med and "duckdb" in med:
        print(f"\nwharf/duckdb: wall {med['wharf'][0] / med['duckdb'][0]:.2f}×, "
              f"peak RSS {med['wharf'][2] / med['duckdb'][2]:.2f}×")
    print()
EOF
