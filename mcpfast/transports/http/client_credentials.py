"""OAuth client credentials for machine clients: :class:`ClientCredentials`, an
:class:`~mcpfast.transports.http.client_auth.HTTPAuth` (RFC 6749 section 4.4).

    auth = ClientCredentials(client_id="robot", client_secret=os.environ["ROBOT_SECRET"],
                             scopes=["mcp:tools"])
    async with mcpfast.connect("https://mcp.example.com/mcp", auth=auth) as client: ...

No person, no browser: the client authenticates itself at the token endpoint and gets an
access token for the MCP server (the ``resource`` indicator, RFC 8707: the server's URL).
How it authenticates: ``client_secret_basic`` (the default with a secret),
``client_secret_post``, or ``private_key_jwt`` (with ``private_key``: a signed assertion,
RFC 7523, instead of a shared secret).

Where the token endpoint is: ``token_url`` when given; else the authorization server's
metadata at ``issuer``; else found the way the MCP authorization specification says, from
the server's first 401 (its protected resource metadata, RFC 9728, names the authorization
server). A token is fetched before the first request when the endpoint is known, and again
``refresh_margin`` seconds (30) before it expires (the grant has no refresh token: a new
one is asked for), on a 401, and on a 403 ``insufficient_scope`` (asking for the scopes
held and those the challenge names). The secret and the tokens are never logged.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import time
from typing import Any, Iterable, Optional
from urllib.parse import quote, urlencode, urlsplit

from mcpfast.auth.fetch import FetchError, fetch_json
from mcpfast.transports.http.client_auth import Unauthorized
from mcpfast.transports.http.oauth import (
    OAuthError,
    authorization_server_metadata_urls,
    parse_challenge,
    resource_metadata_urls,
)

__all__ = ["ClientCredentials"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt")
_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


async def _first_json(urls: list[str]) -> Optional[dict[str, Any]]:
    for url in urls:
        try:
            return (await fetch_json(url)).document
        except FetchError:
            continue
    return None


class ClientCredentials:
    """The client credentials grant as the HTTP client's ``auth`` (module docstring)."""

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: Optional[str] = None,
        private_key: Any = None,
        key_id: Optional[str] = None,
        signing_algorithm: str = "RS256",
        auth_method: Optional[str] = None,
        token_url: Optional[str] = None,
        issuer: Optional[str] = None,
        scopes: Iterable[str] = (),
        resource: Optional[str] = None,
        refresh_margin: float = 30.0,
    ) -> None:
        if not isinstance(client_id, str) or not client_id:
            raise ValueError("client_id must be a non-empty str")
        if (client_secret is None) == (private_key is None):
            raise ValueError("give exactly one of client_secret= or private_key= (private_key_jwt)")
        method = auth_method or ("private_key_jwt" if private_key is not None else "client_secret_basic")
        if method not in _METHODS:
            raise ValueError(f"auth_method must be one of {', '.join(_METHODS)}, got {method!r}")
        if (method == "private_key_jwt") != (private_key is not None):
            raise ValueError("private_key_jwt takes private_key=; the client_secret_* methods take client_secret=")
        if isinstance(scopes, str):
            raise TypeError("scopes must be a list of scope strings, not one str")
        self.client_id = client_id
        self._client_secret = client_secret
        self._private_key = private_key
        self.key_id = key_id
        self.signing_algorithm = signing_algorithm
        self.auth_method = method
        self.token_url = token_url
        self.issuer = issuer
        self.scopes = list(scopes)
        self.resource = resource
        self.refresh_margin = float(refresh_margin)
        self.access_token: Optional[str] = None
        self.expires_at: Optional[float] = None
        self.granted_scope: Optional[str] = None
        self.fetched = 0  # tokens obtained (tests, metrics)
        self._lock = asyncio.Lock()

    # -- HTTPAuth ------------------------------------------------------------------------

    async def authorization(self) -> Optional[str]:
        if self._stale():
            async with self._lock:
                if self._stale():
                    if self.token_url is None and self.issuer is not None:
                        await self._discover_issuer(self.issuer)
                    if self.token_url is not None:
                        await self._fetch(self._scope())
        return f"Bearer {self.access_token}" if self.access_token else None

    async def unauthorized(self, refusal: Unauthorized) -> bool:
        challenge = parse_challenge(refusal.challenge)
        step_up = refusal.status == 403 and challenge.get("error") == "insufficient_scope"
        if refusal.status == 403 and not step_up:
            return False
        async with self._lock:
            if self.token_url is None:
                await self._discover(refusal.url, challenge)
            if self.resource is None:
                self.resource = refusal.url
            scope = self._scope()
            asked = challenge.get("scope")
            if asked and (step_up or not scope):
                held = (self.granted_scope or scope or "").split()
                scope = " ".join(dict.fromkeys(held + asked.split()))
            if not step_up:
                await self._fetch(scope)
                return True
            try:
                await self._fetch(scope)
            except OAuthError as exc:
                # The authorization server will not grant more: the 403 stands.
                _LOGGER.info("step-up to %r refused: %s", scope, exc)
                return False
        return True

    # -- steps ---------------------------------------------------------------------------

    def _stale(self) -> bool:
        if self.access_token is None:
            return True
        return self.expires_at is not None and time.time() >= self.expires_at - self.refresh_margin

    def _scope(self) -> Optional[str]:
        return " ".join(self.scopes) if self.scopes else self.granted_scope

    async def _discover(self, mcp_url: str, challenge: dict[str, str]) -> None:
        metadata = await _first_json(resource_metadata_urls(mcp_url, challenge.get("resource_metadata")))
        servers = metadata.get("authorization_servers") if metadata is not None else None
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise OAuthError(f"no token_url given and {mcp_url} names no authorization server "
                             f"(protected resource metadata)")
        named = metadata.get("resource") if metadata is not None else None
        if self.resource is None and isinstance(named, str):
            self.resource = named
        await self._discover_issuer(servers[0])

    async def _discover_issuer(self, issuer: str) -> None:
        metadata = await _first_json(authorization_server_metadata_urls(issuer))
        endpoint = metadata.get("token_endpoint") if metadata is not None else None
        if not isinstance(endpoint, str):
            raise OAuthError(f"the authorization server {issuer} advertises no token_endpoint")
        self.token_url = endpoint
        named = metadata.get("issuer") if metadata is not None else None
        self.issuer = named if isinstance(named, str) and named else issuer

    def _assertion(self) -> str:
        import jwt as jose  # PyJWT: the mcpfast[auth] extra

        now = int(time.time())
        # The audience: the authorization server's issuer identifier when known (RFC 7523
        # section 3 allows it and the MCP extension, SEP-1046, asks for it), else the
        # token endpoint's URL.
        audience = self.issuer or self.token_url
        claims = {"iss": self.client_id, "sub": self.client_id, "aud": audience,
                  "iat": now, "exp": now + 60, "jti": secrets.token_urlsafe(16)}
        headers = {"kid": self.key_id} if self.key_id else None
        return jose.encode(claims, self._private_key, algorithm=self.signing_algorithm, headers=headers)

    async def _fetch(self, scope: Optional[str]) -> None:
        assert self.token_url is not None
        form = {"grant_type": "client_credentials"}
        if scope:
            form["scope"] = scope
        if self.resource:
            form["resource"] = self.resource
        headers = {"content-type": "application/x-www-form-urlencoded"}
        if self.auth_method == "client_secret_basic":
            pair = f"{quote(self.client_id, safe='')}:{quote(self._client_secret or '', safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        elif self.auth_method == "client_secret_post":
            form.update(client_id=self.client_id, client_secret=self._client_secret or "")
        else:
            form.update(client_id=self.client_id, client_assertion_type=_ASSERTION_TYPE,
                        client_assertion=self._assertion())
        try:
            answer = await fetch_json(self.token_url, body=urlencode(form).encode(), headers=headers)
        except FetchError as exc:
            raise OAuthError(f"the client credentials grant failed: {exc}") from None
        tokens = answer.document
        token = tokens.get("access_token")
        if not isinstance(token, str) or not token:
            raise OAuthError(f"the token endpoint {urlsplit(self.token_url).netloc} answered no access_token")
        self.access_token = token
        expires = tokens.get("expires_in")
        self.expires_at = (time.time() + float(expires)
                           if isinstance(expires, (int, float)) and not isinstance(expires, bool) else None)
        granted = tokens.get("scope")
        self.granted_scope = granted if isinstance(granted, str) else scope
        self.fetched += 1

    def __repr__(self) -> str:
        return f"<ClientCredentials {self.client_id} ({self.auth_method})>"
