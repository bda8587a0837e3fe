"""The run stops at once, with one message, when the MCP JSON schemas are missing; the
repository carries them, so a clone made anywhere finds them.

Each gate case runs pytest in a subprocess on a small test file of this repository, with
MCPFAST_SPEC_DIR pointing at a folder made for the case.
"""

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_spec import SPEC_VERSIONS, spec_dir

REPO = Path(__file__).resolve().parent.parent
PROBE = "tests/core/test_pending.py"


def run_pytest(spec_folder: Path | None, repo: Path = REPO, probe: str = PROBE) -> subprocess.CompletedProcess:
    """pytest --collect-only on `probe` in `repo`; MCPFAST_SPEC_DIR is `spec_folder`, or unset."""
    env = {k: v for k, v in os.environ.items() if k != "MCPFAST_SPEC_DIR"}
    if spec_folder is not None:
        env["MCPFAST_SPEC_DIR"] = str(spec_folder)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", probe],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_missing_folder_stops_the_run_with_one_message(tmp_path):
    folder = tmp_path / "no-such-spec"
    run = run_pytest(folder)
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert f"the folder {folder} does not exist" in output
    assert "MCPFAST_SPEC_DIR=/path/to/spec" in output
    # Stopped before collecting anything.
    assert "test_pending" not in run.stdout
    assert output.count("MCP JSON schemas not found") <= 2  # the Exit line, once per stream


def test_folder_missing_some_versions_names_them(tmp_path):
    present, *absent = SPEC_VERSIONS
    (tmp_path / present).mkdir()
    (tmp_path / present / "schema.json").write_bytes((spec_dir() / present / "schema.json").read_bytes())
    run = run_pytest(tmp_path)
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    for version in absent:
        assert f"{version}/schema.json" in output.split("The tests")[0]
    assert f"{present}/schema.json" not in output.split("The tests")[0]
    assert "test_pending" not in run.stdout


def test_complete_folder_lets_the_run_go_on(tmp_path):
    for version in SPEC_VERSIONS:
        (tmp_path / version).symlink_to(spec_dir() / version, target_is_directory=True)
    run = run_pytest(tmp_path)
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.OK, output
    assert "MCP JSON schemas not found" not in output
    assert "test_pending.py::" in run.stdout


def test_repository_schemas_are_the_recorded_upstream_files():
    """spec/README.md records each schema's upstream git blob id and SHA-256: the files match."""
    readme = (REPO / "spec" / "README.md").read_text(encoding="utf-8")
    rows = dict(
        (m.group(1), (m.group(2), m.group(3)))
        for m in re.finditer(r"^\| (\S+) \| `[^`]+` \| `([0-9a-f]{40})` \| `([0-9a-f]{64})` \|$", readme, re.M)
    )
    assert sorted(rows) == sorted(SPEC_VERSIONS)
    for version, (blob, sha256) in rows.items():
        data = (REPO / "spec" / version / "schema.json").read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, version
        assert hashlib.sha256(data).hexdigest() == sha256, version
    assert "Apache License" in (REPO / "spec" / "LICENSE").read_text(encoding="utf-8")


def test_clone_without_shared_beside_it_finds_the_schemas(tmp_path):
    """A clone of the committed tree in a folder with no ../shared needs no MCPFAST_SPEC_DIR."""
    clone = tmp_path / "elsewhere" / "mcpfast"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    assert not (clone.parent / "shared").exists()
    # This file as the probe: the clone's own mcpfast (first on its path) is not compiled.
    run = run_pytest(None, repo=clone, probe="tests/test_spec_gate.py")
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.OK, output
    assert "MCP JSON schemas not found" not in output
    assert "test_spec_gate.py::" in run.stdout
