#!/usr/bin/env bash
# Instructions per call of the codec cases and the in-process round trip against their peers, on
# each supported CPython whose venv is built here (scripts/bench or scripts/test made it:
# .venv, .venv-3.10, .venv-3.12, .venv-3.13), with bench/callgrind_case.py under callgrind:
# (Ir of N calls - Ir of none) / N. One line per case: version, case, instructions per call.
#   bench/callgrind_versions.sh [version ...]      (default: every venv found)
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=(
    "codec decode call_request mcpfast 1000" "codec decode call_request orjson 1000"
    "codec decode call_request msgspec-typed 1000"
    "codec decode tools_list mcpfast 100" "codec decode tools_list msgspec 100"
    "codec decode rows8 mcpfast 300" "codec decode rows8 msgspec 300"
    "codec encode call_response mcpfast 1000" "codec encode call_response orjson 1000"
    "inproc mcpfast 500" "inproc sdk 50"
)
python_of() {
    for venv in .venv .venv-"$1"; do
        if [ -x "$venv/bin/python" ] && [ "$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$1" ]; then
            echo "$venv/bin/python"
            return
        fi
    done
}
instructions() {  # instructions <python> <case words...>
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null \
        | sed -n 's/.*I *refs: *//p' | tr -d ,
}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.10 3.11 3.12 3.13)
for version in "${versions[@]}"; do
    py=$(python_of "$version")
    if [ -z "$py" ]; then
        echo "$version: no built venv here (PYTHON=python$version scripts/bench --quick makes one)"
        continue
    fi
    for case in "${CASES[@]}"; do
        read -ra words <<< "$case"
        n=${words[-1]}
        none=$(instructions "$py" bench/callgrind_case.py "${words[@]:0:${#words[@]}-1}" 0)
        full=$(instructions "$py" bench/callgrind_case.py "${words[@]}")
        echo "$version ${words[*]:0:${#words[@]}-1} $(( (full - none) / n ))"
    done
done
