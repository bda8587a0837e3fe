"""The Streamable HTTP endpoint's extra GET routes (mcpfast.transports.http.extra_routes):
a route answering at once or with an awaitable, HEAD without the body, a failing route's
500 (sync or async), the methods refused and the Host check."""

from __future__ import annotations

import asyncio
from typing import Any

from endpoint_requests import answer
from mcpfast import Server
from mcpfast.transports.http import HTTPRequest, HTTPResponse


async def later(request: HTTPRequest) -> tuple[int, list[tuple[str, str]], bytes]:
    await asyncio.sleep(0)
    return 200, [("content-type", "text/plain")], f"later {request.path}".encode()


def now(request: HTTPRequest) -> tuple[int, list[tuple[str, str]], bytes]:
    return 201, [("x-route", "now")], b"now"


def broken(request: HTTPRequest) -> Any:
    raise RuntimeError("the route broke")


async def broken_later(request: HTTPRequest) -> Any:
    raise RuntimeError("the route broke later")


async def not_a_triple(request: HTTPRequest) -> Any:
    return "not (status, headers, body)"


ROUTES = {"/later": later, "/now": now, "/broken": broken, "/broken-later": broken_later,
          "/odd": not_a_triple}


def get(path: str, method: str = "GET", host: str = "127.0.0.1:8000") -> HTTPRequest:
    return HTTPRequest(method, path, {"host": host})


def test_routes_answer_at_once_or_later_and_fail_with_500():
    async def main() -> None:
        endpoint = Server("routes").http_endpoint(extra_routes=ROUTES)
        immediate = endpoint.handle(get("/now"))
        assert isinstance(immediate, HTTPResponse)
        assert (immediate.status, immediate.headers, immediate.body) == (201, [("x-route", "now")], b"now")
        awaited = endpoint.handle(get("/later"))
        assert not isinstance(awaited, HTTPResponse)
        response = await answer(awaited)
        assert (response.status, response.body) == (200, b"later /later")
        head = await answer(endpoint.handle(get("/later", "HEAD")))
        assert (head.status, head.body) == (200, b"")
        for path in ("/broken", "/broken-later", "/odd"):
            failed = await answer(endpoint.handle(get(path)))
            assert (failed.status, failed.body) == (500, b"Internal Server Error\n"), path
        refused = await answer(endpoint.handle(get("/later", "POST")))
        assert refused.status == 405 and refused.header("allow") == "GET, HEAD"
        assert (await answer(endpoint.handle(get("/later", host="evil.example")))).status == 421
        endpoint.close()

    asyncio.run(main())
