"""ResourceNotFound: the error of a resource URI nothing serves (-32002).

Its own module, below the resources feature: the server core
(:mod:`mcpfast.server.core`) raises it without importing the feature.
"""

from __future__ import annotations

from typing import Optional

from mcpfast.jsonrpc.errors import RESOURCE_NOT_FOUND, JSONRPCError

__all__ = ["ResourceNotFound"]


class ResourceNotFound(JSONRPCError):
    """-32002 Resource not found, with data ``{"uri": uri}``."""

    default_code = RESOURCE_NOT_FOUND

    def __init__(self, uri: str, message: Optional[str] = None) -> None:
        super().__init__(RESOURCE_NOT_FOUND, message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri
