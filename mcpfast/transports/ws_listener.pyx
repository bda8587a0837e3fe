"""One WebSocket as a transport: picows's frames in and out of a connection, compiled.

:class:`MCPListener` is the picows listener of every MCP WebSocket, server and client side
(:mod:`mcpfast.transports.websocket` says what the binding is). A whole text message in one
frame (the usual case) is decoded where picows holds it and fed as a message: a request
to the connection's ``feed_request``, anything else to ``feed_message`` (the transport
contract's optional methods; a connection without them gets ``feed``). A frame that does
not decode goes to ``feed``, which answers it (-32700 / -32600) and the socket goes on.
A message in several frames is joined, then fed the same way; it is bounded by
``max_message_size`` as a whole (1009 past it), and frames out of order (a continuation
with no message begun, a new message before the last ended) close the socket with 1002.
A binary frame closes the socket with 1003, a close frame is answered and the socket
closed; the socket going away closes the connection. Flow control: above the transport's
high-water mark reading pauses (resumed below the low-water mark); a send that would leave
more than ``max_write_buffer`` bytes unread drops a server's socket (a client's send raises
ConnectionError). ``live``: a set the listener is in while its socket is open (a
server's, to close them all with 1001 when it shuts down: :meth:`MCPListener.going_away`).

Why compiled: picows calls its listener through a C method table; a Python subclass is
called through its Python frame, and reads every frame field, the transport's state and
its own through attribute lookups. Measured here (callgrind, one 2026-07-28 tools/call
over the listener): the Python listener's frames, lookups and the connection's ``feed``
were about a tenth of the server's instructions per message.

Nothing here decides an MCP rule or looks inside a message: the connection does.
"""
cimport cython
from picows.picows cimport WSCloseCode, WSFrame, WSListener, WSMsgType, WSTransport

from mcpfast._core.messages cimport Request

import picows

from mcpfast._core.decode import DecodeError, decode
from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE as _DEFAULT_MAX_FRAME_SIZE
from mcpfast.transports.stream import DEFAULT_MAX_WRITE_BUFFER as _DEFAULT_MAX_WRITE_BUFFER
from mcpfast.transports.stream import peer_address, peer_port

import logging

_LOGGER = logging.getLogger("mcpfast.transports.websocket")

cdef extern from *:
    """
    #ifndef MF_PICOWS_BUILT_WITH
    #define MF_PICOWS_BUILT_WITH ""
    #endif
    """
    const char* MF_PICOWS_BUILT_WITH

# The picows whose declarations this module was compiled against (setup.py): picows's
# classes are read here by their C layout, which another release may change.
PICOWS_BUILT_WITH = MF_PICOWS_BUILT_WITH.decode("ascii")
if PICOWS_BUILT_WITH and picows.__version__ != PICOWS_BUILT_WITH:
    raise ImportError(
        f"mcpfast's WebSocket listener was built with picows {PICOWS_BUILT_WITH}, but picows "
        f"{picows.__version__} is installed: install picows=={PICOWS_BUILT_WITH} or rebuild "
        f"mcpfast (pip install --force-reinstall --no-deps mcpfast)")


@cython.final
@cython.auto_pickle(False)
cdef class MCPListener(WSListener):
    """A WebSocket's listener, the connection made by ``factory(send)`` on connect
    (module docstring). ``send(frame)``: one text frame (ConnectionError once the socket
    is closed)."""

    def __init__(self, factory, live=None, Py_ssize_t max_message_size=_DEFAULT_MAX_FRAME_SIZE,
                 Py_ssize_t max_write_buffer=_DEFAULT_MAX_WRITE_BUFFER):
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be >= 1, got {max_message_size}")
        if max_write_buffer < 1:
            raise ValueError(f"max_write_buffer must be >= 1, got {max_write_buffer}")
        self.max_write_buffer = max_write_buffer
        self._backed_up = False
        self.factory = factory
        self.conn = None
        self._transport = None
        self._parts = []
        self._parts_size = 0
        self.max_message_size = max_message_size
        self._live = live

    def __reduce__(self):
        # picows's listener base would pickle as an empty listener: refused instead.
        raise TypeError(f"cannot pickle {type(self).__name__!r} object: it holds a socket")

    def going_away(self):
        """Close the socket with 1001 (going away): the server is shutting down."""
        cdef WSTransport transport = self._transport
        if transport is not None and not transport.is_disconnected:
            self._refuse(transport, WSCloseCode.GOING_AWAY, b"the server is shutting down")

    def send(self, frame):
        """One outgoing frame as a text message (the transport contract's ``send``)."""
        cdef WSTransport transport = self._transport
        if transport is None or transport.is_disconnected:
            raise ConnectionError("the WebSocket is closed")
        if self._backed_up:
            queued = transport.underlying_transport.get_write_buffer_size()
            if queued + len(frame) > self.max_write_buffer:
                # The TCP transport's rule (mcpfast.transports.stream): a peer that reads
                # nothing may not make the server queue without bound.
                message = (f"the WebSocket peer has not read {queued} bytes sent to it "
                           f"(max_write_buffer={self.max_write_buffer})")
                if transport.is_client_side:
                    raise ConnectionError(f"{message}; the frame was not sent")
                _LOGGER.warning("%s: it does not read; dropping the connection", message)
                transport.disconnect(False)  # the unread bytes are dropped, not flushed
                raise ConnectionError(f"{message}; the connection was dropped")
        transport.send(WSMsgType.TEXT, frame)

    cpdef pause_writing(self):
        # Over the high-water mark: read no more requests until the peer reads (the rule
        # of every mcpfast transport; below the low-water mark reading goes on).
        self._backed_up = True
        if self._transport is not None:
            self._transport.underlying_transport.pause_reading()

    cpdef resume_writing(self):
        self._backed_up = False
        if self._transport is not None and not self._transport.is_disconnected:
            self._transport.underlying_transport.resume_reading()

    cpdef on_ws_connected(self, WSTransport transport):
        self._transport = transport
        if self._live is not None:
            self._live.add(self)
        conn = self.factory(self.send)
        self.conn = conn
        # The transport contract's optional attributes: who is on the other end (as TCP).
        if hasattr(conn, "peer_address"):
            conn.peer_address = peer_address(transport.underlying_transport)
        if hasattr(conn, "peer_port"):
            conn.peer_port = peer_port(transport.underlying_transport)
        # Looked up once: the optional methods of the transport contract.
        self._feed = conn.feed
        self._feed_message = getattr(conn, "feed_message", None)
        self._feed_request = getattr(conn, "feed_request", None)

    cpdef on_ws_frame(self, WSTransport transport, WSFrame frame):
        cdef WSMsgType kind = frame.msg_type
        if kind == WSMsgType.TEXT and frame.fin and not self._parts:
            # One whole message in one frame: read where picows holds it (the decoder
            # copies what it keeps).
            if self.conn is not None:
                self._deliver(frame.get_payload_as_memoryview())
        elif kind == WSMsgType.TEXT or kind == WSMsgType.CONTINUATION:
            # A text message in pieces: a TEXT frame starts it, CONTINUATION frames follow
            # (RFC 6455 5.4; picows checks each frame, not their order), and the whole
            # message is bounded as a single frame is.
            if (kind == WSMsgType.TEXT) == (len(self._parts) > 0):
                self._refuse(transport, WSCloseCode.PROTOCOL_ERROR,
                             b"a continuation frame without a message begun"
                             if kind == WSMsgType.CONTINUATION else
                             b"a new message before the last one ended")
                return
            self._parts_size += frame.payload_size
            if self._parts_size > self.max_message_size:
                self._refuse(transport, WSCloseCode.MESSAGE_TOO_BIG,
                             b"the message is larger than the limit")
                return
            self._parts.append(frame.get_payload_as_bytes())
            if frame.fin:
                message = b"".join(self._parts)
                self._parts = []
                self._parts_size = 0
                if self.conn is not None:
                    self._deliver(message)
        elif kind == WSMsgType.BINARY:
            self._refuse(transport, WSCloseCode.UNSUPPORTED_DATA,
                         b"MCP over WebSocket uses text frames")
        elif kind == WSMsgType.CLOSE:
            transport.send_close(frame.get_close_code())
            transport.disconnect()

    cpdef on_ws_disconnected(self, WSTransport transport):
        if self._live is not None:
            self._live.discard(self)
        if self.conn is not None:
            self.conn.close(None)

    cdef int _refuse(self, WSTransport transport, WSCloseCode code, bytes reason) except -1:
        # The socket closed with ``code`` (a frame the binding does not take, or the
        # server going away); a message in pieces is dropped.
        self._parts = []
        self._parts_size = 0
        transport.send_close(code, reason)
        transport.disconnect()
        return 0

    cdef int _deliver(self, payload) except -1:
        # One message to the connection: decoded here when the connection takes decoded
        # messages; what does not decode goes to feed, which answers it.
        if self._feed_message is None:
            self._feed(payload)
            return 0
        try:
            message = decode(payload)
        except DecodeError:
            self._feed(payload)
            return 0
        if type(message) is Request and self._feed_request is not None:
            self._feed_request(message)
        else:
            self._feed_message(message)
        return 0
