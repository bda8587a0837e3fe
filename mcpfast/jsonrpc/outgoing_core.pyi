"""A session's outgoing requests started in C (stubs; the compiled module's docstring
says more)."""

from typing import Any, Callable, Optional

def check_timeout(timeout: Any) -> Optional[float]:
    """None, or a positive number of seconds (math.inf: never) as a float."""

def with_progress_token(params: Any, token: int) -> dict[str, Any]:
    """A copy of params (a dict or None) with ``_meta.progressToken`` = token."""

class OutgoingBook:
    """The fields of a session's book of outgoing requests and its ``start``."""

    default_timeout: Optional[float]

    def start(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Callable[..., Any]] = None,
        origin: Any = None,
        raw: bool = False,
        future: Any = None,
    ) -> Any:
        """Register and send one request; returns its handle (an OutgoingRequest)."""

