"""Context: what a tool, resource, prompt or completion handler knows about its request.

A handler gets the Context by declaring a parameter annotated ``Context`` (any name)::

    @app.tool()
    async def crunch(n: int, ctx: Context) -> str:
        ctx.info(f"crunching {n}")
        await ctx.report_progress(0.5, 1.0)
        answer = await ctx.sample(f"What is {n} squared?", max_tokens=20)
        return answer.text

Every request has its own Context (a :class:`~mcpfast.jsonrpc.RequestContext` subclass
built by the session), and every Context reads the protocol facts -- version, client info
and capabilities, log level -- from ``ctx.state``, a :class:`ProtocolState`. For the
handshake versions the state is the connection's, filled once by ``initialize``; for the
stateless 2026-07-28 era it is built per request from the request's ``_meta``. Handlers
never need to know which.

What it offers:

- identity: ``request_id``, ``method``, ``params``, ``meta``, ``session`` (the JSON-RPC
  Session), ``connection`` (the ServerConnection), ``server``;
  protocol: ``protocol_version``, ``features``, ``client_info``, ``client_capabilities``,
  ``log_level``;
- cancellation: ``cancelled`` (True once the client cancelled; an async handler's task is
  cancelled as well), ``cancel_reason``;
- logging: ``log(level, data, logger=None)``, ``debug`` / ``info`` / ``notice`` /
  ``warning`` / ``error`` / ``critical`` / ``alert`` / ``emergency``;
- progress: ``report_progress(progress, total=None, message=None)``;
- requests to the client: ``await sample(...)``, ``await elicit(message, schema)``,
  ``await elicit_url(...)``, ``await list_roots()``, ``await ping()``, all through
  ``back_channel`` (:mod:`mcpfast.server.request.back_channel`): the connection's session; under
  2026-07-28 an InputRequiredResult and the client's retry
  (:mod:`mcpfast.server.request.input_required`; ``input_key=`` names the input there); where
  there is no way back to the client, one that fails at once naming the method;
- ``await read_resource(uri)``: read one of this server's resources;
- tasks: ``await run_as_task()``, ``task_id`` (:mod:`mcpfast.server.tasks.manager`).

Logging and progress are sent at once; they return an already-completed awaitable that is
truthy when something was sent, so both ``ctx.info("x")`` (sync code) and
``await ctx.info("x")`` (the style other MCP SDKs use) work. Messages about a request go
on the request's reply channel while it runs (for Streamable HTTP: its SSE stream).
"""

from __future__ import annotations

import inspect
import uuid
from typing import TYPE_CHECKING, Any, Mapping, Optional, Protocol, Sequence

from mcpfast.auth import AccessToken
from mcpfast.jsonrpc.context import RequestContext
from mcpfast.protocol import methods
from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.logs import level_index
from mcpfast.server.request.back_channel import SESSION_BACK_CHANNEL, BackChannel, BackChannelUnavailable, NoBackChannel
from mcpfast.server.request.input_required import input_channel
from mcpfast.server.request.requests_to_client import (
    ElicitationResult,
    Root,
    SamplingResult,
    elicitation_params,
    elicitation_url_params,
    parse_elicitation_result,
    parse_roots,
    parse_sampling_result,
    require_capability,
    sampling_params,
)
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.schema import to_jsonable

if TYPE_CHECKING:
    from mcpfast.jsonrpc.session import ReplyChannel, Session
    from mcpfast.server.core import ConnectionHandle, ServerCore

__all__ = ["Context", "Sent"]

LOG_METHOD = methods.LOG_MESSAGE


class Sent:
    """The outcome of a log or progress call: truthy when a message was sent, and an
    awaitable that completes at once (with the same bool)."""

    __slots__ = ("sent",)

    def __init__(self, sent: bool) -> None:
        self.sent = sent

    def __bool__(self) -> bool:
        return self.sent

    def __await__(self):
        return self.sent
        yield  # makes __await__ a generator that finishes immediately

    def __repr__(self) -> str:
        return "<Sent>" if self.sent else "<Sent: nothing>"


SENT = Sent(True)
NOT_SENT = Sent(False)


class TaskHandle(Protocol):
    """What a request's context uses of the task its tools/call may become
    (:class:`~mcpfast.server.tasks.TaskRun` is one)."""

    # The task's record once it is a task (with its ``task_id``), else None.
    record: Any

    async def escalate(self) -> bool:
        """Become a task now; False when the request allows none."""


class Context(RequestContext):
    """Context of one request or notification handled by the MCP server (module docstring)."""

    # task_run: the TaskRun of a tools/call that may become a task (set only then).
    # _back_channel: None for a 2026-07-28 request whose channel is made on first use.
    __slots__ = ("connection", "state", "_back_channel", "task_run")
    task_run: TaskHandle

    def __init__(
        self,
        session: Session,
        request_id: Any,
        method: str,
        params: Any,
        channel: Optional[ReplyChannel] = None,
        connection: Optional[ConnectionHandle] = None,
        state: Optional[ProtocolState] = None,
        back_channel: BackChannel = SESSION_BACK_CHANNEL,
    ) -> None:
        # ServerConnection's context factories set the same fields without this frame:
        # a field added here goes there too.
        RequestContext.__init__(self, session, request_id, method, params, channel)
        self.connection = connection
        self.state = state if state is not None else ProtocolState()
        self._back_channel: Optional[BackChannel] = back_channel

    @property
    def back_channel(self) -> BackChannel:
        """How the request reaches the client (:mod:`mcpfast.server.request.back_channel`)."""
        channel = self._back_channel
        if channel is None:
            # A 2026-07-28 request that may ask for input (StatelessEra.claim): made now.
            assert self.connection is not None
            channel = self._back_channel = input_channel(self.connection, self.method, self.params)
        return channel

    @back_channel.setter
    def back_channel(self, channel: BackChannel) -> None:
        self._back_channel = channel

    # -- protocol facts ----------------------------------------------------------------

    @property
    def server(self) -> Any:
        """The Server handling the request (the facade users registered on)."""
        return self.core.app

    @property
    def core(self) -> ServerCore:
        """The server's core (:class:`~mcpfast.server.core.ServerCore`): what the
        connection serving the request holds."""
        connection = self.connection
        if connection is None:
            raise RuntimeError("this Context belongs to no server connection")
        return connection.server

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded (None when it has none;
        :meth:`~mcpfast.server.server.Server.lifespan_state`)."""
        return self.core.lifespan_state

    @property
    def auth(self) -> Optional[AccessToken]:
        """The caller's verified access token (HTTP with bearer auth), else None."""
        connection = self.connection
        return connection.auth if connection is not None else None

    @property
    def peer_address(self) -> Optional[str]:
        """The client's address as the transport saw it (no port: ``"127.0.0.1"``), when
        the transport knows one (TCP, WebSocket, Streamable HTTP: the socket's peer, a
        proxy's address behind one); else None (stdio, in-process)."""
        connection = self.connection
        return connection.peer_address if connection is not None else None

    @property
    def peer_port(self) -> Optional[int]:
        """The client's port as the transport saw it, when it knows one (as
        :attr:`peer_address`; None for a Unix socket)."""
        connection = self.connection
        return connection.peer_port if connection is not None else None

    @property
    def session_id(self) -> Optional[str]:
        """The transport's session id: Streamable HTTP's ``Mcp-Session-Id`` of a
        2025-era session; None elsewhere (stdio, TCP, 2026-07-28 requests)."""
        connection = self.connection
        return connection.session_id if connection is not None else None

    @property
    def protocol_version(self) -> Optional[str]:
        """The negotiated protocol version (None before initialize)."""
        return self.state.protocol_version

    @property
    def features(self) -> Optional[VersionFeatures]:
        """What the negotiated version can carry (None before initialize)."""
        return self.state.features

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's Implementation (name, version, ...)."""
        return self.state.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared."""
        return self.state.client_capabilities

    @property
    def log_level(self) -> str:
        """The minimum MCP log level the client wants ("off": none, a 2026-07-28 request
        that set no logLevel)."""
        return self.state.log_level_name

    def _negotiated(self) -> tuple[ProtocolState, VersionFeatures]:
        state = self.state
        features = state.features
        if features is None:
            raise RuntimeError("the connection has not completed initialize yet")
        return state, features

    def _capable(self, method: str, *capabilities: str) -> VersionFeatures:
        """The negotiated features, once the request can ask ``method`` of the client: a
        channel to it exists (else BackChannelUnavailable, first: a stateless HTTP request
        knows no capabilities, so "not declared" would be wrong) and it declared each of
        ``capabilities`` (else ClientCapabilityError)."""
        state, features = self._negotiated()
        channel = self.back_channel
        if isinstance(channel, NoBackChannel):
            raise BackChannelUnavailable(method, channel.reason)
        for capability in capabilities:
            require_capability(state.client_capabilities, features, capability)
        return features

    async def _ask_client(self, method: str, params: Any, timeout: Optional[float],
                          key: Optional[str] = None) -> Any:
        return await self.back_channel.request(self, method, params, timeout=timeout, key=key)

    # -- logging -----------------------------------------------------------------------

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> Sent:
        """Send notifications/message when ``level`` is at or above the client's level.

        ``data``: any JSON-able value (a str usually); ``logger``: an optional name.
        """
        if level_index(level) < self.state.log_level or self.session.closed:
            return NOT_SENT
        if type(data) is not str:
            data = to_jsonable(data)
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            if type(logger) is not str:
                raise TypeError(f"logger must be a str, not {type(logger).__name__}")
            params["logger"] = logger
        self.notify(LOG_METHOD, params)
        return SENT

    def debug(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("info", data, logger)

    def notice(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("notice", data, logger)

    def warning(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("error", data, logger)

    def critical(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("critical", data, logger)

    def alert(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("alert", data, logger)

    def emergency(self, data: Any, logger: Optional[str] = None) -> Sent:
        return self.log("emergency", data, logger)

    # -- progress ----------------------------------------------------------------------

    def report_progress(self, progress: float, total: Optional[float] = None,  # type: ignore[override]
                        message: Optional[str] = None) -> Sent:
        """Send notifications/progress when the client asked for progress (it gave a
        progressToken); nothing otherwise. ``progress`` must grow with every call
        (ValueError otherwise). ``message`` is dropped for 2024-11-05, which has none."""
        reporter = self.progress
        if reporter is None or self.session.closed:
            return NOT_SENT
        if message is not None:
            features = self.state.features
            if features is not None and not features.progress_message:
                message = None
        reporter.report(progress, total, message)
        return SENT

    # -- requests to the client --------------------------------------------------------

    async def sample(
        self,
        messages: Any,
        *,
        max_tokens: int = 512,
        system_prompt: Optional[str] = None,
        temperature: Optional[float] = None,
        stop_sequences: Optional[Sequence[str]] = None,
        model_preferences: Any = None,
        include_context: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        tools: Optional[Sequence[Mapping[str, Any]]] = None,
        tool_choice: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
        input_key: Optional[str] = None,
    ) -> SamplingResult:
        """Ask the client's LLM for a completion (sampling/createMessage).

        ``messages``: a str, or a list of str / content / ``{"role", "content"}`` dicts.
        Raises ClientCapabilityError when the client did not declare ``sampling`` (or
        ``sampling.tools`` when ``tools`` are given), JSONRPCError when the client refuses.
        """
        needs = ("sampling", "sampling.tools") if tools is not None or tool_choice is not None else ("sampling",)
        features = self._capable(methods.SAMPLING_CREATE_MESSAGE, *needs)
        params = sampling_params(
            features, messages, max_tokens=max_tokens, system_prompt=system_prompt,
            temperature=temperature, stop_sequences=stop_sequences,
            model_preferences=model_preferences, include_context=include_context,
            metadata=metadata, tools=tools, tool_choice=tool_choice,
        )
        result = await self._ask_client(methods.SAMPLING_CREATE_MESSAGE, params, timeout, input_key)
        return parse_sampling_result(result)

    async def elicit(self, message: str, schema: Any, *, timeout: Optional[float] = None,
                     input_key: Optional[str] = None) -> ElicitationResult:
        """Ask the user for input through the client (elicitation/create, form mode).

        ``schema``: a flat JSON Schema object dict, or a dataclass whose fields are the
        form (the accepted answer is then converted to an instance: ``result.data``).
        Raises ClientCapabilityError when the client did not declare ``elicitation`` or the
        negotiated version predates it.
        """
        features = self._capable(methods.ELICITATION_CREATE, "elicitation")
        params, convert = elicitation_params(features, message, schema)
        result = await self._ask_client(methods.ELICITATION_CREATE, params, timeout, input_key)
        return parse_elicitation_result(result, convert)

    async def elicit_url(self, message: str, url: str, elicitation_id: Optional[str] = None, *,
                         timeout: Optional[float] = None,
                         input_key: Optional[str] = None) -> ElicitationResult:
        """Send the user to a URL (elicitation/create, URL mode; 2025-11-25 and later).

        Raises ClientCapabilityError unless the client declared ``elicitation.url``.
        """
        self._capable(methods.ELICITATION_CREATE, "elicitation.url")
        params = elicitation_url_params(message, url, elicitation_id or uuid.uuid4().hex)
        result = await self._ask_client(methods.ELICITATION_CREATE, params, timeout, input_key)
        return parse_elicitation_result(result)

    async def list_roots(self, *, timeout: Optional[float] = None,
                         input_key: Optional[str] = None) -> list[Root]:
        """The client's roots (roots/list); ClientCapabilityError unless it declared ``roots``."""
        self._capable(methods.ROOTS_LIST, "roots")
        result = await self._ask_client(methods.ROOTS_LIST, None, timeout, input_key)
        return parse_roots(result)

    async def ping(self, *, timeout: Optional[float] = None) -> None:
        """Ping the client; returns when it answered (RequestTimeout / JSONRPCError else)."""
        await self._ask_client(methods.PING, None, timeout)

    # -- tasks -------------------------------------------------------------------------

    async def run_as_task(self) -> bool:
        """Go on as a task (:mod:`mcpfast.server.tasks.manager`, a tool with
        ``task_start="handler"``): the request is answered now with the task's handle and
        the function goes on in the background. True when it is (or already was) a task;
        False when the request allows none -- the function then goes on as a plain call."""
        try:
            run = self.task_run
        except AttributeError:
            return False
        return await run.escalate()

    @property
    def task_id(self) -> Optional[str]:
        """The id of the task this function runs as (None: not a task)."""
        try:
            record = self.task_run.record
        except AttributeError:
            return None
        return record.task_id if record is not None else None

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of this server's resources: the ``contents`` a client would get."""
        result = self.core.read_resource(uri, self)
        if inspect.isawaitable(result):
            result = await result
        return result["contents"]
