#!/usr/bin/env bash
# Lands one events file three ways, REPS times each, alternating: as one file, as a set
# of PARTS parts (split on line boundaries, with _SUCCESS), and gzip-compressed; prints
# wall seconds and peak RSS per run, then checks that the three lakes hold the same
# Parquet bytes.
#
# Usage: bench/sets.sh EVENTS.jsonl      Env: REPS=3 PARTS=8 WHARF_BIN=target/release/wharf
#   WHARF_ARGS="--engine spark --remote sc://127.0.0.1:15002" lands on a Spark server
#   (a binary built with --features spark) instead of the local engine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILE=$(realpath "${1:?usage: bench/sets.sh EVENTS.jsonl}")
REPS=${REPS:-3}
PARTS=${PARTS:-8}
WHARF=${WHARF_BIN:-$ROOT/target/release/wharf}
read -ra EXTRA <<<"${WHARF_ARGS:-}"
OUT=${OUT:-$ROOT/bench/out/sets}
mkdir -p "$OUT/src/set"
# The inputs, made once.
if [[ ! -f $OUT/src/set/_SUCCESS ]]; then
  (cd "$OUT/src/set" && split -n "l/$PARTS" -d -a 5 --additional-suffix=.jsonl "$FILE" part- && : >_SUCCESS)
fi
[[ -f $OUT/src/events.jsonl.gz ]] || gzip -c "$FILE" >"$OUT/src/events.jsonl.gz"

run_one() { # $1 = way, $2 = rep
  local dir=$OUT/run_$1 input
  rm -rf "$dir"
  mkdir -p "$dir/inbox"
  sed -n '/^product = /,$p' "$ROOT/samples/wharf.toml" >"$dir/wharf.toml"
  sed -i 's/^max_rejected_lines = .*/max_rejected_lines = 1000000/' "$dir/wharf.toml"
  case $1 in
    file) input=$dir/inbox/events.jsonl; ln "$FILE" "$input" 2>/dev/null || cp "$FILE" "$input" ;;
    set) input=$dir/inbox/events; cp -rl "$OUT/src/set" "$input" ;;
    gzip) input=$dir/inbox/events.jsonl.gz; ln "$OUT/src/events.jsonl.gz" "$input" ;;
  esac
  /usr/bin/time -f "$1 rep $2: %e s wall, %M KiB peak" \
    "$WHARF" run "$input" --config "$dir/wharf.toml" "${EXTRA[@]}" >/dev/null
}
for rep in $(seq "$REPS"); do
  for way in file set gzip; do run_one "$way" "$rep"; done
done
for way in set gzip; do
  diff -r "$OUT/run_file/lake" "$OUT/run_$way/lake" >/dev/null &&
    echo "$way: the same Parquet bytes as the file" || echo "$way: DIFFERENT from the file"
done
