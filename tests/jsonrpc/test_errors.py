"""The error catalogue, category/severity rules and the exception classes."""

import json
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpfast.jsonrpc import errors
from mcpfast.jsonrpc.errors import (
    ABSENT,
    CATALOGUE,
    ConnectionClosed,
    InternalError,
    InvalidParams,
    JSONRPCError,
    MethodNotFound,
    RequestCancelled,
    RequestTimeout,
    category,
    default_message,
    error_from_response,
    severity,
)


def test_codes_have_their_documented_values():
    assert errors.PARSE_ERROR == -32700
    assert errors.INVALID_REQUEST == -32600
    assert errors.METHOD_NOT_FOUND == -32601
    assert errors.INVALID_PARAMS == -32602
    assert errors.INTERNAL_ERROR == -32603
    assert errors.RESOURCE_NOT_FOUND == -32002
    assert errors.URL_ELICITATION_REQUIRED == -32042
    assert errors.HEADER_MISMATCH == -32020
    assert errors.MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert errors.UNSUPPORTED_PROTOCOL_VERSION == -32022
    assert errors.NOT_INITIALIZED == -32005
    assert errors.TRANSPORT_ERROR == -32008
    assert errors.REQUEST_TIMEOUT == -32009
    assert errors.RATE_LIMITED == -32010
    assert errors.MESSAGE_TOO_LARGE == -32012
    assert errors.UNSUPPORTED_VERSION == -32061
    assert errors.REQUEST_CANCELLED == -32800


def test_codec_constants_agree():
    from mcpfast._core import codec

    assert codec.PARSE_ERROR == errors.PARSE_ERROR
    assert codec.INVALID_REQUEST == errors.INVALID_REQUEST


@pytest.mark.parametrize(
    "version, definition, code",
    [
        ("2025-11-25", "URLElicitationRequiredError", errors.URL_ELICITATION_REQUIRED),
        ("2026-07-28", "HeaderMismatchError", errors.HEADER_MISMATCH),
        ("2026-07-28", "MissingRequiredClientCapabilityError",
         errors.MISSING_REQUIRED_CLIENT_CAPABILITY),
        ("2026-07-28", "UnsupportedProtocolVersionError", errors.UNSUPPORTED_PROTOCOL_VERSION),
        ("2026-07-28", "ParseError", errors.PARSE_ERROR),
        ("2026-07-28", "InvalidRequestError", errors.INVALID_REQUEST),
        ("2026-07-28", "MethodNotFoundError", errors.METHOD_NOT_FOUND),
        ("2026-07-28", "InvalidParamsError", errors.INVALID_PARAMS),
        ("2026-07-28", "InternalError", errors.INTERNAL_ERROR),
    ],
)
def test_spec_codes_match_the_schema(version, definition, code, mcp_schema):
    text = json.dumps(mcp_schema(version).definitions[definition])
    assert f'"const": {code}' in text


def test_catalogue_entries_are_consistent():
    for code, entry in CATALOGUE.items():
        assert entry.code == code
        assert getattr(errors, entry.name) == code
        assert entry.message and entry.message == default_message(code)
        assert entry.source in ("json-rpc", "seed", "local") or entry.source.startswith("mcp ")
    # Every exported constant is catalogued.
    constants = {name: getattr(errors, name) for name in errors.__all__ if name.isupper()}
    constants.pop("ABSENT")
    constants.pop("CATALOGUE")
    assert set(constants.values()) == set(CATALOGUE)


@pytest.mark.parametrize(
    "code, expected",
    [
        (-32700, "parse"),
        (-32600, "protocol"),
        (-32601, "method"),
        (-32602, "params"),
        (-32603, "internal"),
        (-32604, "reserved"),
        (-32768, "reserved"),
        (-32100, "reserved"),
        (-32002, "mcp"),
        (-32042, "mcp"),
        (-32020, "mcp"),
        (-32021, "mcp"),
        (-32022, "mcp"),
        (-32005, "server"),
        (-32010, "server"),
        (-32012, "server"),
        (-32061, "server"),
        (-32000, "server"),
        (-32099, "server"),
        (-32769, "application"),
        (-32800, "application"),
        (-31999, "application"),
        (0, "application"),
        (1, "application"),
        (404, "application"),
    ],
)
def test_category(code, expected):
    assert category(code) == expected


@pytest.mark.parametrize(
    "code, expected",
    [
        (-32700, "critical"),
        (-32600, "critical"),
        (-32603, "critical"),
        (-32012, "critical"),
        (-32008, "critical"),
        (-32601, "error"),
        (-32602, "error"),
        (-32002, "error"),
        (-32061, "error"),
        (-32022, "error"),
        (-32010, "warning"),
        (-32009, "warning"),
        (-32005, "warning"),
        (-32042, "warning"),
        (-32800, "info"),
        (12345, "error"),
        (-32050, "error"),
    ],
)
def test_severity(code, expected):
    assert severity(code) == expected


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_category_and_severity_are_total(code):
    assert category(code) in {
        "parse", "protocol", "method", "params", "internal", "reserved", "mcp", "server",
        "application",
    }
    assert severity(code) in {"critical", "error", "warning", "info"}
    reserved_block = -32768 <= code <= -32000
    assert (category(code) == "application") == (not reserved_block)


@pytest.mark.parametrize("bad", ["-32700", -32700.0, None, True])
def test_category_and_severity_refuse_non_int(bad):
    with pytest.raises(TypeError):
        category(bad)
    with pytest.raises(TypeError):
        severity(bad)
    with pytest.raises(TypeError):
        default_message(bad)


def test_default_message():
    assert default_message(-32601) == "Method not found"
    assert default_message(-32050) == "Server error"
    assert default_message(7) == "Error"


def test_jsonrpc_error_attributes():
    e = JSONRPCError(-32002, "Resource not found", {"uri": "file:///x"})
    assert (e.code, e.message, e.data, e.has_data) == (-32002, "Resource not found", {"uri": "file:///x"}, True)
    assert str(e) == "[-32002] Resource not found"
    assert "data=" in repr(e)
    assert isinstance(e, Exception)

    bare = JSONRPCError(-32601)
    assert bare.message == "Method not found"
    assert bare.data is None and bare.has_data is False

    null_data = JSONRPCError(1, "m", None)
    assert null_data.has_data is True and null_data.data is None


def test_jsonrpc_error_validates_arguments():
    with pytest.raises(TypeError):
        JSONRPCError("x", "m")
    with pytest.raises(TypeError):
        JSONRPCError(True, "m")
    with pytest.raises(TypeError):
        JSONRPCError(1, b"bytes message")


def test_fixed_code_subclasses():
    assert InvalidParams("bad name").code == -32602
    assert InvalidParams("bad name").message == "bad name"
    assert MethodNotFound().code == -32601 and MethodNotFound().message == "Method not found"
    assert InternalError(data=[1]).data == [1]
    for cls in (InvalidParams, MethodNotFound, InternalError):
        assert issubclass(cls, JSONRPCError)


def test_local_exceptions():
    t = RequestTimeout(5, "sampling/createMessage", 1.5)
    assert t.code == errors.REQUEST_TIMEOUT
    assert (t.request_id, t.method, t.timeout) == (5, "sampling/createMessage", 1.5)
    assert "sampling/createMessage" in t.message and "1.5" in t.message
    c = RequestCancelled("user stop", 3)
    assert c.code == errors.REQUEST_CANCELLED and c.reason == "user stop" and c.request_id == 3
    assert "user stop" in c.message
    closed = ConnectionClosed()
    assert closed.code == errors.TRANSPORT_ERROR and closed.message == "Connection closed"
    for e in (t, c, closed):
        assert isinstance(e, JSONRPCError)


@pytest.mark.parametrize(
    "exc",
    [
        JSONRPCError(-32002, "Resource not found", {"uri": "x"}),
        JSONRPCError(5, "m"),
        InvalidParams("p", data=None),
        RequestTimeout(1, "ping", 2.0),
        RequestCancelled("why", 9),
        ConnectionClosed("gone"),
    ],
)
def test_exceptions_pickle(exc):
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc)
    assert (back.code, back.message, back.data, back.has_data) == (
        exc.code, exc.message, exc.data, exc.has_data)
    assert back.__dict__ == exc.__dict__


def test_error_from_response_picks_the_class():
    assert type(error_from_response(-32601, "nope")) is MethodNotFound
    assert type(error_from_response(-32602, "bad", {"x": 1})) is InvalidParams
    assert error_from_response(-32602, "bad", {"x": 1}).data == {"x": 1}
    assert type(error_from_response(-32603, "oops")) is InternalError
    generic = error_from_response(-32009, "their timeout")
    # A peer's code never turns into one of the local classes.
    assert type(generic) is JSONRPCError and generic.code == -32009
    assert error_from_response(1, "m", ABSENT).has_data is False
