"""API keys for machine clients: :class:`APIKeys`, beside OAuth or instead of it.

    keys = APIKeys.from_file("/etc/mcp/api-keys")   # or APIKeys([APIKey(...), ...])
    auth = BearerAuth(verifier, resource=..., authorization_servers=[...], api_keys=keys)

A client sends its key in the ``X-API-Key`` header (``BearerAuth(api_key_header=...)``
names another). Keys are kept *hashed*: the server holds ``sha256:<hex>`` of each key,
never the key, so a leaked key file or memory dump gives nobody a working key. A key is
random and long (:func:`new_key`: 256 bits), so a fast hash is enough -- a slow password
hash guards guessable secrets, which these are not. The presented key's hash is compared
with every stored one in constant time (``hmac.compare_digest``, no early exit), so timing
says nothing about which bytes matched.

A key file has one key a line: ``sha256:<hex> <subject> [scope,scope,...]`` (``#`` starts
a comment). ``python -m mcpfast.auth.api_keys SUBJECT [SCOPE ...]`` makes a new key:
it prints the key (give it to the client) and its line (put it in the file).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from mcpfast.auth.errors import InvalidToken
from mcpfast.auth.token import AccessToken

__all__ = ["APIKey", "APIKeys", "hash_key", "new_key"]

_PREFIX = "sha256:"


def hash_key(key: str) -> str:
    """The stored form of ``key``: ``sha256:<hex>``."""
    return _PREFIX + hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    """A new random API key (256 bits, URL-safe text, prefixed ``mcpk_`` so scanners spot it)."""
    return "mcpk_" + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class APIKey:
    """One accepted key: its ``digest`` (:func:`hash_key`), who it stands for (``subject``)
    and what it grants (``scopes``)."""

    digest: str
    subject: str
    scopes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        hexpart = self.digest[len(_PREFIX):]
        if not self.digest.startswith(_PREFIX) or len(hexpart) != 64 or \
                not all(c in "0123456789abcdef" for c in hexpart):
            raise ValueError("an API key's digest is 'sha256:' and 64 lower-case hex digits (hash_key(key))")
        if not isinstance(self.subject, str) or not self.subject:
            raise ValueError("an API key needs a subject")
        object.__setattr__(self, "scopes", frozenset(self.scopes))


class APIKeys:
    """The accepted API keys (module docstring); ``verify(key)`` -> AccessToken."""

    def __init__(self, keys: Iterable[APIKey]) -> None:
        self._keys: tuple[tuple[bytes, APIKey], ...] = tuple(
            (bytes.fromhex(key.digest[len(_PREFIX):]), key) for key in keys)
        if not self._keys:
            raise ValueError("APIKeys needs at least one key")

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> APIKeys:
        """The keys of a key file (module docstring); ValueError naming the bad line."""
        keys = []
        text = Path(path).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) not in (2, 3):
                raise ValueError(f"{path}:{number}: expected 'sha256:<hex> SUBJECT [SCOPE,SCOPE]'")
            scopes = fields[2].split(",") if len(fields) == 3 else ()
            try:
                keys.append(APIKey(fields[0], fields[1], frozenset(s for s in scopes if s)))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
        return cls(keys)

    def verify(self, key: str) -> AccessToken:
        """The AccessToken of ``key``; InvalidToken when it is not one of the keys."""
        presented = hashlib.sha256(key.encode()).digest()
        found: Optional[APIKey] = None
        for digest, candidate in self._keys:
            # Every key compared, whatever matched: the time taken does not depend on it.
            if hmac.compare_digest(digest, presented):
                found = candidate
        if found is None:
            raise InvalidToken("the API key is not valid")
        return AccessToken(found.subject, found.scopes, client_id=found.subject, token=key)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"<APIKeys {len(self._keys)}>"


def main(argv: Sequence[str]) -> int:
    """``python -m mcpfast.auth.api_keys SUBJECT [SCOPE ...]``: a new key and its file line."""
    if not argv or argv[0].startswith("-"):
        print("usage: python -m mcpfast.auth.api_keys SUBJECT [SCOPE ...]", file=sys.stderr)
        return 2
    key = new_key()
    line = f"{hash_key(key)} {argv[0]}" + (f" {','.join(argv[1:])}" if len(argv) > 1 else "")
    print(f"key (give it to the client, it is not stored): {key}")
    print(f"line for the key file: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
