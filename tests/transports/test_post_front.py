"""The endpoint's compiled front door (mcpfast.transports.http.post_front): the POSTs it
routes itself are answered exactly as the endpoint's Python path answers them; the
routing-header problems it keeps; the endpoint's attributes it holds."""

from __future__ import annotations

import asyncio
import base64
import json
from types import MappingProxyType
from typing import Any, Optional

import pytest

from endpoint_requests import JSON_AND_SSE, answer, post, request
from mcpfast import Context
from mcpfast._core.decode import decode
from mcpfast.auth import AccessToken
from mcpfast.protocol import meta_keys
from mcpfast.protocol.error_codes import HEADER_MISMATCH
from mcpfast.transports.http import HTTPRequest, HTTPResponse
from mcpfast.transports.http.auth import BearerAuth
from mcpfast.transports.http.routing_headers import (
    ROUTING_PROBLEMS,
    known_routing_problem,
    routing_header_problem,
    routing_problem,
)

from .test_http_2026 import META, V2026, make_server


def post_2026(method: str, params: Any = None, id: Any = 1, meta: Any = META,
              **headers: Optional[str]) -> HTTPRequest:
    if params is None:
        params = {}
    if isinstance(params, dict) and meta is not None:
        params = {**params, "_meta": meta}
    values: dict[str, Optional[str]] = {"mcp-method": method}
    values.update({k.replace("_", "-"): v for k, v in headers.items()})
    call = post(request(id, method, params), version=V2026)
    for name, value in values.items():
        if value is not None:
            call.headers[name] = value
    return call


def python_path(endpoint: Any, call: HTTPRequest) -> Any:
    """What the endpoint's Python methods answer for a POST the front door passes on."""
    headers = call.headers
    key = (headers.get("host"), headers.get("origin"), headers.get("content-type"),
           headers.get("accept"), headers.get("mcp-protocol-version"))
    verdict = endpoint._post_verdict(key)
    if verdict[0] is not None:
        return endpoint._post_refused(verdict, call.body)
    return endpoint._post_decoded(headers, call.body, decode(call.body), verdict, None)


def same_answer(front: HTTPResponse, python: HTTPResponse) -> None:
    assert (front.status, front.headers) == (python.status, python.headers)
    assert json.loads(front.body) == json.loads(python.body) if front.body else python.body == b""


async def compare(call: HTTPRequest, **options: Any) -> None:
    """The front door's answer to ``call`` (twice: the second time with its verdicts kept)
    against the Python path's, each on an endpoint of its own."""
    front, python = make_server().http_endpoint(**options), make_server().http_endpoint(**options)
    first = await answer(front.handle(call))
    again = await answer(front.handle(call))
    expected = await answer(python_path(python, call))
    same_answer(first, expected)
    same_answer(again, expected)
    front.close()
    python.close()


def encoded(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


CALL = {"name": "echo", "arguments": {"text": "hi"}}
CASES_2026 = [
    post_2026("tools/call", CALL, mcp_name="echo"),
    post_2026("tools/call", CALL, mcp_name=" echo ", mcp_method=" tools/call"),
    post_2026("tools/call", {"name": "grüße", "arguments": {}}, mcp_name=encoded("grüße")),
    post_2026("tools/call", {"name": "grüße", "arguments": {}}, mcp_name="gr=?base64?"),
    post_2026("tools/call", CALL, mcp_name="other"),
    post_2026("tools/call", CALL),
    post_2026("tools/call", CALL, mcp_name="echo", mcp_method="tools/list"),
    post_2026("tools/call", CALL, mcp_name="echo", mcp_method=None),
    post_2026("tools/call", {"name": 7, "arguments": {}}, mcp_name="7"),
    post_2026("tools/call", {"arguments": {}}, mcp_name="echo"),
    post_2026("tools/call", CALL, mcp_name="echo", mcp_protocol_version=" 2026-07-28 "),
    post_2026("tools/call", CALL, mcp_name="echo", meta={meta_keys.PROTOCOL_VERSION: "2025-11-25"}),
    post_2026("tools/call", CALL, mcp_name="echo", meta={meta_keys.PROTOCOL_VERSION: 2026}),
    post_2026("tools/call", CALL, mcp_name="echo", meta={meta_keys.CLIENT_CAPABILITIES: {}}),
    post_2026("tools/call", CALL, mcp_name="echo", meta=[1]),
    post_2026("tools/call", CALL, mcp_name="echo", meta=None),
    post_2026("tools/call", [1, 2], mcp_name="echo"),
    post_2026("tools/list"),
    post_2026("tools/list", mcp_name="ignored"),
    post_2026("server/discover", id="s"),
    post_2026("resources/read", {"uri": "note://one"}, mcp_name="note://one"),
    post_2026("resources/read", {"uri": "note://two"}, mcp_name="note://two"),
    post_2026("no/such/method", id="n"),
    post_2026("initialize", {"protocolVersion": V2026}),
]


@pytest.mark.parametrize("index", range(len(CASES_2026)))
def test_2026_requests_answer_as_the_python_path_does(index):
    asyncio.run(compare(CASES_2026[index]))


CASES_STATELESS = [
    post(request(1, "tools/call", CALL)),
    post(request(2, "tools/call", {"name": "nope", "arguments": {}})),
    post(request(3, "tools/list"), version=None),
    post(request(4, "ping"), version="2025-03-26"),
    post(request(5, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "t", "version": "1"}})),
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    post([request(6, "ping"), request(7, "tools/list")], version="2025-03-26"),
    post(request(8, "tools/call", CALL), version="1999-01-01"),
    post(request(9, "tools/call", CALL), accept="application/json"),
]


@pytest.mark.parametrize("index", range(len(CASES_STATELESS)))
@pytest.mark.parametrize("json_response", [False, True])
def test_stateless_posts_answer_as_the_python_path_does(index, json_response):
    asyncio.run(compare(CASES_STATELESS[index], stateless=True, json_response=json_response))


def test_headers_of_another_mapping_type():
    async def main():
        endpoint = make_server().http_endpoint()
        for call, status in ((post_2026("tools/call", CALL, mcp_name="echo"), 200),
                             (post_2026("tools/call", CALL, mcp_name="nope"), 400),
                             (post(request(1, "tools/list")), 400)):
            as_dict = await answer(endpoint.handle(call))
            call.headers = MappingProxyType(dict(call.headers))
            proxied = await answer(endpoint.handle(call))
            assert proxied.status == status
            same_answer(proxied, as_dict)
        endpoint.close()

    asyncio.run(main())


def test_refusals_before_the_body_is_decoded():
    async def main():
        endpoint = make_server().http_endpoint(max_body_size=64)
        wrong_type = post(request(1, "ping"), content_type="text/plain")
        assert (await answer(endpoint.handle(wrong_type))).status == 415
        wrong_accept = post(request(1, "ping"), accept="text/html")
        assert (await answer(endpoint.handle(wrong_accept))).status == 406
        too_large = await answer(endpoint.handle(post(request(1, "tools/call", {"pad": "x" * 100}))))
        assert too_large.status == 413 and "the limit is 64" in json.loads(too_large.body)["error"]["message"]
        broken = await answer(endpoint.handle(post(b"{broken")))
        assert broken.status == 400 and json.loads(broken.body)["error"]["code"] == -32700
        endpoint.close()

    asyncio.run(main())


def test_the_kept_routing_problems_are_bounded_and_match_the_rule():
    ROUTING_PROBLEMS.clear()
    for n in range(300):
        problem = known_routing_problem(V2026, "tools/call", f"tool{n}", V2026, "tools/call", "echo")
        assert problem == routing_problem(V2026, "tools/call", f"tool{n}", V2026, "tools/call", "echo")
        assert problem is not None and f"'tool{n}' does not match body value 'echo'" in problem
    assert 0 < len(ROUTING_PROBLEMS) <= 256
    assert known_routing_problem(V2026, "tools/call", "echo", V2026, "tools/call", "echo") is None
    assert ROUTING_PROBLEMS[(V2026, "tools/call", "echo", V2026, "tools/call", "echo")] is None
    # routing_header_problem reads the same values from the headers and the body.
    headers = {"mcp-protocol-version": V2026, "mcp-method": "tools/call", "mcp-name": "tool3"}
    params = {"name": "echo", "_meta": {meta_keys.PROTOCOL_VERSION: V2026}}
    assert routing_header_problem(headers, "tools/call", params) == routing_problem(
        V2026, "tools/call", "tool3", V2026, "tools/call", "echo")
    assert routing_problem(None, "tools/list", None, V2026, "tools/list", None) is not None


def test_a_kept_mismatch_is_still_refused():
    async def main():
        endpoint = make_server().http_endpoint()
        for _ in range(3):
            response = await answer(endpoint.handle(post_2026("tools/call", CALL, id=4, mcp_name="nope")))
            assert response.status == 400
            assert json.loads(response.body)["error"]["code"] == HEADER_MISMATCH
        endpoint.close()

    asyncio.run(main())


def test_the_endpoint_attributes_the_front_door_holds():
    async def main():
        endpoint = make_server().http_endpoint(path="/rpc", max_body_size=1000)
        assert endpoint.path == "/rpc" and endpoint.max_body_size == 1000 and endpoint.auth is None
        with pytest.raises(AttributeError):
            endpoint.path = "/other"
        for bad in (0, -1, True, 2.5, "100"):
            with pytest.raises(ValueError, match="max_body_size must be an int >= 1"):
                endpoint.max_body_size = bad
        assert endpoint.max_body_size == 1000
        endpoint.max_body_size = 80
        call = HTTPRequest("POST", "/rpc", post(request(1, "tools/call", {"pad": "x" * 100})).headers,
                           json.dumps(request(1, "tools/call", {"pad": "x" * 100})).encode())
        assert (await answer(endpoint.handle(call))).status == 413
        with pytest.raises(TypeError, match="auth must be a BearerAuth"):
            endpoint.auth = "secret"
        # A verifier: every request then goes through the endpoint's Python path first.
        endpoint.auth = BearerAuth(lambda token: None, resource="http://127.0.0.1:8000/rpc",
                                   authorization_servers=["https://auth.example"])
        unauthorized = await answer(endpoint.handle(HTTPRequest("POST", "/rpc", call.headers, b"{}")))
        assert unauthorized.status == 401 and unauthorized.header("www-authenticate")
        endpoint.auth = None
        ok = post(request(2, "ping"), version=None, accept=JSON_AND_SSE)
        assert (await answer(endpoint.handle(HTTPRequest("POST", "/rpc", ok.headers, ok.body)))).status == 400
        assert (await answer(endpoint.handle(HTTPRequest("POST", "/mcp", ok.headers, ok.body)))).status == 404
        assert (await answer(endpoint.handle(HTTPRequest("PUT", "/rpc", ok.headers, b"")))).status == 405
        endpoint.close()

    asyncio.run(main())


def fresh(text: Optional[str]) -> Optional[str]:
    """An equal str that is another object (the front door remembers its last values by
    identity)."""
    return None if text is None else "".join(list(text))


def test_the_last_verdicts_remembered_never_answer_for_other_values():
    # The front door remembers its last header verdict and its last routing verdict with
    # the values they were found for, the very objects (the framer hands out the same str
    # for a repeated value). POSTs alternating between values, given as the same objects
    # and as equal new ones, each get their own answer.
    async def main():
        endpoint = make_server().http_endpoint()
        good = post_2026("tools/call", CALL, mcp_name="echo")
        cases = [
            (good, 200, None),
            (post_2026("tools/call", CALL, mcp_name="nope"), 400, HEADER_MISMATCH),
            (good, 200, None),
            (post_2026("tools/call", CALL, accept="text/html", mcp_name="echo"), 406, None),
            (good, 200, None),
            (post(request(1, "tools/list")), 400, None),  # 2025-11-25 without a session
            (good, 200, None),
            (post_2026("tools/call", CALL, mcp_name="echo", mcp_method="tools/list"), 400,
             HEADER_MISMATCH),
            (good, 200, None),
        ]
        for round in range(2):
            for call, status, code in cases:
                if round:  # equal values, other objects
                    call = HTTPRequest(call.method, call.path,
                                       {fresh(k): fresh(v) for k, v in call.headers.items()},
                                       call.body)
                response = await answer(endpoint.handle(call))
                assert response.status == status, (call.headers, response.body)
                if code is not None:
                    assert json.loads(response.body)["error"]["code"] == code
                elif status == 200:
                    assert json.loads(response.body)["result"]["content"][0]["text"] == "hi"
        endpoint.close()

    asyncio.run(main())


def test_the_trace_headers_reach_the_reply_channel_only_when_asked():
    # The front door's own routes (stateless, 2026-07-28) and the endpoint's Python paths
    # (a session, a verifier) alike; the flag is the endpoint's (a server with spans sets it).
    app = make_server()

    @app.tool()
    def trace(ctx: Context) -> str:
        return json.dumps(getattr(ctx.channel, "trace_headers", None))

    trace_headers = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                     "tracestate": "k=v"}

    async def seen(endpoint: Any, version: str, session: Optional[str] = None, **extra: str) -> Any:
        if version == V2026:
            call = post_2026("tools/call", {"name": "trace"}, mcp_name="trace")
        else:
            call = post(request(1, "tools/call", {"name": "trace"}), session, version=version)
        call.headers.update({**trace_headers, "baggage": "b=1", **extra})
        response = await answer(endpoint.handle(call))
        assert response.status == 200, response.body
        return json.loads(json.loads(response.body)["result"]["content"][0]["text"])

    async def main() -> None:
        verifier = BearerAuth(lambda token: AccessToken(subject="client", token=token) if token == "good" else None,
                              resource="http://127.0.0.1:8000/mcp", authorization_servers=["https://auth.example"])
        for options in ({"stateless": True}, {}, {"auth": verifier}):
            endpoint = app.http_endpoint(**options)
            extra = {"authorization": "Bearer good"} if "auth" in options else {}
            session = None if options.get("stateless") else await initialize_with(endpoint, **extra)
            assert endpoint.capture_trace_headers is False
            assert await seen(endpoint, "2025-11-25", session, **extra) is None
            assert await seen(endpoint, V2026, **extra) is None
            endpoint.capture_trace_headers = True
            assert await seen(endpoint, "2025-11-25", session, **extra) == trace_headers
            assert await seen(endpoint, V2026, **extra) == trace_headers
            endpoint.close()

    asyncio.run(main())


async def initialize_with(endpoint: Any, **headers: str) -> str:
    init = post(request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "t", "version": "1"}}), version=None)
    init.headers.update(headers)
    response = await answer(endpoint.handle(init))
    assert response.status == 200, response.body
    session = response.header("mcp-session-id")
    notified = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    notified.headers.update(headers)
    assert (await answer(endpoint.handle(notified))).status == 202
    return session
