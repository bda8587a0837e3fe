"""From verified claims to an :class:`~mcpfast.auth.AccessToken`: subject, scopes, expiry.

Shared by the JWT and the introspection verifiers: both end with a dict of claims (a JWT's
payload, RFC 7662's answer) that name the subject (``sub``, else ``client_id`` for a client
credentials grant), the scopes (``scope``, a space-separated string, RFC 8693 / 9068; or
``scp``, a list or a string, as some providers write them) and the expiry (``exp``).
"""

from __future__ import annotations

from typing import Any, Mapping

from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.token import AccessToken

__all__ = ["scopes_of", "token_from_claims"]


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes the claims grant (``scope`` or ``scp``); empty when neither is there."""
    value = claims.get("scope")
    if value is None:
        value = claims.get("scp")
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, (list, tuple)):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()


def token_from_claims(claims: Mapping[str, Any], raw: str) -> AccessToken:
    """The AccessToken of verified ``claims`` (InvalidToken when they name nobody)."""
    client_id = claims.get("client_id", claims.get("azp"))
    client_id = client_id if isinstance(client_id, str) and client_id else None
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        subject = client_id
    if subject is None:
        raise InvalidToken("the access token names no subject (sub) nor client (client_id)")
    exp = claims.get("exp")
    expires_at = float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None
    return AccessToken(subject=subject, scopes=scopes_of(claims), expires_at=expires_at,
                       client_id=client_id, claims=dict(claims), token=raw)
