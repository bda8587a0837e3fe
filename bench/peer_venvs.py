"""The gateway benchmark's peer proxies, each installed pinned into a virtualenv of its own.

    python bench/peer_venvs.py [fastmcp|mcp-proxy ...]    (installs them; default: both)

FastMCP 4's proxy and mcp-proxy cannot share the bench venv: mcp-proxy requires the official
SDK 1.x (``mcp<2``) where the bench venv pins 2.3.0, and FastMCP 4 brings a large tree of its
own that the other groups should not be timed beside.  Each peer gets
``bench/.peers/<name>/`` (git-ignored), made on first use from the interpreter running this
module and checked by the installed version afterwards, so a changed pin reinstalls.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
PEERS_DIR = os.path.join(BENCH_DIR, ".peers")


@dataclass(frozen=True)
class PeerProxy:
    """A proxy timed against mcpfast's gateway: its PyPI pin and the module proving it."""

    name: str
    distribution: str
    version: str
    minimum_python: tuple[int, int]

    @property
    def pin(self) -> str:
        return f"{self.distribution}=={self.version}"

    @property
    def venv(self) -> str:
        return os.path.join(PEERS_DIR, self.name)

    @property
    def python(self) -> str:
        return os.path.join(self.venv, "bin", "python")

    def executable(self, name: str) -> str:
        return os.path.join(self.venv, "bin", name)


PROXIES = {
    # fastmcp 4.x needs Python >= 3.11; mcp-proxy's last release on the SDK 1.x line.
    "fastmcp": PeerProxy("fastmcp", "fastmcp", "4.2.3", (3, 11)),
    "mcp-proxy": PeerProxy("mcp-proxy", "mcp-proxy", "0.13.0", (3, 10)),
}


def installed_version(peer: PeerProxy) -> str | None:
    """The version of ``peer`` in its venv, or None when the venv or the package is missing."""
    if not os.path.isfile(peer.python):
        return None
    probe = subprocess.run(
        [peer.python, "-c", f"import importlib.metadata as m; print(m.version({peer.distribution!r}))"],
        capture_output=True, text=True)
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure(name: str) -> PeerProxy:
    """``name``'s venv with its pinned version installed (made or reinstalled when needed).

    Raises RuntimeError saying why when this interpreter is too old or pip fails."""
    if name not in PROXIES:
        raise ValueError(f"unknown peer proxy {name!r} (known: {', '.join(PROXIES)})")
    peer = PROXIES[name]
    if installed_version(peer) == peer.version:
        return peer
    if sys.version_info[:2] < peer.minimum_python:
        wanted = ".".join(map(str, peer.minimum_python))
        raise RuntimeError(f"{peer.pin} needs Python >= {wanted}; this is {sys.version.split()[0]}")
    if not os.path.isfile(peer.python):
        made = subprocess.run([sys.executable, "-m", "venv", peer.venv], capture_output=True, text=True)
        if made.returncode != 0:
            raise RuntimeError(f"could not make {peer.venv}: {made.stderr.strip()[-500:]}")
    print(f"bench: installing {peer.pin} into {peer.venv}", file=sys.stderr, flush=True)
    installed = subprocess.run([peer.python, "-m", "pip", "install", "--quiet", peer.pin],
                               capture_output=True, text=True, timeout=900)
    if installed.returncode != 0 or installed_version(peer) != peer.version:
        raise RuntimeError(f"pip could not install {peer.pin}: {installed.stderr.strip()[-800:]}")
    return peer


def main(argv: list[str]) -> int:
    for name in argv or list(PROXIES):
        peer = ensure(name)
        print(f"{peer.pin}: {peer.venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
