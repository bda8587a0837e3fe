"""mcpfast.server: MCP servers in pure Python on top of the sans-I/O JSON-RPC session.

The public API: :class:`Server` (decorators ``tool``, ``resource``, ``prompt``,
``completion``; ``run``), :class:`Context` (what handlers receive), the content classes
(:class:`Text`, :class:`Image`, :class:`Audio`, :class:`EmbeddedResource`,
:class:`ResourceLink`, :class:`Annotations`), :class:`ToolAnnotations`,
:class:`ToolResult`, :class:`PromptMessage` for prompts, the completion types, the results of
requests to the client, and the errors handlers may raise (:class:`ResourceNotFound`,
:class:`ClientCapabilityError`). Module map:

  server.py          Server: the facade (registration API, run/serve, middleware, lifespan)
  core.py            ServerCore (the state the facade builds and the lower modules hold),
                     ConnectionHandle; core_field.py: the facade's view of its fields
  connection.py      ServerConnection: one client (state, subscriptions, check chain)
  handlers.py        every feature's methods registered (install_handlers)
  features/          tools, resources, prompts, completion, catalogs, and each
                     feature's MCP methods (initialize, tools/call, ...)
  request/           Context, ProtocolState, state sources, back channels, requests to
                     the client, InputRequiredResult, the invocation wrapper
  eras/              the 2026-07-28 stateless era
  tasks/             tools/call as tasks: manager, tasks/* methods, store, records
  publisher.py       fan-out of list changes, resource updates and log broadcasts
  listen.py          2026-07-28 subscriptions/listen streams
  logs.py            the logging.Handler bridge to MCP log messages
  core_fields, connection_core, context_factories, tools_call   the compiled request path
  string_args.py     string arguments (template variables, prompt args) -> typed values
  schema/, content.py, uri_template.py, pagination.py   building blocks

The Redis-backed publisher and task store are in :mod:`mcpfast.scaleout` (also importable
from here).

Versions, per-version VersionFeatures, method names and log levels: :mod:`mcpfast.protocol`.
"""

from typing import Any

from mcpfast.auth import AccessToken
from mcpfast.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS
from mcpfast.server.connection import ServerConnection
from mcpfast.server.content import (
    Annotations,
    Audio,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
)
from mcpfast.server.features.completion import Completion, CompletionArgument, CompletionRef
from mcpfast.server.features.prompts import Prompt, PromptArgument, PromptMessage
from mcpfast.server.features.resources import Resource, ResourceNotFound, ResourceTemplate
from mcpfast.server.features.tools import Tool, ToolAnnotations, ToolResult
from mcpfast.server.logs import LEVELS, MCPLogHandler
from mcpfast.server.request.context import Context
from mcpfast.server.request.requests_to_client import (
    ClientCapabilityError,
    ElicitationResult,
    Root,
    SamplingResult,
)
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.schema import Field
from mcpfast.server.server import Server
from mcpfast.server.tasks.store import MemoryTaskStore, TaskStore

__all__ = [
    "AccessToken",
    "Annotations",
    "Audio",
    "ClientCapabilityError",
    "Completion",
    "CompletionArgument",
    "CompletionRef",
    "Context",
    "ElicitationResult",
    "EmbeddedResource",
    "Field",
    "Image",
    "LATEST_VERSION",
    "LEVELS",
    "MCPLogHandler",
    "MemoryTaskStore",
    "PromptMessage",
    "Prompt",
    "PromptArgument",
    "ProtocolState",
    "RedisPublisher",
    "RedisTaskStore",
    "RedisUnavailable",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceTemplate",
    "Root",
    "SUPPORTED_VERSIONS",
    "SamplingResult",
    "Server",
    "ServerConnection",
    "TaskStore",
    "Text",
    "Tool",
    "ToolAnnotations",
    "ToolResult",
]

# The Redis-backed implementations live in mcpfast.scaleout, a package above the server
# (nothing below imports it): still importable from here, loaded when first asked for.
_SCALE_OUT = {"RedisPublisher": "redis_publisher", "RedisUnavailable": "redis_connection",
              "RedisTaskStore": "redis_task_store"}


def __getattr__(name: str) -> Any:
    module = _SCALE_OUT.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"mcpfast.scaleout.{module}"), name)
