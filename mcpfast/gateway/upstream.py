"""Upstream: one mounted MCP server behind the gateway and its one long-lived session.

The session is opened once (``mcpfast.connect``: a command over stdio, a URL, an
in-process Server) and shared by every downstream client: no handshake per call. A
supervisor task owns it: when the session ends (the process died, the connection
dropped) every request in flight fails at once (the client's ConnectionClosed, turned into
an error naming the upstream) and the session is opened again after a backoff that doubles
up to a ceiling (and starts short again only after a session that lasted that long, so an
upstream crashing soon after each start is not restarted in a tight loop); an upstream
that never starts is retried the same way while the gateway serves the others, its state
and last error visible in :meth:`Upstream.health`.

The upstream's catalogue (tools, prompts, resources, templates) is read after each start
and again on its ``notifications/*/list_changed``; refreshes of one kind are coalesced
(while one runs, further notices only mark it to run once more), so an upstream flooding
list_changed costs at most one refresh in flight per kind. Its log messages are forwarded
through a token bucket (``max_log_rate`` per second), the excess counted and dropped.

Sampling, elicitation and roots asked by the upstream are put to the downstream client of
the call they belong to, never to another client:

- a question tagged with a task (``_meta`` related-task) goes to the task's owner
  (gateway.tasks: :meth:`Upstream.ask_connection` for a 2025-11-25 client, an error when
  it has disconnected);
- one that came on the reply stream of a forwarded request (Streamable HTTP: the call's
  POST stream; the client's :class:`~mcpfast.client.handlers.ServerRequest` names it as
  ``related_request_id``, matched to the downstream request it was sent for) goes to that
  request's client, or fails when that client did not declare the capability;
- one asked in the InputRequiredResult rounds of a forwarded request to a 2026-07-28
  upstream (which the client answers in the task awaiting that request) goes to that
  request's client, likewise;
- over stdio, TCP, WebSocket, in process, or on the HTTP GET stream nothing ties a
  server's request to the call that caused it: it goes to the most recent forwarded
  request still waiting on this upstream whose client declared the capability (the one a
  single-agent client has).

The question is asked on that request's session channel (the handshake versions), or,
for a 2026-07-28 request, as InputRequiredResult rounds -- the question already answered
by the retry's inputResponses or requestState is answered at once, a new one ends this
attempt (the upstream call is cancelled) with the InputRequiredResult asking it, and the
client's retry forwards the request again, as mcpfast's own handlers run again from the
start on each attempt. A 2026-07-28 client that did not declare the capability gets
-32021 (MissingRequiredClientCapability); where no request waits, the upstream gets an
error saying so.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from asyncio import CancelledError
from contextvars import ContextVar
from typing import Any, Awaitable, Callable, Optional

from mcpfast._core.messages import Verbatim
from mcpfast.client.client import Client
from mcpfast.client.connect import connect
from mcpfast.client.handlers import ServerRequest, with_request
from mcpfast.client.stateless import INPUT_METHODS
from mcpfast.gateway.catalogue import MountedCatalogue
from mcpfast.gateway.eras import UPSTREAM_CLIENT_CAPABILITIES, asked_capabilities
from mcpfast.gateway.forward_core import UpstreamCore
from mcpfast.gateway.options import MountOptions
from mcpfast.gateway.stateless_passthrough import EXTENSION_TASK_METHODS, forward_once, forward_task, listen_for_task
from mcpfast.gateway.tasks import NOT_ASKED
from mcpfast.jsonrpc.errors import ConnectionClosed, JSONRPCError, RequestTimeout
from mcpfast.jsonrpc.outgoing import cancel_reason
from mcpfast.protocol.error_codes import METHOD_NOT_FOUND, REQUEST_TIMEOUT, TRANSPORT_ERROR
from mcpfast.server.request.back_channel import BackChannelUnavailable
from mcpfast.server.request.input_required import InputRequired, InputRequiredBackChannel
from mcpfast.server.request.requests_to_client import require_capability

__all__ = ["KINDS", "Upstream", "UpstreamUnavailable"]

#: The catalogue kinds and the server capability each needs.
KINDS = {"tools": "tools", "prompts": "prompts", "resources": "resources"}
_LOGGER = logging.getLogger("mcpfast.gateway")
# The downstream request a 2026-07-28 upstream's InputRequiredResult rounds belong to: the
# client answers the rounds in the task awaiting its call, so its handlers see it here.
_ROUNDS_ORIGIN: ContextVar[Any] = ContextVar("mcpfast_gateway_rounds_origin", default=None)
# The params of the common tools/call, sent by the client's call_tool.
_PLAIN_CALL = frozenset({"name", "arguments"})
#: The most items of one kind read from an upstream (a hostile one may list without end).
MAX_CATALOGUE_ITEMS = 10_000
#: The most pages of one kind read from an upstream.
MAX_CATALOGUE_PAGES = 1_000


class UpstreamUnavailable(JSONRPCError):
    """A request for an upstream that has no session right now (starting, restarting
    after a failure): code TRANSPORT_ERROR, the upstream's name and state in the message
    and in ``data``."""

    default_code = TRANSPORT_ERROR

    def __init__(self, key: str, state: str, error: Optional[str]) -> None:
        detail = f": {error}" if error else ""
        super().__init__(TRANSPORT_ERROR, f"upstream {key!r} is not available ({state}){detail}",
                         {"upstream": key, "state": state})


class Upstream(UpstreamCore):
    """One mounted server (module docstring).

    key: its name (the config key; in errors, logs and /healthz). target, connect_options:
    what :func:`mcpfast.connect` is given (command/URL/Server; env, cwd, headers, args).
    on_catalogue(upstream, kind): called after its ``kind`` catalogue changed.
    on_ready(upstream): awaited after each start, once the catalogue is read (what the
    upstream must be told again on a new session: the resource subscriptions).
    on_log(upstream, params), on_resource_updated(upstream, params): its notifications.
    backoff, max_backoff: seconds before the first retry, and the most between two.
    protocol_version: what the session asks for (None: the newest handshake version;
    "auto" or "2026-07-28" for an upstream that speaks the stateless revision).
    """

    def __init__(self, key: str, target: Any, options: MountOptions, *,
                 connect_options: Optional[dict[str, Any]] = None,
                 on_catalogue: Callable[[Upstream, str], None] = lambda upstream, kind: None,
                 on_ready: Optional[Callable[[Upstream], Any]] = None,
                 on_log: Callable[[Upstream, Any], None] = lambda upstream, params: None,
                 on_resource_updated: Callable[[Upstream, Any], None] = lambda upstream, params: None,
                 on_task_status: Callable[[Upstream, Any], None] = lambda upstream, params: None,
                 on_task_question: Callable[[Upstream, str, Any], Optional[Awaitable[Any]]] =
                 lambda upstream, method, params: None,
                 on_task_note: Callable[[Upstream, Any], None] = lambda upstream, params: None,
                 backoff: float = 0.5, max_backoff: float = 30.0,
                 max_log_rate: float = 100.0, protocol_version: Optional[str] = None) -> None:
        if not isinstance(key, str) or not key:
            raise ValueError(f"an upstream needs a non-empty str name, got {key!r}")
        self.key = key
        self.target = target
        self.options = options
        self.connect_options = dict(connect_options or {})
        # The version asked of the upstream (None: the newest handshake version; "auto").
        self.protocol_version = protocol_version
        self.on_catalogue = on_catalogue
        self.on_ready = on_ready
        self.on_log = on_log
        self.on_resource_updated = on_resource_updated
        self.on_task_status = on_task_status
        # A question asked within a task: its answer's awaitable when the task's owner
        # answers it in tasks/update (gateway.tasks), else None.
        self.on_task_question = on_task_question
        # notifications/tasks of the listens following tasks (follow_task).
        self.on_task_note = on_task_note
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.catalogue = MountedCatalogue(options)
        self.client: Optional[Client] = None
        self.state = "stopped"
        self.last_error: Optional[str] = None
        self.starts = 0
        self.failures = 0
        self.dropped_logs = 0
        # Results handed downstream as the upstream sent them (request(raw=True)).
        self.passed_through = 0
        self._max_log_rate = max_log_rate
        self._log_tokens = max_log_rate
        self._log_time = time.monotonic()
        self._lists: dict[str, list] = {"tools": [], "prompts": [], "resources": [], "resourceTemplates": []}
        self._refreshing: dict[str, asyncio.Task] = {}
        self._refresh_again: set[str] = set()
        # Downstream contexts of the forwarded requests waiting on this upstream, oldest
        # first (a dict: removing one of many in flight costs no scan).
        self._callers: dict[Any, None] = {}
        # The same by the id of the request sent for them (handshake-era sessions): what
        # the upstream names as the request its question belongs to (HTTP).
        self._sent: dict[Any, Any] = {}
        # (Bound once: every forward_plain call's settle.)
        self._settle_plain = self._plain_answered
        # For 2026-07-28 callers: what ends their attempt early (an InputRequired or an error).
        self._interrupts: dict[Any, asyncio.Future] = {}
        self._supervisor: Optional[asyncio.Task] = None
        self._first_attempt: Optional[asyncio.Event] = None

    def __repr__(self) -> str:
        return f"<Upstream {self.key!r} {self.state}>"

    # -- life --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor (on the running loop); it opens the session and keeps it."""
        if self._supervisor is not None:
            return
        self._first_attempt = asyncio.Event()
        self.state = "starting"
        self._supervisor = asyncio.get_running_loop().create_task(
            self._supervise(), name=f"mcpfast gateway upstream {self.key}")

    async def wait_started(self) -> bool:
        """Wait for the first attempt to open the session to end; True when it opened."""
        if self._first_attempt is not None:
            await self._first_attempt.wait()
        return self.client is not None

    async def stop(self) -> None:
        """Close the session and stop restarting it."""
        supervisor, self._supervisor = self._supervisor, None
        for task in list(self._refreshing.values()):
            task.cancel()
        if supervisor is not None:
            supervisor.cancel()
            try:
                await supervisor
            except asyncio.CancelledError:
                pass
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()
        self.state = "stopped"

    async def _open(self) -> Client:
        version: dict[str, Any] = {} if self.protocol_version is None else {
            "protocol_version": self.protocol_version}
        client = Client(name="mcpfast-gateway", on_log=self._log, **version,
                        on_list_changed=self._list_changed,
                        on_resource_updated=self._resource_updated, check_capabilities=False,
                        sampling=with_request(self._sampling), elicitation=with_request(self._elicitation),
                        roots=with_request(self._roots),
                        capabilities=UPSTREAM_CLIENT_CAPABILITIES)
        client.on_notification("notifications/tasks/status", lambda params: self.on_task_status(self, params))
        client.on_notification("notifications/tasks", lambda params: self.on_task_note(self, params))
        options = dict(self.connect_options)
        args = options.pop("args", None)
        return await connect(self.target, args, client=client,
                             initialize_timeout=self.options.start_timeout, **options)

    async def _supervise(self) -> None:
        delay = self.backoff
        assert self._first_attempt is not None
        while True:
            try:
                client = await self._open()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- any failure to start is retried
                self.failures += 1
                self.last_error = _describe(exc)
                self.state = "failed" if self.client is None and self.starts == 0 else "restarting"
                _LOGGER.warning("upstream %r did not start: %s (retrying in %.1f s)",
                                self.key, self.last_error, delay)
                self._first_attempt.set()
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            self.client = client
            self.starts += 1
            self.state = "ready"
            self.last_error = None
            opened_at = time.monotonic()
            _LOGGER.info("upstream %r ready (%s, protocol %s)", self.key,
                         client.server_info.get("name"), client.protocol_version)
            await asyncio.gather(*(self._refresh(kind) for kind in KINDS), return_exceptions=True)
            listener = None
            if client.discover_result is not None:
                # 2026-07-28: list changes come on a subscriptions/listen stream.
                listener = asyncio.get_running_loop().create_task(self._listen(client))
                if "logging" in (client.server_capabilities or {}):
                    # Log messages come only within requests that name a level.
                    try:
                        await client.set_logging_level("info")
                    except JSONRPCError as exc:
                        _LOGGER.warning("upstream %r: setting its log level failed: %s", self.key, exc)
            if self.on_ready is not None:
                try:
                    await self.on_ready(self)
                except JSONRPCError as exc:
                    _LOGGER.warning("upstream %r: %s", self.key, exc)
            self._first_attempt.set()
            try:
                await client.wait_closed()
            finally:
                if listener is not None:
                    listener.cancel()
            self.client = None
            self.failures += 1
            self.state = "restarting"
            if time.monotonic() - opened_at >= self.max_backoff:
                delay = self.backoff  # it ran a good while: a fresh failure, the short wait
            # (else it keeps crashing soon after starting: the wait goes on doubling)
            self.last_error = _describe(client.close_error) if client.close_error else "the session ended"
            _LOGGER.warning("upstream %r closed: %s (restarting in %.1f s)", self.key, self.last_error, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_backoff)

    # -- requests ----------------------------------------------------------------------

    async def request(self, method: str, params: Any, *,
                      progress: Optional[Callable[..., Any]] = None, origin: Any = None,
                      wait: bool = False, raw: bool = False) -> Any:
        """Send ``method`` on the shared session and return the upstream's result; its
        JSON-RPC errors as they are, a closed session or a timeout as an error naming the
        upstream. ``origin``: the downstream request's context (the one asked when the
        upstream asks for sampling, elicitation or roots meanwhile; on a handshake-era
        session the request is sent here, its id kept to match the questions naming it).
        ``wait``: no timeout
        (tasks/result, which waits for a task's end). ``raw``: the caller passes the result
        on unread, so on a handshake-era session (whose results need no translation) it is
        returned as a :class:`~mcpfast._core.messages.Verbatim` of the upstream's response,
        never built into Python objects; a dict otherwise."""
        client = self.client
        if client is None or client.closed:
            raise UpstreamUnavailable(self.key, self.state, self.last_error)
        timeout = None if wait else self.options.timeout
        if origin is not None:
            self._callers[origin] = None
        try:
            limit = math.inf if timeout is None else timeout
            # (Read once: a 2026-07-28 request's input channel is made on first reading.)
            channel: Any = origin.back_channel if origin is not None else None
            interruptible = isinstance(channel, InputRequiredBackChannel)
            if client.discover_result is None:
                if origin is not None or raw:
                    # A handshake-era request sent on the session itself (inline: the hot
                    # path), so that its id is known: the upstream's questions on its reply
                    # stream name it (_ask_downstream).
                    session = client.session
                    assert session is not None  # a ready client is bound
                    passing = raw and not interruptible
                    out = session.send_request(method, params, timeout=limit, progress=progress, raw=passing)
                    sent = self._sent
                    request_id = out.id
                    if origin is not None:
                        sent[request_id] = origin
                    try:
                        if interruptible:
                            answer = await self._interruptible(origin, out.wait())
                        else:
                            # Awaited here (no coroutine frame of OutgoingRequest.wait between).
                            try:
                                answer = await out.future
                            except CancelledError as exc:
                                out.cancel(cancel_reason(exc))  # as OutgoingRequest.wait: the upstream is told
                                raise
                    finally:
                        if origin is not None and sent.get(request_id) is origin:
                            del sent[request_id]
                    if passing:
                        self.passed_through += 1
                        return Verbatim(answer)
                    return answer
            else:
                version = client.protocol_version
                if interruptible and version is not None and method in INPUT_METHODS:
                    # Both legs 2026-07-28: the downstream's own request goes on, one attempt.
                    return await forward_once(client.session, version, method, params,
                                              origin, channel, timeout=limit, progress=progress)
                if method in EXTENSION_TASK_METHODS and version is not None and origin is not None:
                    # A task of the extension: asked with the downstream's capabilities.
                    return await forward_task(client.session, version, method, params, origin, timeout=limit)
            if method == "tools/call" and params.keys() <= _PLAIN_CALL:
                # The client's hot path (the common call: nothing but name and arguments).
                call = client.call_tool(params["name"], params.get("arguments"), timeout=limit,
                                        progress=progress)
            else:
                call = client.request(method, params, timeout=limit, progress=progress)
            rounds_of = _ROUNDS_ORIGIN.set(origin) if client.discover_result is not None else None
            try:
                if interruptible:
                    return await self._interruptible(origin, call)  # (its task copies the context)
                return await call
            finally:
                if rounds_of is not None:
                    _ROUNDS_ORIGIN.reset(rounds_of)
        except (ConnectionClosed, RequestTimeout) as exc:
            raise self._failure(method, timeout, exc) from None
        finally:
            if origin is not None:
                del self._callers[origin]

    # forward_plain(method, params, origin) and its settle, _plain_answered: the compiled
    # UpstreamCore's (mcpfast.gateway.forward_core).

    def _failure(self, method: str, timeout: Optional[float], exc: BaseException) -> BaseException:
        # What a forwarded request's failure becomes downstream: a closed session or a
        # timeout as an error naming the upstream (request() raises the same), the rest as is.
        if isinstance(exc, ConnectionClosed):
            return JSONRPCError(TRANSPORT_ERROR, f"upstream {self.key!r} closed its connection during "
                                f"{method}: {exc.message}", {"upstream": self.key})
        if isinstance(exc, RequestTimeout):
            return JSONRPCError(REQUEST_TIMEOUT, f"upstream {self.key!r} did not answer {method} "
                                f"within {timeout:g} s", {"upstream": self.key})
        return exc

    def follow_task(self, task_id: str, origin: Any) -> Any:
        """Follow the 2026-07-28 task ``task_id`` with a subscriptions/listen asked as the
        downstream request ``origin`` (its notifications/tasks go to ``on_task_note``);
        the listen's handle (cancel it to stop), None when the session is gone."""
        client = self.client
        if client is None or client.closed or client.protocol_version is None:
            return None
        return listen_for_task(client.session, client.protocol_version, task_id, origin)

    async def _interruptible(self, origin: Any, call: Any) -> Any:
        # The upstream call, unless the downstream attempt must end first (module docstring).
        loop = asyncio.get_running_loop()
        interrupt = self._interrupts[origin] = loop.create_future()
        task = loop.create_task(call)
        try:
            await asyncio.wait((task, interrupt), return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            ending = interrupt.result()
            if isinstance(ending, InputRequired):
                # Answered as the server answers a handler stopped for input: its result.
                return ending.result()
            raise ending
        finally:
            self._interrupts.pop(origin, None)
            if not task.done():
                task.cancel()  # the upstream is sent notifications/cancelled

    async def _ask_downstream(self, method: str, params: Any, request: ServerRequest) -> Any:
        asked = self.on_task_question(self, method, params)
        if asked is not None:
            answer = await asked
            if answer is not NOT_ASKED:
                return answer
        needs = asked_capabilities(method, params)
        related = request.related_request_id
        origin = _ROUNDS_ORIGIN.get() if related is None else self._sent.get(related)
        if related is not None and origin is None:
            raise JSONRPCError(METHOD_NOT_FOUND, f"the gateway cannot put {method} to a client: it "
                               f"belongs to request {related!r}, which no client's request waits on "
                               f"(upstream {self.key!r})", {"upstream": self.key})
        if origin is not None:
            # It came on the reply stream of one of the gateway's requests, or in the
            # InputRequiredResult rounds of one sent to a 2026-07-28 upstream: it is that
            # request's client's to answer, or no one's.
            interrupt = self._interrupts.get(origin)
            if interrupt is not None:
                return await self._ask_in_rounds(origin, interrupt, needs, method, params)
            if not _capable(origin, needs):
                raise JSONRPCError(METHOD_NOT_FOUND, f"the gateway cannot put {method} to the client of "
                                   f"the call it belongs to: that client has no session channel or did not "
                                   f"declare the {' and '.join(needs)} capability", {"upstream": self.key})
            return await origin.back_channel.request(origin, method, params, timeout=self.options.timeout)
        for ctx in reversed(self._callers):
            interrupt = self._interrupts.get(ctx)
            if interrupt is not None:
                return await self._ask_in_rounds(ctx, interrupt, needs, method, params)
            if _capable(ctx, needs):
                return await ctx.back_channel.request(ctx, method, params, timeout=self.options.timeout)
        raise JSONRPCError(METHOD_NOT_FOUND, f"the gateway cannot put {method} to a client now: no "
                           f"request from a client with the {' and '.join(needs)} capability and a "
                           f"session channel is waiting on upstream {self.key!r}", {"upstream": self.key})

    async def _ask_in_rounds(self, ctx: Any, interrupt: asyncio.Future, needs: tuple[str, ...],
                             method: str, params: Any) -> Any:
        try:
            state = ctx.state
            for capability in needs:  # the downstream client's own, never the gateway's
                require_capability(state.client_capabilities or {}, state.features, capability)
            return await ctx.back_channel.request(ctx, method, params, timeout=self.options.timeout)
        except (InputRequired, JSONRPCError) as ending:
            # The downstream attempt ends with it; the upstream's call is cancelled.
            if not interrupt.done():
                interrupt.set_result(ending)
            raise JSONRPCError(METHOD_NOT_FOUND, f"{method} goes to the client as an "
                               f"InputRequiredResult round; this call is retried") from None

    async def ask_connection(self, connection: Any, method: str, params: Any, whose: str) -> Any:
        """Put ``method`` to the downstream ``connection`` (the owner of a 2025-11-25 task
        whose question it is; ``whose`` names it in errors): on the reply stream of its
        latest request waiting on this upstream, else on its session. A connection that
        has closed, or did not declare the capability the question needs, is an error
        for the upstream."""
        session = connection.session
        if session.closed:
            raise BackChannelUnavailable(method, f"{whose} disconnected")
        state = connection.state
        for capability in asked_capabilities(method, params):  # the owner's, never the gateway's
            require_capability(state.client_capabilities or {}, state.features, capability)
        timeout = self.options.timeout
        for ctx in reversed(self._callers):
            if ctx.connection is connection and ctx not in self._interrupts:
                return await ctx.back_channel.request(ctx, method, params, timeout=timeout)
        return await session.request(method, params, timeout=timeout)

    async def _sampling(self, params: Any, request: ServerRequest) -> Any:
        return await self._ask_downstream("sampling/createMessage", params, request)

    async def _elicitation(self, params: Any, request: ServerRequest) -> Any:
        return await self._ask_downstream("elicitation/create", params, request)

    async def _roots(self, request: ServerRequest) -> Any:
        return (await self._ask_downstream("roots/list", None, request)).get("roots", [])

    async def set_log_level(self, level: str) -> None:
        """Ask the upstream for log messages at ``level`` and above (when it has the
        logging capability and a session); a refusal is logged, not raised."""
        client = self.client
        if client is None or client.closed or "logging" not in (client.server_capabilities or {}):
            return
        timeout = self.options.timeout
        try:
            await client.set_logging_level(level, timeout=math.inf if timeout is None else timeout)
        except (JSONRPCError, ConnectionClosed, RequestTimeout) as exc:
            _LOGGER.warning("upstream %r: setting its log level to %s failed: %s", self.key, level, exc)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification on the session (dropped while it has none)."""
        client = self.client
        if client is not None and not client.closed:
            client.notify(method, params)

    def health(self) -> dict[str, Any]:
        """The upstream's state for /healthz: state, last error, starts, failures and
        how many tools/prompts/resources it shows."""
        catalogue = self.catalogue
        report: dict[str, Any] = {"state": self.state, "starts": self.starts, "failures": self.failures,
                                  "tools": len(catalogue.tools), "prompts": len(catalogue.prompts),
                                  "resources": len(catalogue.resources) + len(catalogue.templates)}
        if self.last_error:
            report["error"] = self.last_error
        if self.dropped_logs:
            report["droppedLogs"] = self.dropped_logs
        client = self.client
        if client is not None:
            report["server"] = client.server_info
            report["protocolVersion"] = client.protocol_version
        return report

    # -- catalogue ---------------------------------------------------------------------

    async def _refresh(self, kind: str) -> None:
        client = self.client
        if client is None:
            return
        capabilities = client.server_capabilities or {}
        if KINDS[kind] not in capabilities:
            return
        timeout = self.options.timeout
        limit = math.inf if timeout is None else timeout
        try:
            if kind == "tools":
                self._lists["tools"] = await self._listed(client.list_tools_page, "tools", limit)
            elif kind == "prompts":
                self._lists["prompts"] = await self._listed(client.list_prompts_page, "prompts", limit)
            else:
                self._lists["resources"] = await self._listed(client.list_resources_page, "resources", limit)
                self._lists["resourceTemplates"] = await self._listed(
                    client.list_resource_templates_page, "resourceTemplates", limit)
        except Exception as exc:  # noqa: BLE001 -- a bad listing keeps the last catalogue
            _LOGGER.warning("upstream %r: listing its %s failed: %s", self.key, kind, _describe(exc))
            return
        self.catalogue = MountedCatalogue(self.options, self._lists["tools"], self._lists["prompts"],
                                          self._lists["resources"], self._lists["resourceTemplates"])
        self.on_catalogue(self, kind)

    async def _listen(self, client: Client) -> None:
        # The 2026-07-28 way to hear of list changes; ends with the session.
        kinds = {f"notifications/{kind}/list_changed": kind for kind in KINDS}
        try:
            async with client.listen(tools=True, prompts=True, resources=True) as stream:
                async for note in stream:
                    method = note.get("method") if isinstance(note, dict) else None
                    kind = kinds.get(method) if isinstance(method, str) else None
                    if kind is not None:
                        self._list_changed(kind)
        except JSONRPCError as exc:
            _LOGGER.warning("upstream %r: its list changes cannot be followed: %s", self.key, exc)

    async def _listed(self, page_of: Callable[..., Any], key: str, timeout: float) -> list:
        # Every page, up to MAX_CATALOGUE_ITEMS items: an upstream listing without end
        # (new cursors for ever) cannot hold the gateway's memory.
        items: list = []
        cursor = None
        seen: set[str] = set()
        while True:
            page = await page_of(cursor, timeout=timeout)
            found = page.get(key) if isinstance(page, dict) else None
            items += found if isinstance(found, list) else []
            cursor = page.get("nextCursor") if isinstance(page, dict) else None
            if not isinstance(cursor, str) or cursor in seen:
                return items
            if len(items) >= MAX_CATALOGUE_ITEMS or len(seen) >= MAX_CATALOGUE_PAGES:
                _LOGGER.warning("upstream %r lists more than %d %s or %d pages: the rest is left out",
                                self.key, MAX_CATALOGUE_ITEMS, key, MAX_CATALOGUE_PAGES)
                return items[:MAX_CATALOGUE_ITEMS]
            seen.add(cursor)

    def _list_changed(self, kind: str) -> None:
        if kind not in KINDS:
            return
        if kind in self._refreshing:
            self._refresh_again.add(kind)
            return
        self._refreshing[kind] = asyncio.get_running_loop().create_task(self._refresh_until_settled(kind))

    async def _refresh_until_settled(self, kind: str) -> None:
        try:
            while True:
                self._refresh_again.discard(kind)
                await self._refresh(kind)
                if kind not in self._refresh_again:
                    return
        finally:
            self._refreshing.pop(kind, None)

    def set_options(self, options: MountOptions) -> None:
        """Mount the same session under other options (a reload): the catalogue is
        rebuilt from the lists already read."""
        self.options = options
        self.catalogue = MountedCatalogue(options, self._lists["tools"], self._lists["prompts"],
                                          self._lists["resources"], self._lists["resourceTemplates"])

    @property
    def refreshing(self) -> bool:
        """Whether a catalogue refresh is running."""
        return bool(self._refreshing)

    # -- notifications -----------------------------------------------------------------

    def _log(self, params: Any) -> None:
        now = time.monotonic()
        rate = self._max_log_rate
        self._log_tokens = min(rate, self._log_tokens + (now - self._log_time) * rate)
        self._log_time = now
        if self._log_tokens < 1:
            self.dropped_logs += 1
            return
        self._log_tokens -= 1
        self.on_log(self, params)

    def _resource_updated(self, params: Any) -> None:
        self.on_resource_updated(self, params)


def _capable(ctx: Any, needs: tuple[str, ...]) -> bool:
    """Whether the downstream client of ``ctx`` declared every capability of ``needs``."""
    state = ctx.state
    if state.features is None:
        return False
    try:
        for capability in needs:
            require_capability(state.client_capabilities or {}, state.features, capability)
    except JSONRPCError:
        return False
    return True


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
