"""One home for each MCP rule: where compiled code takes a shortcut that an MCP rule
decides, a property test proves, on generated inputs, that the shortcut answers what the
Python rule answers.

- ``tools_call.pyx`` runs a known tool's compiled call when the call asks for no task;
  the full Python handler (``ToolsCall.fully``) decides every call. Same outcome for every
  generated call.
- ``context_factories.pyx`` reuses the claim :class:`StatelessEra` keeps for the commonest
  2026-07-28 ``_meta``; ``StatelessEra.claim`` decides every request. Same state, back
  channel and result shaper, or the same error, for every generated request.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfast import Server
from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.protocol import meta_keys
from mcpfast.server.tools_call import ToolsCall

V2025 = "2025-11-25"
V2026 = "2026-07-28"
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

_ABSENT = object()


def make_server() -> Server:
    app = Server("rules")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def add(a: int, b: int = 1) -> int:
        return a + b

    @app.tool()
    async def later(text: str) -> str:
        return text.upper()

    @app.tool(task_support="optional")
    def chore(n: int) -> int:
        return n * 2

    @app.tool()
    def fails(text: str) -> str:
        raise ValueError(f"no {text}")

    return app


def outcome(run: Any) -> Any:
    """What a handler call comes to: its result (a coroutine awaited) or its error."""
    try:
        result = run()
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        return ("result", result)
    except JSONRPCError as exc:
        return ("error", exc.code, exc.message, exc.data)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4)
well_formed = st.fixed_dictionaries({}, optional={
    "text": st.text(max_size=4), "a": st.integers(-9, 9), "b": st.integers(-9, 9),
    "n": st.integers(-9, 9)})
arguments = st.one_of(
    well_formed, well_formed, well_formed, st.none(), json_values,
    st.fixed_dictionaries({}, optional={"text": json_values, "a": json_values, "b": json_values,
                                        "n": json_values, "extra": json_values}))
tool_params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"name": st.sampled_from(["echo", "add", "later", "fails", "chore", "missing", 5, None])},
        optional={"arguments": arguments, "task": st.sampled_from([{}, {"ttl": 1000}, None]),
                  "_meta": st.just({})}))


@SETTINGS
@given(params=tool_params, version=st.sampled_from([V2025, "2025-06-18"]))
def test_the_compiled_tools_call_answers_what_the_python_handler_answers(params, version):
    app = make_server()
    connection = app.connect(lambda frame: None)
    connection.state.negotiate(version, {}, {})
    connection.mark_initialized()
    route = app.router.route_request("tools/call")
    assert route is not None
    handler = route.handler
    assert isinstance(handler, ToolsCall)

    def context() -> Any:
        return connection.session.context_factory(connection.session, 1, "tools/call", params)

    compiled = outcome(lambda: handler(params, context()))
    python = outcome(lambda: handler.fully(params, context()))
    if (type(params) is dict and params.get("name") == "chore"
            and compiled[0] == "result" and python[0] == "result"):
        # A task tool's calls are tasks both ways (their ids differ): compare the kind.
        compiled, python = _task_shape(compiled[1]), _task_shape(python[1])
    assert compiled == python


def _task_shape(result: Any) -> Any:
    if type(result) is dict and "task" in result:
        return ("task", sorted(result["task"]))
    return result


_DROP = object()


@st.composite
def metas(draw: Any) -> dict[str, Any]:
    """A 2026-07-28 ``_meta``: mostly well formed (the compiled shortcut's case), else
    with one value of a wrong type, a version not spoken, or a key left out."""
    meta = {meta_keys.PROTOCOL_VERSION: draw(st.sampled_from(
        [V2026] * 12 + [V2025, "2099-01-01", 5, None]))}
    for key, values in ((meta_keys.CLIENT_CAPABILITIES, [{}] * 6 + [{"sampling": {}}, [], "x", None, _DROP]),
                        (meta_keys.CLIENT_INFO, [_DROP] * 4 + [{}, {"name": "c", "version": "1"}, "bad", None]),
                        (meta_keys.LOG_LEVEL, [_DROP] * 4 + ["info", "debug", "nope", 3, None]),
                        ("progressToken", [_DROP] * 6 + ["tok", 7])):
        value = draw(st.sampled_from(values))
        if value is not _DROP:
            meta[key] = value
    return meta


methods = st.sampled_from(["tools/call", "tools/list", "prompts/get", "resources/read",
                           "resources/subscribe", "ping", "logging/setLevel", "x/y"])
extras = st.one_of(st.just({}), st.just({}), st.just({}), st.fixed_dictionaries(
    {}, optional={"requestState": st.sampled_from(["forged", 5]),
                  "inputResponses": st.sampled_from([{}, "x"])}))


def claim_of(run: Any) -> Any:
    """A claim compared by value: the state's fields, the back channel's kind, the shaper."""
    try:
        state, back_channel, shape = run()
    except JSONRPCError as exc:
        return ("error", exc.code, exc.message, exc.data)
    return ("claim", state.protocol_version, state.features, state.client_info,
            state.client_capabilities, state.log_level, state.initialized,
            None if back_channel is None else type(back_channel), shape)


@SETTINGS
@given(meta=metas(), method=methods, extra=extras)
def test_the_compiled_context_factory_claims_what_the_stateless_era_claims(meta, method, extra):
    app = make_server()
    era = app.stateless_era
    assert era is not None
    connection = app.connect(lambda frame: None)
    factory = connection.session.context_factory
    params = {"name": "echo", "_meta": meta, **extra}

    def by_factory() -> Any:
        ctx = factory(connection.session, 1, method, params)
        return ctx.state, ctx._back_channel, ctx.shape_result

    python = claim_of(lambda: era.claim(connection, method, params, meta))
    # Twice: the first may keep a claim, the second may then take the compiled shortcut.
    assert claim_of(by_factory) == python
    assert claim_of(by_factory) == python
    assert claim_of(lambda: era.claim(connection, method, params, meta)) == python
