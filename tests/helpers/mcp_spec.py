"""Where the tests find the MCP specification's JSON Schemas: the one place that knows.

`spec_dir()` is the folder holding ``<version>/schema.json`` for every version in
`SPEC_VERSIONS`: ``$MCPFAST_SPEC_DIR`` when set, else ``spec/`` at the repository root when it
exists, else ``../shared/spec`` beside the repository checkout. `spec_problem()` says what is
missing there (None when nothing is); tests/conftest.py stops the whole run with that message
before any test runs. `spec_document(version)` is the schema as published (parsed JSON, cached)
and `spec_validator(version, definition)` a jsonschema validator for one of its definitions.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any, Optional

from jsonschema.validators import validator_for

SPEC_DIR_VARIABLE = "MCPFAST_SPEC_DIR"

# Every protocol version some test validates messages against.
SPEC_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

_REPO = Path(__file__).resolve().parents[2]


def spec_dir() -> Path:
    """The folder of the per-version schema.json files (see the module docstring)."""
    env = os.environ.get(SPEC_DIR_VARIABLE)
    if env:
        return Path(env)
    local = _REPO / "spec"
    if local.is_dir():
        return local
    # shared/ sits beside the repository checkout, in development and in CI alike
    return _REPO.parent / "shared" / "spec"


def spec_schema_path(version: str) -> Path:
    """Where the schema.json of one protocol version is."""
    return spec_dir() / version / "schema.json"


def spec_problem() -> Optional[str]:
    """One message saying which schemas are missing and how to point at them, or None."""
    folder = spec_dir()
    env = os.environ.get(SPEC_DIR_VARIABLE)
    source = f"from {SPEC_DIR_VARIABLE}" if env else f"the default: {SPEC_DIR_VARIABLE} is not set"
    if not folder.is_dir():
        what = f"the folder {folder} does not exist"
    else:
        missing = [v for v in SPEC_VERSIONS if not (folder / v / "schema.json").is_file()]
        if not missing:
            return None
        what = f"{folder} has no {', '.join(f'{v}/schema.json' for v in missing)}"
    return (
        f"MCP JSON schemas not found: {what} ({source}). The tests validate "
        f"every message against <spec folder>/<version>/schema.json for {', '.join(SPEC_VERSIONS)}. "
        f"Point at the folder holding them: {SPEC_DIR_VARIABLE}=/path/to/spec bash scripts/test "
        f"(without the variable: spec/ in the repository, else ../shared/spec beside it)."
    )


@functools.lru_cache(maxsize=None)
def spec_document(version: str) -> dict:
    """The parsed schema.json of one version, as published."""
    path = spec_schema_path(version)
    if not path.is_file():
        raise FileNotFoundError(
            f"MCP schema for {version} not found at {path} (set {SPEC_DIR_VARIABLE})"
        )
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def spec_definitions(version: str) -> dict:
    """The definitions of one version's schema (``$defs`` or, in older ones, ``definitions``)."""
    document = spec_document(version)
    return document["$defs"] if "$defs" in document else document["definitions"]


@functools.lru_cache(maxsize=None)
def spec_validator(version: str, definition: str) -> Any:
    """A jsonschema validator for one definition of the published schema (objects left open
    as published; tests/conftest.py's ``mcp_schema`` fixture offers the closed form)."""
    document = spec_document(version)
    key = "$defs" if "$defs" in document else "definitions"
    assert definition in document[key], (version, definition)
    return validator_for(document)({**document, "$ref": f"#/{key}/{definition}"})
