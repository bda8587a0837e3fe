# Helpers for calling functions on a hot path: stepping a coroutine without an exception
# object for its return, and taking keyword arguments from a dict without a Python loop.
from cpython.object cimport PyObject


cdef extern from "Python.h":
    # PySendResult: PYGEN_RETURN (0), PYGEN_ERROR (-1, an exception is set), PYGEN_NEXT
    # (1); declared as int so that Cython's except clause can name the error value.
    int PYGEN_RETURN
    int PyIter_Send(object iterator, object arg, PyObject **presult) except -1
