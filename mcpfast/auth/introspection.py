"""IntrospectionVerifier: opaque bearer tokens checked by the authorization server (RFC 7662).

    verifier = IntrospectionVerifier(
        url="https://auth.example.com/token/introspection",
        client_id="mcp-server", client_secret=os.environ["MCP_INTROSPECTION_SECRET"],
        audience="https://mcp.example.com/mcp", issuer="https://auth.example.com")

Each token not seen lately is POSTed (``token=...&token_type_hint=access_token``) to ``url``,
the server authenticating itself with its client credentials (``client_secret_basic``, or
``client_secret_post``). A token passes when the answer says ``active: true``, its ``exp``
has not passed, its ``aud`` holds ``audience`` (when given: the resource's own URL) and its
``iss`` is ``issuer`` (when given and answered). The subject is ``sub`` (else
``client_id``), the scopes ``scope``.

Answers are kept, by a hash of the token (never the token itself): an active one for
``cache_ttl`` seconds (60) or until its ``exp`` if sooner, a refusal for ``negative_ttl``
seconds (10) -- short, so that a revoked token stops working soon. At most ``max_cached``
answers are kept. A failed exchange (unreachable, an answer other than 200) is not kept and raises: the
HTTP transport answers 500 and logs it -- except a 400 with an OAuth ``error``, which is
about the token and refuses it. A kept answer is given at once, without awaiting.
"""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any, Awaitable, Callable, Optional, Sequence, Union
from urllib.parse import quote, urlencode

from mcpfast.auth.claims import token_from_claims
from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.fetch import FetchError, check_url, fetch_json
from mcpfast.auth.token import AccessToken

__all__ = ["IntrospectionVerifier"]

_METHODS = ("client_secret_basic", "client_secret_post")


class IntrospectionVerifier:
    """Opaque tokens checked through RFC 7662 introspection, answers cached (module docstring)."""

    def __init__(
        self,
        *,
        url: str,
        client_id: str,
        client_secret: str,
        auth_method: str = "client_secret_basic",
        audience: Union[str, Sequence[str], None] = None,
        issuer: Optional[str] = None,
        cache_ttl: float = 60.0,
        negative_ttl: float = 10.0,
        max_cached: int = 10_000,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = check_url(url, "introspection url")
        if not client_id or not client_secret:
            raise ValueError("introspection needs the resource server's client_id and client_secret")
        if auth_method not in _METHODS:
            raise ValueError(f"auth_method must be one of {', '.join(_METHODS)}, got {auth_method!r}")
        for label, value in (("cache_ttl", cache_ttl), ("negative_ttl", negative_ttl)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
                raise ValueError(f"{label} must be 0..3600 seconds, got {value!r}")
        if isinstance(max_cached, bool) or not isinstance(max_cached, int) or max_cached < 1:
            raise ValueError(f"max_cached must be an int >= 1, got {max_cached!r}")
        self.client_id = client_id
        self._client_secret = client_secret
        self.auth_method = auth_method
        self.audience = None if audience is None else ([audience] if isinstance(audience, str) else list(audience))
        self.issuer = issuer
        self.cache_ttl = float(cache_ttl)
        self.negative_ttl = float(negative_ttl)
        self.max_cached = max_cached
        self.timeout = float(timeout)
        self.clock = clock
        self.exchanges = 0  # how many introspection requests were made (tests, metrics)
        # sha256(token) -> (kept until, AccessToken or the InvalidToken's description)
        self._answers: dict[bytes, tuple[float, Union[AccessToken, str]]] = {}

    def __call__(self, token: str) -> Union[AccessToken, Awaitable[AccessToken]]:
        """The AccessToken of ``token``, at once when an answer is kept, else an awaitable."""
        key = hashlib.sha256(token.encode()).digest()
        kept = self._answers.get(key)
        if kept is not None:
            until, verdict = kept
            if self.clock() < until:
                if isinstance(verdict, str):
                    raise InvalidToken(verdict)
                if verdict.token == token:
                    return verdict
            del self._answers[key]
        return self._introspect(token, key)

    def _request(self, token: str) -> tuple[bytes, dict[str, str]]:
        form = {"token": token, "token_type_hint": "access_token"}
        headers = {"content-type": "application/x-www-form-urlencoded"}
        if self.auth_method == "client_secret_basic":
            # RFC 6749 section 2.3.1: each part form-urlencoded before base64.
            pair = f"{quote(self.client_id, safe='')}:{quote(self._client_secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form.update(client_id=self.client_id, client_secret=self._client_secret)
        return urlencode(form).encode(), headers

    async def _introspect(self, token: str, key: bytes) -> AccessToken:
        body, headers = self._request(token)
        self.exchanges += 1
        try:
            answer = await fetch_json(self.url, body=body, headers=headers, timeout=self.timeout)
        except FetchError as exc:
            if exc.status != 400 or exc.error is None:
                raise  # the authorization server failed, or refused us: the server's problem
            # A 400 with an OAuth error is about the token (a JWT sent to an opaque-only
            # endpoint, say): a refusal, kept like one.
            description = f"the authorization server refused to introspect the access token ({exc.error})"
            self._keep(key, self.clock() + self.negative_ttl, description)
            raise InvalidToken(description) from None
        now = self.clock()
        try:
            verified = self._judge(answer.document, token, now)
        except InvalidToken as exc:
            self._keep(key, now + self.negative_ttl, exc.description)
            raise
        until = now + self.cache_ttl
        if verified.expires_at is not None:
            until = min(until, verified.expires_at)
        self._keep(key, until, verified)
        return verified

    def _judge(self, claims: dict[str, Any], token: str, now: float) -> AccessToken:
        if claims.get("active") is not True:
            raise InvalidToken("the access token is not active (expired, revoked or unknown)")
        exp = claims.get("exp")
        if isinstance(exp, (int, float)) and not isinstance(exp, bool) and exp <= now:
            raise InvalidToken("the access token has expired")
        if self.audience is not None:
            aud = claims.get("aud")
            held = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
            if not any(a in held for a in self.audience):
                raise InvalidToken("the access token is not meant for this resource (aud)")
        if self.issuer is not None and "iss" in claims and claims["iss"] != self.issuer:
            raise InvalidToken("the access token comes from an issuer this server does not trust (iss)")
        return token_from_claims(claims, token)

    def _keep(self, key: bytes, until: float, verdict: Union[AccessToken, str]) -> None:
        if until <= self.clock():
            return
        answers = self._answers
        if len(answers) >= self.max_cached:
            # Drop the oldest kept answer (dicts keep insertion order).
            del answers[next(iter(answers))]
        answers[key] = (until, verdict)

    def __repr__(self) -> str:
        return f"<IntrospectionVerifier {self.url}>"
