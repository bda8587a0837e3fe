"""Resources and resource templates: registration, definitions, reading.

A `Resource` has a fixed URI and either a static value or a function (sync or async)
returning its contents. A `ResourceTemplate` has an RFC 6570 URI template
(``"file:///{path}"``); ``resources/read`` of a URI that matches it calls its function with
the template's variables as keyword arguments (converted to the parameters' annotated
types, see :mod:`mcpfast.server.string_args`). Either may take the request
:class:`Context` through a parameter annotated with it.

What a resource function returns becomes the ``contents`` of the read result:

- ``str`` -> one text entry; ``bytes`` -> one base64 ``blob`` entry;
- a resource-contents dict (``{"uri", "text" | "blob", "mimeType"?}``) or a list of them
  -> used as they are (several entries: e.g. a directory listing);
- an :class:`~mcpfast.server.content.EmbeddedResource` -> its contents;
- any other data -> its compact JSON as text, ``mimeType`` application/json unless the
  resource declares another.

The declared ``mime_type`` goes into each generated entry. ``_meta`` in contents is kept
only from 2025-06-18 on. A read of an unknown URI is answered with -32002 "Resource not
found" (data ``{"uri": ...}``), as the specification says; a function may raise
:class:`ResourceNotFound` itself (e.g. the template matched but no such item exists). Any
other exception is answered with -32603 and a message naming the URI and the error.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Callable, Mapping, Optional

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, JSONRPCError
from mcpfast.jsonrpc.router import is_async_handler
from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.content import Annotations, EmbeddedResource, resource_contents
from mcpfast.server.features.definitions import check_icons, check_meta, put_decorations, put_title
from mcpfast.server.features.resource_errors import ResourceNotFound
from mcpfast.server.request.invocation import invoker
from mcpfast.server.schema import ArgumentError, function_schema
from mcpfast.server.string_args import StringArguments
from mcpfast.server.uri_template import UriTemplate

__all__ = ["Resource", "ResourceNotFound", "ResourceTemplate"]

_LOGGER = logging.getLogger("mcpfast.server")


def _is_contents(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("uri"), str)
        and (isinstance(value.get("text"), str) or isinstance(value.get("blob"), str))
    )


def to_contents(uri: str, value: Any, mime_type: Optional[str], features: VersionFeatures) -> list[dict[str, Any]]:
    """The ``contents`` list for what a resource function returned (module docstring)."""
    if _is_contents(value):
        contents = [value]
    elif isinstance(value, (list, tuple)) and value and all(_is_contents(v) for v in value):
        contents = list(value)
    elif isinstance(value, EmbeddedResource):
        contents = [value.to_dict()["resource"]]
    else:
        contents = [resource_contents(uri, value, mime_type)]
    if not features.meta:
        contents = [
            {k: v for k, v in entry.items() if k != "_meta"} if "_meta" in entry else entry
            for entry in contents
        ]
    return contents


def _check_str(value: Any, what: str) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value


class _Readable:
    """What Resource and ResourceTemplate share: metadata and calling the function."""

    __slots__ = (
        "name", "title", "description", "mime_type", "annotations", "icons", "meta",
        "fn", "is_async", "context_param", "_definitions", "_invoke",
    )

    def _init_common(self, fn: Any, name: Optional[str], title: Optional[str],
                     description: Optional[str], mime_type: Optional[str],
                     annotations: Any, icons: Any, meta: Any) -> None:
        self.name = name
        self.title = _check_str(title, "title")
        self.description = _check_str(description, "description")
        self.mime_type = _check_str(mime_type, "mime_type")
        self.annotations = None if annotations is None else Annotations.from_value(annotations)
        self.icons = check_icons(icons)
        self.meta = check_meta(meta)
        self.fn = fn
        self.is_async = fn is not None and is_async_handler(fn)
        self._invoke = invoker(fn, self.is_async, self._finish, self._fail) if fn is not None else None
        self.context_param: Optional[str] = None
        self._definitions: dict[str, dict[str, Any]] = {}

    def _common_definition(self, out: dict[str, Any], features: VersionFeatures) -> dict[str, Any]:
        put_title(out, self.title, features)
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.annotations is not None:
            wire = self.annotations.to_dict()
            if not features.meta:
                wire.pop("lastModified", None)
            if wire:
                out["annotations"] = wire
        put_decorations(out, self.icons, self.meta, features)
        return out

    def _run(self, uri: str, kwargs: dict[str, Any], ctx: Any) -> Any:
        """The read result, or a coroutine producing it."""
        features = ctx.state.features
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        return self._invoke((), kwargs, ctx, (uri, features))  # type: ignore[misc]

    def _finish(self, value: Any, where: tuple[str, VersionFeatures]) -> dict[str, Any]:
        return self._result(where[0], value, where[1])

    def _fail(self, exc: Exception, where: tuple[str, VersionFeatures]) -> Any:
        raise self._failure(where[0], exc) from exc

    def _result(self, uri: str, value: Any, features: VersionFeatures) -> dict[str, Any]:
        try:
            return {"contents": to_contents(uri, value, self.mime_type, features)}
        except (TypeError, ValueError) as exc:
            raise self._failure(uri, exc) from exc

    def _failure(self, uri: str, exc: Exception) -> JSONRPCError:
        _LOGGER.error("reading resource %r failed", uri, exc_info=exc)
        message = str(exc) or type(exc).__name__
        return JSONRPCError(INTERNAL_ERROR, f"Error reading resource {uri}: {message}", {"uri": uri})


class Resource(_Readable):
    """A resource with a fixed URI (see the module docstring).

    ``source``: a function (sync or async; no parameters but an optional Context) or a
    static value (str, bytes or JSON-able data). ``name`` defaults to the function's name,
    else the URI. ``size``: the size in bytes, when known.
    """

    __slots__ = ("uri", "size", "_value")

    def __init__(
        self,
        uri: str,
        source: Any,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        size: Optional[int] = None,
        annotations: Any = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        context_type: Optional[type] = None,
    ) -> None:
        if not isinstance(uri, str) or not uri:
            raise ValueError(f"a resource needs a non-empty URI, got {uri!r}")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise ValueError(f"size must be an int >= 0, got {size!r}")
        fn = source if callable(source) else None
        if name is None:
            name = getattr(fn, "__name__", None) if fn is not None else None
            if not name or name == "<lambda>":
                name = uri
        if description is None and fn is not None:
            description = inspect.getdoc(fn) or None
        self._init_common(fn, name, title, description, mime_type, annotations, icons, meta)
        self.uri = uri
        self.size = size
        self._value = None if fn is not None else source
        if fn is not None:
            signature = function_schema(fn, context_type=context_type, structured_output=False)
            if signature.input_schema.get("required"):
                raise TypeError(
                    f"resource {uri!r}: a fixed-URI resource function takes no arguments "
                    f"(only a Context); use a URI template for parameters"
                )
            self.context_param = signature.context_param

    def __repr__(self) -> str:
        return f"<Resource {self.uri!r}>"

    def definition(self, features: VersionFeatures) -> dict[str, Any]:
        """The Resource object for resources/list in one protocol version (cached)."""
        found = self._definitions.get(features.version)
        if found is None:
            found = self._common_definition({"uri": self.uri, "name": self.name}, features)
            if self.size is not None:
                found["size"] = self.size
            self._definitions[features.version] = found
        return found

    def read(self, ctx: Any) -> Any:
        """The ReadResourceResult, or a coroutine producing it."""
        if self.fn is None:
            return self._result(self.uri, self._value, ctx.state.features)
        return self._run(self.uri, {}, ctx)


class ResourceTemplate(_Readable):
    """A family of resources named by an RFC 6570 URI template (see the module docstring).

    Every template variable must be a parameter of ``fn``, and every parameter without a
    default a template variable (TypeError otherwise). ``name`` defaults to the function's
    name.
    """

    __slots__ = ("template", "_arguments")

    def __init__(
        self,
        uri_template: str,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        annotations: Any = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        context_type: Optional[type] = None,
    ) -> None:
        template = UriTemplate(uri_template)
        if template.is_static:
            raise ValueError(f"{uri_template!r} has no variables: register it as a resource")
        if not callable(fn):
            raise TypeError(f"a resource template needs a function, got {fn!r}")
        signature = function_schema(fn, context_type=context_type, structured_output=False)
        params = set(signature.parameters)
        variables = set(template.variables)
        missing = sorted(variables - params)
        if missing:
            raise TypeError(
                f"resource template {uri_template!r}: variables {missing} are not parameters "
                f"of {getattr(fn, '__name__', fn)!r}"
            )
        required = set(signature.input_schema.get("required", ()))
        unbound = sorted(required - variables)
        if unbound:
            raise TypeError(
                f"resource template {uri_template!r}: parameters {unbound} have no default "
                f"and are not template variables"
            )
        if name is None:
            name = getattr(fn, "__name__", None) or uri_template
            if name == "<lambda>":
                name = uri_template
        if description is None:
            description = inspect.getdoc(fn) or None
        self._init_common(fn, name, title, description, mime_type, annotations, icons, meta)
        self.template = template
        self.context_param = signature.context_param
        self._arguments = StringArguments(signature)

    def __repr__(self) -> str:
        return f"<ResourceTemplate {self.template.template!r}>"

    @property
    def uri_template(self) -> str:
        return self.template.template

    def definition(self, features: VersionFeatures) -> dict[str, Any]:
        """The ResourceTemplate object for resources/templates/list (cached)."""
        found = self._definitions.get(features.version)
        if found is None:
            found = self._common_definition(
                {"uriTemplate": self.template.template, "name": self.name}, features
            )
            self._definitions[features.version] = found
        return found

    def match(self, uri: str) -> Optional[dict[str, Any]]:
        """The function's keyword arguments for ``uri``, None when it does not fit."""
        values = self.template.match(uri)
        if values is None:
            return None
        try:
            return self._arguments.convert(values)
        except ArgumentError as exc:
            _LOGGER.debug("URI %r matches %r but not its parameters: %s", uri, self.template, exc)
            return None

    def read(self, uri: str, kwargs: dict[str, Any], ctx: Any) -> Any:
        """The ReadResourceResult for a matched URI, or a coroutine producing it."""
        return self._run(uri, kwargs, ctx)
