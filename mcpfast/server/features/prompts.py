"""Prompts: a function registered as an MCP prompt template, its arguments and messages.

A prompt's arguments are its function's parameters (all but a Context parameter): a
parameter without a default is a required argument, its description comes from an
``Annotated[..., "description"]`` / ``Field(description=...)`` or the docstring's Args
section. Prompt arguments travel as strings; parameters annotated with other types get
converted values (:mod:`mcpfast.server.string_args`).

``prompts/get`` errors (the specification's -32602 Invalid params): unknown prompt,
missing required arguments, arguments the prompt does not have, non-string values, values
that do not convert. An exception raised by the function is answered with -32603 and a
message naming the prompt (a JSONRPCError raised by it passes unchanged).

What the function returns becomes the result's ``messages``:

- a ``str`` -> one user message with that text;
- a :class:`PromptMessage` (``PromptMessage("text", role="assistant")``, content may be a str, a
  content object such as Image, or a content block dict);
- a content object or block -> one user message with it;
- a ``{"role", "content"}`` dict -> that message (a str content becomes a text block);
- a list or tuple of any of these -> one message each.

Content is downgraded for older negotiated versions like tool content.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, Mapping, Optional

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, InvalidParams, JSONRPCError
from mcpfast.jsonrpc.router import is_async_handler
from mcpfast.protocol.features import VersionFeatures
from mcpfast.server.content import ContentItem, downgrade_content, is_content_block
from mcpfast.server.features.definitions import check_icons, check_meta, put_decorations, put_title
from mcpfast.server.request.invocation import invoker
from mcpfast.server.schema import ArgumentError, function_schema
from mcpfast.server.string_args import StringArguments

__all__ = ["PromptMessage", "Prompt", "PromptArgument"]

_LOGGER = logging.getLogger("mcpfast.server")
_ROLES = frozenset({"user", "assistant"})


def _block(content: Any) -> dict[str, Any]:
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, ContentItem):
        return content.to_dict()
    if is_content_block(content):
        return content
    raise TypeError(
        f"prompt message content must be a str, a content object or a content block, "
        f"not {type(content).__name__}"
    )


@dataclasses.dataclass(frozen=True)
class PromptMessage:
    """One prompt message: ``content`` (str, content object or block dict) and ``role``
    ("user" or "assistant"). Also accepted as a sampling message by ``ctx.sample``."""

    content: Any
    role: str = "user"

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"role must be 'user' or 'assistant', got {self.role!r}")
        _block(self.content)  # fail at construction, inside the prompt function

    def to_message(self) -> dict[str, Any]:
        """The wire PromptMessage / SamplingMessage."""
        return {"role": self.role, "content": _block(self.content)}


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, PromptMessage):
        return item.to_message()
    if isinstance(item, dict) and "role" in item and "content" in item and "type" not in item:
        role = item["role"]
        if role not in _ROLES:
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        return {"role": role, "content": _block(item["content"])}
    return {"role": "user", "content": _block(item)}


def to_messages(value: Any, features: VersionFeatures) -> list[dict[str, Any]]:
    """The PromptMessage list for what a prompt function returned (module docstring)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    messages = [_message(item) for item in items]
    if not features.content_current:
        for message in messages:
            message["content"] = downgrade_content([message["content"]], features.version)[0]
    return messages


@dataclasses.dataclass(frozen=True)
class PromptArgument:
    """One argument of a prompt, as prompts/list shows it."""

    name: str
    description: Optional[str] = None
    required: bool = False
    title: Optional[str] = None

    def to_dict(self, features: VersionFeatures) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        put_title(out, self.title, features)
        if self.description:
            out["description"] = self.description
        out["required"] = self.required
        return out


class Prompt:
    """One registered prompt (see the module docstring).

    fn: the function (sync or async); name/title/description override what it says;
    argument_titles: display titles per argument name (2025-06-18 and later); icons,
    meta: as for tools; context_type: the Context class.
    """

    __slots__ = (
        "name", "title", "description", "fn", "is_async", "context_param", "arguments",
        "icons", "meta", "_arguments", "_names", "_required", "_definitions", "_invoke",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        argument_titles: Optional[Mapping[str, str]] = None,
        icons: Any = None,
        meta: Optional[Mapping[str, Any]] = None,
        context_type: Optional[type] = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a prompt must be callable, got {fn!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"a prompt name must be a non-empty str, got {name!r}")
        signature = function_schema(
            fn, context_type=context_type, name=name, description=description,
            structured_output=False,
        )
        if not signature.name:
            raise ValueError("a prompt needs a non-empty name")
        if title is not None and not isinstance(title, str):
            raise TypeError("title must be a str")
        titles = dict(argument_titles or {})
        unknown = sorted(set(titles) - set(signature.parameters))
        if unknown:
            raise ValueError(f"argument_titles names unknown arguments {unknown}")
        properties = signature.input_schema.get("properties", {})
        required = set(signature.input_schema.get("required", ()))
        self.arguments = tuple(
            PromptArgument(
                name=param,
                description=properties.get(param, {}).get("description"),
                required=param in required,
                title=titles.get(param),
            )
            for param in signature.parameters
        )
        self.name = signature.name
        self.title = title
        self.description = signature.description or None
        self.fn = fn
        self.is_async = is_async_handler(fn)
        self._invoke = invoker(fn, self.is_async, self._result, self._fail)
        self.context_param = signature.context_param
        self.icons = check_icons(icons)
        self.meta = check_meta(meta)
        self._arguments = StringArguments(signature)
        self._names = frozenset(signature.parameters)
        self._required = tuple(p for p in signature.parameters if p in required)
        self._definitions: dict[str, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"<Prompt {self.name!r}>"

    def definition(self, features: VersionFeatures) -> dict[str, Any]:
        """The Prompt object for prompts/list in one protocol version (cached)."""
        found = self._definitions.get(features.version)
        if found is not None:
            return found
        out: dict[str, Any] = {"name": self.name}
        put_title(out, self.title, features)
        if self.description:
            out["description"] = self.description
        if self.arguments:
            out["arguments"] = [argument.to_dict(features) for argument in self.arguments]
        put_decorations(out, self.icons, self.meta, features)
        self._definitions[features.version] = out
        return out

    def check_arguments(self, arguments: Any) -> dict[str, Any]:
        """The function's keyword arguments for a prompts/get; InvalidParams otherwise."""
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise InvalidParams(f"prompts/get: arguments must be an object, got {type(arguments).__name__}")
        missing = [name for name in self._required if name not in arguments]
        if missing:
            raise InvalidParams(
                f"Missing required argument{'s' if len(missing) > 1 else ''} for prompt "
                f"{self.name!r}: {', '.join(missing)}",
                {"prompt": self.name, "missing": missing},
            )
        unknown = sorted(name for name in arguments if name not in self._names)
        if unknown:
            raise InvalidParams(
                f"Unknown argument{'s' if len(unknown) > 1 else ''} for prompt {self.name!r}: "
                f"{', '.join(unknown)}",
                {"prompt": self.name, "unknown": unknown},
            )
        for key, value in arguments.items():
            if not isinstance(value, str):
                raise InvalidParams(
                    f"Argument {key!r} of prompt {self.name!r} must be a string, "
                    f"got {type(value).__name__}"
                )
        try:
            return self._arguments.convert(arguments)
        except ArgumentError as exc:
            raise InvalidParams(f"Invalid argument for prompt {self.name!r}: {exc}") from None

    def render(self, arguments: Any, ctx: Any) -> Any:
        """The GetPromptResult, or a coroutine producing it."""
        kwargs = self.check_arguments(arguments)
        features = ctx.state.features
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        return self._invoke((), kwargs, ctx, features)

    def _result(self, value: Any, features: VersionFeatures) -> dict[str, Any]:
        try:
            messages = to_messages(value, features)
        except (TypeError, ValueError) as exc:
            raise self._failure(exc) from exc
        result: dict[str, Any] = {"messages": messages}
        if self.description:
            result["description"] = self.description
        return result

    def _fail(self, exc: Exception, features: Any = None) -> Any:
        raise self._failure(exc) from exc

    def _failure(self, exc: Exception) -> JSONRPCError:
        _LOGGER.error("prompt %r failed", self.name, exc_info=exc)
        message = str(exc) or type(exc).__name__
        return JSONRPCError(INTERNAL_ERROR, f"Error rendering prompt {self.name!r}: {message}")
