"""The client connections' HTTP/1.1 response reader
(mcpfast/transports/http/response_reader.pyx): what it hands its sink equals httptools'
own reading of the same bytes however they are split (every byte boundary, random
responses), plain answers in one read come over in one call, pipelined answers in order;
chunked bodies, 1xx, Connection: close; malformed answers and heads over the limit raise
HttpParserError."""

from __future__ import annotations

from typing import Any, Optional

import httptools
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast.transports.http.response_reader import DEFAULT_MAX_HEAD_SIZE, ResponseReader

# One message as read: (status, [(name, value), ...], body, keep_alive).
Message = tuple[int, list[tuple[bytes, bytes]], bytes, bool]


class Sink:
    """An AnswerSink recording whole messages, and how many came in one call."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.wholes = 0
        self._headers: list[tuple[bytes, bytes]] = []
        self._status = 0
        self._body = b""

    def whole(self, status: int, headers: list[tuple[bytes, bytes]], content_type: Optional[bytes],
              body: bytes, keep_alive: bool) -> None:
        kinds = [value for name, value in headers if name.lower() == b"content-type"]
        assert content_type == (kinds[-1] if kinds else None)
        self.wholes += 1
        self.messages.append((status, list(headers), body, keep_alive))

    def header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def headers_done(self, status: int) -> None:
        self._status = status

    def body(self, chunk: bytes) -> None:
        self._body += chunk

    def complete(self, keep_alive: bool) -> None:
        self.messages.append((self._status, self._headers, self._body, keep_alive))
        self._headers, self._status, self._body = [], 0, b""


def reference(data: bytes) -> list[Message]:
    """httptools' own reading of ``data``."""
    sink = Sink()

    class Callbacks:
        def on_header(self, name: bytes, value: bytes) -> None:
            sink.header(name, value)

        def on_headers_complete(self) -> None:
            sink.headers_done(parser.get_status_code())

        def on_body(self, body: bytes) -> None:
            sink.body(body)

        def on_message_complete(self) -> None:
            sink.complete(parser.should_keep_alive())

    parser = httptools.HttpResponseParser(Callbacks())
    parser.feed_data(data)
    return sink.messages


def read(*pieces: bytes, max_head_size: int = DEFAULT_MAX_HEAD_SIZE) -> Sink:
    sink = Sink()
    reader = ResponseReader(max_head_size)
    reader.answer = sink
    for piece in pieces:
        reader.feed(piece)
    return sink


def plain(body: bytes = b'{"jsonrpc":"2.0","id":1,"result":{}}', *extra: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"".join(extra)
            + b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
INTERIM = b"HTTP/1.1 100 Continue\r\n\r\n"
CLOSING = b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 3\r\n\r\nno."
ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
STREAMS = {
    "plain": plain(),
    "pipelined": plain() + ACCEPTED + plain(b"[]", b"Mcp-Session-Id: abc\r\n"),
    "chunked then plain": CHUNKED + plain(),
    "interim then plain": INTERIM + plain(),
    "plain then closing": plain() + CLOSING,
    "http/1.0": b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    "odd spacing": b"HTTP/1.1 200 OK\r\ncontent-type:application/json \r\ncontent-length:  2\r\n\r\n{}",
    "no reason": b"HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n",
}


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_split_reads_as_httptools_does(name):
    data = STREAMS[name]
    expected = reference(data)
    assert expected and read(data).messages == expected
    for cut in range(1, len(data)):
        assert read(data[:cut], data[cut:]).messages == expected, cut
    assert read(*(data[i:i + 1] for i in range(len(data)))).messages == expected


def test_plain_answers_in_one_read_come_in_one_call_each_in_order():
    data = plain(b'{"a":1}') + ACCEPTED + plain(b'{"b":2}', b"Connection: keep-alive\r\n")
    sink = read(data)
    assert sink.wholes == 3
    assert [(status, body, keep) for status, _, body, keep in sink.messages] == [
        (200, b'{"a":1}', True), (202, b"", True), (200, b'{"b":2}', True)]
    assert sink.messages[0][1] == [(b"Content-Type", b"application/json"), (b"Content-Length", b"7")]


def test_a_plain_answer_after_a_partial_one_is_read_in_steps_then_in_one_call():
    data = plain()
    sink = Sink()
    reader = ResponseReader()
    reader.answer = sink
    reader.feed(data[:20])
    reader.feed(data[20:] + data)  # llhttp finishes the first and reads the second too
    reader.feed(data)  # between messages again: the fast path's
    assert sink.messages == reference(data * 3) and sink.wholes == 1


def test_chunked_interim_and_closing_answers_are_read_in_steps():
    sink = read(CHUNKED + INTERIM + CLOSING)
    assert sink.wholes == 0
    assert [(status, body, keep) for status, _, body, keep in sink.messages] == [
        (200, b"hello world", True), (100, b"", True), (404, b"no.", False)]


def test_after_an_answer_that_closes_the_connection_nothing_more_is_read_in_one_call():
    with pytest.raises(httptools.HttpParserError):
        read(CLOSING, plain())


def test_with_no_sink_answers_are_dropped():
    reader = ResponseReader()
    reader.feed(plain() + CHUNKED)
    reader.answer = sink = Sink()
    reader.feed(plain())
    assert sink.messages == reference(plain())


@pytest.mark.parametrize("data", [
    b"HTTP/1.1 2x0 OK\r\n\r\n",
    b"HTTX/1.1 200 OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    plain() + b"garbage\r\n\r\n",
])
def test_a_malformed_answer_raises_and_ends_the_reading(data):
    sink = Sink()
    reader = ResponseReader()
    reader.answer = sink
    with pytest.raises(httptools.HttpParserError):
        reader.feed(data)
    with pytest.raises(httptools.HttpParserError):
        reader.feed(plain())  # nothing more is read
    assert sink.messages == ([] if not data.startswith(plain()) else reference(plain()))


@pytest.mark.parametrize("pieces", [1, 3])
def test_a_head_over_the_limit_raises_naming_it(pieces):
    data = plain(b"{}", b"X-Padding: " + b"p" * 200 + b"\r\n")
    step = -(-len(data) // pieces)
    with pytest.raises(httptools.HttpParserError, match="the answer's head is over 100 bytes"):
        read(*(data[i:i + step] for i in range(0, len(data), step)), max_head_size=100)
    assert read(data, max_head_size=300).messages == reference(data)


def test_a_negative_head_limit_is_refused():
    with pytest.raises(ValueError, match="max_head_size must be >= 0"):
        ResponseReader(-1)


# -- random valid answers, randomly split, against httptools ---------------------------

TOKEN = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_!#$%&'*+.^`|~",
                min_size=1, max_size=12)
VALUE = st.binary(max_size=20).map(lambda raw: bytes(0x20 + b % 0x5f for b in raw).strip())
RESERVED = (b"content-length", b"transfer-encoding", b"connection", b"proxy-connection", b"upgrade")


@st.composite
def answers(draw: Any) -> bytes:
    status = draw(st.sampled_from([200, 200, 202, 400, 401, 404, 500, 503]))
    headers = [(name.encode(), value) for name, value in draw(st.lists(st.tuples(TOKEN, VALUE), max_size=6))
               if name.encode().lower() not in RESERVED and value]
    if draw(st.booleans()):
        headers.insert(draw(st.integers(0, len(headers))), (b"Content-Type", b"application/json"))
    body = draw(st.binary(max_size=60))
    head = b"HTTP/1.1 %d %s\r\n" % (status, draw(st.sampled_from([b"OK", b"Whatever It Is", b""])))
    head += b"".join(b"%s: %s\r\n" % pair for pair in headers)
    if draw(st.booleans()):
        return head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    chunks = draw(st.lists(st.binary(min_size=1, max_size=20), max_size=3))
    framed = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks)
    return head + b"Transfer-Encoding: chunked\r\n\r\n" + framed + b"0\r\n\r\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(answers(), min_size=1, max_size=4), st.lists(st.integers(0, 1000), max_size=4))
def test_random_answers_randomly_split_read_as_httptools_does(stream, cuts):
    data = b"".join(stream)
    expected = reference(data)
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    pieces = [data[start:end] for start, end in zip([0, *points], [*points, len(data)])]
    assert read(*pieces).messages == expected
