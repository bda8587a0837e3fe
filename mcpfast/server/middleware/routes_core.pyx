"""The pipeline's route lookup in C: ``RoutesCore``, the base of the pipeline's route
table (:class:`mcpfast.server.middleware.pipeline._Routes`), whose ``get`` -- called by the
session for every request and notification of a server with middleware -- finds a wrapped
route already made in two dict reads; making one (``_wrap_known``) and the answer for a
method with no route (``_unrouted``) are the Python subclass's.

Why compiled: the lookup was a Python frame per request, as much as some middleware.
"""
cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject


@cython.auto_pickle(False)
cdef class RoutesCore:
    """A route table's lookup (module docstring)."""

    def get(self, method, default=None):
        """The wrapped route of ``method`` (made when first asked for, and again when the
        Router's route changed); for a method with no route, ``_unrouted``'s answer."""
        cdef PyObject *route = PyDict_GetItem(self._base, method) if type(method) is str else NULL
        if route == NULL:
            return self._unrouted(method, default)
        cdef PyObject *known = PyDict_GetItem(self._wrapped, method)
        if known != NULL and (<tuple>known)[0] is <object>route:
            return (<tuple>known)[1]
        return self._wrap_known(method, <object>route)
