# Sourced by the readers' scripts (readers.sh, delta_readers.sh, added_readers.sh,
# lineage.sh): the wharf they land with and the venvs they read with, set up one way.
# Expects `repo` (the repository's root) to be set by the script that sources it.

# The wharf to run: $WHARF_BIN, else a debug build of the repo's (CARGO_TARGET_DIR
# honoured, relative to the repo as cargo reads it).
wharf_bin() {
  if [[ -n ${WHARF_BIN:-} ]]; then
    echo "$WHARF_BIN"
    return
  fi
  (cd "$repo" && cargo build --quiet --bin wharf) >&2
  local target="${CARGO_TARGET_DIR:-target}"
  [[ $target == /* ]] || target="$repo/$target"
  echo "$target/debug/wharf"
}

# ensure_venv DIR IMPORTS PACKAGE…: makes DIR a venv with pip's PACKAGEs unless its python
# already imports IMPORTS (a comma-separated list).
ensure_venv() {
  local dir="$1" imports="$2"
  shift 2
  "$dir/bin/python" -c "import $imports" 2>/dev/null && return
  echo "$(basename "$0"): creating $dir ($*)" >&2
  "${PYTHON:-python3}" -m venv "$dir"
  "$dir/bin/pip" install --quiet --upgrade pip
  "$dir/bin/pip" install --quiet "$@"
}

# The four readers (readers.sh, added_readers.sh) and the three Delta readers.
readers_venv() {
  ensure_venv "$repo/tests/proof/.venv" "duckdb, polars, pyarrow, pyspark" \
    duckdb polars pyarrow 'pyspark>=4'
}
delta_readers_venv() {
  ensure_venv "$repo/tests/proof/.venv-delta" \
    "deltalake, polars, pyarrow, duckdb, duckdb_extension_delta, duckdb_extension_httpfs" \
    deltalake polars pyarrow duckdb==1.5.5 duckdb-extension-delta==1.5.5 duckdb-extension-httpfs==1.5.5
}

# PySpark needs Java 17+: JAVA_HOME from the java on PATH unless it is set.
export_java_home() {
  if [[ -z ${JAVA_HOME:-} ]] && command -v java >/dev/null; then
    JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
    export JAVA_HOME
  fi
}
