"""The server connection's context factories, compiled: what makes the :class:`Context` of
every request a connection serves, called by the session's request path in C
(:class:`mcpfast._core.dispatch.ContextFactory`).

:class:`HandshakeContexts` serves a connection whose every request has the handshake's
state (stdio, TCP, a stateful HTTP session); :class:`EitherEraContexts` one that also
takes 2026-07-28 requests, each claimed by its ``_meta`` (``StatelessEra.claim``). A
connection with state sources of its own keeps the Python factory of
:class:`mcpfast.server.connection.ServerConnection`.

Both build the context as ``Context.__init__`` does without its frame: RequestContext's
fields filled in C (``new_context``), Context's own stored through its slots' descriptors
fetched once -- a field added to Context's constructor goes here too.

Why compiled: the factory was the largest Python frame of a 2026-07-28 request (86
bytecodes of its 177), each of its dict lookups and attribute stores a round through the
interpreter.
"""
cimport cython

from mcpfast._core.cpython cimport mf_member_set, slot_descriptor
from mcpfast._core.dispatch cimport ContextCore, ContextFactory, new_context
from mcpfast.server.connection_core cimport ConnectionCore

from mcpfast.jsonrpc.progress import reporter_for
from mcpfast.protocol import meta_keys as _meta_keys
from mcpfast.server.request.context import Context


cdef object _CONNECTION = slot_descriptor(Context, "connection")
cdef object _STATE = slot_descriptor(Context, "state")
cdef object _BACK_CHANNEL = slot_descriptor(Context, "_back_channel")
cdef type _CONTEXT = Context
cdef str _VERSION_KEY = _meta_keys.PROTOCOL_VERSION
cdef str _CAPABILITIES_KEY = _meta_keys.CLIENT_CAPABILITIES


@cython.auto_pickle(False)
cdef class HandshakeContexts(ContextFactory):
    """Contexts of one connection whose requests all have its handshake state: the
    connection, its state and back channel set, a progress reporter when ``_meta`` carries
    a token, and the connection's initialization gate checked while it is closed."""

    cdef ConnectionCore connection
    cdef object state
    cdef object back_channel

    def __init__(self, ConnectionCore connection not None, state, back_channel):
        self.connection = connection
        self.state = state
        self.back_channel = back_channel

    cdef object make(self, object session, object request_id, object method, object params,
                     object channel):
        ctx = new_context(_CONTEXT, session, request_id, method, params, channel)
        mf_member_set(_CONNECTION, ctx, self.connection)
        meta = (<ContextCore>ctx).meta
        if meta and "progressToken" in <dict>meta:
            (<ContextCore>ctx).progress = reporter_for(meta, request_id, session, channel)
        return self._handshake_state(ctx)

    cdef object _handshake_state(self, object ctx):
        mf_member_set(_STATE, ctx, self.state)
        mf_member_set(_BACK_CHANNEL, ctx, self.back_channel)
        if self.connection._gated:
            self.connection._check_initialized(ctx)
        return ctx


@cython.auto_pickle(False)
cdef class EitherEraContexts(HandshakeContexts):
    """Contexts of a connection that takes both eras: a request whose ``_meta`` names a
    protocol version is a 2026-07-28 one, its state, back channel and result shaper those
    ``era.claim`` gives (or, for the commonest ``_meta`` -- version and empty client
    capabilities only -- the claim ``era.claims`` keeps); any other has the handshake's."""

    cdef object claim
    cdef dict claims

    def __init__(self, connection, state, back_channel, era):
        HandshakeContexts.__init__(self, connection, state, back_channel)
        self.claim = era.claim
        # The era's dict of kept claims, never replaced (StatelessEra.claims).
        self.claims = era.claims

    cdef object make(self, object session, object request_id, object method, object params,
                     object channel):
        ctx = new_context(_CONTEXT, session, request_id, method, params, channel)
        mf_member_set(_CONNECTION, ctx, self.connection)
        cdef dict meta = (<ContextCore>ctx).meta
        cdef object claimed
        if not meta:
            return self._handshake_state(ctx)
        if len(meta) == 2:
            # No progress token, level nor clientInfo: the claim kept for the version and
            # method, unless the params bring answers (an input-required retry).
            version = meta.get(_VERSION_KEY)
            capabilities = meta.get(_CAPABILITIES_KEY)
            if type(version) is str and type(capabilities) is dict and not capabilities:
                claimed = self.claims.get((version, None, method))
                # A claim is a (state, back channel, shaper) tuple (checked: the dict is
                # the era's, which Python code may change).
                if claimed is not None and (
                        (<tuple?>claimed)[1] is not None
                        or not ("requestState" in <dict>params or "inputResponses" in <dict>params)):
                    return self._claimed(ctx, <tuple>claimed)
        if "progressToken" in meta:
            (<ContextCore>ctx).progress = reporter_for(meta, request_id, session, channel)
        if _VERSION_KEY in meta:
            claimed = self.claim(self.connection, method, params, meta)
            return self._claimed(ctx, tuple(claimed))
        return self._handshake_state(ctx)

    cdef object _claimed(self, object ctx, tuple claimed):
        # A claim: (state, back channel, result shaper).
        state, back_channel, shape = claimed
        mf_member_set(_STATE, ctx, state)
        mf_member_set(_BACK_CHANNEL, ctx, back_channel)
        (<ContextCore>ctx).shape_result = shape
        return ctx
