"""OAuth 2.1 for the HTTP client: :class:`OAuthFlow`, an :class:`HTTPAuth` that obtains
tokens the way the MCP authorization specification describes.

    flow = OAuthFlow(redirect_uri="http://localhost:8765/callback", authorize=my_authorize)
    async with mcpfast.connect("https://mcp.example.com/mcp", auth=flow) as client: ...

When the server answers 401, the flow:

1. discovers the protected resource metadata (RFC 9728): the ``resource_metadata`` URL of
   the ``WWW-Authenticate`` challenge, else ``/.well-known/oauth-protected-resource`` with
   the endpoint's path, then at the root; none found means a 2025-03-26 server, whose
   authorization server is its own origin;
2. discovers the authorization server's metadata: RFC 8414 and OpenID Connect discovery,
   path-inserted and path-appended forms in the specification's order; none found (only
   for a 2025-03-26 server) means the default ``/authorize``, ``/token``, ``/register``;
3. gets a client id: the pre-registered ``client_id`` (and secret) when given; else a
   Client ID Metadata Document URL (``client_metadata_url``) when the server supports
   them; else dynamic registration (RFC 7591) when it has an endpoint for it;
4. chooses the scopes: the challenge's ``scope``, else the resource's ``scopes_supported``,
   else none (the request then has no ``scope``);
5. sends the user agent to the authorization endpoint with PKCE (S256: refused when the
   server's metadata does not list it), ``state`` and the ``resource`` indicator (RFC
   8707), through ``authorize(url) -> redirect URL`` -- your code opens a browser and
   catches the redirect; :func:`headless_authorize` follows it without one, for
   authorization servers that approve without a person (tests, machine clients);
6. exchanges the code at the token endpoint, authenticating as the registration or the
   server's metadata says (``client_secret_basic``, ``client_secret_post`` or ``none``).

A 403 with ``error="insufficient_scope"`` runs the flow again asking for the union of
the scopes held and those the challenge names (step-up). An expired token is refreshed
with its refresh token first when there is one. The transport bounds the attempts per
request (:data:`~mcpfast.transports.http.client_auth.MAX_AUTH_RETRIES`). HTTP calls to
the authorization server run in a thread (``urllib``), which leaves the event loop free.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Awaitable, Callable, Optional

from mcpfast.transports.http.client_auth import Unauthorized

__all__ = ["OAuthError", "OAuthFlow", "headless_authorize", "parse_challenge"]

Authorize = Callable[[str], Awaitable[str]]
TIMEOUT = 30.0


class OAuthError(Exception):
    """The flow could not obtain a token (the message says at which step and why)."""


# -- pure helpers ---------------------------------------------------------------------------


def parse_challenge(header: Optional[str]) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer k="v", ...`` challenge (lower-case
    keys; {} when there is none or it is not Bearer)."""
    if not header:
        return {}
    text = header.strip()
    if not text.lower().startswith("bearer"):
        return {}
    text = text[6:]
    params: dict[str, str] = {}
    index = 0
    while index < len(text):
        while index < len(text) and text[index] in " ,":
            index += 1
        start = index
        while index < len(text) and text[index] not in "= ,":
            index += 1
        key = text[start:index].strip().lower()
        if index >= len(text) or text[index] != "=":
            continue
        index += 1
        if index < len(text) and text[index] == '"':
            index += 1
            value = []
            while index < len(text) and text[index] != '"':
                if text[index] == "\\" and index + 1 < len(text):
                    index += 1
                value.append(text[index])
                index += 1
            index += 1
            params[key] = "".join(value)
        else:
            start = index
            while index < len(text) and text[index] != ",":
                index += 1
            params[key] = text[start:index].strip()
    return params


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _path(url: str) -> str:
    path = urllib.parse.urlsplit(url).path
    return "" if path in ("", "/") else path.rstrip("/")


def resource_metadata_urls(mcp_url: str, from_challenge: Optional[str]) -> list[str]:
    """Where the protected resource metadata may be, in the order to try (RFC 9728)."""
    urls = [from_challenge] if from_challenge else []
    path = _path(mcp_url)
    if path:
        urls.append(f"{_origin(mcp_url)}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{_origin(mcp_url)}/.well-known/oauth-protected-resource")
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the MCP specification's order:
    OAuth (RFC 8414) and OpenID Connect, path-inserted, then OIDC path-appended."""
    origin, path = _origin(issuer), _path(issuer)
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server",
                f"{origin}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration"]


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


# -- HTTP to the authorization server -------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _fetch(method: str, url: str, data: Optional[bytes], headers: dict[str, str],
           follow: bool) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    opener = urllib.request.build_opener() if follow else urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


async def _http(method: str, url: str, *, form: Optional[dict[str, str]] = None,
                body: Optional[dict[str, Any]] = None, headers: Optional[dict[str, str]] = None,
                follow: bool = True) -> tuple[int, dict[str, str], bytes]:
    sent = {"accept": "application/json", **(headers or {})}
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        sent["content-type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = json.dumps(body).encode()
        sent["content-type"] = "application/json"
    try:
        return await asyncio.to_thread(_fetch, method, url, data, sent, follow)
    except OSError as exc:
        raise OAuthError(f"{method} {url}: {exc}") from None


async def _json_at(urls: list[str]) -> tuple[Optional[str], Optional[dict[str, Any]]]:
    """The first URL answering 200 with a JSON object, and that object."""
    for url in urls:
        status, _, payload = await _http("GET", url)
        if status == 200:
            try:
                found = json.loads(payload)
            except ValueError:
                continue
            if isinstance(found, dict):
                return url, found
    return None, None


async def headless_authorize(url: str) -> str:
    """Visit the authorization URL without a browser and return where it redirects (for an
    authorization server that approves without a person: tests, automated clients)."""
    status, headers, _ = await _http("GET", url, follow=False)
    location = headers.get("location")
    if status not in (301, 302, 303, 307, 308) or not location:
        raise OAuthError(f"the authorization endpoint answered {status} without a redirect")
    return urllib.parse.urljoin(url, location)


# -- the flow -------------------------------------------------------------------------------


class OAuthFlow:
    """Obtains and renews access tokens for one MCP server (module docstring).

    redirect_uri: where the authorization server sends the user agent back;
    authorize: ``await authorize(authorization_url)`` -> the URL it was redirected to;
    client_id / client_secret: a pre-registered client; client_metadata_url: this client's
    Client ID Metadata Document (an https URL), used as client id where supported;
    client_name: for dynamic registration; scopes: asked for when neither the challenge
    nor the resource names any.
    """

    def __init__(self, *, redirect_uri: str, authorize: Authorize, client_name: str = "mcpfast",
                 client_id: Optional[str] = None, client_secret: Optional[str] = None,
                 client_metadata_url: Optional[str] = None, scopes: Optional[str] = None) -> None:
        if not callable(authorize):
            raise TypeError("authorize must be an async function: authorize(url) -> redirect URL")
        self.redirect_uri = redirect_uri
        self.authorize = authorize
        self.client_name = client_name
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.scopes = scopes
        self.auth_method: Optional[str] = None
        self.access_token: Optional[str] = None
        self.refresh_token: Optional[str] = None
        self.expires_at: Optional[float] = None
        self.granted_scope: Optional[str] = None
        self._token_endpoint: Optional[str] = None
        self._resource: Optional[str] = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"<OAuthFlow client_id={self.client_id!r} token={'yes' if self.access_token else 'no'}>"

    # -- HTTPAuth ------------------------------------------------------------------------

    async def authorization(self) -> Optional[str]:
        if self.access_token is None:
            return None
        if self.expires_at is not None and time.time() > self.expires_at - 30 and self.refresh_token:
            async with self._lock:
                if time.time() > (self.expires_at or 0) - 30:
                    await self._refresh()
        return f"Bearer {self.access_token}" if self.access_token else None

    async def unauthorized(self, refusal: Unauthorized) -> bool:
        challenge = parse_challenge(refusal.challenge)
        if refusal.status == 403 and challenge.get("error") != "insufficient_scope":
            return False
        async with self._lock:
            if refusal.status == 401 and self.refresh_token and challenge.get("error") != "insufficient_scope":
                try:
                    await self._refresh()
                    return True
                except OAuthError:
                    pass
            await self._run(refusal.url, challenge, step_up=refusal.status == 403)
        return True

    # -- steps ---------------------------------------------------------------------------

    async def _run(self, mcp_url: str, challenge: dict[str, str], step_up: bool) -> None:
        _, resource_metadata = await _json_at(resource_metadata_urls(mcp_url, challenge.get("resource_metadata")))
        if resource_metadata is not None:
            servers = resource_metadata.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
                raise OAuthError("the protected resource metadata names no authorization server")
            issuer = servers[0]
            named = resource_metadata.get("resource")
            resource: str = named if isinstance(named, str) else mcp_url
        else:
            issuer, resource = _origin(mcp_url), mcp_url  # 2025-03-26: the server is its own
        _, metadata = await _json_at(authorization_server_metadata_urls(issuer))
        if metadata is None:
            if resource_metadata is not None:
                raise OAuthError(f"no authorization server metadata found for {issuer}")
            origin = _origin(issuer)
            metadata = {"authorization_endpoint": f"{origin}/authorize", "token_endpoint": f"{origin}/token",
                        "registration_endpoint": f"{origin}/register"}
        elif "S256" not in (metadata.get("code_challenge_methods_supported") or []):
            raise OAuthError(f"the authorization server {issuer} does not advertise PKCE S256 support")
        for field in ("authorization_endpoint", "token_endpoint"):
            if not isinstance(metadata.get(field), str):
                raise OAuthError(f"the authorization server metadata has no {field}")
        await self._client(metadata)
        scope = challenge.get("scope")
        if scope is None and resource_metadata is not None:
            supported = resource_metadata.get("scopes_supported")
            if isinstance(supported, list) and supported:
                scope = " ".join(str(s) for s in supported)
        if scope is None:
            scope = self.scopes
        if step_up and self.granted_scope and scope:
            scope = " ".join(dict.fromkeys(self.granted_scope.split() + scope.split()))
        code, verifier = await self._authorization_code(metadata["authorization_endpoint"], scope, resource)
        self._token_endpoint = metadata["token_endpoint"]
        self._resource = resource
        await self._token({"grant_type": "authorization_code", "code": code,
                           "redirect_uri": self.redirect_uri, "code_verifier": verifier}, scope)

    async def _client(self, metadata: dict[str, Any]) -> None:
        methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if self.client_id is not None and self.auth_method is not None:
            return  # registered already
        if self.client_id is not None:
            if self.client_secret is None:
                self.auth_method = "none"
            else:
                self.auth_method = next((m for m in methods if m in ("client_secret_basic", "client_secret_post")),
                                        "client_secret_basic")
            return
        if self.client_metadata_url and metadata.get("client_id_metadata_document_supported"):
            self.client_id, self.auth_method = self.client_metadata_url, "none"
            return
        endpoint = metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise OAuthError("no client id: give client_id, or use an authorization server with "
                             "dynamic registration or Client ID Metadata Documents")
        wanted = next((m for m in methods if m in ("client_secret_basic", "client_secret_post", "none")),
                      "client_secret_basic")
        status, _, payload = await _http("POST", endpoint, body={
            "client_name": self.client_name, "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": wanted})
        if status not in (200, 201):
            raise OAuthError(f"dynamic client registration failed: {status} {payload[:200]!r}")
        registered = json.loads(payload)
        self.client_id = registered.get("client_id")
        if not isinstance(self.client_id, str):
            raise OAuthError("dynamic client registration returned no client_id")
        self.client_secret = registered.get("client_secret")
        self.auth_method = registered.get("token_endpoint_auth_method") or (
            wanted if self.client_secret else "none")

    async def _authorization_code(self, endpoint: str, scope: Optional[str],
                                  resource: str) -> tuple[str, str]:
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query = {"response_type": "code", "client_id": self.client_id or "", "redirect_uri": self.redirect_uri,
                 "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
                 "resource": resource}
        if scope:
            query["scope"] = scope
        separator = "&" if urllib.parse.urlsplit(endpoint).query else "?"
        redirected = await self.authorize(endpoint + separator + urllib.parse.urlencode(query))
        answer = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirected).query))
        if "error" in answer:
            raise OAuthError(f"authorization refused: {answer['error']} {answer.get('error_description', '')}".strip())
        if answer.get("state") != state:
            raise OAuthError("the authorization response's state does not match the request's")
        code = answer.get("code")
        if not code:
            raise OAuthError("the authorization response has no code")
        return code, verifier

    async def _token(self, grant: dict[str, str], scope: Optional[str]) -> None:
        assert self._token_endpoint is not None
        form = dict(grant)
        if self._resource:
            form["resource"] = self._resource
        headers: dict[str, str] = {}
        if self.auth_method == "client_secret_basic" and self.client_secret is not None:
            quote = urllib.parse.quote
            pair = f"{quote(self.client_id or '', safe='')}:{quote(self.client_secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        else:
            form["client_id"] = self.client_id or ""
            if self.auth_method == "client_secret_post" and self.client_secret is not None:
                form["client_secret"] = self.client_secret
        status, _, payload = await _http("POST", self._token_endpoint, form=form, headers=headers)
        try:
            tokens = json.loads(payload)
        except ValueError:
            tokens = {}
        if status != 200 or not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
            raise OAuthError(f"the token endpoint answered {status}: {payload[:200]!r}")
        self.access_token = tokens["access_token"]
        self.refresh_token = tokens.get("refresh_token") or self.refresh_token
        expires = tokens.get("expires_in")
        self.expires_at = time.time() + float(expires) if isinstance(expires, (int, float)) else None
        self.granted_scope = tokens.get("scope") or scope or self.granted_scope

    async def _refresh(self) -> None:
        if not self.refresh_token or self._token_endpoint is None:
            raise OAuthError("no refresh token")
        await self._token({"grant_type": "refresh_token", "refresh_token": self.refresh_token},
                          self.granted_scope)
