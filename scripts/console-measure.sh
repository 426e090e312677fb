#!/usr/bin/env bash
# The console's two figures: time to first frame with 1,000 inbox inputs, and key latency
# while a ~300 MB input is planned. A release build of the workspace member
# `console-measure`, in the workspace's target folder.
#
#   scripts/console-measure.sh [BIG.jsonl]   # default /tmp/big.jsonl, generated if missing
set -euo pipefail
cd "$(dirname "$0")/.."
big="${1:-/tmp/big.jsonl}"
if [[ ! -f "$big" ]]; then
  python3 bench/gen_events.py --events 2000000 --out "$big"
fi
cargo run -q --release --locked -p console-measure -- "$big"
