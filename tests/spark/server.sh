#!/usr/bin/env bash
# A local Spark Connect server (local[2], pip's pyspark 4) for the Spark suite and the
# benchmarks, started and stopped by its own process id.
#
#   tests/spark/server.sh start|stop|status|python [--port N] [--kill]
#
#   start   starts the server in the background unless this script's server already runs
#           on that port, and waits until the port accepts connections
#   stop    stops the server this script started on that port (SIGTERM to its process
#           group, SIGKILL after WHARF_SPARK_STOP_TIMEOUT s), and waits for it to exit;
#           --kill sends SIGKILL at once, as a crashed host would
#   status  exit 0 and its pid when it runs, exit 3 when it does not
#   python  prints the python whose pyspark the server runs (making the venv if needed),
#           for a PySpark client of the same version
#
# Its pid file and log are in <target dir>/spark-server/<port>/ (server.pid, server.log),
# which is also its working folder (spark-warehouse, metastore_db). Env:
#   WHARF_SPARK_PORT=15002         the port (--port wins)
#   WHARF_SPARK_SERVER_DIR=DIR     the pid, log and working folder instead
#   WHARF_SPARK_START_TIMEOUT=180  seconds to wait for the port
#   WHARF_SPARK_STOP_TIMEOUT=30    seconds between SIGTERM and SIGKILL
#   PYTHON=python3                 a python whose pyspark 4 is used if it has one; else
#                                  tests/spark/.venv is made with pip's pyspark[connect] 4.0
#   JAVA_HOME                      the Java 17+ to run (default: java on PATH)
#   SPARK_DRIVER_MEMORY=1g         the server's heap (spark-submit reads it)
#   WHARF_SPARK_STREAM_DURATION=2m the longest a result stream runs before the server
#                                  ends it and the client must reattach (Spark's
#                                  spark.connect.execute.reattachable.senderMaxStreamDuration);
#                                  the suite sets it short so every long query reattaches
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$here/.venv"

usage() { sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
fail() { echo "server.sh: $*" >&2; exit 1; }

command="${1:-}"
[[ $command =~ ^(start|stop|status|python)$ ]] || { usage >&2; exit 2; }
shift
port="${WHARF_SPARK_PORT:-15002}"
hard_kill=0
while (($#)); do
  case $1 in
    --port) port="${2:-}"; shift ;;
    --port=*) port="${1#--port=}" ;;
    --kill) hard_kill=1 ;;
    *) echo "server.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[[ $port =~ ^[1-9][0-9]{0,4}$ ]] && ((port < 65536)) || { echo "server.sh: port '$port' is not a TCP port" >&2; exit 2; }

target="${CARGO_TARGET_DIR:-target}"
[[ $target == /* ]] || target="$repo/$target"
dir="${WHARF_SPARK_SERVER_DIR:-$target/spark-server/$port}"
pid_file="$dir/server.pid"
log="$dir/server.log"

# Something accepts connections on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Process $1 still runs: one of its threads is not a zombie (a JVM's main thread can end
# first, leaving the others shutting down). Read in the shell, thread by thread: a thread
# may end between the glob and its read, and one awk over every file (mawk) then fails
# whole, taking a busy live server for gone.
alive() {
  local status key state _
  for status in /proc/"$1"/task/*/status; do
    while read -r key state _; do
      [[ $key == State: ]] || continue
      [[ $state != Z ]] && return 0
      break
    done 2>/dev/null <"$status"
  done
  return 1
}

# The pid this script recorded for $port, if that process is still this port's server
# (a pid the kernel reused for something else is never signalled).
own_pid() {
  [[ -s $pid_file ]] || return 1
  local pid
  pid="$(<"$pid_file")"
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  local cmdline
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ $cmdline == *SparkConnectServer* && $cmdline == *"spark.connect.grpc.binding.port=$port "* ]] || return 1
  echo "$pid"
}

log_tail() { [[ -s $log ]] && { echo "--- last lines of $log:" >&2; tail -n 30 "$log" >&2; }; return 0; }

# A python whose pyspark is 4.x: the venv's, else $PYTHON's, else a new venv from PyPI.
find_python() {
  local candidate
  for candidate in "$venv/bin/python" "${PYTHON:-python3}"; do
    if "$candidate" -c 'import sys, pyspark; sys.exit(pyspark.__version__.split(".")[0] != "4")' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo "server.sh: creating $venv with pyspark[connect] 4.0 from PyPI" >&2
  "${PYTHON:-python3}" -m venv "$venv" || fail "cannot create $venv: install python3-venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  "$venv/bin/pip" install --quiet 'pyspark[connect]==4.0.*' >&2 || fail "pip could not install pyspark[connect]==4.0.* into $venv"
  echo "$venv/bin/python"
}

check_java() {
  local java="java" line major
  [[ -n ${JAVA_HOME:-} ]] && java="$JAVA_HOME/bin/java"
  command -v "$java" >/dev/null || fail "no java found (JAVA_HOME or PATH): install Java 17, e.g. apt-get install openjdk-17-jre-headless"
  line="$("$java" -version 2>&1 | grep -m1 -i 'version')" || true
  major="$(sed -E 's/.*version "([0-9]+)(\.([0-9]+))?.*/\1 \3/' <<<"$line")"
  read -r major minor <<<"$major"
  [[ $major == 1 ]] && major="$minor" # "1.8.0" is Java 8
  [[ $major =~ ^[0-9]+$ ]] && ((major >= 17)) || fail "Spark 4 needs Java 17 or later; $java says: ${line:-nothing}. Set JAVA_HOME to a Java 17+"
}

start() {
  local pid
  if pid="$(own_pid)"; then
    echo "server.sh: already running on 127.0.0.1:$port (pid $pid, log $log)"
    return
  fi
  listening "$port" && fail "127.0.0.1:$port is already in use by a process this script did not start; choose another with --port or WHARF_SPARK_PORT"
  check_java
  local python spark_home
  python="$(find_python)"
  spark_home="$("$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
  [[ -x $spark_home/bin/spark-submit ]] || fail "$spark_home/bin/spark-submit is missing: reinstall pyspark (pip install 'pyspark[connect]==4.0.*')"
  mkdir -p "$dir"
  : >"$log"
  # Its own session, so a Ctrl-C meant for the caller does not reach it and stop can
  # signal its whole process group; setsid execs (no fork), so $! is the server itself.
  (
    cd "$dir"
    export SPARK_HOME="$spark_home" SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
    exec setsid "$spark_home/bin/spark-submit" --master 'local[2]' \
      --conf spark.connect.grpc.binding.address=127.0.0.1 \
      --conf "spark.connect.grpc.binding.port=$port" \
      --conf "spark.connect.execute.reattachable.senderMaxStreamDuration=${WHARF_SPARK_STREAM_DURATION:-2m}" \
      --class org.apache.spark.sql.connect.service.SparkConnectServer spark-internal \
      </dev/null >>"$log" 2>&1
  ) &
  pid=$!
  echo "$pid" >"$pid_file"
  local timeout="${WHARF_SPARK_START_TIMEOUT:-180}" started="$SECONDS"
  until listening "$port"; do
    if ! alive "$pid"; then
      rm -f "$pid_file"
      log_tail
      fail "the Spark Connect server (pid $pid) exited before it listened on 127.0.0.1:$port; its log is above"
    fi
    if ((SECONDS - started >= timeout)); then
      log_tail
      stop_pid "$pid" 1
      rm -f "$pid_file"
      fail "the Spark Connect server did not listen on 127.0.0.1:$port within $timeout s (WHARF_SPARK_START_TIMEOUT); it was stopped, its log is above"
    fi
    sleep 0.5
  done
  echo "server.sh: Spark Connect server on sc://127.0.0.1:$port (pid $pid, Spark from $spark_home, log $log) after $((SECONDS - started)) s"
}

# Signals the process group of $1 (SIGKILL at once when $2 is 1) and waits for it to end.
stop_pid() {
  local pid=$1 now=$2 waited=0
  local grace=$((${WHARF_SPARK_STOP_TIMEOUT:-30} * 10))
  if ((now)); then
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  else
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  fi
  while alive "$pid"; do
    if ((waited == grace)); then
      echo "server.sh: pid $pid still runs after ${WHARF_SPARK_STOP_TIMEOUT:-30} s: SIGKILL" >&2
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
}

stop() {
  local pid
  if ! pid="$(own_pid)"; then
    rm -f "$pid_file"
    echo "server.sh: no server started by this script runs on port $port"
    return
  fi
  stop_pid "$pid" "$hard_kill"
  rm -f "$pid_file"
  echo "server.sh: stopped the Spark Connect server on port $port (pid $pid)"
}

python() { find_python; }

status() {
  local pid
  if pid="$(own_pid)"; then
    echo "server.sh: running on sc://127.0.0.1:$port (pid $pid, log $log)"
  else
    echo "server.sh: no server started by this script runs on port $port"
    exit 3
  fi
}

"$command"
