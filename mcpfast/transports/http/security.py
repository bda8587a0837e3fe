"""DNS-rebinding protection: the Host and Origin headers checked against allow-lists.

A browser page from another site can reach a server bound to 127.0.0.1 through a DNS name
it controls (DNS rebinding) or by posting cross-origin. A server checks that ``Host`` names
itself and that ``Origin``, when present, is one it trusts: a bad Host is answered 421
(Misdirected Request), a bad Origin 403. A request without Origin (every non-browser
client) passes the Origin check.

Patterns: ``"localhost:*"`` allows any port of that host, ``"example.com:8443"`` one port,
``"example.com"`` only a Host header without a port. Origins are the same with their
scheme: ``"http://localhost:*"``.

``HostPolicy.for_bind(host, port)``: on for a loopback bind (any address of 127.0.0.0/8,
::1, localhost), allowing exactly the loopback names and the bound address; off otherwise
(a server bound to a real interface is named by whatever hostname its deployment uses:
give ``allowed_hosts`` for it).
"""

from __future__ import annotations

import ipaddress
from typing import Any, Iterable, Optional

from mcpfast._bounded_memo import remember

__all__ = ["HostPolicy", "LOOPBACK_HOSTS", "is_loopback"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# Verdicts kept per policy, by (Host, Origin) as sent.
_VERDICTS_KEPT = 256
# What a verdict lookup answers for values never judged (a kept verdict may be None).
_UNJUDGED: Any = object()


def is_loopback(host: str) -> bool:
    """Whether a bind address is loopback: localhost, ::1 or any of 127.0.0.0/8."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def _matches(value: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if value == base or (value.startswith(base + ":") and value[len(base) + 1:].isdigit()):
                return True
        elif value == pattern:
            return True
    return False


class HostPolicy:
    """Allowed Host and Origin values (module docstring); ``enabled=False`` checks nothing."""

    __slots__ = ("enabled", "allowed_hosts", "allowed_origins", "_verdicts")

    def __init__(self, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = (),
                 *, enabled: bool = True) -> None:
        for name, values in (("allowed_hosts", allowed_hosts), ("allowed_origins", allowed_origins)):
            if isinstance(values, str):
                raise TypeError(f"{name} must be a list of patterns, not a str")
        self.enabled = bool(enabled)
        self.allowed_hosts = tuple(str(h).lower() for h in allowed_hosts)
        self.allowed_origins = tuple(str(o).lower().rstrip("/") for o in allowed_origins)
        # Verdicts by (Host, Origin): clients send the same pair on every request. Bounded,
        # since the values come from the network.
        self._verdicts: dict[tuple[Optional[str], Optional[str]], Optional[tuple[int, str]]] = {}

    @classmethod
    def for_bind(cls, host: str, *, extra_hosts: Iterable[str] = (),
                 extra_origins: Iterable[str] = ()) -> HostPolicy:
        """On for a loopback bind (loopback names and the bound address, any port, plus
        the extras), else off unless extras are given (then exactly those)."""
        extra_hosts, extra_origins = tuple(extra_hosts), tuple(extra_origins)
        if is_loopback(host):
            bound = f"[{host.strip('[]')}]" if ":" in host else host.lower()
            names = tuple(dict.fromkeys(("127.0.0.1", "localhost", "[::1]", bound)))
            return cls((*(f"{n}:*" for n in names), *extra_hosts),
                       (*(f"{s}://{n}:*" for s in ("http", "https") for n in names), *extra_origins))
        if extra_hosts or extra_origins:
            return cls(extra_hosts, extra_origins)
        return cls(enabled=False)

    def check(self, host: Optional[str], origin: Optional[str]) -> Optional[tuple[int, str]]:
        """None when allowed, else (HTTP status, message)."""
        if not self.enabled:
            return None
        key = (host, origin)
        # One lookup: a kept verdict is None (allowed) or a tuple, never _UNJUDGED.
        verdict = self._verdicts.get(key, _UNJUDGED)
        if verdict is not _UNJUDGED:
            return verdict
        return remember(self._verdicts, key, self._check(host, origin), _VERDICTS_KEPT)

    def _check(self, host: Optional[str], origin: Optional[str]) -> Optional[tuple[int, str]]:
        if host is None or not _matches(host.lower(), self.allowed_hosts):
            return 421, (
                f"Misdirected request: Host {host!r} is not allowed (DNS-rebinding protection). "
                f"Serving under another name? Allow it: allowed_hosts=[...] "
                f"(mcpfast run: --allow-host NAME)"
            )
        if origin is not None and not _matches(origin.lower().rstrip("/"), self.allowed_origins):
            return 403, (
                f"Forbidden: Origin {origin!r} is not allowed. Allow it: allowed_origins=[...] "
                f"(mcpfast run: --allow-origin URL)"
            )
        return None

    def __repr__(self) -> str:
        if not self.enabled:
            return "<HostPolicy off>"
        return f"<HostPolicy hosts={list(self.allowed_hosts)} origins={list(self.allowed_origins)}>"
