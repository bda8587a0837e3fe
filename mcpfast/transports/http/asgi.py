"""The Streamable HTTP endpoint as an ASGI 3 application.

``ASGIApp(endpoint)`` serves HTTP requests to the endpoint's path (others get 404 from the
endpoint, so mount it where it belongs: ``Mount("/", app)`` in Starlette, or give the
endpoint the full path). The body is read up to the endpoint's ``max_body_size`` (413
beyond, without reading the rest); SSE answers are sent chunk by chunk, and a client that
disconnects (``http.disconnect``) ends its stream and, through the endpoint, cancels its
request. ``lifespan`` startup runs ``on_startup`` (the MCP server connects what it shares
with other processes: a Redis publisher or task store) -- or, under a server that sends no
lifespan events (a Starlette ``Mount`` does not pass them on), the first request does;
shutdown ends every session, then runs ``on_shutdown`` (the server's lifespan exits).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, MutableMapping, Optional

from mcpfast.transports.http.endpoint import HTTPEndpoint
from mcpfast.transports.http.messages import HTTPRequest, HTTPResponse, json_error_response

__all__ = ["ASGIApp"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _header_list(response: HTTPResponse) -> list[tuple[bytes, bytes]]:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.headers]


class ASGIApp:
    """An ASGI application around an HTTP endpoint (module docstring)."""

    def __init__(self, endpoint: HTTPEndpoint,
                 on_startup: Callable[[], Awaitable[None]] | None = None,
                 on_shutdown: Callable[[], Awaitable[None]] | None = None) -> None:
        self.endpoint = endpoint
        self.on_startup = on_startup
        self.on_shutdown = on_shutdown
        self._started: asyncio.Future[None] | None = None

    async def _startup(self) -> None:
        # Once, whichever comes first: the lifespan startup or the first request.
        if self._started is None:
            self._started = asyncio.get_running_loop().create_future()
            try:
                if self.on_startup is not None:
                    await self.on_startup()
            except BaseException as exc:
                self._started.set_exception(exc)
                raise
            self._started.set_result(None)
        else:
            await asyncio.shield(self._started)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self._started is None or not self._started.done():
                try:
                    await self._startup()
                except Exception:
                    pass
            failed = self._started.exception() if self._started is not None else None
            if failed is not None:
                # What the server shares with other processes is out of reach: every request
                # gets the reason (503) instead of half a service.
                await self._send_whole(send, json_error_response(
                    503, -32603, f"Service Unavailable: {failed}"))
                return
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:
            raise ValueError(f"mcpfast's ASGI app serves http, not {kind}")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._startup()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.endpoint.begin_shutdown()
                self.endpoint.close()
                if self.on_shutdown is not None:
                    try:
                        await self.on_shutdown()
                    except Exception as exc:
                        await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
                        return
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope.get("headers", ()):
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            previous = headers.get(name)
            headers[name] = value if previous is None else f"{previous}, {value}"
        limit = self.endpoint.max_body_size
        chunks: list[bytes] = []
        size = 0
        length = headers.get("content-length", "")
        too_large = length.isdigit() and int(length) > limit
        more = not too_large
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > limit:
                too_large = True
                break
            chunks.append(body)
            more = message.get("more_body", False)
        if too_large:
            await self._send_whole(send, json_error_response(
                413, -32600, f"Payload Too Large: the body is over {limit} bytes"))
            return
        path = scope.get("root_path", "") + scope.get("path", "/")
        query = scope.get("query_string", b"").decode("latin-1")
        request = HTTPRequest(scope.get("method", "GET"), path, headers, b"".join(chunks), query,
                              _client_of(scope))
        outcome = self.endpoint.handle(request)
        if not isinstance(outcome, HTTPResponse):
            waiting = asyncio.ensure_future(outcome)
            disconnect = asyncio.ensure_future(_wait_disconnect(receive))
            try:
                await asyncio.wait({waiting, disconnect}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                disconnect.cancel()
                if not waiting.done():
                    # The client left (or we are cancelled): the request is cancelled.
                    waiting.cancel()
                    await asyncio.gather(waiting, return_exceptions=True)
            if waiting.cancelled():
                return
            outcome = waiting.result()
        if outcome.stream is None:
            await self._send_whole(send, outcome)
        else:
            await self._send_stream(receive, send, outcome)

    async def _send_whole(self, send: Send, response: HTTPResponse) -> None:
        try:
            await send({"type": "http.response.start", "status": response.status,
                        "headers": _header_list(response)
                        + [(b"content-length", str(len(response.body)).encode())]})
            await send({"type": "http.response.body", "body": response.body})
        except OSError:
            response.close(disconnected=True)
            return
        response.close()

    async def _send_stream(self, receive: Receive, send: Send, response: HTTPResponse) -> None:
        stream = response.stream
        assert stream is not None
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        disconnected = False
        try:
            await send({"type": "http.response.start", "status": response.status,
                        "headers": _header_list(response)})
            iterator = stream.__aiter__()
            while True:
                step = asyncio.ensure_future(iterator.__anext__())
                await asyncio.wait({step, watcher}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    step.cancel()
                    await asyncio.gather(step, return_exceptions=True)
                    disconnected = True
                    return
                try:
                    chunk = step.result()
                except StopAsyncIteration:
                    break
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except OSError:
            disconnected = True
        finally:
            watcher.cancel()
            response.close(disconnected=disconnected)
            await stream.aclose()  # type: ignore[attr-defined]


def _client_of(scope: Scope) -> Optional[tuple[str, int]]:
    # The ASGI server's (host, port) of the client (a list or tuple), when it gives one.
    client = scope.get("client")
    if isinstance(client, (list, tuple)) and len(client) == 2 and isinstance(client[0], str) \
            and isinstance(client[1], int):
        return (client[0], client[1])
    return None


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
