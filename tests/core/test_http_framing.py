"""HTTPRequestFramer (sans-I/O HTTP/1.1 request framing) and the response heads of
mcpfast._core.http_framing: requests, splits, pipelining, chunked bodies, limits, errors,
and property tests against a reference reading made with httptools' own callbacks."""

from __future__ import annotations

import gc

import httptools
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfast._core.http_framing import (
    DEFAULT_MAX_HEAD_SIZE,
    HTTPRequestFramer,
    _header_shapes,
    _use_cpython_internals,
    stream_head,
    whole_response,
)
from mcpfast.transports.http.messages import HTTPRequest

MAX_BODY = 1000


def framer(max_body_size: int = MAX_BODY, max_head_size: int = DEFAULT_MAX_HEAD_SIZE,
           require_host: bool = False) -> HTTPRequestFramer:
    return HTTPRequestFramer(HTTPRequest, max_body_size, max_head_size, require_host)


def seen(done) -> list[tuple]:
    """The requests feed() returned as plain tuples, for comparing."""
    return [(r.method, r.path, r.query, r.headers, r.body, keep_alive, too_large)
            for r, keep_alive, too_large in done or []]


def error_of(f) -> tuple | None:
    """The error's type and message (an upgrade's argument is an offset: left out)."""
    if f.error is None:
        return None
    return (type(f.error), None if isinstance(f.error, httptools.HttpParserUpgrade) else str(f.error))


def read(data, pieces=None, **limits):
    """Feed data (whole, or cut at the offsets in pieces); the requests, error and refusing."""
    f = framer(**limits)
    cuts = [0, *(pieces or []), len(data)]
    out = []
    for start, stop in zip(cuts, cuts[1:]):
        out += seen(f.feed(data[start:stop]))
    return out, error_of(f), f.refusing


def post(body: bytes = b"hello", target: str = "/mcp", extra: str = "") -> bytes:
    return (f"POST {target} HTTP/1.1\r\nHost: h\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
            .encode() + body)


class Reference:
    """How mcpfast's HTTP server read requests with httptools before the framer existed:
    the callbacks written in Python, kept as the model the framer must agree with."""

    def __init__(self, max_body_size: int = MAX_BODY, max_head_size: int = DEFAULT_MAX_HEAD_SIZE):
        self.max_body_size = max_body_size
        self.max_head_size = max_head_size
        self.parser = httptools.HttpRequestParser(self)
        self.done: list[tuple] = []
        self.error = None
        self.too_large = False
        # The Upgrade header ignored (RFC 9110 7.8): the body httptools skips is read here
        # (bytes still owed, the request waiting for them); a CONNECT ends the stream.
        self.upgrade_left = -1
        self.waiting: list = []
        self.ended = False
        self.problem = None

    def feed(self, data: bytes) -> None:
        if self.error is not None or self.ended:
            return
        data = bytes(data)
        if self.waiting:
            take = data[:self.upgrade_left]
            self.waiting[4] += take
            self.upgrade_left -= len(take)
            if self.upgrade_left:
                return
            self.done.append(tuple(self.waiting))
            self.waiting = []
            self.upgrade_left = -1
            data = data[len(take):]
            if not data:
                return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            if self.upgrade_left < 0:  # a CONNECT or a request refused as too large
                if self.done:
                    self.done[-1] = (*self.done[-1][:5], False, self.done[-1][6])
                self.ended = True
                return
            self.parser = httptools.HttpRequestParser(self)
            self.feed(data[exc.args[0]:])
        except httptools.HttpParserError as exc:
            self.error = httptools.HttpParserError(self.problem) if self.problem else exc

    def on_message_begin(self) -> None:
        self.url, self.headers, self.body, self.size, self.head = b"", {}, [], 0, 0
        self.too_large = False

    def on_url(self, url: bytes) -> None:
        self.url += url
        self.head += len(url)
        if self.head > self.max_head_size:
            raise httptools.HttpParserError("request head too large")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head += len(name) + len(value)
        if self.head > self.max_head_size:
            raise httptools.HttpParserError("request head too large")
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        previous = self.headers.get(key)
        self.headers[key] = text if previous is None else f"{previous}, {text}"

    def on_headers_complete(self) -> None:
        length = self.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_size:
            self.too_large = True
        self.upgrade_left = -1
        if self.parser.should_upgrade() and self.parser.get_method() != b"CONNECT" and not self.too_large:
            if "transfer-encoding" in self.headers:
                self.problem = "an Upgrade request with a chunked body"
                raise httptools.HttpParserError(self.problem)
            self.upgrade_left = int(length) if length is not None and length.isdigit() else 0

    def on_body(self, body: bytes) -> None:
        if self.too_large:
            return
        self.size += len(body)
        if self.size > self.max_body_size:
            self.too_large, self.body = True, []
            return
        self.body.append(body)

    def on_message_complete(self) -> None:
        url = httptools.parse_url(self.url)
        request = [self.parser.get_method().decode("latin-1"), url.path.decode("latin-1"),
                   url.query.decode("latin-1") if url.query else "", self.headers,
                   b"".join(self.body), self.parser.should_keep_alive(), self.too_large]
        if self.upgrade_left > 0:
            self.waiting = request
            return
        self.upgrade_left = -1
        self.done.append(tuple(request))
        self.too_large = False


def reference(data: bytes, **limits):
    return reference_in_pieces([data], **limits)


def reference_in_pieces(pieces: list[bytes], **limits):
    ref = Reference(**limits)
    for piece in pieces:
        ref.feed(piece)
    return ref.done, error_of(ref), ref.too_large


# -- requests ------------------------------------------------------------------------------


def test_a_post_is_read_with_its_headers_body_and_keep_alive():
    out, error, refusing = read(post(b'{"a":1}', extra="Content-Type: application/json\r\n"))
    assert error is None and not refusing
    assert out == [("POST", "/mcp", "", {"host": "h", "content-length": "7",
                                          "content-type": "application/json"}, b'{"a":1}', True, False)]


def test_feed_returns_none_until_a_request_is_complete():
    f = framer()
    data = post()
    assert f.feed(data[:-1]) is None and not f.failed
    assert seen(f.feed(data[-1:]))[0][4] == b"hello"


def test_the_request_is_made_with_the_class_given():
    made = []

    def factory(*args):
        made.append(args)
        return "request"

    f = HTTPRequestFramer(factory, 100)
    assert f.feed(b"GET /p?q=1 HTTP/1.1\r\nHost: h\r\n\r\n") == [("request", True, False)]
    assert made == [("GET", "/p", {"host": "h"}, b"", "q=1")]
    assert f.request_class is factory and f.max_body_size == 100 and f.max_head_size == DEFAULT_MAX_HEAD_SIZE


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_a_request_fed_one_byte_at_a_time_is_the_same_request(kind):
    data = post(b"x" * 50, target="/mcp?a=1", extra="X-Many: 1\r\nx-many: 2\r\n")
    f = framer()
    out = []
    for i in range(len(data)):
        out += seen(f.feed(kind(data[i:i + 1])))
    assert out == read(data)[0] and len(out) == 1


def test_pipelined_requests_in_one_feed_come_out_in_order():
    data = post(b"one") + b"GET /two HTTP/1.1\r\n\r\n" + post(b"three", target="/3?x")
    out, error, _ = read(data)
    assert error is None
    assert [(m, p, q, b) for m, p, q, _, b, _, _ in out] == [
        ("POST", "/mcp", "", b"one"), ("GET", "/two", "", b""), ("POST", "/3", "x", b"three")]


def test_a_chunked_body_is_joined():
    data = (b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\n\r\n")
    out, error, _ = read(data)
    assert error is None and out[0][4] == b"hello world!" and out[0][6] is False
    assert read(data, pieces=list(range(1, len(data))))[0] == out


def test_repeated_headers_are_joined_and_names_lower_cased():
    out, _, _ = read(b"GET / HTTP/1.1\r\nAccept: a\r\nACCEPT: b\r\naccept:   c\r\nX-Y: Z\r\n\r\n")
    assert out[0][3] == {"accept": "a, b, c", "x-y": "Z"}


def test_a_repeated_header_value_is_the_same_str_and_a_changed_one_is_read_anew():
    # Values are kept per name (the endpoint keys its caches by them): the same bytes give
    # the same str object, other bytes their own value; credentials are never kept.
    def headers_of(extra: str) -> dict:
        f = framer()
        return seen(f.feed(f"GET / HTTP/1.1\r\nHost: h\r\n{extra}\r\n".encode()))[0][3]

    first = headers_of("Accept: application/json\r\nAuthorization: Bearer t0k\r\n")
    again = headers_of("Accept: application/json\r\nAuthorization: Bearer t0k\r\n")
    assert again == first == {"host": "h", "accept": "application/json", "authorization": "Bearer t0k"}
    assert again["accept"] is first["accept"]
    assert again["authorization"] is not first["authorization"]
    changed = headers_of("Accept: application/jsoN\r\nAuthorization: Bearer t0K\r\n")
    assert changed == {"host": "h", "accept": "application/jsoN", "authorization": "Bearer t0K"}
    long_value = "x" * 300
    assert headers_of(f"Accept: {long_value}\r\n")["accept"] == long_value
    assert headers_of("Accept: application/json\r\n")["accept"] == "application/json"


def test_values_are_latin_1():
    out, _, _ = read(b"GET / HTTP/1.1\r\nX-Name: caf\xe9\r\n\r\n")
    assert out[0][3] == {"x-name": "caf\xe9"}


@pytest.mark.parametrize("target, path, query", [
    ("/", "/", ""),
    ("/mcp?", "/mcp", ""),
    ("/mcp?a=1&b=2", "/mcp", "a=1&b=2"),
    ("/a?b?c", "/a", "b?c"),
    ("/p#frag", "/p", ""),
    ("/p?q#frag", "/p", "q"),
    ("/%7Euser/x;y", "/%7Euser/x;y", ""),
    ("http://example.com:8080/abs?x=1", "/abs", "x=1"),
    ("*", None, None),
])
def test_targets_are_split_as_httptools_parse_url_splits_them(target, path, query):
    data = f"OPTIONS {target} HTTP/1.1\r\nHost: h\r\n\r\n".encode()
    out, error, _ = read(data)
    assert (out, error) == reference(data)[:2]
    if path is not None:
        assert (out[0][1], out[0][2]) == (path, query)


@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_every_byte_in_a_target_is_read_as_parse_url_reads_it(kind):
    for byte in range(256):
        for target in (b"/a%cb?c%cd" % (byte, byte), b"/%c" % byte, b"/?%c" % byte):
            data = b"GET " + target + b" HTTP/1.1\r\nHost: h\r\n\r\n"
            f = framer()
            assert (seen(f.feed(kind(data))), error_of(f)) == reference(data)[:2], target


def test_keep_alive_follows_the_version_and_connection_header():
    def keep_alive(head: bytes) -> bool:
        return read(head + b"\r\n\r\n")[0][0][5]

    assert keep_alive(b"GET / HTTP/1.1")
    assert not keep_alive(b"GET / HTTP/1.1\r\nConnection: close")
    assert keep_alive(b"GET / HTTP/1.1\r\nConnection: keep-alive")
    assert not keep_alive(b"GET / HTTP/1.0")
    assert keep_alive(b"GET / HTTP/1.0\r\nConnection: keep-alive")


# -- limits --------------------------------------------------------------------------------


def test_a_body_over_the_limit_by_content_length_is_refused_as_soon_as_the_head_is_read():
    f = framer(max_body_size=10)
    assert f.feed(b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n") is None
    assert f.failed and f.refusing and f.error is None
    assert f.feed(b"12345") is None and f.refusing
    out = seen(f.feed(b"678901" + b"GET /next HTTP/1.1\r\n\r\n"))
    assert [(r[1], r[4], r[6]) for r in out] == [("/", b"", True), ("/next", b"", False)]
    assert not f.failed and not f.refusing


def test_a_body_at_the_limit_is_kept():
    out, _, _ = read(post(b"x" * 10), max_body_size=10)
    assert out[0][4] == b"x" * 10 and out[0][6] is False


def test_a_chunked_body_over_the_limit_by_its_bytes_is_dropped():
    f = framer(max_body_size=10)
    assert f.feed(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n") is None
    assert not f.refusing
    assert f.feed(b"6\r\nworld!\r\n") is None and f.refusing and f.failed
    out = seen(f.feed(b"0\r\n\r\n"))
    assert out[0][4] == b"" and out[0][6] is True


@pytest.mark.parametrize("data, message", [
    (b"GET /" + b"a" * 100 + b" HTTP/1.1\r\n\r\n", "`on_url` callback error"),
    (b"GET / HTTP/1.1\r\nA: " + b"a" * 100 + b"\r\nB: 1\r\n\r\n", "`on_header_field` callback error"),
    (b"GET / HTTP/1.1\r\nA: " + b"a" * 100 + b"\r\n\r\n", "User callback error"),
])
def test_a_head_over_the_limit_is_a_parse_error(data, message):
    out, error, _ = read(data, max_head_size=100)
    assert out == [] and error == (httptools.HttpParserCallbackError, message)
    assert (out, error) == reference(data, max_head_size=100)[:2]


def test_the_head_limit_counts_target_names_and_values():
    head = b"GET /" + b"a" * 49 + b" HTTP/1.1\r\nNa: " + b"v" * 48 + b"\r\n\r\n"  # 50 + 2 + 48
    assert read(head, max_head_size=100)[1] is None
    assert read(head, max_head_size=99)[1] is not None


def test_a_target_parse_url_refuses_is_refused_as_before():
    data = b"GET /" + b"a" * 65535 + b" HTTP/1.1\r\n\r\n"  # parse_url takes 65535 bytes at most
    out, error, _ = read(data, max_head_size=1 << 20)
    assert out == [] and error is not None
    assert (out, error) == reference(data, max_head_size=1 << 20)[:2]


def test_limits_are_checked():
    with pytest.raises(ValueError):
        HTTPRequestFramer(HTTPRequest, -1)
    with pytest.raises(ValueError):
        HTTPRequestFramer(HTTPRequest, 10, -1)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [
    b"NOT HTTP AT ALL\r\n\r\n",
    b"GET / HTTP/9.9\r\n\r\n",
    b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
    b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"GET / HTTP/1.1\r\nHost: a\x01b\r\n\r\n",
    b"GET /a b HTTP/1.1\r\n\r\n",
])
def test_malformed_input_is_a_parse_error_that_ends_the_stream(data):
    f = framer()
    assert f.feed(data) is None
    assert isinstance(f.error, httptools.HttpParserError) and f.failed
    assert error_of(f) == reference(data)[1]
    assert f.feed(post()) is None  # the stream is over


def test_requests_before_a_parse_error_are_returned_with_it():
    data = post(b"first") + b"BROKEN\r\n\r\n"
    f = framer()
    assert [r[4] for r in seen(f.feed(data))] == [b"first"]
    assert isinstance(f.error, httptools.HttpParserError)


def test_an_upgrade_header_is_ignored_and_the_request_read_whole_with_its_body():
    # RFC 9110 7.8: a server may ignore Upgrade. httptools skips such a request's body
    # (curl --http2 sends one): it is read all the same, and what follows is read as HTTP/1.1.
    upgrade = ("Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
               "HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n")
    data = post(b'{"a":1}', extra=upgrade) + post(b"two")
    for cuts in ([], [len(data) - len(post(b"two")) - 3], list(range(1, len(data)))):
        out, error, _ = read(data, cuts)
        assert error is None
        assert [(r[1], r[4], r[5]) for r in out] == [("/mcp", b'{"a":1}', True), ("/mcp", b"two", True)]


def test_a_connect_request_ends_the_stream_once_answered():
    f = framer()
    out = seen(f.feed(b"CONNECT /mcp HTTP/1.1\r\nHost: h\r\n\r\n" + post()))
    assert [(r[0], r[5]) for r in out] == [("CONNECT", False)]
    assert f.error is None and f.feed(post()) is None


def test_an_upgrade_request_with_a_chunked_body_is_refused():
    out, error, _ = read(b"POST /mcp HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
    assert out == [] and error == (httptools.HttpParserError, "an Upgrade request with a chunked body")


@pytest.mark.parametrize("host", [b"", b"Host: a\r\nHost: b\r\n"])
def test_an_http_1_1_request_needs_exactly_one_host_when_asked(host):
    # RFC 9112 3.2: a missing or repeated Host is a 400 (the server's framers ask for it).
    data = b"POST /mcp HTTP/1.1\r\n" + host + b"Content-Length: 2\r\n\r\n{}"
    for cuts in ([], [10]):
        out, error, _ = read(data, cuts, require_host=True)
        assert out == [] and error == (httptools.HttpParserError,
                                       "no Host header" if not host else "more than one Host header")
    out, error, _ = read(data)
    assert len(out) == 1 and error is None
    out, error, _ = read(b"GET /mcp HTTP/1.0\r\n\r\n", require_host=True)
    assert len(out) == 1 and error is None  # HTTP/1.0 has no such rule


def test_a_head_asking_for_100_continue_is_told_until_its_body_comes():
    f = framer()
    data = post(b"hello", extra="Expect: 100-continue\r\n")
    head = data[:-5]
    assert f.feed(head) is None and f.continue_wanted and f.reading
    f.continue_wanted = False
    assert seen(f.feed(data[-5:]))[0][4] == b"hello" and not f.reading
    f = framer()
    assert seen(f.feed(data))[0][4] == b"hello" and not f.continue_wanted  # body already here


@pytest.mark.parametrize("apart", [False, True])
def test_data_after_connection_close_is_an_error(apart):
    first = post(extra="Connection: close\r\n")
    out, error, _ = read(first + post(), [len(first)] if apart else [])
    assert len(out) == 1 and out[0][5] is False
    assert error == (httptools.HttpParserError, "Data after `Connection: close`")


# -- properties ----------------------------------------------------------------------------

NAMES = st.sampled_from(["Host", "host", "Content-Type", "Accept", "X-A", "x-a", "Mcp-Session-Id",
                         "Connection", "Proxy-Connection", "Upgrade", "Expect", "X_Under", "Bad Name",
                         "Content-Length", "Transfer-Encoding"])
VALUE_CHARS = st.characters(min_codepoint=0, max_codepoint=255)
TARGET_CHARS = st.sampled_from(list("abcXYZ019-._~!$&'()*+,;=:@/?%#\" <>\\^`{|}") + ["\x7f", "\xe9", "\t"])


@st.composite
def requests(draw, valid: bool) -> bytes:
    """One request: valid ones from the plain forms plus what needs llhttp (chunked bodies,
    absolute targets, HTTP/1.0, odd spacing); otherwise any mix of odd bytes too."""
    method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]
                                  + ([] if valid else ["CONNECT", "get", "BREW", "POST "])))
    if draw(st.booleans()):
        target = "/" + draw(st.text(st.sampled_from(list("abc019-._~!$&'()*+,;=:@/?%")), max_size=20))
    elif valid:
        target = draw(st.sampled_from(["http://h/x?y", "http://h:81/", "/p#f", "/p?q#f"]))
    else:
        target = draw(st.text(TARGET_CHARS, max_size=20))
    version = draw(st.sampled_from(["HTTP/1.1"] * 6 + ["HTTP/1.0"] + ([] if valid else ["HTTP/2.0", "HTTP/1.1 "])))
    lines = [f"{method} {target} {version}"]
    for _ in range(draw(st.integers(0, 5))):
        if valid:
            name = draw(st.sampled_from(["Host", "Content-Type", "Accept", "X-A", "x-a", "X-Empty"]))
            value = draw(st.text(st.sampled_from(list("ab1 /;=,\t\xe9")), max_size=12))
        else:
            name = draw(NAMES)
            value = draw(st.text(VALUE_CHARS, max_size=12))
        lines.append(f"{name}:{draw(st.sampled_from(['', ' ', '  ', chr(9)]))}{value}")
    body = draw(st.binary(max_size=40))
    if version == "HTTP/1.0" and body == b"":
        lines.append("Connection: keep-alive")
    if draw(st.booleans()) or not body:
        lines.append(f"Content-Length: {len(body)}")
        payload = body
    else:
        lines.append("Transfer-Encoding: chunked")
        cut = draw(st.integers(0, len(body)))
        pieces = [p for p in (body[:cut], body[cut:]) if p]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    if version == "HTTP/1.0" and body:
        lines.append("Connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(requests(valid=True), min_size=1, max_size=4), st.data(),
       st.sampled_from([0, 5, 20, MAX_BODY]), st.booleans())
def test_any_split_of_a_stream_of_valid_requests_gives_the_same_requests(stream, data, max_body, close):
    if close:  # the last request ends the connection
        stream[-1] = stream[-1].replace(b"\r\n", b"\r\nConnection: close\r\n", 1)
    whole = b"".join(stream)
    expected = reference(whole, max_body_size=max_body)
    assert expected[1] is None  # the strategy makes valid requests only
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(whole) - 1)), max_size=8))))
    assert read(whole, cuts, max_body_size=max_body) == expected
    assert read(whole, max_body_size=max_body) == expected
    assert len(expected[0]) == len(stream)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(requests(valid=False), min_size=1, max_size=3), st.sampled_from([bytes, bytearray]),
       st.sampled_from([0, 10, MAX_BODY]), st.sampled_from([30, DEFAULT_MAX_HEAD_SIZE]), st.data())
def test_any_stream_is_read_as_the_reference_reads_it(stream, kind, max_body, max_head, data):
    # bytes may take the framer's own path for plain requests, bytearray never does: both
    # must agree with httptools' callbacks fed the same pieces on every request, error and
    # refusal, however the stream is cut. (The same pieces: where a piece ends decides
    # which of two faults llhttp reports -- a header name cut at a piece's end reaches
    # its callbacks, and with it the head limit, before a bad byte after it is seen.)
    whole = b"".join(stream)
    cuts = [0, *sorted(set(data.draw(st.lists(st.integers(1, max(1, len(whole) - 1)), max_size=4)))),
            len(whole)]
    pieces = [whole[start:stop] for start, stop in zip(cuts, cuts[1:])]
    f = framer(max_body_size=max_body, max_head_size=max_head)
    out = []
    for piece in pieces:
        out += seen(f.feed(kind(piece)))
    assert (out, error_of(f), f.refusing) == reference_in_pieces(pieces, max_body_size=max_body,
                                                                 max_head_size=max_head)


def test_the_fault_llhttp_reports_first_depends_on_where_a_piece_ends():
    # Found by the property test above: a head over its limit and a bad header name after
    # it. Read whole, llhttp meets the bad name first; cut after the name's first byte,
    # that byte reaches the callbacks and the header before it goes over the limit. The
    # framer reports what httptools' callbacks report for the same pieces.
    whole = (b"CONNECT  HTTP/1.1\r\nHost:\r\nHost:\r\nHost:00000000000\r\nBad Name:\r\nHost:\r\n"
             b"Content-Length: 0\r\n\r\n")
    for pieces in ([whole], [whole[:52], whole[52:]]):
        f = framer(max_body_size=0, max_head_size=30)
        out = [request for piece in pieces for request in seen(f.feed(piece))]
        assert (out, error_of(f), f.refusing) == reference_in_pieces(pieces, max_body_size=0,
                                                                     max_head_size=30)
    assert reference_in_pieces([whole], max_head_size=30)[1] == (httptools.HttpParserError,
                                                                 "Invalid header token")
    assert reference_in_pieces([whole[:52], whole[52:]], max_head_size=30)[1] == (
        httptools.HttpParserCallbackError, "`on_header_field` callback error")


# -- header dicts made from models ----------------------------------------------------------


def head_with(names: list[str], target: str = "/") -> bytes:
    lines = [f"GET {target} HTTP/1.1"] + [f"{name}: v{k}-{name[:3]}" for k, name in enumerate(names)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


HEADER_SEQUENCES = [
    ["Host"],
    ["Host", "Accept"],
    ["Host", "Content-Type", "Accept", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"],
    ["Accept", "Host", "Content-Type", "MCP-Protocol-Version", "Mcp-Name", "Mcp-Method"],
    ["Host", "Accept", "accept", "ACCEPT"],            # repeated: joined
    ["Host", "X-" + "n" * 60, "Accept"],               # a name too long for the name cache
    [f"X-H{k}" for k in range(16)],
    [f"X-H{k}" for k in range(17)],
    [f"X-H{k}" for k in range(64)],
    [f"X-H{k}" for k in range(65)],                    # not plain: llhttp's
    ["Host", "Accept", "X-H1", "Host"],
]


@pytest.mark.parametrize("internals", [True, False])
@pytest.mark.parametrize("shapes", [True, False])
def test_header_dicts_are_the_dicts_httptools_callbacks_build_in_order(shapes, internals):
    # Header dicts are copies of a model of their names once a sequence of names was seen
    # twice in a row (include/mcpfast/dict_shapes.h): the same items in the same order as
    # one header at a time, interleaved sequences and repeated names included, and they
    # behave as any dict afterwards.  Without models, one header at a time into a presized
    # dict, or (internals False) the PyDict_New of other versions and builds.
    _header_shapes(shapes)
    _use_cpython_internals(internals)
    try:
        f = framer()
        for _ in range(3):
            for names in HEADER_SEQUENCES + HEADER_SEQUENCES[::-1]:
                data = head_with(names)
                (got,) = seen(f.feed(data))
                expected = reference(data)[0][0]
                assert list(got[3].items()) == list(expected[3].items())
                assert gc.is_tracked(got[3]) == gc.is_tracked(expected[3])
        # A dict made from a model grows, shrinks and is looked up as any other.
        for _ in range(3):
            headers = seen(f.feed(head_with(HEADER_SEQUENCES[2])))[0][3]
        expected = dict(reference(head_with(HEADER_SEQUENCES[2]))[0][0][3])
        for k in range(20):
            headers[f"x-extra-{k}"] = expected[f"x-extra-{k}"] = [k]
        del headers["accept"], expected["accept"]
        assert list(headers.items()) == list(expected.items())
        assert gc.is_tracked(headers)
        assert headers.pop("host") == expected.pop("host") and headers == expected
        assert all(headers[key] == value for key, value in expected.items())
    finally:
        _header_shapes(True)
        _use_cpython_internals(True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["Host", "Accept", "accept", "X-A", "Mcp-Name", "Content-Type"]),
                         max_size=8), min_size=1, max_size=6), st.integers(1, 3))
def test_any_sequence_of_header_names_is_read_in_order(sequences, repeats):
    f = framer()
    for names in sequences * repeats:
        data = head_with(names)
        got = seen(f.feed(data))[0][3]
        assert list(got.items()) == list(reference(data)[0][0][3].items())


@pytest.mark.parametrize("byte", [b"\t", b"\x7f", b"\x80", b"\xe9", b"\xff", b"\x01", b"\x00", b"\r", b"\n"])
def test_a_long_value_with_an_odd_byte_anywhere_is_read_as_httptools_reads_it(byte):
    # Header values are scanned sixteen bytes at a time: an odd byte at any offset of a
    # long value (in the first block, the last, the byte-wise tail) takes the request to
    # llhttp, which reads it (or refuses it) as always.
    for size in (15, 16, 17, 31, 32, 33, 47, 70):
        for at in range(size):
            value = bytearray(b"abcdefghijklmnopqrstuvwxyz0123456789 -./:;ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:size])
            value[at:at + 1] = byte
            data = (b"POST /mcp HTTP/1.1\r\nHost: h\r\nX-Long: " + bytes(value)
                    + b"\r\nContent-Length: 2\r\n\r\nhi")
            assert read(data) == reference(data), (size, at)
    clean = b"POST /mcp HTTP/1.1\r\nX-Long: " + b"~ " * 40 + b"x\r\nContent-Length: 0\r\n\r\n"
    assert read(clean)[0][0][3] == {"x-long": "~ " * 40 + "x", "content-length": "0"}


# -- responses -----------------------------------------------------------------------------


def test_whole_response_writes_status_headers_length_and_body():
    body = b'{"ok":true}'
    assert whole_response(200, [("content-type", "application/json"), ("x-a", "b")], True, body) == (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-a: b\r\n"
        b"content-length: 11\r\n\r\n" + body)
    assert whole_response(413, [], False, b"") == (
        b"HTTP/1.1 413 Content Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
    assert whole_response(599, [], True, b"x" * 1234567).startswith(
        b"HTTP/1.1 599 Status\r\ncontent-length: 1234567\r\n\r\nxx")


def test_status_lines_carry_rfc_9110_reason_phrases_on_every_python_version():
    # Python's HTTPStatus renamed these in 3.13; the wire must not depend on the version.
    for status, phrase in [(413, "Content Too Large"), (414, "URI Too Long"),
                           (416, "Range Not Satisfiable"), (422, "Unprocessable Content"),
                           (404, "Not Found"), (429, "Too Many Requests")]:
        assert whole_response(status, [], True, b"").startswith(f"HTTP/1.1 {status} {phrase}\r\n".encode())


def test_heads_follow_their_inputs_whatever_was_written_before():
    # The heads are cached: each call must still get its own status, headers and keep-alive.
    cases = [(200, [("a", "1")], True), (200, [("a", "1")], False), (200, [("a", "2")], True),
             (202, [("a", "1")], True), (200, [("a", "1"), ("b", "2")], True), (200, [], True)]
    for _ in range(2):
        for status, headers, keep_alive in cases:
            line = f"HTTP/1.1 {status} {'OK' if status == 200 else 'Accepted'}\r\n"
            head = line + "".join(f"{n}: {v}\r\n" for n, v in headers)
            head += "" if keep_alive else "connection: close\r\n"
            assert whole_response(status, list(headers), keep_alive, b"xy") == (
                head + "content-length: 2\r\n\r\nxy").encode()
            assert stream_head(status, list(headers), keep_alive) == (
                head + "transfer-encoding: chunked\r\n\r\n").encode()


def test_many_different_heads_stay_correct():
    for n in range(600):
        assert whole_response(200, [("x-n", str(n))], True, b"") == (
            f"HTTP/1.1 200 OK\r\nx-n: {n}\r\ncontent-length: 0\r\n\r\n".encode())


def test_any_pairs_and_any_bytes_like_body_are_written():
    expected = b"HTTP/1.1 200 OK\r\nx: y\r\ncontent-length: 3\r\n\r\nabc"
    assert whole_response(200, (("x", "y"),), True, bytearray(b"abc")) == expected
    assert whole_response(200, iter([("x", "y")]), True, memoryview(b"abc")) == expected
    assert stream_head(200, (("x", "y"),), True) == b"HTTP/1.1 200 OK\r\nx: y\r\ntransfer-encoding: chunked\r\n\r\n"
    for body in ("abc", 3, None):
        with pytest.raises(TypeError):
            whole_response(200, [], True, body)


def test_header_values_outside_latin_1_are_refused():
    with pytest.raises(UnicodeEncodeError):
        whole_response(200, [("x", "\u20ac")], True, b"")
