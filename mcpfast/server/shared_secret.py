"""The secret a server's signed values are keyed with: pagination cursors and the
requestState of 2026-07-28 InputRequiredResults.

A client may send a cursor or a requestState back to any process of a deployment (several
workers behind one port, several hosts behind a load balancer), so every process must key
them alike. ``MCPFAST_SECRET`` in the environment gives that secret (at least 32 hex digits,
or any text of at least 16 bytes); ``mcpfast run --workers N`` sets one for its workers when
it is not set. Without it each process draws its own random secret, which serves one
process. Each use gets its own key derived from it (:func:`derived_key`), so that a value
signed for one purpose is never valid for another.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from typing import Optional

__all__ = ["ENVIRONMENT_VARIABLE", "deployment_secret", "derived_key"]

ENVIRONMENT_VARIABLE = "MCPFAST_SECRET"

_secret: Optional[bytes] = None


def _parse(text: str) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        value = text.encode("utf-8")
    if len(value) < 16:
        raise ValueError(f"{ENVIRONMENT_VARIABLE} must be at least 32 hex digits or 16 bytes of text "
                         f"(e.g. python -c 'import secrets; print(secrets.token_hex(32))')")
    return value


def deployment_secret() -> bytes:
    """``MCPFAST_SECRET`` (ValueError when too short), else a random secret of this process."""
    global _secret
    if _secret is None:
        text = os.environ.get(ENVIRONMENT_VARIABLE)
        _secret = _parse(text) if text else secrets.token_bytes(32)
    return _secret


def derived_key(purpose: str) -> bytes:
    """The key of one purpose ("cursor", "request-state", ...) under the deployment secret."""
    return hmac.new(deployment_secret(), b"mcpfast\x00" + purpose.encode(), hashlib.sha256).digest()
