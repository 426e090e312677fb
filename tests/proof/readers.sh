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

source "$here/lib.sh"
WHARF_BIN="$(wharf_bin)"
readers_venv
export_java_home

exec "$venv/bin/python" "$here/readers.py" --wharf "$WHARF_BIN" "$@"
