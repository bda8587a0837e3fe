"""The stateless era (MCP 2026-07-28) on any connection: per-request state, discovery,
result shapes.

Under 2026-07-28 there is no handshake: every request carries its protocol version and
the client's capabilities in ``params._meta`` (keys in :mod:`mcpfast.protocol.meta_keys`).
:class:`StatelessEra` is the server's :class:`~mcpfast.server.request.state_source.StateSource`
for such requests, so both eras are served on the same connection or endpoint: a request
with ``_meta["io.modelcontextprotocol/protocolVersion"]`` gets a ProtocolState built from
its ``_meta``; any other goes on with the connection's handshake state.

For a claimed request:

- ``_meta`` is checked: a version that is not a string -> -32602; a version not spoken
  here -> -32022 with ``data: {supported, requested}``; no ``clientCapabilities`` object
  -> -32602; ``clientInfo`` is optional (an object when given); ``logLevel`` optional
  (no ``notifications/message`` for the request without it; an unknown level -> -32602).
- Methods the revision removed (``initialize``, ``ping``, ``logging/setLevel``,
  ``resources/subscribe``, ``resources/unsubscribe``; ``tasks/result`` and ``tasks/list``,
  which the tasks extension dropped) -> -32601.
- A tool that needs a capability the request did not declare (``ctx.sample`` without
  ``sampling``, say) answers -32021 with ``data.requiredCapabilities`` instead of a tool
  error.
- Its result gets ``resultType: "complete"`` and the server's Implementation in
  ``_meta["io.modelcontextprotocol/serverInfo"]``; the cacheable ones (``server/discover``,
  the four lists, ``resources/read``) get ``ttlMs`` and ``cacheScope`` from the server's
  :class:`CachePolicy`. Results are never changed in place (list results are cached
  across requests): the commonest, a dict with neither field, is written with them added
  (:class:`mcpfast._core.encode.Extension`), the others are copied.
- ``tools/call``, ``prompts/get`` and ``resources/read`` reach the client through
  InputRequiredResult round trips (:mod:`mcpfast.server.request.input_required`): a handler's
  ``ctx.sample`` / ``elicit`` / ``list_roots`` ends the attempt with the question and the
  client's retry brings the answer; a malformed or tampered ``requestState`` or
  ``inputResponses`` -> -32602. Other methods have no way to the client:
  those calls raise BackChannelUnavailable at once.

``server/discover`` (:func:`discover_result`) answers the versions, capabilities and
instructions of the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal, Optional

from mcpfast._bounded_memo import remember
from mcpfast._core.encode import Extension
from mcpfast.jsonrpc.errors import InvalidParams, JSONRPCError, MethodNotFound
from mcpfast.protocol import meta_keys, methods
from mcpfast.protocol.error_codes import UNSUPPORTED_PROTOCOL_VERSION
from mcpfast.protocol.features import VersionFeatures, features_for
from mcpfast.protocol.log_levels import LEVELS, level_index
from mcpfast.protocol.versions import SPOKEN_VERSIONS, STATELESS_VERSIONS
from mcpfast.server.request.back_channel import BackChannel, NoBackChannel
from mcpfast.server.request.input_required import input_channel
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.request.state_source import RequestState

if TYPE_CHECKING:
    from mcpfast.server.connection import ServerConnection
    from mcpfast.server.core import ServerCore

__all__ = ["CachePolicy", "StatelessEra", "discover_result"]

# Methods 2026-07-28 removed: a stateless request for them is a method not found.
REMOVED_METHODS = frozenset({methods.INITIALIZE, methods.INITIALIZED, methods.PING,
                             methods.SET_LOG_LEVEL, methods.RESOURCES_SUBSCRIBE,
                             methods.RESOURCES_UNSUBSCRIBE,
                             # the tasks extension inlines results in tasks/get, lists none
                             methods.TASKS_RESULT, methods.TASKS_LIST})
# Results that carry caching hints (CacheableResult in the schema).
CACHEABLE_METHODS = frozenset({methods.DISCOVER, methods.TOOLS_LIST, methods.PROMPTS_LIST,
                               methods.RESOURCES_LIST, methods.RESOURCE_TEMPLATES_LIST,
                               methods.RESOURCES_READ})
# A log level above every real one: the request asked for no log messages.
NO_LOGS = len(LEVELS)

_NO_BACK_CHANNEL = NoBackChannel(
    "under 2026-07-28 only tools/call, prompts/get and resources/read may ask the client "
    "for input")
# A _meta key not sent (null is sent, and refused where an object is required).
_ABSENT: Any = object()
# The requests that may be answered with an InputRequiredResult.
INPUT_METHODS = frozenset({methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ})
# Common claims kept at most (StatelessEra._claims).
_CLAIMS_KEPT = 256
_new_state = ProtocolState.__new__
_VERSION_KEY = meta_keys.PROTOCOL_VERSION
_CAPABILITIES_KEY = meta_keys.CLIENT_CAPABILITIES
_INFO_KEY = meta_keys.CLIENT_INFO
_LEVEL_KEY = meta_keys.LOG_LEVEL


class _NoneDeclared(dict[str, Any]):
    """The ``{}`` clientInfo and clientCapabilities of the state shared by the 2026-07-28
    requests that declare none (StatelessEra._states): empty for good, so that no request's
    handler changes what the others see (adding to it raises TypeError; reading it, copying
    it or encoding it is as for any empty dict)."""

    __slots__ = ()

    def _refused(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("this dict is shared by the requests that declared no value "
                        "(2026-07-28 _meta): it cannot change; copy it first")

    __setitem__ = setdefault = update = __ior__ = _refused


class CachePolicy:
    """The caching hints of cacheable results: ``ttl_ms`` (how long a client may reuse
    one, 0: re-fetch every time) and ``scope`` ("private": only for the same
    authorization context; "public": any client or shared cache may reuse it)."""

    __slots__ = ("ttl_ms", "scope")

    def __init__(self, ttl_ms: int = 0, scope: Literal["private", "public"] = "private") -> None:
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
            raise ValueError(f"ttl_ms must be an int >= 0, got {ttl_ms!r}")
        if scope not in ("private", "public"):
            raise ValueError(f"scope must be 'private' or 'public', got {scope!r}")
        self.ttl_ms = ttl_ms
        self.scope = scope

    def __repr__(self) -> str:
        return f"CachePolicy(ttl_ms={self.ttl_ms}, scope={self.scope!r})"


class StatelessEra:
    """The state source of 2026-07-28 requests (module docstring)."""

    __slots__ = ("server", "_shapes", "_states", "_claims")

    def __init__(self, server: ServerCore) -> None:
        self.server = server
        # Per version spoken: its result shapers (plain, cacheable), built once; a version
        # is a key only once it was found spoken, so the dict stays as small as the list.
        self._shapes: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}
        # The state of the requests that declare no capabilities and no clientInfo, per
        # (version, logLevel as sent): such requests share one, as the requests of a
        # handshake connection share the connection's (the others get their own, made
        # from it: _own_claim). A key is added only once its values passed the checks: at
        # most versions x (levels + 1) entries.
        self._states: dict[tuple[str, Optional[str]], ProtocolState] = {}
        # (state, back channel or None, shaper) of the common case per (version, logLevel,
        # method), once checked; cleared when _CLAIMS_KEPT is reached (never replaced:
        # see ``claims``).
        self._claims: dict[tuple[str, Optional[str], str],
                           tuple[ProtocolState, Optional[BackChannel], Callable[[Any], Any]]] = {}

    @property
    def claims(self) -> dict[tuple[str, Optional[str], str],
                             tuple[ProtocolState, Optional[BackChannel], Callable[[Any], Any]]]:
        """The claims of the common case kept so far, by (version, logLevel as sent or
        None, method): what :meth:`claim` answers for a request of that version, level
        and method whose ``_meta`` declares no capabilities and no clientInfo and whose
        params bring no ``requestState`` nor ``inputResponses`` (the one dict, cleared
        when full, never replaced: a caller may keep it and look claims up itself). A
        request declaring some gets its own state, made from the kept one."""
        return self._claims

    def _own_claim(self, claimed: tuple[ProtocolState, Optional[BackChannel], Callable[[Any], Any]],
                  client_info: Optional[dict[str, Any]], capabilities: dict[str, Any]
                  ) -> tuple[ProtocolState, Optional[BackChannel], Callable[[Any], Any]]:
        """The claim of a request whose ``_meta`` declares values, made from the kept
        claim of its version, level and method (:attr:`claims`; the values were found
        to be of the right types): the request's own state, holding the request's own
        ``client_info`` (a dict, or None when not sent: a new {}) and ``capabilities`` as
        :meth:`claim` would make it, the rest taken from the kept state. Values from the
        network are never kept; a state shared by requests would let one request's
        handler change what the others see."""
        kept = claimed[0]
        # Set as ProtocolState.__init__ sets them, without its frames.
        state = _new_state(ProtocolState)
        state.protocol_version = kept.protocol_version
        state.features = kept.features
        state.client_info = {} if client_info is None else client_info
        state.client_capabilities = capabilities
        state.log_level = kept.log_level
        state.initialized = True
        return state, claimed[1], claimed[2]

    def state_for(self, connection: ServerConnection, method: str,
                  params: Any) -> Optional[RequestState]:
        if type(params) is not dict:
            return None
        meta = params.get("_meta")
        if type(meta) is not dict or meta_keys.PROTOCOL_VERSION not in meta:
            return None
        state, back_channel, shape = self.claim(connection, method, params, meta)
        if back_channel is None:
            back_channel = input_channel(connection, method, params)
        return RequestState(state, back_channel, shape)

    def claim(self, connection: ServerConnection, method: str, params: dict[str, Any],
              meta: dict[str, Any]
              ) -> tuple[ProtocolState, Optional[BackChannel], Callable[[Any], Any]]:
        """What :meth:`state_for` says of a request whose ``params`` carry ``meta``, a
        ``_meta`` dict holding a protocol version: (state, back channel, shaper). The back
        channel is None for a request that may ask for input and brings no answers: its
        :func:`~mcpfast.server.request.input_required.input_channel` is then made on first use
        (:attr:`Context.back_channel <mcpfast.server.request.context.Context.back_channel>`), as
        most such requests never ask."""
        version = meta[_VERSION_KEY]
        capabilities = meta.get(_CAPABILITIES_KEY)
        client_info = meta.get(_INFO_KEY, _ABSENT)
        level = meta.get(_LEVEL_KEY)
        if (type(version) is str and type(capabilities) is dict
                and (client_info is _ABSENT or type(client_info) is dict)
                and (level is None or type(level) is str)):
            # The common case: what was claimed for the same version, level and method
            # before, once it passed the checks (only the types of capabilities and
            # clientInfo are checked: their values never make a claim fail).
            key = (version, level, method)
            claimed = self._claims.get(key)
            if claimed is None:
                # Bounded: method names come from the network.
                claimed = remember(self._claims, key,
                                   self._claimed(version, method, {}, {}, level, True), _CLAIMS_KEPT)
            if capabilities or (client_info is not _ABSENT and client_info):
                # Values declared (real clients send their clientInfo).
                claimed = self._own_claim(
                    claimed, None if client_info is _ABSENT else client_info, capabilities)
        else:
            claimed = self._claimed(version, method, client_info, capabilities, level, False)
        if claimed[1] is None and ("requestState" in params or "inputResponses" in params):
            # Answers brought by the request are checked now, whether or not it asks again.
            return claimed[0], input_channel(connection, method, params), claimed[2]
        return claimed

    def _claimed(self, version: Any, method: str, client_info: Any, capabilities: Any,
                 level: Any, shared: bool
                 ) -> tuple[ProtocolState, Optional[BackChannel], Callable[[Any], Any]]:
        """(state, back channel, shaper) of a request, its back channel None where the
        request may ask for input; ``shared``: the state of requests declaring nothing."""
        shape = self._checked(version, method)
        if shared:
            state = self._states.get((version, level))
            if state is None:
                state = self._states[(version, level)] = _request_state(
                    version, _NoneDeclared(), _NoneDeclared(), level)
        else:
            state = _request_state(version, client_info, capabilities, level)
        return state, None if method in INPUT_METHODS else _NO_BACK_CHANNEL, shape

    def _checked(self, version: Any, method: str) -> Callable[[Any], Any]:
        """The shaper of ``method``'s results in ``version``, after the checks of both."""
        if type(version) is not str:
            raise InvalidParams(f"_meta[{meta_keys.PROTOCOL_VERSION!r}] must be a string",
                                {"param": f"_meta.{meta_keys.PROTOCOL_VERSION}"})
        shape = self.shaper(version, method)
        if method in REMOVED_METHODS:
            raise MethodNotFound(f"Method not found: {method} does not exist in {version}",
                                 {"method": method})
        return shape

    def shaper(self, version: str, method: str) -> Callable[[Any], Any]:
        """The function that gives a result of ``method`` its 2026-07-28 fields."""
        shapes = self._shapes.get(version)
        if shapes is None:
            shapes = self._shapes_of(version)
        # Indexed by a bool: (plain, cacheable).
        return shapes[method in CACHEABLE_METHODS]

    def _shapes_of(self, version: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
        """The shapers of a version not seen yet; -32022 when it is not spoken here."""
        if version not in STATELESS_VERSIONS:
            raise JSONRPCError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {version!r} (supported: {', '.join(SPOKEN_VERSIONS)})",
                {"supported": list(SPOKEN_VERSIONS), "requested": version})
        features = features_for(version)
        shapes = self._shapes[version] = (_make_shaper(self.server, features, False),
                                          _make_shaper(self.server, features, True))
        return shapes


def _request_state(version: str, client_info: Any, capabilities: Any,
                   level: Any) -> ProtocolState:
    """The ProtocolState of a 2026-07-28 request's ``_meta`` values (version already
    checked; ``client_info`` _ABSENT when not sent); InvalidParams for malformed ones."""
    if not isinstance(capabilities, dict):
        raise InvalidParams(
            f"_meta[{meta_keys.CLIENT_CAPABILITIES!r}] is required (an object; {{}} for none)",
            {"param": f"_meta.{meta_keys.CLIENT_CAPABILITIES}"})
    if client_info is _ABSENT:
        client_info = {}
    elif not isinstance(client_info, dict):
        raise InvalidParams(f"_meta[{meta_keys.CLIENT_INFO!r}] must be an object",
                            {"param": f"_meta.{meta_keys.CLIENT_INFO}"})
    if level is None:
        log_level = NO_LOGS
    else:
        try:
            log_level = level_index(level)
        except ValueError as exc:
            raise InvalidParams(f"_meta[{meta_keys.LOG_LEVEL!r}]: {exc}",
                                {"param": f"_meta.{meta_keys.LOG_LEVEL}"}) from None
    return ProtocolState(log_level, version, client_info, capabilities)


def _make_shaper(server: ServerCore, features: VersionFeatures,
                 cacheable: bool) -> Callable[[Any], Any]:
    info = server.server_info(features)
    policy = server.cache_policy
    info_key = meta_keys.SERVER_INFO

    def shape(result: Any) -> Any:
        if type(result) is not dict:
            return result
        if "resultType" not in result and "_meta" not in result:
            # The common case, kept short: a copy and two stores (a dict display with
            # ``**result`` builds an extra dict); the same keys, in the same order, as below.
            shaped = result.copy()
            shaped["resultType"] = "complete"
            shaped["_meta"] = {info_key: info}
        else:
            shaped = dict(result)
            shaped.setdefault("resultType", "complete")
            meta = shaped.get("_meta")
            shaped["_meta"] = {**meta, meta_keys.SERVER_INFO: info} if type(meta) is dict \
                else {meta_keys.SERVER_INFO: info}
        if cacheable and shaped["resultType"] == "complete":
            shaped.setdefault("ttlMs", policy.ttl_ms)
            shaped.setdefault("cacheScope", policy.scope)
        return shaped

    if cacheable:
        # The caching hints are read from the policy per result (it may change).
        return shape
    # The commonest result (a dict with neither field) is left as it is and written with
    # the two members the copy above would add, encoded once here: the same bytes
    # (mcpfast._core.encode.Extension), without the copy and this frame; any other
    # value is shaped above.
    return Extension({"resultType": "complete", "_meta": {info_key: info}}, shape)


def discover_result(server: ServerCore, ctx_state: ProtocolState) -> dict[str, Any]:
    """The ``server/discover`` result (before the era's shaping adds resultType, server
    info and caching hints)."""
    features = ctx_state.features if ctx_state.features is not None \
        else features_for(STATELESS_VERSIONS[0])
    result: dict[str, Any] = {
        "supportedVersions": list(SPOKEN_VERSIONS),
        "capabilities": server.capabilities(features),
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result
