"""Newline-framed byte streams wired to a connection: the part every stream transport shares.

A *connection factory* is ``factory(send) -> conn``. ``send(frame: bytes)`` writes one frame
(compact JSON without newline; the transport appends ``b"\\n"``); ``conn`` has
``feed(frame)``, ``feed_error(exc)`` and ``close(exc=None)`` -- a jsonrpc Session fits.

:class:`FrameProtocol` is the asyncio protocol that moves bytes between a transport (a socket,
or a read pipe and a write pipe) and one conn:

* Receiving: every chunk goes through a :class:`~mcpfast._core.framing.LineFramer`; each
  complete line is handed to ``conn.feed(frame)`` as a zero-copy memoryview, each oversize
  line to ``conn.feed_error(FrameTooLarge)`` (the conn answers it and the connection goes
  on). An exception escaping ``feed`` / ``feed_error`` is logged and the next frame is
  processed: one faulty message never ends the connection.
* Sending: ``send(frame)`` writes ``frame + b"\\n"`` with non-blocking transport writes,
  gathering frames into one write where that saves system calls without delaying anyone:
  replies sent while a received chunk is processed are written together when it is done,
  so are frames sent on other streams meanwhile (a gateway forwarding what it reads: one
  write per stream and chunk, up to GATHER_LIMIT), and a burst of
  sends outside it (many tasks sending in one loop iteration) is written as the first
  frame at once and the rest with one write from a loop callback -- on the
  side that opened the connection, in pieces as the burst grows (BURST_PIECE bytes,
  doubling up to BURST_PIECE_MAX). A lone send -- one request at a time -- is written at
  once.
  Measured here with a jsonrpc echo on uvloop: in flight, gathering a burst doubles TCP
  round trips/s; sequentially, deferring lone sends would cost about a fifth of the rate.
  Holding a whole burst for one write costs more than it saves when the peer runs on
  another core: it idles until the burst is complete, then the two sides take turns
  (mcpfast's client, 256 calls in flight over stdio: 80K round trips/s in one write per
  burst, 160-170K in pieces, as many as a client writing every request at once).
* Flow control (serving side): when the transport's write buffer rises above its
  high-water mark (the peer reads slowly), reading from the peer is paused and the frames
  already read but not yet handed to the conn wait, so the peer cannot make us queue
  replies without bound; when the buffer has drained below the low-water mark the waiting
  frames are handed over, then reading resumes. Requests already running finish and their
  replies are queued, never dropped. The opening side refuses to queue more than
  ``max_write_buffer`` bytes for a peer that does not read (send() raises
  WriteBufferFull); a serving side drops a peer that leaves more than that unread and
  reads nothing at all for ``write_timeout`` seconds (logged): a slow reader is served,
  a peer that stopped reading does not pin that memory for ever.
* Limits: ``idle_timeout`` closes a connection that does nothing (or holds one incomplete
  line) for that long; an :class:`~mcpfast.transports.budget.InputBudget` bounds the bytes
  of incomplete lines all connections of a server hold. The life of a connection is one
  :class:`StreamState`.
* End: on EOF the last unterminated line is delivered, then ``conn.close(exc)`` is called
  (``exc`` is None for a serving side, a ConnectionError for a side that opened the
  connection and needed the peer), queued writes are flushed and the transport closed.
  A reset or a peer that stops reading ends it the same way with the error. ``closed``
  (a Future) completes once everything is shut; its result is what ``conn.close`` got.

:class:`StreamConnection` is the handle ``open_stdio`` / ``open_tcp`` return.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import math
from time import monotonic_ns
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Set

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE, FrameTooLarge, LineFramer
from mcpfast.transports.option_checks import check_positive_int
from mcpfast.transports.stream_core import FrameCore, use_namespace

if TYPE_CHECKING:
    from mcpfast.transports.budget import InputBudget

__all__ = [
    "CLOSE_TIMEOUT",
    "DEFAULT_MAX_WRITE_BUFFER",
    "DEFAULT_WRITE_TIMEOUT",
    "ConnFactory",
    "ConnectionIdle",
    "FrameProtocol",
    "InputBudgetExceeded",
    "PeerNotReading",
    "StreamConnection",
    "StreamState",
    "TransportClosed",
    "WriteBufferFull",
    "WriterEndProtocol",
]

LOGGER = logging.getLogger("mcpfast.transports")

#: Seconds a graceful close waits for queued writes to reach the peer before aborting.
CLOSE_TIMEOUT = 5.0

#: Bytes that may wait, unread by the peer, in one connection's write buffer (32 MiB: two
#: frames of the default 16 MiB limit). One frame sent while nothing is queued always goes.
DEFAULT_MAX_WRITE_BUFFER = 32 * 1024 * 1024

#: Seconds a serving side waits for a peer that leaves more than max_write_buffer bytes
#: unread to read anything at all, before it drops the connection.
DEFAULT_WRITE_TIMEOUT = 60.0

NEWLINE = b"\n"

# Two sends outside data_received less than this apart (ns), with nothing received in
# between, are taken as a burst, and the second one starts gathering. A lone send -- one
# request at a time -- is written at once: scheduling a flush for it would cost an extra
# loop iteration per round trip. Only the grouping of writes depends on it, never their
# order or delivery. 50 us: a client with 256 calls in flight resumes its tasks one after
# another 15-30 us apart, so 20 us missed most bursts (a write system call per request:
# 62K round trips/s, 95K at 50 us). One request at a time over stdio takes 35-100 us a
# round trip (35 on uvloop when both cores are free): its sends can be closer than 50 us,
# but each follows the response to the one before, so a received chunk ends a burst.
BURST_GAP_NS = 50_000
# Bytes of replies gathered while a received chunk is processed beyond which they are
# written at once: gathering saves system calls, it must not hold an unbounded burst away
# from the transport's flow control.
GATHER_LIMIT = 256 * 1024
# The opening side (a client: its sends are requests) writes a burst (sends outside
# data_received) in pieces, not held whole until the loop iteration ends: the peer --
# another process, on another core -- serves the first requests while the rest are made.
# A piece is written once it holds more than its size: BURST_PIECE bytes (a few small
# requests) for the first, twice the one before for the next ones, up to BURST_PIECE_MAX.
# Measured over stdio with 256 calls in flight, both cores free: pieces of 512 to 4096
# bytes all doubled the client's round trips/s against one write per burst; with 16 in
# flight (a burst of about 2 KB) only 512 and 1024 did. Growing pieces keep the writes of
# a long burst few: with both processes on one core each write wakes the peer onto our
# core, and fixed 512-byte pieces cost 6% there (one write per burst 91K round trips/s,
# 512-byte pieces 85K, growing pieces 87-91K). A serving side writes a burst of replies in
# one write (up to GATHER_LIMIT): a server writing its replies in pieces too made the same
# client 4-14% slower, on one core and on two (more reads and wake-ups for the client,
# whose requests already reach the server in pieces, so the server's bursts stay small).
BURST_PIECE = 512
BURST_PIECE_MAX = 4096

ConnFactory = Callable[[Callable[[bytes], None]], Any]


class TransportClosed(ConnectionError):
    """send() was called after the transport stopped writing (closed, or the peer left)."""


class WriteBufferFull(ConnectionError):
    """The peer left max_write_buffer bytes unread: the frame was refused (opening side)."""


class PeerNotReading(WriteBufferFull):
    """What a serving side's conn.close gets when the peer left more than max_write_buffer
    bytes unread and read nothing for write_timeout seconds."""


class ConnectionIdle(ConnectionError):
    """What conn.close gets when idle_timeout closed the connection."""


class InputBudgetExceeded(ConnectionError):
    """What conn.close gets when a server's budget for incomplete lines dropped it."""


def peer_address(transport: Optional[asyncio.BaseTransport]) -> Optional[str]:
    """The address of a socket transport's peer, without its port (``"127.0.0.1"``,
    ``"::1"``; a Unix socket's path when it has one), else None (stdio, pipes)."""
    if transport is None:
        return None
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and peer and isinstance(peer[0], str):
        return peer[0]
    if isinstance(peer, str) and peer:
        return peer
    return None


def peer_port(transport: Optional[asyncio.BaseTransport]) -> Optional[int]:
    """The port of a socket transport's peer (TCP), else None (a Unix socket, stdio,
    pipes)."""
    if transport is None:
        return None
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2 and isinstance(peer[1], int):
        return peer[1]
    return None


def check_timeout(name: str, value: Any) -> float:
    """value if it is a finite number of seconds > 0; ValueError naming it otherwise."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def check_stream_options(
    factory: Any,
    *,
    max_frame_size: Optional[int] = None,
    write_high_water: Optional[int] = None,
    max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
    idle_timeout: Optional[float] = None,
    write_timeout: Optional[float] = None,
) -> None:
    """Raise TypeError / ValueError for options a FrameProtocol would refuse."""
    if not callable(factory):
        raise TypeError(f"factory must be callable, not {type(factory).__name__}")
    if max_frame_size is not None:
        LineFramer(max_frame_size)  # its own checks and messages
    if write_high_water is not None:
        check_positive_int("write_high_water", write_high_water)
    check_positive_int("max_write_buffer", max_write_buffer)
    if idle_timeout is not None:
        check_timeout("idle_timeout", idle_timeout)
    if write_timeout is not None:
        check_timeout("write_timeout", write_timeout)


def _discard(data: bytes) -> None:
    """Stands in for the write of a transport that is lost."""


def _drop_frame(frame: Any) -> bool:
    """Stands in for conn.feed before a conn exists (or when the factory failed)."""
    return False


class StreamState(enum.IntEnum):
    """Where a :class:`FrameProtocol` is in its life: the one state it keeps.

    Transitions (nothing else changes the state)::

        NEW -> OPEN              connection_made: transports wired, the conn created
        OPEN -> BACKED_UP        pause_writing: the write buffer rose above its high-water
                                 mark; a flow-controlled side stops reading from the peer
        BACKED_UP -> OPEN        resume_writing: the buffer drained below the low-water mark
        OPEN, BACKED_UP -> RECEIVING
                                 the write side alone is gone (a child process closed its
                                 stdin): frames are still read, send() refuses
        OPEN .. RECEIVING -> ENDING
                                 a child's stdout ended: nothing is read or sent; the conn
                                 is closed once the exit status is known (or EXIT_WAIT)
        NEW .. ENDING -> CLOSING the conn is closed: EOF, reset, the peer stopped reading,
                                 abort(), shutdown(), a limit (idle, buffer budget); nothing
                                 more is fed, send() refuses, queued writes are flushed (or
                                 dropped by abort) and the transports are closed
        CLOSING -> CLOSED        every transport is gone (a process: and it exited);
                                 ``closed`` has its result

    The order of the values is used: ``state <= BACKED_UP`` means send() writes, and
    ``state >= CLOSING`` means the conn is closed.
    """

    NEW = 0
    OPEN = 1
    BACKED_UP = 2
    RECEIVING = 3
    ENDING = 4
    CLOSING = 5
    CLOSED = 6


NEW = StreamState.NEW
OPEN = StreamState.OPEN
BACKED_UP = StreamState.BACKED_UP
RECEIVING = StreamState.RECEIVING
ENDING = StreamState.ENDING
CLOSING = StreamState.CLOSING
CLOSED = StreamState.CLOSED


class FrameProtocol(FrameCore, asyncio.Protocol):
    """Moves newline-delimited frames between asyncio transports and one conn.

    factory: ``factory(send) -> conn``, called once when the transport is connected.
    max_frame_size: the longest line accepted; longer ones reach ``conn.feed_error``.
    client_side: True for the side that opened the connection. The peer closing it is then
        reported to ``conn.close`` as a ConnectionError (failing every waiter) and an
        exception from the factory is kept in ``factory_error`` for the opener to raise; a
        serving side gets ``conn.close(None)`` on a clean EOF and factory errors are logged.
    write_high_water: high-water mark of the write buffer in bytes (None: the transport's
        default); the low-water mark is a quarter of it.
    max_write_buffer: the most bytes queued for a peer that does not read (default
        DEFAULT_MAX_WRITE_BUFFER). On the opening side a frame that would queue more is
        refused: send() raises :class:`WriteBufferFull` (the call fails at once, the
        connection stays); a frame sent while nothing is queued always goes. A serving
        side queues it (replies are never dropped) and watches the peer: see
        write_timeout.
    write_timeout: serving side, seconds (default DEFAULT_WRITE_TIMEOUT; None: never). A
        peer that leaves more than max_write_buffer bytes unread and reads nothing for a
        whole period of that length is dropped (logged; conn.close gets
        :class:`PeerNotReading`). Checked once per period while the write buffer is above
        its high-water mark, so it drops between 1 and 2 periods after the peer stopped.
    idle_timeout: seconds (None: never). The connection is closed (conn.close gets a
        :class:`ConnectionIdle`) when, for a whole period of that length, no frame was
        received and none sent, or one incomplete line was held without completing.
        Checked once per period, so it closes after between 1 and 2 periods.
    budget: an :class:`~mcpfast.transports.budget.InputBudget` shared by the connections
        of one server, bounding the bytes of incomplete lines they hold together.
    logger: where failures of the conn are logged.
    flow_control: pause reading from the peer while the write buffer is above its
        high-water mark (default: on a serving side only -- a server's writes are replies
        to what it reads, so not reading bounds them; if the opening side paused too, two
        peers with full buffers could each wait for the other forever).
    log_factory_errors: log an exception from the factory (default: on a serving side,
        where nobody else would see it); it is kept in ``factory_error`` either way.

    For a socket, the one transport given to ``connection_made`` is read and written. For a
    pipe pair, call :meth:`set_writer` with the write transport (connected with a
    :class:`WriterEndProtocol` for this protocol) before the read transport connects.
    """

    def __init__(
        self,
        factory: ConnFactory,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        client_side: bool = False,
        write_high_water: Optional[int] = None,
        max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
        idle_timeout: Optional[float] = None,
        write_timeout: Optional[float] = DEFAULT_WRITE_TIMEOUT,
        budget: Optional[InputBudget] = None,
        logger: Optional[logging.Logger] = None,
        flow_control: Optional[bool] = None,
        log_factory_errors: Optional[bool] = None,
    ) -> None:
        check_stream_options(factory, write_high_water=write_high_water,
                             max_write_buffer=max_write_buffer, idle_timeout=idle_timeout,
                             write_timeout=write_timeout)
        self._factory = factory
        self._framer = LineFramer(max_frame_size)
        self._client_side = client_side
        self._flow_control = not client_side if flow_control is None else bool(flow_control)
        self._log_factory_errors = (
            not client_side if log_factory_errors is None else bool(log_factory_errors)
        )
        self._high_water = write_high_water
        self._max_write_buffer = max_write_buffer
        self._idle_timeout = idle_timeout
        self._write_timeout = None if client_side else write_timeout
        self._budget = budget
        self._logger = logger if logger is not None else LOGGER
        self.conn: Any = None
        #: The exception the factory raised, if it did (the connection was then dropped).
        self.factory_error: Optional[BaseException] = None
        self._state = NEW
        self._feed: Callable[[Any], Any] = _drop_frame
        self._reader: Optional[asyncio.BaseTransport] = None
        self._writer: Optional[asyncio.WriteTransport] = None
        self._write: Optional[Callable[[bytes], None]] = None
        # Transports connected and not yet lost (one for a socket, two for a pipe pair).
        self._live: Set[asyncio.BaseTransport] = set()
        # Frames gathered for one write: while data_received runs, and after a write made
        # outside it, until the end of the loop iteration (see send).
        self._gathered: Optional[List[bytes]] = None
        # The size of the pieces the current gathering is written in (see send), and that
        # minus the bytes gathered in this piece (newlines not counted): cheaper to test.
        self._piece = GATHER_LIMIT
        self._gather_room = GATHER_LIMIT
        self._close_exc: Optional[BaseException] = None
        self._last_write_ns = -(1 << 62)  # "long ago"
        # Until when (monotonic ns) a send continues a burst: BURST_GAP_NS after the last
        # send written at once, 0 (no burst) once something was received since.
        self._burst_until_ns = 0
        # A frame was received since the last idle check (activity, for idle_timeout).
        self._frames_seen = False
        self._held = 0  # bytes of the incomplete line last reported to the budget
        self._idle_timer: Optional[asyncio.TimerHandle] = None
        self._idle_mark: tuple = ()
        # Frames read but not yet handed to the conn because our writes backed up (flow
        # control); None when there are none. Reading stays paused while it is not None.
        self._waiting: Optional[List[Any]] = None
        # The write_timeout watch (serving side, while backed up): its timer, the write
        # buffer's size at the last check and the bytes written since.
        self._stall_timer: Optional[asyncio.TimerHandle] = None
        self._stall_mark = 0
        self._stall_written = 0
        self._loop = asyncio.get_running_loop()
        self.closed: asyncio.Future = self._loop.create_future()

    # -- properties --------------------------------------------------------------------

    @property
    def state(self) -> StreamState:
        """Where the connection is in its life (see :class:`StreamState`)."""
        return self._state

    @property
    def reading_paused(self) -> bool:
        """True while reading from the peer is paused because our writes are backed up
        (or the frames read meanwhile are still being handed over)."""
        return self._flow_control and (self._state is BACKED_UP or self._waiting is not None)

    @property
    def write_buffer_size(self) -> int:
        """Bytes written but not yet handed to the operating system."""
        writer = self._writer
        if writer is None or writer not in self._live:
            return 0
        return writer.get_write_buffer_size()

    @property
    def conn_closed(self) -> bool:
        """True once conn.close() was called by this protocol."""
        return self._state >= CLOSING

    # -- wiring ------------------------------------------------------------------------

    def set_writer(self, transport: asyncio.WriteTransport) -> None:
        """Use transport for writing (pipes: the write end, connected before the reader)."""
        self._writer = transport
        self._write = transport.write
        self._live.add(transport)
        if self._high_water is not None:
            transport.set_write_buffer_limits(high=self._high_water)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._writer is None:
            self.set_writer(transport)  # type: ignore[arg-type]
        self._reader = transport
        self._live.add(transport)
        self._start()

    def _start(self) -> None:
        """Create the conn; a failing factory is logged and the connection dropped."""
        self._state = OPEN  # the factory may send
        try:
            conn = self._factory(self.send)
        except Exception as exc:
            self.factory_error = exc
            if self._log_factory_errors:
                self._logger.exception("the connection factory failed; dropping the connection")
            self.abort()
            return
        self.conn = conn
        self._feed = conn.feed
        if hasattr(conn, "peer_address"):
            # The transport contract's optional attribute: who is on the other end.
            conn.peer_address = peer_address(self._reader)
        if hasattr(conn, "peer_port"):
            conn.peer_port = peer_port(self._reader)
        if self._idle_timeout is not None:
            self._arm_idle_timer()

    # -- receiving ---------------------------------------------------------------------
    # (data_received and _deliver_frames are FrameCore's, compiled: stream_core.pyx.)

    def _report_held(self) -> None:
        """Tell the budget (if any) how many bytes of an incomplete line are held now."""
        budget = self._budget
        if budget is not None:
            held = self._framer.buffered
            if held != self._held and self._state < CLOSING:
                self._held = held
                budget.update(self, held)

    def _stop_delivering(self, pending: Any) -> bool:
        """After a frame, outside OPEN: True to stop handing frames over. The conn is
        closed: the rest has nobody to go to. Our writes backed up (flow control): the
        rest waits for them to drain, so the peer's requests are paused, not dropped."""
        if self._state >= CLOSING:
            return True
        if self._state is BACKED_UP and self._flow_control:
            rest = list(pending)
            if rest:
                self._waiting = rest
            return True
        return False

    def _deliver_waiting(self) -> None:
        """The write buffer drained: hand over the frames that waited, then read again
        (unless our writes backed up once more on the way)."""
        frames = self._waiting
        if frames is None or self._state is not OPEN:
            return  # backed up again (resume_writing calls again) or closed
        self._waiting = None
        own = self._gathered is None
        if own:
            self._gathered = []
        try:
            self._deliver_frames(frames)
        finally:
            if own:
                self._flush_gathered()
        reader = self._reader
        if self._waiting is None and self._state is OPEN and reader is not None:
            reader.resume_reading()  # type: ignore[attr-defined]

    def _deliver_error(self, error: FrameTooLarge) -> None:
        try:
            self.conn.feed_error(error)
        except Exception:
            self._logger.exception("conn.feed_error(%r) raised; going on", error)

    def _feed_failed(self, frame: memoryview) -> None:
        size = frame.nbytes
        head = bytes(frame[:200])
        self._logger.exception(
            "conn.feed raised on a %d-byte frame (starting %r); going on with the next frame",
            size, head,
        )

    def eof_received(self) -> bool:
        self._end_reading(None, eof=True)
        # False: the transport closes itself once queued writes are flushed.
        return False

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        """The read transport (for a socket: the whole connection) is gone."""
        self._live.discard(self._reader)
        if self._writer is self._reader:
            self._writer_gone()
        self._end_reading(exc, eof=False)
        self._maybe_done()

    def _end_reading(self, exc: Optional[BaseException], *, eof: bool) -> None:
        """The peer sent all it will: deliver the last line, close the conn, flush, close."""
        if self._state >= CLOSING:
            return
        if eof:
            self._deliver_frames(self._framer.close())
        if exc is None and self._client_side:
            exc = self._peer_gone_error()
        self._close_conn(exc)
        self._flush_gathered()
        writer = self._writer
        if writer is not None and writer is not self._reader:
            self._close_writer()

    def _peer_gone_error(self) -> BaseException:
        """What conn.close gets when the peer ends a connection this side needed."""
        return ConnectionError("the peer closed the connection")

    # -- sending -----------------------------------------------------------------------
    # (send and _flush_gathered are FrameCore's, compiled: stream_core.pyx.)

    def _send_not_open(self, frame: bytes) -> None:
        """send() outside OPEN: refused when not writing; while our writes are backed up,
        written at once (after what was gathered) unless the peer is too far behind."""
        if self._state is not BACKED_UP:
            if self._state is NEW:
                raise TransportClosed("the connection is not connected yet")
            raise TransportClosed("the connection is closed; the frame cannot be sent")
        if self._client_side:
            queued = self.write_buffer_size + self._piece - self._gather_room
            if queued and queued + len(frame) + 1 > self._max_write_buffer:
                raise WriteBufferFull(
                    f"the peer has not read {queued} bytes sent to it (max_write_buffer="
                    f"{self._max_write_buffer}); the frame was not sent"
                )
        # A serving side queues it whatever the size: a reply is never dropped; a peer
        # that stopped reading altogether is dropped by the write_timeout watch.
        # Backed up, gathering saves nothing: what was gathered goes first, then this frame.
        self._flush_gathered()
        self._last_write_ns = now = monotonic_ns()
        self._burst_until_ns = now + BURST_GAP_NS
        self._stall_written += len(frame) + 1
        try:
            self._write(frame + NEWLINE)  # type: ignore[misc]
        except RuntimeError as exc:
            self._write_refused(exc)

    def _write_refused(self, exc: RuntimeError) -> None:
        """The transport refused a write: uvloop closes a pipe's handle on EPIPE and raises
        on the next write, before the loss is reported. The write side is gone: say so
        with TransportClosed, as once the loss is known. Another RuntimeError propagates."""
        writer = self._writer
        if writer is None or not writer.is_closing():
            raise exc
        self._write_side_gone(exc)
        raise TransportClosed("the peer stopped reading; the frame cannot be sent") from exc

    def _write_side_gone(self, exc: BaseException) -> None:
        """The write transport cannot write any more (its loss may be reported later)."""
        if self._writer is self._reader:
            if self._state < CLOSING:
                self._drop("the connection cannot be written to; dropping it",
                           ConnectionError(f"the connection cannot be written to: {exc}"))
        else:
            self.writer_lost(ConnectionError(f"the peer stopped reading: {exc}"))

    def _writer_gone(self) -> None:
        """The write transport is lost: what is still written goes nowhere, quietly."""
        self._live.discard(self._writer)
        self._write = _discard

    def _drop_gathered(self) -> None:
        self._gathered = None
        self._gather_room = self._piece = GATHER_LIMIT

    # -- flow control ------------------------------------------------------------------

    def pause_writing(self) -> None:
        """The write buffer is above the high-water mark: stop reading from the peer (and
        handing it what was read: see _stop_delivering)."""
        if self._state is not OPEN:
            return
        self._state = BACKED_UP
        reader = self._reader
        if self._flow_control and reader is not None and self._waiting is None:
            reader.pause_reading()  # type: ignore[attr-defined]
        if self._write_timeout is not None and self._stall_timer is None:
            self._arm_stall_timer()

    def resume_writing(self) -> None:
        """The write buffer drained: hand over the frames that waited, read again."""
        if self._state is not BACKED_UP:
            return
        self._state = OPEN
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
        if not self._flow_control:
            return
        if self._waiting is not None:
            # From a loop callback, not inside the transport's write-ready handler.
            self._loop.call_soon(self._deliver_waiting)
            return
        reader = self._reader
        if reader is not None:
            reader.resume_reading()  # type: ignore[attr-defined]

    # -- the write end of a pipe pair ----------------------------------------------------

    def writer_lost(self, exc: Optional[BaseException]) -> None:
        """The write transport of a pipe pair is gone (flushed and closed, or broken)."""
        self._writer_gone()
        if self._state < CLOSING:
            # The peer stopped reading us: nothing sent can arrive any more.
            self._close_conn(exc if exc is not None else ConnectionError("the peer stopped reading"))
            reader = self._reader
            if reader is not None and reader in self._live:
                reader.close()
        self._maybe_done()

    # -- limits ------------------------------------------------------------------------

    def _arm_idle_timer(self) -> None:
        self._frames_seen = False
        self._idle_mark = (self._last_write_ns, self._framer.buffered > 0)
        self._idle_timer = self._loop.call_later(self._idle_timeout, self._idle_check)

    def _idle_check(self) -> None:
        """Once per idle_timeout: close a connection that did nothing, or is stuck on a line."""
        self._idle_timer = None
        if self._state >= CLOSING:
            return
        write_then, partial_then = self._idle_mark
        no_frames = not self._frames_seen
        if no_frames and self._last_write_ns == write_then:
            reason = f"nothing received or sent for {self._idle_timeout:g} s"
        elif no_frames and partial_then and self._framer.buffered > 0:
            reason = f"a line left incomplete for {self._idle_timeout:g} s"
        else:
            self._arm_idle_timer()
            return
        self._logger.info("closing an idle connection: %s", reason)
        self._close_conn(ConnectionIdle(f"connection closed: {reason}"))
        self._close_gracefully()

    def _arm_stall_timer(self) -> None:
        self._stall_mark = self.write_buffer_size
        self._stall_written = 0
        self._stall_timer = self._loop.call_later(self._write_timeout, self._stall_check)

    def _stall_check(self) -> None:
        """Once per write_timeout while backed up: drop a peer that left more than
        max_write_buffer bytes unread and read nothing of them for the whole period."""
        self._stall_timer = None
        if self._state is not BACKED_UP:
            return
        queued = self.write_buffer_size
        read = self._stall_mark + self._stall_written - queued
        if read <= 0 and queued > self._max_write_buffer:
            message = (
                f"the peer read nothing for {self._write_timeout:g} s of {queued} bytes sent "
                f"to it (max_write_buffer={self._max_write_buffer})"
            )
            self._drop(f"{message}; dropping the connection", PeerNotReading(message))
            return
        self._arm_stall_timer()

    def drop_for_budget(self, total: int, limit: int) -> None:
        """Called by an InputBudget: this connection holds the largest incomplete line."""
        reason = (
            f"incomplete lines of all connections hold {total} bytes (limit {limit}); "
            f"this one holds the largest ({self._held} bytes)"
        )
        self._drop(f"{reason}; dropping it", InputBudgetExceeded(reason))

    def _drop(self, message: str, exc: BaseException) -> None:
        """Abort the connection because of a limit, telling the conn why."""
        self._logger.warning("%s", message)
        self._close_conn(exc)
        self.abort()

    # -- closing -----------------------------------------------------------------------

    def _close_conn(self, exc: Optional[BaseException]) -> None:
        if self._state >= CLOSING:
            return
        self._state = CLOSING
        self._close_exc = exc
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
        self._waiting = None
        # Nothing more is read: the framer's buffer (up to max_frame_size of a line the
        # peer never finished) goes now, not when the protocol object is collected.
        self._framer.release()
        if self._budget is not None:
            self._budget.release(self)
        conn = self.conn
        if conn is not None:
            try:
                conn.close(exc)
            except Exception:
                self._logger.exception("conn.close() raised")

    def _close_writer(self) -> None:
        """Flush queued writes, then close the write side."""
        self._flush_gathered()
        writer = self._writer
        if writer is not None and writer in self._live and not writer.is_closing():
            writer.close()

    def _close_gracefully(self) -> None:
        """After _close_conn: flush and close the write side, stop reading (pipes)."""
        self._close_writer()
        reader = self._reader
        if reader is not None and reader is not self._writer and reader in self._live:
            reader.close()

    def _maybe_done(self) -> None:
        if not self._live:
            self._resolve_closed()

    def _resolve_closed(self) -> None:
        self._state = CLOSED
        if not self.closed.done():
            self.closed.set_result(self._close_exc)

    def abort(self) -> None:
        """Drop the connection now: queued writes are discarded, the conn is closed."""
        self._drop_gathered()
        self._close_conn(None)
        # abort() also cuts short a graceful close that is still flushing.
        writer = self._writer
        if writer is not None and writer in self._live:
            writer.abort()
        reader = self._reader
        if reader is not None and reader is not writer and reader in self._live:
            # A read pipe has nothing queued: close() stops it at once (and read pipe
            # transports have no abort()).
            reader.close()
        if reader is None and writer is None:
            self._resolve_closed()

    async def shutdown(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close from this side: conn.close(), flush queued writes (up to timeout), close.

        Idempotent; returns once ``closed`` is done.
        """
        if not self.closed.done():
            self._close_conn(None)
            self._close_gracefully()
            try:
                await asyncio.wait_for(asyncio.shield(self.closed), timeout)
            except asyncio.TimeoutError:
                self._logger.warning("queued writes not flushed after %.1f s; aborting", timeout)
                self.abort()
        await asyncio.shield(self.closed)


class WriterEndProtocol(asyncio.BaseProtocol):
    """Protocol of the write pipe of a pipe pair: forwards its events to a FrameProtocol."""

    __slots__ = ("_owner",)

    def __init__(self, owner: FrameProtocol) -> None:
        self._owner = owner

    def pause_writing(self) -> None:
        self._owner.pause_writing()

    def resume_writing(self) -> None:
        self._owner.resume_writing()

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self._owner.writer_lost(exc)


class StreamConnection:
    """A connection opened by ``open_stdio`` / ``open_tcp``.

    ``conn``: what the factory returned. ``closed``: a Future completing when the
    connection is over (the peer went away -- ``conn.close(exc)`` has then been called with
    a ConnectionError -- or :meth:`close` finished); its result is that exception or None.
    For a process, "over" means the conn is closed and the process has exited.
    ``process``: the child process (:class:`~mcpfast.transports.stdio.ServerProcess`) for
    ``open_stdio``, None otherwise.
    Use ``async with`` to close it on exit.
    """

    __slots__ = ("_protocol", "process")

    def __init__(self, protocol: FrameProtocol, process: Any = None) -> None:
        self._protocol = protocol
        self.process = process

    @property
    def conn(self) -> Any:
        """The conn the factory made."""
        return self._protocol.conn

    @property
    def closed(self) -> asyncio.Future:
        """Completes when the connection is over (result: the error conn.close got, or None)."""
        return self._protocol.closed

    @property
    def state(self) -> StreamState:
        """Where the connection is in its life (see :class:`StreamState`)."""
        return self._protocol.state

    @property
    def reading_paused(self) -> bool:
        """True while reading from the peer is paused because it does not read our writes."""
        return self._protocol.reading_paused

    @property
    def write_buffer_size(self) -> int:
        """Bytes written to the peer but still queued in this process."""
        return self._protocol.write_buffer_size

    async def close(self) -> None:
        """Close the connection (see the transport's docs for processes); idempotent."""
        await self._protocol.shutdown()

    async def __aenter__(self) -> StreamConnection:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed.done() else "open"
        return f"<StreamConnection {state} conn={self.conn!r}>"


# The compiled half of FrameProtocol reads its tunables, states and TransportClosed here.
use_namespace(globals())
