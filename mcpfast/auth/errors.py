"""The refusal a verifier raises: :class:`InvalidToken`.

The HTTP transport turns it into ``401`` with ``WWW-Authenticate: Bearer
error="invalid_token", error_description="..."``; the description is what tells the
client *why* (expired, wrong audience, bad signature, unknown key), so it must say that
and nothing secret.
"""

from __future__ import annotations

__all__ = ["InvalidToken"]


class InvalidToken(Exception):
    """Raised by a verifier to refuse a token with a reason the client may see (sent as
    ``error_description``; keep secrets out of it)."""

    def __init__(self, description: str = "the access token is invalid") -> None:
        super().__init__(description)
        self.description = description
