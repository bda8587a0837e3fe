"""A JSON Web Key Set fetched from the authorization server and kept: :class:`JWKSCache`.

The set is fetched when first needed and kept for ``max_age`` seconds (the answer's
``Cache-Control: max-age`` when shorter); after that the next token that needs a key fetches
it again. A token naming a ``kid`` the set does not hold (the provider rotated its keys)
fetches it again at once -- but never sooner than ``min_interval`` seconds after the last
fetch, so a stream of tokens with made-up kids cannot make the server hammer the provider.
Concurrent needs share one fetch. When a fetch fails the keys already held are kept (and
used past their age) and the failure is logged; with no key held at all it is raised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable, Optional

from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.fetch import JSONAnswer, check_url, fetch_json
from mcpfast.auth.keys import PublicKey, jwk_public_key

__all__ = ["JWKSCache"]

_LOGGER = logging.getLogger("mcpfast.auth")

Fetch = Callable[[str], Awaitable[JSONAnswer]]


class _Keys:
    """One fetched set: kid -> (public key, the JWK's own ``alg`` or None)."""

    __slots__ = ("by_kid", "unnamed")

    def __init__(self, document: dict[str, Any]) -> None:
        self.by_kid: dict[Optional[str], tuple[PublicKey, Optional[str]]] = {}
        members = document.get("keys")
        for jwk in members if isinstance(members, list) else ():
            key = jwk_public_key(jwk)
            if key is None:
                continue
            kid = jwk.get("kid")
            alg = jwk.get("alg")
            self.by_kid[kid if isinstance(kid, str) else None] = (key, alg if isinstance(alg, str) else None)
        # A token without a kid may use the set's only key.
        self.unnamed = next(iter(self.by_kid.values())) if len(self.by_kid) == 1 else None

    def get(self, kid: Optional[str]) -> Optional[tuple[PublicKey, Optional[str]]]:
        return self.unnamed if kid is None else self.by_kid.get(kid)


class JWKSCache:
    """The key set at ``url``, fetched, kept and refreshed within bounds (module docstring).

    ``min_interval``: the fewest seconds between two fetches (30); ``max_age``: how long a
    set is used before it is fetched again (600); ``timeout``: of one fetch (5 s);
    ``clock``: seconds, monotonic.
    """

    def __init__(self, url: str, *, min_interval: float = 30.0, max_age: float = 600.0,
                 timeout: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = check_url(url, "jwks_url")
        if not 0 <= min_interval <= max_age:
            raise ValueError(f"need 0 <= min_interval <= max_age, got {min_interval!r}, {max_age!r}")
        self.min_interval = float(min_interval)
        self.max_age = float(max_age)
        self.timeout = float(timeout)
        self.clock = clock
        self.fetches = 0  # how many fetches were made (for tests and metrics)
        self._keys: Optional[_Keys] = None
        self._fresh_until = float("-inf")
        self._last_fetch = float("-inf")
        self._pending: Optional[asyncio.Future[None]] = None

    def cached(self, kid: Optional[str]) -> Optional[tuple[PublicKey, Optional[str]]]:
        """The key named ``kid`` if the set held is fresh and has it, else None (without I/O)."""
        keys = self._keys
        if keys is None or self.clock() >= self._fresh_until:
            return None
        return keys.get(kid)

    async def key(self, kid: Optional[str]) -> tuple[PublicKey, Optional[str]]:
        """The key named ``kid`` (fetching the set within the bounds); InvalidToken when the
        set does not hold it."""
        found = self.cached(kid)
        if found is not None:
            return found
        now = self.clock()
        if now - self._last_fetch >= self.min_interval:
            await self._refresh()
        keys = self._keys
        found = keys.get(kid) if keys is not None else None
        if found is None:
            named = f" (kid {kid!r})" if kid is not None and len(kid) <= 64 else ""
            raise InvalidToken(f"the access token is signed with a key this server does not know{named}")
        return found

    async def _refresh(self) -> None:
        pending = self._pending
        if pending is None:
            pending = self._pending = asyncio.ensure_future(self._fetch())
            pending.add_done_callback(self._fetched)
        await asyncio.shield(pending)

    def _fetched(self, future: asyncio.Future[None]) -> None:
        self._pending = None
        if not future.cancelled():
            future.exception()  # seen: awaiting callers got it

    async def _fetch(self) -> None:
        self._last_fetch = self.clock()
        self.fetches += 1
        try:
            answer = await fetch_json(self.url, timeout=self.timeout)
        except Exception as exc:
            if self._keys is None:
                raise
            _LOGGER.warning("fetching the JWKS at %s failed (keeping the keys held): %s", self.url, exc)
            return
        keys = _Keys(answer.document)
        if not keys.by_kid and self._keys is not None:
            _LOGGER.warning("the JWKS at %s holds no usable signing key (keeping the keys held)", self.url)
            return
        self._keys = keys
        age = self.max_age if answer.max_age is None else min(self.max_age, answer.max_age)
        # Never fresher than the floor between fetches allows us to re-check.
        self._fresh_until = self._last_fetch + max(age, self.min_interval)

    def __repr__(self) -> str:
        return f"<JWKSCache {self.url}>"
