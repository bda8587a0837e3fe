#!/usr/bin/env bash
# Instructions per Streamable HTTP POST (bench/callgrind_http_post.py), one figure per leg:
# (Ir of 2000 POSTs - Ir of 0) / 2000. Usage: bench/callgrind_http_post.sh [leg ...]
# (stateless session 2026 by default). ROOT=<checkout> measures another checkout's build;
# OTEL=1 with the OpenTelemetry SDK set up and the server's telemetry on.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
ROOT=${ROOT:-$here}
PY=${PY:-$ROOT/.venv/bin/python}
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}
CALLS=${CALLS:-2000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total() {  # total instructions of one run: total <calls> <leg>
    (cd "$ROOT" && PYTHONPATH="$ROOT" PYTHONDONTWRITEBYTECODE=1 valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1.$2" "$PY" \
        "$here/bench/callgrind_http_post.py" --calls "$1" --leg "$2" ${OTEL:+--otel} >/dev/null 2>&1)
    awk '/^summary:/ {print $2}' "$out/cg.$1.$2"
}
for leg in ${@:-stateless session 2026}; do
    full=$(total "$CALLS" "$leg")
    empty=$(total 0 "$leg")
    echo "$leg: $(( (full - empty) / CALLS )) instructions per POST"
done
