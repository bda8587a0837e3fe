"""The official MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16, on
Node 22) against examples/everything_server.py over Streamable HTTP: every server
scenario, no failure allowed. ``scripts/conformance`` installs the suite on first use."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

import anyio
import pytest

from everything_http import http_server

ROOT = Path(__file__).resolve().parents[2]
# 0.1.16 has 32 server scenarios; their checks passed by the official SDK's reference server.
MIN_PASSED = 43


def run_suite(url: str, *extra: str, release: Optional[str] = None) -> subprocess.CompletedProcess:
    """``scripts/conformance [--version release] server --url url --suite all *extra``."""
    version = ["--version", release] if release is not None else []
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "conformance"), *version, "server", "--url", url,
         "--suite", "all", *extra],
        capture_output=True, text=True, timeout=900,
    )


# The 2026-aware release of the suite.
RELEASE_2026 = "0.2.0-alpha.12"


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


@pytest.mark.timeout(1200)
def test_conformance_2026_release_at_2025_11_25_has_no_failure():
    async def main() -> subprocess.CompletedProcess:
        async with http_server() as url:
            return await anyio.to_thread.run_sync(
                lambda: run_suite(url, "--spec-version", "2025-11-25", release=RELEASE_2026))

    done = anyio.run(main)
    output = done.stdout + done.stderr
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert total is not None, f"no summary from the conformance suite:\n{output[-4000:]}"
    sys.stderr.write(f"conformance {RELEASE_2026} at 2025-11-25: {total.group(0)}\n")
    assert int(total.group(2)) == 0 and done.returncode == 0, output[-6000:]


@pytest.mark.timeout(1200)
def test_conformance_2026_release_at_2026_07_28_has_no_failure():
    async def main() -> subprocess.CompletedProcess:
        async with http_server() as url:
            return await anyio.to_thread.run_sync(
                lambda: run_suite(url, "--spec-version", "2026-07-28", release=RELEASE_2026))

    done = anyio.run(main)
    output = done.stdout + done.stderr
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert total is not None, f"no summary from the conformance suite:\n{output[-4000:]}"
    sys.stderr.write(f"conformance {RELEASE_2026} at 2026-07-28: {total.group(0)}\n")
    assert int(total.group(2)) == 0 and done.returncode == 0, output[-6000:]
    # The official Python SDK's reference server passes 152 checks of this release.
    assert int(total.group(1)) >= 140, output[-6000:]


# The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663): extension
# scenarios are off the spec timeline, so `--suite all --spec-version` skips them; each is
# run by name, on the 2026-07-28 wire the suite picks for extensions.
TASKS_SCENARIOS = ["tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
                   "tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
                   "tasks-dispatch-and-envelope", "tasks-status-notifications",
                   "tasks-required-task-error", "tasks-mrtr-composition"]


@pytest.mark.timeout(1200)
def test_conformance_tasks_extension_scenarios_have_no_failure():
    def run_scenarios(url: str) -> list[tuple[str, str]]:
        outputs = []
        for scenario in TASKS_SCENARIOS:
            done = subprocess.run(
                ["bash", str(ROOT / "scripts" / "conformance"), "--version", RELEASE_2026, "server",
                 "--url", url, "--scenario", scenario],
                capture_output=True, text=True, timeout=300)
            outputs.append((scenario, done.stdout + done.stderr))
        return outputs

    async def main() -> list[tuple[str, str]]:
        async with http_server() as url:
            return await anyio.to_thread.run_sync(run_scenarios, url)

    passed_checks = 0
    for scenario, output in anyio.run(main):
        summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
        assert summary is not None, f"{scenario}: no summary\n{output[-4000:]}"
        assert summary.group(3) == "0" and summary.group(1) == summary.group(2), f"{scenario}\n{output[-6000:]}"
        passed_checks += int(summary.group(1))
    sys.stderr.write(f"conformance {RELEASE_2026} tasks extension: {passed_checks} checks passed\n")
    # 44 checks in 10 scenarios (tasks-status-notifications has none yet: the suite skips it).
    assert passed_checks >= 40


# -- client mode ------------------------------------------------------------------------

# Client scenarios outside `--suite core` run one by one: the 2025-03-26 authorization ones,
# and the client credentials extension (SEP-1046: ClientCredentials).
CLIENT_SCENARIOS = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
                    "auth/client-credentials-basic", "auth/client-credentials-jwt"]


def loopback_namespace_available() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_client_mode(selection: str, timeout: float) -> tuple[subprocess.CompletedProcess, str]:
    """examples/conformance_client.py under ``conformance client <selection>`` in a
    loopback-only network namespace (skips the test where one cannot be made)."""
    if not loopback_namespace_available():
        pytest.skip("needs `unshare -n` and `ip` (root): client-mode mock servers bind all "
                    "interfaces, so they run in a loopback-only network namespace")
    command = f"{sys.executable} {ROOT / 'examples' / 'conformance_client.py'}"
    script = (f"ip link set lo up && exec bash {ROOT / 'scripts' / 'conformance'} client "
              f"--command '{command}' {selection}")
    done = subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True, text=True,
                          timeout=timeout)
    return done, done.stdout + done.stderr


@pytest.mark.timeout(1200)
def test_conformance_client_core_suite_has_no_failure():
    """`conformance client --suite core`: initialize, tools_call, elicitation defaults,
    sse-retry and the fourteen auth/* scenarios (mcpfast's OAuthFlow against the suite's
    authorization servers)."""
    done, output = run_client_mode("--suite core", 1100)
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert total is not None, f"no summary from the conformance suite:\n{output[-4000:]}"
    sys.stderr.write(f"conformance client --suite core: {total.group(0)}\n")
    assert total.group(2) == "0" and done.returncode == 0, output[-6000:]
    assert int(total.group(1)) >= 200, output[-6000:]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
def test_conformance_client_scenario_passes(scenario):
    done, output = run_client_mode(f"--scenario {scenario}", 540)
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert summary is not None, f"no summary from the conformance suite:\n{output[-4000:]}"
    assert summary.group(3) == "0" and summary.group(1) == summary.group(2), output[-6000:]
    assert "OVERALL: PASSED" in output, output[-6000:]
