"""JWTVerifier: bearer JWT access tokens (RFC 9068) checked against a key set or a static key.

    from mcpfast.auth.jwt import JWTVerifier
    from mcpfast.transports.http import BearerAuth

    verifier = JWTVerifier(jwks_url="https://auth.example.com/jwks",
                           issuer="https://auth.example.com",
                           audience="https://mcp.example.com/mcp")
    auth = BearerAuth(verifier, resource="https://mcp.example.com/mcp",
                      authorization_servers=["https://auth.example.com"])

What a token must be to pass, each failure with a description of its own (sent to the
client as ``error_description``):

- a JWS whose header ``alg`` is in ``algorithms`` (asymmetric ones by default; ``none``
  never; HMAC only with ``secret=`` and then only HMAC) and whose key fits the algorithm
  (:mod:`mcpfast.auth.keys`);
- signed by the static ``key`` / ``secret``, or by the key of the JWKS at ``jwks_url`` that
  its ``kid`` names (:class:`~mcpfast.auth.jwks.JWKSCache`: cached, refetched on an unknown
  kid and on age, within a bound);
- ``iss`` equal to ``issuer``, ``aud`` holding ``audience`` (the resource's own URL,
  RFC 8707), ``exp`` in the future and ``nbf`` / ``iat`` not in it, each within ``leeway``
  seconds (30).

The verified token's subject is ``sub`` (else ``client_id``), its scopes ``scope`` / ``scp``.
A call answers the AccessToken at once when the key is at hand (a static key, a fresh cached
set) and an awaitable of it when the set must be fetched first. A verified token is kept
(by its SHA-256) for ``cache_ttl`` seconds (60; never past its ``exp``; 0: not kept), at
most ``max_cached`` of them: a client's next requests with it cost a hash and a lookup
instead of a signature check.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any, Awaitable, Iterable, Optional, Sequence, Union

try:
    import jwt as jose
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError("the JWT verifier needs PyJWT with cryptography: pip install 'mcpfast[auth]'") from exc

from mcpfast.auth.claims import token_from_claims
from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.jwks import JWKSCache
from mcpfast.auth.keys import ASYMMETRIC_ALGORITHMS, check_algorithms, key_fits, load_public_key
from mcpfast.auth.token import AccessToken

__all__ = ["JWTVerifier"]

DEFAULT_LEEWAY = 30.0


def _refusal(exc: jose.PyJWTError) -> InvalidToken:
    # One description per way a token fails, so a client (and its operator) can tell them apart.
    if isinstance(exc, jose.ExpiredSignatureError):
        return InvalidToken("the access token has expired")
    if isinstance(exc, jose.ImmatureSignatureError):
        return InvalidToken("the access token is not valid yet (nbf or iat in the future)")
    if isinstance(exc, jose.InvalidAudienceError):
        return InvalidToken("the access token is not meant for this resource (aud)")
    if isinstance(exc, jose.InvalidIssuerError):
        return InvalidToken("the access token comes from an issuer this server does not trust (iss)")
    if isinstance(exc, jose.MissingRequiredClaimError):
        return InvalidToken(f"the access token lacks the {exc.claim!r} claim")
    if isinstance(exc, jose.InvalidSignatureError):
        return InvalidToken("the access token's signature does not verify")
    if isinstance(exc, jose.InvalidAlgorithmError):
        return InvalidToken("the access token's signing algorithm is not accepted")
    if isinstance(exc, jose.DecodeError):
        return InvalidToken("the access token is not a well-formed JWT")
    return InvalidToken("the access token's claims are invalid")


class JWTVerifier:
    """Checks bearer JWTs (module docstring). Give exactly one of ``jwks_url``, ``key`` (a
    public key: cryptography object, PEM or JWK dict) or ``secret`` (bytes, HMAC)."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: Union[str, Sequence[str]],
        jwks_url: Optional[str] = None,
        key: Any = None,
        secret: Optional[bytes] = None,
        algorithms: Optional[Iterable[str]] = None,
        leeway: float = DEFAULT_LEEWAY,
        jwks_min_interval: float = 30.0,
        jwks_max_age: float = 600.0,
        jwks_timeout: float = 5.0,
        required_claims: Iterable[str] = ("exp",),
        cache_ttl: float = 60.0,
        max_cached: int = 10_000,
    ) -> None:
        if sum(x is not None for x in (jwks_url, key, secret)) != 1:
            raise ValueError("give exactly one of jwks_url=, key= (a public key) or secret= (HMAC)")
        if not isinstance(issuer, str) or not issuer:
            raise ValueError("issuer must be the authorization server's issuer URL")
        audiences = [audience] if isinstance(audience, str) else list(audience)
        if not audiences or not all(isinstance(a, str) and a for a in audiences):
            raise ValueError("audience must be the resource's URL (or a list of accepted audiences)")
        if secret is not None:
            if not isinstance(secret, bytes) or len(secret) < 32:
                raise ValueError("secret must be bytes, at least 32 of them (RFC 7518 section 3.2)")
            self.algorithms = check_algorithms(algorithms or ("HS256",), hmac=True)
        else:
            self.algorithms = check_algorithms(algorithms or ASYMMETRIC_ALGORITHMS, hmac=False)
        if isinstance(leeway, bool) or not isinstance(leeway, (int, float)) or not 0 <= leeway <= 300:
            raise ValueError(f"leeway must be 0..300 seconds, got {leeway!r}")
        self.issuer = issuer
        self.audience = audiences
        self.leeway = float(leeway)
        self._secret = secret
        self._key = load_public_key(key) if key is not None else None
        self.jwks = (JWKSCache(jwks_url, min_interval=jwks_min_interval, max_age=jwks_max_age,
                               timeout=jwks_timeout) if jwks_url is not None else None)
        if isinstance(cache_ttl, bool) or not isinstance(cache_ttl, (int, float)) or not 0 <= cache_ttl <= 3600:
            raise ValueError(f"cache_ttl must be 0..3600 seconds, got {cache_ttl!r}")
        self.cache_ttl = float(cache_ttl)
        self.max_cached = max(1, int(max_cached))
        # sha256(token) -> (kept until, the verified token)
        self._verified: dict[bytes, tuple[float, AccessToken]] = {}
        self._require = sorted({"exp", "iss", "aud", *required_claims})
        self._options: Any = {"require": self._require, "verify_signature": True}

    def __call__(self, token: str) -> Union[AccessToken, Awaitable[AccessToken]]:
        """The AccessToken of ``token``, or an awaitable of it; InvalidToken when refused."""
        if self.cache_ttl:
            digest = hashlib.sha256(token.encode()).digest()
            kept = self._verified.get(digest)
            if kept is not None:
                if time.time() < kept[0] and kept[1].token == token:
                    return kept[1]
                del self._verified[digest]
        algorithm, kid = self._header(token)
        if self.jwks is None:
            return self._decode(token, algorithm, self._secret if self._secret is not None else self._key, None)
        found = self.jwks.cached(kid)
        if found is not None:
            return self._decode(token, algorithm, found[0], found[1])
        return self._verify_fetching(token, algorithm, kid)

    async def _verify_fetching(self, token: str, algorithm: str, kid: Optional[str]) -> AccessToken:
        assert self.jwks is not None
        key, key_algorithm = await self.jwks.key(kid)
        return self._decode(token, algorithm, key, key_algorithm)

    def _header(self, token: str) -> tuple[str, Optional[str]]:
        # Only the algorithm and kid are needed before the key is chosen: the header segment
        # read here (the library parses the whole token again when it verifies it).
        segment, dot, _ = token.partition(".")
        try:
            if not dot or len(segment) > 4096:
                raise ValueError
            header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
            if not isinstance(header, dict):
                raise ValueError
        except (ValueError, TypeError):
            raise InvalidToken("the access token is not a well-formed JWT") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            shown = algorithm if isinstance(algorithm, str) and len(algorithm) <= 16 else "?"
            raise InvalidToken(f"the access token's signing algorithm ({shown}) is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the access token's kid is not a string")
        return algorithm, kid

    def _decode(self, token: str, algorithm: str, key: Any, key_algorithm: Optional[str]) -> AccessToken:
        if self._secret is None and (not key_fits(key, algorithm)
                                     or (key_algorithm is not None and key_algorithm != algorithm)):
            raise InvalidToken("the access token's algorithm does not fit the key it names")
        try:
            claims = jose.decode(token, key, algorithms=[algorithm], audience=self.audience,
                                 issuer=self.issuer, leeway=self.leeway, options=self._options)
        except jose.PyJWTError as exc:
            raise _refusal(exc) from None
        verified = token_from_claims(claims, token)
        if self.cache_ttl:
            self._keep(verified)
        return verified

    def kept_until(self, token: str) -> Optional[float]:
        """Until when (seconds since the epoch) ``token``'s verdict is kept, None when it is not."""
        kept = self._verified.get(hashlib.sha256(token.encode()).digest())
        return kept[0] if kept is not None and kept[1].token == token else None

    def _keep(self, verified: AccessToken) -> None:
        # A verified token is the same token until it expires: kept briefly (cache_ttl), so
        # that a client's next requests cost a hash and a lookup, not a signature check.
        until = time.time() + self.cache_ttl
        if verified.expires_at is not None:
            until = min(until, verified.expires_at + self.leeway)
        kept = self._verified
        if len(kept) >= self.max_cached:
            del kept[next(iter(kept))]  # the oldest
        kept[hashlib.sha256(verified.token.encode()).digest()] = (until, verified)

    def __repr__(self) -> str:
        source = self.jwks.url if self.jwks is not None else "static key"
        return f"<JWTVerifier {self.issuer} ({source})>"
