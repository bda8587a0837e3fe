"""mcpfast.server.context_factories: the compiled factories a connection's session calls
for each request's Context (the fields they set are compared with Context's constructor
in test_stateless_era.py; here: which factory, the gate, the claims, a progress token)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpfast import Server
from mcpfast._core.dispatch import ContextFactory
from mcpfast.jsonrpc.errors import NOT_INITIALIZED, JSONRPCError
from mcpfast.protocol import meta_keys
from mcpfast.server.context_factories import EitherEraContexts, HandshakeContexts
from mcpfast.server.request.context import Context
from mcpfast.server.request.state_source import RequestState

V2026 = "2026-07-28"


def make_server(**options: Any) -> Server:
    app = Server("factories", **options)

    @app.tool()
    def echo(text: str) -> str:
        return text

    return app


def meta(**extra: Any) -> dict[str, Any]:
    return {meta_keys.PROTOCOL_VERSION: V2026, meta_keys.CLIENT_CAPABILITIES: {}, **extra}


def test_each_connection_gets_the_factory_of_its_server():
    both = make_server().connect(lambda frame: None)
    assert type(both.session.context_factory) is EitherEraContexts
    handshake = make_server(stateless=False).connect(lambda frame: None)
    assert type(handshake.session.context_factory) is HandshakeContexts

    class Source:
        def state_for(self, connection: Any, method: str, params: Any) -> RequestState | None:
            return None

    # A server with state sources of its own keeps the Python factory that asks them.
    sourced = make_server(state_sources=[Source()]).connect(lambda frame: None)
    assert not isinstance(sourced.session.context_factory, ContextFactory)


@pytest.mark.parametrize("stateless", [True, False])
def test_the_initialization_gate_is_checked_while_closed(stateless):
    connection = make_server(stateless=stateless).connect(lambda frame: None)
    factory = connection.session.context_factory
    with pytest.raises(JSONRPCError) as refused:
        factory(connection.session, 1, "tools/list", None)
    assert refused.value.code == NOT_INITIALIZED
    # Methods allowed before initialization, and notifications, pass.
    assert factory(connection.session, 2, "ping", None).state is connection.state
    assert factory(connection.session, None, "tools/list", None).state is connection.state
    connection.mark_initialized()
    ctx = factory(connection.session, 3, "tools/list", {"cursor": "c"})
    assert type(ctx) is Context
    assert ctx.connection is connection and ctx.state is connection.state
    assert ctx._back_channel is connection._back_channel and ctx.shape_result is None


@pytest.mark.parametrize("stateless", [True, False])
def test_a_progress_token_gets_a_reporter(stateless):
    connection = make_server(stateless=stateless).connect(lambda frame: None)
    connection.mark_initialized()
    factory = connection.session.context_factory
    ctx = factory(connection.session, 1, "tools/call", {"_meta": {"progressToken": "tok"}})
    assert ctx.progress is not None and ctx.progress.token == "tok"
    assert factory(connection.session, 2, "tools/call", {"_meta": {}}).progress is None
    # A notification's token is no request's: no reporter.
    assert factory(connection.session, None, "tools/call", {"_meta": {"progressToken": "t"}}).progress is None


def test_a_2026_request_is_claimed_by_its_meta_whatever_the_gate():
    app = make_server()
    era = app.stateless_era
    assert era is not None
    connection = app.connect(lambda frame: None)
    factory = connection.session.context_factory
    # The connection is not initialized: a 2026-07-28 request needs no handshake.
    for sent in (meta(), meta(progressToken=5), meta(**{meta_keys.LOG_LEVEL: "info"})):
        params = {"name": "echo", "arguments": {"text": "x"}, "_meta": sent}
        ctx = factory(connection.session, 1, "tools/call", params)
        state, back_channel, shape = era.claim(connection, "tools/call", params, sent)
        assert ctx.state.protocol_version == V2026 and ctx.state is not connection.state
        assert ctx._back_channel is back_channel and ctx.shape_result is shape
        assert (ctx.progress is not None) == ("progressToken" in sent)
    # The kept claim is the one claim() keeps (looked up without calling it).
    params = {"name": "echo", "_meta": meta()}
    assert factory(connection.session, 2, "tools/call", params).state is \
        era.claims[(V2026, None, "tools/call")][0]


def test_answers_brought_by_a_retry_are_checked_by_claim():
    # requestState / inputResponses in the params of a method that may ask for input: the
    # kept claim is not used; claim() checks what was brought (here: a forged state).
    app = make_server()
    connection = app.connect(lambda frame: None)
    factory = connection.session.context_factory
    params = {"name": "echo", "arguments": {"text": "x"}, "_meta": meta(), "requestState": "forged"}
    with pytest.raises(JSONRPCError):
        factory(connection.session, 1, "tools/call", params)


def test_the_bases_say_what_a_subclass_must_define():
    from mcpfast._core.dispatch import RouteHandler

    with pytest.raises(NotImplementedError, match="make"):
        ContextFactory()(None, 1, "m", None)
    with pytest.raises(NotImplementedError, match="handle"):
        RouteHandler()(None, None)
