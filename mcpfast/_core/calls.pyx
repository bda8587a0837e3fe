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
order, absent ones taking ``defaults[i]`` (with ``positional=True``, the same values as a
tuple in that order); anything else -- another type, a missing name
whose default is the ``required`` marker, a key not in ``names`` -- goes to
``otherwise(arguments)``, whose answer (or exception) is ``take``'s. Why: the common call
of a function taking plain values then costs no Python loop; ``otherwise`` is the full
check, which alone knows what to convert and what to refuse.

``Invoker(fn, at_once, finish, fail, passthrough, signal, suspended, var, later, plain,
is_awaitable)`` is ``run(args, kwargs, ctx, extra)``: calls ``fn(*args, **kwargs)`` (``fn(*args)``
for kwargs None, from compiled callers; with
``at_once``, steps the coroutine it returns once: ``step(coroutine, suspended)``) and
answers ``finish(value, extra)``; an exception of a type in ``passthrough`` propagates, any
other Exception answers ``fail(exc, extra)``, a ``signal`` (a BaseException type) answers
``signal.result()``; a value whose type is not in ``plain`` and that ``is_awaitable``
answers ``later(ctx, value, finish, fail, extra, passthrough)``. Once ``track_context()``
was called, ``var`` (a ContextVar) holds ``ctx`` while ``fn`` runs. Why: the Python
function doing this was a frame and some forty bytecodes of every small call.

An Invoker given a ``text`` Template answers a str value ``text(value)`` instead of
``finish(value, extra)``. ``Template(shape, hole)`` is ``template(value)``: a copy of
``shape`` (dicts and lists holding immutable values, ``hole`` -- compared by identity --
exactly once among the values) whose dicts and lists are all new, with ``value`` in place
of the hole. Why: the commonest result of a call built without a Python frame.

``KeywordCall(take, refused, refuse, ctx_name, run)`` is ``call(arguments, ctx, extra)``:
``kwargs = take(arguments)`` (a new dict; an exception of type ``refused`` answers
``refuse(exc)``), ``kwargs[ctx_name] = ctx`` unless ``ctx_name`` is None, then
``run((), kwargs, ctx, extra)`` (an Invoker is run without a Python-level call); when
``take`` answers a tuple and there is no ``ctx_name``, ``run(args, None, ctx, extra)`` (an
Invoker; other runs get ``{}``): ``fn(*args)``, no keyword dict. Why: the
method taking a call's arguments and passing them on was another frame per call.
"""
from cpython.dict cimport (
    PyDict_CheckExact, PyDict_Copy, PyDict_GetItemWithError, PyDict_SetItem, PyDict_Size,
)
from cpython.list cimport PyList_GET_SIZE, PyList_GetSlice
from cpython.object cimport PyObject, PyObject_Call, PyTypeObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM

from mcpfast._core.cpython cimport type_of


def step(coroutine, suspended):
    """Resume ``coroutine`` once with None: its return value if it finished, else
    ``suspended(coroutine, yielded)`` (see the module docstring)."""
    return _step(coroutine, suspended)


# Whether Invokers set their context variable (track_context).
cdef bint _tracking = False


def track_context():
    """From now on every Invoker sets its ``var`` to the request's ctx while ``fn`` runs."""
    global _tracking
    _tracking = True


cdef class Invoker:
    """``run(args, kwargs, ctx, extra)`` (see the module docstring)."""

    cdef object fn, finish, fail, passthrough, signal, suspended, var, later, plain, is_awaitable
    cdef bint at_once
    cdef Template text

    def __init__(self, fn, bint at_once, finish, fail, tuple passthrough not None, signal,
                 suspended, var, later, plain, is_awaitable, Template text=None):
        self.text = text
        self.fn = fn
        self.at_once = at_once
        self.finish = finish
        self.fail = fail
        self.passthrough = passthrough
        self.signal = signal
        self.suspended = suspended
        self.var = var
        self.later = later
        self.plain = plain
        self.is_awaitable = is_awaitable

    def __call__(self, tuple args not None, dict kwargs not None, ctx, extra):
        return self._run(args, kwargs, ctx, extra)

    cdef object _run(self, tuple args, dict kwargs, ctx, extra):
        token = self.var.set(ctx) if _tracking else None
        try:
            # kwargs None: positional arguments only (no dict for CPython to unpack).
            value = (self.fn(*args) if kwargs is None
                     else PyObject_Call(self.fn, args, kwargs))
            if self.at_once:
                value = _step(value, self.suspended)
        except self.passthrough:
            raise
        except Exception as exc:
            return self.fail(exc, extra)
        except self.signal as signal:
            return signal.result()
        finally:
            if token is not None:
                self.var.reset(token)
        if type(value) is str and self.text is not None:
            return self.text.fill(value)
        if type(value) not in self.plain and self.is_awaitable(value):
            return self.later(ctx, value, self.finish, self.fail, extra, self.passthrough)
        return self.finish(value, extra)


cdef class Template:
    """``Template(shape, hole)``: ``template(value)`` (see the module docstring)."""

    cdef object shape, hole
    # The containers from the shape down to the hole, each as a model (the container with
    # None in place of the next one down) and the key or index of the next one; None when
    # a container off that path must be copied too (then the shape is walked).
    cdef tuple models, keys

    def __init__(self, shape, hole):
        if _holes(shape, hole, 0) != 1:
            raise ValueError("a template holds its hole exactly once, in dicts and lists")
        self.shape = shape
        self.hole = hole
        models = []
        keys = []
        node = shape
        while node is not hole:
            down = None
            for key, item in (node.items() if type(node) is dict else enumerate(node)):
                if item is hole or (type(item) in (dict, list) and _holes(item, hole, 0)):
                    down = (key, item)
                elif type(item) in (dict, list):
                    models = keys = None  # a container off the path
            if models is None:
                break
            model = dict(node) if type(node) is dict else list(node)
            key, node = down
            model[key] = None
            models.append(model)
            keys.append(key)
        self.models = None if models is None else tuple(models)
        self.keys = None if keys is None else tuple(keys)

    def __call__(self, value):
        return self.fill(value)

    cdef object fill(self, value):
        cdef Py_ssize_t i
        if self.models is None:
            return _filled(self.shape, self.hole, value)
        child = value
        for i in range(PyTuple_GET_SIZE(self.models) - 1, -1, -1):
            model = <object>PyTuple_GET_ITEM(self.models, i)
            key = <object>PyTuple_GET_ITEM(self.keys, i)
            if type(model) is dict:
                made = PyDict_Copy(model)
                PyDict_SetItem(made, key, child)
            else:
                made = PyList_GetSlice(model, 0, PyList_GET_SIZE(model))
                made[key] = child
            child = made
        return child


cdef int _holes(node, hole, int depth) except -1:
    cdef int count = 0
    if node is hole:
        return 1
    if depth > 32:
        raise ValueError("a template is at most 32 containers deep")
    if type(node) is dict:
        for key, item in (<dict>node).items():
            if key is hole:
                raise ValueError("a template's hole is a value, not a key")
            count += _holes(item, hole, depth + 1)
    elif type(node) is list:
        for item in <list>node:
            count += _holes(item, hole, depth + 1)
    elif isinstance(node, (dict, list, set, bytearray)):
        raise TypeError("a template holds dicts, lists and immutable values only")
    return count


cdef object _filled(node, hole, value):
    cdef dict made_dict
    cdef list made_list
    if node is hole:
        return value
    if type(node) is dict:
        made_dict = {}
        for key, item in (<dict>node).items():
            made_dict[key] = _filled(item, hole, value)
        return made_dict
    if type(node) is list:
        made_list = []
        for item in <list>node:
            made_list.append(_filled(item, hole, value))
        return made_list
    return node


cdef class KeywordCall:
    """``call(arguments, ctx, extra)`` (see the module docstring)."""

    cdef object take, refused, refuse, run
    cdef object ctx_name
    cdef Invoker invoker

    def __init__(self, take, refused, refuse, ctx_name, run):
        if not (isinstance(refused, type) and issubclass(refused, BaseException)):
            raise TypeError("refused must be an exception type")
        if ctx_name is not None and type(ctx_name) is not str:
            raise TypeError("ctx_name must be a str or None")
        self.take = take
        self.refused = refused
        self.refuse = refuse
        self.ctx_name = ctx_name
        self.run = run
        self.invoker = run if type(run) is Invoker else None

    def __call__(self, arguments, ctx, extra):
        return self._call(arguments, ctx, extra)

    def call(self, arguments, ctx, extra):
        """As calling it. Why both: a method of a compiled class is called without the
        tuple of arguments that calling an instance builds (``instance.call`` bound once is
        the cheaper callable)."""
        return self._call(arguments, ctx, extra)

    cdef object _call(self, arguments, ctx, extra):
        try:
            kwargs = self.take(arguments)
        except self.refused as exc:
            return self.refuse(exc)
        if type(kwargs) is tuple and self.ctx_name is None:
            # Positional arguments after all (exact_kwargs(positional=True)'s common case).
            if self.invoker is not None:
                return self.invoker._run(<tuple>kwargs, None, ctx, extra)
            return self.run(kwargs, {}, ctx, extra)
        if type(kwargs) is not dict:
            raise TypeError("take must answer a dict, not %s" % type(kwargs).__name__)
        if self.ctx_name is not None:
            PyDict_SetItem(kwargs, self.ctx_name, ctx)
        if self.invoker is not None:
            return self.invoker._run((), <dict>kwargs, ctx, extra)
        return self.run((), kwargs, ctx, extra)


cdef object _step(coroutine, suspended):
    cdef PyObject *result = NULL
    cdef int outcome = PyIter_Send(coroutine, None, &result)
    # PyIter_Send gave a new reference in both outcomes: the object below takes its own.
    value = <object>result
    Py_DECREF(value)
    if outcome == PYGEN_RETURN:
        return value
    return suspended(coroutine, value)


def exact_kwargs(tuple names not None, tuple types not None, tuple defaults not None,
                 required, otherwise, bint positional=False):
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
        if not PyDict_CheckExact(arguments):
            return otherwise(arguments)
        # One check for both shapes: the values go into a tuple or a dict as they come.
        taken = PyTuple_New(count) if positional else {}
        for i in range(count):
            name = <object>PyTuple_GET_ITEM(names, i)
            value = PyDict_GetItemWithError(arguments, name)
            if value == NULL:
                value = PyTuple_GET_ITEM(defaults, i)
                if value == <PyObject *>required:
                    return otherwise(arguments)
            elif <PyObject *>type_of(value) == PyTuple_GET_ITEM(types, i):
                seen += 1
            else:
                return otherwise(arguments)
            if positional:
                Py_INCREF(<object>value)  # PyTuple_SET_ITEM takes this reference
                PyTuple_SET_ITEM(taken, i, <object>value)
            else:
                PyDict_SetItem(taken, name, <object>value)
        if seen != PyDict_Size(arguments):
            return otherwise(arguments)
        return taken

    return take
