#!/usr/bin/env bash
# Screenshots of the operator console for the README: the real console (its runtime
# driven by actions over a copy of the samples, drawn by its own view) rendered to HTML
# with colours by examples/console_screenshots.rs, photographed by headless Chromium.
#
#   scripts/screenshots.sh [THEME]     # writes screenshots/*.png (default theme: dark)
#
# Needs Debian's chromium (apt-get install -y chromium). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
theme="${1:-dark}"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "screenshots: chromium not found; apt-get install -y chromium" >&2
  exit 1
fi
html="$(mktemp -d)"
profile="$(mktemp -d)"
trap 'rm -rf "$html" "$profile"' EXIT
mkdir -p screenshots
cargo run -q --example console_screenshots -- "$html" "$theme" |
  while read -r name width height; do
    "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --hide-scrollbars --user-data-dir="$profile" \
      --window-size="$width,$height" --screenshot="screenshots/$name.png" \
      "file://$html/$name.html" >/dev/null 2>&1
    echo "screenshots/$name.png"
  done
