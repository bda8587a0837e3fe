"""The run stops at once, with one message, when the MCP JSON schemas are missing.

Each case runs pytest in a subprocess on a small test file of this repository, with
MCPFAST_SPEC_DIR pointing at a folder made for the case.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_spec import SPEC_VERSIONS, spec_dir

REPO = Path(__file__).resolve().parent.parent
PROBE = "tests/core/test_pending.py"


def run_pytest(spec_folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MCPFAST_SPEC_DIR": str(spec_folder)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", PROBE],
        cwd=REPO,
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
