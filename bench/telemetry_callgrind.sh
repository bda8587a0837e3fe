#!/usr/bin/env bash
# Instructions per in-process tools/call of bench/telemetry_cost.py's variants under
# callgrind: (Ir of N calls - Ir of 0 calls) / N, the SDK's batch thread included. Steadier
# than times on a shared machine; indicative only. Usage:
#   bench/telemetry_callgrind.sh ["variant" ...]   (default: off, spans+metrics, public spans+metrics)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}
CALLS=${CALLS:-2000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total() {  # total <calls> <variant>
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$PY" bench/telemetry_cost.py \
        --calls "$1" --run "$2" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$out/cg"
}
if [ "$#" -eq 0 ]; then
    set -- "off" "spans+metrics" "public spans+metrics"
fi
for variant in "$@"; do
    full=$(total "$CALLS" "$variant")
    empty=$(total 0 "$variant")
    echo "$variant: $(( (full - empty) / CALLS )) instructions per tools/call"
done
