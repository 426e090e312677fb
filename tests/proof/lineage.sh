#!/usr/bin/env bash
# Wharf's OpenLineage events checked by the official Python client's model of the spec
# (tests/proof/lineage.py): the sample inbox (two publishes and a refusal) is landed with
# `lineage = "file:…"`, then relanded (skips), and every event is rebuilt by the client.
#
#   tests/proof/lineage.sh
#
# Creates tests/proof/.venv-lineage (gitignored) with openlineage-python on first use.
# Env: WHARF_BIN=path (default: cargo build, then target/debug/wharf), PYTHON=python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv-lineage"

source "$here/lib.sh"
WHARF_BIN="$(wharf_bin)"
ensure_venv "$venv" openlineage.client openlineage-python

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$repo/samples/." "$work/"
sed -i 's/^write_mode = .*/&\nlineage = "file:lineage.ndjson"/' "$work/wharf.toml"
# Exit 3: the sample inbox holds a refusal, which must be a FAIL event.
"$WHARF_BIN" --config "$work/wharf.toml" run >/dev/null || [[ $? == 3 ]]
"$WHARF_BIN" --config "$work/wharf.toml" run >/dev/null || [[ $? == 3 ]]
grep -q '"eventType":"FAIL"' "$work/lineage.ndjson"
grep -q '"eventType":"COMPLETE"' "$work/lineage.ndjson"
"$venv/bin/python" "$here/lineage.py" "$work/lineage.ndjson"
