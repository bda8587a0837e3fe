"""The 2026-07-28 (stateless) era on a server connection: state from each request's
``_meta``, no handshake, server/discover, result shapes, the revision's errors -- beside
the handshake era on the same connection. Every frame is validated against the schema of
its revision."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

from mcpfast import Context, Server
from mcpfast.jsonrpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND, NOT_INITIALIZED
from mcpfast.protocol import meta_keys
from mcpfast.protocol.error_codes import UNSUPPORTED_PROTOCOL_VERSION
from mcpfast.protocol.versions import SPOKEN_VERSIONS
from mcpfast.server.eras.stateless import CachePolicy

V2026 = "2026-07-28"


def meta(capabilities: Any = None, **extra: Any) -> dict[str, Any]:
    values = {meta_keys.PROTOCOL_VERSION: V2026,
              meta_keys.CLIENT_CAPABILITIES: {} if capabilities is None else capabilities}
    values.update(extra)
    return values


def make_server(**options: Any) -> Server:
    app = Server("era", version="2.0", instructions="Use echo.", **options)

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def whoami(ctx: Context) -> dict:
        return {"version": ctx.protocol_version, "client": ctx.client_info.get("name"),
                "sampling": "sampling" in ctx.client_capabilities, "level": ctx.log_level}

    @app.tool()
    def chatty(ctx: Context) -> str:
        ctx.info("working")
        return "done"

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.sample("hello?")
        return f"sampled: {answer.text}"

    @app.resource("note://one")
    def one() -> str:
        return "first note"

    @app.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return app


class Wire:
    """A connection of ``server`` whose frames are collected and schema-checked: those
    answering a request that carried 2026 _meta against the 2026-07-28 schema."""

    def __init__(self, server: Server, mcp_schema: Any) -> None:
        self.frames: list[dict] = []
        self.methods: dict[Any, tuple[str, str]] = {}
        self.mcp_schema = mcp_schema
        self.conn = server.connect(self.send)
        self.ids = iter(range(1, 10_000))

    def send(self, frame: bytes) -> None:
        message = json.loads(frame)
        answered = self.methods.pop(message.get("id"), None) if "method" not in message else None
        if answered is not None:
            method, version = answered
            self.mcp_schema(version).check_message(message, answers=method if "result" in message else None)
        self.frames.append(message)

    def call(self, method: str, params: Optional[dict] = None, version: str = V2026) -> dict:
        request_id = next(self.ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.methods[request_id] = (method, version)
        self.conn.feed(json.dumps(message).encode())
        for index, frame in enumerate(self.frames):
            if frame.get("id") == request_id and "method" not in frame:
                return self.frames.pop(index)
        raise AssertionError(f"no inline answer to {method}: {self.frames}")


def test_discover_answers_versions_capabilities_and_instructions(mcp_schema):
    wire = Wire(make_server(cache=CachePolicy(ttl_ms=60_000, scope="public")), mcp_schema)
    result = wire.call("server/discover", {"_meta": meta()})["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == list(SPOKEN_VERSIONS)
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    # List changes and resource updates come through subscriptions/listen.
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert result["instructions"] == "Use echo."
    assert result["ttlMs"] == 60_000 and result["cacheScope"] == "public"
    assert result["_meta"][meta_keys.SERVER_INFO] == {"name": "era", "version": "2.0"}


def test_requests_need_no_handshake_and_read_their_state_from_meta(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    info = {"name": "modern", "version": "1"}
    params = {"name": "whoami", "arguments": {},
              "_meta": meta({"sampling": {}}, **{meta_keys.CLIENT_INFO: info, meta_keys.LOG_LEVEL: "debug"})}
    result = wire.call("tools/call", params)["result"]
    assert result["structuredContent"] == {"version": V2026, "client": "modern", "sampling": True,
                                           "level": "debug"}
    assert result["resultType"] == "complete" and meta_keys.SERVER_INFO in result["_meta"]
    assert "ttlMs" not in result  # a tool result is not cacheable
    # The connection's own handshake never happened, and a handshake request still meets
    # the initialization gate.
    assert wire.conn.state.protocol_version is None
    refused = wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"}}, version="2025-11-25")
    assert refused["error"]["code"] == NOT_INITIALIZED


def test_both_eras_on_one_connection(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    assert wire.call("initialize", init, version="2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    wire.conn.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    old = wire.call("tools/list", None, version="2025-11-25")["result"]
    new = wire.call("tools/list", {"_meta": meta()})["result"]
    assert "resultType" not in old and "ttlMs" not in old
    assert new["resultType"] == "complete" and new["ttlMs"] == 0 and new["cacheScope"] == "private"
    assert [t["name"] for t in old["tools"]] == [t["name"] for t in new["tools"]]
    # The cached list result the handshake era got was not changed by the shaping.
    again = wire.call("tools/list", None, version="2025-11-25")["result"]
    assert "resultType" not in again


def test_lists_reads_and_prompts_get_their_shapes(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    for method in ("resources/list", "resources/templates/list", "prompts/list"):
        result = wire.call(method, {"_meta": meta()})["result"]
        assert result["resultType"] == "complete" and "ttlMs" in result and "cacheScope" in result
    read = wire.call("resources/read", {"uri": "note://one", "_meta": meta()})["result"]
    assert read["contents"][0]["text"] == "first note" and read["ttlMs"] == 0
    prompt = wire.call("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}, "_meta": meta()})["result"]
    assert prompt["resultType"] == "complete" and "ttlMs" not in prompt


def test_unknown_resource_is_invalid_params_in_2026_and_resource_not_found_before(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    error = wire.call("resources/read", {"uri": "note://none", "_meta": meta()})["error"]
    assert error["code"] == INVALID_PARAMS and error["data"] == {"uri": "note://none"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    wire.call("initialize", init, version="2025-11-25")
    wire.conn.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    old = wire.call("resources/read", {"uri": "note://none"}, version="2025-11-25")["error"]
    assert old["code"] == -32002


@pytest.mark.parametrize("bad_meta, code, fragment", [
    ({meta_keys.PROTOCOL_VERSION: V2026}, INVALID_PARAMS, "clientCapabilities"),
    ({meta_keys.PROTOCOL_VERSION: V2026, meta_keys.CLIENT_CAPABILITIES: []}, INVALID_PARAMS, "clientCapabilities"),
    ({meta_keys.PROTOCOL_VERSION: 2026, meta_keys.CLIENT_CAPABILITIES: {}}, INVALID_PARAMS, "must be a string"),
    ({meta_keys.PROTOCOL_VERSION: [V2026], meta_keys.CLIENT_CAPABILITIES: {}}, INVALID_PARAMS,
     "must be a string"),
    (meta(**{meta_keys.CLIENT_INFO: "me"}), INVALID_PARAMS, "clientInfo"),
    (meta(**{meta_keys.CLIENT_INFO: None}), INVALID_PARAMS, "clientInfo"),
    (meta(**{meta_keys.LOG_LEVEL: "loud"}), INVALID_PARAMS, "logLevel"),
    (meta(**{meta_keys.LOG_LEVEL: ["debug"]}), INVALID_PARAMS, "logLevel"),
])
def test_malformed_meta_is_refused(mcp_schema, bad_meta, code, fragment):
    wire = Wire(make_server(), mcp_schema)
    error = wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": bad_meta})["error"]
    assert error["code"] == code and fragment in error["message"]


def test_requests_declaring_nothing_share_one_state_per_level(mcp_schema):
    app = make_server()
    seen: list[Any] = []

    @app.tool()
    def state_of(ctx: Context) -> str:
        seen.append(ctx.state)
        return "ok"

    wire = Wire(app, mcp_schema)
    debug = {meta_keys.LOG_LEVEL: "debug"}
    empty_info = {meta_keys.CLIENT_INFO: {}}
    for extra in ({}, {}, debug, debug, empty_info):
        wire.call("tools/call", {"name": "state_of", "arguments": {}, "_meta": meta(**extra)})
    assert seen[0] is seen[1] is seen[4] and seen[2] is seen[3] and seen[0] is not seen[2]
    assert (seen[0].log_level_name, seen[2].log_level_name) == ("off", "debug")
    assert seen[0].initialized and seen[0].protocol_version == V2026
    assert seen[0].client_capabilities == {} and seen[0].client_info == {}
    # Declared capabilities or clientInfo: a state of the request's own, with what it sent.
    info = {meta_keys.CLIENT_INFO: {"name": "modern", "version": "1"}}
    for _ in range(2):
        wire.call("tools/call", {"name": "state_of", "arguments": {}, "_meta": meta({"roots": {}}, **info)})
    assert seen[5] is not seen[6] and seen[5] is not seen[0]
    assert seen[5].client_capabilities == {"roots": {}} and seen[5].client_info["name"] == "modern"
    # Values from the network never grow what is shared: refused ones are not kept.
    for n in range(50):
        refused = wire.call("tools/call", {"name": "state_of", "arguments": {},
                                           "_meta": meta(**{meta_keys.LOG_LEVEL: f"level{n}"})})
        assert refused["error"]["code"] == INVALID_PARAMS
    assert len(app.stateless_era._states) == 2  # type: ignore[union-attr]


def test_common_claims_are_kept_per_version_level_and_method_and_stay_bounded(mcp_schema):
    # A claim of the common case is kept once its checks passed; refused ones never are,
    # and unknown method names (from the network) cannot grow the cache without bound.
    from mcpfast.server.eras.stateless import _CLAIMS_KEPT

    app = make_server()
    era = app.stateless_era
    wire = Wire(app, mcp_schema)
    for _ in range(3):
        assert "result" in wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"},
                                                    "_meta": meta()})
    assert list(era._claims) == [(V2026, None, "tools/call")]  # type: ignore[union-attr]
    for refused_meta, code in (({meta_keys.PROTOCOL_VERSION: "1999-01-01",
                                 meta_keys.CLIENT_CAPABILITIES: {}}, UNSUPPORTED_PROTOCOL_VERSION),
                               (meta(**{meta_keys.LOG_LEVEL: "loud"}), INVALID_PARAMS)):
        for _ in range(2):
            error = wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"},
                                             "_meta": refused_meta})["error"]
            assert error["code"] == code
    removed = wire.call("ping", {"_meta": meta()})["error"]
    assert removed["code"] == METHOD_NOT_FOUND
    assert len(era._claims) == 1  # type: ignore[union-attr]
    for n in range(_CLAIMS_KEPT + 10):
        assert wire.call(f"x/{n}", {"_meta": meta()})["error"]["code"] == METHOD_NOT_FOUND
    assert len(era._claims) <= _CLAIMS_KEPT  # type: ignore[union-attr]
    # What a kept claim answers is what a fresh one answers.
    assert "result" in wire.call("tools/call", {"name": "echo", "arguments": {"text": "y"},
                                                "_meta": meta()})


def test_answers_a_request_brings_are_checked_even_when_its_tool_never_asks(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    for extra in ({"requestState": "not-a-state"}, {"inputResponses": ["x"]}):
        params = {"name": "echo", "arguments": {"text": "x"}, "_meta": meta(), **extra}
        assert wire.call("tools/call", params)["error"]["code"] == INVALID_PARAMS
    plain = wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": meta()})
    assert plain["result"]["content"] == [{"type": "text", "text": "x"}]


def test_unsupported_version_names_the_supported_ones(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    params = {"name": "echo", "arguments": {"text": "x"},
              "_meta": {**meta(), meta_keys.PROTOCOL_VERSION: "2099-01-01"}}
    error = wire.call("tools/call", params)["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"] == {"supported": list(SPOKEN_VERSIONS), "requested": "2099-01-01"}


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe"])
def test_methods_the_revision_removed_are_not_found(mcp_schema, method):
    wire = Wire(make_server(), mcp_schema)
    error = wire.call(method, {"_meta": meta(), "level": "info", "uri": "note://one"})["error"]
    assert error["code"] == METHOD_NOT_FOUND and V2026 in error["message"]


def test_discover_without_the_revisions_meta_is_refused(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    error = wire.call("server/discover", {}, version="2025-11-25")["error"]
    assert error["code"] == INVALID_PARAMS and meta_keys.PROTOCOL_VERSION in error["message"]


def test_log_messages_only_when_the_request_asks_for_them(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    wire.call("tools/call", {"name": "chatty", "arguments": {}, "_meta": meta()})
    assert [f for f in wire.frames if f.get("method") == "notifications/message"] == []
    quiet = wire.call("tools/call", {"name": "whoami", "arguments": {}, "_meta": meta()})["result"]
    assert quiet["structuredContent"]["level"] == "off"
    wire.call("tools/call", {"name": "chatty", "arguments": {},
                             "_meta": meta(**{meta_keys.LOG_LEVEL: "info"})})
    logs = [f for f in wire.frames if f.get("method") == "notifications/message"]
    assert len(logs) == 1 and logs[0]["params"]["data"] == "working"


def test_no_requests_to_the_client_under_the_revision(mcp_schema):
    async def main():
        wire = Wire(make_server(), mcp_schema)
        # A tool asking is answered with an InputRequiredResult, never with a request.
        wire.methods[1] = ("tools/call", V2026)
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "ask", "arguments": {}, "_meta": meta({"sampling": {}})}}
        wire.conn.feed(json.dumps(message).encode())
        for _ in range(20):
            await asyncio.sleep(0)
            answers = [f for f in wire.frames if f.get("id") == 1]
            if answers:
                break
        assert [f for f in wire.frames if "method" in f and "id" in f] == []  # no request sent
        result = answers[0]["result"]
        assert result["resultType"] == "input_required"
        assert result["inputRequests"]["input_1"]["method"] == "sampling/createMessage"

    asyncio.run(main())


def test_a_server_can_refuse_the_stateless_era(mcp_schema):
    wire = Wire(make_server(stateless=False), mcp_schema)
    error = wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": meta()})["error"]
    assert error["code"] == NOT_INITIALIZED


def test_cache_policy_is_checked():
    with pytest.raises(ValueError):
        CachePolicy(ttl_ms=-1)
    with pytest.raises(ValueError):
        CachePolicy(scope="everyone")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Server("x", cache={"ttl_ms": 5})  # type: ignore[arg-type]


def test_the_initialization_gate_runs_for_handshake_requests_only(mcp_schema):
    wire = Wire(make_server(), mcp_schema)
    # Nothing runs before dispatch for a 2026-07-28 request: the gate is the context
    # factory's, applied to the requests given the handshake's state.
    assert wire.conn.session.before_dispatch is None
    echo = {"name": "echo", "arguments": {"text": "x"}}
    assert wire.call("tools/call", {**echo, "_meta": meta()})["result"]["content"][0]["text"] == "x"
    refused = wire.call("tools/call", echo, version="2025-11-25")["error"]
    assert refused == {"code": NOT_INITIALIZED, "data": {"method": "tools/call"},
                       "message": "Server not initialized: 'tools/call' sent before the "
                                  "initialization completed (initialize, then notifications/initialized)"}
    assert wire.call("ping", None, version="2025-11-25")["result"] == {}
    assert wire.call("tools/call", {**echo, "_meta": meta()})["result"]["content"][0]["text"] == "x"
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    assert wire.call("initialize", init, version="2025-11-25")["result"]["protocolVersion"] == "2025-11-25"
    # Between initialize and notifications/initialized the gate still refuses.
    assert wire.call("tools/list", None, version="2025-11-25")["error"]["code"] == NOT_INITIALIZED
    assert wire.call("tools/list", {"_meta": meta()})["result"]["resultType"] == "complete"
    wire.conn.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert wire.call("tools/call", echo, version="2025-11-25")["result"]["content"][0]["text"] == "x"
    assert wire.conn.checks == () and wire.conn.session.before_dispatch is None


def test_server_checks_run_for_both_eras_and_after_the_gate(mcp_schema):
    seen: list[tuple[str, bool]] = []

    def check(ctx: Any) -> None:
        seen.append((ctx.method, ctx.state is ctx.connection.state))

    wire = Wire(make_server(request_checks=[check]), mcp_schema)
    assert wire.conn.session.before_dispatch is check  # the gate is not the hook's
    assert wire.call("tools/list", {"_meta": meta()})["result"]["resultType"] == "complete"
    assert seen == [("tools/list", False)]
    # A handshake request before initialization: refused by the gate before the check.
    assert wire.call("tools/list", None, version="2025-11-25")["error"]["code"] == NOT_INITIALIZED
    assert seen == [("tools/list", False)]
    assert wire.call("ping", None, version="2025-11-25")["result"] == {}
    assert seen[-1] == ("ping", True)
    # Moved behind the check, the gate runs where it stands: after it.
    gate = wire.conn.checks[0]
    wire.conn.remove_check(gate)
    wire.conn.add_check(gate)
    assert wire.conn.checks == (check, gate)
    assert wire.call("tools/list", None, version="2025-11-25")["error"]["code"] == NOT_INITIALIZED
    assert seen[-1] == ("tools/list", True)
    assert wire.call("tools/list", {"_meta": meta()})["result"]["resultType"] == "complete"
    assert seen[-1] == ("tools/list", False)


def test_a_kept_claim_still_checks_the_answers_a_request_brings(mcp_schema):
    # The connection finds the kept claim of the commonest _meta itself; answers brought
    # by the request are checked all the same, and any other _meta goes through claim.
    app = make_server()
    wire = Wire(app, mcp_schema)
    plain = {"name": "echo", "arguments": {"text": "x"}, "_meta": meta()}
    assert wire.call("tools/call", plain)["result"]["content"] == [{"type": "text", "text": "x"}]
    assert (V2026, None, "tools/call") in app.stateless_era.claims  # type: ignore[union-attr]
    for extra in ({"requestState": "not-a-state"}, {"inputResponses": ["x"]}):
        params = {**plain, **extra}
        assert wire.call("tools/call", params)["error"]["code"] == INVALID_PARAMS
    assert wire.call("tools/call", plain)["result"]["content"] == [{"type": "text", "text": "x"}]
    for odd_meta, code in (({meta_keys.PROTOCOL_VERSION: [V2026], meta_keys.CLIENT_CAPABILITIES: {}},
                            INVALID_PARAMS),
                           ({meta_keys.PROTOCOL_VERSION: V2026, meta_keys.CLIENT_CAPABILITIES: []},
                            INVALID_PARAMS),
                           ({meta_keys.PROTOCOL_VERSION: "1999-01-01", meta_keys.CLIENT_CAPABILITIES: {}},
                            UNSUPPORTED_PROTOCOL_VERSION)):
        error = wire.call("tools/call", {**plain, "_meta": odd_meta})["error"]
        assert error["code"] == code
    who = wire.call("tools/call", {"name": "whoami", "arguments": {},
                                   "_meta": meta({"sampling": {}})})["result"]
    assert who["structuredContent"]["sampling"] is True
    who = wire.call("tools/call", {"name": "whoami", "arguments": {}, "_meta": meta()})["result"]
    assert who["structuredContent"] == {"version": V2026, "client": None, "sampling": False,
                                        "level": "off"}
    assert wire.call("ping", {"_meta": meta()})["error"]["code"] == METHOD_NOT_FOUND


def test_the_context_factory_fills_a_context_as_its_constructor_does():
    # The connection's factory sets RequestContext's and Context's fields in place: the
    # same values as Context(...) gives, for every kind of params.
    from mcpfast.jsonrpc.context import RequestContext
    from mcpfast.server.request.context import Context as ServerContext

    app = make_server()
    connection = app.connect(lambda frame: None)
    factory = connection.session.context_factory
    channel = object()
    for request_id, params in ((1, None), (2, [1, 2]), (3, {"x": 1}), (4, {"_meta": "odd"}),
                               (5, {"_meta": {"progressToken": "p"}}), (None, {"_meta": {"progressToken": 7}}),
                               (6, {"_meta": {"progressToken": True}}), (7, {"_meta": {}})):
        made = factory(connection.session, request_id, "ping", params, channel)
        expected = ServerContext(connection.session, request_id, "ping", params, channel,
                                 connection, connection.state, connection._back_channel)
        for name in (*RequestContext.__slots__, "connection", "state", "_back_channel"):
            if name in ("_task", "_batch", "_started"):
                assert not hasattr(made, name)
                continue
            value = getattr(made, name)
            if name == "progress":
                assert (value is None) == (expected.progress is None)
                if value is not None:
                    assert value.token == expected.progress.token
            else:
                assert value == getattr(expected, name), name
        assert type(made) is ServerContext and not hasattr(made, "task_run")


def _pairs(frame: bytes) -> Any:
    return json.loads(frame, object_pairs_hook=list)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text(max_size=8),
                     lambda children: st.lists(children, max_size=4)
                     | st.dictionaries(st.text(max_size=8), children, max_size=4),
                     max_leaves=12)
_results = st.dictionaries(st.sampled_from(["content", "isError", "structuredContent", "_meta",
                                            "resultType", "x", "é"]) | st.text(max_size=6),
                           _json, max_size=5)


@settings(max_examples=200)
@given(_results)
def test_the_compiled_shaper_writes_what_the_copying_shaper_writes(result):
    # The plain shaper is an Extension whose members were encoded once from the same
    # values: the bytes of the Python shaper's copy, key order included.
    from mcpfast._core.encode import Extension, dumps, encode_response

    app = make_server(website_url="https://example.com", icons=[{"src": "https://example.com/i.png"}])
    era = app.stateless_era
    assert era is not None
    shaper = era.shaper(V2026, "tools/call")
    assert type(shaper) is Extension
    copied = shaper.otherwise(result)  # the Python shaper: a copy with the fields added
    shaped = shaper(result)
    assert dumps(shaped) == dumps(copied)
    assert _pairs(encode_response(7, shaped)) == _pairs(encode_response(7, copied))
    assert "resultType" in copied and meta_keys.SERVER_INFO in copied["_meta"]
    # Cacheable results read the cache policy per result: they are shaped in Python.
    assert type(era.shaper(V2026, "tools/list")) is not Extension


def make_meddling_server() -> Server:
    app = make_server()

    @app.tool()
    def meddle(ctx: Context) -> dict:
        outcome = {}
        for name, values in (("info", ctx.client_info), ("capabilities", ctx.client_capabilities)):
            try:
                values["sampling" if name == "capabilities" else "name"] = {} if name == "capabilities" else "meddled"
                outcome[name] = "changed"
            except TypeError:
                outcome[name] = "refused"
        return outcome

    return app


def test_real_client_meta_gets_the_requests_own_state(mcp_schema):
    # A clientInfo (and capabilities) sent: the request's own state, with its own dicts,
    # made from the kept claim; a handler changing them changes nothing for the others.
    app = make_meddling_server()
    wire = Wire(app, mcp_schema)
    info = {"name": "client", "version": "1.0"}
    real = meta(**{meta_keys.CLIENT_INFO: info})
    who = wire.call("tools/call", {"name": "whoami", "arguments": {}, "_meta": real})["result"]
    assert who["structuredContent"] == {"version": V2026, "client": "client", "sampling": False,
                                        "level": "off"}
    meddled = wire.call("tools/call", {"name": "meddle", "arguments": {}, "_meta": real})["result"]
    assert meddled["structuredContent"] == {"info": "changed", "capabilities": "changed"}
    for sent in (real, meta(), meta(**{meta_keys.CLIENT_INFO: {}}), meta({"roots": {}})):
        who = wire.call("tools/call", {"name": "whoami", "arguments": {}, "_meta": sent})["result"]
        client = "client" if sent is real else None
        assert who["structuredContent"]["client"] == client
        assert who["structuredContent"]["sampling"] is False
    # The state shared by the requests declaring nothing cannot be changed by one of them.
    for sent in (meta(), meta(**{meta_keys.CLIENT_INFO: {}})):
        meddled = wire.call("tools/call", {"name": "meddle", "arguments": {}, "_meta": sent})["result"]
        assert meddled["structuredContent"] == {"info": "refused", "capabilities": "refused"}
    # Only capabilities declared: its own state too (clientInfo a new {}).
    meddled = wire.call("tools/call", {"name": "meddle", "arguments": {},
                                       "_meta": meta({"roots": {}})})["result"]
    assert meddled["structuredContent"] == {"info": "changed", "capabilities": "changed"}
    who = wire.call("tools/call", {"name": "whoami", "arguments": {}, "_meta": meta()})["result"]
    assert who["structuredContent"]["client"] is None and who["structuredContent"]["sampling"] is False
    # A clientInfo that is not an object is refused however the claim is found.
    for odd in ("client", ["client"], None):
        error = wire.call("tools/call", {"name": "echo", "arguments": {"text": "x"},
                                         "_meta": meta(**{meta_keys.CLIENT_INFO: odd})})["error"]
        assert error["code"] == INVALID_PARAMS


def test_the_context_factory_claims_real_client_meta_as_claim_does():
    # Whether the factory finds the kept claim itself or calls claim, a request gets the
    # same state, back channel and shaper; a declaring request's state holds its own dicts.
    app = make_server()
    era = app.stateless_era
    assert era is not None
    connection = app.connect(lambda frame: None)
    factory = connection.session.context_factory
    info_key, level_key = meta_keys.CLIENT_INFO, meta_keys.LOG_LEVEL
    metas = [meta(), meta({"sampling": {}}), meta(**{info_key: {}}),
             meta(**{info_key: {"name": "c", "version": "1"}}),
             meta({"roots": {"listChanged": True}}, **{info_key: {"name": "c"}}),
             meta(**{level_key: "info"}), meta(**{level_key: "info", info_key: {"name": "c"}}),
             meta(**{info_key: {"name": "c"}, "progressToken": "p"})]
    for request_id, sent in enumerate(metas * 2):
        for method in ("tools/call", "tools/list", "resources/read"):
            params = {"name": "echo", "_meta": sent}
            made = factory(connection.session, request_id, method, params, None)
            state, back_channel, shape = era.claim(connection, method, params, sent)
            for name in ("protocol_version", "features", "client_info", "client_capabilities",
                         "log_level", "initialized"):
                assert getattr(made.state, name) == getattr(state, name), (sent, name)
            assert made._back_channel is back_channel and made.shape_result is shape
            declared = sent[meta_keys.CLIENT_CAPABILITIES] or sent.get(info_key)
            if declared:
                assert made.state is not state  # each request its own
                assert made.state.client_capabilities is sent[meta_keys.CLIENT_CAPABILITIES]
                if info_key in sent:
                    assert made.state.client_info is sent[info_key]
                else:
                    assert made.state.client_info == {}
            else:
                assert made.state is state  # shared, and unchangeable
                with pytest.raises(TypeError):
                    made.state.client_capabilities["sampling"] = {}
                with pytest.raises(TypeError):
                    made.state.client_info.update(name="x")
            assert repr(made.state) == repr(state)
