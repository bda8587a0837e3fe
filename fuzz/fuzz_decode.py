"""Fuzz decode: any bytes give messages or a DecodeError, never a crash or another error.

Input: the frame itself (also decoded as str when it is UTF-8).
Property: decode() returns a typed message, or a list of messages and DecodeErrors for a
batch, or raises DecodeError with code -32700/-32600 and an id that is None, an int or a
str. The lazy payload of every message can be read; what was accepted is valid JSON to
the standard library too, and encode_message() of it decodes to an equal message.
"""

from __future__ import annotations

import json

from common import instrumented, main

with instrumented():
    from mcpfast._core.codec import (
        INVALID_REQUEST,
        PARSE_ERROR,
        DecodeError,
        ErrorResponse,
        Notification,
        Request,
        Response,
        decode,
        encode_message,
    )

KINDS = (Request, Notification, Response, ErrorResponse)


def summary(message) -> tuple:
    """Everything a message says, payload included (built here)."""
    kind = type(message)
    if kind is Request:
        return (kind, message.id, message.method, message.params)
    if kind is Notification:
        return (kind, message.method, message.params)
    if kind is Response:
        return (kind, message.id, message.result)
    return (kind, message.id, message.code, message.message, message.has_data, message.data)


def check_error(error: DecodeError) -> None:
    assert error.code in (PARSE_ERROR, INVALID_REQUEST), error.code
    assert error.id is None or type(error.id) in (int, str), repr(error.id)
    assert isinstance(error.message, str) and error.message


def check_message(message) -> None:
    assert type(message) in KINDS, type(message)
    fresh = summary(message)  # reads the lazy payload
    frame = encode_message(message)
    json.loads(frame)
    again = decode(frame)
    assert summary(again) == fresh, (frame, fresh)


def check_frame(frame) -> None:
    try:
        result = decode(frame)
    except DecodeError as error:
        check_error(error)
        return
    if isinstance(result, list):
        assert result, "an empty batch must be an error"
        for item in result:
            if isinstance(item, DecodeError):
                check_error(item)
            else:
                check_message(item)
    else:
        check_message(result)
    # Accepted means valid JSON (the standard library is the independent judge). RFC 8259
    # lets a parser ignore a leading byte order mark; json.loads does so for bytes only.
    if isinstance(frame, str):
        frame = frame.removeprefix("\ufeff")
    json.loads(frame)


def check(data: bytes) -> None:
    check_frame(data)
    check_frame(bytearray(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    check_frame(text)


if __name__ == "__main__":
    main(check)
