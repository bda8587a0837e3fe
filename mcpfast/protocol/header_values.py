"""Values of the headers 2026-07-28 mirrors from a request body (``Mcp-Name``,
``Mcp-Param-*``): the Base64 sentinel form, and how a body value reads as a header value.

A value that is not plain visible ASCII travels as ``=?base64?<base64>?=`` (UTF-8,
standard alphabet with padding); a receiver decodes it before comparing with the body. The
markers are exact and case-sensitive: a value missing either is a literal.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Optional

__all__ = ["SENTINEL_START", "decode_header_value", "encode_header_value", "header_matches",
           "mirrored_value_problem"]

# The opening marker of the Base64 sentinel form.
SENTINEL_START = _START = "=?base64?"
_END = "?="


def decode_header_value(value: str) -> str:
    """A header value with the Base64 sentinel form decoded (ValueError when malformed)."""
    if not (value.startswith(_START) and value.endswith(_END)
            and len(value) >= len(_START) + len(_END)):
        return value
    encoded = value[len(_START):-len(_END)]
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("malformed Base64 sentinel") from None
    if base64.b64encode(raw).decode("ascii") != encoded:
        raise ValueError("non-canonical Base64 in the sentinel")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the Base64 sentinel does not hold UTF-8") from None


def encode_header_value(text: str) -> str:
    """``text`` as a header value: as it is when it is plain visible ASCII (spaces inside
    allowed), else in the Base64 sentinel form (also when it would read as one)."""
    plain = (text and " " < text[0] <= "~" and " " < text[-1] <= "~"
             and all(" " <= c <= "~" for c in text) and not text.startswith(_START))
    if plain:
        return text
    return _START + base64.b64encode(text.encode("utf-8")).decode("ascii") + _END


def header_matches(header: str, value: Any) -> bool:
    """Whether a decoded header value stands for the body value ``value`` (a string as it
    is, an integer compared numerically, a boolean as ``true`` / ``false``)."""
    if type(value) is bool:
        return header == ("true" if value else "false")
    if type(value) is int:
        try:
            number = float(header)
        except ValueError:
            return False
        return number == value
    return header == value


def mirrored_value_problem(label: str, header: Optional[str], value: Any,
                           required_for: str) -> Optional[str]:
    """Why the header ``label`` (its raw value, None when absent) does not stand for the
    body value ``value`` -- absent, malformed, or different -- as a HeaderMismatch message;
    None when it does. ``required_for`` completes the "is required" message."""
    if header is None:
        return f"Header mismatch: the {label} header is required {required_for}"
    if header == value and not header.startswith(_START):
        return None  # the usual case: the same plain text (no spaces around, no sentinel)
    try:
        decoded = decode_header_value(header.strip())
    except ValueError as exc:
        return f"Header mismatch: {label} header value is invalid ({exc})"
    if not header_matches(decoded, value):
        return (f"Header mismatch: {label} header value {decoded!r} does not match body "
                f"value {value!r}")
    return None
