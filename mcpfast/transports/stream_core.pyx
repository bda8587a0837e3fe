"""The stream transport's per-frame work in C: ``FrameCore``, the base of
:class:`mcpfast.transports.stream.FrameProtocol` (``data_received``: a chunk's frames
handed to the conn with the replies gathered, ``_deliver_frames``; ``send``: a frame written now, or gathered
into a burst; ``_flush_gathered``).

The rules are stream.py's (its docstrings and comments say them), applied here as they
were written there; its tunables (``BURST_GAP_NS``, ``GATHER_LIMIT``, ``BURST_PIECE``,
``BURST_PIECE_MAX``) are read from its namespace at each use, so that a change to them
(as the tests make) takes effect as it did. The rare paths (a conn that raises, flow
control, a refused write) stay its Python methods, called from here.

Why compiled: with many calls in flight a frame's way through ``data_received`` and a
reply's through ``send`` were some sixty interpreted steps, and a gateway takes both ways
twice per forwarded call.
"""
cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from mcpfast._core.framing cimport LineFramer

from time import monotonic_ns as _monotonic_ns

cdef bytes NEWLINE = b"\n"
# stream.py's namespace (given by use_namespace), its states and its TransportClosed.
cdef dict _namespace = None
cdef tuple _states = ()
cdef object _transport_closed = None
# While a received chunk is processed (data_received, outermost): the other streams that
# began gathering sends meanwhile, flushed when the chunk's processing ends; else None.
cdef list _chunk_streams = None

# StreamState's values (stream.py keeps the enum; use_namespace checks they agree).
cdef enum:
    S_OPEN = 1
    S_BACKED_UP = 2
    S_CLOSING = 5


def use_namespace(dict namespace not None):
    """Read the tunables, the states and TransportClosed from ``namespace`` (stream.py's
    globals) from now on."""
    global _namespace, _states, _transport_closed
    states = tuple(namespace["StreamState"])
    if ([int(state) for state in states] != list(range(len(states)))
            or int(namespace["OPEN"]) != S_OPEN or int(namespace["BACKED_UP"]) != S_BACKED_UP
            or int(namespace["CLOSING"]) != S_CLOSING):
        raise ValueError("StreamState's values are not the ones stream_core was compiled for")
    for name in ("BURST_GAP_NS", "GATHER_LIMIT", "BURST_PIECE", "BURST_PIECE_MAX"):
        if type(namespace.get(name)) is not int:
            raise TypeError(f"{name} must be an int")
    _states = states
    _transport_closed = namespace["TransportClosed"]
    _namespace = namespace


cdef inline long long _tunable(str name) except? -1:
    cdef PyObject *found = PyDict_GetItem(_namespace, name)
    if found == NULL:
        raise RuntimeError(f"stream.{name} is not set")
    return <object>found


cdef int _flush_chunk_streams() except -1:
    # The end of the outermost chunk: the streams that gathered meanwhile write (a stream's
    # gathering ended some other way -- written in full pieces, dropped by abort -- is
    # left as it is). One failing flush does not keep the others from theirs.
    global _chunk_streams
    streams = _chunk_streams
    _chunk_streams = None
    failure = None
    cdef FrameCore stream
    for stream in streams:
        if stream._gathered is not None:
            try:
                stream.flush_gathered()
            except Exception as exc:
                failure = exc
    if failure is not None:
        raise failure
    return 0


@cython.auto_pickle(False)
cdef class FrameCore:
    """FrameProtocol's C part (module docstring)."""

    @property
    def _state(self):
        """The StreamState the connection is in."""
        return _states[self.state_code]

    @_state.setter
    def _state(self, value):
        if value not in _states:
            raise ValueError(f"not a StreamState: {value!r}")
        self.state_code = value

    def data_received(self, data):
        if self.state_code >= S_CLOSING:
            return  # closing: what the peer still sends has nobody to go to
        if self._waiting is not None:
            # Read before the pause took effect: in order, after the frames waiting.
            self._waiting.extend(self._framer.feed(data))
            self._report_held()
            return
        # The next send outside this chunk is written at once (see BURST_GAP_NS).
        self._burst_until_ns = 0
        # Replies sent while this chunk is processed are gathered and written at the end,
        # unless a write gathering for this loop iteration is already under way.
        cdef bint own = self._gathered is None
        if own:
            self._gathered = []
        # Sends on other streams while this chunk is processed (a gateway forwarding what
        # it reads, a server telling other clients) are gathered too, and written when it
        # ends: one write per stream and chunk where each first send was a write of its own
        # and the rest went in pieces (the gateway over stdio with 256 in flight: 0.162 ->
        # 0.045 writes per forwarded call).
        global _chunk_streams
        cdef bint outermost = _chunk_streams is None
        if outermost:
            _chunk_streams = []
        try:
            frames = self._framer.feed(data)
            if frames:
                self._frames_seen = True
            self.deliver(frames)
        finally:
            if own:
                self.flush_gathered()  # (nothing gathered: its reset only)
            if outermost:
                _flush_chunk_streams()
        if self._budget is not None:
            self._report_held()

    def _deliver_frames(self, list frames not None):
        """Hand the framer's output to the conn: frames to conn.feed, FrameTooLarge to
        conn.feed_error. A conn that raises is logged and gets the next frame. Stops as
        data_received does (see _stop_delivering)."""
        self.deliver(frames)

    cdef int deliver(self, list frames) except -1:
        feed = self._feed
        cdef Py_ssize_t index = 0, count = len(frames)
        while index < count:
            frame = frames[index]
            index += 1
            if type(frame) is memoryview:
                try:
                    feed(frame)
                except Exception:
                    self._feed_failed(frame)
            else:
                self._deliver_error(frame)
            if self.state_code != S_OPEN and self._stop_delivering(iter(frames[index:])):
                break
        return 0

    def send(self, frame):
        """Write one frame and its newline without blocking (queued if the peer is slow).

        Raises TransportClosed once the connection stopped writing, WriteBufferFull (on
        the opening side) when the peer left max_write_buffer bytes unread.
        """
        if self.state_code != S_OPEN:
            self._send_not_open(frame)
            return
        gathered = self._gathered
        cdef Py_ssize_t piece
        if gathered is not None:
            (<list?>gathered).append(frame)
            self._gather_room -= len(frame)
            if self._gather_room < 0:
                # A piece is complete: hand it over now, so the peer can start on it and
                # the transport's buffer (and its flow control) sees it; gathering goes on.
                piece = self._piece
                if piece < _tunable("BURST_PIECE_MAX"):
                    piece += piece
                self.flush_gathered()
                self._gathered = []
                self._gather_room = self._piece = piece
            return
        if _chunk_streams is not None:
            # Sent while another stream's chunk is processed: gathered until that chunk's
            # end, as its replies are (up to GATHER_LIMIT; no pieces: the chunk's frames
            # are all at hand, nothing is left to wait for).
            self.begin_gathering(frame, _tunable("GATHER_LIMIT"))
            _chunk_streams.append(self)
            return
        cdef long long now = _monotonic_ns()
        if now < self._burst_until_ns:
            # Another send right after the last write: a burst. Gather the rest of it,
            # written by a callback after the ones already due (see BURST_PIECE).
            self.begin_gathering(
                frame, _tunable("BURST_PIECE") if self._client_side else _tunable("GATHER_LIMIT"))
            self._loop.call_soon(self._flush_gathered)
            return
        self._last_write_ns = now
        self._burst_until_ns = now + _tunable("BURST_GAP_NS")
        try:
            self._write(frame + NEWLINE)
        except RuntimeError as exc:
            self._write_refused(exc)

    cdef int begin_gathering(self, object frame, Py_ssize_t piece) except -1:
        self._gathered = [frame]
        self._piece = piece
        self._gather_room = piece - len(frame)
        return 0

    def _flush_gathered(self):
        """Write the gathered frames (if any) with one write; stop gathering."""
        self.flush_gathered()

    cdef int flush_gathered(self) except -1:
        frames = self._gathered
        self._gathered = None
        self._gather_room = self._piece = _tunable("GATHER_LIMIT")
        if not frames:
            return 0
        if self.state_code == S_BACKED_UP:
            self._stall_written += sum(map(len, frames)) + len(frames)
        try:
            if len(frames) == 1:
                self._write(frames[0] + NEWLINE)
            else:
                frames.append(b"")
                self._write(NEWLINE.join(frames))
        except RuntimeError as exc:
            try:
                self._write_refused(exc)
            except _transport_closed:
                pass  # gathered frames of a connection that cannot write: nobody to tell
        return 0
