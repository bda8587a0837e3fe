"""mcpfast: Model Context Protocol servers, clients and transports on a Cython core.

The names below load on first use, so ``import mcpfast`` stays cheap for programs that
need only one side (a client does not import the server's schema machinery).

Server side: :class:`Server`, :class:`Context`, the content classes (:class:`Text`,
:class:`Image`, :class:`Audio`, :class:`EmbeddedResource`, :class:`ResourceLink`,
:class:`Annotations`), :class:`ToolAnnotations`, :class:`ToolResult`, :class:`Field`,
:class:`PromptMessage` (prompts), the completion types and the errors handlers raise.
Client side: :func:`connect`, :func:`connect_sync`, :class:`Client`, :class:`SyncClient`,
:class:`Subscription` and the client errors. JSON-RPC errors shared by both:
:class:`JSONRPCError`, :class:`RequestTimeout`, :class:`RequestCancelled`,
:class:`ConnectionClosed`, :class:`InvalidParams`, :class:`MethodNotFound`.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "mcpfast.server": (
        "Server", "Context", "Text", "Image", "Audio", "EmbeddedResource", "ResourceLink",
        "Annotations", "ToolAnnotations", "ToolResult", "Field", "PromptMessage", "Completion",
        "CompletionRef", "CompletionArgument", "SamplingResult", "ElicitationResult", "Root",
        "ResourceNotFound", "ClientCapabilityError", "AccessToken",
    ),
    "mcpfast.client": (
        "connect", "connect_sync", "Client", "SyncClient", "Subscription", "ClientError",
        "CapabilityError", "UnsupportedProtocolVersion", "TransportUnavailable",
        "NotInitialized", "InitializeError", "InvalidResult", "PaginationError",
    ),
    "mcpfast.jsonrpc": (
        "JSONRPCError", "RequestTimeout", "RequestCancelled", "ConnectionClosed",
        "InvalidParams", "MethodNotFound",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpfast' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return __all__
