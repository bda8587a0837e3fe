"""The compiled transport objects hold sockets, connections and callables of one process:
pickling one is refused (TypeError), never a copy of its internals."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any, Callable

import pytest

from mcpfast import Server
from mcpfast.transports.http.http_connection import HTTPServerProtocol
from mcpfast.transports.http.post_front import LastJudged
from mcpfast.transports.http.post_reply import ErrorStatuses, Leg, PostReply
from mcpfast.transports.ws_listener import MCPListener


def _endpoint_parts() -> list[Any]:
    async def make() -> list[Any]:
        endpoint = Server("p").http_endpoint(stateless=True)
        leg = Leg(lambda: None)
        return [endpoint._front, leg, HTTPServerProtocol(endpoint, 0, set())]

    return asyncio.run(make())


MAKERS: list[tuple[str, Callable[[], list[Any]]]] = [
    ("front door, leg, connection", _endpoint_parts),
    ("last verdict", lambda: [LastJudged()]),
    ("reply channel", lambda: [PostReply(False, print, print)]),
    ("error statuses", lambda: [ErrorStatuses({-32601: 404})]),
    ("websocket listener", lambda: [MCPListener(print)]),
]


@pytest.mark.parametrize("name, make", MAKERS, ids=[name for name, _ in MAKERS])
def test_pickling_is_refused(name: str, make: Callable[[], list[Any]]) -> None:
    for obj in make():
        with pytest.raises(TypeError):
            pickle.dumps(obj)
