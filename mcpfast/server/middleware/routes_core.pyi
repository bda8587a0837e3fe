"""The pipeline's route lookup in C (stubs; the compiled module's docstring says more)."""

from typing import Any

class RoutesCore:
    """A route table's lookup."""

    _base: dict[str, Any]
    _wrapped: dict[str, tuple[Any, Any]]

    def get(self, method: str, default: Any = None) -> Any:
        """The wrapped route of ``method``, or ``_unrouted``'s answer without a route."""
