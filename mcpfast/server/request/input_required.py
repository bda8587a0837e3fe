"""Multi round-trip requests (2026-07-28): ``ctx.elicit`` / ``sample`` / ``list_roots`` as
an InputRequiredResult and a retry.

Under 2026-07-28 a server never sends requests to the client. A ``tools/call``,
``prompts/get`` or ``resources/read`` whose handler needs the client's input is answered
with an InputRequiredResult -- ``inputRequests`` (what to ask, by key) and a
``requestState`` -- and the client retries the same request with ``inputResponses`` (the
answers, by key) and the ``requestState`` echoed. The same handler code serves both eras:

- the handler runs from the start on every attempt; each ``ctx.elicit`` / ``sample`` /
  ``list_roots`` it makes has a key (``input_key=`` or ``input_1``, ``input_2``, ... in
  call order, stable across attempts since the handler is the same code);
- a key answered by this attempt's ``inputResponses`` or by an earlier round (carried in
  ``requestState``) returns that answer, as a client's response would;
- a key not answered yet is recorded and ends the handler with :class:`InputRequired`
  (a BaseException, so that ``except Exception`` in user code does not swallow it) after
  one turn of the event loop, so that requests made side by side (``asyncio.gather``) are
  all asked in the same round; the request is then answered with the InputRequiredResult.

``requestState`` is the answers so far plus what binds them to this request: the method,
a digest of its params (without ``_meta``, ``inputResponses``, ``requestState``), the
authenticated subject (when the transport authenticates) and an expiry, serialized as
JSON and signed with HMAC-SHA256 under the server's secret. A state that fails any check
is refused with -32602, since the client controls it. Serving several processes: give
them the same ``Server(request_state_secret=...)`` or the same ``MCPFAST_SECRET``
(:mod:`mcpfast.server.shared_secret`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Any, Optional

from mcpfast.jsonrpc.errors import InvalidParams
from mcpfast.server.shared_secret import derived_key

if TYPE_CHECKING:
    from mcpfast.server.core import ConnectionHandle

__all__ = ["InputRequired", "InputRequiredBackChannel", "RequestStateCodec", "input_channel",
           "input_key"]

# Seconds a requestState stays valid unless the server says otherwise.
DEFAULT_REQUEST_STATE_TTL = 600.0
_STATE_VERSION = 1
# Params that are not part of what a retry must repeat unchanged.
_NOT_BOUND = frozenset({"_meta", "inputResponses", "requestState"})


class InputRequired(BaseException):
    """Ends a handler that needs the client's input (module docstring). Not an error: the
    request is answered with the InputRequiredResult of ``channel``."""

    def __init__(self, channel: InputRequiredBackChannel) -> None:
        super().__init__("the client's input is required")
        self.channel = channel

    def result(self) -> dict[str, Any]:
        return self.channel.input_required_result()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def params_digest(params: Any) -> str:
    """A digest of the params a retry must repeat (canonical JSON, SHA-256)."""
    bound = {k: v for k, v in params.items() if k not in _NOT_BOUND} if type(params) is dict else params
    canonical = json.dumps(bound, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class RequestStateCodec:
    """Signs and checks requestState values (HMAC-SHA256 over a JSON payload)."""

    __slots__ = ("_secret", "ttl")

    def __init__(self, secret: Optional[bytes] = None, ttl: float = DEFAULT_REQUEST_STATE_TTL) -> None:
        if secret is not None and (not isinstance(secret, bytes) or len(secret) < 16):
            raise ValueError("request_state_secret must be bytes, at least 16 of them")
        if not ttl > 0:
            raise ValueError(f"request_state_ttl must be > 0 seconds, got {ttl!r}")
        # The deployment's key unless given (MCPFAST_SECRET: every process of a deployment
        # then takes the others' requestState).
        self._secret = secret if secret is not None else derived_key("request-state")
        self.ttl = ttl

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def encode(self, method: str, digest: str, principal: Optional[str],
               answers: dict[str, Any], now: Optional[float] = None) -> str:
        expires = (time.time() if now is None else now) + self.ttl
        payload = json.dumps({"v": _STATE_VERSION, "m": method, "d": digest, "p": principal,
                              "e": expires, "a": answers}, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def decode(self, state: Any, method: str, digest: str, principal: Optional[str],
               now: Optional[float] = None) -> dict[str, Any]:
        """The answers a valid state carries; InvalidParams (-32602) for any other."""
        if type(state) is not str:
            raise _refused("requestState must be a string")
        encoded, _, mac = state.partition(".")
        try:
            payload = _unb64(encoded)
            signature = _unb64(mac)
        except (ValueError, TypeError):
            raise _refused("requestState is malformed") from None
        if not hmac.compare_digest(signature, self._mac(payload)):
            raise _refused("requestState failed its integrity check")
        try:
            fields = json.loads(payload)
        except ValueError:
            raise _refused("requestState is malformed") from None
        if type(fields) is not dict or fields.get("v") != _STATE_VERSION:
            raise _refused("requestState is not from this server")
        if fields.get("m") != method or fields.get("d") != digest:
            raise _refused("requestState belongs to another request")
        if fields.get("p") != principal:
            raise _refused("requestState belongs to another client")
        expires = fields.get("e")
        if not isinstance(expires, (int, float)) or (time.time() if now is None else now) > expires:
            raise _refused("requestState has expired; send the request again without it")
        answers = fields.get("a")
        return answers if type(answers) is dict else {}


def input_key(count: int, key: Optional[str]) -> str:
    """The key of a handler's ``count``-th question: ``input_key=`` when given (a non-empty
    str), else ``input_<count>``."""
    if key is None:
        return f"input_{count}"
    if type(key) is not str or not key:
        raise ValueError(f"input_key must be a non-empty str, got {key!r}")
    return key


def _refused(reason: str) -> InvalidParams:
    return InvalidParams(f"Invalid params: {reason}", {"param": "requestState"})


def input_channel(connection: ConnectionHandle, method: str,
                  params: dict[str, Any]) -> InputRequiredBackChannel:
    """The back channel of a 2026-07-28 request for ``method`` that came in on
    ``connection`` (its server's codec, the caller's subject when authenticated)."""
    auth = connection.auth
    return InputRequiredBackChannel(connection.server.request_state_codec, method, params,
                                    auth.subject if auth is not None else None)


class InputRequiredBackChannel:
    """The back channel of a 2026-07-28 request that may ask for input (module docstring).

    Made for every such request, most of which never ask: the digest of the params is
    computed only when a requestState must be checked or issued (so it covers the params
    as they are then: a handler that changes its argument dicts in place before asking
    binds the state to the changed ones, and the client's retry is refused)."""

    __slots__ = ("codec", "method", "params", "_digest", "principal", "answers", "pending", "used",
                 "_count")

    def __init__(self, codec: RequestStateCodec, method: str, params: dict[str, Any],
                 principal: Optional[str]) -> None:
        self.codec = codec
        self.method = method
        self.params = params
        self._digest: Optional[str] = None
        self.principal = principal
        answers: dict[str, Any] = {}
        state = params.get("requestState")
        if state is not None:
            answers.update(codec.decode(state, method, self.digest, principal))
        responses = params.get("inputResponses")
        if responses is not None:
            if type(responses) is not dict or any(type(v) is not dict for v in responses.values()):
                raise InvalidParams("Invalid params: inputResponses must map keys to result objects",
                                    {"param": "inputResponses"})
            answers.update(responses)
        self.answers = answers
        self.pending: dict[str, dict[str, Any]] = {}
        self.used: set[str] = set()
        self._count = 0

    @property
    def digest(self) -> str:
        """The digest of the request's params (what its requestState is bound to)."""
        digest = self._digest
        if digest is None:
            digest = self._digest = params_digest(self.params)
        return digest

    async def request(self, origin: Any, method: str, params: Any = None, *,
                      timeout: Optional[float] = None, key: Optional[str] = None) -> Any:
        self._count += 1
        key = input_key(self._count, key)
        answer = self.answers.get(key)
        if answer is not None:
            self.used.add(key)
            return answer
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = params
        self.pending[key] = request
        # One turn of the loop first: requests made side by side join this round.
        await asyncio.sleep(0)
        raise InputRequired(self)

    def input_required_result(self) -> dict[str, Any]:
        """The InputRequiredResult asking for what is pending, with the state so far."""
        # Only the answers the handler used travel on; keys it never asked for are dropped.
        kept = {k: self.answers[k] for k in self.used}
        return {
            "resultType": "input_required",
            "inputRequests": dict(self.pending),
            "requestState": self.codec.encode(self.method, self.digest, self.principal, kept),
        }
