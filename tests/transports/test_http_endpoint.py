"""The Streamable HTTP endpoint without sockets: requests in, responses out."""

from __future__ import annotations

import asyncio
import json

import pytest

from endpoint_requests import INIT, answer, initialize, post, read_stream, request
from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import INVALID_REQUEST, PARSE_ERROR
from mcpfast.protocol.error_codes import UNSUPPORTED_PROTOCOL_VERSION
from mcpfast.transports.http import HTTPRequest, MemoryEventStore


def make_server() -> Server:
    app = Server("http-test")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await asyncio.sleep(0)
        return "done"

    @app.tool()
    async def hang() -> str:
        await asyncio.sleep(3600)
        return "never"

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.sample("hi?")
        return answer.text or ""

    return app


def run(coroutine):
    return asyncio.run(coroutine)


def test_initialize_mints_a_random_session_and_requests_need_it():
    async def main():
        endpoint = make_server().http_endpoint()
        first, second = await initialize(endpoint), await initialize(endpoint)
        assert first != second and len(first) == 32 and all(c in "0123456789abcdef" for c in first)
        echo = {"name": "echo", "arguments": {"text": "hi"}}
        ok = await answer(endpoint.handle(post(request(1, "tools/call", echo), first)))
        assert ok.status == 200 and ok.header("content-type") == "application/json"
        assert json.loads(ok.body)["result"]["content"][0]["text"] == "hi"
        missing = await answer(endpoint.handle(post(request(2, "tools/list"))))
        assert missing.status == 400 and b"Mcp-Session-Id" in missing.body
        unknown = await answer(endpoint.handle(post(request(3, "tools/list"), "feedface" * 4)))
        assert unknown.status == 404
        endpoint.close()

    run(main())


def test_failed_initialize_mints_no_session():
    async def main():
        endpoint = make_server().http_endpoint()
        response = await answer(endpoint.handle(post(request(0, "initialize", {"capabilities": {}}), version=None)))
        assert response.status == 200 and "error" in json.loads(response.body)
        assert response.header("mcp-session-id") is None and endpoint.sessions == {}

    run(main())


@pytest.mark.parametrize("change, status", [
    ({"path": "/other"}, 404),
    ({"host": "evil.example:80"}, 421),
    ({"origin": "http://evil.example"}, 403),
    ({"method": "PUT"}, 405),
    ({"content-type": "text/plain"}, 415),
    ({"accept": "application/json"}, 406),
    ({"accept": "text/event-stream"}, 406),
    ({"mcp-protocol-version": "1999-01-01"}, 400),
    ({"body": b"{not json"}, 400),
    ({"body": b"[]"}, 400),
])
def test_bad_requests_get_their_status(change, status):
    async def main():
        endpoint = make_server().http_endpoint()
        req = post(request(0, "initialize", INIT), version=None)
        for key, value in change.items():
            if key in ("path", "method", "body"):
                setattr(req, key, value)
            else:
                req.headers[key] = value
        response = await answer(endpoint.handle(req))
        assert response.status == status
        error = json.loads(response.body)["error"]
        assert error["message"]
        if change.get("body") == b"{not json":
            assert error["code"] == PARSE_ERROR
        elif "mcp-protocol-version" in change:
            assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
            assert error["data"]["requested"] == "1999-01-01" and "2026-07-28" in error["data"]["supported"]
        else:
            assert error["code"] == INVALID_REQUEST
        if status == 405:
            assert response.header("allow") == "GET, POST, DELETE"
        assert endpoint.sessions == {}


def test_host_and_origin_are_checked_on_every_post_whatever_its_other_headers():
    # A POST's Host and Origin are judged together with its media types and version (one
    # verdict per combination of values): a refused Host or Origin must never reuse the
    # verdict of an allowed one with the same other headers, and it comes first.
    async def main():
        endpoint = make_server().http_endpoint()
        for host, origin, content_type, status in [
            ("127.0.0.1:8000", None, "application/json", 200),
            ("evil.example", None, "application/json", 421),
            ("127.0.0.1:8000", "http://evil.example", "application/json", 403),
            ("evil.example", None, "text/plain", 421),
            ("127.0.0.1:8000", "http://localhost:3000", "application/json", 200),
            ("127.0.0.1:8000", None, "text/plain", 415),
            ("evil.example", None, "application/json", 421),
        ]:
            extra = {"origin": origin} if origin is not None else {}
            req = post(request(0, "initialize", INIT), version=None, host=host,
                       content_type=content_type, **extra)
            response = await answer(endpoint.handle(req))
            assert response.status == status, (host, origin, content_type)
        endpoint.close()

    run(main())

    run(main())


def test_body_over_the_limit_is_413():
    async def main():
        endpoint = make_server().http_endpoint(max_body_size=100)
        padded = {**INIT, "pad": "x" * 200}
        response = await answer(endpoint.handle(post(request(0, "initialize", padded), version=None)))
        assert response.status == 413 and b"limit is 100" in response.body

    run(main())


def test_allowed_hosts_and_origins_extend_the_loopback_defaults():
    async def main():
        endpoint = make_server().http_endpoint(allowed_hosts=["mcp.example.com"],
                                               allowed_origins=["https://app.example.com"])
        req = post(request(0, "initialize", INIT), version=None, host="mcp.example.com",
                   origin="https://app.example.com")
        assert (await answer(endpoint.handle(req))).status == 200
        req = post(request(0, "initialize", INIT), version=None, host="localhost:9999")
        assert (await answer(endpoint.handle(req))).status == 200
        endpoint.close()
        # A server bound to all interfaces checks nothing unless told to.
        open_endpoint = make_server().http_endpoint(host="0.0.0.0")
        req = post(request(0, "initialize", INIT), version=None, host="anything.example")
        assert (await answer(open_endpoint.handle(req))).status == 200
        open_endpoint.close()

    run(main())


def test_related_messages_turn_the_answer_into_an_sse_stream():
    async def main():
        endpoint = make_server().http_endpoint()
        session = await initialize(endpoint)
        params = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        response = await answer(endpoint.handle(post(request(7, "tools/call", params), session)))
        assert response.status == 200 and response.header("x-accel-buffering") == "no"
        progress, result = await read_stream(response)
        assert progress["method"] == "notifications/progress" and progress["params"]["progressToken"] == "p"
        assert result["id"] == 7 and result["result"]["content"][0]["text"] == "done"
        endpoint.close()

    run(main())


def test_json_response_mode_answers_json_and_sends_related_messages_to_the_get_stream():
    async def main():
        endpoint = make_server().http_endpoint(json_response=True)
        session = await initialize(endpoint)
        get = await answer(endpoint.handle(HTTPRequest(
            "GET", "/mcp", {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session})))
        params = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        response = await answer(endpoint.handle(
            post(request(8, "tools/call", params), session, accept="application/json")))
        assert response.status == 200 and json.loads(response.body)["id"] == 8
        first = await get.stream.__anext__()
        assert b"notifications/progress" in first
        get.close(disconnected=True)
        endpoint.close()

    run(main())


def test_notifications_and_responses_get_202():
    async def main():
        endpoint = make_server().http_endpoint()
        session = await initialize(endpoint)
        response = await answer(endpoint.handle(post({"jsonrpc": "2.0", "id": 99, "result": {}}, session)))
        assert response.status == 202

    run(main())


def test_second_get_stream_is_409_and_delete_ends_the_session():
    async def main():
        endpoint = make_server().http_endpoint()
        session = await initialize(endpoint)
        headers = {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session}
        first = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", dict(headers))))
        assert first.status == 200
        second = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", dict(headers))))
        assert second.status == 409
        no_sse = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", {**headers, "accept": "application/json"})))
        assert no_sse.status == 406
        # A server message outside any request goes to the GET stream.
        make = endpoint.sessions[session].connection.server
        make.broadcast_log("warning", "to the stream")
        chunk = await first.stream.__anext__()
        assert b"notifications/message" in chunk and b"to the stream" in chunk
        deleted = await answer(endpoint.handle(HTTPRequest("DELETE", "/mcp", dict(headers))))
        assert deleted.status == 200
        assert (await answer(endpoint.handle(post(request(1, "tools/list"), session)))).status == 404
        # The GET stream ends with the session.
        assert [chunk async for chunk in first.stream] == []
        first.close()

    run(main())


def test_client_disconnect_cancels_the_request():
    async def main():
        app = make_server()
        endpoint = app.http_endpoint()
        session = await initialize(endpoint)
        outcome = endpoint.handle(post(request(5, "tools/call", {"name": "hang", "arguments": {}}), session))
        task = asyncio.ensure_future(answer(outcome))
        await asyncio.sleep(0)
        connection = endpoint.sessions[session].connection
        assert connection.session.in_flight == 1
        task.cancel()  # what the HTTP server does when the client goes away
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.sleep(0)
        assert connection.session.in_flight == 0
        endpoint.close()

    run(main())


def test_stateless_mode_needs_no_session_and_has_no_back_channel():
    async def main():
        endpoint = make_server().http_endpoint(stateless=True)
        init = await answer(endpoint.handle(post(request(0, "initialize", INIT), version=None)))
        assert init.status == 200 and init.header("mcp-session-id") is None
        echo = {"name": "echo", "arguments": {"text": "x"}}
        call = await answer(endpoint.handle(post(request(1, "tools/call", echo))))
        assert json.loads(call.body)["result"]["content"][0]["text"] == "x"
        asked = await answer(endpoint.handle(post(request(2, "tools/call", {"name": "ask", "arguments": {}}))))
        result = json.loads(asked.body)["result"]
        # A stateless request declares no client capabilities: sampling is refused at once.
        assert result["isError"] is True and "sampling" in result["content"][0]["text"]
        # No header: 2025-03-26, as the specification says.
        listed = await answer(endpoint.handle(post(request(3, "tools/list"), version=None)))
        assert [t["name"] for t in json.loads(listed.body)["result"]["tools"]] == ["echo", "slow", "hang", "ask"]
        for method in ("GET", "DELETE"):
            refused = await answer(endpoint.handle(HTTPRequest(method, "/mcp", {"host": "localhost"})))
            assert refused.status == 405 and refused.header("allow") == "POST"
        assert endpoint.sessions == {}
        assert endpoint.factory.__self__.connections == ()  # every connection closed

    run(main())


def test_max_sessions_refuses_new_ones_with_503():
    async def main():
        endpoint = make_server().http_endpoint(max_sessions=2)
        await initialize(endpoint)
        await initialize(endpoint)
        response = await answer(endpoint.handle(post(request(0, "initialize", INIT), version=None)))
        assert response.status == 503 and response.header("retry-after") == "5"
        endpoint.close()

    run(main())


def test_idle_sessions_end():
    async def main():
        endpoint = make_server().http_endpoint(session_idle_timeout=0.05)
        session = await initialize(endpoint)
        endpoint.sessions[session].last_active -= 1  # as if idle for a second
        endpoint._reap()
        assert session not in endpoint.sessions
        assert (await answer(endpoint.handle(post(request(1, "tools/list"), session)))).status == 404
        endpoint.close()

    run(main())


def test_a_dropped_stream_is_resumed_with_last_event_id():
    async def main():
        endpoint = make_server().http_endpoint(event_store=MemoryEventStore(),
                                               keepalive_interval=0.01)
        session = await initialize(endpoint)
        headers = {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session}
        get = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", dict(headers))))
        priming = await get.stream.__anext__()
        assert priming.startswith(b"id: ") and b"data: \n" in priming
        app = endpoint.sessions[session].connection.server
        app.broadcast_log("warning", "one")
        first = await get.stream.__anext__()
        event_id = first.split(b"\n")[0][4:].decode()
        get.close(disconnected=True)  # the client lost the stream
        await get.stream.aclose()
        app.broadcast_log("warning", "two")  # stored while nobody listens
        resumed = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", {**headers, "last-event-id": event_id})))
        replayed = await resumed.stream.__anext__()
        assert b'"two"' in replayed and b'"one"' not in replayed
        resumed.close(disconnected=True)
        # Another session's event id replays nothing of it.
        other = await initialize(endpoint)
        foreign_headers = {**headers, "mcp-session-id": other, "last-event-id": event_id}
        foreign = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", foreign_headers)))
        # Nothing replayed: the first chunk is the idle stream's keep-alive comment.
        assert await foreign.stream.__anext__() == b": keep-alive\n\n"
        foreign.close(disconnected=True)
        endpoint.close()

    run(main())


def test_stateless_posts_reuse_idle_connections():
    async def main():
        app = make_server()
        made = []

        def stateless_factory(send, version):
            made.append(version)
            return app.connect_stateless(send, version)

        from mcpfast.transports.http import StreamableHTTPEndpoint

        endpoint = StreamableHTTPEndpoint(app.connect, stateless=True, stateless_factory=stateless_factory)
        echo = {"name": "echo", "arguments": {"text": "x"}}
        for id in range(5):
            call = await answer(endpoint.handle(post(request(id, "tools/call", echo))))
            assert json.loads(call.body)["result"]["content"][0]["text"] == "x"
            slow_call = request(100 + id, "tools/call", {"name": "slow", "arguments": {}})
            slow = await answer(endpoint.handle(post(slow_call)))
            assert json.loads(slow.body)["result"]["content"][0]["text"] == "done"
        # One connection served them all, and while idle it is not among the server's.
        assert made == ["2025-11-25"]
        assert app.connections == ()
        # Two at once need two; both are kept for the next POSTs.
        hang_call = request(50, "tools/call", {"name": "hang", "arguments": {}})
        hang = asyncio.ensure_future(answer(endpoint.handle(post(hang_call))))
        await asyncio.sleep(0)
        call = await answer(endpoint.handle(post(request(51, "tools/call", echo))))
        assert call.status == 200 and len(made) == 2
        assert len(app.connections) == 1  # the one running hang
        endpoint.close()
        hang.cancel()
        await asyncio.gather(hang, return_exceptions=True)

    run(main())


def test_a_recycled_connection_forgets_its_request():
    from mcpfast import AccessToken

    app = make_server()
    connection = app.connect_stateless(lambda frame: None, "2025-11-25")
    connection.auth = AccessToken("alice")
    connection.subscriptions.add("test://x")
    connection.state.log_level = 7
    assert connection.recycle() is True
    assert connection.auth is None and connection.subscriptions == set()
    assert connection.state.log_level == app.default_log_level
    assert connection not in app.connections
    connection.revive()
    assert connection in app.connections
    connection.close()
    assert connection.recycle() is False  # closed: the caller closes (again) instead


def test_a_resume_from_the_priming_event_misses_nothing_sent_before_the_stream_was_read():
    async def main():
        endpoint = make_server().http_endpoint(event_store=MemoryEventStore(), keepalive_interval=30)
        session = await initialize(endpoint)
        params = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        # The progress notification is pushed while the request is fed, before the
        # response starts writing: the priming event must still come before it.
        response = await answer(endpoint.handle(post(request(7, "tools/call", params), session)))
        first = await response.stream.__anext__()
        assert b"data: \n" in first and b"notifications/progress" not in first.split(b"\n\n")[0]
        priming_id = first.split(b"id: ")[1].split(b"\n")[0].decode()
        response.close(disconnected=True)
        await response.stream.aclose()
        await asyncio.sleep(0.01)
        headers = {"host": "localhost", "accept": "text/event-stream", "mcp-session-id": session,
                   "last-event-id": priming_id}
        resumed = await answer(endpoint.handle(HTTPRequest("GET", "/mcp", headers)))
        replayed = b"".join([chunk async for chunk in resumed.stream])
        assert b"notifications/progress" in replayed and b'"id":7' in replayed
        endpoint.close()

    run(main())


def test_header_verdicts_stay_apart_for_each_combination():
    # The POST header checks are cached by the header values: every combination must keep
    # its own answer however the requests interleave on one endpoint.
    async def main():
        endpoint = make_server().http_endpoint(stateless=True)
        echo = {"name": "echo", "arguments": {"text": "hi"}}
        cases = [
            ({}, 200),
            ({"content-type": "text/plain"}, 415),
            ({"content-type": "application/json; charset=utf-8"}, 200),
            ({"accept": "application/json"}, 406),
            ({"mcp-protocol-version": "1999-01-01"}, 400),
            ({"mcp-protocol-version": " 2025-06-18 "}, 200),
        ]
        for _ in range(3):
            for change, status in cases:
                req = post(request(5, "tools/call", echo))
                req.headers.update(change)
                response = await answer(endpoint.handle(req))
                assert response.status == status, (change, response.body)
                if status == 200:
                    assert json.loads(response.body)["result"]["content"][0]["text"] == "hi"
        endpoint.close()

    run(main())
