#!/usr/bin/env bash
# Paired A/B of two wharf binaries on one input: is B faster than A?
#
#   bench/pair.sh A_BIN B_BIN [FILE]      default FILE: bench/out/events_2000000.jsonl
#
# Runs A and B in turn REPS times (default 12; the order flips every pair), each on fresh
# publish/state/quarantine folders, and prints each tool's median wall time and the
# median of the per-pair ratios B/A. These VMs drift by ±15 % from one minute to the
# next; a pair run seconds apart shares the drift, so the ratio is what to read.
# Build A first, e.g. `git worktree add /tmp/a HEAD~1 && cargo build --release`
# there, or copy target/release/wharf aside before a change.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
A=${1:?usage: bench/pair.sh A_BIN B_BIN [FILE]}
B=${2:?usage: bench/pair.sh A_BIN B_BIN [FILE]}
FILE=${3:-$BENCH/out/events_2000000.jsonl}
REPS=${REPS:-12}
[[ -x $A && -x $B ]] || { echo "pair.sh: $A and $B must be executables" >&2; exit 2; }
[[ -s $FILE ]] || { echo "pair.sh: $FILE is missing: bench/compare.sh generates it" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "pair.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }

DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/inbox"
ln "$FILE" "$DIR/inbox/" 2>/dev/null || cp "$FILE" "$DIR/inbox/"
INPUT=$DIR/inbox/$(basename "$FILE")
# The same product as compare.sh's.
sed -n '/^product = /,/^city /p' "$BENCH/compare.sh" >"$DIR/wharf.toml"

run() { # $1 = binary; prints its wall seconds
  rm -rf "$DIR/lake" "$DIR/quarantine" "$DIR/state"
  sync
  /usr/bin/time -f '%e' -o "$DIR/time.txt" "$1" run "$INPUT" --config "$DIR/wharf.toml" >/dev/null
  cat "$DIR/time.txt"
}
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

as=() bs=() ratios=()
cat "$FILE" >/dev/null # page cache warm for both alike
for ((rep = 0; rep < REPS; rep++)); do
  if ((rep % 2)); then b=$(run "$B"); a=$(run "$A"); else a=$(run "$A"); b=$(run "$B"); fi
  as+=("$a") bs+=("$b") ratios+=("$(awk "BEGIN {printf \"%.3f\", $b / $a}")")
done
echo "A median $(median "${as[@]}") s, B median $(median "${bs[@]}") s; B/A per pair: median $(median "${ratios[@]}") (${ratios[*]})"
