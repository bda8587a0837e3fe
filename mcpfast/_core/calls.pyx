"""Helpers for calling functions on a hot path. Generic: nothing here knows MCP or asyncio.

``step(coroutine, suspended)`` resumes ``coroutine`` once (as ``coroutine.send(None)``
would) and returns the value it returned when it finished on that step; when it suspended
instead (yielded), it returns ``suspended(coroutine, yielded)``: the caller decides what
becomes of a coroutine that did not finish. Exceptions the coroutine raises propagate
unchanged. It works on what ``PyIter_Send`` accepts: coroutines, generators, and other
iterators (advanced with ``next``). Why: a coroutine that finishes reports its value with
StopIteration when resumed with ``send``; creating and catching that exception costs more
than a small coroutine's whole body, and PyIter_Send returns the value without one.

``exact_kwargs(names, types, defaults, required, otherwise)`` makes ``take(arguments)``:
for a dict (exactly a dict) whose keys are among ``names`` and whose value under
``names[i]`` is exactly of type ``types[i]`` (no subclass), a new dict of every name in
order, absent ones taking ``defaults[i]``; anything else -- another type, a missing name
whose default is the ``required`` marker, a key not in ``names`` -- goes to
``otherwise(arguments)``, whose answer (or exception) is ``take``'s. Why: the common call
of a function taking plain values then costs no Python loop; ``otherwise`` is the full
check, which alone knows what to convert and what to refuse.
"""
from cpython.dict cimport PyDict_CheckExact, PyDict_GetItemWithError, PyDict_SetItem, PyDict_Size
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_DECREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE

from mcpfast._core.cpython cimport type_of


def step(coroutine, suspended):
    """Resume ``coroutine`` once with None: its return value if it finished, else
    ``suspended(coroutine, yielded)`` (see the module docstring)."""
    cdef PyObject *result = NULL
    cdef int outcome = PyIter_Send(coroutine, None, &result)
    # PyIter_Send gave a new reference in both outcomes: the object below takes its own.
    value = <object>result
    Py_DECREF(value)
    if outcome == PYGEN_RETURN:
        return value
    return suspended(coroutine, value)


def exact_kwargs(tuple names not None, tuple types not None, tuple defaults not None,
                 required, otherwise):
    """``take(arguments)``: a new dict of keyword arguments when ``arguments`` has exactly
    the expected shape, else ``otherwise(arguments)`` (see the module docstring)."""
    cdef Py_ssize_t count = PyTuple_GET_SIZE(names)
    if PyTuple_GET_SIZE(types) != count or PyTuple_GET_SIZE(defaults) != count:
        raise ValueError("names, types and defaults must have one item per argument")
    for kind in types:
        if not isinstance(kind, type):
            raise TypeError(f"types must hold types, not {type(kind).__name__}")

    def take(arguments):
        cdef Py_ssize_t i, seen = 0
        cdef PyObject *value
        cdef PyObject *default
        if not PyDict_CheckExact(arguments):
            return otherwise(arguments)
        kwargs = {}
        for i in range(count):
            name = <object>PyTuple_GET_ITEM(names, i)
            value = PyDict_GetItemWithError(arguments, name)
            if value == NULL:
                default = PyTuple_GET_ITEM(defaults, i)
                if default == <PyObject *>required:
                    return otherwise(arguments)
                PyDict_SetItem(kwargs, name, <object>default)
            elif <PyObject *>type_of(value) == PyTuple_GET_ITEM(types, i):
                seen += 1
                PyDict_SetItem(kwargs, name, <object>value)
            else:
                return otherwise(arguments)
        if seen != PyDict_Size(arguments):
            return otherwise(arguments)
        return kwargs

    return take
