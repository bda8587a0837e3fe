"""Tools: a Python function registered as an MCP tool, its definition and its call path.

`Tool` wraps a sync or async function. At registration it reads the function once
(:func:`~mcpfast.server.schema.function_schema`): the input schema from the parameters'
type hints, the output schema from the return annotation, the description from the
docstring, and which parameter (if any) receives the :class:`Context`. Per call nothing is
compiled and nothing inspected again. A return annotation of an array with untyped items
(``-> list``, ``-> list[Any]``, ``-> tuple``) gives no output schema unless
``structured_output=True`` asks for one: such tools usually return mixed content.

Calling (``Tool.call(arguments, ctx)``):

1. the arguments are validated and converted by the precompiled validator (the common
   call -- plain values of the parameters' types -- checked by compiled code); invalid
   arguments give a result with ``isError: true`` whose text says what is wrong (the
   specification: input validation errors are tool execution errors, so the model can
   correct itself);
2. the function runs -- a sync function inline, no task; an async function as the
   session's task (``call`` then returns the coroutine);
3. any exception the function raises becomes a result with ``isError: true`` and the
   exception's message as text (no traceback; the traceback is logged at DEBUG level on
   the "mcpfast.server" logger);
4. the return value becomes content (:func:`~mcpfast.server.content.to_content`: text,
   images, audio, embedded resources, resource links, JSON for other data), downgraded
   for older negotiated versions; with an output schema the value is also checked and
   serialized as ``structuredContent`` (2025-06-18 and later), the content then being its
   JSON text (values that are content objects, or lists holding some, stay content
   whatever the annotation says). Return a :class:`ToolResult` to set content, structured content,
   ``isError`` or ``_meta`` yourself.

Definitions (``Tool.definition(features)``) carry only what the negotiated version's
schema has: ``title`` and ``outputSchema`` from 2025-06-18, ``annotations`` from
2025-03-26 (for 2025-03-26 a title goes into ``annotations.title``), ``icons`` from
2025-11-25, ``_meta`` from 2025-06-18.

Tasks (:mod:`mcpfast.server.tasks.manager`): ``task_support`` ("forbidden", the default;
"optional"; "required") says whether a call may run as a task, ``task_start`` when the
task is made ("call": before the function starts; "handler": at ``ctx.run_as_task()``).
Under 2025-11-25 the definition carries ``execution.taskSupport``.

Tool names: the specification (2025-11-25) recommends 1-128 characters of
``A-Z a-z 0-9 _ - .``; other names are accepted with a warning, empty names refused.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import re
from typing import Any, Callable, Iterable, Mapping, Optional

from mcpfast._core.calls import KeywordCall, Template, exact_kwargs
from mcpfast.jsonrpc.router import is_async_handler
from mcpfast.protocol.features import VersionFeatures
from mcpfast.protocol.header_params import header_params_of
from mcpfast.server.content import ContentItem, downgrade_content, to_content, tool_error_result
from mcpfast.server.features.definitions import check_icons, check_meta, put_decorations, put_title
from mcpfast.server.request.invocation import PASS_JSONRPC_ERRORS, invoker
from mcpfast.server.request.requests_to_client import ClientCapabilityError
from mcpfast.server.schema import (
    ArgumentError,
    OutputError,
    ToolSignature,
    UnstructuredOutput,
    function_schema,
    serialize_output,
)
from mcpfast.server.schema.sentinels import REQUIRED
from mcpfast.server.tasks.support import TASK_STARTS, TASK_SUPPORT

__all__ = ["Tool", "ToolAnnotations", "ToolResult", "check_icons"]

_LOGGER = logging.getLogger("mcpfast.server")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclasses.dataclass(frozen=True)
class ToolAnnotations:
    """Hints about a tool's behaviour for clients (never trusted for security).

    ``title``: display name; ``read_only``: does not modify its environment;
    ``destructive``: may perform destructive updates (meaningful when not read-only);
    ``idempotent``: repeated calls with the same arguments have no additional effect;
    ``open_world``: interacts with an open world of external entities.
    None leaves a hint out (clients then assume the specification's defaults).
    """

    title: Optional[str] = None
    read_only: Optional[bool] = None
    destructive: Optional[bool] = None
    idempotent: Optional[bool] = None
    open_world: Optional[bool] = None

    _WIRE = (
        ("title", "title"),
        ("read_only", "readOnlyHint"),
        ("destructive", "destructiveHint"),
        ("idempotent", "idempotentHint"),
        ("open_world", "openWorldHint"),
    )

    def __post_init__(self) -> None:
        if self.title is not None and not isinstance(self.title, str):
            raise TypeError("ToolAnnotations.title must be a str")
        for attr, _ in self._WIRE[1:]:
            value = getattr(self, attr)
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"ToolAnnotations.{attr} must be a bool or None, got {value!r}")

    @classmethod
    def from_value(cls, value: Any) -> ToolAnnotations:
        """Accept ToolAnnotations, or a dict with wire keys (``readOnlyHint``) or the
        Python names (``read_only``)."""
        if isinstance(value, ToolAnnotations):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"annotations must be ToolAnnotations or a dict, not {type(value).__name__}")
        by_name = {wire: attr for attr, wire in cls._WIRE}
        attrs = {attr for attr, _ in cls._WIRE}
        kwargs: dict[str, Any] = {}
        for key, item in value.items():
            attr = by_name.get(key, key if key in attrs else None)
            if attr is None:
                raise ValueError(f"unknown tool annotation {key!r}")
            kwargs[attr] = item
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """The wire form (camelCase hints, unset hints left out)."""
        return {wire: getattr(self, attr) for attr, wire in self._WIRE if getattr(self, attr) is not None}


@dataclasses.dataclass(frozen=True)
class ToolResult(UnstructuredOutput):
    """A tool result spelled out: ``content`` (anything `to_content` maps, or a list of
    blocks), ``structured_content`` (a dict, sent from 2025-06-18 on), ``is_error`` and
    ``meta``. Returned from a tool, it is used as given (no output-schema check); a tool
    annotated ``-> ToolResult`` has no output schema (its fields are the result's, not
    structured content: a schema of them made every client refuse its results)."""

    content: Any = None
    structured_content: Optional[dict[str, Any]] = None
    is_error: bool = False
    meta: Optional[dict[str, Any]] = None


def _untyped_array(signature: ToolSignature) -> bool:
    """True when the output schema is a wrapped array whose items say nothing."""
    schema = signature.output_schema
    if schema is None or not signature.wraps_output:
        return False
    result = schema.get("properties", {}).get("result", {})
    return result.get("type") == "array" and not result.get("items")


def _holds_content(value: Any) -> bool:
    """True for content objects, or lists of them: such values are content, whatever the
    return annotation (``-> list`` on a tool returning text and images)."""
    if isinstance(value, ContentItem):
        return True
    return type(value) in (list, tuple) and any(isinstance(item, ContentItem) for item in value)


def _argument_taker(signature: ToolSignature, positional: bool = False) -> Callable[[Any], Any]:
    """The signature's validator behind a compiled check of the common call (arguments the
    validator would take as they are: ``plain_arguments``), which gives the same dict --
    or, with ``positional``, the same values as a tuple in the parameters' order."""
    if signature.plain_arguments is None:
        return signature.validator
    names, types, defaults = signature.plain_arguments
    return exact_kwargs(names, types, defaults, REQUIRED, signature.validator, positional)


def _takes_plain_arguments_positionally(fn: Callable[..., Any], signature: ToolSignature) -> bool:
    """Whether ``fn`` can be given its plain arguments positionally, in order: its own
    parameters (not those of a function it wraps) are exactly them, each positional or
    keyword, and none takes the request context. Why: a call with positional arguments
    spares the keyword dict and CPython's unpacking of it."""
    if signature.plain_arguments is None or signature.context_param is not None:
        return False
    try:
        parameters = tuple(inspect.signature(fn, follow_wrapped=False).parameters.values())
    except (TypeError, ValueError):
        return False
    return (tuple(parameter.name for parameter in parameters) == signature.plain_arguments[0]
            and all(parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                    for parameter in parameters))


_HOLE = object()
# What a tool without output schema answers for a str (Tool._finish, and the Invokers
# without a Python frame).
_TEXT_RESULT = Template({"content": [{"type": "text", "text": _HOLE}]}, _HOLE)


class Tool:
    """One registered tool (see the module docstring).

    fn: the function; name/title/description override what the function says;
    annotations: ToolAnnotations or a dict; icons: list of icon dicts; meta: ``_meta``;
    input_schema: a JSON Schema dict advertised instead of the derived one (arguments are
    still validated against the function's signature); structured_output: None derives an
    output schema when the return annotation allows, False never, True requires one;
    context_type: the class whose annotated parameter receives the request context;
    task_support, task_start: whether and when a call runs as a task (module docstring);
    tags: names of groups the tool belongs to, for enabling and disabling tools together
    (:meth:`mcpfast.server.server.Server.disable_tools`; not sent to clients).
    """

    __slots__ = (
        "name", "title", "description", "fn", "signature", "annotations", "icons", "meta",
        "is_async", "context_param", "input_schema", "output_schema", "header_params",
        "task_support", "task_start", "tags",
        "_validator", "_dumper", "_wraps", "_definitions", "_invoke", "_invoke_task", "_call",
        "_call_task", "_direct",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        annotations: Any = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        input_schema: Optional[Mapping[str, Any]] = None,
        structured_output: Optional[bool] = None,
        context_type: Optional[type] = None,
        task_support: str = "forbidden",
        task_start: str = "call",
        tags: Iterable[str] = (),
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a tool must be callable, got {fn!r}")
        tags = frozenset((tags,) if isinstance(tags, str) else tags)
        if not all(isinstance(tag, str) and tag for tag in tags):
            raise TypeError(f"tags must be non-empty strs, got {sorted(map(repr, tags))}")
        self.tags = tags
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"a tool name must be a non-empty str, got {name!r}")
        signature: ToolSignature = function_schema(
            fn, context_type=context_type, name=name, description=description,
            structured_output=structured_output,
        )
        if structured_output is None and _untyped_array(signature):
            # ``-> list`` / ``-> list[Any]``: such tools usually return mixed content
            # (text, images); an output schema would promise structured content they
            # cannot give. Ask for it explicitly with structured_output=True.
            signature = function_schema(
                fn, context_type=context_type, name=name, description=description,
                structured_output=False,
            )
        tool_name = signature.name
        if not isinstance(tool_name, str) or not tool_name:
            raise ValueError("a tool needs a non-empty name")
        if not _TOOL_NAME.fullmatch(tool_name):
            _LOGGER.warning(
                "tool name %r does not follow the MCP naming guidance "
                "(1-128 characters of A-Z a-z 0-9 _ - .)", tool_name,
            )
        if title is not None and not isinstance(title, str):
            raise TypeError("title must be a str")
        self.name = tool_name
        self.title = title
        self.description = signature.description
        self.fn = fn
        self.signature = signature
        self.annotations = None if annotations is None else ToolAnnotations.from_value(annotations)
        self.icons = check_icons(icons)
        self.meta = check_meta(meta)
        self.is_async = is_async_handler(fn)
        # _finish's answer to a str (compiled) where it makes one text block of it.
        text = _TEXT_RESULT if signature.output_dumper is None else None
        # Every failure of a tool, JSON-RPC errors included, is a result with isError.
        self._invoke = invoker(fn, self.is_async, self._finish, self._failed, (), text)
        if task_support not in TASK_SUPPORT:
            raise ValueError(f"task_support must be one of {', '.join(TASK_SUPPORT)}, got {task_support!r}")
        if task_start not in TASK_STARTS:
            raise ValueError(f"task_start must be one of {', '.join(TASK_STARTS)}, got {task_start!r}")
        # None: never a task (the hot path tests this once per call).
        self.task_support: Optional[str] = None if task_support == "forbidden" else task_support
        self.task_start = task_start
        # In a task a JSON-RPC error raised by the function fails the task: it passes through.
        self._invoke_task = invoker(fn, self.is_async, self._finish, self._failed, PASS_JSONRPC_ERRORS,
                                    text)
        self.context_param = signature.context_param
        if input_schema is not None:
            if not isinstance(input_schema, Mapping) or input_schema.get("type") != "object":
                raise ValueError("input_schema must be a JSON Schema dict with type 'object'")
            self.input_schema = dict(input_schema)
        else:
            self.input_schema = signature.input_schema
        # Arguments mirrored into Mcp-Param-* headers (2026-07-28 HTTP), checked per call.
        self.header_params = header_params_of(self.input_schema)
        self.output_schema = signature.output_schema
        self._validator = _argument_taker(signature)
        self._dumper = signature.output_dumper
        self._wraps = signature.wraps_output
        self._definitions: dict[str, dict[str, Any]] = {}
        # call(arguments, ctx) compiled: the arguments taken, the context added, the
        # function run (mcpfast._core.calls.KeywordCall), as ``_call(arguments, ctx,
        # ctx.state.features)``.
        positional = _takes_plain_arguments_positionally(fn, signature)
        self._call = KeywordCall(_argument_taker(signature, positional) if positional
                                 else self._validator,
                                 ArgumentError, self._refused, self.context_param, self._invoke)
        self._call_task = KeywordCall(self._validator, ArgumentError, self._refused,
                                      self.context_param, self._invoke_task)
        # What a tools/call of this tool may run instead of call() (the same, without its
        # frame) when it asks for no task: None for a tool whose calls need more (header
        # checks, tasks) or whose class has its own call.
        self._direct: Optional[Callable[[Any, Any, Any], Any]] = (
            self._call.call if (type(self).call is Tool.call and not self.header_params
                                and self.task_support is None) else None)

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<Tool {self.name!r} {kind}>"

    # -- definition --------------------------------------------------------------------

    def definition(self, features: VersionFeatures) -> dict[str, Any]:
        """The Tool object for tools/list in one protocol version (cached)."""
        found = self._definitions.get(features.version)
        if found is not None:
            return found
        tool: dict[str, Any] = {"name": self.name}
        put_title(tool, self.title, features)
        if self.description:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if self.output_schema is not None and features.structured_output:
            tool["outputSchema"] = self.output_schema
        if features.tool_annotations:
            hints = self.annotations.to_dict() if self.annotations is not None else {}
            if self.title is not None and not features.titles and "title" not in hints:
                hints["title"] = self.title
            if hints:
                tool["annotations"] = hints
        put_decorations(tool, self.icons, self.meta, features)
        if self.task_support is not None and features.experimental_tasks:
            tool["execution"] = {"taskSupport": self.task_support}
        self._definitions[features.version] = tool
        return tool

    # -- calling -----------------------------------------------------------------------

    def call(self, arguments: Any, ctx: Any, as_task: bool = False) -> Any:
        """Run the tool for a tools/call: the CallToolResult dict, or (async tools, and
        sync tools returning an awaitable) a coroutine producing it. ``as_task``: a
        JSONRPCError raised by the function propagates (inside a task it fails the task;
        :meth:`failed_result` makes it a tool error otherwise)."""
        return (self._call_task if as_task else self._call)(arguments, ctx, ctx.state.features)

    def _refused(self, exc: ArgumentError) -> dict[str, Any]:
        # The result of a call whose arguments the validator refused (KeywordCall's refuse).
        return tool_error_result(f"Invalid arguments for tool {self.name!r}: {exc}")

    def failed_result(self, exc: Exception, ctx: Any) -> dict[str, Any]:
        """The CallToolResult of a function that raised ``exc`` (as :meth:`call` makes)."""
        return self._failed(exc, ctx.state.features)

    def _finish(self, value: Any, features: VersionFeatures) -> dict[str, Any]:
        if type(value) is str and self._dumper is None:
            # The common case, kept short: one text block, nothing to downgrade.
            return _TEXT_RESULT(value)
        return self.result(value, features)

    def _failed(self, exc: Exception, features: Any = None) -> dict[str, Any]:
        if type(exc) is ClientCapabilityError and features is not None and features.stateless:
            # 2026-07-28: a request lacking a capability the tool needs is refused (-32021),
            # so that the client can retry declaring it.
            raise exc
        _LOGGER.debug("tool %r raised", self.name, exc_info=exc)
        return tool_error_result(exc)

    def result(self, value: Any, features: VersionFeatures) -> dict[str, Any]:
        """The CallToolResult for a return value in one protocol version."""
        try:
            if type(value) is ToolResult:
                return self._explicit_result(value, features)
            # A tool with an output schema (a dumper) always has structured output.
            structured = (serialize_output(self.signature, value)
                          if self._dumper is not None and not _holds_content(value) else None)
            if structured is not None:
                shown = structured["result"] if self._wraps else structured
                result: dict[str, Any] = {"content": [{"type": "text", "text": _compact(shown)}]}
                if features.structured_output:
                    result["structuredContent"] = structured
                return result
            content = to_content(value)
        except (OutputError, TypeError, ValueError) as exc:
            _LOGGER.error("tool %r returned a value that cannot be sent: %s", self.name, exc)
            return tool_error_result(f"Tool {self.name!r} returned an invalid result: {exc}")
        if not features.content_current:
            content = downgrade_content(content, features.version)
        return {"content": content}

    def _explicit_result(self, value: ToolResult, features: VersionFeatures) -> dict[str, Any]:
        content = value.content
        if isinstance(content, list) and all(isinstance(b, dict) and "type" in b for b in content):
            blocks = content
        else:
            blocks = to_content(content)
        if not features.content_current:
            blocks = downgrade_content(blocks, features.version)
        result: dict[str, Any] = {"content": blocks}
        if value.structured_content is not None and features.structured_output:
            if not isinstance(value.structured_content, dict):
                raise TypeError("ToolResult.structured_content must be a dict")
            result["structuredContent"] = value.structured_content
        if value.is_error:
            result["isError"] = True
        if value.meta is not None:
            result["_meta"] = dict(value.meta)
        return result
