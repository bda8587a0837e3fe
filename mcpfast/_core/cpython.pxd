# CPython declarations shared by the compiled modules of mcpfast._core (uvloop's
# includes/python.pxd is the model): what Cython's own cpython/*.pxd lacks or declares
# over `object` where the hot loops need borrowed PyObject* (no refcounting), plus the
# version-guarded fast paths of include/mcpfast/cpython_compat.h.
from cpython.object cimport PyObject, PyTypeObject


cdef extern from "Python.h":
    # Declared over PyObject* so that walking borrowed references costs no refcounting.
    PyTypeObject PyUnicode_Type
    PyTypeObject PyLong_Type
    PyTypeObject PyFloat_Type
    PyTypeObject PyDict_Type
    PyTypeObject PyList_Type
    PyTypeObject PyTuple_Type
    PyTypeObject *type_of "Py_TYPE"(PyObject *o)
    PyObject *py_true "Py_True"
    PyObject *py_false "Py_False"
    PyObject *py_none "Py_None"
    bint is_str "PyUnicode_Check"(PyObject *o)
    bint is_int "PyLong_Check"(PyObject *o)
    bint is_float "PyFloat_Check"(PyObject *o)
    bint is_dict "PyDict_Check"(PyObject *o)
    bint is_list "PyList_Check"(PyObject *o)
    bint is_tuple "PyTuple_Check"(PyObject *o)
    bint PyUnicode_IS_COMPACT_ASCII(PyObject *o)
    Py_ssize_t PyUnicode_GET_LENGTH(PyObject *o)
    int PyUnicode_KIND(PyObject *o)
    void *PyUnicode_DATA(PyObject *o)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index)
    int PyDict_Next(PyObject *d, Py_ssize_t *pos, PyObject **key, PyObject **value)
    Py_ssize_t PyDict_GET_SIZE(PyObject *d)
    Py_ssize_t PyList_GET_SIZE(PyObject *o)
    PyObject *PyList_GET_ITEM(PyObject *o, Py_ssize_t i)
    Py_ssize_t PyTuple_GET_SIZE(PyObject *o)
    PyObject *PyTuple_GET_ITEM(PyObject *o, Py_ssize_t i)
    char *PyBytes_AS_STRING(PyObject *o)
    Py_ssize_t PyBytes_GET_SIZE(PyObject *o)
    long long PyLong_AsLongLongAndOverflow(PyObject *o, int *overflow)
    unsigned long long PyLong_AsUnsignedLongLong(PyObject *o)
    double PyFloat_AS_DOUBLE(PyObject *o)
    int Py_LE
    void Py_IncRef(PyObject *o)
    void Py_DecRef(PyObject *o)
    char *PyOS_double_to_string(double value, char format_code, int precision, int flags,
                                int *ptype) except NULL
    int Py_DTSF_ADD_DOT_0
    void PyMem_Free(void *p)
    # Declared over `object` for callers that hold owned references.
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void *unicode_data_of "PyUnicode_DATA"(object o)
    const char *PyUnicode_AsUTF8AndSize(object unicode, Py_ssize_t *size) except NULL
    const Py_ssize_t PY_SSIZE_T_MAX
    # Cython's cpython.memoryview declares this macro with the wrong return type.
    PyObject *memoryview_base "PyMemoryView_GET_BASE"(object view)


cdef extern from "mcpfast/cpython_compat.h":
    int MF_UNICODE_READY(PyObject *o) except -1
    bint mf_small_int(PyObject *o, long long *value)
    ctypedef struct mf_dict_entries:
        PyObject **slot
        Py_ssize_t stride
        Py_ssize_t count
    bint mf_dict_entries_of(PyObject *d, mf_dict_entries *e)
    bint mf_dict_direct_check(PyObject *d)
    void mf_dict_direct_enable(bint on)
    # A dict with room for n items before its first resize (PyDict_New() where not offered).
    dict mf_dict_new_presized(Py_ssize_t n)
    # This module's small-int read and presized dicts on or off (tests run the fallbacks).
    void mf_internals_enable(bint on)
    # type.name becomes a read-only member descriptor of the object field at offset.
    int mf_member_descriptor(type cls, const char *name, Py_ssize_t offset) except -1
    # The same, writable.
    int mf_writable_member_descriptor(type cls, const char *name, Py_ssize_t offset) except -1
    # obj.name = value through the member descriptor type(obj).name, fetched once.
    int mf_member_set(object descr, object obj, object value) except -1
    # obj.name through that descriptor (the read without the type's attribute lookup).
    object mf_member_get(object descr, object obj)
    bint mf_is_member_descriptor(object o)
    # fn(arg) with the cyclic collector paused: no finalizer runs meanwhile.
    object mf_call_without_gc(object (*fn)(void *), void *arg)


cdef inline object slot_descriptor(type cls, str name):
    # cls's member descriptor for one of its __slots__, fetched once for mf_member_get /
    # mf_member_set (checked: a read or store through anything else would not be the
    # attribute's).
    descr = cls.__dict__.get(name)
    if descr is None or not mf_is_member_descriptor(descr):
        raise TypeError(f"{cls.__name__}.{name} is not a slot")
    return descr
