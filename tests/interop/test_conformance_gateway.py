"""The official conformance suite through the gateway: ``mcpfast gateway`` over Streamable
HTTP with examples/everything_server.py mounted over stdio without a namespace must score
what the server scores directly (tests/interop/test_conformance_http.py): 0.1.16
``--suite all`` 43 passed / 0 failed, 0.2.0-alpha.12 at 2025-11-25 80 / 0.

At 2026-07-28 the upstream is mounted with ``protocolVersion: 2026-07-28``, so both legs
speak the stateless revision and the gateway passes each request on as it is: the
downstream client's capabilities in its _meta, the upstream's InputRequiredResult keys
(``user_name``) unchanged (mcpfast/gateway/stateless_passthrough.py). It scores what the
server scores directly, 150 / 0."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from gateway_process import http_gateway

ROOT = Path(__file__).resolve().parents[2]
# The 2026-aware release of the suite, as in test_conformance_http.py.
RELEASE_2026 = "0.2.0-alpha.12"


def run_suite(url: str, *extra: str, release: Optional[str] = None) -> subprocess.CompletedProcess:
    """``scripts/conformance [--version release] server --url url --suite all *extra``."""
    version = ["--version", release] if release is not None else []
    return subprocess.run(["bash", str(ROOT / "scripts" / "conformance"), *version, "server", "--url", url,
                           "--suite", "all", *extra], capture_output=True, text=True, timeout=900)


def serve_gateway(tmp_path, **mount: str):
    """``mcpfast gateway`` over HTTP mounting the everything server (with ``mount``'s
    extra config members); yields its URL."""
    config = {"mcpServers": {"everything": {
        "command": sys.executable, "args": [str(ROOT / "examples" / "everything_server.py")],
        "namespace": "", "cwd": str(ROOT), "env": {"PYTHONPATH": str(ROOT)}, **mount}}}
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    with http_gateway(str(path)) as url:
        yield url


@pytest.fixture
def gateway_url(tmp_path):
    yield from serve_gateway(tmp_path)


@pytest.fixture
def stateless_gateway_url(tmp_path):
    yield from serve_gateway(tmp_path, protocolVersion="2026-07-28")


def totals(done: subprocess.CompletedProcess) -> tuple[int, int, str]:
    output = done.stdout + done.stderr
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert total is not None, f"no summary from the conformance suite:\n{output[-4000:]}"
    sys.stderr.write(f"conformance through the gateway: {total.group(0)}\n")
    return int(total.group(1)), int(total.group(2)), output[-6000:]


@pytest.mark.timeout(1200)
def test_conformance_through_the_gateway_scores_as_the_server_directly(gateway_url):
    passed, failed, output = totals(run_suite(gateway_url))
    assert (passed, failed) == (43, 0), output


@pytest.mark.timeout(1200)
def test_conformance_2026_release_at_2025_11_25_through_the_gateway(gateway_url):
    passed, failed, output = totals(run_suite(gateway_url, "--spec-version", "2025-11-25", release=RELEASE_2026))
    assert (passed, failed) == (80, 0), output


@pytest.mark.timeout(1200)
def test_conformance_2026_release_at_2026_07_28_through_the_gateway(stateless_gateway_url):
    passed, failed, output = totals(run_suite(stateless_gateway_url, "--spec-version", "2026-07-28",
                                              release=RELEASE_2026))
    assert (passed, failed) == (150, 0), output
