"""Shared test fixtures: MCP messages checked against the specification's JSON Schemas.

``mcp_schema(version)`` returns a :class:`SpecSchema` for one protocol version, read from
``<spec dir>/<version>/schema.json``. The spec directory comes from one function,
``mcp_spec.spec_dir()`` (tests/helpers/mcp_spec.py): ``$MCPFAST_SPEC_DIR`` when set, else
``spec/`` at the repository root when it exists, else ``../shared/spec`` beside the repository.
When schemas are missing there the whole run stops before any test (``pytest_sessionstart``)
with one message naming what is missing and how to point at it; a test never skips for it.

What a SpecSchema offers:

``validator(definition)`` / ``schema(definition)``
    A jsonschema validator for one definition (cached; ``iter_errors``, ``is_valid``).
``validate(definition, instance)`` / ``schema(definition, instance)``
    Validate ``instance`` against one definition (``"CallToolResult"``, ``"Tool"``, ...);
    AssertionError listing every violation otherwise.
``check_message(message, answers=None)``
    Validate one whole JSON-RPC message (a dict, or bytes/str of JSON) that a peer sent:
    the envelope (``JSONRPCRequest`` / ``JSONRPCNotification`` / ``JSONRPCResponse`` /
    the error response), then the typed definition -- requests and notifications by their
    method (``CreateMessageRequest``, ``LoggingMessageNotification``, ...), results by
    ``answers``, the method of the request the response answers (``"tools/call"`` ->
    ``CallToolResult``; methods whose result is empty -> ``EmptyResult``). Returns the
    name of the most specific definition checked. Unknown methods are an error: the schema
    must know everything an MCP peer sends. Batches (lists) are checked element by element
    and only exist in 2025-03-26.

Strictness: the published schemas leave objects open (no ``additionalProperties``), so a
field a version does not define would pass unnoticed. The validators here close every
object schema that lists ``properties`` and says nothing about ``additionalProperties``,
except the ones the specification declares open (capabilities, ``Result``, generic
``Request``/``Notification`` params, ``_meta``, ``experimental``, tool input/output
schemas). That makes "this version has no such field" a test failure.

Error responses with ``id: null`` (parse errors and invalid requests whose id could not be
read) are valid JSON-RPC 2.0, but every schema types ``id`` as a RequestId (string or
integer); ``check_message`` accepts null for -32700 and -32600 only and validates the rest.
"""

from __future__ import annotations

import copy
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import jsonschema
import pytest

# Helpers several test folders share (tests use importlib mode, so they cannot import each
# other): tests/helpers is importable by module name.
sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

from mcp_spec import spec_document, spec_problem  # noqa: E402 (needs the path above)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop the run at once when the MCP JSON schemas are missing: one clear message instead
    of hundreds of failing tests."""
    problem = spec_problem()
    if problem is not None:
        pytest.exit(problem, returncode=pytest.ExitCode.USAGE_ERROR)


# Definitions the specification keeps open on purpose, at their top level.
_OPEN_DEFINITIONS = frozenset(
    {
        "Result",
        "EmptyResult",
        "Request",
        "Notification",
        "RequestParams",
        "NotificationParams",
        "PaginatedRequestParams",
        "ServerCapabilities",
        "ClientCapabilities",
        "JSONRPCRequest",
        "JSONRPCNotification",
        "Task",
        "MetaObject",
        "RequestMetaObject",
        "ResultMetaObject",
        "NotificationMetaObject",
        "JSONObject",
    }
)
# Property names whose schemas describe free-form objects (never closed, never descended).
_OPEN_PROPERTIES = frozenset(
    {"_meta", "experimental", "inputSchema", "outputSchema", "arguments", "structuredContent",
     "metadata", "extensions", "capabilities"}
)


def _close(node: Any) -> None:
    """Close object schemas in place (see the module docstring), recursively."""
    if isinstance(node, list):
        for item in node:
            _close(item)
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    if isinstance(props, dict):
        if "additionalProperties" not in node and "patternProperties" not in node:
            node["additionalProperties"] = False
        for name, sub in props.items():
            if name not in _OPEN_PROPERTIES:
                _close(sub)
    for key in ("items", "anyOf", "oneOf", "allOf", "not", "then", "else", "if"):
        if key in node:
            _close(node[key])
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        _close(extra)


def _result_definition(request_definition: str, definitions: dict) -> str:
    if request_definition.endswith("Request"):
        candidate = request_definition[: -len("Request")] + "Result"
        if candidate in definitions:
            return candidate
    return "EmptyResult"


class SpecSchema:
    """The JSON Schema of one MCP protocol version (see the module docstring)."""

    def __init__(self, version: str) -> None:
        self.version = version
        document = spec_document(version)
        self._defs_key = "$defs" if "$defs" in document else "definitions"
        strict = copy.deepcopy(document)
        for name, definition in strict[self._defs_key].items():
            if name in _OPEN_DEFINITIONS:
                # Open at the top; inner objects still closed.
                props = definition.get("properties")
                if isinstance(props, dict):
                    for prop_name, sub in props.items():
                        if prop_name not in _OPEN_PROPERTIES:
                            _close(sub)
            else:
                _close(definition)
        self._document = strict
        self.definitions: dict = strict[self._defs_key]
        self._cls = jsonschema.validators.validator_for(document)
        self._validators: dict[str, Any] = {}
        self.request_methods: dict[str, str] = {}
        self.notification_methods: dict[str, str] = {}
        for name, definition in self.definitions.items():
            method = definition.get("properties", {}).get("method", {}).get("const")
            if not isinstance(method, str):
                continue
            if name.endswith("Notification"):
                self.notification_methods[method] = name
            elif name.endswith("Request"):
                self.request_methods[method] = name
        self.result_definitions = {
            method: _result_definition(name, self.definitions)
            for method, name in self.request_methods.items()
        }

    def validator(self, definition: str) -> Any:
        """A jsonschema validator for one definition (cached)."""
        found = self._validators.get(definition)
        if found is None:
            if definition not in self.definitions:
                raise KeyError(f"{self.version} defines no {definition!r}")
            root = dict(self._document)
            root["$ref"] = f"#/{self._defs_key}/{definition}"
            found = self._cls(root)
            self._validators[definition] = found
        return found

    def __call__(self, definition: str, *instance: Any) -> Any:
        """``schema("Tool")`` -> the validator; ``schema("Tool", value)`` validates value."""
        if not instance:
            return self.validator(definition)
        (value,) = instance
        self.validate(definition, value)
        return None

    def validate(self, definition: str, instance: Any) -> None:
        """AssertionError listing every violation of ``definition`` by ``instance``."""
        errors = sorted(self.validator(definition).iter_errors(instance), key=lambda e: list(e.path))
        if errors:
            lines = [
                f"  at {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}"
                for e in errors[:20]
            ]
            raise AssertionError(
                f"not a valid {definition} for MCP {self.version}:\n"
                + "\n".join(lines)
                + f"\ninstance: {json.dumps(instance)[:2000]}"
            )

    def has_field(self, definition: str, field: str) -> bool:
        """True when ``definition`` lists ``field`` among its properties."""
        return field in self.definitions[definition].get("properties", {})

    def check_message(self, message: Any, answers: Optional[str] = None) -> str:
        """Validate one JSON-RPC message (see the module docstring); the definition checked."""
        if isinstance(message, (bytes, bytearray, memoryview, str)):
            message = json.loads(bytes(message) if not isinstance(message, str) else message)
        if isinstance(message, list):
            assert self.version == "2025-03-26", f"JSON-RPC batches do not exist in {self.version}"
            assert message, "an empty batch"
            for item in message:
                self.check_message(item)
            return "JSONRPCBatch"
        assert isinstance(message, dict), f"a JSON-RPC message is an object, got {message!r}"
        if "method" in message:
            method = message["method"]
            if "id" in message:
                self.validate("JSONRPCRequest", message)
                table, kind = self.request_methods, "request"
            else:
                self.validate("JSONRPCNotification", message)
                table, kind = self.notification_methods, "notification"
            definition = table.get(method)
            assert definition is not None, f"MCP {self.version} has no {kind} {method!r}"
            typed = self.definitions[definition]
            if "jsonrpc" in typed.get("properties", {}):
                self.validate(definition, message)
            else:
                self.validate(definition, {k: v for k, v in message.items() if k not in ("jsonrpc", "id")})
            return definition
        if "error" in message:
            definition = "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in self.definitions else "JSONRPCError"
            if "id" in message and message["id"] is None:
                code = message.get("error", {}).get("code")
                assert code in (-32700, -32600), f"id null on an error with code {code}"
                if "id" in self.definitions[definition].get("required", ()):
                    self.validate(definition, {**message, "id": 0})
                else:
                    self.validate(definition, {k: v for k, v in message.items() if k != "id"})
            else:
                self.validate(definition, message)
            return definition
        definition = "JSONRPCResultResponse" if "JSONRPCResultResponse" in self.definitions else "JSONRPCResponse"
        self.validate(definition, message)
        if answers is None:
            return definition
        result_definition = self.result_definitions.get(answers)
        assert result_definition is not None, f"MCP {self.version} has no request {answers!r}"
        result = message["result"]
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            # 2026-07-28: tools/call, prompts/get and resources/read may answer this instead.
            assert answers in ("tools/call", "prompts/get", "resources/read"), answers
            result_definition = "InputRequiredResult"
        elif isinstance(result, dict) and answers == "tools/call" and "task" in result \
                and "CreateTaskResult" in self.definitions:
            # 2025-11-25: a task-augmented tools/call answers with the task's handle.
            result_definition = "CreateTaskResult"
        self.validate(result_definition, result)
        return result_definition


@lru_cache(maxsize=None)
def load_spec_schema(version: str) -> SpecSchema:
    """The (cached) SpecSchema of one version."""
    return SpecSchema(version)


@pytest.fixture(scope="session")
def mcp_schema():
    """``mcp_schema(version)`` -> :class:`SpecSchema` (see the module docstring)."""
    return load_spec_schema
