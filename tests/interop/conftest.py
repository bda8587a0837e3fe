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
