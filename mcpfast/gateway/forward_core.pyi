"""The gateway's plain forwarded tools/call in C (stubs; the compiled module's docstring
says more)."""

from typing import Any, Callable, Optional

from mcpfast.jsonrpc.driven import DrivenCall

class UpstreamCore:
    """The fields of an upstream that its plain forwarding reads, and that forwarding."""

    client: Any
    options: Any
    _callers: dict[Any, None]
    _sent: dict[Any, Any]
    passed_through: int
    _settle_plain: Callable[[Any, tuple[Any, Any]], Any]

    def forward_plain(self, method: str, params: Any, origin: Any) -> Optional[DrivenCall]:
        """``method`` sent for the downstream request ``origin``, its answer passed on
        unread; None where this does not apply (the caller then takes request())."""
    def _plain_answered(self, future: Any, sent: tuple[Any, Any]) -> Any: ...

class MountTableCore:
    """The gateway's tools as a forwarded call looks them up."""

    _tools: dict[str, tuple[Any, Any]]
    _own_tools: Any

    def tool(self, name: Any) -> Optional[tuple[Any, Any]]:
        """The upstream and tool behind the public tool ``name`` (None: not mounted, or
        the server has a tool of that name itself, which wins)."""

class PlainToolCall:
    """tools/call's direct route, called as the handler ``(params, ctx)``."""

    def __init__(self, middleware: Any, gateway: Any, fallback: Callable[[Any, Any], Any]) -> None: ...
    def __call__(self, params: Any, ctx: Any) -> Any: ...
