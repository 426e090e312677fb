#!/usr/bin/env bash
# Four readers (DuckDB, polars, pyarrow, PySpark) over one dataset landed by the wharf
# CLI, and PySpark seed parity; see readers.py. Standalone:
#
#   tests/proof/readers.sh [--events N] [--seed S]
#
# Creates tests/proof/.venv (gitignored) with the four readers on first use. Env:
# WHARF_BIN=path (default: cargo build, then <target dir>/debug/wharf, honouring
# CARGO_TARGET_DIR), PYTHON=python3.11,
# JAVA_HOME (default: the java on PATH; PySpark 4 needs Java 17+).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv"

if [[ -z "${WHARF_BIN:-}" ]]; then
    (cd "$repo" && cargo build --quiet --bin wharf)
    # Where cargo put it: CARGO_TARGET_DIR when set (relative to the repo, as cargo reads it).
    target="${CARGO_TARGET_DIR:-target}"
    [[ $target == /* ]] || target="$repo/$target"
    WHARF_BIN="$target/debug/wharf"
fi

if ! "$venv/bin/python" -c "import duckdb, polars, pyarrow, pyspark" 2>/dev/null; then
    echo "readers.sh: creating $venv (duckdb, polars, pyarrow, pyspark)" >&2
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet duckdb polars pyarrow 'pyspark>=4'
fi

if [[ -z "${JAVA_HOME:-}" ]] && command -v java >/dev/null; then
    JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
    export JAVA_HOME
fi

exec "$venv/bin/python" "$here/readers.py" --wharf "$WHARF_BIN" "$@"
