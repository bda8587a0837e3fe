"""Frames the decoder refused although they are valid JSON: whose message were they?

The decoder (simdjson) refuses some valid JSON: integers beyond 64 bits, lone surrogate
escapes in strings, numbers out of the double range. It reports a parse error without an
id, and a peer whose request is answered with id null never learns that its request
failed (the official Python SDK's client then waits for its timeout). For such a frame,
``read_envelope`` reads it again with Python's json module, which accepts all of these,
to find the message's kind and id, so the session can answer the request by its id or
fail its own request whose response this was.

Only decoder refusals of frames that Python's json reads as an object are recovered;
anything else (invalid JSON, invalid UTF-8, arrays) stays a parse error with id null.
Runs on the error path only. ``refusal`` and ``invalid_params_reply`` are the one rule for
every transport: a session applies it to what it is fed, and an HTTP endpoint that decodes a
body before any session does applies it there.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, Optional

from mcpfast._core.decode import DecodeError
from mcpfast._core.encode import encode_error
from mcpfast.jsonrpc.errors import INVALID_PARAMS, PARSE_ERROR

__all__ = ["Envelope", "invalid_params_reply", "read_envelope", "refusal"]


class Envelope(NamedTuple):
    """The readable part of a refused message: ``kind`` ("request", "notification" or
    "response"), ``id`` (None for a notification) and ``method`` (None for a response)."""

    kind: str
    id: Any
    method: Optional[str]


def _sendable_str(value: Any) -> bool:
    # Strings holding lone surrogates cannot be written back in a reply.
    if type(value) is not str:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_id(value: Any) -> bool:
    # Only ids the encoder can write back in the reply (64-bit integers).
    if type(value) is int:
        return -(2**63) <= value < 2**64
    return _sendable_str(value)


def read_envelope(frame: Any) -> Optional[Envelope]:
    """The envelope of a frame the decoder refused, when Python's json can read it."""
    try:
        message = json.loads(bytes(frame))
    except (ValueError, RecursionError):
        return None
    if type(message) is not dict or message.get("jsonrpc") != "2.0":
        return None
    method = message.get("method")
    has_id = "id" in message
    request_id = message.get("id")
    if _sendable_str(method):
        if not has_id:
            return Envelope("notification", None, method)
        return Envelope("request", request_id, method) if _is_id(request_id) else None
    if method is None and _is_id(request_id) and ("result" in message or "error" in message):
        return Envelope("response", request_id, None)
    return None


def refusal(frame: Any, exc: DecodeError) -> Optional[tuple[Envelope, str]]:
    """(envelope, reason) when ``exc`` is the decoder refusing valid JSON whose envelope
    Python's json reads (module docstring), else None (a plain parse error)."""
    if exc.id is not None or exc.code != PARSE_ERROR:
        return None
    envelope = read_envelope(frame)
    if envelope is None:
        return None
    return envelope, exc.message.removeprefix("Parse error: ")


def invalid_params_reply(envelope: Envelope, reason: str) -> bytes:
    """The answer to a refused request: -32602 with its id, saying which value failed."""
    return encode_error(
        envelope.id, INVALID_PARAMS,
        f"Invalid params: {envelope.method!r} holds a value that cannot be decoded: {reason}",
        {"method": envelope.method, "reason": reason},
    )
