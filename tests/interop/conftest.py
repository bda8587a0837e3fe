"""Interop fixtures: the official TypeScript SDK, installed on first use."""

import shutil
import subprocess
from pathlib import Path

import pytest


def _install_ts_sdk(folder: Path, package: str = "@modelcontextprotocol/sdk") -> None:
    """npm-install folder's package.json unless ``package`` is already there.

    A failed install fails the test: CI reaches the npm registry.
    """
    marker = folder / "node_modules" / package / "package.json"
    if marker.is_file():
        return
    npm = shutil.which("npm")
    assert npm is not None, "npm is required for the TypeScript interop tests"
    completed = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund"],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, f"npm install failed:\n{completed.stdout}\n{completed.stderr}"
    assert marker.is_file()


@pytest.fixture(scope="session")
def ensure_ts_sdk():
    """A function installing a test folder's npm packages (the TypeScript SDK unless
    another package is named) when they are missing."""
    return _install_ts_sdk


SDK1_PIN = "mcp==1.30.0"  # the official Python SDK's last 1.x release


@pytest.fixture(scope="session")
def sdk1_python() -> str:
    """A Python with the official SDK 1.x (``SDK1_PIN``): $MCPFAST_SDK1_PYTHON, else a venv
    made in tests/interop/sdk1_server/.venv on first use (a failed install fails the test:
    CI reaches PyPI)."""
    import os
    import sys

    given = os.environ.get("MCPFAST_SDK1_PYTHON")
    if given:
        return given
    venv = Path(__file__).resolve().parent / "sdk1_server" / ".venv"
    python = venv / "bin" / "python"
    check = [str(python), "-c", f"import importlib.metadata as m; assert m.version('mcp') == '{SDK1_PIN[5:]}'"]
    if python.is_file() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(python)
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", SDK1_PIN],
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, f"pip install {SDK1_PIN} failed:\n{installed.stderr}"
    return str(python)
