#!/usr/bin/env bash
# Instructions per in-process tools/call under callgrind (bench/callgrind_tools_call.py), one
# figure per variant: (Ir of 2000 calls - Ir of 0 calls) / 2000. Instruction counts are far
# steadier than times on a shared machine, but still indicative only. Usage:
#   bench/callgrind_tools_call.sh [variant ...]     (none async eager ratelimit by default)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
# One hash seed: dict and set layouts (and so instruction counts) repeat from run to run.
export PYTHONHASHSEED=${PYTHONHASHSEED:-0}
CALLS=${CALLS:-2000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total() {  # total instructions of one run: total <calls> <variant>
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1.$2" "$PY" \
        bench/callgrind_tools_call.py --calls "$1" --variant "$2" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$out/cg.$1.$2"
}
for variant in "${@:-none async eager ratelimit}"; do
    for v in $variant; do
        full=$(total "$CALLS" "$v")
        empty=$(total 0 "$v")
        echo "$v: $(( (full - empty) / CALLS )) instructions per tools/call"
    done
done
