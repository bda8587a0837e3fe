"""HTTPRequest and HTTPResponse (mcpfast._core.http_messages): fields read as plain
attributes, settable, never deleted; a response closes once."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from mcpfast._core.http_messages import HTTPRequest, HTTPResponse
from mcpfast.transports.http import messages


def test_the_transport_module_hands_out_the_compiled_classes():
    assert messages.HTTPRequest is HTTPRequest and messages.HTTPResponse is HTTPResponse


def test_a_request_keeps_what_it_was_made_with_and_can_be_rewritten():
    headers = {"host": "h"}
    request = HTTPRequest("POST", "/mcp", headers, b"{}", "a=1")
    assert (request.method, request.path, request.headers, request.body, request.query) == (
        "POST", "/mcp", headers, b"{}", "a=1")
    assert request.headers is headers
    assert HTTPRequest("GET", "/", {}).body == b"" and HTTPRequest("GET", "/", {}).query == ""
    request.path, request.method, request.body = "/other", "PUT", b"x"
    assert (request.path, request.method, request.body) == ("/other", "PUT", b"x")
    assert repr(request) == "<HTTPRequest PUT /other 1 bytes>"


def test_request_fields_are_never_deleted_nor_invented():
    request = HTTPRequest("GET", "/", {})
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del request.path
    with pytest.raises(AttributeError, match="no attribute 'extra'"):
        request.extra = 1
    with pytest.raises(TypeError):
        request.method = 5
    assert request.path == "/"


def test_a_response_status_is_an_int_and_settable():
    response = HTTPResponse(HTTPStatus.OK)
    assert type(response.status) is int and response.status == 200
    assert response.headers == [] and response.body == b"" and response.stream is None
    response.status = 404
    assert response.status == 404
    with pytest.raises(TypeError):
        HTTPResponse("200")
    with pytest.raises(TypeError):
        response.status = 2.5
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del response.status
    assert response.status == 404 and repr(response) == "<HTTPResponse 404 0 bytes>"


def test_a_response_reads_headers_case_insensitively_and_closes_once():
    calls = []
    response = HTTPResponse(200, [("Content-Type", "application/json")], b"{}",
                            on_close=calls.append)
    assert response.header("content-type") == "application/json" and response.header("x") is None
    response.headers.append(("mcp-session-id", "abc"))
    assert response.header("MCP-Session-Id") == "abc"
    assert not response.closed
    response.close(disconnected=True)
    response.close()
    assert response.closed and calls == [True]
