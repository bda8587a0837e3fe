# shellcheck shell=bash disable=SC2034  # sets variables for the script sourcing it
# Sourced by scripts/test, build, bench and lint: the virtualenv of the interpreter that
# PYTHON names (default python3).  .venv for the default, and for a PYTHON of the same
# version as .venv's; .venv-X.Y (X.Yt when free-threaded) for any other.  Sets BASE_PY
# (the interpreter a new venv is made from), VENV and PY (the venv's python).
BASE_PY=${PYTHON:-python3}
VENV=.venv
py_version() {
    "$1" -c 'import sys, sysconfig; print("%d.%d%s" % (*sys.version_info[:2], "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))' 2>/dev/null
}
if [ -n "${PYTHON:-}" ]; then
    if ! version=$(py_version "$PYTHON"); then
        echo "$(basename "$0"): PYTHON=$PYTHON does not run" >&2
        exit 2
    fi
    if [ ! -x .venv/bin/python ] || [ "$version" != "$(py_version .venv/bin/python)" ]; then
        VENV=.venv-$version
    fi
fi
PY=$VENV/bin/python
