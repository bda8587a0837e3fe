"""The compiled base of the server core (stubs; the compiled module's docstring says what
CoreFields holds and why)."""

from typing import Any

class CoreFields:
    """The fields compiled code reads of a server core; subclassed by
    :class:`mcpfast.server.core.ServerCore`."""

    default_log_level: int
    publisher: Any
