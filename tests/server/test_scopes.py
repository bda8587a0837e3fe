"""scopes= on tools, resources, templates and prompts: the ScopeCheck middleware the server
installs refuses calls without the scopes (a JSON-RPC error off HTTP) and filters lists."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import mcpfast
from mcpfast import AccessToken, Server
from mcpfast.jsonrpc import JSONRPCError
from mcpfast.jsonrpc.errors import INSUFFICIENT_SCOPE
from mcpfast.server.middleware import RateLimit, ScopeCheck


def scoped_app() -> Server:
    app = Server("scoped", middleware=[RateLimit(rate=100)])

    @app.tool(scopes=["admin"])
    def wipe() -> str:
        return "wiped"

    @app.tool()
    def hello() -> str:
        return "hi"

    @app.resource("secret://plans", scopes=["plans:read"])
    def plans() -> str:
        return "plans"

    @app.resource("public://notes")
    def notes() -> str:
        return "notes"

    @app.resource("docs://{name}", scopes=["docs"])
    def doc(name: str) -> str:
        return f"doc {name}"

    @app.prompt(scopes=["prompts"])
    def brief() -> str:
        return "brief"

    return app


def test_the_scope_check_is_installed_outermost_once() -> None:
    app = scoped_app()
    checks = [mw for mw in app.middleware if isinstance(mw, ScopeCheck)]
    assert len(checks) == 1 and app.middleware[0] is checks[0] is app.scope_check
    assert isinstance(app.middleware[1], RateLimit)
    assert app.scope_check.tools == {"wipe": frozenset({"admin"})}
    assert Server("plain").middleware == ()  # no scopes, no middleware, the compiled path


def test_without_a_token_scoped_components_are_hidden_and_refused() -> None:
    async def main() -> None:
        async with mcpfast.connect(scoped_app()) as client:
            assert [t["name"] for t in await client.list_tools()] == ["hello"]
            assert [r["uri"] for r in await client.list_resources()] == ["public://notes"]
            assert await client.list_resource_templates() == []
            assert await client.list_prompts() == []
            for attempt, needed in ((client.call_tool("wipe", {}), ["admin"]),
                                    (client.read_resource("secret://plans"), ["plans:read"]),
                                    (client.read_resource("docs://a"), ["docs"]),
                                    (client.get_prompt("brief"), ["prompts"])):
                with pytest.raises(JSONRPCError) as caught:
                    await attempt
                assert caught.value.code == INSUFFICIENT_SCOPE
                assert caught.value.data == {"requiredScopes": needed}
                assert " ".join(needed) in caught.value.message
            assert (await client.call_tool("hello", {}))["content"][0]["text"] == "hi"

    asyncio.run(main())


class FakeContext:
    """The two attributes the check reads."""

    def __init__(self, scopes: Any, method: str = "tools/call", params: Any = None) -> None:
        self.auth = AccessToken("u", scopes) if scopes is not None else None
        self.method = method
        self.params = params


def test_the_rule_with_a_token() -> None:
    check = scoped_app().scope_check
    assert check.allowed(FakeContext({"admin", "x"}), frozenset({"admin"}))
    assert not check.allowed(FakeContext({"x"}), frozenset({"admin"}))
    assert not check.allowed(FakeContext(None), frozenset({"admin"}))
    assert check.allowed(FakeContext(None), frozenset())
    assert check.resource_scopes("docs://anything") == {"docs"}
    assert check.resource_scopes("public://notes") == frozenset()
    assert check.resource_scopes(42) == frozenset()


def test_replacing_a_component_without_scopes_clears_them_and_bad_scopes_are_refused() -> None:
    app = scoped_app()

    @app.tool(name="wipe")
    def wipe_again() -> str:
        return "open now"

    assert "wipe" not in app.scope_check.tools
    with pytest.raises(TypeError, match="not one str"):
        app.tool(scopes="admin")(lambda: None)
    with pytest.raises(ValueError, match="visible characters"):
        app.tool(name="x", scopes=["has space"])(lambda: None)
