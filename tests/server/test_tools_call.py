"""mcpfast.server.tools_call: the compiled tools/call handler makes the common call itself
and gives every other one to the full handler (whose answers test_tools.py checks)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfast import Server
from mcpfast.server.tools_call import ToolsCall


class Tool:
    def __init__(self, direct: Any) -> None:
        self._direct = direct


class State:
    features = "features"


class Ctx:
    state = State()


def direct(arguments: Any, ctx: Any, features: Any) -> Any:
    return ("direct", arguments, features)


def fully(params: Any, ctx: Any) -> Any:
    return ("fully", params)


def test_the_common_call_runs_the_tools_direct_call():
    handler = ToolsCall({"t": Tool(direct)}, fully)
    assert handler({"name": "t", "arguments": {"a": 1}}, Ctx()) == ("direct", {"a": 1}, "features")
    # No arguments: the tool's call decides (None given).
    assert handler({"name": "t"}, Ctx()) == ("direct", None, "features")


@pytest.mark.parametrize("params", [
    None, [1], "t", {}, {"name": 5}, {"name": None}, {"name": "missing"},
    {"name": "t", "task": {}}, {"name": "own"},
])
def test_every_other_call_goes_to_the_full_handler(params):
    handler = ToolsCall({"t": Tool(direct), "own": Tool(None)}, fully)
    assert handler(params, Ctx()) == ("fully", params)


def test_tools_added_later_are_found():
    tools: dict[str, Any] = {}
    handler = ToolsCall(tools, fully)
    assert handler({"name": "t"}, Ctx())[0] == "fully"
    tools["t"] = Tool(direct)
    assert handler({"name": "t"}, Ctx())[0] == "direct"


def test_arguments_are_checked():
    with pytest.raises(TypeError):
        ToolsCall(None, fully)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        ToolsCall({}, "fully")  # type: ignore[arg-type]


def test_the_server_routes_tools_call_to_it():
    app = Server("tools")

    @app.tool()
    def echo(text: str) -> str:
        return text

    route = app.router.requests["tools/call"]
    assert type(route.handler) is ToolsCall and route.is_async is False


def test_the_servers_own_tool_context_and_state_are_read_through_their_slots():
    """With the real Tool, Context and ProtocolState the handler reads their slots through
    descriptors fetched once (no lookup in the type); a subclass of each is read as any
    object is, so whatever it defines under those names counts."""
    from mcpfast.server.features.tools import Tool as RealTool
    from mcpfast.server.request.context import Context
    from mcpfast.server.request.state import ProtocolState

    app = Server("tools")

    @app.tool()
    def echo(text: str) -> str:
        return text

    tool = app.tools_catalog.items["echo"]
    assert type(tool) is RealTool
    calls = []

    def seen(arguments: Any, ctx: Any, features: Any) -> Any:
        calls.append((arguments, features))
        return "seen"

    state = ProtocolState(version="2025-11-25")
    ctx = Context.__new__(Context)
    ctx.state = state
    original = tool._direct
    tool._direct = seen
    try:
        handler = ToolsCall({"echo": tool}, fully)
        assert handler({"name": "echo", "arguments": {"text": "x"}}, ctx) == "seen"
        assert calls == [({"text": "x"}, state.features)]

        class OwnState(ProtocolState):
            __slots__ = ()

            @property  # type: ignore[misc]
            def features(self) -> Any:
                return "own features"

        class OwnTool(RealTool):
            __slots__ = ()

            @property  # type: ignore[misc]
            def _direct(self) -> Any:
                return seen

        own = OwnTool.__new__(OwnTool)
        ctx.state = OwnState.__new__(OwnState)
        assert ToolsCall({"echo": own}, fully)({"name": "echo"}, ctx) == "seen"
        assert calls[-1] == (None, "own features")
    finally:
        tool._direct = original
