"""Requests the server sends to the client: sampling, elicitation, roots -- params and results.

These functions build the params of ``sampling/createMessage``, ``elicitation/create`` and
``roots/list`` from Python values and turn the client's results into small result objects.
They check first that the client declared the capability the request needs (and that the
negotiated protocol version has the request at all) and raise `ClientCapabilityError`
otherwise, before anything is sent: a server must not send requests its client did not
opt into.

`ClientCapabilityError` carries the code MISSING_REQUIRED_CLIENT_CAPABILITY (-32021, the
code 2026-07-28 defines for exactly this; the older versions define none, and -32021 lies
in the implementation-defined server-error range there). Raised inside a tool it becomes a
tool result with ``isError: true`` like any other tool failure.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping, Optional, Sequence

from mcpfast.jsonrpc.errors import MISSING_REQUIRED_CLIENT_CAPABILITY, JSONRPCError
from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.content import ContentItem
from mcpfast.server.schema import ArgumentError, function_schema

__all__ = [
    "ClientCapabilityError",
    "ElicitationResult",
    "Root",
    "SamplingResult",
    "elicitation_params",
    "elicitation_url_params",
    "parse_elicitation_result",
    "parse_roots",
    "parse_sampling_result",
    "require_capability",
    "sampling_params",
]

_ROLES = frozenset({"user", "assistant"})
_INCLUDE_CONTEXT = frozenset({"none", "thisServer", "allServers"})
_ELICIT_ACTIONS = frozenset({"accept", "decline", "cancel"})
_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean", "array"})


class ClientCapabilityError(JSONRPCError):
    """The client did not declare the capability a server-to-client request needs.

    ``capability`` names it ("sampling", "elicitation", "elicitation.url", "roots",
    "sampling.tools").
    """

    default_code = MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, capability: str, message: str) -> None:
        top, _, sub = capability.partition(".")
        # data.requiredCapabilities: the ClientCapabilities object that would do (2026-07-28).
        required: dict[str, dict[str, Any]] = {top: {sub: {}} if sub else {}}
        super().__init__(MISSING_REQUIRED_CLIENT_CAPABILITY, message,
                         {"capability": capability, "requiredCapabilities": required})
        self.capability = capability


def require_capability(
    capabilities: Mapping[str, Any], features: VersionFeatures, capability: str
) -> None:
    """Raise ClientCapabilityError unless the client can serve ``capability``."""
    if capability in ("elicitation", "elicitation.url") and not features.elicitation:
        raise ClientCapabilityError(
            capability,
            f"elicitation needs MCP protocol 2025-06-18 or later; this connection "
            f"negotiated {features.version}",
        )
    if capability == "elicitation.url" and not features.url_elicitation:
        raise ClientCapabilityError(
            capability,
            f"URL elicitation needs MCP protocol 2025-11-25 or later; this connection "
            f"negotiated {features.version}",
        )
    if capability == "sampling.tools" and not features.sampling_tools:
        raise ClientCapabilityError(
            capability,
            f"tools in sampling need MCP protocol 2025-11-25 or later; this connection "
            f"negotiated {features.version}",
        )
    top, _, sub = capability.partition(".")
    declared = capabilities.get(top)
    if not isinstance(declared, dict):
        raise ClientCapabilityError(
            capability,
            f"the client does not support {top}: it did not declare the {top!r} capability",
        )
    if sub and not isinstance(declared.get(sub), dict):
        raise ClientCapabilityError(
            capability,
            f"the client does not support {capability}: its {top!r} capability has no {sub!r}",
        )


# -- sampling --------------------------------------------------------------------------


def _sampling_content(value: Any, features: VersionFeatures) -> Any:
    if isinstance(value, str):
        return {"type": "text", "text": value}
    if isinstance(value, ContentItem):
        value = value.to_dict()
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "audio" and not features.audio:
            raise ValueError(
                f"audio content needs MCP protocol 2025-03-26 or later; this connection "
                f"negotiated {features.version}"
            )
        if kind not in ("text", "image", "audio", "tool_use", "tool_result"):
            raise ValueError(f"sampling messages cannot carry {kind!r} content")
        return value
    if isinstance(value, (list, tuple)) and features.sampling_tools:
        return [_sampling_content(item, features) for item in value]
    raise TypeError(f"cannot use a {type(value).__name__} as sampling message content")


def _sampling_message(item: Any, features: VersionFeatures) -> dict[str, Any]:
    if isinstance(item, dict) and "role" in item:
        role = item["role"]
        if role not in _ROLES:
            raise ValueError(f"a sampling message role is 'user' or 'assistant', got {role!r}")
        if "content" not in item:
            raise ValueError("a sampling message needs 'content'")
        message = {"role": role, "content": _sampling_content(item["content"], features)}
        return message
    to_message = getattr(item, "to_message", None)
    if callable(to_message):
        return _sampling_message(to_message(), features)
    return {"role": "user", "content": _sampling_content(item, features)}


def _model_preferences(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"hints": [{"name": value}]}
    if isinstance(value, dict):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return {"hints": [{"name": v} for v in value]}
    raise TypeError("model_preferences must be a dict, a model name or a list of model names")


def sampling_params(
    features: VersionFeatures,
    messages: Any,
    *,
    max_tokens: int,
    system_prompt: Optional[str] = None,
    temperature: Optional[float] = None,
    stop_sequences: Optional[Sequence[str]] = None,
    model_preferences: Any = None,
    include_context: Optional[str] = None,
    metadata: Optional[Mapping[str, Any]] = None,
    tools: Optional[Sequence[Mapping[str, Any]]] = None,
    tool_choice: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    """The params of sampling/createMessage.

    ``messages``: a str (one user message), or a list of str / content objects or blocks
    (user messages) / ``{"role", "content"}`` dicts / PromptMessage objects.
    """
    if isinstance(messages, (str, dict, ContentItem)) or hasattr(messages, "to_message"):
        messages = [messages]
    wire = [_sampling_message(item, features) for item in messages]
    if not wire:
        raise ValueError("sampling needs at least one message")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    params: dict[str, Any] = {"messages": wire, "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = str(system_prompt)
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature):
            raise ValueError(f"temperature must be a finite number, got {temperature!r}")
        params["temperature"] = temperature
    if stop_sequences is not None:
        params["stopSequences"] = [str(s) for s in stop_sequences]
    if model_preferences is not None:
        params["modelPreferences"] = _model_preferences(model_preferences)
    if include_context is not None:
        if include_context not in _INCLUDE_CONTEXT:
            raise ValueError(f"include_context must be one of {sorted(_INCLUDE_CONTEXT)}, got {include_context!r}")
        params["includeContext"] = include_context
    if metadata is not None:
        params["metadata"] = dict(metadata)
    if tools is not None:
        params["tools"] = [dict(tool) for tool in tools]
    if tool_choice is not None:
        params["toolChoice"] = dict(tool_choice)
    return params


@dataclasses.dataclass(frozen=True)
class SamplingResult:
    """What the client's LLM answered: ``role``, ``content`` (a block, or a list of blocks
    from 2025-11-25 on), ``model``, ``stop_reason`` and ``meta``; ``text`` joins the text."""

    role: str
    content: Any
    model: str
    stop_reason: Optional[str] = None
    meta: Optional[dict[str, Any]] = None

    @property
    def text(self) -> Optional[str]:
        """The text of the content (text blocks joined), None when it holds no text."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        return "".join(texts) if texts else None


def _bad_result(method: str, reason: str) -> ValueError:
    return ValueError(f"the client answered {method} with an invalid result: {reason}")


def parse_sampling_result(result: Any) -> SamplingResult:
    """A SamplingResult from a CreateMessageResult (ValueError when malformed)."""
    method = "sampling/createMessage"
    if not isinstance(result, dict):
        raise _bad_result(method, "not an object")
    role = result.get("role")
    model = result.get("model")
    content = result.get("content")
    if role not in _ROLES:
        raise _bad_result(method, f"role {role!r}")
    if not isinstance(model, str):
        raise _bad_result(method, "no model name")
    if not isinstance(content, (dict, list)):
        raise _bad_result(method, "no content")
    stop = result.get("stopReason")
    meta = result.get("_meta")
    return SamplingResult(
        role, content, model, stop if isinstance(stop, str) else None,
        meta if isinstance(meta, dict) else None,
    )


# -- elicitation -----------------------------------------------------------------------


def _flat_schema(schema: dict[str, Any], features: VersionFeatures) -> dict[str, Any]:
    """Check that a requested schema is the flat object MCP allows; return its wire form.

    Before 2025-11-25 the primitive schemas had no ``default`` (except booleans) and no
    multi-select (array) or titled (``oneOf``) enums: defaults are dropped there, the
    others refused.
    """
    if schema.get("type") != "object":
        raise ValueError("an elicitation schema must have type 'object'")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise ValueError("an elicitation schema needs 'properties'")
    current = features.url_elicitation
    wire_properties: dict[str, Any] = {}
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            raise ValueError(f"elicitation property {name!r} must be a schema object")
        kind = prop.get("type")
        if kind not in _PRIMITIVE_TYPES:
            raise ValueError(
                f"elicitation property {name!r} must be a string, number, integer, boolean "
                f"or enum array (flat schemas only), got type {kind!r}"
            )
        if not current:
            if kind == "array" or "oneOf" in prop:
                raise ValueError(
                    f"elicitation property {name!r}: multi-select and titled enums need MCP "
                    f"protocol 2025-11-25 or later; this connection negotiated {features.version}"
                )
            if kind != "boolean" and "default" in prop:
                prop = {k: v for k, v in prop.items() if k != "default"}
        wire_properties[name] = prop
    wire: dict[str, Any] = {"type": "object", "properties": wire_properties}
    required = schema.get("required")
    if required:
        unknown = [name for name in required if name not in properties]
        if unknown:
            raise ValueError(f"elicitation schema requires unknown properties {unknown}")
        wire["required"] = list(required)
    return wire


def elicitation_params(
    features: VersionFeatures, message: str, schema: Any
) -> tuple[dict[str, Any], Optional[Callable[[dict[str, Any]], Any]]]:
    """(params of a form-mode elicitation/create, converter of the accepted content).

    ``schema``: a JSON Schema dict (a flat object of primitive properties), or a dataclass
    (its fields become the properties; the accepted content is converted to an instance).
    """
    if not isinstance(message, str):
        raise TypeError(f"the elicitation message must be a str, not {type(message).__name__}")
    convert: Optional[Callable[[dict[str, Any]], Any]] = None
    if isinstance(schema, type):
        if not dataclasses.is_dataclass(schema):
            raise TypeError("an elicitation schema class must be a dataclass")
        signature = function_schema(schema)
        if "$defs" in signature.input_schema:
            raise ValueError("an elicitation dataclass may only have primitive fields")
        wire = _flat_schema(signature.input_schema, features)
        cls = schema

        def to_instance(content: dict[str, Any]) -> Any:
            try:
                return cls(**signature.validator(content))
            except ArgumentError as exc:
                raise ValueError(f"the client's elicitation answer does not fit the schema: {exc}") from None

        convert = to_instance
    elif isinstance(schema, dict):
        wire = _flat_schema(schema, features)
    else:
        raise TypeError("an elicitation schema is a JSON Schema dict or a dataclass")
    params: dict[str, Any] = {"message": message, "requestedSchema": wire}
    if features.url_elicitation:
        params = {"mode": "form", **params}
    return params, convert


def elicitation_url_params(message: str, url: str, elicitation_id: str) -> dict[str, Any]:
    """The params of a URL-mode elicitation/create (2025-11-25)."""
    for name, value in (("message", message), ("url", url), ("elicitation_id", elicitation_id)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty str")
    return {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}


@dataclasses.dataclass(frozen=True)
class ElicitationResult:
    """The user's answer: ``action`` ("accept", "decline" or "cancel"), ``content`` (the
    submitted values, accept only) and ``data`` (content converted to the schema's
    dataclass when one was given, else the content)."""

    action: str
    content: Optional[dict[str, Any]] = None
    data: Any = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def parse_elicitation_result(
    result: Any, convert: Optional[Callable[[dict[str, Any]], Any]] = None
) -> ElicitationResult:
    """An ElicitationResult from an ElicitResult (ValueError when malformed)."""
    method = "elicitation/create"
    if not isinstance(result, dict):
        raise _bad_result(method, "not an object")
    action = result.get("action")
    if action not in _ELICIT_ACTIONS:
        raise _bad_result(method, f"action {action!r}")
    content = result.get("content")
    if content is not None and not isinstance(content, dict):
        raise _bad_result(method, "content is not an object")
    if action != "accept":
        return ElicitationResult(action, content, content)
    data: Any = content
    if convert is not None:
        data = convert(content or {})
    return ElicitationResult(action, content, data)


# -- roots -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Root:
    """A root the client exposes: ``uri`` (file://...), optional ``name`` and ``meta``."""

    uri: str
    name: Optional[str] = None
    meta: Optional[dict[str, Any]] = None


def parse_roots(result: Any) -> list[Root]:
    """The roots of a ListRootsResult (ValueError when malformed)."""
    method = "roots/list"
    if not isinstance(result, dict) or not isinstance(result.get("roots"), list):
        raise _bad_result(method, "no roots list")
    roots = []
    for item in result["roots"]:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise _bad_result(method, f"root without uri: {item!r}")
        name = item.get("name")
        meta = item.get("_meta")
        roots.append(Root(item["uri"], name if isinstance(name, str) else None,
                          meta if isinstance(meta, dict) else None))
    return roots
