"""The compiled WebSocket listener (mcpfast.transports.ws_listener) fed picows frames
directly, without a peer: any sequence of text, continuation and binary frames is
delivered, refused and closed exactly as a plain model of the binding's rules says
(property test), and a delivered message is what its frames carried."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from typing import Any, Optional

import picows
from hypothesis import given, settings
from hypothesis import strategies as st
from picows.picows import WSTransport, _make_test_ws_frame

from mcpfast.transports.ws_listener import MCPListener

TEXT, CONTINUATION, BINARY = picows.WSMsgType.TEXT, picows.WSMsgType.CONTINUATION, picows.WSMsgType.BINARY
LIMIT = 16


class Socketed:
    """The asyncio transport under a server-side WSTransport: one end of a socket pair
    (picows writes frames to the socket itself), the other end read by the test."""

    def __init__(self) -> None:
        self.ours, self.peer = socket.socketpair()
        self.peer.setblocking(False)
        self.closed = False

    def get_write_buffer_size(self) -> int:
        return 0

    def write(self, data: Any) -> None:  # used only when the socket would block
        raise AssertionError("the socket pair never fills in these tests")

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.ours if name == "socket" else default

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def sent_frames(self) -> list[tuple[int, bytes]]:
        """(opcode, payload) of every frame written so far (server frames: unmasked)."""
        data = b""
        while True:
            try:
                chunk = self.peer.recv(65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
        frames, i = [], 0
        while i < len(data):
            opcode, size = data[i] & 0x0F, data[i + 1] & 0x7F
            i += 2
            if size == 126:
                size = struct.unpack(">H", data[i:i + 2])[0]
                i += 2
            frames.append((opcode, data[i:i + size]))
            i += size
        return frames


class FeedOnly:
    """A connection with the contract's required methods only: every message to feed."""

    def __init__(self, send: Any) -> None:
        self.fed: list[bytes] = []
        self.closed: list[Any] = []

    def feed(self, frame: Any, channel: Any = None) -> bool:
        self.fed.append(bytes(frame))
        return True

    def feed_error(self, exc: BaseException, channel: Any = None) -> bool:
        return True

    def close(self, exc: Any = None) -> None:
        self.closed.append(exc)


def model(frames: list[tuple[Any, bool, bytes]]) -> tuple[list[bytes], Optional[int], int]:
    """What the binding says of these frames: the messages delivered, the close code
    (None: still open) and how many frames were read before it closed."""
    delivered: list[bytes] = []
    parts: Optional[list[bytes]] = None
    for index, (kind, fin, payload) in enumerate(frames):
        if kind == BINARY:
            return delivered, 1003, index + 1
        if (kind == TEXT) == (parts is not None):
            return delivered, 1002, index + 1
        parts = (parts or []) + [payload]
        if kind == TEXT and fin and len(parts) == 1:
            delivered.append(payload)  # a whole message: never held, whatever its size
            parts = None
            continue
        if sum(map(len, parts)) > LIMIT:
            return delivered, 1009, index + 1
        if fin:
            delivered.append(b"".join(parts))
            parts = None
    return delivered, None, len(frames)


def run(frames: list[tuple[Any, bool, bytes]]) -> tuple[list[bytes], Optional[int], int]:
    async def main() -> tuple[list[bytes], Optional[int], int]:
        under = Socketed()
        transport = WSTransport(False, under, logging.getLogger("test"), asyncio.get_running_loop())
        made: list[FeedOnly] = []
        listener = MCPListener(lambda send: made.append(FeedOnly(send)) or made[-1], None, LIMIT)
        listener.on_ws_connected(transport)
        read = 0
        for kind, fin, payload in frames:
            listener.on_ws_frame(transport, _make_test_ws_frame(kind, payload, fin, False))
            read += 1
            if under.closed:
                break
        sent = under.sent_frames()
        code = None
        if sent:
            assert under.closed and [opcode for opcode, _ in sent] == [0x8]
            code = struct.unpack(">H", sent[0][1][:2])[0]
        else:
            assert not under.closed
        under.ours.close()
        under.peer.close()
        return made[0].fed, code, read

    return asyncio.run(main())


frame = st.tuples(
    st.sampled_from([TEXT, TEXT, CONTINUATION, CONTINUATION, BINARY]),
    st.booleans(),
    # Sizes spread over the limit's range, so that messages end near it on both sides.
    st.one_of(st.binary(max_size=LIMIT // 2), st.integers(0, LIMIT).map(lambda n: b"a" * n)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(frame, max_size=12))
def test_any_sequence_of_frames_is_handled_as_the_model_says(frames):
    assert run(frames) == model(frames)


def test_examples_of_each_rule():
    whole = (TEXT, True, b'{"jsonrpc":"2.0","method":"x"}')
    assert run([whole, whole]) == ([whole[2], whole[2]], None, 2)
    pieces = [(TEXT, False, b'{"a"'), (CONTINUATION, False, b":"), (CONTINUATION, True, b"1}")]
    assert run(pieces) == ([b'{"a":1}'], None, 3)
    # A whole frame is bounded by picows (max_frame_size), not held: never refused here.
    assert run([(TEXT, True, b"x" * (LIMIT + 1))]) == ([b"x" * (LIMIT + 1)], None, 1)
    assert run([(TEXT, False, b"x" * LIMIT), (CONTINUATION, True, b"y")]) == ([], 1009, 2)
    assert run([(CONTINUATION, True, b"{}"), whole]) == ([], 1002, 1)
    assert run([(TEXT, False, b"{"), (TEXT, True, b"}")]) == ([], 1002, 2)
    assert run([(BINARY, True, b"\x00"), whole]) == ([], 1003, 1)
