"""The fixed JSON-RPC messages of the codec benchmarks, built once.

Every library decodes the same ``frame`` bytes object and encodes from the same Python objects,
so no library gets an input the others do not.  Each fixture carries:

- ``message``: the whole JSON-RPC envelope as Python objects (a list of envelopes for the batch);
- ``frame``: ``message`` as compact UTF-8 JSON, the bytes a transport would hand to a decoder;
- ``fields``: what a decoder reads from the frame, which is also what an encoder is given:
  a request gives ``(id, method, params)``, a notification ``(method, params)``, a response
  ``(id, result)``, and the batch a list of request triples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

JSONRPC_VERSION = "2.0"

# The member counts of the fixtures of ten objects of one shape.
ROW_MEMBERS = (6, 8, 12)

REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
BATCH = "batch"


@dataclass(frozen=True)
class Fixture:
    """One benchmark message, as bytes and as Python objects."""

    key: str
    title: str
    kind: str
    message: object
    frame: bytes
    fields: object

    @property
    def size(self) -> int:
        return len(self.frame)


def compact_json(value: object) -> bytes:
    """Compact UTF-8 JSON, the form every fixture frame is stored in."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def envelope_fields(kind: str, message: object) -> object:
    """The fields a decoder reads from ``message`` (see the module docstring)."""
    if kind == REQUEST:
        return (message["id"], message["method"], message["params"])
    if kind == NOTIFICATION:
        return (message["method"], message["params"])
    if kind == RESPONSE:
        return (message["id"], message["result"])
    if kind == BATCH:
        return [envelope_fields(REQUEST, item) for item in message]
    raise ValueError(f"unknown fixture kind {kind!r}")


def envelope(kind: str, fields: object) -> object:
    """The JSON-RPC envelope an encoder must produce from ``fields`` (inverse of envelope_fields)."""
    if kind == REQUEST:
        id_, method, params = fields
        return {"jsonrpc": JSONRPC_VERSION, "id": id_, "method": method, "params": params}
    if kind == NOTIFICATION:
        method, params = fields
        return {"jsonrpc": JSONRPC_VERSION, "method": method, "params": params}
    if kind == RESPONSE:
        id_, result = fields
        return {"jsonrpc": JSONRPC_VERSION, "id": id_, "result": result}
    if kind == BATCH:
        return [envelope(REQUEST, item) for item in fields]
    raise ValueError(f"unknown fixture kind {kind!r}")


def _call_request() -> dict:
    return {
        "jsonrpc": JSONRPC_VERSION,
        "id": 42,
        "method": "tools/call",
        "params": {
            "name": "get_weather",
            "arguments": {"city": "München", "units": "metric", "days": 3},
            "_meta": {"progressToken": "req-42"},
        },
    }


def _call_response() -> dict:
    return {
        "jsonrpc": JSONRPC_VERSION,
        "id": 42,
        "result": {
            "content": [
                {
                    "type": "text",
                    "text": "München: 18.5 °C, light rain, wind 12 km/h SW. Tomorrow 21 °C, sunny.",
                }
            ],
            "structuredContent": {
                "city": "München",
                "temperature": 18.5,
                "conditions": "light rain",
                "wind_kmh": 12,
            },
            "isError": False,
        },
    }


def _progress_notification() -> dict:
    return {
        "jsonrpc": JSONRPC_VERSION,
        "method": "notifications/progress",
        "params": {
            "progressToken": "req-42",
            "progress": 0.625,
            "total": 1.0,
            "message": "Fetched 5 of 8 forecast tiles",
        },
    }


_VERBS = ("get", "list", "create", "update", "delete", "search", "sync", "export")
_NOUNS = ("issue", "invoice", "event", "customer", "release")
_PARAMETER_KINDS = (
    ("query", "string", "Search text."),
    ("limit", "integer", "Page size."),
    ("tags", "array", "Tags to match."),
)


def _tool(index: int) -> dict:
    verb = _VERBS[index % len(_VERBS)]
    noun = _NOUNS[index // len(_VERBS)]
    properties = {"workspace": {"type": "string"}}
    extra = [_PARAMETER_KINDS[(index + k) % len(_PARAMETER_KINDS)] for k in range(1 + index % 2)]
    for name, type_, description in extra:
        schema = {"type": type_, "description": description}
        if type_ == "array":
            schema["items"] = {"type": "string"}
        properties[name] = schema
    return {
        "name": f"{verb}_{noun}",
        "description": f"{verb.capitalize()} {noun.replace('_', ' ')}s.",
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": ["workspace"],
        },
    }


def _tools_list_response() -> dict:
    return {
        "jsonrpc": JSONRPC_VERSION,
        "id": 7,
        "result": {"tools": [_tool(i) for i in range(40)], "nextCursor": "page-2"},
    }


def _batch_of_requests() -> list:
    cities = ("Berlin", "Zürich", "Oslo", "Lisboa", "Kraków", "Dublin", "Turku", "Porto", "Gent", "Brno")
    batch = []
    for n, city in enumerate(cities):
        # Ids are integers or strings in JSON-RPC; the batch carries both.
        request_id = 100 + n if n % 3 else f"batch-{n}"
        batch.append(
            {
                "jsonrpc": JSONRPC_VERSION,
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "get_weather", "arguments": {"city": city, "units": "metric"}},
            }
        )
    return batch


def _row(index: int) -> list:
    """The members of one row of a listing, id first: keys of several lengths, values of
    every kind a payload carries."""
    return [
        ("id", 1000 + index),
        ("login", f"user{index}"),
        ("email", f"user{index}@example.org"),
        ("active", index % 3 != 0),
        ("score", index * 0.25),
        ("team", "platform"),
        ("role", "maintainer"),
        ("createdAt", f"2026-03-{index + 1:02}T09:00:00Z"),
        ("displayName", f"User {index}"),
        ("seats", index + 1),
        ("tags", ["beta"] if index % 2 else []),
        ("manager", None),
    ]


def _rows_response(members: int) -> dict:
    """A tools/call result whose structured content is ten objects of ``members`` members
    (one shape), the case of the decoder's shape models (include/mcpfast/dict_shapes.h)."""
    rows = [dict(_row(index)[:members]) for index in range(10)]
    return {
        "jsonrpc": JSONRPC_VERSION,
        "id": 9,
        "result": {"content": [], "structuredContent": {"rows": rows}},
    }


def _build(key: str, title: str, kind: str, message: object) -> Fixture:
    return Fixture(key, title, kind, message, compact_json(message), envelope_fields(kind, message))


FIXTURES: tuple[Fixture, ...] = (
    _build("call_request", "tools/call request", REQUEST, _call_request()),
    _build("call_response", "tools/call response", RESPONSE, _call_response()),
    _build("progress", "notifications/progress", NOTIFICATION, _progress_notification()),
    _build("tools_list", "tools/list response, 40 tools", RESPONSE, _tools_list_response()),
    _build("batch10", "batch of 10 requests", BATCH, _batch_of_requests()),
    *(
        _build(f"rows{members}", f"result of 10 objects of {members} members", RESPONSE,
               _rows_response(members))
        for members in ROW_MEMBERS
    ),
)

BY_KEY: dict[str, Fixture] = {fixture.key: fixture for fixture in FIXTURES}
