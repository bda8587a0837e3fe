"""What the server knows of an authenticated caller: :class:`AccessToken`.

A transport that authenticates its requests (Streamable HTTP with a bearer-token
verifier, see :class:`~mcpfast.transports.http.BearerAuth`) puts the verified token on the
connection; handlers read it as ``ctx.auth`` (None where nothing was authenticated:
stdio, TCP, an HTTP endpoint without a verifier).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import time
from typing import Any, Mapping, Optional

__all__ = ["AccessToken"]


@dataclass(frozen=True)
class AccessToken:
    """A verified access token.

    ``subject``: who the token stands for (a user id, or the client id for a client
    credentials grant). A session is bound to the subject that created it: a request
    with a token for another subject does not reach it.
    ``scopes``: what the token grants. ``expires_at``: seconds since the epoch, None for
    no expiry. ``client_id``, ``claims``: whatever else the verifier wants handlers to
    see (JWT claims, introspection fields). ``token``: the raw token, for handlers that
    pass it on to an API that takes the same token (never logged by mcpfast).
    """

    subject: str
    scopes: frozenset[str] = frozenset()
    expires_at: Optional[float] = None
    client_id: Optional[str] = None
    claims: Mapping[str, Any] = field(default_factory=dict)
    token: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.subject, str) or not self.subject:
            raise ValueError("AccessToken.subject must be a non-empty str")
        if not isinstance(self.scopes, frozenset):
            # Accept any iterable of scope strings; keep the frozen set.
            object.__setattr__(self, "scopes", frozenset(self.scopes))

    def expired(self, now: Optional[float] = None) -> bool:
        """Whether ``expires_at`` has passed (at ``now``, seconds since the epoch)."""
        if self.expires_at is None:
            return False
        return (time() if now is None else now) >= self.expires_at

    def has_scopes(self, *scopes: str) -> bool:
        """Whether the token grants every one of ``scopes``."""
        return self.scopes.issuperset(scopes)
