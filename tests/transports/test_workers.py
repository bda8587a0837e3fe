"""``mcpfast run --transport http --workers N``: N processes on one port, a supervisor that
replaces, restarts and stops them; signed values (cursors, requestState) valid on any."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mcpfast
from redis_server import free_port, redis_server
from session_http import call, open_session
from workers_process import Workers as _Workers

ROOT = Path(__file__).resolve().parents[2]
APP = Path(__file__).resolve().parent / "workers_app.py"


@pytest.fixture
def workers():
    made: list[_Workers] = []

    def start(count: int, *extra: str) -> _Workers:
        made.append(_Workers(APP, count, *extra))
        return made[-1]

    yield start
    for supervisor in made:
        supervisor.stop()


def test_requests_spread_over_the_workers_and_signed_values_hold_on_any(workers):
    group = workers(2, "--stateless")
    assert len(set(group.pids)) == 2
    seen = {group.worker_pid() for _ in range(40)}
    assert seen == set(group.pids)
    # A cursor one worker signed is taken by the other.
    first = group.call("tools/list")
    assert len(first["tools"]) == 2
    pages = [group.call("tools/list", {"cursor": first["nextCursor"]}) for _ in range(12)]
    assert all(len(page["tools"]) == 2 for page in pages)
    # So is a requestState: the retry of an InputRequiredResult lands anywhere.
    asked = group.call("tools/call", {"name": "greet", "arguments": {}}, "greet")
    assert asked["resultType"] == "input_required"
    retry = {"name": "greet", "arguments": {}, "requestState": asked["requestState"],
             "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}
    # Until both workers have answered it (the kernel spreads fresh connections by a hash
    # of their ports: a dozen may all land on one now and then).
    greeted: set[str] = set()
    for _ in range(60):
        greeted.add(group.call("tools/call", retry, "greet")["content"][0]["text"])
        if len(greeted) == 2:
            break
    assert {text.rsplit(" ", 1)[1] for text in greeted} == {str(p) for p in group.pids}
    assert all(text.startswith("Hello, Ada, from ") for text in greeted)
    assert group.stop() == 0


def test_a_dead_worker_is_replaced(workers):
    group = workers(2, "--stateless")
    victim = group.pids[0]
    os.kill(victim, signal.SIGKILL)
    replaced = group.wait_line(rf"worker {victim} exited with status -9; starting another")
    assert replaced
    deadline = time.monotonic() + 30
    seen: set[int] = set()
    while time.monotonic() < deadline and len(seen) < 2:
        seen.add(group.worker_pid())
    assert len(seen) == 2 and victim not in seen and group.pids[1] in seen


def test_sighup_restarts_the_workers_one_at_a_time_without_failing_requests(workers):
    group = workers(2, "--stateless")
    failures: list[BaseException] = []
    answered: list[int] = []
    stop = threading.Event()

    def keep_calling() -> None:
        while not stop.is_set():
            try:
                answered.append(group.worker_pid())
            except BaseException as exc:  # noqa: BLE001 -- collected, asserted below
                failures.append(exc)

    caller = threading.Thread(target=keep_calling)
    caller.start()
    try:
        time.sleep(0.3)
        mark = len(group.lines)
        group.process.send_signal(signal.SIGHUP)
        restarted = group.wait_line(r"restarted: pids ([\d, ]+)", start=mark)
        new_pids = {int(p) for p in restarted.group(1).split(", ")}
        time.sleep(0.3)
    finally:
        stop.set()
        caller.join(timeout=30)
    assert failures == []
    assert new_pids.isdisjoint(group.pids) and len(new_pids) == 2
    assert set(answered[-10:]) <= new_pids
    assert group.stop() == 0


def test_workers_need_http_a_count_and_shared_sessions(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for extra, message in ((["--transport", "tcp", "--workers", "2"], "--workers applies to --transport http"),
                           (["--transport", "http", "--workers", "0"], "--workers must be >= 1"),
                           (["--transport", "http", "--workers", "2"],
                            "--workers 2 needs --redis URL (sessions shared by every worker) "
                            "or --stateless (no sessions)")):
        done = subprocess.run([sys.executable, "-m", "mcpfast", "run", f"{APP}:app", *extra],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr


def test_a_port_in_use_stops_the_start(workers):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "mcpfast", "run", f"{APP}:app", "--transport", "http",
                               "--port", str(port), "--workers", "2", "--stateless"],
                              env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 1
    # Said before any worker starts: the supervisor opens the listening sockets.
    assert f"mcpfast: cannot serve on 127.0.0.1:{port}: Address already in use" in done.stderr


def test_with_redis_a_listener_hears_updates_made_on_every_worker(workers):
    with redis_server() as redis:
        group = workers(2, "--redis", redis.url)

        def touch() -> int:
            return int(group.call("tools/call", {"name": "touch", "arguments": {}}, "touch")["content"][0]["text"])

        async def main() -> list[int]:
            url = f"http://127.0.0.1:{group.port}/mcp"
            async with mcpfast.connect(url, protocol_version="2026-07-28") as client:
                async with client.listen(uris=["test://watched"]) as stream:
                    await asyncio.sleep(0.3)
                    pids = [await asyncio.to_thread(touch) for _ in range(12)]
                    for _ in range(12):
                        note = await asyncio.wait_for(stream.__anext__(), 10)
                        assert note["method"] == "notifications/resources/updated"
                        assert note["params"]["uri"] == "test://watched"
            return pids

        pids = asyncio.run(main())
        # The updates came from both workers; the one listener heard every one.
        assert set(pids) == set(group.pids)
        # A 2025-era session made on one worker is served by both (fresh connections).
        session = open_session(group.port)
        answering = set()
        for attempt in range(60):
            answering.add(int(call(group.port, session, "pid", attempt)["content"][0]["text"]))
            if answering == set(group.pids):
                break
        assert answering == set(group.pids)
        assert group.stop() == 0


def test_redis_down_at_start_stops_the_workers():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "mcpfast", "run", f"{APP}:app", "--transport", "http",
                           "--port", "0", "--workers", "2", "--redis", f"redis://127.0.0.1:{free_port()}/0"],
                          env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 1
    assert "cannot reach Redis at redis://127.0.0.1:" in done.stderr
    assert "cannot start the workers" in done.stderr


def _running(pid: int) -> bool:
    """pid is a live process (not gone, not a zombie waiting for its new parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads process states from /proc")
def test_workers_exit_when_the_supervisor_is_killed(workers):
    import socket

    group = workers(2, "--stateless")
    assert all(_running(pid) for pid in group.pids)
    group.process.kill()  # SIGKILL: the supervisor cannot tell anyone
    group.process.wait(timeout=30)
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline and any(_running(pid) for pid in group.pids):
            time.sleep(0.05)
        assert not any(_running(pid) for pid in group.pids)
    finally:
        for pid in group.pids:  # orphans of a failed run must not outlive the test
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    assert group.wait_line(r"the supervisor is gone; shutting down")
    # Nobody serves the port any more.
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", group.port))
