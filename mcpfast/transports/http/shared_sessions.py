"""Handshake-era sessions served by whichever process a request reaches.

With a :class:`~mcpfast.transports.http.session_directory.SessionDirectory` (``mcpfast run
--transport http --redis URL``, or ``session_directory=`` of the endpoint), a 2025-era
session is not pinned to the process that made it:

- **Records.** A successful ``initialize`` is recorded before its answer leaves (the
  request's body, the token's subject, later the log level and the resource
  subscriptions). The record expires after the endpoint's ``session_idle_timeout`` without
  use anywhere; ``DELETE`` removes it and closes every copy.
- **Copies.** A process receiving a request for a session it does not hold looks the record
  up and makes a local copy: a server connection that replays the recorded handshake
  (``initialize``, ``notifications/initialized``, then ``logging/setLevel`` and
  ``resources/subscribe`` as recorded) with every answer discarded. From then on it serves
  the session's requests itself. A later ``logging/setLevel`` or subscription change is
  applied on every copy. A recorded session counts as initialized on every copy (the
  client's ``notifications/initialized`` may reach another process than its next request,
  so the initialization gate cannot be kept across processes). Each copy numbers its own
  requests to the client from a random base, so that their ids never collide. A state
  change is recorded and published to the other copies before it is answered.
- **Answers to the server's requests.** A client's response to ``sampling/createMessage``,
  ``elicitation/create`` or ``roots/list`` may reach any process: the one whose copy does
  not await that id passes it to the others, and the copy awaiting it takes it.
- **The GET stream** (messages outside any request) lives in one process: the one where
  the client opened or last resumed it. Only that copy hears the server's broadcasts (list
  changes, resource updates, log broadcasts), so each is sent once; a message another copy
  has for the stream (a request's notifications in JSON-response mode) is passed to it.
  Resuming the stream with ``Last-Event-ID`` on another process (the first one was
  restarted or killed) replays the missed events from a shared event store
  (:class:`~mcpfast.scaleout.redis_event_store.RedisEventStore`) and moves the stream there;
  so does opening a new GET stream elsewhere (the newest holder wins, by wall-clock time,
  instead of the 409 a second stream gets within one process).

Why nothing is routed to an "owner" process: every request can be served by any copy, and
the two things that cannot be copied -- a request waiting for the client, the open GET
stream -- are reached by passing the one message that concerns them.

- **A POST's stream** (a request's notifications, then its response) resumed in another
  process (the client lost the connection, a load balancer chose another process) replays
  what its process stored, then follows it live: while no response is attached in its own
  process, the stream passes its events on (``relay_of``), and the resuming process
  writes them (:class:`Relay`) until the stream ends or its process is gone (each process
  keeps a liveness mark in the directory).

What is lost when a process dies: the requests it was running (their streams end after
what was stored), and broadcasts sent while no process holds the session's GET stream
(until the client resumes it).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from time import monotonic
from typing import Any, Callable, Optional

from mcpfast._core.decode import decode
from mcpfast._core.encode import encode_notification, encode_request
from mcpfast._core.messages import ErrorResponse, Request, Response
from mcpfast.auth import AccessToken
from mcpfast.protocol import methods
from mcpfast.transports.http.session import HTTPSession
from mcpfast.transports.http.session_directory import DirectoryMessage, SessionDirectory
from mcpfast.transports.http.session_table import SessionTable
from mcpfast.transports.http.sse_stream import SSEStream

__all__ = ["Relay", "SharedSessions", "answered_ids", "holds_response"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

# A record's lifetime without an idle timeout (it must end some day).
UNLIMITED_TTL = 24 * 3600.0
# Record fields.
INIT = "init"
PRINCIPAL = "principal"
PRIME = "prime"
LEVEL = "level"
SUBSCRIBED = "sub:"
# Requests that change a session's state, and so are applied on every copy.
STATE_METHODS = frozenset((methods.SET_LOG_LEVEL, methods.RESOURCES_SUBSCRIBE,
                           methods.RESOURCES_UNSUBSCRIBE))
# Seconds between checks that the processes of relayed streams still run.
RELAY_WATCH_EVERY = 2.0
# The ids of a copy's requests to the client start at a random multiple of this (below
# 2**53, so that JavaScript clients read them exactly).
ID_SPACING = 1 << 32
ID_BASES = 1 << 20


class _Discard:
    """The reply channel of a replayed request: its answers are not wanted."""

    def send(self, frame: bytes) -> None:
        pass

    def respond(self, frame: Optional[bytes]) -> None:
        pass


_DISCARD = _Discard()


def answered_ids(message: Any) -> Optional[list[Any]]:
    """The ids a POST of responses answers, or None when it holds anything else."""
    items = message if isinstance(message, list) else (message,)
    ids = []
    for item in items:
        kind = type(item)
        if kind is not Response and kind is not ErrorResponse:
            return None
        ids.append(item.id)
    return ids


class SharedSessions:
    """The endpoint's side of a session directory (module docstring)."""

    def __init__(self, directory: SessionDirectory, table: SessionTable) -> None:
        self.directory = directory
        self.table = table
        timeout = table.idle_timeout
        self.ttl = UNLIMITED_TTL if timeout is None else float(timeout)
        # A record's lifetime is renewed at most this often per session and process.
        self._touch_every = min(self.ttl / 4, 60.0)
        self._adopting: dict[str, asyncio.Future[Optional[HTTPSession]]] = {}
        # POST streams of other processes resumed here, by stream id.
        self.relays: dict[str, Relay] = {}
        self._watcher: Optional[asyncio.Task[None]] = None
        # Sessions copied here from the directory (for tests and monitoring).
        self.adopted = 0

    async def start(self) -> None:
        await self.directory.start(self._arrived)

    async def close(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        await self.directory.close()

    # -- a session's life --------------------------------------------------------------

    def prepare(self, session: HTTPSession) -> None:
        """A session (new or copied) joins the deployment: its requests to the client get
        ids of their own, and it hears broadcasts only while it holds the GET stream."""
        session.shared = self
        # Its streams name this process: a resume elsewhere asks whether it still runs.
        session.stream_prefix = f"{session.id}.{self.directory.origin}-"
        connection: Any = session.connection
        number_from = getattr(connection, "number_requests_from", None)
        if number_from is not None:
            number_from(1 + secrets.randbelow(ID_BASES - 1) * ID_SPACING)
        hear = getattr(connection, "hear_broadcasts", None)
        if hear is not None:
            hear(False)

    async def record(self, session: HTTPSession, initialize_body: bytes) -> None:
        """Record a session whose initialize succeeded (before the client learns its id)."""
        record = {INIT: initialize_body.decode("utf-8"), PRIME: "1" if session.prime else "0"}
        if session.principal is not None:
            record[PRINCIPAL] = session.principal
        await self.directory.create(session.id, record, self.ttl)
        session.shared_touched = monotonic()
        # The client's notifications/initialized may reach another process than its next
        # request: a recorded session counts as initialized on every copy, this one too.
        session.connection.feed(encode_notification(methods.INITIALIZED))

    def touch(self, session: HTTPSession) -> None:
        now = monotonic()
        if now - session.shared_touched >= self._touch_every:
            session.shared_touched = now
            self.directory.touch(session.id, self.ttl)

    async def adopt(self, session_id: str, token: Optional[AccessToken]) -> Optional[HTTPSession]:
        """A local copy of a session made elsewhere, None when the directory does not know
        it (or it belongs to another subject). Concurrent requests share one lookup."""
        pending = self._adopting.get(session_id)
        if pending is None:
            pending = self._adopting[session_id] = asyncio.get_running_loop().create_future()
            try:
                session = await self._copy(session_id)
            except BaseException as exc:
                pending.set_exception(exc)
                pending.exception()  # retrieved: the waiters (if any) re-raise it
                raise
            finally:
                self._adopting.pop(session_id, None)
            pending.set_result(session)
        else:
            session = await asyncio.shield(pending)
        if session is None:
            return None
        if (token is not None or session.principal is not None) and (
                token is None or token.subject != session.principal):
            return None
        return session

    async def _copy(self, session_id: str) -> Optional[HTTPSession]:
        record = await self.directory.lookup(session_id)
        table = self.table
        existing = table.get(session_id)
        if existing is not None or record is None or INIT not in record:
            return existing
        session = table.new(session_id)
        self.prepare(session)
        session.principal = record.get(PRINCIPAL) or None
        session.prime = record.get(PRIME) == "1"
        connection = session.connection
        try:
            connection.feed(record[INIT].encode("utf-8"), _DISCARD)
            connection.feed(encode_notification(methods.INITIALIZED))
            level = record.get(LEVEL)
            if level:
                connection.feed(encode_request("replayed", methods.SET_LOG_LEVEL, {"level": level}),
                                _DISCARD)
            for field in record:
                if field.startswith(SUBSCRIBED):
                    connection.feed(encode_request("replayed", methods.RESOURCES_SUBSCRIBE,
                                                   {"uri": field[len(SUBSCRIBED):]}), _DISCARD)
        except Exception:
            session.close()
            raise
        session.shared_touched = monotonic()
        self.adopted += 1
        table.admit(session)
        _LOGGER.debug("session %s copied from the directory", session_id)
        return session

    async def state_changed(self, session: HTTPSession, message: Request, body: bytes) -> None:
        """A request that changes the session's state reached this copy: record it and
        apply it on the other copies, before it is answered (so that an update published
        after the answer finds every copy subscribed). ConnectionError when the directory
        is out of reach."""
        params = message.params if type(message.params) is dict else {}
        method = message.method
        if method == methods.SET_LOG_LEVEL:
            level = params.get("level")
            if type(level) is str:
                await self.directory.update(session.id, LEVEL, level)
        else:
            uri = params.get("uri")
            if type(uri) is str:
                subscribed = method == methods.RESOURCES_SUBSCRIBE
                await self.directory.update(session.id, SUBSCRIBED + uri, "1" if subscribed else None)
        await self.directory.publish({"k": "state", "s": session.id, "b": body.decode("utf-8")})

    def pass_answers(self, session: HTTPSession, ids: list[Any], body: bytes) -> bool:
        """Responses from the client: False when this copy awaits every one of them (feed
        them here), else True after passing them to the other copies (and feeding here the
        part this copy awaits)."""
        awaits = getattr(session.connection, "awaits", None)
        if awaits is None:
            return False
        mine = [awaits(request_id) for request_id in ids]
        if all(mine):
            return False
        self.directory.broadcast({"k": "answer", "s": session.id, "b": body.decode("utf-8")})
        if any(mine):
            session.connection.feed(body)
        return True

    def pass_unrelated(self, session: HTTPSession, frame: bytes) -> None:
        """A message for the session's GET stream, which another process holds."""
        self.directory.broadcast({"k": "out", "s": session.id, "f": frame.decode("utf-8")})

    def took_get_stream(self, session: HTTPSession) -> None:
        """This copy holds the GET stream now: it hears broadcasts, the others stop."""
        hear = getattr(session.connection, "hear_broadcasts", None)
        if hear is not None:
            hear(True)
        session.get_taken_at = time.time()
        self.directory.broadcast({"k": "get", "s": session.id, "t": session.get_taken_at})

    def ended(self, session_id: str) -> None:
        """DELETE: the session ends everywhere."""
        self.directory.remove(session_id)
        self.directory.broadcast({"k": "end", "s": session_id})

    # -- POST streams resumed in another process ----------------------------------------

    def relay_of(self, stream_id: str) -> Callable[[Optional[str], Optional[bytes]], None]:
        """What a POST stream of this process does with its events while no response is
        attached here: passes them on, for a resume in another process (:class:`Relay`)."""
        def relay(event_id: Optional[str], frame: Optional[bytes]) -> None:
            if frame is None:
                self.directory.broadcast({"k": "fin", "t": stream_id})
            else:
                self.directory.broadcast({"k": "ev", "t": stream_id, "i": event_id,
                                          "f": frame.decode("utf-8")})
        return relay

    def open_relay(self, session: HTTPSession, last_event_id: str) -> Optional[Relay]:
        """A resume of a POST stream another process made: a Relay collecting that
        stream's live events from now on (None for this process's streams, the GET stream,
        or an id that names no stream of this session)."""
        stream_id = last_event_id.rpartition(".")[0]
        prefix = session.id + "."
        if (not stream_id.startswith(prefix) or stream_id == prefix + "get"
                or stream_id.startswith(session.stream_prefix) or stream_id in session.streams):
            return None
        origin = stream_id[len(prefix):].partition("-")[0]
        previous = self.relays.pop(stream_id, None)
        if previous is not None:
            previous.stream.finish()  # the client resumed again: the older response ends
        relay = self.relays[stream_id] = Relay(stream_id, origin, self.table.keepalive_interval)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        return relay

    def close_relay(self, relay: Relay) -> None:
        if self.relays.get(relay.stream_id) is relay:
            del self.relays[relay.stream_id]
        relay.stream.finish()

    async def _watch(self) -> None:
        # A relayed stream whose process died gets no end from it: ended here.
        while self.relays:
            await asyncio.sleep(RELAY_WATCH_EVERY)
            for relay in list(self.relays.values()):
                try:
                    alive = await self.directory.alive(relay.origin)
                except ConnectionError:
                    continue
                if not alive:
                    _LOGGER.debug("stream %s: its process is gone; the resumed stream ends", relay.stream_id)
                    self.close_relay(relay)

    # -- messages from the other processes ---------------------------------------------

    def _arrived(self, message: DirectoryMessage) -> None:
        try:
            kind = message["k"]
            if kind == "ev" or kind == "fin":
                relay = self.relays.get(message["t"])
                if relay is not None:
                    relay.arrived(message.get("i"), message["f"].encode("utf-8") if kind == "ev" else None)
                return
            session = self.table.get(message["s"])
        except (KeyError, TypeError):
            _LOGGER.warning("session directory: ignored a malformed message %.200r", message)
            return
        if session is None or session.closed:
            return
        try:
            if kind == "answer":
                self._answers_arrived(session, message["b"].encode("utf-8"))
            elif kind == "out":
                if session.get_stream is not None:
                    session.get_stream.push(message["f"].encode("utf-8"))
            elif kind == "state":
                session.connection.feed(message["b"].encode("utf-8"), _DISCARD)
            elif kind == "get":
                if session.get_taken_at > message["t"]:
                    return  # this copy took the stream after the sender did
                session.drop_get_stream()
                hear = getattr(session.connection, "hear_broadcasts", None)
                if hear is not None:
                    hear(False)
            elif kind == "end":
                self.table.end(session)
        except Exception as exc:  # a bad message must not stop the others
            _LOGGER.warning("session directory: could not apply a %r message to session %s: %s",
                            kind, session.id, exc)

    def _answers_arrived(self, session: HTTPSession, body: bytes) -> None:
        awaits = getattr(session.connection, "awaits", None)
        ids = answered_ids(decode(body))
        if awaits is not None and ids and any(awaits(request_id) for request_id in ids):
            session.connection.feed(body)


class Relay:
    """A POST stream of another process, resumed here: the events that process stores
    after the resume arrive as messages (``arrived``) and go to the response once it has
    replayed the stored ones; the stream ends when that process finishes it, or is gone."""

    __slots__ = ("stream_id", "origin", "stream", "_early", "_ended")

    def __init__(self, stream_id: str, origin: str, keepalive: float) -> None:
        self.stream_id = stream_id
        self.origin = origin
        self.stream = SSEStream(stream_id, None, keepalive)
        # Events that arrived before the replay was read: sent after it, unless replayed.
        self._early: list[tuple[Optional[str], bytes]] = []
        self._ended = False

    def arrived(self, event_id: Optional[str], frame: Optional[bytes]) -> None:
        if frame is None:
            if self.stream.attached:
                self.stream.finish()
            else:
                self._ended = True
        elif self.stream.attached:
            self.stream.push_stored(event_id, frame)
        else:
            self._early.append((event_id, frame))

    def start(self, replayed: list[tuple[str, bytes]]) -> None:
        """The response starts: after ``replayed``, what arrived meanwhile and was not in it."""
        self.stream.attach()
        seen = {event_id for event_id, _ in replayed}
        for event_id, frame in self._early:
            if event_id not in seen:
                self.stream.push_stored(event_id, frame)
        self._early.clear()
        if self._ended:
            self.stream.finish()


def holds_response(frames: list[tuple[str, bytes]]) -> bool:
    """Whether a POST stream's events hold a response (the stream is complete)."""
    for _, frame in frames:
        try:
            message = decode(frame)
        except ValueError:
            continue
        if type(message) is Response or type(message) is ErrorResponse:
            return True
    return False
