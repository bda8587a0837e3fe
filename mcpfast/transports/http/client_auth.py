"""How the HTTP client authenticates: the :class:`HTTPAuth` interface and a static token.

The client transport asks its ``auth`` for the ``Authorization`` header value before every
request (POST, the GET stream, DELETE). When the server answers 401, or 403 with a
``WWW-Authenticate`` challenge, it hands the challenge to ``auth.unauthorized(...)``; if
that returns True (new credentials were obtained: a refreshed token, a completed OAuth
flow, more scopes), the request is sent again, at most :data:`MAX_AUTH_RETRIES` times
per request, so that a server that keeps refusing cannot make the client loop.
"""

from __future__ import annotations

from typing import Optional, Protocol, runtime_checkable

__all__ = ["BearerToken", "HTTPAuth", "MAX_AUTH_RETRIES", "Unauthorized"]

# Attempts with new credentials per request after a refusal.
MAX_AUTH_RETRIES = 2


class Unauthorized:
    """A refusal the server sent: ``status`` (401 or 403), ``challenge`` (the
    ``WWW-Authenticate`` value, None when absent), ``url`` (the MCP endpoint)."""

    __slots__ = ("status", "challenge", "url")

    def __init__(self, status: int, challenge: Optional[str], url: str) -> None:
        self.status = status
        self.challenge = challenge
        self.url = url

    def __repr__(self) -> str:
        return f"<Unauthorized {self.status} {self.url}>"


@runtime_checkable
class HTTPAuth(Protocol):
    """What the HTTP client transport needs of an authentication method."""

    async def authorization(self) -> Optional[str]:
        """The ``Authorization`` header value for the next request (None: send none)."""
        ...

    async def unauthorized(self, refusal: Unauthorized) -> bool:
        """The server refused a request: get new credentials if possible. True: send the
        request again with :meth:`authorization`'s new value; False: give up (the request
        fails with the server's answer)."""
        ...


class BearerToken:
    """A fixed bearer token (one obtained elsewhere); a refusal is final."""

    __slots__ = ("_value",)

    def __init__(self, token: str) -> None:
        if not isinstance(token, str) or not token or any(c in token for c in "\r\n "):
            raise ValueError("a bearer token is a non-empty str without spaces or line breaks")
        self._value = f"Bearer {token}"

    async def authorization(self) -> Optional[str]:
        return self._value

    async def unauthorized(self, refusal: Unauthorized) -> bool:
        return False

    def __repr__(self) -> str:
        return "<BearerToken>"
