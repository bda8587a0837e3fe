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
  and a burst of sends outside it (many tasks sending in one loop iteration) is written
  as the first frame at once and the rest with one write from a loop callback. A lone
  send -- one request at a time -- is written at once. Measured here with a jsonrpc echo
  on uvloop: in flight, one write per burst doubles TCP round trips/s; sequentially,
  deferring lone sends would cost about a fifth of the rate.
* Flow control (serving side): when the transport's write buffer rises above its
  high-water mark (the peer reads slowly), reading from the peer is paused, so the peer
  cannot make us queue replies without bound; it resumes when the buffer has drained below
  the low-water mark.
* End: on EOF the last unterminated line is delivered, then ``conn.close(exc)`` is called
  (``exc`` is None for a serving side, a ConnectionError for a side that opened the
  connection and needed the peer), queued writes are flushed and the transport closed.
  A reset or a peer that stops reading ends it the same way with the error. ``closed``
  (a Future) completes once everything is shut; its result is what ``conn.close`` got.

:class:`StreamConnection` is the handle ``open_stdio`` / ``open_tcp`` return.
"""

from __future__ import annotations

import asyncio
import logging
from time import monotonic_ns
from typing import Any, Callable, List, Optional

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE, FrameTooLarge, LineFramer

__all__ = [
    "CLOSE_TIMEOUT",
    "ConnFactory",
    "FrameProtocol",
    "StreamConnection",
    "TransportClosed",
    "WriterEndProtocol",
]

LOGGER = logging.getLogger("mcpfast.transports")

#: Seconds a graceful close waits for queued writes to reach the peer before aborting.
CLOSE_TIMEOUT = 5.0

NEWLINE = b"\n"

# Two sends outside data_received less than this apart (ns) are taken as a burst, and the
# second one starts gathering. A lone send -- one request at a time -- is written at once:
# scheduling a flush for it would cost an extra loop iteration per round trip. Only the
# grouping of writes depends on it, never their order or delivery.
BURST_GAP_NS = 20_000

ConnFactory = Callable[[Callable[[bytes], None]], Any]


class TransportClosed(ConnectionError):
    """send() was called after the transport stopped writing (closed, or the peer left)."""


def _drop_frame(frame: Any) -> bool:
    """Stands in for conn.feed before a conn exists (or when the factory failed)."""
    return False


class FrameProtocol(asyncio.Protocol):
    """Moves newline-delimited frames between asyncio transports and one conn.

    factory: ``factory(send) -> conn``, called once when the transport is connected.
    max_frame_size: the longest line accepted; longer ones reach ``conn.feed_error``.
    client_side: True for the side that opened the connection. The peer closing it is then
        reported to ``conn.close`` as a ConnectionError (failing every waiter) and an
        exception from the factory is kept in ``factory_error`` for the opener to raise; a
        serving side gets ``conn.close(None)`` on a clean EOF and factory errors are logged.
    write_high_water: high-water mark of the write buffer in bytes (None: the transport's
        default); the low-water mark is a quarter of it.
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
        logger: Optional[logging.Logger] = None,
        flow_control: Optional[bool] = None,
        log_factory_errors: Optional[bool] = None,
    ) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be callable, not {type(factory).__name__}")
        if write_high_water is not None and (
            isinstance(write_high_water, bool)
            or not isinstance(write_high_water, int)
            or write_high_water <= 0
        ):
            raise ValueError(f"write_high_water must be a positive int, got {write_high_water!r}")
        self._factory = factory
        self._framer = LineFramer(max_frame_size)
        self._client_side = client_side
        self._flow_control = not client_side if flow_control is None else bool(flow_control)
        self._log_factory_errors = (
            not client_side if log_factory_errors is None else bool(log_factory_errors)
        )
        self._high_water = write_high_water
        self._logger = logger if logger is not None else LOGGER
        self.conn: Any = None
        #: The exception the factory raised, if it did (the connection was then dropped).
        self.factory_error: Optional[BaseException] = None
        self._feed: Callable[[Any], Any] = _drop_frame
        self._reader: Optional[asyncio.BaseTransport] = None
        self._writer: Optional[asyncio.WriteTransport] = None
        self._write: Optional[Callable[[bytes], None]] = None
        # Frames gathered for one write: while data_received runs, and after a write made
        # outside it, until the end of the loop iteration (see send).
        self._gathered: Optional[List[bytes]] = None
        self._reading_paused = False
        self._reading_done = False  # EOF seen, or the read side was lost
        self._writing_done = False  # the write side is closing or lost: send() refuses
        self._reader_lost = False
        self._writer_lost = False
        self._conn_closed = False
        self._close_exc: Optional[BaseException] = None
        self._local_close = False  # this side started the close (StreamConnection.close)
        self._last_write_ns = -(1 << 62)  # "long ago": the first send is written at once
        self._loop = asyncio.get_running_loop()
        self.closed: asyncio.Future = self._loop.create_future()

    # -- properties --------------------------------------------------------------------

    @property
    def reading_paused(self) -> bool:
        """True while reading from the peer is paused because our writes are backed up."""
        return self._reading_paused

    @property
    def write_buffer_size(self) -> int:
        """Bytes written but not yet handed to the operating system."""
        writer = self._writer
        if writer is None or self._writer_lost:
            return 0
        return writer.get_write_buffer_size()

    @property
    def conn_closed(self) -> bool:
        """True once conn.close() was called by this protocol."""
        return self._conn_closed

    # -- wiring ------------------------------------------------------------------------

    def set_writer(self, transport: asyncio.WriteTransport) -> None:
        """Use transport for writing (pipes: the write end, connected before the reader)."""
        self._writer = transport
        self._write = transport.write
        if self._high_water is not None:
            transport.set_write_buffer_limits(high=self._high_water)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        if self._writer is None:
            self.set_writer(transport)  # type: ignore[arg-type]
        self._reader = transport
        self._start()

    def _start(self) -> None:
        """Create the conn; a failing factory is logged and the connection dropped."""
        try:
            conn = self._factory(self.send)
        except Exception as exc:
            self.factory_error = exc
            if self._log_factory_errors:
                self._logger.exception("the connection factory failed; dropping the connection")
            self._conn_closed = True
            self.abort()
            return
        self.conn = conn
        self._feed = conn.feed

    # -- receiving ---------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._conn_closed:
            return  # closing: what the peer still sends has nobody to go to
        # Replies sent while this chunk is processed are gathered and written at the end,
        # unless a write gathering for this loop iteration is already under way.
        own = self._gathered is None
        if own:
            self._gathered = []
        # The loop of _deliver_frames, inline: a method call per chunk is measurable here.
        feed = self._feed
        try:
            for frame in self._framer.feed(data):
                if type(frame) is memoryview:
                    try:
                        feed(frame)
                    except Exception:
                        self._feed_failed(frame)
                else:
                    self._deliver_error(frame)
        finally:
            if own:
                self._flush_gathered()

    def _deliver_frames(self, frames: list) -> None:
        """Hand the framer's output to the conn: frames to conn.feed, FrameTooLarge to
        conn.feed_error. A conn that raises is logged and gets the next frame."""
        feed = self._feed
        for frame in frames:
            if type(frame) is memoryview:
                try:
                    feed(frame)
                except Exception:
                    self._feed_failed(frame)
            else:
                self._deliver_error(frame)

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
        self._reader_lost = True
        if self._writer is self._reader:
            self._writer_lost = True
            self._writing_done = True
        self._end_reading(exc, eof=False)
        self._maybe_done()

    def _end_reading(self, exc: Optional[BaseException], *, eof: bool) -> None:
        """The peer sent all it will: deliver the last line, close the conn, flush, close."""
        if self._reading_done:
            return
        self._reading_done = True
        if eof and not self._conn_closed:
            self._deliver_frames(self._framer.close())
        if self._local_close:
            exc = None
        elif exc is None and self._client_side:
            exc = self._peer_gone_error()
        self._close_conn(exc)
        self._flush_gathered()
        self._writing_done = True
        writer = self._writer
        if writer is not None and writer is not self._reader:
            self._close_writer()

    def _peer_gone_error(self) -> BaseException:
        """What conn.close gets when the peer ends a connection this side needed."""
        return ConnectionError("the peer closed the connection")

    # -- sending -----------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        """Write one frame and its newline without blocking (queued if the peer is slow)."""
        if self._writing_done:
            raise TransportClosed("the connection is closed; the frame cannot be sent")
        gathered = self._gathered
        if gathered is not None:
            gathered.append(frame)
            return
        now = monotonic_ns()
        if now - self._last_write_ns < BURST_GAP_NS:
            # Another send right after the last write: a burst (many tasks sending in one
            # loop iteration). Gather the rest of it into one write, made by a callback
            # that runs after the callbacks already due (the senders).
            self._gathered = [frame]
            self._loop.call_soon(self._flush_gathered)
            return
        self._last_write_ns = now
        self._write(frame + NEWLINE)  # type: ignore[misc]

    def _flush_gathered(self) -> None:
        """Write the gathered frames (if any) with one write; stop gathering."""
        frames = self._gathered
        self._gathered = None
        if not frames or self._writing_done:
            return
        if len(frames) == 1:
            self._write(frames[0] + NEWLINE)  # type: ignore[misc]
        else:
            frames.append(b"")
            self._write(NEWLINE.join(frames))  # type: ignore[misc]

    # -- flow control ------------------------------------------------------------------

    def pause_writing(self) -> None:
        """The write buffer is above the high-water mark: stop reading from the peer."""
        if not self._flow_control:
            return
        self._reading_paused = True
        reader = self._reader
        if reader is not None and not self._reading_done:
            reader.pause_reading()  # type: ignore[attr-defined]

    def resume_writing(self) -> None:
        """The write buffer drained: read from the peer again."""
        if not self._reading_paused:
            return
        self._reading_paused = False
        reader = self._reader
        if reader is not None and not self._reading_done:
            reader.resume_reading()  # type: ignore[attr-defined]

    # -- the write end of a pipe pair ----------------------------------------------------

    def writer_lost(self, exc: Optional[BaseException]) -> None:
        """The write transport of a pipe pair is gone (flushed and closed, or broken)."""
        self._writer_lost = True
        self._writing_done = True
        if not self._conn_closed and not self._local_close:
            # The peer stopped reading us: nothing sent can arrive any more.
            self._close_conn(exc if exc is not None else ConnectionError("the peer stopped reading"))
        reader = self._reader
        if reader is not None and not self._reader_lost and not self._reading_done:
            self._reading_done = True
            reader.close()
        self._maybe_done()

    # -- closing -----------------------------------------------------------------------

    def _close_conn(self, exc: Optional[BaseException]) -> None:
        if self._conn_closed:
            return
        self._conn_closed = True
        self._close_exc = exc
        conn = self.conn
        if conn is not None:
            try:
                conn.close(exc)
            except Exception:
                self._logger.exception("conn.close() raised")

    def _close_writer(self) -> None:
        """Flush queued writes, then close the write side."""
        if not self._writing_done:
            self._flush_gathered()
        self._writing_done = True
        writer = self._writer
        if writer is not None and not self._writer_lost and not writer.is_closing():
            writer.close()

    def _maybe_done(self) -> None:
        if self._reader_lost and (self._writer_lost or self._writer is None):
            self._resolve_closed()

    def _resolve_closed(self) -> None:
        if not self.closed.done():
            self.closed.set_result(self._close_exc)

    def abort(self) -> None:
        """Drop the connection now: queued writes are discarded, the conn is closed."""
        self._local_close = True
        self._writing_done = True
        self._close_conn(None)
        # abort() also cuts short a graceful close that is still flushing.
        if self._writer is not None and not self._writer_lost:
            self._writer.abort()  # type: ignore[attr-defined]
        if self._reader is not None and self._reader is not self._writer and not self._reader_lost:
            # A read pipe has nothing queued: close() stops it at once (and read pipe
            # transports have no abort()).
            self._reader.close()
        if self._reader is None and self._writer is None:
            self._reader_lost = True
            self._resolve_closed()

    async def shutdown(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close from this side: conn.close(), flush queued writes (up to timeout), close.

        Idempotent; returns once ``closed`` is done.
        """
        if not self.closed.done():
            self._local_close = True
            self._close_conn(None)
            self._close_writer()
            reader = self._reader
            if reader is not None and reader is not self._writer and not self._reader_lost:
                self._reading_done = True
                reader.close()
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
