"""Header values mirrored from a 2026-07-28 body: how a header stands for a body value."""

import base64

import pytest

from mcpfast.protocol.header_values import encode_header_value, mirrored_value_problem


@pytest.mark.parametrize("header, value, problem", [
    ("echo", "echo", None),
    (" echo ", "echo", None),  # optional whitespace around the value is not part of it
    ("echo", "Echo", "does not match"),
    (None, "echo", "is required"),
    ("5", 5, None),
    ("5.0", 5, None),
    ("true", True, None),
    ("True", True, "does not match"),
    # A literal that reads as a sentinel is decoded before comparing, even when the raw
    # header equals the body value.
    ("=?base64?ZWNobw==?=", "=?base64?ZWNobw==?=", "does not match"),
    ("=?base64?ZWNobw==?=", "echo", None),
    (encode_header_value("=?base64?ZWNobw==?="), "=?base64?ZWNobw==?=", None),
    ("=?base64?not base64?=", "echo", "invalid"),
])
def test_mirrored_value(header, value, problem):
    found = mirrored_value_problem("Mcp-Name", header, value, "for tools/call")
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found and found.startswith("Header mismatch")


def test_encoded_values_round_trip():
    for text in ("grüße", " lead", "trail ", "=?base64?x?="):
        encoded = encode_header_value(text)
        assert encoded.startswith("=?base64?")
        assert base64.b64decode(encoded[9:-2]).decode() == text
        assert mirrored_value_problem("Mcp-Name", encoded, text, "") is None
