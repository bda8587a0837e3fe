"""The reply channel of one POST, the stateless legs' connections, and the feeding of a
POST's message into its connection (stubs; see the compiled module's docstring)."""

import asyncio
from typing import Any, Awaitable, Callable, Generator, Iterable, Optional, Union, final

from mcpfast._core.dispatch import ReplyChannelCore
from mcpfast._core.http_messages import HTTPResponse
from mcpfast.jsonrpc.contract import Connection
from mcpfast.transports.http.sse_stream import SSEStream

IDLE_CONNECTIONS: int

class PostReply(ReplyChannelCore):
    """The reply channel of one POST (module docstring). ``side(frame)``: where related
    messages go in JSON-only mode; ``new_stream()``: the SSE stream of the answer;
    ``headers``: the POST's headers, for checks comparing them with the body (Mcp-Param-*),
    set on the 2026-07-28 leg only; ``trace_headers``: the POST's ``traceparent`` /
    ``tracestate`` (:func:`trace_context_of`), set only when the endpoint captures them (a
    server recording spans), on every leg."""

    json_only: bool
    # None while undecided, then ("json", frame or None) or ("sse", None).
    outcome: Optional[tuple[str, Optional[bytes]]]
    stream: Optional[SSEStream]
    headers: Optional[dict[str, str]]
    trace_headers: Optional[dict[str, str]]

    def __init__(self, json_only: bool, side: Callable[[bytes], None],
                 new_stream: Callable[[], SSEStream],
                 headers: Optional[dict[str, str]] = None,
                 trace_headers: Optional[dict[str, str]] = None) -> None: ...
    def send(self, frame: bytes) -> None: ...
    def respond(self, frame: Optional[bytes]) -> None: ...
    def to_stream(self) -> SSEStream:
        """Answer with an SSE stream from now on (first related message, or a long wait)."""
    async def wait(self, timeout: Optional[float]) -> None:
        """Until the outcome is known; after ``timeout`` seconds the answer becomes a
        stream (so that keep-alive comments can flow) unless it must be JSON."""

@final
class DeferredAnswer:
    """The HTTP answer to a POST whose request is still being handled (see the compiled
    module): ``listen(listener, loop)`` calls ``listener(response)`` once it is known;
    ``cancel()`` when the client went away first; awaitable."""

    @property
    def endpoint(self) -> Any: ...
    @property
    def session(self) -> Any: ...
    @property
    def connection(self) -> Connection: ...
    @property
    def reply(self) -> PostReply: ...
    @property
    def message(self) -> Any: ...
    @property
    def admit(self) -> Optional[Callable[[HTTPResponse, Optional[bytes]], HTTPResponse]]: ...
    @property
    def lease(self) -> Optional[Lease]: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def listen(self, listener: Callable[[HTTPResponse], None], loop: asyncio.AbstractEventLoop) -> None:
        """Call ``listener(response)`` on ``loop`` once the answer is known."""
    def cancel(self) -> None:
        """The client went away before its answer; nothing once answered."""
    def __await__(self) -> Generator[Any, None, HTTPResponse]: ...

class Leg:
    """The idle connections of one stateless leg (see the compiled module)."""

    def __init__(self, make: Callable[[], Connection],
                 new_stream: Optional[Callable[[], Any]] = None) -> None: ...
    def lease(self) -> Lease:
        """A connection for one POST: an idle one (revived), else a new one."""
    def take_idle(self) -> list[Connection]:
        """The idle connections, taken out (the endpoint closes them)."""
    def __len__(self) -> int: ...

class Lease:
    """A connection serving one stateless POST (see the compiled module)."""

    @property
    def connection(self) -> Connection: ...
    def release(self) -> None: ...
    def close(self) -> None: ...

@final
class ErrorStatuses:
    """An ``admit`` for feed_post and the endpoint: gives a JSON answer that is a JSON-RPC
    error the HTTP status its code maps to in ``statuses`` (codes not there: the status
    stays). The table is the caller's (the 2026-07-28 leg's rule); this only applies it.
    ``refuse``: for an error whose code is in ``refusal_codes`` (an HTTP refusal carried by
    a JSON-RPC error: 429, 403), ``refuse(response, frame)`` makes the answer instead."""

    @property
    def statuses(self) -> dict[int, int]: ...
    @property
    def refuse(self) -> Optional[Callable[[HTTPResponse, bytes], HTTPResponse]]: ...
    @property
    def refusal_codes(self) -> frozenset[int]: ...
    def __init__(self, statuses: dict[int, int],
                 refuse: Optional[Callable[[HTTPResponse, bytes], HTTPResponse]] = None,
                 refusal_codes: Iterable[int] = ()) -> None: ...
    def __call__(self, response: HTTPResponse, frame: Optional[bytes]) -> HTTPResponse: ...

def single_lease(connection: Connection) -> Lease:
    """A lease of ``connection`` for one POST only: closed when released."""

def feed_post(endpoint: Any, session: Any, connection: Connection, message: Any, body: bytes,
              json_only: bool, admit: Optional[Callable[[HTTPResponse, Optional[bytes]], HTTPResponse]],
              lease: Optional[Lease] = None, headers: Optional[dict[str, str]] = None,
              trace: Optional[dict[str, str]] = None
              ) -> Union[HTTPResponse, DeferredAnswer, Awaitable[HTTPResponse]]:
    """Feed a POST's decoded message into its connection (see the compiled module)."""

def bind_token(connection: Connection, token: Any) -> None:
    """Give ``connection`` the caller's verified access token (its ``auth``: ctx.auth)."""

def bind_peer(connection: Connection, client: tuple[str, int]) -> None:
    """Tell ``connection`` its client's (host, port) (its ``peer_address`` / ``peer_port``)."""

def feed_leased(endpoint: Any, lease: Lease, message: Any, body: bytes, json_only: bool,
                admit: Optional[Callable[[HTTPResponse, Optional[bytes]], HTTPResponse]],
                token: Any, headers: Optional[dict[str, str]] = None,
                client: Optional[tuple[str, int]] = None,
                trace: Optional[dict[str, str]] = None
                ) -> Union[HTTPResponse, DeferredAnswer, Awaitable[HTTPResponse]]:
    """feed_post of a stateless POST into its leased connection, bound to ``token`` and
    ``client`` first."""

def trace_context_of(headers: dict[str, str]) -> Optional[dict[str, str]]:
    """A POST's ``traceparent`` (and ``tracestate``) headers as a new dict; None without a
    ``traceparent``."""
