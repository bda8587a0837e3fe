"""The gateway's plain forwarded tools/call in C: the routing's direct route
(:class:`PlainToolCall`) and the upstream's end of it (:class:`UpstreamCore`, the base of
:class:`mcpfast.gateway.upstream.Upstream`, which documents the upstream; its
``forward_plain`` and settle are here, everything else is Python).

A plain call -- a mounted tool's name and arguments, from a handshake-era client whose
results need no reshaping, no progress asked, no middleware outside the gateway's -- is
sent on the upstream's session and its DrivenCall returned: the session finishes the
downstream request with the upstream's answer passed through unread
(:class:`~mcpfast._core.messages.Verbatim`) when it comes, no coroutine or task between.
Any other call goes to the chain (``on_call_tool``), which forwards everything else.

Why compiled: this is every forwarded call's path at the gateway, and was three Python
frames (route, forward, settle) of some eighty bytecodes.
"""
cimport cython
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem, PyDict_DelItem
from cpython.object cimport PyObject

from mcpfast._core.cpython cimport mf_writable_member_descriptor
from mcpfast._core.dispatch cimport ContextCore

from asyncio import CancelledError

from mcpfast._core.driven import Answer, driven_future
from mcpfast._core.messages import Verbatim
from mcpfast.jsonrpc.outgoing import cancel_reason
from mcpfast.protocol import methods

cdef object _TOOLS_CALL = methods.TOOLS_CALL
cdef object _inf = float("inf")


@cython.auto_pickle(False)
cdef class UpstreamCore:
    """The fields of an upstream that its plain forwarding reads, and that forwarding;
    not made alone: :class:`mcpfast.gateway.upstream.Upstream` subclasses it."""

    @property
    def client(self):
        """The upstream's Client while its session is open (None: not started, restarting)."""
        return self._client

    @client.setter
    def client(self, client):
        # The session a plain call goes on and its book of outgoing requests, known once: a
        # connected Client's session and era do not change (a new connection is a new
        # Client). None where a plain call does not apply: the chain forwards those.
        self._client = client
        self._plain_session = None
        self._plain_book = None
        if client is not None and getattr(client, "discover_result", None) is None:
            session = getattr(client, "session", None)
            if isinstance(session, SessionCore) and isinstance((<SessionCore>session)._outgoing, OutgoingBook):
                self._plain_session = session
                self._plain_book = (<SessionCore>session)._outgoing

    def forward_plain(self, method, params, origin):
        """``method`` sent for the downstream request ``origin`` and its answer passed on
        unread, as ``request(method, params, origin=origin, raw=True)`` does, but with no
        coroutine: the DrivenCall the session finishes the downstream request with when the
        answer comes (a Verbatim of it, or the same errors), cancelled with it. ``origin``
        must be a handshake-era request (a 2026-07-28 one may be asked for input, which
        only request() handles). None where this does not apply (no open session, a
        2026-07-28 upstream): the caller then takes request()."""
        cdef SessionCore session = self._plain_session
        if session is None or session._closed:
            return None
        timeout = self.options.timeout
        callers = <dict?>self._callers
        PyDict_SetItem(callers, origin, None)
        # (An Answer: the downstream request ends while the upstream's response is read.)
        answer = Answer()
        try:
            # Session.send_request is the book's start; its C entry, without the keywords.
            out = self._plain_book.begin(method, params, _inf if timeout is None else timeout, None, None, True,
                                         answer)
        except Exception as exc:
            PyDict_DelItem(callers, origin)
            raise self._failure(method, timeout, exc) from None
        PyDict_SetItem(<dict?>self._sent, out.id, origin)
        return driven_future(answer, self._settle_plain, (origin, out))

    def _plain_answered(self, future, sent):
        # A forward_plain request's end, the downstream request's (through its DrivenCall).
        origin, out = <tuple?>sent
        cdef dict by_id = <dict?>self._sent
        request_id = out.id
        cdef PyObject *known = PyDict_GetItem(by_id, request_id)
        if known != NULL and <object>known is origin:
            PyDict_DelItem(by_id, request_id)
        (<dict?>self._callers).pop(origin, None)
        try:
            answer = future.result()
        except CancelledError as exc:
            out.cancel(cancel_reason(exc))  # as OutgoingRequest.wait: the upstream is told
            raise
        except Exception as exc:
            raise self._failure(out.method, self.options.timeout, exc) from None
        self.passed_through += 1
        return Verbatim(answer)


@cython.auto_pickle(False)
cdef class MountTableCore:
    """The gateway's tools as a forwarded call looks them up; not made alone:
    :class:`mcpfast.gateway.gateway.Gateway` subclasses it and keeps them."""

    def tool(self, name):
        """The upstream and tool behind the public tool ``name`` (None: not mounted, or
        the server has a tool of that name itself, which wins)."""
        return self.tool_of(name)

    cdef object tool_of(self, object name):
        if type(name) is not str:
            return None
        cdef PyObject *found = PyDict_GetItem(<dict?>self._tools, name)
        if found == NULL or name in self._own_tools:
            return None
        return <object>found


@cython.auto_pickle(False)
cdef class PlainToolCall:
    """tools/call's direct route (module docstring): ``PlainToolCall(middleware, gateway,
    fallback)``, called as the handler ``(params, ctx)``; ``fallback`` (the chain) takes
    every call it does not fit."""

    def __init__(self, middleware, gateway, fallback):
        self.middleware = middleware
        self.gateway = gateway
        # (Any mount table with .tool(name) does; the compiled one is looked up in C.)
        self.table = gateway if isinstance(gateway, MountTableCore) else None
        self.fallback = fallback

    def __call__(self, params, ctx):
        if (type(params) is not dict or "_meta" in <dict>params or "task" in <dict>params
                or not isinstance(ctx, ContextCore) or (<ContextCore>ctx).shape_result is not None
                or (<ContextCore>ctx).progress is not None or not self.middleware.outermost):
            return self.fallback(params, ctx)
        features = ctx.state.features
        if features is None or features.stateless or not features.content_current:
            # Handshake-era clients whose results need no reshaping (results_unshaped)
            # only: no call that makes a task, none that may be asked for input.
            return self.fallback(params, ctx)
        cdef PyObject *name = PyDict_GetItem(<dict>params, "name")
        key = <object>name if name != NULL else None
        found = self.table.tool_of(key) if self.table is not None else self.gateway.tool(key)
        if found is None:
            return self.fallback(params, ctx)
        upstream, tool = <tuple?>found
        if tool.header_params or tool.arguments_back:
            return self.fallback(params, ctx)
        upstream_name = tool.upstream_name
        if upstream_name == key:
            forwarded = params  # mounted without a namespace: sent as it came (only read)
        else:
            forwarded = dict(<dict>params)
            forwarded["name"] = upstream_name
        call = upstream.forward_plain(_TOOLS_CALL, forwarded, ctx)
        return self.fallback(params, ctx) if call is None else call


cdef extern from *:
    """
    #define MF_UPSTREAM_FIELD(tp, f) \
        MF_EXPOSE(tp, __pyx_obj_7mcpfast_7gateway_12forward_core_UpstreamCore, f)
    #define MF_EXPOSE_UPSTREAM_FIELDS(u_) (( \
    MF_UPSTREAM_FIELD(u_, options) || \
    MF_UPSTREAM_FIELD(u_, _callers) || MF_UPSTREAM_FIELD(u_, _sent) || \
    MF_UPSTREAM_FIELD(u_, passed_through) || MF_UPSTREAM_FIELD(u_, _settle_plain)) ? -1 : 0)
    #define MF_MOUNT_FIELD(tp, f) \
        MF_EXPOSE(tp, __pyx_obj_7mcpfast_7gateway_12forward_core_MountTableCore, f)
    #define MF_EXPOSE_MOUNT_FIELDS(g_) \
        ((MF_MOUNT_FIELD(g_, _tools) || MF_MOUNT_FIELD(g_, _own_tools)) ? -1 : 0)
    """
    int MF_EXPOSE_UPSTREAM_FIELDS(object upstream) except -1
    int MF_EXPOSE_MOUNT_FIELDS(object table) except -1

# Member descriptors (which the interpreter specializes) instead of the getset properties
# Cython makes for `cdef public object` fields: the Python subclass reads them often.
# Never deleted (a deleted one would be NULL).
MF_EXPOSE_UPSTREAM_FIELDS(UpstreamCore)
MF_EXPOSE_MOUNT_FIELDS(MountTableCore)
