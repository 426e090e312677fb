#!/usr/bin/env bash
# Merge mode at the scale of its workload (issue 43): a 20,000-event micro-batch merged
# into the newest date of tables of 1, 8 and 32 dates of ~290k keys each, on a hive root
# and on a local Delta table; the wall time and peak RSS (GNU time) of each batch, and
# delta-rs's own MERGE (python deltalake, bench/merge_scale_deltars.py) of the same batch
# into a copy of the same Delta table, in the same run.
#
#   bench/merge_scale.sh [--sizes "1 8 32"]
#
# Env: WHARF_BIN (default target/release/wharf), REPS=3 (batches per table and tool, each
# on a fresh copy of the table; the median is printed), WORK (default a temporary folder,
# removed at the end; a folder given is kept, and the tables it already holds are reused,
# so two builds can be measured on the same tables; they take ~30 MB a date and format).
# One day of events (1M lines, 290k keys, seed 1) is generated once into
# bench/out/merge_day.jsonl; every date is that day shifted: its calendar dates moved by
# whole days (local offsets kept, so each event keeps its UTC instant's offset within the
# day) and its order ids given a per-date prefix, so dates hold disjoint keys. The tables
# are landed a date at a time (replace mode, one file a date, as a year of merged days
# holds them); a table's newest date holds its day less the last 20,000 lines, and those
# lines are the batch (updates of the day's recent orders and new ones).
# Results: a table on stdout and in bench/out/merge_scale.md, runs in bench/out/merge_scale.tsv.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
OUT=$BENCH/out
WHARF=${WHARF_BIN:-$ROOT/target/release/wharf}
REPS=${REPS:-3}
PY=$ROOT/tests/proof/.venv-delta/bin/python
TIME=/usr/bin/time
BATCH_LINES=20000
sizes=(1 8 32)
while (($#)); do
  case $1 in
    --sizes) shift; read -ra sizes <<<"$1" ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "merge_scale.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $WHARF ]] || { echo "merge_scale.sh: $WHARF missing: cargo build --release" >&2; exit 2; }
[[ -x $TIME ]] || { echo "merge_scale.sh: needs GNU time at $TIME" >&2; exit 2; }
"$PY" -c 'import deltalake' 2>/dev/null || { echo "merge_scale.sh: $PY needs deltalake (tests/proof/delta_readers.sh makes it)" >&2; exit 2; }
mkdir -p "$OUT"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  trap 'rm -rf "$WORK/run" "$WORK"/*-base "$WORK/day.jsonl"' EXIT
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
DAY=$OUT/merge_day.jsonl
[[ -s $DAY ]] || python3 "$BENCH/gen_events.py" --events 1000000 --days 1 --start 2024-03-01 --seed 1 --out "$DAY"

config() { # $1 = folder, $2 = hive|delta, $3 = replace|merge
  local publish='publish_root = "lake/orders"'
  [[ $2 == delta ]] && publish+=$'\ntable_format = "delta"'
  cat >"$1/wharf.toml" <<TOML
product = "orders"
inbox = "inbox"
$publish
quarantine_root = "quarantine/orders"
state_root = "state/orders"
max_rejected_lines = 1000000
max_dates = 2
write_mode = "$3"

TOML
  # The same schema as compare.sh's product.
  sed -n '/^\[schema\]/,/^city /p' "$BENCH/compare.sh" >>"$1/wharf.toml"
}

# shifted D FILE: the day moved D days on (from 2024-04-01), its order ids prefixed.
shifted() {
  local d=$1 prev day next
  prev=$(date -u -d "2024-04-01 + $((d - 1)) days" +%F)
  day=$(date -u -d "2024-04-01 + $d days" +%F)
  next=$(date -u -d "2024-04-01 + $((d + 1)) days" +%F)
  sed -e "s/\"updated_at\":\"2024-02-29T/\"updated_at\":\"${prev}T/" \
      -e "s/\"updated_at\":\"2024-03-01T/\"updated_at\":\"${day}T/" \
      -e "s/\"updated_at\":\"2024-03-02T/\"updated_at\":\"${next}T/" \
      -e "s/\"order_id\":10/\"order_id\":1$((10 + d))/" "$DAY" >"$2"
}

land() { # $1 = table folder, $2 = input
  "$WHARF" run "$2" --config "$1/wharf.toml" >/dev/null
}

# Builds, for each format, one table per size: dates 0..S-2 whole, date S-1 less the batch
# (unless WORK already holds them all).
max=0; built=1
for s in "${sizes[@]}"; do
  ((s > max)) && max=$s
  [[ -e $WORK/hive-$s/.built && -e $WORK/delta-$s/.built ]] || built=0
done
((built)) && echo "merge_scale.sh: reusing the tables in $WORK" >&2
((built)) || for format in hive delta; do
  base=$WORK/$format-base
  mkdir -p "$base/inbox"; config "$base" "$format" replace
  for ((d = 0; d < max; d++)); do
    shifted "$d" "$WORK/day.jsonl"
    for s in "${sizes[@]}"; do
      ((s - 1 == d)) || continue
      table=$WORK/$format-$s
      rm -rf "$table"; cp -a "$base" "$table"
      head -n $((1000000 - BATCH_LINES)) "$WORK/day.jsonl" >"$table/newest.jsonl"
      tail -n $BATCH_LINES "$WORK/day.jsonl" >"$table/batch.jsonl"
      land "$table" "$table/newest.jsonl"
      rm "$table/newest.jsonl"
      config "$table" "$format" merge
      touch "$table/.built"
      echo "merge_scale.sh: $format table of $s dates built" >&2
    done
    ((d + 1 < max)) && land "$base" "$WORK/day.jsonl"
  done
  rm -rf "$base"
done

median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
TSV=$OUT/merge_scale.tsv
printf 'dates\ttool\trep\twall_s\tmaxrss_kib\tdetail\n' >"$TSV"
timed() { # $1 = dates, $2 = tool, $3 = rep, command...: one row of TSV
  local s=$1 tool=$2 rep=$3; shift 3
  $TIME -f '%e %M' -o "$WORK/time.txt" "$@" >"$WORK/out.txt"
  read -r wall rss <"$WORK/time.txt"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$tool" "$rep" "$wall" "$rss" "$(tr -d '\n\t' <"$WORK/out.txt")" >>"$TSV"
}
for s in "${sizes[@]}"; do
  for ((rep = 0; rep < REPS; rep++)); do
    for format in hive delta; do
      run=$WORK/run; rm -rf "$run"; cp -a "$WORK/$format-$s" "$run"
      timed "$s" "wharf-$format" "$rep" "$WHARF" run "$run/batch.jsonl" --config "$run/wharf.toml" --json
    done
    run=$WORK/run; rm -rf "$run"; cp -a "$WORK/delta-$s" "$run"
    timed "$s" delta-rs "$rep" "$PY" "$BENCH/merge_scale_deltars.py" "$run/lake/orders" "$run/batch.jsonl"
  done
done

"$PY" - "$TSV" "$REPS" "${sizes[@]}" <<'PY' | tee "$OUT/merge_scale.md"
import csv, json, statistics, sys
tsv, reps, sizes = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = list(csv.DictReader(open(tsv), delimiter="\t"))
print(f"| table | tool | batch wall (median of {reps}) | peak RSS (max) | files read / rewritten, rows written |")
print("|---|---|---:|---:|---|")
for size in sizes:
    for tool in ("wharf-hive", "wharf-delta", "delta-rs"):
        mine = [r for r in runs if r["dates"] == size and r["tool"] == tool]
        if not mine:
            continue
        wall = statistics.median(float(r["wall_s"]) for r in mine)
        rss = max(int(r["maxrss_kib"]) for r in mine) / 1024
        try:
            out = json.loads(mine[0]["detail"])
        except ValueError:
            out = {}
        if "dates" in out:
            day = out["dates"][-1]
            what = f"{day['files_read']} / {day['files_rewritten']}, {day['rows_rewritten']} rows"
        elif "metrics" in out:
            m = out["metrics"]
            what = (f"MERGE call {out['merge_s']} s; files added {m['num_target_files_added']}, "
                    f"removed {m['num_target_files_removed']}")
        else:
            what = ""
        keys = int(size) * 290
        print(f"| {size} dates, {keys}k keys | {tool} | {wall:.2f} s | {rss:.0f} MiB | {what} |")
PY
