"""The official conformance suite's tasks extension scenarios (0.2.0-alpha.12, the ten
``tasks-*`` ones, run by name as against the server directly:
tests/interop/test_conformance_http.py) through ``mcpfast gateway`` over HTTP, with
examples/everything_server.py mounted without a namespace: at 2026-07-28 (the requests
passed on with the client's capabilities) and at 2025-11-25 (translated,
mcpfast/gateway/tasks.py). Both score what the server scores directly: 44 checks, 0
failed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "interop"))
from test_conformance_gateway import RELEASE_2026, serve_gateway  # noqa: E402
from test_conformance_http import TASKS_SCENARIOS  # noqa: E402


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def gateway_url(request, tmp_path):
    yield from serve_gateway(tmp_path, protocolVersion=request.param)


@pytest.mark.timeout(1200)
def test_the_tasks_scenarios_through_the_gateway_score_as_the_server_directly(gateway_url):
    checks = 0
    for scenario in TASKS_SCENARIOS:
        done = subprocess.run(["bash", str(ROOT / "scripts" / "conformance"), "--version", RELEASE_2026,
                               "server", "--url", gateway_url, "--scenario", scenario],
                              capture_output=True, text=True, timeout=300)
        output = done.stdout + done.stderr
        summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
        assert summary is not None, f"{scenario}: no summary\n{output[-4000:]}"
        assert summary.group(3) == "0" and summary.group(1) == summary.group(2), f"{scenario}\n{output[-6000:]}"
        checks += int(summary.group(1))
    sys.stderr.write(f"conformance {RELEASE_2026} tasks extension through the gateway: {checks} checks\n")
    assert checks == 44
