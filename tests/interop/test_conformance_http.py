"""The official MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16, on
Node 22) against examples/everything_server.py over Streamable HTTP: every server
scenario, no failure allowed. ``scripts/conformance`` installs the suite on first use."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from everything_http import http_server

ROOT = Path(__file__).resolve().parents[2]
# 0.1.16 has 32 server scenarios; their checks passed by the official SDK's reference server.
MIN_PASSED = 43


def run_suite(url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "conformance"), "server", "--url", url, "--suite", "all"],
        capture_output=True, text=True, timeout=900,
    )


@pytest.mark.timeout(1200)
def test_conformance_server_suite_has_no_failure():
    # The default mode (SSE answers when a request sends related messages). In JSON-only
    # mode a request's progress and its requests to the client cannot ride on its answer,
    # which two scenarios expect.
    async def main() -> subprocess.CompletedProcess:
        async with http_server() as url:
            return await anyio.to_thread.run_sync(run_suite, url)

    done = anyio.run(main)
    output = done.stdout + done.stderr
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert total is not None, f"no summary from the conformance suite:\n{output[-4000:]}"
    passed, failed = int(total.group(1)), int(total.group(2))
    sys.stderr.write(f"conformance: {total.group(0)}\n")
    assert failed == 0, output[-6000:]
    assert passed >= MIN_PASSED, output[-6000:]
