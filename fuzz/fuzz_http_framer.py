"""Fuzz HTTPRequestFramer: its strict C fast path must read exactly what llhttp reads.

Input: byte 0 picks max_body_size, byte 1 seeds the cut points; byte 2 even: bytes 3.. are
the stream a client sends, odd: they drive a generator of near-valid requests (methods,
targets, versions, header names and values, separators, line ends, lengths, bodies from
small vocabularies with odd bytes mixed in), so that most inputs reach the fast path's
edges even though the compiled code gives the fuzzer no coverage. The same stream, cut
at the same points, goes to two framers: one fed bytes (plain requests taken by the fast
path, the rest by llhttp) and one fed memoryviews (llhttp only: the fast path reads bytes
objects only).
Property: both give the same requests (method, path, query, headers, body, keep-alive,
too large), say the same about the body limit after every read, and stop at the same
kind of error; nothing raises out of feed().
"""

from __future__ import annotations

import random

from common import Choices, instrumented, main

with instrumented():
    from mcpfast._core.http_framing import HTTPRequestFramer
    from mcpfast.transports.http.messages import HTTPRequest

LIMITS = (0, 1, 10, 100, 1000, 4096, 1 << 20)
METHODS = (b"POST", b"GET", b"DELETE", b"PUT", b"HEAD", b"OPTIONS", b"PATCH", b"CONNECT",
           b"post", b"GE", b"POSTX", b"")
TARGET_BYTES = b"/mcp?=&%#:@!$'()*+,;~-._aZ09 \"\x00\x7f\x80\xff\t<>{}|^`[]"
VERSIONS = (b"HTTP/1.1", b"HTTP/1.0", b"HTTP/1.1 ", b"http/1.1", b"HTTP/2.0", b"HTTP/1.10")
NAMES = (b"Host", b"Content-Length", b"content-length", b"CONTENT-LENGTH", b"Connection",
         b"Proxy-Connection", b"Transfer-Encoding", b"Upgrade", b"Content-Type", b"Accept",
         b"Mcp-Session-Id", b"X-A", b"x-a", b"Expect", b"Bad Name", b"", b"N\x80", b"A" * 41)
VALUES = (b"localhost", b"0", b"5", b"05", b"-1", b" 3", b"3 ", b"99999999999999999999",
          b"keep-alive", b"Keep-Alive", b"close", b"upgrade", b"chunked", b"application/json",
          b"", b" ", b"a\tb", b"\x80\xff", b"a, b", b"100-continue")
SEPARATORS = (b": ", b":", b":\t", b" : ", b":  ")
LINE_ENDS = (b"\r\n", b"\r\n", b"\r\n", b"\n", b"\r")


def usually(choices: Choices, usual: bytes, options: tuple) -> bytes:
    """The usual value three times in four, else any of the options."""
    return usual if choices.byte() % 4 else choices.pick(options)


def generated(choices: Choices) -> bytes:
    """A stream of near-valid requests read off the choices."""
    out = bytearray()
    for _ in range(1 + choices.byte() % 3):
        end = usually(choices, b"\r\n", LINE_ENDS)
        target = b"/" + bytes(choices.pick(b"mcp/?=&%") if choices.byte() % 4 else choices.pick(TARGET_BYTES)
                              for _ in range(choices.byte() % 12))
        out += (usually(choices, b"POST", METHODS) + b" " + target + b" "
                + usually(choices, b"HTTP/1.1", VERSIONS) + end)
        body = bytes(choices.byte() for _ in range(choices.byte() % 8))
        for _ in range(choices.byte() % 6):
            name = choices.pick(NAMES)
            value = str(len(body)).encode() if choices.byte() % 3 == 0 else choices.pick(VALUES)
            out += name + usually(choices, b": ", SEPARATORS) + value + usually(choices, b"\r\n", LINE_ENDS)
        out += usually(choices, b"\r\n", LINE_ENDS) + body
    return bytes(out)


def read(framer: HTTPRequestFramer, pieces: list, as_view: bool) -> list:
    events: list = []
    for piece in pieces:
        done = framer.feed(memoryview(piece) if as_view else piece)
        for request, keep_alive, too_large in done or ():
            events.append((request.method, request.path, request.query, request.headers,
                           request.body, keep_alive, too_large))
        events.append(("read", framer.refusing, type(framer.error).__name__))
        if framer.error is not None:
            break
    return events


def check(data: bytes) -> None:
    choices = Choices(data)
    limit = choices.pick(LIMITS)
    rng = random.Random(choices.byte())
    stream = generated(choices) if choices.byte() % 2 else choices.rest()
    cuts = sorted(rng.sample(range(1, len(stream)), min(len(stream) - 1, rng.randint(0, 4)))) \
        if len(stream) > 1 else []
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    fast = read(HTTPRequestFramer(HTTPRequest, limit), pieces, as_view=False)
    llhttp = read(HTTPRequestFramer(HTTPRequest, limit), pieces, as_view=True)
    assert fast == llhttp, (fast, llhttp)


if __name__ == "__main__":
    main(check)
