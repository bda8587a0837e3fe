"""The duration histograms' per-value work in C (stubs; the compiled module's docstring
says more)."""

from typing import Any, Mapping, Optional, final

@final
class Series:
    """One attribute set's aggregate since the last collection."""

    attributes: dict[str, Any]
    counts: list[int]
    total: float
    count: int
    low: float
    high: float
    first_ns: int
    exemplars: Optional[dict[int, list]]

    def __init__(self, attributes: dict[str, Any], buckets: int) -> None: ...

class AggregatorCore:
    """Values per attribute set with explicit bucket bounds."""

    @property
    def bounds(self) -> tuple[float, ...]: ...
    _direct: bool
    _current: Any
    exemplars: str

    def __init__(self, bounds: Any, *, direct_context: bool = True) -> None: ...
    def record(self, value: float, attributes: Mapping[str, Any], context: Any = None) -> None:
        """One value; ``context``: the trace context (None: the current one), for exemplars."""
    def take(self) -> list[Series]:
        """The series recorded since the last take (then forgotten here)."""
