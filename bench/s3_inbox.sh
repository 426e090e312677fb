#!/usr/bin/env bash
# An S3 inbox against a local one (CONTRACT.md §13), SeaweedFS on loopback:
#
# 1. Landing: one EVENTS-event file landed REPS times from a local inbox and REPS times
#    as each of two objects of an S3 inbox, alternating (local, s3, s3-sse, local, ...),
#    each into a fresh product; wall seconds and peak RSS per run, the ratios of the
#    medians, and a check that the lakes hold the same Parquet bytes. `s3` is put plainly:
#    SeaweedFS stores a text upload gzipped and inflates it on every GET, on the same two
#    cores as the landing. `s3-sse` is put with SSE-S3, as AWS S3 stores every new object
#    by default: SeaweedFS then stores the bytes as put (encrypted).
# 2. Discovery: an S3 inbox of OBJECTS objects (put once, kept), listed in full as the
#    reconcile does, then one new object put and the cycle that finds it timed
#    (examples/s3_discovery.rs).
#
#   bench/s3_inbox.sh            Env: EVENTS=2000000 REPS=3 OBJECTS=100000
#                                     S3_PORT=18300 (a running tests/s3/server.sh, else
#                                     one is started there and stopped at the end)
#                                     WHARF_BIN=target/release/wharf
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EVENTS=${EVENTS:-2000000}
REPS=${REPS:-3}
OBJECTS=${OBJECTS:-100000}
PORT=${S3_PORT:-18300}
WHARF=${WHARF_BIN:-$ROOT/target/release/wharf}
OUT=$ROOT/bench/out/s3_inbox
mkdir -p "$OUT"
[[ -x $WHARF ]] || (cd "$ROOT" && cargo build --release)

if ! curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
  "$ROOT/tests/s3/server.sh" start --port "$PORT"
  trap '"$ROOT/tests/s3/server.sh" stop --port "$PORT"' EXIT
fi
eval "$("$ROOT/tests/s3/server.sh" env --port "$PORT" | sed 's/^/export /')"

FILE=$ROOT/bench/out/events_$EVENTS.jsonl
[[ -f $FILE ]] || python3 "$ROOT/bench/gen_events.py" --events "$EVENTS" --out "$FILE"
PREFIX=bench-land-$EVENTS
put() { # $1 = prefix, then curl's extra arguments
  local prefix=$1; shift
  curl -s -f -o /dev/null -T "$FILE" "$@" --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    "$AWS_ENDPOINT_URL/wharf/$prefix/events.jsonl"
}
put "$PREFIX"
put "$PREFIX-sse" -H "x-amz-server-side-encryption: AES256"

product() { # $1 = folder, $2 = inbox
  rm -rf "$1"; mkdir -p "$1/inbox"
  sed -n '/^product = /,$p' "$ROOT/samples/wharf.toml" >"$1/wharf.toml"
  sed -i "s|^inbox = .*|inbox = \"$2\"|" "$1/wharf.toml"
  sed -i 's/^max_rejected_lines = .*/max_rejected_lines = 1000000/' "$1/wharf.toml"
}
run_one() { # $1 = way, $2 = rep
  local dir=$OUT/run_$1 input
  case $1 in
    local) product "$dir" inbox; input=$dir/inbox/events.jsonl; ln "$FILE" "$input" 2>/dev/null || cp "$FILE" "$input" ;;
    s3) product "$dir" "s3://wharf/$PREFIX/"; input=s3://wharf/$PREFIX/events.jsonl ;;
    s3-sse) product "$dir" "s3://wharf/$PREFIX-sse/"; input=s3://wharf/$PREFIX-sse/events.jsonl ;;
  esac
  /usr/bin/time -f "%e %M" -o "$OUT/time" "$WHARF" run "$input" --config "$dir/wharf.toml" >/dev/null
  read -r wall rss <"$OUT/time"
  echo "$1 rep $2: $wall s wall, $rss KiB peak"
  echo "$1 $wall" >>"$OUT/walls"
}
: >"$OUT/walls"
for rep in $(seq "$REPS"); do
  for way in local s3 s3-sse; do run_one "$way" "$rep"; done
done
median() { grep "^$1 " "$OUT/walls" | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
l=$(median local)
for way in s3 s3-sse; do
  s=$(median "$way")
  echo "median: local $l s, $way $s s, $way/local $(awk -v s="$s" -v l="$l" 'BEGIN {printf "%.2f", s/l}')"
  diff -r -x '.*wharf-owner*' "$OUT/run_local/lake" "$OUT/run_$way/lake" >/dev/null &&
    echo "lakes ($way): the same Parquet bytes" || echo "lakes ($way): DIFFERENT"
done

# A debug build: discovery waits on the network, not on code.
(cd "$ROOT" && cargo run --quiet --example s3_discovery -- "s3://wharf/bench-$OBJECTS/" "$OBJECTS")
