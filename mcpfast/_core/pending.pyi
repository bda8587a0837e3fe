"""PendingTable: the in-flight outgoing requests of one connection.

Ids come from a counter (``next_id``); each request waiting for its response is added with
a waiter -- whatever object the session layer wants back when the response, a timeout or a
cancellation arrives (a Future, a callback) -- and an optional deadline in monotonic
seconds.  No asyncio here: the table only stores and hands back waiters.
"""

from types import GenericAlias
from typing import Any, Final, Generic, TypeVar, final

_W = TypeVar("_W")

#: The largest id ``next_id`` issues (2**60 - 1).
MAX_REQUEST_ID: Final[int]
#: Capacity used when none is given (65536).
DEFAULT_CAPACITY: Final[int]
#: The largest capacity a table accepts (2**30).
MAX_CAPACITY: Final[int]

class PendingError(Exception):
    """Base class of the errors PendingTable raises."""

class DuplicateRequestId(PendingError):
    """add() was given an id that is already pending (an id collision)."""

    id: int
    def __init__(self, id: int) -> None: ...

class PendingTableFull(PendingError):
    """add() was called while the table held `capacity` in-flight requests."""

    capacity: int
    def __init__(self, capacity: int) -> None: ...

class IdSpaceExhausted(PendingError):
    """next_id() was called after the largest request id had been issued."""

    max_id: int
    def __init__(self, max_id: int) -> None: ...

@final
class PendingTable(Generic[_W]):
    """In-flight requests keyed by int id, each with a waiter and an optional deadline.

    At most `capacity` requests may be pending at once; next_id() issues first_id,
    first_id + 1, ... up to MAX_REQUEST_ID.  The table holds a reference to each waiter
    until the entry is popped, cancelled, expired or cleared.  Not picklable.
    """

    def __new__(cls, capacity: int = 65536, first_id: int = 1) -> PendingTable[_W]:
        """capacity: 1..MAX_CAPACITY; first_id: 0..MAX_REQUEST_ID (ValueError otherwise)."""
    @property
    def capacity(self) -> int:
        """The most requests that may be pending at once."""
    def next_id(self) -> int:
        """A fresh request id: first_id, then one more on each call.

        Raises IdSpaceExhausted once MAX_REQUEST_ID (2**60 - 1) has been issued.
        """
    def add(self, id: int, waiter: _W, deadline: float | None = None) -> None:
        """Register a pending request: id -> waiter, expiring at deadline (None: never).

        id: an int (not bool) that fits in int64 (TypeError / OverflowError otherwise).
        waiter: any object but None (TypeError).  deadline: monotonic seconds as a float
        or int, or None; NaN raises ValueError, +inf means no deadline.
        Raises DuplicateRequestId when id is already pending, PendingTableFull when
        `capacity` requests are pending; the table is unchanged on any error.
        """
    def pop(self, id: object) -> _W | None:
        """Remove id and return its waiter; None when id is not pending.

        Any object is accepted (ids come back from the peer): a str, float, bool or
        out-of-range id is simply unknown.
        """
    def cancel(self, id: object) -> _W | None:
        """Remove id (and its deadline) and return its waiter; None when not pending."""
    def expire(self, now: float) -> list[_W]:
        """Remove and return the waiters whose deadline is <= now.

        Earliest deadline first; equal deadlines in ascending id order.  NaN raises
        ValueError.
        """
    def next_deadline(self) -> float | None:
        """The earliest deadline of any pending request, or None when none has one."""
    def clear(self) -> list[_W]:
        """Remove every pending request; return their waiters in ascending id order."""
    def __len__(self) -> int:
        """Number of pending requests."""
    def __class_getitem__(cls, item: object, /) -> GenericAlias:
        """``PendingTable[Future]`` in annotations."""
    def __contains__(self, id: object, /) -> bool:
        """Whether id is pending (False for anything that is not an int id)."""

class OutgoingCore:
    """The fields of a request this side sent and is waiting for; the base of
    :class:`mcpfast.jsonrpc.outgoing.OutgoingRequest`, which documents them."""

    book: Any
    id: Any
    method: Any
    future: Any
    on_progress: Any
    origin: Any
    timeout: Any
    raw: Any
    def __init__(self, book: Any, id: Any, method: Any, future: Any, on_progress: Any,
                 origin: Any, timeout: Any, raw: Any = False) -> None: ...
