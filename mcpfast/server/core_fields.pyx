"""The compiled base of the server core: the fields compiled code reads of it.

:class:`CoreFields` is the base class of :class:`mcpfast.server.core.ServerCore`; its
fields (declared in ``core_fields.pxd``, the one place compiled modules read the core
through) are C fields exposed to Python as member descriptors, read and written like
``__slots__``. Python owns them (sets them); the compiled connection
(``connection_core.pyx``) only reads them, without a dictionary lookup, on every
stateless HTTP request's ``recycle()`` and ``revive()``.
"""
cimport cython

# The header of MF_EXPOSE (and the function it calls).
from mcpfast._core.cpython cimport mf_writable_member_descriptor


@cython.auto_pickle(False)
cdef class CoreFields:
    """The fields ``default_log_level`` and ``publisher`` of a server core; not made
    alone: :class:`mcpfast.server.core.ServerCore` subclasses it."""


cdef extern from *:
    """
    #define MF_CORE_FIELD(tp, f) \
        MF_EXPOSE(tp, __pyx_obj_7mcpfast_6server_11core_fields_CoreFields, f)
    #define MF_EXPOSE_CORE_FIELDS(c_) (( \
    MF_CORE_FIELD(c_, default_log_level) || \
    MF_CORE_FIELD(c_, publisher)) ? -1 : 0)
    """
    int MF_EXPOSE_CORE_FIELDS(object core) except -1

# Member descriptors (which the interpreter specializes) instead of the getset properties
# Cython makes for `cdef public object` fields. Never deleted (a deleted one would be NULL).
MF_EXPOSE_CORE_FIELDS(CoreFields)
