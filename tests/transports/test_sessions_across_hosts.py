"""2025-era sessions across processes: three independent ``mcpfast run --redis`` processes
(as three hosts would run them), Debian's redis-server, and for the balanced case Debian's
nginx round-robin in front, all on loopback. A session made on one process is served by
every one; the client's answers to a server's question reach the process that asked; the
GET stream, its process killed mid-stream, is resumed on another with nothing lost."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import time
from typing import Any

import mcpfast
from mcpfast_hosts import start_host
from nginx_proxy import nginx_proxy
from redis_server import free_port, redis_server
from session_http import INIT, VERSION, EventReader, call, open_session, post


def hosts_on(redis_url: str, count: int) -> tuple[list[int], list[Any]]:
    secret = os.urandom(32).hex()
    ports = [free_port() for _ in range(count)]
    return ports, [start_host(port, redis_url, secret) for port in ports]


def stop(hosts: list[Any]) -> None:
    for host in hosts:
        if host.poll() is None:
            host.terminate()
        host.wait(timeout=30)


def test_a_session_through_nginx_is_served_by_every_host():
    async def client_run(port: int) -> tuple[set[int], set[int], list[dict], int]:
        def elicit(params: Any) -> dict:
            return {"action": "accept", "content": {"name": "Lin"}}

        url = f"http://127.0.0.1:{port}/mcp"
        async with mcpfast.connect(url, protocol_version=VERSION, elicitation=elicit) as client:
            pids = set()
            for _ in range(9):
                result = await client.call_tool("pid", {})
                pids.add(int(result["content"][0]["text"]))
            # Each greet asks the client a question; the answer is posted to whichever
            # host nginx picks, and reaches the one that asked.
            greeted = set()
            for _ in range(6):
                text = (await client.call_tool("greet", {}))["content"][0]["text"]
                assert text.startswith("Hello, Lin, from ")
                greeted.add(int(text.rsplit(" ", 1)[1]))
            # Pagination across hosts (cursors signed by one, read by another).
            tools = await client.list_tools()
            # Subscribed through one host, updated through all, heard on the GET stream
            # (held by one host), each update once.
            subscription = await client.subscribe("test://watched")
            touched = set()
            for _ in range(6):
                touched.add(int((await client.call_tool("touch", {}))["content"][0]["text"]))
            updates = [await asyncio.wait_for(subscription.__anext__(), 10) for _ in range(6)]
            await asyncio.sleep(0.5)
            extra = 0
            try:
                await asyncio.wait_for(subscription.__anext__(), 0.5)
                extra = 1
            except asyncio.TimeoutError:
                pass
            assert extra == 0, "an update was delivered twice"
            assert len(tools) == 10 and all(u["uri"] == "test://watched" for u in updates)
            return pids, greeted | touched, updates, extra

    with redis_server() as redis:
        ports, hosts = hosts_on(redis.url, 3)
        try:
            with nginx_proxy(ports) as port:
                pids, answering, _, _ = asyncio.run(client_run(port))
                assert pids == {host.pid for host in hosts}
                assert answering == {host.pid for host in hosts}
        finally:
            stop(hosts)


def test_a_host_killed_mid_stream_the_get_stream_resumes_on_another_with_nothing_lost():
    with redis_server() as redis:
        (a, b, c), hosts = hosts_on(redis.url, 3)
        try:
            status, headers, body = post(a, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
            session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
            assert status == 200 and body["result"]["protocolVersion"] == VERSION
            assert post(b, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
            status, _, body = post(c, {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
                                       "params": {"uri": "test://watched"}}, session)
            assert status == 200 and body["result"] == {}
            stream = EventReader(a, session)
            priming_id, priming = stream.next()
            assert priming_id is not None and priming is None
            call(b, session, "touch")
            call(c, session, "touch")
            first_id, first = stream.next()
            second_id, second = stream.next()
            assert first["method"] == second["method"] == "notifications/resources/updated"
            # The client had handled the first update only when the host died: it resumes
            # after that one (the second was sent only once Redis had it).
            os.kill(hosts[0].pid, signal.SIGKILL)
            hosts[0].wait(timeout=10)
            stream.close()
            resumed = EventReader(b, session, last_event_id=first_id)
            replayed_id, replayed = resumed.next()
            assert (replayed_id, replayed) == (second_id, second)
            # Live on B from now on; the session keeps working on the hosts left.
            assert call(c, session, "touch", 2)["content"][0]["text"] == str(hosts[2].pid)
            third_id, third = resumed.next()
            assert third["method"] == "notifications/resources/updated"
            assert len({priming_id, first_id, second_id, third_id}) == 4
            assert call(b, session, "pid", 3)["content"][0]["text"] == str(hosts[1].pid)
            resumed.close()
            # DELETE on one host ends the session on all.
            connection = http.client.HTTPConnection("127.0.0.1", c, timeout=20)
            connection.request("DELETE", "/mcp", headers={"mcp-session-id": session,
                                                          "mcp-protocol-version": VERSION})
            assert connection.getresponse().status == 200
            connection.close()
            # (the other copies hear of it through Redis, a moment later)
            for port in (b, c):
                deadline = time.monotonic() + 10
                while post(port, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, session)[0] != 404:
                    assert time.monotonic() < deadline, f"the session lives on at port {port}"
                    time.sleep(0.05)
        finally:
            stop(hosts)


def test_a_posts_stream_dropped_on_one_host_is_followed_to_its_end_from_another():
    with redis_server() as redis:
        (a, b), hosts = hosts_on(redis.url, 2)
        try:
            session = open_session(a)
            connection = http.client.HTTPConnection("127.0.0.1", a, timeout=20)
            body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "count", "arguments": {"steps": 5, "delay": 0.3},
                               "_meta": {"progressToken": "t"}}}
            connection.request("POST", "/mcp", json.dumps(body), {
                "content-type": "application/json", "accept": "application/json, text/event-stream",
                "mcp-protocol-version": VERSION, "mcp-session-id": session})
            response = connection.getresponse()
            assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
            reader = EventReader.reading(connection, response)
            priming_id, _ = reader.next()
            first_id, first = reader.next()
            assert first["params"]["progress"] == 1
            reader.close()  # the client's connection to A drops; the tool runs on in A
            resumed = EventReader(b, session, last_event_id=first_id)
            progress = []
            while True:
                event_id, message = resumed.next()
                assert event_id is not None
                if "id" in message:
                    break
                progress.append(message["params"]["progress"])
            resumed.close()
            assert progress == [2, 3, 4, 5]
            assert message["id"] == 7 and message["result"]["content"][0]["text"] == f"counted in {hosts[0].pid}"
        finally:
            stop(hosts)
