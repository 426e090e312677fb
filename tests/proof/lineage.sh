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

if [[ -z "${WHARF_BIN:-}" ]]; then
    (cd "$repo" && cargo build --quiet --bin wharf)
    target="${CARGO_TARGET_DIR:-target}"
    [[ $target == /* ]] || target="$repo/$target"
    WHARF_BIN="$target/debug/wharf"
fi

if ! "$venv/bin/python" -c "import openlineage.client" 2>/dev/null; then
    echo "lineage.sh: creating $venv (openlineage-python)" >&2
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet openlineage-python
fi

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
