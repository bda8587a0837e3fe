#!/usr/bin/env bash
# Instructions of the gateway process per forwarded tools/call under callgrind
# (bench/callgrind_gateway.py), upstream over stdio and over Streamable HTTP, and (mode
# http-client) of mcpfast's client per tools/call over Streamable HTTP
# (bench/callgrind_http_client.py): (Ir of CALLS calls - Ir of BASE calls) / (CALLS - BASE).
# Indicative only (a shared machine; a run's event-loop wake-ups vary: repeat and take the
# median), but far steadier than times. Usage:
#   bench/callgrind_gateway.sh [stdio] [http] [http-client]      (stdio http by default)
#   ROOT=/other/checkout PY=/other/checkout/.venv/bin/python bench/callgrind_gateway.sh
#   IN_FLIGHT=256 bench/callgrind_gateway.sh      (calls kept in flight; default 1, sequential)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${ROOT:-$PWD}
PY=${PY:-$ROOT/.venv/bin/python}
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}
CALLS=${CALLS:-1200}
BASE=${BASE:-200}
IN_FLIGHT=${IN_FLIGHT:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total() {  # total instructions of the measured process in one run: total <calls> <mode>
    if [ "$2" = http-client ]; then
        valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1.$2" "$PY" \
            bench/callgrind_http_client.py --calls "$1" --root "$ROOT" >/dev/null 2>&1
    else
        "$PY" bench/callgrind_gateway.py --calls "$1" --upstream "$2" --root "$ROOT" --python "$PY" \
            --in-flight "$IN_FLIGHT" --valgrind-out "$out/cg.$1.$2" >/dev/null
    fi
    awk '/^summary:/ {print $2}' "$out/cg.$1.$2"
}
for upstream in "${@:-stdio http}"; do
    for u in $upstream; do
        full=$(total "$CALLS" "$u")
        base=$(total "$BASE" "$u")
        if [ "$u" = http-client ]; then
            echo "client over http: $(( (full - base) / (CALLS - BASE) )) instructions per tools/call"
        else
            echo "upstream $u: $(( (full - base) / (CALLS - BASE) )) instructions per forwarded tools/call"
        fi
    done
done
