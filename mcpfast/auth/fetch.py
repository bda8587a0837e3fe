"""Small bounded HTTP exchanges of the verifiers: a JWKS document, an introspection answer.

The verifiers sit below the transports (they may not import mcpfast's HTTP client), and
they talk to an authorization server only now and then (a key set every few minutes, an
introspection per uncached token), so the standard library's client, run in a worker
thread, does: each exchange has a timeout and a bound on the answer's size, and the URL
must be ``https`` (``http`` only to a loopback host, as in tests and sidecars).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import urllib.error
import urllib.request
from typing import Any, Mapping, Optional
from urllib.parse import urlsplit

__all__ = ["FetchError", "JSONAnswer", "check_url", "fetch_json"]

#: The largest answer read (a JWKS of a few dozen keys is well under it).
DEFAULT_MAX_BYTES = 1 << 20


class FetchError(Exception):
    """An exchange with the authorization server failed (unreachable, not 200, not JSON).
    ``status``: the HTTP status when one was answered; ``error``: the OAuth ``error`` code
    of an error answer (RFC 6749 section 5.2), when it had one."""

    def __init__(self, message: str, status: Optional[int] = None, error: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error


class JSONAnswer:
    """A JSON object answered, and the seconds it may be cached (``max-age``, else None)."""

    __slots__ = ("document", "max_age")

    def __init__(self, document: dict[str, Any], max_age: Optional[float]) -> None:
        self.document = document
        self.max_age = max_age


def check_url(url: str, label: str) -> str:
    """``url`` if it is https, or http to a loopback host; ValueError naming ``label`` else."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and host:
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if loopback:
            return url
    raise ValueError(f"{label} must be an https URL (http only to a loopback host), got {url!r}")


def _max_age(cache_control: Optional[str]) -> Optional[float]:
    for directive in (cache_control or "").split(","):
        name, _, value = directive.strip().partition("=")
        if name.lower() == "no-store" or name.lower() == "no-cache":
            return 0.0
        if name.lower() == "max-age":
            try:
                return max(0.0, float(value.strip('"')))
            except ValueError:
                return None
    return None


def _exchange(url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: float,
              max_bytes: int) -> JSONAnswer:
    request = urllib.request.Request(url, data=body, headers={"accept": "application/json", **headers},
                                     method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 -- checked URL
            raw = response.read(max_bytes + 1)
            cache_control = response.headers.get("cache-control")
    except urllib.error.HTTPError as exc:
        # The start of the answer says why (an OAuth error object, typically).
        try:
            detail = exc.read(300).decode("utf-8", "replace").strip()
        except OSError:
            detail = ""
        error = None
        try:
            parsed = json.loads(detail)
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
                error = parsed["error"][:64]
        except ValueError:
            pass
        raise FetchError(f"{url} answered HTTP {exc.code}" + (f": {detail}" if detail else ""),
                         exc.code, error) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise FetchError(f"{url} could not be reached: {exc}") from None
    if len(raw) > max_bytes:
        raise FetchError(f"{url} answered more than {max_bytes} bytes")
    try:
        document = json.loads(raw)
    except ValueError:
        raise FetchError(f"{url} answered something that is not JSON") from None
    if not isinstance(document, dict):
        raise FetchError(f"{url} answered JSON that is not an object")
    return JSONAnswer(document, _max_age(cache_control))


async def fetch_json(url: str, *, body: Optional[bytes] = None,
                     headers: Mapping[str, str] = {},  # noqa: B006 -- never mutated
                     timeout: float = 5.0, max_bytes: int = DEFAULT_MAX_BYTES) -> JSONAnswer:
    """GET ``url`` (POST ``body`` when given) and answer its JSON object; FetchError else."""
    return await asyncio.to_thread(_exchange, url, body, dict(headers), timeout, max_bytes)
