"""The compiled part of a server connection: the fields its hot paths read and the
stateless HTTP pool's ``recycle()`` / ``revive()``, called for every stateless POST.

:class:`ConnectionCore` is the base class of
:class:`mcpfast.server.connection.ServerConnection`, which keeps everything else in Python
and documents the fields. The fields are C fields exposed to Python as member descriptors
(read and written like ``__slots__``), so that the compiled context factories
(:mod:`mcpfast.server.context_factories`) read them without a lookup.

Why compiled: ``recycle()`` was the last Python frame of a stateless request served over
HTTP (28 bytecodes), and ``revive()`` a call through ``functools.partial`` and
``setattr``.
"""
cimport cython

from mcpfast._core.cpython cimport mf_member_set, mf_writable_member_descriptor, slot_descriptor
from mcpfast._core.dispatch cimport SessionCore
from mcpfast.server.core_fields cimport CoreFields

from mcpfast.server.request.state import ProtocolState

# ProtocolState.log_level, stored through its descriptor on every recycle (exact type only).
cdef type _STATE_TYPE = ProtocolState
cdef object _LOG_LEVEL = slot_descriptor(ProtocolState, "log_level")


@cython.auto_pickle(False)
cdef class ConnectionCore:
    """The fields (``session``, ``server``, ``state``, ``auth``, ``subscriptions``,
    ``parked``) and the recycling of a server connection; not made alone:
    :class:`mcpfast.server.connection.ServerConnection` subclasses it."""

    def recycle(self):
        """Make this connection ready for another stateless HTTP request (the transport
        contract's optional method, for connections that answer one self-contained POST
        at a time): True when it was -- nothing running, nothing awaited from the client,
        not closed; what a request may have left (the caller's identity, subscriptions,
        a log level) is reset, and while idle it gets none of the server's published
        events nor is among its connections (``revive()`` when it serves again). False:
        the caller closes it."""
        session = self.session
        if isinstance(session, SessionCore):
            if not (<SessionCore>session).idle():
                return False
        elif not session.is_idle():
            return False
        self.auth = None
        subscriptions = self.subscriptions
        if len(<set>subscriptions) if type(subscriptions) is set else subscriptions:
            subscriptions.clear()
        server = self.server
        # The core's fields through its declared compiled base (core_fields.pxd); another
        # object standing in for the core is read by attribute.
        if isinstance(server, CoreFields):
            default_level = (<CoreFields>server).default_log_level
        else:
            default_level = server.default_log_level
        state = self.state
        if type(state) is _STATE_TYPE:
            mf_member_set(_LOG_LEVEL, state, default_level)
        else:
            state.log_level = default_level
        # Parked rather than taken out of the server's connections (every stateless POST
        # passes here and in revive), and out of the publisher's deliveries by the same
        # flag where the publisher skips parked subscribers.
        self.parked = True
        if not self._parks_attached:
            _publisher_of(server).detach(self)
        return True

    def revive(self):
        """A recycled connection serves again (the transport contract's optional
        method)."""
        self.parked = False
        if not self._parks_attached:
            _publisher_of(self.server).attach(self)


cdef inline object _publisher_of(object server):
    # The core's publisher (core_fields.pxd), or the attribute of a stand-in.
    if isinstance(server, CoreFields):
        return (<CoreFields>server).publisher
    return server.publisher


cdef extern from *:
    """
    #define MF_CONNECTION(tp, f) \
        MF_EXPOSE(tp, __pyx_obj_7mcpfast_6server_15connection_core_ConnectionCore, f)
    #define MF_EXPOSE_CONNECTION_FIELDS(c_) (( \
    MF_CONNECTION(c_, session) || \
    MF_CONNECTION(c_, server) || \
    MF_CONNECTION(c_, state) || \
    MF_CONNECTION(c_, auth) || \
    MF_CONNECTION(c_, subscriptions) || \
    MF_CONNECTION(c_, parked) || \
    MF_CONNECTION(c_, _parks_attached) || \
    MF_CONNECTION(c_, _gated)) ? -1 : 0)
    """
    int MF_EXPOSE_CONNECTION_FIELDS(object connection) except -1

# The fields as member descriptors, which the interpreter specializes, instead of the
# getset properties Cython makes for `cdef public object` fields. Never deleted (a
# deleted one would be NULL here).
MF_EXPOSE_CONNECTION_FIELDS(ConnectionCore)
