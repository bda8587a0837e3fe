"""The 2026-07-28 leg of the Streamable HTTP endpoint (no sockets): self-contained POSTs
routed by MCP-Protocol-Version, routing headers checked against the body, error statuses,
SSE only when the request sends notifications -- beside the handshake leg."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any, Optional

import pytest

from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from mcpfast.protocol import meta_keys
from mcpfast.protocol.error_codes import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION
from mcpfast.transports.http import HTTPRequest, HTTPResponse
from mcpfast.transports.http.routing_headers import decode_header_value, routing_header_problem

from .test_http_endpoint import answer, initialize, post, read_stream, request

V2026 = "2026-07-28"
META = {meta_keys.PROTOCOL_VERSION: V2026, meta_keys.CLIENT_CAPABILITIES: {}}


def make_server(cancelled: Optional[list] = None) -> Server:
    app = Server("http-2026")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool(name="grüße")
    def greet() -> str:
        return "hallo"

    @app.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await asyncio.sleep(0)
        return "done"

    @app.tool()
    async def hang() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            if cancelled is not None:
                cancelled.append("hang")
            raise
        return "never"

    @app.resource("note://one")
    def one() -> str:
        return "first"

    return app


def post_2026(method: str, params: Optional[dict] = None, id: Any = 1, name: Optional[str] = None,
              **headers: str) -> HTTPRequest:
    params = dict(params or {})
    params.setdefault("_meta", META)
    values = {"mcp-method": method}
    if name is not None:
        values["mcp-name"] = name
    values.update({k.replace("_", "-"): v for k, v in headers.items()})
    return post(request(id, method, params), version=V2026, **values)


def error_of(response: HTTPResponse) -> dict:
    return json.loads(response.body)["error"]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_self_contained_call_needs_no_session():
    async def main():
        endpoint = make_server().http_endpoint()
        call = post_2026("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, name="echo")
        response = await answer(endpoint.handle(call))
        assert response.status == 200 and response.header("mcp-session-id") is None
        result = json.loads(response.body)["result"]
        assert result["content"][0]["text"] == "hi" and result["resultType"] == "complete"
        discover = await answer(endpoint.handle(post_2026("server/discover")))
        assert V2026 in json.loads(discover.body)["result"]["supportedVersions"]
        assert endpoint.sessions == {}
        # A session id sent along is ignored, not looked up.
        ignored = post_2026("tools/list", mcp_session_id="feedface" * 4)
        assert (await answer(endpoint.handle(ignored))).status == 200

    run(main())


def test_both_legs_on_one_endpoint():
    async def main():
        endpoint = make_server().http_endpoint()
        session = await initialize(endpoint)
        old = await answer(endpoint.handle(post(request(5, "tools/list"), session)))
        new = await answer(endpoint.handle(post_2026("tools/list")))
        assert "resultType" not in json.loads(old.body)["result"]
        assert json.loads(new.body)["result"]["resultType"] == "complete"
        endpoint.close()

    run(main())


@pytest.mark.parametrize("change, fragment", [
    ({"mcp-method": None}, "Mcp-Method header is required"),
    ({"mcp-method": "tools/list"}, "does not match body value 'tools/call'"),
    ({"mcp-method": "tools/call, tools/call"}, "does not match"),
    ({"mcp-name": None}, "Mcp-Name header is required"),
    ({"mcp-name": "other"}, "'other' does not match body value 'echo'"),
    ({"mcp-name": "=?base64?not base64?="}, "invalid"),
    ({"mcp-name": "=?base64?ZWNobw?="}, "invalid"),  # padding missing: not canonical
])
def test_routing_headers_must_match_the_body(change, fragment):
    async def main():
        endpoint = make_server().http_endpoint()
        call = post_2026("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=9, name="echo")
        for key, value in change.items():
            if value is None:
                del call.headers[key]
            else:
                call.headers[key] = value
        response = await answer(endpoint.handle(call))
        assert response.status == 400
        error = error_of(response)
        assert error["code"] == HEADER_MISMATCH and fragment in error["message"]
        assert json.loads(response.body)["id"] == 9

    run(main())


def test_names_in_base64_and_surrounding_spaces():
    async def main():
        endpoint = make_server().http_endpoint()
        encoded = "=?base64?" + base64.b64encode("grüße".encode()).decode() + "?="
        call = post_2026("tools/call", {"name": "grüße", "arguments": {}}, name=encoded)
        assert (await answer(endpoint.handle(call))).status == 200
        read = post_2026("resources/read", {"uri": "note://one"}, name=" note://one ",
                         mcp_method=" resources/read")
        assert json.loads((await answer(endpoint.handle(read))).body)["result"]["contents"][0]["text"] == "first"

    run(main())


def test_header_and_meta_versions_must_agree():
    # Checked before anything else about the version (a mismatch is a -32020, not -32022).
    problem = routing_header_problem({"mcp-protocol-version": V2026, "mcp-method": "tools/list"},
                                     "tools/list", {"_meta": {meta_keys.PROTOCOL_VERSION: "2025-11-25"}})
    assert problem is not None and "MCP-Protocol-Version" in problem
    assert decode_header_value("plain") == "plain"
    assert decode_header_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=") == "=?base64?literal?="


def test_error_answers_carry_their_http_status():
    async def main():
        endpoint = make_server().http_endpoint()
        unknown = await answer(endpoint.handle(post_2026("tasks/list")))
        assert unknown.status == 404 and error_of(unknown)["code"] == METHOD_NOT_FOUND
        no_caps = post_2026("tools/list", {"_meta": {meta_keys.PROTOCOL_VERSION: V2026}})
        refused = await answer(endpoint.handle(no_caps))
        assert refused.status == 400 and error_of(refused)["code"] == INVALID_PARAMS
        missing = post_2026("resources/read", {"uri": "note://none"}, name="note://none")
        gone = await answer(endpoint.handle(missing))
        assert gone.status == 400 and error_of(gone)["data"] == {"uri": "note://none"}
        failing = post_2026("tools/call", {"name": "echo", "arguments": {}}, name="echo")
        tool_error = await answer(endpoint.handle(failing))  # a tool's own error is a result
        assert tool_error.status == 200 and json.loads(tool_error.body)["result"]["isError"] is True
        bad_version = post(request(1, "tools/list", {"_meta": META}), version="2099-01-01", mcp_method="tools/list")
        unsupported = await answer(endpoint.handle(bad_version))
        assert unsupported.status == 400 and error_of(unsupported)["code"] == UNSUPPORTED_PROTOCOL_VERSION
        batch = post([request(1, "tools/list", {"_meta": META})], version=V2026, mcp_method="tools/list")
        assert error_of(await answer(endpoint.handle(batch)))["code"] == INVALID_REQUEST
        note = post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                    version=V2026, mcp_method="notifications/cancelled")
        assert (await answer(endpoint.handle(note))).status == 202

    run(main())


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_not_allowed_on_the_2026_leg(method):
    async def main():
        endpoint = make_server().http_endpoint()
        req = HTTPRequest(method, "/mcp", {"host": "127.0.0.1:8000", "accept": "text/event-stream",
                                           "mcp-protocol-version": V2026})
        response = await answer(endpoint.handle(req))
        assert response.status == 405 and response.header("allow") == "POST"

    run(main())


def test_notifications_turn_the_answer_into_sse_and_closing_it_cancels():
    async def main():
        cancelled: list = []
        endpoint = make_server(cancelled).http_endpoint()
        params = {"name": "slow", "arguments": {}, "_meta": {**META, "progressToken": "p"}}
        streamed = await answer(endpoint.handle(post_2026("tools/call", params, name="slow")))
        progress, result = await read_stream(streamed)
        assert progress["method"] == "notifications/progress"
        assert result["result"]["resultType"] == "complete"
        hang = endpoint.handle(post_2026("tools/call", {"name": "hang", "arguments": {}}, name="hang"))
        task = asyncio.ensure_future(answer(hang))
        await asyncio.sleep(0.01)
        task.cancel()  # the client went away before any answer
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(10):
            await asyncio.sleep(0)
        assert cancelled == ["hang"]

    run(main())


def test_mcp_param_headers_must_match_the_arguments():
    async def main():
        app = make_server()

        @app.tool(input_schema={"type": "object", "required": ["region"], "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}})
        def where(region: str) -> str:
            return region

        endpoint = app.http_endpoint()
        arguments = {"name": "where", "arguments": {"region": "Zürich"}}
        missing = await answer(endpoint.handle(post_2026("tools/call", arguments, name="where")))
        assert missing.status == 400 and error_of(missing)["code"] == HEADER_MISMATCH
        assert "Mcp-Param-Region" in error_of(missing)["message"]
        header = "=?base64?" + base64.b64encode("Zürich".encode()).decode() + "?="
        ok = await answer(endpoint.handle(post_2026("tools/call", arguments, name="where",
                                                    mcp_param_region=header)))
        assert ok.status == 200 and json.loads(ok.body)["result"]["content"][0]["text"] == "Zürich"
        # Over the handshake leg (no 2026 headers) nothing is checked.
        session = await initialize(endpoint)
        old = await answer(endpoint.handle(post(request(3, "tools/call", arguments), session)))
        assert old.status == 200
        endpoint.close()

    run(main())


def test_2026_posts_reuse_an_idle_connection():
    async def main():
        app = make_server()
        endpoint = app.http_endpoint()
        made = []
        factory = endpoint.factory

        def counting(send):
            made.append(send)
            return factory(send)

        endpoint.factory = counting
        for id in range(4):
            call = post_2026("tools/call", {"name": "echo", "arguments": {"text": str(id)}}, id=id, name="echo")
            response = await answer(endpoint.handle(call))
            assert json.loads(response.body)["result"]["content"][0]["text"] == str(id)
        assert len(made) == 1 and app.connections == ()
        endpoint.close()

    run(main())


@pytest.mark.parametrize("headers, params, fragment", [
    # Neither a name in the body nor an Mcp-Name header: the header is still required.
    ({"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"},
     {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, "Mcp-Name header is required"),
    # Spaces around header values are not part of them.
    ({"mcp-protocol-version": " 2026-07-28 ", "mcp-method": " tools/call ", "mcp-name": " echo "},
     {"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, None),
    ({"mcp-protocol-version": "2026-07-28 ", "mcp-method": "tools/call", "mcp-name": "echo"},
     {"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}},
     "MCP-Protocol-Version header value '2026-07-28' does not match body value '2025-11-25'"),
    # A body name that reads as a sentinel must travel encoded, not as it is.
    ({"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "=?base64?ZWNobw==?="},
     {"name": "=?base64?ZWNobw==?=", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
     "does not match"),
])
def test_routing_header_problem_direct(headers, params, fragment):
    from mcpfast.transports.http.routing_headers import routing_header_problem

    problem = routing_header_problem(headers, "tools/call", params)
    if fragment is None:
        assert problem is None
    else:
        assert problem is not None and fragment in problem
