"""Bearer-token authentication of the HTTP endpoint (MCP authorization, 2025-06-18 on).

The MCP server is an OAuth 2.1 *resource server*: it does not issue tokens, it checks the
ones its clients got from an authorization server. :class:`BearerAuth` holds the user's
*verifier* -- ``verifier(token) -> AccessToken | None`` (or an awaitable of it), which
checks signature, issuer, audience (the token must be meant for this server, RFC 8707) and
whatever else the deployment needs -- and turns its verdict into HTTP:

- no ``Authorization: Bearer`` header -> 401 with a ``WWW-Authenticate`` challenge naming
  the protected resource metadata (RFC 9728) and the scopes to ask for;
- a malformed header -> 400 ``invalid_request``;
- a token the verifier refuses (None, or :class:`InvalidToken` with a reason) or one past
  its ``expires_at`` -> 401 ``invalid_token``;
- a token without the ``required_scopes`` -> 403 ``insufficient_scope`` with the scopes;
- a verifier that fails (an exception other than InvalidToken) -> 500, logged: a broken
  introspection endpoint is the server's problem, not the client's.

It also answers the protected resource metadata document, at the path-inserted well-known
URI of the endpoint (``/.well-known/oauth-protected-resource/mcp``) and at the root one,
which is how clients find the authorization server.

Sans-I/O: the endpoint feeds it request headers and gets back the verified
:class:`~mcpfast.auth.AccessToken` or the response to send.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from dataclasses import replace
from typing import Any, Awaitable, Callable, Iterable, Optional, Sequence, Union
from urllib.parse import urlsplit

from mcpfast.auth import AccessToken
from mcpfast.auth.errors import InvalidToken
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.messages import JSON_CONTENT_TYPE, HTTPResponse

__all__ = ["BearerAuth", "InvalidToken", "Verdict", "Verifier"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

WELL_KNOWN = "/.well-known/oauth-protected-resource"

Verifier = Callable[[str], Union[Optional[AccessToken], Awaitable[Optional[AccessToken]]]]
# What authenticate() gives: the token, the refusal to send, or an awaitable of either.
Verdict = Union[AccessToken, HTTPResponse, Awaitable[Union[AccessToken, HTTPResponse]]]

# RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" -- a token
# outside it is malformed. A compiled pattern: a JWT is 700+ characters, checked per request.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def _quoted(value: str) -> str:
    # A quoted-string may not hold '"' or '\' unescaped, nor control characters: drop them
    # rather than let a verifier's message break the header.
    return '"' + "".join(c for c in value if c not in '"\\' and " " <= c <= "~") + '"'


class BearerAuth:
    """Bearer-token checks and protected resource metadata for one MCP endpoint.

    ``resource``: the canonical URL clients use for the endpoint (``https://mcp.example.com/mcp``);
    tokens are meant for it, and the metadata URLs derive from it.
    ``authorization_servers``: issuer URLs of the authorization servers clients may use.
    ``required_scopes``: scopes every request needs (403 without them).
    ``scopes_supported``, ``resource_name``, ``resource_documentation``: more metadata.
    ``api_keys``: API keys accepted beside bearer tokens (an object whose ``verify(key)``
    gives the AccessToken or raises InvalidToken, such as :class:`~mcpfast.auth.api_keys.APIKeys`),
    read from the ``api_key_header`` (``X-API-Key``); with ``verifier=None`` they are the
    only credential accepted (``authorization_servers`` may then be empty).
    """

    def __init__(
        self,
        verifier: Optional[Verifier],
        *,
        resource: str,
        authorization_servers: Sequence[str] = (),
        required_scopes: Iterable[str] = (),
        scopes_supported: Optional[Sequence[str]] = None,
        resource_name: Optional[str] = None,
        resource_documentation: Optional[str] = None,
        api_keys: Any = None,
        api_key_header: str = "x-api-key",
    ) -> None:
        if verifier is None and api_keys is None:
            raise TypeError("BearerAuth needs a verifier, api_keys, or both")
        if verifier is not None and not callable(verifier):
            raise TypeError("verifier must be callable: verifier(token) -> AccessToken | None")
        if api_keys is not None and not callable(getattr(api_keys, "verify", None)):
            raise TypeError("api_keys must have verify(key) -> AccessToken (mcpfast.auth.api_keys.APIKeys)")
        parts = urlsplit(resource)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(f"resource must be an absolute http(s) URL without a fragment, "
                             f"got {resource!r}")
        if isinstance(authorization_servers, str) or (verifier is not None and not authorization_servers):
            raise ValueError("authorization_servers must be a non-empty list of issuer URLs")
        self.verifier = verifier
        self.api_keys = api_keys
        self.api_key_header = api_key_header.lower()
        self.resource = resource
        self.authorization_servers = list(authorization_servers)
        self.required_scopes = tuple(required_scopes)
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None else None
        path = parts.path.rstrip("/")
        base = f"{parts.scheme}://{parts.netloc}"
        # The URL named in challenges: the path-inserted form (RFC 9728 section 3.1).
        self.metadata_url = base + WELL_KNOWN + path
        self.metadata_paths = frozenset({WELL_KNOWN + path, WELL_KNOWN})
        document: dict[str, Any] = {
            "resource": resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported is not None:
            document["scopes_supported"] = self.scopes_supported
        if resource_name is not None:
            document["resource_name"] = resource_name
        if resource_documentation is not None:
            document["resource_documentation"] = resource_documentation
        self._metadata = json.dumps(document).encode()
        challenge_scopes = self.required_scopes or tuple(self.scopes_supported or ())
        self._scope = " ".join(challenge_scopes)

    # -- metadata ----------------------------------------------------------------------

    def metadata_response(self, method: str) -> HTTPResponse:
        """The answer to a request for one of ``metadata_paths``."""
        # Public information, read by browser-based clients too: any origin may fetch it.
        cors = [("access-control-allow-origin", "*")]
        if method == "GET":
            return HTTPResponse(200, [JSON_CONTENT_TYPE, ("cache-control", "max-age=3600"),
                                      *cors], self._metadata)
        if method == "OPTIONS":
            return HTTPResponse(204, [*cors, ("access-control-allow-methods", "GET, OPTIONS"),
                                      ("access-control-allow-headers", "mcp-protocol-version")])
        return HTTPResponse(405, [(h.ALLOW, "GET, OPTIONS"), *cors])

    # -- requests ----------------------------------------------------------------------

    def authenticate(self, headers: dict[str, str]) -> Verdict:
        """The verified token of a request, the refusal to send, or an awaitable of one."""
        if self.api_keys is not None:
            key = headers.get(self.api_key_header)
            if key is not None:
                key = key.strip()
                try:
                    found = self.api_keys.verify(key)
                except InvalidToken as exc:
                    return self.challenge(401, "invalid_token", exc.description)
                except Exception:
                    return self._verifier_failed()
                return self._judge(found, key)
        value = headers.get(h.AUTHORIZATION)
        if value is None:
            return self.challenge(401)
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer":
            # Another scheme is no bearer credential at all (RFC 6750 section 3.1).
            return self.challenge(401)
        token = token.strip()
        if _B64TOKEN.fullmatch(token) is None:
            return self.challenge(400, "invalid_request",
                                  "the Authorization header must be 'Bearer <token>'")
        if self.verifier is None:
            return self.challenge(401, "invalid_token",
                                  f"this server takes an API key ({self.api_key_header}), not a bearer token")
        try:
            verdict = self.verifier(token)
        except InvalidToken as exc:
            return self.challenge(401, "invalid_token", exc.description)
        except Exception:
            return self._verifier_failed()
        if type(verdict) is not AccessToken and verdict is not None and inspect.isawaitable(verdict):
            return self._finish(verdict, token)
        return self._judge(verdict, token)

    async def _finish(self, pending: Awaitable[Optional[AccessToken]],
                      raw: str) -> Union[AccessToken, HTTPResponse]:
        try:
            token = await pending
        except InvalidToken as exc:
            return self.challenge(401, "invalid_token", exc.description)
        except Exception:
            return self._verifier_failed()
        return self._judge(token, raw)

    def _judge(self, token: Optional[AccessToken], raw: str) -> Union[AccessToken, HTTPResponse]:
        if token is None:
            return self.challenge(401, "invalid_token", "the access token is invalid")
        if not isinstance(token, AccessToken):
            _LOGGER.error("the bearer-token verifier returned %s, not an AccessToken or None",
                          type(token).__name__)
            return self._verifier_failed(log=False)
        if token.expired():
            return self.challenge(401, "invalid_token", "the access token has expired")
        if not token.scopes.issuperset(self.required_scopes):
            return self.challenge(403, "insufficient_scope",
                                  "the access token lacks a scope this server requires")
        if token.token != raw:
            # Handlers see the token the request carried (a verifier may cache its verdicts).
            token = replace(token, token=raw)
        return token

    def _verifier_failed(self, log: bool = True) -> HTTPResponse:
        if log:
            _LOGGER.exception("the bearer-token verifier failed")
        body = json.dumps({"error": "server_error",
                           "error_description": "the access token could not be verified"})
        return HTTPResponse(500, [JSON_CONTENT_TYPE], body.encode())

    def challenge(self, status: int, error: Optional[str] = None,
                  description: Optional[str] = None) -> HTTPResponse:
        """A refusal with its ``WWW-Authenticate: Bearer ...`` challenge (RFC 6750 / 9728)."""
        body: dict[str, str] = {"error": error or "unauthorized"}
        if description is not None:
            body["error_description"] = description
        elif error is None:
            body["error_description"] = "this MCP server needs an access token (Authorization: Bearer)"
        return HTTPResponse(status, [JSON_CONTENT_TYPE,
                                     (h.WWW_AUTHENTICATE, self.challenge_header(error, description))],
                            json.dumps(body).encode())

    def challenge_header(self, error: Optional[str] = None, description: Optional[str] = None,
                         scope: Optional[str] = None) -> str:
        """The ``WWW-Authenticate`` value: ``Bearer error=..., error_description=...,
        scope=..., resource_metadata=...``; ``scope``: the scopes to ask for (default: the
        required or supported ones; a step-up names what one call needs)."""
        parameters = []
        if error is not None:
            parameters.append(f"error={_quoted(error)}")
            if description is not None:
                parameters.append(f"error_description={_quoted(description)}")
        scope = self._scope if scope is None else scope
        if scope:
            parameters.append(f"scope={_quoted(scope)}")
        parameters.append(f"resource_metadata={_quoted(self.metadata_url)}")
        return "Bearer " + ", ".join(parameters)

    def __repr__(self) -> str:
        return f"<BearerAuth {self.resource}>"
