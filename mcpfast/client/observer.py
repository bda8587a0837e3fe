"""RequestObserver: the hook a Client calls around each request it sends (telemetry,
audit, timing), declared here so that the client never imports what observes it.

``Client(observer=...)``: before a request goes out, ``request_started(method, params)``
returns the params to send (it may add to ``_meta``, e.g. trace context; the caller's dict
is left as it was) and a token; once the answer is in (or the request failed),
``request_ended(token, result, error)`` gets it; in between, ``request_sent(token, id)``
tells the JSON-RPC id it went out with (where one request is one JSON-RPC request: not
for a 2026-07-28 request, which may take several rounds). ``session_started(client)`` /
``session_ended(client)`` bracket the conversation (initialize or server/discover done;
the connection gone). Requests of the handshake itself (initialize, server/discover) and
2026-07-28 pings are not observed; each 2026-07-28 request is observed once, across its
InputRequiredResult retries.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional, Protocol

__all__ = ["RequestObserver", "observe_request", "observe_send_request", "request_through"]


class RequestObserver(Protocol):
    """What observes a Client's requests (module docstring)."""

    def request_started(self, method: str, params: Any) -> tuple[Any, Any]: ...

    def request_sent(self, token: Any, request_id: Any) -> None: ...

    def request_ended(self, token: Any, result: Any, error: Optional[BaseException]) -> None: ...

    def session_started(self, client: Any) -> None: ...

    def session_ended(self, client: Any) -> None: ...


def observe_request(request: Callable[..., Any], observer: RequestObserver) -> Callable[..., Any]:
    """``request(method, params, **options)`` (a coroutine function) observed."""

    async def observed(method: str, params: Any = None, **options: Any) -> Any:
        params, token = observer.request_started(method, params)
        try:
            result = await request(method, params, **options)
        except BaseException as exc:
            observer.request_ended(token, None, exc)
            raise
        observer.request_ended(token, result, None)
        return result

    return observed


def observe_send_request(send_request: Callable[..., Any], observer: RequestObserver) -> Callable[..., Any]:
    """``send_request(method, params, **options)`` (returning a handle with a ``future``)
    observed: the end is seen when the handle's future is done."""

    def observed(method: str, params: Any = None, **options: Any) -> Any:
        params, token = observer.request_started(method, params)
        try:
            out = send_request(method, params, **options)
        except BaseException as exc:
            observer.request_ended(token, None, exc)
            raise
        request_id = getattr(out, "id", None)
        if request_id is not None:
            observer.request_sent(token, request_id)

        def ended(future: Any) -> None:
            if future.cancelled():
                observer.request_ended(token, None, asyncio.CancelledError())
            elif future.exception() is not None:
                observer.request_ended(token, None, future.exception())
            else:
                observer.request_ended(token, future.result(), None)

        out.future.add_done_callback(ended)
        return out

    return observed


def request_through(send_request: Callable[..., Any]) -> Callable[..., Any]:
    """A ``request(method, params, **options)`` coroutine function made of ``send_request``
    (as ``Session.request`` is): awaits the handle's future; a cancelled caller cancels
    the request (the peer is told)."""

    async def request(method: str, params: Any = None, **options: Any) -> Any:
        out = send_request(method, params, **options)
        try:
            return await out.future
        except asyncio.CancelledError as exc:
            out.cancel(exc.args[0] if exc.args and isinstance(exc.args[0], str) else None)
            raise

    return request
