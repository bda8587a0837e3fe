"""Several hosts behind a load balancer: two independent ``mcpfast run`` processes (as two
hosts would run them: the same MCPFAST_SECRET, the same Redis) behind Debian's nginx
balancing round-robin, all on loopback."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import mcpfast
from mcp_http import post_2026
from mcpfast_hosts import APP, ROOT, start_host
from nginx_proxy import nginx_proxy
from redis_server import free_port, redis_server
from session_http import call, open_session


def test_calls_through_nginx_land_on_both_hosts_and_everything_shared_holds():
    secret = os.urandom(32).hex()
    with redis_server() as redis:
        ports = [free_port(), free_port()]
        hosts = [start_host(port, redis.url, secret) for port in ports]
        try:
            with nginx_proxy(ports) as port:
                pids = {int(post_2026(port, "tools/call", {"name": "pid", "arguments": {}}, "pid")
                            ["content"][0]["text"]) for _ in range(8)}
                assert pids == {host.pid for host in hosts}
                # A cursor and a requestState signed by one host are taken by the other.
                first = post_2026(port, "tools/list")
                for _ in range(4):
                    assert len(post_2026(port, "tools/list", {"cursor": first["nextCursor"]})["tools"]) == 2
                asked = post_2026(port, "tools/call", {"name": "greet", "arguments": {}}, "greet")
                retry = {"name": "greet", "arguments": {}, "requestState": asked["requestState"],
                         "inputResponses": {"name": {"action": "accept", "content": {"name": "Lin"}}}}
                answered = {post_2026(port, "tools/call", retry, "greet")["content"][0]["text"] for _ in range(4)}
                assert {text.rsplit(" ", 1)[1] for text in answered} == {str(host.pid) for host in hosts}

                # A listen stream through nginx hears the updates published on either host.
                async def listen_and_touch() -> set[int]:
                    async with mcpfast.connect(f"http://127.0.0.1:{port}/mcp", protocol_version="2026-07-28") as client:
                        async with client.listen(uris=["test://watched"]) as stream:
                            await asyncio.sleep(0.3)
                            touched = set()
                            for _ in range(6):
                                result = await asyncio.to_thread(
                                    post_2026, port, "tools/call", {"name": "touch", "arguments": {}}, "touch")
                                touched.add(int(result["content"][0]["text"]))
                            for _ in range(6):
                                note = await asyncio.wait_for(stream.__anext__(), 10)
                                assert note["params"]["uri"] == "test://watched"
                            return touched

                assert asyncio.run(listen_and_touch()) == {host.pid for host in hosts}

                # A task made on one host is polled through the balancer on both (the store is
                # Redis) and cancelled from whichever gets the cancel.
                tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
                created = post_2026(port, "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}},
                                    "slow", capabilities=tasks)
                assert created["resultType"] == "task"
                task_id = created["taskId"]
                deadline = time.monotonic() + 20
                while True:
                    got = post_2026(port, "tasks/get", {"taskId": task_id}, task_id, capabilities=tasks)
                    if got["status"] == "completed" or time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
                assert got["status"] == "completed" and got["result"]["content"][0]["text"].startswith("slept in ")
                long = post_2026(port, "tools/call", {"name": "slow", "arguments": {"seconds": 60}},
                                 "slow", capabilities=tasks)
                post_2026(port, "tasks/cancel", {"taskId": long["taskId"]}, long["taskId"], capabilities=tasks)
                for _ in range(4):
                    polled = post_2026(port, "tasks/get", {"taskId": long["taskId"]}, long["taskId"],
                                       capabilities=tasks)
                    assert polled["status"] == "cancelled"
        finally:
            for host in hosts:
                host.terminate()
                host.wait(timeout=30)


def answers_from_both(pid: Callable[[], int], hold: Callable[[], int]) -> set[int]:
    """The pids that answer while one of uvicorn's workers is held busy. The workers share one
    listening socket and the kernel may hand every sequential connection to the same one, so
    each round blocks whichever worker takes ``hold`` and asks ``pid`` meanwhile: only the
    other worker can accept it."""
    answering: set[int] = set()
    with ThreadPoolExecutor(1) as pool:
        for _ in range(10):
            held = pool.submit(hold)
            time.sleep(0.2)
            answering.add(pid())
            answering.add(held.result())
            if len(answering) == 2:
                break
    return answering


def test_the_asgi_app_under_uvicorn_workers_shares_through_redis_and_the_secret():
    with redis_server() as redis:
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MCPFAST_SECRET": os.urandom(32).hex(),
               "MCPFAST_TEST_REDIS": redis.url}
        server = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "asgi_workers_app:make_app", "--factory", "--workers", "2",
             "--app-dir", str(APP.parent), "--host", "127.0.0.1", "--port", str(port),
             "--log-level", "warning"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    post_2026(port, "tools/list")
                    break
                except OSError:
                    assert time.monotonic() < deadline, "uvicorn did not start"
                    time.sleep(0.1)
            pids = answers_from_both(
                lambda: int(post_2026(port, "tools/call", {"name": "pid", "arguments": {}}, "pid")
                            ["content"][0]["text"]),
                lambda: int(post_2026(port, "tools/call", {"name": "hold", "arguments": {}}, "hold")
                            ["content"][0]["text"]))
            assert len(pids) == 2, "uvicorn's two workers did not both answer"
            first = post_2026(port, "tools/list")
            for _ in range(6):
                assert len(post_2026(port, "tools/list", {"cursor": first["nextCursor"]})["tools"]) == 2
            tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
            created = post_2026(port, "tools/call", {"name": "slow", "arguments": {"seconds": 0.2}}, "slow",
                                capabilities=tasks)
            for _ in range(100):
                got = post_2026(port, "tasks/get", {"taskId": created["taskId"]}, created["taskId"],
                                capabilities=tasks)
                if got["status"] == "completed":
                    break
                time.sleep(0.05)
            assert got["status"] == "completed"
            # A 2025-era session: made on one worker, served by both.
            session = open_session(port)
            answering = answers_from_both(lambda: int(call(port, session, "pid")["content"][0]["text"]),
                                          lambda: int(call(port, session, "hold")["content"][0]["text"]))
            assert answering == pids
        finally:
            server.terminate()
            server.wait(timeout=30)
