"""``mcpfast run ... --transport http --metrics --workers N``: a scrape of ``/metrics``,
whichever worker answers it, counts every worker's requests (summed, as one process would
report them), a real Prometheus sums the same, a worker that is gone keeps its counts and
loses its gauges; the hub and links over real socket pairs in one process; and the merging
of snapshots itself (:func:`merge_snapshots`)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

from mcpfast.telemetry import attributes as a
from mcpfast.telemetry.prometheus import PrometheusMetrics, merge_snapshots, render_snapshot
from mcpfast.telemetry.worker_metrics import MetricsHub, WorkerLink

sys.path.insert(0, str(Path(__file__).parents[1] / "helpers"))
from prometheus_server import prometheus_scraping, wait_for  # noqa: E402
from workers_process import Workers  # noqa: E402

APP = Path(__file__).resolve().parents[1] / "transports" / "workers_app.py"
COUNT = r'^mcp_server_operation_duration_seconds_count\{.*gen_ai_tool_name="pid".*\} (\d+)$'


def scrape(port: int) -> str:
    # A fresh connection each time: the kernel may give it to any worker.
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        assert response.status == 200
        return response.read().decode()


def pid_calls(text: str) -> int:
    found = re.search(COUNT, text, re.M)
    return int(found.group(1)) if found else 0


@pytest.fixture
def group():
    made = Workers(APP, 3, "--stateless", "--metrics")
    yield made
    made.stop()


def calls_made(group: Workers, count: int) -> set[int]:
    """``count`` tools/call on fresh connections; the pids of the workers that answered."""
    return {group.worker_pid() for _ in range(count)}


def test_every_scrape_counts_every_workers_calls(group):
    answered = calls_made(group, 30)
    assert len(answered) > 1, "the calls all went to one worker: nothing to merge"
    for _ in range(6):
        assert pid_calls(scrape(group.port)) == 30
    with prometheus_scraping(group.port) as prometheus:
        wait_for(prometheus.targets_up)
        query = 'sum(mcp_server_operation_duration_seconds_count{gen_ai_tool_name="pid"})'
        result = wait_for(lambda: prometheus.query(query))
        assert float(result[0]["value"][1]) == 30
        # One series per label set, as from one process: no worker label.
        series = prometheus.query('mcp_server_operation_duration_seconds_count{gen_ai_tool_name="pid"}')
        assert len(series) == 1


def test_a_worker_killed_keeps_its_counts(group):
    calls_made(group, 24)
    assert pid_calls(scrape(group.port)) == 24
    victim = group.pids[0]
    os.kill(victim, signal.SIGKILL)
    group.wait_line(rf"worker {victim} exited")
    # Until its replacement serves, the kernel still spreads connections over its socket:
    # its queued connections wait for the replacement (the supervisor keeps the socket).
    for _ in range(6):
        assert pid_calls(scrape(group.port)) == 24
    calls_made(group, 6)
    assert pid_calls(scrape(group.port)) == 30


def test_a_rolling_restart_keeps_the_counts_made_since_the_last_scrape(group):
    calls_made(group, 18)  # not scraped before the restart: the workers' final numbers count
    start = len(group.lines)
    group.process.send_signal(signal.SIGHUP)
    group.wait_line(r"restarted: pids", start=start)
    for _ in range(4):
        assert pid_calls(scrape(group.port)) == 18


def _snapshot(calls: dict[str, int], requests_in_flight: int = 0) -> dict:
    metrics = PrometheusMetrics()
    for tool, count in calls.items():
        for _ in range(count):
            metrics.server_operation(0.015, {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool})
    metrics.add(a.SERVER_ACTIVE_REQUESTS, requests_in_flight)
    return metrics.snapshot()


def test_merging_adds_counts_per_label_set_and_gauges_of_the_living_only():
    one, two = _snapshot({"a": 2, "b": 1}, 1), _snapshot({"a": 3}, 2)
    text = render_snapshot(merge_snapshots([one, two])).decode()
    assert re.search(r'_count\{gen_ai_tool_name="a",mcp_method_name="tools/call"\} 5$', text, re.M), text
    assert re.search(r'_count\{gen_ai_tool_name="b",mcp_method_name="tools/call"\} 1$', text, re.M), text
    assert re.search(r'gen_ai_tool_name="a",mcp_method_name="tools/call",le="0.02"\} 5$', text, re.M), text
    assert re.search(r"^mcpfast_server_active_requests 3$", text, re.M), text
    gone = merge_snapshots([one, two], gauges=False)
    assert gone["gauges"] == {}
    assert re.search(r"^mcpfast_server_active_requests 0$", render_snapshot(gone).decode(), re.M)
    # One process's snapshot renders as the process renders itself.
    metrics = PrometheusMetrics()
    metrics.server_operation(0.2, {"mcp.method.name": "tools/list"})
    assert render_snapshot(merge_snapshots([metrics.snapshot()])) == metrics.render()


def test_merging_stays_bounded():
    many = [_snapshot({f"tool{n}": 1}) for n in range(5)]
    merged = merge_snapshots(many, max_series=3)
    assert len(merged["histograms"]["mcp.server.operation.duration"]) == 3
    assert merged["dropped"] == 2
    # A malformed series (another bucket layout) is dropped, not merged.
    bad = _snapshot({"a": 1})
    bad["histograms"]["mcp.server.operation.duration"][0][1] = [1, 2]
    assert merge_snapshots([bad])["dropped"] == 3


def test_a_count_made_just_before_a_scrape_is_in_it(group):
    # The supervisor asks the workers for their numbers when the scrape comes: nothing
    # periodic to wait for.
    for made in range(1, 6):
        group.worker_pid()
        assert pid_calls(scrape(group.port)) == made


async def merged_text(link: WorkerLink) -> str:
    merged = await link.gather()
    assert merged is not None, "the hub did not answer"
    return render_snapshot(merged).decode()


def test_the_hub_sums_live_and_gone_workers_over_real_socket_pairs():
    # In one process: the supervisor's hub and two workers' links (threads), real sockets.
    async def main() -> None:
        hub = MetricsHub()
        workers = []
        for name in ("w1", "w2"):
            parent, child = MetricsHub.pair()
            metrics = PrometheusMetrics()
            served = asyncio.ensure_future(hub.serve(parent, name))
            workers.append((WorkerLink(child, metrics), metrics, child, served))
        (link1, metrics1, _, _), (link2, metrics2, child2, served2) = workers
        metrics1.server_operation(0.01, {"mcp.method.name": "tools/call"})
        for _ in range(2):
            metrics2.server_operation(0.01, {"mcp.method.name": "tools/call"})
        metrics2.add(a.SERVER_ACTIVE_CONNECTIONS, 4)
        text = await merged_text(link1)
        assert re.search(r'_count\{mcp_method_name="tools/call"\} 3$', text, re.M), text
        assert re.search(r"^mcpfast_server_active_connections 4$", text, re.M), text
        # The second worker goes (its end closes, as at its exit): its counts stay, its
        # gauges leave.
        child2.shutdown(socket.SHUT_RDWR)
        await asyncio.wait_for(served2, 10)
        text = await merged_text(link1)
        assert re.search(r'_count\{mcp_method_name="tools/call"\} 3$', text, re.M), text
        assert re.search(r"^mcpfast_server_active_connections 0$", text, re.M), text
        # A link that has lost its supervisor answers nothing (the route then says 503).
        workers[0][2].shutdown(socket.SHUT_RDWR)
        assert await link1.gather() is None
        await asyncio.wait_for(workers[0][3], 10)

    asyncio.run(main())
