"""Progress reporting for one incoming request: notifications/progress with rising values.

A request whose ``params._meta.progressToken`` is a string or an integer gets a
:class:`ProgressReporter` as ``ctx.progress`` (None otherwise). Each ``report`` sends one
``notifications/progress`` carrying that token. The specification says the progress value
must increase with every notification; a value that does not is a bug in the handler, so
``report`` raises ValueError and sends nothing. Once the request has been answered (or
cancelled) the reporter is closed: progress after completion is refused with
:class:`ProgressClosed`, because the specification forbids it and the peer has already
forgotten the token.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mcpfast._core.codec import encode_notification

if TYPE_CHECKING:
    from mcpfast.jsonrpc.contract import PeerSession, ReplyChannel

__all__ = [
    "PROGRESS_METHOD",
    "ProgressClosed",
    "ProgressReporter",
    "is_progress_token",
    "reporter_for",
    "request_id_in",
]

PROGRESS_METHOD = "notifications/progress"


class ProgressClosed(RuntimeError):
    """report() was called after the request it belongs to was answered or cancelled."""


def is_progress_token(value: object) -> bool:
    """True for a valid progress token (or request id): a str or an int that is not a bool."""
    t = type(value)
    return t is str or t is int or (isinstance(value, (int, str)) and not isinstance(value, bool))


def request_id_in(params: Any, key: str) -> int | str | None:
    """params[key] when params is a dict and that is a request id (a str or an int), else
    None. (Request ids and progress tokens follow the same type rule.)"""
    if type(params) is not dict:
        return None
    value = params.get(key)
    return value if is_progress_token(value) else None


def _number(name: str, value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


class ProgressReporter:
    """Sends notifications/progress for one request (see the module docstring).

    Made by the session for requests that carry a progress token; handlers use ``report``.
    """

    __slots__ = ("token", "_session", "_channel", "_last", "_closed")

    def __init__(self, token: int | str, session: PeerSession, channel: ReplyChannel | None) -> None:
        self.token = token
        self._session = session
        self._channel = channel
        self._last: float | int | None = None
        self._closed = False

    @property
    def last(self) -> float | int | None:
        """The last progress value sent, None before the first."""
        return self._last

    @property
    def closed(self) -> bool:
        """True once the request was answered or cancelled."""
        return self._closed

    def report(self, progress: float, total: float | None = None,
               message: str | None = None) -> None:
        """Send notifications/progress {progressToken, progress[, total][, message]}.

        progress must be a finite number greater than every value reported before for this
        request (ValueError otherwise, nothing sent); total a finite number or None; message
        a str or None. Raises ProgressClosed after the request completed.
        """
        if self._closed:
            raise ProgressClosed(
                f"progress reported for token {self.token!r} after its request completed"
            )
        _number("progress", progress)
        last = self._last
        if last is not None and not progress > last:
            raise ValueError(
                f"progress must increase with every notification: {progress!r} after {last!r}"
            )
        params: dict[str, Any] = {"progressToken": self.token, "progress": progress}
        if total is not None:
            params["total"] = _number("total", total)
        if message is not None:
            if type(message) is not str:
                raise TypeError(f"message must be a str, not {type(message).__name__}")
            params["message"] = message
        self._session.send_related(self._channel, encode_notification(PROGRESS_METHOD, params))
        self._last = progress

    def close(self) -> None:
        """Refuse further reports (the session calls this when the request completes)."""
        self._closed = True

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<ProgressReporter token={self.token!r} last={self._last!r} {state}>"


def reporter_for(meta: dict[str, Any], request_id: Any, session: PeerSession,
                 channel: ReplyChannel | None) -> ProgressReporter | None:
    """The progress reporter of a request whose ``_meta`` is ``meta``: one when it carries
    a valid ``progressToken`` and the message is a request (``request_id`` not None), else
    None."""
    if request_id is None:
        return None
    token = meta.get("progressToken")
    if token is None or not is_progress_token(token):
        return None
    return ProgressReporter(token, session, channel)
