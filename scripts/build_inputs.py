"""What the build scripts need to know about this checkout, for the interpreter running it.

    python scripts/build_inputs.py list SECTION.KEY    one pyproject.toml string list, a line each
    python scripts/build_inputs.py current MODE        exit 0 when the in-place compiled modules of
                                                       this interpreter were built (MODE plain or pgo)
                                                       from the inputs there are now, 1 otherwise
    python scripts/build_inputs.py record MODE         remember that they were
    python scripts/build_inputs.py tag                 the interpreter's module tag

The inputs of a build: every compiled source (.pyx, .pxd, .pxi), header and setup.py, the
training run for a profile-guided build, the installed build tools, the compiler, the
interpreter, and the environment switches of setup.py.  The record, build/stamp/<tag>.json
(one per interpreter), holds their hash, the build's mode and the hash of each module built,
so that modules replaced since (an editable install, a copy) count as out of date.  A
profile-guided build serves where a plain one is asked for, not the other way round.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWITCHES = ("MCPFAST_SIMDJSON", "MCPFAST_ANNOTATE", "MCPFAST_DEBUG", "MCPFAST_SANITIZE",
            "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS")
TOOLS = ("setuptools", "Cython", "pysimdjson", "picows")


def pyproject_list(dotted: str) -> list[str]:
    """A list of strings from pyproject.toml, e.g. build-system.requires: tomllib where the
    interpreter has it (3.11+), list_without_tomllib on 3.10, so that the build needs no TOML
    package before its requirements are installed."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    if sys.version_info < (3, 11):
        return list_without_tomllib(text, dotted)
    import tomllib

    section, _, key = dotted.rpartition(".")
    node = tomllib.loads(text)
    for part in section.split("."):
        node = node[part]
    return list(node[key])


def list_without_tomllib(text: str, dotted: str) -> list[str]:
    """The one TOML form pyproject.toml's lists take: ``key = [ "...", ... ]`` of plain
    strings (comments allowed) under a ``[section]`` header."""
    section, _, key = dotted.rpartition(".")
    table = re.search(r"^\[" + re.escape(section) + r"\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = table and re.search(r"^" + re.escape(key) + r"\s*=\s*\[(.*?)\]", table.group(1), re.M | re.S)
    if not found:
        raise SystemExit(f"build_inputs: no {dotted} list in pyproject.toml")
    return re.findall(r'"([^"\\]*)"', re.sub(r"#[^\n]*", "", found.group(1)))


def tag() -> str:
    """The interpreter's extension-module tag (cpython-312-x86_64-linux-gnu)."""
    return sysconfig.get_config_var("EXT_SUFFIX").strip(".").rsplit(".", 1)[0]


def inputs_hash(mode: str) -> str:
    digest = hashlib.sha256()
    patterns = ["mcpfast/**/*.pyx", "mcpfast/**/*.pxd", "mcpfast/**/*.pxi", "include/**/*.h", "setup.py"]
    if mode == "pgo":
        patterns.append("bench/pgo_train.py")
    for pattern in patterns:
        for path in sorted(glob.glob(pattern, root_dir=ROOT, recursive=True)):
            with open(os.path.join(ROOT, path), "rb") as f:
                digest.update(path.encode() + b"\0" + hashlib.sha256(f.read()).digest())
    for name in TOOLS:
        try:
            digest.update(f"{name}={importlib.metadata.version(name)}\0".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{name} missing\0".encode())
    compiler = os.environ.get("CXX") or sysconfig.get_config_var("CXX") or "c++"
    try:
        version = subprocess.run([*compiler.split(), "--version"], capture_output=True, text=True).stdout
    except OSError:
        version = "no compiler"
    digest.update(version.encode())
    digest.update(f"{sys.version}\0{sys.executable}\0{tag()}\0".encode())
    for name in SWITCHES:
        digest.update(f"{name}={os.environ.get(name, '')}\0".encode())
    return digest.hexdigest()


def modules() -> dict[str, str]:
    """Every in-place compiled module of this interpreter and the hash of its file."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    found = {}
    for path in sorted(glob.glob("mcpfast/**/*" + suffix, root_dir=ROOT, recursive=True)):
        with open(os.path.join(ROOT, path), "rb") as f:
            found[path] = hashlib.sha256(f.read()).hexdigest()
    return found


def stamp_path() -> str:
    return os.path.join(ROOT, "build", "stamp", tag() + ".json")


def expected_modules() -> int:
    """How many compiled modules setup.py builds (its ext(...) entries)."""
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        return len(re.findall(r'^\s*ext\("', f.read(), re.M))


def current(mode: str) -> bool:
    if os.environ.get("MCPFAST_ONLY"):
        return False
    try:
        with open(stamp_path(), encoding="utf-8") as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return False
    built = modules()
    return (stamp.get("inputs") == inputs_hash(stamp.get("mode", ""))
            and stamp.get("mode") in ({"plain", "pgo"} if mode == "plain" else {"pgo"})
            and stamp.get("modules") == built and len(built) == expected_modules())


def record(mode: str) -> None:
    os.makedirs(os.path.dirname(stamp_path()), exist_ok=True)
    stamp = {"mode": mode, "inputs": inputs_hash(mode), "modules": modules()}
    tmp = stamp_path() + f".{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(stamp, f, indent=1)
    os.replace(tmp, stamp_path())


def main(argv: list[str]) -> int:
    if argv == ["tag"]:
        print(tag())
        return 0
    if len(argv) == 2 and argv[0] == "list":
        print("\n".join(pyproject_list(argv[1])))
        return 0
    if len(argv) == 2 and argv[0] in ("current", "record") and argv[1] in ("plain", "pgo"):
        if argv[0] == "record":
            record(argv[1])
            return 0
        return 0 if current(argv[1]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
