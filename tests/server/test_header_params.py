"""x-mcp-header: tool arguments mirrored into Mcp-Param-* headers (2026-07-28)."""

from __future__ import annotations

import base64

import pytest

from mcpfast import Server
from mcpfast.protocol.header_params import HeaderParam, header_param_problem, header_params_of


def schema(**properties):
    return {"type": "object", "properties": properties}


def test_annotations_are_read_along_properties_chains():
    params = header_params_of(schema(
        region={"type": "string", "x-mcp-header": "Region"},
        limits=schema(count={"type": "integer", "x-mcp-header": "Count"}),
        plain={"type": "string"}))
    assert params == (HeaderParam(("region",), "mcp-param-region", "Region"),
                      HeaderParam(("limits", "count"), "mcp-param-count", "Count"))
    assert header_params_of(schema(a={"type": "string"})) == ()


@pytest.mark.parametrize("bad, fragment", [
    (schema(a={"type": "number", "x-mcp-header": "A"}), "string, integer or boolean"),
    (schema(a={"type": "string", "x-mcp-header": "Has Space"}), "HTTP token"),
    (schema(a={"type": "string", "x-mcp-header": ""}), "HTTP token"),
    (schema(a={"type": "string", "x-mcp-header": "Dup"}, b={"type": "string", "x-mcp-header": "dup"}), "twice"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
     "'items'"),
    ({"type": "object", "anyOf": [schema(a={"type": "string", "x-mcp-header": "A"})]}, "'anyOf'"),
    ({"type": "object", "x-mcp-header": "Root"}, "on a property"),
])
def test_malformed_annotations_are_refused_at_registration(bad, fragment):
    with pytest.raises(ValueError, match=fragment):
        header_params_of(bad)
    app = Server("x")

    def tool(a: str = "") -> str:
        return a

    with pytest.raises(ValueError, match=fragment):
        app.tool(input_schema=bad)(tool)


PARAMS = header_params_of(schema(region={"type": "string", "x-mcp-header": "Region"},
                                 count={"type": "integer", "x-mcp-header": "Count"},
                                 dry={"type": "boolean", "x-mcp-header": "Dry"}))


def encoded(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize("arguments, headers", [
    ({"region": "us-west1"}, {"mcp-param-region": "us-west1"}),
    ({"region": "Zürich"}, {"mcp-param-region": encoded("Zürich")}),
    ({"region": " padded "}, {"mcp-param-region": encoded(" padded ")}),
    ({"region": "=?base64?abc"}, {"mcp-param-region": "=?base64?abc"}),  # no ?=: a literal
    ({"count": 42}, {"mcp-param-count": "42"}),
    ({"count": 42}, {"mcp-param-count": "42.0"}),  # compared numerically
    ({"dry": False}, {"mcp-param-dry": "false"}),
    ({"region": None}, {}),  # null: no header expected
    ({}, {}),
])
def test_agreeing_headers_pass(arguments, headers):
    assert header_param_problem(PARAMS, arguments, headers) is None


@pytest.mark.parametrize("arguments, headers, fragment", [
    ({"region": "us"}, {}, "required"),
    ({}, {"mcp-param-region": "us"}, "argument is absent"),
    ({"region": "us"}, {"mcp-param-region": "eu"}, "does not match"),
    ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8?="}, "invalid"),  # no padding
    ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVs!!!bG8=?="}, "invalid"),
    ({"count": 42}, {"mcp-param-count": "forty-two"}, "does not match"),
    ({"dry": True}, {"mcp-param-dry": "True"}, "does not match"),  # values are case-sensitive
])
def test_disagreeing_headers_are_named(arguments, headers, fragment):
    problem = header_param_problem(PARAMS, arguments, headers)
    assert problem is not None and fragment in problem
