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

class PlainToolCall:
    """tools/call's direct route, called as the handler ``(params, ctx)``."""

    def __init__(self, middleware: Any, gateway: Any, fallback: Callable[[Any, Any], Any]) -> None: ...
    def __call__(self, params: Any, ctx: Any) -> Any: ...
